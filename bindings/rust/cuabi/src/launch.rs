//! Kernel launches: a configuration and a builder that packs the arguments.

use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;

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

    #[inline(always)]
    pub(crate) fn raw(&self) -> sys::cuabi_launch_config {
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

pub(crate) mod sealed {
    use std::ffi::c_void;

    /// Where an argument's bytes are and how many there are.
    pub trait Sealed {
        fn arg_bytes(&self) -> (*const c_void, usize);
    }

    /// A tuple of arguments, one per kernel parameter.
    pub trait SealedArgs {
        /// How many arguments the tuple holds.
        const COUNT: usize;
        /// Calls `f(index, ptr, size)` for each argument in order, stopping at
        /// the first error.
        fn each<E>(
            &self,
            f: impl FnMut(usize, *const c_void, usize) -> Result<(), E>,
        ) -> Result<(), E>;
    }
}

/// A value [`Launch::arg`] and [`LaunchPlan::set`](crate::LaunchPlan::set)
/// can pass to a kernel parameter.
///
/// * every [`DeviceRepr`] type passes its own bytes: numbers, arrays, your
///   `#[repr(C)]` structs taken by value;
/// * a [`DeviceBuffer<T>`] passes its device address, for a `T*` parameter.
///
/// Sealed: implement [`DeviceRepr`] for your own types instead.
pub trait KernelArg: sealed::Sealed {}

impl<T: DeviceRepr> sealed::Sealed for T {
    #[inline(always)]
    fn arg_bytes(&self) -> (*const c_void, usize) {
        ((self as *const T).cast(), size_of::<T>())
    }
}
impl<T: DeviceRepr> KernelArg for T {}

impl<T: DeviceRepr> sealed::Sealed for DeviceBuffer<T> {
    #[inline(always)]
    fn arg_bytes(&self) -> (*const c_void, usize) {
        (self.ptr_field().cast(), size_of::<u64>())
    }
}
impl<T: DeviceRepr> KernelArg for DeviceBuffer<T> {}

/// Every argument of a launch at once: a tuple of references to
/// [`KernelArg`]s, one per kernel parameter in order, such as
/// `(&a, &x, &y, &out, &n)`; `()` for a kernel without parameters. Tuples of
/// up to 24 arguments qualify.
///
/// Taken by [`Launch::args`], [`LaunchPlan::set_args`](crate::LaunchPlan::set_args)
/// and [`LaunchPlan::launch_with`](crate::LaunchPlan::launch_with).
///
/// Sealed: it is implemented for those tuples only.
pub trait KernelArgs: sealed::SealedArgs {}

macro_rules! kernel_args {
    ($count:expr; $($index:tt $A:ident),*) => {
        impl<$($A: KernelArg),*> sealed::SealedArgs for ($(&$A,)*) {
            const COUNT: usize = $count;
            #[inline(always)]
            #[allow(unused_mut, unused_variables)]
            fn each<E>(
                &self,
                mut f: impl FnMut(usize, *const c_void, usize) -> Result<(), E>,
            ) -> Result<(), E> {
                $({
                    let (ptr, size) = sealed::Sealed::arg_bytes(self.$index);
                    f($index, ptr, size)?;
                })*
                Ok(())
            }
        }
        impl<$($A: KernelArg),*> KernelArgs for ($(&$A,)*) {}
    };
}

kernel_args!(0;);
kernel_args!(1; 0 A0);
kernel_args!(2; 0 A0, 1 A1);
kernel_args!(3; 0 A0, 1 A1, 2 A2);
kernel_args!(4; 0 A0, 1 A1, 2 A2, 3 A3);
kernel_args!(5; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4);
kernel_args!(6; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5);
kernel_args!(7; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6);
kernel_args!(8; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7);
kernel_args!(9; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8);
kernel_args!(10; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9);
kernel_args!(11; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10);
kernel_args!(12; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11);
kernel_args!(13; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12);
kernel_args!(14; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13);
kernel_args!(15; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14);
kernel_args!(16; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15);
kernel_args!(17; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16);
kernel_args!(18; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17);
kernel_args!(19; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18);
kernel_args!(20; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18, 19 A19);
kernel_args!(21; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18, 19 A19, 20 A20);
kernel_args!(22; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18, 19 A19, 20 A20, 21 A21);
kernel_args!(23; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18, 19 A19, 20 A20, 21 A21, 22 A22);
kernel_args!(24; 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18, 19 A19, 20 A20, 21 A21, 22 A22,
    23 A23);

/// One argument: where its bytes are, and how many.
#[derive(Clone, Copy)]
struct Arg {
    ptr: *const c_void,
    size: usize,
}

/// The arguments of a launch, in a list each thread reuses: a launch
/// allocates nothing once its thread has launched before.
///
/// The builder moves by value from call to call; a list of a few words moves
/// in registers, where arguments kept in the builder itself would be copied
/// at every [`Launch::arg`].
struct ArgList {
    args: Vec<Arg>,
}

/// Arguments a new thread's list has room for before it grows.
const FIRST_CAPACITY: usize = 16;

/// The largest list a thread keeps for its next launch.
const MAX_KEPT: usize = 1024;

thread_local! {
    /// The calling thread's spare list; empty while a launch holds it.
    static SPARE: Cell<Vec<Arg>> = const { Cell::new(Vec::new()) };
}

impl ArgList {
    /// The thread's spare list (a new one while another launch of this
    /// thread holds it).
    #[inline(always)]
    fn new() -> ArgList {
        let mut args = SPARE.try_with(Cell::take).unwrap_or_default();
        if args.capacity() == 0 {
            args.reserve_exact(FIRST_CAPACITY);
        }
        ArgList { args }
    }

    #[inline(always)]
    fn push(&mut self, arg: Arg) {
        self.args.push(arg);
    }

    #[inline(always)]
    fn as_slice(&self) -> &[Arg] {
        &self.args
    }
}

/// Keeps the larger of the thread's spare list and `other`.
#[cold]
fn keep_larger(spare: &Cell<Vec<Arg>>, other: Vec<Arg>) {
    let current = spare.take();
    spare.set(if other.capacity() > current.capacity() {
        other
    } else {
        current
    });
}

impl Drop for ArgList {
    /// Gives the list back to the thread, which keeps the larger of its
    /// spare and this one.
    #[inline(always)]
    fn drop(&mut self) {
        let mut args = std::mem::take(&mut self.args);
        if args.capacity() > MAX_KEPT {
            return;
        }
        args.clear();
        let _ = SPARE.try_with(|spare| {
            // The spare is empty unless another launch gave one back meanwhile.
            let other = spare.replace(args);
            if other.capacity() != 0 {
                keep_larger(spare, other);
            }
        });
    }
}

/// A kernel launch being put together: made by [`Function::launch`],
/// completed with [`stream`](Launch::stream) and one [`arg`](Launch::arg) per
/// kernel parameter, in order (or all of them at once with
/// [`args`](Launch::args)), and started with [`run`](Launch::run).
///
/// The arguments are packed into a block on the stack; the list of them is
/// one each thread reuses, so a launch allocates nothing. To launch the same
/// kernel many times, a [`LaunchPlan`](crate::LaunchPlan) does less work per
/// launch.
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
///     // The same launch, its arguments given as one tuple.
///     saxpy
///         .launch(cuabi::LaunchConfig::new(32768, 512))
///         .stream(stream)
///         .args((&a, x, y, &*out, &n))
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
    args: ArgList,
    // The arguments are borrowed for 'a.
    _borrows: PhantomData<&'a ()>,
}

impl<'a> Launch<'a> {
    #[inline(always)]
    pub(crate) fn new(function: &'a Function, config: LaunchConfig) -> Launch<'a> {
        Launch {
            function,
            config,
            stream: None,
            args: ArgList::new(),
            _borrows: PhantomData,
        }
    }

    /// Queues the kernel on `stream` (default: the device's default stream).
    #[inline(always)]
    pub fn stream(mut self, stream: &'a Stream) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Adds the next argument: a [`DeviceRepr`] value (its bytes) or a
    /// [`DeviceBuffer`] (its device address).
    #[inline(always)]
    pub fn arg<A: KernelArg>(mut self, arg: &'a A) -> Self {
        let (ptr, size) = arg.arg_bytes();
        self.args.push(Arg { ptr, size });
        self
    }

    /// Adds every argument in a tuple, in order: `.args((&a, &x, &n))` is
    /// `.arg(&a).arg(&x).arg(&n)`.
    #[inline(always)]
    pub fn args<T: KernelArgs + 'a>(mut self, args: T) -> Self {
        let pushed: Result<(), std::convert::Infallible> = args.each(|_, ptr, size| {
            self.args.push(Arg { ptr, size });
            Ok(())
        });
        let Ok(()) = pushed;
        self
    }

    /// Queues the kernel.
    ///
    /// The arguments are packed into one block at the kernel's parameter
    /// offsets (read from the driver once per [`Function`]) and passed with
    /// `cuabi_function_launch_packed`. When their number or an argument's size does not
    /// match the kernel's parameters, the launch goes to `cuabi_function_launch_sized`
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
    #[inline]
    pub unsafe fn run(self) -> Result<()> {
        let function = self.function.as_raw();
        let config = self.config.raw();
        let stream = self.stream.map_or(std::ptr::null_mut(), Stream::as_raw);
        let args = self.args.as_slice();

        if let Some(layout) = self.function.layout()? {
            if layout.args_size <= STACK_BLOCK {
                let mut block = StackBlock([0; STACK_BLOCK]);
                if pack(layout, args, block.0.as_mut_ptr()) {
                    return check(sys::cuabi_function_launch_packed(
                        function,
                        &config,
                        stream,
                        block.0.as_ptr().cast(),
                        layout.args_size,
                    ));
                }
            } else if let Some(result) = run_heap_block(function, &config, stream, layout, args) {
                return result;
            }
        }
        run_sized(function, &config, stream, args)
    }
}

/// Bytes of argument block a launch keeps on the stack: enough for the
/// parameters of most kernels.
const STACK_BLOCK: usize = 256;

/// A zeroed argument block on the stack; zero, so padding is too.
#[repr(C, align(16))]
struct StackBlock([u8; STACK_BLOCK]);

/// A launch with more than [`STACK_BLOCK`] bytes of arguments: packed into a
/// block on the heap, or `None` when the arguments do not fit the layout.
///
/// # Safety
/// As [`Launch::run`]; each `args[i].ptr` points to `args[i].size` bytes.
#[cold]
unsafe fn run_heap_block(
    function: sys::cuabi_function,
    config: &sys::cuabi_launch_config,
    stream: sys::cuabi_stream,
    layout: &Layout,
    args: &[Arg],
) -> Option<Result<()>> {
    let mut block = vec![0u128; layout.args_size.div_ceil(16)];
    pack(layout, args, block.as_mut_ptr().cast()).then(|| {
        check(sys::cuabi_function_launch_packed(
            function,
            config,
            stream,
            block.as_ptr().cast(),
            layout.args_size,
        ))
    })
}

/// A launch whose arguments do not fit the layout (the library then names the
/// parameter at fault), or whose kernel's layout the driver cannot report.
///
/// # Safety
/// As [`Launch::run`]; each `args[i].ptr` points to `args[i].size` bytes.
#[cold]
unsafe fn run_sized(
    function: sys::cuabi_function,
    config: &sys::cuabi_launch_config,
    stream: sys::cuabi_stream,
    args: &[Arg],
) -> Result<()> {
    let ptrs: Vec<*mut c_void> = args.iter().map(|a| a.ptr.cast_mut()).collect();
    let sizes: Vec<usize> = args.iter().map(|a| a.size).collect();
    check(sys::cuabi_function_launch_sized(
        function,
        config,
        stream,
        ptrs.as_ptr(),
        sizes.as_ptr(),
        ptrs.len(),
    ))
}

impl fmt::Debug for Launch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launch")
            .field("function", &self.function)
            .field("config", &self.config)
            .field("stream", &self.stream)
            .field(
                "arg_sizes",
                &self
                    .args
                    .as_slice()
                    .iter()
                    .map(|a| a.size)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Copies each argument to its parameter's offset in `block` and returns
/// `true` when there is one argument per parameter, each of its size; else
/// returns `false`, the block partly written.
///
/// # Safety
/// Each `args[i].ptr` points to `args[i].size` readable bytes; `block` has
/// `layout.args_size` writable bytes (and the [`Layout`] keeps every
/// parameter within them).
#[inline(always)]
unsafe fn pack(layout: &Layout, args: &[Arg], block: *mut u8) -> bool {
    if args.len() != layout.params.len() {
        return false;
    }
    for (param, arg) in layout.params.iter().zip(args) {
        if param.size != arg.size {
            return false;
        }
        copy_arg(arg.ptr.cast(), block.add(param.offset), arg.size);
    }
    true
}

/// Copies `size` bytes; the usual argument sizes without a call to `memcpy`.
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`].
#[inline(always)]
unsafe fn copy_arg(src: *const u8, dst: *mut u8, size: usize) {
    unsafe fn copy<const N: usize>(src: *const u8, dst: *mut u8) {
        dst.cast::<[u8; N]>()
            .write_unaligned(src.cast::<[u8; N]>().read_unaligned());
    }
    match size {
        8 => copy::<8>(src, dst),
        4 => copy::<4>(src, dst),
        16 => copy::<16>(src, dst),
        2 => copy::<2>(src, dst),
        1 => copy::<1>(src, dst),
        _ => std::ptr::copy_nonoverlapping(src, dst, size),
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

    /// Packs `args` into a 40-byte block of 0xAA; `None` when they do not fit.
    fn packed(layout: &Layout, args: &[Arg]) -> Option<Vec<u8>> {
        let mut block = vec![0xAAu8; 40];
        unsafe { pack(layout, args, block.as_mut_ptr()) }.then_some(block)
    }

    #[test]
    fn arguments_land_at_their_offsets() {
        let layout = saxpy_layout();
        let (a, x, y, out, n) = (2.0f32, 0x1000u64, 0x2000u64, 0x3000u64, 1usize << 24);
        let block = packed(&layout, &[arg(&a), arg(&x), arg(&y), arg(&out), arg(&n)])
            .expect("SAXPY's arguments fit");
        assert_eq!(&block[0..4], &2.0f32.to_ne_bytes());
        assert_eq!(&block[4..8], &[0xAA; 4], "padding is left alone");
        assert_eq!(&block[8..16], &0x1000u64.to_ne_bytes());
        assert_eq!(&block[16..24], &0x2000u64.to_ne_bytes());
        assert_eq!(&block[24..32], &0x3000u64.to_ne_bytes());
        assert_eq!(&block[32..40], &(1u64 << 24).to_ne_bytes());
    }

    #[test]
    fn every_size_is_copied_whole() {
        // The sizes copied without memcpy, and the others.
        for size in [1usize, 2, 3, 4, 6, 8, 12, 16, 24, 40] {
            let layout = Layout::new(vec![ParamInfo { offset: 0, size }], 40).unwrap();
            let value: Vec<u8> = (1..=size as u8).collect();
            let arg = Arg {
                ptr: value.as_ptr().cast(),
                size,
            };
            let block = packed(&layout, &[arg]).unwrap();
            assert_eq!(&block[..size], &value[..], "size {size}");
            assert!(block[size..].iter().all(|&b| b == 0xAA), "size {size}");
        }
    }

    #[test]
    fn a_four_byte_n_for_size_t_does_not_fit() {
        let layout = saxpy_layout();
        let (a, p, n) = (2.0f32, 0u64, 16u32);
        assert!(packed(&layout, &[arg(&a), arg(&p), arg(&p), arg(&p), arg(&n)]).is_none());
        let a = 2.0f64;
        assert!(packed(&layout, &[arg(&a), arg(&p), arg(&p), arg(&p), arg(&p)]).is_none());
    }

    #[test]
    fn a_wrong_argument_count_does_not_fit() {
        let layout = saxpy_layout();
        let (a, p, n) = (2.0f32, 0u64, 16usize);
        assert!(packed(&layout, &[arg(&a), arg(&p), arg(&p), arg(&p)]).is_none());
        assert!(packed(
            &layout,
            &[arg(&a), arg(&p), arg(&p), arg(&p), arg(&n), arg(&n)]
        )
        .is_none());
        assert!(packed(&layout, &[]).is_none());
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
    fn argument_lists_keep_order_as_they_grow() {
        let values: Vec<u64> = (0..40).collect();
        let mut list = ArgList::new();
        assert!(list.as_slice().is_empty());
        for (i, v) in values.iter().enumerate() {
            list.push(arg(v));
            let slice = list.as_slice();
            assert_eq!(slice.len(), i + 1);
            assert!(
                slice
                    .iter()
                    .zip(&values)
                    .all(|(a, v)| a.ptr == (v as *const u64).cast() && a.size == 8),
                "after {} arguments",
                i + 1
            );
        }
    }

    #[test]
    fn threads_reuse_their_argument_list() {
        std::thread::spawn(|| {
            let first = ArgList::new();
            let address = first.args.as_ptr();
            assert!(first.args.capacity() >= FIRST_CAPACITY);
            drop(first);
            // The next launch of this thread gets the same list back, empty.
            let second = ArgList::new();
            assert_eq!(second.args.as_ptr(), address);
            assert!(second.as_slice().is_empty());
            // A launch built while another holds the list gets its own.
            let mut nested = ArgList::new();
            assert_ne!(nested.args.as_ptr(), address);
            let value = 1u32;
            for _ in 0..100 {
                nested.push(arg(&value));
            }
            let grown = nested.args.capacity();
            drop(second);
            drop(nested);
            // The thread keeps the larger list, emptied.
            let third = ArgList::new();
            assert_eq!(third.args.capacity(), grown);
            assert!(third.as_slice().is_empty());
            // A huge list is not kept.
            drop(third);
            let mut huge = ArgList::new();
            for _ in 0..=MAX_KEPT {
                huge.push(arg(&value));
            }
            drop(huge);
            assert_eq!(ArgList::new().args.capacity(), FIRST_CAPACITY);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn layouts_with_a_parameter_past_the_block_are_refused() {
        let p = |offset, size| ParamInfo { offset, size };
        assert!(Layout::new(vec![p(0, 4), p(8, 8)], 16).is_some());
        assert!(Layout::new(vec![], 0).is_some());
        assert!(Layout::new(vec![p(0, 4), p(8, 8)], 15).is_none());
        assert!(Layout::new(vec![p(usize::MAX, 2)], 16).is_none());
    }

    #[test]
    fn stack_blocks_are_aligned_for_any_parameter() {
        assert_eq!(std::mem::align_of::<StackBlock>(), 16);
        assert_eq!(size_of::<StackBlock>(), STACK_BLOCK);
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
