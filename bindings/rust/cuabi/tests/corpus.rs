//! The bad-input corpus through the Rust binding: a table of cases, each one
//! mistake with the error it must give, counted.
//!
//! The library's own corpus (`tests/hardening/corpus_*.cc`) holds every bad
//! input the C ABI refuses. This one holds what the Rust layer adds on top,
//! and a smoke subset of the library's cases reached through it:
//!
//! * strings: a NUL byte inside a `&str` is refused by the crate, naming the
//!   argument (and, for lists, which one); a path that is not UTF-8 too;
//! * type conversions: `usize` element counts and offsets whose byte size
//!   overflows `usize`, device ordinals past `i32`, kernel arguments whose
//!   Rust type has the wrong size (checked by the library, once per
//!   signature for a [`LaunchPlan`]);
//! * error mapping: each failure's [`ErrorKind`], message and, after a failed
//!   compile, NVRTC's log, shown by `Display`, UTF-8 intact;
//! * `Drop`: objects released in any order, on any thread, a handle released
//!   twice, and what keeps working afterwards;
//! * a few raw `cuabi_sys` calls (NULL, stale and wrong-kind handles, a
//!   struct with `struct_size` 0), to show the declarations reach the
//!   library as the header says.
//!
//! Each case has a name (what is wrong), the [`ErrorKind`] it must answer, a
//! needle its error's message (`Display`) must hold, naming the thing at
//! fault, and a closure. The runner checks every case the same way: an
//! `Err` of exactly that kind whose message holds the needle, no panic (each
//! case runs under `catch_unwind`: a panic is a failed case, not a crashed
//! run), and nothing wrong found by the case's own post-checks. It prints
//! `bad-input corpus (Rust): N cases, P passed` for the part that needs only
//! NVRTC and `bad-input corpus (Rust, GPU): N cases, P passed` for the part
//! that needs a device, then each failed case with what was expected and
//! what came back.
//!
//! The memory API's cases (`corpus/memory.rs`) print lines of their own,
//! `bad-input corpus (Rust, memory)` and `bad-input corpus (Rust, GPU,
//! memory)`, and so do those of compilation beyond one string
//! (`corpus/compile.rs`: typed compile options, LTO-IR, linkers, libraries,
//! kernel listings), `bad-input corpus (Rust, compile)` and `bad-input
//! corpus (Rust, GPU, compile)`.
//!
//! Without a CUDA device the GPU part is reported SKIPPED, never passed,
//! as the GPU tests report theirs (`harness = false`: this binary prints its
//! own results). `cargo test --test corpus -- NAME` runs the parts whose
//! names contain NAME; `--list` lists them.

mod common;
#[path = "corpus/compile.rs"]
mod compile;
#[path = "corpus/core_compile_cases.rs"]
mod core_compile_cases;
#[path = "corpus/memory.rs"]
mod memory;

use common::{parse_args, SAXPY};

use std::ffi::{c_char, c_void, CStr};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cuabi::sys;
use cuabi::{
    CompileOptions, Device, DeviceBuffer, ErrorKind, Function, LaunchConfig, LaunchPlan, Module,
    Program, Stream,
};

// ---------------------------------------------------------------------------
// Cases and the runner
// ---------------------------------------------------------------------------

/// How the call under test failed: its raw status and its error as
/// displayed (`NAME: message`, and the compile log when there is one).
struct Failure {
    status: sys::cuabi_status,
    shown: String,
}

impl From<cuabi::Error> for Failure {
    fn from(err: cuabi::Error) -> Failure {
        Failure {
            status: err.status(),
            shown: err.to_string(),
        }
    }
}

/// What the call under test answered.
type Answer = Result<(), Failure>;

/// Why a case could not reach its call: something it prepares failed.
struct Setup(String);

impl From<cuabi::Error> for Setup {
    fn from(err: cuabi::Error) -> Setup {
        Setup(err.to_string())
    }
}

impl From<String> for Setup {
    fn from(why: String) -> Setup {
        Setup(why)
    }
}

impl From<&str> for Setup {
    fn from(why: &str) -> Setup {
        Setup(why.to_owned())
    }
}

impl From<std::io::Error> for Setup {
    fn from(err: std::io::Error) -> Setup {
        Setup(err.to_string())
    }
}

/// What a case's closure returns: the answer of its call, or why it never
/// got there.
type Ran = Result<Answer, Setup>;

/// What a case found wrong besides its answer (its post-checks).
#[derive(Default)]
struct Ctx {
    problems: Vec<String>,
}

impl Ctx {
    fn problem(&mut self, what: impl Into<String>) {
        self.problems.push(what.into());
    }

    /// Records `what` unless `ok`.
    fn expect(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.problem(what);
        }
    }

    /// Records the error of a post-check that failed.
    fn check<T, E: std::fmt::Display>(&mut self, what: &str, result: Result<T, E>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(err) => {
                self.problem(format!("{what}: {err}"));
                None
            }
        }
    }
}

/// The answer of a call through the safe crate.
fn answer<T>(result: cuabi::Result<T>) -> Ran {
    Ok(result.map(drop).map_err(Failure::from))
}

/// The answer of a raw call: `status` and the thread's last error, which must
/// hold that status and a UTF-8 message naming the call (`"<call>: "`).
fn raw(ctx: &mut Ctx, call: &str, status: sys::cuabi_status) -> Ran {
    if status == sys::CUABI_SUCCESS {
        return Ok(Ok(()));
    }
    let last = unsafe { sys::cuabi_last_error_status() };
    if last != status {
        ctx.problem(format!(
            "the last error is {}, not the status returned",
            cuabi::status_name(last)
        ));
    }
    let message = last_message(ctx);
    if !message.starts_with(&format!("{call}: ")) {
        ctx.problem(format!("the message does not start with '{call}: '"));
    }
    Ok(Err(Failure {
        status,
        shown: format!("{}: {message}", cuabi::status_name(status)),
    }))
}

/// The thread's last error as an answer, for cases about what leaves it
/// alone.
fn last_error(ctx: &mut Ctx) -> Ran {
    let status = unsafe { sys::cuabi_last_error_status() };
    let message = last_message(ctx);
    Ok(Err(Failure {
        status,
        shown: format!("{}: {message}", cuabi::status_name(status)),
    }))
}

fn last_message(ctx: &mut Ctx) -> String {
    // SAFETY: never NULL, NUL-terminated, valid until the next cuabi call.
    let message = unsafe { CStr::from_ptr(sys::cuabi_last_error_message()) };
    match message.to_str() {
        Ok(text) => text.to_owned(),
        Err(_) => {
            ctx.problem("the last error's message is not UTF-8");
            message.to_string_lossy().into_owned()
        }
    }
}

/// An error the runner can report: a status recorded by a NULL program.
fn plant_last_error() {
    unsafe { sys::cuabi_program_get_log(null_mut(), null_mut(), null_mut()) };
}

type Run<F> = Box<dyn Fn(&F, &mut Ctx) -> Ran>;

struct Case<F> {
    name: String,
    /// The error it must answer; `None`: it must succeed.
    expected: Option<ErrorKind>,
    needle: String,
    run: Run<F>,
}

/// A table of cases run against a fixture of type `F`.
struct Cases<F>(Vec<Case<F>>);

impl<F> Cases<F> {
    fn new() -> Self {
        Cases(Vec::new())
    }

    fn add(
        &mut self,
        name: impl Into<String>,
        expected: impl Into<Option<ErrorKind>>,
        needle: impl Into<String>,
        run: impl Fn(&F, &mut Ctx) -> Ran + 'static,
    ) {
        self.0.push(Case {
            name: name.into(),
            expected: expected.into(),
            needle: needle.into(),
            run: Box::new(run),
        });
    }
}

/// How a table ran.
#[derive(Default)]
struct Tally {
    cases: usize,
    passed: usize,
    failures: Vec<String>,
}

/// Where and why the last panic happened, set by the panic hook.
static PANIC_AT: Mutex<Option<String>> = Mutex::new(None);

fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Runs every case and checks each the same way.
fn run_cases<F>(fixture: &F, cases: &Cases<F>) -> Tally {
    let mut tally = Tally::default();
    for case in &cases.0 {
        tally.cases += 1;
        plant_last_error();
        let mut ctx = Ctx::default();
        let ran = panic::catch_unwind(AssertUnwindSafe(|| (case.run)(fixture, &mut ctx)));
        let mut why = Vec::new();
        let got = match ran {
            Err(_) => {
                let at = PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()).take();
                why.push("the case panicked".to_owned());
                format!("a panic: {}", at.unwrap_or_default())
            }
            Ok(Err(Setup(setup))) => {
                why.push("its set-up failed".to_owned());
                setup
            }
            Ok(Ok(Ok(()))) => {
                if case.expected.is_some() {
                    why.push("the call succeeded".to_owned());
                }
                "Ok".to_owned()
            }
            Ok(Ok(Err(failure))) => {
                let kind = ErrorKind::from_status(failure.status);
                if Some(kind) != case.expected {
                    why.push(format!("it answered {kind:?}"));
                }
                if !failure.shown.contains(&case.needle) {
                    why.push(format!("the message lacks '{}'", case.needle));
                }
                failure.shown
            }
        };
        why.append(&mut ctx.problems);
        if why.is_empty() {
            tally.passed += 1;
        } else {
            tally.failures.push(format!(
                "[{}]: {}\n      expected: {}, its message holding '{}'\n      got: {}",
                case.name,
                why.join("; "),
                case.expected
                    .map_or("success".to_owned(), |k| format!("{k:?}")),
                case.needle,
                shorten(&got, 600).replace('\n', "\n           ")
            ));
        }
    }
    tally
}

fn report(label: &str, tally: &Tally) {
    println!(
        "bad-input corpus ({label}): {} cases, {} passed",
        tally.cases, tally.passed
    );
    for failure in &tally.failures {
        println!("  FAILED {failure}");
    }
}
// ---------------------------------------------------------------------------
// Raw handles
// ---------------------------------------------------------------------------

/// A handle's value: generation (high 32 bits), kind (bits 24..32), slot.
fn value<T>(handle: *mut T) -> u64 {
    handle.addr() as u64
}

/// A handle of any type with the given value.
fn handle<T>(value: u64) -> *mut T {
    std::ptr::without_provenance_mut(value as usize)
}

/// Whether two handle values name the same slot.
fn same_slot(a: u64, b: u64) -> bool {
    a & 0xFF_FFFF == b & 0xFF_FFFF
}

/// A handle made through `cuabi_sys`, released on drop.
struct Raw<T>(*mut T, unsafe extern "C" fn(*mut T));

impl<T> Drop for Raw<T> {
    fn drop(&mut self) {
        // SAFETY: release takes any value, NULL and dead ones included.
        unsafe { (self.1)(self.0) }
    }
}

/// Releases `value` through every kind's release function.
fn release_as_every_kind(value: u64) {
    unsafe {
        sys::cuabi_device_release(handle(value));
        sys::cuabi_program_release(handle(value));
        sys::cuabi_module_release(handle(value));
        sys::cuabi_function_release(handle(value));
        sys::cuabi_buffer_release(handle(value));
        sys::cuabi_host_buffer_release(handle(value));
        sys::cuabi_stream_release(handle(value));
        sys::cuabi_event_release(handle(value));
        sys::cuabi_graph_release(handle(value));
        sys::cuabi_graph_exec_release(handle(value));
        sys::cuabi_launch_plan_release(handle(value));
        sys::cuabi_memory_pool_release(handle(value));
        sys::cuabi_array_release(handle(value));
        sys::cuabi_texture_release(handle(value));
        sys::cuabi_surface_release(handle(value));
    }
}

// ---------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------

const TINY: &str = "extern \"C\" __global__ void tiny(int* x) { *x = 42; }\n";
const TEMPLATE: &str = "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n";
const SM: &str = "--gpu-architecture=sm_90";
const COMPUTE: &str = "--gpu-architecture=compute_90";

/// A `__device__` global and a template without name expressions.
const UTIL: &str = r#"
__device__ int corpus_counter;

template <typename T>
__global__ void store(T* out, T value)
{
  *out = value;
}
"#;

// ---------------------------------------------------------------------------
// The part without a GPU: NVRTC, strings, handles
// ---------------------------------------------------------------------------

/// Programs shared by the cases; a case that changes a program makes its own.
struct Cpu {
    /// `store<int>` registered, compiled for sm_90: CUBIN and PTX.
    compiled: Program,
    /// Compiled for compute_90: PTX only.
    ptx_only: Program,
    /// Created, never compiled.
    fresh: Program,
    /// A program's value after it was dropped, its slot reused by `reuser`.
    stale: u64,
    reuser: Program,
}

impl Cpu {
    fn build() -> Result<Cpu, String> {
        let describe = |what: &str, err: cuabi::Error| format!("{what}: {err}");
        let program = |source: &str| Program::new(source, "corpus.cu");
        let mut compiled = program(TEMPLATE).map_err(|e| describe("create", e))?;
        compiled
            .add_name_expression("store<int>")
            .map_err(|e| describe("add_name_expression", e))?;
        compiled
            .compile(&[SM])
            .map_err(|e| describe("compile for sm_90", e))?;
        let mut ptx_only = program(TINY).map_err(|e| describe("create", e))?;
        ptx_only
            .compile(&[COMPUTE])
            .map_err(|e| describe("compile for compute_90", e))?;
        let fresh = program(TINY).map_err(|e| describe("create", e))?;
        let s = program(TINY).map_err(|e| describe("create", e))?;
        let stale = value(s.as_raw());
        drop(s);
        let reuser = program(TINY).map_err(|e| describe("create", e))?;
        if !same_slot(stale, value(reuser.as_raw())) {
            return Err(
                "the handle table did not reuse the released slot; the stale-handle \
                        case would test nothing"
                    .into(),
            );
        }
        Ok(Cpu {
            compiled,
            ptx_only,
            fresh,
            stale,
            reuser,
        })
    }

    fn compiled_value(&self) -> u64 {
        value(self.compiled.as_raw())
    }
}

fn new_program(source: &str) -> Result<Program, Setup> {
    Ok(Program::new(source, "corpus.cu")?)
}

/// A compile expected to fail, whose error must carry NVRTC's log, the same
/// the program keeps, and show it.
fn failed_compile(ctx: &mut Ctx, program: &mut Program, options: &[&str]) -> Ran {
    let result = program.compile(options);
    if let Err(err) = &result {
        if err.kind() == ErrorKind::Compile {
            match (err.log(), program.log()) {
                (Some(log), Ok(kept)) => {
                    ctx.expect(kept == log, "the program's log differs from the error's");
                    ctx.expect(
                        err.to_string().contains(log.trim_end()),
                        "Display does not show the log",
                    );
                }
                (None, _) => ctx.problem("the compile error carries no log"),
                (_, Err(e)) => ctx.problem(format!("the program's log: {e}")),
            }
        }
    }
    answer(result)
}

fn cpu_cases() -> Cases<Cpu> {
    let mut c = Cases::<Cpu>::new();
    use ErrorKind::*;

    // --- Strings the crate refuses: a NUL byte inside
    c.add(
        "a source holding a NUL byte",
        InvalidArgument,
        "source contains a NUL byte at byte 6",
        |_, _| answer(Program::new("int x;\0int y;", "k.cu")),
    );
    c.add(
        "a program name holding a NUL byte",
        InvalidArgument,
        "name contains a NUL byte at byte 1",
        |_, _| answer(Program::new(TINY, "k\0.cu")),
    );
    c.add(
        "a header name holding a NUL byte",
        InvalidArgument,
        "header 0 name contains a NUL byte",
        |_, _| answer(Program::with_headers(TINY, "k.cu", &[("a\0.h", "int a;")])),
    );
    c.add(
        "a header's contents holding a NUL byte",
        InvalidArgument,
        "contents of header \"b.h\" contain",
        |_, _| {
            answer(Program::with_headers(
                TINY,
                "k.cu",
                &[("a.h", "int a;"), ("b.h", "int\0b;")],
            ))
        },
    );
    c.add(
        "a name expression holding a NUL byte",
        InvalidArgument,
        "expression contains a NUL byte at byte 6",
        |_, _| answer(new_program(TEMPLATE)?.add_name_expression("store<\0int>")),
    );
    c.add(
        "an option holding a NUL byte",
        InvalidArgument,
        "option 1 contains a NUL byte",
        |_, _| answer(new_program(TINY)?.compile(&[COMPUTE, "-DX=\0"])),
    );
    c.add(
        "a lowered-name query holding a NUL byte",
        InvalidArgument,
        "expression contains a NUL byte at byte 5",
        |f, _| answer(f.compiled.lowered_name("store\0<int>")),
    );
    // --- Strings and calls the library refuses (smoke)
    c.add(
        "an empty program name",
        InvalidArgument,
        "name is empty",
        |_, _| answer(Program::new(TINY, "")),
    );
    c.add(
        "a program compiled twice",
        InvalidArgument,
        "already compiled",
        |_, ctx| {
            let mut p = new_program(TINY)?;
            p.compile(&[COMPUTE])?;
            let result = p.compile(&[COMPUTE]);
            ctx.expect(
                p.ptx().is_ok_and(|ptx| ptx.contains(".entry tiny")),
                "the first compile's PTX is gone",
            );
            answer(result)
        },
    );
    // --- Failed compiles: the kind, the message and NVRTC's log
    c.add(
        "an unknown option",
        Compile,
        "--no-such-option",
        |_, ctx| {
            let mut p = new_program(TINY)?;
            let result = failed_compile(ctx, &mut p, &["--no-such-option"]);
            ctx.expect(
                p.log().is_ok_and(|log| log.contains("--no-such-option")),
                "the program's log does not name the option",
            );
            result
        },
    );
    c.add(
        "a syntax error",
        Compile,
        "could not compile the source",
        |_, ctx| {
            let mut p = new_program("extern \"C\" __global__ void k( {")?;
            let result = p.compile(&[COMPUTE]);
            if let Err(err) = &result {
                ctx.expect(
                    err.log()
                        .is_some_and(|log| log.contains("error") && log.contains("corpus.cu")),
                    "the error's log has no error naming the file",
                );
            }
            answer(result)
        },
    );
    c.add(
        "an error inside a given header",
        Compile,
        "bad_header.h",
        |_, ctx| {
            let mut p = Program::with_headers(
                "#include \"bad_header.h\"\n",
                "k.cu",
                &[("bad_header.h", "int broken(;\n")],
            )?;
            failed_compile(ctx, &mut p, &[COMPUTE])
        },
    );
    c.add(
        "an error message with non-ASCII UTF-8",
        Compile,
        "caf\u{e9} \u{20ac}",
        |_, ctx| {
            failed_compile(
                ctx,
                &mut new_program("#error caf\u{e9} \u{20ac} marker\n")?,
                &[COMPUTE],
            )
        },
    );
    // --- Outputs that do not exist (smoke)
    c.add("PTX before compiling", NotFound, "compiled", |f, _| {
        answer(f.fresh.ptx())
    });
    c.add(
        "CUBIN of a compute_XY compile",
        NotFound,
        "CUBIN",
        |f, ctx| {
            ctx.expect(
                f.ptx_only.ptx().is_ok(),
                "the PTX of the compute_90 compile is missing",
            );
            answer(f.ptx_only.cubin())
        },
    );
    // --- Raw handles and releases (smoke)
    c.add(
        "a program handle as a device",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut n = 0;
            let st = unsafe {
                sys::cuabi_device_get_name(handle(f.compiled_value()), null_mut(), &mut n)
            };
            raw(ctx, "cuabi_device_get_name", st)
        },
    );
    c.add(
        "a program released twice, then used",
        InvalidHandle,
        "program is not a live cuabi_program",
        |_, ctx| {
            let p = new_program(TINY)?;
            let v = value(p.as_raw());
            drop(p);
            unsafe {
                sys::cuabi_last_error_clear();
                sys::cuabi_program_release(handle(v));
            }
            ctx.expect(
                unsafe { sys::cuabi_last_error_status() } == 0,
                "the second release touched the last-error state",
            );
            let mut n = 0;
            raw(ctx, "cuabi_program_get_log", unsafe {
                sys::cuabi_program_get_log(handle(v), null_mut(), &mut n)
            })
        },
    );
    c.add(
        "NULL to every release leaves the last error alone",
        InvalidHandle,
        "cuabi_program_get_log: program is NULL",
        |_, ctx| {
            plant_last_error();
            release_as_every_kind(0);
            last_error(ctx)
        },
    );
    c.add(
        "PTX into a 0-byte buffer",
        InsufficientBuffer,
        "are needed",
        |f, ctx| {
            let mut buf = [b'#' as c_char; 4];
            let mut n = 0;
            let st = unsafe {
                sys::cuabi_program_get_ptx(f.compiled.as_raw(), buf.as_mut_ptr(), &mut n)
            };
            ctx.expect(buf[0] == b'#' as c_char, "a too-small buffer was written");
            ctx.expect(n > 1, "*size does not hold the size needed");
            raw(ctx, "cuabi_program_get_ptx", st)
        },
    );

    // --- Drop: releases the crate makes, and raw handles after them
    c.add(
        "a stale program (its slot reused by a live one)",
        InvalidHandle,
        "program is not a live cuabi_program",
        |f, ctx| {
            let mut n = 0;
            let st = unsafe { sys::cuabi_program_get_log(handle(f.stale), null_mut(), &mut n) };
            let ran = raw(ctx, "cuabi_program_get_log", st);
            ctx.expect(
                f.reuser.log().is_ok(),
                "the slot's live program stopped working",
            );
            ran
        },
    );
    c.add(
        "a program dropped on another thread, then its handle used",
        InvalidHandle,
        "program is not a live cuabi_program",
        |_, ctx| {
            let p = new_program(TINY)?;
            let v = value(p.as_raw());
            std::thread::spawn(move || drop(p))
                .join()
                .map_err(|_| "the dropping thread panicked")?;
            let mut n = 0;
            raw(ctx, "cuabi_program_get_log", unsafe {
                sys::cuabi_program_get_log(handle(v), null_mut(), &mut n)
            })
        },
    );
    c.add(
        "a NULL program (raw)",
        InvalidHandle,
        "program is NULL",
        |_, ctx| {
            let mut n = 0;
            raw(ctx, "cuabi_program_get_log", unsafe {
                sys::cuabi_program_get_log(null_mut(), null_mut(), &mut n)
            })
        },
    );

    // --- DLPack tensors the core refuses before any driver call; the
    // refused tensor comes back, its deleter not run
    for (name, kind, needle, edit) in [
        (
            "a DLPack tensor in CPU memory",
            InvalidArgument,
            "device.device_type is 1",
            (|t| t.dl_tensor.device.device_type = 1)
                as fn(&mut sys::cuabi_dlpack_managed_tensor_versioned),
        ),
        (
            "a DLPack 2.0 tensor",
            NotSupported,
            "tensor.version is 2.1",
            |t| t.version.major = 2,
        ),
        (
            "a read-only DLPack tensor taken as writable",
            InvalidArgument,
            "read-only",
            |t| t.flags = sys::CUABI_DLPACK_FLAG_READ_ONLY as u64,
        ),
        (
            "a DLPack tensor of 4-bit elements",
            NotSupported,
            "dtype.bits is 4",
            |t| t.dl_tensor.dtype.bits = 4,
        ),
    ] {
        c.add(name, kind, needle, move |_, ctx| {
            let (tensor, deleted) = dlpack_tensor(edit);
            match DeviceBuffer::<f32>::from_dlpack(tensor, false) {
                Ok(buffer) => answer(Ok::<_, cuabi::Error>(buffer)),
                Err((e, back)) => {
                    ctx.expect(back.is_some(), "the refused tensor came back");
                    drop(back);
                    ctx.expect(
                        deleted.load(Ordering::SeqCst) == 1,
                        "its deleter ran once, on drop",
                    );
                    answer::<()>(Err(e))
                }
            }
        });
    }

    c
}

/// A DLPack tensor of 16 float32 at a made-up device address, changed by
/// `edit`, whose deleter counts its calls (the counter answered beside it).
fn dlpack_tensor(
    edit: fn(&mut sys::cuabi_dlpack_managed_tensor_versioned),
) -> (cuabi::DlpackTensor, Arc<AtomicUsize>) {
    struct Owned {
        tensor: sys::cuabi_dlpack_managed_tensor_versioned,
        shape: [i64; 1],
        deleted: Arc<AtomicUsize>,
    }
    unsafe extern "C" fn delete(t: *mut sys::cuabi_dlpack_managed_tensor_versioned) {
        // SAFETY: manager_ctx is the Box this tensor lives in.
        let owned = unsafe { Box::from_raw((*t).manager_ctx as *mut Owned) };
        owned.deleted.fetch_add(1, Ordering::SeqCst);
    }
    let deleted = Arc::new(AtomicUsize::new(0));
    // SAFETY: a plain C struct, zero is a valid value of every field.
    let mut owned = Box::new(Owned {
        tensor: unsafe { std::mem::zeroed() },
        shape: [16],
        deleted: deleted.clone(),
    });
    let shape = owned.shape.as_mut_ptr();
    let t = &mut owned.tensor;
    t.version.major = 1;
    t.version.minor = 1;
    t.deleter = Some(delete);
    t.dl_tensor.data = 0x7f00_0000_0000u64 as *mut c_void;
    t.dl_tensor.device.device_type = sys::CUABI_DLPACK_DEVICE_CUDA as i32;
    t.dl_tensor.ndim = 1;
    t.dl_tensor.dtype.code = sys::CUABI_DLPACK_FLOAT as u8;
    t.dl_tensor.dtype.bits = 32;
    t.dl_tensor.dtype.lanes = 1;
    t.dl_tensor.shape = shape;
    edit(t);
    let raw = Box::into_raw(owned);
    // SAFETY: the Box outlives the tensor; the deleter frees it.
    unsafe {
        (*raw).tensor.manager_ctx = raw.cast();
        (cuabi::DlpackTensor::from_raw(&mut (*raw).tensor), deleted)
    }
}

// ---------------------------------------------------------------------------
// The part that needs a GPU
// ---------------------------------------------------------------------------

/// What the GPU cases share; a case that changes an object makes its own.
struct Gpu {
    device: Device,
    saxpy_module: Module,
    saxpy: Function,
    /// `corpus_counter` and the `store` template, compiled without name
    /// expressions.
    util: Module,
    stream: Stream,
}

impl Gpu {
    fn build(device: Device) -> Result<Gpu, String> {
        fn step(what: &'static str) -> impl Fn(cuabi::Error) -> String {
            move |err| format!("{what}: {err}")
        }
        let saxpy_module = device
            .compile(SAXPY, &CompileOptions::new().name("saxpy.cu"))
            .map_err(step("compile SAXPY"))?;
        let saxpy = saxpy_module.function("saxpy").map_err(step("saxpy"))?;
        let util = device
            .compile(UTIL, &CompileOptions::new().name("util.cu"))
            .map_err(step("compile the utility kernels"))?;
        let stream = device.create_stream().map_err(step("stream"))?;
        Ok(Gpu {
            device,
            saxpy_module,
            saxpy,
            util,
            stream,
        })
    }

    /// Runs SAXPY (`a` = 2, `x[i]` = i mod 1000 / 2, `y` = 1) over `n`
    /// elements with `function` on `stream` and compares with the host.
    fn saxpy_runs(
        &self,
        function: &Function,
        stream: Option<&Stream>,
        n: usize,
    ) -> Result<(), String> {
        let run = || -> cuabi::Result<Result<(), String>> {
            let hx: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
            let x = self.device.buffer_from_slice(&hx)?;
            let y = self.device.buffer_from_slice(&vec![1.0f32; n])?;
            let out = self.device.alloc_zeroed::<f32>(n)?;
            let a = 2.0f32;
            let config = LaunchConfig::new(n.div_ceil(256) as u32, 256);
            // SAFETY: saxpy reads and writes n elements of each buffer, which
            // outlive the synchronisation below.
            unsafe {
                let launch = function.launch(config).args((&a, &x, &y, &out, &n));
                match stream {
                    Some(stream) => launch.stream(stream).run()?,
                    None => launch.run()?,
                }
            }
            match stream {
                Some(stream) => stream.synchronize()?,
                None => self.device.synchronize()?,
            }
            let got = out.to_vec()?;
            Ok(match (0..n).find(|&i| got[i] != a * hx[i] + 1.0) {
                Some(i) => Err(format!(
                    "element {i} is {}, expected {}",
                    got[i],
                    a * hx[i] + 1.0
                )),
                None => Ok(()),
            })
        };
        run().map_err(|e| e.to_string())?
    }

    /// After a failure: memory still allocates, copies both ways and
    /// verifies, and SAXPY still runs right.
    fn keeps_working(&self, ctx: &mut Ctx) {
        let data: Vec<u32> = (0..1u32 << 18)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let round_trip = self
            .device
            .buffer_from_slice(&data)
            .and_then(|buffer| buffer.to_vec());
        if let Some(back) = ctx.check("allocating and copying 1 MiB afterwards", round_trip) {
            ctx.expect(
                back == data,
                "1 MiB copied in and out afterwards came back different",
            );
        }
        ctx.check(
            "SAXPY afterwards",
            self.saxpy_runs(&self.saxpy, None, 1 << 16),
        );
    }
}

/// A buffer of `n` floats, every one 1.0.
fn ones(gpu: &Gpu, n: usize) -> Result<DeviceBuffer<f32>, Setup> {
    Ok(gpu.device.buffer_from_slice(&vec![1.0f32; n])?)
}

/// Checks that `buffer` (made by [`ones`]) still holds only 1.0: the refused
/// launch ran nothing.
fn ran_nothing(gpu: &Gpu, ctx: &mut Ctx, buffer: &DeviceBuffer<f32>) {
    if ctx.check("synchronize", gpu.device.synchronize()).is_none() {
        return;
    }
    if let Some(values) = ctx.check("reading the buffer back", buffer.to_vec()) {
        ctx.expect(
            values.iter().all(|&v| v == 1.0),
            "the refused launch ran the kernel",
        );
    }
}

/// A SAXPY plan with every argument written: 16 ones as x, y and out at
/// once, and that buffer.
fn saxpy_plan(gpu: &Gpu) -> Result<(LaunchPlan, DeviceBuffer<f32>), Setup> {
    let buffer = ones(gpu, 16)?;
    let mut plan = gpu.saxpy.plan(LaunchConfig::new(1, 32), None)?;
    plan.set_args((&2.0f32, &buffer, &buffer, &buffer, &16usize))?;
    Ok((plan, buffer))
}

/// SAXPY's arguments for the raw launch calls.
struct RawSaxpy {
    a: f32,
    x: u64,
    n: usize,
}

impl RawSaxpy {
    const SIZES: [usize; 5] = [4, 8, 8, 8, 8];

    fn new(buffer: &DeviceBuffer<f32>) -> RawSaxpy {
        RawSaxpy {
            a: 2.0,
            x: buffer.device_ptr(),
            n: 16,
        }
    }

    fn params(&mut self) -> [*mut c_void; 5] {
        let x = (&mut self.x as *mut u64).cast();
        [
            (&mut self.a as *mut f32).cast(),
            x,
            x,
            x,
            (&mut self.n as *mut usize).cast(),
        ]
    }
}

/// A launch configuration with the library's defaults
/// (`cuabi_launch_config_init`) and the given sizes.
fn raw_config(grid: u32, block: u32) -> sys::cuabi_launch_config {
    // SAFETY: integers only; the library fills them in.
    let mut config: sys::cuabi_launch_config = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<sys::cuabi_launch_config>();
    assert_eq!(
        unsafe { sys::cuabi_launch_config_init(&mut config, size) },
        0
    );
    config.grid_x = grid;
    config.block_x = block;
    config
}

/// A raw compile of `desc` on the fixture's device.
fn compile_desc(g: &Gpu, ctx: &mut Ctx, desc: &sys::cuabi_compile_desc) -> Ran {
    let mut out = null_mut();
    let st = unsafe { sys::cuabi_module_compile(g.device.as_raw(), desc, &mut out) };
    let _owned = Raw(out, sys::cuabi_module_release);
    raw(ctx, "cuabi_module_compile", st)
}

/// A compile description with the library's defaults
/// (`cuabi_compile_desc_init`) and a one-line kernel.
fn saxpy_desc() -> sys::cuabi_compile_desc {
    // SAFETY: pointers and integers; the library fills them in.
    let mut desc: sys::cuabi_compile_desc = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<sys::cuabi_compile_desc>();
    assert_eq!(unsafe { sys::cuabi_compile_desc_init(&mut desc, size) }, 0);
    desc.source = c"extern \"C\" __global__ void k(int* x) { *x = 1; }".as_ptr();
    desc
}

fn gpu_cases() -> Cases<Gpu> {
    let mut c = Cases::<Gpu>::new();
    use ErrorKind::*;

    // --- Allocations and copies: element counts and offsets in usize
    c.add("zero elements", InvalidArgument, "bytes is 0", |g, _| {
        answer(g.device.alloc::<f32>(0))
    });
    c.add(
        "usize::MAX bytes",
        OutOfMemory,
        "18446744073709551615",
        |g, ctx| {
            let ran = answer(g.device.alloc::<u8>(usize::MAX));
            g.keeps_working(ctx);
            ran
        },
    );
    c.add(
        "2^48 four-byte elements (2^50 bytes)",
        OutOfMemory,
        "1125899906842624 bytes",
        |g, _| answer(g.device.alloc::<u32>(1 << 48)),
    );
    c.add(
        "elements whose byte size overflows usize",
        InvalidArgument,
        "Device::alloc: 4611686018427387903 elements of 8 bytes overflow usize",
        |g, _| answer(g.device.alloc::<f64>(usize::MAX / 4)),
    );
    c.add(
        "pinned elements whose byte size overflows usize",
        InvalidArgument,
        "Device::alloc_pinned",
        |g, _| answer(g.device.alloc_pinned::<u64>(usize::MAX / 2)),
    );
    c.add(
        "wrapping elements whose byte size overflows usize",
        InvalidArgument,
        "Device::wrap_buffer",
        |g, _| {
            let b = g.device.alloc::<f64>(16)?;
            answer(unsafe { g.device.wrap_buffer::<f64>(b.device_ptr(), usize::MAX / 4) })
        },
    );
    c.add(
        "a host slice one element longer than the buffer",
        OutOfRange,
        "destination range [0, 0 + 4100) reaches past the end of the 4096-byte buffer",
        |g, ctx| {
            let mut b = ones(g, 1024)?;
            let ran = answer(b.copy_from(&[5.0f32; 1025]));
            ctx.expect(
                b.to_vec().is_ok_and(|v| v.iter().all(|&x| x == 1.0)),
                "the refused copy wrote the buffer",
            );
            ran
        },
    );
    c.add(
        "an element offset whose byte offset overflows usize (upload)",
        OutOfRange,
        "reaches past the end of the 1024-element buffer",
        |g, _| answer(ones(g, 1024)?.copy_from_at(usize::MAX / 2, &[1.0])),
    );
    c.add(
        "an element offset whose byte offset overflows usize (download)",
        OutOfRange,
        "reaches past the end of the 1024-element buffer",
        |g, _| answer(ones(g, 1024)?.copy_to_at(usize::MAX, &mut [0.0f32])),
    );
    // --- Launches: configurations and arguments the library refuses
    c.add(
        "plan on a stream: a grid x of zero",
        InvalidArgument,
        "zero dimension",
        |g, _| answer(g.saxpy.plan(LaunchConfig::new(0, 32), Some(&g.stream))),
    );
    c.add(
        "a 4-byte n for a size_t parameter (the overview's bug)",
        InvalidArgument,
        "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes",
        |g, ctx| {
            let b = ones(g, 16)?;
            let ran = answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2.0f32)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .arg(&16u32)
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "four arguments for five parameters",
        InvalidArgument,
        "kernel 'saxpy' takes 5 parameters, but 4 were given",
        |g, ctx| {
            let b = ones(g, 16)?;
            let ran = answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2.0f32)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "a tuple with a 4-byte n",
        InvalidArgument,
        "parameter 4 is 8 bytes",
        |g, ctx| {
            let b = ones(g, 16)?;
            let ran = answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .args((&2.0f32, &b, &b, &b, &16u32))
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "a tuple of 24 arguments",
        InvalidArgument,
        "but 24 were given",
        |g, _| {
            let v = 0u64;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .args((
                        &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v,
                        &v, &v, &v, &v, &v,
                    ))
                    .run()
            })
        },
    );
    c.add(
        "1000 arguments",
        InvalidArgument,
        "but 1000 were given",
        |g, _| {
            let v = 0u64;
            let mut launch = g.saxpy.launch(LaunchConfig::new(1, 32));
            for _ in 0..1000 {
                launch = launch.arg(&v);
            }
            answer(unsafe { launch.run() })
        },
    );
    // --- Plans: each argument signature checked by the library once
    c.add(
        "plan: a 4-byte n for a size_t parameter",
        InvalidArgument,
        "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes",
        |g, ctx| {
            let (mut plan, _b) = saxpy_plan(g)?;
            let before = plan.args().to_vec();
            let ran = answer(plan.set(4, &16u32));
            ctx.expect(
                plan.args() == before,
                "the refused argument changed the block",
            );
            ran
        },
    );
    c.add(
        "plan: parameter index 5 of 5",
        InvalidArgument,
        "kernel 'saxpy' takes 5 parameters; there is no parameter 5",
        |g, _| answer(saxpy_plan(g)?.0.set(5, &0u64)),
    );
    c.add(
        "plan: parameter index usize::MAX",
        InvalidArgument,
        "there is no parameter 18446744073709551615",
        |g, _| answer(saxpy_plan(g)?.0.set(usize::MAX, &0u8)),
    );
    c.add(
        "plan: four arguments for five parameters",
        InvalidArgument,
        "kernel 'saxpy' takes 5 parameters, but 4 were given",
        |g, ctx| {
            let (mut plan, b) = saxpy_plan(g)?;
            let before = plan.args().to_vec();
            let ran = answer(plan.set_args((&3.0f32, &b, &b, &b)));
            ctx.expect(
                plan.args() == before,
                "the refused arguments changed the block",
            );
            ran
        },
    );
    c.add(
        "plan: a tuple with a 4-byte n",
        InvalidArgument,
        "parameter 4 is 8 bytes",
        |g, ctx| {
            let (mut plan, b) = saxpy_plan(g)?;
            let before = plan.args().to_vec();
            let ran = answer(plan.set_args((&3.0f32, &b, &b, &b, &16u32)));
            ctx.expect(
                plan.args() == before,
                "the refused tuple wrote part of the block",
            );
            ran
        },
    );
    c.add(
        "plan: launch_with a 4-byte n",
        InvalidArgument,
        "parameter 4 is 8 bytes",
        |g, ctx| {
            let (mut plan, b) = saxpy_plan(g)?;
            let ran = answer(unsafe { plan.launch_with((&2.0f32, &b, &b, &b, &16u32)) });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    // --- Names, strings and device ordinals
    c.add(
        "an unknown kernel",
        NotFound,
        "no kernel named 'no_such_kernel'",
        |g, _| answer(g.saxpy_module.function("no_such_kernel")),
    );
    c.add(
        "a kernel name holding a NUL byte",
        InvalidArgument,
        "kernel name contains a NUL byte at byte 2",
        |g, _| answer(g.saxpy_module.function("sa\0xpy")),
    );
    c.add(
        "a global name holding a NUL byte",
        InvalidArgument,
        "global name contains a NUL byte",
        |g, _| answer(g.util.global("corpus\0counter")),
    );
    c.add(
        "device ordinal usize::MAX",
        NoDevice,
        "no CUDA device 18446744073709551615",
        |_, _| answer(Device::get(usize::MAX)),
    );
    c.add(
        "device ordinal 2^31 (past i32)",
        NoDevice,
        "no CUDA device 2147483648",
        |_, _| answer(Device::get(1 << 31)),
    );
    // --- Compiling into a module: the log and the strings of CompileOptions
    c.add(
        "a compile error",
        Compile,
        "undefined_in_module",
        |g, ctx| {
            let result = g.device.compile(
                "extern \"C\" __global__ void k(int* x) { *x = undefined_in_module; }",
                &CompileOptions::new().name("bad.cu").no_cache(),
            );
            if let Err(err) = &result {
                ctx.expect(
                    err.log()
                        .is_some_and(|l| l.contains("bad.cu") && l.contains("undefined_in_module")),
                    "the error's log does not hold NVRTC's diagnostic",
                );
                // Display shows NVRTC's diagnostic once: in the message or
                // appended, not both.
                let count = |t: &str| t.matches("undefined_in_module").count();
                let in_log = err.log().map_or(0, count);
                ctx.expect(
                    in_log > 0 && count(&err.to_string()) == in_log,
                    "Display does not show the log exactly once",
                );
            }
            answer(result)
        },
    );
    c.add(
        "a source holding a NUL byte",
        InvalidArgument,
        "source contains a NUL byte",
        |g, _| answer(g.device.compile("int x;\0", &CompileOptions::new())),
    );
    c.add(
        "a program name holding a NUL byte",
        InvalidArgument,
        "name contains a NUL byte",
        |g, _| {
            answer(
                g.device
                    .compile(SAXPY, &CompileOptions::new().name("s\0.cu")),
            )
        },
    );
    c.add(
        "an option holding a NUL byte",
        InvalidArgument,
        "option 1 contains a NUL byte",
        |g, _| {
            answer(
                g.device
                    .compile(SAXPY, &CompileOptions::new().options(["-w", "-D\0"])),
            )
        },
    );
    c.add(
        "a header name holding a NUL byte",
        InvalidArgument,
        "header name 0 contains a NUL byte",
        |g, _| {
            answer(
                g.device
                    .compile(SAXPY, &CompileOptions::new().header("a\0.h", "int a;")),
            )
        },
    );
    c.add(
        "a header's contents holding a NUL byte",
        InvalidArgument,
        "header contents 0 contains a NUL byte",
        |g, _| {
            answer(
                g.device
                    .compile(SAXPY, &CompileOptions::new().header("a.h", "int\0a;")),
            )
        },
    );
    c.add(
        "a name expression holding a NUL byte",
        InvalidArgument,
        "name expression 0 contains a NUL byte",
        |g, _| {
            answer(g.device.compile(
                TEMPLATE,
                &CompileOptions::new().name_expression("store\0<int>"),
            ))
        },
    );
    // --- Files and paths
    c.add(
        "a file that does not exist",
        Io,
        "/nonexistent/kernel.cubin",
        |g, _| answer(g.device.load_module_file("/nonexistent/kernel.cubin")),
    );
    c.add(
        "a path that is not UTF-8",
        InvalidArgument,
        "is not UTF-8",
        |g, _| {
            #[cfg(unix)]
            let path = {
                use std::os::unix::ffi::OsStrExt;
                std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xff\xfe.cubin"))
            };
            #[cfg(not(unix))]
            let path = std::path::PathBuf::from("/tmp/\u{fffd}.cubin");
            answer(g.device.load_module_file(path))
        },
    );
    c.add(
        "a path holding a NUL byte",
        InvalidArgument,
        "path contains a NUL byte",
        |g, _| answer(g.device.load_module_file("/tmp/k\0.cubin")),
    );
    // --- Events (smoke)
    c.add(
        "the elapsed time of events never recorded",
        InvalidArgument,
        "never recorded",
        |g, _| {
            let (start, end) = (g.device.create_event()?, g.device.create_event()?);
            answer(start.elapsed_ms(&end))
        },
    );
    // --- Drop: objects outliving what they came from
    c.add(
        "a module dropped while its function is held, then its handle used",
        InvalidHandle,
        "module is not a live cuabi_module: it was released",
        |g, ctx| {
            let module = g
                .device
                .compile(SAXPY, &CompileOptions::new().name("saxpy.cu"))?;
            let function = module.function("saxpy")?;
            let gone = value(module.as_raw());
            drop(module);
            let mut out = null_mut();
            let ran = raw(ctx, "cuabi_module_get_function", unsafe {
                sys::cuabi_module_get_function(handle(gone), c"saxpy".as_ptr(), &mut out)
            });
            // The function keeps the module loaded: it still launches, right.
            ctx.check(
                "SAXPY through the orphaned function",
                g.saxpy_runs(&function, None, 4096),
            );
            ctx.expect(
                function.name().is_ok_and(|n| n == "saxpy"),
                "the function lost its name",
            );
            ran
        },
    );
    c.add(
        "a device dropped while its objects are held, then its handle used",
        InvalidHandle,
        "device is not a live cuabi_device: it was released",
        |g, ctx| {
            let device = Device::get(0)?;
            let module = device.compile(SAXPY, &CompileOptions::new().name("saxpy.cu"))?;
            let function = module.function("saxpy")?;
            let mut buffer = device.alloc::<u8>(64)?;
            let stream = device.create_stream()?;
            let gone = value(device.as_raw());
            drop(device);
            let ran = raw(ctx, "cuabi_device_synchronize", unsafe {
                sys::cuabi_device_synchronize(handle(gone))
            });
            if ctx
                .check(
                    "a fill after the device was dropped",
                    buffer.fill_bytes(0xAB),
                )
                .is_some()
            {
                ctx.expect(
                    buffer.to_vec().is_ok_and(|v| v.iter().all(|&b| b == 0xAB)),
                    "wrong data after the device was dropped",
                );
            }
            ctx.check(
                "SAXPY on the orphaned stream",
                g.saxpy_runs(&function, Some(&stream), 4096),
            );
            ran
        },
    );
    c.add(
        "a plan's function, module and stream dropped, then the stream's handle used",
        InvalidHandle,
        "stream is not a live cuabi_stream: it was released",
        |g, ctx| {
            let module = g
                .device
                .compile(SAXPY, &CompileOptions::new().name("saxpy.cu"))?;
            let function = module.function("saxpy")?;
            let stream = g.device.create_stream()?;
            let mut plan = function.plan(LaunchConfig::new(4, 256), Some(&stream))?;
            let gone = value(stream.as_raw());
            drop((module, function, stream));
            let ran = raw(ctx, "cuabi_stream_synchronize", unsafe {
                sys::cuabi_stream_synchronize(handle(gone))
            });
            let hx: Vec<f32> = (0..1024).map(|i| i as f32).collect();
            let x = g.device.buffer_from_slice(&hx)?;
            let y = ones(g, 1024)?;
            let out = g.device.alloc_zeroed::<f32>(1024)?;
            let launched = unsafe { plan.launch_with((&2.0f32, &x, &y, &out, &1024usize)) };
            if ctx.check("the orphaned plan's launch", launched).is_some() {
                // The plan's stream is gone from here: wait for the whole device.
                g.device.synchronize()?;
                let want: Vec<f32> = hx.iter().map(|x| 2.0 * x + 1.0).collect();
                ctx.expect(
                    out.to_vec().is_ok_and(|v| v == want),
                    "the orphaned plan computed wrong",
                );
            }
            ran
        },
    );
    // --- Structs filled by the library's *_init functions (raw)
    c.add(
        "a launch config with struct_size 0",
        InvalidArgument,
        "config->struct_size is 0",
        |g, ctx| {
            let b = ones(g, 16)?;
            let mut args = RawSaxpy::new(&b);
            let params = args.params();
            let mut config = raw_config(1, 32);
            config.struct_size = 0;
            raw(ctx, "cuabi_function_launch_sized", unsafe {
                sys::cuabi_function_launch_sized(
                    g.saxpy.as_raw(),
                    &config,
                    null_mut(),
                    params.as_ptr(),
                    RawSaxpy::SIZES.as_ptr(),
                    5,
                )
            })
        },
    );
    c.add(
        "a compile description with struct_size 0",
        InvalidArgument,
        "desc->struct_size is 0",
        |g, ctx| {
            let mut desc = saxpy_desc();
            desc.struct_size = 0;
            compile_desc(g, ctx, &desc)
        },
    );

    c.add(
        "plan: a new size for a parameter whose size was accepted before",
        InvalidArgument,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes",
        |g, ctx| {
            let (mut plan, b) = saxpy_plan(g)?;
            ctx.check("an f32 for a float", plan.set(0, &3.0f32).map(drop));
            let ran = answer(plan.set(0, &3.0f64));
            let launched = unsafe { plan.launch() };
            ctx.check("the plan after the refusal", launched);
            if ctx.check("synchronize", g.device.synchronize()).is_some() {
                // 3 * 1 + 1: the refused f64 left a = 3.0f32 in the block.
                let values = b.to_vec().unwrap_or_default();
                ctx.expect(values.iter().all(|&v| v == 4.0), "the plan computed wrong");
            }
            ran
        },
    );

    // --- Extended launches: the library checks cluster shapes, cooperative
    // grids and priorities, whatever launch form carries them.
    c.add(
        "a cluster that does not divide the grid",
        InvalidArgument,
        "grid x 3 is not a multiple of cluster x 2",
        |g, ctx| {
            let b = ones(g, 16)?;
            let config = LaunchConfig::new(3, 32).cluster(2, 1, 1);
            let ran = answer(unsafe {
                g.saxpy
                    .launch(config)
                    .args((&2.0f32, &b, &b, &b, &16usize))
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "plan: a cluster that does not divide the grid",
        InvalidArgument,
        "grid y 5 is not a multiple of cluster y 2",
        |g, _| {
            let config = LaunchConfig::new((4, 5), 32).cluster(1, 2, 1);
            answer(g.saxpy.plan(config, Some(&g.stream)))
        },
    );
    c.add(
        "a cooperative grid larger than the device keeps resident",
        InvalidArgument,
        "a cooperative grid of 1048576 blocks is larger than",
        |g, ctx| {
            let b = ones(g, 16)?;
            let config = LaunchConfig::new(1 << 20, 1024).cooperative(true);
            let ran = answer(unsafe {
                g.saxpy
                    .launch(config)
                    .stream(&g.stream)
                    .args((&2.0f32, &b, &b, &b, &16usize))
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "a launch priority outside the device's range",
        InvalidArgument,
        "priority 1000 is outside device 0's stream priority range",
        |g, ctx| {
            let b = ones(g, 16)?;
            let config = LaunchConfig::new(1, 32).priority(1000);
            let ran = answer(unsafe {
                g.saxpy
                    .launch(config)
                    .args((&2.0f32, &b, &b, &b, &16usize))
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "a programmatic event that was dropped",
        InvalidHandle,
        "programmatic_event",
        |g, ctx| {
            let b = ones(g, 16)?;
            let event = g
                .device
                .create_event_with(cuabi::EventFlags::DISABLE_TIMING)?;
            let config = LaunchConfig::new(1, 32).programmatic_event(&event);
            drop(event);
            let ran = answer(unsafe {
                g.saxpy
                    .launch(config)
                    .args((&2.0f32, &b, &b, &b, &16usize))
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );

    // --- Graph updates: the node's kernel, index and arguments
    c.add(
        "graph: updating a kernel node with another kernel",
        InvalidArgument,
        "kernel node 0 runs 'saxpy', not 'saxpy_copy'",
        |g, ctx| {
            let (mut exec, b) = saxpy_exec(g)?;
            let module = g
                .device
                .compile(SAXPY_COPY, &CompileOptions::new().name("saxpy_copy.cu"))?;
            let other = module.function("saxpy_copy")?;
            let ran = answer(exec.set_kernel_node_args(0, &other, (&5.0f32, &b, &b, &b, &16usize)));
            replays_unchanged(g, ctx, &exec, &b);
            ran
        },
    );
    c.add(
        "graph: a kernel node index past the end",
        OutOfRange,
        "kernel node 1 is past the end: the graph has 1 kernel node",
        |g, ctx| {
            let (mut exec, b) = saxpy_exec(g)?;
            let ran =
                answer(exec.set_kernel_node_args(1, &g.saxpy, (&5.0f32, &b, &b, &b, &16usize)));
            replays_unchanged(g, ctx, &exec, &b);
            ran
        },
    );
    c.add(
        "graph: a 4-byte n for the node's size_t parameter",
        InvalidArgument,
        "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes",
        |g, ctx| {
            let (mut exec, b) = saxpy_exec(g)?;
            let ran = answer(exec.set_kernel_node_args(0, &g.saxpy, (&5.0f32, &b, &b, &b, &16u32)));
            replays_unchanged(g, ctx, &exec, &b);
            ran
        },
    );

    // --- Host functions
    c.add(
        "a host function on a capturing stream",
        NotSupported,
        "the stream is capturing a graph",
        |g, ctx| {
            let stream = g
                .device
                .create_stream_with(cuabi::StreamFlags::NON_BLOCKING, 0)?;
            let (ran, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            stream.begin_capture(cuabi::CaptureMode::ThreadLocal)?;
            let (r, d) = (Arc::clone(&ran), Counted(Arc::clone(&dropped)));
            let answered = answer(stream.launch_host_func(move || -> Result<(), String> {
                let _d = &d;
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }));
            ctx.check("end_capture", stream.end_capture().map(drop));
            ctx.check("synchronize", stream.synchronize());
            ctx.expect(
                ran.load(Ordering::SeqCst) == 0,
                "the refused host function ran",
            );
            ctx.expect(
                dropped.load(Ordering::SeqCst) == 1,
                "the refused host function was not dropped exactly once",
            );
            answered
        },
    );
    c.add(
        "a host function's error, answered by the next synchronize only",
        HostFunction,
        "a host function failed: corpus failure 7",
        |g, ctx| {
            let stream = g.device.create_stream()?;
            stream.launch_host_func(|| Err::<(), _>("corpus failure 7"))?;
            let answered = answer(stream.synchronize());
            ctx.check("the synchronize after the failure", stream.synchronize());
            answered
        },
    );

    c
}

/// SAXPY under another name, with the same parameters.
const SAXPY_COPY: &str = r#"
extern "C" __global__
void saxpy_copy(float a, float *x, float *y, float *out, size_t n)
{
  size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"#;

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// SAXPY over 16 elements of one buffer of ones (x, y and out at once, `a`
/// = 2), captured from a fresh stream and instantiated, and that buffer.
fn saxpy_exec(g: &Gpu) -> Result<(cuabi::GraphExec, DeviceBuffer<f32>), Setup> {
    let b = ones(g, 16)?;
    g.device.synchronize()?;
    let stream = g
        .device
        .create_stream_with(cuabi::StreamFlags::NON_BLOCKING, 0)?;
    stream.begin_capture(cuabi::CaptureMode::ThreadLocal)?;
    let queued = unsafe {
        g.saxpy
            .launch(LaunchConfig::new(1, 32))
            .stream(&stream)
            .args((&2.0f32, &b, &b, &b, &16usize))
            .run()
    };
    let graph = stream.end_capture();
    queued?;
    Ok((graph?.instantiate()?, b))
}

/// After a refused node update: the graph still replays with the captured
/// arguments (a = 2 over ones: 3).
fn replays_unchanged(g: &Gpu, ctx: &mut Ctx, exec: &cuabi::GraphExec, b: &DeviceBuffer<f32>) {
    let replayed = unsafe { exec.launch(&g.stream) }.and_then(|()| g.stream.synchronize());
    if ctx.check("replaying the graph", replayed).is_some() {
        let values = b.to_vec().unwrap_or_default();
        ctx.expect(
            values.len() == 16 && values.iter().all(|&v| v == 3.0),
            format!("the graph replayed wrong after the refusal: {values:?}"),
        );
    }
}

// ---------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------

const CPU_PART: &str = "bad_input_corpus_cpu";
const GPU_PART: &str = "bad_input_corpus_gpu";

/// The part without a GPU: `Ok(true)` when every case passed.
fn run_cpu_part() -> bool {
    let (cases, memory_cases) = (cpu_cases(), memory::cpu_cases());
    let compile_cases = compile::cpu_cases();
    let fixture = match Cpu::build() {
        Ok(fixture) => fixture,
        Err(why) => {
            for (label, count) in [
                ("Rust", cases.0.len()),
                ("Rust, memory", memory_cases.0.len()),
                ("Rust, compile", compile_cases.0.len()),
            ] {
                println!(
                    "bad-input corpus ({label}): {count} cases, 0 passed: its programs could not \
                     be made: {why}"
                );
            }
            return false;
        }
    };
    let tally = run_cases(&fixture, &cases);
    report("Rust", &tally);
    let memory_tally = run_cases(&fixture, &memory_cases);
    report("Rust, memory", &memory_tally);
    let compile_tally = run_cases(&fixture, &compile_cases);
    report("Rust, compile", &compile_tally);
    compile::report_unwritable();
    [tally, memory_tally, compile_tally]
        .iter()
        .all(|t| t.cases > 0 && t.passed == t.cases)
}

/// The part that needs a GPU: `None` when it was skipped.
fn run_gpu_part() -> Option<bool> {
    let (cases, memory_cases) = (gpu_cases(), memory::gpu_cases());
    let compile_cases = compile::gpu_cases();
    let device = match Device::count() {
        Ok(0) => Err("the driver sees no CUDA device".to_owned()),
        Ok(_) => Device::get(0).map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    let device = match device {
        Ok(device) => device,
        Err(reason) => {
            let reason = reason.lines().next().unwrap_or_default().to_owned();
            for (label, count) in [
                ("Rust, GPU", cases.0.len()),
                ("Rust, GPU, memory", memory_cases.0.len()),
                ("Rust, GPU, compile", compile_cases.0.len()),
            ] {
                println!(
                    "bad-input corpus ({label}): SKIPPED: no CUDA device ({count} cases not run): \
                     {reason}"
                );
            }
            return None;
        }
    };
    println!(
        "running the GPU corpus on device 0: {}",
        device.name().unwrap_or_else(|e| e.to_string())
    );
    let fixture = match Gpu::build(device) {
        Ok(fixture) => fixture,
        Err(why) => {
            for (label, count) in [
                ("Rust, GPU", cases.0.len()),
                ("Rust, GPU, memory", memory_cases.0.len()),
                ("Rust, GPU, compile", compile_cases.0.len()),
            ] {
                println!(
                    "bad-input corpus ({label}): {count} cases, 0 passed: its fixture could not \
                     be made: {why}"
                );
            }
            return Some(false);
        }
    };
    let tally = run_cases(&fixture, &cases);
    report("Rust, GPU", &tally);
    let memory_tally = run_cases(&fixture, &memory_cases);
    report("Rust, GPU, memory", &memory_tally);
    let compile_tally = run_cases(&fixture, &compile_cases);
    report("Rust, GPU, compile", &compile_tally);
    // The device must have survived every case.
    let survived = fixture.saxpy_runs(&fixture.saxpy, Some(&fixture.stream), 1 << 16);
    if let Err(why) = &survived {
        println!("  FAILED: SAXPY after the corpus: {why}");
    }
    Some(
        [tally, memory_tally, compile_tally]
            .iter()
            .all(|t| t.passed == t.cases)
            && survived.is_ok(),
    )
}

fn main() -> ExitCode {
    let args = parse_args();
    if args.list {
        println!("{CPU_PART}: test");
        println!("{GPU_PART}: test");
        return ExitCode::SUCCESS;
    }
    if args.ignored_only {
        println!("0 passed, 0 failed, 0 skipped");
        return ExitCode::SUCCESS;
    }
    let selected = |name: &str| args.filter.as_deref().is_none_or(|f| name.contains(f));

    // Before any thread exists: a private compile cache for this run.
    let cache_dir =
        std::env::temp_dir().join(format!("cuabi-rs-corpus-cache-{}", std::process::id()));
    std::env::set_var("CUABI_CACHE_DIR", &cache_dir);
    std::env::remove_var("CUABI_CACHE");

    // A panicking case is reported by the runner, with where it panicked.
    panic::set_hook(Box::new(|info| {
        let why = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("panicked");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *PANIC_AT.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{why}{at}"));
    }));

    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    if selected(CPU_PART) {
        if run_cpu_part() {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    if selected(GPU_PART) {
        match run_gpu_part() {
            Some(true) => passed += 1,
            Some(false) => failed += 1,
            None => skipped += 1,
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
