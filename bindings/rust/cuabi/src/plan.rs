//! Prepared launches: a kernel, its configuration and stream checked once,
//! and an argument block written in place.

use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

use cuabi_sys as sys;

use crate::error::{check, Error, Result};
use crate::handle::{create, Owned};
use crate::launch::{sealed, KernelArg, KernelArgs, LaunchConfig};
use crate::module::{Function, ParamInfo};
use crate::stream::Stream;

/// A prepared launch: the fastest way to launch one kernel many times.
///
/// The library checks the kernel, the [`LaunchConfig`] and the stream once,
/// when the plan is made, and gives the plan an argument block laid out at
/// the kernel's parameter offsets. Arguments are written into that block in
/// place, each checked against the size the library reports for its
/// parameter ([`set`](Self::set), [`set_args`](Self::set_args)); a launch ([`launch`](Self::launch),
/// [`launch_with`](Self::launch_with)) is one call that passes the block as
/// it is. Arguments stay in the block between launches: set only what
/// changes.
///
/// The plan keeps its kernel (and its module) and its stream alive: the
/// [`Function`] and [`Stream`] it was made from may be dropped first. It
/// does not keep the buffers whose addresses it holds alive; see
/// [`launch`](Self::launch).
///
/// `LaunchPlan` is `Send` and `Sync`. Writing the block and launching take
/// `&mut self`, so one thread at a time writes and launches a plan, as the
/// library requires; a shared `&LaunchPlan` can only read it. Plans are
/// cheap: make one per thread to launch from several threads at once.
///
/// ```no_run
/// # fn f(saxpy: &cuabi::Function, stream: &cuabi::Stream,
/// #      x: &cuabi::DeviceBuffer<f32>, y: &cuabi::DeviceBuffer<f32>,
/// #      out: &cuabi::DeviceBuffer<f32>) -> cuabi::Result<()> {
/// use cuabi::{ErrorKind, LaunchConfig};
///
/// let mut plan = saxpy.plan(LaunchConfig::new(32768, 512), Some(stream))?;
/// let n = x.len(); // size_t n: a usize
/// // SAFETY: saxpy reads and writes n elements of each buffer, all alive
/// // until the stream is synchronized.
/// unsafe {
///     plan.launch_with((&2.0f32, x, y, out, &n))?;
///     // Change one argument and launch again.
///     plan.set(0, &3.0f32)?.launch()?;
/// }
/// stream.synchronize()?;
///
/// // A 4-byte n for the size_t parameter is refused, naming the parameter.
/// let err = plan.set(4, &(n as u32)).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
/// assert!(err.message().contains("parameter 4"));
/// # Ok(())
/// # }
/// ```
pub struct LaunchPlan {
    handle: Owned<sys::cuabi_launch_plan>,
    block: ArgBlock,
}

// SAFETY: the handle may be used and released on any thread (the header's
// rules). The block is memory the plan owns; it is written only through
// `&mut self`, so no two threads write it, or write and launch, at once.
unsafe impl Send for LaunchPlan {}
unsafe impl Sync for LaunchPlan {}

impl LaunchPlan {
    /// A plan to launch `function` with `config` on `stream` (`None`: the
    /// device's default stream); the same as [`Function::plan`].
    ///
    /// Its argument block starts zero-filled. The library refuses a bad
    /// configuration here (as [`Launch::run`](crate::Launch::run) would), a
    /// stream of another device, and, with
    /// [`ErrorKind::NotSupported`](crate::ErrorKind::NotSupported), a driver
    /// older than CUDA 12.4, which cannot report the kernel's parameters.
    pub fn new(
        function: &Function,
        config: LaunchConfig,
        stream: Option<&Stream>,
    ) -> Result<LaunchPlan> {
        let raw_config = config.raw();
        let stream = stream.map_or(std::ptr::null_mut(), Stream::as_raw);
        // SAFETY: valid handles and configuration; `out` is written on success.
        let handle = unsafe {
            create(|out| {
                sys::cuabi_launch_plan_create(function.as_raw(), &raw_config, stream, out)
            })?
        };
        let (mut args, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
        check(unsafe { sys::cuabi_launch_plan_get_args(handle.get(), &mut args, &mut size) })?;
        let kernel = function.name()?;
        let layout = function.layout()?.filter(|l| l.args_size == size);
        let (Some(layout), Some(block)) = (layout, NonNull::new(args.cast::<u8>())) else {
            return Err(Error::with_status(
                sys::CUABI_ERROR_INTERNAL,
                format!(
                    "the launch plan of kernel '{kernel}' has a {size}-byte argument block at \
                     {args:p}, which does not match the kernel's parameters"
                ),
            ));
        };
        Ok(LaunchPlan {
            handle,
            block: ArgBlock {
                ptr: block,
                size,
                params: layout.params.clone().into_boxed_slice(),
                kernel: kernel.into_boxed_str(),
            },
        })
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_launch_plan {
        self.handle.get()
    }

    /// The name of the kernel the plan launches.
    pub fn kernel_name(&self) -> &str {
        &self.block.kernel
    }

    /// Offset and size of each of the kernel's parameters, in order.
    pub fn params(&self) -> &[ParamInfo] {
        &self.block.params
    }

    /// The argument block as it is now: [`Function::args_size`] bytes, each
    /// argument at its parameter's offset, zero where nothing was written.
    pub fn args(&self) -> &[u8] {
        self.block.bytes()
    }

    /// Writes argument `index`: a [`DeviceRepr`](crate::DeviceRepr) value's
    /// bytes or a [`DeviceBuffer`](crate::DeviceBuffer)'s device address.
    /// Returns the plan, so that calls chain:
    /// `plan.set(0, &a)?.set(4, &n)?.launch()`.
    ///
    /// An index past the last parameter answers
    /// [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange); a value whose
    /// size is not the parameter's (a 4-byte `u32` for a `size_t`) answers
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
    /// naming the kernel and the parameter. Either way the block is left as
    /// it was.
    #[inline]
    pub fn set<A: KernelArg>(&mut self, index: usize, arg: &A) -> Result<&mut Self> {
        self.block.set(index, arg)?;
        Ok(self)
    }

    /// Writes every argument: a tuple of references, one per parameter in
    /// order, e.g. `(&a, &x, &y, &out, &n)`. Nothing is written unless the
    /// number of arguments and each one's size match the kernel's
    /// parameters; the error names the parameter at fault, as
    /// [`set`](Self::set)'s does.
    #[inline]
    pub fn set_args<T: KernelArgs>(&mut self, args: T) -> Result<&mut Self> {
        self.block.set_args(args)?;
        Ok(self)
    }

    /// Launches the kernel with the block's current contents: one call into
    /// the library, which passes the block to the driver as it is.
    ///
    /// # Safety
    /// Each argument's size was checked when it was written, not its type or
    /// meaning, and nothing can see what the kernel does:
    ///
    /// * each argument must be what the kernel's parameter declares (an `f32`
    ///   for a `float`, a buffer of the right element type for a pointer); a
    ///   parameter never written is zero (a null pointer, for a pointer);
    /// * the kernel must access only memory within the buffers it is given;
    /// * those buffers must not be dropped before the kernel has finished
    ///   (synchronize the stream or an event recorded after it), and not
    ///   before this launch: the block holds their addresses, not the
    ///   buffers.
    #[inline]
    pub unsafe fn launch(&mut self) -> Result<()> {
        check(sys::cuabi_launch_plan_launch(self.handle.get()))
    }

    /// Writes every argument as [`set_args`](Self::set_args) does, then
    /// launches as [`launch`](Self::launch) does; nothing runs when an
    /// argument is refused.
    ///
    /// # Safety
    /// As for [`launch`](Self::launch).
    #[inline]
    pub unsafe fn launch_with<T: KernelArgs>(&mut self, args: T) -> Result<()> {
        self.set_args(args)?;
        self.launch()
    }
}

impl fmt::Debug for LaunchPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaunchPlan")
            .field("handle", &self.as_raw())
            .field("kernel", &self.kernel_name())
            .field("params", &self.params())
            .finish()
    }
}

/// A plan's argument block, with the parameters that every write is checked
/// against. It does not own the memory.
struct ArgBlock {
    /// `size` bytes, 16-byte aligned, valid while the plan lives.
    ptr: NonNull<u8>,
    size: usize,
    /// Every parameter lies within the `size` bytes (the layout's rule).
    params: Box<[ParamInfo]>,
    /// The kernel's name, for errors.
    kernel: Box<str>,
}

impl ArgBlock {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `size` bytes valid while the plan lives; written only
        // through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.size) }
    }

    /// The offset of parameter `index`, when an argument of `size` bytes
    /// fits it.
    #[inline(always)]
    fn check(&self, index: usize, size: usize) -> Result<usize> {
        match self.params.get(index) {
            Some(param) if param.size == size => Ok(param.offset),
            _ => Err(self.refuse(index, size)),
        }
    }

    /// The error for an argument of `size` bytes at `index`, in the words of
    /// the library's own launch checks.
    #[cold]
    #[inline(never)]
    fn refuse(&self, index: usize, size: usize) -> Error {
        let kernel = &self.kernel;
        match self.params.get(index) {
            Some(param) => Error::invalid_argument(format!(
                "kernel '{kernel}' parameter {index} is {} bytes, but the argument given is \
                 {size} bytes",
                param.size
            )),
            None => Error::with_status(
                sys::CUABI_ERROR_OUT_OF_RANGE,
                format!(
                    "kernel '{kernel}' has {} parameters; there is no parameter {index}",
                    self.params.len()
                ),
            ),
        }
    }

    /// `Ok` when `count` arguments are one per parameter.
    #[inline(always)]
    fn check_count(&self, count: usize) -> Result<()> {
        if count == self.params.len() {
            Ok(())
        } else {
            Err(self.refuse_count(count))
        }
    }

    #[cold]
    #[inline(never)]
    fn refuse_count(&self, count: usize) -> Error {
        Error::invalid_argument(format!(
            "kernel '{}' takes {} parameters, but {count} arguments were given",
            self.kernel,
            self.params.len()
        ))
    }

    /// Writes one argument, checked against parameter `index`.
    #[inline(always)]
    fn set<A: KernelArg>(&mut self, index: usize, arg: &A) -> Result<()> {
        let (ptr, size) = sealed::Sealed::arg_bytes(arg);
        let offset = self.check(index, size)?;
        // SAFETY: `check` put `size` bytes at `offset` within the block, and
        // `ptr` points to `size` readable bytes of `arg`.
        unsafe { self.write(offset, ptr, size) };
        Ok(())
    }

    /// Writes one argument per parameter, all checked before any is written.
    #[inline(always)]
    fn set_args<T: KernelArgs>(&mut self, args: T) -> Result<()> {
        self.check_count(T::COUNT)?;
        args.each(|index, _, size| self.check(index, size).map(drop))?;
        let written: std::result::Result<(), std::convert::Infallible> =
            args.each(|index, ptr, size| {
                let offset = self.params[index].offset;
                // SAFETY: checked above: `size` bytes at `offset` are within
                // the block, and `ptr` points to `size` readable bytes.
                unsafe { self.write(offset, ptr, size) };
                Ok(())
            });
        let Ok(()) = written;
        Ok(())
    }

    /// Copies `size` bytes from `src` to `offset`.
    ///
    /// # Safety
    /// `offset + size <= self.size`; `src` points to `size` readable bytes
    /// outside the block.
    #[inline(always)]
    unsafe fn write(&mut self, offset: usize, src: *const c_void, size: usize) {
        std::ptr::copy_nonoverlapping(src.cast::<u8>(), self.ptr.as_ptr().add(offset), size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// A block over memory the test owns, laid out as SAXPY's parameters:
    /// float a, float *x, float *y, float *out, size_t n.
    struct Saxpy {
        memory: Box<[u128; 4]>,
        block: ArgBlock,
    }

    fn saxpy() -> Saxpy {
        let mut memory = Box::new([u128::from_ne_bytes([0xAA; 16]); 4]);
        let p = |offset, size| ParamInfo { offset, size };
        let block = ArgBlock {
            ptr: NonNull::new(memory.as_mut_ptr().cast()).unwrap(),
            size: 40,
            params: vec![p(0, 4), p(8, 8), p(16, 8), p(24, 8), p(32, 8)].into(),
            kernel: "saxpy".into(),
        };
        Saxpy { memory, block }
    }

    impl Saxpy {
        fn set<A: KernelArg>(&mut self, index: usize, arg: &A) -> Result<()> {
            self.block.set(index, arg)
        }

        fn set_args<T: KernelArgs>(&mut self, args: T) -> Result<()> {
            self.block.set_args(args)
        }

        fn bytes(&self) -> Vec<u8> {
            assert_eq!(self.block.ptr.as_ptr(), self.memory.as_ptr() as *mut u8);
            self.block.bytes().to_vec()
        }
    }

    fn saxpy_bytes(a: f32, x: u64, y: u64, out: u64, n: u64, pad: u8) -> Vec<u8> {
        let mut want = a.to_ne_bytes().to_vec();
        want.extend([pad; 4]);
        for v in [x, y, out, n] {
            want.extend(v.to_ne_bytes());
        }
        want
    }

    #[test]
    fn set_writes_each_argument_at_its_offset() {
        let mut s = saxpy();
        s.set(0, &2.0f32).unwrap();
        s.set(1, &0x1000u64).unwrap();
        s.set(2, &0x2000u64).unwrap();
        s.set(3, &0x3000u64).unwrap();
        s.set(4, &(1usize << 24)).unwrap();
        assert_eq!(
            s.bytes(),
            saxpy_bytes(2.0, 0x1000, 0x2000, 0x3000, 1 << 24, 0xAA),
            "padding is left alone"
        );
        // A later write replaces only its own parameter.
        s.set(0, &3.5f32).unwrap();
        assert_eq!(
            s.bytes(),
            saxpy_bytes(3.5, 0x1000, 0x2000, 0x3000, 1 << 24, 0xAA)
        );
    }

    #[test]
    fn a_four_byte_n_for_size_t_is_refused_naming_the_parameter() {
        let mut s = saxpy();
        s.set(4, &7usize).unwrap();
        let before = s.bytes();
        let err = s.set(4, &16u32).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert_eq!(
            err.message(),
            "kernel 'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes"
        );
        assert_eq!(s.bytes(), before, "a refused write changes nothing");

        // A double for the float.
        let err = s.set(0, &2.0f64).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.message().contains("parameter 0 is 4 bytes"), "{err}");
        assert!(err.message().contains("8 bytes"), "{err}");
        // A struct of the wrong size for a pointer.
        let err = s.set(1, &[0u32; 3]).unwrap_err();
        assert!(
            err.message().contains("parameter 1 is 8 bytes") && err.message().contains("12 bytes"),
            "{err}"
        );
    }

    #[test]
    fn an_index_past_the_last_parameter_is_out_of_range() {
        let mut s = saxpy();
        let before = s.bytes();
        let err = s.set(5, &0u64).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
        assert_eq!(
            err.message(),
            "kernel 'saxpy' has 5 parameters; there is no parameter 5"
        );
        assert!(s.set(usize::MAX, &0u8).is_err());
        assert_eq!(s.bytes(), before);
    }

    #[test]
    fn set_args_writes_a_whole_tuple() {
        let mut s = saxpy();
        let (a, x, y, out, n) = (2.0f32, 0x10u64, 0x20u64, 0x30u64, 99usize);
        s.set_args((&a, &x, &y, &out, &n)).unwrap();
        assert_eq!(s.bytes(), saxpy_bytes(2.0, 0x10, 0x20, 0x30, 99, 0xAA));
    }

    #[test]
    fn set_args_checks_everything_before_writing_anything() {
        let mut s = saxpy();
        s.set_args((&1.0f32, &1u64, &2u64, &3u64, &4usize)).unwrap();
        let before = s.bytes();
        // The first four fit; the 4-byte n does not.
        let err = s
            .set_args((&9.0f32, &9u64, &9u64, &9u64, &9u32))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.message().contains("parameter 4"), "{err}");
        assert_eq!(s.bytes(), before, "a refused tuple writes nothing");

        let err = s.set_args((&9.0f32, &9u64, &9u64, &9u64)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert_eq!(
            err.message(),
            "kernel 'saxpy' takes 5 parameters, but 4 arguments were given"
        );
        let err = s
            .set_args((&9.0f32, &9u64, &9u64, &9u64, &9usize, &9usize))
            .unwrap_err();
        assert!(err.message().contains("6 arguments"), "{err}");
        assert!(s.set_args(()).is_err());
        assert_eq!(s.bytes(), before);
    }

    #[test]
    fn tuples_visit_their_arguments_in_order() {
        use sealed::SealedArgs;
        let (a, b, c) = (1u8, 2.0f64, [3u16; 3]);
        let mut seen = Vec::new();
        let done: Result<(), ()> = (&a, &b, &c).each(|i, ptr, size| {
            seen.push((i, ptr, size));
            Ok(())
        });
        assert!(done.is_ok());
        assert_eq!(
            seen,
            [
                (0, (&a as *const u8).cast(), 1),
                (1, (&b as *const f64).cast(), 8),
                (2, (&c as *const [u16; 3]).cast(), 6),
            ]
        );
        assert_eq!(<(&u8, &f64, &[u16; 3])>::COUNT, 3);
        assert_eq!(<()>::COUNT, 0);
        // An error stops the visit.
        let mut visited = 0;
        let stopped = (&a, &b, &c).each(|i, _, _| {
            visited += 1;
            if i == 1 {
                Err(i)
            } else {
                Ok(())
            }
        });
        assert_eq!((stopped, visited), (Err(1), 2));
        // The longest tuple.
        let v = 0u32;
        let t = (
            &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v,
            &v, &v,
        );
        let mut count = 0;
        let _ = t.each(|i, _, _| {
            assert_eq!(i, count);
            count += 1;
            Ok::<(), ()>(())
        });
        assert_eq!(count, 24);
    }

    #[test]
    fn plans_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<LaunchPlan>();
    }
}
