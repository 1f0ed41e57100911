//! Loaded device code and its kernels.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cuabi_sys as sys;

use crate::error::{c_string, check, out, read_list, read_string, Result};
use crate::handle::{as_raw, create, Owned};
use crate::launch::{Launch, LaunchConfig};
use crate::plan::LaunchPlan;
use crate::stream::Stream;
use crate::{ErrorKind, FunctionAttribute, NameForm};

as_raw!(Module => sys::cuabi_module, Function => sys::cuabi_function);

/// Device code loaded on a device: from [`Device::compile`](crate::Device::compile),
/// [`Device::load_ptx`](crate::Device::load_ptx),
/// [`Device::load_module`](crate::Device::load_module),
/// [`Device::load_module_file`](crate::Device::load_module_file),
/// [`Linker::link`](crate::Linker::link) or
/// [`Library::module`](crate::Library::module). Unloaded when it and every
/// [`Function`] taken from it are dropped.
#[derive(Debug)]
pub struct Module {
    pub(crate) handle: Owned<sys::cuabi_module>,
}

/// One kernel of a [`Module`] by both its names: [`Module::kernels`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelName {
    /// As C++ writes it, `"ops::scale<float>(float*, float)"`; an
    /// `extern "C"` kernel's name as it is.
    pub demangled: String,
    /// The symbol in the image, `"_ZN3ops5scaleIfEEvPT_S1_"`, as the driver
    /// takes it.
    pub symbol: String,
}

/// A `__device__` global variable of a [`Module`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Global {
    /// Its device address (`CUdeviceptr`).
    pub device_ptr: u64,
    /// Its size in bytes.
    pub size_bytes: usize,
}

impl Module {
    /// `true` when [`Device::compile`](crate::Device::compile) served this
    /// module from the on-disk cache instead of running NVRTC.
    pub fn from_cache(&self) -> Result<bool> {
        let hit =
            out(|hit: &mut i32| unsafe { sys::cuabi_module_get_from_cache(self.as_raw(), hit) })?;
        Ok(hit != 0)
    }

    /// The kernel called `name`, or named by a name expression given at
    /// compile time (e.g. `"scale<float>"`);
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) when there is
    /// none, listing the module's kernels.
    ///
    /// A C++ kernel (declared without `extern "C"`) is found by its plain or
    /// qualified name, `"doublify"` or `"ops::doublify"`, when no other
    /// kernel of the module has that name; where several do (overloads,
    /// template instances) the name is refused with
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
    /// listing the candidates: give a name expression or the symbol
    /// ([`Module::kernels`]).
    pub fn function(&self, name: &str) -> Result<Function> {
        let name = c_string("kernel name", name)?;
        let handle = unsafe {
            create(|out| sys::cuabi_module_get_function(self.as_raw(), name.as_ptr(), out))?
        };
        Ok(Function {
            handle: Arc::new(handle),
            layout: OnceLock::new(),
        })
    }

    /// NVRTC's log of the compile that made this module, warnings
    /// included, also after a successful compile. Empty for a module the
    /// compile cache served ([`from_cache`](Self::from_cache): the compile
    /// that made the image had the log) and for one loaded from an image, a
    /// file, a link or a library.
    pub fn compile_log(&self) -> Result<String> {
        read_string(|buf, size| unsafe {
            sys::cuabi_module_get_compile_log(self.as_raw(), buf, size)
        })
    }

    /// How many kernels the module has (driver 12.4 or newer;
    /// [`ErrorKind::NotSupported`](crate::ErrorKind::NotSupported) before).
    pub fn kernel_count(&self) -> Result<usize> {
        out(|count| unsafe { sys::cuabi_module_get_kernel_count(self.as_raw(), count) })
    }

    /// The name of kernel `index` in `form`, in the driver's order; an index
    /// of [`kernel_count`](Self::kernel_count) or more is
    /// [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange).
    pub fn kernel_name(&self, index: usize, form: NameForm) -> Result<String> {
        read_string(|buf, size| unsafe {
            sys::cuabi_module_get_kernel_name(self.as_raw(), index, form.raw(), buf, size)
        })
    }

    /// Every kernel of the module, demangled and as its symbol, in the
    /// driver's order.
    ///
    /// ```no_run
    /// # fn f(module: &cuabi::Module) -> cuabi::Result<()> {
    /// for kernel in module.kernels()? {
    ///     println!("{} ({})", kernel.demangled, kernel.symbol);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn kernels(&self) -> Result<Vec<KernelName>> {
        (0..self.kernel_count()?)
            .map(|index| {
                Ok(KernelName {
                    demangled: self.kernel_name(index, NameForm::Demangled)?,
                    symbol: self.kernel_name(index, NameForm::Symbol)?,
                })
            })
            .collect()
    }

    /// The lowered (mangled) name of a name expression given at compile time.
    pub fn lowered_name(&self, expression: &str) -> Result<String> {
        let expression = c_string("name expression", expression)?;
        read_string(|buf, size| unsafe {
            sys::cuabi_module_get_lowered_name(self.as_raw(), expression.as_ptr(), buf, size)
        })
    }

    /// The `__device__` global called `name`.
    pub fn global(&self, name: &str) -> Result<Global> {
        let name = c_string("global name", name)?;
        let (device_ptr, size_bytes) = out(|(ptr, size): &mut (u64, usize)| unsafe {
            sys::cuabi_module_get_global(self.as_raw(), name.as_ptr(), ptr, size)
        })?;
        Ok(Global {
            device_ptr,
            size_bytes,
        })
    }
}

/// Where one kernel parameter sits in the packed argument block, as the
/// driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamInfo {
    /// Its byte offset in the argument block.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
}

/// The parameter layout of a kernel, read once per [`Function`]: every
/// parameter lies within the first `args_size` bytes of the block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) params: Vec<ParamInfo>,
    pub(crate) args_size: usize,
}

impl Layout {
    /// The layout, or `None` when a parameter reaches past `args_size`, so
    /// that no launch packs by it.
    pub(crate) fn new(params: Vec<ParamInfo>, args_size: usize) -> Option<Layout> {
        let within = params.iter().all(|p| {
            p.offset
                .checked_add(p.size)
                .is_some_and(|end| end <= args_size)
        });
        within.then_some(Layout { params, args_size })
    }
}

/// A kernel in a [`Module`]; it keeps the module loaded. Launch it with
/// [`Function::launch`].
pub struct Function {
    // Shared with the plans made from it, which may outlive it.
    handle: Arc<Owned<sys::cuabi_function>>,
    // None: the driver cannot report parameters (before 12.4).
    layout: OnceLock<Option<Layout>>,
}

impl Function {
    /// The handle, for a plan to keep.
    pub(crate) fn shared_handle(&self) -> Arc<Owned<sys::cuabi_function>> {
        Arc::clone(&self.handle)
    }

    /// The kernel's name.
    pub fn name(&self) -> Result<String> {
        read_string(|buf, size| unsafe { sys::cuabi_function_get_name(self.as_raw(), buf, size) })
    }

    /// How many parameters the kernel takes. Needs driver 12.4 or newer
    /// ([`ErrorKind::NotSupported`](crate::ErrorKind::NotSupported) before),
    /// as [`params`](Self::params) and [`args_size`](Self::args_size) do.
    pub fn param_count(&self) -> Result<usize> {
        Ok(self.read_params()?.0.len())
    }

    /// Offset and size of every parameter, in order.
    pub fn params(&self) -> Result<Vec<ParamInfo>> {
        Ok(self.read_params()?.0)
    }

    /// The byte length of the packed argument block: the last parameter's
    /// offset plus its size (0 for no parameters).
    pub fn args_size(&self) -> Result<usize> {
        Ok(self.read_params()?.1)
    }

    /// Every parameter and the block's length, read with one call of
    /// `cuabi_function_get_params` (a second one for more than 16 parameters).
    fn read_params(&self) -> Result<(Vec<ParamInfo>, usize)> {
        let mut args_size = 0usize;
        let empty = sys::cuabi_param_info { offset: 0, size: 0 };
        let raw = read_list(empty, 16, |params, count| unsafe {
            sys::cuabi_function_get_params(self.as_raw(), params, count, &mut args_size)
        })?;
        let params = raw.iter().map(|p| ParamInfo {
            offset: p.offset,
            size: p.size,
        });
        Ok((params.collect(), args_size))
    }

    /// One of the kernel's attributes.
    pub fn attribute(&self, attribute: FunctionAttribute) -> Result<i32> {
        out(|value| unsafe {
            sys::cuabi_function_get_attribute(self.as_raw(), attribute.raw(), value)
        })
    }

    /// Sets a settable attribute, e.g.
    /// [`FunctionAttribute::MaxDynamicSharedSizeBytes`].
    pub fn set_attribute(&self, attribute: FunctionAttribute, value: i32) -> Result<()> {
        check(unsafe { sys::cuabi_function_set_attribute(self.as_raw(), attribute.raw(), value) })
    }

    /// Starts a launch with grid and block sizes; add the stream and the
    /// arguments, then [`run`](Launch::run) it.
    #[inline]
    pub fn launch(&self, config: LaunchConfig) -> Launch<'_> {
        Launch::new(self, config)
    }

    /// A prepared launch of this kernel with `config` on `stream` (`None`:
    /// the device's default stream), for launching it many times: see
    /// [`LaunchPlan`]. The same as [`LaunchPlan::new`].
    pub fn plan(&self, config: LaunchConfig, stream: Option<&Stream>) -> Result<LaunchPlan> {
        LaunchPlan::new(self, config, stream)
    }

    /// How many blocks of `block_size` threads, each with
    /// `dynamic_shared_bytes` of dynamic shared memory, one multiprocessor
    /// keeps resident at once.
    pub fn active_blocks_per_sm(
        &self,
        block_size: u32,
        dynamic_shared_bytes: usize,
    ) -> Result<u32> {
        out(|blocks| unsafe {
            sys::cuabi_function_get_active_blocks_per_sm(
                self.as_raw(),
                block_size,
                dynamic_shared_bytes,
                blocks,
            )
        })
    }

    /// The block size that maximises occupancy and the smallest grid that
    /// fills the device at that size, as `(block_size, min_grid_size)`. Each
    /// block uses `shared_bytes_per_block` + `shared_bytes_per_thread` *
    /// block size of dynamic shared memory; `block_size_limit` caps the
    /// answer (0: the kernel's own limit).
    pub fn suggest_block_size(
        &self,
        shared_bytes_per_block: usize,
        shared_bytes_per_thread: usize,
        block_size_limit: u32,
    ) -> Result<(u32, u32)> {
        out(|(block_size, min_grid): &mut (u32, u32)| unsafe {
            sys::cuabi_function_suggest_block_size(
                self.as_raw(),
                shared_bytes_per_block,
                shared_bytes_per_thread,
                block_size_limit,
                block_size,
                min_grid,
            )
        })
    }

    /// A launch configuration for `elements` independent work items, one per
    /// thread: a 1-D block of the size [`suggest_block_size`](Self::suggest_block_size)
    /// gives, and as many blocks as cover `elements` (at most the device's
    /// grid limit). Change it with [`LaunchConfig`]'s builder methods.
    ///
    /// ```no_run
    /// # fn f(saxpy: &cuabi::Function, x: &cuabi::DeviceBuffer<f32>,
    /// #      y: &cuabi::DeviceBuffer<f32>, out: &cuabi::DeviceBuffer<f32>) -> cuabi::Result<()> {
    /// let n = x.len();
    /// let config = saxpy.suggest_config(n)?;
    /// assert!(config.grid.x as usize * config.block.x as usize >= n);
    /// // SAFETY: saxpy reads and writes n elements of each buffer.
    /// unsafe { saxpy.launch(config).args((&2.0f32, x, y, out, &n)).run()? };
    /// # Ok(())
    /// # }
    /// ```
    pub fn suggest_config(&self, elements: usize) -> Result<LaunchConfig> {
        self.suggest_config_with_shared(elements, 0, 0)
    }

    /// [`suggest_config`](Self::suggest_config) for a kernel whose blocks use
    /// `shared_bytes_per_block` + `shared_bytes_per_thread` * block size of
    /// dynamic shared memory; the configuration's `shared_mem_bytes` is set
    /// from them.
    pub fn suggest_config_with_shared(
        &self,
        elements: usize,
        shared_bytes_per_block: usize,
        shared_bytes_per_thread: usize,
    ) -> Result<LaunchConfig> {
        let mut raw = LaunchConfig::raw_default();
        // usize is at most 64 bits on every target the library runs on.
        let elements = u64::try_from(elements).unwrap_or(u64::MAX);
        check(unsafe {
            sys::cuabi_function_suggest_config(
                self.as_raw(),
                elements,
                shared_bytes_per_block,
                shared_bytes_per_thread,
                &mut raw,
            )
        })?;
        Ok(LaunchConfig::from_raw(&raw))
    }

    /// The most dynamic shared memory each block can have while
    /// `blocks_per_sm` blocks of `block_size` threads stay resident on one
    /// multiprocessor.
    pub fn available_dynamic_shared(&self, blocks_per_sm: u32, block_size: u32) -> Result<usize> {
        out(|bytes| unsafe {
            sys::cuabi_function_get_available_dynamic_shared(
                self.as_raw(),
                blocks_per_sm,
                block_size,
                bytes,
            )
        })
    }

    /// The largest cluster size, in blocks, the device can run the kernel
    /// with for `config`'s grid, block and shared memory (its cluster is not
    /// read).
    pub fn max_cluster_size(&self, config: &LaunchConfig) -> Result<u32> {
        let raw = config.raw();
        out(|size| unsafe { sys::cuabi_function_get_max_cluster_size(self.as_raw(), &raw, size) })
    }

    /// How many clusters of `config`'s cluster dimensions can be resident on
    /// the device at once.
    pub fn max_active_clusters(&self, config: &LaunchConfig) -> Result<u32> {
        let raw = config.raw();
        out(|clusters| unsafe {
            sys::cuabi_function_get_max_active_clusters(self.as_raw(), &raw, clusters)
        })
    }

    /// The parameter layout, read from the driver on first use; `None` when
    /// the driver cannot report it.
    #[inline]
    pub(crate) fn layout(&self) -> Result<Option<&Layout>> {
        match self.layout.get() {
            Some(layout) => Ok(layout.as_ref()),
            None => self.read_layout(),
        }
    }

    #[cold]
    fn read_layout(&self) -> Result<Option<&Layout>> {
        let layout = match self.read_params() {
            Ok((params, args_size)) => Layout::new(params, args_size),
            Err(err) if err.kind() == ErrorKind::NotSupported => None,
            Err(err) => return Err(err),
        };
        // Another thread may have filled it meanwhile, with the same value.
        Ok(self.layout.get_or_init(|| layout).as_ref())
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("handle", &self.as_raw())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_with_a_parameter_past_the_block_are_refused() {
        let p = |offset, size| ParamInfo { offset, size };
        assert!(Layout::new(vec![p(0, 4), p(8, 8)], 16).is_some());
        assert!(Layout::new(vec![], 0).is_some());
        assert!(Layout::new(vec![p(0, 4), p(8, 8)], 15).is_none());
        assert!(Layout::new(vec![p(usize::MAX, 2)], 16).is_none());
    }
}
