"""Devices, and the library-wide queries."""

from __future__ import annotations

import concurrent.futures
import functools
import math
import operator
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _dlpack
from ._api import CompileFlag, Output
from ._fork import note_cuda_initialised
from ._base import (
    as_bytes,
    check_i32,
    check_size,
    named,
    opt_bytes,
    resolve_backend,
)
from ._link import Linker
from ._loader import Backend
from ._memory import (
    DeviceBuffer,
    MemoryPool,
    PinnedBuffer,
    Shape,
    _dtype_info,
    _shape_for,
    foreign_memory,
    host_address,
)
from ._api import BufferKind
from ._buffer_cache import CAPTURES, BufferCache, cache_for, trim_device
from .errors import OutOfMemoryError
from ._background import submit
from ._objects import (
    BufferBase,
    DeviceBase,
    EventBase,
    ModuleBase,
    StreamBase,
    device_count,
    driver_path,
    driver_version,
    fill_compile_desc,
    init,
    nvrtc_path,
    nvrtc_version,
    register_owner,
    version,
    version_string,
)
from ._options import CompileOptions, OptionsArg, desc_fields, merged_options
from ._program import Headers, Module, normalize_headers
from ._stream import Event, Stream, event_flags, stream_arg

__all__ = [
    "Device",
    "init",
    "device_count",
    "version",
    "version_string",
    "driver_version",
    "driver_path",
    "nvrtc_version",
    "nvrtc_path",
]

BackendArg = Union[Backend, str, None]


_OUTPUTS = {o.name.lower(): o for o in Output}

# CUdevice_P2PAttribute values by name, for Device.peer_attribute.
PEER_ATTRIBUTES: Dict[str, int] = {
    "performance_rank": 1,
    "access_supported": 2,
    "native_atomic_supported": 3,
    "cuda_array_access_supported": 4,
}


class Device(DeviceBase):
    """A GPU and its primary context (``cuabi_device``), the one CuPy and
    PyTorch use too. Every other object is made from a device.

    >>> dev = Device(0)
    >>> mod = dev.compile(source, options=["-std=c++17"])
    >>> buf = dev.to_device(np.arange(10, dtype=np.float32))

    Raises DriverNotFoundError without a driver and NoDeviceError for an
    ordinal past the last device."""

    def __init__(self, ordinal: int = 0, *, backend: BackendArg = None) -> None:
        b = resolve_backend(backend)
        ordinal = check_i32(ordinal, "ordinal")
        self._own(DeviceBase.get(ordinal, backend=b))
        self._ordinal = ordinal
        note_cuda_initialised()

    # -- properties (name, compute_capability, total_memory, memory_info,
    # context, stream_priority_range: DeviceBase) ---------------------------
    @property
    def ordinal(self) -> int:
        """The device's ordinal (kept: it reads after close() too)."""
        return self._ordinal

    @property
    def arch(self) -> str:
        """``"sm_XY"`` for this device."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def multiprocessor_count(self) -> int:
        """The number of multiprocessors (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)."""
        return self.attribute(16)

    # -- code --------------------------------------------------------------
    def compile(
        self,
        source: Union[str, bytes],
        options: OptionsArg = (),
        headers: Headers = None,
        name_expressions: Iterable[str] = (),
        *,
        name: Optional[str] = None,
        output: str = "cubin",
        cache: bool = True,
        **typed: Any,
    ) -> Module:
        """Compiles CUDA C++ for this device and loads it
        (``cuabi_module_compile``): the target is the device's own
        architecture unless the options name one; images go through the
        on-disk cache unless ``cache=False``. ``options`` are NVRTC option
        strings or a :class:`~cuabi.CompileOptions`, and the typed options
        are keywords too (``std=17``, ``defines={"N": 4}``,
        ``fast_math=True`` ...; an unknown one raises TypeError). ``headers``
        maps include names to sources; kernels can then be fetched by their
        name expressions. Raises CompileError with ``.log``; the module's
        :attr:`~Module.compile_log` keeps the warnings of a successful one."""
        call = self._compile_call(
            source, *merged_options(options, typed), headers, name_expressions,
            name, output, cache,
        )
        return call()

    def compile_async(
        self,
        source: Union[str, bytes],
        options: OptionsArg = (),
        headers: Headers = None,
        name_expressions: Iterable[str] = (),
        *,
        name: Optional[str] = None,
        output: str = "cubin",
        cache: bool = True,
        executor: Optional[concurrent.futures.Executor] = None,
        **typed: Any,
    ) -> "concurrent.futures.Future[Module]":
        """:meth:`compile` in the background: a Future whose result is the
        Module (or whose exception is the CompileError). Runs on a small
        shared executor unless ``executor`` is given; the GIL is released
        while NVRTC and the driver work, so Python threads go on. The
        arguments are checked now: a wrong one raises here, not from the
        future.

        >>> future = dev.compile_async(source, std=17)
        >>> ...                                   # other work meanwhile
        >>> kernel = future.result().get_kernel("saxpy")"""
        call = self._compile_call(
            source, *merged_options(options, typed), headers, name_expressions,
            name, output, cache,
        )
        return submit(call, on=executor)

    def _compile_call(
        self,
        source: Union[str, bytes],
        opts: CompileOptions,
        raw: List[bytes],
        headers: Headers,
        name_expressions: Iterable[str],
        name: Optional[str],
        output: str,
        cache: bool,
    ) -> "functools.partial[Module]":
        """Checks and converts every argument of a compile; the result makes
        the foreign call (on whichever thread calls it)."""
        b = self._b
        if output not in _OUTPUTS:
            choices = " or ".join(repr(o) for o in _OUTPUTS)
            raise ValueError(f"output must be {choices}, not {output!r}")
        srcs, names = normalize_headers(headers)
        exprs = [as_bytes(e, "name expression") for e in name_expressions]
        desc, keep = fill_compile_desc(
            b,
            source=as_bytes(source, "source"),
            name=opt_bytes(name, "name"),
            header_sources=srcs,
            header_names=names,
            name_expressions=exprs,
            output=_OUTPUTS[output],
            flags=0 if cache else CompileFlag.NO_CACHE,
            **desc_fields(opts, raw),
        )
        return functools.partial(_compile, self, desc, (opts, keep))

    def link(
        self,
        *inputs: Any,
        link_backend: Any = "auto",
        lto: bool = False,
        options: Any = (),
        cache: bool = True,
    ) -> Module:
        """Links ``inputs`` for this device and loads the result: the one
        call from compiled programs to a module. Each input is what
        :meth:`Linker.add <cuabi.Linker.add>` takes (a compiled Program,
        image bytes, a file path, or a ``(data, kind)`` pair); the keywords
        are :class:`~cuabi.Linker`'s. A failed link raises CompileError with
        the linker's ``.log``. For the log of a successful link or the
        linked image, use a Linker.

        >>> mod = dev.link(caller, callee)         # programs compiled with relocatable=True"""
        with Linker(
            self, link_backend=link_backend, lto=lto, options=options, cache=cache
        ) as linker:
            for item in inputs:
                linker.add(item)
            return linker.link()

    def load_module(self, image: Union[bytes, str, "os.PathLike[str]"]) -> Module:
        """Loads CUBIN, PTX or fatbin: ``bytes`` are the image, a ``str`` or
        path-like is a file name."""
        if not isinstance(image, (bytes, bytearray, memoryview)):
            return ModuleBase.load_file(self, os.fsencode(image))
        return ModuleBase.load_data(self, bytes(image))

    # -- memory (host_alloc: DeviceBase) ----------------------------------
    # The device's BufferCache, found on first use (see buffer_cache).
    _cache_obj: Optional[BufferCache] = None

    @property
    def buffer_cache(self) -> BufferCache:
        """The cache of freed stream-ordered blocks of this device
        (:class:`~cuabi.BufferCache`, shared by every Device object of the
        same ordinal and backend): what it holds, its hits, ``trim()``."""
        cache = self._cache_obj
        if cache is None:
            cache = self._cache_obj = cache_for(self._b, self._ordinal)
        return cache

    def alloc(
        self,
        nbytes: int,
        dtype: Any = None,
        shape: Shape = None,
        *,
        stream: Optional[Stream] = None,
        pool: Optional[MemoryPool] = None,
    ) -> DeviceBuffer:
        """``nbytes`` of device memory (typed when ``dtype``/``shape`` are given).

        Without ``stream`` and ``pool``: ``cuMemAlloc``, synchronous; close()
        (or collection) frees it (``cuMemFree``).

        With ``stream`` or ``pool``, the allocation is stream-ordered
        (``cuabi_buffer_alloc_async``): from ``pool`` (None: the device's
        default pool) in order on ``stream`` (None: the default stream). It
        may be used by work queued on that stream afterwards (other streams
        wait for an event first), costs no device synchronisation, and can
        be captured into a graph. Free it in order with
        :meth:`DeviceBuffer.free`; a close() (or collection) frees it in
        order on the stream it was allocated on.

        From the default pool on a stream, a block of exactly ``nbytes`` that
        was freed on that stream is taken from :attr:`buffer_cache` without a
        call (:class:`~cuabi.BufferCache`). An allocation that fails for lack
        of memory trims the cache and is tried once more."""
        b = self._b
        cache = self._cache_obj
        if cache is None:
            cache = self.buffer_cache
        if pool is None and stream is not None:
            # The cache first, without a call: a block of this size freed on
            # this stream (the hot path, kept to attribute reads).
            if (
                stream.__class__ is Stream
                and nbytes.__class__ is int
                and cache._on
                and not CAPTURES[0]
                and stream._b is b
                and not self._closed
            ):
                sh = stream._handle
                entries = cache._free.get((sh, nbytes))
                # A typed one takes its block below, once its type is checked.
                if entries and dtype is None and shape is None:
                    try:
                        h, ptr, origin = entries.pop()
                    except IndexError:  # taken by another thread meanwhile
                        pass
                    else:
                        cache._held -= nbytes
                        cache.hits += 1
                        buf = _new_buffer(DeviceBuffer)
                        buf._b = b
                        buf._handle = h
                        buf.device = self
                        buf._ptr = ptr
                        buf._nbytes = nbytes
                        buf._kind = _STREAM_ORDERED
                        buf.shape = (nbytes,)
                        buf._cache = cache
                        buf._stream = stream
                        buf._origin = origin
                        return buf
        nbytes = check_size(nbytes, "nbytes")
        typed = None if dtype is None and shape is None else _typed(dtype, shape, nbytes)
        ordered = stream is not None or pool is not None
        if pool is not None and not isinstance(pool, MemoryPool):
            raise TypeError(
                f"pool must be a cuabi.MemoryPool or None, not {type(pool).__name__}"
            )
        s = stream_arg(stream, b) if ordered else None
        cached = (
            pool is None
            and stream is not None
            and stream._b is b
            and cache._on
            and not CAPTURES[0]
            and cache._dead_handle(self) is not None
        )
        entry = cache._take(s, nbytes) if cached and not self._closed else None
        origin = s
        if entry is not None:
            h, ptr, origin = entry
        elif ordered:
            h, ptr = self._alloc_with_pointer(
                cache, "cuabi_buffer_alloc_async_with_pointer", self._handle, nbytes,
                b.NULL if pool is None else pool._arg(b), s,
            )
            if cached:
                cache.misses += 1
        else:  # cuMemAlloc: one call answering the handle and the address.
            h, ptr = self._alloc_with_pointer(cache, "cuabi_buffer_alloc_with_pointer",
                                              self._handle, nbytes)
        try:
            buf = DeviceBuffer._made(b, h, ptr, nbytes, self, typed,
                                     _STREAM_ORDERED if ordered else BufferKind.DEVICE)
        except BaseException:
            b.lib.cuabi_buffer_release(h)
            raise
        if pool is not None:
            buf.pool = pool
        elif cached:
            buf._cache = cache  # freed into the cache (see DeviceBuffer.free)
            buf._stream = stream
            buf._origin = origin
        return buf

    def _alloc_with_pointer(self, cache: BufferCache, func: str, *args: Any) -> Tuple[Any, int]:
        """(handle, address) of one allocation call; a failure for lack of
        memory trims the cache (waiting for its streams) and tries once more."""
        b = self._b
        call = getattr(b.lib, func)
        for attempt in (0, 1):
            hbox, pbox = b.out("cuabi_buffer"), b.out("uint64_t")
            status = call(*args, b.ref(hbox), b.ref(pbox))
            if not status:
                return b.value(hbox), int(b.value(pbox))
            err = b.error(status, func)
            if attempt or not isinstance(err, OutOfMemoryError) or not cache._free:
                raise err
            if not cache._trim_for_memory():
                raise err
        raise AssertionError("unreachable")

    def reset(self) -> None:
        """Destroys the primary context's allocations, modules, streams and
        events and resets its state (``cuabi_device_reset``), in this process
        and in every library sharing the primary context. The blocks of
        :attr:`buffer_cache` are freed first."""
        trim_device(self._b, self._ordinal)
        super().reset()

    def alloc_managed(
        self,
        nbytes: int,
        attach_host: bool = False,
        dtype: Any = None,
        shape: Shape = None,
    ) -> DeviceBuffer:
        """``nbytes`` of managed (unified) memory: one address valid on the
        host and on every device, migrated on demand. Its
        :meth:`~DeviceBuffer.host_array` is a NumPy array over it (see there
        for when the host may touch it); :meth:`~DeviceBuffer.prefetch` and
        :meth:`~DeviceBuffer.advise` steer where it lives. ``attach_host``:
        attached to the host at first (only the host, and streams it is
        attached to, may touch it)."""
        return BufferBase.alloc_managed(self, nbytes, attach_host)._typed(dtype, shape)

    def alloc_pitched(
        self, width_bytes: int, height: int, element_size: int = 4
    ) -> DeviceBuffer:
        """``height`` rows of at least ``width_bytes`` each, every row padded
        so that rows of ``element_size`` (4, 8 or 16) byte elements stay
        aligned for the device. The row pitch is the buffer's
        :attr:`~DeviceBuffer.pitch`; its size is pitch * height. Copy rows in
        and out with :func:`cuabi.copy_3d`, or read them as a texture."""
        buf = BufferBase.alloc_pitched(self, width_bytes, height, element_size)
        buf._rows = (operator.index(width_bytes), operator.index(height))  # checked by the call
        return buf

    def alloc_growable(
        self, nbytes: int, reserve: int, dtype: Any = None, shape: Shape = None
    ) -> DeviceBuffer:
        """A buffer that grows in place (:meth:`DeviceBuffer.grow`): ``reserve``
        bytes of addresses reserved once, ``nbytes`` (0 allowed) of memory
        mapped behind them now and more as it grows, so its address and
        contents stay. Both are multiples of :attr:`vm_granularity` (the
        minimum). It is a DeviceBuffer like any other (copies, kernels,
        DLPack); its size is what is mapped."""
        return BufferBase.alloc_growable(self, nbytes, reserve)._typed(dtype, shape)

    @property
    def default_memory_pool(self) -> MemoryPool:
        """The device's default pool: the one ``alloc(n, stream=s)`` uses
        when given no pool, shared with the CUDA runtime's cudaMallocAsync
        (and so with CuPy's and PyTorch's stream-ordered allocators).
        Closing this object leaves the pool itself alone."""
        pool = super().default_memory_pool
        pool.is_default = True
        return pool

    def empty(self, shape: Union[int, Sequence[int]], dtype: Any = "float32") -> DeviceBuffer:
        """An uninitialised typed buffer of ``shape`` and ``dtype``."""
        _, _, itemsize = _dtype_info(dtype)
        dims = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
        if any(d < 0 for d in dims):
            raise ValueError(f"negative dimension in shape {dims}")
        return self.alloc(itemsize * math.prod(dims), dtype, dims)

    def zeros(self, shape: Union[int, Sequence[int]], dtype: Any = "float32") -> DeviceBuffer:
        """A typed buffer of ``shape`` and ``dtype`` set to zero bytes."""
        buf = self.empty(shape, dtype)
        buf.memset(0)
        return buf

    def to_device(self, array: Any, stream: Optional[Stream] = None) -> DeviceBuffer:
        """A new buffer holding a copy of a host array (dtype and shape kept)."""
        import numpy as np

        arr = np.ascontiguousarray(array)
        buf = self.alloc(
            max(arr.nbytes, 1), arr.dtype, arr.shape if arr.nbytes else (0,)
        )
        if arr.nbytes:
            buf.copy_from_host(arr, stream=stream)
        return buf

    def wrap_buffer(self, obj: Any, nbytes: Optional[int] = None) -> DeviceBuffer:
        """Device memory owned by someone else, without a copy and without
        taking ownership: ``obj`` is a CuPy/PyTorch/Numba array (CUDA Array
        Interface or DLPack), or an integer address with ``nbytes``. The
        object is kept alive by the buffer."""
        if (
            nbytes is None
            and getattr(obj, "__cuda_array_interface__", None) is None
            and hasattr(obj, "__dlpack__")
        ):
            # DLPack alone: taken over through the core, which checks it.
            return from_dlpack(obj, backend=self._b)
        ptr, nbytes, dtype, shape, keep = foreign_memory(obj, nbytes)
        buf = BufferBase.wrap(self, ptr, nbytes)
        return buf._typed(dtype, shape if dtype is not None else None, keep)

    def pin(self, array: Any) -> PinnedBuffer:
        """Pins ``array`` (a writable, C-contiguous NumPy array or buffer) in
        place until the returned PinnedBuffer is closed; it keeps the array."""
        address, nbytes, keep = host_address(array, writable=True)
        b = self._b
        h = b.get(
            "cuabi_host_buffer_register",
            self._handle,
            b.pointer(address),
            nbytes,
            out="cuabi_host_buffer",
        )
        return PinnedBuffer(b, h, self, array)

    register = pin

    # -- streams and events (create_stream: DeviceBase) ---------------------
    def wrap_stream(self, stream: Any) -> Stream:
        """A Stream over someone else's CUstream (not destroyed on release):
        an int, or an object with ``__cuda_stream__`` (cuda.core), ``.ptr``
        (CuPy) or ``.cuda_stream`` (PyTorch), which is kept alive."""
        if isinstance(stream, int):
            raw = stream
        elif hasattr(stream, "__cuda_stream__"):
            raw = int(stream.__cuda_stream__()[1])
        elif hasattr(stream, "cuda_stream"):
            raw = int(stream.cuda_stream)
        elif hasattr(stream, "ptr"):
            raw = int(stream.ptr)
        else:
            raise TypeError(f"cannot find a CUstream in a {type(stream).__name__}")
        wrapped = StreamBase.wrap(self, raw)
        wrapped._owner = stream  # kept alive
        return wrapped

    def create_event(
        self,
        timing: Optional[bool] = None,
        blocking_sync: bool = False,
        interprocess: bool = False,
    ) -> Event:
        """A new event: ``Event(self, timing=..., blocking_sync=...,
        interprocess=...)``. ``timing=False`` is cheaper, for ordering only;
        ``interprocess=True`` makes one another process can open
        (:meth:`Event.ipc_handle`), which needs timing off (the default then)."""
        return EventBase.create(self, event_flags(timing, blocking_sync, interprocess))

    # -- peers ---------------------------------------------------------------------
    # can_access_peer, enable_peer_access, disable_peer_access: DeviceBase.
    def peer_attribute(self, other: DeviceBase, attribute: Union[int, str]) -> int:
        """A CUdevice_P2PAttribute of this device and ``other``: its value, or
        its name ("performance_rank", "access_supported",
        "native_atomic_supported", "cuda_array_access_supported"). A device
        and itself raises InvalidArgumentError."""
        return self.get_peer_attribute(other, named(
            attribute, PEER_ATTRIBUTES, "peer attribute", "attribute",
            " (or any CUdevice_P2PAttribute value)"))

    def __repr__(self) -> str:
        return f"<cuabi.Device {self.ordinal}{' closed' if self._closed else ''}>"


register_owner("cuabi_device", Device)


_STREAM_ORDERED = BufferKind.STREAM_ORDERED
_new_buffer = object.__new__


def _typed(dtype: Any, shape: Shape, nbytes: int) -> Tuple[Any, str, Tuple[int, ...]]:
    """(dtype, typestr, shape) of a typed buffer of ``nbytes``, checked."""
    dt, typestr, itemsize = _dtype_info(dtype)
    return dt, typestr, _shape_for(shape, nbytes, itemsize, "the buffer")


def _compile(device: Device, desc: Any, keep: Any) -> Module:
    """A compile whose arguments are checked and converted: the one foreign
    call (``cuabi_module_compile``, the GIL released), its module wrapped.
    ``keep`` holds what the description points to."""
    b = device.backend
    h = b.get("cuabi_module_compile", device.handle, desc, out="cuabi_module")
    return Module(b, h, device)


def from_dlpack(
    obj: Any,
    *,
    stream: Optional[Stream] = None,
    read_only: bool = False,
    backend: Any = None,
) -> DeviceBuffer:
    """Takes the device memory of a DLPack producer (a PyTorch, CuPy or JAX
    array, a DLPack capsule) over as a :class:`DeviceBuffer`, without a copy,
    through the core (cuabi_buffer_import_dlpack), which checks the tensor's
    device, version, dtype, strides and read-only flag and names what it
    refuses. The buffer keeps the producer's tensor alive; its deleter runs
    once, when the buffer's last reference goes.

    ``stream``: the stream that will use the memory; the producer is asked
    to order it after its own work (DLPack's ``__dlpack__(stream=...)``).
    ``read_only``: a read-only tensor is taken only with ``read_only=True``.
    A contiguous tensor of a NumPy element type gives a typed buffer, any
    other the bytes it spans."""
    if hasattr(obj, "__dlpack__"):
        consumer = None if stream is None else (stream.ptr or 1)
        capsule = _dlpack._ask_capsule(obj, consumer)
    else:
        capsule = obj  # a capsule itself
    tensor = _dlpack.capsule_tensor(capsule)
    b = resolve_backend(backend)
    handle = b.handle(_dlpack.import_capsule(b, capsule, read_only), "cuabi_buffer")
    try:
        ordinal = int(b.get("cuabi_buffer_get_device_ordinal", handle, out="int32_t"))
        device = Device(ordinal, backend=b)
        typed = tensor.contiguous and tensor.typestr is not None
        return DeviceBuffer(
            b,
            handle,
            device,
            tensor.typestr if typed else None,
            tensor.shape if typed else None,
            None,
        )
    except BaseException:
        b.lib.cuabi_buffer_release(handle)
        raise
