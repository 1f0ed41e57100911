//! GPU tests of an executable graph changed in place, as
//! `tests/c/gpu_graph_update_test.cc` tests it: every node kind's parameters
//! updated without instantiating again, nodes disabled and enabled, a 3D
//! copy node, a kernel that launches a device graph (fire-and-forget, then
//! tail launch), and the refusals with the core's words.

use std::error::Error as StdError;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use cuabi::{
    ArrayDesc, ArrayFormat, CompileOptions, Copy3d, Device, ErrorKind, Graph, GraphExec,
    GraphInstantiateFlags, GraphNodeType, LaunchConfig, Stream, StreamFlags,
};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    every_node_kind_takes_new_parameters_without_instantiating_again,
    nodes_are_disabled_and_enabled_again,
    exec_node_updates_refuse_naming_what_was_wrong,
    a_3d_copy_node_copies_a_box_into_pitched_memory_and_an_array,
    a_kernel_launches_a_device_graph_fire_and_forget_then_tail,
];

/// `cudaGraphLaunch` is a device builtin the driver resolves, as
/// `cudaGraphSetConditional` is: the program declares it.
const SOURCE: &str = r#"
typedef struct CUgraphExec_st* cudaGraphExec_t;
extern "C" __device__ __cudart_builtin__ cudaError_t cudaGraphLaunch(
    cudaGraphExec_t graph, cudaStream_t stream);
extern "C" __global__ void axpb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
extern "C" __global__ void axmb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] - b;
}
extern "C" __global__ void put(int* where, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *where = value;
}
extern "C" __global__ void bump(int* counter, int by) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(counter, by);
}
extern "C" __global__ void launch_graph(unsigned long long graph, unsigned long long mode,
                                        int* answer) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *answer = (int)cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)mode);
}
"#;

/// The device-side launch modes (cuda_device_runtime_api.h's values).
const TAIL_LAUNCH: u64 = 0x0100_0000_0000_0000;
const FIRE_AND_FORGET: u64 = 0x0200_0000_0000_0000;

/// The kernels, or SKIPPED where the driver is older than CUDA 12.4.
fn module(device: &Device) -> Result<cuabi::Module, Box<dyn StdError>> {
    if cuabi::driver_version()? < 12040 {
        return skip("these updates need a driver of CUDA 12.4 or later");
    }
    Ok(device.compile(SOURCE, &CompileOptions::new().name("graph_update.cu"))?)
}

fn stream(device: &Device) -> cuabi::Result<Stream> {
    device.create_stream_with(StreamFlags::NON_BLOCKING, 0)
}

/// Launches `exec` on `s` and waits for it.
fn run(exec: &GraphExec, s: &Stream) -> TestResult {
    // SAFETY: every test keeps what its graphs use alive past this
    // synchronize.
    unsafe { exec.launch(s)? };
    s.synchronize()?;
    Ok(())
}

/// Passes when `r` is an error of `kind` whose message contains `words`.
fn refused<T: std::fmt::Debug>(r: cuabi::Result<T>, kind: ErrorKind, words: &str) -> TestResult {
    match r {
        Err(e) if e.kind() == kind && e.message().contains(words) => Ok(()),
        other => Err(format!("expected {kind:?} with {words:?}, got {other:?}").into()),
    }
}

/// A host node's function: counts its calls in `calls` and writes `id` to
/// `last`.
fn marker(
    id: i32,
    calls: &Arc<AtomicI32>,
    last: &Arc<AtomicI32>,
) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
    let (calls, last) = (Arc::clone(calls), Arc::clone(last));
    move || {
        calls.fetch_add(1, Ordering::SeqCst);
        last.store(id, Ordering::SeqCst);
        Ok(())
    }
}

fn every_node_kind_takes_new_parameters_without_instantiating_again(device: &Device) -> TestResult {
    let m = module(device)?;
    let (axpb, axmb) = (m.function("axpb")?, m.function("axmb")?);
    let n = 2048usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 61) as f32 - 7.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let mut host_in = device.alloc_pinned::<f32>(2 * n)?;
    host_in[..n].copy_from_slice(&x);
    host_in[n..].copy_from_slice(&y);
    let mut host_out = device.alloc_pinned::<f32>(2 * n)?;
    let a = device.alloc_zeroed::<f32>(n)?;
    let b = device.alloc_zeroed::<f32>(n)?;
    let c = device.alloc_zeroed::<f32>(n)?;
    let flags = device.alloc_zeroed::<u32>(16)?;
    let bytes = n * 4;
    let count = n as i32;
    // upload(in[..n] -> a) -> axpb(a) -> copy(a -> b) -> fill(flags)
    //   -> download(b -> out[..n]) -> host
    let g = Graph::create(device)?;
    let up = g.add_upload_node(None, &a, 0, &host_in, 0, bytes)?;
    let kern = g.add_kernel_node(
        Some(&up),
        &axpb,
        &LaunchConfig::new(8, 128),
        (&a, &count, &2.0f32, &1.0f32),
    )?;
    let copy = g.add_copy_node(&kern, &b, 0, &a, 0, bytes)?;
    let fill = g.add_fill_node(&copy, &flags, 0, 0x11, 4, 4)?;
    let down = g.add_download_node(&fill, &host_out, 0, &b, 0, bytes)?;
    let (first_calls, second_calls) = (Arc::new(AtomicI32::new(0)), Arc::new(AtomicI32::new(0)));
    let last = Arc::new(AtomicI32::new(0));
    let host = g.add_host_node(Some(&down), marker(1, &first_calls, &last))?;
    let exec = g.instantiate()?;
    let s = stream(device)?;
    run(&exec, &s)?;
    for i in 0..n {
        let want = 2.0 * x[i] + 1.0;
        ensure!(
            host_out[i] == want,
            "first launch: out[{i}] is {}, not {want}",
            host_out[i]
        );
    }
    let f = flags.to_vec()?;
    ensure!(f[0] == 0x11, "the fill wrote {:#x}, not 0x11", f[0]);
    ensure!(
        last.load(Ordering::SeqCst) == 1,
        "the host node did not run"
    );

    // New parameters for every node: the upload reads the second half of
    // `in` into c, the kernel becomes axmb with a = 3, b = 0.5 on c, the copy
    // copies c to b, the fill writes 0x22 further on, the download writes the
    // second half of `out`, and the host node calls another function.
    exec.set_upload_node(&up, &c, 0, &host_in, bytes, bytes)?;
    exec.set_kernel_node(
        &kern,
        &axmb,
        &LaunchConfig::new(4, 256),
        (&c, &count, &3.0f32, &0.5f32),
    )?;
    exec.set_copy_node(&copy, &b, 0, &c, 0, bytes)?;
    exec.set_fill_node(&fill, &flags, 16, 0x22, 4, 4)?;
    exec.set_download_node(&down, &host_out, bytes, &b, 0, bytes)?;
    exec.set_host_node(&host, marker(2, &second_calls, &last))?;
    // Dropped handles do not matter: the executable graph keeps what it uses.
    drop(axmb);
    drop(c);
    run(&exec, &s)?;
    for i in 0..n {
        let want = 3.0 * y[i] - 0.5;
        ensure!(
            host_out[n + i] == want,
            "updated: out[{}] is {}, not {want}",
            n + i,
            host_out[n + i]
        );
    }
    let f = flags.to_vec()?;
    ensure!(
        f[0] == 0x11,
        "the first fill range is {:#x}, not left as 0x11",
        f[0]
    );
    ensure!(f[4] == 0x22, "the updated fill wrote {:#x}, not 0x22", f[4]);
    let (calls1, calls2) = (
        first_calls.load(Ordering::SeqCst),
        second_calls.load(Ordering::SeqCst),
    );
    ensure!(
        calls1 == 1 && calls2 == 1,
        "the host functions ran {calls1} and {calls2} times, not once each"
    );
    ensure!(
        last.load(Ordering::SeqCst) == 2,
        "the new host function did not run last"
    );

    // The graph itself is unchanged: a new instance does the first work.
    host_out[..n].fill(0.0);
    let again = g.instantiate()?;
    run(&again, &s)?;
    for i in 0..n {
        let want = 2.0 * x[i] + 1.0;
        ensure!(
            host_out[i] == want,
            "a new instance: out[{i}] is {}, not {want}",
            host_out[i]
        );
    }
    Ok(())
}

fn nodes_are_disabled_and_enabled_again(device: &Device) -> TestResult {
    let m = module(device)?;
    let bump = m.function("bump")?;
    let mut counter = device.alloc_zeroed::<i32>(4)?;
    let g = Graph::create(device)?;
    let k = g.add_kernel_node(None, &bump, &LaunchConfig::new(1, 1), (&counter, &5i32))?;
    let fill = g.add_fill_node(&k, &counter, 8, 7, 4, 1)?;
    let (calls, last) = (Arc::new(AtomicI32::new(0)), Arc::new(AtomicI32::new(0)));
    let host = g.add_host_node(Some(&fill), marker(1, &calls, &last))?;
    let exec = g.instantiate()?;
    let s = stream(device)?;
    ensure!(exec.node_enabled(&k)? == 1, "a new node is disabled");
    run(&exec, &s)?;
    let c = counter.to_vec()?;
    ensure!(c[0] == 5 && c[2] == 7, "the first launch left {c:?}");

    exec.set_node_enabled(&k, 0)?;
    exec.set_node_enabled(&fill, 0)?;
    ensure!(
        exec.node_enabled(&k)? == 0,
        "the kernel node is still enabled"
    );
    ensure!(
        exec.node_enabled(&fill)? == 0,
        "the fill node is still enabled"
    );
    counter.fill_bytes(0)?;
    device.synchronize()?;
    run(&exec, &s)?;
    let c = counter.to_vec()?;
    ensure!(c[0] == 0, "a disabled kernel node ran: {c:?}");
    ensure!(c[2] == 0, "a disabled fill node ran: {c:?}");
    let ran = calls.load(Ordering::SeqCst);
    ensure!(
        ran == 2,
        "the host node after the disabled ones ran {ran} times, not 2"
    );

    exec.set_node_enabled(&k, 1)?;
    exec.set_node_enabled(&fill, 1)?;
    ensure!(
        exec.node_enabled(&k)? == 1,
        "the kernel node is still disabled"
    );
    run(&exec, &s)?;
    let c = counter.to_vec()?;
    ensure!(c[0] == 5 && c[2] == 7, "enabled again: {c:?}");

    // A host node cannot be disabled: the driver's rule, said before it is
    // asked.
    refused(
        exec.set_node_enabled(&host, 0),
        ErrorKind::NotSupported,
        "the node is a host node",
    )?;
    refused(
        exec.node_enabled(&host),
        ErrorKind::NotSupported,
        "the node is a host node",
    )
}

fn exec_node_updates_refuse_naming_what_was_wrong(device: &Device) -> TestResult {
    let m = module(device)?;
    let (axpb, put) = (m.function("axpb")?, m.function("put")?);
    let a = device.alloc_zeroed::<f32>(1024)?;
    let b = device.alloc_zeroed::<f32>(1024)?;
    let pinned = device.alloc_pinned::<f32>(1024)?;
    let g = Graph::create(device)?;
    let other = Graph::create(device)?;
    let cfg = LaunchConfig::new(1, 32);
    let count = 1024i32;
    let args = (&a, &count, &1.0f32, &0.0f32);
    let k = g.add_kernel_node(None, &axpb, &cfg, args)?;
    let copy = g.add_copy_node(&k, &b, 0, &a, 0, 4096)?;
    let fill = g.add_fill_node(&copy, &a, 0, 1, 4, 16)?;
    let down = g.add_download_node(&fill, &pinned, 0, &b, 0, 64)?;
    let foreign = other.add_fill_node(None, &a, 0, 1, 4, 16)?;
    let event = device.create_event()?;
    g.add_event_record_node(&down, &event)?;
    let exec = g.instantiate()?;

    // A kernel of another signature, named with the node's kernel.
    match exec.set_kernel_node(&k, &put, &cfg, (&a, &3i32)) {
        Err(e)
            if e.kind() == ErrorKind::InvalidArgument
                && e.message().contains("keeps the kernel's signature")
                && e.message().contains("'axpb'") => {}
        other => {
            return Err(format!(
                "another signature: expected InvalidArgument naming 'axpb' and the \
                 signature, got {other:?}"
            )
            .into())
        }
    }
    // Arguments that do not fit the kernel, checked as a launch checks them.
    refused(
        exec.set_kernel_node(&k, &axpb, &cfg, (&a, &count, &1.0f32)),
        ErrorKind::InvalidArgument,
        "takes 4 parameters, but 3 were given",
    )?;
    // Launch attributes stay as instantiated.
    refused(
        exec.set_kernel_node(&k, &axpb, &LaunchConfig::new(1, 32).priority(1), args),
        ErrorKind::NotSupported,
        "stay as instantiated",
    )?;

    // A node of another kind.
    refused(
        exec.set_kernel_node(&copy, &axpb, &cfg, args),
        ErrorKind::InvalidArgument,
        "the node is a copy node, not a kernel node",
    )?;
    refused(
        exec.set_copy_node(&fill, &b, 0, &a, 0, 64),
        ErrorKind::InvalidArgument,
        "the node is a fill node, not a copy node",
    )?;
    refused(
        exec.set_upload_node(&down, &b, 0, &pinned, 0, 64),
        ErrorKind::InvalidArgument,
        "a download node, not an upload node",
    )?;
    refused(
        exec.set_event_node(&fill, &event),
        ErrorKind::InvalidArgument,
        "not an event record or event wait node",
    )?;
    // A refused host function is dropped at once, never kept.
    let kept = Arc::new(AtomicI32::new(0));
    let held = Arc::clone(&kept);
    refused(
        exec.set_host_node(&fill, move || -> Result<(), String> {
            held.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }),
        ErrorKind::InvalidArgument,
        "the node is a fill node, not a host node",
    )?;
    ensure!(
        Arc::strong_count(&kept) == 1,
        "the refused host function was not dropped"
    );

    // A node of another graph.
    refused(
        exec.set_fill_node(&foreign, &a, 0, 2, 4, 16),
        ErrorKind::InvalidArgument,
        "not a node of the graph",
    )?;

    // Ranges checked as adding the node checks them.
    refused(
        exec.set_copy_node(&copy, &b, 4, &a, 0, 4096),
        ErrorKind::OutOfRange,
        "reaches past the end of the 4096-byte buffer",
    )?;
    refused(
        exec.set_copy_node(&copy, &a, 0, &a, 8, 64),
        ErrorKind::InvalidArgument,
        "overlap",
    )?;
    refused(
        exec.set_download_node(&down, &pinned, 4090, &b, 0, 64),
        ErrorKind::OutOfRange,
        "reaches past the end of the 4096-byte host buffer",
    )?;
    refused(
        exec.set_fill_node(&fill, &a, 0, 1, 3, 16),
        ErrorKind::InvalidArgument,
        "expected 1, 2 or 4",
    )?;

    // Nothing refused changed the executable graph: it still runs as built.
    run(&exec, &stream(device)?)
}

fn a_3d_copy_node_copies_a_box_into_pitched_memory_and_an_array(device: &Device) -> TestResult {
    module(device)?;
    let (w, h) = (40usize, 24usize); // floats per row, rows
    let row = w * 4;
    let mut host = device.alloc_pinned::<f32>(w * h)?;
    for (i, v) in host.iter_mut().enumerate() {
        *v = i as f32 * 0.25;
    }
    let mut pitched = device.alloc_pitched::<f32>(w, h)?;
    let array = device.create_array(&ArrayDesc::new_2d(ArrayFormat::F32, 1, w, h))?;
    // The array starts zeroed by a copy of zeros.
    let zeros = vec![0.0f32; w * h];
    Copy3d::new()
        .from_host(&zeros)
        .src_layout(row, 0)
        .to_array(&array)
        .extent(row, h, 1)
        .run()?;
    let mut back = vec![-1.0f32; w * h];
    // host box (rows 4..20, columns 8..32) -> pitched at (0, 0) -> array at
    // (8, 4) -> back.
    let g = Graph::create(device)?;
    // SAFETY: `host` and `back` outlive the launch below, and nothing else
    // touches them meanwhile; the graph keeps the buffer and the array.
    let (n2, n3) = unsafe {
        let to_pitched = Copy3d::new()
            .from_host(&host[..])
            .src_offset(8 * 4, 4, 0)
            .src_layout(row, 0)
            .to_buffer(&mut pitched)
            .extent(24 * 4, 16, 1);
        let n1 = g.add_copy_3d_node(None, &to_pitched)?;
        let to_array = Copy3d::new()
            .from_buffer(&pitched)
            .to_array(&array)
            .dst_offset(8 * 4, 4, 0)
            .extent(24 * 4, 16, 1);
        let n2 = g.add_copy_3d_node(Some(&n1), &to_array)?;
        let to_host = Copy3d::new()
            .from_array(&array)
            .to_host(&mut back)
            .dst_layout(row, 0)
            .extent(row, h, 1);
        let n3 = g.add_copy_3d_node(Some(&n2), &to_host)?;
        (n2, n3)
    };
    ensure!(
        n2.r#type()? == GraphNodeType::Memcpy,
        "a 3D copy node is a {:?} node",
        n2.r#type()?
    );
    drop(pitched); // the graph keeps it
    let exec = g.instantiate()?;
    run(&exec, &stream(device)?)?;
    for y in 0..h {
        for x in 0..w {
            let inside = (4..20).contains(&y) && (8..32).contains(&x);
            let want = if inside { host[y * w + x] } else { 0.0 };
            ensure!(
                back[y * w + x] == want,
                "({x}, {y}) is {}, not {want}",
                back[y * w + x]
            );
        }
    }

    // The driver updates no 3D copy in place; the core says so.
    let s1 = device.alloc_zeroed::<u8>(256)?;
    let s2 = device.alloc_zeroed::<u8>(256)?;
    refused(
        exec.set_copy_node(&n2, &s1, 0, &s2, 0, 64),
        ErrorKind::NotSupported,
        "3D copy node",
    )?;
    let _ = n3;

    // Refusals: a box past the array, an empty box.
    let mut other = vec![0.0f32; w * h];
    // SAFETY: refused before any node is added.
    let past = unsafe {
        g.add_copy_3d_node(
            None,
            &Copy3d::new()
                .from_array(&array)
                .src_offset(0, 8, 0)
                .to_host(&mut other)
                .dst_layout(row, 0)
                .extent(row, h, 1),
        )
    };
    refused(
        past,
        ErrorKind::OutOfRange,
        "exceed the array's height of 24",
    )?;
    // SAFETY: as above.
    let empty = unsafe {
        g.add_copy_3d_node(
            None,
            &Copy3d::new()
                .from_array(&array)
                .to_host(&mut other)
                .dst_layout(row, 0)
                .extent(0, h, 1),
        )
    };
    refused(empty, ErrorKind::InvalidArgument, "width_bytes is 0")
}

fn a_kernel_launches_a_device_graph_fire_and_forget_then_tail(device: &Device) -> TestResult {
    let m = module(device)?;
    let (bump, launcher) = (m.function("bump")?, m.function("launch_graph")?);
    let mut words = device.alloc_zeroed::<i32>(4)?;
    let s = stream(device)?;
    // The device graph: one kernel node adding 3 to words[0].
    let child = Graph::create(device)?;
    child.add_kernel_node(None, &bump, &LaunchConfig::new(1, 1), (&words, &3i32))?;
    let device_graph = child.instantiate_with_flags(
        GraphInstantiateFlags::DEVICE_LAUNCH | GraphInstantiateFlags::UPLOAD,
        &s,
    )?;
    let handle = device_graph.launch_handle()?;
    ensure!(handle != 0, "the launch handle is 0");
    // cudaGraphLaunch's answer goes to words[1].
    let answer = words.device_ptr() + 4;
    for mode in [FIRE_AND_FORGET, TAIL_LAUNCH] {
        let name = if mode == FIRE_AND_FORGET {
            "fire-and-forget"
        } else {
            "tail launch"
        };
        words.fill_bytes(0)?;
        device.synchronize()?;
        // The host graph: a kernel node that launches the device graph.
        let host = Graph::create(device)?;
        host.add_kernel_node(
            None,
            &launcher,
            &LaunchConfig::new(1, 1),
            (&handle, &mode, &answer),
        )?;
        let exec = host.instantiate()?;
        run(&exec, &s)?;
        run(&exec, &s)?;
        let w = words.to_vec()?;
        ensure!(w[1] == 0, "{name}: cudaGraphLaunch answered {}", w[1]);
        ensure!(
            w[0] == 6,
            "{name}: two launches of the host graph, each adding 3 from the device graph, \
             added {}",
            w[0]
        );
    }
    // The driver refuses a stream launch of a kernel that launches a graph.
    let mode = FIRE_AND_FORGET;
    // SAFETY: `words` outlives the synchronize below.
    let r = unsafe {
        launcher
            .launch(LaunchConfig::new(1, 1))
            .stream(&s)
            .arg(&handle)
            .arg(&mode)
            .arg(&answer)
            .run()
    };
    match r {
        Err(e) if e.message().contains("cuLaunchKernel") => {}
        other => {
            return Err(format!(
                "a stream launch of the launching kernel: {other:?}, not a refusal naming \
                 cuLaunchKernel"
            )
            .into())
        }
    }
    // The refusal is not sticky.
    s.synchronize()?;
    Ok(())
}
