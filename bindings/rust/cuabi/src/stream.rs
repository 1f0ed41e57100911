//! Streams, events, host functions and graphs.

use std::any::Any;
use std::ffi::{c_char, c_void};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

use cuabi_sys as sys;

use crate::error::{check, create, Error, Result};
use crate::handle::Owned;
use crate::launch::{with_packed, KernelArgs, LaunchConfig};
use crate::objects::GraphNode;
use crate::types::{Function, Graph, GraphExec, Stream};

impl Stream {
    /// Runs `f` in stream order: once the work queued before it is done, on
    /// a thread of the driver, before the work queued after it starts.
    ///
    /// `f` returns `Ok(())` for success. An `Err(e)`, or a panic (caught
    /// here, never unwinding into the driver), is a failure: its text (`e`'s
    /// `Display`, or `"host function panicked: "` and the panic's message)
    /// is what the stream's next [`synchronize`](Self::synchronize) answers,
    /// as an [`ErrorKind::HostFunction`](crate::generated::ErrorKind::HostFunction)
    /// error; the synchronize after that succeeds again. Work queued after
    /// `f` still runs.
    ///
    /// `f` is dropped exactly once: after it ran, or here when the library
    /// refuses the launch (whose error this returns). It must not call
    /// cuabi or CUDA functions that would wait on the GPU, nor drop the last
    /// reference to a cuabi object (which would free GPU resources on the
    /// driver's thread); send results out through a channel or shared
    /// state instead.
    ///
    /// ```no_run
    /// # fn f(stream: &cuabi::Stream) -> cuabi::Result<()> {
    /// use std::sync::{Arc, Mutex};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// for i in 0..3 {
    ///     let seen = Arc::clone(&seen);
    ///     stream.launch_host_func(move || -> Result<(), String> {
    ///         seen.lock().map_err(|e| e.to_string())?.push(i);
    ///         Ok(())
    ///     })?;
    /// }
    /// stream.launch_host_func(|| Err::<(), _>("checksum mismatch"))?;
    /// let err = stream.synchronize().unwrap_err();
    /// assert_eq!(err.kind(), cuabi::ErrorKind::HostFunction);
    /// assert!(err.message().contains("checksum mismatch"));
    /// assert_eq!(*seen.lock().unwrap(), [0, 1, 2]);
    /// stream.synchronize()?; // reported once
    /// # Ok(())
    /// # }
    /// ```
    pub fn launch_host_func<F, E>(&self, f: F) -> Result<()>
    where
        F: FnOnce() -> std::result::Result<(), E> + Send + 'static,
        E: fmt::Display,
    {
        // SAFETY: the trampoline is made for exactly this F and E.
        unsafe { launch_host_func_raw(self.as_raw(), f) }
    }
}

impl GraphExec {
    /// Gives kernel node `node` (of the graph this was instantiated from)
    /// `function` with `config`'s grid, block and shared memory and `args`,
    /// packed and checked as [`Graph::add_kernel_node`] packs and checks
    /// them, in this executable graph only: its next launches use them,
    /// without instantiating again. The library refuses a node of another
    /// kind or graph, a kernel of another signature, and launch attributes
    /// in `config` (they stay as instantiated), naming which.
    pub fn set_kernel_node<T: KernelArgs>(
        &self,
        node: &GraphNode,
        function: &Function,
        config: &LaunchConfig,
        args: T,
    ) -> Result<()> {
        let exec = self.as_raw();
        let cfg = config.raw();
        call_packed(function, &args, |block, size| unsafe {
            sys::cuabi_graph_exec_set_kernel_node(
                exec,
                node.as_raw(),
                function.as_raw(),
                &cfg,
                block,
                size,
            )
        })
    }

    /// Makes host node `node` run `f` in this executable graph, its failures
    /// reported as [`Graph::add_host_node`]'s are (the next
    /// [`Stream::synchronize`] of the stream the graph ran on answers them).
    /// `f` lives as long as the process, as `add_host_node`'s does: the
    /// executable graph may run it as long as it exists, and a launch under
    /// way may still call the function it replaces. A refused update drops
    /// `f` here.
    pub fn set_host_node<F, E>(&self, node: &GraphNode, f: F) -> Result<()>
    where
        F: Fn() -> std::result::Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        let exec = self.as_raw();
        give_host_node_fn(f, |call, data| {
            check(unsafe { sys::cuabi_graph_exec_set_host_node(exec, node.as_raw(), call, data) })
        })
    }

    /// Queues the whole graph on `stream`.
    ///
    /// # Safety
    /// The graph replays the captured kernels and copies with the arguments
    /// they were captured with, or were last given through
    /// [`set_kernel_node_args`](Self::set_kernel_node_args) or
    /// [`update`](Self::update): every buffer and host memory they name must
    /// still be alive until `stream` has run the graph, and the kernels'
    /// safety conditions ([`Launch::run`](crate::Launch::run)) hold again.
    pub unsafe fn launch(&self, stream: &Stream) -> Result<()> {
        check(sys::cuabi_graph_exec_launch(self.as_raw(), stream.as_raw()))
    }

    /// Replaces the arguments of kernel node `index` (the kernels in the
    /// order they were captured, see [`Graph::kernel_node_count`]) in this
    /// instantiated graph: its next launches run `function`, which must be
    /// the node's kernel, with `args`, without instantiating again.
    ///
    /// `args` is a tuple of references, one per kernel parameter, as
    /// [`Launch::args`](crate::Launch::args) takes it; it is packed at the
    /// kernel's parameter offsets. A tuple whose count or sizes do not match
    /// the kernel's parameters is refused as a launch's would be, naming the
    /// parameter; an index past the last kernel node, or a function that is
    /// not the node's kernel, is refused by the library, naming it.
    ///
    /// ```no_run
    /// # fn f(exec: &mut cuabi::GraphExec, saxpy: &cuabi::Function, stream: &cuabi::Stream,
    /// #      x: &cuabi::DeviceBuffer<f32>, y: &cuabi::DeviceBuffer<f32>,
    /// #      out: &cuabi::DeviceBuffer<f32>) -> cuabi::Result<()> {
    /// let n = x.len();
    /// for i in 0..100 {
    ///     let a = i as f32;
    ///     exec.set_kernel_node_args(0, saxpy, (&a, x, y, out, &n))?;
    ///     // SAFETY: the buffers outlive the synchronize below.
    ///     unsafe { exec.launch(stream)? };
    ///     stream.synchronize()?;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_kernel_node_args<T: KernelArgs>(
        &mut self,
        index: usize,
        function: &Function,
        args: T,
    ) -> Result<()> {
        let exec = self.as_raw();
        call_packed(function, &args, |block, size| unsafe {
            sys::cuabi_graph_exec_set_kernel_node_args(exec, index, function.as_raw(), block, size)
        })
    }
}

impl Graph {
    /// A kernel node running `function` with `config` and `args` packed as a
    /// launch packs them, after `after` (a node of this graph, or `None`).
    /// The configuration and the arguments are checked as a launch's are.
    ///
    /// ```no_run
    /// # fn main() -> cuabi::Result<()> {
    /// # let device = cuabi::Device::get(0)?;
    /// # let module = device.compile(
    /// #     "extern \"C\" __global__ void k(int* x) { *x = 1; }",
    /// #     &cuabi::CompileOptions::default(),
    /// # )?;
    /// # let k = module.function("k")?;
    /// let x = device.alloc_zeroed::<i32>(1)?;
    /// let graph = cuabi::Graph::create(&device)?;
    /// let _node = graph.add_kernel_node(None, &k, &cuabi::LaunchConfig::new(1, 1), (&x,))?;
    /// # Ok(()) }
    /// ```
    pub fn add_kernel_node<T: KernelArgs>(
        &self,
        after: Option<&GraphNode>,
        function: &Function,
        config: &LaunchConfig,
        args: T,
    ) -> Result<GraphNode> {
        let graph = self.as_raw();
        let after = after.map_or(std::ptr::null_mut(), GraphNode::as_raw);
        let cfg = config.raw();
        let mut raw: sys::cuabi_graph_node = std::ptr::null_mut();
        call_packed(function, &args, |block, size| unsafe {
            sys::cuabi_graph_add_kernel_node(
                graph,
                after,
                function.as_raw(),
                &cfg,
                block,
                size,
                &mut raw,
            )
        })?;
        // SAFETY: the call succeeded, so it made the node, which we now own.
        let handle = unsafe { Owned::new(raw) };
        Ok(GraphNode { handle })
    }

    /// A node running `f` at every launch of the graph, on a thread of the
    /// driver, after `after` (a node of this graph, or `None`). A failure
    /// (`Err` or a panic) is reported as a stream's host function's is: the
    /// next [`Stream::synchronize`] of the stream the graph ran on answers
    /// it. `f` lives as long as the process (the graph may run as long as
    /// any executable graph made from it).
    pub fn add_host_node<F, E>(&self, after: Option<&GraphNode>, f: F) -> Result<GraphNode>
    where
        F: Fn() -> std::result::Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        let graph = self.as_raw();
        let after = after.map_or(std::ptr::null_mut(), GraphNode::as_raw);
        let handle = give_host_node_fn(f, |call, data| unsafe {
            create(|out| sys::cuabi_graph_add_host_node(graph, after, call, data, out))
        })?;
        Ok(GraphNode { handle })
    }
}

/// Packs `args` at `function`'s parameter offsets, as a launch packs them,
/// and answers `call(block, size)`'s status (a kernel node added or
/// updated). A tuple that does not fit the kernel, or a kernel whose layout
/// the driver does not report, calls nothing: the library's check answers
/// the error naming why ([`refuse_args`]).
fn call_packed<T: KernelArgs>(
    function: &Function,
    args: &T,
    call: impl FnOnce(*const c_void, usize) -> sys::cuabi_status,
) -> Result<()> {
    if let Some(layout) = function.layout()? {
        if let Some(status) = with_packed(layout, args, call) {
            return check(status);
        }
    }
    refuse_args::<T>(function)
}

/// Gives `f` to a host node through `give(fn, user_data)` (adding the node
/// or updating it in an executable graph), with [`graph_host_trampoline`]
/// calling it. Taken, `f` is never freed: the node may run it as long as
/// the process lives. Refused, the node never runs it and it is dropped
/// here ([`give_boxed`]).
fn give_host_node_fn<F, E, R>(
    f: F,
    give: impl FnOnce(sys::cuabi_host_fn, *mut c_void) -> Result<R>,
) -> Result<R>
where
    F: Fn() -> std::result::Result<(), E> + Send + Sync + 'static,
    E: fmt::Display,
{
    give_boxed(f, |data| give(Some(graph_host_trampoline::<F, E>), data))
}

/// Boxes `f` and gives the box to `give` as its `user_data` (a host
/// function queued, a host node added or updated). Refused, nothing holds
/// the box and it is dropped here, after `give`'s error was read: dropping
/// what `f` captured may call the library, which would replace the
/// thread's last error.
fn give_boxed<F, R>(f: F, give: impl FnOnce(*mut c_void) -> Result<R>) -> Result<R> {
    let data: *mut F = Box::into_raw(Box::new(f));
    let given = give(data.cast());
    if given.is_err() {
        // SAFETY: refused, so nothing holds `data`.
        drop(unsafe { Box::from_raw(data) });
    }
    given
}

/// A graph's host node: runs `F` each time, never unwinding into the driver.
unsafe extern "C" fn graph_host_trampoline<F, E>(
    user_data: *mut c_void,
    message: *mut c_char,
    message_size: usize,
) -> i32
where
    F: Fn() -> std::result::Result<(), E>,
    E: fmt::Display,
{
    let f = &*user_data.cast::<F>();
    run_host_fn(f, message, message_size)
}

/// The error for a tuple that does not fit `function`'s parameters, or for a
/// kernel whose parameters the driver cannot report: the library's check
/// (`cuabi_function_check_arg_sizes`) names the parameter at fault, and
/// reading the layout answers why it is missing.
#[cold]
fn refuse_args<T: KernelArgs>(function: &Function) -> Result<()> {
    let sizes = T::SIZES;
    check(unsafe {
        sys::cuabi_function_check_arg_sizes(function.as_raw(), sizes.as_ptr(), sizes.len())
    })?;
    function.args_size()?;
    Err(Error::new(
        sys::CUABI_ERROR_INTERNAL,
        format!(
            "kernel '{}': the library accepts arguments of sizes {sizes:?} that do not match \
             its parameter layout",
            function.name().unwrap_or_default()
        ),
    ))
}

/// Queues `f` on the raw `stream` through [`host_trampoline`], dropping it
/// here when the library refuses the launch.
///
/// # Safety
/// `stream` is any handle value (the library checks it).
unsafe fn launch_host_func_raw<F, E>(stream: sys::cuabi_stream, f: F) -> Result<()>
where
    F: FnOnce() -> std::result::Result<(), E> + Send + 'static,
    E: fmt::Display,
{
    let call: sys::cuabi_host_fn = Some(host_trampoline::<F, E>);
    give_boxed(f, |data| {
        check(sys::cuabi_stream_launch_host_func(stream, call, data))
    })
}

/// The `cuabi_host_fn` of a boxed `F`: takes the box back (so `f` is freed
/// once, after it ran), runs it with panics caught, and writes a failure's
/// text into `message`.
///
/// # Safety
/// `user_data` is a `Box<F>` given up with `Box::into_raw`, passed here once.
unsafe extern "C" fn host_trampoline<F, E>(
    user_data: *mut c_void,
    message: *mut c_char,
    message_size: usize,
) -> i32
where
    F: FnOnce() -> std::result::Result<(), E>,
    E: fmt::Display,
{
    let f = Box::from_raw(user_data.cast::<F>());
    run_host_fn(f, message, message_size)
}

/// Runs a host function's `f` with panics caught (`f` itself dropped within
/// the catch when it moves into the closure), answering 0 for success, or 1
/// with the failure's text (`Err`'s `Display`, or the panic's message)
/// written into the `message_size`-byte `message`.
///
/// # Safety
/// `message` is NULL or has `message_size` writable bytes.
unsafe fn run_host_fn<E: fmt::Display>(
    f: impl FnOnce() -> std::result::Result<(), E>,
    message: *mut c_char,
    message_size: usize,
) -> i32 {
    let ran = panic::catch_unwind(AssertUnwindSafe(move || f().map_err(|e| e.to_string())));
    let failure = match ran {
        Ok(Ok(())) => return 0,
        Ok(Err(text)) => text,
        Err(payload) => format!("host function panicked: {}", panic_text(payload)),
    };
    write_message(&failure, message, message_size);
    1
}

/// The text of a panic's payload (a `&str` or a `String`, as `panic!` makes
/// them); the payload is dropped with panics caught too (a payload whose
/// drop panics again is leaked instead).
pub(crate) fn panic_text(payload: Box<dyn Any + Send>) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a payload that is not text".to_owned());
    if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    text
}

/// Writes `text` into the `size`-byte buffer at `out`, NUL-terminated, cut
/// at a UTF-8 character boundary when it does not fit.
///
/// # Safety
/// `out` is NULL or has `size` writable bytes.
unsafe fn write_message(text: &str, out: *mut c_char, size: usize) {
    if out.is_null() || size == 0 {
        return;
    }
    let mut end = text.len().min(size - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), end);
    out.add(end).write(0);
}

#[cfg(test)]
mod tests;
