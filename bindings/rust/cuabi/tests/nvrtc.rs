//! Run-time compilation with NVRTC: needs no GPU.

mod common;

use common::SAXPY;

use cuabi::{ErrorKind, Program};

#[test]
fn saxpy_compiles_to_ptx_for_a_virtual_architecture() {
    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    assert_eq!(program.log().unwrap(), "", "no log before compiling");
    program
        .compile(&["--fmad=false", "--gpu-architecture=compute_90"])
        .unwrap();
    let ptx = program.ptx().unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(ptx.contains(".visible .entry saxpy("), "{ptx}");
    assert!(!ptx.contains('\0'));
    let err = program.cubin().expect_err("compute_90 makes no CUBIN");
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
}

#[test]
fn saxpy_compiles_to_cubin_for_a_real_architecture() {
    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    program.compile(&["--gpu-architecture=sm_90"]).unwrap();
    let cubin = program.cubin().unwrap();
    assert!(cubin.len() > 64);
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF file");
}

#[test]
fn a_syntax_error_gives_a_compile_error_with_the_log() {
    let mut program = Program::new(
        "extern \"C\" __global__ void broken(float *p) { p[0] = 1.0f }\n",
        "broken.cu",
    )
    .unwrap();
    let err = program
        .compile(&["--gpu-architecture=compute_90"])
        .expect_err("a missing semicolon");
    assert_eq!(err.kind(), ErrorKind::Compile, "{err}");
    assert_eq!(err.name(), "CUABI_ERROR_COMPILE");
    let log = err.log().expect("the error carries NVRTC's log");
    assert!(log.contains("broken.cu"), "the log names the file: {log}");
    assert!(log.contains("error"), "{log}");
    assert!(
        err.to_string().contains(log.trim_end()),
        "Display shows the log: {err}"
    );
    // The program keeps the same log.
    assert_eq!(program.log().unwrap(), log);
    // Nothing was produced.
    assert_eq!(program.ptx().unwrap_err().kind(), ErrorKind::NotFound);
}

#[test]
fn an_unknown_option_is_a_compile_error() {
    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    let err = program
        .compile(&["--no-such-option-anywhere"])
        .expect_err("NVRTC rejects the option");
    assert_eq!(err.kind(), ErrorKind::Compile, "{err}");
    assert!(!err.message().is_empty());
}

#[test]
fn a_program_compiles_once() {
    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    program.compile(&["--gpu-architecture=compute_90"]).unwrap();
    let err = program
        .compile(&["--gpu-architecture=compute_90"])
        .expect_err("a second compile");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    // The first result is still there.
    assert!(program.ptx().unwrap().contains("saxpy"));
}

#[test]
fn name_expressions_give_lowered_names() {
    let source = "template <typename T> __global__ void fill(T *p, T v) { p[threadIdx.x] = v; }\n";
    let mut program = Program::new(source, "fill.cu").unwrap();
    program.add_name_expression("fill<float>").unwrap();
    program.add_name_expression("fill<int>").unwrap();
    program.compile(&["--gpu-architecture=compute_90"]).unwrap();
    let float = program.lowered_name("fill<float>").unwrap();
    let int = program.lowered_name("fill<int>").unwrap();
    assert!(float.starts_with("_Z") && float.contains("fill"), "{float}");
    assert_ne!(float, int);
    assert!(program.ptx().unwrap().contains(&float));
    let err = program
        .lowered_name("fill<double>")
        .expect_err("never registered");
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
}

#[test]
fn headers_are_included_by_name() {
    let source = "#include \"params.h\"\n\
                  extern \"C\" __global__ void k(int *p) { p[0] = MAGIC; }\n";
    let mut with =
        Program::with_headers(source, "k.cu", &[("params.h", "#define MAGIC 4242\n")]).unwrap();
    with.compile(&["--gpu-architecture=compute_90"]).unwrap();
    assert!(with.ptx().unwrap().contains("4242"));

    let mut without = Program::new(source, "k.cu").unwrap();
    let err = without
        .compile(&["--gpu-architecture=compute_90"])
        .expect_err("params.h is missing");
    assert_eq!(err.kind(), ErrorKind::Compile);
    assert!(err.log().unwrap_or_default().contains("params.h"), "{err}");
}

#[test]
fn nul_bytes_in_strings_are_refused_with_the_argument_named() {
    let err = Program::new("__global__ void k() {}\0", "k.cu").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("source"), "{err}");

    let err = Program::with_headers("x", "k.cu", &[("a.h", "\0")]).unwrap_err();
    assert!(err.message().contains("a.h"), "{err}");

    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    let err = program
        .compile(&["--fmad=false", "-DX=\0"])
        .expect_err("a NUL byte in an option");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("option 1"), "{err}");
    let err = program.add_name_expression("a\0b").unwrap_err();
    assert!(
        err.message()
            .contains("expression contains a NUL byte at byte 1"),
        "{err}"
    );
}

#[test]
fn programs_compile_on_many_threads_at_once() {
    let program_ptx: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                scope.spawn(move || {
                    let source =
                        format!("extern \"C\" __global__ void k{i}(int *p) {{ p[0] = {i}; }}\n");
                    let mut program = Program::new(&source, "k.cu").unwrap();
                    program.compile(&["--gpu-architecture=compute_90"]).unwrap();
                    program.ptx().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, ptx) in program_ptx.iter().enumerate() {
        assert!(ptx.contains(&format!(".entry k{i}(")), "{ptx}");
    }
}

#[test]
fn programs_move_between_threads() {
    let mut program = Program::new(SAXPY, "saxpy.cu").unwrap();
    program.compile(&["--gpu-architecture=compute_90"]).unwrap();
    let ptx = std::thread::spawn(move || program.ptx().unwrap())
        .join()
        .unwrap();
    assert!(ptx.contains("saxpy"));
}
