//! Compilation beyond one string (issue 14): typed compile options, LTO-IR,
//! linkers, libraries, kernel listings and background compiles.
//!
//! Its cases are counted on lines of their own, `bad-input corpus (Rust,
//! compile)` for those that need no GPU (the typed options the library
//! refuses, what NVRTC refuses, library files and bytes the library
//! refuses before the driver, raw NULL and wrong-kind handles) and
//! `bad-input corpus (Rust, GPU, compile)` for the rest (every linker needs
//! a device).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr::null_mut;

use cuabi::sys;
use cuabi::{
    Arch, CompileOptions, CppStd, ErrorKind, Library, LinkBackend, LinkInput, LinkOptions, Linker,
    NameForm, Program,
};

use super::core_compile_cases::{CoreCompileCase, Value, CORE_COMPILE_CASES};
use super::{answer, handle, new_program, raw, value, Cases, Cpu, Ctx, Gpu, Ran, Raw, Setup};
use super::{COMPUTE, TINY};

/// Calls `twice`, which it does not define.
const CALLER: &str = "extern \"C\" __device__ float twice(float x);\n\
    extern \"C\" __global__ void apply(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n";

/// Two kernels called `scale`.
const OVERLOADED: &str = "namespace ops {\n\
    template <typename T> __global__ void scale(T *x, T a) { x[threadIdx.x] *= a; }\n\
    template __global__ void scale<float>(float *, float);\n\
    template __global__ void scale<int>(int *, int);\n}\n";

/// A path that is not UTF-8.
fn non_utf8_path() -> PathBuf {
    PathBuf::from(OsStr::from_bytes(b"/tmp/\xffcuabi.cubin"))
}

/// Compiling with `options` is refused before NVRTC runs: the program keeps
/// no log and compiles afterwards with good options.
fn refused_before_nvrtc(ctx: &mut Ctx, options: CompileOptions) -> Ran {
    let mut program = new_program(TINY)?;
    let ran = answer(program.compile_with(&options));
    ctx.expect(
        program.log().is_ok_and(|log| log.is_empty()),
        "NVRTC ran with the refused options",
    );
    ctx.check(
        "compiling afterwards with good options",
        program.compile(&[COMPUTE]),
    );
    ran
}

/// The device's architecture and relocatable code, with `extra`.
fn rdc(g: &Gpu, extra: CompileOptions) -> Result<CompileOptions, Setup> {
    Ok(extra.arch(g.device.arch()?).rdc(true))
}

/// `source` compiled for the device with `options`.
fn compiled(source: &str, options: &CompileOptions) -> Result<Program, Setup> {
    let mut program = Program::with_options(source, options)?;
    program.compile_with(options)?;
    Ok(program)
}

/// A linker with the library's defaults.
fn linker(g: &Gpu) -> Result<Linker, Setup> {
    Ok(g.device.create_linker(&LinkOptions::new())?)
}

/// A link description with the library's defaults (`cuabi_link_desc_init`).
fn link_desc() -> sys::cuabi_link_desc {
    // SAFETY: pointers, integers and enums; the library fills them in.
    let mut desc: sys::cuabi_link_desc = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<sys::cuabi_link_desc>();
    assert_eq!(unsafe { sys::cuabi_link_desc_init(&mut desc, size) }, 0);
    desc
}

fn linker_create(g: &Gpu, ctx: &mut Ctx, desc: &sys::cuabi_link_desc) -> Ran {
    let mut out = null_mut();
    let st = unsafe { sys::cuabi_linker_create(g.device.as_raw(), desc, &mut out) };
    let _owned = Raw(out, sys::cuabi_linker_release);
    raw(ctx, "cuabi_linker_create", st)
}

// ---------------------------------------------------------------------------
// The part without a GPU
// ---------------------------------------------------------------------------

pub fn cpu_cases() -> Cases<Cpu> {
    let mut c = Cases::<Cpu>::new();
    use ErrorKind::*;

    // --- Typed options the library refuses, in its words (the same in every
    // language), before NVRTC runs
    c.add(
        "a define whose name holds a space",
        InvalidArgument,
        "desc->defines[0] \"TWO WORDS\" is no macro definition: a macro name holds no whitespace",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().define_flag("TWO WORDS")),
    );
    c.add(
        "a define with an empty name",
        InvalidArgument,
        "desc->defines[0] \"=1\" is no macro definition: the macro name before '=' is empty",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().define("", 1)),
    );
    c.add(
        "a define whose name starts with a digit",
        InvalidArgument,
        "desc->defines[0] \"9LIVES=9\" is no macro definition: a macro name cannot start with a \
         digit",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().define("9LIVES", 9)),
    );
    c.add(
        "a function-like define with no closing parenthesis",
        InvalidArgument,
        "desc->defines[0] \"SQUARE(x=x*x\" is no macro definition: the parameter list has no ')'",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().define("SQUARE(x", "x*x")),
    );
    c.add(
        "a function-like define repeating a parameter",
        InvalidArgument,
        "desc->defines[1] \"F(a,a)=a\" is no macro definition: the parameter a appears twice",
        |_, ctx| {
            let options = CompileOptions::new()
                .define_flag("OK")
                .define("F(a,a)", "a");
            refused_before_nvrtc(ctx, options)
        },
    );
    c.add(
        "a define whose value holds a NUL byte (C cannot take it: the crate's)",
        InvalidArgument,
        "define \"N\" contains a NUL byte at byte 4",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().define("N", "12\0x")),
    );
    c.add(
        "an empty include path",
        InvalidArgument,
        "desc->include_paths[0] is empty",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().include_path("")),
    );
    c.add(
        "an include path that is not UTF-8",
        InvalidArgument,
        "include path \"/tmp/\\xFFcuabi.cubin\" is not UTF-8",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().include_path(non_utf8_path())),
    );
    c.add(
        "an architecture number below 10",
        InvalidArgument,
        "desc->arch \"compute_8\" is no GPU architecture",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().arch(Arch::Compute(8))),
    );
    c.add(
        "an architecture-specific target read as an Arch",
        InvalidArgument,
        "architecture \"sm_90a\" is not sm_XY or compute_XY",
        |_, _| answer("sm_90a".parse::<Arch>()),
    );
    c.add(
        "an architecture in capitals",
        InvalidArgument,
        "architecture \"SM_90\"",
        |_, _| answer("SM_90".parse::<Arch>()),
    );
    c.add(
        "a C++ standard the library does not know",
        InvalidArgument,
        "desc->cxx_standard is 23, no C++ standard this library knows",
        |_, ctx| {
            let std = "c++23".parse::<CppStd>()?;
            refused_before_nvrtc(ctx, CompileOptions::new().std(std))
        },
    );
    c.add(
        "a C++ standard by a number the library does not know",
        InvalidArgument,
        "desc->cxx_standard is 18",
        |_, ctx| refused_before_nvrtc(ctx, CompileOptions::new().std(CppStd(18))),
    );
    c.add(
        "a C++ standard without its prefix",
        InvalidArgument,
        "C++ standard \"17\"",
        |_, _| answer("17".parse::<CppStd>()),
    );
    c.add(
        "a define the library refuses, in a background compile",
        InvalidArgument,
        "desc->defines[0] \"A B\" is no macro definition",
        |_, _| {
            let options = CompileOptions::new().define_flag("A B");
            answer(new_program(TINY)?.compile_in_background(&options).join())
        },
    );

    // --- What NVRTC refuses: a Compile error with its log
    c.add(
        "an architecture NVRTC does not know",
        Compile,
        "invalid value for --gpu-architecture",
        |_, ctx| {
            let mut program = new_program(TINY)?;
            let result = program.compile_with(&CompileOptions::new().arch(Arch::Sm(11)));
            ctx.expect(
                program
                    .log()
                    .is_ok_and(|log| log.contains("--gpu-architecture")),
                "the program's log does not name the option",
            );
            answer(result)
        },
    );
    c.add(
        "C++20 code compiled as C++14",
        Compile,
        "concept",
        |_, _| {
            let source = "template <typename T> concept Small = sizeof(T) <= 4;\n";
            let options = CompileOptions::new().std(CppStd::Cpp14);
            answer(new_program(source)?.compile_with(&options))
        },
    );
    c.add(
        "a failed background compile",
        Compile,
        "undeclared_in_the_background",
        |_, ctx| {
            let source = "extern \"C\" __global__ void k() { undeclared_in_the_background(); }\n";
            let result = new_program(source)?
                .compile_in_background(&CompileOptions::new().arch(Arch::Compute(90)))
                .join();
            if let Err(err) = &result {
                ctx.expect(err.log().is_some(), "the error carries no log");
            }
            answer(result)
        },
    );

    // --- LTO-IR
    c.add(
        "LTO-IR of a program compiled without -dlto",
        NotFound,
        "-dlto",
        |f, _| answer(f.compiled.lto_ir()),
    );
    c.add(
        "LTO-IR of a program never compiled",
        NotFound,
        "not been compiled",
        |f, _| answer(f.fresh.lto_ir()),
    );

    // --- Libraries: what is refused before the driver is needed
    c.add(
        "an empty library image",
        InvalidArgument,
        "size is 0",
        |_, _| answer(Library::load(&[])),
    );
    c.add(
        "a library file that does not exist",
        Io,
        "/nonexistent/k.cubin",
        |_, _| answer(Library::load_file("/nonexistent/k.cubin")),
    );
    c.add(
        "a library path that is not UTF-8",
        InvalidArgument,
        "path \"/tmp/\\xFFcuabi.cubin\" is not UTF-8",
        |_, _| answer(Library::load_file(non_utf8_path())),
    );
    c.add(
        "a library path holding a NUL byte",
        InvalidArgument,
        "path contains a NUL byte at byte 4",
        |_, _| answer(Library::load_file("/tmp\0/k.cubin")),
    );

    // --- Raw calls: NULL and wrong-kind handles, a malformed struct
    c.add(
        "a NULL device for a linker (raw)",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_linker_create(null_mut(), std::ptr::null(), &mut out) };
            let _owned = Raw(out, sys::cuabi_linker_release);
            raw(ctx, "cuabi_linker_create", st)
        },
    );
    c.add(
        "a program handle given as a linker (raw)",
        InvalidHandle,
        "linker is not a live cuabi_linker: it is a cuabi_program",
        |f, ctx| {
            let st = unsafe {
                sys::cuabi_linker_add_program(handle(f.compiled_value()), f.compiled.as_raw())
            };
            raw(ctx, "cuabi_linker_add_program", st)
        },
    );
    c.add(
        "a NULL linker for bytes (raw)",
        InvalidHandle,
        "linker is NULL",
        |_, ctx| {
            let bytes = [1u8; 16];
            let st = unsafe {
                sys::cuabi_linker_add_data(
                    null_mut(),
                    sys::CUABI_LINK_INPUT_PTX,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    std::ptr::null(),
                )
            };
            raw(ctx, "cuabi_linker_add_data", st)
        },
    );
    c.add(
        "a NULL linker's log (raw)",
        InvalidHandle,
        "linker is NULL",
        |_, ctx| {
            let mut size = 0usize;
            let st = unsafe { sys::cuabi_linker_get_log(null_mut(), null_mut(), &mut size) };
            raw(ctx, "cuabi_linker_get_log", st)
        },
    );
    c.add(
        "a link description of 8 bytes (raw)",
        InvalidArgument,
        "struct_size 8",
        |_, ctx| {
            let mut desc = link_desc();
            let st = unsafe { sys::cuabi_link_desc_init(&mut desc, 8) };
            ctx.expect(
                desc.struct_size == std::mem::size_of::<sys::cuabi_link_desc>(),
                "the refused init wrote the struct",
            );
            raw(ctx, "cuabi_link_desc_init", st)
        },
    );
    c.add(
        "a NULL library image (raw)",
        InvalidArgument,
        "image is NULL",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_library_load_data(std::ptr::null(), 16, &mut out) };
            let _owned = Raw(out, sys::cuabi_library_release);
            raw(ctx, "cuabi_library_load_data", st)
        },
    );
    c.add(
        "a NULL library for a module (raw)",
        InvalidHandle,
        "library is NULL",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_library_get_module(null_mut(), null_mut(), &mut out) };
            let _owned = Raw(out, sys::cuabi_module_release);
            raw(ctx, "cuabi_library_get_module", st)
        },
    );
    c.add(
        "a NULL module's kernel count (raw)",
        InvalidHandle,
        "module is NULL",
        |_, ctx| {
            let mut count = 0usize;
            let st = unsafe { sys::cuabi_module_get_kernel_count(null_mut(), &mut count) };
            raw(ctx, "cuabi_module_get_kernel_count", st)
        },
    );
    c.add(
        "a program handle given as a module for its compile log (raw)",
        InvalidHandle,
        "module is not a live cuabi_module: it is a cuabi_program",
        |f, ctx| {
            let mut size = 0usize;
            let module = handle(value(f.compiled.as_raw()));
            let st = unsafe { sys::cuabi_module_get_compile_log(module, null_mut(), &mut size) };
            raw(ctx, "cuabi_module_get_compile_log", st)
        },
    );
    c.add(
        "a stale program's LTO-IR (raw)",
        InvalidHandle,
        "program is not a live cuabi_program",
        |f, ctx| {
            let mut size = 0usize;
            let st =
                unsafe { sys::cuabi_program_get_lto_ir(handle(f.stale), null_mut(), &mut size) };
            ctx.expect(
                f.reuser.log().is_ok(),
                "the program in the reused slot stopped working",
            );
            raw(ctx, "cuabi_program_get_lto_ir", st)
        },
    );
    core_cases(&mut c);

    c
}

// ---------------------------------------------------------------------------
// The part that needs a GPU
// ---------------------------------------------------------------------------

pub fn gpu_cases() -> Cases<Gpu> {
    let mut c = Cases::<Gpu>::new();
    use ErrorKind::*;

    // --- Linker inputs
    c.add(
        "link bytes of no known kind",
        InvalidArgument,
        "cannot tell",
        |g, _| {
            let mut l = linker(g)?;
            answer(l.add_data(LinkInput::Auto, b"\x01\x02 no image", Some("g")))
        },
    );
    c.add("no link bytes", InvalidArgument, "size is 0", |g, _| {
        answer(linker(g)?.add_data(LinkInput::Ptx, &[], None))
    });
    c.add(
        "a link input name holding a NUL byte",
        InvalidArgument,
        "input name contains a NUL byte at byte 1",
        |g, _| answer(linker(g)?.add_data(LinkInput::Ptx, b".version 8.0", Some("a\0b"))),
    );
    c.add(
        "a link input file that does not exist",
        Io,
        "/nonexistent/callee.ptx",
        |g, _| answer(linker(g)?.add_file(LinkInput::Auto, "/nonexistent/callee.ptx")),
    );
    c.add(
        "an empty link input file",
        InvalidArgument,
        "the file is empty",
        |g, _| {
            let path =
                std::env::temp_dir().join(format!("cuabi-rs-empty-{}.ptx", std::process::id()));
            std::fs::write(&path, b"")?;
            let ran = answer(linker(g)?.add_file(LinkInput::Auto, &path));
            std::fs::remove_file(&path)?;
            ran
        },
    );
    c.add(
        "a link input path that is not UTF-8",
        InvalidArgument,
        "is not UTF-8",
        |g, _| answer(linker(g)?.add_file(LinkInput::Cubin, non_utf8_path())),
    );
    c.add(
        "a program never compiled, added to a linker",
        InvalidArgument,
        "has not compiled successfully",
        |g, _| answer(linker(g)?.add_program(&new_program(TINY)?)),
    );
    c.add(
        "a -dlto program for the driver's linker",
        NotSupported,
        "LTO-IR needs the nvJitLink backend",
        |g, _| {
            let program = compiled(CALLER, &rdc(g, CompileOptions::new().dlto(true))?)?;
            let options = LinkOptions::new().backend(LinkBackend::Driver);
            answer(g.device.create_linker(&options)?.add_program(&program))
        },
    );

    // --- Linker options
    c.add(
        "options for the driver's linker",
        InvalidArgument,
        "takes no options",
        |g, _| {
            let options = LinkOptions::new()
                .backend(LinkBackend::Driver)
                .option("-O3");
            answer(g.device.create_linker(&options))
        },
    );
    c.add(
        "link-time optimisation with the driver's linker",
        NotSupported,
        "needs nvJitLink",
        |g, _| {
            let options = LinkOptions::new().backend(LinkBackend::Driver).lto(true);
            answer(g.device.create_linker(&options))
        },
    );
    c.add(
        "a link option holding a NUL byte",
        InvalidArgument,
        "link option 1 contains a NUL byte at byte 2",
        |g, _| {
            let options = LinkOptions::new().options(["-O3", "-O\0"]);
            answer(g.device.create_linker(&options))
        },
    );
    c.add(
        "an nvJitLink option it does not know",
        InvalidArgument,
        "-no-such-link-option",
        |g, _| {
            let options = LinkOptions::new()
                .backend(LinkBackend::Nvjitlink)
                .option("-no-such-link-option");
            let program = compiled(CALLER, &rdc(g, CompileOptions::new())?)?;
            let mut l = g.device.create_linker(&options)?;
            l.add_program(&program)?;
            answer(l.link())
        },
    );

    // --- Linking
    c.add(
        "nothing to link",
        InvalidArgument,
        "nothing to link",
        |g, _| answer(linker(g)?.link()),
    );
    c.add("a link missing a function", Compile, "twice", |g, ctx| {
        let program = compiled(CALLER, &rdc(g, CompileOptions::new())?)?;
        let mut l = g.device.create_linker(&LinkOptions::new().no_cache())?;
        l.add_program(&program)?;
        let result = l.link();
        if let Err(err) = &result {
            ctx.expect(
                err.log().is_some_and(|log| log.contains("twice")),
                "the error's log does not name twice",
            );
            ctx.expect(
                l.log().is_ok_and(|log| log.contains("twice")),
                "the linker's log does not name twice",
            );
        }
        answer(result)
    });
    c.add(
        "linking again after a failed link",
        InvalidArgument,
        "already linked",
        |g, _| {
            let program = compiled(CALLER, &rdc(g, CompileOptions::new())?)?;
            let mut l = g.device.create_linker(&LinkOptions::new().no_cache())?;
            l.add_program(&program)?;
            if l.link().is_ok() {
                return Err("a link missing twice succeeded".into());
            }
            answer(l.link())
        },
    );
    c.add(
        "the image of a linker that has not linked",
        NotFound,
        "has not linked successfully",
        |g, _| answer(linker(g)?.image()),
    );

    // --- Libraries and kernel listings
    c.add(
        "library bytes that are no image",
        InvalidArgument,
        "neither CUBIN",
        |_, _| answer(Library::load(b"not PTX, not CUBIN\0")),
    );
    c.add(
        "a kernel index past the module's kernels",
        OutOfRange,
        "index 1000 is past the module's 1 kernels",
        |g, _| answer(g.saxpy_module.kernel_name(1000, NameForm::Symbol)),
    );
    c.add(
        "a C++ kernel name two kernels have",
        InvalidArgument,
        "the name 'scale' matches 2 kernels of the module",
        |g, _| {
            let module = g.device.compile(OVERLOADED, &CompileOptions::new())?;
            answer(module.function("scale"))
        },
    );
    c.add(
        "a kernel name no kernel has",
        NotFound,
        "its kernels: 'saxpy'",
        |g, _| answer(g.saxpy_module.function("doublify")),
    );

    // --- Raw calls the library refuses
    c.add(
        "kernel name form 7 (raw)",
        InvalidArgument,
        "form 7 is not a cuabi_name_form",
        |g, ctx| {
            let mut size = 0usize;
            let st = unsafe {
                sys::cuabi_module_get_kernel_name(
                    g.saxpy_module.as_raw(),
                    0,
                    7,
                    null_mut(),
                    &mut size,
                )
            };
            raw(ctx, "cuabi_module_get_kernel_name", st)
        },
    );
    c.add(
        "link input kind 42 (raw)",
        InvalidArgument,
        "kind 42",
        |g, ctx| {
            let l = linker(g)?;
            let bytes = [1u8; 16];
            let st = unsafe {
                sys::cuabi_linker_add_data(
                    l.as_raw(),
                    42,
                    bytes.as_ptr().cast(),
                    16,
                    std::ptr::null(),
                )
            };
            raw(ctx, "cuabi_linker_add_data", st)
        },
    );
    c.add(
        "NULL link bytes (raw)",
        InvalidArgument,
        "data is NULL",
        |g, ctx| {
            let l = linker(g)?;
            let st = unsafe {
                sys::cuabi_linker_add_data(
                    l.as_raw(),
                    sys::CUABI_LINK_INPUT_PTX,
                    std::ptr::null(),
                    16,
                    std::ptr::null(),
                )
            };
            raw(ctx, "cuabi_linker_add_data", st)
        },
    );
    c.add(
        "link backend 9 (raw)",
        InvalidArgument,
        "desc->backend 9 is not a cuabi_link_backend",
        |g, ctx| {
            let mut desc = link_desc();
            desc.backend = 9;
            linker_create(g, ctx, &desc)
        },
    );
    c.add(
        "link flags this version does not define (raw)",
        InvalidArgument,
        "desc->flags has bits this version does not define",
        |g, ctx| {
            let mut desc = link_desc();
            desc.flags = 1 << 7;
            linker_create(g, ctx, &desc)
        },
    );
    c.add(
        "link options NULL with a count of 2 (raw)",
        InvalidArgument,
        "desc->options is NULL but desc->num_options is 2",
        |g, ctx| {
            let mut desc = link_desc();
            desc.num_options = 2;
            linker_create(g, ctx, &desc)
        },
    );
    c.add(
        "a stale program added to a linker (raw)",
        InvalidHandle,
        "program is not a live cuabi_program",
        |g, ctx| {
            let l = linker(g)?;
            let p = new_program(TINY)?;
            let stale = value(p.as_raw());
            drop(p);
            let st = unsafe { sys::cuabi_linker_add_program(l.as_raw(), handle(stale)) };
            raw(ctx, "cuabi_linker_add_program", st)
        },
    );
    c
}

// ---------------------------------------------------------------------------
// The core's cases of typed options, as data (tests/corpus/cases.json)
// ---------------------------------------------------------------------------

/// Why a core case's input is not handed to the library through
/// [`CompileOptions`].
enum NotWritten {
    /// Rust's types cannot hold the value (a `bool` of 2): listed, with the
    /// reason, not run.
    Unwritable(String),
    /// The crate's options could hold it but this runner cannot express it
    /// (an unknown field, a value of an unexpected type): a failed case.
    Unexpressed(String),
}

/// A 0-or-1 field as the `bool` the builder takes.
fn flag(field: &str, value: &Value) -> Result<bool, NotWritten> {
    match *value {
        Value::Bool(on) => Ok(on),
        Value::Int(0) => Ok(false),
        Value::Int(1) => Ok(true),
        Value::Int(n) => Err(NotWritten::Unwritable(format!(
            "{field} is {n}: CompileOptions::{} takes a bool, which holds no {n}",
            builder_of(field)
        ))),
        ref other => Err(NotWritten::Unexpressed(format!(
            "{field} is {other:?}, not a flag"
        ))),
    }
}

fn builder_of(field: &str) -> &str {
    match field {
        "device_debug" => "device_debug",
        "lto" => "dlto",
        "relocatable" => "rdc",
        other => other,
    }
}

fn strings<'v>(field: &str, value: &'v Value) -> Result<&'v [&'static str], NotWritten> {
    match value {
        Value::Strs(items) => Ok(items),
        other => Err(NotWritten::Unexpressed(format!(
            "{field} is {other:?}, not a list of strings"
        ))),
    }
}

/// A case's fields as the crate's typed options: the architecture defaults to
/// compute_75, so an accepted case compiles without a device.
fn rust_options(case: &CoreCompileCase) -> Result<CompileOptions, NotWritten> {
    let mut options = CompileOptions::new();
    let mut arch = Some(Arch::Compute(75));
    for (field, value) in case.fields {
        options = match (*field, value) {
            ("arch", Value::Str(text)) => match text.parse::<Arch>() {
                Ok(a) => {
                    arch = Some(a);
                    options
                }
                Err(err) => {
                    return Err(NotWritten::Unwritable(format!(
                        "arch {text:?} is no Arch (Sm(N) or Compute(N)): {err}"
                    )))
                }
            },
            ("cxx_standard", Value::Int(n)) => match i32::try_from(*n) {
                Ok(n) => options.std(CppStd(n)),
                Err(_) => {
                    return Err(NotWritten::Unwritable(format!(
                        "cxx_standard {n} does not fit CppStd's i32"
                    )))
                }
            },
            ("defines", value) => {
                for define in strings(field, value)? {
                    options = match define.split_once('=') {
                        Some((name, text)) => options.define(name, text),
                        None => options.define_flag(*define),
                    };
                }
                options
            }
            ("include_paths", value) => {
                for path in strings(field, value)? {
                    options = options.include_path(*path);
                }
                options
            }
            ("options", value) => options.options(strings(field, value)?.iter().copied()),
            ("fast_math", value) => options.fast_math(flag(field, value)?),
            ("line_info", value) => options.line_info(flag(field, value)?),
            ("device_debug", value) => options.device_debug(flag(field, value)?),
            ("lto", value) => options.dlto(flag(field, value)?),
            ("relocatable", value) => options.rdc(flag(field, value)?),
            (field, value) => {
                return Err(NotWritten::Unexpressed(format!(
                    "this runner does not map {field} = {value:?} to CompileOptions"
                )))
            }
        };
    }
    if let Some(arch) = arch {
        options = options.arch(arch);
    }
    Ok(options)
}

/// The error kind of a status named as `cuabi_status_get_name` names it;
/// `Ok(None)` for `CUABI_SUCCESS`.
fn expected_kind(name: &str) -> Result<Option<ErrorKind>, String> {
    if name == "CUABI_SUCCESS" {
        return Ok(None);
    }
    (1..=1024)
        .find(|&s| cuabi::status_name(s) == name)
        .map(|s| Some(ErrorKind::from_status(s)))
        .ok_or_else(|| format!("no status is named {name}"))
}

/// The core's cases that Rust's types cannot write, with why.
fn unwritable() -> Vec<(&'static str, String)> {
    CORE_COMPILE_CASES
        .iter()
        .filter_map(|case| match rust_options(case) {
            Err(NotWritten::Unwritable(why)) => Some((case.id, why)),
            _ => None,
        })
        .collect()
}

/// Prints the core's cases not run because Rust's types cannot write them.
pub fn report_unwritable() {
    let cases = unwritable();
    if cases.is_empty() {
        return;
    }
    println!(
        "  not run: {} of the core's {} compile cases (tests/corpus/cases.json) cannot be written \
         in Rust:",
        cases.len(),
        CORE_COMPILE_CASES.len()
    );
    for (id, why) in cases {
        println!("    {id}: {why}");
    }
}

/// Every core case of typed options Rust can write, through
/// `CompileOptions` and `Program::compile_with`: the same status and needle
/// as in every language. One it cannot express is a failed case.
fn core_cases(c: &mut Cases<Cpu>) {
    for case in CORE_COMPILE_CASES {
        let name = format!("core case {}", case.id);
        let expected = match expected_kind(case.status) {
            Ok(kind) => kind,
            Err(why) => {
                let why = format!("{}: {why}", case.id);
                c.add(name, None, "", move |_, _| Err(Setup(why.clone())));
                continue;
            }
        };
        match rust_options(case) {
            Ok(options) if expected.is_some() => {
                c.add(name, expected, case.needle, move |_, ctx| {
                    refused_before_nvrtc(ctx, options.clone())
                })
            }
            Ok(options) => c.add(name, None, case.needle, move |_, _| {
                answer(new_program(TINY)?.compile_with(&options))
            }),
            Err(NotWritten::Unwritable(_)) => {}
            Err(NotWritten::Unexpressed(why)) => {
                let why = format!(
                    "{}: the Rust CompileOptions cannot express its input: {why}",
                    case.id
                );
                c.add(name, expected, case.needle, move |_, _| {
                    Err(Setup(why.clone()))
                });
            }
        }
    }
}
