//! cuabi's Rust binding timed with the same loops as the C, Python and C#
//! benchmarks; one JSON object per figure on stdout (see bench/README.md).
//!
//! ```text
//! cuabi-bench gpu   [options]   launch, graph, copy, compile
//! cuabi-bench saxpy [options]   one SAXPY application run and its kernel time
//! cuabi-bench cpu   [options]   NVRTC compile, handle validation, error path
//! cuabi-bench paired [--pairs N] [--burst-size N] [--copy-pairs N] [--warmup N] [--arch sm_XY]
//!                               launch and copy figures paired with raw C (paired.rs)
//! cuabi-bench instructions --path P --count N
//!                               N calls of one path, for callgrind (instructions.rs)
//! ```
//!
//! The launch figures (`launch_2args`, `launch_16args`) are the binding's
//! fastest way to launch: a `LaunchPlan` made once, whose arguments
//! `launch_with` writes into the plan's block in place (the library checks
//! the tuple's signature the first time only) before one
//! `cuabi_launch_plan_launch` call, every launch. Two more rows come along: `_builder`, the launch builder
//! `f.launch(config).stream(&s).arg(..)...run()` (packs the arguments on the
//! stack at the kernel's offsets, one `cuabi_function_launch_packed` call), and
//! `_plan_launch`, the plan launched with arguments written once.
//!
//! The graph figures replay a captured graph (`graph_replay`,
//! `graph_launch_call`) and, with a new argument each time, set kernel node
//! 0's arguments in the instantiated graph before each replay
//! (`graph_node_update_call`: that call; `graph_node_update_replay`: the
//! call, the launch and the synchronize).

use std::fmt::Write as _;
use std::time::Instant;

mod ffi;
mod instructions;
mod paired;

use cuabi::{sys, CaptureMode, CompileOptions, Device, DeviceBuffer, LaunchConfig, Program};

const SAXPY: &str = "extern \"C\" __global__\n\
void saxpy(float a, float *x, float *y, float *out, size_t n)\n\
{\n\
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;\n\
 if (tid < n) {\n\
   out[tid] = a * x[tid] + y[tid];\n\
 }\n\
}\n";

const EMPTY: &str = "extern \"C\" __global__ void empty2(float a, float *p) {}\n\
extern \"C\" __global__ void empty16(float a0, float *p1, int i2, size_t n3,\n\
    float a4, float *p5, int i6, size_t n7, float a8, float *p9, int i10, size_t n11,\n\
    float a12, float *p13, int i14, size_t n15) {}\n";

const SAXPY_THREADS: u32 = 512;
const SAXPY_BLOCKS: u32 = 32768;
const COPY_BYTES: usize = 64 << 20;
const GRAPH_KERNELS: usize = 1000;

type Res<T> = Result<T, String>;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

// ---------------------------------------------------------------------------
// Options, statistics, output
// ---------------------------------------------------------------------------

struct Opts {
    bursts: usize,
    burst_size: usize,
    warmup: usize,
    reps: usize,
    kernel_reps: usize,
    arch: String,
    only: Vec<String>,
    /// `paired`: rounds of launch bursts, and of copies.
    pairs: usize,
    copy_pairs: usize,
    /// `instructions`: the path, and how many calls.
    path: String,
    count: usize,
}

impl Opts {
    fn wanted(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == name)
    }
}

struct Stats {
    median: f64,
    p10: f64,
    p90: f64,
    min: f64,
    max: f64,
    n: usize,
}

fn summarize(v: &mut [f64]) -> Stats {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len();
    if n == 0 {
        return Stats {
            median: 0.0,
            p10: 0.0,
            p90: 0.0,
            min: 0.0,
            max: 0.0,
            n,
        };
    }
    let at = |q: f64| v[(q * (n - 1) as f64 + 0.5).floor() as usize];
    Stats {
        median: if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        },
        p10: at(0.1),
        p90: at(0.9),
        min: v[0],
        max: v[n - 1],
        n,
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

fn emit(bench: &str, body: &str) {
    println!(
        "{{\"impl\":\"rust\",\"bench\":{}{}}}",
        json_str(bench),
        body
    );
}

/// A figure from samples; `extra` is a JSON fragment (",\"k\":v") or "".
fn emit_stats(bench: &str, unit: &str, samples: &mut [f64], extra: &str) {
    let s = summarize(samples);
    emit(
        bench,
        &format!(
            ",\"unit\":\"{unit}\",\"value\":{},\"median\":{},\"p10\":{},\"p90\":{},\"min\":{},\"max\":{},\"n\":{}{extra}",
            num(s.median),
            num(s.median),
            num(s.p10),
            num(s.p90),
            num(s.min),
            num(s.max),
            s.n
        ),
    );
}

fn emit_error(bench: &str, message: &str) {
    emit(bench, &format!(",\"error\":{}", json_str(message)));
    eprintln!("[rust] {bench}: {message}");
}

fn emit_skip(bench: &str, why: &str) {
    emit(bench, &format!(",\"skipped\":{}", json_str(why)));
}

/// Runs one figure; a failure becomes an error record.
fn guard(bench: &str, f: impl FnOnce() -> Res<()>) {
    if let Err(e) = f() {
        emit_error(bench, &e);
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Milliseconds of each of `reps` calls after one warm-up call.
fn repeat_ms(reps: usize, mut f: impl FnMut() -> Res<()>) -> Res<Vec<f64>> {
    f()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t0 = Instant::now();
        f()?;
        t.push(ms_since(t0));
    }
    Ok(t)
}

// ---------------------------------------------------------------------------
// GPU figures
// ---------------------------------------------------------------------------

/// Host microseconds per launch in bursts of `burst_size`, synchronised
/// between bursts outside the timed region.
fn launch_bursts(
    o: &Opts,
    stream: &cuabi::Stream,
    mut launch: impl FnMut() -> cuabi::Result<()>,
) -> Res<Vec<f64>> {
    for _ in 0..o.warmup {
        for _ in 0..o.burst_size {
            launch().map_err(err)?;
        }
        stream.synchronize().map_err(err)?;
    }
    let mut out = Vec::with_capacity(o.bursts);
    for _ in 0..o.bursts {
        let t0 = Instant::now();
        let mut failed = None;
        for _ in 0..o.burst_size {
            if let Err(e) = launch() {
                failed = Some(e);
                break;
            }
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / o.burst_size as f64;
        if let Some(e) = failed {
            return Err(err(e));
        }
        stream.synchronize().map_err(err)?;
        out.push(us);
    }
    Ok(out)
}

/// How each launch figure launches; `path` of its record.
const PATH_PLAN_WITH: &str =
    "LaunchPlan::launch_with(args): every argument written into the plan's block, then one call";
const PATH_BUILDER: &str = "Function::launch builder: .stream(&s).arg(..)...run()";
const PATH_PLAN: &str = "LaunchPlan::launch(): arguments written once, before the bursts";

/// One launch figure: bursts of `launch`, then its record.
fn launch_figure(
    o: &Opts,
    stream: &cuabi::Stream,
    bench: &str,
    args: usize,
    path: &str,
    launch: impl FnMut() -> cuabi::Result<()>,
) -> Res<()> {
    let mut t = launch_bursts(o, stream, launch)?;
    emit_stats(
        bench,
        "us",
        &mut t,
        &format!(
            ",\"burst\":{},\"args\":{args},\"path\":{}",
            o.burst_size,
            json_str(path)
        ),
    );
    Ok(())
}

fn launch_and_graph(o: &Opts, device: &Device) -> Res<()> {
    let module = device.compile(EMPTY, &CompileOptions::new()).map_err(err)?;
    let stream = device.create_stream().map_err(err)?;
    let buf: DeviceBuffer<f32> = device.alloc(64).map_err(err)?;
    let one = LaunchConfig::new(1u32, 1u32);
    if o.wanted("launch") {
        guard("launch_2args", || {
            let f = module.function("empty2").map_err(err)?;
            let a = 2.0f32;
            // The headline: a plan whose arguments are written every launch.
            let mut plan = f.plan(one, Some(&stream)).map_err(err)?;
            launch_figure(o, &stream, "launch_2args", 2, PATH_PLAN_WITH, || unsafe {
                plan.launch_with((&a, &buf))
            })?;
            launch_figure(
                o,
                &stream,
                "launch_2args_builder",
                2,
                PATH_BUILDER,
                || unsafe { f.launch(one).stream(&stream).arg(&a).arg(&buf).run() },
            )?;
            let mut fixed = f.plan(one, Some(&stream)).map_err(err)?;
            fixed.set_args((&a, &buf)).map_err(err)?;
            launch_figure(
                o,
                &stream,
                "launch_2args_plan_launch",
                2,
                PATH_PLAN,
                || unsafe { fixed.launch() },
            )
        });
        guard("launch_16args", || {
            let f = module.function("empty16").map_err(err)?;
            let (f0, f1, f2, f3) = (1.0f32, 2.0f32, 3.0f32, 4.0f32);
            let (i0, i1, i2, i3) = (1i32, 2i32, 3i32, 4i32);
            let (n0, n1, n2, n3) = (10usize, 20usize, 30usize, 40usize);
            let args = (
                &f0, &buf, &i0, &n0, &f1, &buf, &i1, &n1, &f2, &buf, &i2, &n2, &f3, &buf, &i3, &n3,
            );
            let mut plan = f.plan(one, Some(&stream)).map_err(err)?;
            launch_figure(o, &stream, "launch_16args", 16, PATH_PLAN_WITH, || unsafe {
                plan.launch_with(args)
            })?;
            launch_figure(
                o,
                &stream,
                "launch_16args_builder",
                16,
                PATH_BUILDER,
                || unsafe {
                    f.launch(one)
                        .stream(&stream)
                        .arg(&f0)
                        .arg(&buf)
                        .arg(&i0)
                        .arg(&n0)
                        .arg(&f1)
                        .arg(&buf)
                        .arg(&i1)
                        .arg(&n1)
                        .arg(&f2)
                        .arg(&buf)
                        .arg(&i2)
                        .arg(&n2)
                        .arg(&f3)
                        .arg(&buf)
                        .arg(&i3)
                        .arg(&n3)
                        .run()
                },
            )?;
            let mut fixed = f.plan(one, Some(&stream)).map_err(err)?;
            fixed.set_args(args).map_err(err)?;
            launch_figure(
                o,
                &stream,
                "launch_16args_plan_launch",
                16,
                PATH_PLAN,
                || unsafe { fixed.launch() },
            )
        });
    }
    if o.wanted("graph") {
        guard("graph_replay", || {
            let f = module.function("empty2").map_err(err)?;
            let a = 2.0f32;
            // First use outside the capture.
            unsafe { f.launch(one).stream(&stream).arg(&a).arg(&buf).run() }.map_err(err)?;
            stream.synchronize().map_err(err)?;
            stream.begin_capture(CaptureMode::Global).map_err(err)?;
            let mut captured = Ok(());
            for _ in 0..GRAPH_KERNELS {
                captured = unsafe { f.launch(one).stream(&stream).arg(&a).arg(&buf).run() };
                if captured.is_err() {
                    break;
                }
            }
            let graph = stream.end_capture().map_err(err)?;
            captured.map_err(err)?;
            let mut exec = graph.instantiate().map_err(err)?;
            for _ in 0..o.warmup {
                unsafe { exec.launch(&stream) }.map_err(err)?;
                stream.synchronize().map_err(err)?;
            }
            let reps = o.reps.max(50);
            let (mut per_kernel, mut host) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                let t0 = Instant::now();
                unsafe { exec.launch(&stream) }.map_err(err)?;
                let t1 = t0.elapsed();
                stream.synchronize().map_err(err)?;
                let t2 = t0.elapsed();
                per_kernel.push(t2.as_secs_f64() * 1e6 / GRAPH_KERNELS as f64);
                host.push(t1.as_secs_f64() * 1e6);
            }
            let extra = format!(",\"kernels\":{GRAPH_KERNELS}");
            emit_stats("graph_replay", "us", &mut per_kernel, &extra);
            emit_stats("graph_launch_call", "us", &mut host, &extra);
            // Replay with a new argument each time: kernel node 0's
            // arguments set in the instantiated graph, then a launch.
            let (mut update, mut replay) = (Vec::new(), Vec::new());
            for i in 0..reps {
                let a = i as f32;
                let t0 = Instant::now();
                exec.set_kernel_node_args(0, &f, (&a, &buf)).map_err(err)?;
                let t1 = t0.elapsed();
                unsafe { exec.launch(&stream) }.map_err(err)?;
                stream.synchronize().map_err(err)?;
                let t2 = t0.elapsed();
                update.push(t1.as_secs_f64() * 1e6);
                replay.push(t2.as_secs_f64() * 1e6);
            }
            emit_stats("graph_node_update_call", "us", &mut update, &extra);
            emit_stats("graph_node_update_replay", "us", &mut replay, &extra);
            Ok(())
        });
    }
    Ok(())
}

fn copy_rate(o: &Opts, bench: &str, mut copy: impl FnMut() -> cuabi::Result<()>) -> Res<()> {
    for _ in 0..o.warmup {
        copy().map_err(err)?;
    }
    let mut t = Vec::with_capacity(o.reps);
    for _ in 0..o.reps {
        let t0 = Instant::now();
        copy().map_err(err)?;
        t.push(ms_since(t0));
    }
    let s = summarize(&mut t);
    emit(
        bench,
        &format!(
            ",\"unit\":\"GB/s\",\"value\":{},\"best\":{},\"median_ms\":{},\"bytes\":{COPY_BYTES},\"n\":{}",
            num(COPY_BYTES as f64 / (s.median * 1e6)),
            num(COPY_BYTES as f64 / (s.min * 1e6)),
            num(s.median),
            s.n
        ),
    );
    Ok(())
}

fn copies(o: &Opts, device: &Device) -> Res<()> {
    let mut buf: DeviceBuffer<u8> = device.alloc(COPY_BYTES).map_err(err)?;
    let mut host = vec![1u8; COPY_BYTES];
    guard("copy_h2d_pageable", || {
        copy_rate(o, "copy_h2d_pageable", || buf.copy_from(&host))
    });
    guard("copy_d2h_pageable", || {
        copy_rate(o, "copy_d2h_pageable", || buf.copy_to(&mut host))
    });
    let mut pinned = device.alloc_pinned::<u8>(COPY_BYTES).map_err(err)?;
    pinned.fill(1);
    guard("copy_h2d_pinned", || {
        copy_rate(o, "copy_h2d_pinned", || buf.copy_from(&pinned))
    });
    guard("copy_d2h_pinned", || {
        copy_rate(o, "copy_d2h_pinned", || buf.copy_to(&mut pinned))
    });
    Ok(())
}

fn nvrtc_image(arch_option: &str, cubin: bool) -> Res<Vec<u8>> {
    let mut p = Program::new(SAXPY, "saxpy.cu").map_err(err)?;
    p.compile(&["--fmad=false", arch_option]).map_err(err)?;
    if cubin {
        p.cubin().map_err(err)
    } else {
        p.ptx().map(String::into_bytes).map_err(err)
    }
}

fn compile_nvrtc(o: &Opts, arch: &str) -> Res<()> {
    let option = format!("--gpu-architecture={arch}");
    let mut t = repeat_ms((o.reps / 3).max(5), || {
        nvrtc_image(&option, true).map(|_| ())
    })?;
    emit_stats(
        "compile_nvrtc",
        "ms",
        &mut t,
        &format!(",\"arch\":{}", json_str(arch)),
    );
    Ok(())
}

fn compile_figures(o: &Opts, device: &Device) -> Res<()> {
    let (major, minor) = device.compute_capability().map_err(err)?;
    guard("compile_nvrtc", || {
        compile_nvrtc(o, &format!("sm_{major}{minor}"))
    });
    guard("compile_cache_hit", || {
        let options = CompileOptions::new().option("--fmad=false");
        drop(device.compile(SAXPY, &options).map_err(err)?);
        let mut misses = 0;
        let mut t = repeat_ms(o.reps.max(20), || {
            let m = device.compile(SAXPY, &options).map_err(err)?;
            misses += usize::from(!m.from_cache().map_err(err)?);
            Ok(())
        })?;
        if misses > 0 {
            return Err(format!("{misses} compiles missed a warm cache"));
        }
        emit_stats("compile_cache_hit", "ms", &mut t, "");
        Ok(())
    });
    for (bench, cubin) in [("load_cubin", true), ("load_ptx", false)] {
        guard(bench, || {
            let target = if cubin { "sm" } else { "compute" };
            let image = nvrtc_image(
                &format!("--gpu-architecture={target}_{major}{minor}"),
                cubin,
            )?;
            let mut t = repeat_ms((o.reps / 3).max(10), || {
                device.load_module(&image).map(drop).map_err(err)
            })?;
            emit_stats(bench, "ms", &mut t, "");
            Ok(())
        });
    }
    Ok(())
}

fn run_gpu(o: &Opts) -> Res<()> {
    let device = Device::get(0).map_err(err)?;
    let (major, minor) = device.compute_capability().map_err(err)?;
    emit(
        "info",
        &format!(
            ",\"device\":{},\"cc\":\"{major}.{minor}\"",
            json_str(&device.name().map_err(err)?)
        ),
    );
    if o.wanted("launch") || o.wanted("graph") {
        guard("launch_2args", || launch_and_graph(o, &device));
    }
    if o.wanted("copy") {
        guard("copy_h2d_pageable", || copies(o, &device));
    }
    if o.wanted("compile") {
        guard("compile_nvrtc", || compile_figures(o, &device));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// SAXPY
// ---------------------------------------------------------------------------

/// xorshift32 in [0, 1): the same cheap generator as the C benchmark.
fn fill_random(v: &mut [f32], state: &mut u32) {
    let mut s = *state;
    for x in v.iter_mut() {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        *x = (s >> 8) as f32 * (1.0 / 16_777_216.0);
    }
    *state = s;
}

fn run_saxpy(o: &Opts) -> Res<()> {
    let n = (SAXPY_THREADS * SAXPY_BLOCKS) as usize;
    let mut hx = vec![0f32; n];
    let mut hy = vec![0f32; n];
    let mut hout = vec![0f32; n];
    let mut state = 1234u32;
    fill_random(&mut hx, &mut state);
    fill_random(&mut hy, &mut state);
    let a = 2.0f32;

    let t0 = Instant::now();
    let device = Device::get(0).map_err(err)?;
    let options = CompileOptions::new()
        .name("saxpy.cu")
        .option("--fmad=false");
    let module = device.compile(SAXPY, &options).map_err(err)?;
    let hit = module.from_cache().map_err(err)?;
    let saxpy = module.function("saxpy").map_err(err)?;
    let mut x: DeviceBuffer<f32> = device.alloc(n).map_err(err)?;
    let mut y: DeviceBuffer<f32> = device.alloc(n).map_err(err)?;
    let out: DeviceBuffer<f32> = device.alloc(n).map_err(err)?;
    let stream = device.create_stream().map_err(err)?;
    let (start, stop) = (
        device.create_event().map_err(err)?,
        device.create_event().map_err(err)?,
    );
    let config = LaunchConfig::new(SAXPY_BLOCKS, SAXPY_THREADS);
    // SAFETY: every host slice and buffer lives until the stream is synchronised.
    unsafe {
        x.copy_from_async(&hx, &stream).map_err(err)?;
        y.copy_from_async(&hy, &stream).map_err(err)?;
    }
    let launch = || -> cuabi::Result<()> {
        // SAFETY: saxpy reads n elements of x and y and writes n of out.
        unsafe {
            saxpy
                .launch(config)
                .stream(&stream)
                .arg(&a)
                .arg(&x)
                .arg(&y)
                .arg(&out)
                .arg(&n)
                .run()
        }
    };
    let run = || -> cuabi::Result<()> {
        start.record(&stream)?;
        launch()?;
        stop.record(&stream)
    };
    run().map_err(err)?;
    unsafe { out.copy_to_async(&mut hout, &stream) }.map_err(err)?;
    stream.synchronize().map_err(err)?;
    let bad = hx
        .iter()
        .zip(&hy)
        .zip(&hout)
        .filter(|((x, y), o)| {
            let want = a * **x + **y;
            (**o - want).abs() > 1e-5 * (1.0 + want.abs())
        })
        .count();
    let app_ms = ms_since(t0);
    if bad > 0 {
        return Err(format!("{bad} of {n} results differ from the host's"));
    }
    let first = start.elapsed_ms(&stop).map_err(err)?;
    emit(
        "saxpy_app",
        &format!(
            ",\"unit\":\"ms\",\"value\":{},\"n\":1,\"cache\":\"{}\",\"verified\":true",
            num(app_ms),
            if hit { "hit" } else { "miss" }
        ),
    );
    guard("saxpy_kernel", || {
        let mut k = Vec::with_capacity(o.kernel_reps);
        for _ in 0..o.kernel_reps {
            // An untimed SAXPY keeps the stream busy while the timed one is enqueued.
            launch().map_err(err)?;
            run().map_err(err)?;
            stream.synchronize().map_err(err)?;
            k.push(start.elapsed_ms(&stop).map_err(err)? as f64);
        }
        emit_stats(
            "saxpy_kernel",
            "ms",
            &mut k,
            &format!(",\"first_ms\":{first},\"elements\":{n}"),
        );
        Ok(())
    });
    Ok(())
}

// ---------------------------------------------------------------------------
// CPU only
// ---------------------------------------------------------------------------

/// Nanoseconds per call of `call`, which must fail: 50 rounds of 2000.
fn per_call_ns(mut call: impl FnMut() -> bool) -> Res<Vec<f64>> {
    const ROUNDS: usize = 50;
    const CALLS: usize = 2000;
    let mut ok = true;
    for _ in 0..CALLS {
        ok &= call();
    }
    let mut t = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        for _ in 0..CALLS {
            ok &= call();
        }
        t.push(t0.elapsed().as_secs_f64() * 1e9 / CALLS as f64);
    }
    if ok {
        Ok(t)
    } else {
        Err("a call on an invalid handle did not fail as it should".into())
    }
}

fn run_cpu(o: &Opts) -> Res<()> {
    guard("compile_nvrtc", || compile_nvrtc(o, &o.arch));
    guard("invalid_handle_released", || {
        let released = {
            let p = Program::new("extern \"C\" __global__ void k() {}", "k.cu").map_err(err)?;
            p.as_raw()
        }; // dropped: the handle is stale now
        let mut t = per_call_ns(|| {
            let mut size = 0usize;
            let st =
                unsafe { sys::cuabi_program_get_log(released, std::ptr::null_mut(), &mut size) };
            st == sys::CUABI_ERROR_INVALID_HANDLE
        })?;
        emit_stats(
            "invalid_handle_released",
            "ns",
            &mut t,
            ",\"path\":\"status only (sys)\"",
        );
        let mut t = per_call_ns(|| {
            let mut count = 0usize;
            let st =
                unsafe { sys::cuabi_function_get_param_count(std::ptr::null_mut(), &mut count) };
            st == sys::CUABI_ERROR_INVALID_HANDLE
        })?;
        emit_stats(
            "invalid_handle_null",
            "ns",
            &mut t,
            ",\"path\":\"status only (sys)\"",
        );
        Ok(())
    });
    guard("error_path", || {
        // A failing call through the safe layer: PTX before a compile is
        // NOT_FOUND, and the Error carries the library's message.
        let p = Program::new("extern \"C\" __global__ void k() {}", "k.cu").map_err(err)?;
        let mut t = per_call_ns(|| p.ptx().is_err())?;
        emit_stats(
            "error_path",
            "ns",
            &mut t,
            ",\"path\":\"Program::ptx before compile -> Err\"",
        );
        Ok(())
    });
    emit_skip(
        "pack_2args",
        "the binding packs inside Launch::run and LaunchPlan's block, which need a Function \
         (a device): see the launch figures against the stand-in driver",
    );
    Ok(())
}

// ---------------------------------------------------------------------------

fn parse(args: &[String]) -> Result<(String, Opts), String> {
    let mode = args
        .get(1)
        .cloned()
        .ok_or("usage: cuabi-bench gpu|saxpy|cpu|paired|instructions [options]")?;
    let mut o = Opts {
        bursts: 100,
        burst_size: 200,
        warmup: 5,
        reps: 30,
        kernel_reps: 30,
        arch: "sm_90".into(),
        only: Vec::new(),
        pairs: 100,
        copy_pairs: 30,
        path: String::new(),
        count: 0,
    };
    let mut i = 2;
    while i < args.len() {
        let value = args
            .get(i + 1)
            .ok_or(format!("{} needs a value", args[i]))?;
        let count = || {
            value
                .parse::<usize>()
                .map_err(|_| format!("{} needs a number", args[i]))
        };
        match args[i].as_str() {
            "--bursts" => o.bursts = count()?,
            "--burst-size" => o.burst_size = count()?,
            "--warmup" => o.warmup = count()?,
            "--reps" => o.reps = count()?,
            "--kernel-reps" => o.kernel_reps = count()?,
            "--arch" => o.arch = value.clone(),
            "--pairs" => o.pairs = count()?,
            "--copy-pairs" => o.copy_pairs = count()?,
            "--path" => o.path = value.clone(),
            "--count" => o.count = count()?,
            "--only" => {
                o.only = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            other => return Err(format!("unknown option {other}")),
        }
        i += 2;
    }
    if mode == "paired" && o.pairs < 30 {
        return Err(format!("--pairs {}: at least 30 rounds", o.pairs));
    }
    if mode == "paired" && (o.copy_pairs == 0 || o.burst_size == 0) {
        return Err("--copy-pairs and --burst-size must be positive".into());
    }
    if mode == "instructions" && o.path.is_empty() {
        return Err("instructions needs --path P --count N".into());
    }
    Ok((mode, o))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, o) = match parse(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let result = match mode.as_str() {
        "gpu" => run_gpu(&o).map_err(|e| ("init", e)),
        "saxpy" => run_saxpy(&o).map_err(|e| ("saxpy_app", e)),
        "cpu" => run_cpu(&o).map_err(|e| ("cpu", e)),
        "paired" => paired::run(&o).map_err(|e| ("paired", e)),
        "instructions" => {
            if let Err(e) = instructions::run(&o.path, o.count) {
                eprintln!("cuabi-bench instructions: {e}");
                std::process::exit(1);
            }
            Ok(())
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    };
    if let Err((bench, e)) = result {
        emit_error(bench, &e);
        std::process::exit(1);
    }
}
