//! GPU tests of virtual memory: a growable buffer grown from 64 MiB to 4 GiB
//! with a kernel checking its contents after each step, physical memory
//! mapped into ranges and used through typed buffers, memory exported to a
//! child process (this binary run again with [`CHILD_FLAG`]) by a file
//! descriptor sent over a Unix socket, written there and read back here,
//! the same across two GPUs through set-access (skipped on one), and the
//! refusals of these calls.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

use cuabi::{
    AddressRange, BufferKind, CompileOptions, Device, DeviceBuffer, ErrorKind, LaunchConfig,
    PhysicalMemory, PhysicalMemoryFlags, VmAccess,
};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    growable_buffer_grows_to_4_gib_keeping_its_contents,
    physical_memory_mapped_into_a_range,
    memory_exported_to_a_child_process_by_fd,
    memory_of_one_gpu_used_by_another_through_set_access,
    virtual_memory_refusals,
];

/// The first argument that makes this binary the virtual memory child.
pub const CHILD_FLAG: &str = "--cuabi-vmm-child";

const MIB: usize = 1 << 20;

const KERNELS: &str = r#"
__device__ unsigned value_at(unsigned long long i, unsigned salt)
{
    return (unsigned)(i * 2654435761ull) ^ salt;
}
extern "C" __global__ void pattern(unsigned* p, unsigned long long from, unsigned long long to,
                                   unsigned salt)
{
    for (unsigned long long i = from + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < to; i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = value_at(i, salt);
}
extern "C" __global__ void verify(const unsigned* p, unsigned long long n, unsigned salt,
                                  unsigned long long* bad)
{
    unsigned long long wrong = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        wrong += p[i] != value_at(i, salt);
    if (wrong) atomicAdd(bad, wrong);
}
"#;

fn value_at(i: u64, salt: u32) -> u32 {
    (i.wrapping_mul(2_654_435_761) as u32) ^ salt
}

fn expect_err<T>(
    result: cuabi::Result<T>,
    kind: ErrorKind,
    needle: &str,
    what: &str,
) -> TestResult {
    match result {
        Ok(_) => Err(format!("{what}: succeeded").into()),
        Err(err) if err.kind() == kind && err.message().contains(needle) => Ok(()),
        Err(err) => Err(format!("{what}: expected {kind:?} holding '{needle}', got {err}").into()),
    }
}

fn granularity(device: &Device) -> cuabi::Result<usize> {
    Ok(device.vm_granularity()?.0)
}

fn growable_buffer_grows_to_4_gib_keeping_its_contents(device: &Device) -> TestResult {
    let reserve = 4096 * MIB;
    let (free, _) = device.memory_info()?;
    if free < reserve + 512 * MIB {
        return skip("the device has less than 4.5 GiB free");
    }
    let module = device.compile(KERNELS, &CompileOptions::new())?;
    let (pattern, verify) = (module.function("pattern")?, module.function("verify")?);
    let salt = 0x5eedu32;
    let mut bad = device.alloc_zeroed::<u64>(1)?;
    let config = LaunchConfig::new(1024, 256);
    let mut wrong = |buf: &DeviceBuffer<u32>, n: u64| -> cuabi::Result<u64> {
        bad.fill_bytes(0)?;
        // SAFETY: n u32s of `buf` and one u64 of `bad`, both alive past the copy below.
        unsafe { verify.launch(config).args((buf, &n, &salt, &bad)).run()? };
        Ok(bad.to_vec()?[0])
    };
    let mut buf = device.alloc_growable::<u32>(64 * MIB / 4, reserve / 4)?;
    if buf.kind()? != BufferKind::Growable || buf.reserved_size()? != reserve {
        return Err("the buffer is not growable, or its reservation is not 4 GiB".into());
    }
    let address = buf.device_ptr();
    // SAFETY: the elements [from, to) of `buf`.
    unsafe {
        pattern
            .launch(config)
            .args((&buf, &0u64, &((64 * MIB / 4) as u64), &salt))
            .run()?
    };
    let mut size = 64 * MIB;
    while size < reserve {
        let mut word = [0u32];
        expect_err(
            buf.copy_to_at(size / 4, &mut word),
            ErrorKind::OutOfRange,
            "past the end",
            "a read past the mapped size",
        )?;
        buf.grow(size * 2 / 4)?;
        if buf.device_ptr() != address || buf.size_bytes() != size * 2 {
            return Err(format!("after growing to {}: address or size changed", size * 2).into());
        }
        let w = wrong(&buf, (size / 4) as u64)?;
        if w != 0 {
            return Err(format!("{w} words changed when growing to {}", size * 2).into());
        }
        let (from, to) = ((size / 4) as u64, (size * 2 / 4) as u64);
        // SAFETY: the elements [from, to) of `buf`.
        unsafe {
            pattern
                .launch(config)
                .args((&buf, &from, &to, &salt))
                .run()?
        };
        let w = wrong(&buf, to)?;
        if w != 0 {
            return Err(format!("{w} words wrong at {}", size * 2).into());
        }
        let mut seam = [0u32; 2];
        buf.copy_to_at(size / 4 - 1, &mut seam)?;
        if seam != [value_at(from - 1, salt), value_at(from, salt)] {
            return Err(format!("the seam at {size} reads {seam:?}").into());
        }
        size *= 2;
    }
    expect_err(
        buf.grow(reserve / 4 + 1),
        ErrorKind::InvalidArgument,
        "granularity",
        "growing off the granularity",
    )?;
    expect_err(
        buf.grow(64 * MIB / 4),
        ErrorKind::InvalidArgument,
        "does not shrink",
        "a shrink",
    )?;
    expect_err(
        buf.grow(reserve / 4 + 64 * MIB / 4),
        ErrorKind::OutOfRange,
        "reservation",
        "growing past the reservation",
    )
}

fn physical_memory_mapped_into_a_range(device: &Device) -> TestResult {
    let g = granularity(device)?;
    let a = PhysicalMemory::create(device, g, PhysicalMemoryFlags::NONE)?;
    let c = PhysicalMemory::create(device, 2 * g, PhysicalMemoryFlags::NONE)?;
    let range = AddressRange::reserve(device, 4 * g)?;
    range.map(0, &a)?;
    range.map(g, &c)?;
    {
        let mut view = range.buffer::<u32>(device, 0, 3 * g / 4)?;
        if view.kind()? != BufferKind::Range || view.device_ptr() != range.pointer()? {
            return Err("the view is not over the range".into());
        }
        view.fill(7)?;
        expect_err(
            range.unmap(0, g),
            ErrorKind::InvalidArgument,
            "view the range",
            "unmapping a viewed range",
        )?;
    }
    let c = match c.free() {
        Ok(()) => return Err("freed memory a range maps".into()),
        Err((c, e)) if e.message().contains("still mapped") => c,
        Err((_, e)) => return Err(format!("the free's refusal: {e}").into()),
    };
    range.unmap(g, 2 * g)?;
    range.map(2 * g, &c)?;
    let moved = range.buffer::<u32>(device, 2 * g, 2 * g / 4)?.to_vec()?;
    if moved.iter().any(|&v| v != 7) {
        return Err("the memory lost its contents when mapped elsewhere".into());
    }
    range.unmap(2 * g, 2 * g)?;
    c.free().map_err(|(_, e)| e)?;
    drop(a); // the range keeps it mapped
    if range.buffer::<u32>(device, 0, 4)?.to_vec()? != [7; 4] {
        return Err("the range lost memory whose handle was dropped".into());
    }
    Ok(())
}

// --- the child, over a Unix socket ----------------------------------------------

#[repr(C)]
struct IoVec {
    base: *mut u8,
    len: usize,
}

#[repr(C)]
struct MsgHdr {
    name: *mut u8,
    name_len: u32,
    iov: *mut IoVec,
    iov_len: usize,
    control: *mut u8,
    control_len: usize,
    flags: i32,
}

extern "C" {
    fn sendmsg(fd: i32, msg: *const MsgHdr, flags: i32) -> isize;
    fn recvmsg(fd: i32, msg: *mut MsgHdr, flags: i32) -> isize;
    fn fcntl(fd: i32, cmd: i32, ...) -> i32;
}

const SOL_SOCKET: i32 = 1;
const SCM_RIGHTS: i32 = 1;
const F_SETFD: i32 = 2;

/// Sends `fd` over `socket` with one data byte (SCM_RIGHTS).
fn send_fd(socket: &UnixStream, fd: RawFd) -> std::io::Result<()> {
    let mut data = [1u8];
    let mut iov = IoVec {
        base: data.as_mut_ptr(),
        len: 1,
    };
    let mut control = [0u8; 24]; // CMSG_SPACE(sizeof(int)) on 64-bit Linux
    control[..8].copy_from_slice(&20u64.to_ne_bytes()); // CMSG_LEN(sizeof(int))
    control[8..12].copy_from_slice(&SOL_SOCKET.to_ne_bytes());
    control[12..16].copy_from_slice(&SCM_RIGHTS.to_ne_bytes());
    control[16..20].copy_from_slice(&fd.to_ne_bytes());
    let msg = MsgHdr {
        name: std::ptr::null_mut(),
        name_len: 0,
        iov: &mut iov,
        iov_len: 1,
        control: control.as_mut_ptr(),
        control_len: control.len(),
        flags: 0,
    };
    // SAFETY: every pointer of `msg` points into this frame.
    if unsafe { sendmsg(socket.as_raw_fd(), &msg, 0) } != 1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Receives a descriptor sent by [`send_fd`].
fn receive_fd(socket: RawFd) -> Result<OwnedFd, String> {
    let mut data = [0u8];
    let mut iov = IoVec {
        base: data.as_mut_ptr(),
        len: 1,
    };
    let mut control = [0u8; 64];
    let mut msg = MsgHdr {
        name: std::ptr::null_mut(),
        name_len: 0,
        iov: &mut iov,
        iov_len: 1,
        control: control.as_mut_ptr(),
        control_len: control.len(),
        flags: 0,
    };
    // SAFETY: every pointer of `msg` points into this frame.
    if unsafe { recvmsg(socket, &mut msg, 0) } != 1 {
        return Err(format!("recvmsg: {}", std::io::Error::last_os_error()));
    }
    let level = i32::from_ne_bytes(control[8..12].try_into().unwrap());
    let kind = i32::from_ne_bytes(control[12..16].try_into().unwrap());
    if msg.control_len < 20 || level != SOL_SOCKET || kind != SCM_RIGHTS {
        return Err("no descriptor came with the message".into());
    }
    let fd = i32::from_ne_bytes(control[16..20].try_into().unwrap());
    // SAFETY: a new descriptor of this process, received just now.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs the child's part when this process was started as one: `Some` with
/// its exit code, `None` for an ordinary run.
pub fn run_child() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some(CHILD_FLAG) {
        return None;
    }
    Some(match child(&args[1..]) {
        Ok(report) => {
            println!("child ok: {report}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("child failed: {why}");
            ExitCode::FAILURE
        }
    })
}

/// `SOCKET BYTES EXPECT WRITE DEVICE`: receives the memory's descriptor,
/// imports it on device 0, maps it, gives DEVICE access, checks every u32
/// is EXPECT through a buffer of DEVICE and fills it with WRITE.
fn child(args: &[String]) -> Result<String, Box<dyn std::error::Error>> {
    let n = |i: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(args.get(i).ok_or("an argument is missing")?.parse()?)
    };
    let socket = n(0)? as RawFd;
    let (bytes, expect, write, ordinal) = (n(1)?, n(2)? as u32, n(3)? as u32, n(4)?);
    let fd = receive_fd(socket)?;
    let home = Device::get(0)?;
    let user = Device::get(ordinal)?;
    let memory = PhysicalMemory::import_fd(&home, &fd, bytes)?;
    drop(fd);
    let range = AddressRange::reserve(&home, bytes)?;
    range.map(0, &memory)?;
    drop(memory); // the range keeps it
    if ordinal != 0 {
        range.set_access(0, bytes, &user, VmAccess::Readwrite)?;
    }
    let mut view = range.buffer::<u32>(&user, 0, bytes / 4)?;
    if let Some(i) = view.to_vec()?.iter().position(|&v| v != expect) {
        return Err(format!("element {i} is not {expect}").into());
    }
    view.fill(write)?;
    user.synchronize()?;
    Ok(format!(
        "device {ordinal} read {bytes} bytes of {expect} and wrote {write}"
    ))
}

/// Exports 8 granules of device 0's memory to a child that uses it through
/// `user` (device `ordinal`), and reads what it wrote.
fn export_to_child(home: &Device, user: &Device, ordinal: usize) -> TestResult {
    let g = granularity(home)?;
    let bytes = 8 * g;
    let memory = match PhysicalMemory::create(home, bytes, PhysicalMemoryFlags::EXPORTABLE) {
        Err(e) if e.kind() == ErrorKind::NotSupported => return skip(e.message().to_owned()),
        made => made?,
    };
    let range = AddressRange::reserve(home, bytes)?;
    range.map(0, &memory)?;
    if ordinal != 0 {
        range.set_access(0, bytes, user, VmAccess::Readwrite)?;
    }
    let mut view = range.buffer::<u32>(user, 0, bytes / 4)?;
    view.fill(5)?;
    user.synchronize()?;
    let fd = match memory.export_fd() {
        Err(e) if e.kind() == ErrorKind::NotSupported => return skip(e.message().to_owned()),
        exported => exported?,
    };
    let (parent, child) = UnixStream::pair()?;
    let child_fd = child.as_raw_fd();
    let exe = std::env::current_exe()?;
    let mut command = Command::new(exe);
    command.arg(CHILD_FLAG).args([
        child_fd.to_string(),
        bytes.to_string(),
        "5".into(),
        "9".into(),
        ordinal.to_string(),
    ]);
    // SAFETY: fcntl is async-signal-safe; the child keeps its end of the socket.
    unsafe {
        command.pre_exec(move || {
            if fcntl(child_fd, F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let process = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    drop(child);
    send_fd(&parent, fd.as_raw_fd())?;
    let output = process.wait_with_output()?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() || !said.contains("child ok") {
        return Err(format!("the child ({}) said: {}", output.status, said.trim()).into());
    }
    if view.to_vec()?.iter().any(|&v| v != 9) {
        return Err("the child's writes are not here".into());
    }
    Ok(())
}

fn memory_exported_to_a_child_process_by_fd(device: &Device) -> TestResult {
    export_to_child(device, device, 0)
}

fn memory_of_one_gpu_used_by_another_through_set_access(device: &Device) -> TestResult {
    if Device::count()? < 2 {
        return skip("needs two devices");
    }
    let other = Device::get(1)?;
    let g = granularity(device)?;
    let memory = PhysicalMemory::create(device, 4 * g, PhysicalMemoryFlags::NONE)?;
    let range = AddressRange::reserve(device, 4 * g)?;
    range.map(0, &memory)?;
    expect_err(
        range.buffer::<u32>(&other, 0, g),
        ErrorKind::InvalidArgument,
        "no access",
        "a buffer of a device without access",
    )?;
    range.set_access(0, 4 * g, &other, VmAccess::Readwrite)?;
    let there = range.buffer::<u32>(&other, 0, 4 * g / 4)?;
    let module = other.compile(KERNELS, &CompileOptions::new())?;
    let pattern = module.function("pattern")?;
    let to = (4 * g / 4) as u64;
    // SAFETY: the elements [0, to) of `there`.
    unsafe {
        pattern
            .launch(LaunchConfig::new(64, 256))
            .args((&there, &0u64, &to, &77u32))
            .run()?
    };
    other.synchronize()?;
    let here = range.buffer::<u32>(device, 0, 4 * g / 4)?.to_vec()?;
    if let Some(i) = (0..here.len()).find(|&i| here[i] != value_at(i as u64, 77)) {
        return Err(format!("element {i} written by device 1 reads {} here", here[i]).into());
    }
    export_to_child(device, &other, 1)
}

fn virtual_memory_refusals(device: &Device) -> TestResult {
    let g = granularity(device)?;
    let ia = ErrorKind::InvalidArgument;
    expect_err(
        PhysicalMemory::create(device, g + 4096, PhysicalMemoryFlags::NONE),
        ia,
        "is not a multiple of the virtual memory granularity",
        "memory off the granularity",
    )?;
    expect_err(
        AddressRange::reserve(device, 4096),
        ia,
        "bytes 4096 is not a multiple",
        "a range off the granularity",
    )?;
    let memory = PhysicalMemory::create(device, 2 * g, PhysicalMemoryFlags::NONE)?;
    let range = AddressRange::reserve(device, 4 * g)?;
    range.map(g, &memory)?;
    let other = PhysicalMemory::create(device, g, PhysicalMemoryFlags::NONE)?;
    expect_err(
        range.map(2 * g, &other),
        ia,
        "overlaps the memory already at",
        "mapping over a mapped range",
    )?;
    expect_err(
        range.map(3 * g, &memory),
        ErrorKind::OutOfRange,
        "reaches past the end",
        "a mapping past the end",
    )?;
    expect_err(
        range.set_access(0, 4 * g, device, VmAccess::Readwrite),
        ia,
        "which has no memory mapped",
        "access to an unmapped address",
    )?;
    expect_err(
        range.buffer::<u8>(device, 0, 8),
        ia,
        "which has no memory mapped",
        "a buffer over an unmapped address",
    )?;
    expect_err(range.unmap(g, g), ia, "in two", "unmapping half a mapping")?;
    expect_err(
        other.export_fd(),
        ia,
        "without CUABI_PHYSICAL_MEMORY_EXPORTABLE",
        "exporting memory made without the flag",
    )?;
    let (a, b) = UnixStream::pair()?;
    expect_err(
        PhysicalMemory::import_fd(device, &a, g),
        ia,
        "is a socket",
        "importing a socket",
    )?;
    drop((a, b));
    match memory.free() {
        Err((_, e)) if e.message().contains("is still mapped at offset") => {}
        other => {
            return Err(format!("freeing mapped memory: {:?}", other.err().map(|p| p.1)).into())
        }
    }
    let mut plain = device.alloc::<u32>(64)?;
    expect_err(
        plain.grow(g / 4),
        ia,
        "not growable",
        "growing a plain buffer",
    )?;
    let mut grown = device.alloc_growable::<u32>(g / 4, 2 * g / 4)?;
    expect_err(
        grown.grow(3 * g / 4),
        ErrorKind::OutOfRange,
        "past the buffer's reservation of",
        "growing past the reservation",
    )?;
    expect_err(
        grown.ipc_handle(),
        ia,
        "this one is a growable buffer",
        "a growable IPC handle",
    )
}
