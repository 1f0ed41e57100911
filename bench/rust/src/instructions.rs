//! `cuabi-bench instructions --path P --count N`: set-up against the
//! instruction-count stand-in driver, then exactly N calls of path P, for
//! bench/instructions/bindings.py (callgrind; it takes the difference of two
//! counts, so set-up and exit drop out). Prints nothing per call.
//!
//! Paths (`/2`: `empty2(float, float*)`, `/16`: `empty16`):
//!
//! * `raw/2`, `raw/16`: this program's own `cuLaunchKernel` (ffi.rs) on the
//!   stand-in's `CUfunction` and cuabi's raw stream;
//! * `plan/2`, `plan/16`: `LaunchPlan::launch_with(args)` (the headline);
//! * `builder/2`, `builder/16`: `f.launch(cfg).stream(&s).args(..).run()`;
//! * `plan_launch/2`, `plan_launch/16`: `LaunchPlan::launch()`, arguments
//!   written once;
//! * `query/success`, `query/not_ready`: `Stream::query()`, the stand-in
//!   answering `CUDA_SUCCESS` / `CUDA_ERROR_NOT_READY`.
//!
//! The stand-in takes any module image and knows its kernels by name, so no
//! NVRTC compile runs under callgrind (it would take most of the time).

use std::ffi::{c_int, c_void};
use std::hint::black_box;

use cuabi::{Device, DeviceBuffer, Function, KernelArgs, LaunchConfig, Stream};

use crate::ffi::Driver;
use crate::{err, Res};

/// Calls answering wrongly among 16 warm-up calls of `call` (lazy binding
/// and first-use state out of the way) and then `count` calls.
#[inline(never)]
fn calls(count: usize, mut call: impl FnMut() -> bool) -> usize {
    let mut bad = 0;
    for _ in 0..16 {
        bad += usize::from(!call());
    }
    for _ in 0..count {
        bad += usize::from(!call());
    }
    bad
}

/// One kernel both ways: cuabi's `Function` and the stand-in's raw
/// `CUfunction`, with the raw stream and launch function.
struct Kernel<'a> {
    function: Function,
    raw: *mut c_void,
    raw_stream: *mut c_void,
    driver: &'a Driver,
}

fn launch_path<T: KernelArgs + Copy>(
    path: &str,
    count: usize,
    k: &Kernel,
    stream: &Stream,
    args: T,
    params: &mut [*mut c_void],
) -> Res<usize> {
    let one = LaunchConfig::new(1u32, 1u32);
    let f = &k.function;
    let what = path.split('/').next().unwrap_or("");
    Ok(match what {
        "raw" => {
            let (launch, raw_stream) = (k.driver.launch_kernel, k.raw_stream);
            let (fptr, params) = (black_box(k.raw), black_box(params.as_mut_ptr()));
            calls(count, || unsafe {
                launch(
                    fptr,
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
                ) == 0
            })
        }
        "plan" => {
            let mut plan = f.plan(one, Some(stream)).map_err(err)?;
            let plan = black_box(&mut plan);
            calls(count, || unsafe { plan.launch_with(args) }.is_ok())
        }
        "builder" => calls(count, || {
            unsafe { f.launch(one).stream(stream).args(args).run() }.is_ok()
        }),
        "plan_launch" => {
            let mut plan = f.plan(one, Some(stream)).map_err(err)?;
            plan.set_args(args).map_err(err)?;
            let plan = black_box(&mut plan);
            calls(count, || unsafe { plan.launch() }.is_ok())
        }
        _ => return Err(format!("unknown path {path}")),
    })
}

pub fn run(path: &str, count: usize) -> Res<()> {
    let driver = Driver::open()?;
    let device = Device::get(0).map_err(err)?;
    let stream = device.create_stream().map_err(err)?;
    let raw_stream = stream.cu_stream().map_err(err)? as usize as *mut c_void;
    let bad = if let Some(answer) = path.strip_prefix("query/") {
        let not_ready = match answer {
            "success" => false,
            "not_ready" => true,
            _ => return Err(format!("unknown path {path}")),
        };
        let set = driver
            .lib
            .symbol("instructions_fake_set_stream_query")
            .map_err(|e| format!("{e}: libcuda.so.1 is not the instruction-count stand-in"))?;
        // SAFETY: fake_driver.c's `void instructions_fake_set_stream_query(int)`.
        let set: unsafe extern "C" fn(c_int) = unsafe { std::mem::transmute(set) };
        unsafe { set(c_int::from(not_ready)) };
        let stream = black_box(&stream);
        let bad = calls(
            count,
            || matches!(stream.query(), Ok(done) if done != not_ready),
        );
        unsafe { set(0) };
        bad
    } else if path == "alloc/ordered" {
        // 256 bytes from the default pool in stream order, freed at once on
        // the same stream.
        let stream = black_box(&stream);
        calls(count, || {
            device
                .alloc_async::<u8>(256, None, Some(stream))
                .is_ok_and(|b| b.free_async(stream).is_ok())
        })
    } else {
        // The stand-in takes any image (no NVRTC under callgrind).
        let image = b".version 8.0\n.target sm_90\n.address_size 64\n\0";
        let module = device.load_module(image).map_err(err)?;
        let buf: DeviceBuffer<f32> = device.alloc(64).map_err(err)?;
        let mut p = buf.device_ptr();
        match path.rsplit('/').next() {
            Some("2") => {
                let k = Kernel {
                    function: module.function("empty2").map_err(err)?,
                    raw: driver.stand_in_function("empty2")?,
                    raw_stream,
                    driver: &driver,
                };
                let a = 2.0f32;
                let mut a_raw = a;
                let mut params: [*mut c_void; 2] = [(&raw mut a_raw).cast(), (&raw mut p).cast()];
                let args = black_box((&a, &buf));
                launch_path(path, count, &k, &stream, args, &mut params)?
            }
            Some("16") => {
                let k = Kernel {
                    function: module.function("empty16").map_err(err)?,
                    raw: driver.stand_in_function("empty16")?,
                    raw_stream,
                    driver: &driver,
                };
                let (f, i, n) = (
                    [1.0f32, 2.0, 3.0, 4.0],
                    [5i32, 6, 7, 8],
                    [9usize, 10, 11, 12],
                );
                let (mut fr, mut ir, mut nr) = (f, i, n);
                let mut params: Vec<*mut c_void> = Vec::with_capacity(16);
                for q in 0..4 {
                    params.push((&raw mut fr[q]).cast());
                    params.push((&raw mut p).cast());
                    params.push((&raw mut ir[q]).cast());
                    params.push((&raw mut nr[q]).cast());
                }
                let args = black_box((
                    &f[0], &buf, &i[0], &n[0], &f[1], &buf, &i[1], &n[1], &f[2], &buf, &i[2],
                    &n[2], &f[3], &buf, &i[3], &n[3],
                ));
                launch_path(path, count, &k, &stream, args, &mut params)?
            }
            _ => return Err(format!("unknown path {path}")),
        }
    };
    stream.synchronize().map_err(err)?;
    if bad > 0 {
        return Err(format!("{path}: {bad} of {count} calls answered wrongly"));
    }
    Ok(())
}
