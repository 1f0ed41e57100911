"""Streams, events and graphs captured from a stream."""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional, Sequence, Tuple, Union

from ._api import CUABI_ERROR_NOT_READY, EventFlag
from ._hostmem import device_arg
from ._objects import (
    EventBase,
    FunctionBase,
    GraphBase,
    GraphExecBase,
    GraphNodeBase,
    StreamBase,
    _arg,
    register_owner,
)
from ._base import check_size, device_of
from ._buffer_cache import CAPTURES, stream_closing
from ._loader import Backend

if TYPE_CHECKING:
    from ._device import Device
    from ._program import Kernel

__all__ = [
    "Stream",
    "Event",
    "Graph",
    "GraphExec",
    "stream_arg",
    "call_ordered",
    "event_arg",
    "event_flags",
]

def stream_arg(stream: Optional["Stream"], backend: Backend) -> Any:
    """The ``cuabi_stream`` argument for ``stream`` (None: the default stream)."""
    if stream is None:
        return backend.NULL
    return _arg(stream, "cuabi_stream", StreamBase, "stream", backend, True)


def call_ordered(b: Backend, func: str, stream: Optional["Stream"], *args: Any) -> None:
    """``func(*args)``; with a ``stream``, its ``*_async`` form in order on it."""
    if stream is None:
        b.call(func, *args)
    else:
        b.call(func + "_async", *args, stream_arg(stream, b))


def event_arg(event: "Event", backend: Backend, what: str = "event") -> Any:
    """The ``cuabi_event`` argument for ``event``; another object is refused
    here (cffi would raise its own TypeError for another kind of handle,
    ctypes would pass it to the core)."""
    return _arg(event, "cuabi_event", EventBase, what, backend)


def event_flags(timing: Optional[bool], blocking_sync: bool, interprocess: bool) -> int:
    """The ``cuabi_event_flags`` of these options; ``timing`` None is True
    unless the event is interprocess (which needs timing off)."""
    if timing is None:
        timing = not interprocess
    flags = 0 if timing else int(EventFlag.DISABLE_TIMING)
    if blocking_sync:
        flags |= int(EventFlag.BLOCKING_SYNC)
    if interprocess:
        flags |= int(EventFlag.INTERPROCESS)
    return flags


class Stream(StreamBase):
    """A CUDA stream (``cuabi_stream``): work on it runs in order.

    Create with :meth:`Device.create_stream`, or wrap someone else's stream
    (CuPy, PyTorch) with :meth:`Device.wrap_stream`."""

    # Said when another object is passed for a stream.
    _arg_hint = " (wrap a foreign stream with Device.wrap_stream)"

    # cuabi_stream_query(handle) as (f, arg), made on the first query().
    _query: Tuple[Callable[[Any], int], Any]

    def __init__(
        self, backend: Backend, handle: Any, device: "Device", owner: Any = None
    ) -> None:
        super().__init__(backend, handle)
        self.device = device
        self._owner = owner  # a wrapped foreign stream object, kept alive
        # Kernels and prepared launches holding launch plans made on this
        # stream; a plan keeps its stream alive in the core, so they drop
        # theirs when this stream is closed (launching then fails).
        self._plan_users: "weakref.WeakSet[Any]" = weakref.WeakSet()

    @classmethod
    def _made_by(cls, backend: Backend, handle: Any, by: Any) -> Any:
        return cls(backend, handle, device_of(by))

    # True between a begin_capture made here and its end_capture (counted in
    # CAPTURES, which turns the buffer cache off meanwhile).
    _capturing = False

    def _on_release(self) -> None:
        if self._capturing:
            self._capturing = False
            CAPTURES[0] -= 1
        try:
            # The blocks the buffer cache holds for this stream are freed in
            # order on it while its handle still lives.
            stream_closing(self)
        except Exception:  # interpreter shutdown
            pass
        try:
            users = list(self._plan_users)
        except Exception:  # interpreter shutdown
            return
        for user in users:
            user._forget_plans()

    def __cuda_stream__(self) -> Tuple[int, int]:
        """The CUDA stream protocol: (version, CUstream)."""
        return (0, self.ptr)

    def query(self) -> bool:
        """True when all work on the stream is done, False while some runs."""
        try:
            query, arg = self._query
        except AttributeError:  # first query: the call made once (see Backend.handle_caller)
            query, arg = self._query = self._b.handle_caller("cuabi_stream_query", self._handle)
        status = query(arg)
        if status == CUABI_ERROR_NOT_READY:  # an answer, not a failure: nothing raised
            return False
        if status:
            raise self._b.error(status, "cuabi_stream_query")
        return True

    def launch_host_func(self, fn: Callable[..., Any], *args: Any) -> None:
        """Runs ``fn(*args)`` in stream order, once the work queued before it
        is done, on a driver thread (holding the GIL). The callable and its
        arguments are kept alive until it has run.

        ``fn`` must not wait on the GPU (no synchronize, no synchronous
        copy), nor for another thread that may call CUDA meanwhile: a
        release on that thread (a garbage collection can run one) may wait
        for the driver's host-function thread, which ``fn`` is holding. An exception it raises does not propagate there: the stream's
        next :meth:`synchronize` raises :class:`~cuabi.HostFunctionError`
        with the exception's type and text ("ValueError: bad row"), once;
        work after the host function still runs.

        >>> stream.launch_host_func(done.append, "step 1")"""
        self._b.launch_host_func(self._handle, fn, args)

    def record(self, event: Optional["Event"] = None) -> "Event":
        """Records ``event`` (a new one when None) on this stream and returns it."""
        if event is None:
            event = self.device.create_event()
        return event.record(self)

    # begin_capture, begin_capture_to_graph: StreamBase, which calls
    # _capture_begun once either succeeded.
    def _capture_begun(self) -> None:
        # While any capture begun here runs, the buffer cache is bypassed:
        # allocations and frees become the graph's nodes (see _buffer_cache).
        if not self._capturing:
            self._capturing = True
            CAPTURES[0] += 1

    def end_capture(self) -> "Graph":
        """Ends the capture and returns the graph."""
        try:
            graph = super().end_capture()
        finally:
            if self._capturing:
                self._capturing = False
                CAPTURES[0] -= 1
        return graph

    @contextlib.contextmanager
    def capture(self, mode: Union[str, int] = "global") -> Iterator["_Capture"]:
        """``with stream.capture() as cap: ...`` then ``cap.graph``."""
        cap = _Capture()
        self.begin_capture(mode)
        try:
            yield cap
        except BaseException:
            with contextlib.suppress(Exception):
                self.end_capture().close()
            raise
        cap.graph = self.end_capture()


class _Capture:
    graph: Optional["Graph"] = None


class Event(EventBase):
    """A CUDA event (``cuabi_event``): a point in a stream, for ordering and timing.

    >>> ev = Event(dev)                          # or dev.create_event(), stream.record()
    >>> shared = Event(dev, interprocess=True)   # timing off; shared.ipc_handle()

    ``timing=False`` makes a cheaper event, for ordering only;
    ``blocking_sync=True`` makes :meth:`synchronize` sleep instead of spin;
    ``interprocess=True`` makes one another process can open with
    :meth:`open_ipc` (it needs timing off, the default then)."""


    device: "Device"

    def __init__(
        self,
        device: Union["Device", Backend],
        handle: Any = None,
        owner: Optional["Device"] = None,
        *,
        timing: Optional[bool] = None,
        blocking_sync: bool = False,
        interprocess: bool = False,
    ) -> None:
        if isinstance(device, Backend):  # Event(backend, handle, device): made elsewhere
            if owner is None:
                raise TypeError("Event(backend, handle, device) needs the device")
            super().__init__(device, handle)
            self.device = owner
            return
        dev = device_arg(device)
        if handle is not None or owner is not None:
            raise TypeError("Event(device, ...) takes its options as keywords")
        self._own(EventBase.create(dev, event_flags(timing, blocking_sync, interprocess)))
        self.device = dev

    def __sub__(self, start: "Event") -> float:
        """``end - start``: the milliseconds between two events."""
        if not isinstance(start, Event):
            return NotImplemented
        return start.elapsed_ms(self)


class Graph(GraphBase):
    """A graph captured from a stream (``cuabi_graph``)."""

    device: "Device"

    # -- graphs built node by node -------------------------------------------
    # The node kinds without an idiom (copies, fills, events, child graphs,
    # allocations, conditional nodes, clone, DOT dump, flags) are
    # GraphBase's generated methods; kernel and host nodes are here.

    def add_kernel_node(
        self,
        kernel: "Kernel",
        grid: Any,
        block: Any = None,
        args: Sequence[Any] = (),
        types: Optional[Sequence[Any]] = None,
        after: Optional[Any] = None,
        shared_mem: int = 0,
        **options: Any,
    ) -> Any:
        """A kernel node running ``kernel`` over ``grid`` x ``block`` (or a
        :class:`LaunchConfig` as ``grid``) with ``args`` packed as a launch
        packs them; ``after`` (a node of this graph, or None). The
        configuration and the arguments are checked as a launch's are."""
        b = self._b
        node = _kernel_node(kernel, b, grid, block, args, types, shared_mem, options)
        h = b.get("cuabi_graph_add_kernel_node", self._handle, _node_arg(after, b), *node,
                  out="cuabi_graph_node")
        return GraphNodeBase._from_handle(b, h)

    def add_host_node(self, fn: Callable[..., Any], *args: Any, after: Optional[Any] = None) -> Any:
        """A node calling ``fn(*args)`` at every launch of the graph, on a
        driver thread (holding the GIL). An exception it raises is reported
        as a stream's host function's is: the next :meth:`Stream.synchronize`
        of the stream the graph ran on raises :class:`~cuabi.HostFunctionError`.
        ``fn`` and ``args`` are kept for the life of the process (the graph
        may run as long as any executable graph made from it)."""
        b = self._b
        h = b.graph_host_node(self._handle, _node_arg(after, b), fn, args)
        return GraphNodeBase._from_handle(b, h)


def _kernel_node(
    kernel: Any, b: Backend, grid: Any, block: Any, args: Sequence[Any],
    types: Optional[Sequence[Any]], shared_mem: int, options: Dict[str, Any],
) -> Tuple[Any, Any, bytes, int]:
    """A kernel node's kernel, ``const cuabi_launch_config*`` and argument
    block (with its size) arguments, made as a launch makes them
    (Graph.add_kernel_node, GraphExec.set_kernel_node)."""
    if not isinstance(kernel, FunctionBase) or not hasattr(kernel, "_node_launch"):
        raise TypeError(f"kernel must be a cuabi.Kernel, not {type(kernel).__name__}")
    cfg, block_bytes = kernel._node_launch(grid, block, args, types, shared_mem, options)
    return kernel._arg(b), cfg, block_bytes, len(block_bytes)


def _node_arg(node: Optional[Any], b: Backend, what: str = "after") -> Any:
    """The ``cuabi_graph_node`` argument for ``node`` (None: NULL, which
    ``after`` allows and the core refuses as an update's ``node``)."""
    if node is None:
        return b.NULL
    if not isinstance(node, GraphNodeBase):
        also = " or None" if what == "after" else ""
        raise TypeError(f"{what} must be a graph node{also}, not {type(node).__name__}")
    return node._arg(b)


class GraphExec(GraphExecBase):
    """An instantiated graph (``cuabi_graph_exec``)."""

    device: "Device"

    # launch, upload: GraphExecBase.
    __call__ = GraphExecBase.launch

    def set_kernel_node(
        self,
        node: Any,
        kernel: "Kernel",
        grid: Any,
        block: Any = None,
        args: Sequence[Any] = (),
        types: Optional[Sequence[Any]] = None,
        shared_mem: int = 0,
        **options: Any,
    ) -> None:
        """Gives kernel node ``node`` (of the graph this was instantiated
        from) ``kernel`` over ``grid`` x ``block`` with ``args``, packed and
        checked as :meth:`Graph.add_kernel_node` packs and checks them, in
        this executable graph only: its next launch uses them. The kernel's
        signature stays the node's, and launch attributes (clusters,
        cooperative, priority) stay as instantiated."""
        b = self._b
        given = _kernel_node(kernel, b, grid, block, args, types, shared_mem, options)
        b.call("cuabi_graph_exec_set_kernel_node", self._handle, _node_arg(node, b, "node"), *given)

    def set_host_node(self, node: Any, fn: Callable[..., Any], *args: Any) -> None:
        """Makes host node ``node`` call ``fn(*args)`` in this executable
        graph, its exceptions reported as :meth:`Graph.add_host_node`'s are;
        ``fn`` and ``args`` are kept for the life of the process."""
        b = self._b
        b.exec_host_node(self._handle, _node_arg(node, b, "node"), fn, args)

    def set_kernel_node_args(
        self,
        index: int,
        kernel: "Kernel",
        args: Sequence[Any],
        types: Optional[Sequence[Any]] = None,
    ) -> None:
        """Gives kernel node ``index`` (capture order, from 0) new arguments
        in this instantiated graph only; its next launch uses them, without
        instantiating again. ``kernel`` is the node's kernel and ``args`` are
        packed as a launch of it packs them:

        >>> with stream.capture() as cap:
        ...     saxpy(blocks, threads, (np.float32(1), x, y, out, n), stream=stream)
        >>> exec_ = cap.graph.instantiate()
        >>> for a in range(100):
        ...     exec_.set_kernel_node_args(0, saxpy, (np.float32(a), x, y, out, n))
        ...     exec_.launch(stream)"""
        if not isinstance(kernel, FunctionBase) or not hasattr(kernel, "_node_args"):
            raise TypeError(f"kernel must be a cuabi.Kernel, not {type(kernel).__name__}")
        block = kernel._node_args(args, types)
        self._b.call(
            "cuabi_graph_exec_set_kernel_node_args",
            self._handle,
            check_size(index, "index"),
            kernel._arg(self._b),
            block,
            len(block),
        )


register_owner("cuabi_stream", Stream)
register_owner("cuabi_event", Event)
register_owner("cuabi_graph", Graph)
register_owner("cuabi_graph_exec", GraphExec)
