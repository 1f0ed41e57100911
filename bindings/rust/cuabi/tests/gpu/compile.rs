//! GPU tests of compilation beyond one string (issue 14): C++ kernels found
//! by their plain names and listed, the compile log of a successful compile,
//! defines that change what a kernel computes, linking relocatable programs
//! and LTO-IR through nvJitLink and the driver, the link cache, libraries,
//! and compiles and links on other threads.
//!
//! The tests that compile programs for linking target the device's own
//! architecture ([`Device::arch`]).

use cuabi::{
    Arch, CompileOptions, Device, ErrorKind, LaunchConfig, Library, LinkBackend, LinkInput,
    LinkOptions, Linker, Module, NameForm, Program,
};

use super::{Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    cxx_kernels_are_found_by_plain_names_and_listed,
    the_compile_log_keeps_warnings_and_is_empty_from_the_cache,
    defines_change_what_a_kernel_computes,
    relocatable_programs_link_through_either_backend,
    a_link_missing_a_function_fails_with_a_log_naming_it,
    lto_ir_links_with_link_time_optimisation_and_the_driver_refuses_it,
    a_second_identical_link_comes_from_the_cache_and_files_are_read,
    a_library_serves_its_kernels_as_a_module_of_the_device,
    compiles_and_links_run_on_other_threads,
];

/// The PyCUDA tutorial's kernel (no `extern "C"`) beside two instances of a
/// template in a namespace.
const CXX: &str = r#"
namespace ops {
template <typename T> __global__ void scale(T* x, T a) { x[threadIdx.x] *= a; }
template __global__ void scale<float>(float*, float);
template __global__ void scale<int>(int*, int);
}
__global__ void doublify(float* a) { a[threadIdx.x] *= 2.0f; }
"#;

/// Calls `twice`, which it does not define.
const CALLER: &str = r#"
extern "C" __device__ float twice(float x);
extern "C" __global__ void apply(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = twice(x[i]) + 1.0f;
}
"#;

/// Defines `twice`.
const CALLEE: &str = r#"
extern "C" __device__ float twice(float x) { return 2.0f * x; }
"#;

fn expect_err<T>(
    result: cuabi::Result<T>,
    kind: ErrorKind,
    needle: &str,
    what: &str,
) -> TestResult {
    match result {
        Ok(_) => Err(format!("{what}: succeeded").into()),
        Err(err) if err.kind() == kind && err.to_string().contains(needle) => Ok(()),
        Err(err) => Err(format!("{what}: expected {kind:?} holding '{needle}', got {err}").into()),
    }
}

/// A program compiled for `device` with `options` (its architecture added).
fn program(device: &Device, source: &str, options: CompileOptions) -> cuabi::Result<Program> {
    let options = options.arch(device.arch()?);
    let mut program = Program::with_options(source, &options)?;
    program.compile_with(&options)?;
    Ok(program)
}

/// The caller and the callee, compiled with `options` each.
fn pair(device: &Device, options: CompileOptions) -> cuabi::Result<(Program, Program)> {
    Ok((
        program(device, CALLER, options.clone().name("caller.cu"))?,
        program(device, CALLEE, options.name("callee.cu"))?,
    ))
}

/// A linker of `options` with every program added, linked.
fn link(
    device: &Device,
    options: &LinkOptions,
    programs: &[&Program],
) -> cuabi::Result<(Module, Linker)> {
    let mut linker = device.create_linker(options)?;
    for program in programs {
        linker.add_program(program)?;
    }
    let module = linker.link()?;
    Ok((module, linker))
}

/// Runs `apply` of `module` over 256 floats and checks x -> 2x + 1.
fn check_apply(device: &Device, module: &Module, what: &str) -> TestResult {
    let apply = module.function("apply")?;
    let x: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let buffer = device.buffer_from_slice(&x)?;
    let n = x.len() as u32;
    // SAFETY: apply reads and writes n floats of the buffer.
    unsafe {
        apply
            .launch(LaunchConfig::new(1, 256))
            .args((&buffer, &n))
            .run()?
    };
    device.synchronize()?;
    let y = buffer.to_vec()?;
    if let Some(i) = (0..x.len()).find(|&i| y[i] != 2.0 * x[i] + 1.0) {
        return Err(format!("{what}: x[{i}] = {} became {}, not 2x + 1", x[i], y[i]).into());
    }
    Ok(())
}

/// Runs `doublify` of `module` over 64 floats of 1.5 and checks 3.0.
fn check_doublify(device: &Device, module: &Module, what: &str) -> TestResult {
    let doublify = module.function("doublify")?;
    let buffer = device.buffer_from_slice(&[1.5f32; 64])?;
    // SAFETY: doublify writes one float per thread of the 64.
    unsafe {
        doublify
            .launch(LaunchConfig::new(1, 64))
            .arg(&buffer)
            .run()?
    };
    device.synchronize()?;
    let y = buffer.to_vec()?;
    ensure!(y.iter().all(|&v| v == 3.0), "{what}: doublify gave {y:?}");
    Ok(())
}

fn cxx_kernels_are_found_by_plain_names_and_listed(device: &Device) -> TestResult {
    let module = device.compile(CXX, &CompileOptions::new().name("cxx.cu"))?;
    check_doublify(device, &module, "doublify by its plain name")?;

    let kernels = module.kernels()?;
    ensure!(kernels.len() == 3, "{} kernels: {kernels:?}", kernels.len());
    ensure!(module.kernel_count()? == 3, "kernel_count");
    for wanted in [
        "ops::scale<float>(float*, float)",
        "ops::scale<int>(int*, int)",
        "doublify(float*)",
    ] {
        ensure!(
            // A template instance's demangled name starts with its return type.
            kernels.iter().any(|k| k.demangled == wanted
                || k.demangled.strip_prefix("void ") == Some(wanted)),
            "no kernel {wanted}: {kernels:?}"
        );
    }
    ensure!(
        kernels.iter().all(|k| k.symbol.starts_with("_Z")),
        "symbols {kernels:?}"
    );
    for (i, kernel) in kernels.iter().enumerate() {
        ensure!(
            module.kernel_name(i, NameForm::Symbol)? == kernel.symbol
                && module.kernel_name(i, NameForm::Demangled)? == kernel.demangled,
            "kernel_name({i}) differs from the listing"
        );
    }
    expect_err(
        module.kernel_name(3, NameForm::Symbol),
        ErrorKind::OutOfRange,
        "past the module's 3 kernels",
        "kernel 3",
    )?;

    // A template instance by its symbol, as the listing gives it.
    let float = kernels
        .iter()
        .find(|k| k.demangled.contains("ops::scale<float>"))
        .ok_or("no scale<float>")?;
    let scale = module.function(&float.symbol)?;
    let buffer = device.buffer_from_slice(&[2.0f32; 32])?;
    // SAFETY: scale writes one float per thread of the 32.
    unsafe {
        scale
            .launch(LaunchConfig::new(1, 32))
            .args((&buffer, &2.5f32))
            .run()?
    };
    device.synchronize()?;
    ensure!(buffer.to_vec()?.iter().all(|&v| v == 5.0), "scale<float>");

    // Two kernels are called scale: the name is refused naming both.
    let err = module.function("scale").err().ok_or("'scale' was found")?;
    ensure!(
        err.kind() == ErrorKind::InvalidArgument
            && err.message().contains("ops::scale<float>(float*, float)")
            && err.message().contains("ops::scale<int>(int*, int)"),
        "the ambiguous name: {err}"
    );
    let err = module
        .function("triple")
        .err()
        .ok_or("'triple' was found")?;
    ensure!(
        err.kind() == ErrorKind::NotFound && err.message().contains("doublify(float*)"),
        "an unknown name lists the kernels: {err}"
    );
    // Name expressions still name kernels.
    let named = device.compile(
        CXX,
        &CompileOptions::new().name_expression("ops::scale<int>"),
    )?;
    let scale_int = named.function("ops::scale<int>")?;
    let ints = device.buffer_from_slice(&[7i32; 32])?;
    // SAFETY: scale writes one int per thread of the 32.
    unsafe {
        scale_int
            .launch(LaunchConfig::new(1, 32))
            .args((&ints, &3i32))
            .run()?
    };
    device.synchronize()?;
    ensure!(
        ints.to_vec()?.iter().all(|&v| v == 21),
        "scale<int> by its name expression"
    );
    Ok(())
}

fn the_compile_log_keeps_warnings_and_is_empty_from_the_cache(device: &Device) -> TestResult {
    // A source no earlier run has cached: it names this process.
    let source = format!(
        "#warning \"a warning worth keeping\"\nextern \"C\" __global__ void k() {{}}\n// {}\n",
        std::process::id()
    );
    let options = CompileOptions::new().name("warned.cu");
    let first = device.compile(&source, &options)?;
    ensure!(!first.from_cache()?, "a new source came from the cache");
    let log = first.compile_log()?;
    ensure!(log.contains("a warning worth keeping"), "the log: {log:?}");
    ensure!(log.contains("warned.cu"), "the log names the file: {log:?}");
    let second = device.compile(&source, &options)?;
    ensure!(
        second.from_cache()?,
        "the same source again was compiled again"
    );
    ensure!(
        second.compile_log()?.is_empty(),
        "a cached module has a log: {:?}",
        second.compile_log()?
    );
    let uncached = device.compile(&source, &options.clone().no_cache())?;
    ensure!(
        uncached.compile_log()?.contains("a warning worth keeping"),
        "no_cache compile"
    );
    let quiet = device.compile(
        "extern \"C\" __global__ void quiet() {}\n",
        &CompileOptions::new().no_cache(),
    )?;
    let log = quiet.compile_log()?;
    ensure!(!log.contains("warning"), "a clean compile warns: {log:?}");
    Ok(())
}

fn defines_change_what_a_kernel_computes(device: &Device) -> TestResult {
    let source = "extern \"C\" __global__ void scale(int *x) {\n\
                  #ifdef NEGATE\n  x[threadIdx.x] *= -FACTOR;\n\
                  #else\n  x[threadIdx.x] *= FACTOR;\n#endif\n}\n";
    let run = |options: CompileOptions| -> Result<Vec<i32>, Box<dyn std::error::Error>> {
        let module = device.compile(source, &options.arch(device.arch()?))?;
        let scale = module.function("scale")?;
        let buffer = device.buffer_from_slice(&[1i32, 2, 3, 4])?;
        // SAFETY: scale writes one int per thread of the 4.
        unsafe { scale.launch(LaunchConfig::new(1, 4)).arg(&buffer).run()? };
        device.synchronize()?;
        Ok(buffer.to_vec()?)
    };
    let three = run(CompileOptions::new().define("FACTOR", 3))?;
    let five = run(CompileOptions::new().define("FACTOR", 5))?;
    let negated = run(CompileOptions::new()
        .define("FACTOR", 5)
        .define_flag("NEGATE"))?;
    ensure!(three == [3, 6, 9, 12], "FACTOR 3: {three:?}");
    ensure!(five == [5, 10, 15, 20], "FACTOR 5: {five:?}");
    ensure!(negated == [-5, -10, -15, -20], "NEGATE: {negated:?}");
    // Without the define the source does not compile.
    expect_err(
        device.compile(source, &CompileOptions::new().no_cache()),
        ErrorKind::Compile,
        "FACTOR",
        "no FACTOR",
    )?;
    Ok(())
}

fn relocatable_programs_link_through_either_backend(device: &Device) -> TestResult {
    let (caller, callee) = pair(device, CompileOptions::new().rdc(true))?;
    for backend in [LinkBackend::Nvjitlink, LinkBackend::Driver] {
        let what = format!("{backend:?}");
        let options = LinkOptions::new().backend(backend).no_cache();
        let (module, mut linker) = link(device, &options, &[&caller, &callee])?;
        ensure!(
            linker.backend()? == backend,
            "{what}: backend {:?}",
            linker.backend()?
        );
        ensure!(!module.from_cache()?, "{what}: came from the cache");
        let image = linker.image()?;
        ensure!(
            image.len() > 64 && image.starts_with(b"\x7fELF"),
            "{what}: an image of {} bytes",
            image.len()
        );
        expect_err(
            linker.link(),
            ErrorKind::InvalidArgument,
            "already linked",
            &what,
        )?;
        ensure!(
            module.compile_log()?.is_empty(),
            "{what}: a linked module has a compile log"
        );
        check_apply(device, &module, &what)?;
        // The image loads on its own.
        check_apply(
            device,
            &device.load_module(&image)?,
            &format!("{what} image"),
        )?;
    }
    // Auto resolves to one of the two.
    let auto = device.create_linker(&LinkOptions::new())?;
    ensure!(
        matches!(
            auto.backend()?,
            LinkBackend::Nvjitlink | LinkBackend::Driver
        ),
        "auto resolved to {:?}",
        auto.backend()?
    );
    Ok(())
}

fn a_link_missing_a_function_fails_with_a_log_naming_it(device: &Device) -> TestResult {
    let (caller, _) = pair(device, CompileOptions::new().rdc(true))?;
    for backend in [LinkBackend::Auto, LinkBackend::Driver] {
        let mut linker = device.create_linker(&LinkOptions::new().backend(backend).no_cache())?;
        linker.add_program(&caller)?;
        let err = linker
            .link()
            .err()
            .ok_or(format!("{backend:?}: the link succeeded"))?;
        ensure!(err.kind() == ErrorKind::Compile, "{backend:?}: {err}");
        let log = err.log().ok_or(format!("{backend:?}: no log in {err}"))?;
        ensure!(
            log.contains("twice"),
            "{backend:?}: the log does not name twice: {log}"
        );
        let kept = linker.log()?;
        ensure!(
            kept.contains("twice"),
            "{backend:?}: the linker's log: {kept}"
        );
        expect_err(
            linker.image(),
            ErrorKind::NotFound,
            "has not linked",
            "the image",
        )?;
    }
    Ok(())
}

fn lto_ir_links_with_link_time_optimisation_and_the_driver_refuses_it(
    device: &Device,
) -> TestResult {
    let (caller, callee) = pair(device, CompileOptions::new().dlto(true).rdc(true))?;
    let (caller_ir, callee_ir) = (caller.lto_ir()?, callee.lto_ir()?);
    ensure!(caller_ir.len() > 16 && callee_ir.len() > 16, "LTO-IR sizes");
    let lto = LinkOptions::new()
        .backend(LinkBackend::Nvjitlink)
        .lto(true)
        .no_cache();
    let (module, linker) = link(device, &lto, &[&caller, &callee])?;
    ensure!(linker.backend()? == LinkBackend::Nvjitlink, "backend");
    check_apply(device, &module, "LTO of two programs")?;

    // The same LTO-IR as bytes of a kind, named.
    let mut linker = device.create_linker(&lto.clone().option("-O3"))?;
    linker
        .add_data(LinkInput::LtoIr, &caller_ir, Some("caller.ltoir"))?
        .add_data(LinkInput::LtoIr, &callee_ir, None)?;
    check_apply(device, &linker.link()?, "LTO of bytes")?;

    // The driver's linker takes no LTO-IR, and no LTO.
    let mut driver = device.create_linker(&LinkOptions::new().backend(LinkBackend::Driver))?;
    expect_err(
        driver.add_program(&caller),
        ErrorKind::NotSupported,
        "LTO-IR needs the nvJitLink backend",
        "a -dlto program for the driver",
    )?;
    expect_err(
        driver.add_data(LinkInput::LtoIr, &caller_ir, None),
        ErrorKind::NotSupported,
        "LTO-IR needs the nvJitLink backend",
        "LTO-IR bytes for the driver",
    )?;
    expect_err(
        device.create_linker(&LinkOptions::new().backend(LinkBackend::Driver).lto(true)),
        ErrorKind::NotSupported,
        "needs nvJitLink",
        "LTO with the driver",
    )?;
    Ok(())
}

fn a_second_identical_link_comes_from_the_cache_and_files_are_read(device: &Device) -> TestResult {
    // The callee as a PTX file, told apart by its extension; it names this
    // process, so no earlier run has cached the link.
    let arch = device.arch()?;
    let ptx_options = CompileOptions::new()
        .arch(Arch::Compute(arch.number()))
        .rdc(true)
        .define("RUN", std::process::id());
    let mut callee = Program::with_options(
        &format!("{CALLEE}__device__ unsigned run_id = RUN;\n"),
        &ptx_options,
    )?;
    callee.compile_with(&ptx_options)?;
    let dir = std::env::temp_dir().join(format!("cuabi-rs-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("callee.ptx");
    std::fs::write(&path, callee.ptx()?)?;
    let caller = program(device, CALLER, CompileOptions::new().rdc(true))?;
    let result = (|| -> TestResult {
        for round in 0..2 {
            let mut linker = device.create_linker(&LinkOptions::new())?;
            linker
                .add_program(&caller)?
                .add_file(LinkInput::Auto, &path)?;
            let module = linker.link()?;
            ensure!(
                module.from_cache()? == (round == 1),
                "round {round}: from_cache {}",
                module.from_cache()?
            );
            if round == 1 {
                ensure!(
                    linker.log()?.is_empty(),
                    "a cached link has a log: {}",
                    linker.log()?
                );
            }
            check_apply(device, &module, &format!("round {round}"))?;
        }
        // no_cache links again.
        let (module, _) = {
            let mut linker = device.create_linker(&LinkOptions::new().no_cache())?;
            linker
                .add_program(&caller)?
                .add_file(LinkInput::Ptx, &path)?;
            (linker.link()?, linker)
        };
        ensure!(!module.from_cache()?, "no_cache read the cache");
        let mut missing = device.create_linker(&LinkOptions::new())?;
        expect_err(
            missing.add_file(LinkInput::Auto, dir.join("absent.ptx")),
            ErrorKind::Io,
            "absent.ptx",
            "a missing file",
        )
    })();
    std::fs::remove_dir_all(&dir)?;
    result
}

fn a_library_serves_its_kernels_as_a_module_of_the_device(device: &Device) -> TestResult {
    let program = program(device, CXX, CompileOptions::new())?;
    let cubin = program.cubin()?;
    let library = Library::load(&cubin)?;
    let module = library.module(device)?;
    drop(library); // the module keeps the library loaded
    check_doublify(device, &module, "a library of bytes")?;
    ensure!(
        module.kernel_count()? == 3,
        "{} kernels",
        module.kernel_count()?
    );
    ensure!(!module.from_cache()?, "a library module from the cache");

    let dir = std::env::temp_dir().join(format!("cuabi-rs-library-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("cxx.cubin");
    std::fs::write(&path, &cubin)?;
    let from_file = Library::load_file(&path);
    std::fs::remove_dir_all(&dir)?;
    let from_file = from_file?;
    let first = from_file.module(device)?;
    let second = from_file.module(device)?;
    check_doublify(device, &first, "a library of a file")?;
    check_doublify(device, &second, "its module asked for again")?;

    // A linked image as a library.
    let (caller, callee) = pair(device, CompileOptions::new().rdc(true))?;
    let (_, linker) = link(device, &LinkOptions::new().no_cache(), &[&caller, &callee])?;
    let linked = Library::load(&linker.image()?)?;
    check_apply(
        device,
        &linked.module(device)?,
        "a linked image as a library",
    )?;
    expect_err(
        Library::load(b"not PTX, not CUBIN\0"),
        ErrorKind::InvalidArgument,
        "neither CUBIN",
        "bytes that are no image",
    )?;
    Ok(())
}

fn compiles_and_links_run_on_other_threads(device: &Device) -> TestResult {
    // A one-call compile in the background while this thread uses the GPU.
    let source = format!("{CXX}// background {}\n", std::process::id());
    let compiling = device.compile_in_background(source, &CompileOptions::new());
    let data: Vec<u32> = (0..1 << 16).collect();
    let mut round_trips = 0u32;
    while !compiling.is_finished() || round_trips == 0 {
        let back = device.buffer_from_slice(&data)?.to_vec()?;
        ensure!(back == data, "a round trip during the compile");
        round_trips += 1;
    }
    let module = compiling.join()?;
    ensure!(
        !module.from_cache()?,
        "the background compile came from the cache"
    );
    check_doublify(device, &module, "compiled in the background")?;

    // A link in the background gives the module and the linker back.
    let (caller, callee) = pair(device, CompileOptions::new().rdc(true))?;
    let mut linker = device.create_linker(&LinkOptions::new().no_cache())?;
    linker.add_program(&caller)?.add_program(&callee)?;
    let (module, linker) = linker.link_in_background().join()?;
    check_apply(device, &module, "linked in the background")?;
    ensure!(
        linker.image()?.starts_with(b"\x7fELF"),
        "the linker's image"
    );

    // Programs compiled on spawned threads, linked and launched here.
    let arch = device.arch()?;
    let threads: Vec<_> = [CALLER, CALLEE]
        .into_iter()
        .map(|source| {
            std::thread::spawn(move || -> cuabi::Result<Program> {
                let options = CompileOptions::new().arch(arch).rdc(true);
                let mut program = Program::with_options(source, &options)?;
                program.compile_with(&options)?;
                Ok(program)
            })
        })
        .collect();
    let mut programs = Vec::new();
    for thread in threads {
        programs.push(thread.join().map_err(|_| "a compile thread panicked")??);
    }
    let (module, _) = link(
        device,
        &LinkOptions::new().no_cache(),
        &[&programs[0], &programs[1]],
    )?;
    check_apply(device, &module, "programs compiled on spawned threads")?;

    // A module compiled on a spawned thread of its own device handle.
    let ordinal = device.ordinal();
    let module = std::thread::spawn(move || -> cuabi::Result<Module> {
        Device::get(ordinal)?.compile(CXX, &CompileOptions::new())
    })
    .join()
    .map_err(|_| "the compile thread panicked")??;
    check_doublify(device, &module, "a module made on another thread")?;
    Ok(())
}
