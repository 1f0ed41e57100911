//! Tests that need a CUDA device.
//!
//! libtest cannot mark a test skipped at run time, so this binary has its own
//! small runner (`harness = false` in Cargo.toml): it prints one line per test,
//! `ok`, `FAILED: why` or `SKIPPED: no CUDA device`, then
//! `N passed, N failed, N skipped`, and exits non-zero when a test failed.
//! Without a device every test is reported SKIPPED, never passed; a test
//! whose device lacks what it needs ends with [`skip`] and is reported
//! `SKIPPED: why`.
//!
//! `cargo test --test gpu -- NAME` runs the tests whose names contain NAME.
//!
//! The memory API's tests are in `gpu/memory.rs`; its IPC tests start this
//! binary again as their child process. Compilation beyond one string
//! (kernel listings, linking, libraries, background compiles) is tested in
//! `gpu/compile.rs`; the driver-level calls of the plain object layer
//! (context limits, stream attributes with the access-policy window, stream
//! memory operations) in `gpu/driver_level.rs`; observing a process (the
//! launches a sticky fault names, in a child process that faults; the
//! profiler's start and stop; device core dumps, written by a faulting
//! child) in `gpu/observing.rs`.

mod common;

use common::{parse_args, SAXPY};

use std::error::Error as StdError;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cuabi::{
    CaptureMode, CompileOptions, Device, DeviceBuffer, DeviceRepr, ErrorKind, EventFlags, Function,
    FunctionAttribute, LaunchConfig, LaunchFlags, LaunchPlan, Module, Output, ParamInfo, Program,
    StreamFlags,
};

type TestResult = Result<(), Box<dyn StdError>>;

/// Fails the test with a message unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

type Test = fn(&Device) -> TestResult;

/// Why a test did not run on this device (it lacks a capability): the
/// runner reports the test SKIPPED with it, neither passed nor failed.
#[derive(Debug)]
struct Skipped(String);

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for Skipped {}

/// Ends a test as skipped, saying why: `return skip(..)`, or `?` on a
/// helper that answers it.
fn skip<T>(why: impl Into<String>) -> Result<T, Box<dyn StdError>> {
    Err(Box::new(Skipped(why.into())))
}

/// `(name, function)` for each test function named.
macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), $name as Test)),*]
    };
}

#[path = "gpu/batch.rs"]
mod batch;
#[path = "gpu/batch_3d.rs"]
mod batch_3d;
#[path = "gpu/compile.rs"]
mod compile;
#[path = "gpu/dlpack.rs"]
mod dlpack;
#[path = "gpu/driver_level.rs"]
mod driver_level;
#[path = "gpu/graph_nodes.rs"]
mod graph_nodes;
#[path = "gpu/graph_patterns.rs"]
mod graph_patterns;
#[path = "gpu/graph_update.rs"]
mod graph_update;
#[path = "gpu/green_tensor.rs"]
mod green_tensor;
#[path = "gpu/launch_attributes.rs"]
mod launch_attributes;
#[path = "gpu/memory.rs"]
mod memory;
#[path = "gpu/observing.rs"]
mod observing;
#[path = "gpu/vmm.rs"]
mod vmm;

const TESTS: &[(&str, Test)] = tests![
    device_reports_its_properties,
    saxpy_matches_the_host,
    saxpy_parameter_layout_is_read_from_the_driver,
    a_four_byte_n_for_size_t_is_refused_naming_the_parameter,
    a_wrong_argument_count_is_refused,
    bad_launch_configurations_are_refused,
    async_copies_with_pinned_memory,
    copies_are_checked_against_buffer_sizes,
    events_order_and_time_work,
    graphs_capture_instantiate_and_replay,
    structs_pass_by_value,
    two_threads_launch_on_shared_handles,
    compile_uses_the_cache_and_name_expressions,
    compile_errors_carry_the_log,
    modules_load_from_ptx_cubin_and_files,
    globals_are_found_and_wrapped,
    objects_outlive_the_device_handle,
    plan_launches_saxpy,
    plan_relaunches_with_changed_arguments,
    plan_refuses_arguments_naming_the_parameter,
    plan_checks_its_configuration_once,
    plan_outlives_its_function_and_stream,
    plans_launch_from_other_threads,
    cooperative_launch_reduces_with_a_grid_barrier,
    cluster_blocks_exchange_through_distributed_shared_memory,
    programmatic_dependent_launch_pairs_see_the_first_kernels_writes,
    launch_priority_and_programmatic_event_are_accepted,
    occupancy_answers_are_sane_and_the_suggested_config_computes,
    graph_node_args_update_without_reinstantiating,
    graph_update_takes_a_recaptured_graph,
    host_functions_run_in_stream_order,
    host_function_failures_are_reported_by_the_next_synchronize,
    kernel_attributes_are_set_by_name,
];

fn main() -> ExitCode {
    // A run of this binary as another test's child process (IPC).
    if let Some(code) = memory::run_child() {
        return code;
    }
    // A run as a faulting child process (the launch log, core dumps).
    if let Some(code) = observing::run_child() {
        return code;
    }
    // A run as the virtual memory child (memory received by fd).
    if let Some(code) = vmm::run_child() {
        return code;
    }
    // A run as the printf child (a raised printf FIFO).
    if let Some(code) = launch_attributes::run_child() {
        return code;
    }
    let args = parse_args();
    let filter = args.filter;
    let tests = || {
        TESTS
            .iter()
            .chain(memory::TESTS)
            .chain(compile::TESTS)
            .chain(driver_level::TESTS)
            .chain(dlpack::TESTS)
            .chain(batch::TESTS)
            .chain(batch_3d::TESTS)
            .chain(launch_attributes::TESTS)
            .chain(graph_nodes::TESTS)
            .chain(graph_patterns::TESTS)
            .chain(graph_update::TESTS)
            .chain(green_tensor::TESTS)
            .chain(observing::TESTS)
            .chain(vmm::TESTS)
    };
    if args.list {
        for (name, _) in tests() {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    if args.ignored_only {
        println!("0 passed, 0 failed, 0 skipped");
        return ExitCode::SUCCESS;
    }

    // Before any thread exists: a private compile cache for this run.
    let cache_dir = std::env::temp_dir().join(format!("cuabi-rs-gpu-tests-{}", std::process::id()));
    std::env::set_var("CUABI_CACHE_DIR", &cache_dir);
    std::env::remove_var("CUABI_CACHE");

    let device = match Device::count() {
        Ok(0) => Err("the driver sees no CUDA device".to_owned()),
        Ok(_) => Device::get(0).map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    match &device {
        Ok(device) => println!(
            "running GPU tests on device 0: {}",
            device.name().unwrap_or_else(|e| e.to_string())
        ),
        Err(reason) => println!("no CUDA device: {}", first_line(reason)),
    }

    // A panicking test is reported by the runner, with where it panicked.
    panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()));
        *PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }));
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for (name, test) in tests() {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let Ok(device) = &device else {
            println!("test {name} ... SKIPPED: no CUDA device");
            skipped += 1;
            continue;
        };
        match panic::catch_unwind(AssertUnwindSafe(|| test(device))) {
            Ok(Ok(())) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Ok(Err(err)) if err.is::<Skipped>() => {
                println!("test {name} ... SKIPPED: {err}");
                skipped += 1;
            }
            Ok(Err(err)) => {
                println!("test {name} ... FAILED: {err}");
                failed += 1;
            }
            Err(payload) => {
                let why = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("panicked");
                let at = PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()).take();
                println!(
                    "test {name} ... FAILED: panic: {why}{}",
                    at.unwrap_or_default()
                );
                failed += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&cache_dir);

    println!("\n{passed} passed, {failed} failed, {skipped} skipped");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Where the last panic happened, set by the panic hook.
static PANIC_AT: Mutex<Option<String>> = Mutex::new(None);

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// xorshift64*: reproducible test data without a dependency.
struct Rng(u64);

impl Rng {
    fn f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    }

    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

fn saxpy_module(device: &Device) -> cuabi::Result<(Module, Function)> {
    let module = device.compile(
        SAXPY,
        &CompileOptions::new()
            .name("saxpy.cu")
            .option("--fmad=false"),
    )?;
    let function = module.function("saxpy")?;
    Ok((module, function))
}

/// The index of the first element that is not `a * x + y`, bit for bit
/// (`--fmad=false` rounds the product and the sum separately, as the host does).
fn saxpy_mismatch(a: f32, x: &[f32], y: &[f32], out: &[f32]) -> Option<usize> {
    (0..out.len()).find(|&i| out[i].to_bits() != (a * x[i] + y[i]).to_bits())
}

fn device_reports_its_properties(device: &Device) -> TestResult {
    ensure!(device.ordinal() == 0, "ordinal {}", device.ordinal());
    let name = device.name()?;
    ensure!(!name.is_empty(), "empty name");
    let (major, minor) = device.compute_capability()?;
    ensure!(
        major >= 3 && (0..10).contains(&minor),
        "compute capability {major}.{minor}"
    );
    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    ensure!(
        device.attribute(75)? == major,
        "attribute 75 is not the major version"
    );
    let total = device.total_memory()?;
    let (free, total_now) = device.memory_info()?;
    ensure!(
        total > 0 && total_now > 0 && free <= total_now,
        "memory {free} / {total_now} ({total})"
    );
    let (least, greatest) = device.stream_priority_range()?;
    ensure!(greatest <= least, "priorities {least}..{greatest}");
    ensure!(device.cu_context()? != 0, "no context");
    ensure!(cuabi::driver_version()? >= 11000, "driver version");
    ensure!(!cuabi::driver_path()?.is_empty(), "driver path");

    let count = Device::count()?;
    let err = Device::get(count).expect_err("an ordinal past the last device");
    ensure!(
        err.kind() == ErrorKind::NoDevice,
        "past the last device: {err}"
    );
    Ok(())
}

fn saxpy_matches_the_host(device: &Device) -> TestResult {
    const NUM_THREADS: u32 = 512;
    const NUM_BLOCKS: u32 = 32768;
    let (_module, saxpy) = saxpy_module(device)?;
    let n = (NUM_THREADS * NUM_BLOCKS) as usize;
    let a = 2.0f32;
    let mut rng = Rng(1);
    let (hx, hy) = (rng.vec(n), rng.vec(n));

    let x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let stream = device.create_stream()?;
    unsafe {
        saxpy
            .launch(LaunchConfig::new(NUM_BLOCKS, NUM_THREADS))
            .stream(&stream)
            .arg(&a)
            .arg(&x)
            .arg(&y)
            .arg(&out)
            .arg(&n)
            .run()?;
    }
    stream.synchronize()?;
    let hout = out.to_vec()?;
    ensure!(hout.len() == n, "length {}", hout.len());
    if let Some(i) = saxpy_mismatch(a, &hx, &hy, &hout) {
        return Err(format!("out[{i}] = {} but a*x+y = {}", hout[i], a * hx[i] + hy[i]).into());
    }

    // A partial n leaves the rest alone; the default stream works too.
    let partial = device.alloc_zeroed::<f32>(n)?;
    let half = n / 2 + 3;
    unsafe {
        saxpy
            .launch(LaunchConfig::new(NUM_BLOCKS, NUM_THREADS))
            .arg(&a)
            .arg(&x)
            .arg(&y)
            .arg(&partial)
            .arg(&half)
            .run()?;
    }
    device.synchronize()?;
    let hpartial = partial.to_vec()?;
    ensure!(
        saxpy_mismatch(a, &hx[..half], &hy[..half], &hpartial[..half]).is_none(),
        "partial n"
    );
    ensure!(hpartial[half..].iter().all(|&v| v == 0.0), "wrote past n");
    Ok(())
}

fn saxpy_parameter_layout_is_read_from_the_driver(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let p = |offset, size| ParamInfo { offset, size };
    let params = saxpy.params()?;
    ensure!(
        params == [p(0, 4), p(8, 8), p(16, 8), p(24, 8), p(32, 8)],
        "params {params:?}"
    );
    ensure!(saxpy.param_count()? == 5, "count");
    ensure!(saxpy.args_size()? == 40, "args size {}", saxpy.args_size()?);
    ensure!(saxpy.name()? == "saxpy", "name {}", saxpy.name()?);
    ensure!(
        saxpy.attribute(cuabi::FunctionAttribute::MaxThreadsPerBlock)? >= 512,
        "max threads"
    );
    Ok(())
}

fn a_four_byte_n_for_size_t_is_refused_naming_the_parameter(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 4096usize;
    let x = device.buffer_from_slice(&vec![1.0f32; n])?;
    let y = device.buffer_from_slice(&vec![1.0f32; n])?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let (a, n_u32) = (2.0f32, n as u32);
    let result = unsafe {
        saxpy
            .launch(LaunchConfig::new(16, 256))
            .arg(&a)
            .arg(&x)
            .arg(&y)
            .arg(&out)
            .arg(&n_u32)
            .run()
    };
    let err = match result {
        Ok(()) => return Err("a 4-byte n for a size_t parameter was launched".into()),
        Err(err) => err,
    };
    ensure!(err.kind() == ErrorKind::InvalidArgument, "kind: {err}");
    ensure!(
        err.message().contains("parameter 4"),
        "names the parameter: {err}"
    );
    ensure!(err.message().contains("saxpy"), "names the kernel: {err}");
    ensure!(
        err.message().contains("8 bytes") && err.message().contains("4 bytes"),
        "gives both sizes: {err}"
    );
    // It never ran.
    device.synchronize()?;
    ensure!(
        out.to_vec()?.iter().all(|&v| v == 0.0),
        "the refused kernel wrote its output"
    );

    // A float where the kernel takes a float works; a double does not.
    let a64 = 2.0f64;
    let err = unsafe {
        saxpy
            .launch(LaunchConfig::new(16, 256))
            .arg(&a64)
            .arg(&x)
            .arg(&y)
            .arg(&out)
            .arg(&n)
            .run()
    }
    .expect_err("a double for a float");
    ensure!(err.message().contains("parameter 0"), "{err}");
    Ok(())
}

fn a_wrong_argument_count_is_refused(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let x = device.alloc_zeroed::<f32>(16)?;
    let a = 2.0f32;
    let err = unsafe {
        saxpy
            .launch(LaunchConfig::new(1, 16))
            .arg(&a)
            .arg(&x)
            .arg(&x)
            .arg(&x)
            .run()
    }
    .expect_err("four arguments for five parameters");
    ensure!(err.kind() == ErrorKind::InvalidArgument, "{err}");
    ensure!(err.message().contains("5 parameters"), "{err}");
    Ok(())
}

fn bad_launch_configurations_are_refused(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let x = device.alloc_zeroed::<f32>(16)?;
    let (a, n) = (2.0f32, 16usize);
    for (config, expect) in [
        (LaunchConfig::new(1, 0), "zero dimension"),
        (LaunchConfig::new(0, 16), "zero dimension"),
        (LaunchConfig::new(1, (64, 64)), "block"),
        (
            LaunchConfig::new(1, 16).with_shared_mem(u32::MAX),
            "shared memory",
        ),
    ] {
        let err = unsafe {
            saxpy
                .launch(config)
                .arg(&a)
                .arg(&x)
                .arg(&x)
                .arg(&x)
                .arg(&n)
                .run()
        }
        .expect_err("a bad configuration");
        ensure!(
            err.kind() == ErrorKind::InvalidArgument,
            "{config:?}: {err}"
        );
        ensure!(err.message().contains(expect), "{config:?}: {err}");
    }
    Ok(())
}

fn async_copies_with_pinned_memory(device: &Device) -> TestResult {
    let n = 1 << 20;
    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let mut pinned = device.alloc_pinned::<f32>(n)?;
    ensure!(
        pinned.len() == n && pinned.iter().all(|&v| v == 0.0),
        "pinned memory starts zeroed"
    );
    for (i, v) in pinned.iter_mut().enumerate() {
        *v = i as f32 * 0.5;
    }
    let mut dev = device.alloc::<f32>(n)?;
    let mut copy = device.alloc::<f32>(n)?;
    let mut back = vec![-1.0f32; n];
    {
        let mut registered = device.register_host(&mut back)?;
        unsafe {
            dev.copy_from_async(&pinned, &stream)?;
            copy.copy_from_buffer_async(&dev, &stream)?;
            copy.copy_to_async(&mut registered, &stream)?;
        }
        stream.synchronize()?;
        ensure!(stream.query()?, "the stream is idle after synchronize");
    }
    ensure!(
        back.iter().zip(pinned.iter()).all(|(a, b)| a == b),
        "round trip through the device"
    );

    // Memset on the stream, read into pinned memory.
    unsafe {
        copy.fill_bytes_async(0, &stream)?;
        copy.copy_to_async(&mut pinned, &stream)?;
    }
    stream.synchronize()?;
    ensure!(pinned.iter().all(|&v| v == 0.0), "memset then copy");
    Ok(())
}

fn copies_are_checked_against_buffer_sizes(device: &Device) -> TestResult {
    let mut small = device.alloc_zeroed::<u32>(8)?;
    ensure!(
        small.len() == 8 && small.size_bytes() == 32 && !small.is_empty(),
        "sizes"
    );
    ensure!(small.device_ordinal()? == 0, "ordinal");
    ensure!(small.device_ptr() != 0, "pointer");

    let err = small.copy_from(&[1u32; 9]).expect_err("9 into 8");
    ensure!(err.kind() == ErrorKind::OutOfRange, "{err}");
    let err = small.copy_from_at(4, &[1u32; 5]).expect_err("4 + 5 into 8");
    ensure!(err.kind() == ErrorKind::OutOfRange, "{err}");
    let mut nine = [0u32; 9];
    let err = small.copy_to(&mut nine).expect_err("8 into 9");
    ensure!(err.kind() == ErrorKind::OutOfRange, "{err}");
    ensure!(
        small.to_vec()? == vec![0; 8],
        "a refused copy wrote nothing"
    );

    small.copy_from_at(6, &[7, 8])?;
    let mut two = [0u32; 2];
    small.copy_to_at(5, &mut two)?;
    ensure!(two == [0, 7], "offset copies: {two:?}");

    let mut big = device.alloc::<u32>(16)?;
    big.fill_bytes(0xFF)?;
    big.copy_from_buffer(&small)?;
    let got = big.to_vec()?;
    ensure!(
        got[..8] == [0, 0, 0, 0, 0, 0, 7, 8] && got[8..].iter().all(|&v| v == u32::MAX),
        "{got:?}"
    );
    let err = small.copy_from_buffer(&big).expect_err("16 into 8");
    ensure!(err.kind() == ErrorKind::OutOfRange, "{err}");

    let err = device.alloc::<f32>(0).expect_err("zero bytes");
    ensure!(err.kind() == ErrorKind::InvalidArgument, "{err}");
    let err = device
        .alloc::<f64>(usize::MAX / 4)
        .expect_err("an overflowing size");
    ensure!(err.kind() == ErrorKind::InvalidArgument, "{err}");
    Ok(())
}

fn events_order_and_time_work(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 22;
    let x = device.buffer_from_slice(&vec![1.0f32; n])?;
    let y = device.buffer_from_slice(&vec![2.0f32; n])?;
    let out = device.alloc_zeroed::<f32>(n)?;
    // Those uploads went to the default stream; non-blocking streams do not
    // wait for it.
    device.synchronize()?;
    let producer = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let consumer = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let (start, stop) = (device.create_event()?, device.create_event()?);
    let a = 3.0f32;

    start.record(&producer)?;
    unsafe {
        saxpy
            .launch(LaunchConfig::new((n / 256) as u32, 256))
            .stream(&producer)
            .arg(&a)
            .arg(&x)
            .arg(&y)
            .arg(&out)
            .arg(&n)
            .run()?;
    }
    stop.record(&producer)?;
    // The consumer copies the result only after the producer's kernel.
    consumer.wait_event(&stop)?;
    let mut copy = device.alloc::<f32>(n)?;
    unsafe { copy.copy_from_buffer_async(&out, &consumer)? };
    consumer.synchronize()?;
    ensure!(stop.query()?, "stop was reached");
    stop.synchronize()?;
    ensure!(
        copy.to_vec()?.iter().all(|&v| v == 5.0),
        "the consumer saw the kernel's result"
    );

    let ms = start.elapsed_ms(&stop)?;
    ensure!(ms.is_finite() && ms >= 0.0, "elapsed {ms}");
    let backwards = stop.elapsed_ms(&start);
    ensure!(backwards.map_or(true, |ms| ms <= 0.0), "time runs forward");

    let untimed =
        device.create_event_with(EventFlags::DISABLE_TIMING | EventFlags::BLOCKING_SYNC)?;
    untimed.record(&producer)?;
    untimed.synchronize()?;
    ensure!(
        start.elapsed_ms(&untimed).is_err(),
        "an untimed event has no time"
    );
    Ok(())
}

fn graphs_capture_instantiate_and_replay(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 16;
    let mut rng = Rng(7);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let mut x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let mut out = device.alloc::<f32>(n)?;
    out.fill_bytes(0xFF)?;
    // Set-up ran on the default stream, which the capturing stream does not
    // wait for.
    device.synchronize()?;
    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let a = 2.0f32;

    stream.begin_capture(CaptureMode::ThreadLocal)?;
    let queued = unsafe {
        out.fill_bytes_async(0, &stream).and_then(|()| {
            saxpy
                .launch(LaunchConfig::new((n / 256) as u32, 256))
                .stream(&stream)
                .arg(&a)
                .arg(&x)
                .arg(&y)
                .arg(&out)
                .arg(&n)
                .run()
        })
    };
    // End the capture even when queuing failed, so the stream is usable again.
    let graph = stream.end_capture();
    queued?;
    let graph = graph?;
    ensure!(
        graph.node_count()? >= 2,
        "memset and kernel: {} nodes",
        graph.node_count()?
    );
    ensure!(
        out.to_vec()?.iter().all(|v| v.to_bits() == u32::MAX),
        "the captured work ran during the capture"
    );
    let exec = graph.instantiate()?;

    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    let first = out.to_vec()?;
    ensure!(
        saxpy_mismatch(a, &hx, &hy, &first).is_none(),
        "first replay"
    );

    // The graph reads x again on each launch.
    let hx2 = rng.vec(n);
    x.copy_from(&hx2)?;
    device.synchronize()?;
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    ensure!(
        saxpy_mismatch(a, &hx2, &hy, &out.to_vec()?).is_none(),
        "second replay"
    );
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Params {
    scale: f32,
    count: i32,
    offset: f64,
    tag: u8,
    weights: [f32; 3],
}

// SAFETY: repr(C), all fields DeviceRepr, any bit pattern valid.
unsafe impl DeviceRepr for Params {}

const STRUCTS: &str = r#"
struct Params {
    float scale;
    int count;
    double offset;
    unsigned char tag;
    float weights[3];
};
extern "C" __global__ void use_params(Params p, double *out, Params *echo)
{
    out[0] = p.scale * p.count + p.offset + p.tag;
    out[1] = p.weights[0] + 10.0 * p.weights[1] + 100.0 * p.weights[2];
    *echo = p;
}
"#;

fn structs_pass_by_value(device: &Device) -> TestResult {
    let module = device.compile(STRUCTS, &CompileOptions::new().name("structs.cu"))?;
    let kernel = module.function("use_params")?;
    let params = kernel.params()?;
    ensure!(
        params[0].size == std::mem::size_of::<Params>(),
        "the struct is {} bytes on the device, {} here",
        params[0].size,
        std::mem::size_of::<Params>()
    );
    let p = Params {
        scale: 1.5,
        count: -4,
        offset: 0.25,
        tag: 200,
        weights: [1.0, 2.0, 3.0],
    };
    let out = device.alloc_zeroed::<f64>(2)?;
    let echo = device.alloc_zeroed::<Params>(1)?;
    unsafe {
        kernel
            .launch(LaunchConfig::new(1, 1))
            .arg(&p)
            .arg(&out)
            .arg(&echo)
            .run()?;
    }
    device.synchronize()?;
    let got = out.to_vec()?;
    ensure!(got == [1.5 * -4.0 + 0.25 + 200.0, 321.0], "{got:?}");
    let back = echo.to_vec()?;
    ensure!(back[0] == p, "{:?}", back[0]);
    Ok(())
}

fn two_threads_launch_on_shared_handles(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 16;
    let mut rng = Rng(11);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let shared_stream = device.create_stream()?;
    let outs: Vec<DeviceBuffer<f32>> = (0..2)
        .map(|_| device.alloc_zeroed::<f32>(n))
        .collect::<cuabi::Result<_>>()?;

    // Device, function, input buffers and one stream are shared by reference.
    let results: Vec<cuabi::Result<()>> = std::thread::scope(|scope| {
        let workers: Vec<_> = outs
            .iter()
            .enumerate()
            .map(|(t, out)| {
                let (saxpy, x, y, stream) = (&saxpy, &x, &y, &shared_stream);
                scope.spawn(move || -> cuabi::Result<()> {
                    let a = (t + 1) as f32;
                    let own = device.create_stream()?;
                    for i in 0..50 {
                        let s = if i % 2 == 0 { stream } else { &own };
                        unsafe {
                            saxpy
                                .launch(LaunchConfig::new((n / 256) as u32, 256))
                                .stream(s)
                                .arg(&a)
                                .arg(x)
                                .arg(y)
                                .arg(out)
                                .arg(&n)
                                .run()?;
                        }
                    }
                    own.synchronize()?;
                    stream.synchronize()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect()
    });
    for result in results {
        result?;
    }
    device.synchronize()?;
    for (t, out) in outs.iter().enumerate() {
        let a = (t + 1) as f32;
        ensure!(
            saxpy_mismatch(a, &hx, &hy, &out.to_vec()?).is_none(),
            "thread {t}'s output"
        );
    }
    // Handles also move to another thread and are dropped there.
    let moved = std::thread::spawn(move || -> cuabi::Result<usize> {
        let len = x.len();
        drop((x, y, saxpy, shared_stream));
        Ok(len)
    })
    .join()
    .expect("drop thread")?;
    ensure!(moved == n, "moved buffer length");
    Ok(())
}

const TEMPLATED: &str = r#"
template <typename T>
__global__ void fill(T *p, T value, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}
"#;

fn compile_uses_the_cache_and_name_expressions(device: &Device) -> TestResult {
    // A source no earlier run has cached: it names this process.
    let source = format!("{TEMPLATED}\n// run {}\n", std::process::id());
    let options = CompileOptions::new()
        .name("fill.cu")
        .name_expression("fill<float>")
        .name_expression("fill<int>");
    let first = device.compile(&source, &options)?;
    ensure!(!first.from_cache()?, "a new source came from the cache");
    let second = device.compile(&source, &options)?;
    ensure!(
        second.from_cache()?,
        "the same source again did not come from the cache"
    );
    let uncached = device.compile(&source, &options.clone().no_cache())?;
    ensure!(!uncached.from_cache()?, "no_cache read the cache");
    let ptx = device.compile(&source, &options.clone().output(Output::Ptx))?;
    ensure!(!ptx.from_cache()?, "PTX output is a different cache entry");

    for module in [&first, &second, &ptx] {
        let lowered = module.lowered_name("fill<int>")?;
        ensure!(lowered.starts_with("_Z"), "lowered {lowered}");
        let by_expression = module.function("fill<int>")?;
        let by_lowered = module.function(&lowered)?;
        ensure!(by_lowered.name()? == lowered, "name {}", by_lowered.name()?);
        let buf = device.alloc_zeroed::<i32>(1000)?;
        let (value, n) = (-7i32, 1000u32);
        unsafe {
            by_expression
                .launch(LaunchConfig::new(4, 256))
                .arg(&buf)
                .arg(&value)
                .arg(&n)
                .run()?;
        }
        device.synchronize()?;
        ensure!(buf.to_vec()?.iter().all(|&v| v == -7), "fill<int> filled");
    }
    let err = first
        .function("fill<double>")
        .expect_err("never instantiated");
    ensure!(err.kind() == ErrorKind::NotFound, "{err}");
    Ok(())
}

fn compile_errors_carry_the_log(device: &Device) -> TestResult {
    let err = device
        .compile(
            "__global__ void k() { undeclared(); }\n",
            &CompileOptions::new().name("bad.cu"),
        )
        .expect_err("an undeclared function");
    ensure!(err.kind() == ErrorKind::Compile, "{err}");
    let log = err.log().unwrap_or_default();
    ensure!(
        log.contains("bad.cu") && log.contains("undeclared"),
        "log: {log}"
    );
    Ok(())
}

fn modules_load_from_ptx_cubin_and_files(device: &Device) -> TestResult {
    let (major, minor) = device.compute_capability()?;
    let mut cubin_program = Program::new(TEMPLATED, "fill.cu")?;
    cubin_program.add_name_expression("fill<float>")?;
    cubin_program.compile(&[format!("--gpu-architecture=sm_{major}{minor}")])?;
    let lowered = cubin_program.lowered_name("fill<float>")?;
    let cubin = cubin_program.cubin()?;

    let mut ptx_program = Program::new(TEMPLATED, "fill.cu")?;
    ptx_program.add_name_expression("fill<float>")?;
    ptx_program.compile(&[format!("--gpu-architecture=compute_{major}{minor}")])?;
    let ptx = ptx_program.ptx()?;

    let file = temp_file("fill.cubin");
    std::fs::write(&file, &cubin)?;
    let modules = [
        device.load_module(&cubin)?,
        device.load_ptx(&ptx)?,
        device.load_module_file(&file)?,
    ];
    let _ = std::fs::remove_file(&file);
    for module in &modules {
        let fill = module.function(&lowered)?;
        let buf = device.alloc_zeroed::<f32>(300)?;
        let (value, n) = (0.5f32, 300u32);
        unsafe {
            fill.launch(LaunchConfig::new(2, 256))
                .arg(&buf)
                .arg(&value)
                .arg(&n)
                .run()?;
        }
        device.synchronize()?;
        ensure!(
            buf.to_vec()?.iter().all(|&v| v == 0.5),
            "fill<float> filled"
        );
    }

    let err = device.load_module(b"not an image").expect_err("garbage");
    ensure!(err.kind() != ErrorKind::Unknown, "{err}");
    let err = device
        .load_module_file(temp_file("does-not-exist.cubin"))
        .expect_err("a missing file");
    ensure!(err.kind() == ErrorKind::Io, "{err}");
    ensure!(
        err.message().contains("does-not-exist.cubin"),
        "names the file: {err}"
    );
    Ok(())
}

fn globals_are_found_and_wrapped(device: &Device) -> TestResult {
    let module = device.compile(
        "__device__ int counter = 7;\n\
         extern \"C\" __global__ void bump() { counter += 35; }\n",
        &CompileOptions::new().name("globals.cu"),
    )?;
    let global = module.global("counter")?;
    ensure!(
        global.size_bytes == 4 && global.device_ptr != 0,
        "{global:?}"
    );
    let bump = module.function("bump")?;
    unsafe { bump.launch(LaunchConfig::new(1, 1)).run()? };
    device.synchronize()?;
    // SAFETY: the global is 4 bytes of this device's memory, alive with the module.
    let view = unsafe { device.wrap_buffer::<i32>(global.device_ptr, 1)? };
    ensure!(view.to_vec()? == [42], "counter is {:?}", view.to_vec()?);
    drop(view);
    // Dropping the wrapper freed nothing.
    ensure!(
        module.global("counter")?.device_ptr == global.device_ptr,
        "still there"
    );
    let err = module.global("missing").expect_err("no such global");
    ensure!(err.kind() == ErrorKind::NotFound, "{err}");
    Ok(())
}

fn objects_outlive_the_device_handle(_device: &Device) -> TestResult {
    let device = Device::get(0)?;
    let (module, saxpy) = saxpy_module(&device)?;
    let x = device.buffer_from_slice(&[1.0f32; 256])?;
    let out = device.alloc_zeroed::<f32>(256)?;
    let stream = device.create_stream()?;
    drop(device);
    drop(module);
    let (a, n) = (1.0f32, 256usize);
    unsafe {
        saxpy
            .launch(LaunchConfig::new(1, 256))
            .stream(&stream)
            .arg(&a)
            .arg(&x)
            .arg(&x)
            .arg(&out)
            .arg(&n)
            .run()?;
    }
    stream.synchronize()?;
    ensure!(
        out.to_vec()?.iter().all(|&v| v == 2.0),
        "launch after the device handle was dropped"
    );
    Ok(())
}

/// SAXPY's argument block as the plan should hold it.
fn saxpy_block(a: f32, x: u64, y: u64, out: u64, n: usize) -> Vec<u8> {
    let mut block = a.to_ne_bytes().to_vec();
    block.extend([0u8; 4]);
    for value in [x, y, out, n as u64] {
        block.extend(value.to_ne_bytes());
    }
    block
}

fn plan_launches_saxpy(device: &Device) -> TestResult {
    const NUM_THREADS: u32 = 512;
    const NUM_BLOCKS: u32 = 32768;
    let (_module, saxpy) = saxpy_module(device)?;
    let n = (NUM_THREADS * NUM_BLOCKS) as usize;
    let a = 2.0f32;
    let mut rng = Rng(7);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let stream = device.create_stream()?;

    let mut plan = saxpy.plan(LaunchConfig::new(NUM_BLOCKS, NUM_THREADS), Some(&stream))?;
    ensure!(plan.kernel_name() == "saxpy", "{plan:?}");
    ensure!(
        plan.params() == saxpy.params()?,
        "params {:?}",
        plan.params()
    );
    ensure!(
        plan.args() == [0u8; 40],
        "a new plan's block is 40 zero bytes: {:?}",
        plan.args()
    );
    unsafe { plan.launch_with((&a, &x, &y, &out, &n))? };
    ensure!(
        plan.args() == saxpy_block(a, x.device_ptr(), y.device_ptr(), out.device_ptr(), n),
        "block {:?}",
        plan.args()
    );
    stream.synchronize()?;
    let hout = out.to_vec()?;
    if let Some(i) = saxpy_mismatch(a, &hx, &hy, &hout) {
        return Err(format!("out[{i}] = {} but a*x+y = {}", hout[i], a * hx[i] + hy[i]).into());
    }

    // On the default stream, arguments written one at a time.
    let default_out = device.alloc_zeroed::<f32>(n)?;
    let mut on_default = LaunchPlan::new(&saxpy, LaunchConfig::new(NUM_BLOCKS, NUM_THREADS), None)?;
    on_default
        .set(0, &a)?
        .set(1, &x)?
        .set(2, &y)?
        .set(3, &default_out)?
        .set(4, &n)?;
    unsafe { on_default.launch()? };
    device.synchronize()?;
    ensure!(
        default_out.to_vec()? == hout,
        "the default stream's result differs"
    );
    Ok(())
}

fn plan_relaunches_with_changed_arguments(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 16;
    let mut rng = Rng(11);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let first = device.alloc_zeroed::<f32>(n)?;
    let second = device.alloc_zeroed::<f32>(n)?;
    let stream = device.create_stream()?;
    let mut plan = saxpy.plan(LaunchConfig::new((n / 256) as u32, 256), Some(&stream))?;

    unsafe {
        plan.launch_with((&2.0f32, &x, &y, &first, &n))?;
        // Only a and out change; the rest stays in the block.
        plan.set(0, &3.0f32)?.set(3, &second)?.launch()?;
    }
    stream.synchronize()?;
    let (h1, h2) = (first.to_vec()?, second.to_vec()?);
    ensure!(
        saxpy_mismatch(2.0, &hx, &hy, &h1).is_none(),
        "the first launch (a = 2) was changed or is wrong"
    );
    ensure!(
        saxpy_mismatch(3.0, &hx, &hy, &h2).is_none(),
        "the second launch did not use a = 3 and the second output"
    );

    // A smaller n into a fresh output: the rest of it stays zero.
    let partial = device.alloc_zeroed::<f32>(n)?;
    let half = n / 2 + 5;
    unsafe { plan.launch_with((&4.0f32, &x, &y, &partial, &half))? };
    // The same launch twice in a row, arguments unchanged: same result.
    unsafe { plan.launch()? };
    stream.synchronize()?;
    let hp = partial.to_vec()?;
    ensure!(
        saxpy_mismatch(4.0, &hx[..half], &hy[..half], &hp[..half]).is_none(),
        "partial n"
    );
    ensure!(hp[half..].iter().all(|&v| v == 0.0), "wrote past n");
    ensure!(second.to_vec()? == h2, "an earlier output was touched");
    Ok(())
}

fn plan_refuses_arguments_naming_the_parameter(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 4096usize;
    let x = device.buffer_from_slice(&vec![1.0f32; n])?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let mut plan = saxpy.plan(LaunchConfig::new(16, 256), None)?;
    plan.set_args((&2.0f32, &x, &x, &out, &n))?;
    let before = plan.args().to_vec();

    // The overview's 4-byte n for the size_t parameter.
    let err = plan.set(4, &(n as u32)).expect_err("a 4-byte n");
    ensure!(err.kind() == ErrorKind::InvalidArgument, "kind: {err}");
    ensure!(
        err.message().contains("parameter 4") && err.message().contains("saxpy"),
        "names the kernel and the parameter: {err}"
    );
    ensure!(
        err.message().contains("8 bytes") && err.message().contains("4 bytes"),
        "gives both sizes: {err}"
    );
    let err = unsafe { plan.launch_with((&2.0f32, &x, &x, &out, &(n as u32))) }
        .expect_err("a 4-byte n in a tuple");
    ensure!(err.message().contains("parameter 4"), "{err}");
    let err = plan.set(0, &2.0f64).expect_err("a double for a float");
    ensure!(err.message().contains("parameter 0"), "{err}");
    let err = plan.set(5, &0u64).expect_err("no parameter 5");
    ensure!(err.kind() == ErrorKind::InvalidArgument, "{err}");
    ensure!(err.message().contains("there is no parameter 5"), "{err}");
    // A size the library accepted for a parameter is not asked again; a
    // new one is, and the refusal still names the parameter.
    plan.set(0, &2.0f32)?.set(0, &3.0f32)?;
    let err = plan.set(0, &2u16).expect_err("a 2-byte value for a float");
    ensure!(err.message().contains("parameter 0 is 4 bytes"), "{err}");
    plan.set(0, &2.0f32)?;
    let err = plan
        .set_args((&2.0f32, &x, &x, &out))
        .expect_err("four arguments");
    ensure!(err.message().contains("5 parameters"), "{err}");
    ensure!(
        plan.args() == before,
        "a refused argument changed the block"
    );
    device.synchronize()?;
    ensure!(
        out.to_vec()?.iter().all(|&v| v == 0.0),
        "a refused launch_with ran the kernel"
    );
    Ok(())
}

fn plan_checks_its_configuration_once(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    for (config, expect) in [
        (LaunchConfig::new(1, 0), "zero dimension"),
        (LaunchConfig::new(1, (64, 64)), "block"),
    ] {
        let err = saxpy.plan(config, None).expect_err("a bad configuration");
        ensure!(
            err.kind() == ErrorKind::InvalidArgument,
            "{config:?}: {err}"
        );
        ensure!(err.message().contains(expect), "{config:?}: {err}");
    }
    // A kernel without parameters: an empty block.
    let module = device.compile(
        "extern \"C\" __global__ void nothing() {}\n",
        &CompileOptions::new().name("nothing.cu"),
    )?;
    let nothing = module.function("nothing")?;
    let mut plan = nothing.plan(LaunchConfig::new(1, 1), None)?;
    ensure!(
        plan.args().is_empty() && plan.params().is_empty(),
        "{plan:?}"
    );
    unsafe { plan.launch_with(())? };
    device.synchronize()?;
    Ok(())
}

fn plan_outlives_its_function_and_stream(_device: &Device) -> TestResult {
    let device = Device::get(0)?;
    let (module, saxpy) = saxpy_module(&device)?;
    let stream = device.create_stream()?;
    let x = device.buffer_from_slice(&[1.5f32; 256])?;
    let out = device.alloc_zeroed::<f32>(256)?;
    let mut plan = saxpy.plan(LaunchConfig::new(1, 256), Some(&stream))?;
    plan.set_args((&2.0f32, &x, &x, &out, &256usize))?;
    drop(saxpy);
    drop(module);
    drop(stream);
    drop(device);
    unsafe { plan.launch()? };
    // The plan's stream is gone from here; the device handle of the runner
    // waits for it.
    _device.synchronize()?;
    ensure!(
        out.to_vec()?.iter().all(|&v| v == 4.5),
        "launch after the function, module, stream and device handles were dropped"
    );
    // Relaunching still works, with a changed argument.
    unsafe { plan.set(0, &1.0f32)?.launch()? };
    _device.synchronize()?;
    ensure!(
        out.to_vec()?.iter().all(|&v| v == 3.0),
        "second launch of the orphaned plan"
    );
    drop(plan);
    Ok(())
}

fn plans_launch_from_other_threads(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 4096usize;
    let x = device.buffer_from_slice(&vec![1.0f32; n])?;
    let outs = (0..4)
        .map(|_| device.alloc_zeroed::<f32>(n))
        .collect::<cuabi::Result<Vec<_>>>()?;
    // One plan per thread, made here and moved there.
    let plans = (0..4)
        .map(|_| saxpy.plan(LaunchConfig::new(16, 256), None))
        .collect::<cuabi::Result<Vec<_>>>()?;
    std::thread::scope(|scope| -> TestResult {
        let handles: Vec<_> = plans
            .into_iter()
            .zip(&outs)
            .enumerate()
            .map(|(i, (mut plan, out))| {
                let x = &x;
                scope.spawn(move || unsafe { plan.launch_with((&(i as f32), x, x, out, &n)) })
            })
            .collect();
        for handle in handles {
            handle.join().map_err(|_| "a launching thread panicked")??;
        }
        Ok(())
    })?;
    device.synchronize()?;
    for (i, out) in outs.iter().enumerate() {
        let want = i as f32 + 1.0;
        ensure!(
            out.to_vec()?.iter().all(|&v| v == want),
            "thread {i}'s output is not {want}"
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Extended launches, occupancy, graph updates, host functions
// ---------------------------------------------------------------------------

/// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
const MULTIPROCESSOR_COUNT: i32 = 16;

/// A grid-wide reduction in one launch: each block sums its grid-stride
/// share into `partial[blockIdx.x]`, the grid meets at a barrier (atomics on
/// a global counter, safe when every block is resident: a cooperative
/// launch), then every block adds all the partial sums and writes the total
/// to `totals[blockIdx.x]`. A block that passed the barrier early would
/// miss partial sums.
const GRID_SUM: &str = r#"
__device__ void grid_barrier(unsigned int* arrived, unsigned int blocks)
{
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(arrived, 1u);
    while (*(volatile unsigned int*)arrived < blocks) {
    }
    __threadfence();
  }
  __syncthreads();
}

extern "C" __global__
void grid_sum(const int* in, size_t n, unsigned long long* partial,
              unsigned long long* totals, unsigned int* arrived)
{
  __shared__ unsigned long long sums[256];
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    mine += (unsigned long long)(unsigned int)in[i];
  }
  sums[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
  grid_barrier(arrived, gridDim.x);
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (unsigned int b = 0; b < gridDim.x; ++b) {
      total += *(volatile unsigned long long*)&partial[b];
    }
    totals[blockIdx.x] = total;
  }
}
"#;

fn cooperative_launch_reduces_with_a_grid_barrier(device: &Device) -> TestResult {
    let module = device.compile(GRID_SUM, &CompileOptions::new().name("grid_sum.cu"))?;
    let grid_sum = module.function("grid_sum")?;
    let block = 256u32;
    let per_sm = grid_sum.active_blocks_per_sm(block, 0)?;
    ensure!(per_sm >= 1, "{per_sm} blocks of {block} threads per SM");
    let sms = device.attribute(MULTIPROCESSOR_COUNT)? as u32;
    // Every block resident at once: at most per_sm blocks on each SM.
    let blocks = sms * per_sm.min(2);
    let n = (1usize << 20) + 12345;
    let host: Vec<i32> = (0..n).map(|i| ((i * 7919) % 100_003) as i32).collect();
    let want: u64 = host.iter().map(|&v| v as u64).sum();
    let input = device.buffer_from_slice(&host)?;
    let partial = device.alloc_zeroed::<u64>(blocks as usize)?;
    let totals = device.alloc_zeroed::<u64>(blocks as usize)?;
    let stream = device.create_stream()?;
    for round in 0..3 {
        let arrived = device.alloc_zeroed::<u32>(1)?;
        let config = LaunchConfig::new(blocks, block).cooperative(true);
        ensure!(
            config.flags.contains(LaunchFlags::COOPERATIVE),
            "{config:?}"
        );
        // SAFETY: grid_sum reads n ints and writes `blocks` elements of
        // partial and totals and one counter, all alive past the synchronize.
        unsafe {
            grid_sum
                .launch(config)
                .stream(&stream)
                .args((&input, &n, &partial, &totals, &arrived))
                .run()?;
        }
        stream.synchronize()?;
        let got = totals.to_vec()?;
        ensure!(
            got.iter().all(|&t| t == want),
            "round {round}: totals {:?} (first 4), host sum {want}",
            &got[..got.len().min(4)]
        );
        ensure!(
            arrived.to_vec()?[0] == blocks,
            "round {round}: {} blocks reached the barrier, not {blocks}",
            arrived.to_vec()?[0]
        );
    }
    // A plan takes the cooperative configuration too.
    let arrived = device.alloc_zeroed::<u32>(1)?;
    let zeroed = device.alloc_zeroed::<u64>(blocks as usize)?;
    let mut plan = grid_sum.plan(
        LaunchConfig::new(blocks, block).cooperative(true),
        Some(&stream),
    )?;
    unsafe { plan.launch_with((&input, &n, &partial, &zeroed, &arrived))? };
    stream.synchronize()?;
    ensure!(
        zeroed.to_vec()?.iter().all(|&t| t == want),
        "the cooperative plan's totals differ from the host sum {want}"
    );
    Ok(())
}

/// Blocks of a 2 x 1 x 1 cluster swap values through distributed shared
/// memory (PTX `mapa` on a generic address, cluster barriers): each block
/// writes `blockIdx.x * 10 + 7` into its shared memory and reads its
/// partner's; it also reports its rank in the cluster and the cluster's size.
const CLUSTER_SWAP: &str = r#"
extern "C" __global__
void cluster_swap(int* out)
{
  __shared__ int value;
  unsigned int rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  if (threadIdx.x == 0) value = blockIdx.x * 10 + 7;
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
  int* remote;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(&value), "r"(rank ^ 1u));
  int got = *(volatile int*)remote;
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x + 0] = got;
    out[3 * blockIdx.x + 1] = (int)rank;
    out[3 * blockIdx.x + 2] = (int)size;
  }
  // The partner's shared memory must stay until every block has read it.
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
"#;

fn cluster_blocks_exchange_through_distributed_shared_memory(device: &Device) -> TestResult {
    let module = device.compile(CLUSTER_SWAP, &CompileOptions::new().name("cluster.cu"))?;
    let swap = module.function("cluster_swap")?;
    let blocks = 16u32;
    let config = LaunchConfig::new(blocks, 64).cluster(2, 1, 1);
    let most = swap.max_cluster_size(&config)?;
    ensure!(most >= 2, "max cluster size {most}");
    let clusters = swap.max_active_clusters(&config)?;
    ensure!(clusters >= 1, "max active clusters {clusters}");
    let out = device.alloc::<i32>(3 * blocks as usize)?;
    let stream = device.create_stream()?;
    // SAFETY: cluster_swap writes 3 ints per block of `out`.
    unsafe { swap.launch(config).stream(&stream).arg(&out).run()? };
    stream.synchronize()?;
    let got = out.to_vec()?;
    for b in 0..blocks as usize {
        let want = [((b ^ 1) * 10 + 7) as i32, (b % 2) as i32, 2];
        ensure!(
            got[3 * b..3 * b + 3] == want,
            "block {b}: (partner's value, rank, cluster size) {:?}, expected {want:?}",
            &got[3 * b..3 * b + 3]
        );
    }
    // The same through a plan.
    let again = device.alloc::<i32>(3 * blocks as usize)?;
    let mut plan = swap.plan(config, Some(&stream))?;
    unsafe { plan.launch_with((&again,))? };
    stream.synchronize()?;
    ensure!(again.to_vec()? == got, "the plan's cluster launch differs");
    Ok(())
}

/// A programmatic dependent launch pair: the first kernel writes `data` and
/// lets its dependent start; the second waits for the first's writes before
/// reading them.
const PDL: &str = r#"
extern "C" __global__
void pdl_producer(int* data, int k, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i * k + 1;
  asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__
void pdl_consumer(const int* data, int* out, int n)
{
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = data[i] * 2;
}
"#;

fn programmatic_dependent_launch_pairs_see_the_first_kernels_writes(device: &Device) -> TestResult {
    let module = device.compile(PDL, &CompileOptions::new().name("pdl.cu"))?;
    let (producer, consumer) = (
        module.function("pdl_producer")?,
        module.function("pdl_consumer")?,
    );
    let n = 1i32 << 18;
    let data = device.alloc::<i32>(n as usize)?;
    let out = device.alloc::<i32>(n as usize)?;
    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let grid = (n as u32).div_ceil(256);
    let first = LaunchConfig::new(grid, 256);
    let second = LaunchConfig::new(grid, 256).programmatic_serialization(true);
    ensure!(
        second.flags == LaunchFlags::PROGRAMMATIC_SERIALIZATION,
        "{second:?}"
    );
    let mut plan = consumer.plan(second, Some(&stream))?;
    for k in 1..=6 {
        // SAFETY: both kernels touch n ints of each buffer, alive past the
        // synchronize.
        unsafe {
            producer
                .launch(first)
                .stream(&stream)
                .args((&data, &k, &n))
                .run()?;
            if k % 2 == 1 {
                consumer
                    .launch(second)
                    .stream(&stream)
                    .args((&data, &out, &n))
                    .run()?;
            } else {
                plan.launch_with((&data, &out, &n))?;
            }
        }
        stream.synchronize()?;
        let got = out.to_vec()?;
        if let Some(i) = (0..n as usize).find(|&i| got[i] != (i as i32 * k + 1) * 2) {
            return Err(format!(
                "k = {k}: out[{i}] is {}, expected {}",
                got[i],
                (i as i32 * k + 1) * 2
            )
            .into());
        }
    }
    Ok(())
}

fn launch_priority_and_programmatic_event_are_accepted(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 16;
    let mut rng = Rng(11);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let (x, y) = (
        device.buffer_from_slice(&hx)?,
        device.buffer_from_slice(&hy)?,
    );
    let out = device.alloc::<f32>(n)?;
    let stream = device.create_stream()?;
    let (_least, greatest) = device.stream_priority_range()?;
    let event = device.create_event_with(EventFlags::DISABLE_TIMING)?;
    let base = LaunchConfig::new((n / 256) as u32, 256);
    for (what, config) in [
        ("priority", base.priority(greatest)),
        ("programmatic event", base.programmatic_event(&event)),
        (
            "programmatic event at block start",
            base.programmatic_event(&event)
                .programmatic_event_at_block_start(true),
        ),
    ] {
        let a = 1.5f32;
        // SAFETY: saxpy touches n floats of each buffer, alive past the
        // synchronize.
        unsafe {
            saxpy
                .launch(config)
                .stream(&stream)
                .args((&a, &x, &y, &out, &n))
                .run()
                .map_err(|e| format!("{what}: {e}"))?;
        }
        stream.synchronize()?;
        ensure!(
            saxpy_mismatch(a, &hx, &hy, &out.to_vec()?).is_none(),
            "{what}: wrong result"
        );
        if config.programmatic_event_handle().is_some() {
            ensure!(event.query()?, "{what}: the event was not recorded");
        }
    }
    Ok(())
}

fn occupancy_answers_are_sane_and_the_suggested_config_computes(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let (block, min_grid) = saxpy.suggest_block_size(0, 0, 0)?;
    ensure!(
        (32..=1024).contains(&block) && block % 32 == 0,
        "suggested block size {block}"
    );
    ensure!(min_grid >= 1, "minimum grid {min_grid}");
    let per_sm = saxpy.active_blocks_per_sm(block, 0)?;
    ensure!(per_sm >= 1, "{per_sm} blocks of {block} per SM");
    let (capped, _) = saxpy.suggest_block_size(0, 0, 64)?;
    ensure!(
        (1..=64).contains(&capped),
        "block size capped at 64: {capped}"
    );
    let shared = saxpy.available_dynamic_shared(1, block)?;
    ensure!(
        shared >= 48 * 1024,
        "{shared} bytes of dynamic shared memory"
    );

    for n in [1usize, 1000, (1 << 20) + 3] {
        let config = saxpy.suggest_config(n)?;
        let (g, b) = (config.grid.x as usize, config.block.x as usize);
        ensure!(
            (config.grid.y, config.grid.z, config.block.y, config.block.z) == (1, 1, 1, 1),
            "n = {n}: {config:?}"
        );
        ensure!(b == block as usize, "n = {n}: block {b}, suggested {block}");
        ensure!(
            g * b >= n && (g - 1) * b < n,
            "n = {n}: {g} blocks of {b} do not just cover it"
        );
        ensure!(
            config.flags == LaunchFlags::NONE && config.cluster.is_none() && config.priority == 0,
            "n = {n}: {config:?}"
        );
        let mut rng = Rng(n as u64 + 1);
        let (hx, hy) = (rng.vec(n), rng.vec(n));
        let (x, y) = (
            device.buffer_from_slice(&hx)?,
            device.buffer_from_slice(&hy)?,
        );
        let out = device.alloc::<f32>(n)?;
        let a = 0.75f32;
        // SAFETY: saxpy touches n floats of each buffer.
        unsafe { saxpy.launch(config).args((&a, &x, &y, &out, &n)).run()? };
        device.synchronize()?;
        ensure!(
            saxpy_mismatch(a, &hx, &hy, &out.to_vec()?).is_none(),
            "n = {n}: wrong result at the suggested configuration"
        );
    }
    let with_shared = saxpy.suggest_config_with_shared(4096, 16, 4)?;
    ensure!(
        with_shared.shared_mem_bytes as usize == 16 + 4 * with_shared.block.x as usize,
        "{with_shared:?}"
    );
    Ok(())
}

/// SAXPY captured once into a graph on a fresh non-blocking stream: the
/// graph, its stream, and whether the capture's launch succeeded.
fn capture_saxpy(
    device: &Device,
    saxpy: &Function,
    args: (
        f32,
        &DeviceBuffer<f32>,
        &DeviceBuffer<f32>,
        &DeviceBuffer<f32>,
        usize,
    ),
) -> Result<(cuabi::Graph, cuabi::Stream), Box<dyn StdError>> {
    let (a, x, y, out, n) = args;
    device.synchronize()?;
    let stream = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    stream.begin_capture(CaptureMode::ThreadLocal)?;
    let queued = unsafe {
        saxpy
            .launch(LaunchConfig::new(n.div_ceil(256) as u32, 256))
            .stream(&stream)
            .args((&a, x, y, out, &n))
            .run()
    };
    let graph = stream.end_capture();
    queued?;
    Ok((graph?, stream))
}

fn graph_node_args_update_without_reinstantiating(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 14;
    let mut rng = Rng(21);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let (x, y) = (
        device.buffer_from_slice(&hx)?,
        device.buffer_from_slice(&hy)?,
    );
    let out = device.alloc::<f32>(n)?;
    let (graph, stream) = capture_saxpy(device, &saxpy, (1.0, &x, &y, &out, n))?;
    ensure!(
        graph.kernel_node_count()? == 1,
        "{} kernel nodes",
        graph.kernel_node_count()?
    );
    let mut exec = graph.instantiate()?;
    exec.upload(&stream)?;
    for i in 0..100 {
        let a = i as f32 * 0.25 - 7.0;
        exec.set_kernel_node_args(0, &saxpy, (&a, &x, &y, &out, &n))?;
        // SAFETY: the buffers outlive the synchronize.
        unsafe { exec.launch(&stream)? };
        stream.synchronize()?;
        if let Some(j) = saxpy_mismatch(a, &hx, &hy, &out.to_vec()?) {
            return Err(format!("update {i} (a = {a}): element {j} differs").into());
        }
    }
    // Another output buffer through the same node.
    let other = device.alloc::<f32>(n)?;
    exec.set_kernel_node_args(0, &saxpy, (&3.0f32, &x, &y, &other, &n))?;
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    ensure!(
        saxpy_mismatch(3.0, &hx, &hy, &other.to_vec()?).is_none(),
        "the node did not write the new output buffer"
    );
    Ok(())
}

fn graph_update_takes_a_recaptured_graph(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let n = 1usize << 14;
    let mut rng = Rng(22);
    let (hx, hy) = (rng.vec(n), rng.vec(n));
    let (x, y) = (
        device.buffer_from_slice(&hx)?,
        device.buffer_from_slice(&hy)?,
    );
    let (out, out2) = (device.alloc::<f32>(n)?, device.alloc::<f32>(n)?);
    let (graph, stream) = capture_saxpy(device, &saxpy, (2.0, &x, &y, &out, n))?;
    let exec = graph.instantiate()?;
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    ensure!(
        saxpy_mismatch(2.0, &hx, &hy, &out.to_vec()?).is_none(),
        "first graph"
    );
    let (recaptured, _s2) = capture_saxpy(device, &saxpy, (-4.0, &y, &x, &out2, n))?;
    exec.update(&recaptured)?;
    unsafe { exec.launch(&stream)? };
    stream.synchronize()?;
    ensure!(
        saxpy_mismatch(-4.0, &hy, &hx, &out2.to_vec()?).is_none(),
        "after update"
    );
    Ok(())
}

/// Counts its drops.
struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn host_functions_run_in_stream_order(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let stream = device.create_stream()?;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let drops = Arc::new(AtomicUsize::new(0));
    let n = 1usize << 16;
    let x = device.buffer_from_slice(&vec![1.0f32; n])?;
    for i in 0..16 {
        if i % 4 == 0 {
            // Kernels between the host functions.
            unsafe {
                saxpy
                    .launch(LaunchConfig::new((n / 256) as u32, 256))
                    .stream(&stream)
                    .args((&1.0f32, &x, &x, &x, &n))
                    .run()?;
            }
        }
        let (seen, counted) = (Arc::clone(&seen), DropCount(Arc::clone(&drops)));
        stream.launch_host_func(move || -> Result<(), String> {
            let _counted = &counted;
            seen.lock().map_err(|e| e.to_string())?.push(i);
            Ok(())
        })?;
    }
    stream.synchronize()?;
    let order = seen.lock().map_err(|e| e.to_string())?.clone();
    ensure!(order == (0..16).collect::<Vec<_>>(), "order {order:?}");
    ensure!(
        drops.load(Ordering::SeqCst) == 16,
        "{} of 16 closures dropped",
        drops.load(Ordering::SeqCst)
    );
    // x doubled four times: 16.
    ensure!(
        x.to_vec()?.iter().all(|&v| v == 16.0),
        "the kernels between the host functions"
    );
    Ok(())
}

fn host_function_failures_are_reported_by_the_next_synchronize(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let stream = device.create_stream()?;
    let n = 4096usize;
    let x = device.buffer_from_slice(&vec![1.0f32; n])?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let drops = Arc::new(AtomicUsize::new(0));

    // An error: its text is the synchronize's message; work after it runs.
    let counted = DropCount(Arc::clone(&drops));
    stream.launch_host_func(move || {
        let _counted = &counted;
        Err::<(), _>(format!("checksum mismatch in block {}", 3))
    })?;
    unsafe {
        saxpy
            .launch(LaunchConfig::new(16, 256))
            .stream(&stream)
            .args((&2.0f32, &x, &x, &out, &n))
            .run()?;
    }
    let err = stream
        .synchronize()
        .expect_err("the failed host function is reported");
    ensure!(err.kind() == ErrorKind::HostFunction, "{err}");
    ensure!(err.name() == "CUABI_ERROR_HOST_FUNCTION", "{err}");
    ensure!(
        err.message().contains("checksum mismatch in block 3"),
        "{err}"
    );
    ensure!(
        out.to_vec()?.iter().all(|&v| v == 3.0),
        "the kernel after the failed host function did not run"
    );
    stream.synchronize()?; // reported once
    ensure!(
        drops.load(Ordering::SeqCst) == 1,
        "the closure was not dropped once"
    );

    // A panic: caught, its message reported, the closure dropped once.
    let counted = DropCount(Arc::clone(&drops));
    stream.launch_host_func(move || -> Result<(), String> {
        let _counted = &counted;
        panic!("bad block {}", 9)
    })?;
    let err = stream.synchronize().expect_err("the panic is reported");
    ensure!(err.kind() == ErrorKind::HostFunction, "{err}");
    ensure!(
        err.message()
            .contains("host function panicked: bad block 9"),
        "{err}"
    );
    stream.synchronize()?;
    ensure!(
        drops.load(Ordering::SeqCst) == 2,
        "the panicking closure was not dropped once"
    );

    // A successful one afterwards.
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    stream.launch_host_func(move || -> Result<(), std::convert::Infallible> {
        r.fetch_add(1, Ordering::SeqCst);
        Ok(())
    })?;
    stream.synchronize()?;
    ensure!(
        ran.load(Ordering::SeqCst) == 1,
        "the last host function did not run"
    );
    Ok(())
}

fn kernel_attributes_are_set_by_name(device: &Device) -> TestResult {
    let module = device.compile(CLUSTER_SWAP, &CompileOptions::new().name("cluster.cu"))?;
    let swap = module.function("cluster_swap")?;
    ensure!(
        swap.attribute(FunctionAttribute::ClusterSizeMustBeSet)? == 0,
        "a kernel without __cluster_dims__ must not need a cluster size"
    );
    ensure!(
        swap.attribute(FunctionAttribute::RequiredClusterWidth)? == 0,
        "no compile-time cluster width"
    );
    swap.set_attribute(FunctionAttribute::NonPortableClusterSizeAllowed, 1)?;
    ensure!(
        swap.attribute(FunctionAttribute::NonPortableClusterSizeAllowed)? == 1,
        "non-portable cluster sizes were not allowed"
    );
    swap.set_attribute(FunctionAttribute::PreferredSharedMemoryCarveout, 50)?;
    let carveout = swap.attribute(FunctionAttribute::PreferredSharedMemoryCarveout)?;
    ensure!((-1..=100).contains(&carveout), "carve-out {carveout}");
    // The kernel still runs as a cluster after the changes.
    let out = device.alloc::<i32>(6)?;
    unsafe {
        swap.launch(LaunchConfig::new(2, 32).cluster(2, 1, 1))
            .arg(&out)
            .run()?
    };
    device.synchronize()?;
    ensure!(
        out.to_vec()?[..3] == [17, 0, 2],
        "cluster launch after setting attributes: {:?}",
        out.to_vec()?
    );
    // A compile-time cluster is reported.
    let fixed = device.compile(
        "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) fixed(int* out) { *out = 1; }\n",
        &CompileOptions::new().name("fixed.cu"),
    )?;
    let fixed = fixed.function("fixed")?;
    ensure!(
        fixed.attribute(FunctionAttribute::RequiredClusterWidth)? == 2
            && fixed.attribute(FunctionAttribute::RequiredClusterHeight)? == 1,
        "__cluster_dims__(2, 1, 1) not reported"
    );
    Ok(())
}

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cuabi-rs-{}-{name}", std::process::id()))
}
