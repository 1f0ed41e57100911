//! GPU tests of observing a process: the launches a sticky fault names
//! ([`cuabi::Error::launches`]), the profiler's start and stop, and device
//! core dumps, as `tests/c/gpu_fault_child_test.cc` and
//! `tests/c/gpu_coredump_test.cc` test them.
//!
//! A fault poisons the process that takes it, so the faulting work runs in
//! a child process: this very binary again ([`std::env::current_exe`]) with
//! [`CHILD_ENV`] naming the child's part; `main` hands such a run to
//! [`run_child`] before anything else. The child prints what it saw, one
//! fact per line, and the parent judges.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use cuabi::{CompileOptions, CoredumpFlags, Device, ErrorKind, Health, LaunchConfig, StreamFlags};

use super::{skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    a_faulting_childs_error_names_the_launches_not_seen_complete,
    profiler_start_and_stop_succeed,
    a_limit_the_driver_refuses_carries_its_explanation,
    a_faulting_child_writes_a_core_dump_only_when_enabled,
    bad_core_dump_settings_are_refused_by_name,
];

/// Set in a child process of these tests: `fault`, or `coredump-on` /
/// `coredump-off` with the dump's path in [`COREDUMP_PATH_ENV`].
const CHILD_ENV: &str = "CUABI_GPU_TEST_CHILD";
const COREDUMP_PATH_ENV: &str = "CUABI_GPU_TEST_COREDUMP_PATH";

/// The coredump child's exit status when the driver cannot write dumps here
/// (`coredump_set` answered [`ErrorKind::NotSupported`]).
const NO_DUMPS: u8 = 77;

/// How long a child may run before it is killed and the test fails.
const CHILD_SECONDS: u64 = 120;

/// The driver's variables that take precedence over `coredump_set`: kept
/// from the children, so that the call decides.
const COREDUMP_VARS: &[&str] = &[
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    "CUDA_COREDUMP_FILE",
    "CUDA_COREDUMP_GENERATION_FLAGS",
];

// ---------------------------------------------------------------------------
// The child processes
// ---------------------------------------------------------------------------

/// Runs the child's part when this process was started as one: `Some` with
/// its exit code, `None` for an ordinary run.
pub fn run_child() -> Option<ExitCode> {
    let mode = std::env::var(CHILD_ENV).ok()?;
    let code = match mode.as_str() {
        "fault" => fault_child(),
        "coredump-on" | "coredump-off" => coredump_child(mode == "coredump-on"),
        "coredump-device" => coredump_device_child(),
        other => {
            eprintln!("child: unknown mode '{other}'");
            1
        }
    };
    Some(ExitCode::from(code))
}

const FAULT_SOURCE: &str = r#"
extern "C" __global__ void fill(float* x, unsigned n, float v) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
extern "C" __global__ void write_far(float* x, unsigned long long far) {
  x[far + threadIdx.x] = 1.0f;
}
"#;

/// Three launches on two streams after one seen complete, the second
/// writing far out of bounds; prints what the error carries:
///
/// ```text
/// stream a <id>
/// stream b <id>
/// caught <status name> from <call>
/// message <the library's message>
/// launch <i> <kernel> grid <x> <y> <z> block <x> <y> <z> shared <bytes> stream <id> sequence <n> device <d>
/// health <Usable|Lost|Forked>
/// ```
///
/// Exits 0 when the fault was an [`ErrorKind::ContextLost`] error, 1
/// otherwise.
fn fault_child() -> u8 {
    match fault_child_steps() {
        Ok(()) => 0,
        Err(why) => {
            println!("child failed: {why}");
            1
        }
    }
}

fn fault_child_steps() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::get(0)?;
    let module = device.compile(FAULT_SOURCE, &CompileOptions::new().name("fault_child.cu"))?;
    let fill = module.function("fill")?;
    let write_far = module.function("write_far")?;
    let n: u32 = (1 << 20) / 4;
    let x = device.alloc::<f32>(n as usize)?;
    let a = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let b = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    println!("stream a {}\nstream b {}", a.id()?, b.id()?);
    let far: u64 = 1 << 38;
    // SAFETY: fill writes within x's n elements; write_far writes far
    // outside any allocation on purpose, in this process that is given up.
    // The buffer outlives the synchronizations (the process ends after).
    let lost = unsafe {
        fill.launch(LaunchConfig::new(4u32, 128u32))
            .stream(&a)
            .args((&x, &n, &1.0f32))
            .run()?;
        a.synchronize()?;
        fill.launch(LaunchConfig::new(8u32, 256u32))
            .stream(&a)
            .args((&x, &n, &2.0f32))
            .run()?;
        write_far
            .launch(LaunchConfig::new(3u32, 64u32))
            .stream(&b)
            .args((&x, &far))
            .run()?;
        // The fault may surface here already.
        match fill
            .launch(LaunchConfig::new(16u32, 32u32))
            .stream(&a)
            .args((&x, &n, &3.0f32))
            .run()
        {
            Err(err) if err.kind() == ErrorKind::ContextLost => Some(("the third launch", err)),
            Err(err) => return Err(err.into()),
            Ok(()) => None,
        }
    };
    let (call, err) = match lost {
        Some(lost) => lost,
        None => match device.synchronize() {
            Err(err) => ("Device::synchronize", err),
            Ok(()) => return Err("no fault was reported".into()),
        },
    };
    println!(
        "caught {} from {call}\nmessage {}",
        err.name(),
        err.message()
    );
    for (i, l) in err.launches().iter().enumerate() {
        let r = &l.record;
        println!(
            "launch {i} {} grid {} {} {} block {} {} {} shared {} stream {} sequence {} device {}",
            l.kernel,
            r.grid_x,
            r.grid_y,
            r.grid_z,
            r.block_x,
            r.block_y,
            r.block_z,
            r.shared_mem_bytes,
            r.stream_id,
            r.sequence,
            r.device
        );
    }
    println!("health {:?}", device.health()?);
    if err.kind() != ErrorKind::ContextLost {
        return Err(format!("the fault answered {err}").into());
    }
    Ok(())
}

/// Sets device core dumps for the contexts it will create (on or off,
/// lightweight, no abort) at `$CUABI_GPU_TEST_COREDUMP_PATH`, then writes
/// to address 0x10 from a kernel. Exits [`NO_DUMPS`] when the driver cannot
/// write dumps here; 0 when the fault was reported as
/// [`ErrorKind::ContextLost`], or, with dumps on, whatever the driver
/// answered (the dump file is the test); 1 otherwise.
/// The `coredump-device` child: device 0's dumps on (lightweight, no
/// abort), then off; exits [`NO_DUMPS`] where that is refused as
/// [`ErrorKind::NotSupported`].
fn coredump_device_child() -> u8 {
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(err) => {
            println!("coredump-device child: {err}");
            return 1;
        }
    };
    let flags = CoredumpFlags::LIGHTWEIGHT | CoredumpFlags::SKIP_ABORT;
    match device.set_coredump(1, Some(Path::new("/tmp/cuabi-%p.core")), flags) {
        Err(err) if err.kind() == ErrorKind::NotSupported => {
            println!("coredump-device child: {err}");
            return NO_DUMPS;
        }
        Err(err) => {
            println!("coredump-device child: on: {err}");
            return 1;
        }
        Ok(()) => {}
    }
    match device.set_coredump(0, None, CoredumpFlags::NONE) {
        Ok(()) => {
            println!("coredump-device child: set on, then off");
            0
        }
        Err(err) => {
            println!("coredump-device child: off: {err}");
            1
        }
    }
}

fn coredump_child(on: bool) -> u8 {
    let mode = if on { "on" } else { "off" };
    let Some(path) = std::env::var_os(COREDUMP_PATH_ENV).map(PathBuf::from) else {
        println!("coredump child: {COREDUMP_PATH_ENV} is not set");
        return 1;
    };
    let flags = CoredumpFlags::LIGHTWEIGHT | CoredumpFlags::SKIP_ABORT;
    match cuabi::coredump_set(i32::from(on), Some(&path), flags) {
        Err(err) if err.kind() == ErrorKind::NotSupported => {
            println!("coredump child: {err}");
            return NO_DUMPS;
        }
        Err(err) => {
            println!("coredump child: coredump_set: {err}");
            return 1;
        }
        Ok(()) => {}
    }
    let answer = (|| -> cuabi::Result<()> {
        let device = Device::get(0)?;
        let source = "extern \"C\" __global__ void poke(unsigned long long a) { *(int*)a = 1; }\n";
        let module = device.compile(source, &CompileOptions::new().name("poke.cu"))?;
        let poke = module.function("poke")?;
        // SAFETY: poke writes to address 0x10 on purpose, in this process
        // that is given up.
        unsafe {
            poke.launch(LaunchConfig::new(1u32, 1u32))
                .arg(&0x10u64)
                .run()?;
        }
        device.synchronize()
    })();
    // With dumps on, the driver may hand the exception to the dump and
    // answer as it pleases; the parent judges by the dump file.
    match &answer {
        Ok(()) => println!("coredump child ({mode}): the fault answered CUABI_SUCCESS"),
        Err(err) => println!("coredump child ({mode}): the fault answered {err}"),
    }
    let lost = matches!(&answer, Err(err) if err.kind() == ErrorKind::ContextLost);
    if on || lost {
        0
    } else {
        1
    }
}

// ---------------------------------------------------------------------------
// The parent's side
// ---------------------------------------------------------------------------

/// What a child process did: its exit code (128 + the signal when one ended
/// it) and its output, stdout then stderr.
struct ChildRun {
    code: i32,
    output: String,
    /// It did not exit in the time it was given and was killed.
    hung: bool,
}

/// Runs this binary as a child with `CHILD_ENV=mode` and `set` besides.
fn run_child_process(mode: &str, set: &[(&str, &Path)]) -> Result<ChildRun, String> {
    let child = run_child_within(mode, set, CHILD_SECONDS)?;
    if child.hung {
        return Err(format!(
            "the child '{mode}' did not exit in {CHILD_SECONDS} s; it printed:\n{}",
            child.output
        ));
    }
    Ok(child)
}

/// Like [`run_child_process`], but a child still running after `seconds`
/// is killed and returned with `hung` set.
fn run_child_within(mode: &str, set: &[(&str, &Path)], seconds: u64) -> Result<ChildRun, String> {
    use std::os::unix::process::ExitStatusExt;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut command = Command::new(exe);
    command.env(CHILD_ENV, mode);
    for (key, value) in set {
        command.env(key, value);
    }
    for key in COREDUMP_VARS {
        command.env_remove(key);
    }
    // Killed, and the test failed, when it does not exit in CHILD_SECONDS.
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the child: {e}"))?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed().as_secs() >= seconds => {
                let _ = child.kill();
                let output = child.wait_with_output().map_err(|e| e.to_string())?;
                return Ok(ChildRun {
                    code: -1,
                    output: format!(
                        "{}{}",
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    ),
                    hung: true,
                });
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for the child: {e}")),
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("reading the child: {e}"))?;
    let code = output
        .status
        .code()
        .or_else(|| output.status.signal().map(|s| 128 + s))
        .unwrap_or(-1);
    Ok(ChildRun {
        code,
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
        hung: false,
    })
}

/// The text after `"<key> "` on the last line that starts with it, or "".
fn line<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .rev()
        .find_map(|l| l.strip_prefix(key).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or("")
}

/// The child's message: from its `message` line to the first `launch` or
/// `health` line (the message may span lines).
fn child_message(out: &str) -> &str {
    let Some(start) = out.find("\nmessage ").map(|at| at + "\nmessage ".len()) else {
        return "";
    };
    let rest = &out[start..];
    let end = ["\nlaunch ", "\nhealth "]
        .iter()
        .filter_map(|key| rest.find(key))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

fn a_faulting_childs_error_names_the_launches_not_seen_complete(device: &Device) -> TestResult {
    let child = run_child_process("fault", &[])?;
    let out = child.output.as_str();
    println!("the child's report:");
    for l in out.lines() {
        println!("  {l}");
    }
    ensure!(child.code == 0, "the child exited {}:\n{out}", child.code);
    let (a, b) = (line(out, "stream a"), line(out, "stream b"));
    ensure!(!a.is_empty() && !b.is_empty(), "no stream ids:\n{out}");
    ensure!(
        line(out, "caught").starts_with("CUABI_ERROR_CONTEXT_LOST from"),
        "caught: {}",
        line(out, "caught")
    );
    let message = child_message(out);
    let write_far = format!(
        "kernel 'write_far' grid (3, 1, 1) block (64, 1, 1) shared 0 bytes, \
         launch 1 on stream {b} of device 0"
    );
    ensure!(
        message.contains(&write_far),
        "the message lacks \"{write_far}\": {message}"
    );
    let fill = format!(
        "kernel 'fill' grid (8, 1, 1) block (256, 1, 1) shared 0 bytes, launch 2 on stream {a}"
    );
    ensure!(
        message.contains(&fill),
        "the message lacks \"{fill}\": {message}"
    );
    ensure!(
        !message.contains("grid (4, 1, 1)"),
        "the launch seen complete is named: {message}"
    );
    let logged = message.contains("; the driver logged: ");
    ensure!(
        logged || message.contains("the driver logged nothing during the failing call"),
        "the message says nothing of the driver's log: {message}"
    );
    println!(
        "the driver's log during the failing call: {}",
        if logged {
            "lines carried in the message"
        } else {
            "none"
        }
    );
    // launches(): the same as data.
    let write_far =
        format!(" write_far grid 3 1 1 block 64 1 1 shared 0 stream {b} sequence 1 device 0\n");
    ensure!(
        out.contains(&write_far),
        "launches() lacks \"{}\":\n{out}",
        write_far.trim()
    );
    let fill = format!(" fill grid 8 1 1 block 256 1 1 shared 0 stream {a} sequence 2 device 0\n");
    ensure!(
        out.contains(&fill),
        "launches() lacks \"{}\":\n{out}",
        fill.trim()
    );
    ensure!(
        !out.contains(" fill grid 4 1 1"),
        "launches() holds the launch seen complete:\n{out}"
    );
    ensure!(
        line(out, "health") == format!("{:?}", Health::Lost),
        "the child's health: {}",
        line(out, "health")
    );
    let here = device.health()?;
    ensure!(here == Health::Usable, "this process's device is {here:?}");
    Ok(())
}

fn profiler_start_and_stop_succeed(device: &Device) -> TestResult {
    device.profiler_start()?;
    let mut buffer = device.alloc::<u32>(1024)?;
    buffer.fill_bytes(0xab)?;
    device.synchronize()?;
    device.profiler_stop()?;
    ensure!(
        buffer.to_vec()? == vec![0xabab_abab_u32; 1024],
        "the work between start and stop"
    );
    // Again: a second collection range.
    device.profiler_start()?;
    device.profiler_stop()?;
    Ok(())
}

/// A stack size the driver refuses for a reason the core does not check
/// first: the error's message ends with the lines the driver logged during
/// the call, and `driver_log_read(1)` keeps the last of them.
fn a_limit_the_driver_refuses_carries_its_explanation(device: &Device) -> TestResult {
    if cuabi::driver_version()? < 12090 {
        return skip("the driver keeps no log before CUDA 12.9".to_string());
    }
    let err = match device.set_limit(cuabi::Limit::StackSize, 1 << 40) {
        Ok(()) => return Err("a 1 TiB stack was accepted".into()),
        Err(err) => err,
    };
    ensure!(
        err.kind() == ErrorKind::InvalidArgument,
        "the refusal: {err}"
    );
    ensure!(
        err.message().contains("; the driver logged: "),
        "no driver log in: {err}"
    );
    ensure!(
        err.message().contains("from cuCtxSetLimit"),
        "no cuCtxSetLimit in: {err}"
    );
    let last = cuabi::driver_log_read(1)?;
    ensure!(
        last.contains("][E] Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuCtxSetLimit"),
        "the last line kept: {last}"
    );
    Ok(())
}

/// A fresh folder of this test's own under the temporary folder.
fn temp_dir(what: &str) -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for attempt in 0u32.. {
        let dir = base.join(format!("cuabi-rs-{what}-{}-{attempt}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!()
}

fn a_faulting_child_writes_a_core_dump_only_when_enabled(_device: &Device) -> TestResult {
    let dir = temp_dir("coredump")?;
    let result = core_dumps_in(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn core_dumps_in(dir: &Path) -> TestResult {
    let (on, off) = (dir.join("on.core"), dir.join("off.core"));
    let child = run_child_process("coredump-off", &[(COREDUMP_PATH_ENV, &off)])?;
    if child.code == i32::from(NO_DUMPS) {
        return no_dumps_here(child.output.trim());
    }
    ensure!(
        child.code == 0,
        "the child with dumps off exited {}: {}",
        child.code,
        child.output.trim()
    );
    ensure!(!off.exists(), "a dump was written with dumps off");

    // With dumps on, a driver that cannot write them may report no fault and
    // then never let the process end: a child still there after 30 s is killed.
    let child = run_child_within("coredump-on", &[(COREDUMP_PATH_ENV, &on)], 30)?;
    let said = child.output.trim();
    if child.code == i32::from(NO_DUMPS) && !child.hung {
        return no_dumps_here(said);
    }
    let Ok(meta) = std::fs::metadata(&on) else {
        // The driver wrote no dump on this machine: said, not counted as passed.
        let ended = if child.hung {
            "did not exit in 30 s".to_string()
        } else {
            format!("exited {}", child.code)
        };
        return skip(format!(
            "the driver wrote no device core dump at {} (dumps enabled, lightweight, \
             no abort; the child {ended}: {})",
            on.display(),
            said.replace('\n', " | ")
        ));
    };
    ensure!(
        !child.hung,
        "the child with dumps on wrote a dump but did not exit: {said}"
    );
    ensure!(
        child.code == 0,
        "the child with dumps on exited {}: {said}",
        child.code
    );
    ensure!(meta.len() > 0, "an empty dump at {}", on.display());
    println!("device core dump: {}, {} bytes", on.display(), meta.len());
    Ok(())
}

/// The test's end where the child's `coredump_set` answered
/// [`ErrorKind::NotSupported`] (the driver's debugger library,
/// libcudadebugger.so.1, is not installed): the refusal printed, and the
/// test reported skipped.
fn no_dumps_here(said: &str) -> TestResult {
    println!("the driver refuses device core dumps here: {said}");
    skip(format!(
        "this machine cannot write device core dumps: coredump_set answered \
         CUABI_ERROR_NOT_SUPPORTED ({said})"
    ))
}

fn bad_core_dump_settings_are_refused_by_name(device: &Device) -> TestResult {
    let err = device
        .set_coredump(1, None, CoredumpFlags::from_bits(1 << 9))
        .expect_err("an unknown flag");
    ensure!(
        err.kind() == ErrorKind::InvalidArgument && err.message().contains("0x200 hold bits"),
        "an unknown flag: {err}"
    );
    let long = PathBuf::from("x".repeat(1024));
    let err = device
        .set_coredump(1, Some(&long), CoredumpFlags::NONE)
        .expect_err("a path of 1024 bytes");
    ensure!(
        err.kind() == ErrorKind::InvalidArgument && err.message().contains("1024 bytes long"),
        "a path of 1024 bytes: {err}"
    );
    // A valid per-context setting (where the driver can write dumps), then
    // off, in a child: a driver may refuse module loads in a context whose
    // dumps were turned on after it was made, even once they are off again.
    let child = run_child_process("coredump-device", &[])?;
    let said = child.output.trim();
    if child.code == i32::from(NO_DUMPS) {
        ensure!(
            said.contains("libcudadebugger.so.1"),
            "the refusal does not name the debugger library: {said}"
        );
        return no_dumps_here(said);
    }
    ensure!(
        child.code == 0 && said.contains("set on, then off"),
        "the child exited {}: {said}",
        child.code
    );
    Ok(())
}
