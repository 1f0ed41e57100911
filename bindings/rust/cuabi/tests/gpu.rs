//! Tests that need a CUDA device.
//!
//! libtest cannot mark a test skipped at run time, so this binary has its own
//! small runner (`harness = false` in Cargo.toml): it prints one line per test,
//! `ok`, `FAILED: why` or `SKIPPED: no CUDA device`, then
//! `N passed, N failed, N skipped`, and exits non-zero when a test failed.
//! Without a device every test is reported SKIPPED, never passed.
//!
//! `cargo test --test gpu -- NAME` runs the tests whose names contain NAME.

mod common;

use common::{parse_args, SAXPY};

use std::error::Error as StdError;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use cuabi::{
    CaptureMode, CompileOptions, Device, DeviceBuffer, DeviceRepr, ErrorKind, EventFlags, Function,
    LaunchConfig, LaunchPlan, Module, Output, ParamInfo, Program, StreamFlags,
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

/// `(name, function)` for each test function named.
macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), $name as Test)),*]
    };
}

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
];

fn main() -> ExitCode {
    let args = parse_args();
    let filter = args.filter;
    if args.list {
        for (name, _) in TESTS {
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
    for (name, test) in TESTS {
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

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cuabi-rs-{}-{name}", std::process::id()))
}
