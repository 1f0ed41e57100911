//! Prepared launches: a kernel, its configuration and stream checked once,
//! and an argument block written in place.

use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use cuabi_sys as sys;

use crate::error::{check, create, Error, Result};
use crate::launch::{copy_arg, sealed, KernelArg, KernelArgs, LaunchConfig};
use crate::types::{Function, LaunchPlan, ParamInfo, Stream};

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
        let kernel = function.name()?.into_boxed_str();
        let layout = function.layout()?.filter(|l| l.args_size == size);
        let (Some(layout), Some(block)) = (layout, NonNull::new(args.cast::<u8>())) else {
            let what = format!("the plan's {size}-byte argument block at {args:p}");
            return Err(Error::new(
                sys::CUABI_ERROR_INTERNAL,
                format!("{what} does not match kernel '{kernel}''s parameters"),
            ));
        };
        Ok(LaunchPlan {
            handle,
            function: Arc::clone(&function.handle),
            kernel,
            block,
            size,
            params: layout.params.clone().into_boxed_slice(),
            checked: vec![usize::MAX; layout.params.len()].into_boxed_slice(),
            signature: None,
        })
    }

    /// The name of the kernel the plan launches.
    pub fn kernel_name(&self) -> &str {
        &self.kernel
    }

    /// Offset and size of each of the kernel's parameters, in order.
    pub fn params(&self) -> &[ParamInfo] {
        &self.params
    }

    /// The argument block as it is now: [`Function::args_size`] bytes, each
    /// argument at its parameter's offset, zero where nothing was written.
    pub fn args(&self) -> &[u8] {
        // SAFETY: `size` bytes valid while the plan lives; written only
        // through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.block.as_ptr(), self.size) }
    }

    /// Writes argument `index`: a [`DeviceRepr`](crate::DeviceRepr) value's
    /// bytes or a [`DeviceBuffer`](crate::DeviceBuffer)'s device address.
    /// Returns the plan, so that calls chain:
    /// `plan.set(0, &a)?.set(4, &n)?.launch()`.
    ///
    /// The first value of each size for a parameter is checked by the
    /// library (`cuabi_function_check_arg_size`): an index past the last
    /// parameter, or a value whose size is not the parameter's (a 4-byte
    /// `u32` for a `size_t`), answers
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
    /// naming the kernel and the parameter, and the block is left as it was.
    #[inline]
    pub fn set<A: KernelArg>(&mut self, index: usize, arg: &A) -> Result<&mut Self> {
        let (ptr, size) = sealed::Sealed::arg_bytes(arg);
        if self.checked.get(index) != Some(&size) {
            self.check_one(index, size)?;
        }
        // SAFETY: the library accepted `size` for parameter `index`, which
        // lies within the block; `ptr` points to `size` readable bytes.
        let offset = self.params[index].offset;
        unsafe { copy_arg(ptr.cast(), self.block.as_ptr().add(offset), size) };
        Ok(self)
    }

    /// Writes every argument: a tuple of references, one per parameter in
    /// order, e.g. `(&a, &x, &y, &out, &n)`. The library checks the tuple's
    /// signature the first time (`cuabi_function_check_arg_sizes`); nothing
    /// is written unless the number of arguments and each one's size match
    /// the kernel's parameters, and the error names the parameter at fault,
    /// as [`set`](Self::set)'s does.
    #[inline]
    pub fn set_args<T: KernelArgs>(&mut self, args: T) -> Result<&mut Self> {
        // The same static list as last time (one address per tuple type, in
        // practice): accepted. Anything else, including the same sizes at
        // another address, goes the cold way.
        let same = matches!(self.signature, Some(s) if std::ptr::eq(s, T::SIZES));
        if !same {
            self.check_signature(T::SIZES)?;
        }
        let block = self.block.as_ptr();
        let params = self.params.as_ptr();
        // SAFETY: the library accepted one argument per parameter, each of
        // its parameter's size (`remember` found each index among `params`,
        // of that size), and every parameter lies within the block; each
        // `ptr` points to `size` readable bytes outside it.
        args.each(|index, ptr, size| unsafe {
            copy_arg(ptr.cast(), block.add((*params.add(index)).offset), size)
        });
        Ok(self)
    }

    /// Launches the kernel with the block's current contents: one call into
    /// the library, which passes the block to the driver as it is.
    ///
    /// # Safety
    /// As for [`Launch::run`](crate::Launch::run): each argument's size was
    /// checked, not its type or meaning. A parameter never written is zero
    /// (a null pointer, for a pointer), and the buffers named must still be
    /// alive at this launch: the block holds their addresses, not the
    /// buffers.
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

    /// Has the library check `size` bytes for parameter `index`, and
    /// remembers the answer.
    #[cold]
    fn check_one(&mut self, index: usize, size: usize) -> Result<()> {
        let function = self.function.get();
        check(unsafe { sys::cuabi_function_check_arg_size(function, index, size) })?;
        self.remember(index, size)
    }

    /// Has the library check a tuple's signature, and remembers the answer.
    #[cold]
    fn check_signature(&mut self, sizes: &'static [usize]) -> Result<()> {
        if self.signature == Some(sizes) {
            // The sizes the library accepted last, at another address.
            self.signature = Some(sizes);
            return Ok(());
        }
        let function = self.function.get();
        check(unsafe {
            sys::cuabi_function_check_arg_sizes(function, sizes.as_ptr(), sizes.len())
        })?;
        for (index, &size) in sizes.iter().enumerate() {
            self.remember(index, size)?;
        }
        self.signature = Some(sizes);
        Ok(())
    }

    /// Records that the library accepted `size` bytes for parameter `index`.
    fn remember(&mut self, index: usize, size: usize) -> Result<()> {
        match (self.checked.get_mut(index), self.params.get(index)) {
            (Some(checked), Some(param)) if param.size == size => {
                *checked = size;
                Ok(())
            }
            // The library's check and its layout disagree: write nothing.
            _ => Err(Error::new(
                sys::CUABI_ERROR_INTERNAL,
                format!("kernel '{}': check and layout disagree", self.kernel),
            )),
        }
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
