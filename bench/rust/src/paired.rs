//! `cuabi-bench paired`: the launch and copy figures taken paired with the
//! raw C reference (bench/README.md, "Paired figures").
//!
//! Launch series, one sample per round each (a burst's microseconds per
//! launch):
//!
//! * `c_ref`: `benchref_launch_burst`, C's raw `cuLaunchKernel` loop;
//! * `raw`: this program's own `cuLaunchKernel` (an `extern "C" fn` from
//!   "libcuda.so.1", ffi.rs) on the same `CUfunction` and stream;
//! * `plan` (the headline: the binding's intended fast path, as figure 1's
//!   `rust` row): a `LaunchPlan` made once, `launch_with(args)` writing every
//!   argument into its block, then one plan launch;
//! * `builder`: `f.launch(cfg).stream(&s).args(..).run()`, one
//!   `cuabi_function_launch_packed`;
//! * `plan_launch`: the plan launched with its arguments written once.
//!
//! Copy series: `c_ref` (`benchref_copy_*`) and `copy` (the crate's
//! synchronous `DeviceBuffer::copy_from` / `copy_to`), the same host memory
//! and device buffer.
//!
//! Allocation series (`paired_alloc_{ordered,sync}_{256,1048576}`), a burst
//! of allocations each freed at once, microseconds per allocate + free:
//! `c_ref` (`benchref_alloc_burst`: cuMemAllocAsync + cuMemFreeAsync on the
//! stream, or cuMemAlloc + cuMemFree) and `alloc` (the crate's
//! `Device::alloc_async` + `DeviceBuffer::free_async` on the same stream, or
//! `Device::alloc` + drop).

use std::ffi::c_void;
use std::time::Instant;

use cuabi::{Device, DeviceBuffer, KernelArgs, LaunchConfig, Module, Stream};

use crate::ffi::{Driver, Reference};
use crate::{emit, err, guard, json_str, num, Opts, Res, COPY_BYTES, EMPTY};

/// The launch series, in their order in the record.
const LAUNCH_SERIES: [&str; 5] = ["c_ref", "raw", "plan", "builder", "plan_launch"];
/// The series standing for the binding (see the module's comment).
const LAUNCH_HEADLINE: &str = "plan";
const COPY_SERIES: [&str; 2] = ["c_ref", "copy"];

/// Runs `warmup` discarded rounds and `pairs` kept ones of every series,
/// round r starting with series r mod S; `sync` runs before each sample,
/// outside it. `sample(i)` is one sample of series i.
fn rounds(
    warmup: usize,
    pairs: usize,
    series: usize,
    mut sync: impl FnMut() -> Res<()>,
    mut sample: impl FnMut(usize) -> Res<f64>,
) -> Res<Vec<Vec<f64>>> {
    let mut out = vec![Vec::with_capacity(pairs); series];
    for round in 0..warmup + pairs {
        let r = if round < warmup {
            round
        } else {
            round - warmup
        };
        for k in 0..series {
            let i = (r + k) % series;
            sync()?;
            let v = sample(i)?;
            if round >= warmup {
                out[i].push(v);
            }
        }
    }
    Ok(out)
}

fn series_json(names: &[&str], samples: &[Vec<f64>]) -> String {
    let mut s = String::from("{");
    for (k, (name, v)) in names.iter().zip(samples).enumerate() {
        if k > 0 {
            s.push(',');
        }
        s.push_str(&json_str(name));
        s.push_str(":[");
        s.push_str(&v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(","));
        s.push(']');
    }
    s.push('}');
    s
}

/// Microseconds per launch of a burst of `n` launches.
#[inline(always)]
fn burst<E: std::fmt::Display>(n: u32, mut launch: impl FnMut() -> Result<(), E>) -> Res<f64> {
    let t0 = Instant::now();
    for _ in 0..n {
        if let Err(e) = launch() {
            return Err(err(e));
        }
    }
    Ok(t0.elapsed().as_secs_f64() * 1e6 / f64::from(n))
}

/// What every launch figure shares.
struct Setup<'a> {
    o: &'a Opts,
    device: &'a Device,
    module: &'a Module,
    stream: &'a Stream,
    stream_raw: u64,
    reference: &'a Reference,
    driver: &'a Driver,
}

/// One paired launch figure: `args` (the crate's tuple) and `params` (the
/// same values, one pointer each, as cuLaunchKernel takes them).
fn launch_figure<T: KernelArgs + Copy>(
    s: &Setup,
    bench: &str,
    kernel: &str,
    args: T,
    params: &mut [*mut c_void],
) -> Res<()> {
    let o = s.o;
    let n = u32::try_from(o.burst_size).map_err(err)?;
    let context = s.device.cu_context().map_err(err)?;
    let ref_f = s.reference.load_kernel(context, EMPTY, kernel, &o.arch)?;
    let f = s.module.function(kernel).map_err(err)?;
    let one = LaunchConfig::new(1u32, 1u32);
    let stream = s.stream;
    let mut plan = f.plan(one, Some(stream)).map_err(err)?;
    let mut fixed = f.plan(one, Some(stream)).map_err(err)?;
    fixed.set_args(args).map_err(err)?;
    let launch_kernel = s.driver.launch_kernel;
    let raw_f = ref_f as usize as *mut c_void;
    let raw_stream = s.stream_raw as usize as *mut c_void;
    let nargs = params.len();
    let params = params.as_mut_ptr();
    let samples = rounds(
        o.warmup,
        o.pairs,
        LAUNCH_SERIES.len(),
        || stream.synchronize().map_err(err),
        |i| match i {
            // SAFETY (all): one argument per parameter, each of its type;
            // the buffer outlives the figure, which synchronises at its end.
            0 => unsafe { s.reference.launch_burst(ref_f, s.stream_raw, params, n) }
                .map(|ns| ns as f64 / 1e3 / f64::from(n)),
            1 => burst(n, || {
                let r = unsafe {
                    launch_kernel(
                        raw_f,
                        1,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        raw_stream,
                        params,
                        std::ptr::null_mut(),
                    )
                };
                if r == 0 {
                    Ok(())
                } else {
                    Err(format!("cuLaunchKernel: CUresult {r}"))
                }
            }),
            2 => burst(n, || unsafe { plan.launch_with(args) }),
            3 => burst(n, || unsafe {
                f.launch(one).stream(stream).args(args).run()
            }),
            _ => burst(n, || unsafe { fixed.launch() }),
        },
    )?;
    stream.synchronize().map_err(err)?;
    emit(
        bench,
        &format!(
            ",\"kind\":\"paired\",\"unit\":\"us\",\"burst\":{},\"pairs\":{},\"args\":{},\
             \"headline\":{},\"series\":{}",
            o.burst_size,
            o.pairs,
            nargs,
            json_str(LAUNCH_HEADLINE),
            series_json(&LAUNCH_SERIES, &samples)
        ),
    );
    Ok(())
}

fn launches(s: &Setup) -> Res<()> {
    let buf: DeviceBuffer<f32> = s.device.alloc(64).map_err(err)?;
    let mut p = buf.device_ptr();
    guard("paired_launch_2args", || {
        let mut a = 2.0f32;
        let mut params: [*mut c_void; 2] = [(&raw mut a).cast(), (&raw mut p).cast()];
        let args = (&2.0f32, &buf);
        launch_figure(s, "paired_launch_2args", "empty2", args, &mut params)
    });
    guard("paired_launch_16args", || {
        let (mut f0, mut f1, mut f2, mut f3) = (1.0f32, 2.0f32, 3.0f32, 4.0f32);
        let (mut i0, mut i1, mut i2, mut i3) = (1i32, 2i32, 3i32, 4i32);
        let (mut n0, mut n1, mut n2, mut n3) = (10usize, 20usize, 30usize, 40usize);
        let args = (
            &1.0f32, &buf, &1i32, &10usize, &2.0f32, &buf, &2i32, &20usize, &3.0f32, &buf, &3i32,
            &30usize, &4.0f32, &buf, &4i32, &40usize,
        );
        let pp: *mut c_void = (&raw mut p).cast();
        let mut params: [*mut c_void; 16] = [
            (&raw mut f0).cast(),
            pp,
            (&raw mut i0).cast(),
            (&raw mut n0).cast(),
            (&raw mut f1).cast(),
            pp,
            (&raw mut i1).cast(),
            (&raw mut n1).cast(),
            (&raw mut f2).cast(),
            pp,
            (&raw mut i2).cast(),
            (&raw mut n2).cast(),
            (&raw mut f3).cast(),
            pp,
            (&raw mut i3).cast(),
            (&raw mut n3).cast(),
        ];
        launch_figure(s, "paired_launch_16args", "empty16", args, &mut params)
    });
    Ok(())
}

/// One paired copy figure: `c_ref` and `copy` are each one synchronous copy.
fn copy_figure(
    o: &Opts,
    stream: &Stream,
    bench: &str,
    mut c_ref: impl FnMut() -> Res<i64>,
    mut copy: impl FnMut() -> cuabi::Result<()>,
) -> Res<()> {
    let samples = rounds(
        o.warmup,
        o.copy_pairs,
        COPY_SERIES.len(),
        || stream.synchronize().map_err(err),
        |i| {
            if i == 0 {
                c_ref().map(|ns| ns as f64 / 1e3)
            } else {
                let t0 = Instant::now();
                copy().map_err(err)?;
                Ok(t0.elapsed().as_secs_f64() * 1e6)
            }
        },
    )?;
    emit(
        bench,
        &format!(
            ",\"kind\":\"paired\",\"unit\":\"us\",\"bytes\":{COPY_BYTES},\"pairs\":{},\
             \"headline\":\"copy\",\"series\":{}",
            o.copy_pairs,
            series_json(&COPY_SERIES, &samples)
        ),
    );
    Ok(())
}

fn copies(o: &Opts, device: &Device, stream: &Stream, reference: &Reference) -> Res<()> {
    let mut buf: DeviceBuffer<u8> = device.alloc(COPY_BYTES).map_err(err)?;
    let dptr = buf.device_ptr();
    {
        let mut host = vec![1u8; COPY_BYTES];
        guard("paired_copy_to_device_pageable", || {
            let host = &host;
            let buf = &mut buf;
            copy_figure(
                o,
                stream,
                "paired_copy_to_device_pageable",
                || reference.copy_to_device(dptr, host),
                || buf.copy_from(host),
            )
        });
        guard("paired_copy_to_host_pageable", || {
            let host = std::cell::RefCell::new(&mut host[..]);
            copy_figure(
                o,
                stream,
                "paired_copy_to_host_pageable",
                || reference.copy_to_host(&mut host.borrow_mut(), dptr),
                || buf.copy_to(&mut host.borrow_mut()),
            )
        });
    }
    let pinned = device.alloc_pinned::<u8>(COPY_BYTES);
    let mut pinned = match pinned {
        Ok(p) => p,
        Err(e) => {
            let e = err(e);
            crate::emit_error("paired_copy_to_device_pinned", &e);
            crate::emit_error("paired_copy_to_host_pinned", &e);
            return Ok(());
        }
    };
    pinned.fill(1);
    guard("paired_copy_to_device_pinned", || {
        let host: &[u8] = &pinned;
        let buf = &mut buf;
        copy_figure(
            o,
            stream,
            "paired_copy_to_device_pinned",
            || reference.copy_to_device(dptr, host),
            || buf.copy_from(host),
        )
    });
    guard("paired_copy_to_host_pinned", || {
        let host = std::cell::RefCell::new(&mut pinned[..]);
        copy_figure(
            o,
            stream,
            "paired_copy_to_host_pinned",
            || reference.copy_to_host(&mut host.borrow_mut(), dptr),
            || buf.copy_to(&mut host.borrow_mut()),
        )
    });
    Ok(())
}

const ALLOC_SERIES: [&str; 2] = ["c_ref", "alloc"];
/// Allocations per sample: a burst, so that the clock's cost is amortised.
const ALLOC_BURST: u32 = 100;
/// The sizes of the allocation figures (the Python targets' sizes).
const ALLOC_SIZES: [usize; 2] = [256, 1 << 20];

/// One paired allocation figure: `ordered` (from the device's default pool
/// on `stream`) or synchronous, of `bytes` each.
fn alloc_figure(
    o: &Opts,
    device: &Device,
    stream: &Stream,
    reference: &Reference,
    bytes: usize,
    ordered: bool,
) -> Res<()> {
    let bench = alloc_bench(bytes, ordered);
    let stream_raw = stream.cu_stream().map_err(err)?;
    let samples = rounds(
        1,
        o.copy_pairs,
        ALLOC_SERIES.len(),
        || stream.synchronize().map_err(err),
        |i| match i {
            0 => reference
                .alloc_burst(stream_raw, bytes, ordered, ALLOC_BURST)
                .map(|ns| ns as f64 / 1e3 / f64::from(ALLOC_BURST)),
            _ if ordered => burst(ALLOC_BURST, || {
                let b: DeviceBuffer<u8> = device.alloc_async(bytes, None, Some(stream))?;
                b.free_async(stream).map_err(|(_, e)| e)
            }),
            _ => burst(ALLOC_BURST, || device.alloc::<u8>(bytes).map(drop)),
        },
    )?;
    stream.synchronize().map_err(err)?;
    emit(
        &bench,
        &format!(
            ",\"kind\":\"paired\",\"unit\":\"us\",\"bytes\":{bytes},\"burst\":{ALLOC_BURST},\
             \"pairs\":{},\"headline\":\"alloc\",\"series\":{}",
            o.copy_pairs,
            series_json(&ALLOC_SERIES, &samples)
        ),
    );
    Ok(())
}

fn alloc_bench(bytes: usize, ordered: bool) -> String {
    let way = if ordered { "ordered" } else { "sync" };
    format!("paired_alloc_{way}_{bytes}")
}

fn allocations(o: &Opts, device: &Device, stream: &Stream, reference: &Reference) {
    for ordered in [true, false] {
        for bytes in ALLOC_SIZES {
            let bench = alloc_bench(bytes, ordered);
            guard(&bench, || {
                alloc_figure(o, device, stream, reference, bytes, ordered)
            });
        }
    }
}

const LAUNCH_BENCHES: [&str; 2] = ["paired_launch_2args", "paired_launch_16args"];
const COPY_BENCHES: [&str; 4] = [
    "paired_copy_to_device_pageable",
    "paired_copy_to_host_pageable",
    "paired_copy_to_device_pinned",
    "paired_copy_to_host_pinned",
];

/// Every paired figure; what fails before a figure starts becomes an error
/// record of each figure it stops.
pub fn run(o: &Opts) -> Res<()> {
    let fail_all = |benches: &[&str], e: &str| {
        for b in benches {
            crate::emit_error(b, e);
        }
    };
    let alloc_benches: Vec<String> = [true, false]
        .iter()
        .flat_map(|&ordered| ALLOC_SIZES.map(|bytes| alloc_bench(bytes, ordered)))
        .collect();
    let all: Vec<&str> = LAUNCH_BENCHES
        .iter()
        .chain(&COPY_BENCHES)
        .copied()
        .chain(alloc_benches.iter().map(String::as_str))
        .collect();
    let reference = match Reference::open() {
        Ok(r) => r,
        Err(e) => {
            fail_all(&all, &e);
            return Ok(());
        }
    };
    let setup = || -> Res<(Device, Stream)> {
        let device = Device::get(0).map_err(err)?;
        let stream = device.create_stream().map_err(err)?;
        Ok((device, stream))
    };
    let (device, stream) = match setup() {
        Ok(v) => v,
        Err(e) => {
            fail_all(&all, &e);
            return Ok(());
        }
    };
    let launch_setup = || -> Res<(Module, u64, Driver)> {
        let module = device
            .compile(EMPTY, &cuabi::CompileOptions::new())
            .map_err(err)?;
        let stream_raw = stream.cu_stream().map_err(err)?;
        Ok((module, stream_raw, Driver::open()?))
    };
    match launch_setup() {
        Ok((module, stream_raw, driver)) => {
            let s = Setup {
                o,
                device: &device,
                module: &module,
                stream: &stream,
                stream_raw,
                reference: &reference,
                driver: &driver,
            };
            if let Err(e) = launches(&s) {
                fail_all(&LAUNCH_BENCHES, &e);
            }
        }
        Err(e) => fail_all(&LAUNCH_BENCHES, &e),
    }
    if let Err(e) = copies(o, &device, &stream, &reference) {
        fail_all(&COPY_BENCHES, &e);
    }
    allocations(o, &device, &stream, &reference);
    Ok(())
}
