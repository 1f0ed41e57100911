"""DLPack with ctypes: exporting device memory as a capsule, and reading the
data pointer out of someone else's.

Layouts follow ``dlpack.h`` (DLPack 1.x): ``DLManagedTensor`` (the capsule
named ``"dltensor"``) and ``DLManagedTensorVersioned`` (``"dltensor_versioned"``).
A consumer renames the capsule to ``"used_dltensor[_versioned]"`` and calls the
deleter when it is done; a capsule nobody consumed calls it from its own
destructor. The deleter only drops Python references, may run on any thread
(ctypes takes the GIL for it) and tolerates being called twice.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

__all__ = [
    "DLDevice",
    "DLDataType",
    "DLTensor",
    "DLManagedTensor",
    "DLManagedTensorVersioned",
    "kDLCPU",
    "kDLCUDA",
    "kDLCUDAHost",
    "kDLCUDAManaged",
    "make_capsule",
    "capsule_pointer",
    "dtype_to_dlpack",
    "live_exports",
]

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLCUDAManaged = 13

kDLInt = 0
kDLUInt = 1
kDLFloat = 2
kDLComplex = 5
kDLBool = 6

DLPACK_MAJOR_VERSION = 1
DLPACK_MINOR_VERSION = 0


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_api = ctypes.pythonapi
_PyCapsule_New = _api.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_PyCapsule_IsValid = _api.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_GetPointer = _api.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_GetPointer_raw = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p
)(("PyCapsule_GetPointer", _api))
_PyCapsule_GetName = _api.PyCapsule_GetName
_PyCapsule_GetName.restype = ctypes.c_char_p
_PyCapsule_GetName.argtypes = [ctypes.py_object]

# PyCapsule_New keeps the name pointer, so the names must live forever.
_NAME_LEGACY = ctypes.create_string_buffer(b"dltensor")
_NAME_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")

# address of the managed struct -> (struct, shape, strides, owner, on_delete)
_exports: Dict[int, Tuple[Any, Any, Any, Any, Any]] = {}
_exports_lock = threading.Lock()


def live_exports() -> int:
    """How many exported tensors have not been deleted yet (for tests)."""
    with _exports_lock:
        return len(_exports)


def _deleter(managed: int) -> None:
    with _exports_lock:
        entry = _exports.pop(managed or 0, None)
    if entry is not None and entry[4] is not None:
        try:
            entry[4]()
        except Exception:  # a deleter must not fail
            pass


_DELETER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DELETER = _DELETER_T(_deleter)
_DELETER_ADDR = ctypes.cast(_DELETER, ctypes.c_void_p).value


def _capsule_destructor(capsule: int) -> None:
    # Only a capsule nobody consumed still carries its original name.
    for name in (_NAME_LEGACY, _NAME_VERSIONED):
        if _PyCapsule_IsValid(capsule, name):
            managed = _PyCapsule_GetPointer_raw(capsule, name)
            _deleter(managed)
            return


_DESTRUCTOR_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DESTRUCTOR = _DESTRUCTOR_T(_capsule_destructor)
_DESTRUCTOR_ADDR = ctypes.cast(_DESTRUCTOR, ctypes.c_void_p).value


def dtype_to_dlpack(dtype: Any) -> Tuple[int, int, int]:
    """(code, bits, lanes) of a NumPy dtype."""
    import numpy as np

    dt = np.dtype(dtype)
    codes = {"b": kDLBool, "i": kDLInt, "u": kDLUInt, "f": kDLFloat, "c": kDLComplex}
    if dt.kind not in codes or dt.fields is not None or dt.subdtype is not None:
        raise BufferError(f"dtype {dt} has no DLPack equivalent")
    return codes[dt.kind], dt.itemsize * 8, 1


def make_capsule(
    ptr: int,
    shape: Sequence[int],
    dtype: Any,
    device_type: int,
    device_id: int,
    owner: Any,
    versioned: bool = False,
    read_only: bool = False,
    on_delete: Optional[Callable[[], None]] = None,
) -> Any:
    """A DLPack capsule over ``ptr`` (C-contiguous ``shape`` of ``dtype``)
    that keeps ``owner`` alive until the consumer calls the deleter, which
    then calls ``on_delete``."""
    code, bits, lanes = dtype_to_dlpack(dtype)
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(int(extent), 1)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*reversed(strides))
    if versioned:
        managed: Any = DLManagedTensorVersioned()
        managed.version = DLPackVersion(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION)
        managed.flags = 1 if read_only else 0
        name = _NAME_VERSIONED
    else:
        managed = DLManagedTensor()
        name = _NAME_LEGACY
    t = managed.dl_tensor
    t.data = ptr
    t.device = DLDevice(device_type, device_id)
    t.ndim = ndim
    t.dtype = DLDataType(code, bits, lanes)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.manager_ctx = None
    managed.deleter = _DELETER_ADDR
    address = ctypes.addressof(managed)
    with _exports_lock:
        _exports[address] = (managed, shape_arr, strides_arr, owner, on_delete)
    try:
        return _PyCapsule_New(address, ctypes.addressof(name), _DESTRUCTOR_ADDR)
    except BaseException:
        _deleter(address)
        raise


def capsule_pointer(capsule: Any) -> Tuple[int, int, int]:
    """(data pointer, device_type, device_id) of an unconsumed DLPack capsule,
    which is left unconsumed (its producer frees it when the capsule dies)."""
    name = _PyCapsule_GetName(capsule)
    if name == b"dltensor":
        managed = DLManagedTensor.from_address(
            _PyCapsule_GetPointer(capsule, b"dltensor")
        )
    elif name == b"dltensor_versioned":
        addr = _PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        managed = DLManagedTensorVersioned.from_address(addr)
    else:
        raise BufferError(f"not an unconsumed DLPack capsule (its name is {name!r})")
    t = managed.dl_tensor
    return (t.data or 0) + t.byte_offset, t.device.device_type, t.device.device_id


def dlpack_pointer(obj: Any, stream: Optional[int] = None) -> Tuple[int, Any]:
    """The device address behind an object that implements ``__dlpack__``,
    and the capsule that keeps it valid while held."""
    capsule = obj.__dlpack__() if stream is None else obj.__dlpack__(stream=stream)
    ptr, device_type, _ = capsule_pointer(capsule)
    if device_type not in (kDLCUDA, kDLCUDAHost, kDLCUDAManaged):
        raise BufferError(
            f"DLPack tensor lives on device type {device_type}, not on a CUDA device"
        )
    return ptr, capsule
