//! GPU tests of the launch attributes of [`LaunchConfig`] (access-policy
//! window, sync and cluster-scheduling policies, memory-sync domain and map,
//! shared-memory carve-out, launch completion event, device-updatable kernel
//! node), as `tests/c/gpu_launch_attributes_test.cc` tests them: through a
//! plain launch, a plan and a captured graph's kernel node, each checked
//! against SAXPY on the host; the completion event orders a second stream;
//! refusals carry the core's bound.

use cuabi::{
    AccessPolicyWindow, AccessProperty, CaptureMode, ClusterSchedulingPolicy, Device, DeviceBuffer,
    ErrorKind, EventFlags, LaunchConfig, MemSyncDomain, StreamFlags, SyncPolicy,
};

use super::{saxpy_mismatch, saxpy_module, Rng, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    launch_attributes_reach_a_plain_launch,
    launch_attributes_reach_a_plan,
    launch_attributes_reach_a_captured_kernel_node,
    launch_completion_event_orders_a_second_stream,
    launch_attribute_refusals_carry_the_bound,
    printf_beyond_the_default_fifo_prints_every_line,
];

/// `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE` in cuda.h.
const MAX_ACCESS_POLICY_WINDOW_SIZE: i32 = 109;
/// `CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT` in cuda.h.
const MEM_SYNC_DOMAIN_COUNT: i32 = 126;
const N: usize = 1 << 20;

struct Saxpy {
    hx: Vec<f32>,
    hy: Vec<f32>,
    x: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    out: DeviceBuffer<f32>,
}

fn problem(device: &Device, seed: u64) -> cuabi::Result<Saxpy> {
    let mut rng = Rng(seed);
    let (hx, hy) = (rng.vec(N), rng.vec(N));
    let x = device.buffer_from_slice(&hx)?;
    let y = device.buffer_from_slice(&hy)?;
    let out = device.alloc_zeroed::<f32>(N)?;
    device.synchronize()?;
    Ok(Saxpy { hx, hy, x, y, out })
}

fn check(p: &Saxpy, a: f32) -> TestResult {
    let got = p.out.to_vec()?;
    if let Some(i) = saxpy_mismatch(a, &p.hx, &p.hy, &got) {
        return Err(format!(
            "element {i}: {} is not {a} * {} + {}",
            got[i], p.hx[i], p.hy[i]
        )
        .into());
    }
    Ok(())
}

/// Every attribute the device can honour (the completion event aside).
fn attributed(device: &Device, p: &Saxpy) -> cuabi::Result<LaunchConfig> {
    let mut c = LaunchConfig::new((N / 256) as u32, 256)
        .mem_sync_domain(MemSyncDomain::Remote)
        .shared_carveout(25);
    let most = device.attribute(MAX_ACCESS_POLICY_WINDOW_SIZE)?;
    if most > 0 {
        c = c.access_policy_window(AccessPolicyWindow {
            base: p.x.device_ptr(),
            bytes: p.x.size_bytes().min(most as usize),
            hit_ratio: 0.75,
            hit_property: AccessProperty::Persisting,
            miss_property: AccessProperty::Streaming,
        });
    }
    if device.attribute(MEM_SYNC_DOMAIN_COUNT)? >= 2 {
        c = c.mem_sync_domain_map(0, 1);
    }
    if device.compute_capability()?.0 >= 9 {
        c = c.cluster_scheduling(ClusterSchedulingPolicy::Spread);
    }
    Ok(c)
}

fn launch_attributes_reach_a_plain_launch(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let p = problem(device, 21)?;
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let (a, n) = (2.0f32, N);
    // SAFETY: saxpy reads N elements of x and y and writes N of out, alive
    // until the stream is synchronized.
    unsafe {
        saxpy
            .launch(attributed(device, &p)?)
            .stream(&s)
            .arg(&a)
            .arg(&p.x)
            .arg(&p.y)
            .arg(&p.out)
            .arg(&n)
            .run()?;
    }
    s.synchronize()?;
    check(&p, a)
}

fn launch_attributes_reach_a_plan(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let p = problem(device, 22)?;
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let started = device.create_event_with(EventFlags::DISABLE_TIMING)?;
    let config = attributed(device, &p)?.completion_event(&started);
    let mut plan = saxpy.plan(config, Some(&s))?;
    for a in [2.0f32, 4.0] {
        // SAFETY: as above.
        unsafe { plan.launch_with((&a, &p.x, &p.y, &p.out, &N))? };
        s.synchronize()?;
        check(&p, a)?;
    }
    started.synchronize()?;
    ensure!(started.query()?, "the completion event was not recorded");
    Ok(())
}

fn launch_attributes_reach_a_captured_kernel_node(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let mut p = problem(device, 23)?;
    let s = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let a = 2.0f32;
    for config in [
        attributed(device, &p)?,
        LaunchConfig::new((N / 256) as u32, 256).device_updatable(true),
    ] {
        p.out.fill_bytes(0)?;
        device.synchronize()?;
        s.begin_capture(CaptureMode::ThreadLocal)?;
        // SAFETY: as above; the graph runs below, while the buffers live.
        let queued = unsafe {
            saxpy
                .launch(config)
                .stream(&s)
                .arg(&a)
                .arg(&p.x)
                .arg(&p.y)
                .arg(&p.out)
                .arg(&N)
                .run()
        };
        let graph = s.end_capture();
        queued?;
        let graph = graph?;
        let exec = graph.instantiate()?;
        exec.upload(&s)?;
        unsafe { exec.launch(&s)? };
        s.synchronize()?;
        check(&p, a)?;
    }
    // Outside a capture a device-updatable node is refused.
    let outside = unsafe {
        saxpy
            .launch(LaunchConfig::new((N / 256) as u32, 256).device_updatable(true))
            .stream(&s)
            .arg(&a)
            .arg(&p.x)
            .arg(&p.y)
            .arg(&p.out)
            .arg(&N)
            .run()
    };
    match outside {
        Err(e)
            if e.kind() == ErrorKind::InvalidArgument
                && e.message().contains("the stream is not capturing a graph") =>
        {
            Ok(())
        }
        other => Err(format!("a device-updatable launch outside a capture: {other:?}").into()),
    }
}

fn launch_completion_event_orders_a_second_stream(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let p = problem(device, 24)?;
    let first = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let second = device.create_stream_with(StreamFlags::NON_BLOCKING, 0)?;
    let started = device.create_event_with(EventFlags::DISABLE_TIMING)?;
    let finished = device.create_event_with(EventFlags::DISABLE_TIMING)?;
    let a = 3.0f32;
    unsafe {
        saxpy
            .launch(LaunchConfig::new((N / 256) as u32, 256).completion_event(&started))
            .stream(&first)
            .arg(&a)
            .arg(&p.x)
            .arg(&p.y)
            .arg(&p.out)
            .arg(&N)
            .run()?;
    }
    finished.record(&first)?;
    // The second stream goes on once every block of SAXPY has started, and
    // once it has finished.
    second.wait_event(&started)?;
    second.wait_event(&finished)?;
    second.synchronize()?;
    ensure!(started.query()?, "the completion event was not recorded");
    ensure!(
        finished.query()?,
        "the second stream went on before SAXPY finished"
    );
    let mut copy = device.alloc_zeroed::<f32>(N)?;
    copy.copy_from_buffer(&p.out)?;
    let got = copy.to_vec()?;
    if let Some(i) = saxpy_mismatch(a, &p.hx, &p.hy, &got) {
        return Err(format!("the second stream read element {i} as {}", got[i]).into());
    }
    Ok(())
}

fn launch_attribute_refusals_carry_the_bound(device: &Device) -> TestResult {
    let (_module, saxpy) = saxpy_module(device)?;
    let p = problem(device, 25)?;
    let domains = device.attribute(MEM_SYNC_DOMAIN_COUNT)?;
    let a = 2.0f32;
    let cases = [
        (
            LaunchConfig::new((N / 256) as u32, 256).mem_sync_domain_map(0, domains),
            format!("domains 0 to {}", domains - 1),
        ),
        (
            LaunchConfig::new((N / 256) as u32, 256).shared_carveout(101),
            "shared_carveout is 101, outside 0 to 100 percent".to_string(),
        ),
        (
            LaunchConfig::new((N / 256) as u32, 256).access_policy_window(AccessPolicyWindow {
                base: p.x.device_ptr(),
                bytes: 4096,
                hit_ratio: 1.5,
                ..AccessPolicyWindow::default()
            }),
            "hit_ratio is 1.500000".to_string(),
        ),
    ];
    for (config, needle) in cases {
        let got = unsafe {
            saxpy
                .launch(config)
                .arg(&a)
                .arg(&p.x)
                .arg(&p.y)
                .arg(&p.out)
                .arg(&N)
                .run()
        };
        match got {
            Err(e) if e.kind() == ErrorKind::InvalidArgument && e.message().contains(&needle) => {}
            other => return Err(format!("expected a refusal holding '{needle}': {other:?}").into()),
        }
    }
    // The driver takes a synchronization policy for a stream only.
    let sync = unsafe {
        saxpy
            .launch(LaunchConfig::new((N / 256) as u32, 256).sync_policy(SyncPolicy::Spin))
            .arg(&a)
            .arg(&p.x)
            .arg(&p.y)
            .arg(&p.out)
            .arg(&N)
            .run()
    };
    match sync {
        Err(e)
            if e.kind() == ErrorKind::NotSupported
                && e.message().contains("cuabi_stream_set_sync_policy") =>
        {
            Ok(())
        }
        other => Err(format!("a synchronization policy on a launch: {other:?}").into()),
    }
}

// ---------------------------------------------------------------------------
// Device printf beyond the default FIFO (the context limit), in a child
// process: the FIFO can only change before a process's first printing kernel.
// ---------------------------------------------------------------------------

/// The child's mode variable: `printf-raised` runs [`printf_child`].
const PRINTF_CHILD_ENV: &str = "CUABI_RUST_PRINTF_CHILD";
const PRINTF_LINES: usize = 40000;

/// A run of the test binary as the printf child, when it is one.
pub fn run_child() -> Option<std::process::ExitCode> {
    std::env::var(PRINTF_CHILD_ENV).ok()?;
    Some(std::process::ExitCode::from(match printf_child() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("printf child: {e}");
            1
        }
    }))
}

/// Raises the printf FIFO to 16 MiB, then prints PRINTF_LINES lines from a
/// kernel (about 2.5 MB of records, past the 1 MiB default).
fn printf_child() -> TestResult {
    let device = Device::get(0)?;
    device.set_limit(cuabi::Limit::PrintfFifoSize, 16 << 20)?;
    let source = r#"extern "C" __global__ void chatter(int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) printf("cuabi printf line %08d ..............................\n", i);
}"#;
    let module = device.compile(source, &cuabi::CompileOptions::new().name("chatter.cu"))?;
    let chatter = module.function("chatter")?;
    let n = PRINTF_LINES as i32;
    unsafe {
        chatter
            .launch(LaunchConfig::new(PRINTF_LINES.div_ceil(128) as u32, 128))
            .arg(&n)
            .run()?;
    }
    device.synchronize()?;
    Ok(())
}

fn printf_beyond_the_default_fifo_prints_every_line(_device: &Device) -> TestResult {
    let exe = std::env::current_exe()?;
    let out = std::process::Command::new(exe)
        .env(PRINTF_CHILD_ENV, "raised")
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success(),
        "the child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = stdout
        .lines()
        .filter(|l| l.starts_with("cuabi printf line "))
        .count();
    ensure!(
        lines == PRINTF_LINES,
        "{lines} of {PRINTF_LINES} printf lines came out"
    );
    Ok(())
}
