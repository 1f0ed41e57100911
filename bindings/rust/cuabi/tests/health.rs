//! The driver's log, health and the launches a sticky fault names through
//! the crate, no GPU: against the stand-in driver of `tests/fake/`
//! (`$CUABI_FAULT_FAKE_DRIVER`, set by `run-tests.sh` and the CTest entry;
//! SKIPPED without it, as `tests/fault.rs` is), which logs an injected
//! failure as the real driver does and, after an injected
//! `CUDA_ERROR_LAUNCH_FAILED`, fails every later call as the real driver
//! does after a sticky fault.
//!
//! Each test runs in a child process of its own (this binary again, see
//! `common::run_child`) with `CUABI_DRIVER_PATH` naming the stand-in: the
//! driver is opened once per process, and a lost context stays lost. What
//! is expected is what the C tests `tests/fault/driver_log_test.c`,
//! `tests/fault/health_test.c` and `tests/fault/launch_log_test.c` expect.

mod common;

use std::ffi::{c_char, c_int, c_long, c_void, CString, OsStr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cuabi::{
    Device, Error, ErrorKind, FaultedLaunch, Function, Health, LaunchConfig, LaunchRecord, Stream,
    StreamFlags,
};

const LOG: &str = "failures_carry_the_drivers_log_lines_read_and_dumped";
const NO_LOG: &str = "a_driver_without_a_log_is_reported_and_adds_nothing";
const LOST: &str = "health_turns_lost_and_the_closure_runs_once";
const LAUNCHES: &str = "a_sticky_faults_error_carries_the_launches_not_seen_complete";

// From cuda.h.
const CUDA_ERROR_INVALID_VALUE: c_int = 1;
const CUDA_ERROR_OUT_OF_MEMORY: c_int = 2;
const CUDA_ERROR_LAUNCH_FAILED: c_int = 719;

const RTLD_NOW: c_int = 2;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

type FailEntry = unsafe extern "C" fn(*const c_char, c_long, c_int, c_int);

/// The stand-in's `fake_fail_entry(name, n, cu, nvrtc)`: the `n`th call of
/// entry point `name` from now fails with `cu`. Found in the instance cuabi
/// opens ($CUABI_DRIVER_PATH, the same path: the same library).
fn fail_entry(name: &'static str, n: c_long, cu: c_int) {
    let path = std::env::var("CUABI_DRIVER_PATH").expect("CUABI_DRIVER_PATH in the child");
    let path = CString::new(path).expect("no NUL in the path");
    // SAFETY: NUL-terminated strings; the handle is never closed.
    let symbol = unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_NOW);
        assert!(!handle.is_null(), "cannot open the stand-in {path:?}");
        dlsym(handle, c"fake_fail_entry".as_ptr())
    };
    assert!(
        !symbol.is_null(),
        "{path:?} is not the stand-in: no fake_fail_entry"
    );
    // SAFETY: the stand-in exports it with this signature (tests/fake/fake_cuda.c);
    // it keeps the name's pointer, which is 'static here.
    unsafe {
        let fail = std::mem::transmute::<*mut c_void, FailEntry>(symbol);
        let name = Box::leak(CString::new(name).expect("no NUL").into_boxed_c_str());
        fail(name.as_ptr(), n, cu, 0);
    }
}

/// The stand-in, or `None` (the test is SKIPPED) where
/// `$CUABI_FAULT_FAKE_DRIVER` names none.
fn stand_in(test: &str) -> Option<PathBuf> {
    match std::env::var_os("CUABI_FAULT_FAKE_DRIVER").map(PathBuf::from) {
        Some(path) if path.is_file() => Some(path),
        other => {
            eprintln!(
                "SKIPPED: {test}: CUABI_FAULT_FAKE_DRIVER {} (the stand-in driver, \
                 build/tests/fault/libcuabi_fault_fake_cuda.so, built by CMake)",
                match other {
                    None => "is not set".to_owned(),
                    Some(p) => format!("names {}, which does not exist", p.display()),
                }
            );
            None
        }
    }
}

/// Runs `test` in a child process against the stand-in, with `set` besides.
fn run_against_stand_in(test: &str, set: &[(&str, &OsStr)]) {
    let Some(driver) = stand_in(test) else { return };
    let mut env = vec![
        ("CUABI_DRIVER_PATH", driver.as_os_str()),
        ("CUABI_CACHE", OsStr::new("0")),
    ];
    env.extend_from_slice(set);
    let unset: Vec<&str> = ["CUABI_NVRTC_PATH", "FAKE_CUDA_NO_LOGS"]
        .into_iter()
        .filter(|key| !set.iter().any(|(k, _)| k == key))
        .collect();
    common::run_child(test, &env, &unset);
}

/// The lines of a driver log: each `[hh:mm:ss.mmm][thread id][E or W] message`.
fn log_lines(log: &str) -> Vec<&str> {
    assert!(log.is_empty() || log.ends_with('\n'), "{log:?}");
    let lines: Vec<&str> = log.lines().collect();
    for line in &lines {
        let fields: Vec<&str> = line.splitn(4, ']').collect();
        assert!(
            fields.len() == 4
                && fields[0].starts_with('[')
                && fields[0].len() == 13
                && fields[1].starts_with('[')
                && (fields[2] == "[E" || fields[2] == "[W")
                && fields[3].starts_with(' '),
            "a log line not as documented: {line:?}"
        );
    }
    lines
}

#[test]
fn failures_carry_the_drivers_log_lines_read_and_dumped() {
    if !common::is_child(LOG) {
        return run_against_stand_in(LOG, &[]);
    }
    let device = Device::get(0).expect("the stand-in's device");
    assert_eq!(
        cuabi::driver_log_read(0).expect("read"),
        "",
        "a log before any failure"
    );

    fail_entry("cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY);
    let err = device.alloc::<u8>(1024).expect_err("the injected failure");
    assert_eq!(err.kind(), ErrorKind::OutOfMemory, "{err}");
    assert!(
        err.message().ends_with(
            "; the driver logged: stand-in: cuMemAlloc fails as told | Returning 2 \
             (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc"
        ),
        "{err}"
    );

    // The next failure carries its own lines, not the previous call's.
    let mut buffer = device.alloc::<u8>(16).expect("alloc");
    fail_entry("cuMemsetD8", 1, CUDA_ERROR_INVALID_VALUE);
    let err = buffer.fill_bytes(0).expect_err("the injected failure");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.message().ends_with(
            "; the driver logged: stand-in: cuMemsetD8 fails as told | Returning 1 \
             (CUDA_ERROR_INVALID_VALUE) from cuMemsetD8"
        ),
        "{err}"
    );
    assert!(
        !err.message().contains("cuMemAlloc"),
        "an older call's lines: {err}"
    );

    let all = cuabi::driver_log_read(0).expect("read all");
    let lines = log_lines(&all);
    assert_eq!(lines.len(), 4, "{all}");
    assert!(
        lines[0].ends_with("][E] stand-in: cuMemAlloc fails as told"),
        "{all}"
    );
    assert!(
        lines[1].ends_with("][E] Returning 2 (CUDA_ERROR_OUT_OF_MEMORY) from cuMemAlloc"),
        "{all}"
    );
    assert!(
        lines[2].ends_with("][E] stand-in: cuMemsetD8 fails as told"),
        "{all}"
    );
    let last = cuabi::driver_log_read(1).expect("read the last line");
    assert_eq!(log_lines(&last), [lines[3]]);
    assert!(last.ends_with("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemsetD8\n"));
    assert_eq!(cuabi::driver_log_read(100).expect("more than kept"), all);

    let dump =
        std::env::temp_dir().join(format!("cuabi-rust-driver-log-{}.txt", std::process::id()));
    cuabi::driver_log_dump(&dump).expect("dump");
    let written = std::fs::read_to_string(&dump).expect("the dump");
    let _ = std::fs::remove_file(&dump);
    assert_eq!(written, all, "the dump differs from the log read");

    let err = cuabi::driver_log_dump("/nonexistent-folder/log.txt").expect_err("a missing folder");
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert!(
        err.message()
            .contains("cannot open /nonexistent-folder/log.txt"),
        "{err}"
    );
    let err = cuabi::driver_log_dump(Path::new("log\0.txt")).expect_err("a NUL in the path");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}

#[test]
fn a_driver_without_a_log_is_reported_and_adds_nothing() {
    if !common::is_child(NO_LOG) {
        return run_against_stand_in(NO_LOG, &[("FAKE_CUDA_NO_LOGS", OsStr::new("1"))]);
    }
    let device = Device::get(0).expect("the stand-in's device");
    let err = cuabi::driver_log_read(0).expect_err("no log");
    assert_eq!(err.kind(), ErrorKind::NotSupported, "{err}");
    assert!(
        err.message()
            .contains("keeps no log; CUDA 12.9 drivers and later do"),
        "{err}"
    );
    let dump = std::env::temp_dir().join("cuabi-rust-driver-log-unused.txt");
    let err = cuabi::driver_log_dump(&dump).expect_err("no log to dump");
    assert_eq!(err.kind(), ErrorKind::NotSupported, "{err}");
    assert!(!dump.exists(), "a dump was written without a log");

    fail_entry("cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY);
    let err = device.alloc::<u8>(1024).expect_err("the injected failure");
    assert_eq!(err.kind(), ErrorKind::OutOfMemory, "{err}");
    assert!(!err.message().contains("the driver logged"), "{err}");
}

#[test]
fn health_turns_lost_and_the_closure_runs_once() {
    if !common::is_child(LOST) {
        return run_against_stand_in(LOST, &[]);
    }
    let device = Arc::new(Device::get(0).expect("the stand-in's device"));

    // (message, health inside the closure, thread) for each call.
    type Calls = Arc<Mutex<Vec<(String, Health, std::thread::ThreadId)>>>;
    let calls: Calls = Arc::default();
    let (seen, dev) = (Arc::clone(&calls), Arc::clone(&device));
    cuabi::on_context_lost(move |message| {
        // cuabi may be called from here.
        let health = dev.health().expect("health inside the closure");
        seen.lock()
            .unwrap()
            .push((message.to_owned(), health, std::thread::current().id()));
    })
    .expect("on_context_lost");

    assert_eq!(device.health().expect("health"), Health::Usable);
    assert_eq!(cuabi::context_lost_message().expect("message"), "");
    assert!(calls.lock().unwrap().is_empty(), "called before any fault");

    fail_entry("cuCtxSynchronize", 1, CUDA_ERROR_LAUNCH_FAILED);
    let err = device.synchronize().expect_err("the sticky fault");
    assert_eq!(err.kind(), ErrorKind::ContextLost, "{err}");
    assert_eq!(device.health().expect("health"), Health::Lost);
    let lost = cuabi::context_lost_message().expect("message");
    assert!(
        lost.starts_with(
            "cuabi_device_synchronize: cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED"
        ),
        "{lost}"
    );
    assert_eq!(
        err.message(),
        lost,
        "the failure's message is the lost message"
    );
    assert_eq!(
        *calls.lock().unwrap(),
        [(lost.clone(), Health::Lost, std::thread::current().id())],
        "the closure runs once, on the failing call's thread, with its message"
    );

    // Later failures of the lost context: no second call, the first message kept.
    let err = device.alloc::<u8>(64).expect_err("the context is lost");
    assert_eq!(err.kind(), ErrorKind::ContextLost, "{err}");
    assert_eq!(calls.lock().unwrap().len(), 1, "the closure ran again");
    assert_eq!(cuabi::context_lost_message().expect("message"), lost);

    // Registered after the loss: called at once, on this thread, before it returns.
    let again = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&again);
    cuabi::on_context_lost(move |message| {
        let here = std::thread::current().id();
        seen.lock().unwrap().push((message.to_owned(), here));
    })
    .expect("on_context_lost after the loss");
    assert_eq!(
        *again.lock().unwrap(),
        [(lost.clone(), std::thread::current().id())]
    );
    assert_eq!(calls.lock().unwrap().len(), 1, "the replaced closure ran");

    // A panic in the closure stops at the boundary: the hook sees it, the
    // registration answers Ok and the process goes on.
    let hooked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&hooked);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        seen.lock().unwrap().push(info.to_string())
    }));
    let registered = cuabi::on_context_lost(|message| panic!("the closure panics: {message}"));
    let _ = std::panic::take_hook();
    std::panic::set_hook(hook);
    registered.expect("a panicking closure registered after the loss");
    let hooked = hooked.lock().unwrap();
    assert_eq!(hooked.len(), 1, "{hooked:?}");
    assert!(
        hooked[0].contains(&format!("the closure panics: {lost}")),
        "{hooked:?}"
    );

    cuabi::clear_context_lost_callback().expect("clear");
    assert_eq!(device.health().expect("health"), Health::Lost);
}

/// A module image the stand-in loads (any text with `__global__`); it knows
/// `empty2` by name, with parameters of 4 and 8 bytes.
const EMPTY2: &[u8] = b"extern \"C\" __global__ void empty2(int a, double* b) {}\0";

/// `empty2(1, NULL)` with `grid` blocks of `block` threads and `shared`
/// bytes of dynamic shared memory, on `stream` (`None`: the default stream).
fn launch_empty2(
    f: &Function,
    grid: u32,
    block: u32,
    shared: u32,
    stream: Option<&Stream>,
) -> cuabi::Result<()> {
    let (a, b) = (1i32, 0u64);
    let launch = f.launch(LaunchConfig::new(grid, block).with_shared_mem(shared));
    let launch = match stream {
        Some(stream) => launch.stream(stream),
        None => launch,
    };
    // SAFETY: the stand-in's empty2 touches no memory.
    unsafe { launch.args((&a, &b)).run() }
}

/// What `Error::launches` holds for a launch of `empty2` on device 0.
fn empty2(grid: u32, block: u32, shared: u32, stream_id: u64, sequence: u64) -> FaultedLaunch {
    FaultedLaunch {
        kernel: "empty2".to_owned(),
        record: LaunchRecord {
            sequence,
            stream_id,
            device: 0,
            grid_x: grid,
            grid_y: 1,
            grid_z: 1,
            block_x: block,
            block_y: 1,
            block_z: 1,
            shared_mem_bytes: shared,
            cluster_x: 0,
            cluster_y: 0,
            cluster_z: 0,
            named_by_driver_log: 0,
        },
    }
}

#[test]
fn a_sticky_faults_error_carries_the_launches_not_seen_complete() {
    if !common::is_child(LAUNCHES) {
        return run_against_stand_in(LAUNCHES, &[]);
    }
    let device = Device::get(0).expect("the stand-in's device");
    let module = device
        .load_module(EMPTY2)
        .expect("the stand-in loads the source");
    let f = module.function("empty2").expect("empty2");
    let stream = || {
        device
            .create_stream_with(StreamFlags::NON_BLOCKING, 0)
            .expect("a stream")
    };
    let (a, b, gone) = (stream(), stream(), stream());
    let id = |s: &Stream| s.id().expect("the stream's id");
    let (ida, idb, idgone) = (id(&a), id(&b), id(&gone));
    assert!(
        ida != 0 && idb != 0 && idgone != 0 && ida != idb && idb != idgone && ida != idgone,
        "stream ids {ida} {idb} {idgone}"
    );

    // Another kind of error, before the fault, from the library: no launches.
    let err = launch_empty2(&f, 0, 1, 0, Some(&a)).expect_err("a grid of 0 blocks");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.launches().is_empty(), "{:?}", err.launches());

    // Seen complete: stream a's first launch, synchronized.
    launch_empty2(&f, 1, 1, 0, Some(&a)).expect("launch 1 on a");
    a.synchronize().expect("synchronize a");
    // Not seen: in launch order.
    launch_empty2(&f, 2, 32, 0, Some(&b)).expect("launch 1 on b"); // the oldest
    launch_empty2(&f, 3, 64, 128, Some(&gone)).expect("launch 1 on gone");
    drop(gone); // its launch is kept
    let mut plan = f
        .plan(LaunchConfig::new(5u32, 96u32), Some(&b))
        .expect("a plan on b");
    // SAFETY: as launch_empty2.
    unsafe { plan.launch_with((&1i32, &0u64)) }.expect("the plan's launch"); // b's 2nd
    drop(plan); // its launch is kept
    launch_empty2(&f, 7, 128, 0, None).expect("launch on the default stream");
    launch_empty2(&f, 11, 256, 64, Some(&a)).expect("launch 2 on a"); // the newest

    fail_entry("cuCtxSynchronize", 1, CUDA_ERROR_LAUNCH_FAILED);
    let err = device.synchronize().expect_err("the sticky fault");
    assert_eq!(err.kind(), ErrorKind::ContextLost, "{err}");
    let listed = format!(
        "; launches not seen complete, most recent first: \
         [1] kernel 'empty2' grid (11, 1, 1) block (256, 1, 1) shared 64 bytes, launch 2 on stream {ida} of device 0; \
         [2] kernel 'empty2' grid (7, 1, 1) block (128, 1, 1) shared 0 bytes, launch 1 on the default stream of device 0; \
         [3] kernel 'empty2' grid (5, 1, 1) block (96, 1, 1) shared 0 bytes, launch 2 on stream {idb} of device 0; \
         [4] kernel 'empty2' grid (3, 1, 1) block (64, 1, 1) shared 128 bytes, launch 1 on stream {idgone} of device 0; \
         [5] kernel 'empty2' grid (2, 1, 1) block (32, 1, 1) shared 0 bytes, launch 1 on stream {idb} of device 0; \
         the driver's log names none of these kernels; the driver now fails"
    );
    assert!(
        err.message().contains(&listed),
        "the message:\n  {}\nlacks:\n  {listed}",
        err.message()
    );
    assert!(
        !err.message().contains("grid (1, 1, 1)"),
        "a launch seen complete is named: {err}"
    );
    // Display is the status's name and the message, the list with it.
    assert_eq!(
        err.to_string(),
        format!("CUABI_ERROR_CONTEXT_LOST: {}", err.message())
    );
    assert!(err.to_string().contains(&listed), "{err}");

    // The same as data, most recent first.
    let expected = [
        empty2(11, 256, 64, ida, 2),
        empty2(7, 128, 0, 0, 1),
        empty2(5, 96, 0, idb, 2),
        empty2(3, 64, 128, idgone, 1),
        empty2(2, 32, 0, idb, 1),
    ];
    assert_eq!(err.launches(), expected);
    // A copy of the error carries them too.
    assert_eq!(err.clone().launches(), expected);

    // A later CONTEXT_LOST failure names the same launches.
    let later = launch_empty2(&f, 1, 1, 0, Some(&a)).expect_err("a launch after the fault");
    assert_eq!(later.kind(), ErrorKind::ContextLost, "{later}");
    assert!(
        later
            .message()
            .contains("[5] kernel 'empty2' grid (2, 1, 1)"),
        "a later failure: {later}"
    );
    assert_eq!(later.launches(), expected);
    let later: Error = device
        .alloc::<u8>(64)
        .expect_err("an allocation after the fault");
    assert_eq!(later.kind(), ErrorKind::ContextLost, "{later}");
    assert_eq!(later.launches(), expected);

    // Another kind of error, after the fault: none.
    let err = cuabi::driver_log_dump("/nonexistent-folder/log.txt").expect_err("a missing folder");
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert!(err.launches().is_empty(), "{:?}", err.launches());
    assert_eq!(device.health().expect("health"), Health::Lost);
}
