//! Streams, events and graphs.

use std::fmt;
use std::ops::BitOr;

use cuabi_sys as sys;

use crate::error::{check, check_ready, Result};
use crate::handle::{create, Owned};

/// Flags for [`Device::create_stream_with`](crate::Device::create_stream_with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StreamFlags(u32);

impl StreamFlags {
    /// No flags: the stream synchronises with the default stream.
    pub const NONE: StreamFlags = StreamFlags(0);
    /// The stream does not synchronise with the default (NULL) stream.
    pub const NON_BLOCKING: StreamFlags = StreamFlags(sys::CUABI_STREAM_NON_BLOCKING);

    /// The raw `CUABI_STREAM_*` bits.
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl BitOr for StreamFlags {
    type Output = StreamFlags;
    fn bitor(self, rhs: StreamFlags) -> StreamFlags {
        StreamFlags(self.0 | rhs.0)
    }
}

/// Flags for [`Device::create_event_with`](crate::Device::create_event_with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EventFlags(u32);

impl EventFlags {
    /// No flags: a timing event whose synchronize spins.
    pub const NONE: EventFlags = EventFlags(0);
    /// No timing; cheaper, for synchronisation only.
    pub const DISABLE_TIMING: EventFlags = EventFlags(sys::CUABI_EVENT_DISABLE_TIMING);
    /// [`Event::synchronize`] sleeps instead of spinning.
    pub const BLOCKING_SYNC: EventFlags = EventFlags(sys::CUABI_EVENT_BLOCKING_SYNC);

    /// The raw `CUABI_EVENT_*` bits.
    pub fn bits(self) -> u32 {
        self.0
    }
}

impl BitOr for EventFlags {
    type Output = EventFlags;
    fn bitor(self, rhs: EventFlags) -> EventFlags {
        EventFlags(self.0 | rhs.0)
    }
}

/// How a stream capture interacts with other threads (the driver's
/// `CUstreamCaptureMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CaptureMode {
    /// Unsafe calls on any thread fail while any thread captures in this mode.
    #[default]
    Global,
    /// Unsafe calls on this thread fail during the capture.
    ThreadLocal,
    /// No calls are refused during the capture.
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> sys::cuabi_capture_mode {
        (match self {
            CaptureMode::Global => sys::CUABI_CAPTURE_GLOBAL,
            CaptureMode::ThreadLocal => sys::CUABI_CAPTURE_THREAD_LOCAL,
            CaptureMode::Relaxed => sys::CUABI_CAPTURE_RELAXED,
        }) as sys::cuabi_capture_mode
    }
}

/// A CUDA stream: work queued on it runs in order. Destroyed on drop (a
/// wrapped stream is only let go).
///
/// `Stream` is `Send` and `Sync`: several threads may queue work on one
/// stream; the driver orders it.
pub struct Stream {
    handle: Owned<sys::cuabi_stream>,
}

impl Stream {
    pub(crate) fn new(handle: Owned<sys::cuabi_stream>) -> Self {
        Stream { handle }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_stream {
        self.handle.get()
    }

    /// The raw `CUstream` (a `cudaStream_t`), for interop.
    pub fn cu_stream(&self) -> Result<u64> {
        let mut raw = 0u64;
        check(unsafe { sys::cuabi_stream_get_handle(self.as_raw(), &mut raw) })?;
        Ok(raw)
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

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("handle", &self.as_raw())
            .finish()
    }
}

/// A CUDA event: a point in a stream to wait for or to time. Destroyed on drop.
pub struct Event {
    handle: Owned<sys::cuabi_event>,
}

impl Event {
    pub(crate) fn new(handle: Owned<sys::cuabi_event>) -> Self {
        Event { handle }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_event {
        self.handle.get()
    }

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
        let mut ms = 0f32;
        check(unsafe { sys::cuabi_event_get_elapsed_ms(self.as_raw(), end.as_raw(), &mut ms) })?;
        Ok(ms)
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("handle", &self.as_raw())
            .finish()
    }
}

/// Work captured from a stream ([`Stream::end_capture`]). Instantiate it to run it.
pub struct Graph {
    handle: Owned<sys::cuabi_graph>,
}

impl Graph {
    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_graph {
        self.handle.get()
    }

    /// The number of nodes (kernels, copies, memsets) in the graph.
    pub fn node_count(&self) -> Result<usize> {
        let mut count = 0usize;
        check(unsafe { sys::cuabi_graph_get_node_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// Makes an executable graph that can be launched many times.
    pub fn instantiate(&self) -> Result<GraphExec> {
        let handle = unsafe { create(|out| sys::cuabi_graph_instantiate(self.as_raw(), out))? };
        Ok(GraphExec { handle })
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("handle", &self.as_raw())
            .finish()
    }
}

/// An instantiated graph ([`Graph::instantiate`]).
pub struct GraphExec {
    handle: Owned<sys::cuabi_graph_exec>,
}

impl GraphExec {
    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> sys::cuabi_graph_exec {
        self.handle.get()
    }

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

impl fmt::Debug for GraphExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphExec")
            .field("handle", &self.as_raw())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_match_the_header() {
        assert_eq!(
            StreamFlags::NON_BLOCKING.bits(),
            sys::CUABI_STREAM_NON_BLOCKING
        );
        assert_eq!(StreamFlags::default(), StreamFlags::NONE);
        let both = EventFlags::DISABLE_TIMING | EventFlags::BLOCKING_SYNC;
        assert_eq!(
            both.bits(),
            sys::CUABI_EVENT_DISABLE_TIMING | sys::CUABI_EVENT_BLOCKING_SYNC
        );
        assert_eq!(
            CaptureMode::Relaxed.raw(),
            sys::CUABI_CAPTURE_RELAXED as i32
        );
        assert_eq!(
            CaptureMode::default().raw(),
            sys::CUABI_CAPTURE_GLOBAL as i32
        );
    }

    #[test]
    fn stream_types_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Stream>();
        assert_send_sync::<Event>();
        assert_send_sync::<Graph>();
        assert_send_sync::<GraphExec>();
    }
}
