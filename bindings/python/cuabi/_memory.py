"""Device memory, page-locked host memory, and their interop protocols."""

from __future__ import annotations

import ctypes
import math
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Union

from . import _dlpack
from ._base import Resource, check_size
from ._loader import Backend
from ._packing import register_pointer_type
from ._stream import Stream, stream_arg
from .errors import InvalidHandleError

if TYPE_CHECKING:
    from ._device import Device

__all__ = [
    "DeviceBuffer",
    "DeviceArray",
    "PinnedBuffer",
    "foreign_memory",
    "host_address",
]

Shape = Union[int, Sequence[int], None]


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


def _c_strides(shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    expect, step = [], itemsize
    for extent in reversed(shape):
        expect.append(step)
        step *= extent
    return tuple(reversed(expect))


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
            expect = _c_strides(shape, itemsize)
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


def host_address(obj: Any, writable: bool) -> Tuple[int, int, Any]:
    """(address, nbytes, keep-alive) of a C-contiguous host buffer: a NumPy
    array (or anything with ``__array_interface__``), a PinnedBuffer, bytes,
    bytearray, memoryview, array.array, a ctypes object ..."""
    if isinstance(obj, PinnedBuffer):
        return obj.ptr, obj.nbytes, obj
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            raise ValueError(
                "the host array is not C-contiguous; use numpy.ascontiguousarray"
            )
        if writable and not obj.flags.writeable:
            raise ValueError(
                "the host array is read-only; the copy needs to write into it"
            )
        return int(obj.ctypes.data), int(obj.nbytes), obj
    ai = getattr(obj, "__array_interface__", None)
    if isinstance(ai, dict):
        if np is None:
            raise TypeError("an __array_interface__ object needs NumPy to be read")
        return host_address(np.asarray(obj), writable)
    if isinstance(obj, bytes):
        if writable:
            raise ValueError(
                "bytes are read-only; pass a bytearray or a NumPy array to copy into"
            )
        keep = ctypes.c_char_p(obj)
        return ctypes.cast(keep, ctypes.c_void_p).value or 0, len(obj), (obj, keep)
    if isinstance(
        obj, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)
    ):
        return ctypes.addressof(obj), ctypes.sizeof(obj), obj
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(
            f"a {type(obj).__name__} is not host memory: pass a NumPy array or an object "
            "with the buffer protocol"
        ) from None
    if not view.c_contiguous:
        raise ValueError("the host buffer is not C-contiguous")
    if writable and view.readonly:
        raise ValueError(
            "the host buffer is read-only; the copy needs to write into it"
        )
    view = view.cast("B")
    if not view.readonly:
        arr = (ctypes.c_char * view.nbytes).from_buffer(view)
        return ctypes.addressof(arr), view.nbytes, (obj, view, arr)
    np = sys.modules.get("numpy")
    if np is not None:
        arr = np.frombuffer(view, dtype=np.uint8)
        return int(arr.ctypes.data), view.nbytes, (obj, view, arr)
    copy = (ctypes.c_char * view.nbytes).from_buffer_copy(view)
    return ctypes.addressof(copy), view.nbytes, copy


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
        """A DLPack capsule over this memory (no copy).

        Work queued on the device is finished first unless ``stream == -1``,
        so the consumer's stream sees the data complete."""
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
            owner.device.synchronize()
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        owner._pin()
        try:
            return _dlpack.make_capsule(
                self.ptr,
                self.shape,
                self.dtype,
                _dlpack.kDLCUDA,
                owner.device_ordinal,
                owner=self,
                versioned=versioned,
                on_delete=owner._unpin,
            )
        except BaseException:
            owner._unpin()
            raise


class DeviceBuffer(_ArrayExport, Resource):
    """Device memory (``cuabi_buffer``), optionally typed with a dtype and shape.

    Create with :meth:`Device.alloc`, :meth:`Device.empty` or
    :meth:`Device.to_device`; wrap memory of CuPy/PyTorch with
    :meth:`Device.wrap_buffer`. It exports ``__cuda_array_interface__`` and
    DLPack with its dtype and shape (bytes when untyped); :meth:`as_array`
    gives another typed view. As a kernel argument it passes its address.
    """

    _release_fn = "cuabi_buffer_release"
    _handle_type = "cuabi_buffer"

    def __init__(
        self,
        backend: Backend,
        handle: Any,
        device: "Device",
        dtype: Any = None,
        shape: Shape = None,
        owner: Any = None,
    ) -> None:
        Resource.__init__(self, backend, handle)
        self.device = device
        self._foreign = owner  # wrapped memory's owner, kept alive
        self._ptr: Optional[int] = int(
            backend.get("cuabi_buffer_get_pointer", handle, out="uint64_t")
        )
        self._nbytes = int(backend.get("cuabi_buffer_get_size", handle, out="size_t"))
        self._ordinal: Optional[int] = None
        self._dtype, self._typestr, itemsize = _dtype_info(dtype)
        self.shape = _shape_for(shape, self._nbytes, itemsize, "the buffer")
        self._cai_stream = None

    def _owner(self) -> "DeviceBuffer":
        return self

    def _on_release(self) -> None:
        # A kernel argument packs _ptr without a call (see _packing); None
        # makes that fail, and the general rules then raise through .ptr.
        self._ptr = None

    @property
    def ptr(self) -> int:
        """The device address (``CUdeviceptr``)."""
        if self._closed or self._ptr is None:
            raise InvalidHandleError(
                "the buffer was closed; its address is no longer valid"
            )
        return self._ptr

    @property
    def __cuabi_ptr__(self) -> int:  # what a kernel argument passes
        return self.ptr

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self._nbytes

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 1

    @property
    def device_ordinal(self) -> int:
        """The ordinal of the device the memory is on."""
        if self._ordinal is None:
            self._ordinal = int(
                self._b.get(
                    "cuabi_buffer_get_device_ordinal", self._handle, out="int32_t"
                )
            )
        return self._ordinal

    def as_array(
        self, dtype: Any, shape: Shape = None, stream: Optional[Stream] = None
    ) -> "DeviceArray":
        """A typed view of this memory (no copy) for CuPy, PyTorch or DLPack.

        ``shape`` defaults to as many ``dtype`` items as fit; ``stream`` is
        announced to consumers of ``__cuda_array_interface__``."""
        return DeviceArray(self, dtype, shape, stream)

    def copy_from_host(
        self, src: Any, offset: int = 0, stream: Optional[Stream] = None
    ) -> None:
        """Copies all of ``src`` (a NumPy array or any C-contiguous buffer)
        to this memory at byte ``offset``; asynchronous on ``stream`` if
        given (then ``src`` must stay alive until the stream reaches it)."""
        address, nbytes, _keep = host_address(src, writable=False)
        offset = check_size(offset, "offset")
        b = self._b
        if stream is None:
            b.call(
                "cuabi_buffer_copy_from_host",
                self._handle,
                offset,
                b.pointer(address),
                nbytes,
            )
        else:
            b.call(
                "cuabi_buffer_copy_from_host_async",
                self._handle,
                offset,
                b.pointer(address),
                nbytes,
                stream_arg(stream, b),
            )

    def copy_to_host(
        self, dst: Any = None, offset: int = 0, stream: Optional[Stream] = None
    ) -> Any:
        """Copies this memory from byte ``offset`` into ``dst`` (as many bytes
        as ``dst`` holds) and returns ``dst``. Without ``dst``, a new NumPy
        array of this buffer's dtype and shape (a bytearray without NumPy)."""
        offset = check_size(offset, "offset")
        if dst is None:
            if self._dtype is None and "numpy" not in sys.modules:
                dst = bytearray(max(self._nbytes - offset, 0))
            else:
                dst = _numpy().empty(self.shape, self.dtype)
        address, nbytes, _keep = host_address(dst, writable=True)
        b = self._b
        if stream is None:
            b.call(
                "cuabi_buffer_copy_to_host",
                self._handle,
                offset,
                b.pointer(address),
                nbytes,
            )
        else:
            b.call(
                "cuabi_buffer_copy_to_host_async",
                self._handle,
                offset,
                b.pointer(address),
                nbytes,
                stream_arg(stream, b),
            )
        return dst

    def copy_from(
        self,
        src: "Union[DeviceBuffer, DeviceArray]",
        nbytes: Optional[int] = None,
        dst_offset: int = 0,
        src_offset: int = 0,
        stream: Optional[Stream] = None,
    ) -> None:
        """Copies ``nbytes`` (default: all of ``src``) device to device."""
        if isinstance(src, DeviceArray):
            src = src.buffer
        if not isinstance(src, DeviceBuffer):
            raise TypeError(f"src must be a DeviceBuffer, not {type(src).__name__}")
        dst_offset = check_size(dst_offset, "dst_offset")
        src_offset = check_size(src_offset, "src_offset")
        if nbytes is None:  # past the end: the core names the source range
            nbytes = max(src.nbytes - src_offset, 0)
        nbytes = check_size(nbytes, "nbytes")
        b = self._b
        if stream is None:
            b.call(
                "cuabi_buffer_copy",
                self._handle,
                dst_offset,
                src._arg(b),
                src_offset,
                nbytes,
            )
        else:
            b.call(
                "cuabi_buffer_copy_async",
                self._handle,
                dst_offset,
                src._arg(b),
                src_offset,
                nbytes,
                stream_arg(stream, b),
            )

    def memset(
        self,
        value: int = 0,
        offset: int = 0,
        nbytes: Optional[int] = None,
        stream: Optional[Stream] = None,
    ) -> None:
        """Sets ``nbytes`` bytes (default: to the end) from ``offset`` to ``value``."""
        if not 0 <= int(value) <= 255:
            raise ValueError(f"memset value {value} is not a byte (0 to 255)")
        offset = check_size(offset, "offset")
        if nbytes is None:
            nbytes = max(self._nbytes - offset, 0)
        nbytes = check_size(nbytes, "nbytes")
        b = self._b
        if stream is None:
            b.call("cuabi_buffer_memset", self._handle, offset, value, nbytes)
        else:
            b.call(
                "cuabi_buffer_memset_async",
                self._handle,
                offset,
                value,
                nbytes,
                stream_arg(stream, b),
            )

    def to_numpy(self) -> Any:
        """A new NumPy array with a copy of this memory (dtype and shape kept)."""
        return self.copy_to_host()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"ptr=0x{self._ptr:x}"
        return f"<cuabi.DeviceBuffer {state} nbytes={self._nbytes} shape={self.shape} typestr={self._typestr}>"


register_pointer_type(DeviceBuffer, "_ptr")


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
        return self.buffer.ptr

    @property
    def __cuabi_ptr__(self) -> int:
        return self.buffer.ptr

    @property
    def nbytes(self) -> int:
        return self.size * int(self.dtype.itemsize)

    @property
    def device(self) -> "Device":
        return self.buffer.device

    def copy_to_host(self, dst: Any = None, stream: Optional[Stream] = None) -> Any:
        """A NumPy array (or ``dst``) with a copy of the viewed memory."""
        if dst is None:
            dst = _numpy().empty(self.shape, self.dtype)
        return self.buffer.copy_to_host(dst, 0, stream)

    def copy_from_host(self, src: Any, stream: Optional[Stream] = None) -> None:
        self.buffer.copy_from_host(src, 0, stream)

    def to_numpy(self) -> Any:
        return self.copy_to_host()

    def __repr__(self) -> str:
        return f"<cuabi.DeviceArray shape={self.shape} dtype={self.dtype} of {self.buffer!r}>"


class _HostView:
    """Holds a PinnedBuffer while a NumPy array views its memory."""

    def __init__(
        self, pinned: "PinnedBuffer", typestr: str, shape: Tuple[int, ...]
    ) -> None:
        self.__array_interface__ = {
            "data": (pinned.ptr, False),
            "shape": shape,
            "typestr": typestr,
            "version": 3,
        }
        self.pinned = pinned
        pinned._pin()

    def __del__(self) -> None:
        try:
            self.pinned._unpin()
        except Exception:
            pass


class PinnedBuffer(Resource):
    """Page-locked host memory (``cuabi_host_buffer``): asynchronous copies
    from and to it overlap with other work.

    :meth:`Device.host_alloc` allocates it; :meth:`Device.pin` pins an
    existing NumPy array in place (``.array`` is that array). Either way
    :meth:`as_array` views it as NumPy without a copy."""

    _release_fn = "cuabi_host_buffer_release"
    _handle_type = "cuabi_host_buffer"

    def __init__(
        self, backend: Backend, handle: Any, device: "Device", array: Any = None
    ) -> None:
        super().__init__(backend, handle)
        self.device = device
        self.array = array  # the registered host memory, kept alive while pinned
        self._ptr = int(
            backend.get("cuabi_host_buffer_get_pointer", handle, out="void*")
        )
        self._nbytes = int(
            backend.get("cuabi_host_buffer_get_size", handle, out="size_t")
        )

    @property
    def ptr(self) -> int:
        """The host address."""
        if self._closed:
            raise InvalidHandleError("the pinned buffer was closed")
        return self._ptr

    @property
    def nbytes(self) -> int:
        return self._nbytes

    def as_array(self, dtype: Any = "uint8", shape: Shape = None) -> Any:
        """A NumPy array over this memory (no copy); it keeps the buffer alive."""
        np = _numpy()
        dt, typestr, itemsize = _dtype_info(dtype)
        dims = _shape_for(shape, self._nbytes, itemsize, "the pinned buffer")
        return np.asarray(_HostView(self, typestr, dims))

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"ptr=0x{self._ptr:x}"
        return f"<cuabi.PinnedBuffer {state} nbytes={self._nbytes}>"
