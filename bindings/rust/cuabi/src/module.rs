//! Loaded device code and its kernels.

use std::fmt;
use std::sync::OnceLock;

use cuabi_sys as sys;

use crate::error::{c_string, check, read_string, ErrorKind, Result};
use crate::handle::{create, Owned};
use crate::launch::{Launch, LaunchConfig};
use crate::plan::LaunchPlan;
use crate::stream::Stream;

/// Device code loaded on a device: from [`Device::compile`](crate::Device::compile),
/// [`Device::load_ptx`](crate::Device::load_ptx),
/// [`Device::load_module`](crate::Device::load_module) or
/// [`Device::load_module_file`](crate::Device::load_module_file). Unloaded
/// when it and every [`Function`] taken from it are dropped.
pub struct Module {
    handle: Owned<sys::cuabi_module>,
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
    pub(crate) fn new(handle: Owned<sys::cuabi_module>) -> Self {
        Module { handle }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_module {
        self.handle.get()
    }

    /// `true` when [`Device::compile`](crate::Device::compile) served this
    /// module from the on-disk cache instead of running NVRTC.
    pub fn from_cache(&self) -> Result<bool> {
        let mut hit = 0i32;
        check(unsafe { sys::cuabi_module_get_from_cache(self.as_raw(), &mut hit) })?;
        Ok(hit != 0)
    }

    /// The kernel called `name`, or named by a name expression given at
    /// compile time (e.g. `"scale<float>"`);
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) when there is none.
    pub fn function(&self, name: &str) -> Result<Function> {
        let name = c_string("kernel name", name)?;
        let handle = unsafe {
            create(|out| sys::cuabi_module_get_function(self.as_raw(), name.as_ptr(), out))?
        };
        Ok(Function {
            handle,
            layout: OnceLock::new(),
        })
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
        let (mut device_ptr, mut size_bytes) = (0u64, 0usize);
        check(unsafe {
            sys::cuabi_module_get_global(
                self.as_raw(),
                name.as_ptr(),
                &mut device_ptr,
                &mut size_bytes,
            )
        })?;
        Ok(Global {
            device_ptr,
            size_bytes,
        })
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("handle", &self.as_raw())
            .finish()
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

/// A kernel's attribute (the driver's `CUfunction_attribute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FunctionAttribute {
    /// The largest block this kernel can be launched with.
    MaxThreadsPerBlock,
    /// Static shared memory, in bytes.
    SharedSizeBytes,
    /// Constant memory, in bytes.
    ConstSizeBytes,
    /// Local memory per thread, in bytes.
    LocalSizeBytes,
    /// Registers per thread.
    NumRegs,
    /// The PTX version the kernel was compiled for (e.g. 90 for 9.0).
    PtxVersion,
    /// The binary architecture version (e.g. 90 for sm_90).
    BinaryVersion,
    /// The dynamic shared memory limit, in bytes; settable.
    MaxDynamicSharedSizeBytes,
    /// Any other `CUfunction_attribute`, by its value in `cuda.h`.
    Raw(i32),
}

impl FunctionAttribute {
    fn raw(self) -> sys::cuabi_function_attribute {
        use FunctionAttribute::*;
        (match self {
            MaxThreadsPerBlock => sys::CUABI_FUNC_MAX_THREADS_PER_BLOCK,
            SharedSizeBytes => sys::CUABI_FUNC_SHARED_SIZE_BYTES,
            ConstSizeBytes => sys::CUABI_FUNC_CONST_SIZE_BYTES,
            LocalSizeBytes => sys::CUABI_FUNC_LOCAL_SIZE_BYTES,
            NumRegs => sys::CUABI_FUNC_NUM_REGS,
            PtxVersion => sys::CUABI_FUNC_PTX_VERSION,
            BinaryVersion => sys::CUABI_FUNC_BINARY_VERSION,
            MaxDynamicSharedSizeBytes => sys::CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            Raw(value) => return value,
        }) as sys::cuabi_function_attribute
    }
}

/// A kernel in a [`Module`]; it keeps the module loaded. Launch it with
/// [`Function::launch`].
pub struct Function {
    handle: Owned<sys::cuabi_function>,
    // None: the driver cannot report parameters (before 12.4).
    layout: OnceLock<Option<Layout>>,
}

impl Function {
    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_function {
        self.handle.get()
    }

    /// The kernel's name.
    pub fn name(&self) -> Result<String> {
        read_string(|buf, size| unsafe { sys::cuabi_function_get_name(self.as_raw(), buf, size) })
    }

    /// How many parameters the kernel takes. Needs driver 12.4 or newer
    /// ([`ErrorKind::NotSupported`](crate::ErrorKind::NotSupported) before).
    pub fn param_count(&self) -> Result<usize> {
        let mut count = 0usize;
        check(unsafe { sys::cuabi_function_get_param_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// Offset and size of parameter `index`.
    pub fn param_info(&self, index: usize) -> Result<ParamInfo> {
        let (mut offset, mut size) = (0usize, 0usize);
        check(unsafe {
            sys::cuabi_function_get_param_info(self.as_raw(), index, &mut offset, &mut size)
        })?;
        Ok(ParamInfo { offset, size })
    }

    /// Offset and size of every parameter, in order.
    pub fn params(&self) -> Result<Vec<ParamInfo>> {
        (0..self.param_count()?)
            .map(|i| self.param_info(i))
            .collect()
    }

    /// The byte length of the packed argument block: the last parameter's
    /// offset plus its size (0 for no parameters).
    pub fn args_size(&self) -> Result<usize> {
        let mut size = 0usize;
        check(unsafe { sys::cuabi_function_get_args_size(self.as_raw(), &mut size) })?;
        Ok(size)
    }

    /// One of the kernel's attributes.
    pub fn attribute(&self, attribute: FunctionAttribute) -> Result<i32> {
        let mut value = 0i32;
        check(unsafe {
            sys::cuabi_function_get_attribute(self.as_raw(), attribute.raw(), &mut value)
        })?;
        Ok(value)
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
        let layout = match self.params() {
            Ok(params) => Layout::new(params, self.args_size()?),
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
    fn attributes_have_the_drivers_values() {
        assert_eq!(FunctionAttribute::MaxThreadsPerBlock.raw(), 0);
        assert_eq!(FunctionAttribute::NumRegs.raw(), 4);
        assert_eq!(FunctionAttribute::MaxDynamicSharedSizeBytes.raw(), 8);
        assert_eq!(FunctionAttribute::Raw(9).raw(), 9);
    }

    #[test]
    fn module_types_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Module>();
        assert_send_sync::<Function>();
    }
}
