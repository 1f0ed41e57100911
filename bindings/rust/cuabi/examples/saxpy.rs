//! SAXPY, the flow of the CUDA Python overview, over cuabi.
//!
//! Compiles the kernel to PTX with NVRTC, loads it, copies two random vectors
//! to the device asynchronously from pinned memory, launches 32768 blocks of
//! 512 threads on a stream between two events, copies the result back and
//! checks it against the host. Prints the kernel time and the check.
//!
//! Without a CUDA device it still compiles the kernel, then says that no
//! device was found and exits with status 1.
//!
//! Run with `cargo run --example saxpy`.

use std::process::ExitCode;

use cuabi::{Device, ErrorKind, LaunchConfig, Program};

const SAXPY: &str = r#"
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
"#;

const NUM_THREADS: u32 = 512; // threads per block
const NUM_BLOCKS: u32 = 32768; // blocks per grid

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("saxpy: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> cuabi::Result<ExitCode> {
    println!("cuabi {}", cuabi::version_string());

    // The device, if any, decides the target architecture, as in the overview.
    let device = match Device::count() {
        Ok(count) if count > 0 => Ok(Device::get(0)?),
        Ok(_) => Err("the driver sees no CUDA device".to_owned()),
        Err(err) => Err(err.to_string()),
    };
    let mut options = vec!["--fmad=false".to_owned()];
    if let Ok(device) = &device {
        let (major, minor) = device.compute_capability()?;
        options.push(format!("--gpu-architecture=compute_{major}{minor}"));
        println!(
            "device 0: {} (compute capability {major}.{minor})",
            device.name()?
        );
    }

    let (nvrtc_major, nvrtc_minor) = cuabi::nvrtc_version()?;
    let mut program = Program::new(SAXPY, "saxpy.cu")?;
    program.compile(&options)?;
    let ptx = program.ptx()?;
    println!(
        "compiled saxpy.cu with NVRTC {nvrtc_major}.{nvrtc_minor} ({}): {} bytes of PTX",
        options.join(" "),
        ptx.len()
    );

    let device = match device {
        Ok(device) => device,
        Err(reason) => {
            eprintln!("saxpy: no CUDA device found, so the kernel cannot run: {reason}");
            return Ok(ExitCode::FAILURE);
        }
    };

    // Load the PTX as a module and take the kernel from it.
    let module = device.load_ptx(&ptx)?;
    let kernel = module.function("saxpy")?;

    // Host data, pinned so that the copies below really are asynchronous.
    let n = (NUM_THREADS * NUM_BLOCKS) as usize;
    let a = 2.0f32;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut h_x = device.alloc_pinned::<f32>(n)?;
    let mut h_y = device.alloc_pinned::<f32>(n)?;
    let mut h_out = device.alloc_pinned::<f32>(n)?;
    h_x.iter_mut().for_each(|v| *v = rng.next_f32());
    h_y.iter_mut().for_each(|v| *v = rng.next_f32());

    let mut d_x = device.alloc::<f32>(n)?;
    let mut d_y = device.alloc::<f32>(n)?;
    let d_out = device.alloc::<f32>(n)?;
    let stream = device.create_stream()?;
    let (start, stop) = (device.create_event()?, device.create_event()?);
    let config = LaunchConfig::new(NUM_BLOCKS, NUM_THREADS);

    // SAFETY: the pinned buffers, the device buffers and the stream live until
    // the stream is synchronized below; saxpy touches n elements of each buffer.
    unsafe {
        d_x.copy_from_async(&h_x, &stream)?;
        d_y.copy_from_async(&h_y, &stream)?;

        // The overview passes n as a 4-byte np.uint32 to the size_t parameter.
        // cuabi refuses that launch instead of running it with a garbage n.
        let n_u32 = n as u32;
        match kernel
            .launch(config)
            .stream(&stream)
            .arg(&a)
            .arg(&d_x)
            .arg(&d_y)
            .arg(&d_out)
            .arg(&n_u32)
            .run()
        {
            Err(err) if err.kind() == ErrorKind::InvalidArgument => {
                println!("a 4-byte n for size_t is refused: {}", err.message());
            }
            Err(err) => return Err(err),
            Ok(()) => {
                eprintln!("saxpy: a 4-byte n for a size_t parameter was launched, not refused");
                return Ok(ExitCode::FAILURE);
            }
        }

        start.record(&stream)?;
        kernel
            .launch(config)
            .stream(&stream)
            .arg(&a)
            .arg(&d_x)
            .arg(&d_y)
            .arg(&d_out)
            .arg(&n)
            .run()?;
        stop.record(&stream)?;

        d_out.copy_to_async(&mut h_out, &stream)?;
    }
    stream.synchronize()?;

    let kernel_ms = start.elapsed_ms(&stop)?;
    // np.allclose's test: |out - expected| <= atol + rtol * |expected|.
    let bad = h_out
        .iter()
        .zip(h_x.iter().zip(h_y.iter()))
        .filter(|(out, (x, y))| {
            let expected = a * *x + *y;
            (**out - expected).abs() > 1e-8 + 1e-5 * expected.abs()
        })
        .count();
    println!(
        "kernel time: {kernel_ms:.3} ms ({NUM_BLOCKS} blocks x {NUM_THREADS} threads, n = {n})"
    );
    if bad == 0 {
        println!("check: ok, all {n} values equal a * x + y");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("check: FAILED, {bad} of {n} values differ from a * x + y");
        Ok(ExitCode::FAILURE)
    }
}

/// xorshift64*: enough randomness for test data, no dependency.
struct XorShift(u64);

impl XorShift {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (bits >> 40) as f32 / (1u64 << 24) as f32
    }
}
