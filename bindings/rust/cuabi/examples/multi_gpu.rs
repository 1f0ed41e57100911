//! Several GPUs from one program, as examples/multi_gpu does in C and Python.
//!
//! 1. SAXPY split over every device (a module, a stream and buffers on
//!    each), gathered on device 0 and checked against the host.
//! 2. A copy between every ordered pair of devices, with the path cuabi
//!    reports (direct where peer access is enabled, else through host
//!    memory), checked.
//! 3. An event recorded on device 0's stream after a slow kernel orders a
//!    stream of device 1, which copies what the kernel wrote: checked.
//! 4. IPC across GPUs: this program on GPU 0 exports a buffer and an
//!    interprocess event and starts itself as a child on GPU 1, which opens
//!    the event on GPU 0, makes its own stream wait on it, opens the buffer
//!    on GPU 1 (reaching GPU 0's memory through peer access where it can),
//!    checks it and writes 2 * x + 1 back; the parent checks every value.
//!
//! With one device it prints "multi_gpu: needs two devices, found 1" and
//! exits 0; `--one-gpu` runs every step with two logical devices on GPU 0
//! (the IPC child on GPU 0). Exit status: 0 verified (or one device),
//! 1 failure, 3 no CUDA device.
//!
//! Run with `cargo run --example multi_gpu [-- --one-gpu]`.

use std::process::{Command, ExitCode};

use cuabi::{CopyPath, Device, DeviceBuffer, EventFlags, IpcHandle, LaunchConfig, Module, Program};

const PROG: &str = "multi_gpu";
const SOURCE: &str = r#"
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out,
                                 size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
}
extern "C" __global__ void slow_fill(float* x, size_t n, long long cycles) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = (float)(i % 1000) * 0.5f;
}
extern "C" __global__ void transform(float* x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = 2.0f * x[i] + 1.0f;
}
"#;
const THREADS: u32 = 256;
const CLOCK_RATE: i32 = 13; // CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz

type Failure = Box<dyn std::error::Error>;

fn config(n: usize) -> LaunchConfig {
    LaunchConfig::new(n.div_ceil(THREADS as usize).clamp(1, 4096) as u32, THREADS)
}

fn expected(i: usize) -> f32 {
    (i % 1000) as f32 * 0.5
}

fn path_text(path: CopyPath) -> &'static str {
    match path {
        CopyPath::SameDevice => "within one device",
        CopyPath::Peer => "direct (peer access)",
        _ => "through host memory",
    }
}

fn build(device: &Device) -> Result<Module, Failure> {
    let mut program = Program::new(SOURCE, "multi_gpu.cu")?;
    let (major, minor) = device.compute_capability()?;
    program.compile(&[format!("--gpu-architecture=compute_{major}{minor}")])?;
    Ok(device.load_ptx(&program.ptx()?)?)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.first().map(String::as_str) == Some("--child") {
        child(&args[1..])
    } else {
        parent(args.iter().any(|a| a == "--one-gpu"))
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("{PROG}: FAILED: {err}");
            ExitCode::FAILURE
        }
    }
}

fn parent(one_gpu: bool) -> Result<u8, Failure> {
    let count = match Device::count() {
        Ok(count) if count > 0 => count,
        Ok(_) => {
            eprintln!("{PROG}: no CUDA device: the driver reports 0 devices");
            return Ok(3);
        }
        Err(err) => {
            eprintln!("{PROG}: no CUDA device: {err}");
            return Ok(3);
        }
    };
    if count < 2 && !one_gpu {
        println!("{PROG}: needs two devices, found {count}");
        return Ok(0);
    }
    let ndev = if one_gpu { 2 } else { count };
    let devices = (0..ndev)
        .map(|i| Device::get(if one_gpu { 0 } else { i % count }))
        .collect::<cuabi::Result<Vec<_>>>()?;
    let streams = devices
        .iter()
        .map(Device::create_stream)
        .collect::<cuabi::Result<Vec<_>>>()?;
    let modules = devices.iter().map(build).collect::<Result<Vec<_>, _>>()?;
    println!("{PROG}: {count} CUDA device(s), {ndev} logical device(s)");

    // Peer access between every two distinct GPUs, where possible.
    for i in 0..count.min(ndev) {
        for j in 0..count.min(ndev) {
            if i != j && devices[i].can_access_peer(&devices[j])? {
                devices[i].enable_peer_access(&devices[j])?;
            }
        }
    }

    // 1. SAXPY split over every device, gathered on device 0.
    let n = 1 << 22;
    let a = 2.5f32;
    let hx: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.25).collect();
    let hy: Vec<f32> = (0..n).map(|i| (i % 613) as f32 * 0.125).collect();
    let mut gathered = Vec::with_capacity(n);
    let mut parts = Vec::new();
    for (i, device) in devices.iter().enumerate() {
        let (lo, hi) = (n * i / ndev, n * (i + 1) / ndev);
        let len = hi - lo;
        let mut x = device.alloc::<f32>(len)?;
        let mut y = device.alloc::<f32>(len)?;
        x.copy_from(&hx[lo..hi])?;
        y.copy_from(&hy[lo..hi])?;
        let out = device.alloc::<f32>(len)?;
        let len64 = len as u64;
        let saxpy = modules[i].function("saxpy")?;
        // SAFETY: the buffers live until the stream is synchronized below.
        unsafe {
            saxpy
                .launch(config(len))
                .stream(&streams[i])
                .arg(&a)
                .arg(&x)
                .arg(&y)
                .arg(&out)
                .arg(&len64)
                .run()?;
        }
        streams[i].synchronize()?;
        let mut on0 = devices[0].alloc::<f32>(len)?;
        on0.copy_from_buffer(&out)?;
        gathered.extend(on0.to_vec()?);
        parts.push(out);
    }
    let wrong = (0..n).filter(|&i| gathered[i] != a * hx[i] + hy[i]).count();
    println!(
        "{PROG}: SAXPY of {n} elements on {ndev} devices, gathered on device 0: {}",
        if wrong == 0 { "verified" } else { "FAILED" }
    );
    if wrong != 0 {
        return Ok(1);
    }

    // 2. A copy between every ordered pair, with its path.
    for (i, part) in parts.iter().enumerate() {
        for (j, device) in devices.iter().enumerate() {
            if i == j {
                continue;
            }
            let mut dst = device.alloc::<f32>(part.len())?;
            let path = dst.copy_path(part)?;
            dst.copy_from_buffer(part)?;
            let same = dst.to_vec()? == part.to_vec()?;
            println!(
                "  copy device {i} -> device {j}: {}, {}",
                path_text(path),
                if same { "verified" } else { "FAILED" }
            );
            if !same {
                return Ok(1);
            }
        }
    }

    // 3. Device 1's stream waits on an event recorded on device 0.
    let m = 1 << 20;
    let a0 = devices[0].alloc_zeroed::<f32>(m)?;
    let mut a1 = devices[1].alloc::<f32>(m)?;
    a1.fill_bytes(0xFF)?;
    let cycles = i64::from(devices[0].attribute(CLOCK_RATE)?.max(1)) * 50;
    let m64 = m as u64;
    let ready = devices[0].create_event_with(EventFlags::DISABLE_TIMING)?;
    // SAFETY: a0 and a1 live until streams[1] is synchronized.
    unsafe {
        modules[0]
            .function("slow_fill")?
            .launch(config(m))
            .stream(&streams[0])
            .arg(&a0)
            .arg(&m64)
            .arg(&cycles)
            .run()?;
        ready.record(&streams[0])?;
        streams[1].wait_event(&ready)?;
        a1.copy_from_buffer_async(&a0, &streams[1])?;
    }
    streams[1].synchronize()?;
    let seen = a1.to_vec()?;
    let stale = (0..m).filter(|&i| seen[i] != expected(i)).count();
    println!(
        "{PROG}: device 1's stream waited on an event recorded on device 0: {}",
        if stale == 0 {
            "all finished values"
        } else {
            "FAILED"
        }
    );
    if stale != 0 {
        return Ok(1);
    }

    // 4. IPC across GPUs: a child process on GPU 1 (GPU 0 with --one-gpu).
    let child_gpu = if one_gpu { 0 } else { 1 };
    let shared = devices[0].alloc::<f32>(m)?;
    let event =
        devices[0].create_event_with(EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING)?;
    // SAFETY: shared lives until the stream is synchronized below.
    unsafe {
        modules[0]
            .function("slow_fill")?
            .launch(config(m))
            .stream(&streams[0])
            .arg(&shared)
            .arg(&m64)
            .arg(&cycles)
            .run()?;
    }
    event.record(&streams[0])?;
    let status = Command::new(std::env::current_exe()?)
        .args([
            "--child".to_owned(),
            child_gpu.to_string(),
            m.to_string(),
            shared.ipc_handle()?.to_hex(),
            event.ipc_handle()?.to_hex(),
        ])
        .status()?;
    streams[0].synchronize()?;
    if !status.success() {
        eprintln!("{PROG}: the child (GPU {child_gpu}) failed: {status}");
        return Ok(1);
    }
    let seen = shared.to_vec()?;
    let wrong = (0..m)
        .filter(|&i| seen[i] != 2.0 * expected(i) + 1.0)
        .count();
    println!(
        "{PROG}: the child on GPU {child_gpu} read GPU 0's buffer and wrote 2 * x + 1: {}",
        if wrong == 0 { "verified" } else { "FAILED" }
    );
    if wrong != 0 {
        return Ok(1);
    }
    println!("{PROG}: PASSED on {ndev} devices");
    Ok(0)
}

fn child(args: &[String]) -> Result<u8, Failure> {
    let [gpu, len, buffer, event] = args else {
        return Err("--child needs GPU, LENGTH, BUFFER_HEX and EVENT_HEX".into());
    };
    let (gpu, len): (usize, usize) = (gpu.parse()?, len.parse()?);
    let d0 = Device::get(0)?;
    let dc = Device::get(gpu)?;
    let stream = dc.create_stream()?;
    // The event opened on the exporter's GPU, waited on by this GPU's stream.
    let ready = d0.open_ipc_event(&IpcHandle::from_hex(event)?)?;
    stream.wait_event(&ready)?;
    // Opened on this GPU where it can reach GPU 0's memory (peer access),
    // else on GPU 0, where it lives.
    let mut opener = &dc;
    if gpu != 0 {
        if dc.can_access_peer(&d0)? {
            dc.enable_peer_access(&d0)?;
        } else {
            println!("{PROG} (child): GPU {gpu} cannot reach GPU 0's memory; opened on GPU 0");
            opener = &d0;
        }
    }
    let mut shared: DeviceBuffer<f32> =
        opener.open_ipc_buffer(&IpcHandle::from_hex(buffer)?, None)?;
    if shared.len() != len {
        return Err(format!("the opened buffer holds {} floats, not {len}", shared.len()).into());
    }
    let mut local = dc.alloc::<f32>(len)?;
    let path = local.copy_path(&shared)?;
    let mut seen = vec![0f32; len];
    // SAFETY: local, shared and seen live until the stream is synchronized.
    unsafe {
        local.copy_from_buffer_async(&shared, &stream)?;
        local.copy_to_async(&mut seen, &stream)?;
    }
    stream.synchronize()?;
    let wrong = (0..len).filter(|&i| seen[i] != expected(i)).count();
    println!(
        "{PROG} (child, GPU {gpu}): buffer opened on GPU {}, read {}: {}",
        shared.device_ordinal()?,
        path_text(path),
        if wrong == 0 {
            "every value as written"
        } else {
            "values wrong"
        }
    );
    if wrong != 0 {
        return Ok(1);
    }
    let len64 = len as u64;
    let transform = build(&dc)?.function("transform")?;
    // SAFETY: shared and local live until the stream is synchronized.
    unsafe {
        if shared.device_ordinal()? == gpu {
            // In place, over the link.
            transform
                .launch(config(len))
                .stream(&stream)
                .arg(&shared)
                .arg(&len64)
                .run()?;
        } else {
            transform
                .launch(config(len))
                .stream(&stream)
                .arg(&local)
                .arg(&len64)
                .run()?;
            shared.copy_from_buffer_async(&local, &stream)?;
        }
    }
    stream.synchronize()?;
    Ok(0)
}
