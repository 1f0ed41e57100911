//! Fault injection through the crate, no GPU: the stand-in driver and NVRTC
//! of `tests/fake/` (one library cuabi opens as both), named by
//! `$CUABI_FAULT_FAKE_DRIVER` (set by `run-tests.sh` and the CTest entry).
//!
//! Each scenario (the SAXPY flow through `Device::compile`, a `Launch` and a
//! `LaunchPlan`; the same kernel through `Program` and `Device::load_module`)
//! runs once clean to count the driver and NVRTC calls, then once per call
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

use cuabi::{CompileOptions, Device, Error, ErrorKind, LaunchConfig, Program};

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
