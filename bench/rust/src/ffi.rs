//! The program's own foreign calls, beside the `cuabi` crate: the driver's
//! `cuLaunchKernel` (and what the instruction counts need of the stand-in)
//! from "libcuda.so.1", and the paired figures' reference library
//! (`bench/c/reference.c`) from `$CUABI_BENCH_REFERENCE`, both opened with
//! `dlopen` at run time. Nothing links libcuda, so the other modes run on a
//! machine without a driver.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

// glibc's dynamic loader (in libc itself since 2.34; std links libc).
extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}
const RTLD_NOW: c_int = 2;

/// `CUresult cuLaunchKernel(CUfunction f, unsigned gridDimX, gridDimY,
/// gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, CUstream
/// hStream, void** kernelParams, void** extra)`.
pub type CuLaunchKernel = unsafe extern "C" fn(
    f: *mut c_void,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared_bytes: u32,
    stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> c_int;
/// `CUresult cuModuleLoadData(CUmodule*, const void*)`.
pub type CuModuleLoadData = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int;
/// `CUresult cuModuleGetFunction(CUfunction*, CUmodule, const char*)`.
pub type CuModuleGetFunction =
    unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int;

fn last_dl_error() -> String {
    // SAFETY: dlerror answers NULL or a NUL-terminated string.
    let e = unsafe { dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// A shared library opened with `dlopen` (never closed: its functions are
/// used until the process ends).
pub struct Library {
    handle: *mut c_void,
    name: String,
}

impl Library {
    pub fn open(name: &str) -> Result<Library, String> {
        let c = CString::new(name).map_err(|_| format!("{name:?}: a NUL byte"))?;
        // SAFETY: a NUL-terminated name.
        let handle = unsafe { dlopen(c.as_ptr(), RTLD_NOW) };
        if handle.is_null() {
            return Err(format!("dlopen {name}: {}", last_dl_error()));
        }
        Ok(Library {
            handle,
            name: name.to_string(),
        })
    }

    /// The address of `symbol`.
    pub fn symbol(&self, symbol: &str) -> Result<*mut c_void, String> {
        let c = CString::new(symbol).map_err(|_| format!("{symbol:?}: a NUL byte"))?;
        // SAFETY: an open handle and a NUL-terminated name.
        let p = unsafe { dlsym(self.handle, c.as_ptr()) };
        if p.is_null() {
            Err(format!("{}: no symbol {symbol}", self.name))
        } else {
            Ok(p)
        }
    }
}

/// Casts a symbol's address to the function pointer type `F`.
///
/// # Safety
/// `F` is an `extern "C" fn` type matching the symbol's C declaration.
unsafe fn function<F: Copy>(lib: &Library, symbol: &str) -> Result<F, String> {
    let p = lib.symbol(symbol)?;
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    Ok(std::mem::transmute_copy::<*mut c_void, F>(&p))
}

/// The driver's entry points the raw series calls, from "libcuda.so.1".
pub struct Driver {
    pub launch_kernel: CuLaunchKernel,
    pub lib: Library,
}

impl Driver {
    pub fn open() -> Result<Driver, String> {
        let lib = Library::open("libcuda.so.1")?;
        // SAFETY: cuda.h's declaration (the same since CUDA 4.0).
        let launch_kernel = unsafe { function::<CuLaunchKernel>(&lib, "cuLaunchKernel")? };
        Ok(Driver { launch_kernel, lib })
    }

    /// A `CUfunction` of the stand-in driver, which takes any image and
    /// knows its kernels by name (the instruction counts: no NVRTC).
    pub fn stand_in_function(&self, name: &str) -> Result<*mut c_void, String> {
        // SAFETY: cuda.h's declarations.
        let (load, get) = unsafe {
            (
                function::<CuModuleLoadData>(&self.lib, "cuModuleLoadData")?,
                function::<CuModuleGetFunction>(&self.lib, "cuModuleGetFunction")?,
            )
        };
        let image = b".version 8.0\n.target sm_90\n.address_size 64\n\0";
        let (mut module, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
        let name_c = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: out-parameters and a NUL-terminated image and name.
        let r = unsafe { load(&mut module, image.as_ptr().cast()) };
        if r != 0 {
            return Err(format!("cuModuleLoadData: {r}"));
        }
        let r = unsafe { get(&mut f, module, name_c.as_ptr()) };
        if r != 0 {
            return Err(format!("cuModuleGetFunction({name}): {r}"));
        }
        Ok(f)
    }
}

type LoadKernel =
    unsafe extern "C" fn(u64, *const c_char, *const c_char, *const c_char, *mut u64) -> c_int;
type LaunchBurst = unsafe extern "C" fn(u64, u64, *mut *mut c_void, u32) -> i64;
type CopyToDevice = unsafe extern "C" fn(u64, *const c_void, usize) -> i64;
type CopyToHost = unsafe extern "C" fn(*mut c_void, u64, usize) -> i64;
type AllocBurst = unsafe extern "C" fn(u64, usize, c_int, u32) -> i64;
type StreamSync = unsafe extern "C" fn(u64) -> c_int;
type ErrorText = unsafe extern "C" fn() -> *const c_char;

/// `libcuabi_bench_reference.so` (bench/README.md, "Paired figures").
pub struct Reference {
    load_kernel: LoadKernel,
    launch_burst: LaunchBurst,
    copy_to_device: CopyToDevice,
    copy_to_host: CopyToHost,
    alloc_burst: AllocBurst,
    #[allow(dead_code)]
    stream_sync: StreamSync,
    error: ErrorText,
    _lib: Library,
}

impl Reference {
    /// The library named by `$CUABI_BENCH_REFERENCE`.
    pub fn open() -> Result<Reference, String> {
        let path = std::env::var("CUABI_BENCH_REFERENCE")
            .ok()
            .filter(|p| !p.is_empty())
            .ok_or("CUABI_BENCH_REFERENCE is not set (the reference library's path)")?;
        let lib = Library::open(&path)?;
        // SAFETY: reference.c's declarations.
        unsafe {
            Ok(Reference {
                load_kernel: function(&lib, "benchref_load_kernel")?,
                launch_burst: function(&lib, "benchref_launch_burst")?,
                copy_to_device: function(&lib, "benchref_copy_to_device")?,
                copy_to_host: function(&lib, "benchref_copy_to_host")?,
                alloc_burst: function(&lib, "benchref_alloc_burst")?,
                stream_sync: function(&lib, "benchref_stream_sync")?,
                error: function(&lib, "benchref_error")?,
                _lib: lib,
            })
        }
    }

    fn failure(&self, call: &str) -> String {
        // SAFETY: a NUL-terminated thread-local buffer.
        let text = unsafe { CStr::from_ptr((self.error)()) };
        format!("{call}: {}", text.to_string_lossy())
    }

    /// The raw `CUfunction` of `name`, compiled from `source` for `arch` and
    /// loaded into `context`.
    pub fn load_kernel(
        &self,
        context: u64,
        source: &str,
        name: &str,
        arch: &str,
    ) -> Result<u64, String> {
        let c = |s: &str| CString::new(s).map_err(|e| e.to_string());
        let (source, name_c, arch) = (c(source)?, c(name)?, c(arch)?);
        let mut f = 0u64;
        // SAFETY: NUL-terminated strings and an out-parameter.
        let r = unsafe {
            (self.load_kernel)(
                context,
                source.as_ptr(),
                name_c.as_ptr(),
                arch.as_ptr(),
                &mut f,
            )
        };
        if r != 0 {
            return Err(self.failure(&format!("benchref_load_kernel({name})")));
        }
        Ok(f)
    }

    /// `count` raw launches timed in C: nanoseconds.
    ///
    /// # Safety
    /// `params` holds one valid pointer per parameter of `function`.
    pub unsafe fn launch_burst(
        &self,
        function: u64,
        stream: u64,
        params: *mut *mut c_void,
        count: u32,
    ) -> Result<i64, String> {
        let ns = (self.launch_burst)(function, stream, params, count);
        if ns < 0 {
            return Err(self.failure("benchref_launch_burst"));
        }
        Ok(ns)
    }

    /// One synchronous host-to-device copy: nanoseconds.
    pub fn copy_to_device(&self, dst: u64, src: &[u8]) -> Result<i64, String> {
        // SAFETY: `src` is readable for its length; `dst` is a device
        // buffer of at least that many bytes (the caller's).
        let ns = unsafe { (self.copy_to_device)(dst, src.as_ptr().cast(), src.len()) };
        if ns < 0 {
            return Err(self.failure("benchref_copy_to_device"));
        }
        Ok(ns)
    }

    /// One synchronous device-to-host copy: nanoseconds.
    pub fn copy_to_host(&self, dst: &mut [u8], src: u64) -> Result<i64, String> {
        // SAFETY: as for copy_to_device.
        let ns = unsafe { (self.copy_to_host)(dst.as_mut_ptr().cast(), src, dst.len()) };
        if ns < 0 {
            return Err(self.failure("benchref_copy_to_host"));
        }
        Ok(ns)
    }

    /// `count` raw allocations of `bytes`, each freed at once, timed in C:
    /// nanoseconds. `ordered`: cuMemAllocAsync + cuMemFreeAsync on `stream`;
    /// else cuMemAlloc + cuMemFree.
    pub fn alloc_burst(
        &self,
        stream: u64,
        bytes: usize,
        ordered: bool,
        count: u32,
    ) -> Result<i64, String> {
        // SAFETY: plain values; the driver answers errors as statuses.
        let ns = unsafe { (self.alloc_burst)(stream, bytes, c_int::from(ordered), count) };
        if ns < 0 {
            return Err(self.failure("benchref_alloc_burst"));
        }
        Ok(ns)
    }
}
