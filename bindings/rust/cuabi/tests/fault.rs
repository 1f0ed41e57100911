//! Fault injection through the crate, no GPU: the stand-in driver and NVRTC
//! of `tests/fake/` (one library cuabi opens as both), named by
//! `$CUABI_FAULT_FAKE_DRIVER` (set by `run-tests.sh` and the CTest entry).
//!
//! Each scenario (the SAXPY flow through `Device::compile`, a `Launch` and a
//! `LaunchPlan`; the same kernel through `Program` and `Device::load_module`;
//! and, as `tests/fault/fault_injection.cc` has them, a graph captured and
//! replayed (plus one built node by node), virtual memory mapped, exported
//! and grown, batches of memory operations, copies and 3D copies, and a green
//! context's stream with a tensor map) runs once clean to count the driver and NVRTC calls, then once per call
//! index with that call failing: `CUDA_ERROR_OUT_OF_MEMORY` and
//! `CUDA_ERROR_INVALID_VALUE` for driver calls, `NVRTC_ERROR_COMPILATION` and
//! `NVRTC_ERROR_OUT_OF_MEMORY` for NVRTC ones (the sticky
//! `CUDA_ERROR_LAUNCH_FAILED` is the C test's). A run is handled when it
//! returns an `Err` whose message names the failed entry point (or, for a
//! failed `nvrtcCompileProgram`, an `ErrorKind::Compile` error), or completes
//! with verified results (tolerated, counted apart); does not panic; leaves
//! nothing live in the driver once every object is dropped; and the scenario
//! passes right after with no fault.
//!
//! Own runner (`harness = false`): the stand-in must be named in the
//! environment before the first cuabi call of the process. Prints
//! `fault injection (Rust): N calls failed in turn, N handled` and exits
//! non-zero when a run is not handled; without the stand-in it prints
//! SKIPPED with the reason and exits 0 (the GPU machine's bundle).
//!
//! More than `CUABI_FAULT_MAX_RUNS` (default 400) cases of a scenario are
//! sampled, with the seed printed (`CUABI_FAULT_SEED` to repeat one).

mod common;

use common::{parse_args, SAXPY};

use std::collections::BTreeSet;
use std::ffi::{c_char, c_int, c_long, c_void, CStr, CString};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;

use cuabi::{
    AddressRange, CaptureMode, CompileOptions, Copy3d, Copy3dBatch, CopyBatch, CopyBatchFlags,
    Device, Error, ErrorKind, Graph, GreenContext, LaunchConfig, MemOpBatch, MemOpFlags,
    PhysicalMemory, PhysicalMemoryFlags, Program, StreamFlags, TensorDataType, TensorInterleave,
    TensorL2Promotion, TensorMap, TensorOobFill, TensorSwizzle, VmAccess, WaitCondition,
    TENSOR_MAP_BYTES,
};

const TEST_NAME: &str = "fault_injection";

// From cuda.h and nvrtc.h.
const CUDA_SUCCESS: c_int = 0;
const CUDA_ERROR_INVALID_VALUE: c_int = 1;
const CUDA_ERROR_OUT_OF_MEMORY: c_int = 2;
const NVRTC_SUCCESS: c_int = 0;
const NVRTC_ERROR_OUT_OF_MEMORY: c_int = 1;
const NVRTC_ERROR_COMPILATION: c_int = 6;

// ---- the stand-in's controls ------------------------------------------------

const RTLD_NOW: c_int = 2;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

/// The stand-in's exported controls, found with `dlsym` in the instance the
/// process has loaded (or will load: cuabi opens the same path).
struct Fake {
    live: unsafe extern "C" fn() -> c_long,
    calls: unsafe extern "C" fn() -> c_long,
    call_name: unsafe extern "C" fn(c_long) -> *const c_char,
    failed_name: unsafe extern "C" fn() -> *const c_char,
    reset: unsafe extern "C" fn(),
    fail_call: unsafe extern "C" fn(c_long, c_int, c_int),
}

fn symbol(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    let c_name = CString::new(name).expect("no NUL in a symbol name");
    // SAFETY: a live handle from dlopen and a NUL-terminated name.
    let p = unsafe { dlsym(handle, c_name.as_ptr()) };
    if p.is_null() {
        Err(format!("no {name}: not the fault-injection stand-in"))
    } else {
        Ok(p)
    }
}

impl Fake {
    fn open(path: &str) -> Result<Fake, String> {
        let c_path = CString::new(path).map_err(|_| format!("{path:?} holds a NUL byte"))?;
        // SAFETY: a NUL-terminated path; the handle is never closed.
        let handle = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW) };
        if handle.is_null() {
            // SAFETY: dlerror's answer is a NUL-terminated string or NULL.
            let why = unsafe {
                let e = dlerror();
                if e.is_null() {
                    "unknown error".to_owned()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                }
            };
            return Err(format!("cannot open {path}: {why}"));
        }
        // SAFETY: the stand-in exports these with exactly these signatures
        // (tests/fake/fake_cuda.c).
        unsafe {
            Ok(Fake {
                live: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_long>(symbol(
                    handle,
                    "fake_live_resources",
                )?),
                calls: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_long>(
                    symbol(handle, "fake_calls")?,
                ),
                call_name: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(c_long) -> *const c_char,
                >(symbol(handle, "fake_call_name")?),
                failed_name: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn() -> *const c_char,
                >(symbol(handle, "fake_failed_name")?),
                reset: std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(symbol(
                    handle,
                    "fake_reset",
                )?),
                fail_call: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(c_long, c_int, c_int),
                >(symbol(handle, "fake_fail_call")?),
            })
        }
    }

    fn live(&self) -> c_long {
        // SAFETY: no arguments; reads a counter.
        unsafe { (self.live)() }
    }

    fn calls(&self) -> c_long {
        // SAFETY: as above.
        unsafe { (self.calls)() }
    }

    fn text(p: *const c_char) -> Option<String> {
        // SAFETY: the stand-in's names are interned NUL-terminated strings
        // that live as long as the process, or NULL.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// The entry point of counted call `i` (1-based).
    fn call_name(&self, i: c_long) -> String {
        // SAFETY: any index is accepted; out of range answers NULL.
        Self::text(unsafe { (self.call_name)(i) }).unwrap_or_else(|| "?".to_owned())
    }

    fn failed_name(&self) -> Option<String> {
        // SAFETY: no arguments.
        Self::text(unsafe { (self.failed_name)() })
    }

    fn reset(&self) {
        // SAFETY: no arguments.
        unsafe { (self.reset)() }
    }

    fn fail_call(&self, n: c_long, cu: c_int, nvrtc: c_int) {
        // SAFETY: plain values.
        unsafe { (self.fail_call)(n, cu, nvrtc) }
    }
}

// ---- scenarios ----------------------------------------------------------------

const N: usize = 256;

/// How a scenario ended: with verified (or wrong) results, a cuabi error, or
/// a failure of this test's own (not the library's report).
enum Outcome {
    Done { verified: bool },
    Failed(Error),
    Broken(String),
}

impl From<Error> for Outcome {
    fn from(err: Error) -> Outcome {
        Outcome::Failed(err)
    }
}

struct Host {
    x: Vec<f32>,
    y: Vec<f32>,
}

impl Host {
    fn new() -> Host {
        Host {
            x: (0..N).map(|i| i as f32).collect(),
            y: (0..N).map(|i| (2 * i + 1) as f32).collect(),
        }
    }

    fn check(&self, a: f32, out: &[f32]) -> bool {
        out.len() == N && (0..N).all(|i| out[i] == a * self.x[i] + self.y[i])
    }
}

/// SAXPY through `Device::compile`: a launch on a stream (asynchronous
/// copies), then a launch plan (synchronous copies), each verified.
fn saxpy() -> Result<bool, Outcome> {
    let h = Host::new();
    let device = Device::get(0)?;
    let module = device.compile(SAXPY, &CompileOptions::new().name("saxpy.cu").no_cache())?;
    let kernel = module.function("saxpy")?;
    let d_x = device.buffer_from_slice(&h.x)?;
    let mut d_y = device.alloc::<f32>(N)?;
    let mut d_out = device.alloc::<f32>(N)?;
    let stream = device.create_stream()?;
    let config = LaunchConfig::new(2u32, (N / 2) as u32);
    let n = N;
    let mut out = vec![-1.0f32; N];
    let mut ok = true;

    let a = 2.0f32;
    // SAFETY: the host vectors, the buffers and the stream outlive the
    // stream's synchronization below; saxpy touches N elements of each.
    unsafe {
        d_y.copy_from_async(&h.y, &stream)?;
        d_out.fill_bytes_async(0, &stream)?;
        kernel
            .launch(config)
            .stream(&stream)
            .args((&a, &d_x, &d_y, &d_out, &n))
            .run()?;
        d_out.copy_to_async(&mut out, &stream)?;
    }
    stream.synchronize()?;
    ok &= h.check(a, &out);

    let a = 3.0f32;
    d_out.fill_bytes(0)?;
    let mut plan = kernel.plan(config, Some(&stream))?;
    // SAFETY: as above; the device is synchronized before the buffers drop.
    unsafe { plan.launch_with((&a, &d_x, &d_y, &d_out, &n))? };
    device.synchronize()?;
    d_out.copy_to(&mut out)?;
    ok &= h.check(a, &out);
    Ok(ok)
}

/// SAXPY through `Program`: compile, take the CUBIN, load it, launch on the
/// default stream, read the result back.
fn program() -> Result<bool, Outcome> {
    let h = Host::new();
    let device = Device::get(0)?;
    let mut program = Program::new(SAXPY, "saxpy.cu")?;
    program.compile::<&str>(&[])?;
    let cubin = program.cubin()?;
    let module = device.load_module(&cubin)?;
    let kernel = module.function("saxpy")?;
    let d_x = device.buffer_from_slice(&h.x)?;
    let d_y = device.buffer_from_slice(&h.y)?;
    let d_out = device.alloc_zeroed::<f32>(N)?;
    let (a, n) = (4.0f32, N);
    // SAFETY: the buffers outlive the synchronization below.
    unsafe {
        kernel
            .launch(LaunchConfig::new(1u32, N as u32))
            .args((&a, &d_x, &d_y, &d_out, &n))
            .run()?;
    }
    device.synchronize()?;
    let out = d_out.to_vec()?;
    Ok(h.check(a, &out))
}

/// The words the scenarios below move around: `mul * i + add`.
fn words(mul: u32, add: u32) -> Vec<u32> {
    (0..64u32).map(|i| i * mul + add).collect()
}

/// A graph, as the C suite's: a launch captured on a stream, the graph
/// instantiated and replayed twice; then (beyond the C suite's) a graph
/// built node by node (an upload, a fill, the kernel, a device-to-device
/// copy and a download) instantiated and launched, each verified.
fn graph() -> Result<bool, Outcome> {
    let h = Host::new();
    let device = Device::get(0)?;
    let module = device.compile(SAXPY, &CompileOptions::new().name("saxpy.cu").no_cache())?;
    let kernel = module.function("saxpy")?;
    let mut d_x = device.alloc::<f32>(N)?;
    let mut d_y = device.alloc::<f32>(N)?;
    let d_out = device.alloc::<f32>(N)?;
    let stream = device.create_stream()?;
    let (a, n) = (2.5f32, N);
    let mut out = vec![-1.0f32; N];
    // SAFETY: the host vectors and the buffers outlive the stream's
    // synchronization below.
    unsafe {
        d_x.copy_from_async(&h.x, &stream)?;
        d_y.copy_from_async(&h.y, &stream)?;
    }
    stream.begin_capture(CaptureMode::ThreadLocal)?;
    // SAFETY: captured, not run: the graph runs it below, while the buffers
    // live.
    let captured = unsafe {
        kernel
            .launch(LaunchConfig::new(1u32, N as u32))
            .stream(&stream)
            .args((&a, &d_x, &d_y, &d_out, &n))
            .run()
    };
    if let Err(err) = captured {
        let _ = stream.end_capture(); // leave no capture open
        return Err(err.into());
    }
    let captured = stream.end_capture()?;
    let nodes = captured.node_count()?;
    let exec = captured.instantiate()?;
    // SAFETY: the buffers and `out` outlive the synchronization below.
    unsafe {
        exec.launch(&stream)?;
        exec.launch(&stream)?;
        d_out.copy_to_async(&mut out, &stream)?;
    }
    stream.synchronize()?;
    let mut ok = nodes == 1 && h.check(a, &out);

    // Built node by node: x uploaded from pinned memory, a buffer filled
    // with ones, saxpy of the two, its result copied to another buffer and
    // that downloaded to pinned memory.
    let a = 1.5f32;
    let mut pinned_x = device.alloc_pinned::<f32>(N)?;
    pinned_x.copy_from_slice(&h.x);
    let mut pinned_out = device.alloc_pinned::<f32>(N)?;
    pinned_out.fill(-1.0);
    let d_x2 = device.alloc::<f32>(N)?;
    let d_ones = device.alloc::<f32>(N)?;
    let d_out2 = device.alloc::<f32>(N)?;
    let d_copy = device.alloc::<f32>(N)?;
    let built = Graph::create(&device)?;
    let up = built.add_upload_node(None, &d_x2, 0, &pinned_x, 0, N * 4)?;
    let fill = built.add_fill_node(Some(&up), &d_ones, 0, 1.0f32.to_bits(), 4, N)?;
    let saxpy = built.add_kernel_node(
        Some(&fill),
        &kernel,
        &LaunchConfig::new(2u32, (N / 2) as u32),
        (&a, &d_x2, &d_ones, &d_out2, &n),
    )?;
    let copy = built.add_copy_node(Some(&saxpy), &d_copy, 0, &d_out2, 0, N * 4)?;
    built.add_download_node(Some(&copy), &pinned_out, 0, &d_copy, 0, N * 4)?;
    let nodes = built.node_count()?;
    let exec = built.instantiate()?;
    // SAFETY: the buffers and the pinned memory outlive the synchronization
    // below.
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    ok &= nodes == 5 && (0..N).all(|i| pinned_out[i] == a * h.x[i] + 1.0);
    Ok(ok)
}

/// Virtual memory, as the C suite's: exportable physical memory mapped into
/// a range and used through a buffer over it, exported by a file descriptor
/// and imported again into a second range, unmapped and freed; then a
/// growable buffer grown twice, its contents checked.
fn virtual_memory() -> Result<bool, Outcome> {
    let device = Device::get(0)?;
    let (g, _recommended) = device.vm_granularity()?;
    let words_per_g = g / 4;
    let input = words(7, 1);
    let mut out = vec![0u32; input.len()];
    let memory = PhysicalMemory::create(&device, g, PhysicalMemoryFlags::EXPORTABLE)?;
    let range = AddressRange::reserve(&device, 2 * g)?;
    range.map(g, &memory)?;
    range.set_access(g, g, &device, VmAccess::Readwrite)?;
    let mut view = range.buffer::<u32>(&device, g, words_per_g)?;
    view.copy_from(&input)?;
    let fd = memory.export_fd()?;
    let imported = PhysicalMemory::import_fd(&device, &fd, g)?;
    let second = AddressRange::reserve(&device, g)?;
    second.map(0, &imported)?;
    let again = second.buffer::<u32>(&device, 0, words_per_g)?;
    again.copy_to(&mut out)?;
    let mut ok = out == input;
    drop(view);
    range.unmap(g, g)?;
    memory.free().map_err(|(_, err)| err)?;

    let mut grown = device.alloc_growable::<u32>(words_per_g, 4 * words_per_g)?;
    grown.copy_from_at(words_per_g - input.len(), &input)?;
    grown.grow(2 * words_per_g)?;
    grown.grow(4 * words_per_g)?;
    grown.copy_from_at(4 * words_per_g - input.len(), &input)?;
    out.fill(0);
    grown.copy_to_at(words_per_g - input.len(), &mut out)?;
    ok &= out == input;
    out.fill(0);
    grown.copy_to_at(4 * words_per_g - input.len(), &mut out)?;
    ok &= out == input;
    Ok(ok)
}

/// Batches, as the C suite's: 32- and 64-bit writes and a met wait in one
/// call (device and pinned memory), copies of every direction in batches,
/// then two boxes of a buffer read as 8 rows of 32 bytes in one 3D batch,
/// each result verified.
fn batches() -> Result<bool, Outcome> {
    let device = Device::get(0)?;
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let input = words(11, 3);
    let mut out = vec![0u32; input.len()];
    let bytes = input.len() * 4;
    let a = device.alloc::<u32>(input.len())?;
    let b = device.alloc::<u32>(input.len())?;
    let mut pinned = device.alloc_pinned::<u32>(input.len())?;
    pinned.fill(0);

    let ops = MemOpBatch::new()
        .write(&a, 0, 0xC0DE, 4)
        .write(&a, 8, 0x0102_0304_0506_0708, 8)
        .write(&pinned, 4, 7, 4)
        .wait(&pinned, 4, 7, 4, WaitCondition::Eq, MemOpFlags::NONE);
    s.mem_op_batch(&ops)?;
    s.synchronize()?;
    drop(ops);
    let mut head = [0u32; 4];
    a.copy_to(&mut head)?;
    let wide = u64::from(head[2]) | u64::from(head[3]) << 32;
    let mut ok = head[0] == 0xC0DE && wide == 0x0102_0304_0506_0708 && pinned[1] == 7;

    let up = CopyBatch::new()
        .copy(&a, 0, &input[..], 0, bytes) // host to device
        .copy(&pinned, 0, &input[..], 0, bytes); // host to pinned host
    let across = CopyBatch::new().copy(&b, 0, &a, 0, bytes); // device to device
    let down = CopyBatch::new().copy(&mut out[..], 0, &b, 0, bytes); // device to host
                                                                     // SAFETY: the host memory and the buffers outlive the synchronization
                                                                     // below, and nothing reads a destination before it.
    unsafe {
        s.copy_batch(&up, CopyBatchFlags::NONE)?;
        s.copy_batch(&across, CopyBatchFlags::NONE)?;
        s.copy_batch(&down, CopyBatchFlags::PREFER_OVERLAP)?;
    }
    s.synchronize()?;
    drop((up, across, down));
    ok &= out == input && pinned[..] == input[..];

    // Rows 0..3 whole, and the right halves of rows 4..7.
    let mut box_out = vec![0u8; 256];
    let (top, bottom) = box_out.split_at_mut(128);
    let boxes = Copy3dBatch::new()
        .copy(
            Copy3d::new()
                .from_buffer(&b)
                .src_layout(32, 0)
                .to_host(top)
                .dst_layout(32, 0)
                .extent(32, 4, 1),
        )?
        .copy(
            Copy3d::new()
                .from_buffer(&b)
                .src_offset(16, 4, 0)
                .src_layout(32, 0)
                .to_host(bottom)
                .dst_offset(16, 0, 0)
                .dst_layout(32, 0)
                .extent(16, 4, 1),
        )?;
    // SAFETY: as above.
    unsafe { s.copy_3d_batch(&boxes, CopyBatchFlags::NONE)? };
    s.synchronize()?;
    drop(boxes);
    let source: Vec<u8> = input.iter().flat_map(|w| w.to_ne_bytes()).collect();
    ok &= (0..box_out.len()).all(|i| {
        let copied = i < 128 || i % 32 >= 16;
        box_out[i] == if copied { source[i] } else { 0 }
    });
    Ok(ok)
}

/// Green contexts and tensor maps, as the C suite's: a device's SMs split,
/// a green context of a group and a stream on it, copies ordered there (and
/// here a SAXPY launched there too), a tensor map encoded over a buffer,
/// read, and pointed at another buffer.
fn green_tensor() -> Result<bool, Outcome> {
    let h = Host::new();
    let device = Device::get(0)?;
    let all = device.sm_resource()?;
    let group = all.split(2, 0, 0)?;
    let sms = group.sm_count()?;
    let green = GreenContext::create(&group)?;
    let green_sms = green.sm_count()?;
    let s = green.create_stream(0)?;
    let input = words(7, 1);
    let mut out = vec![0u32; input.len()];
    let mut a = device.alloc::<u32>(input.len())?;
    let b = device.alloc::<u32>(input.len())?;
    // SAFETY: the host vectors and the buffers outlive the synchronization
    // below.
    unsafe {
        a.copy_from_async(&input, &s)?;
        a.copy_to_async(&mut out, &s)?;
    }
    s.synchronize()?;
    let mut ok = out == input && sms > 0 && green_sms == sms;

    let module = device.compile(SAXPY, &CompileOptions::new().name("saxpy.cu").no_cache())?;
    let kernel = module.function("saxpy")?;
    let mut d_x = device.alloc::<f32>(N)?;
    let mut d_y = device.alloc::<f32>(N)?;
    let d_out = device.alloc::<f32>(N)?;
    let (alpha, n) = (6.0f32, N);
    let mut result = vec![-1.0f32; N];
    // SAFETY: as above.
    unsafe {
        d_x.copy_from_async(&h.x, &s)?;
        d_y.copy_from_async(&h.y, &s)?;
        kernel
            .launch(LaunchConfig::new(2u32, (N / 2) as u32))
            .stream(&s)
            .args((&alpha, &d_x, &d_y, &d_out, &n))
            .run()?;
        d_out.copy_to_async(&mut result, &s)?;
    }
    s.synchronize()?;
    ok &= h.check(alpha, &result);

    let map = TensorMap::encode_tiled(
        &a,
        0,
        TensorDataType::Uint32,
        &[16, 4],
        &[4, 64],
        &[16, 2],
        &[],
        TensorInterleave::None,
        TensorSwizzle::None,
        TensorL2Promotion::None,
        TensorOobFill::Zero,
    )?;
    map.replace_address(&b, 0)?;
    let bytes = map.bytes()?;
    let first = bytes
        .get(..8)
        .map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")));
    ok &= bytes.len() == TENSOR_MAP_BYTES && first == Some(b.device_ptr());
    Ok(ok)
}

struct Scenario {
    name: &'static str,
    run: fn() -> Result<bool, Outcome>,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "saxpy",
        run: saxpy,
    },
    Scenario {
        name: "program",
        run: program,
    },
    Scenario {
        name: "graph",
        run: graph,
    },
    Scenario {
        name: "virtual_memory",
        run: virtual_memory,
    },
    Scenario {
        name: "batches",
        run: batches,
    },
    Scenario {
        name: "green_tensor",
        run: green_tensor,
    },
];

/// Runs a scenario; a panic becomes `Broken`. Every object it made is
/// dropped when this returns.
fn run(s: &Scenario) -> Outcome {
    match panic::catch_unwind(AssertUnwindSafe(s.run)) {
        Ok(Ok(verified)) => Outcome::Done { verified },
        Ok(Err(outcome)) => outcome,
        Err(payload) => {
            let why = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("?");
            Outcome::Broken(format!("panicked: {why}"))
        }
    }
}

fn describe(o: &Outcome) -> String {
    match o {
        Outcome::Done { verified: true } => "verified".to_owned(),
        Outcome::Done { verified: false } => "wrong results".to_owned(),
        Outcome::Failed(err) => err.to_string(),
        Outcome::Broken(why) => why.clone(),
    }
}

// ---- checks -------------------------------------------------------------------

fn is_nvrtc(name: &str) -> bool {
    name.starts_with("nvrtc")
}

fn code_name(nvrtc: bool, code: c_int) -> &'static str {
    match (nvrtc, code) {
        (true, NVRTC_ERROR_COMPILATION) => "NVRTC_ERROR_COMPILATION",
        (true, _) => "NVRTC_ERROR_OUT_OF_MEMORY",
        (false, CUDA_ERROR_OUT_OF_MEMORY) => "CUDA_ERROR_OUT_OF_MEMORY",
        (false, CUDA_ERROR_INVALID_VALUE) => "CUDA_ERROR_INVALID_VALUE",
        _ => "?",
    }
}

/// Whether a run reported the failed call `failed` properly: `None` when it
/// did (or completed with verified results), else why not.
fn judge(o: &Outcome, failed: &str, nvrtc: bool, code: c_int) -> Option<String> {
    match o {
        Outcome::Done { verified: true } => None,
        Outcome::Done { verified: false } => Some("succeeded with wrong results".to_owned()),
        Outcome::Broken(why) => Some(why.clone()),
        Outcome::Failed(err) if err.message().contains(failed) => None,
        Outcome::Failed(err)
            if nvrtc
                && code == NVRTC_ERROR_COMPILATION
                && failed == "nvrtcCompileProgram"
                && err.kind() == ErrorKind::Compile =>
        {
            None // a compile error: the kind says so and the log is kept
        }
        Outcome::Failed(err) => Some(format!(
            "an error whose message does not name {failed}: {err}"
        )),
    }
}

/// xorshift64*, for sampling call indices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Case {
    index: c_long,
    code: c_int,
}

#[derive(Default)]
struct Totals {
    failed: u64,
    handled: u64,
    tolerated: BTreeSet<String>,
    problems: Vec<String>,
}

fn inject(fake: &Fake, s: &Scenario, max_runs: usize, rng: &mut Rng, t: &mut Totals) {
    let warm = run(s); // loads the driver and NVRTC, fills the device state
    let baseline = fake.live();
    fake.reset();
    let counted = run(s);
    let calls = fake.calls();
    let names: Vec<String> = (1..=calls).map(|i| fake.call_name(i)).collect();
    let clean = |o: &Outcome| matches!(o, Outcome::Done { verified: true });
    if !clean(&warm) || !clean(&counted) || fake.live() != baseline || calls == 0 {
        let why = if !clean(&warm) {
            describe(&warm)
        } else if !clean(&counted) {
            describe(&counted)
        } else if calls == 0 {
            "no call reached the stand-in".to_owned()
        } else {
            format!("leaks {} driver resources", fake.live() - baseline)
        };
        t.problems
            .push(format!("{}: the clean run fails: {why}", s.name));
        return;
    }

    let mut cases = Vec::new();
    for (i, name) in (1..=calls).zip(&names) {
        if is_nvrtc(name) {
            cases.push(Case {
                index: i,
                code: NVRTC_ERROR_COMPILATION,
            });
            cases.push(Case {
                index: i,
                code: NVRTC_ERROR_OUT_OF_MEMORY,
            });
        } else {
            cases.push(Case {
                index: i,
                code: CUDA_ERROR_OUT_OF_MEMORY,
            });
            // INVALID_VALUE is how cuFuncGetParamInfo says the index is past
            // the last parameter: failing it with that only shortens the list.
            if name != "cuFuncGetParamInfo" {
                cases.push(Case {
                    index: i,
                    code: CUDA_ERROR_INVALID_VALUE,
                });
            }
        }
    }
    if cases.len() > max_runs {
        for i in 0..max_runs {
            let j = i + rng.below(cases.len() - i);
            cases.swap(i, j);
        }
        cases.truncate(max_runs);
        cases.sort();
    }

    let (mut failed_here, mut handled_here, mut tolerated_here) = (0u64, 0u64, 0u64);
    for c in &cases {
        let expected = &names[(c.index - 1) as usize];
        let nvrtc = is_nvrtc(expected);
        fake.reset();
        if nvrtc {
            fake.fail_call(c.index, CUDA_SUCCESS, c.code);
        } else {
            fake.fail_call(c.index, c.code, NVRTC_SUCCESS);
        }
        let o = run(s);
        let failed = fake.failed_name();
        fake.reset();
        let Some(failed) = failed else {
            continue; // the run made fewer calls this time
        };
        failed_here += 1;
        let mut why = Vec::new();
        if let Some(report) = judge(&o, &failed, nvrtc, c.code) {
            why.push(report);
        }
        if fake.live() != baseline {
            why.push(format!(
                "leaked {} driver resources",
                fake.live() - baseline
            ));
        }
        let before = fake.live();
        let again = run(s);
        if !clean(&again) {
            why.push(format!(
                "the same scenario then fails with no fault: {}",
                describe(&again)
            ));
        }
        if fake.live() != before {
            why.push("the clean run after it leaks".to_owned());
        }
        if why.is_empty() {
            handled_here += 1;
            if matches!(o, Outcome::Done { .. }) {
                tolerated_here += 1;
                t.tolerated.insert(failed);
            }
        } else {
            t.problems.push(format!(
                "{} call {} ({failed}, {}): {}",
                s.name,
                c.index,
                code_name(nvrtc, c.code),
                why.join("; ")
            ));
        }
    }
    println!(
        "  {:<15} {calls} calls; {failed_here} failed in turn, {handled_here} handled \
         ({tolerated_here} tolerated with correct results)",
        s.name
    );
    t.failed += failed_here;
    t.handled += handled_here;
}

fn main() -> ExitCode {
    let args = parse_args();
    if args.list {
        println!("{TEST_NAME}: test");
        return ExitCode::SUCCESS;
    }
    if args.ignored_only
        || args
            .filter
            .as_deref()
            .is_some_and(|f| !TEST_NAME.contains(f))
    {
        return ExitCode::SUCCESS;
    }

    let stand_in = match std::env::var_os("CUABI_FAULT_FAKE_DRIVER").map(PathBuf::from) {
        None => {
            println!(
                "fault injection (Rust): SKIPPED: CUABI_FAULT_FAKE_DRIVER does not name \
                 the stand-in driver (build/tests/fault/libcuabi_fault_fake_cuda.so, \
                 built by CMake)"
            );
            return ExitCode::SUCCESS;
        }
        Some(p) if !p.is_file() => {
            println!(
                "fault injection (Rust): SKIPPED: the stand-in driver {} does not exist",
                p.display()
            );
            return ExitCode::SUCCESS;
        }
        Some(p) => p,
    };
    let Some(path) = stand_in.to_str() else {
        println!("fault injection (Rust): FAILED: the stand-in's path is not UTF-8");
        return ExitCode::FAILURE;
    };

    // Before the first cuabi call, while this is the only thread: cuabi opens
    // the stand-in as both libraries, and caches nothing.
    std::env::set_var("CUABI_DRIVER_PATH", path);
    std::env::set_var("CUABI_NVRTC_PATH", path);
    std::env::set_var("CUABI_CACHE", "0");

    let fake = match Fake::open(path) {
        Ok(fake) => fake,
        Err(why) => {
            println!("fault injection (Rust): FAILED: {why}");
            return ExitCode::FAILURE;
        }
    };
    let max_runs = std::env::var("CUABI_FAULT_MAX_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400usize);
    let seed = std::env::var("CUABI_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        });
    println!("fault injection (Rust): seed {seed}");
    let mut rng = Rng(seed | 1);

    // A panic is reported with the run it broke; the hook would repeat it.
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let mut totals = Totals::default();
    for s in SCENARIOS {
        inject(&fake, s, max_runs, &mut rng, &mut totals);
    }
    panic::set_hook(hook);

    println!(
        "fault injection (Rust): {} calls failed in turn, {} handled",
        totals.failed, totals.handled
    );
    let tolerated: Vec<&str> = totals.tolerated.iter().map(String::as_str).collect();
    println!(
        "  failures tolerated with correct results: {}",
        tolerated.join(" ")
    );
    for p in &totals.problems {
        println!("NOT HANDLED: {p}");
    }
    if totals.problems.is_empty() && totals.failed > 0 {
        ExitCode::SUCCESS
    } else {
        if totals.failed == 0 {
            println!("fault injection (Rust): FAILED: no call was failed");
        }
        ExitCode::FAILURE
    }
}
