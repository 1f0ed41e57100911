//! Kernel launches: a configuration and a builder that packs the arguments.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};

use cuabi_sys as sys;

use crate::error::{check, Result};
use crate::memory::{DeviceBuffer, DeviceRepr};
use crate::module::{Function, Layout};
use crate::stream::Stream;

/// Three dimensions of a grid or a block; made from `u32`, `(u32, u32)` or
/// `(u32, u32, u32)`, missing dimensions being 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Size along x.
    pub x: u32,
    /// Size along y.
    pub y: u32,
    /// Size along z.
    pub z: u32,
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// Grid and block sizes and dynamic shared memory of a launch.
///
/// The library checks it before the driver sees it (no zero dimension, a
/// block within the kernel's and the device's limits, shared memory within
/// the device's limit).
///
/// ```
/// use cuabi::LaunchConfig;
/// let config = LaunchConfig::new(32768, 512);
/// assert_eq!((config.grid.x, config.block.x, config.block.y), (32768, 512, 1));
/// let tiled = LaunchConfig::new((64, 64), (16, 16)).with_shared_mem(4096);
/// assert_eq!(tiled.shared_mem_bytes, 4096);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in a block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads, no dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
        }
    }

    /// The same configuration with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem(mut self, bytes: u32) -> LaunchConfig {
        self.shared_mem_bytes = bytes;
        self
    }

    fn raw(&self) -> sys::cuabi_launch_config {
        sys::cuabi_launch_config {
            grid_x: self.grid.x,
            grid_y: self.grid.y,
            grid_z: self.grid.z,
            block_x: self.block.x,
            block_y: self.block.y,
            block_z: self.block.z,
            shared_mem_bytes: self.shared_mem_bytes,
            ..sys::cuabi_launch_config_init()
        }
    }
}

mod sealed {
    /// Where an argument's bytes are and how many there are.
    pub trait Sealed {
        fn arg_bytes(&self) -> (*const std::ffi::c_void, usize);
    }
}

/// A value [`Launch::arg`] can pass to a kernel parameter.
///
/// * every [`DeviceRepr`] type passes its own bytes: numbers, arrays, your
///   `#[repr(C)]` structs taken by value;
/// * a [`DeviceBuffer<T>`] passes its device address, for a `T*` parameter.
///
/// Sealed: implement [`DeviceRepr`] for your own types instead.
pub trait KernelArg: sealed::Sealed {}

impl<T: DeviceRepr> sealed::Sealed for T {
    fn arg_bytes(&self) -> (*const c_void, usize) {
        ((self as *const T).cast(), size_of::<T>())
    }
}
impl<T: DeviceRepr> KernelArg for T {}

impl<T: DeviceRepr> sealed::Sealed for DeviceBuffer<T> {
    fn arg_bytes(&self) -> (*const c_void, usize) {
        (self.ptr_field().cast(), size_of::<u64>())
    }
}
impl<T: DeviceRepr> KernelArg for DeviceBuffer<T> {}

/// One argument: where its bytes are, and how many.
#[derive(Clone, Copy)]
struct Arg {
    ptr: *const c_void,
    size: usize,
}

/// A kernel launch being put together: made by [`Function::launch`],
/// completed with [`stream`](Launch::stream) and one [`arg`](Launch::arg) per
/// kernel parameter, in order, and started with [`run`](Launch::run).
///
/// ```no_run
/// # fn f(saxpy: &cuabi::Function, stream: &cuabi::Stream,
/// #      x: &cuabi::DeviceBuffer<f32>, y: &cuabi::DeviceBuffer<f32>,
/// #      out: &mut cuabi::DeviceBuffer<f32>) -> cuabi::Result<()> {
/// let (a, n) = (2.0f32, x.len());
/// // SAFETY: the kernel reads and writes `n` elements of each buffer.
/// unsafe {
///     saxpy
///         .launch(cuabi::LaunchConfig::new(32768, 512))
///         .stream(stream)
///         .arg(&a)
///         .arg(x)
///         .arg(y)
///         .arg(out)
///         .arg(&n)
///         .run()?;
/// }
/// # Ok(())
/// # }
/// ```
#[must_use = "a launch does nothing until `run` is called"]
pub struct Launch<'a> {
    function: &'a Function,
    config: LaunchConfig,
    stream: Option<&'a Stream>,
    args: Vec<Arg>,
    // The arguments are borrowed for 'a.
    _borrows: PhantomData<&'a ()>,
}

impl<'a> Launch<'a> {
    pub(crate) fn new(function: &'a Function, config: LaunchConfig) -> Launch<'a> {
        Launch {
            function,
            config,
            stream: None,
            args: Vec::with_capacity(8),
            _borrows: PhantomData,
        }
    }

    /// Queues the kernel on `stream` (default: the device's default stream).
    pub fn stream(mut self, stream: &'a Stream) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Adds the next argument: a [`DeviceRepr`] value (its bytes) or a
    /// [`DeviceBuffer`] (its device address).
    pub fn arg<A: KernelArg>(mut self, arg: &'a A) -> Self {
        let (ptr, size) = arg.arg_bytes();
        self.args.push(Arg { ptr, size });
        self
    }

    /// Queues the kernel.
    ///
    /// The arguments are packed into one block at the kernel's parameter
    /// offsets (read from the driver once per [`Function`]) and passed with
    /// `cuabi_launch_packed`. When their number or an argument's size does not
    /// match the kernel's parameters, the launch goes to `cuabi_launch_sized`
    /// instead, which refuses it with
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) and a
    /// message naming the parameter: a 4-byte `u32` passed for a `size_t`
    /// never runs.
    ///
    /// # Safety
    /// The library checks the count and sizes of the arguments, not their
    /// types or meaning, and cannot see what the kernel does:
    ///
    /// * each argument must be what the kernel's parameter declares (an `f32`
    ///   for a `float`, a buffer of the right element type for a pointer);
    /// * the kernel must access only memory within the buffers it is given;
    /// * those buffers must not be dropped before the kernel has finished
    ///   (synchronize the stream or an event recorded after it).
    pub unsafe fn run(self) -> Result<()> {
        let function = self.function.as_raw();
        let config = self.config.raw();
        let stream = self.stream.map_or(std::ptr::null_mut(), Stream::as_raw);

        if let Some(layout) = self.function.layout()? {
            if fits(layout, &self.args) {
                return with_block(layout.args_size, |block| {
                    pack(layout, &self.args, block);
                    check(sys::cuabi_launch_packed(
                        function,
                        &config,
                        stream,
                        block.cast_const().cast(),
                        layout.args_size,
                    ))
                });
            }
        }
        // The arguments do not fit the layout (the library names the
        // parameter at fault), or the driver cannot report the layout.
        let ptrs: Vec<*mut c_void> = self.args.iter().map(|a| a.ptr.cast_mut()).collect();
        let sizes: Vec<usize> = self.args.iter().map(|a| a.size).collect();
        check(sys::cuabi_launch_sized(
            function,
            &config,
            stream,
            ptrs.as_ptr(),
            sizes.as_ptr(),
            ptrs.len(),
        ))
    }
}

impl fmt::Debug for Launch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launch")
            .field("function", &self.function)
            .field("config", &self.config)
            .field("stream", &self.stream)
            .field(
                "arg_sizes",
                &self.args.iter().map(|a| a.size).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// `true` when there is one argument per parameter, each of its size.
fn fits(layout: &Layout, args: &[Arg]) -> bool {
    args.len() == layout.params.len()
        && layout
            .params
            .iter()
            .zip(args)
            .all(|(p, a)| p.size == a.size && p.offset + p.size <= layout.args_size)
}

/// Copies each argument to its parameter's offset in `block`.
///
/// # Safety
/// `fits(layout, args)`; each `args[i].ptr` points to `args[i].size` readable
/// bytes; `block` has `layout.args_size` writable bytes.
unsafe fn pack(layout: &Layout, args: &[Arg], block: *mut u8) {
    for (param, arg) in layout.params.iter().zip(args) {
        std::ptr::copy_nonoverlapping(arg.ptr.cast::<u8>(), block.add(param.offset), arg.size);
    }
}

/// Runs `f` with a zeroed, 8-byte aligned block of at least `size` bytes: on
/// the stack for the usual few parameters, on the heap beyond that.
fn with_block<R>(size: usize, f: impl FnOnce(*mut u8) -> R) -> R {
    const WORDS: usize = 32;
    let words = size.div_ceil(8);
    if words <= WORDS {
        let mut block = [MaybeUninit::<u64>::zeroed(); WORDS];
        f(block.as_mut_ptr().cast())
    } else {
        let mut block = vec![MaybeUninit::<u64>::zeroed(); words];
        f(block.as_mut_ptr().cast())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::ParamInfo;

    /// SAXPY's parameters: float a, float *x, float *y, float *out, size_t n.
    fn saxpy_layout() -> Layout {
        let p = |offset, size| ParamInfo { offset, size };
        Layout {
            params: vec![p(0, 4), p(8, 8), p(16, 8), p(24, 8), p(32, 8)],
            args_size: 40,
        }
    }

    fn arg<T: DeviceRepr>(value: &T) -> Arg {
        let (ptr, size) = sealed::Sealed::arg_bytes(value);
        Arg { ptr, size }
    }

    #[test]
    fn arguments_land_at_their_offsets() {
        let layout = saxpy_layout();
        let (a, x, y, out, n) = (2.0f32, 0x1000u64, 0x2000u64, 0x3000u64, 1usize << 24);
        let args = [arg(&a), arg(&x), arg(&y), arg(&out), arg(&n)];
        assert!(fits(&layout, &args));
        let mut block = vec![0xAAu8; 40];
        unsafe { pack(&layout, &args, block.as_mut_ptr()) };
        assert_eq!(&block[0..4], &2.0f32.to_ne_bytes());
        assert_eq!(&block[4..8], &[0xAA; 4], "padding is left alone");
        assert_eq!(&block[8..16], &0x1000u64.to_ne_bytes());
        assert_eq!(&block[16..24], &0x2000u64.to_ne_bytes());
        assert_eq!(&block[24..32], &0x3000u64.to_ne_bytes());
        assert_eq!(&block[32..40], &(1u64 << 24).to_ne_bytes());
    }

    #[test]
    fn a_four_byte_n_for_size_t_does_not_fit() {
        let layout = saxpy_layout();
        let (a, p, n) = (2.0f32, 0u64, 16u32);
        assert!(!fits(
            &layout,
            &[arg(&a), arg(&p), arg(&p), arg(&p), arg(&n)]
        ));
    }

    #[test]
    fn a_wrong_argument_count_does_not_fit() {
        let layout = saxpy_layout();
        let (a, p, n) = (2.0f32, 0u64, 16usize);
        assert!(!fits(&layout, &[arg(&a), arg(&p), arg(&p), arg(&p)]));
        assert!(!fits(
            &layout,
            &[arg(&a), arg(&p), arg(&p), arg(&p), arg(&n), arg(&n)]
        ));
    }

    #[test]
    fn structs_and_arrays_pass_their_bytes() {
        #[derive(Clone, Copy)]
        #[repr(C)]
        struct Params {
            scale: f32,
            count: i32,
            offset: f64,
        }
        unsafe impl DeviceRepr for Params {}
        let value = Params {
            scale: 1.5,
            count: -3,
            offset: 0.25,
        };
        let a = arg(&value);
        assert_eq!(a.size, 16);
        assert_eq!(a.ptr, (&value as *const Params).cast());
        assert_eq!(arg(&[1u16, 2, 3]).size, 6);
    }

    #[test]
    fn blocks_are_zeroed_and_aligned() {
        for size in [0, 1, 40, 256, 257, 4096] {
            with_block(size, |block| {
                assert_eq!(block as usize % 8, 0);
                let bytes = unsafe { std::slice::from_raw_parts(block, size) };
                assert!(bytes.iter().all(|&b| b == 0), "size {size}");
            });
        }
    }

    #[test]
    fn configs_convert_to_the_c_struct() {
        let raw = LaunchConfig::new((4, 5, 6), (7, 8))
            .with_shared_mem(100)
            .raw();
        assert_eq!(raw.struct_size, size_of::<sys::cuabi_launch_config>());
        assert_eq!((raw.grid_x, raw.grid_y, raw.grid_z), (4, 5, 6));
        assert_eq!((raw.block_x, raw.block_y, raw.block_z), (7, 8, 1));
        assert_eq!(raw.shared_mem_bytes, 100);
        let default = sys::cuabi_launch_config_init();
        assert_eq!(
            (default.grid_x, default.block_z, default.shared_mem_bytes),
            (1, 1, 0)
        );
    }
}
