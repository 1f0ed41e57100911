//! GPU tests of graphs built node by node, as
//! `tests/c/gpu_graph_nodes_test.cc` tests them: a hand-built upload ->
//! kernel -> download graph with a host node and an event record, checked
//! against the same kernel on a stream; a WHILE node counting down on the
//! device; IF/ELSE and a SWITCH chosen on the device; clone, DOT dump and
//! instantiation flags; refusals carrying the core's words.

use cuabi::{
    CompileOptions, ConditionalType, Device, ErrorKind, GraphInstantiateFlags, GraphNodeType,
    LaunchConfig, StreamFlags,
};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    a_hand_built_graph_matches_the_same_work_on_a_stream,
    a_while_node_loops_until_device_code_clears_the_condition,
    if_else_and_switch_choose_their_bodies_on_the_device,
    clone_dot_dump_and_flags,
    graph_node_refusals_carry_the_cores_words,
];

/// `cudaGraphSetConditional` is a device builtin the driver resolves: the
/// program declares it (see the README).
const SOURCE: &str = r#"
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void axpb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
extern "C" __global__ void count_down(int* counter, int* iterations,
                                      cudaGraphConditionalHandle h) {
  *iterations += 1;
  if (--*counter <= 0) cudaGraphSetConditional(h, 0);
}
extern "C" __global__ void set_condition(const int* value, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, (unsigned)*value);
}
extern "C" __global__ void put(int* where, int value) { *where = value; }
"#;

fn module(device: &Device) -> Result<cuabi::Module, Box<dyn std::error::Error>> {
    if cuabi::driver_version()? < 12040 {
        return skip("conditional nodes need a driver of CUDA 12.4 or later");
    }
    Ok(device.compile(SOURCE, &CompileOptions::default())?)
}

fn one() -> LaunchConfig {
    LaunchConfig::new(1, 1)
}

fn a_hand_built_graph_matches_the_same_work_on_a_stream(device: &Device) -> TestResult {
    let m = module(device)?;
    let axpb = m.function("axpb")?;
    let n = 4096usize;
    let hx: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.5).collect();
    let (a, b, count) = (3.0f32, -1.25f32, n as i32);
    let want: Vec<f32> = hx.iter().map(|x| a * x + b).collect();
    let mut host_in = device.alloc_pinned::<f32>(n)?;
    host_in.copy_from_slice(&hx);
    let host_out = device.alloc_pinned::<f32>(n)?;
    let buf = device.alloc_zeroed::<f32>(n)?;
    let graph = cuabi::Graph::create(device)?;
    let up = graph.add_upload_node(None, &buf, 0, &host_in, 0, n * 4)?;
    let kern = graph.add_kernel_node(
        Some(&up),
        &axpb,
        &LaunchConfig::new(16, 256),
        (&buf, &count, &a, &b),
    )?;
    let down = graph.add_download_node(Some(&kern), &host_out, 0, &buf, 0, n * 4)?;
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let host = graph.add_host_node(Some(&down), move || {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok::<(), String>(())
    })?;
    let event = device.create_event()?;
    let rec = graph.add_event_record_node(Some(&down), &event)?;
    ensure!(graph.node_count()? == 5, "{} nodes", graph.node_count()?);
    ensure!(kern.r#type()? == GraphNodeType::Kernel, "kernel node type");
    ensure!(up.r#type()? == GraphNodeType::Memcpy, "upload node type");
    ensure!(host.r#type()? == GraphNodeType::Host, "host node type");
    ensure!(
        rec.r#type()? == GraphNodeType::EventRecord,
        "record node type"
    );
    ensure!(
        kern.dependency_count()? == 1 && down.dependent_count()? == 2,
        "edges"
    );
    ensure!(
        kern.get_dependency(0)?.r#type()? == GraphNodeType::Memcpy,
        "the dependency"
    );
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let exec = graph.instantiate()?;
    // SAFETY: the buffers outlive the synchronize.
    unsafe { exec.launch(&s)? };
    s.synchronize()?;
    ensure!(
        calls.load(std::sync::atomic::Ordering::SeqCst) == 1,
        "the host node ran once"
    );
    ensure!(
        host_out[..] == want[..],
        "the graph's result differs from a * x + b"
    );
    // A failing host node is reported by the stream's next synchronize.
    let failing = cuabi::Graph::create(device)?;
    failing.add_host_node(None, || Err::<(), _>("host node asked to fail"))?;
    let exec = failing.instantiate()?;
    unsafe { exec.launch(&s)? };
    match s.synchronize() {
        Err(e) if e.kind() == ErrorKind::HostFunction && e.message().contains("asked to fail") => {}
        other => return Err(format!("the failure was not reported: {other:?}").into()),
    }
    s.synchronize()?;
    Ok(())
}

fn a_while_node_loops_until_device_code_clears_the_condition(device: &Device) -> TestResult {
    let m = module(device)?;
    let count_down = m.function("count_down")?;
    let mut counter = device.alloc_zeroed::<i32>(1)?;
    let mut iterations = device.alloc_zeroed::<i32>(1)?;
    let graph = cuabi::Graph::create(device)?;
    let handle = graph.create_conditional_handle(1)?;
    let looped = graph.add_conditional_node(None, handle, ConditionalType::While, 1)?;
    let body = looped.body(0)?;
    body.add_kernel_node(None, &count_down, &one(), (&counter, &iterations, &handle))?;
    let exec = graph.instantiate()?;
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    for start in [7i32, 1, 23] {
        counter.copy_from(&[start])?;
        iterations.copy_from(&[0])?;
        unsafe { exec.launch(&s)? };
        s.synchronize()?;
        let got = iterations.to_vec()?[0];
        ensure!(got == start, "start {start}: {got} iterations");
    }
    Ok(())
}

fn if_else_and_switch_choose_their_bodies_on_the_device(device: &Device) -> TestResult {
    let m = module(device)?;
    let set_condition = m.function("set_condition")?;
    let put = m.function("put")?;
    let mut value = device.alloc_zeroed::<i32>(1)?;
    let mut out = device.alloc_zeroed::<i32>(1)?;
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    for (kind, size, cases) in [
        (ConditionalType::If, 2u32, vec![1, 0, 5]),
        (ConditionalType::Switch, 4u32, vec![2, 0, 3, 1, 4]),
    ] {
        let graph = cuabi::Graph::create(device)?;
        let h = graph.create_conditional_handle(0)?;
        let setter = graph.add_kernel_node(None, &set_condition, &one(), (&value, &h))?;
        let node = graph.add_conditional_node(Some(&setter), h, kind, size)?;
        for i in 0..size {
            let mark = if kind == ConditionalType::If {
                if i == 0 {
                    100
                } else {
                    200
                }
            } else {
                10 * i as i32 + 1
            };
            node.body(i as usize)?
                .add_kernel_node(None, &put, &one(), (&out, &mark))?;
        }
        let exec = graph.instantiate()?;
        for v in cases {
            value.copy_from(&[v])?;
            out.copy_from(&[-1])?;
            unsafe { exec.launch(&s)? };
            s.synchronize()?;
            let got = out.to_vec()?[0];
            let want = if kind == ConditionalType::If {
                if v != 0 {
                    100
                } else {
                    200
                }
            } else if v < 4 {
                10 * v + 1
            } else {
                -1
            };
            ensure!(got == want, "{kind:?} condition {v}: {got}, not {want}");
        }
    }
    Ok(())
}

fn clone_dot_dump_and_flags(device: &Device) -> TestResult {
    let m = module(device)?;
    let put = m.function("put")?;
    let out = device.alloc_zeroed::<i32>(1)?;
    let graph = cuabi::Graph::create(device)?;
    let first = graph.add_kernel_node(None, &put, &one(), (&out, &41i32))?;
    graph.add_empty_node(Some(&first))?;
    let copy = graph.clone()?;
    graph.add_empty_node(None)?;
    ensure!(
        copy.node_count()? == 2 && graph.node_count()? == 3,
        "the clone is a copy"
    );
    let path = std::env::temp_dir().join(format!("cuabi_graph_{}.dot", std::process::id()));
    graph.write_dot(&path)?;
    let text = std::fs::read_to_string(&path)?;
    let _ = std::fs::remove_file(&path);
    ensure!(
        text.contains("digraph") && text.contains("put"),
        "DOT text: {text}"
    );
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let exec = graph.instantiate_with_flags(GraphInstantiateFlags::UPLOAD, Some(&s))?;
    unsafe { exec.launch(&s)? };
    s.synchronize()?;
    ensure!(out.to_vec()?[0] == 41, "the node did not run");
    Ok(())
}

fn graph_node_refusals_carry_the_cores_words(device: &Device) -> TestResult {
    let m = module(device)?;
    let put = m.function("put")?;
    let buf = device.alloc_zeroed::<u8>(64)?;
    let graph = cuabi::Graph::create(device)?;
    let other = cuabi::Graph::create(device)?;
    let a = graph.add_empty_node(None)?;
    let b = graph.add_empty_node(Some(&a))?;
    let foreign = other.add_empty_node(None)?;
    let refused = |r: cuabi::Result<()>, kind: ErrorKind, words: &str| -> TestResult {
        match r {
            Err(e) if e.kind() == kind && e.message().contains(words) => Ok(()),
            other => Err(format!("expected {kind:?} with {words:?}, got {other:?}").into()),
        }
    };
    refused(
        graph.add_empty_node(Some(&foreign)).map(drop),
        ErrorKind::InvalidArgument,
        "node of another graph",
    )?;
    refused(
        a.add_dependency(&b),
        ErrorKind::InvalidArgument,
        "would make a cycle",
    )?;
    refused(
        graph.add_kernel_node(None, &put, &one(), (&buf,)).map(drop),
        ErrorKind::InvalidArgument,
        "",
    )?;
    refused(
        graph.add_copy_node(None, &buf, 32, &buf, 0, 33).map(drop),
        ErrorKind::OutOfRange,
        "reaches past the end",
    )?;
    let h = graph.create_conditional_handle(0)?;
    refused(
        graph
            .add_conditional_node(None, h, ConditionalType::Switch, 0)
            .map(drop),
        ErrorKind::InvalidArgument,
        "at least 1 case",
    )?;
    // The driver numbers every graph's handles alike: the other graph's
    // second handle is a number this graph never made.
    other.create_conditional_handle(0)?;
    let h_other = other.create_conditional_handle(0)?;
    ensure!(
        h_other != h,
        "the other graph's second handle is {h_other}, as this graph's"
    );
    refused(
        graph
            .add_conditional_node(None, h_other, ConditionalType::If, 1)
            .map(drop),
        ErrorKind::InvalidArgument,
        "not made for this graph",
    )?;
    // The driver clones no graph with a conditional node, nor a body.
    let cond = graph.add_conditional_node(None, h, ConditionalType::If, 1)?;
    for which in [&graph, &cond.body(0)?] {
        refused(
            which.clone().map(drop),
            ErrorKind::NotSupported,
            "the driver clones no",
        )?;
    }
    Ok(())
}
