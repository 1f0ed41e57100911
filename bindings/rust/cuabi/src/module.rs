//! Loaded device code and its kernels.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cuabi_sys as sys;

use crate::error::{c_string, check, create, read_list, Result};
use crate::generated::{ErrorKind, NameForm};
use crate::launch::{Launch, LaunchConfig};
use crate::types::{Function, LaunchPlan, Layout, Module, ParamInfo, Stream};

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

impl Module {
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
}

impl Function {
    /// Offset and size of every parameter, in order.
    pub fn params(&self) -> Result<Vec<ParamInfo>> {
        Ok(self.read_params()?.0)
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
mod tests;
