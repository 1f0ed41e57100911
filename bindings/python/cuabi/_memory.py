"""Device memory (plain, stream-ordered, managed, pitched, shared with other
processes), memory pools, page-locked host memory, and their interop
protocols."""

from __future__ import annotations

import math
import operator
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union

from . import _dlpack
from ._api import (
    CUABI_LOCATION_HOST,
    BufferKind,
    CopyPath,
    MemoryPoolFlag,
)
from ._objects import (
    BufferBase,
    HostBufferBase,
    MemoryPoolBase,
    register_owner,
)
from ._base import (
    UINT32_MAX,
    Resource,
    _acquire,
    _release,
    _release_lock,
    check_int,
    check_size,
    check_u32,
    device_of,
)
from ._loader import Backend
from ._dlpack import _compact_strides
from ._packing import register_pointer_type
from ._hostmem import device_arg, host_address, ipc_handle_arg, location_arg
from ._stream import Stream, call_ordered, stream_arg
from . import _buffer_cache
from ._buffer_cache import CAPTURES, BufferCache
from .errors import InvalidArgumentError, InvalidHandleError

if TYPE_CHECKING:
    from ._device import Device

__all__ = [
    "DeviceBuffer",
    "DeviceArray",
    "PinnedBuffer",
    "MemoryPool",
    "foreign_memory",
    "host_address",
    "location_arg",
    "ipc_handle_arg",
    "device_arg",
    "LOCATION_HOST",
]

Shape = Union[int, Sequence[int], None]

# The host as a location for DeviceBuffer.prefetch and DeviceBuffer.advise
# (CUABI_LOCATION_HOST); the string "host" says the same.
LOCATION_HOST = CUABI_LOCATION_HOST


def _fill_value(value: Any, dtype: Any) -> Tuple[int, int]:
    """(the ``uint32_t value``, ``element_size``) of a fill of ``value`` as
    ``dtype``: a NumPy dtype (the value converted to its bits), or an element
    size in bytes (the value is those bits already). The element size and
    the bits above it are the core's to check."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        size = check_u32(dtype, "element_size")
        return check_int(value, "value", 0, UINT32_MAX), size
    np = _numpy()
    dt = np.dtype(dtype)
    size = int(dt.itemsize)
    if size not in (1, 2, 4):
        return 0, size  # refused by the core, in its words, whatever the value
    if dt.kind in "biu":
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(
                f"a fill of {dt} takes an int, not {type(value).__name__}"
            ) from None
        if dt.kind == "b":
            low, high = 0, 1
        else:
            info = np.iinfo(dt)
            low, high = int(info.min), int(info.max)
        if not low <= v <= high:
            raise InvalidArgumentError(
                f"value = {v} does not fit {dt} ({low} to {high})"
            )
        return v & ((1 << (8 * size)) - 1), size
    if dt.kind == "f":
        if not isinstance(value, (int, float)) and not isinstance(value, np.number):
            raise TypeError(f"a fill of {dt} takes a number, not {type(value).__name__}")
        with np.errstate(over="ignore"):
            arr = np.array(value, dtype=dt)
        if np.isinf(arr) and math.isfinite(float(value)):
            raise InvalidArgumentError(f"value = {value!r} is out of the range of {dt}")
        return int(arr.view(f"u{size}")), size
    raise TypeError(f"a fill takes an integer or floating-point dtype, not {dt}")


def _numpy() -> Any:
    try:
        import numpy
    except (
        ImportError
    ) as exc:  # pragma: no cover - numpy is present wherever typed views are used
        raise ImportError(
            "typed views of cuabi memory need NumPy (pip install numpy)"
        ) from exc
    return numpy


def _dtype_info(dtype: Any) -> Tuple[Any, str, int]:
    """(dtype object or None, typestr, itemsize); None means raw bytes."""
    if dtype is None:
        return None, "|u1", 1
    dt = _numpy().dtype(dtype)
    if dt.hasobject:
        raise TypeError(f"dtype {dt} holds Python objects; device memory cannot")
    return dt, dt.str, dt.itemsize


def _shape_for(shape: Shape, nbytes: int, itemsize: int, what: str) -> Tuple[int, ...]:
    if shape is None:
        if nbytes % itemsize:
            raise ValueError(
                f"{what} of {nbytes} bytes is not a whole number of {itemsize}-byte items"
            )
        return (nbytes // itemsize,)
    dims = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension in shape {dims}")
    need = math.prod(dims) * itemsize
    if need > nbytes:
        raise ValueError(f"shape {dims} needs {need} bytes but {what} has {nbytes}")
    return dims


def foreign_memory(
    obj: Any, nbytes: Optional[int] = None
) -> Tuple[int, int, Any, Any, Any]:
    """(address, nbytes, dtype, shape, keep-alive) of device memory owned by
    someone else: an integer address with ``nbytes``, or an array that has
    ``__cuda_array_interface__`` or ``__dlpack__`` (whose capsule describes
    it: the object itself need not have ``shape`` or ``dtype``). ``nbytes``,
    when given, overrides the size the array reports. dtype and shape are
    None where the element type has no NumPy equivalent (raw bytes)."""
    if isinstance(obj, int):
        if nbytes is None:
            raise ValueError("wrapping a raw device address needs nbytes")
        return obj, int(nbytes), None, None, obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        ptr = int(cai["data"][0] or 0)
        dtype: Any = cai["typestr"]
        _, _, itemsize = _dtype_info(dtype)
        shape: Any = tuple(int(d) for d in cai["shape"])
        strides = cai.get("strides")
        if strides is not None and math.prod(shape):
            expect = _compact_strides(shape, itemsize)
            if any(int(s) != e for s, e, d in zip(strides, expect, shape) if d != 1):
                raise ValueError("only C-contiguous arrays can be wrapped")
        size = math.prod(shape) * itemsize
        keep: Any = obj
    elif hasattr(obj, "__dlpack__"):
        tensor, capsule = _dlpack.dlpack_tensor(obj)
        if not tensor.contiguous:
            raise ValueError("only C-contiguous arrays can be wrapped")
        ptr, size, dtype, shape = tensor.ptr, tensor.nbytes, tensor.typestr, None
        if dtype is not None:
            shape = tensor.shape
        keep = (obj, capsule)  # the capsule keeps the producer's memory alive
    else:
        raise TypeError(
            f"cannot wrap a {type(obj).__name__}: it has neither "
            "__cuda_array_interface__ nor __dlpack__"
        )
    return ptr, size if nbytes is None else int(nbytes), dtype, shape, keep


class _ArrayExport:
    """``__cuda_array_interface__`` (v3) and DLPack for a typed span of device memory."""

    shape: Tuple[int, ...]
    _dtype: Any
    _typestr: str
    _cai_stream: Optional[Stream]

    def _owner(self) -> "DeviceBuffer":  # the buffer whose memory this is
        raise NotImplementedError

    @property
    def ptr(self) -> int:
        """The device address."""
        raise NotImplementedError

    @property
    def dtype(self) -> Any:
        """The element type (a NumPy dtype; ``uint8`` for raw bytes)."""
        if self._dtype is None:
            return _numpy().dtype("uint8")
        return self._dtype

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        """The CUDA Array Interface, version 3 (CuPy, PyTorch, Numba read it
        without copying)."""
        cai = {
            "shape": tuple(self.shape),
            "typestr": self._typestr,
            "data": (self.ptr, False),
            "strides": None,
            "version": 3,
        }
        if self._dtype is not None and self._dtype.fields is not None:
            cai["descr"] = self._dtype.descr
        if self._cai_stream is not None:
            cai["stream"] = (
                self._cai_stream.ptr or 1
            )  # 0 is not allowed; 1 = legacy default
        return cai

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (_dlpack.kDLCUDA, self._owner().device_ordinal)

    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        """A DLPack capsule over this memory (no copy), made by the core
        (cuabi_buffer_export_dlpack): the tensor holds the buffer until the
        consumer deletes it.

        The stream handshake: ``stream`` is the consumer's stream (1 the
        legacy default stream, 2 the per-thread one, else a CUstream; -1 asks
        for no synchronisation). Where this memory's stream is known (the
        stream it was made or typed on) the consumer's stream is made to wait
        for it without blocking (cuabi_stream_dlpack_handoff); otherwise the
        device's queued work is finished first."""
        owner = self._owner()
        if copy:
            raise BufferError(
                "cuabi exports device memory without copying (copy=True asked)"
            )
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(
                f"cuabi memory lives on {self.__dlpack_device__()}, not {dl_device}"
            )
        if owner.closed:
            raise InvalidHandleError("the buffer was closed")
        if stream != -1:
            producer = self._cai_stream
            if producer is not None and stream is not None and not producer.closed:
                producer.dlpack_handoff(int(stream))
            else:
                owner.device.synchronize()
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        owner._pin()
        try:
            return _dlpack.export_capsule(
                owner._b,
                owner._handle,
                self.ptr - owner.ptr,
                self.shape,
                self.dtype,
                versioned=versioned,
                on_delete=owner._unpin,
            )
        except BaseException:
            owner._unpin()
            raise


class DeviceBuffer(_ArrayExport, BufferBase):
    """Device memory (``cuabi_buffer``), optionally typed with a dtype and shape.

    Create with :meth:`Device.alloc` (in stream order with ``stream=`` or
    ``pool=``), :meth:`Device.alloc_managed`, :meth:`Device.alloc_pitched`,
    :meth:`Device.empty` or :meth:`Device.to_device`; wrap memory of
    CuPy/PyTorch with :meth:`Device.wrap_buffer`; open another process's
    with :meth:`open_ipc`. :attr:`kind` says which. It exports
    ``__cuda_array_interface__`` and DLPack with its dtype and shape (bytes
    when untyped); :meth:`as_array` gives another typed view. As a kernel
    argument it passes its address.
    """

    # What :meth:`_made` leaves unset: the class answers these defaults, so a
    # buffer of ``Device.alloc`` sets only what differs (see _buffer_cache).
    _closed = False
    _pins = 0
    _deferred = False
    _foreign: Any = None
    pool: Optional["MemoryPool"] = None
    _rows: Optional[Tuple[int, int]] = None
    _dtype: Any = None
    _typestr = "|u1"
    _cai_stream: Optional[Stream] = None
    # The cache a stream-ordered buffer of the default pool goes back to on
    # free() and close() (None: freed through the library), the stream it
    # was allocated on (close() hands it back there), and whether a call
    # that keeps the buffer (a texture, a graph node ...) was given it: then
    # the library frees it, once those users are gone.
    _cache: Optional[BufferCache] = None
    _stream: Optional[Stream] = None
    _lent = False
    # The handle of the stream the library allocated the block on: where
    # cuabi_buffer_release frees it. A block reused on another stream (freed
    # on that one first) is freed in order on _stream instead.
    _origin: Any = None

    @classmethod
    def _made(
        cls,
        backend: Backend,
        handle: Any,
        ptr: int,
        nbytes: int,
        device: "Device",
        typed: Optional[Tuple[Any, str, Tuple[int, ...]]],
        kind: BufferKind,
    ) -> "DeviceBuffer":
        """A buffer over a handle whose address and size are known (one
        allocation call, or a block of the cache), made without a call.
        ``typed``: (dtype, typestr, shape) checked already, or None (bytes)."""
        self = cls.__new__(cls)
        self._b = backend
        self._handle = handle
        self.device = device
        self._ptr = ptr
        self._nbytes = nbytes
        self._kind = kind
        if typed is None:
            self.shape = (nbytes,)
        else:
            self._dtype, self._typestr, self.shape = typed
        return self

    def __init__(
        self,
        backend: Backend,
        handle: Any,
        device: "Device",
        dtype: Any = None,
        shape: Shape = None,
        owner: Any = None,
        *,
        pool: Optional["MemoryPool"] = None,
        rows: Optional[Tuple[int, int]] = None,
    ) -> None:
        Resource.__init__(self, backend, handle)
        self.device = device
        # The pool a stream-ordered or IPC buffer came from (the core keeps
        # it alive too), and a pitched buffer's (width_bytes, height).
        self.pool = pool
        self._rows = rows
        self._ptr: Optional[int] = self.pointer
        self._nbytes = int(self._b.get("cuabi_buffer_get_size", self._handle, out="size_t"))
        self._typed(dtype, shape, owner)

    def _typed(self, dtype: Any, shape: Shape, owner: Any = None) -> "DeviceBuffer":
        """This buffer, just made, as ``shape`` of ``dtype`` (None: bytes),
        keeping ``owner`` (wrapped memory's owner) alive."""
        self._foreign = owner
        self._dtype, self._typestr, itemsize = _dtype_info(dtype)
        self.shape = _shape_for(shape, self._nbytes, itemsize, "the buffer")
        return self

    @classmethod
    def _adopt(
        cls, backend: Backend, handle: Any, device: "Device", *args: Any, **kw: Any
    ) -> "DeviceBuffer":
        """``cls(backend, handle, device, *args, **kw)`` for a handle the
        library just gave: should that fail, the handle is released."""
        try:
            return cls(backend, handle, device, *args, **kw)
        except BaseException:
            backend.lib.cuabi_buffer_release(handle)
            raise

    @classmethod
    def _made_by(cls, backend: Backend, handle: Any, by: Any) -> Any:
        return cls._adopt(backend, handle, device_of(by))

    def _owner(self) -> "DeviceBuffer":
        return self

    def _on_release(self) -> None:
        # A kernel argument packs _ptr without a call (see _packing); None
        # makes that fail, and the general rules then raise through .ptr.
        self._ptr = None

    def _release(self, force: bool) -> None:
        # A stream-ordered buffer of the default pool goes back to the cache,
        # on the stream it was allocated on (where its release would free it).
        cache = self._cache
        if cache is None:
            Resource._release(self, force)
            return
        try:
            if not self._claim_release(force):
                return
            stream = self._stream
            handle, ptr = self._handle, self._ptr or 0
            self._ptr = None
            self._handle = cache._dead
            assert stream is not None
            if (
                self._lent
                or CAPTURES[0]
                or stream._closed
                or not cache._give(stream._handle, self._nbytes, handle, ptr, self._origin)
            ):
                _free_through_library(self._b, handle, stream, self._origin)
        except (AttributeError, TypeError, AssertionError):  # interpreter shutdown
            pass

    def __del__(self) -> None:
        # Nothing to do for a buffer already freed or closed (the common
        # case of free()): no call, no lock.
        if self._closed:
            return
        try:
            self._release(force=True)
        except Exception:  # never raise from a finalizer
            pass

    def _arg(self, backend: Backend) -> Any:
        # Given to another object's call (a texture, a graph node, a copy
        # description ...), which may keep it: from now on only the library
        # frees it, after those users.
        self._lent = True
        return Resource._arg(self, backend)

    @property
    def ptr(self) -> int:
        """The device address (``CUdeviceptr``)."""
        if self._closed or self._ptr is None:
            raise InvalidHandleError(
                "the buffer was closed; its address is no longer valid"
            )
        return self._ptr

    __cuabi_ptr__ = ptr  # what a kernel argument passes

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self._nbytes

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    # -- stream-ordered memory -------------------------------------------------
    def free(self, stream: Optional[Stream] = None) -> None:
        """Frees a stream-ordered buffer (``Device.alloc(..., stream=s)`` or
        ``pool=``) in order on ``stream`` (None: the default stream): its
        memory goes back to its pool once the work queued there before this
        call is done. The buffer is closed from then on (its memory is never
        touched again; closing or collecting it does nothing more).

        Inside a stream capture this is the graph's free node. Another kind
        of buffer, or one a texture object still reads, raises the core's
        InvalidArgumentError and stays as it was (release it with
        :meth:`close`). While a view or export of it is alive (``as_array``,
        ``host_array``, ``__dlpack__``) it raises InvalidArgumentError.

        A buffer of the device's default pool goes to the device's
        :attr:`~Device.buffer_cache` instead, on ``stream``'s list: the next
        ``Device.alloc`` of the same size on that stream takes it back without
        a call, in stream order (see :class:`~cuabi.BufferCache`)."""
        b = self._b
        cache = self._cache
        if (
            cache is not None
            and stream.__class__ is Stream
            and not self._lent
            and not CAPTURES[0]
            and stream._b is b
            and not stream._closed
            and stream.device._ordinal == cache.ordinal
        ):
            _acquire()  # with _release_lock, less the context manager's calls
            try:
                closed, pins = self._closed, self._pins
                if not closed and not pins:
                    self._closed = True
            finally:
                _release()
            if pins:
                raise InvalidArgumentError(
                    f"the buffer has {pins} live view(s) or export(s) (as_array, host_array, "
                    "__dlpack__); drop them before freeing it"
                )
            if not closed:
                # Into the cache, on this stream's list (BufferCache._give,
                # inlined: this is the hot path).
                handle, ptr = self._handle, self._ptr or 0
                self._ptr = None
                self._handle = cache._dead  # the object's handle is a released one now
                nbytes = self._nbytes
                limit = cache._max
                if cache._on and (limit is None or cache._held + nbytes <= limit):
                    key = (stream._handle, nbytes)
                    entries = cache._free.get(key)
                    if entries is None:
                        entries = cache._free.setdefault(key, [])
                    entries.append((handle, ptr, self._origin))
                    cache._held += nbytes
                elif b.lib.cuabi_buffer_free_async(handle, stream._handle):
                    b.lib.cuabi_buffer_release(handle)  # in order on its own stream
                return
            # Closed: the core names the released handle, as below.
        s = stream_arg(stream, b)
        with _release_lock:
            pins = self._pins
        if pins:
            raise InvalidArgumentError(
                f"the buffer has {pins} live view(s) or export(s) (as_array, host_array, "
                "__dlpack__); drop them before freeing it"
            )
        b.call("cuabi_buffer_free_async", self._handle, s)
        self._consumed()  # the core released the handle: never again

    # -- growable buffers --------------------------------------------------------
    # grow (a buffer of Device.alloc_growable, to a multiple of
    # Device.vm_granularity): BufferBase, which calls _grown once it succeeded.
    def _grown(self) -> None:
        # nbytes and shape (1-D) follow the new size.
        self._nbytes = int(self._b.get("cuabi_buffer_get_size", self._handle, out="size_t"))
        self.shape = _shape_for(None, self._nbytes, _dtype_info(self._dtype)[2], "the buffer")

    # -- managed memory ----------------------------------------------------------
    def host_array(self, dtype: Any = None, shape: Shape = None) -> Any:
        """A NumPy array over a managed buffer's memory (:meth:`Device.alloc_managed`),
        no copy. It keeps the buffer alive (a ``close()`` waits for it).
        ``dtype`` and ``shape`` default to the buffer's own.

        When the host may touch it (the header's rule): where the device's
        ``CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`` (89) is 1 (Linux
        with a Pascal or newer GPU), at any time, with the usual rules for
        data races: what a kernel writes is seen after the kernel is known
        to have finished (a synchronize), and the host must not write what a
        running kernel reads. Where it is 0, the host must not touch any
        managed memory while any kernel runs on the device: synchronize the
        device first. Another kind of buffer raises InvalidArgumentError."""
        address = self.host_pointer
        if dtype is None:
            dtype = self._dtype
            if shape is None and dtype is not None:
                shape = self.shape
        return _HostView.array(self, lambda: address, dtype, shape, self._nbytes, "managed")

    def _range(self, offset: int, nbytes: Optional[int], what: str = "offset") -> Tuple[int, int]:
        offset = check_size(offset, what)
        if nbytes is None:  # past the end: the core names the range
            nbytes = max(self._nbytes - offset, 0)
        return offset, check_size(nbytes, "nbytes")

    # -- other processes and other devices ---------------------------------------
    @classmethod
    def open_ipc(  # type: ignore[override]
        cls, device: "Device", handle: Any, pool: Optional["MemoryPool"] = None
    ) -> "DeviceBuffer":
        """Opens, on ``device``, a buffer another process exported with
        :meth:`ipc_handle` (``handle``: those bytes). A stream-ordered
        buffer's handle needs ``pool``: its pool, imported here with
        :meth:`MemoryPool.import_fd`. The buffer (``kind`` IPC) has the
        exported size; closing it unmaps the memory, which the other process
        still owns and must keep alive meanwhile. A handle of this very
        process, a damaged or foreign one raises InvalidArgumentError."""
        buf = super().open_ipc(device, pool, handle)
        buf.pool = pool
        return buf

    def copy_path(self, src: "DeviceBuffer") -> CopyPath:
        """How a copy from ``src`` into this buffer (:meth:`copy_from`)
        travels now: ``CopyPath.SAME_DEVICE``, ``PEER`` (peer access is
        enabled between the devices) or ``THROUGH_HOST``."""
        return self.get_copy_path(_source_buffer(src))

    # -- fills ---------------------------------------------------------------------
    def fill(  # type: ignore[override]
        self,
        value: Any,
        dtype: Any = None,
        offset: int = 0,
        count: Optional[int] = None,
        stream: Optional[Stream] = None,
    ) -> None:
        """Sets ``count`` elements (default: to the end) from byte ``offset``
        to ``value``. ``dtype`` is a NumPy dtype of 1, 2 or 4 bytes (``value``
        is converted to it: ``fill(0xBEEF, np.uint16)``, ``fill(1.5,
        np.float32)``), or the element size in bytes with ``value`` its bits
        (``fill(0xBEEF, 2)``); None: this buffer's dtype. Asynchronous on
        ``stream`` if given."""
        if dtype is None:
            if self._dtype is None:
                raise TypeError(
                    "fill needs a dtype or an element size for an untyped buffer"
                )
            dtype = self._dtype
        super().fill(*_fill_value(value, dtype), offset, count, stream)

    def as_array(
        self, dtype: Any, shape: Shape = None, stream: Optional[Stream] = None
    ) -> "DeviceArray":
        """A typed view of this memory (no copy) for CuPy, PyTorch or DLPack.

        ``shape`` defaults to as many ``dtype`` items as fit; ``stream`` is
        announced to consumers of ``__cuda_array_interface__``."""
        return DeviceArray(self, dtype, shape, stream)

    def copy_to_host(  # type: ignore[override]
        self, dst: Any = None, offset: int = 0, stream: Optional[Stream] = None
    ) -> Any:
        """Copies this memory from byte ``offset`` into ``dst`` (as many bytes
        as ``dst`` holds) and returns ``dst``. Without ``dst``, a new NumPy
        array of this buffer's dtype and shape (a bytearray without NumPy)."""
        if dst is None:
            if self._dtype is None and "numpy" not in sys.modules:
                dst = bytearray(max(self._nbytes - check_size(offset, "offset"), 0))
            else:
                dst = _numpy().empty(self.shape, self.dtype)
        super().copy_to_host(dst, offset, stream)
        return dst

    def copy_from(
        self,
        src: "Union[DeviceBuffer, DeviceArray]",
        nbytes: Optional[int] = None,
        dst_offset: int = 0,
        src_offset: int = 0,
        stream: Optional[Stream] = None,
    ) -> None:
        """Copies ``nbytes`` (default: all of ``src``) device to device, on
        one device or between two (directly where peer access is enabled,
        else through the host: :meth:`copy_path`)."""
        src = _source_buffer(src)
        dst_offset = check_size(dst_offset, "dst_offset")
        src_offset, nbytes = src._range(src_offset, nbytes, "src_offset")
        b = self._b
        # A copy keeps neither buffer: the source's handle is passed as it is
        # (not lent, see _arg), so it may still go back to the cache.
        src_arg = Resource._arg(src, b)
        call_ordered(b, "cuabi_buffer_copy", stream, self._handle, dst_offset, src_arg,
                     src_offset, nbytes)

    def to_numpy(self) -> Any:
        """A new NumPy array with a copy of this memory (dtype and shape kept)."""
        return self.copy_to_host()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"ptr=0x{self._ptr:x}"
        return f"<cuabi.DeviceBuffer {state} nbytes={self._nbytes} shape={self.shape} typestr={self._typestr}>"


register_pointer_type(DeviceBuffer, "_ptr")


def _source_buffer(src: Any) -> DeviceBuffer:
    """The buffer of a device-to-device copy's ``src`` (a DeviceArray's own)."""
    if isinstance(src, DeviceArray):
        src = src.buffer
    if not isinstance(src, DeviceBuffer):
        raise TypeError(f"src must be a DeviceBuffer, not {type(src).__name__}")
    return src


def _free_through_library(b: Backend, handle: Any, stream: Stream, origin: Any) -> None:
    """Frees a block of the cache's kind that is not kept: its release frees
    it in order on the stream the library allocated it on (``origin``); a
    block reused on another stream (``stream``, where it was freed before)
    is freed in order on that one, unless it cannot be ordered there (the
    stream closed, a capture begun on it, a texture still reading it: then
    the release, which waits for the texture)."""
    if (
        origin is not None
        and origin != stream._handle
        and not stream._closed
        and not stream._capturing
        and not b.lib.cuabi_buffer_free_async(handle, stream._handle)
    ):
        return
    b.lib.cuabi_buffer_release(handle)


class DeviceArray(_ArrayExport):
    """A typed view of a :class:`DeviceBuffer` (see :meth:`DeviceBuffer.as_array`).

    It owns nothing: it keeps its buffer alive, and a ``close()`` of the
    buffer waits until the view and its DLPack exports are gone."""

    def __init__(
        self,
        buffer: DeviceBuffer,
        dtype: Any,
        shape: Shape = None,
        stream: Optional[Stream] = None,
    ) -> None:
        self._dtype, self._typestr, itemsize = _dtype_info(dtype)
        self.shape = _shape_for(shape, buffer.nbytes, itemsize, "the buffer")
        self.buffer = buffer
        self._cai_stream = stream
        buffer._pin()
        self._pinned = True

    def __del__(self) -> None:
        try:
            if self._pinned:
                self._pinned = False
                self.buffer._unpin()
        except Exception:
            pass

    def _owner(self) -> DeviceBuffer:
        return self.buffer

    @property
    def ptr(self) -> int:
        """The device address of the array's first element."""
        return self.buffer.ptr

    __cuabi_ptr__ = ptr

    @property
    def nbytes(self) -> int:
        """The bytes the array spans."""
        return self.size * int(self.dtype.itemsize)

    @property
    def device(self) -> "Device":
        """The device whose memory holds the array."""
        return self.buffer.device

    def copy_to_host(self, dst: Any = None, stream: Optional[Stream] = None) -> Any:
        """A NumPy array (or ``dst``) with a copy of the viewed memory."""
        if dst is None:
            dst = _numpy().empty(self.shape, self.dtype)
        return self.buffer.copy_to_host(dst, 0, stream)

    def copy_from_host(self, src: Any, stream: Optional[Stream] = None) -> None:
        """Copies a host array of the same size into the viewed memory."""
        self.buffer.copy_from_host(src, 0, stream)

    def to_numpy(self) -> Any:
        """A NumPy array with a copy of the viewed memory."""
        return self.copy_to_host()

    def __repr__(self) -> str:
        return f"<cuabi.DeviceArray shape={self.shape} dtype={self.dtype} of {self.buffer!r}>"


class _HostView:
    """Holds a PinnedBuffer (or a managed DeviceBuffer) while a NumPy array
    views its memory at ``address``."""

    def __init__(
        self,
        owner: Resource,
        address: int,
        typestr: str,
        shape: Tuple[int, ...],
        descr: Any = None,
    ) -> None:
        ai: Dict[str, Any] = {
            "data": (address, False),
            "shape": shape,
            "typestr": typestr,
            "version": 3,
        }
        if descr is not None:
            ai["descr"] = descr
        self.__array_interface__ = ai
        self.owner = owner
        owner._pin()

    @classmethod
    def array(
        cls, owner: Resource, address: Callable[[], int], dtype: Any, shape: Shape,
        nbytes: int, what: str,
    ) -> Any:
        """A NumPy array of ``dtype`` and ``shape`` (None: as many items as
        fit the ``what`` buffer's ``nbytes``) over ``owner``'s host memory at
        ``address()`` (asked once the shape is checked), no copy."""
        np = _numpy()
        dt, typestr, itemsize = _dtype_info(dtype)
        dims = _shape_for(shape, nbytes, itemsize, f"the {what} buffer")
        descr = dt.descr if dt is not None and dt.fields is not None else None
        return np.asarray(cls(owner, address(), typestr, dims, descr))

    def __del__(self) -> None:
        try:
            self.owner._unpin()
        except Exception:
            pass


class PinnedBuffer(HostBufferBase):
    """Page-locked host memory (``cuabi_host_buffer``): asynchronous copies
    from and to it overlap with other work.

    :meth:`Device.host_alloc` allocates it; :meth:`Device.pin` pins an
    existing NumPy array in place (``.array`` is that array). Either way
    :meth:`as_array` views it as NumPy without a copy."""

    def __init__(
        self, backend: Backend, handle: Any, device: "Device", array: Any = None
    ) -> None:
        super().__init__(backend, handle)
        self.device = device
        self.array = array  # the registered host memory, kept alive while pinned
        self._ptr = self.pointer
        self._nbytes = self.size

    @classmethod
    def _made_by(cls, backend: Backend, handle: Any, by: Any) -> Any:
        return cls(backend, handle, device_of(by))

    @property
    def ptr(self) -> int:
        """The host address."""
        if self._closed:
            raise InvalidHandleError("the pinned buffer was closed")
        return self._ptr

    @property
    def nbytes(self) -> int:
        """The buffer's size in bytes."""
        return self._nbytes

    def as_array(self, dtype: Any = "uint8", shape: Shape = None) -> Any:
        """A NumPy array over this memory (no copy); it keeps the buffer alive."""
        return _HostView.array(self, lambda: self.ptr, dtype, shape, self._nbytes, "pinned")

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"ptr=0x{self._ptr:x}"
        return f"<cuabi.PinnedBuffer {state} nbytes={self._nbytes}>"


class MemoryPool(MemoryPoolBase):
    """A pool of device memory for stream-ordered allocation
    (``cuabi_memory_pool``).

    >>> pool = MemoryPool(dev, release_threshold=64 << 20)
    >>> buf = dev.alloc(n, stream=s, pool=pool)      # or pool.alloc(n, stream=s)
    >>> ...                                          # work on s using buf
    >>> buf.free(s)                                  # back to the pool, in order on s
    >>> reserved, used = pool.usage
    >>> pool.trim(0)                                 # give unused memory back

    ``max_bytes`` caps what the pool reserves (0: only the device's memory
    does); ``release_threshold`` is how much unused memory it keeps reserved
    when a stream synchronizes instead of giving it back (0: none).
    ``ipc=True`` makes a pool that can be shared with other processes
    (:meth:`export_fd`, and its buffers' :meth:`DeviceBuffer.ipc_handle`).
    :attr:`Device.default_memory_pool` is the device's own pool, the one
    ``dev.alloc(n, stream=s)`` uses (and CuPy's and PyTorch's stream-ordered
    allocators). A pool made here is destroyed once it is closed and every
    buffer allocated from it is freed.

    The default pool's ``usage`` counts the blocks :attr:`Device.buffer_cache`
    holds as used (they are freed buffers kept for reuse); its :meth:`trim`
    gives them back first."""


    device: "Device"
    is_default = False  # the device's default pool (Device.default_memory_pool)

    def __init__(
        self,
        device: "Device",
        max_bytes: int = 0,
        release_threshold: int = 0,
        *,
        ipc: bool = False,
    ) -> None:
        dev = device_arg(device)
        self._own(MemoryPoolBase.create(
            dev,
            max_bytes=check_size(max_bytes, "max_bytes"),
            release_threshold=check_size(release_threshold, "release_threshold"),
            flags=MemoryPoolFlag.IPC if ipc else MemoryPoolFlag(0),
        ))
        self.device = dev

    def trim(self, keep: int = 0) -> None:
        """Gives reserved memory back to the device until the pool holds at
        most ``keep`` bytes it is not using (memory in use is never given back).
        The default pool's trim first gives back the blocks its device's
        :attr:`~Device.buffer_cache` holds."""
        keep = check_size(keep, "keep")
        if self.is_default and not self._closed:
            _buffer_cache.trim_device(self._b, self.device.ordinal)
        self._b.call("cuabi_memory_pool_trim", self._handle, keep)

    def alloc(
        self,
        nbytes: int,
        stream: Optional[Stream] = None,
        dtype: Any = None,
        shape: Shape = None,
    ) -> DeviceBuffer:
        """``nbytes`` from this pool in order on ``stream``:
        ``device.alloc(nbytes, dtype, shape, stream=stream, pool=self)``."""
        return self.device.alloc(nbytes, dtype, shape, stream=stream, pool=self)

    def _describe(self) -> str:
        what = " (the default pool)" if self.is_default else ""
        return f"of device {self.device.ordinal}{what}"


register_owner("cuabi_buffer", DeviceBuffer)
register_owner("cuabi_host_buffer", PinnedBuffer)
register_owner("cuabi_memory_pool", MemoryPool)
