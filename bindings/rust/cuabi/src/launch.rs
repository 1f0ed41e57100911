//! Kernel launches: a configuration and a builder that packs the arguments.

use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::mem::size_of;
use std::sync::OnceLock;

use cuabi_sys as sys;

use crate::copy::PitchedBuffer;
use crate::error::{check, init_struct, Result};
use crate::generated::{ClusterSchedulingPolicy, LaunchFlags, MemSyncDomain, SyncPolicy};
use crate::types::{
    Describes, DeviceBuffer, DeviceRepr, Event, Function, Layout, ManagedBuffer, Stream, Surface,
    Texture,
};
use crate::values::AccessPolicyWindow;

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

/// How a kernel is launched: grid and block sizes, dynamic shared memory
/// and, optionally, the extended launch options (a cooperative launch,
/// thread-block clusters, programmatic dependent launch, a priority).
///
/// The library checks it before the driver sees it (no zero dimension, a
/// block within the kernel's and the device's limits, shared memory within
/// the device's limit, cluster dimensions that divide the grid, a
/// cooperative grid the device can keep resident) and names what is wrong.
/// Every launch form takes it: [`Function::launch`], [`Function::plan`] and
/// [`Function::suggest_config`]'s answer, changed with the builder methods.
///
/// ```
/// use cuabi::{LaunchConfig, LaunchFlags};
/// let config = LaunchConfig::new(32768, 512);
/// assert_eq!((config.grid.x, config.block.x, config.block.y), (32768, 512, 1));
/// let tiled = LaunchConfig::new((64, 64), (16, 16)).with_shared_mem(4096);
/// assert_eq!(tiled.shared_mem_bytes, 4096);
/// // 2 x 1 x 1 clusters, a cooperative launch, the highest priority.
/// let cluster = LaunchConfig::new(64, 128).cluster(2, 1, 1).priority(-5);
/// assert_eq!(cluster.cluster.map(|c| (c.x, c.y, c.z)), Some((2, 1, 1)));
/// let grid_wide = LaunchConfig::new(132, 256).cooperative(true);
/// assert!(grid_wide.flags.contains(LaunchFlags::COOPERATIVE));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in a block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
    /// [`LaunchFlags`]: cooperative, programmatic serialization, the
    /// programmatic event's trigger.
    pub flags: LaunchFlags,
    /// Thread-block cluster dimensions in blocks; `None` for no cluster.
    /// Each must divide the grid's dimension.
    pub cluster: Option<Dim3>,
    /// The launch's priority; 0 keeps the stream's (see
    /// [`Device::stream_priority_range`](crate::Device::stream_priority_range)).
    pub priority: i32,
    /// The programmatic event's handle value, when one is set.
    programmatic_event: Option<usize>,
    /// The launch attributes, as the C fields hold them.
    attributes: Attributes,
    /// Whether a launch attribute was set: one test on the launch path.
    has_attributes: bool,
}

/// The launch attributes of a [`LaunchConfig`] as the C struct's fields hold
/// them, packed (the window's hit ratio as its bits, so the configuration
/// stays `Eq` and `Hash`; the enums as their small values; 0 bytes: no
/// window, 0: no event); their defaults mean "not set".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Attributes {
    window_base: u64,
    window_bytes: usize,
    window_hit_ratio: u32,
    window_hit: u8,
    window_miss: u8,
    sync_policy: u8,
    cluster_scheduling: u8,
    mem_sync_domain: i32,
    mem_sync_domain_map: (i32, i32),
    shared_carveout: i32,
    completion_event: usize,
}

const NO_ATTRIBUTES: Attributes = Attributes {
    window_base: 0,
    window_bytes: 0,
    window_hit_ratio: 0,
    window_hit: 0,
    window_miss: 0,
    sync_policy: 0,
    cluster_scheduling: 0,
    mem_sync_domain: -1,
    mem_sync_domain_map: (-1, -1),
    shared_carveout: -1,
    completion_event: 0,
};

impl LaunchConfig {
    /// `grid` blocks of `block` threads, no dynamic shared memory, no
    /// extended option.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
            flags: LaunchFlags::NONE,
            cluster: None,
            priority: 0,
            programmatic_event: None,
            attributes: NO_ATTRIBUTES,
            has_attributes: false,
        }
    }

    /// The L2 access-policy window of this kernel's accesses (a window of 0
    /// bytes: none, the stream's applies). The library refuses a window past
    /// the device's maximum, a hit ratio outside \[0, 1\] or a base of 0.
    pub fn access_policy_window(self, window: AccessPolicyWindow) -> LaunchConfig {
        self.with_attributes(|a| {
            a.window_base = window.base;
            a.window_bytes = window.bytes;
            a.window_hit_ratio = window.hit_ratio.to_bits();
            a.window_hit = window.hit_property.raw() as u8;
            a.window_miss = window.miss_property.raw() as u8;
        })
    }

    /// How a host thread waits for this kernel (unset: the stream's).
    pub fn sync_policy(self, policy: SyncPolicy) -> LaunchConfig {
        self.with_attributes(|a| a.sync_policy = policy.raw() as u8)
    }

    /// How a cluster's blocks are placed on the multiprocessors.
    pub fn cluster_scheduling(self, policy: ClusterSchedulingPolicy) -> LaunchConfig {
        self.with_attributes(|a| a.cluster_scheduling = policy.raw() as u8)
    }

    /// The kernel's memory-synchronisation domain (unset: the stream's).
    pub fn mem_sync_domain(self, domain: MemSyncDomain) -> LaunchConfig {
        self.with_attributes(|a| a.mem_sync_domain = domain.raw() as i32)
    }

    /// The domain ids the default and the remote domain stand for, each
    /// below the device's `CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT`.
    pub fn mem_sync_domain_map(self, default: i32, remote: i32) -> LaunchConfig {
        self.with_attributes(|a| a.mem_sync_domain_map = (default, remote))
    }

    /// The preferred shared-memory carve-out, 0 to 100 percent of the most
    /// shared memory (-1: the kernel's). A hint.
    pub fn shared_carveout(self, percent: i32) -> LaunchConfig {
        self.with_attributes(|a| a.shared_carveout = percent)
    }

    /// Records `event` once every block of the kernel has started, so that
    /// another stream that waits for it may overlap the kernel. The event
    /// must be made with
    /// [`EventFlags::DISABLE_TIMING`](crate::EventFlags::DISABLE_TIMING) and
    /// be alive when the configuration is used (it holds the handle).
    pub fn completion_event(self, event: &Event) -> LaunchConfig {
        self.with_attributes(|a| a.completion_event = event.as_raw().addr())
    }

    /// The configuration with `set` applied to its launch attributes, which
    /// it then has.
    #[inline(always)]
    fn with_attributes(mut self, set: impl FnOnce(&mut Attributes)) -> LaunchConfig {
        set(&mut self.attributes);
        self.has_attributes = true;
        self
    }

    /// No launch attribute (window, policies, domain and map, carve-out,
    /// completion event).
    pub fn without_attributes(mut self) -> LaunchConfig {
        self.attributes = NO_ATTRIBUTES;
        self.has_attributes = false;
        self
    }

    /// The same configuration with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem(mut self, bytes: u32) -> LaunchConfig {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Thread-block clusters of `x` by `y` by `z` blocks; each must divide
    /// the grid's dimension (at most 8 blocks per cluster unless the kernel
    /// allows more, see [`Function::max_cluster_size`]).
    pub fn cluster(mut self, x: u32, y: u32, z: u32) -> LaunchConfig {
        self.cluster = Some(Dim3 { x, y, z });
        self
    }

    /// No cluster.
    pub fn without_cluster(mut self) -> LaunchConfig {
        self.cluster = None;
        self
    }

    /// Records `event` when the kernel's blocks trigger (or start, with
    /// [`programmatic_event_at_block_start`](Self::programmatic_event_at_block_start));
    /// a later kernel that waits for it may overlap this one's tail. The
    /// event must be made with
    /// [`EventFlags::DISABLE_TIMING`](crate::EventFlags::DISABLE_TIMING) on
    /// the kernel's device, and be alive when the configuration is used:
    /// the configuration holds its handle, not the event (a dropped event's
    /// handle is refused by the library).
    pub fn programmatic_event(mut self, event: &Event) -> LaunchConfig {
        self.programmatic_event = Some(event.as_raw().addr());
        self
    }

    /// No programmatic event.
    pub fn without_programmatic_event(mut self) -> LaunchConfig {
        self.programmatic_event = None;
        self
    }

    /// The raw handle of the programmatic event set, if any.
    pub fn programmatic_event_handle(&self) -> Option<sys::cuabi_event> {
        self.programmatic_event
            .map(std::ptr::without_provenance_mut)
    }

    /// The launch's priority: numerically lower is higher; 0 keeps the
    /// stream's.
    pub fn priority(mut self, priority: i32) -> LaunchConfig {
        self.priority = priority;
        self
    }

    /// The same configuration with `flags` in place of its flags.
    pub fn with_flags(mut self, flags: LaunchFlags) -> LaunchConfig {
        self.flags = flags;
        self
    }

    #[inline(always)]
    pub(crate) fn raw(&self) -> sys::cuabi_launch_config {
        let cluster = self.cluster.unwrap_or(Dim3 { x: 0, y: 0, z: 0 });
        let mut raw = sys::cuabi_launch_config {
            grid_x: self.grid.x,
            grid_y: self.grid.y,
            grid_z: self.grid.z,
            block_x: self.block.x,
            block_y: self.block.y,
            block_z: self.block.z,
            shared_mem_bytes: self.shared_mem_bytes,
            flags: self.flags.bits(),
            cluster_x: cluster.x,
            cluster_y: cluster.y,
            cluster_z: cluster.z,
            priority: self.priority,
            programmatic_event: self
                .programmatic_event_handle()
                .unwrap_or(std::ptr::null_mut()),
            ..LaunchConfig::raw_default()
        };
        if self.has_attributes {
            let a = &self.attributes;
            if a.window_bytes != 0 {
                let window = &mut raw.access_policy_window;
                window.base = a.window_base;
                window.bytes = a.window_bytes;
                window.hit_ratio = f32::from_bits(a.window_hit_ratio);
                window.hit_property = a.window_hit.into();
                window.miss_property = a.window_miss.into();
            }
            raw.sync_policy = a.sync_policy.into();
            raw.cluster_scheduling_policy = a.cluster_scheduling.into();
            raw.mem_sync_domain = a.mem_sync_domain;
            raw.mem_sync_domain_map_default = a.mem_sync_domain_map.0;
            raw.mem_sync_domain_map_remote = a.mem_sync_domain_map.1;
            raw.shared_carveout = a.shared_carveout;
            raw.completion_event = std::ptr::without_provenance_mut(a.completion_event);
        }
        raw
    }

    /// The configuration a C struct describes (from the library's answer).
    pub(crate) fn from_raw(raw: &sys::cuabi_launch_config) -> LaunchConfig {
        let cluster = (raw.cluster_x, raw.cluster_y, raw.cluster_z);
        let w = &raw.access_policy_window;
        let windowed = w.bytes != 0;
        let attributes = Attributes {
            window_base: if windowed { w.base } else { 0 },
            window_bytes: w.bytes,
            window_hit_ratio: if windowed { w.hit_ratio.to_bits() } else { 0 },
            window_hit: if windowed { w.hit_property as u8 } else { 0 },
            window_miss: if windowed { w.miss_property as u8 } else { 0 },
            sync_policy: raw.sync_policy as u8,
            cluster_scheduling: raw.cluster_scheduling_policy as u8,
            mem_sync_domain: raw.mem_sync_domain,
            mem_sync_domain_map: (
                raw.mem_sync_domain_map_default,
                raw.mem_sync_domain_map_remote,
            ),
            shared_carveout: raw.shared_carveout,
            completion_event: raw.completion_event.addr(),
        };
        LaunchConfig {
            grid: (raw.grid_x, raw.grid_y, raw.grid_z).into(),
            block: (raw.block_x, raw.block_y, raw.block_z).into(),
            shared_mem_bytes: raw.shared_mem_bytes,
            flags: LaunchFlags::from_bits(raw.flags),
            cluster: (cluster != (0, 0, 0)).then(|| cluster.into()),
            priority: raw.priority,
            programmatic_event: (!raw.programmatic_event.is_null())
                .then(|| raw.programmatic_event.addr()),
            has_attributes: attributes != NO_ATTRIBUTES,
            attributes,
        }
    }

    /// A C struct with the library's defaults (`cuabi_launch_config_init`),
    /// for the library to fill.
    #[inline(always)]
    pub(crate) fn raw_default() -> sys::cuabi_launch_config {
        let defaults = default_config();
        sys::cuabi_launch_config {
            access_policy_window: sys::cuabi_access_policy_window {
                ..defaults.access_policy_window
            },
            ..*defaults
        }
    }
}

// SAFETY: the struct names no host memory; its event handles are checked
// by the library.
unsafe impl Describes<sys::cuabi_launch_config> for LaunchConfig {
    /// The C struct, from the library's defaults.
    fn describe(&self) -> Result<sys::cuabi_launch_config> {
        Ok(self.raw())
    }
}

/// The library's defaults for the C struct (`cuabi_launch_config_init`), read
/// once: its `struct_size`, and whatever fields a newer header adds.
fn default_config() -> &'static sys::cuabi_launch_config {
    /// The defaults; their programmatic event is NULL, a value any thread
    /// may read.
    struct Defaults(sys::cuabi_launch_config);
    // SAFETY: plain data, never written after it is made; the only pointer
    // is an event handle value (NULL), which names nothing by itself.
    unsafe impl Send for Defaults {}
    unsafe impl Sync for Defaults {}

    static DEFAULT: OnceLock<Defaults> = OnceLock::new();
    &DEFAULT
        .get_or_init(|| {
            // The init cannot fail for a struct of this header's size; if it
            // did, `struct_size` would stay 0 and the library would refuse
            // every launch, saying why.
            // SAFETY: integers and handles, for which zero is a value (NULL).
            Defaults(init_struct().unwrap_or_else(|_| unsafe { std::mem::zeroed() }))
        })
        .0
}

pub(crate) mod sealed {
    use std::ffi::c_void;

    /// Where an argument's bytes are and how many there are.
    pub trait Sealed {
        /// The argument's size in bytes.
        const SIZE: usize;
        /// Its address, and [`SIZE`](Self::SIZE).
        fn arg_bytes(&self) -> (*const c_void, usize);
    }

    /// A tuple of arguments, one per kernel parameter.
    pub trait SealedArgs {
        /// Each argument's size, in order: the tuple's signature.
        const SIZES: &'static [usize];
        /// Calls `f(index, ptr, size)` for each argument in order.
        fn each(&self, f: impl FnMut(usize, *const c_void, usize));
    }
}

/// A value [`Launch::arg`] and [`LaunchPlan::set`](crate::LaunchPlan::set)
/// can pass to a kernel parameter.
///
/// * every [`DeviceRepr`] type passes its own bytes: numbers, arrays, your
///   `#[repr(C)]` structs taken by value;
/// * a [`DeviceBuffer<T>`], [`ManagedBuffer<T>`](crate::ManagedBuffer) or
///   [`PitchedBuffer<T>`](crate::PitchedBuffer) passes its device address,
///   for a `T*` parameter;
/// * a [`Texture`](crate::Texture) or [`Surface`](crate::Surface) passes its
///   object's 8-byte value, for a `cudaTextureObject_t` or
///   `cudaSurfaceObject_t` parameter.
///
/// Sealed: implement [`DeviceRepr`] for your own types instead.
pub trait KernelArg: sealed::Sealed {}

impl<T: DeviceRepr> sealed::Sealed for T {
    const SIZE: usize = size_of::<T>();
    #[inline(always)]
    fn arg_bytes(&self) -> (*const c_void, usize) {
        ((self as *const T).cast(), Self::SIZE)
    }
}
impl<T: DeviceRepr> KernelArg for T {}

/// Implements [`KernelArg`] for types passed as the 8-byte value of their
/// `u64` field `$field` (a device address, a texture or surface object),
/// where it is stored (a buffer's own or, through `Deref`, its
/// [`DeviceBuffer`]'s).
macro_rules! by_address {
    ($([$($generics:tt)*] $ty:ty => $field:ident;)*) => {$(
        impl<$($generics)*> sealed::Sealed for $ty {
            const SIZE: usize = size_of::<u64>();
            #[inline(always)]
            fn arg_bytes(&self) -> (*const c_void, usize) {
                (std::ptr::from_ref::<u64>(&self.$field).cast(), Self::SIZE)
            }
        }
        impl<$($generics)*> KernelArg for $ty {}
    )*};
}

by_address! {
    [T: DeviceRepr] DeviceBuffer<T> => ptr;
    [T: DeviceRepr] ManagedBuffer<T> => ptr;
    [T: DeviceRepr] PitchedBuffer<T> => ptr;
    [] Texture<'_> => object;
    [] Surface => object;
}

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

/// Implements [`KernelArgs`] for the tuple of the arguments listed.
macro_rules! kernel_args {
    ($($index:tt $A:ident,)*) => {
        impl<$($A: KernelArg),*> sealed::SealedArgs for ($(&$A,)*) {
            const SIZES: &'static [usize] = &[$(<$A as sealed::Sealed>::SIZE),*];
            #[inline(always)]
            #[allow(unused_mut, unused_variables)]
            fn each(&self, mut f: impl FnMut(usize, *const c_void, usize)) {
                $({
                    let (ptr, size) = sealed::Sealed::arg_bytes(self.$index);
                    f($index, ptr, size);
                })*
            }
        }
        impl<$($A: KernelArg),*> KernelArgs for ($(&$A,)*) {}
    };
}

/// `kernel_args!` for every prefix of the list: `()`, `(&A0,)`, `(&A0, &A1)`,
/// ...
macro_rules! every_kernel_args {
    ([$($done:tt)*]) => {
        kernel_args!($($done)*);
    };
    ([$($done:tt)*] $index:tt $A:ident $(, $rest:tt $R:ident)*) => {
        kernel_args!($($done)*);
        every_kernel_args!([$($done)* $index $A,] $($rest $R),*);
    };
}

every_kernel_args!([] 0 A0, 1 A1, 2 A2, 3 A3, 4 A4, 5 A5, 6 A6, 7 A7, 8 A8, 9 A9, 10 A10, 11 A11,
    12 A12, 13 A13, 14 A14, 15 A15, 16 A16, 17 A17, 18 A18, 19 A19, 20 A20, 21 A21, 22 A22, 23 A23);

/// One argument: where its bytes are, and how many.
#[derive(Clone, Copy)]
struct Arg {
    ptr: *const c_void,
    size: usize,
}

/// Arguments a new thread's list has room for before it grows.
const FIRST_CAPACITY: usize = 16;

/// The largest list a thread keeps for its next launch.
const MAX_KEPT: usize = 1024;

thread_local! {
    /// The calling thread's spare argument list; empty while a launch holds
    /// it. A launch takes it and gives it back, so a launch allocates nothing
    /// once its thread has launched before. The builder moves by value from
    /// call to call; a list of a few words moves in registers, where
    /// arguments kept in the builder itself would be copied at every
    /// [`Launch::arg`].
    static SPARE: Cell<Vec<Arg>> = const { Cell::new(Vec::new()) };
}

/// The thread's spare list (a new one while another launch of this thread
/// holds it).
#[inline(always)]
fn take_spare() -> Vec<Arg> {
    let mut args = SPARE.try_with(Cell::take).unwrap_or_default();
    if args.capacity() == 0 {
        args.reserve_exact(FIRST_CAPACITY);
    }
    args
}

/// Gives a list back to the thread, which keeps the larger of its spare and
/// this one (the spare is empty unless another launch of this thread gave
/// one back meanwhile).
#[inline(always)]
fn give_back(mut args: Vec<Arg>) {
    if args.capacity() <= MAX_KEPT {
        args.clear();
        let _ = SPARE.try_with(|spare| {
            let other = spare.take();
            spare.set(if other.capacity() > args.capacity() {
                other
            } else {
                args
            });
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
    // The arguments, borrowed for 'a (as the function and stream are).
    args: Vec<Arg>,
}

impl<'a> Launch<'a> {
    #[inline(always)]
    pub(crate) fn new(function: &'a Function, config: LaunchConfig) -> Launch<'a> {
        Launch {
            function,
            config,
            stream: None,
            args: take_spare(),
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
        args.each(|_, ptr, size| self.args.push(Arg { ptr, size }));
        self
    }

    /// Queues the kernel.
    ///
    /// The arguments are packed into one block at the kernel's parameter
    /// offsets (read from the driver once per [`Function`]) and passed with
    /// `cuabi_function_launch_packed`. When their number or an argument's size does not
    /// match the kernel's parameters, the launch goes to `cuabi_function_launch_sized`
    /// instead, which refuses it with
    /// [`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument) and a
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
    ///   (synchronize the stream or an event recorded after it);
    /// * a [`ManagedBuffer`](crate::ManagedBuffer) the kernel uses must not
    ///   be viewed from the host before the kernel has finished
    ///   ([`ManagedBuffer::host_view`](crate::ManagedBuffer::host_view)
    ///   waits for the buffer's own device, not for others).
    #[inline]
    pub unsafe fn run(self) -> Result<()> {
        let function = self.function.as_raw();
        let config = self.config.raw();
        let stream = self.stream.map_or(std::ptr::null_mut(), Stream::as_raw);
        let args = self.args.as_slice();

        if let Some(layout) = self.function.layout()? {
            let size = layout.args_size;
            let launched = with_block(size, |block| {
                pack(layout, args, block).then(|| {
                    check(sys::cuabi_function_launch_packed(
                        function,
                        &config,
                        stream,
                        block.cast_const().cast(),
                        size,
                    ))
                })
            });
            if let Some(result) = launched {
                return result;
            }
        }
        run_sized(function, &config, stream, args)
    }
}

/// Bytes of argument block a launch keeps on the stack: enough for the
/// parameters of most kernels; a larger block goes to the heap.
const STACK_BLOCK: usize = 256;

/// A zeroed argument block on the stack; zero, so padding is too.
#[repr(C, align(16))]
struct StackBlock([u8; STACK_BLOCK]);

/// Calls `f` with a zeroed, 16-byte aligned argument block of `size` bytes:
/// on the stack when it fits [`STACK_BLOCK`], else on the heap.
#[inline(always)]
fn with_block<R>(size: usize, f: impl FnOnce(*mut u8) -> R) -> R {
    let mut stack = StackBlock([0; STACK_BLOCK]);
    let mut heap = Vec::<u128>::new();
    let block: *mut u8 = if size <= STACK_BLOCK {
        stack.0.as_mut_ptr()
    } else {
        heap.resize(size.div_ceil(16), 0);
        heap.as_mut_ptr().cast()
    };
    f(block)
}

/// A launch whose arguments do not fit the layout, or whose kernel's layout
/// the driver cannot report: the library checks every argument's size
/// against its parameter and refuses a mismatch, naming the parameter.
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

impl Drop for Launch<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.args));
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
                &Vec::from_iter(self.args.iter().map(|a| a.size)),
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
pub(crate) unsafe fn copy_arg(src: *const u8, dst: *mut u8, size: usize) {
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

/// Packs a tuple of arguments into one block at `layout`'s offsets (zero
/// between them) and calls `f(block, layout.args_size)`; `None`, calling
/// nothing, when the tuple's signature is not the layout's (another count,
/// or an argument of another size).
#[inline]
pub(crate) fn with_packed<T: KernelArgs, R>(
    layout: &Layout,
    args: &T,
    f: impl FnOnce(*const c_void, usize) -> R,
) -> Option<R> {
    let sizes = T::SIZES;
    let fits = sizes.len() == layout.params.len()
        && layout
            .params
            .iter()
            .zip(sizes)
            .all(|(p, &size)| p.size == size);
    if !fits {
        return None;
    }
    Some(with_block(layout.args_size, |block| {
        // SAFETY: each argument is `size` readable bytes (the sealed traits'
        // rule), `size` is its parameter's, and the Layout keeps every
        // parameter within the block's `args_size` bytes.
        args.each(|index, ptr, size| unsafe {
            copy_arg(ptr.cast(), block.add(layout.params[index].offset), size)
        });
        f(block.cast_const().cast(), layout.args_size)
    }))
}

#[cfg(test)]
mod tests;
