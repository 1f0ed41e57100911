//! Compilation beyond one string that needs NVRTC but no GPU: typed compile
//! options handed to the library, LTO-IR, the compile log of a
//! successful compile, and compiling on other threads.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Instant;

use common::SAXPY;

use cuabi::{
    Arch, Background, CompileOptions, CppStd, CxxStandard, ErrorKind, KernelName, Library,
    LinkOptions, Linker, Module, Program,
};

/// Compiles `source` with `options`, panicking with the error (and its log).
fn compiled(source: &str, options: &CompileOptions) -> Program {
    let mut program = Program::with_options(source, options).unwrap();
    if let Err(err) = program.compile_with(options) {
        panic!("{err}");
    }
    program
}

#[test]
fn typed_options_reach_nvrtc_through_the_library() {
    // The crate hands each value to its field of cuabi_compile_desc; the
    // library spells the NVRTC option. What NVRTC saw shows in what it made.
    let source = "#if __cplusplus != 201402L\n#error not C++14\n#endif\n\
                  static_assert(SQUARE(3) == 9 && N == 256 && RAW == 1, \"defines\");\n\
                  #ifndef USE_FMA\n#error USE_FMA\n#endif\n\
                  extern \"C\" __global__ void k(float *p) { p[0] = p[1] / p[2]; }\n";
    let options = CompileOptions::new()
        .option("-DRAW=1")
        .line_info(true)
        .fast_math(true)
        .define_flag("USE_FMA")
        .define("SQUARE(x)", "((x) * (x))")
        .define("N", 256)
        .std(CppStd::Cpp20)
        .std(CppStd::Cpp14) // a later standard replaces the earlier one
        .arch(Arch::Compute(80))
        .arch(Arch::Compute(90));
    let ptx = compiled(source, &options).ptx().unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(ptx.contains("\t.loc\t"), "line information");
    assert!(
        !ptx.contains("div.rn.f32"),
        "fast math left an IEEE division"
    );
    // The generated enum is taken too.
    let generated = options.clone().std(CxxStandard::Cxx17);
    let mut program = Program::new(source, "k.cu").unwrap();
    let err = program.compile_with(&generated).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Compile, "{err}");
    assert!(err.log().unwrap_or_default().contains("not C++14"), "{err}");
}

#[test]
fn architectures_and_standards_read_and_write_their_names() {
    assert_eq!("sm_90".parse::<Arch>().unwrap(), Arch::Sm(90));
    assert_eq!("compute_120".parse::<Arch>().unwrap(), Arch::Compute(120));
    assert_eq!(Arch::Sm(86).to_string(), "sm_86");
    assert_eq!(Arch::Compute(75).to_string(), "compute_75");
    assert_eq!(Arch::from_capability(9, 0), Arch::Sm(90));
    assert_eq!(Arch::from_capability(12, 1).number(), 121);
    for std in CppStd::ALL {
        assert_eq!(std.to_string().parse::<CppStd>().unwrap(), std);
    }
    assert_eq!(CppStd::Cpp17.to_string(), "c++17");
    assert_eq!(CppStd::Cpp03.to_string(), "c++03");
    assert_eq!(CppStd::from(CxxStandard::Cxx20), CppStd::Cpp20);
    for (text, needle) in [
        ("sm_90a", "\"sm_90a\" is not sm_XY or compute_XY"),
        ("sm_9", "\"sm_9\""),
        ("gfx90a", "\"gfx90a\""),
        ("SM_90", "\"SM_90\""),
        ("sm_", "\"sm_\""),
        ("", "architecture \"\""),
    ] {
        let err = text.parse::<Arch>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{text}: {err}");
        assert!(err.message().contains(needle), "{text}: {err}");
    }
    // Which standards exist is the library's to say, when a compile reads it.
    assert_eq!("c++23".parse::<CppStd>().unwrap(), CppStd(23));
    let err = "gnu++17".parse::<CppStd>().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.message(),
        "C++ standard \"gnu++17\": a standard is written c++NN (e.g. c++17)"
    );
}

/// A compile of SAXPY with `options` that the library (or the crate, for
/// what C cannot take) refuses before NVRTC runs; the error.
fn refused(options: &CompileOptions) -> cuabi::Error {
    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    let err = program.compile_with(options).unwrap_err();
    assert_eq!(program.log().unwrap(), "", "NVRTC ran: {err}");
    err
}

#[test]
fn values_the_library_refuses_are_named_by_it() {
    // The library's words, the same in every language.
    let cases: [(CompileOptions, &str); 10] = [
        (
            CompileOptions::new().define("TWO WORDS", 1),
            "cuabi_program_compile_with: desc->defines[0] \"TWO WORDS=1\" is no macro definition: \
             a macro name holds no whitespace",
        ),
        (
            CompileOptions::new().define_flag(""),
            "desc->defines[0] is empty",
        ),
        (
            CompileOptions::new()
                .define_flag("OK")
                .define_flag("9LIVES"),
            "desc->defines[1] \"9LIVES\" is no macro definition: a macro name cannot start with \
             a digit",
        ),
        (
            CompileOptions::new().define("F(x", 1),
            "desc->defines[0] \"F(x=1\" is no macro definition: the parameter list has no ')'",
        ),
        (
            CompileOptions::new().define("F(a, b)", 1),
            "a parameter is an identifier or \"...\", and a space starts none",
        ),
        (
            CompileOptions::new().include_path(""),
            "desc->include_paths[0] is empty",
        ),
        (
            CompileOptions::new().arch(Arch::Sm(9)),
            "desc->arch \"sm_9\" is no GPU architecture",
        ),
        (
            CompileOptions::new().std(CppStd(18)),
            "desc->cxx_standard is 18, no C++ standard this library knows",
        ),
        (
            CompileOptions::new().std("c++23".parse::<CppStd>().unwrap()),
            "desc->cxx_standard is 23",
        ),
        (
            CompileOptions::new()
                .arch(Arch::Sm(90))
                .option("-arch=sm_80"),
            "desc->arch (\"sm_90\") and desc->options[0] (\"-arch=sm_80\") both name an \
             architecture",
        ),
    ];
    for (options, needle) in cases {
        let err = refused(&options);
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        assert!(err.message().contains(needle), "{needle}: {err}");
    }
    // What C cannot take is the crate's to refuse.
    let err = refused(&CompileOptions::new().define("N", "1\0x"));
    assert!(
        err.message()
            .contains("define \"N\" contains a NUL byte at byte 3"),
        "{err}"
    );
    let err = refused(&CompileOptions::new().include_path("/tmp\0/include"));
    assert!(
        err.message()
            .contains("include path \"/tmp\\0/include\" contains a NUL byte at byte 4"),
        "{err}"
    );
    let bad = PathBuf::from(OsStr::from_bytes(b"/tmp/\xffinclude"));
    let err = refused(&CompileOptions::new().include_path(bad));
    assert!(err.message().contains("is not UTF-8"), "{err}");
}

#[test]
fn function_like_macros_are_the_librarys_to_accept() {
    let source = "static_assert(SQUARE(3) == 9 && FIRST(4, 5, 6) == 4 && A == 1, \"\");\n\
                  extern \"C\" __global__ void k(int *p) { p[0] = 1; }\n";
    let options = CompileOptions::new()
        .arch(Arch::Compute(90))
        .define("SQUARE(x)", "((x)*(x))")
        .define("FIRST(a,...)", "(a)")
        // A name holding '=' is a whole definition, as the library reads it.
        .define_flag("A=1");
    assert!(compiled(source, &options)
        .ptx()
        .unwrap()
        .contains(".entry k("));
}

#[test]
fn with_options_gives_the_program_its_name_headers_and_name_expressions() {
    let options = CompileOptions::new()
        .name("scale.cu")
        .header("factor.h", "#define FACTOR 7\n")
        .name_expression("scale<float>")
        .arch(Arch::Compute(90));
    let source = "#include \"factor.h\"\n\
                  template <typename T> __global__ void scale(T *x) { x[0] *= FACTOR; }\n";
    let program = compiled(source, &options);
    let lowered = program.lowered_name("scale<float>").unwrap();
    assert!(lowered.starts_with("_Z"), "{lowered}");
    assert!(program.ptx().unwrap().contains(&lowered));
    // The file name reaches the diagnostics.
    let mut broken = Program::with_options("__global__ void k() { x }\n", &options).unwrap();
    let err = broken.compile_with(&options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Compile);
    assert!(err.log().unwrap_or_default().contains("scale.cu"), "{err}");
}

#[test]
fn every_cpp_standard_reaches_nvrtc() {
    // Concepts exist from C++20 on.
    let source = "template <typename T> concept Small = sizeof(T) <= 4;\n\
                  template <Small T> __device__ T twice(T x) { return 2 * x; }\n\
                  extern \"C\" __global__ void k(int *p) { p[0] = twice(21); }\n";
    let options = |std| CompileOptions::new().arch(Arch::Compute(90)).std(std);
    let program = compiled(source, &options(CppStd::Cpp20));
    assert!(program.ptx().unwrap().contains("42"));
    let mut older = Program::new(source, "k.cu").unwrap();
    let err = older.compile_with(&options(CppStd::Cpp17)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Compile, "{err}");
    assert!(err.to_string().contains("concept"), "{err}");
    // Every standard the crate names is one NVRTC takes.
    for std in CppStd::ALL {
        let program = compiled(
            "extern \"C\" __global__ void k(int *p) { p[0] = 1; }\n",
            &options(std),
        );
        assert!(program.ptx().unwrap().contains(".entry k("), "{std}");
    }
}

#[test]
fn defines_and_include_paths_change_what_compiles() {
    let source = "#include \"limits_of_the_test.h\"\n\
                  extern \"C\" __global__ void k(int *p) {\n\
                  #ifdef NEGATE\n  p[0] = -VALUE * FROM_HEADER;\n\
                  #else\n  p[0] = VALUE * FROM_HEADER;\n#endif\n}\n";
    let dir = std::env::temp_dir().join(format!("cuabi-rs-include-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("limits_of_the_test.h"), "#define FROM_HEADER 3\n").unwrap();
    let base = CompileOptions::new()
        .arch(Arch::Compute(90))
        .include_path(&dir);
    let plus = compiled(source, &base.clone().define("VALUE", 1409));
    let minus = compiled(
        source,
        &base.clone().define("VALUE", 1409).define_flag("NEGATE"),
    );
    assert!(plus.ptx().unwrap().contains("4227"), "3 * 1409");
    assert!(minus.ptx().unwrap().contains("-4227"), "-3 * 1409");
    // Without the include path the header is not found.
    let mut lost = Program::new(source, "k.cu").unwrap();
    let err = lost
        .compile_with(&CompileOptions::new().define("VALUE", 1))
        .unwrap_err();
    assert!(
        err.log()
            .unwrap_or_default()
            .contains("limits_of_the_test.h"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn switches_reach_nvrtc() {
    let source =
        "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = sinf(p[threadIdx.x]); }\n";
    let arch = CompileOptions::new().arch(Arch::Compute(90));
    let plain = compiled(source, &arch).ptx().unwrap();
    let fast = compiled(source, &arch.clone().fast_math(true))
        .ptx()
        .unwrap();
    assert!(fast.contains("sin.approx"), "{fast}");
    assert!(!plain.contains("sin.approx"));
    let lines = compiled(source, &arch.clone().line_info(true))
        .ptx()
        .unwrap();
    assert!(
        lines.contains("\t.loc\t"),
        "-lineinfo gives line information"
    );
    assert!(!plain.contains("\t.loc\t"));
    let debug = compiled(source, &arch.clone().device_debug(true))
        .ptx()
        .unwrap();
    assert!(debug.contains(".debug_info"), "-G gives debug sections");
    assert!(!plain.contains(".debug_info"));
}

const CALLER: &str = "extern \"C\" __device__ float twice(float x);\n\
    extern \"C\" __global__ void apply(float *x, unsigned n) {\n\
      unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      if (i < n) x[i] = twice(x[i]) + 1.0f;\n}\n";

#[test]
fn relocatable_code_lets_a_kernel_call_a_function_defined_elsewhere() {
    let sm = CompileOptions::new().arch(Arch::Sm(90));
    let mut whole = Program::new(CALLER, "caller.cu").unwrap();
    let err = whole.compile_with(&sm).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Compile, "{err}");
    assert!(err.to_string().contains("twice"), "{err}");
    let relocatable = compiled(CALLER, &sm.clone().rdc(true));
    assert_eq!(&relocatable.cubin().unwrap()[..4], b"\x7fELF");
}

#[test]
fn dlto_programs_have_lto_ir_and_others_do_not() {
    let options = CompileOptions::new()
        .arch(Arch::Sm(90))
        .dlto(true)
        .rdc(true);
    let program = compiled(CALLER, &options);
    let ir = program.lto_ir().unwrap();
    assert!(ir.len() > 16, "{} bytes of LTO-IR", ir.len());
    let plain = compiled(CALLER, &CompileOptions::new().arch(Arch::Sm(90)).rdc(true));
    let err = plain.lto_ir().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.message().contains("-dlto"), "{err}");
    let fresh = Program::new(CALLER, "caller.cu").unwrap();
    assert_eq!(fresh.lto_ir().unwrap_err().kind(), ErrorKind::NotFound);
}

#[test]
fn a_successful_compile_keeps_its_warnings_in_the_log() {
    let source = "#warning \"a warning worth keeping\"\nextern \"C\" __global__ void k() {}\n";
    let options = CompileOptions::new()
        .name("warned.cu")
        .arch(Arch::Compute(90));
    let program = compiled(source, &options);
    let log = program.log().unwrap();
    assert!(log.contains("warned.cu(1): warning"), "{log}");
    assert!(log.contains("a warning worth keeping"), "{log}");
}

/// A kernel that takes NVRTC a while: many instances of a template.
fn heavy_source(tag: usize) -> String {
    let mut source = format!(
        "template <int N> __device__ float term(float x) {{ return x * N + term<N - 1>(x); }}\n\
         template <> __device__ float term<0>(float x) {{ return x; }}\n\
         extern \"C\" __global__ void heavy{tag}(float *p) {{\n  float x = p[threadIdx.x];\n"
    );
    for i in 0..48 {
        source.push_str(&format!("  x = term<{}>(x) * 0.5f;\n", 100 + i));
    }
    source.push_str("  p[threadIdx.x] = x;\n}\n");
    source
}

#[test]
fn a_background_compile_leaves_the_calling_thread_running() {
    let options = CompileOptions::new()
        .arch(Arch::Compute(90))
        .std(CppStd::Cpp17);
    let program = Program::with_options(&heavy_source(0), &options).unwrap();
    let started = Instant::now();
    let compiling = program.compile_in_background(&options);
    // This thread keeps working while NVRTC runs on the other.
    let mut iterations = 0u64;
    while !compiling.is_finished() {
        iterations += 1;
        std::hint::black_box(iterations);
        std::thread::yield_now();
    }
    let took = started.elapsed();
    let program = compiling.join().unwrap();
    assert!(
        iterations > 0,
        "the calling thread made no progress during a {took:?} compile"
    );
    assert!(program.ptx().unwrap().contains(".entry heavy0("));
    // A failed background compile answers the error with NVRTC's log.
    let broken = Program::new("__global__ void k() { undeclared(); }\n", "broken.cu").unwrap();
    let err = broken.compile_in_background(&options).join().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Compile);
    assert!(
        err.log().unwrap_or_default().contains("undeclared"),
        "{err}"
    );
}

#[test]
fn programs_compile_on_a_spawned_thread_and_come_back() {
    let options = CompileOptions::new().arch(Arch::Sm(90)).rdc(true);
    let program = Program::with_options(CALLER, &options).unwrap();
    let thread = std::thread::spawn(move || {
        let mut program = program;
        program.compile_with(&options).map(|()| program)
    });
    let program = thread.join().unwrap().unwrap();
    assert_eq!(&program.cubin().unwrap()[..4], b"\x7fELF");
    // Several programs at once, each on its own thread.
    let compiling: Vec<Background<Program>> = (1..4)
        .map(|tag| {
            let options = CompileOptions::new().arch(Arch::Compute(90));
            Program::with_options(&heavy_source(tag), &options)
                .unwrap()
                .compile_in_background(&options)
        })
        .collect();
    for (tag, work) in (1..4).zip(compiling) {
        let ptx = work.join().unwrap().ptx().unwrap();
        assert!(ptx.contains(&format!(".entry heavy{tag}(")));
    }
}

#[test]
fn compile_and_link_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<(Program, CompileOptions, Arch, CppStd)>();
    send_sync::<(Linker, LinkOptions, Library, Module, KernelName)>();
    send::<(Background<Module>, Background<Program>)>();
    send::<Background<(Module, Linker)>>();
}
