//! GPU tests of the memory API: stream-ordered allocation and pools (in
//! stream capture too), managed memory, IPC with a child process (a buffer,
//! an event, a pool allocation through an exported file descriptor), peer
//! queries and copy paths, pitched memory, fills, 2D and 3D copies, arrays,
//! textures and surfaces.
//!
//! The IPC tests run this very binary again as the child
//! ([`std::env::current_exe`]) with [`CHILD_FLAG`] and the handles in hex on
//! its command line; `main` hands such a run to [`run_child`] before
//! anything else.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::process::{Command, ExitCode};

use cuabi::sys;
use cuabi::{
    AddressMode, ArrayDesc, ArrayFlags, ArrayFormat, BufferKind, CaptureMode, CompileOptions,
    Copy3d, CopyPath, Device, ErrorKind, EventFlags, FilterMode, IpcHandle, LaunchConfig, Location,
    ManagedFlags, MemoryAdvice, MemoryPoolDesc, Module, StreamFlags, Surface, Texture,
    TextureOptions, TextureSource,
};

use super::{Rng, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    buffers_report_their_kind,
    allocations_answer_their_address_in_one_call,
    stream_ordered_allocation_from_a_user_pool,
    stream_ordered_allocation_from_the_default_pool,
    capture_allocates_and_frees_in_the_graph,
    managed_memory_host_view_kernel_prefetch_and_advice,
    ipc_buffer_opened_and_written_by_a_child_process,
    ipc_event_orders_the_child_after_the_parents_kernel,
    ipc_pool_allocation_through_an_exported_fd,
    ipc_handles_refused_in_this_process,
    peer_queries_and_copy_paths,
    pitched_rows_round_trip_and_a_kernel_reads_them_by_pitch,
    copy_3d_between_host_array_and_buffers,
    fills_of_8_16_and_32_bit_values,
    texture_over_a_2d_array_interpolates_linearly,
    texture_over_linear_memory_fetches_elements,
    texture_over_pitched_memory_reads_rows,
    surface_written_by_kernels_is_read_back,
    layered_array_through_a_layered_texture,
    cubemap_filled_face_by_face_is_read_by_tex_cubemap,
];

/// The first argument that makes this binary an IPC child.
pub const CHILD_FLAG: &str = "--cuabi-ipc-child";

const KERNELS: &str = r#"
extern "C" __global__ void scale_add(const float* in, float* out, float a, float b, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * a + b;
}

extern "C" __global__ void through_scratch(const float* in, float* scratch, float* out, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) {
    scratch[i] = in[i] * 2.0f;
    out[i] = scratch[i] + 1.0f;
  }
}

extern "C" __global__ void double_in_place(float* x, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

extern "C" __global__ void pitched_rows(const char* in, size_t pitch, float* out,
                                        unsigned w, unsigned h)
{
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    const float* row = (const float*)(in + y * pitch);
    out[y * w + x] = row[x] * 2.0f;
  }
}

extern "C" __global__ void spin_then_store(int* flag, unsigned long long ns, int value)
{
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  *flag = value;
}

extern "C" __global__ void tex2d_at(cudaTextureObject_t tex, const float* uv, float* out,
                                    unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(tex, uv[2 * i], uv[2 * i + 1]);
}

extern "C" __global__ void tex1d_fetch(cudaTextureObject_t tex, float* out, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tex, (int)i) * 3.0f;
}

extern "C" __global__ void tex2d_grid(cudaTextureObject_t tex, float* out, unsigned w, unsigned h)
{
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

extern "C" __global__ void tex_layered(cudaTextureObject_t tex, float* out, unsigned w, unsigned h)
{
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  unsigned layer = blockIdx.z;
  if (x < w && y < h) out[(layer * h + y) * w + x] = tex2DLayered<float>(tex, x + 0.5f, y + 0.5f, layer);
}

// Reads a cubemap at the centre of each face, in CUDA's face order +X, -X,
// +Y, -Y, +Z, -Z: the direction (1, 0, 0) for +X and so on.
extern "C" __global__ void cube_centres(cudaTextureObject_t tex, float* out)
{
  int face = threadIdx.x;
  if (face < 6) {
    float sign = face % 2 ? -1.0f : 1.0f;
    int axis = face / 2;
    out[face] = texCubemap<float>(tex, axis == 0 ? sign : 0.0f, axis == 1 ? sign : 0.0f,
                                  axis == 2 ? sign : 0.0f);
  }
}

extern "C" __global__ void surf_fill(cudaSurfaceObject_t surf, unsigned w, unsigned h)
{
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite((float)(y * 1000 + x), surf, (int)(x * 4), (int)y);
}

extern "C" __global__ void surf_double(cudaSurfaceObject_t surf, unsigned w, unsigned h)
{
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float v;
    surf2Dread(&v, surf, (int)(x * 4), (int)y);
    surf2Dwrite(v * 2.0f, surf, (int)(x * 4), (int)y);
  }
}
"#;

fn kernels(device: &Device) -> cuabi::Result<Module> {
    device.compile(
        KERNELS,
        &CompileOptions::new()
            .name("memory_kernels.cu")
            .option("--fmad=false"),
    )
}

/// 256-thread blocks over `n` elements.
fn grid_1d(n: usize) -> LaunchConfig {
    LaunchConfig::new(n.div_ceil(256) as u32, 256)
}

/// 16 x 16 blocks over `w` x `h` (x `depth` in z).
fn grid_2d(w: usize, h: usize, depth: usize) -> LaunchConfig {
    let blocks = (w.div_ceil(16) as u32, h.div_ceil(16) as u32, depth as u32);
    LaunchConfig::new(blocks, (16, 16))
}

/// The first index where `got` and `want` differ, with both values.
fn first_difference<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("lengths {} and {}", got.len(), want.len()));
    }
    let i = (0..got.len()).find(|&i| got[i] != want[i])?;
    Some(format!(
        "element {i} is {:?}, expected {:?}",
        got[i], want[i]
    ))
}

macro_rules! ensure_same {
    ($got:expr, $want:expr, $($msg:tt)+) => {
        if let Some(why) = first_difference(&$got, &$want) {
            return Err(format!("{}: {why}", format!($($msg)+)).into());
        }
    };
}

/// An error's kind and a needle its message must hold.
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

/// `Device::alloc` and `alloc_async` answer the handle and the device
/// address in one call (`cuabi_buffer_alloc_with_pointer` and its
/// stream-ordered form): the address is the one the buffer reports, and
/// memory written through it (a buffer wrapping that address) is the
/// buffer's.
fn allocations_answer_their_address_in_one_call(device: &Device) -> TestResult {
    let stream = device.create_stream()?;
    let plain = device.alloc::<u32>(256)?;
    let ordered = device.alloc_async::<u32>(256, None, Some(&stream))?;
    stream.synchronize()?;
    for (what, buffer, value) in [("alloc", &plain, 0x1234_5678), ("alloc_async", &ordered, 7)] {
        let mut reported = 0u64;
        let status = unsafe { sys::cuabi_buffer_get_pointer(buffer.as_raw(), &mut reported) };
        ensure!(
            status == sys::CUABI_SUCCESS
                && buffer.device_ptr() != 0
                && buffer.device_ptr() == reported,
            "{what}: device_ptr {:#x}, cuabi_buffer_get_pointer {reported:#x}",
            buffer.device_ptr()
        );
        let mut through = unsafe { device.wrap_buffer::<u32>(buffer.device_ptr(), 256)? };
        through.fill(value)?;
        let seen = buffer.to_vec()?;
        ensure!(
            seen.iter().all(|&v| v == value),
            "{what}: written through the address, read back {:?}",
            &seen[..4]
        );
    }
    Ok(())
}

fn buffers_report_their_kind(device: &Device) -> TestResult {
    let plain = device.alloc::<f32>(64)?;
    ensure!(
        plain.kind()? == BufferKind::Device,
        "alloc: {:?}",
        plain.kind()?
    );
    let wrapped = unsafe { device.wrap_buffer::<f32>(plain.device_ptr(), 64)? };
    ensure!(
        wrapped.kind()? == BufferKind::Wrapped,
        "wrap: {:?}",
        wrapped.kind()?
    );
    let ordered = device.alloc_async::<f32>(64, None, None)?;
    ensure!(
        ordered.kind()? == BufferKind::StreamOrdered,
        "alloc_async: {:?}",
        ordered.kind()?
    );
    let managed = device.alloc_managed::<f32>(64, ManagedFlags::NONE)?;
    ensure!(
        managed.kind()? == BufferKind::Managed,
        "managed: {:?}",
        managed.kind()?
    );
    let pitched = device.alloc_pitched::<f32>(64, 4)?;
    ensure!(
        pitched.kind()? == BufferKind::Pitched,
        "pitched: {:?}",
        pitched.kind()?
    );
    // A wrapped buffer is not freed in stream order: refused, and the
    // memory it names is left alone.
    expect_err(
        wrapped.free_async(None).map_err(|(_, e)| e),
        ErrorKind::InvalidArgument,
        "not stream-ordered",
        "free_async of a wrapped buffer",
    )?;
    ensure!(plain.to_vec()?.len() == 64, "the wrapped memory was freed");
    device.synchronize()?;
    Ok(())
}

fn stream_ordered_allocation_from_a_user_pool(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let scale_add = module.function("scale_add")?;
    let pool = device.create_memory_pool(&MemoryPoolDesc::new().release_threshold(1 << 20))?;
    ensure!(
        pool.release_threshold()? == 1 << 20,
        "threshold {}",
        pool.release_threshold()?
    );
    pool.set_release_threshold(32 << 20)?;
    ensure!(
        pool.release_threshold()? == 32 << 20,
        "threshold after set {}",
        pool.release_threshold()?
    );
    let fresh = pool.usage()?;
    ensure!(fresh.used_bytes == 0, "a new pool in use: {fresh:?}");

    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let n = 1usize << 20;
    let hx = Rng(7).vec(n);
    let mut pinned = device.alloc_pinned::<f32>(n)?;
    pinned.copy_from_slice(&hx);
    let mut x = device.alloc_async::<f32>(n, Some(&pool), Some(&stream))?;
    let out = device.alloc_async::<f32>(n, Some(&pool), Some(&stream))?;
    ensure!(
        x.kind()? == BufferKind::StreamOrdered,
        "kind {:?}",
        x.kind()?
    );
    let usage = pool.usage()?;
    ensure!(
        usage.used_bytes >= 2 * 4 * n as u64 && usage.reserved_bytes >= usage.used_bytes,
        "two 4 MiB buffers: {usage:?}"
    );
    // SAFETY: the pinned memory and buffers outlive the synchronize below;
    // the kernel reads and writes n floats of each buffer.
    unsafe {
        x.copy_from_async(&pinned, &stream)?;
        scale_add
            .launch(grid_1d(n))
            .stream(&stream)
            .args((&x, &out, &3.0f32, &0.5f32, &n))
            .run()?;
        out.copy_to_async(&mut pinned, &stream)?;
    }
    let (x_raw, out_raw) = (x.as_raw(), out.as_raw());
    // Freed in order after the copy back.
    x.free_async(Some(&stream)).map_err(|(_, e)| e)?;
    out.free_async(Some(&stream)).map_err(|(_, e)| e)?;
    stream.synchronize()?;
    let want: Vec<f32> = hx.iter().map(|v| v * 3.0 + 0.5).collect();
    ensure_same!(pinned[..], want[..], "scale_add through pool memory");
    // The handles are dead: the library never touches the memory again.
    for raw in [x_raw, out_raw] {
        let mut bytes = 0usize;
        let status = unsafe { sys::cuabi_buffer_get_size(raw, &mut bytes) };
        ensure!(
            status == sys::CUABI_ERROR_INVALID_HANDLE,
            "a freed buffer's handle answered {}",
            cuabi::status_name(status)
        );
    }
    let usage = pool.usage()?;
    ensure!(usage.used_bytes == 0, "after free_async: {usage:?}");

    // Dropping a stream-ordered buffer frees it in order on its stream.
    let y = device.alloc_async::<u8>(4 << 20, Some(&pool), Some(&stream))?;
    ensure!(pool.usage()?.used_bytes >= 4 << 20, "{:?}", pool.usage()?);
    drop(y);
    stream.synchronize()?;
    ensure!(
        pool.usage()?.used_bytes == 0,
        "after drop: {:?}",
        pool.usage()?
    );

    // Trimming to 0 gives back everything not in use.
    pool.trim(0)?;
    let usage = pool.usage()?;
    ensure!(usage.reserved_bytes == 0, "after trim(0): {usage:?}");

    // A buffer keeps its pool alive.
    let kept = device.alloc_async::<u32>(256, Some(&pool), Some(&stream))?;
    drop(pool);
    let mut kept = kept;
    stream.synchronize()?;
    kept.copy_from(&[9u32; 256])?;
    ensure!(
        kept.to_vec()? == vec![9u32; 256],
        "a buffer of a dropped pool"
    );
    kept.free_async(Some(&stream)).map_err(|(_, e)| e)?;
    stream.synchronize()?;
    Ok(())
}

fn stream_ordered_allocation_from_the_default_pool(device: &Device) -> TestResult {
    let pool = device.default_memory_pool()?;
    let threshold = pool.release_threshold()?;
    let before = pool.usage()?;
    let mut x = device.alloc_async::<f32>(1 << 16, None, None)?;
    ensure!(
        x.kind()? == BufferKind::StreamOrdered,
        "kind {:?}",
        x.kind()?
    );
    let during = pool.usage()?;
    ensure!(
        during.used_bytes >= before.used_bytes + (4 << 16),
        "the default pool did not serve it: {before:?} then {during:?}"
    );
    device.synchronize()?;
    x.copy_from(&vec![1.5f32; 1 << 16])?;
    ensure!(x.to_vec()?.iter().all(|&v| v == 1.5), "round trip");
    x.free_async(None).map_err(|(_, e)| e)?;
    device.synchronize()?;
    ensure!(
        pool.usage()?.used_bytes == before.used_bytes,
        "{:?}",
        pool.usage()?
    );
    // Dropping the default pool's handle leaves the pool alone.
    drop(pool);
    let pool = device.default_memory_pool()?;
    ensure!(pool.release_threshold()? == threshold, "threshold changed");
    Ok(())
}

fn capture_allocates_and_frees_in_the_graph(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let through = module.function("through_scratch")?;
    let n = 4096usize;
    let mut x = device.alloc_zeroed::<f32>(n)?;
    let out = device.alloc_zeroed::<f32>(n)?;
    device.synchronize()?;
    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;

    stream.begin_capture(CaptureMode::ThreadLocal)?;
    let captured = (|| -> cuabi::Result<()> {
        let scratch = device.alloc_async::<f32>(n, None, Some(&stream))?;
        // SAFETY: n floats of each buffer; the graph frees `scratch` after
        // the kernel, and `x` and `out` outlive every replay.
        unsafe {
            through
                .launch(grid_1d(n))
                .stream(&stream)
                .args((&x, &scratch, &out, &n))
                .run()?;
        }
        scratch.free_async(Some(&stream)).map_err(|(_, e)| e)
    })();
    // End the capture even when queuing failed, so the stream is usable.
    let graph = stream.end_capture();
    captured?;
    let graph = graph?;
    ensure!(
        graph.node_count()? == 3,
        "allocation, kernel and free: {} nodes",
        graph.node_count()?
    );
    ensure!(graph.kernel_node_count()? == 1, "kernel nodes");
    let exec = graph.instantiate()?;
    for round in 0..2 {
        let hx: Vec<f32> = (0..n).map(|i| (i + 1000 * round) as f32).collect();
        x.copy_from(&hx)?;
        device.synchronize()?;
        // SAFETY: as captured; `x` and `out` are alive.
        unsafe { exec.launch(&stream)? };
        stream.synchronize()?;
        let want: Vec<f32> = hx.iter().map(|v| v * 2.0 + 1.0).collect();
        ensure_same!(out.to_vec()?, want, "replay {round}");
    }
    Ok(())
}

fn managed_memory_host_view_kernel_prefetch_and_advice(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let double = module.function("double_in_place")?;
    let n = 1usize << 16;
    let mut data = device.alloc_managed::<f32>(n, ManagedFlags::NONE)?;
    ensure!(
        data.host_ptr() as u64 == data.device_ptr(),
        "host {:p}, device {:#x}",
        data.host_ptr(),
        data.device_ptr()
    );
    // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
    let concurrent = device.attribute(89)? == 1;
    ensure!(data.concurrent_access() == concurrent, "concurrent access");
    if !concurrent {
        expect_err(
            data.host_view().map(drop),
            ErrorKind::NotSupported,
            "concurrent managed access",
            "host_view without concurrent managed access",
        )?;
        device.synchronize()?;
        // SAFETY: no kernel runs on the device (this test launches none).
        let zeros = unsafe { data.as_host_slice().iter().all(|&v| v == 0.0) };
        ensure!(zeros, "fresh managed memory is not zero");
        return Ok(());
    }
    {
        let mut view = data.host_view()?;
        ensure!(view.len() == n, "view length {}", view.len());
        ensure!(
            view.iter().all(|&v| v == 0.0),
            "fresh managed memory is not zero"
        );
        for (i, v) in view.iter_mut().enumerate() {
            *v = i as f32;
        }
    }
    let stream = device.create_stream()?;
    data.prefetch(Location::Device(device.ordinal()), Some(&stream))?;
    // SAFETY: n floats of `data`; host_view waits for the kernel.
    unsafe {
        double
            .launch(grid_1d(n))
            .stream(&stream)
            .args((&data, &n))
            .run()?;
    }
    let want: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    ensure_same!(data.host_view()?[..], want[..], "doubled by the kernel");

    data.prefetch(Location::Host, Some(&stream))?;
    data.prefetch_range(n / 2, n / 4, Location::from(device), None)?;
    stream.synchronize()?;
    device.synchronize()?;
    ensure_same!(data.host_view()?[..], want[..], "after prefetches");

    let here = Location::Device(device.ordinal());
    for (advice, location) in [
        (MemoryAdvice::SetReadMostly, here),
        (MemoryAdvice::UnsetReadMostly, here),
        (MemoryAdvice::SetPreferredLocation, here),
        (MemoryAdvice::UnsetPreferredLocation, here),
        (MemoryAdvice::SetPreferredLocation, Location::Host),
        (MemoryAdvice::UnsetPreferredLocation, Location::Host),
        (MemoryAdvice::SetAccessedBy, here),
        (MemoryAdvice::UnsetAccessedBy, here),
    ] {
        data.advise(advice, location)
            .map_err(|e| format!("{advice:?} at {location:?}: {e}"))?;
    }
    // Read-mostly copies stay coherent: a kernel writes, the host reads.
    data.advise_range(0, n / 2, MemoryAdvice::SetReadMostly, here)?;
    unsafe {
        double
            .launch(grid_1d(n))
            .stream(&stream)
            .args((&data, &n))
            .run()?;
    }
    let want: Vec<f32> = (0..n).map(|i| 4.0 * i as f32).collect();
    ensure_same!(
        data.host_view()?[..],
        want[..],
        "doubled again with read-mostly advice"
    );

    // Host-attached memory is viewed and copied too.
    let mut attached = device.alloc_managed::<u32>(1000, ManagedFlags::ATTACH_HOST)?;
    attached.host_view()?.fill(7);
    ensure!(
        attached.to_vec()? == vec![7u32; 1000],
        "host-attached memory"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// IPC: the child process
// ---------------------------------------------------------------------------

/// Runs the child's part when this process was started as one: `Some` with
/// its exit code, `None` for an ordinary run.
pub fn run_child() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some(CHILD_FLAG) {
        return None;
    }
    let result = child(&args[1..]);
    Some(match result {
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

/// The IPC test data: element `i`.
fn ipc_value(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// `buffer HANDLE N`: opens N u32s, checks them and writes their complement.
/// `event EVENT_HANDLE FLAG_HANDLE`: waits for the parent's event, then
/// reads the flag its kernel stored.
/// `pool FD HANDLE N`: imports the pool from the inherited descriptor and
/// does what `buffer` does with its allocation.
fn child(args: &[String]) -> Result<String, Box<dyn std::error::Error>> {
    let device = Device::get(0)?;
    let arg = |i: usize| -> Result<&str, String> {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| format!("argument {i} is missing: {args:?}"))
    };
    match arg(0)? {
        "buffer" => {
            let handle = IpcHandle::from_hex(arg(1)?)?;
            let n: usize = arg(2)?.parse()?;
            check_and_complement(&device, &handle, None, n)
        }
        "pool" => {
            let fd: i32 = arg(1)?.parse()?;
            // SAFETY: the parent left this descriptor open for this process.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            let pool = device.import_memory_pool(fd)?;
            let handle = IpcHandle::from_hex(arg(2)?)?;
            let n: usize = arg(3)?.parse()?;
            check_and_complement(&device, &handle, Some(&pool), n)
        }
        "event" => {
            let event = device.open_ipc_event(&IpcHandle::from_hex(arg(1)?)?)?;
            let flag = device.open_ipc_buffer::<i32>(&IpcHandle::from_hex(arg(2)?)?, None)?;
            let pending = !event.query()?;
            // Both ways of waiting: a stream of this process, then the event.
            let stream = device.create_stream()?;
            stream.wait_event(&event)?;
            stream.synchronize()?;
            event.synchronize()?;
            let value = flag.to_vec()?;
            if value != [42] {
                return Err(format!("after the event the flag is {value:?}, not [42]").into());
            }
            Ok(format!(
                "the flag was 42 (event pending when opened: {pending})"
            ))
        }
        other => Err(format!("unknown child mode '{other}'").into()),
    }
}

fn check_and_complement(
    device: &Device,
    handle: &IpcHandle,
    pool: Option<&cuabi::MemoryPool>,
    n: usize,
) -> Result<String, Box<dyn std::error::Error>> {
    let mut buffer = device.open_ipc_buffer::<u32>(handle, pool)?;
    if buffer.kind()? != BufferKind::Ipc {
        return Err(format!("kind {:?}", buffer.kind()?).into());
    }
    if buffer.len() != n {
        return Err(format!("{} elements opened, {n} exported", buffer.len()).into());
    }
    let values = buffer.to_vec()?;
    if let Some(i) = (0..n).find(|&i| values[i] != ipc_value(i)) {
        return Err(format!(
            "element {i} is {:#x}, expected {:#x}",
            values[i],
            ipc_value(i)
        )
        .into());
    }
    let complement: Vec<u32> = values.iter().map(|v| !v).collect();
    buffer.copy_from(&complement)?;
    device.synchronize()?;
    Ok(format!("{n} elements checked and complemented"))
}

// ---------------------------------------------------------------------------
// IPC: the parent's side
// ---------------------------------------------------------------------------

/// Runs this binary as a child with `args`; an error with its output unless
/// it succeeded.
fn run_child_process(args: &[String]) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let output = Command::new(exe)
        .arg(CHILD_FLAG)
        .args(args)
        .output()
        .map_err(|e| format!("starting the child: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() && text.contains("child ok") {
        Ok(text.trim().to_owned())
    } else {
        Err(format!(
            "the child ({}) said: {}",
            output.status,
            text.trim()
        ))
    }
}

fn ipc_data(n: usize) -> Vec<u32> {
    (0..n).map(ipc_value).collect()
}

fn ipc_buffer_opened_and_written_by_a_child_process(device: &Device) -> TestResult {
    let n = 4096usize;
    let data = ipc_data(n);
    let buffer = device.buffer_from_slice(&data)?;
    device.synchronize()?;
    let handle = buffer.ipc_handle()?;
    run_child_process(&["buffer".into(), handle.to_hex(), n.to_string()])?;
    let want: Vec<u32> = data.iter().map(|v| !v).collect();
    ensure_same!(buffer.to_vec()?, want, "what the child wrote");

    // A pitched buffer is shared the same way.
    let mut pitched = device.alloc_pitched::<u32>(n / 4, 4)?;
    let bytes = pitched.size_bytes();
    let values = ipc_data(bytes / 4);
    pitched.copy_from(&values)?;
    device.synchronize()?;
    let handle = pitched.ipc_handle()?;
    run_child_process(&["buffer".into(), handle.to_hex(), (bytes / 4).to_string()])?;
    let want: Vec<u32> = values.iter().map(|v| !v).collect();
    ensure_same!(
        pitched.to_vec()?,
        want,
        "what the child wrote into the pitched buffer"
    );
    Ok(())
}

fn ipc_event_orders_the_child_after_the_parents_kernel(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let spin = module.function("spin_then_store")?;
    let flag = device.alloc_zeroed::<i32>(1)?;
    device.synchronize()?;
    let event = device.create_event_with(EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING)?;
    let event_handle = event.ipc_handle()?;
    let flag_handle = flag.ipc_handle()?;
    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    // SAFETY: one int of `flag`, which outlives the synchronize below.
    unsafe {
        spin.launch(LaunchConfig::new(1, 1))
            .stream(&stream)
            .args((&flag, &1_500_000_000u64, &42i32))
            .run()?;
    }
    event.record(&stream)?;
    let child = run_child_process(&["event".into(), event_handle.to_hex(), flag_handle.to_hex()]);
    stream.synchronize()?;
    let said = child?;
    ensure!(said.contains("the flag was 42"), "{said}");
    ensure!(flag.to_vec()? == [42], "the parent's flag");

    // An event made without INTERPROCESS has no handle.
    let plain = device.create_event_with(EventFlags::DISABLE_TIMING)?;
    expect_err(
        plain.ipc_handle(),
        ErrorKind::InvalidArgument,
        "INTERPROCESS",
        "ipc_handle of an ordinary event",
    )
}

/// Clears `FD_CLOEXEC`, so that a child process inherits `fd`.
fn inheritable(fd: &OwnedFd) -> Result<(), String> {
    extern "C" {
        fn fcntl(fd: i32, cmd: i32, ...) -> i32;
    }
    const F_GETFD: i32 = 1;
    const F_SETFD: i32 = 2;
    const FD_CLOEXEC: i32 = 1;
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns.
    let flags = unsafe { fcntl(raw, F_GETFD) };
    if flags < 0 || unsafe { fcntl(raw, F_SETFD, flags & !FD_CLOEXEC) } < 0 {
        return Err(format!(
            "fcntl on descriptor {raw}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn ipc_pool_allocation_through_an_exported_fd(device: &Device) -> TestResult {
    let pool = device.create_memory_pool(&MemoryPoolDesc::new().ipc(true))?;
    let stream = device.create_stream()?;
    let n = 2048usize;
    let data = ipc_data(n);
    let mut buffer = device.alloc_async::<u32>(n, Some(&pool), Some(&stream))?;
    stream.synchronize()?;
    buffer.copy_from(&data)?;
    device.synchronize()?;
    let handle = buffer.ipc_handle()?;
    let fd = pool.export_fd()?;
    inheritable(&fd)?;
    let child = run_child_process(&[
        "pool".into(),
        fd.as_raw_fd().to_string(),
        handle.to_hex(),
        n.to_string(),
    ]);
    drop(fd);
    child?;
    let want: Vec<u32> = data.iter().map(|v| !v).collect();
    ensure_same!(
        buffer.to_vec()?,
        want,
        "what the child wrote into the pool allocation"
    );
    buffer.free_async(Some(&stream)).map_err(|(_, e)| e)?;
    stream.synchronize()?;

    // A pool made without IPC exports nothing, nor do its allocations.
    let private = device.create_memory_pool(&MemoryPoolDesc::new())?;
    expect_err(
        private.export_fd().map(drop),
        ErrorKind::InvalidArgument,
        "made without CUABI_MEMORY_POOL_IPC",
        "export_fd of a pool made without IPC",
    )?;
    let local = device.alloc_async::<u32>(16, Some(&private), Some(&stream))?;
    expect_err(
        local.ipc_handle(),
        ErrorKind::InvalidArgument,
        "made without CUABI_MEMORY_POOL_IPC",
        "ipc_handle of a private pool's allocation",
    )?;
    local.free_async(Some(&stream)).map_err(|(_, e)| e)?;
    stream.synchronize()?;
    Ok(())
}

fn ipc_handles_refused_in_this_process(device: &Device) -> TestResult {
    let buffer = device.buffer_from_slice(&ipc_data(256))?;
    let handle = buffer.ipc_handle()?;
    expect_err(
        device.open_ipc_buffer::<u32>(&handle, None),
        ErrorKind::InvalidArgument,
        "exported by this process",
        "opening a handle in the process that made it",
    )?;
    expect_err(
        device.open_ipc_buffer::<u32>(&IpcHandle::from([0x5a; IpcHandle::SIZE]), None),
        ErrorKind::InvalidArgument,
        "not a cuabi IPC handle",
        "opening garbage",
    )?;
    let mut damaged = *handle.as_bytes();
    damaged[40] ^= 1;
    expect_err(
        device.open_ipc_buffer::<u32>(&IpcHandle::from(damaged), None),
        ErrorKind::InvalidArgument,
        "checksum",
        "opening a handle with one bit flipped",
    )?;
    let event = device.create_event_with(EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING)?;
    expect_err(
        device.open_ipc_buffer::<u32>(&event.ipc_handle()?, None),
        ErrorKind::InvalidArgument,
        "an event's handle, not a buffer's",
        "opening an event's handle as a buffer",
    )?;
    expect_err(
        device.open_ipc_event(&handle),
        ErrorKind::InvalidArgument,
        "a buffer's handle, not an event's",
        "opening a buffer's handle as an event",
    )?;
    let managed = device.alloc_managed::<u32>(16, ManagedFlags::NONE)?;
    expect_err(
        managed.ipc_handle(),
        ErrorKind::InvalidArgument,
        "can be shared",
        "ipc_handle of a managed buffer",
    )?;
    // The buffer still works after all that.
    ensure!(
        buffer.to_vec()? == ipc_data(256),
        "the exported buffer changed"
    );
    Ok(())
}

fn peer_queries_and_copy_paths(device: &Device) -> TestResult {
    let itself = Device::get(device.ordinal())?;
    ensure!(
        !device.can_access_peer(&itself)?,
        "a device is its own peer"
    );
    expect_err(
        device.enable_peer_access(&itself),
        ErrorKind::InvalidArgument,
        "not its own peer",
        "enable_peer_access(d, d)",
    )?;
    expect_err(
        device.peer_attribute(&itself, 1),
        ErrorKind::InvalidArgument,
        "not its own peer",
        "peer_attribute(d, d)",
    )?;
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let a = device.buffer_from_slice(&data)?;
    let mut b = device.alloc_zeroed::<f32>(1000)?;
    ensure!(
        b.copy_path(&a)? == CopyPath::SameDevice,
        "path {:?}",
        b.copy_path(&a)?
    );
    b.copy_from_buffer(&a)?;
    ensure_same!(b.to_vec()?, data, "same-device copy");

    if Device::count()? < 2 {
        return Ok(());
    }
    // Two devices: the path follows peer access.
    let other = Device::get(if device.ordinal() == 0 { 1 } else { 0 })?;
    let can = device.can_access_peer(&other)?;
    // CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
    let supported = device.peer_attribute(&other, 2)?;
    ensure!(
        supported == i32::from(can),
        "access supported {supported}, can_access_peer {can}"
    );
    let mut c = other.alloc_zeroed::<f32>(1000)?;
    other.disable_peer_access(device)?;
    ensure!(
        c.copy_path(&a)? == CopyPath::ThroughHost,
        "without peer access: {:?}",
        c.copy_path(&a)?
    );
    c.copy_from_buffer(&a)?;
    ensure_same!(c.to_vec()?, data, "copy through the host");
    if other.can_access_peer(device)? {
        other.enable_peer_access(device)?;
        other.enable_peer_access(device)?; // enabling twice succeeds
        ensure!(
            c.copy_path(&a)? == CopyPath::Peer,
            "with peer access: {:?}",
            c.copy_path(&a)?
        );
        c.fill(0.0)?;
        c.copy_from_buffer(&a)?;
        ensure_same!(c.to_vec()?, data, "peer copy");
        other.disable_peer_access(device)?;
    } else {
        expect_err(
            other.enable_peer_access(device),
            ErrorKind::NotSupported,
            "cannot access the memory of device",
            "enable_peer_access of a pair that cannot",
        )?;
    }
    Ok(())
}

fn pitched_rows_round_trip_and_a_kernel_reads_them_by_pitch(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let rows = module.function("pitched_rows")?;
    let (w, h) = (37usize, 19usize);
    let mut image = device.alloc_pitched::<f32>(w, h)?;
    let pitch = image.pitch();
    ensure!(
        pitch >= w * 4 && pitch % 4 == 0,
        "pitch {pitch} for rows of {} bytes",
        w * 4
    );
    ensure!(
        (image.width(), image.height()) == (w, h),
        "shape {}x{}",
        image.width(),
        image.height()
    );
    ensure!(
        image.size_bytes() <= pitch * h,
        "size {}",
        image.size_bytes()
    );
    let host_row = 41usize;
    ensure!(
        pitch != host_row * 4,
        "the host pitch must differ from the device's"
    );
    let mut src = vec![-1.0f32; host_row * h];
    for y in 0..h {
        for x in 0..w {
            src[y * host_row + x] = (y * 100 + x) as f32;
        }
    }
    image.copy_from_rows(&src, host_row)?;

    let out = device.alloc_zeroed::<f32>(w * h)?;
    let (wu, hu) = (w as u32, h as u32);
    unsafe {
        rows.launch(grid_2d(w, h, 1))
            .args((&image, &pitch, &out, &wu, &hu))
            .run()?;
    }
    device.synchronize()?;
    let want: Vec<f32> = (0..w * h)
        .map(|i| 2.0 * ((i / w) * 100 + i % w) as f32)
        .collect();
    ensure_same!(out.to_vec()?, want, "the kernel's rows read by pitch");

    // Back to the host with yet another pitch; the gaps are left alone.
    let dst_row = 45usize;
    let mut dst = vec![7.0f32; dst_row * h];
    image.copy_to_rows(&mut dst, dst_row)?;
    for y in 0..h {
        ensure_same!(
            dst[y * dst_row..y * dst_row + w],
            src[y * host_row..y * host_row + w],
            "row {y}"
        );
        ensure!(
            dst[y * dst_row + w..(y + 1) * dst_row]
                .iter()
                .all(|&v| v == 7.0),
            "the gap after row {y} was written"
        );
    }

    // A box inside: 5 elements of rows 2..5 from column 3.
    let mut part = vec![0.0f32; 5 * 3];
    Copy3d::new()
        .from_buffer(&image)
        .src_offset(3 * 4, 2, 0)
        .to_host(&mut part)
        .extent(5 * 4, 3, 1)
        .run()?;
    let want: Vec<f32> = (0..15)
        .map(|i| ((2 + i / 5) * 100 + 3 + i % 5) as f32)
        .collect();
    ensure_same!(part, want, "a box out of the pitched buffer");

    // A host slice one row short is refused before anything is copied.
    expect_err(
        image.copy_from_rows(&src[..host_row * (h - 1)], host_row),
        ErrorKind::OutOfRange,
        "source",
        "copy_from_rows of a short slice",
    )?;
    // A box past the buffer's rows is the library's to refuse.
    expect_err(
        Copy3d::new()
            .from_buffer(&image)
            .src_offset(0, h - 1, 0)
            .to_host(&mut part)
            .extent(4, 2, 1)
            .run(),
        ErrorKind::OutOfRange,
        "src box reaches byte",
        "a box past the last row",
    )
}

fn copy_3d_between_host_array_and_buffers(device: &Device) -> TestResult {
    let (w, h, d) = (8usize, 5usize, 3usize);
    let desc = ArrayDesc::new_3d(ArrayFormat::F32, 1, w, h, d);
    let array = device.create_array(&desc)?;
    ensure!(array.desc()? == desc, "desc {:?}", array.desc()?);
    ensure!(array.cu_array()? != 0, "no CUarray");
    let volume: Vec<f32> = (0..w * h * d).map(|i| i as f32 + 0.25).collect();
    let row = w * 4;
    Copy3d::new()
        .from_host(&volume)
        .to_array(&array)
        .extent(row, h, d)
        .run()?;
    let mut back = vec![0.0f32; w * h * d];
    Copy3d::new()
        .from_array(&array)
        .to_host(&mut back)
        .extent(row, h, d)
        .run()?;
    ensure_same!(back, volume, "host -> array -> host");
    let mut whole = vec![0.0f32; w * h * d];
    array.copy_to_host(&mut whole)?;
    ensure_same!(whole, volume, "Array::copy_to_host");

    // A box: elements 2..5 of rows 1..3 of slices 1..3, into a tight host box.
    let mut part = vec![0.0f32; 3 * 2 * 2];
    Copy3d::new()
        .from_array(&array)
        .src_offset(2 * 4, 1, 1)
        .to_host(&mut part)
        .extent(3 * 4, 2, 2)
        .run()?;
    let want: Vec<f32> = (0..12)
        .map(|i| {
            let (x, y, z) = (2 + i % 3, 1 + (i / 3) % 2, 1 + i / 6);
            volume[(z * h + y) * w + x]
        })
        .collect();
    ensure_same!(part, want, "a box out of the array");

    // Host memory with slack: rows 10 floats apart, slices 6 rows apart.
    let mut loose = vec![-1.0f32; 10 * 6 * d];
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                loose[(z * 6 + y) * 10 + x] = 1000.0 + volume[(z * h + y) * w + x];
            }
        }
    }
    Copy3d::new()
        .from_host(&loose)
        .src_layout(10 * 4, 6)
        .to_array(&array)
        .extent(row, h, d)
        .run()?;
    array.copy_to_host(&mut whole)?;
    let want: Vec<f32> = volume.iter().map(|v| v + 1000.0).collect();
    ensure_same!(whole, want, "a host layout with slack");

    // Buffer -> array -> buffer, asynchronously on a stream.
    let stream = device.create_stream()?;
    let src = device.buffer_from_slice(&volume)?;
    let mut dst = device.alloc_zeroed::<f32>(w * h * d)?;
    device.synchronize()?;
    // SAFETY: the buffers and the array outlive the synchronize below.
    unsafe {
        Copy3d::new()
            .from_buffer(&src)
            .to_array(&array)
            .extent(row, h, d)
            .run_async(Some(&stream))?;
        Copy3d::new()
            .from_array(&array)
            .to_buffer(&mut dst)
            .extent(row, h, d)
            .run_async(Some(&stream))?;
    }
    stream.synchronize()?;
    ensure_same!(dst.to_vec()?, volume, "buffer -> array -> buffer");

    // The library checks the array's extent.
    expect_err(
        Copy3d::new()
            .from_host(&volume)
            .to_array(&array)
            .dst_offset(0, 0, 1)
            .extent(row, h, d)
            .run(),
        ErrorKind::OutOfRange,
        "dst box's slices [1, 4) exceed the array's depth of 3",
        "a box past the array's depth",
    )?;
    expect_err(
        Copy3d::new().from_host(&volume).extent(row, h, d).run(),
        ErrorKind::InvalidArgument,
        "dst: none of dst_host, dst_buffer, dst_array is set",
        "a copy with no destination",
    )
}

fn fills_of_8_16_and_32_bit_values(device: &Device) -> TestResult {
    let mut a = device.alloc::<u16>(1000)?;
    a.fill(0xBEEF)?;
    a.fill_range(10, 20, 0x1234)?;
    let want: Vec<u16> = (0..1000)
        .map(|i| {
            if (10..30).contains(&i) {
                0x1234
            } else {
                0xBEEF
            }
        })
        .collect();
    ensure_same!(a.to_vec()?, want, "u16 fill");

    let mut b = device.alloc::<u32>(1000)?;
    b.fill(0xDEAD_BEEF)?;
    b.fill_range(999, 1, 7)?;
    let mut want = vec![0xDEAD_BEEFu32; 1000];
    want[999] = 7;
    ensure_same!(b.to_vec()?, want, "u32 fill");

    let mut c = device.alloc::<f32>(100)?;
    c.fill(-2.5)?;
    ensure_same!(c.to_vec()?, vec![-2.5f32; 100], "f32 fill");
    let mut d = device.alloc::<i16>(7)?;
    d.fill(-3)?;
    ensure_same!(d.to_vec()?, [-3i16; 7], "i16 fill");
    let mut e = device.alloc::<u8>(33)?;
    e.fill(0xA5)?;
    ensure_same!(e.to_vec()?, [0xA5u8; 33], "u8 fill");
    let mut f = device.alloc::<[u8; 4]>(10)?;
    f.fill([1, 2, 3, 4])?;
    ensure_same!(f.to_vec()?, [[1u8, 2, 3, 4]; 10], "[u8; 4] fill");

    let stream = device.create_stream()?;
    // SAFETY: `b` outlives the synchronize below.
    unsafe { b.fill_async(5, &stream)? };
    stream.synchronize()?;
    ensure_same!(b.to_vec()?, vec![5u32; 1000], "async u32 fill");

    expect_err(
        b.fill_range(990, 11, 1),
        ErrorKind::OutOfRange,
        "reaches past the end",
        "a fill past the end",
    )?;
    let mut g = device.alloc::<u64>(4)?;
    expect_err(
        g.fill(1),
        ErrorKind::InvalidArgument,
        "element_size",
        "an 8-byte fill",
    )?;
    ensure_same!(b.to_vec()?, vec![5u32; 1000], "the refused fill wrote");
    Ok(())
}

fn texture_over_a_2d_array_interpolates_linearly(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let sample = module.function("tex2d_at")?;
    let (w, h) = (4usize, 4usize);
    // Not linear in x, so an interpolated value differs from any texel.
    let texel = |x: usize, y: usize| (y * 10 + x * x) as f32;
    let texels: Vec<f32> = (0..w * h).map(|i| texel(i % w, i / w)).collect();
    let array = device.create_array(&ArrayDesc::new_2d(ArrayFormat::F32, 1, w, h))?;
    array.copy_from_host(&texels)?;
    let texture = Texture::new(
        TextureSource::array(&array),
        &TextureOptions::new()
            .normalized_coords(true)
            .filter(FilterMode::Linear)
            .address_mode(AddressMode::Clamp),
    )?;
    // The texture keeps its array alive.
    drop(array);
    let (fw, fh) = (w as f32, h as f32);
    // (u, v, expected)
    let points = [
        // The centre of texel (1, 2).
        (1.5 / fw, 2.5 / fh, texel(1, 2)),
        // Halfway between texels 1 and 2 of row 2.
        (2.0 / fw, 2.5 / fh, (texel(1, 2) + texel(2, 2)) / 2.0),
        // A quarter of the way.
        (1.75 / fw, 2.5 / fh, 0.75 * texel(1, 2) + 0.25 * texel(2, 2)),
        // Between four texels.
        (
            2.0 / fw,
            2.0 / fh,
            (texel(1, 1) + texel(2, 1) + texel(1, 2) + texel(2, 2)) / 4.0,
        ),
        // Left of the edge: clamped to texel (0, 2).
        (-0.5, 2.5 / fh, texel(0, 2)),
    ];
    let uv: Vec<f32> = points.iter().flat_map(|&(u, v, _)| [u, v]).collect();
    let uv = device.buffer_from_slice(&uv)?;
    let out = device.alloc_zeroed::<f32>(points.len())?;
    let n = points.len() as u32;
    unsafe {
        sample
            .launch(LaunchConfig::new(1, 32))
            .args((&texture, &uv, &out, &n))
            .run()?;
    }
    device.synchronize()?;
    let got = out.to_vec()?;
    for (i, &(u, v, want)) in points.iter().enumerate() {
        // Linear filtering weighs with 8 fractional bits.
        let close = (got[i] - want).abs() <= 0.02;
        ensure!(close, "tex2D at ({u}, {v}) = {}, expected {want}", got[i]);
    }
    ensure!(texture.object() != 0, "no texture object");
    Ok(())
}

fn texture_over_linear_memory_fetches_elements(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let fetch = module.function("tex1d_fetch")?;
    // Texture reads start at a multiple of the texture alignment
    // (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT) from the buffer's address.
    let align = usize::try_from(device.attribute(14)?)?;
    let n = 1000usize;
    let data = Rng(3).vec(n + 2 * align / 4);
    let buffer = device.buffer_from_slice(&data)?;
    let ptr = usize::try_from(buffer.device_ptr())?;
    let start = (align - ptr % align) % align;
    let first = start / 4;
    let texture = Texture::new(
        TextureSource::linear(&buffer, ArrayFormat::F32, 1, n).offset(start),
        &TextureOptions::new(),
    )?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let nu = n as u32;
    unsafe {
        fetch.launch(grid_1d(n)).args((&texture, &out, &nu)).run()?;
    }
    device.synchronize()?;
    let want: Vec<f32> = data.iter().map(|v| v * 3.0).collect();
    ensure_same!(out.to_vec()?, want[first..first + n], "tex1Dfetch");

    // One alignment further on.
    let shifted = Texture::new(
        TextureSource::linear(&buffer, ArrayFormat::F32, 1, n).offset(start + align),
        &TextureOptions::new(),
    )?;
    unsafe {
        fetch.launch(grid_1d(n)).args((&shifted, &out, &nu)).run()?;
    }
    device.synchronize()?;
    let skip = first + align / 4;
    ensure_same!(
        out.to_vec()?,
        want[skip..skip + n],
        "tex1Dfetch from a further offset"
    );

    // A texture reaching past the buffer is refused.
    expect_err(
        Texture::new(
            TextureSource::linear(&buffer, ArrayFormat::F32, 1, data.len() + 1),
            &TextureOptions::new(),
        ),
        ErrorKind::OutOfRange,
        "reach past the end",
        "a linear texture past the buffer's end",
    )
}

fn texture_over_pitched_memory_reads_rows(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let grid = module.function("tex2d_grid")?;
    let (w, h) = (50usize, 30usize);
    let src: Vec<f32> = (0..w * h).map(|i| (i * 7 % 1001) as f32).collect();
    let mut image = device.alloc_pitched::<f32>(w, h)?;
    image.copy_from_rows(&src, w)?;
    let texture = Texture::new(
        TextureSource::pitched(&image, ArrayFormat::F32, 1, w, h, 0),
        &TextureOptions::new(),
    )?;
    let out = device.alloc_zeroed::<f32>(w * h)?;
    let (wu, hu) = (w as u32, h as u32);
    unsafe {
        grid.launch(grid_2d(w, h, 1))
            .args((&texture, &out, &wu, &hu))
            .run()?;
    }
    device.synchronize()?;
    ensure_same!(out.to_vec()?, src, "tex2D over pitched memory");

    // Wrapping needs normalised coordinates: refused, naming why.
    expect_err(
        Texture::new(
            TextureSource::pitched(&image, ArrayFormat::F32, 1, w, h, 0),
            &TextureOptions::new().address_mode(AddressMode::Wrap),
        ),
        ErrorKind::InvalidArgument,
        "normalized",
        "wrap without normalised coordinates",
    )
}

fn surface_written_by_kernels_is_read_back(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let (fill, double) = (
        module.function("surf_fill")?,
        module.function("surf_double")?,
    );
    let (w, h) = (33usize, 17usize);
    let desc =
        ArrayDesc::new_2d(ArrayFormat::F32, 1, w, h).with_flags(ArrayFlags::SURFACE_LOAD_STORE);
    let array = device.create_array(&desc)?;
    let surface = Surface::new(&array)?;
    ensure!(surface.object() != 0, "no surface object");
    let (wu, hu) = (w as u32, h as u32);
    unsafe {
        fill.launch(grid_2d(w, h, 1))
            .args((&surface, &wu, &hu))
            .run()?;
    }
    device.synchronize()?;
    let mut host = vec![0.0f32; w * h];
    array.copy_to_host(&mut host)?;
    let want: Vec<f32> = (0..w * h)
        .map(|i| ((i / w) * 1000 + i % w) as f32)
        .collect();
    ensure_same!(host, want, "surf2Dwrite");
    unsafe {
        double
            .launch(grid_2d(w, h, 1))
            .args((&surface, &wu, &hu))
            .run()?;
    }
    device.synchronize()?;
    array.copy_to_host(&mut host)?;
    let doubled: Vec<f32> = want.iter().map(|v| v * 2.0).collect();
    ensure_same!(host, doubled, "surf2Dread + surf2Dwrite");

    // An array made without SURFACE_LOAD_STORE has no surface.
    let plain = device.create_array(&ArrayDesc::new_2d(ArrayFormat::F32, 1, w, h))?;
    expect_err(
        Surface::new(&plain),
        ErrorKind::InvalidArgument,
        "SURFACE_LOAD_STORE",
        "a surface over an array without the flag",
    )
}

fn layered_array_through_a_layered_texture(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let read = module.function("tex_layered")?;
    let (w, h, layers) = (16usize, 8usize, 5usize);
    let desc = ArrayDesc::new_layered(ArrayFormat::F32, 1, w, h, layers);
    let array = device.create_array(&desc)?;
    let got = array.desc()?;
    ensure!(
        got == desc && got.flags.contains(ArrayFlags::LAYERED),
        "desc {got:?}"
    );
    let data: Vec<f32> = (0..w * h * layers)
        .map(|i| ((i / (w * h)) * 1000 + (i / w % h) * 10 + i % w) as f32)
        .collect();
    array.copy_from_host(&data)?;
    let mut back = vec![0.0f32; data.len()];
    array.copy_to_host(&mut back)?;
    ensure_same!(back, data, "layered round trip");

    let texture = Texture::new(TextureSource::array(&array), &TextureOptions::new())?;
    let out = device.alloc_zeroed::<f32>(data.len())?;
    let (wu, hu) = (w as u32, h as u32);
    unsafe {
        read.launch(grid_2d(w, h, layers))
            .args((&texture, &out, &wu, &hu))
            .run()?;
    }
    device.synchronize()?;
    ensure_same!(out.to_vec()?, data, "tex2DLayered");
    Ok(())
}

fn cubemap_filled_face_by_face_is_read_by_tex_cubemap(device: &Device) -> TestResult {
    let module = kernels(device)?;
    let centres = module.function("cube_centres")?;
    // Odd: each face's centre is the centre of one texel.
    let size = 7usize;
    // One value per face: +X, -X, +Y, -Y, +Z, -Z.
    let values = [1.5f32, -2.0, 3.25, -4.5, 5.0, -6.75];
    let desc =
        ArrayDesc::new_3d(ArrayFormat::F32, 1, size, size, 6).with_flags(ArrayFlags::CUBEMAP);
    let array = device.create_array(&desc)?;
    let got = array.desc()?;
    ensure!(
        got == desc && got.flags.contains(ArrayFlags::CUBEMAP),
        "desc {got:?}"
    );
    // Face by face, each a slice of its own; a corner apart, so that the
    // round trip sees the layout.
    let mut faces = Vec::with_capacity(6 * size * size);
    for (face, &value) in values.iter().enumerate() {
        let mut texels = vec![value; size * size];
        texels[0] = 100.0 + face as f32;
        Copy3d::new()
            .from_host(&texels)
            .to_array(&array)
            .dst_offset(0, 0, face)
            .extent(size * 4, size, 1)
            .run()?;
        faces.extend_from_slice(&texels);
    }
    let mut back = vec![0.0f32; faces.len()];
    array.copy_to_host(&mut back)?;
    ensure_same!(back, faces, "cubemap round trip");

    let texture = Texture::new(
        TextureSource::array(&array),
        &TextureOptions::new()
            .normalized_coords(true)
            .filter(FilterMode::Point),
    )?;
    let out = device.alloc_zeroed::<f32>(6)?;
    unsafe {
        centres
            .launch(LaunchConfig::new(1, 32))
            .args((&texture, &out))
            .run()?;
    }
    device.synchronize()?;
    ensure_same!(out.to_vec()?, values, "texCubemap at the face centres");

    // The core refuses other shapes, in its own words.
    let cube =
        |w, h, d| ArrayDesc::new_3d(ArrayFormat::F32, 1, w, h, d).with_flags(ArrayFlags::CUBEMAP);
    expect_err(
        device.create_array(&cube(4, 8, 6)),
        ErrorKind::InvalidArgument,
        "a cubemap has square faces (width 4, height 8) and depth 6",
        "a cubemap of faces that are not square",
    )?;
    expect_err(
        device.create_array(&cube(8, 8, 5)),
        ErrorKind::InvalidArgument,
        "or a multiple of 6 when layered (depth 5)",
        "a cubemap of 5 faces",
    )
}
