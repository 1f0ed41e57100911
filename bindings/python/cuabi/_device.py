"""Devices, and the library-wide queries."""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Optional, Sequence, Tuple, Union

from ._api import CompileFlag, EventFlag, Output, StreamFlag
from ._fork import note_cuda_initialised
from ._base import (
    Resource,
    as_bytes,
    check_i32,
    check_size,
    no_nul,
    opt_bytes,
    resolve_backend,
)
from ._loader import Backend
from ._memory import (
    DeviceBuffer,
    PinnedBuffer,
    Shape,
    _dtype_info,
    foreign_memory,
    host_address,
)
from ._program import Headers, Module, _options, normalize_headers
from ._stream import Event, Stream

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


def init(backend: BackendArg = None) -> None:
    """Opens the CUDA driver now (optional: the first call that needs it does)."""
    b = resolve_backend(backend)
    b.call("cuabi_init")


def device_count(backend: BackendArg = None) -> int:
    """How many CUDA devices the driver sees. Raises DriverNotFoundError (or
    StubDriverError) where there is no usable driver."""
    b = resolve_backend(backend)
    return int(b.get("cuabi_device_get_count", out="int32_t"))


def version(backend: BackendArg = None) -> int:
    """The library's version number (MAJOR * 10000 + MINOR * 100 + PATCH)."""
    return int(resolve_backend(backend).lib.cuabi_version())


def version_string(backend: BackendArg = None) -> str:
    b = resolve_backend(backend)
    return b.string(b.lib.cuabi_version_string())


def driver_version(backend: BackendArg = None) -> int:
    """The driver's CUDA version, e.g. 13000 for 13.0."""
    return int(resolve_backend(backend).get("cuabi_driver_get_version", out="int32_t"))


def driver_path(backend: BackendArg = None) -> str:
    """Where libcuda was loaded from."""
    return resolve_backend(backend).get_string("cuabi_driver_get_path")


def nvrtc_version(backend: BackendArg = None) -> Tuple[int, int]:
    """NVRTC's (major, minor)."""
    major, minor = resolve_backend(backend).get_many(
        "cuabi_nvrtc_get_version", outs=("int32_t", "int32_t")
    )
    return int(major), int(minor)


def nvrtc_path(backend: BackendArg = None) -> str:
    """Where libnvrtc was loaded from."""
    return resolve_backend(backend).get_string("cuabi_nvrtc_get_path")


_OUTPUTS = {o.name.lower(): o for o in Output}


class Device(Resource):
    """A GPU and its primary context (``cuabi_device``), the one CuPy and
    PyTorch use too. Every other object is made from a device.

    >>> dev = Device(0)
    >>> mod = dev.compile(source, options=["-std=c++17"])
    >>> buf = dev.to_device(np.arange(10, dtype=np.float32))

    Raises DriverNotFoundError without a driver and NoDeviceError for an
    ordinal past the last device."""

    _release_fn = "cuabi_device_release"
    _handle_type = "cuabi_device"

    def __init__(self, ordinal: int = 0, *, backend: BackendArg = None) -> None:
        b = resolve_backend(backend)
        ordinal = check_i32(ordinal, "ordinal")
        h = b.get("cuabi_device_get", ordinal, out="cuabi_device")
        super().__init__(b, h)
        self.ordinal = ordinal
        note_cuda_initialised()

    # -- properties --------------------------------------------------------
    @property
    def name(self) -> str:
        return self._b.get_string("cuabi_device_get_name", self._handle)

    @property
    def compute_capability(self) -> Tuple[int, int]:
        major, minor = self._b.get_many(
            "cuabi_device_get_compute_capability",
            self._handle,
            outs=("int32_t", "int32_t"),
        )
        return int(major), int(minor)

    @property
    def arch(self) -> str:
        """``"sm_XY"`` for this device."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def total_memory(self) -> int:
        return int(
            self._b.get("cuabi_device_get_total_memory", self._handle, out="size_t")
        )

    @property
    def memory_info(self) -> Tuple[int, int]:
        """(free, total) bytes now."""
        free, total = self._b.get_many(
            "cuabi_device_get_memory_info", self._handle, outs=("size_t", "size_t")
        )
        return int(free), int(total)

    def attribute(self, cu_attribute: int) -> int:
        """Any CUdevice_attribute, by its numeric value."""
        return int(
            self._b.get(
                "cuabi_device_get_attribute",
                self._handle,
                check_i32(cu_attribute, "cu_attribute"),
                out="int32_t",
            )
        )

    @property
    def context(self) -> int:
        """The primary context as a raw CUcontext value."""
        return int(
            self._b.get("cuabi_device_get_context", self._handle, out="uint64_t")
        )

    @property
    def multiprocessor_count(self) -> int:
        """The number of multiprocessors (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)."""
        return self.attribute(16)

    @property
    def stream_priority_range(self) -> Tuple[int, int]:
        """(least, greatest) stream priority; lower numbers are higher priority."""
        least, greatest = self._b.get_many(
            "cuabi_device_get_stream_priority_range",
            self._handle,
            outs=("int32_t", "int32_t"),
        )
        return int(least), int(greatest)

    def synchronize(self) -> None:
        """Waits for all work on the device."""
        self._b.call("cuabi_device_synchronize", self._handle)

    def reset(self) -> None:
        """Resets the primary context, freeing everything on it; every object
        made on this device before must be recreated. After a sticky fault
        (ContextLostError) the driver refuses every device to the process for
        good and this raises ContextLostError too: start a new process."""
        self._b.call("cuabi_device_reset", self._handle)

    # -- code --------------------------------------------------------------
    def compile(
        self,
        source: Union[str, bytes],
        options: Union[str, Sequence[Union[str, bytes]], None] = (),
        headers: Headers = None,
        name_expressions: Iterable[str] = (),
        *,
        name: Optional[str] = None,
        output: str = "cubin",
        cache: bool = True,
    ) -> Module:
        """Compiles CUDA C++ for this device and loads it
        (``cuabi_module_compile``): the target is the device's own
        architecture unless ``options`` name one; images go through the
        on-disk cache unless ``cache=False``. ``headers`` maps include names
        to sources; kernels can then be fetched by their name expressions.
        Raises CompileError with ``.log``."""
        b = self._b
        if output not in _OUTPUTS:
            choices = " or ".join(repr(o) for o in _OUTPUTS)
            raise ValueError(f"output must be {choices}, not {output!r}")
        opts = _options(options)
        srcs, names = normalize_headers(headers)
        exprs = [as_bytes(e, "name expression") for e in name_expressions]
        opt_arr, k1 = b.string_array(opts)
        src_arr, k2 = b.string_array(srcs)
        name_arr, k3 = b.string_array(names)
        expr_arr, k4 = b.string_array(exprs)
        desc, k5 = b.compile_desc(
            source=as_bytes(source, "source"),
            name=opt_bytes(name, "name"),
            options=opt_arr,
            num_options=len(opts),
            header_sources=src_arr,
            header_names=name_arr,
            num_headers=len(srcs),
            name_expressions=expr_arr,
            num_name_expressions=len(exprs),
            output=_OUTPUTS[output],
            flags=0 if cache else CompileFlag.NO_CACHE,
        )
        h = b.get("cuabi_module_compile", self._handle, desc, out="cuabi_module")
        return Module(b, h, self)

    def load_module(self, image: Union[bytes, str, "os.PathLike[str]"]) -> Module:
        """Loads CUBIN, PTX or fatbin: ``bytes`` are the image, a ``str`` or
        path-like is a file name."""
        b = self._b
        if isinstance(image, (bytes, bytearray, memoryview)):
            address, nbytes, _keep = host_address(bytes(image), writable=False)
            h = b.get(
                "cuabi_module_load_data",
                self._handle,
                b.pointer(address),
                nbytes,
                out="cuabi_module",
            )
        else:
            path = no_nul(os.fsencode(image), "path")
            h = b.get("cuabi_module_load_file", self._handle, path, out="cuabi_module")
        return Module(b, h, self)

    # -- memory ------------------------------------------------------------
    def alloc(
        self, nbytes: int, dtype: Any = None, shape: Shape = None
    ) -> DeviceBuffer:
        """``nbytes`` of device memory (typed when ``dtype``/``shape`` are given)."""
        h = self._b.get(
            "cuabi_buffer_alloc",
            self._handle,
            check_size(nbytes, "nbytes"),
            out="cuabi_buffer",
        )
        try:
            return DeviceBuffer(self._b, h, self, dtype, shape)
        except BaseException:
            self._b.lib.cuabi_buffer_release(h)
            raise

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
        ptr, nbytes, dtype, shape, keep = foreign_memory(obj, nbytes)
        h = self._b.get(
            "cuabi_buffer_wrap",
            self._handle,
            check_size(ptr, "device_ptr"),
            check_size(nbytes, "nbytes"),
            out="cuabi_buffer",
        )
        try:
            return DeviceBuffer(
                self._b, h, self, dtype, shape if dtype is not None else None, keep
            )
        except BaseException:
            self._b.lib.cuabi_buffer_release(h)
            raise

    def host_alloc(self, nbytes: int) -> PinnedBuffer:
        """``nbytes`` of page-locked host memory."""
        h = self._b.get(
            "cuabi_host_buffer_alloc",
            self._handle,
            check_size(nbytes, "nbytes"),
            out="cuabi_host_buffer",
        )
        return PinnedBuffer(self._b, h, self)

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

    # -- streams and events -----------------------------------------------
    def create_stream(self, non_blocking: bool = False, priority: int = 0) -> Stream:
        """A new stream (``non_blocking``: no implicit sync with the default stream)."""
        flags = StreamFlag.NON_BLOCKING if non_blocking else 0
        h = self._b.get(
            "cuabi_stream_create",
            self._handle,
            flags,
            check_i32(priority, "priority"),
            out="cuabi_stream",
        )
        return Stream(self._b, h, self)

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
        h = self._b.get(
            "cuabi_stream_wrap",
            self._handle,
            check_size(raw, "cu_stream"),
            out="cuabi_stream",
        )
        return Stream(self._b, h, self, owner=stream)

    def create_event(self, timing: bool = True, blocking_sync: bool = False) -> Event:
        """A new event (``timing=False`` is cheaper, for ordering only)."""
        flags = (0 if timing else EventFlag.DISABLE_TIMING) | (
            EventFlag.BLOCKING_SYNC if blocking_sync else 0
        )
        h = self._b.get("cuabi_event_create", self._handle, flags, out="cuabi_event")
        return Event(self._b, h, self)

    def __repr__(self) -> str:
        return f"<cuabi.Device {self.ordinal}{' closed' if self._closed else ''}>"
