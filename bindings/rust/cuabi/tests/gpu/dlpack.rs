//! GPU tests of DLPack: a tensor of the producer library the tests build
//! (tests/dlpack_producer, a C library that knows nothing of cuabi, named by
//! $CUABI_TEST_DLPACK_PRODUCER) taken over, launched on and released, its
//! deleter run exactly once; a buffer exported and taken back at its offset;
//! the refusals named by the core.

use std::ffi::{c_char, c_int, c_void, CString};

use cuabi::{Device, DeviceBuffer, DlpackTensor, ErrorKind, LaunchConfig};

use super::{saxpy_module, skip, Test, TestResult};

pub const TESTS: &[(&str, Test)] = tests![
    dlpack_producer_tensor_taken_over_launched_on_and_released_once,
    dlpack_buffer_exported_and_taken_back,
    dlpack_refusals_are_named_and_leave_the_tensor,
];

extern "C" {
    fn dlopen(path: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

type MakeFn = unsafe extern "C" fn(c_int, i64, f32, u64, *mut *mut c_void, *mut u64) -> c_int;
type CountFn = unsafe extern "C" fn() -> c_int;
type ResetFn = unsafe extern "C" fn();

struct Producer {
    make: MakeFn,
    deleted: CountFn,
    freed: CountFn,
    reset: ResetFn,
}

/// The producer library, or why the test cannot run.
fn producer() -> Result<Producer, String> {
    let path = std::env::var("CUABI_TEST_DLPACK_PRODUCER")
        .map_err(|_| "CUABI_TEST_DLPACK_PRODUCER is not set (a CMake build makes the producer)")?;
    let c = CString::new(path.clone()).map_err(|e| e.to_string())?;
    // SAFETY: dlopen/dlsym of a library of plain C functions of these types.
    unsafe {
        let lib = dlopen(c.as_ptr(), 2 /* RTLD_NOW */);
        if lib.is_null() {
            return Err(format!("cannot open {path}"));
        }
        let sym = |name: &str| {
            let n = CString::new(name).unwrap();
            dlsym(lib, n.as_ptr())
        };
        let (make, deleted, freed, reset) = (
            sym("dlpack_producer_make"),
            sym("dlpack_producer_deleted"),
            sym("dlpack_producer_freed"),
            sym("dlpack_producer_reset"),
        );
        if make.is_null() || deleted.is_null() || freed.is_null() || reset.is_null() {
            return Err(format!("{path} lacks the producer's functions"));
        }
        Ok(Producer {
            make: std::mem::transmute::<*mut c_void, MakeFn>(make),
            deleted: std::mem::transmute::<*mut c_void, CountFn>(deleted),
            freed: std::mem::transmute::<*mut c_void, CountFn>(freed),
            reset: std::mem::transmute::<*mut c_void, ResetFn>(reset),
        })
    }
}

impl Producer {
    /// n floats start, start + 1, ... as a tensor, and its device address.
    fn tensor(&self, n: i64, start: f32, flags: u64) -> Result<(DlpackTensor, u64), String> {
        let mut raw = std::ptr::null_mut();
        let mut ptr = 0u64;
        // SAFETY: the producer's own function; it answers an owned tensor.
        let r = unsafe { (self.make)(0, n, start, flags, &mut raw, &mut ptr) };
        if r != 0 {
            return Err(format!("the producer failed at step {r}"));
        }
        // SAFETY: a DLPack 1.x managed tensor, ours now.
        Ok((unsafe { DlpackTensor::from_raw(raw.cast()) }, ptr))
    }
    fn deleted(&self) -> i32 {
        unsafe { (self.deleted)() }
    }
    fn freed(&self) -> i32 {
        unsafe { (self.freed)() }
    }
}

fn dlpack_producer_tensor_taken_over_launched_on_and_released_once(device: &Device) -> TestResult {
    let p = match producer() {
        Ok(p) => p,
        Err(why) => return skip(why),
    };
    unsafe { (p.reset)() };
    let n = 4096usize;
    let (tx, px) = p.tensor(n as i64, 0.0, 0)?;
    let (ty, py) = p.tensor(n as i64, 100.0, 0)?;
    let x = DeviceBuffer::<f32>::from_dlpack(tx, false).map_err(|(e, _)| e)?;
    let y = DeviceBuffer::<f32>::from_dlpack(ty, false).map_err(|(e, _)| e)?;
    ensure!(
        x.device_ptr() == px && y.device_ptr() == py,
        "not zero-copy"
    );
    ensure!(x.len() == n, "{} elements, not {n}", x.len());
    let (_module, saxpy) = saxpy_module(device)?;
    let out = device.alloc_zeroed::<f32>(n)?;
    let a = 2.0f32;
    unsafe {
        saxpy
            .launch(LaunchConfig::new((n / 256) as u32, 256))
            .arg(&a)
            .arg(&x)
            .arg(&y)
            .arg(&out)
            .arg(&n)
            .run()?;
    }
    let got = out.to_vec()?;
    for (i, v) in got.iter().enumerate() {
        let want = 2.0 * i as f32 + 100.0 + i as f32;
        ensure!(*v == want, "out[{i}] = {v}, not {want}");
    }
    ensure!(
        p.deleted() == 0,
        "a deleter ran while the buffers hold the tensors"
    );
    drop(x);
    ensure!(
        p.deleted() == 1,
        "{} deleter calls after one buffer went",
        p.deleted()
    );
    drop(y);
    ensure!(
        p.deleted() == 2 && p.freed() == 2,
        "{} deleter calls, {} frees",
        p.deleted(),
        p.freed()
    );
    Ok(())
}

fn dlpack_buffer_exported_and_taken_back(device: &Device) -> TestResult {
    let host: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let buf = device.buffer_from_slice(&host)?;
    let t = buf.to_dlpack(&[4, 8], Some(&[16, 1]), 64, false)?;
    ensure!(
        t.data() == buf.device_ptr(),
        "data is not the buffer's address"
    );
    ensure!(
        t.byte_offset() == 64 && t.shape() == [4, 8],
        "offset or shape"
    );
    ensure!(
        t.strides() == Some(&[16i64, 1][..]),
        "strides {:?}",
        t.strides()
    );
    let base = buf.device_ptr();
    drop(buf); // the tensor holds the memory
    let back = DeviceBuffer::<f32>::from_dlpack(t, false).map_err(|(e, _)| e)?;
    ensure!(back.device_ptr() == base + 64, "taken back elsewhere");
    ensure!(back.len() == 3 * 16 + 8, "{} elements", back.len());
    let got = back.to_vec()?;
    ensure!(got[..] == host[16..16 + 56], "different bytes");
    Ok(())
}

fn dlpack_refusals_are_named_and_leave_the_tensor(device: &Device) -> TestResult {
    let buf = device.alloc_zeroed::<f32>(16)?;
    let err = match buf.to_dlpack(&[17], None, 0, false) {
        Err(e) => e,
        Ok(_) => return Err("a tensor past the buffer was made".into()),
    };
    ensure!(err.kind() == ErrorKind::OutOfRange, "{err}");
    ensure!(err.message().contains("64-byte buffer"), "{err}");
    let p = match producer() {
        Ok(p) => p,
        Err(why) => return skip(why),
    };
    unsafe { (p.reset)() };
    let (t, ptr) = p.tensor(8, 0.0, 1 /* read-only */)?;
    let (err, t) = match DeviceBuffer::<f32>::from_dlpack(t, false) {
        Err((e, Some(t))) => (e, t),
        _ => return Err("a read-only tensor was taken as writable".into()),
    };
    ensure!(
        err.kind() == ErrorKind::InvalidArgument && err.message().contains("read-only"),
        "{err}"
    );
    ensure!(p.deleted() == 0, "a refused tensor was deleted");
    let b = DeviceBuffer::<f32>::from_dlpack(t, true).map_err(|(e, _)| e)?;
    ensure!(b.device_ptr() == ptr, "not zero-copy");
    drop(b);
    ensure!(p.deleted() == 1, "{} deleter calls", p.deleted());
    Ok(())
}
