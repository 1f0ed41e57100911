//! GPU tests of an executable graph changed in place, as
//! `tests/c/gpu_graph_update_test.cc` and `tests/python/test_graph_update.py`
//! test it: every node kind's parameters updated without instantiating
//! again, nodes disabled and enabled, a 3D copy node, a kernel that launches
//! a device graph (fire-and-forget, then tail launch), and the refusals with
//! the core's words.

use std::error::Error as StdError;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use cuabi::{
    ArrayDesc, ArrayFormat, CompileOptions, Copy3d, Device, ErrorKind, Graph, GraphExec,
    GraphInstantiateFlags, LaunchConfig, Stream, StreamFlags,
};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    every_node_kind_takes_new_parameters_without_instantiating_again,
    nodes_are_disabled_and_enabled_again,
    the_refusals_name_what_was_wrong,
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

fn module(device: &Device) -> Result<cuabi::Module, Box<dyn StdError>> {
    if cuabi::driver_version()? < 12040 {
        return skip("these updates need a driver of CUDA 12.4 or later");
    }
    Ok(device.compile(SOURCE, &CompileOptions::new().name("graph_update.cu"))?)
}

fn stream(device: &Device) -> cuabi::Result<Stream> {
    device.create_stream_with(StreamFlags::NON_BLOCKING, 0)
}

fn run(exec: &GraphExec, s: &Stream) -> TestResult {
    // SAFETY: every test keeps what its graphs use alive past this
    // synchronize.
    unsafe { exec.launch(s)? };
    s.synchronize()?;
    Ok(())
}

fn refused<T: std::fmt::Debug>(r: cuabi::Result<T>, kind: ErrorKind, words: &str) -> TestResult {
    match r {
        Err(e) if e.kind() == kind && e.message().contains(words) => Ok(()),
        other => Err(format!("expected {kind:?} with {words:?}, got {other:?}").into()),
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
    let host_out = device.alloc_pinned::<f32>(2 * n)?;
    let a = device.alloc_zeroed::<f32>(n)?;
    let b = device.alloc_zeroed::<f32>(n)?;
    let c = device.alloc_zeroed::<f32>(n)?;
    let flags = device.alloc_zeroed::<u32>(16)?;
    let bytes = n * 4;
    let count = n as i32;
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
    let last = Arc::new(AtomicI32::new(0));
    let seen = last.clone();
    let host = g.add_host_node(Some(&down), move || -> Result<(), String> {
        seen.store(1, Ordering::SeqCst);
        Ok(())
    })?;
    let mut exec = g.instantiate()?;
    let s = stream(device)?;
    run(&exec, &s)?;
    for i in 0..n {
        ensure!(
            host_out[i] == 2.0 * x[i] + 1.0,
            "first launch: out[{i}] is {}",
            host_out[i]
        );
    }
    ensure!(
        flags.to_vec()?[0] == 0x11,
        "the fill wrote {:#x}",
        flags.to_vec()?[0]
    );
    ensure!(
        last.load(Ordering::SeqCst) == 1,
        "the host node did not run"
    );

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
    let seen = last.clone();
    exec.set_host_node(&host, move || -> Result<(), String> {
        seen.store(2, Ordering::SeqCst);
        Ok(())
    })?;
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
        f[0] == 0x11 && f[4] == 0x22,
        "the fills left {:#x} and {:#x}",
        f[0],
        f[4]
    );
    ensure!(
        last.load(Ordering::SeqCst) == 2,
        "the new host function did not run"
    );
    Ok(())
}

fn nodes_are_disabled_and_enabled_again(device: &Device) -> TestResult {
    let m = module(device)?;
    let bump = m.function("bump")?;
    let mut counter = device.alloc_zeroed::<i32>(4)?;
    let g = Graph::create(device)?;
    let k = g.add_kernel_node(None, &bump, &LaunchConfig::new(1, 1), (&counter, &5i32))?;
    let fill = g.add_fill_node(&k, &counter, 8, 7, 4, 1)?;
    let host = g.add_host_node(Some(&fill), || -> Result<(), String> { Ok(()) })?;
    let exec = g.instantiate()?;
    let s = stream(device)?;
    ensure!(exec.node_enabled(&k)? == 1, "a new node is disabled");
    run(&exec, &s)?;
    exec.set_node_enabled(&k, 0)?;
    exec.set_node_enabled(&fill, 0)?;
    ensure!(exec.node_enabled(&k)? == 0, "the node is still enabled");
    counter.fill_bytes(0)?;
    device.synchronize()?;
    run(&exec, &s)?;
    let c = counter.to_vec()?;
    ensure!(c[0] == 0 && c[2] == 0, "disabled nodes ran: {c:?}");
    exec.set_node_enabled(&k, 1)?;
    exec.set_node_enabled(&fill, 1)?;
    run(&exec, &s)?;
    let c = counter.to_vec()?;
    ensure!(c[0] == 5 && c[2] == 7, "enabled again: {c:?}");
    refused(
        exec.set_node_enabled(&host, 0),
        ErrorKind::NotSupported,
        "the node is a host node",
    )
}

fn the_refusals_name_what_was_wrong(device: &Device) -> TestResult {
    let m = module(device)?;
    let (axpb, put) = (m.function("axpb")?, m.function("put")?);
    let a = device.alloc_zeroed::<f32>(1024)?;
    let b = device.alloc_zeroed::<f32>(1024)?;
    let pinned = device.alloc_pinned::<f32>(1024)?;
    let g = Graph::create(device)?;
    let other = Graph::create(device)?;
    let cfg = LaunchConfig::new(1, 32);
    let count = 1024i32;
    let k = g.add_kernel_node(None, &axpb, &cfg, (&a, &count, &1.0f32, &0.0f32))?;
    let copy = g.add_copy_node(&k, &b, 0, &a, 0, 4096)?;
    let fill = g.add_fill_node(&copy, &a, 0, 1, 4, 16)?;
    let down = g.add_download_node(&fill, &pinned, 0, &b, 0, 64)?;
    let foreign = other.add_fill_node(None, &a, 0, 1, 4, 16)?;
    let mut exec = g.instantiate()?;
    refused(
        exec.set_kernel_node(&k, &put, &cfg, (&a, &3i32)),
        ErrorKind::InvalidArgument,
        "keeps the kernel's signature",
    )?;
    refused(
        exec.set_kernel_node(
            &k,
            &axpb,
            &LaunchConfig::new(1, 32).priority(1),
            (&a, &count, &1.0f32, &0.0f32),
        ),
        ErrorKind::NotSupported,
        "stay as instantiated",
    )?;
    refused(
        exec.set_kernel_node(&copy, &axpb, &cfg, (&a, &count, &1.0f32, &0.0f32)),
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
        exec.set_fill_node(&foreign, &a, 0, 2, 4, 16),
        ErrorKind::InvalidArgument,
        "not a node of the graph",
    )?;
    refused(
        exec.set_copy_node(&copy, &b, 4, &a, 0, 4096),
        ErrorKind::OutOfRange,
        "reaches past the end of the 4096-byte buffer",
    )?;
    refused(
        exec.set_fill_node(&fill, &a, 0, 1, 3, 16),
        ErrorKind::InvalidArgument,
        "expected 1, 2 or 4",
    )?;
    // Nothing refused changed the executable graph.
    run(&exec, &stream(device)?)
}

fn a_3d_copy_node_copies_a_box_into_pitched_memory_and_an_array(device: &Device) -> TestResult {
    module(device)?;
    let (w, h) = (40usize, 24usize);
    let host: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.25).collect();
    let mut pitched = device.alloc_pitched::<f32>(w, h)?;
    let array = device.create_array(&ArrayDesc::new_2d(ArrayFormat::F32, 1, w, h))?;
    let zeros = vec![0.0f32; w * h];
    Copy3d::new()
        .from_host(&zeros)
        .to_array(&array)
        .src_layout(w * 4, 0)
        .extent(w * 4, h, 1)
        .run()?;
    let mut back = vec![-1.0f32; w * h];
    let g = Graph::create(device)?;
    let row = w * 4;
    // SAFETY: `host`, `back`, the buffer and the array outlive the launch below.
    let (n1, n2, n3) = unsafe {
        let c1 = Copy3d::new()
            .from_host(&host)
            .src_offset(8 * 4, 4, 0)
            .src_layout(row, 0)
            .to_buffer(&mut pitched)
            .extent(24 * 4, 16, 1);
        let n1 = g.add_copy_3d_node(None, &c1)?;
        let c2 = Copy3d::new()
            .from_buffer(&pitched)
            .to_array(&array)
            .dst_offset(8 * 4, 4, 0)
            .extent(24 * 4, 16, 1);
        let n2 = g.add_copy_3d_node(Some(&n1), &c2)?;
        let c3 = Copy3d::new()
            .from_array(&array)
            .to_host(&mut back)
            .dst_layout(row, 0)
            .extent(row, h, 1);
        let n3 = g.add_copy_3d_node(Some(&n2), &c3)?;
        (n1, n2, n3)
    };
    let _ = (&n1, &n3);
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
    let s1 = device.alloc_zeroed::<u8>(64)?;
    let s2 = device.alloc_zeroed::<u8>(64)?;
    refused(
        exec.set_copy_node(&n2, &s1, 0, &s2, 0, 64),
        ErrorKind::NotSupported,
        "3D copy node",
    )?;
    let mut small = vec![0.0f32; w * h];
    // SAFETY: refused before anything is queued.
    let r = unsafe {
        g.add_copy_3d_node(
            None,
            &Copy3d::new()
                .from_array(&array)
                .src_offset(0, 8, 0)
                .to_host(&mut small)
                .dst_layout(row, 0)
                .extent(row, h, 1),
        )
    };
    refused(r, ErrorKind::OutOfRange, "")
}

fn a_kernel_launches_a_device_graph_fire_and_forget_then_tail(device: &Device) -> TestResult {
    let m = module(device)?;
    let (bump, launcher) = (m.function("bump")?, m.function("launch_graph")?);
    let mut words = device.alloc_zeroed::<i32>(4)?;
    let s = stream(device)?;
    let child = Graph::create(device)?;
    child.add_kernel_node(None, &bump, &LaunchConfig::new(1, 1), (&words, &3i32))?;
    let device_graph = child.instantiate_with_flags(
        GraphInstantiateFlags::DEVICE_LAUNCH | GraphInstantiateFlags::UPLOAD,
        &s,
    )?;
    let handle = device_graph.launch_handle()?;
    ensure!(handle != 0, "the launch handle is 0");
    let answer = words.device_ptr() + 4;
    for mode in [FIRE_AND_FORGET, TAIL_LAUNCH] {
        words.fill_bytes(0)?;
        device.synchronize()?;
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
        ensure!(
            w[1] == 0,
            "mode {mode:#x}: cudaGraphLaunch answered {}",
            w[1]
        );
        ensure!(
            w[0] == 6,
            "mode {mode:#x}: two launches added {}, not 6",
            w[0]
        );
    }
    // The driver refuses a stream launch of a kernel that launches a graph.
    let mode = FIRE_AND_FORGET;
    // SAFETY: refused by the driver; `words` outlives the synchronize.
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
        other => return Err(format!("a stream launch of the launching kernel: {other:?}").into()),
    }
    s.synchronize()?;
    Ok(())
}
