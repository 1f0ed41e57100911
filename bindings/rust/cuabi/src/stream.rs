//! Streams, events and graphs.

use cuabi_sys as sys;

use crate::error::{check, check_ready, out, Result};
use crate::handle::{as_raw, create, Owned};
use crate::CaptureMode;

as_raw!(Stream => sys::cuabi_stream, Event => sys::cuabi_event, Graph => sys::cuabi_graph, GraphExec => sys::cuabi_graph_exec);

/// A CUDA stream: work queued on it runs in order. Destroyed on drop (a
/// wrapped stream is only let go).
///
/// `Stream` is `Send` and `Sync`: several threads may queue work on one
/// stream; the driver orders it.
#[derive(Debug)]
pub struct Stream {
    pub(crate) handle: Owned<sys::cuabi_stream>,
}

impl Stream {
    /// The raw `CUstream` (a `cudaStream_t`), for interop.
    pub fn cu_stream(&self) -> Result<u64> {
        out(|raw| unsafe { sys::cuabi_stream_get_handle(self.as_raw(), raw) })
    }

    /// Waits until all work queued on the stream is done.
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::cuabi_stream_synchronize(self.as_raw()) })
    }

    /// `true` when all work queued on the stream is done, `false` while some
    /// is still running.
    pub fn query(&self) -> Result<bool> {
        check_ready(unsafe { sys::cuabi_stream_query(self.as_raw()) })
    }

    /// Makes later work on this stream wait until `event` is reached.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        check(unsafe { sys::cuabi_stream_wait_event(self.as_raw(), event.as_raw()) })
    }

    /// Starts capturing the work queued on this stream into a graph instead
    /// of running it; [`Stream::end_capture`] returns the graph.
    pub fn begin_capture(&self, mode: CaptureMode) -> Result<()> {
        check(unsafe { sys::cuabi_stream_begin_capture(self.as_raw(), mode.raw()) })
    }

    /// Ends the capture begun by [`Stream::begin_capture`] and returns what
    /// was captured.
    pub fn end_capture(&self) -> Result<Graph> {
        let handle = unsafe { create(|out| sys::cuabi_stream_end_capture(self.as_raw(), out))? };
        Ok(Graph { handle })
    }
}

/// A CUDA event: a point in a stream to wait for or to time. Destroyed on drop.
#[derive(Debug)]
pub struct Event {
    pub(crate) handle: Owned<sys::cuabi_event>,
}

impl Event {
    /// Records the event at the current end of `stream`.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        check(unsafe { sys::cuabi_event_record(self.as_raw(), stream.as_raw()) })
    }

    /// Waits until the stream has reached the event.
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::cuabi_event_synchronize(self.as_raw()) })
    }

    /// `true` when the stream has reached the event, `false` when not yet.
    pub fn query(&self) -> Result<bool> {
        check_ready(unsafe { sys::cuabi_event_query(self.as_raw()) })
    }

    /// Milliseconds from this event (the start) to `end`; both must be
    /// recorded timing events that have completed.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        out(|ms| unsafe { sys::cuabi_event_get_elapsed_ms(self.as_raw(), end.as_raw(), ms) })
    }
}

/// Work captured from a stream ([`Stream::end_capture`]). Instantiate it to run it.
#[derive(Debug)]
pub struct Graph {
    handle: Owned<sys::cuabi_graph>,
}

impl Graph {
    /// The number of nodes (kernels, copies, memsets) in the graph.
    pub fn node_count(&self) -> Result<usize> {
        out(|count| unsafe { sys::cuabi_graph_get_node_count(self.as_raw(), count) })
    }

    /// Makes an executable graph that can be launched many times.
    pub fn instantiate(&self) -> Result<GraphExec> {
        let handle = unsafe { create(|out| sys::cuabi_graph_instantiate(self.as_raw(), out))? };
        Ok(GraphExec { handle })
    }
}

/// An instantiated graph ([`Graph::instantiate`]).
#[derive(Debug)]
pub struct GraphExec {
    handle: Owned<sys::cuabi_graph_exec>,
}

impl GraphExec {
    /// Queues the whole graph on `stream`.
    ///
    /// # Safety
    /// The graph replays the captured kernels and copies with the arguments
    /// they were captured with: every buffer and host memory they name must
    /// still be alive until `stream` has run the graph, and the kernels'
    /// safety conditions ([`Launch::run`](crate::Launch::run)) hold again.
    pub unsafe fn launch(&self, stream: &Stream) -> Result<()> {
        check(sys::cuabi_graph_exec_launch(self.as_raw(), stream.as_raw()))
    }
}
