//! The type that owns each handle of the header, the one object per handle
//! that both the generated methods (`objects.rs`) and the crate's
//! hand-written ones (the other modules) extend.
//!
//! Each type holds an [`Owned`] raw handle, released on drop, and what its
//! methods keep beside it (a buffer's length, a kernel's parameter layout).

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

use cuabi_sys as sys;

use crate::error::{Error, Result};
use crate::handle::Owned;
use crate::values::IPC_HANDLE_SIZE;

/// Plain data that may be copied to and from the device byte for byte and
/// passed to a kernel by value.
///
/// Implemented for the primitive integer and floating-point types and for
/// arrays of `DeviceRepr` types. Implement it for your own `#[repr(C)]`
/// structs whose fields are all `DeviceRepr`, to match a struct the kernel
/// takes by value or an element type of a buffer:
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
/// }
///
/// // SAFETY: repr(C), every field is DeviceRepr, every bit pattern is valid.
/// unsafe impl cuabi::DeviceRepr for Particle {}
/// ```
///
/// # Safety
///
/// The type's layout must be what the device code expects (`#[repr(C)]` or
/// `#[repr(transparent)]`, fields in the same order with the same sizes), it
/// must hold no references or host pointers, and every bit pattern must be a
/// valid value, because the device may write any bytes into it. `bool`,
/// `char`, references and enums therefore do not qualify.
pub unsafe trait DeviceRepr: Copy + 'static {}

/// A Rust value that lays out a C struct naming cuabi objects or host
/// memory (a built struct of the header, such as `cuabi_copy_3d_desc`):
/// [`Copy3d`](crate::Copy3d) describes a `cuabi_copy_3d_desc`. The
/// methods taking such a struct take any `&impl Describes<...>`.
///
/// # Safety
///
/// [`describe`](Self::describe) must answer a struct whose handles are the
/// value's live objects and whose host memory is valid, and as large as the
/// struct says, for as long as the value's borrows last.
pub unsafe trait Describes<Raw> {
    /// The C struct, from the library's defaults; what the library cannot
    /// check (host memory's extent) checked here.
    fn describe(&self) -> crate::error::Result<Raw>;
}

/// A Rust value that lays out an array of a built struct of the header (a
/// batch: [`MemOpBatch`](crate::MemOpBatch) lays out `cuabi_mem_op`s). The
/// methods taking such an array take any `&impl DescribesEach<...>`.
///
/// # Safety
///
/// [`entries`](Self::entries) must answer structs whose handles are the
/// value's live objects and whose host memory is valid, and as large as
/// each struct says, for as long as the value's borrows last.
pub unsafe trait DescribesEach<Raw> {
    /// The C structs, in order.
    fn entries(&self) -> &[Raw];
}

/// Where managed memory is prefetched to, or what advice is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// The device with this ordinal.
    Device(usize),
    /// The host.
    Host,
}

impl Location {
    /// The library's `int32_t` location: a device ordinal or
    /// `CUABI_LOCATION_HOST`.
    pub(crate) fn raw(self) -> Result<i32> {
        match self {
            Location::Host => Ok(sys::CUABI_LOCATION_HOST),
            Location::Device(ordinal) => i32::try_from(ordinal).map_err(|_| {
                Error::invalid(format!(
                    "location Device({ordinal}): the library takes a device ordinal up to {}",
                    i32::MAX
                ))
            }),
        }
    }
}

macro_rules! device_repr {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive number; every bit pattern is a valid value.
        unsafe impl DeviceRepr for $t {}
    )*};
}

device_repr!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);

// SAFETY: an array of plain data is plain data, with no padding between elements.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

/// A device buffer's or an event's handle for another process: 128 plain
/// bytes to send through a pipe, a socket or a file
/// ([`as_bytes`](Self::as_bytes), [`to_hex`](Self::to_hex)).
///
/// It names the memory (or event), the process that exported it and the
/// buffer's size, with a checksum: the library refuses a damaged or foreign
/// handle, or one opened in the process that made it, with
/// [`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument) naming
/// why, before the driver sees it.
///
/// ```
/// use cuabi::IpcHandle;
/// let handle = IpcHandle::from([7u8; IpcHandle::SIZE]);
/// let text = handle.to_hex();
/// assert_eq!(text.len(), 2 * IpcHandle::SIZE);
/// assert_eq!(IpcHandle::from_hex(&text).unwrap(), handle);
/// let err = IpcHandle::from_hex("abc").unwrap_err();
/// assert!(err.message().contains("3 hex digits"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcHandle(pub(crate) [u8; IPC_HANDLE_SIZE]);

/// `len` elements of `T` in device memory, freed on drop.
///
/// Made by [`Device::alloc`](crate::Device::alloc),
/// [`Device::alloc_zeroed`](crate::Device::alloc_zeroed),
/// [`Device::buffer_from_slice`](crate::Device::buffer_from_slice),
/// [`Device::alloc_async`](crate::Device::alloc_async) (in stream order,
/// from a [`MemoryPool`](crate::MemoryPool)),
/// [`Device::open_ipc_buffer`](crate::Device::open_ipc_buffer) (another
/// process's memory) or [`Device::wrap_buffer`](crate::Device::wrap_buffer);
/// [`ManagedBuffer`](crate::ManagedBuffer) and
/// [`PitchedBuffer`](crate::PitchedBuffer) dereference to one.
/// [`kind`](Self::kind) tells which. Pass it to a kernel with
/// [`Launch::arg`](crate::Launch::arg), which passes its device address.
///
/// Dropping a buffer frees its memory the way its kind needs: a
/// stream-ordered buffer in order on the stream it was allocated on (see
/// [`free_async`](Self::free_async) to choose the stream), an IPC buffer by
/// unmapping it, a wrapped buffer not at all.
///
/// Every copy names its range in elements of `T`; a range past the end is
/// refused by the library with [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange)
/// before anything is copied. The `_async` forms are `unsafe`, because the
/// host memory must outlive a copy that has not run yet.
///
/// The forms without a stream follow CUDA's rules for synchronous copies:
/// they go through the device's default stream, so they are ordered after
/// work on it and on streams made without
/// [`StreamFlags::NON_BLOCKING`](crate::StreamFlags::NON_BLOCKING), but not
/// after work on non-blocking streams (synchronize those first, and
/// [`Device::synchronize`](crate::Device::synchronize) before a non-blocking
/// stream uses what they wrote). [`copy_to`](DeviceBuffer::copy_to) and
/// [`to_vec`](DeviceBuffer::to_vec) return with the data;
/// [`copy_from`](DeviceBuffer::copy_from) returns once `src` may be reused;
/// [`fill_bytes`](DeviceBuffer::fill_bytes) and
/// [`copy_from_buffer`](DeviceBuffer::copy_from_buffer) may return before the
/// device has finished them.
pub struct DeviceBuffer<T: DeviceRepr> {
    pub(crate) handle: Owned<sys::cuabi_buffer>,
    // The device address, kept here so a launch can point at it.
    pub(crate) ptr: u64,
    pub(crate) len: usize,
    pub(crate) _element: PhantomData<T>,
}

/// A fill value's bytes as `cuabi_buffer_fill` takes them (its low
/// `size_of::<T>()` bytes, in memory order) and its size. A value wider than
/// 4 bytes passes 0: the library refuses its element size, naming it.
pub(crate) fn fill_value<T: DeviceRepr>(value: &T) -> (u32, u32) {
    let size = size_of::<T>();
    let mut bytes = [0u8; 4];
    if size <= 4 {
        // SAFETY: `T` is plain data of `size` <= 4 readable bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (value as *const T).cast::<u8>(),
                bytes.as_mut_ptr(),
                size,
            )
        };
    }
    // Little-endian: the first bytes in memory are the low bytes, which the
    // device writes back in the same order.
    (
        u32::from_le_bytes(bytes),
        u32::try_from(size).unwrap_or(u32::MAX),
    )
}

/// `len` elements of `T` in page-locked host memory, allocated by the library
/// (`cuabi_host_buffer_alloc`), zeroed, and freed on drop.
///
/// It dereferences to `[T]`. Copies between pinned memory and the device run
/// asynchronously (see [`DeviceBuffer::copy_from_async`](crate::DeviceBuffer::copy_from_async)).
/// Made by [`Device::alloc_pinned`](crate::Device::alloc_pinned).
pub struct PinnedBuffer<T: DeviceRepr> {
    pub(crate) handle: Owned<sys::cuabi_host_buffer>,
    pub(crate) ptr: NonNull<T>,
    pub(crate) len: usize,
}

// SAFETY: the buffer owns its memory like a Vec<T> does; the handle is
// thread-safe (see handle.rs).
unsafe impl<T: DeviceRepr + Send> Send for PinnedBuffer<T> {}

unsafe impl<T: DeviceRepr + Sync> Sync for PinnedBuffer<T> {}

/// A slice of ordinary host memory, pinned in place (`cuabi_host_buffer_register`)
/// for as long as this value lives; dropping it unpins the memory.
///
/// It borrows the slice mutably and dereferences to it, so the memory
/// outlives the pinning. Made by [`Device::register_host`](crate::Device::register_host).
pub struct PinnedSlice<'a, T: DeviceRepr> {
    // Declared first: unpinned before the borrow ends.
    pub(crate) handle: Owned<sys::cuabi_host_buffer>,
    pub(crate) slice: &'a mut [T],
}

/// `len` elements of `T` in managed memory: one address valid on the host
/// and on every device, migrated on demand. Made, zeroed, by
/// [`Device::alloc_managed`]; freed on drop.
///
/// It dereferences to its [`DeviceBuffer`] for what reads it (copies out,
/// its device address, [`DeviceBuffer::to_vec`]) and passes to a kernel as
/// a buffer does; [`fill`](Self::fill), [`fill_bytes`](Self::fill_bytes) and
/// [`copy_from_buffer`](Self::copy_from_buffer) write it from the device.
/// The host reaches the same memory through [`host_view`](Self::host_view).
/// (There is no `&mut DeviceBuffer` to it: the buffer a `ManagedBuffer`
/// views cannot be swapped for another.)
///
/// # When the host may touch it
///
/// The header's rule (`cuabi_buffer_alloc_managed`): on a device with
/// concurrent managed access (`CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`
/// = 1: Linux with a Pascal or newer GPU) at any time, with the usual
/// data-race rules: what a kernel writes is seen by the host once the
/// kernel is known to have finished, and the host must not touch what a
/// running kernel reads or writes. Without it, the host must not touch any
/// managed memory while any kernel runs on the device.
///
/// [`host_view`](Self::host_view) keeps that rule safely: it borrows the
/// buffer mutably, so no launch can be given the buffer while the view
/// lives, and it synchronizes the buffer's device first, so every kernel,
/// copy and fill queued there before has finished. It is refused on a
/// device without concurrent managed access, where a kernel that does not
/// even use the buffer would make host access fault;
/// [`as_host_slice`](Self::as_host_slice) and
/// [`as_host_slice_mut`](Self::as_host_slice_mut) are the `unsafe` way
/// there, and anywhere the caller keeps the rule itself.
///
/// ```no_run
/// # fn f(device: &cuabi::Device, double: &cuabi::Function) -> cuabi::Result<()> {
/// use cuabi::{LaunchConfig, Location, ManagedFlags};
/// let n = 1024usize;
/// let mut data = device.alloc_managed::<f32>(n, ManagedFlags::NONE)?;
/// for (i, x) in data.host_view()?.iter_mut().enumerate() {
///     *x = i as f32;
/// }
/// data.prefetch(Location::Device(device.ordinal()), None)?;
/// // SAFETY: the kernel doubles n floats of `data`.
/// unsafe { double.launch(LaunchConfig::new(4, 256)).arg(&data).arg(&n).run()? };
/// let view = data.host_view()?; // waits for the kernel
/// assert_eq!(view[3], 6.0);
/// # Ok(())
/// # }
/// ```
///
/// A launch cannot be given the buffer while a view lends it to the host:
///
/// ```compile_fail
/// # fn f(device: &cuabi::Device, double: &cuabi::Function) -> cuabi::Result<()> {
/// # use cuabi::{LaunchConfig, ManagedFlags};
/// let n = 1024usize;
/// let mut data = device.alloc_managed::<f32>(n, ManagedFlags::NONE)?;
/// let mut view = data.host_view()?;
/// // error: `data` is borrowed mutably by `view`
/// unsafe { double.launch(LaunchConfig::new(4, 256)).arg(&data).arg(&n).run()? };
/// view[0] = 1.0;
/// # Ok(())
/// # }
/// ```
pub struct ManagedBuffer<T: DeviceRepr> {
    pub(crate) buffer: DeviceBuffer<T>,
    pub(crate) host: NonNull<T>,
    /// The buffer's device, for `host_view`'s synchronize.
    pub(crate) device: Device,
    pub(crate) concurrent: bool,
}

// SAFETY: the buffer owns its memory like a Vec<T> does; the host view is
// reached through `&mut self` only, unless through the unsafe accessors.
unsafe impl<T: DeviceRepr + Send> Send for ManagedBuffer<T> {}
unsafe impl<T: DeviceRepr + Sync> Sync for ManagedBuffer<T> {}

/// A GPU and its primary context (the one the CUDA runtime, CuPy and
/// PyTorch use, so their allocations and streams are shared with cuabi).
///
/// Objects made from a device keep what they need alive themselves: a
/// [`DeviceBuffer`], [`Stream`] or [`Module`] may outlive the `Device` it
/// came from. `Device` is `Send` and `Sync`; share it between threads with a
/// reference or an `Arc`.
pub struct Device {
    pub(crate) handle: Owned<sys::cuabi_device>,
    pub(crate) ordinal: usize,
}

/// An NVRTC program: CUDA C++ source compiled at run time to PTX or CUBIN.
///
/// Compiling needs NVRTC but no GPU. Load the result with
/// [`Device::load_ptx`](crate::Device::load_ptx) or
/// [`Device::load_module`](crate::Device::load_module), or go from source to
/// a module in one call, through the on-disk cache, with
/// [`Device::compile`](crate::Device::compile).
///
/// ```no_run
/// # fn main() -> cuabi::Result<()> {
/// let mut program = cuabi::Program::new(
///     "extern \"C\" __global__ void fill(float *p) { p[threadIdx.x] = 1.0f; }",
///     "fill.cu",
/// )?;
/// program.compile(&["--gpu-architecture=compute_90"])?;
/// let ptx = program.ptx()?;
/// assert!(ptx.contains(".entry fill"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Program {
    pub(crate) handle: Owned<sys::cuabi_program>,
}

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
    pub(crate) handle: Arc<Owned<sys::cuabi_function>>,
    // None: the driver cannot report parameters (before 12.4).
    pub(crate) layout: OnceLock<Option<Layout>>,
}

/// A CUDA stream: work queued on it runs in order. Destroyed on drop (a
/// wrapped stream is only let go).
///
/// `Stream` is `Send` and `Sync`: several threads may queue work on one
/// stream; the driver orders it.
#[derive(Debug)]
pub struct Stream {
    pub(crate) handle: Owned<sys::cuabi_stream>,
}

/// A CUDA event: a point in a stream to wait for or to time. Destroyed on drop.
#[derive(Debug)]
pub struct Event {
    pub(crate) handle: Owned<sys::cuabi_event>,
}

/// Work captured from a stream ([`Stream::end_capture`]). Instantiate it to run it.
#[derive(Debug)]
pub struct Graph {
    pub(crate) handle: Owned<sys::cuabi_graph>,
}

/// An instantiated graph ([`Graph::instantiate`]).
#[derive(Debug)]
pub struct GraphExec {
    pub(crate) handle: Owned<sys::cuabi_graph_exec>,
}

/// A prepared launch: the fastest way to launch one kernel many times.
///
/// The library checks the kernel, the [`LaunchConfig`](crate::LaunchConfig) and the stream once,
/// when the plan is made, and gives the plan an argument block laid out at
/// the kernel's parameter offsets. Arguments are written into that block in
/// place ([`set`](Self::set), [`set_args`](Self::set_args)); the library
/// checks each argument signature against the kernel's parameters the first
/// time the plan sees it (a tuple's types, or one parameter's size), not at
/// every write. A launch ([`launch`](Self::launch),
/// [`launch_with`](Self::launch_with)) is one call of one argument that
/// passes the block as it is. Arguments stay in the block between launches:
/// set only what changes.
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
    pub(crate) handle: Owned<sys::cuabi_launch_plan>,
    /// The kernel, for the library's checks; shared with its [`Function`].
    pub(crate) function: Arc<Owned<sys::cuabi_function>>,
    pub(crate) kernel: Box<str>,
    /// `size` bytes, 64-byte aligned, owned by the library's plan.
    pub(crate) block: NonNull<u8>,
    pub(crate) size: usize,
    /// Every parameter lies within the `size` bytes (the layout's rule).
    pub(crate) params: Box<[ParamInfo]>,
    /// The size the library accepted for each parameter; `usize::MAX`
    /// (which no argument's size is) before any.
    pub(crate) checked: Box<[usize]>,
    /// The tuple signature the library accepted last.
    pub(crate) signature: Option<&'static [usize]>,
}

// SAFETY: the handles may be used and released on any thread (the header's
// rules). The block is written only through `&mut self`, so no two threads
// write it, or write and launch, at once.
unsafe impl Send for LaunchPlan {}

unsafe impl Sync for LaunchPlan {}

/// A pool of device memory that [`Device::alloc_async`] allocates from in
/// stream order.
///
/// Made by [`Device::create_memory_pool`], or
/// [`Device::default_memory_pool`] for the device's own (the one the CUDA
/// runtime's `cudaMallocAsync`, CuPy and PyTorch share; dropping that
/// handle leaves the pool alone). A pool made here is destroyed when it is
/// dropped and every buffer allocated from it is freed: buffers keep their
/// pool alive. Every method takes `&self`: the library makes each call
/// thread-safe.
///
/// ```no_run
/// # fn f(device: &cuabi::Device) -> cuabi::Result<()> {
/// use cuabi::MemoryPoolDesc;
/// let pool = device.create_memory_pool(&MemoryPoolDesc::new().release_threshold(64 << 20))?;
/// let stream = device.create_stream()?;
/// let scratch = device.alloc_async::<f32>(1 << 20, Some(&pool), Some(&stream))?;
/// // ... kernels on `stream` use `scratch` ...
/// scratch.free_async(Some(&stream)).map_err(|(_, e)| e)?;
/// stream.synchronize()?;
/// assert_eq!(pool.usage()?.used_bytes, 0);
/// pool.trim(0)?; // give the 64 MiB the pool kept back to the device
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct MemoryPool {
    pub(crate) handle: Owned<sys::cuabi_memory_pool>,
}

/// A CUDA array: memory laid out for texture fetches and surface
/// reads and writes. Made by [`Device::create_array`]; filled and read with
/// [`copy_from_host`](Self::copy_from_host),
/// [`copy_to_host`](Self::copy_to_host) or any box with [`Copy3d`](crate::Copy3d).
///
/// `Array` is a shared handle: its clones name the same array, which is
/// freed when the last clone is dropped and no [`Texture`](crate::Texture)
/// or [`Surface`](crate::Surface) uses it (each keeps a clone). Methods take
/// `&self`.
#[derive(Clone, Debug)]
pub struct Array {
    pub(crate) handle: Arc<Owned<sys::cuabi_array>>,
}

/// A texture object (`cudaTextureObject_t`): pass it to a kernel with
/// [`Launch::arg`](crate::Launch::arg), which passes its 8-byte value.
///
/// It keeps its memory alive: over an [`Array`] it holds a clone of it
/// (`Texture<'static>`); over a buffer it borrows the buffer for `'a`, so
/// the buffer can be neither dropped, freed nor written through `&mut` while
/// the texture lives (kernels may still write it through their arguments).
/// The library checks everything when it is made (exactly one memory, the
/// range inside the buffer, modes that need normalised coordinates, linear
/// filtering of integer reads) and names what is wrong.
///
/// ```compile_fail
/// # fn f(device: &cuabi::Device) -> cuabi::Result<()> {
/// use cuabi::{ArrayFormat, Texture, TextureOptions, TextureSource};
/// let buffer = device.alloc_async::<f32>(256, None, None)?;
/// let texture = Texture::new(
///     TextureSource::linear(&buffer, ArrayFormat::F32, 1, 256),
///     &TextureOptions::new(),
/// )?;
/// buffer.free_async(None).map_err(|(_, e)| e)?; // error: `buffer` is borrowed by the texture
/// drop(texture);
/// # Ok(())
/// # }
/// ```
pub struct Texture<'a> {
    pub(crate) handle: Owned<sys::cuabi_texture>,
    /// The `CUtexObject`, where a launch can point at it.
    pub(crate) object: u64,
    pub(crate) _array: Option<Array>,
    pub(crate) _buffer: PhantomData<&'a ()>,
}

/// A surface object (`cudaSurfaceObject_t`) over an [`Array`] made with
/// [`ArrayFlags::SURFACE_LOAD_STORE`](crate::ArrayFlags::SURFACE_LOAD_STORE),
/// for kernels to read and write it (`surf2Dread`, `surf2Dwrite`, ...).
/// Pass it to a kernel with [`Launch::arg`](crate::Launch::arg), which
/// passes its 8-byte value. It holds a clone of its array.
pub struct Surface {
    pub(crate) handle: Owned<sys::cuabi_surface>,
    pub(crate) object: u64,
    pub(crate) _array: Array,
}

/// Links device code into one image and loads it as a [`Module`]: the
/// outputs of [`Program`]s compiled with relocatable device code
/// ([`CompileOptions::rdc`](crate::CompileOptions::rdc)) or LTO-IR
/// ([`CompileOptions::dlto`](crate::CompileOptions::dlto)), and CUBIN, PTX,
/// fatbin or LTO-IR files or bytes, host objects and static libraries of
/// device code.
///
/// ```no_run
/// # fn main() -> cuabi::Result<()> {
/// use cuabi::{CompileOptions, Device, LinkOptions, Program};
/// let device = Device::get(0)?;
/// let options = CompileOptions::new().arch(device.arch()?).rdc(true);
/// let mut caller = Program::with_options(
///     "extern \"C\" __device__ float twice(float);\n\
///      extern \"C\" __global__ void apply(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }",
///     &options,
/// )?;
/// caller.compile_with(&options)?;
/// let mut callee = Program::with_options(
///     "extern \"C\" __device__ float twice(float x) { return 2.0f * x; }",
///     &options,
/// )?;
/// callee.compile_with(&options)?;
///
/// let mut linker = device.create_linker(&LinkOptions::new())?;
/// linker.add_program(&caller)?.add_program(&callee)?;
/// let module = linker.link()?;
/// let apply = module.function("apply")?;
/// let cubin = linker.image()?; // for a Library, a file, another device
/// # let _ = (apply, cubin);
/// # Ok(())
/// # }
/// ```
///
/// Linked images go through the compile cache (keyed on every input, the
/// options, the backend and the target): [`Module::from_cache`] tells. A
/// link the linker refuses is an [`ErrorKind::Compile`](crate::ErrorKind::Compile)
/// error whose [`log`](crate::Error::log) is the linker's (an unresolved
/// symbol named in it); [`Linker::log`] keeps it. A linker links once.
///
/// Adding and linking take `&mut self`; the linker is `Send` and `Sync`, so
/// it may be built on one thread and linked on another
/// ([`link_in_background`](Self::link_in_background)).
#[derive(Debug)]
pub struct Linker {
    pub(crate) handle: Owned<sys::cuabi_linker>,
}

/// Device code loaded once for every device (`cuLibraryLoadData`, CUDA 12
/// or newer): [`Library::module`] gives it as a [`Module`] of any device,
/// without loading the image again.
///
/// ```no_run
/// # fn main() -> cuabi::Result<()> {
/// # let cubin: Vec<u8> = Vec::new();
/// let library = cuabi::Library::load(&cubin)?;
/// for ordinal in 0..cuabi::Device::count()? {
///     let module = library.module(&cuabi::Device::get(ordinal)?)?;
///     let kernel = module.function("doublify")?; // plain C++ names work too
/// #   let _ = kernel;
/// }
/// # Ok(())
/// # }
/// ```
///
/// Modules keep their library loaded: the `Library` may be dropped first.
#[derive(Debug)]
pub struct Library {
    pub(crate) handle: Owned<sys::cuabi_library>,
}
