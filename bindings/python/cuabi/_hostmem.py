"""Arguments the object layer checks before the library sees them: a
device, a prefetch location, an IPC handle, and host memory (any buffer a
copy reads or writes)."""

from __future__ import annotations

import ctypes
import sys
from typing import TYPE_CHECKING, Any, Tuple, Union, cast

from ._api import CUABI_LOCATION_HOST
from ._base import check_i32
from ._objects import DeviceBase, HostBufferBase, _of, register_reader

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["Location", "device_arg", "location_arg", "ipc_handle_arg", "host_address"]

Location = Union["Device", int, str]


def device_arg(device: Any, what: str = "device") -> "Device":
    """``device`` when it is a cuabi.Device; a TypeError naming ``what`` otherwise."""
    return cast("Device", _of(device, "cuabi_device", DeviceBase, what))


def location_arg(location: Location, what: str = "location") -> int:
    """The ``int32_t location`` of a prefetch or an advice: a Device (its
    ordinal), a device ordinal, or the host ("host" or LOCATION_HOST)."""
    if isinstance(location, DeviceBase):
        return location.ordinal
    if isinstance(location, str):
        if location.strip().lower() == "host":
            return CUABI_LOCATION_HOST
        raise ValueError(
            f"{what} must be a cuabi.Device, a device ordinal or 'host', not {location!r}"
        )
    if isinstance(location, bool) or not hasattr(location, "__index__"):
        raise TypeError(
            f"{what} must be a cuabi.Device, a device ordinal or 'host', "
            f"not {type(location).__name__}"
        )
    return check_i32(location, what)


def ipc_handle_arg(handle: Any) -> bytes:
    """An IPC handle as the bytes the core reads (its own checks follow:
    the size, the checksum, the kind, the process)."""
    if isinstance(handle, str):
        raise TypeError(
            "an IPC handle is bytes, not str (bytes.fromhex(text) reads a hex string)"
        )
    try:
        return bytes(memoryview(handle).cast("B"))
    except TypeError:
        raise TypeError(
            f"an IPC handle is bytes, not {type(handle).__name__}"
        ) from None


def host_address(obj: Any, writable: bool) -> Tuple[int, int, Any]:
    """(address, nbytes, keep-alive) of a C-contiguous host buffer: a NumPy
    array (or anything with ``__array_interface__``), a PinnedBuffer, bytes,
    bytearray, memoryview, array.array, a ctypes object ..."""
    if isinstance(obj, HostBufferBase):  # a PinnedBuffer: its pinned span
        return int(getattr(obj, "ptr")), int(getattr(obj, "nbytes")), obj
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
    if np is not None:
        arr = np.frombuffer(view, dtype=np.uint8)
        return int(arr.ctypes.data), view.nbytes, (obj, view, arr)
    copy = (ctypes.c_char * view.nbytes).from_buffer_copy(view)
    return ctypes.addressof(copy), view.nbytes, copy


# The generated calls taking host bytes, a location or an IPC handle read them through these.
register_reader("host", host_address)
register_reader("location", location_arg)
register_reader("ipc", ipc_handle_arg)
