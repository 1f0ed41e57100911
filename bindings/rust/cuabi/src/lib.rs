//! Compile CUDA C++ at run time, move data and launch kernels, from Rust.
//!
//! `cuabi` is the safe layer over [`cuabi_sys`], the raw declarations of the
//! cuabi C ABI (`include/cuabi/cuabi.h`). The library compiles with NVRTC and
//! drives the GPU through the CUDA driver API, both opened at run time, so a
//! program built with this crate starts on machines without CUDA and reports
//! what is missing as an [`Error`].
//!
//! * Every fallible call returns [`Result<T>`](Result); an [`Error`] carries
//!   the library's status ([`Error::kind`], [`Error::name`]), its message
//!   naming what failed, the raw CUDA or NVRTC code, NVRTC's log after a
//!   failed compile and, after a sticky fault, the launches not seen
//!   complete ([`Error::launches`], each a [`FaultedLaunch`]).
//! * Every object frees its resource on drop, in any order: the library keeps
//!   what an object depends on alive (a module its context, a function its
//!   module).
//! * Every object is `Send` and `Sync`: the library is thread-safe and any
//!   handle may be used from any thread.
//! * Device memory is typed: [`DeviceBuffer<T>`] for any [`DeviceRepr`] `T`
//!   (numbers, arrays of them, your `#[repr(C)]` structs).
//! * [`Function::launch`] builds a launch argument by argument and checks
//!   the arguments against the kernel's parameters before anything runs.
//! * [`Function::plan`] prepares a launch to repeat: a [`LaunchPlan`] checks
//!   the kernel, configuration and stream once, takes its arguments in place
//!   (the library checks each argument signature once) and launches with one
//!   call.
//! * [`LaunchConfig`]'s builder methods add the extended launch options
//!   (cooperative, clusters, programmatic dependent launch, priority) to
//!   every launch form; [`Function::suggest_config`] and the occupancy
//!   queries pick a configuration.
//! * [`Stream::launch_host_func`] runs a `Send` closure in stream order; an
//!   error or panic in it is answered by the stream's next synchronize.
//! * [`GraphExec::set_kernel_node_args`] and [`GraphExec::update`] change an
//!   instantiated graph without instantiating it again;
//!   [`GraphExec::set_kernel_node`], [`GraphExec::set_host_node`] and the
//!   other `set_*_node` methods change one node of it in place.
//! * Memory beyond [`Device::alloc`]: stream-ordered allocation from
//!   [`MemoryPool`]s ([`Device::alloc_async`], [`DeviceBuffer::free_async`]),
//!   [`ManagedBuffer`]s with a safe host view and prefetch and advice,
//!   sharing buffers, pools and events with other processes ([`IpcHandle`]),
//!   peer access ([`Device::enable_peer_access`],
//!   [`DeviceBuffer::copy_path`]), [`PitchedBuffer`]s, typed fills
//!   ([`DeviceBuffer::fill`]), 2D and 3D copies ([`Copy3d`]), [`Array`]s,
//!   and [`Texture`] and [`Surface`] objects passed to kernels as arguments.
//! * Compilation beyond one string: typed [`CompileOptions`] ([`Arch`],
//!   [`CppStd`], defines, include paths, fast math, line information,
//!   device debug, LTO-IR, relocatable code: handed to the library, which
//!   spells and checks them) beside raw option strings; the compile log of a
//!   [`Module`] after a successful compile; its kernels listed by both
//!   names ([`Module::kernels`]) and C++ kernels found by their plain names;
//!   a [`Linker`] for relocatable code and LTO-IR through nvJitLink or the
//!   driver ([`Program::lto_ir`]); [`Library`]s loaded once for every device;
//!   compiles and links on a thread of their own ([`Background`]).
//! * The header's enums and flag sets ([`ErrorKind`], [`Output`],
//!   [`NameForm`], [`FunctionAttribute`], [`LinkInput`], [`LinkBackend`],
//!   [`CaptureMode`], [`StreamFlags`], [`EventFlags`], [`CompileFlags`],
//!   [`LinkFlags`], [`LaunchFlags`], [`BufferKind`], [`MemoryAdvice`],
//!   [`CopyPath`], [`ArrayFormat`], [`AddressMode`], [`FilterMode`],
//!   [`ReadMode`], [`MemoryPoolFlags`], [`ManagedFlags`], [`ArrayFlags`]) are
//!   generated from it, with its comments; so are its value structs
//!   ([`MemoryPoolDesc`], [`ArrayDesc`], [`AccessPolicyWindow`]), whose
//!   [`Default`] is the library's `_init`.
//! * Driver-level settings, generated: the context's limits
//!   ([`Device::set_limit`]), a stream's attributes (priority,
//!   synchronization policy, memory-sync domain, L2 access-policy window:
//!   [`Stream::set_access_policy_window`]) and stream memory operations
//!   ([`Stream::write_value`], [`Stream::wait_value`]).
//! * Observing a process, generated but for one call: NVTX ranges and marks
//!   for Nsight Systems ([`nvtx_range`] answers an [`NvtxRange`] guard that
//!   closes the range when dropped; [`nvtx_range_start`], [`nvtx_mark`]),
//!   [`Device::profiler_start`]; the driver's own log ([`driver_log_read`],
//!   [`driver_log_dump`]; a failure's message already ends with the lines
//!   logged during it); health ([`Device::health`] answers a [`Health`],
//!   [`context_lost_message`], and [`on_context_lost`], which takes a
//!   closure); device core dumps ([`coredump_set`],
//!   [`Device::set_coredump`], [`CoredumpFlags`]).
//!
//! # SAXPY
//!
//! `out = a * x + y` over 2<sup>24</sup> floats, timed with events:
//!
//! ```no_run
//! use cuabi::{CompileOptions, Device, LaunchConfig};
//!
//! const SAXPY: &str = r#"
//! extern "C" __global__
//! void saxpy(float a, float *x, float *y, float *out, size_t n)
//! {
//!  size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
//!  if (tid < n) {
//!    out[tid] = a * x[tid] + y[tid];
//!  }
//! }
//! "#;
//!
//! fn main() -> cuabi::Result<()> {
//!     const NUM_THREADS: u32 = 512;
//!     const NUM_BLOCKS: u32 = 32768;
//!
//!     let device = Device::get(0)?;
//!     let options = CompileOptions::new().name("saxpy.cu").option("--fmad=false");
//!     let module = device.compile(SAXPY, &options)?;
//!     let saxpy = module.function("saxpy")?;
//!
//!     let a = 2.0f32;
//!     let n = (NUM_THREADS * NUM_BLOCKS) as usize; // size_t n: pass a usize
//!     let hx: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 / 1000.0).collect();
//!     let hy: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
//!
//!     let x = device.buffer_from_slice(&hx)?;
//!     let y = device.buffer_from_slice(&hy)?;
//!     let out = device.alloc::<f32>(n)?;
//!     let stream = device.create_stream()?;
//!     let (start, stop) = (device.create_event()?, device.create_event()?);
//!
//!     start.record(&stream)?;
//!     // SAFETY: saxpy reads n elements of x and y and writes n of out, all
//!     // alive until the stream is synchronized below.
//!     unsafe {
//!         saxpy
//!             .launch(LaunchConfig::new(NUM_BLOCKS, NUM_THREADS))
//!             .stream(&stream)
//!             .arg(&a)
//!             .arg(&x)
//!             .arg(&y)
//!             .arg(&out)
//!             .arg(&n)
//!             .run()?;
//!     }
//!     stop.record(&stream)?;
//!     stream.synchronize()?;
//!
//!     let h_out = out.to_vec()?;
//!     assert!(h_out.iter().zip(hx.iter().zip(&hy)).all(|(o, (x, y))| *o == a * x + y));
//!     println!("kernel time: {:.3} ms", start.elapsed_ms(&stop)?);
//!     Ok(())
//! }
//! ```
//!
//! Passing `n` as a `u32`, as the CUDA Python overview does, is refused with
//! [`ErrorKind::InvalidArgument`] and a message naming the parameter; the
//! kernel does not run.
//!
//! # Finding libcuabi
//!
//! `cuabi-sys` links `libcuabi` from `$CUABI_LIB_DIR`, or builds it from the
//! repository with CMake. Test and example binaries carry an rpath to that
//! folder; a crate that depends on `cuabi` can give its own binaries one from
//! `DEP_CUABI_RS_LIB_DIR` in its build script, or run with
//! `LD_LIBRARY_PATH`. At run time the library itself finds the CUDA driver
//! and NVRTC (see [`init`]).
//!
//! # Threads
//!
//! The library makes the device's primary context current on the calling
//! thread by itself in every call, so any object can be used on any thread.
//! Compiling and linking block the calling thread for tens of milliseconds
//! or more; [`Device::compile_in_background`],
//! [`Program::compile_in_background`] and [`Linker::link_in_background`]
//! run them on a thread of their own.
//! Work queued on one [`Stream`] from several threads is ordered by the
//! driver, in the order the calls reach it.

#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod array;
mod background;
mod batch;
mod builders;
mod copy;
mod device;
mod dlpack;
mod error;
mod generated;
mod green;
mod handle;
mod health;
mod host;
mod ipc;
mod launch;
mod link;
mod managed;
mod memory;
mod module;
mod objects;
mod plan;
mod pool;
mod program;
mod stream;
mod texture;
mod types;
mod values;
mod vmm;

pub use cuabi_sys as sys;

pub use crate::background::Background;
pub use crate::batch::{BatchMemory, Copy3dBatch, CopyBatch, ManagedRanges, MemOpBatch};
pub use crate::copy::{Copy3d, PitchedBuffer};
pub use crate::dlpack::{DlpackElement, DlpackTensor};
pub use crate::error::{Error, FaultedLaunch, Result};
pub use crate::generated::*;
pub use crate::green::TensorMapValue;
pub use crate::health::{clear_context_lost_callback, on_context_lost};
pub use crate::launch::{Dim3, KernelArg, KernelArgs, Launch, LaunchConfig};
pub use crate::link::LinkOptions;
pub use crate::managed::ManagedView;
pub use crate::module::KernelName;
pub use crate::objects::*;
pub use crate::pool::MemoryPoolOptions;
pub use crate::program::{Arch, CompileOptions, CppStd};
pub use crate::texture::{TextureOptions, TextureSource};
pub use crate::types::*;
pub use crate::values::*;
