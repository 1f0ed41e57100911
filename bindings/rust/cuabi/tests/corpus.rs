//! The bad-input corpus through the Rust binding: a table of cases, each one
//! mistake with the error it must give, counted. It mirrors the C ABI's
//! corpus (`tests/hardening/corpus_*.cc`).
//!
//! Each case has a name (what is wrong), the [`ErrorKind`] it must answer, a
//! needle its error's message (`Display`) must hold, naming the thing at
//! fault, and a closure. The runner checks every case the same way: an
//! `Err` of exactly that kind whose message holds the needle, no panic (each
//! case runs under `catch_unwind`: a panic is a failed case, not a crashed
//! run), and nothing wrong found by the case's own post-checks (after running
//! out of memory the process keeps working, a module dropped while its
//! function is held still launches right, ...). It prints
//! `bad-input corpus (Rust): N cases, P passed` for the part that needs only
//! NVRTC and `bad-input corpus (Rust, GPU): N cases, P passed` for the part
//! that needs a device, then each failed case with what was expected and
//! what came back.
//!
//! Mistakes the safe API can express go through it. The rest cannot be
//! written with the safe types, and go through `cuabi_sys` with raw handle
//! values and pointers instead:
//!
//! * a NULL, released, stale (slot reused) or wrong-kind handle, and a
//!   handle released twice: every object owns its handle, is never NULL, has
//!   a type of its own kind, and is released exactly once, by `Drop`; once
//!   dropped it cannot be named;
//! * strings that are not UTF-8 (`&str`), strings without a NUL terminator
//!   (the crate makes C strings itself; a NUL byte inside a string is refused
//!   by the crate, naming the argument, which the safe cases check), and NULL
//!   strings, out-parameters, argument arrays or counts that disagree with
//!   their arrays (the crate passes slices with their lengths);
//! * unknown stream or event flags, capture modes and compile outputs
//!   ([`StreamFlags`](cuabi::StreamFlags), [`EventFlags`], [`CaptureMode`](cuabi::CaptureMode)
//!   and [`Output`](cuabi::Output) are closed types), a negative device
//!   ordinal (`usize`), and descriptor or configuration structs with a wrong
//!   `struct_size` (the crate fills them in);
//! * a packed argument block of the wrong size (the crate packs it from the
//!   kernel's layout), a host slice of another element type than the buffer
//!   (`DeviceBuffer<T>` takes `&[T]`), and one buffer copied onto itself by
//!   `copy_from_buffer` (`&mut self` and `&src` cannot alias; overlapping
//!   views made with `wrap_buffer` are cases here).
//!
//! Without a CUDA device the GPU part is reported SKIPPED, never passed,
//! as the GPU tests report theirs (`harness = false`: this binary prints its
//! own results). `cargo test --test corpus -- NAME` runs the parts whose
//! names contain NAME; `--list` lists them.

mod common;

use common::{parse_args, SAXPY};

use std::any::Any;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use cuabi::sys;
use cuabi::{
    CaptureMode, CompileOptions, Device, DeviceBuffer, ErrorKind, EventFlags, Function,
    FunctionAttribute, Graph, LaunchConfig, LaunchPlan, Module, Program, Stream, StreamFlags,
};

// ---------------------------------------------------------------------------
// Cases and the runner
// ---------------------------------------------------------------------------

/// How the call under test failed: its raw status and its error as
/// displayed (`NAME: message`, and the compile log when there is one).
struct Failure {
    status: i32,
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
    if status == sys::CUABI_SUCCESS as i32 {
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
    expected: ErrorKind,
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
        expected: ErrorKind,
        needle: impl Into<String>,
        run: impl Fn(&F, &mut Ctx) -> Ran + 'static,
    ) {
        self.0.push(Case {
            name: name.into(),
            expected,
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
                why.push("the call succeeded".to_owned());
                "Ok".to_owned()
            }
            Ok(Ok(Err(failure))) => {
                let kind = ErrorKind::from_status(failure.status);
                if kind != case.expected {
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
                "[{}]: {}\n      expected: {:?}, its message holding '{}'\n      got: {}",
                case.name,
                why.join("; "),
                case.expected,
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

/// `value` with its kind bits replaced by `kind` (1 = device ... 11 = plan).
fn with_kind(value: u64, kind: u64) -> u64 {
    (value & !(0xFF << 24)) | (kind << 24)
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
    }
}

// ---------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------

const TINY: &str = "extern \"C\" __global__ void tiny(int* x) { *x = 42; }\n";
const TEMPLATE: &str = "template <typename T> __global__ void store(T* out, T v) { *out = v; }\n";
const SM: &str = "--gpu-architecture=sm_90";
const COMPUTE: &str = "--gpu-architecture=compute_90";

/// A kernel using dynamic shared memory, a `__device__` global and a
/// template without name expressions.
const UTIL: &str = r#"
extern "C" __global__ void fill_shared(int* out)
{
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

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
    /// Its compile failed.
    failed: Program,
    /// A value that was a live program once; its slot is `reuser`'s now.
    released: u64,
    /// Released, and its slot reused by `reuser`.
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
        let mut failed = program("this is not C++").map_err(|e| describe("create", e))?;
        if failed.compile::<&str>(&[]).is_ok() {
            return Err("a program that is not C++ compiled".into());
        }

        let gone = program(TINY).map_err(|e| describe("create", e))?;
        let released = value(gone.as_raw());
        drop(gone);
        let s = program(TINY).map_err(|e| describe("create", e))?;
        let stale = value(s.as_raw());
        drop(s);
        let reuser = program(TINY).map_err(|e| describe("create", e))?;
        if !same_slot(stale, value(reuser.as_raw())) {
            return Err(
                "the handle table did not reuse the released slot; the stale-handle \
                        cases would test nothing"
                    .into(),
            );
        }
        Ok(Cpu {
            compiled,
            ptx_only,
            fresh,
            failed,
            released,
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

    // --- Strings the crate refuses: a NUL byte inside ------------------------
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
        "name expression contains a NUL byte",
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
        "name expression contains a NUL byte",
        |f, _| answer(f.compiled.lowered_name("store\0<int>")),
    );

    // --- Strings the library refuses ------------------------------------------
    c.add(
        "an empty program name",
        InvalidArgument,
        "name is empty",
        |_, _| answer(Program::new(TINY, "")),
    );
    c.add(
        "a program name longer than 64 KiB",
        InvalidArgument,
        "name is longer than 64 KiB",
        |_, _| answer(Program::new(TINY, &"k".repeat(70 * 1024))),
    );
    c.add(
        "an empty header name",
        InvalidArgument,
        "header_names[1] is empty",
        |_, _| {
            answer(Program::with_headers(
                TINY,
                "k.cu",
                &[("a.h", ""), ("", "int b;")],
            ))
        },
    );
    c.add(
        "an empty name expression",
        InvalidArgument,
        "expression is empty",
        |_, _| answer(new_program(TEMPLATE)?.add_name_expression("")),
    );
    c.add(
        "a name expression added after compiling",
        InvalidArgument,
        "before the program is compiled",
        |_, _| {
            let mut p = new_program(TEMPLATE)?;
            p.compile(&[COMPUTE])?;
            answer(p.add_name_expression("store<float>"))
        },
    );
    c.add(
        "an empty option",
        InvalidArgument,
        "options[0] is empty",
        |_, _| answer(new_program(TINY)?.compile(&["", COMPUTE])),
    );
    c.add(
        "an option of 100 KiB",
        InvalidArgument,
        "options[1] is longer than 64 KiB",
        |_, _| {
            let huge = format!("-D{}", "X".repeat(100 * 1024));
            answer(new_program(TINY)?.compile(&[COMPUTE, huge.as_str()]))
        },
    );
    c.add(
        "an empty lowered-name query",
        InvalidArgument,
        "expression is empty",
        |f, _| answer(f.compiled.lowered_name("")),
    );

    // --- Compiles NVRTC rejects --------------------------------------------
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
    c.add(
        "a failed program compiled again",
        InvalidArgument,
        "already compiled",
        |_, _| {
            let mut p = new_program("this is not C++")?;
            let _ = p.compile::<&str>(&[]);
            answer(p.compile(&[COMPUTE]))
        },
    );
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
        "an architecture that does not exist (sm_1)",
        Compile,
        "--gpu-architecture",
        |_, ctx| failed_compile(ctx, &mut new_program(TINY)?, &["--gpu-architecture=sm_1"]),
    );
    c.add(
        "an architecture from the future (sm_9999)",
        Compile,
        "--gpu-architecture",
        |_, ctx| {
            failed_compile(
                ctx,
                &mut new_program(TINY)?,
                &["--gpu-architecture=sm_9999"],
            )
        },
    );
    c.add(
        "a virtual architecture that does not exist (compute_1)",
        Compile,
        "--gpu-architecture",
        |_, ctx| {
            failed_compile(
                ctx,
                &mut new_program(TINY)?,
                &["--gpu-architecture=compute_1"],
            )
        },
    );
    c.add(
        "an option missing its value",
        Compile,
        "NVRTC rejected the options",
        |_, ctx| failed_compile(ctx, &mut new_program(TINY)?, &["--gpu-architecture"]),
    );
    c.add("an unknown C++ standard", Compile, "-std", |_, ctx| {
        failed_compile(ctx, &mut new_program(TINY)?, &[COMPUTE, "-std=c++99"])
    });
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
        "an undefined identifier",
        Compile,
        "undefined_identifier_xyz",
        |_, ctx| {
            let mut p = new_program(
                "extern \"C\" __global__ void k(int* x) { *x = undefined_identifier_xyz; }",
            )?;
            failed_compile(ctx, &mut p, &[COMPUTE])
        },
    );
    c.add(
        "a missing include",
        Compile,
        "missing_header.h",
        |_, ctx| {
            failed_compile(
                ctx,
                &mut new_program("#include \"missing_header.h\"\n")?,
                &[COMPUTE],
            )
        },
    );
    c.add(
        "an #error directive",
        Compile,
        "custom failure marker",
        |_, ctx| {
            failed_compile(
                ctx,
                &mut new_program("#error custom failure marker\n")?,
                &[COMPUTE],
            )
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
        "a name expression naming nothing",
        Compile,
        "no_such_template",
        |_, ctx| {
            let mut p = new_program(TEMPLATE)?;
            p.add_name_expression("no_such_template<int>")?;
            failed_compile(ctx, &mut p, &[COMPUTE])
        },
    );
    c.add(
        "a name expression that does not parse",
        Compile,
        "store<",
        |_, ctx| {
            let mut p = new_program(TEMPLATE)?;
            p.add_name_expression("store<")?;
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

    // --- Outputs that do not exist ----------------------------------------------
    c.add(
        "the lowered name of an expression never added",
        NotFound,
        "store<double>",
        |f, _| answer(f.compiled.lowered_name("store<double>")),
    );
    c.add(
        "a lowered name before compiling",
        NotFound,
        "no lowered name for 'store<int>'",
        |_, _| {
            let mut p = new_program(TEMPLATE)?;
            p.add_name_expression("store<int>")?;
            answer(p.lowered_name("store<int>"))
        },
    );
    c.add("PTX before compiling", NotFound, "compiled", |f, _| {
        answer(f.fresh.ptx())
    });
    c.add("CUBIN before compiling", NotFound, "compiled", |f, _| {
        answer(f.fresh.cubin())
    });
    c.add(
        "PTX after a failed compile",
        NotFound,
        "compiled",
        |f, _| answer(f.failed.ptx()),
    );
    c.add(
        "CUBIN after a failed compile",
        NotFound,
        "compiled",
        |f, _| answer(f.failed.cubin()),
    );
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

    // --- Program handles: NULL, released, stale (raw) ------------------------
    type ProgramCall = fn(sys::cuabi_program) -> sys::cuabi_status;
    let program_calls: [(&str, ProgramCall); 6] = [
        ("cuabi_program_add_name_expression", |p| unsafe {
            sys::cuabi_program_add_name_expression(p, c"store<int>".as_ptr())
        }),
        ("cuabi_program_compile", |p| unsafe {
            let options = [c"--gpu-architecture=sm_90".as_ptr()];
            sys::cuabi_program_compile(p, 1, options.as_ptr())
        }),
        ("cuabi_program_get_log", |p| unsafe {
            let mut n = 0;
            sys::cuabi_program_get_log(p, null_mut(), &mut n)
        }),
        ("cuabi_program_get_ptx", |p| unsafe {
            let mut n = 0;
            sys::cuabi_program_get_ptx(p, null_mut(), &mut n)
        }),
        ("cuabi_program_get_cubin", |p| unsafe {
            let mut n = 0;
            sys::cuabi_program_get_cubin(p, null_mut(), &mut n)
        }),
        ("cuabi_program_get_lowered_name", |p| unsafe {
            let mut n = 0;
            sys::cuabi_program_get_lowered_name(p, c"store<int>".as_ptr(), null_mut(), &mut n)
        }),
    ];
    for (call, f) in program_calls {
        c.add(
            format!("NULL program to {call}"),
            InvalidHandle,
            "program is NULL",
            move |_, ctx| raw(ctx, call, f(null_mut())),
        );
        c.add(
            format!("released program to {call}"),
            InvalidHandle,
            "program is not a live cuabi_program",
            move |fx, ctx| raw(ctx, call, f(handle(fx.released))),
        );
        c.add(
            format!("stale program (slot reused) to {call}"),
            InvalidHandle,
            "program is not a live cuabi_program",
            move |fx, ctx| {
                let ran = raw(ctx, call, f(handle(fx.stale)));
                ctx.expect(
                    fx.reuser.log().is_ok(),
                    "the live program that reused the slot stopped working",
                );
                ran
            },
        );
    }

    // --- Wrong kind: a live program handle where another kind is expected ----
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
        "a program handle as a module",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut out: sys::cuabi_function = handle(0x5a5a);
            let st = unsafe {
                sys::cuabi_module_get_function(
                    handle(f.compiled_value()),
                    c"tiny".as_ptr(),
                    &mut out,
                )
            };
            ctx.expect(
                value(out) == 0x5a5a,
                "out was written although the call failed",
            );
            raw(ctx, "cuabi_module_get_function", st)
        },
    );
    c.add(
        "a program handle as a function",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut n = 0;
            let st = unsafe {
                sys::cuabi_function_get_name(handle(f.compiled_value()), null_mut(), &mut n)
            };
            raw(ctx, "cuabi_function_get_name", st)
        },
    );
    c.add(
        "a program handle as a buffer",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut bytes = 777;
            let st = unsafe { sys::cuabi_buffer_get_size(handle(f.compiled_value()), &mut bytes) };
            ctx.expect(bytes == 777, "bytes was written although the call failed");
            raw(ctx, "cuabi_buffer_get_size", st)
        },
    );
    c.add(
        "a program handle as a host buffer",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut bytes = 0;
            let st =
                unsafe { sys::cuabi_host_buffer_get_size(handle(f.compiled_value()), &mut bytes) };
            raw(ctx, "cuabi_host_buffer_get_size", st)
        },
    );
    c.add(
        "a program handle as a stream",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let st = unsafe { sys::cuabi_stream_synchronize(handle(f.compiled_value())) };
            raw(ctx, "cuabi_stream_synchronize", st)
        },
    );
    c.add(
        "a program handle as an event",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let st = unsafe { sys::cuabi_event_query(handle(f.compiled_value())) };
            raw(ctx, "cuabi_event_query", st)
        },
    );
    c.add(
        "a program handle as a graph",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut n = 0;
            let st = unsafe { sys::cuabi_graph_get_node_count(handle(f.compiled_value()), &mut n) };
            raw(ctx, "cuabi_graph_get_node_count", st)
        },
    );
    c.add(
        "a program handle as a graph exec",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let st =
                unsafe { sys::cuabi_graph_exec_launch(handle(f.compiled_value()), null_mut()) };
            raw(ctx, "cuabi_graph_exec_launch", st)
        },
    );
    c.add(
        "a program handle as a launch plan",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let st = unsafe { sys::cuabi_launch_plan_launch(handle(f.compiled_value())) };
            raw(ctx, "cuabi_launch_plan_launch", st)
        },
    );
    c.add(
        "a program handle as the launch's function",
        InvalidHandle,
        "function is not a live cuabi_function",
        |f, ctx| {
            let config = sys::cuabi_launch_config_init();
            let st = unsafe {
                sys::cuabi_function_launch_packed(handle(f.compiled_value()), &config, null_mut(), null(), 0)
            };
            raw(ctx, "cuabi_function_launch_packed", st)
        },
    );
    c.add(
        "a program handle as the compile's device",
        InvalidHandle,
        "device is not a live cuabi_device",
        |f, ctx| {
            let mut desc = sys::cuabi_compile_desc_init();
            desc.source = c"int x;".as_ptr();
            let mut out = null_mut();
            let st =
                unsafe { sys::cuabi_module_compile(handle(f.compiled_value()), &desc, &mut out) };
            raw(ctx, "cuabi_module_compile", st)
        },
    );
    c.add(
        "a program handle as a plan's function",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut out: sys::cuabi_launch_plan = handle(0x31);
            let st = unsafe {
                sys::cuabi_launch_plan_create(
                    handle(f.compiled_value()),
                    null(),
                    null_mut(),
                    &mut out,
                )
            };
            ctx.expect(
                value(out) == 0x31,
                "out was written although the call failed",
            );
            raw(ctx, "cuabi_launch_plan_create", st)
        },
    );
    c.add(
        "a program handle with its kind bits forged to a module",
        InvalidHandle,
        "module is not a live cuabi_module",
        |f, ctx| {
            let mut out = null_mut();
            let forged = with_kind(f.compiled_value(), 3);
            let st = unsafe {
                sys::cuabi_module_get_function(handle(forged), c"tiny".as_ptr(), &mut out)
            };
            raw(ctx, "cuabi_module_get_function", st)
        },
    );

    // --- NULL handles of every other kind (raw) ----------------------------------
    c.add("NULL device", InvalidHandle, "device is NULL", |_, ctx| {
        let mut ordinal = 0;
        raw(ctx, "cuabi_device_get_ordinal", unsafe {
            sys::cuabi_device_get_ordinal(null_mut(), &mut ordinal)
        })
    });
    c.add(
        "NULL device to reset",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_device_reset", unsafe {
                sys::cuabi_device_reset(null_mut())
            })
        },
    );
    c.add(
        "NULL device to allocate on",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let mut out = null_mut();
            raw(ctx, "cuabi_buffer_alloc", unsafe {
                sys::cuabi_buffer_alloc(null_mut(), 16, &mut out)
            })
        },
    );
    c.add(
        "NULL device to load a module on",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_module_load_data(null_mut(), c"x".as_ptr().cast(), 1, &mut out)
            };
            raw(ctx, "cuabi_module_load_data", st)
        },
    );
    c.add("NULL module", InvalidHandle, "module is NULL", |_, ctx| {
        let mut out = null_mut();
        let st = unsafe { sys::cuabi_module_get_function(null_mut(), c"tiny".as_ptr(), &mut out) };
        raw(ctx, "cuabi_module_get_function", st)
    });
    c.add(
        "NULL function",
        InvalidHandle,
        "function is NULL",
        |_, ctx| {
            let mut n = 0;
            raw(ctx, "cuabi_function_get_param_count", unsafe {
                sys::cuabi_function_get_param_count(null_mut(), &mut n)
            })
        },
    );
    c.add(
        "NULL function to launch",
        InvalidHandle,
        "function is NULL",
        |_, ctx| {
            let config = sys::cuabi_launch_config_init();
            let st = unsafe { sys::cuabi_function_launch(null_mut(), &config, null_mut(), null(), 0) };
            raw(ctx, "cuabi_function_launch", st)
        },
    );
    c.add("NULL buffer", InvalidHandle, "buffer is NULL", |_, ctx| {
        let mut p = 0;
        raw(ctx, "cuabi_buffer_get_pointer", unsafe {
            sys::cuabi_buffer_get_pointer(null_mut(), &mut p)
        })
    });
    c.add(
        "NULL destination buffer",
        InvalidHandle,
        "dst is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_buffer_copy", unsafe {
                sys::cuabi_buffer_copy(null_mut(), 0, null_mut(), 0, 4)
            })
        },
    );
    c.add(
        "NULL source buffer",
        InvalidHandle,
        "src is NULL",
        |_, ctx| {
            let mut b = [0u8; 4];
            let st =
                unsafe { sys::cuabi_buffer_copy_to_host(null_mut(), 0, b.as_mut_ptr().cast(), 4) };
            raw(ctx, "cuabi_buffer_copy_to_host", st)
        },
    );
    c.add(
        "NULL host buffer",
        InvalidHandle,
        "buffer is NULL",
        |_, ctx| {
            let mut p = null_mut();
            raw(ctx, "cuabi_host_buffer_get_pointer", unsafe {
                sys::cuabi_host_buffer_get_pointer(null_mut(), &mut p)
            })
        },
    );
    c.add("NULL stream", InvalidHandle, "stream is NULL", |_, ctx| {
        raw(ctx, "cuabi_stream_query", unsafe {
            sys::cuabi_stream_query(null_mut())
        })
    });
    c.add(
        "NULL stream to wait on an event",
        InvalidHandle,
        "stream is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_stream_wait_event", unsafe {
                sys::cuabi_stream_wait_event(null_mut(), null_mut())
            })
        },
    );
    c.add("NULL event", InvalidHandle, "event is NULL", |_, ctx| {
        raw(ctx, "cuabi_event_synchronize", unsafe {
            sys::cuabi_event_synchronize(null_mut())
        })
    });
    c.add(
        "NULL start event",
        InvalidHandle,
        "start is NULL",
        |_, ctx| {
            let mut ms = 0f32;
            raw(ctx, "cuabi_event_get_elapsed_ms", unsafe {
                sys::cuabi_event_get_elapsed_ms(null_mut(), null_mut(), &mut ms)
            })
        },
    );
    c.add("NULL graph", InvalidHandle, "graph is NULL", |_, ctx| {
        let mut out = null_mut();
        raw(ctx, "cuabi_graph_instantiate", unsafe {
            sys::cuabi_graph_instantiate(null_mut(), &mut out)
        })
    });
    c.add(
        "NULL graph exec",
        InvalidHandle,
        "exec is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_graph_exec_launch", unsafe {
                sys::cuabi_graph_exec_launch(null_mut(), null_mut())
            })
        },
    );
    c.add("NULL plan", InvalidHandle, "plan is NULL", |_, ctx| {
        let mut sentinel = 0u8;
        let mut args: *mut c_void = (&mut sentinel as *mut u8).cast();
        let before = args;
        let mut n = 77;
        let st = unsafe { sys::cuabi_launch_plan_get_args(null_mut(), &mut args, &mut n) };
        ctx.expect(
            args == before && n == 77,
            "out-parameters written on failure",
        );
        raw(ctx, "cuabi_launch_plan_get_args", st)
    });
    c.add(
        "NULL plan to launch",
        InvalidHandle,
        "plan is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_launch_plan_launch", unsafe {
                sys::cuabi_launch_plan_launch(null_mut())
            })
        },
    );
    c.add(
        "a plan of a NULL function",
        InvalidHandle,
        "function is NULL",
        |_, ctx| {
            let config = sys::cuabi_launch_config_init();
            let mut out: sys::cuabi_launch_plan = handle(0x31);
            let st =
                unsafe { sys::cuabi_launch_plan_create(null_mut(), &config, null_mut(), &mut out) };
            ctx.expect(
                value(out) == 0x31,
                "out was written although the call failed",
            );
            raw(ctx, "cuabi_launch_plan_create", st)
        },
    );

    // --- Made-up handle values (raw) --------------------------------------------
    static HOST_SLOT: u64 = 0;
    type MadeUp = fn(&Cpu) -> u64;
    let fakes: [(&str, MadeUp); 7] = [
        ("the value 1", |_| 1),
        ("0xdeadbeef", |_| 0xdead_beef),
        ("all bits set", |_| u64::MAX),
        ("generation 0 with the program kind", |_| 2 << 24),
        ("a never-used slot index", |_| {
            (1 << 32) | (2 << 24) | 0xFF_FFFE
        }),
        ("a live handle's generation plus one", |f| {
            f.compiled_value() + (1 << 32)
        }),
        ("a host pointer", |_| {
            (&HOST_SLOT as *const u64).addr() as u64
        }),
    ];
    for (what, make) in fakes {
        c.add(
            format!("a made-up program handle: {what}"),
            InvalidHandle,
            "program is not a live cuabi_program",
            move |f, ctx| {
                let v = make(f);
                let mut n = 0;
                raw(ctx, "cuabi_program_get_log", unsafe {
                    sys::cuabi_program_get_log(handle(v), null_mut(), &mut n)
                })
            },
        );
    }
    c.add(
        "a made-up plan handle",
        InvalidHandle,
        "plan is not a live cuabi_launch_plan",
        |_, ctx| {
            let (mut args, mut n) = (null_mut(), 0);
            let v = (1 << 32) | (11 << 24);
            raw(ctx, "cuabi_launch_plan_get_args", unsafe {
                sys::cuabi_launch_plan_get_args(handle(v), &mut args, &mut n)
            })
        },
    );

    // --- Release: twice, through the wrong kind, NULL, made up (raw) -----------
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
        "a live program released through every other kind's release, then used as a module",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let v = value(f.reuser.as_raw());
            unsafe {
                sys::cuabi_device_release(handle(v));
                sys::cuabi_module_release(handle(v));
                sys::cuabi_function_release(handle(v));
                sys::cuabi_buffer_release(handle(v));
                sys::cuabi_host_buffer_release(handle(v));
                sys::cuabi_stream_release(handle(v));
                sys::cuabi_event_release(handle(v));
                sys::cuabi_graph_release(handle(v));
                sys::cuabi_graph_exec_release(handle(v));
                sys::cuabi_launch_plan_release(handle(v));
            }
            // The same slot and generation with forged kind bits.
            for kind in (1..=11u64).filter(|&k| k != 2) {
                unsafe {
                    sys::cuabi_module_release(handle(with_kind(v, kind)));
                    sys::cuabi_program_release(handle(with_kind(v, kind)));
                }
            }
            ctx.expect(f.reuser.log().is_ok(), "the program died");
            let mut out = null_mut();
            raw(ctx, "cuabi_module_get_function", unsafe {
                sys::cuabi_module_get_function(handle(v), c"tiny".as_ptr(), &mut out)
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
        "made-up and stale values to every release leave the live one and the last error alone",
        InvalidHandle,
        "cuabi_program_get_log: program is NULL",
        |f, ctx| {
            plant_last_error();
            let values = [
                1,
                0xdead_beef,
                u64::MAX,
                (1 << 32) | (2 << 24) | 77,
                f.released,
                f.stale,
            ];
            for v in values {
                release_as_every_kind(v);
            }
            let ran = last_error(ctx);
            // The stale value's slot belongs to a live program: still alive.
            ctx.expect(
                f.reuser.log().is_ok(),
                "releasing a stale value released the live program in its slot",
            );
            ran
        },
    );

    // --- Program creation and compile arguments (raw) ---------------------------
    c.add(
        "a NULL source",
        InvalidArgument,
        "source is NULL",
        |_, ctx| {
            let mut out: sys::cuabi_program = handle(0x77);
            let st =
                unsafe { sys::cuabi_program_create(null(), null(), 0, null(), null(), &mut out) };
            ctx.expect(
                value(out) == 0x77,
                "out was written although the call failed",
            );
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "a NULL out-parameter to create",
        InvalidArgument,
        "out is NULL",
        |_, ctx| {
            let st = unsafe {
                sys::cuabi_program_create(c"int x;".as_ptr(), null(), 0, null(), null(), null_mut())
            };
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "headers counted but their arrays NULL",
        InvalidArgument,
        "num_headers is 2",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_program_create(c"int x;".as_ptr(), null(), 2, null(), null(), &mut out)
            };
            let _owned = Raw(out, sys::cuabi_program_release);
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "a NULL header name",
        InvalidArgument,
        "header_names[1] is NULL",
        |_, ctx| {
            let sources = [c"int a;".as_ptr(), c"int b;".as_ptr()];
            let names = [c"a.h".as_ptr(), null()];
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_program_create(
                    c"int x;".as_ptr(),
                    null(),
                    2,
                    sources.as_ptr(),
                    names.as_ptr(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_program_release);
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "a NULL header source",
        InvalidArgument,
        "header_sources[0] is NULL",
        |_, ctx| {
            let sources = [null()];
            let names = [c"a.h".as_ptr()];
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_program_create(
                    c"int x;".as_ptr(),
                    null(),
                    1,
                    sources.as_ptr(),
                    names.as_ptr(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_program_release);
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "a header count of usize::MAX",
        InvalidArgument,
        "num_headers is 18446744073709551615, implausibly large",
        |_, ctx| {
            // Arrays long enough that no read goes past them whatever the order
            // of the checks.
            let mut sources = vec![c"int a;".as_ptr(); 5000];
            let mut names = vec![c"a.h".as_ptr(); 5000];
            *sources.last_mut().unwrap() = null();
            *names.last_mut().unwrap() = null();
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_program_create(
                    c"int x;".as_ptr(),
                    null(),
                    usize::MAX,
                    sources.as_ptr(),
                    names.as_ptr(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_program_release);
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "options NULL with a count",
        InvalidArgument,
        "num_options is 2",
        |_, ctx| {
            let p = new_program(TINY)?;
            raw(ctx, "cuabi_program_compile", unsafe {
                sys::cuabi_program_compile(p.as_raw(), 2, null())
            })
        },
    );
    c.add(
        "a NULL option",
        InvalidArgument,
        "options[1] is NULL",
        |_, ctx| {
            let p = new_program(TINY)?;
            let options = [c"--gpu-architecture=compute_90".as_ptr(), null()];
            raw(ctx, "cuabi_program_compile", unsafe {
                sys::cuabi_program_compile(p.as_raw(), 2, options.as_ptr())
            })
        },
    );
    c.add(
        "an option count of usize::MAX",
        InvalidArgument,
        "num_options is 18446744073709551615, implausibly large",
        |_, ctx| {
            let p = new_program(TINY)?;
            let mut options = vec![c"-w".as_ptr(); 5000];
            *options.last_mut().unwrap() = null();
            raw(ctx, "cuabi_program_compile", unsafe {
                sys::cuabi_program_compile(p.as_raw(), usize::MAX, options.as_ptr())
            })
        },
    );
    c.add(
        "a NULL name expression",
        InvalidArgument,
        "expression is NULL",
        |_, ctx| {
            let p = new_program(TEMPLATE)?;
            raw(ctx, "cuabi_program_add_name_expression", unsafe {
                sys::cuabi_program_add_name_expression(p.as_raw(), null())
            })
        },
    );
    c.add(
        "a NULL lowered-name query",
        InvalidArgument,
        "expression is NULL",
        |f, ctx| {
            let mut n = 0;
            raw(ctx, "cuabi_program_get_lowered_name", unsafe {
                sys::cuabi_program_get_lowered_name(f.compiled.as_raw(), null(), null_mut(), &mut n)
            })
        },
    );

    // --- Outputs and two-call sizes (raw) ----------------------------------------
    c.add(
        "a log with size NULL",
        InvalidArgument,
        "size is NULL",
        |f, ctx| {
            raw(ctx, "cuabi_program_get_log", unsafe {
                sys::cuabi_program_get_log(f.compiled.as_raw(), null_mut(), null_mut())
            })
        },
    );
    c.add(
        "PTX with size NULL",
        InvalidArgument,
        "size is NULL",
        |f, ctx| {
            raw(ctx, "cuabi_program_get_ptx", unsafe {
                sys::cuabi_program_get_ptx(f.compiled.as_raw(), null_mut(), null_mut())
            })
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
    c.add(
        "a CUBIN into a buffer one byte short",
        InsufficientBuffer,
        "are needed",
        |f, ctx| {
            let mut n = 0;
            unsafe { sys::cuabi_program_get_cubin(f.compiled.as_raw(), null_mut(), &mut n) };
            let mut buf = vec![0x5cu8; n];
            let mut short = n.saturating_sub(1);
            let st = unsafe {
                sys::cuabi_program_get_cubin(
                    f.compiled.as_raw(),
                    buf.as_mut_ptr().cast(),
                    &mut short,
                )
            };
            ctx.expect(
                buf.iter().all(|&b| b == 0x5c),
                "a too-small buffer was written",
            );
            ctx.expect(short == n, "*size does not hold the size needed");
            raw(ctx, "cuabi_program_get_cubin", st)
        },
    );
    c.add(
        "a lowered name into a 1-byte buffer",
        InsufficientBuffer,
        "are needed",
        |f, ctx| {
            let mut buf = [b'#' as c_char; 1];
            let mut n = 1;
            let st = unsafe {
                sys::cuabi_program_get_lowered_name(
                    f.compiled.as_raw(),
                    c"store<int>".as_ptr(),
                    buf.as_mut_ptr(),
                    &mut n,
                )
            };
            ctx.expect(buf[0] == b'#' as c_char, "a too-small buffer was written");
            ctx.expect(n > 1, "*size does not hold the size needed");
            raw(ctx, "cuabi_program_get_lowered_name", st)
        },
    );
    c.add(
        "NVRTC's version into NULL",
        InvalidArgument,
        "major is NULL",
        |_, ctx| {
            let mut minor = 0;
            raw(ctx, "cuabi_nvrtc_get_version", unsafe {
                sys::cuabi_nvrtc_get_version(null_mut(), &mut minor)
            })
        },
    );
    c.add(
        "NVRTC's path with size NULL",
        InvalidArgument,
        "size is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_nvrtc_get_path", unsafe {
                sys::cuabi_nvrtc_get_path(null_mut(), null_mut())
            })
        },
    );
    c.add(
        "the driver's version into NULL",
        InvalidArgument,
        "version is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_driver_get_version", unsafe {
                sys::cuabi_driver_get_version(null_mut())
            })
        },
    );
    c.add(
        "the device count into NULL",
        InvalidArgument,
        "count is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_device_get_count", unsafe {
                sys::cuabi_device_get_count(null_mut())
            })
        },
    );
    c.add(
        "a device into NULL",
        InvalidArgument,
        "out is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_device_get", unsafe {
                sys::cuabi_device_get(0, null_mut())
            })
        },
    );

    // --- Strings that are not UTF-8 (raw: a &str cannot hold them) ---------------
    /// A raw program from NUL-terminated bytes.
    fn raw_program(ctx: &mut Ctx, source: &CStr) -> Result<Raw<sys::cuabi_program_s>, Setup> {
        let mut p = null_mut();
        let st = unsafe {
            sys::cuabi_program_create(
                source.as_ptr(),
                c"corpus.cu".as_ptr(),
                0,
                null(),
                null(),
                &mut p,
            )
        };
        if st != 0 {
            return Err(format!("create: {}", last_message(ctx)).into());
        }
        Ok(Raw(p, sys::cuabi_program_release))
    }
    /// Compiles `p`, whose compile must fail; its log must be UTF-8.
    fn raw_compile(ctx: &mut Ctx, p: &Raw<sys::cuabi_program_s>) -> Ran {
        let options = [c"--gpu-architecture=compute_90".as_ptr()];
        let st = unsafe { sys::cuabi_program_compile(p.0, 1, options.as_ptr()) };
        let ran = raw(ctx, "cuabi_program_compile", st);
        let mut n = 0;
        unsafe { sys::cuabi_program_get_log(p.0, null_mut(), &mut n) };
        let mut log = vec![0u8; n];
        unsafe { sys::cuabi_program_get_log(p.0, log.as_mut_ptr().cast(), &mut n) };
        log.truncate(n.saturating_sub(1));
        ctx.expect(
            std::str::from_utf8(&log).is_ok(),
            "the compile log is not UTF-8",
        );
        ran
    }
    c.add(
        "invalid UTF-8 inside an identifier",
        Compile,
        "could not compile",
        |_, ctx| {
            let p = raw_program(ctx, c"__global__ void k\xff\xfe(int* x) { *x = 1; }\n")?;
            raw_compile(ctx, &p)
        },
    );
    c.add(
        "invalid UTF-8 inside a string literal",
        Compile,
        "could not compile",
        |_, ctx| {
            let p = raw_program(
                ctx,
                c"__global__ void k(char* x) { const char* s = \"\xff\xfe\"; *x = s[0]; }\n",
            )?;
            raw_compile(ctx, &p)
        },
    );
    c.add(
        "a surrogate (CESU) and an overlong NUL in an #error",
        Compile,
        "could not compile",
        |_, ctx| {
            let p = raw_program(ctx, c"#error bad \xed\xa0\x80 and \xc0\x80 here\n")?;
            raw_compile(ctx, &p)
        },
    );
    c.add(
        "a program name that is not UTF-8",
        InvalidArgument,
        "name is not valid UTF-8",
        |_, ctx| {
            let mut p = null_mut();
            let st = unsafe {
                sys::cuabi_program_create(
                    c"int x;".as_ptr(),
                    c"bad\xff\xfename.cu".as_ptr(),
                    0,
                    null(),
                    null(),
                    &mut p,
                )
            };
            let _owned = Raw(p, sys::cuabi_program_release);
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "a header name that is not UTF-8",
        InvalidArgument,
        "header_names[0] is not valid UTF-8",
        |_, ctx| {
            let sources = [c"int broken(;\n".as_ptr()];
            let names = [c"bad\xff.h".as_ptr()];
            let mut p = null_mut();
            let st = unsafe {
                sys::cuabi_program_create(
                    c"#include \"bad\xff.h\"\n".as_ptr(),
                    null(),
                    1,
                    sources.as_ptr(),
                    names.as_ptr(),
                    &mut p,
                )
            };
            let _owned = Raw(p, sys::cuabi_program_release);
            raw(ctx, "cuabi_program_create", st)
        },
    );
    c.add(
        "an option that is not UTF-8",
        InvalidArgument,
        "options[0] is not valid UTF-8",
        |_, ctx| {
            let p = new_program(TINY)?;
            let options = [c"-D\xff\xfe=1".as_ptr()];
            raw(ctx, "cuabi_program_compile", unsafe {
                sys::cuabi_program_compile(p.as_raw(), 1, options.as_ptr())
            })
        },
    );
    c.add(
        "an architecture value that is not UTF-8",
        InvalidArgument,
        "options[0] is not valid UTF-8",
        |_, ctx| {
            let p = new_program(TINY)?;
            let options = [c"--gpu-architecture=sm_\xff".as_ptr()];
            raw(ctx, "cuabi_program_compile", unsafe {
                sys::cuabi_program_compile(p.as_raw(), 1, options.as_ptr())
            })
        },
    );
    c.add(
        "a name expression that is not UTF-8",
        InvalidArgument,
        "expression is not valid UTF-8",
        |_, ctx| {
            let p = new_program(TEMPLATE)?;
            raw(ctx, "cuabi_program_add_name_expression", unsafe {
                sys::cuabi_program_add_name_expression(p.as_raw(), c"store<\xff>".as_ptr())
            })
        },
    );
    c.add(
        "a lowered-name query that is not UTF-8",
        InvalidArgument,
        "expression is not valid UTF-8",
        |f, ctx| {
            let mut n = 0;
            raw(ctx, "cuabi_program_get_lowered_name", unsafe {
                sys::cuabi_program_get_lowered_name(
                    f.compiled.as_raw(),
                    c"store<\xc0\x80>".as_ptr(),
                    null_mut(),
                    &mut n,
                )
            })
        },
    );
    c.add(
        "a kernel name that is not UTF-8 (the module handle is checked first)",
        InvalidHandle,
        "module is NULL",
        |_, ctx| {
            let mut out = null_mut();
            raw(ctx, "cuabi_module_get_function", unsafe {
                sys::cuabi_module_get_function(null_mut(), c"k\xff".as_ptr(), &mut out)
            })
        },
    );
    c.add(
        "a module path that is not UTF-8 (the device handle is checked first)",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let mut out = null_mut();
            raw(ctx, "cuabi_module_load_file", unsafe {
                sys::cuabi_module_load_file(null_mut(), c"/tmp/\xff.cubin".as_ptr(), &mut out)
            })
        },
    );

    // --- Launches without a live function (raw) ------------------------------------
    c.add(
        "a sized launch of a made-up function",
        InvalidHandle,
        "function is not a live cuabi_function",
        |_, ctx| {
            let config = sys::cuabi_launch_config_init();
            let mut a = 1f32;
            let params = [(&mut a as *mut f32).cast::<c_void>()];
            let sizes = [4usize];
            let made_up = (1 << 32) | (4 << 24) | 3;
            raw(ctx, "cuabi_function_launch_sized", unsafe {
                sys::cuabi_function_launch_sized(
                    handle(made_up),
                    &config,
                    null_mut(),
                    params.as_ptr(),
                    sizes.as_ptr(),
                    1,
                )
            })
        },
    );
    c.add(
        "a launch with every pointer NULL",
        InvalidHandle,
        "function is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_function_launch", unsafe {
                sys::cuabi_function_launch(null_mut(), null(), null_mut(), null(), 5)
            })
        },
    );
    c.add(
        "a packed launch of a made-up function, config and args NULL",
        InvalidHandle,
        "function is not a live cuabi_function",
        |_, ctx| {
            raw(ctx, "cuabi_function_launch_packed", unsafe {
                sys::cuabi_function_launch_packed(
                    handle(0xdead_beef),
                    null(),
                    null_mut(),
                    null(),
                    usize::MAX,
                )
            })
        },
    );
    c.add(
        "a compile on a NULL device with a NULL description",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let mut out = null_mut();
            raw(ctx, "cuabi_module_compile", unsafe {
                sys::cuabi_module_compile(null_mut(), null(), &mut out)
            })
        },
    );
    c
}

// ---------------------------------------------------------------------------
// The part that needs a GPU
// ---------------------------------------------------------------------------

/// What the GPU cases share; a case that changes an object makes its own.
struct Gpu {
    device: Device,
    saxpy_module: Module,
    saxpy: Function,
    /// `fill_shared`, `corpus_counter` and the `store` template, compiled
    /// without name expressions.
    util: Module,
    stream: Stream,
    /// A non-blocking stream for captures, the buffer they fill, and a graph
    /// of such a fill.
    capture_stream: Stream,
    capture_target: Mutex<DeviceBuffer<u8>>,
    graph: Graph,
    total_memory: usize,
    max_optin_shared: i32,
    /// SAXPY for the device's architecture.
    cubin: Vec<u8>,
    ptx: String,
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
        let capture_stream = device
            .create_stream_with(StreamFlags::NON_BLOCKING, 0)
            .map_err(step("capture stream"))?;
        let mut target = device
            .alloc_zeroed::<u8>(256)
            .map_err(step("capture target"))?;
        device.synchronize().map_err(step("synchronize"))?;
        let graph = capture_fill(&capture_stream, &mut target).map_err(step("capture"))?;
        let total_memory = device.total_memory().map_err(step("total memory"))?;
        // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        let max_optin_shared = device.attribute(97).map_err(step("attribute 97"))?;
        let (major, minor) = device
            .compute_capability()
            .map_err(step("compute capability"))?;
        let arch = major * 10 + minor;
        let mut cubin_program = Program::new(SAXPY, "saxpy.cu").map_err(step("program"))?;
        cubin_program
            .compile(&[format!("--gpu-architecture=sm_{arch}")])
            .map_err(step("compile SAXPY to CUBIN"))?;
        let cubin = cubin_program.cubin().map_err(step("CUBIN"))?;
        let mut ptx_program = Program::new(SAXPY, "saxpy.cu").map_err(step("program"))?;
        ptx_program
            .compile(&[format!("--gpu-architecture=compute_{arch}")])
            .map_err(step("compile SAXPY to PTX"))?;
        let ptx = ptx_program.ptx().map_err(step("PTX"))?;
        Ok(Gpu {
            device,
            saxpy_module,
            saxpy,
            util,
            stream,
            capture_stream,
            capture_target: Mutex::new(target),
            graph,
            total_memory,
            max_optin_shared,
            cubin,
            ptx,
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

/// A graph of one fill of `target`, captured from `stream`.
fn capture_fill(stream: &Stream, target: &mut DeviceBuffer<u8>) -> cuabi::Result<Graph> {
    stream.begin_capture(CaptureMode::ThreadLocal)?;
    // SAFETY: the target outlives every launch of the graph (the fixture
    // holds both).
    let queued = unsafe { target.fill_bytes_async(7, stream) };
    // End the capture even when queuing failed, so the stream works again.
    let graph = stream.end_capture();
    queued?;
    graph
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

/// Launches SAXPY over the 16 elements of `buffer` (x, y and out at once)
/// with `config`; a run would turn its 1.0s into 3.0s.
fn launch_saxpy(function: &Function, config: LaunchConfig, buffer: &DeviceBuffer<f32>) -> Ran {
    let (a, n) = (2.0f32, 16usize);
    // SAFETY: 16 elements of one live buffer, read and written in place.
    answer(unsafe {
        function
            .launch(config)
            .arg(&a)
            .arg(buffer)
            .arg(buffer)
            .arg(buffer)
            .arg(&n)
            .run()
    })
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

fn raw_config(grid: u32, block: u32) -> sys::cuabi_launch_config {
    let mut config = sys::cuabi_launch_config_init();
    config.grid_x = grid;
    config.block_x = block;
    config
}

/// Bytes placed so that they end where an unreadable page begins: a read
/// past their length faults instead of passing unseen (on Linux; elsewhere
/// they are only copied).
struct Guarded {
    #[cfg(target_os = "linux")]
    mapping: mapping::Mapping,
    #[cfg(not(target_os = "linux"))]
    bytes: Vec<u8>,
}

#[cfg(target_os = "linux")]
mod mapping {
    use std::ffi::c_void;

    extern "C" {
        fn mmap(
            a: *mut c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            off: i64,
        ) -> *mut c_void;
        fn mprotect(a: *mut c_void, len: usize, prot: i32) -> i32;
        fn munmap(a: *mut c_void, len: usize) -> i32;
        fn sysconf(name: i32) -> i64;
    }
    const PROT_NONE: i32 = 0;
    const PROT_READ_WRITE: i32 = 1 | 2;
    const MAP_PRIVATE_ANONYMOUS: i32 = 0x02 | 0x20;
    const SC_PAGESIZE: i32 = 30;

    /// Readable pages followed by one page that is not.
    pub struct Mapping {
        base: *mut u8,
        /// Bytes of the readable part.
        pub room: usize,
        span: usize,
    }

    impl Mapping {
        pub fn new(capacity: usize) -> Option<Mapping> {
            let page = usize::try_from(unsafe { sysconf(SC_PAGESIZE) }).ok()?;
            let room = capacity.max(1).div_ceil(page) * page;
            let span = room + page;
            let flags = MAP_PRIVATE_ANONYMOUS;
            let base = unsafe { mmap(std::ptr::null_mut(), span, PROT_READ_WRITE, flags, -1, 0) };
            if base.addr() == usize::MAX || base.is_null() {
                return None;
            }
            let mapping = Mapping {
                base: base.cast(),
                room,
                span,
            };
            let guard = unsafe { mapping.base.add(room) };
            (unsafe { mprotect(guard.cast(), page, PROT_NONE) } == 0).then_some(mapping)
        }

        /// Where the unreadable page begins.
        pub fn guard(&self) -> *mut u8 {
            unsafe { self.base.add(self.room) }
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            unsafe { munmap(self.base.cast(), self.span) };
        }
    }
}

impl Guarded {
    /// Room for up to `capacity` bytes before the unreadable page.
    fn new(capacity: usize) -> Result<Guarded, Setup> {
        #[cfg(target_os = "linux")]
        let guarded = Guarded {
            mapping: mapping::Mapping::new(capacity).ok_or("mmap or mprotect failed")?,
        };
        #[cfg(not(target_os = "linux"))]
        let guarded = Guarded {
            bytes: Vec::with_capacity(capacity),
        };
        Ok(guarded)
    }

    /// `bytes`, copied to end right before the unreadable page.
    fn place(&mut self, bytes: &[u8]) -> &[u8] {
        #[cfg(target_os = "linux")]
        {
            assert!(
                bytes.len() <= self.mapping.room,
                "no room for {} bytes",
                bytes.len()
            );
            // SAFETY: `bytes.len()` writable bytes before the guard page,
            // borrowed from `self` until the next placement.
            unsafe {
                let start = self.mapping.guard().sub(bytes.len());
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
                std::slice::from_raw_parts(start, bytes.len())
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.bytes = bytes.to_vec();
            &self.bytes
        }
    }
}

/// One kind of handle for the raw handle cases: how to make one (the only
/// handle its call makes, so that a release and the next make share a slot),
/// a raw call that uses a value as that kind, and its release.
#[derive(Clone, Copy)]
struct HandleKind {
    /// `cuabi_buffer`, ...
    kind: &'static str,
    /// The argument's name in the library's messages.
    what: &'static str,
    call: &'static str,
    make: fn(&Gpu) -> Result<Made, Setup>,
    use_as: fn(u64) -> sys::cuabi_status,
    release: fn(u64),
}

/// An object that owns a handle, and the handle's value.
type Made = (Box<dyn Any>, u64);

fn made<T: 'static>(object: T, raw: u64) -> Result<Made, Setup> {
    Ok((Box::new(object), raw))
}

const HANDLE_KINDS: [HandleKind; 10] = [
    HandleKind {
        kind: "cuabi_device",
        what: "device",
        call: "cuabi_device_get_ordinal",
        make: |_| {
            let d = Device::get(0)?;
            let v = value(d.as_raw());
            made(d, v)
        },
        use_as: |v| unsafe { sys::cuabi_device_get_ordinal(handle(v), &mut 0) },
        release: |v| unsafe { sys::cuabi_device_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_module",
        what: "module",
        call: "cuabi_module_get_from_cache",
        make: |g| {
            let m = g
                .device
                .compile(SAXPY, &CompileOptions::new().name("saxpy.cu"))?;
            let v = value(m.as_raw());
            made(m, v)
        },
        use_as: |v| unsafe { sys::cuabi_module_get_from_cache(handle(v), &mut 0) },
        release: |v| unsafe { sys::cuabi_module_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_function",
        what: "function",
        call: "cuabi_function_get_param_count",
        make: |g| {
            let f = g.saxpy_module.function("saxpy")?;
            let v = value(f.as_raw());
            made(f, v)
        },
        use_as: |v| unsafe { sys::cuabi_function_get_param_count(handle(v), &mut 0) },
        release: |v| unsafe { sys::cuabi_function_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_buffer",
        what: "buffer",
        call: "cuabi_buffer_get_size",
        make: |g| {
            let b = g.device.alloc::<u8>(64)?;
            let v = value(b.as_raw());
            made(b, v)
        },
        use_as: |v| unsafe { sys::cuabi_buffer_get_size(handle(v), &mut 0) },
        release: |v| unsafe { sys::cuabi_buffer_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_host_buffer",
        what: "buffer",
        call: "cuabi_host_buffer_get_size",
        make: |g| {
            let b = g.device.alloc_pinned::<u8>(64)?;
            let v = value(b.as_raw());
            made(b, v)
        },
        use_as: |v| unsafe { sys::cuabi_host_buffer_get_size(handle(v), &mut 0) },
        release: |v| unsafe { sys::cuabi_host_buffer_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_stream",
        what: "stream",
        call: "cuabi_stream_synchronize",
        make: |g| {
            let s = g.device.create_stream()?;
            let v = value(s.as_raw());
            made(s, v)
        },
        use_as: |v| unsafe { sys::cuabi_stream_synchronize(handle(v)) },
        release: |v| unsafe { sys::cuabi_stream_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_event",
        what: "event",
        call: "cuabi_event_synchronize",
        make: |g| {
            let e = g.device.create_event()?;
            let v = value(e.as_raw());
            made(e, v)
        },
        use_as: |v| unsafe { sys::cuabi_event_synchronize(handle(v)) },
        release: |v| unsafe { sys::cuabi_event_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_graph",
        what: "graph",
        call: "cuabi_graph_get_node_count",
        make: |g| {
            let mut target = g.capture_target.lock().unwrap_or_else(|e| e.into_inner());
            let graph = capture_fill(&g.capture_stream, &mut target)?;
            let v = value(graph.as_raw());
            made(graph, v)
        },
        use_as: |v| unsafe { sys::cuabi_graph_get_node_count(handle(v), &mut 0) },
        release: |v| unsafe { sys::cuabi_graph_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_graph_exec",
        what: "exec",
        call: "cuabi_graph_exec_launch",
        make: |g| {
            let exec = g.graph.instantiate()?;
            let v = value(exec.as_raw());
            made(exec, v)
        },
        // Runs the fill of the fixture's target on the default stream.
        use_as: |v| unsafe { sys::cuabi_graph_exec_launch(handle(v), null_mut()) },
        release: |v| unsafe { sys::cuabi_graph_exec_release(handle(v)) },
    },
    HandleKind {
        kind: "cuabi_launch_plan",
        what: "plan",
        call: "cuabi_launch_plan_get_args",
        make: |g| {
            let plan = g.saxpy.plan(LaunchConfig::new(1, 32), None)?;
            let v = value(plan.as_raw());
            made(plan, v)
        },
        use_as: |v| unsafe { sys::cuabi_launch_plan_get_args(handle(v), &mut null_mut(), &mut 0) },
        release: |v| unsafe { sys::cuabi_launch_plan_release(handle(v)) },
    },
];

fn gpu_cases() -> Cases<Gpu> {
    let mut c = Cases::<Gpu>::new();
    use ErrorKind::*;

    // --- Allocations ------------------------------------------------------------
    c.add("zero elements", InvalidArgument, "bytes is 0", |g, _| {
        answer(g.device.alloc::<f32>(0))
    });
    c.add(
        "elements of zero bytes",
        InvalidArgument,
        "bytes is 0",
        |g, _| answer(g.device.alloc::<[f32; 0]>(16)),
    );
    c.add(
        "a buffer from an empty slice",
        InvalidArgument,
        "bytes is 0",
        |g, _| answer(g.device.buffer_from_slice::<f32>(&[])),
    );
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
        "usize::MAX zeroed bytes",
        OutOfMemory,
        "18446744073709551615",
        |g, ctx| {
            let ran = answer(g.device.alloc_zeroed::<u8>(usize::MAX));
            g.keeps_working(ctx);
            ran
        },
    );
    c.add(
        "2^50 bytes",
        OutOfMemory,
        "out of device memory",
        |g, ctx| {
            let ran = answer(g.device.alloc::<u8>(1 << 50));
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
        "twice the device's memory",
        OutOfMemory,
        "out of device memory",
        |g, ctx| {
            let ran = answer(g.device.alloc::<u8>(g.total_memory.saturating_mul(2)));
            g.keeps_working(ctx);
            ran
        },
    );
    c.add(
        "elements whose byte size overflows usize",
        InvalidArgument,
        "Device::alloc: 4611686018427387903 elements of 8 bytes overflow usize",
        |g, _| answer(g.device.alloc::<f64>(usize::MAX / 4)),
    );
    c.add(
        "zero pinned elements",
        InvalidArgument,
        "bytes is 0",
        |g, _| answer(g.device.alloc_pinned::<f32>(0)),
    );
    c.add(
        "usize::MAX pinned bytes",
        OutOfMemory,
        "cuMemHostAlloc",
        |g, ctx| {
            let ran = answer(g.device.alloc_pinned::<u8>(usize::MAX));
            g.keeps_working(ctx);
            ran
        },
    );
    c.add(
        "pinned elements whose byte size overflows usize",
        InvalidArgument,
        "Device::alloc_pinned",
        |g, _| answer(g.device.alloc_pinned::<u64>(usize::MAX / 2)),
    );
    c.add(
        "pinning an empty slice",
        InvalidArgument,
        "bytes is 0",
        |g, _| {
            let mut empty: [f32; 0] = [];
            answer(g.device.register_host(&mut empty))
        },
    );
    c.add(
        "wrapping device address 0",
        InvalidArgument,
        "device_ptr is 0",
        |g, _| answer(unsafe { g.device.wrap_buffer::<f32>(0, 16) }),
    );
    c.add(
        "wrapping zero elements",
        InvalidArgument,
        "bytes is 0",
        |g, _| {
            let b = g.device.alloc::<f32>(16)?;
            answer(unsafe { g.device.wrap_buffer::<f32>(b.device_ptr(), 0) })
        },
    );
    c.add(
        "wrapping a range that wraps around the address space",
        InvalidArgument,
        "overflows",
        |g, _| answer(unsafe { g.device.wrap_buffer::<f32>(u64::MAX - 15, 16) }),
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

    // --- Copies -----------------------------------------------------------------
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
        "an empty host slice at an offset past the end",
        OutOfRange,
        "4096-byte buffer",
        |g, _| answer(ones(g, 1024)?.copy_from_at(1025, &[])),
    );
    c.add(
        "two elements at the last element",
        OutOfRange,
        "destination range [4092, 4092 + 8)",
        |g, _| answer(ones(g, 1024)?.copy_from_at(1023, &[1.0, 2.0])),
    );
    c.add(
        "an element offset whose byte offset overflows usize (upload)",
        OutOfRange,
        "reaches past the end of the 1024-element buffer",
        |g, _| answer(ones(g, 1024)?.copy_from_at(usize::MAX / 2, &[1.0])),
    );
    c.add(
        "a host slice one element longer than the buffer (download)",
        OutOfRange,
        "source range [0, 0 + 4100)",
        |g, ctx| {
            let b = ones(g, 1024)?;
            let mut dst = vec![-7.0f32; 1025];
            let ran = answer(b.copy_to(&mut dst));
            ctx.expect(
                dst.iter().all(|&x| x == -7.0),
                "the refused copy wrote the host slice",
            );
            ran
        },
    );
    c.add(
        "an empty host slice from an offset past the end",
        OutOfRange,
        "4096-byte buffer",
        |g, _| answer(ones(g, 1024)?.copy_to_at(1025, &mut [])),
    );
    c.add(
        "two elements from the last element",
        OutOfRange,
        "source range [4092, 4092 + 8)",
        |g, ctx| {
            let mut dst = [-7.0f32; 2];
            let ran = answer(ones(g, 1024)?.copy_to_at(1023, &mut dst));
            ctx.expect(dst == [-7.0; 2], "the refused copy wrote the host slice");
            ran
        },
    );
    c.add(
        "an element offset whose byte offset overflows usize (download)",
        OutOfRange,
        "reaches past the end of the 1024-element buffer",
        |g, _| answer(ones(g, 1024)?.copy_to_at(usize::MAX, &mut [0.0f32])),
    );
    c.add(
        "an async upload longer than the buffer",
        OutOfRange,
        "destination range",
        |g, _| {
            let mut b = ones(g, 1024)?;
            let src = vec![0.0f32; 2048];
            let ran = answer(unsafe { b.copy_from_async(&src, &g.stream) });
            g.stream.synchronize()?;
            ran
        },
    );
    c.add(
        "an async download longer than the buffer",
        OutOfRange,
        "source range",
        |g, ctx| {
            let b = ones(g, 1024)?;
            let mut dst = vec![-7.0f32; 1025];
            let ran = answer(unsafe { b.copy_to_async(&mut dst, &g.stream) });
            g.stream.synchronize()?;
            ctx.expect(
                dst.iter().all(|&x| x == -7.0),
                "the refused copy wrote the host slice",
            );
            ran
        },
    );
    c.add(
        "a device copy from a longer buffer",
        OutOfRange,
        "destination range",
        |g, _| {
            let big = ones(g, 1024)?;
            answer(ones(g, 1023)?.copy_from_buffer(&big))
        },
    );
    c.add(
        "an async device copy from a longer buffer",
        OutOfRange,
        "destination range",
        |g, _| {
            let big = ones(g, 64)?;
            let ran = answer(unsafe { ones(g, 16)?.copy_from_buffer_async(&big, &g.stream) });
            g.stream.synchronize()?;
            ran
        },
    );
    c.add(
        "a device copy between overlapping views of one buffer",
        InvalidArgument,
        "overlap",
        |g, ctx| {
            let base = g
                .device
                .buffer_from_slice(&(0..1024).map(|i| i as f32).collect::<Vec<_>>())?;
            let p = base.device_ptr();
            // SAFETY: views of 512 floats within `base`, which outlives them.
            let (mut low, high) = unsafe {
                (
                    g.device.wrap_buffer::<f32>(p, 512)?,
                    g.device.wrap_buffer::<f32>(p + 1024, 512)?,
                )
            };
            // [p, p+2048) and [p+1024, p+3072) overlap.
            let ran = answer(low.copy_from_buffer(&high));
            // Disjoint halves copy.
            let mut first = unsafe { g.device.wrap_buffer::<f32>(p, 512)? };
            let second = unsafe { g.device.wrap_buffer::<f32>(p + 2048, 512)? };
            if ctx
                .check("copying disjoint halves", first.copy_from_buffer(&second))
                .is_some()
            {
                let want: Vec<f32> = (512..1024).chain(512..1024).map(|i| i as f32).collect();
                ctx.expect(
                    base.to_vec().is_ok_and(|v| v == want),
                    "the disjoint copy gave the wrong data",
                );
            }
            ran
        },
    );
    c.add(
        "a device copy of a view onto itself",
        InvalidArgument,
        "overlap",
        |g, _| {
            let base = ones(g, 64)?;
            let mut view = unsafe { g.device.wrap_buffer::<f32>(base.device_ptr(), 64)? };
            answer(view.copy_from_buffer(&base))
        },
    );
    c.add(
        "an async device copy between overlapping views",
        InvalidArgument,
        "overlap",
        |g, _| {
            let base = ones(g, 64)?;
            let p = base.device_ptr();
            let (mut a, b) = unsafe {
                (
                    g.device.wrap_buffer::<f32>(p + 8, 32)?,
                    g.device.wrap_buffer::<f32>(p, 32)?,
                )
            };
            let ran = answer(unsafe { a.copy_from_buffer_async(&b, &g.stream) });
            g.stream.synchronize()?;
            ran
        },
    );

    // --- Launch configurations the device rejects: the launch builder --------
    let configs: [(&str, LaunchConfig, &str); 14] = [
        (
            "a block of 2048 threads in x",
            LaunchConfig::new(1, 2048),
            "exceeds the device's limit",
        ),
        (
            "a block of 1024 x 2 threads",
            LaunchConfig::new(1, (1024, 2)),
            "allows at most 1024",
        ),
        (
            "a block of 64 x 64 threads",
            LaunchConfig::new(1, (64, 64)),
            "4096 threads",
        ),
        (
            "a block z of 128",
            LaunchConfig::new(1, (1, 1, 128)),
            "exceeds the device's limit",
        ),
        (
            "a grid x of zero",
            LaunchConfig::new(0, 32),
            "zero dimension",
        ),
        (
            "a grid y of zero",
            LaunchConfig::new((1, 0), 32),
            "zero dimension",
        ),
        (
            "a grid z of zero",
            LaunchConfig::new((1, 1, 0), 32),
            "zero dimension",
        ),
        (
            "a block x of zero",
            LaunchConfig::new(1, 0),
            "zero dimension",
        ),
        (
            "a block z of zero",
            LaunchConfig::new(1, (32, 1, 0)),
            "zero dimension",
        ),
        (
            "a grid y of 2^32-1",
            LaunchConfig::new((1, u32::MAX), 32),
            "exceeds the device's limit",
        ),
        (
            "a grid x of 2^32-1",
            LaunchConfig::new(u32::MAX, 32),
            "exceeds the device's limit",
        ),
        (
            "1 GiB of dynamic shared memory",
            LaunchConfig::new(1, 32).with_shared_mem(1 << 30),
            "dynamic shared memory",
        ),
        (
            "2^32-1 bytes of dynamic shared memory",
            LaunchConfig::new(1, 32).with_shared_mem(u32::MAX),
            "4294967295 bytes",
        ),
        (
            "shared memory above the default limit, within the opt-in",
            LaunchConfig::new(1, 32).with_shared_mem(64 * 1024),
            "CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES",
        ),
    ];
    for (what, config, needle) in configs {
        c.add(
            format!("launch: {what}"),
            InvalidArgument,
            needle,
            move |g, ctx| {
                let buffer = ones(g, 16)?;
                let ran = launch_saxpy(&g.saxpy, config, &buffer);
                ran_nothing(g, ctx, &buffer);
                ran
            },
        );
    }
    for (what, config, needle) in configs {
        c.add(
            format!("plan: {what}"),
            InvalidArgument,
            needle,
            move |g, _| answer(LaunchPlan::new(&g.saxpy, config, None)),
        );
    }
    c.add(
        "plan on a stream: a grid x of zero",
        InvalidArgument,
        "zero dimension",
        |g, _| answer(g.saxpy.plan(LaunchConfig::new(0, 32), Some(&g.stream))),
    );

    // --- Arguments that do not match the kernel: the launch builder ----------------
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
        "an f64 for a float parameter",
        InvalidArgument,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes",
        |g, ctx| {
            let b = ones(g, 16)?;
            let ran = answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2.0f64)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .arg(&16usize)
                    .run()
            });
            ran_nothing(g, ctx, &b);
            ran
        },
    );
    c.add(
        "a u8 for a float parameter",
        InvalidArgument,
        "parameter 0 is 4 bytes, but the argument given is 1 bytes",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2u8)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .arg(&16usize)
                    .run()
            })
        },
    );
    c.add(
        "a buffer for a float parameter",
        InvalidArgument,
        "parameter 0 is 4 bytes, but the argument given is 8 bytes",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .arg(&16usize)
                    .run()
            })
        },
    );
    c.add(
        "a float for a pointer parameter",
        InvalidArgument,
        "parameter 1 is 8 bytes, but the argument given is 4 bytes",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2.0f32)
                    .arg(&1.0f32)
                    .arg(&b)
                    .arg(&b)
                    .arg(&16usize)
                    .run()
            })
        },
    );
    c.add(
        "a 12-byte array for a pointer parameter",
        InvalidArgument,
        "parameter 1 is 8 bytes, but the argument given is 12 bytes",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2.0f32)
                    .arg(&[0u32; 3])
                    .arg(&b)
                    .arg(&b)
                    .arg(&16usize)
                    .run()
            })
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
        "six arguments for five parameters",
        InvalidArgument,
        "but 6 were given",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .arg(&2.0f32)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .arg(&16usize)
                    .arg(&16usize)
                    .run()
            })
        },
    );
    c.add(
        "no arguments at all",
        InvalidArgument,
        "but 0 were given",
        |g, _| answer(unsafe { g.saxpy.launch(LaunchConfig::new(1, 32)).run() }),
    );
    c.add(
        "four arguments on a stream",
        InvalidArgument,
        "but 4 were given",
        |g, _| {
            let b = ones(g, 16)?;
            let ran = answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .stream(&g.stream)
                    .arg(&2.0f32)
                    .arg(&b)
                    .arg(&b)
                    .arg(&b)
                    .run()
            });
            g.stream.synchronize()?;
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
        "a tuple of four arguments",
        InvalidArgument,
        "but 4 were given",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(1, 32))
                    .args((&2.0f32, &b, &b, &b))
                    .run()
            })
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
    c.add(
        "a 4-byte n and a zero grid: the arguments are named first",
        InvalidArgument,
        "parameter 4 is 8 bytes",
        |g, _| {
            let b = ones(g, 16)?;
            answer(unsafe {
                g.saxpy
                    .launch(LaunchConfig::new(0, 32))
                    .args((&2.0f32, &b, &b, &b, &16u32))
                    .run()
            })
        },
    );

    // --- Arguments that do not match the kernel: LaunchPlan ----------------------
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
        "plan: an f64 for a float parameter",
        InvalidArgument,
        "parameter 0 is 4 bytes",
        |g, _| answer(saxpy_plan(g)?.0.set(0, &2.0f64)),
    );
    c.add(
        "plan: a 12-byte array for a pointer parameter",
        InvalidArgument,
        "parameter 1 is 8 bytes, but the argument given is 12 bytes",
        |g, _| answer(saxpy_plan(g)?.0.set(1, &[0u32; 3])),
    );
    c.add(
        "plan: parameter index 5 of 5",
        OutOfRange,
        "kernel 'saxpy' has 5 parameters; there is no parameter 5",
        |g, _| answer(saxpy_plan(g)?.0.set(5, &0u64)),
    );
    c.add(
        "plan: parameter index usize::MAX",
        OutOfRange,
        "there is no parameter 18446744073709551615",
        |g, _| answer(saxpy_plan(g)?.0.set(usize::MAX, &0u8)),
    );
    c.add(
        "plan: four arguments for five parameters",
        InvalidArgument,
        "kernel 'saxpy' takes 5 parameters, but 4 arguments were given",
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
        "plan: six arguments for five parameters",
        InvalidArgument,
        "but 6 arguments",
        |g, _| {
            let (mut plan, b) = saxpy_plan(g)?;
            answer(plan.set_args((&3.0f32, &b, &b, &b, &16usize, &16usize)))
        },
    );
    c.add(
        "plan: no arguments",
        InvalidArgument,
        "but 0 arguments",
        |g, _| answer(saxpy_plan(g)?.0.set_args(())),
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
    c.add(
        "plan: launch_with four arguments",
        InvalidArgument,
        "but 4 arguments",
        |g, ctx| {
            let (mut plan, b) = saxpy_plan(g)?;
            let ran = answer(unsafe { plan.launch_with((&2.0f32, &b, &b, &b)) });
            ran_nothing(g, ctx, &b);
            ran
        },
    );

    // --- Kernel and device attributes -----------------------------------------------
    c.add(
        "a shared memory limit raised past the device's opt-in",
        InvalidArgument,
        "cannot be set to",
        |g, ctx| {
            let f = g.saxpy_module.function("saxpy")?;
            let ran = answer(f.set_attribute(
                FunctionAttribute::MaxDynamicSharedSizeBytes,
                g.max_optin_shared + 1,
            ));
            // Within the opt-in it can be raised, and a launch then uses it.
            if ctx
                .check(
                    "raising the limit to 64 KiB",
                    f.set_attribute(FunctionAttribute::MaxDynamicSharedSizeBytes, 64 * 1024),
                )
                .is_some()
            {
                let b = ones(g, 16)?;
                let (a, n) = (2.0f32, 16usize);
                let launched = unsafe {
                    f.launch(LaunchConfig::new(1, 32).with_shared_mem(64 * 1024))
                        .args((&a, &b, &b, &b, &n))
                        .run()
                };
                if ctx
                    .check("a launch with 64 KiB within the raised limit", launched)
                    .is_some()
                {
                    g.device.synchronize()?;
                    ctx.expect(
                        b.to_vec().is_ok_and(|v| v.iter().all(|&x| x == 3.0)),
                        "the launch within the raised limit gave wrong results",
                    );
                }
            }
            ran
        },
    );
    c.add(
        "an unknown kernel attribute",
        InvalidArgument,
        "attribute 9999",
        |g, _| answer(g.saxpy.attribute(FunctionAttribute::Raw(9999))),
    );
    c.add(
        "setting an unknown kernel attribute",
        InvalidArgument,
        "attribute 9999 cannot be set to 1",
        |g, _| {
            let f = g.saxpy_module.function("saxpy")?;
            answer(f.set_attribute(FunctionAttribute::Raw(9999), 1))
        },
    );
    c.add(
        "an unknown device attribute",
        InvalidArgument,
        "cu_attribute 99999",
        |g, _| answer(g.device.attribute(99999)),
    );
    c.add(
        "a negative device attribute",
        InvalidArgument,
        "cu_attribute -1",
        |g, _| answer(g.device.attribute(-1)),
    );
    c.add(
        "parameter index 5 of 5",
        OutOfRange,
        "index 5 is past",
        |g, _| answer(g.saxpy.param_info(5)),
    );
    c.add(
        "parameter index usize::MAX",
        OutOfRange,
        "index 18446744073709551615",
        |g, _| answer(g.saxpy.param_info(usize::MAX)),
    );

    // --- Names ---------------------------------------------------------------------
    c.add(
        "an unknown kernel",
        NotFound,
        "no kernel named 'no_such_kernel'",
        |g, _| answer(g.saxpy_module.function("no_such_kernel")),
    );
    c.add(
        "a kernel name in the wrong case",
        NotFound,
        "no kernel named 'SAXPY'",
        |g, _| answer(g.saxpy_module.function("SAXPY")),
    );
    c.add(
        "a kernel name with a trailing space",
        NotFound,
        "no kernel named 'saxpy '",
        |g, _| answer(g.saxpy_module.function("saxpy ")),
    );
    c.add(
        "an empty kernel name",
        InvalidArgument,
        "name is empty",
        |g, _| answer(g.saxpy_module.function("")),
    );
    c.add(
        "a kernel name holding a NUL byte",
        InvalidArgument,
        "kernel name contains a NUL byte at byte 2",
        |g, _| answer(g.saxpy_module.function("sa\0xpy")),
    );
    c.add(
        "a kernel name longer than 64 KiB",
        InvalidArgument,
        "name is longer than 64 KiB",
        |g, _| answer(g.saxpy_module.function(&"k".repeat(70 * 1024))),
    );
    c.add(
        "a template kernel without a name expression",
        NotFound,
        "name expression",
        |g, _| answer(g.util.function("store<int>")),
    );
    c.add(
        "an unknown global",
        NotFound,
        "no global named 'no_such_global'",
        |g, _| answer(g.util.global("no_such_global")),
    );
    c.add(
        "an empty global name",
        InvalidArgument,
        "name is empty",
        |g, _| answer(g.util.global("")),
    );
    c.add(
        "a global name holding a NUL byte",
        InvalidArgument,
        "global name contains a NUL byte",
        |g, _| answer(g.util.global("corpus\0counter")),
    );
    c.add(
        "an unknown lowered name",
        NotFound,
        "store<long>",
        |g, _| answer(g.util.lowered_name("store<long>")),
    );
    c.add(
        "a lowered-name query holding a NUL byte",
        InvalidArgument,
        "name expression contains a NUL byte",
        |g, _| answer(g.util.lowered_name("store\0<int>")),
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
    c.add(
        "device ordinal 1000000",
        NoDevice,
        "no CUDA device 1000000",
        |_, _| answer(Device::get(1_000_000)),
    );
    c.add(
        "the device ordinal one past the last",
        NoDevice,
        "no CUDA device",
        |_, ctx| {
            let count = Device::count()?;
            let result = Device::get(count);
            if let Err(err) = &result {
                ctx.expect(
                    err.message().contains(&format!("device {count}")),
                    "the message does not name the ordinal",
                );
            }
            answer(result)
        },
    );

    // --- Compiling into a module ----------------------------------------------------
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
        "an architecture that does not exist",
        Compile,
        "--gpu-architecture",
        |g, _| {
            answer(g.device.compile(
                SAXPY,
                &CompileOptions::new().option("--gpu-architecture=sm_1"),
            ))
        },
    );
    c.add("an unknown option", Compile, "--no-such-option", |g, _| {
        answer(
            g.device
                .compile(SAXPY, &CompileOptions::new().option("--no-such-option")),
        )
    });
    c.add(
        "a name expression naming nothing",
        Compile,
        "no_such_template",
        |g, _| {
            answer(g.device.compile(
                TEMPLATE,
                &CompileOptions::new().name_expression("no_such_template<int>"),
            ))
        },
    );
    c.add(
        "an error inside a given header",
        Compile,
        "bad_header.h",
        |g, _| {
            answer(g.device.compile(
                "#include \"bad_header.h\"\n",
                &CompileOptions::new().header("bad_header.h", "int broken(;\n"),
            ))
        },
    );
    c.add("a missing include", Compile, "missing_header.h", |g, _| {
        answer(
            g.device
                .compile("#include \"missing_header.h\"\n", &CompileOptions::new()),
        )
    });
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
    c.add(
        "an empty option",
        InvalidArgument,
        "desc->options[0] is empty",
        |g, _| answer(g.device.compile(SAXPY, &CompileOptions::new().option(""))),
    );
    c.add(
        "an empty name expression",
        InvalidArgument,
        "desc->name_expressions[0] is empty",
        |g, _| {
            answer(
                g.device
                    .compile(TEMPLATE, &CompileOptions::new().name_expression("")),
            )
        },
    );
    c.add(
        "an empty header name",
        InvalidArgument,
        "desc->header_names[0] is empty",
        |g, _| {
            answer(
                g.device
                    .compile(SAXPY, &CompileOptions::new().header("", "int a;")),
            )
        },
    );
    c.add(
        "an empty program name",
        InvalidArgument,
        "desc->name is empty",
        |g, _| answer(g.device.compile(SAXPY, &CompileOptions::new().name(""))),
    );

    // --- Images and files ----------------------------------------------------------
    c.add(
        "an image of zero bytes",
        InvalidArgument,
        "size is 0",
        |g, _| answer(g.device.load_module(&[])),
    );
    c.add("empty PTX", InvalidArgument, "size is 0", |g, _| {
        answer(g.device.load_ptx(""))
    });
    c.add(
        "random bytes as an image",
        Cuda,
        "cuModuleLoadData",
        |g, _| {
            let junk: Vec<u8> = (0..256u32).map(|i| (i * 131 + 7) as u8).collect();
            answer(g.device.load_module(&junk))
        },
    );
    c.add(
        "PTX text that is not PTX",
        Cuda,
        "cuModuleLoadData",
        |g, _| {
            answer(
                g.device
                    .load_ptx(".version 99.9\n.target sm_1\nthis is not ptx"),
            )
        },
    );
    c.add(
        "a CUBIN cut in half",
        InvalidArgument,
        "truncated or malformed",
        |g, _| answer(g.device.load_module(&g.cubin[..g.cubin.len() / 2])),
    );
    c.add(
        "a CUBIN with its ELF header damaged",
        InvalidArgument,
        "truncated or malformed",
        |g, _| {
            let mut bad = g.cubin.clone();
            for byte in bad.iter_mut().take(64).skip(16) {
                *byte = 0xFF;
            }
            answer(g.device.load_module(&bad))
        },
    );
    c.add(
        "a 32-bit ELF header alone",
        InvalidArgument,
        "not a 64-bit little-endian ELF file",
        |g, _| {
            let mut elf = [0u8; 64];
            elf[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1]);
            answer(g.device.load_module(&elf))
        },
    );
    c.add(
        "a fatbin header claiming 2^40 bytes",
        InvalidArgument,
        "fatbin image is truncated",
        |g, _| {
            let fatbin = [0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0, 0, 0, 0, 0, 1, 0, 0];
            answer(g.device.load_module(&fatbin))
        },
    );
    c.add(
        "three bytes of an ELF header",
        InvalidArgument,
        "the image is truncated: 3 bytes",
        |g, _| answer(g.device.load_module(b"\x7fEL")),
    );
    c.add(
        "CUBIN truncations ending at an unmapped page",
        InvalidArgument,
        "truncated or malformed",
        |g, ctx| {
            let mut guarded = Guarded::new(g.cubin.len())?;
            let mut last = None;
            let mut tried = 0;
            let mut len = 1;
            while len < g.cubin.len() {
                let image = guarded.place(&g.cubin[..len]);
                let result = g.device.load_module(image);
                tried += 1;
                match result {
                    Err(err) if err.kind() == InvalidArgument => last = Some(Err(err)),
                    other => {
                        ctx.problem(format!("a {len}-byte truncation was not refused as such"));
                        last = Some(other.map(drop));
                        break;
                    }
                }
                len += if len < 128 { 1 } else { 61 };
            }
            ctx.expect(tried >= 100, "too few truncations tried");
            answer(last.ok_or("no truncation tried")?)
        },
    );
    c.add(
        "a file that does not exist",
        Io,
        "/nonexistent/kernel.cubin",
        |g, _| answer(g.device.load_module_file("/nonexistent/kernel.cubin")),
    );
    c.add("a directory as the file", Io, "Is a directory", |g, _| {
        answer(g.device.load_module_file(std::env::temp_dir()))
    });
    c.add("an empty file", InvalidArgument, "is empty", |g, _| {
        let path =
            std::env::temp_dir().join(format!("cuabi-rs-corpus-{}.cubin", std::process::id()));
        std::fs::write(&path, b"")?;
        let result = g.device.load_module_file(&path);
        let _ = std::fs::remove_file(&path);
        answer(result)
    });
    c.add("an empty path", InvalidArgument, "path is empty", |g, _| {
        answer(g.device.load_module_file(""))
    });
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

    // --- Streams, events, graphs -------------------------------------------------
    c.add(
        "the elapsed time of events never recorded",
        InvalidArgument,
        "never recorded",
        |g, _| {
            let (start, end) = (g.device.create_event()?, g.device.create_event()?);
            answer(start.elapsed_ms(&end))
        },
    );
    c.add(
        "the elapsed time from an untimed event",
        InvalidArgument,
        "DISABLE_TIMING",
        |g, _| {
            let untimed = g.device.create_event_with(EventFlags::DISABLE_TIMING)?;
            let timed = g.device.create_event()?;
            untimed.record(&g.stream)?;
            timed.record(&g.stream)?;
            timed.synchronize()?;
            answer(untimed.elapsed_ms(&timed))
        },
    );
    c.add(
        "ending a capture never begun",
        Cuda,
        "cuStreamEndCapture",
        |g, ctx| {
            let stream = g.device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
            let ran = answer(stream.end_capture());
            ctx.check("the stream afterwards", stream.synchronize());
            ran
        },
    );

    // --- Objects outliving what they came from -------------------------------------
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

    // --- Handles of every kind: released twice, stale, wrong kind (raw) ------------
    for (i, k) in HANDLE_KINDS.into_iter().enumerate() {
        let released = format!("{} is not a live {}: it was released", k.what, k.kind);
        c.add(
            format!("a {} dropped, released again, then used", k.kind),
            InvalidHandle,
            released.clone(),
            move |g, ctx| {
                let (object, v) = (k.make)(g)?;
                drop(object);
                unsafe { sys::cuabi_last_error_clear() };
                (k.release)(v);
                ctx.expect(
                    unsafe { sys::cuabi_last_error_status() } == 0,
                    "the second release touched the last-error state",
                );
                raw(ctx, k.call, (k.use_as)(v))
            },
        );
        c.add(
            format!(
                "a stale {} (its slot reused), released again, then used",
                k.kind
            ),
            InvalidHandle,
            released,
            move |g, ctx| {
                let (object, stale) = (k.make)(g)?;
                drop(object);
                let (reuser, live) = (k.make)(g)?;
                ctx.expect(
                    same_slot(stale, live),
                    "the released slot was not reused; the case tests less than it says",
                );
                (k.release)(stale);
                let ran = raw(ctx, k.call, (k.use_as)(stale));
                if (k.use_as)(live) != 0 {
                    let why = last_message(ctx);
                    ctx.problem(format!(
                        "the live {} in the stale handle's slot stopped working: {why}",
                        k.kind
                    ));
                }
                drop(reuser);
                ran
            },
        );
        let other = HANDLE_KINDS[(i + 1) % HANDLE_KINDS.len()];
        c.add(
            format!("a live {} as a {}", other.kind, k.kind),
            InvalidHandle,
            format!(
                "{} is not a live {}: it is a {}",
                k.what, k.kind, other.kind
            ),
            move |g, ctx| {
                let (object, v) = (other.make)(g)?;
                let ran = raw(ctx, k.call, (k.use_as)(v));
                ctx.expect(
                    (other.use_as)(v) == 0,
                    format!("the {} stopped working", other.kind),
                );
                drop(object);
                ran
            },
        );
    }

    // --- Arguments the safe types rule out (raw) -------------------------------------
    c.add(
        "a kernel name that is not UTF-8",
        InvalidArgument,
        "name is not valid UTF-8",
        |g, ctx| {
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_module_get_function(
                    g.saxpy_module.as_raw(),
                    c"sax\xffpy".as_ptr(),
                    &mut out,
                )
            };
            raw(ctx, "cuabi_module_get_function", st)
        },
    );
    c.add(
        "a module path that is not UTF-8",
        InvalidArgument,
        "path is not valid UTF-8",
        |g, ctx| {
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_module_load_file(
                    g.device.as_raw(),
                    c"/tmp/\xff\xfe.cubin".as_ptr(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_module_release);
            raw(ctx, "cuabi_module_load_file", st)
        },
    );
    c.add(
        "PTX that is not PTX, not NUL-terminated, ending at an unmapped page",
        Cuda,
        "cuModuleLoadData",
        |g, ctx| {
            let mut guarded = Guarded::new(4096)?;
            let text = guarded.place(b".version 99.9\n.target sm_1\nthis is not ptx");
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_module_load_data(
                    g.device.as_raw(),
                    text.as_ptr().cast(),
                    text.len(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_module_release);
            raw(ctx, "cuabi_module_load_data", st)
        },
    );
    c.add(
        "three bytes of an ELF header ending at an unmapped page",
        InvalidArgument,
        "the image is truncated: 3 bytes",
        |g, ctx| {
            let mut guarded = Guarded::new(g.ptx.len())?;
            let magic = guarded.place(b"\x7fEL");
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_module_load_data(g.device.as_raw(), magic.as_ptr().cast(), 3, &mut out)
            };
            let _owned = Raw(out, sys::cuabi_module_release);
            let ran = raw(ctx, "cuabi_module_load_data", st);
            // PTX given with its length and no NUL loads: nothing reads past it.
            let ptx = guarded.place(g.ptx.trim_end_matches('\0').as_bytes());
            let mut module = null_mut();
            let st = unsafe {
                sys::cuabi_module_load_data(
                    g.device.as_raw(),
                    ptx.as_ptr().cast(),
                    ptx.len(),
                    &mut module,
                )
            };
            let module = Raw(module, sys::cuabi_module_release);
            if st != 0 {
                let why = last_message(ctx);
                ctx.problem(format!("unterminated PTX did not load: {why}"));
                return ran;
            }
            let mut function = null_mut();
            let st = unsafe {
                sys::cuabi_module_get_function(module.0, c"saxpy".as_ptr(), &mut function)
            };
            let _function = Raw(function, sys::cuabi_function_release);
            ctx.expect(st == 0, "the unterminated PTX's module has no saxpy");
            ran
        },
    );
    c.add(
        "a released stream to an async copy",
        InvalidHandle,
        "stream is not a live cuabi_stream",
        |g, ctx| {
            let b = ones(g, 16)?;
            let gone = value(g.device.create_stream()?.as_raw());
            let src = [0u8; 16];
            raw(ctx, "cuabi_buffer_copy_from_host_async", unsafe {
                sys::cuabi_buffer_copy_from_host_async(
                    b.as_raw(),
                    0,
                    src.as_ptr().cast(),
                    16,
                    handle(gone),
                )
            })
        },
    );
    c.add(
        "a buffer handle as an async copy's stream",
        InvalidHandle,
        "it is a cuabi_buffer",
        |g, ctx| {
            let (a, b) = (ones(g, 16)?, ones(g, 16)?);
            let mut dst = [0u8; 16];
            raw(ctx, "cuabi_buffer_copy_to_host_async", unsafe {
                sys::cuabi_buffer_copy_to_host_async(
                    a.as_raw(),
                    0,
                    dst.as_mut_ptr().cast(),
                    16,
                    handle(value(b.as_raw())),
                )
            })
        },
    );
    c.add(
        "a released event to wait on",
        InvalidHandle,
        "event is not a live cuabi_event",
        |g, ctx| {
            let gone = value(g.device.create_event()?.as_raw());
            raw(ctx, "cuabi_stream_wait_event", unsafe {
                sys::cuabi_stream_wait_event(g.stream.as_raw(), handle(gone))
            })
        },
    );
    c.add(
        "a program handle as a launch's stream",
        InvalidHandle,
        "stream is not a live cuabi_stream",
        |g, ctx| {
            let p = new_program("int x;")?;
            let b = ones(g, 16)?;
            let mut args = RawSaxpy::new(&b);
            let params = args.params();
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch_sized", unsafe {
                sys::cuabi_function_launch_sized(
                    g.saxpy.as_raw(),
                    &config,
                    handle(value(p.as_raw())),
                    params.as_ptr(),
                    RawSaxpy::SIZES.as_ptr(),
                    5,
                )
            })
        },
    );
    c.add(
        "a module handle as a launch's function",
        InvalidHandle,
        "it is a cuabi_module",
        |g, ctx| {
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch", unsafe {
                sys::cuabi_function_launch(
                    handle(value(g.saxpy_module.as_raw())),
                    &config,
                    null_mut(),
                    null(),
                    0,
                )
            })
        },
    );
    c.add(
        "a launch with config NULL",
        InvalidArgument,
        "config is NULL",
        |g, ctx| {
            let b = ones(g, 16)?;
            let mut args = RawSaxpy::new(&b);
            let params = args.params();
            raw(ctx, "cuabi_function_launch_sized", unsafe {
                sys::cuabi_function_launch_sized(
                    g.saxpy.as_raw(),
                    null(),
                    null_mut(),
                    params.as_ptr(),
                    RawSaxpy::SIZES.as_ptr(),
                    5,
                )
            })
        },
    );
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
        "a launch config from a newer header with a field set",
        NotSupported,
        "newer than this library",
        |g, ctx| {
            #[repr(C)]
            struct Newer {
                config: sys::cuabi_launch_config,
                future: u64,
            }
            let mut newer = Newer {
                config: raw_config(1, 32),
                future: 1,
            };
            newer.config.struct_size = std::mem::size_of::<Newer>();
            let block = [0u8; 40];
            raw(ctx, "cuabi_function_launch_packed", unsafe {
                sys::cuabi_function_launch_packed(
                    g.saxpy.as_raw(),
                    &newer.config,
                    null_mut(),
                    block.as_ptr().cast(),
                    block.len(),
                )
            })
        },
    );
    c.add(
        "launch params NULL",
        InvalidArgument,
        "params is NULL",
        |g, ctx| {
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch", unsafe {
                sys::cuabi_function_launch(g.saxpy.as_raw(), &config, null_mut(), null(), 5)
            })
        },
    );
    c.add(
        "one launch argument pointer NULL",
        InvalidArgument,
        "params[3] is NULL",
        |g, ctx| {
            let b = ones(g, 16)?;
            let mut args = RawSaxpy::new(&b);
            let mut params = args.params();
            params[3] = null_mut();
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch", unsafe {
                sys::cuabi_function_launch(g.saxpy.as_raw(), &config, null_mut(), params.as_ptr(), 5)
            })
        },
    );
    c.add(
        "launch argument sizes NULL",
        InvalidArgument,
        "param_sizes is NULL",
        |g, ctx| {
            let b = ones(g, 16)?;
            let mut args = RawSaxpy::new(&b);
            let params = args.params();
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch_sized", unsafe {
                sys::cuabi_function_launch_sized(
                    g.saxpy.as_raw(),
                    &config,
                    null_mut(),
                    params.as_ptr(),
                    null(),
                    5,
                )
            })
        },
    );
    c.add(
        "a packed block of 36 bytes for 40",
        InvalidArgument,
        "40-byte argument block",
        |g, ctx| {
            let block = [0u8; 36];
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch_packed", unsafe {
                sys::cuabi_function_launch_packed(
                    g.saxpy.as_raw(),
                    &config,
                    null_mut(),
                    block.as_ptr().cast(),
                    block.len(),
                )
            })
        },
    );
    c.add(
        "a packed block of usize::MAX bytes",
        InvalidArgument,
        "18446744073709551615 bytes were given",
        |g, ctx| {
            let one = 0u8;
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch_packed", unsafe {
                sys::cuabi_function_launch_packed(
                    g.saxpy.as_raw(),
                    &config,
                    null_mut(),
                    (&one as *const u8).cast(),
                    usize::MAX,
                )
            })
        },
    );
    c.add(
        "packed args NULL",
        InvalidArgument,
        "args is NULL",
        |g, ctx| {
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_function_launch_packed", unsafe {
                sys::cuabi_function_launch_packed(g.saxpy.as_raw(), &config, null_mut(), null(), 40)
            })
        },
    );
    c.add(
        "a plan into NULL",
        InvalidArgument,
        "out is NULL",
        |g, ctx| {
            let config = raw_config(1, 32);
            raw(ctx, "cuabi_launch_plan_create", unsafe {
                sys::cuabi_launch_plan_create(g.saxpy.as_raw(), &config, null_mut(), null_mut())
            })
        },
    );
    c.add(
        "a plan's arguments into NULL",
        InvalidArgument,
        "args is NULL",
        |g, ctx| {
            let plan = g.saxpy.plan(LaunchConfig::new(1, 32), None)?;
            raw(ctx, "cuabi_launch_plan_get_args", unsafe {
                sys::cuabi_launch_plan_get_args(plan.as_raw(), null_mut(), &mut 0)
            })
        },
    );
    c.add(
        "an allocation into NULL",
        InvalidArgument,
        "out is NULL",
        |g, ctx| {
            raw(ctx, "cuabi_buffer_alloc", unsafe {
                sys::cuabi_buffer_alloc(g.device.as_raw(), 16, null_mut())
            })
        },
    );
    c.add(
        "an upload from NULL",
        InvalidArgument,
        "src is NULL",
        |g, ctx| {
            let b = ones(g, 16)?;
            raw(ctx, "cuabi_buffer_copy_from_host", unsafe {
                sys::cuabi_buffer_copy_from_host(b.as_raw(), 0, null(), 16)
            })
        },
    );
    c.add(
        "a download into NULL",
        InvalidArgument,
        "dst is NULL",
        |g, ctx| {
            let b = ones(g, 16)?;
            raw(ctx, "cuabi_buffer_copy_to_host", unsafe {
                sys::cuabi_buffer_copy_to_host(b.as_raw(), 0, null_mut(), 16)
            })
        },
    );
    c.add("pinning NULL", InvalidArgument, "ptr is NULL", |g, ctx| {
        let mut out = null_mut();
        let st = unsafe { sys::cuabi_host_buffer_register(g.device.as_raw(), null_mut(), 64, &mut out) };
        let _owned = Raw(out, sys::cuabi_host_buffer_release);
        raw(ctx, "cuabi_host_buffer_register", st)
    });
    c.add(
        "an image NULL",
        InvalidArgument,
        "image is NULL",
        |g, ctx| {
            let mut out = null_mut();
            let st =
                unsafe { sys::cuabi_module_load_data(g.device.as_raw(), null(), 10, &mut out) };
            let _owned = Raw(out, sys::cuabi_module_release);
            raw(ctx, "cuabi_module_load_data", st)
        },
    );
    c.add(
        "a memset past the end",
        OutOfRange,
        "memset range",
        |g, ctx| {
            let b = g.device.alloc::<u8>(4096)?;
            raw(ctx, "cuabi_buffer_memset", unsafe {
                sys::cuabi_buffer_memset(b.as_raw(), 4095, 0, 2)
            })
        },
    );
    c.add(
        "an async memset of usize::MAX bytes",
        OutOfRange,
        "memset range",
        |g, ctx| {
            let b = g.device.alloc::<u8>(4096)?;
            raw(ctx, "cuabi_buffer_memset_async", unsafe {
                sys::cuabi_buffer_memset_async(b.as_raw(), 0, 0, usize::MAX, g.stream.as_raw())
            })
        },
    );
    c.add(
        "unknown stream flags",
        InvalidArgument,
        "flags has bits",
        |g, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_stream_create(g.device.as_raw(), 0x80, 0, &mut out) };
            let _owned = Raw(out, sys::cuabi_stream_release);
            raw(ctx, "cuabi_stream_create", st)
        },
    );
    c.add(
        "unknown event flags",
        InvalidArgument,
        "flags has bits",
        |g, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_event_create(g.device.as_raw(), 0x80, &mut out) };
            let _owned = Raw(out, sys::cuabi_event_release);
            raw(ctx, "cuabi_event_create", st)
        },
    );
    c.add(
        "an unknown capture mode",
        InvalidArgument,
        "mode 99",
        |g, ctx| {
            raw(ctx, "cuabi_stream_begin_capture", unsafe {
                sys::cuabi_stream_begin_capture(g.capture_stream.as_raw(), 99)
            })
        },
    );
    c.add(
        "device ordinal -1",
        NoDevice,
        "no CUDA device -1",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_device_get(-1, &mut out) };
            let _owned = Raw(out, sys::cuabi_device_release);
            raw(ctx, "cuabi_device_get", st)
        },
    );

    // --- Compile descriptions (raw: the crate fills them in) -------------------------
    fn compile_desc(g: &Gpu, ctx: &mut Ctx, desc: &sys::cuabi_compile_desc) -> Ran {
        let mut out = null_mut();
        let st = unsafe { sys::cuabi_module_compile(g.device.as_raw(), desc, &mut out) };
        let _owned = Raw(out, sys::cuabi_module_release);
        raw(ctx, "cuabi_module_compile", st)
    }
    fn saxpy_desc() -> sys::cuabi_compile_desc {
        let mut desc = sys::cuabi_compile_desc_init();
        desc.source = c"extern \"C\" __global__ void k(int* x) { *x = 1; }".as_ptr();
        desc
    }
    c.add(
        "a compile description NULL",
        InvalidArgument,
        "desc is NULL",
        |g, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_module_compile(g.device.as_raw(), null(), &mut out) };
            let _owned = Raw(out, sys::cuabi_module_release);
            raw(ctx, "cuabi_module_compile", st)
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
        "a compile description without a source",
        InvalidArgument,
        "desc->source is NULL",
        |g, ctx| compile_desc(g, ctx, &sys::cuabi_compile_desc_init()),
    );
    c.add(
        "a compile description with output 7",
        InvalidArgument,
        "desc->output is 7",
        |g, ctx| {
            let mut desc = saxpy_desc();
            desc.output = 7;
            compile_desc(g, ctx, &desc)
        },
    );
    c.add(
        "a compile description with unknown flags",
        InvalidArgument,
        "desc->flags",
        |g, ctx| {
            let mut desc = saxpy_desc();
            desc.flags = 0x100;
            compile_desc(g, ctx, &desc)
        },
    );
    c.add(
        "compile options NULL with a count",
        InvalidArgument,
        "desc->options",
        |g, ctx| {
            let mut desc = saxpy_desc();
            desc.num_options = 3;
            compile_desc(g, ctx, &desc)
        },
    );
    c.add(
        "a compile option count of usize::MAX",
        InvalidArgument,
        "implausibly large",
        |g, ctx| {
            let one = [c"-w".as_ptr()];
            let mut desc = saxpy_desc();
            desc.options = one.as_ptr();
            desc.num_options = usize::MAX;
            compile_desc(g, ctx, &desc)
        },
    );
    c.add(
        "a NULL name expression in a compile description",
        InvalidArgument,
        "desc->name_expressions[0] is NULL",
        |g, ctx| {
            let expressions = [null()];
            let mut desc = saxpy_desc();
            desc.name_expressions = expressions.as_ptr();
            desc.num_name_expressions = 1;
            compile_desc(g, ctx, &desc)
        },
    );
    c.add(
        "a compile description from a newer header with a field set",
        NotSupported,
        "newer than this library",
        |g, ctx| {
            #[repr(C)]
            struct Newer {
                desc: sys::cuabi_compile_desc,
                future: u64,
            }
            let mut newer = Newer {
                desc: saxpy_desc(),
                future: 3,
            };
            newer.desc.struct_size = std::mem::size_of::<Newer>();
            compile_desc(g, ctx, &newer.desc)
        },
    );
    c
}

// ---------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------

const CPU_PART: &str = "bad_input_corpus_cpu";
const GPU_PART: &str = "bad_input_corpus_gpu";

/// The part without a GPU: `Ok(true)` when every case passed.
fn run_cpu_part() -> bool {
    let cases = cpu_cases();
    let fixture = match Cpu::build() {
        Ok(fixture) => fixture,
        Err(why) => {
            println!(
                "bad-input corpus (Rust): {} cases, 0 passed: its programs could not be made: {why}",
                cases.0.len()
            );
            return false;
        }
    };
    let tally = run_cases(&fixture, &cases);
    report("Rust", &tally);
    tally.cases > 100 && tally.passed == tally.cases
}

/// The part that needs a GPU: `None` when it was skipped.
fn run_gpu_part() -> Option<bool> {
    let cases = gpu_cases();
    let device = match Device::count() {
        Ok(0) => Err("the driver sees no CUDA device".to_owned()),
        Ok(_) => Device::get(0).map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    let device = match device {
        Ok(device) => device,
        Err(reason) => {
            let reason = reason.lines().next().unwrap_or_default().to_owned();
            println!(
                "bad-input corpus (Rust, GPU): SKIPPED: no CUDA device ({} cases not run): {reason}",
                cases.0.len()
            );
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
            println!(
                "bad-input corpus (Rust, GPU): {} cases, 0 passed: its fixture could not be made: {why}",
                cases.0.len()
            );
            return Some(false);
        }
    };
    let tally = run_cases(&fixture, &cases);
    report("Rust, GPU", &tally);
    // The device must have survived every case.
    let survived = fixture.saxpy_runs(&fixture.saxpy, Some(&fixture.stream), 1 << 16);
    if let Err(why) = &survived {
        println!("  FAILED: SAXPY after the corpus: {why}");
    }
    Some(tally.passed == tally.cases && survived.is_ok())
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
