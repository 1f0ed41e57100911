//! Scales a vector on the GPU with a kernel compiled at run time.
//!
//! Without a GPU it compiles the kernel, says that no device was found and
//! exits successfully: everything that can be checked without a device was.

use std::process::ExitCode;

use cuabi::{CompileOptions, Device, LaunchConfig, Program};

const SCALE: &str = r#"
template <typename T>
__global__ void scale(T factor, const T *in, T *out, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = factor * in[i];
}
"#;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("downstream: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> cuabi::Result<()> {
    println!(
        "cuabi {} (header {})",
        cuabi::version_string(),
        cuabi::HEADER_VERSION
    );

    // Compiling needs NVRTC only.
    let mut program = Program::new(SCALE, "scale.cu")?;
    program.add_name_expression("scale<float>")?;
    program.compile(&["--gpu-architecture=compute_75", "-std=c++17"])?;
    println!(
        "compiled scale<float> as {} ({} bytes of PTX)",
        program.lowered_name("scale<float>")?,
        program.ptx()?.len()
    );

    let device = match Device::count() {
        Ok(count) if count > 0 => Device::get(0)?,
        Ok(_) => {
            println!("no CUDA device found; the GPU part is skipped");
            return Ok(());
        }
        Err(err) => {
            println!(
                "no CUDA device found ({}); the GPU part is skipped",
                err.name()
            );
            return Ok(());
        }
    };

    let module = device.compile(
        SCALE,
        &CompileOptions::new()
            .name("scale.cu")
            .option("-std=c++17")
            .name_expression("scale<float>"),
    )?;
    let scale = module.function("scale<float>")?;
    let host: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let input = device.buffer_from_slice(&host)?;
    let output = device.alloc_zeroed::<f32>(host.len())?;
    let (factor, n) = (3.0f32, host.len() as u32);
    // SAFETY: scale reads and writes n elements of buffers that hold n.
    unsafe {
        scale
            .launch(LaunchConfig::new(n.div_ceil(256), 256))
            .arg(&factor)
            .arg(&input)
            .arg(&output)
            .arg(&n)
            .run()?;
    }
    device.synchronize()?;
    let result = output.to_vec()?;
    let wrong = result
        .iter()
        .zip(&host)
        .filter(|(r, h)| **r != factor * **h)
        .count();
    if wrong > 0 {
        eprintln!("downstream: {wrong} of {n} values are wrong");
        std::process::exit(1);
    }
    println!(
        "{}: scaled {n} values on the GPU, all correct",
        device.name()?
    );

    // The same kernel again through a prepared launch at the configuration
    // the library suggests for n elements: arguments written in place, then
    // one call per launch.
    let config = scale.suggest_config(host.len())?;
    println!(
        "suggested configuration for {n} elements: {} blocks of {} threads",
        config.grid.x, config.block.x
    );
    let mut plan = scale.plan(config, None)?;
    let halved = 0.5f32;
    // SAFETY: as above.
    unsafe { plan.launch_with((&halved, &input, &output, &n))? };
    device.synchronize()?;
    let wrong = output
        .to_vec()?
        .iter()
        .zip(&host)
        .filter(|(r, h)| **r != halved * **h)
        .count();
    if wrong > 0 {
        eprintln!("downstream: {wrong} of {n} values are wrong after the planned launch");
        std::process::exit(1);
    }
    println!("relaunched through a LaunchPlan: all {n} values correct");
    Ok(())
}
