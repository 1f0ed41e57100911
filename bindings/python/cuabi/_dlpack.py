"""DLPack with ctypes: exporting device memory as a capsule, and reading the
address, shape and element type out of someone else's.

Layouts follow ``dlpack.h`` (DLPack 1.x): ``DLManagedTensor`` (the capsule
named ``"dltensor"``) and ``DLManagedTensorVersioned`` (``"dltensor_versioned"``).
A consumer renames the capsule to ``"used_dltensor[_versioned]"`` and calls the
deleter when it is done; a capsule nobody consumed calls it from its own
destructor. The deleter only drops Python references, may run on any thread
(ctypes takes the GIL for it) and tolerates being called twice.
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

# dlpack.h's structs as the header declares them.
from ._api import cuabi_dlpack_device as DLDevice
from ._api import cuabi_dlpack_dtype as DLDataType
from ._api import cuabi_dlpack_tensor as DLTensor
from ._api import cuabi_dlpack_version as DLPackVersion
from ._api import cuabi_dlpack_managed_tensor as DLManagedTensor
from ._api import cuabi_dlpack_managed_tensor_versioned as DLManagedTensorVersioned
from ._loader import load_backend

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
    "DLPackTensor",
    "make_capsule",
    "capsule_tensor",
    "capsule_pointer",
    "dlpack_tensor",
    "dtype_to_dlpack",
    "live_exports",
    "export_capsule",
    "import_capsule",
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


# Private prototypes: ctypes.pythonapi's attributes are shared by every user
# of ctypes in the process, so setting their argtypes/restype there could be
# undone by (or break) someone else.
_api = ctypes.pythonapi
_PyCapsule_New = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
)(("PyCapsule_New", _api))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api)
)
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p
)(("PyCapsule_GetPointer", _api))
_PyCapsule_GetPointer_raw = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p
)(("PyCapsule_GetPointer", _api))
_PyCapsule_GetName = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", _api)
)

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


# The header's cuabi_dlpack_deleter_fn (ctypes makes one type of one signature).
_DELETER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DELETER = _DELETER_T(_deleter)


def _capsule_destructor(capsule: int) -> None:
    # Only a capsule nobody consumed still carries its original name.
    for name in (_NAME_LEGACY, _NAME_VERSIONED):
        if _PyCapsule_IsValid(capsule, name):
            managed = _PyCapsule_GetPointer_raw(capsule, name)
            _deleter(managed)
            return


_DESTRUCTOR = _DELETER_T(_capsule_destructor)
_DESTRUCTOR_ADDR = ctypes.cast(_DESTRUCTOR, ctypes.c_void_p).value


def _compact_strides(shape: Sequence[int], itemsize: int) -> Tuple[int, ...]:
    """The strides, in bytes (in elements for an ``itemsize`` of 1), of compact row-major memory of ``shape``."""
    strides: List[int] = []
    step = itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(int(extent), 1)
    return tuple(reversed(strides))


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
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*_compact_strides(shape, 1))
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
    managed.deleter = _DELETER
    return _capsule(managed, name, (managed, shape_arr, strides_arr, owner, on_delete))


def _capsule(managed: Any, name: Any, entry: Tuple[Any, Any, Any, Any, Any]) -> Any:
    """A capsule named ``name`` over ``managed`` (whose deleter is ours),
    ``entry`` kept in the exports until the deleter runs."""
    address = ctypes.addressof(managed)
    with _exports_lock:
        _exports[address] = entry
    try:
        return _PyCapsule_New(address, ctypes.addressof(name), _DESTRUCTOR_ADDR)
    except BaseException:
        _deleter(address)
        raise


class DLPackTensor(NamedTuple):
    """What a DLPack capsule describes, read without consuming it."""

    ptr: int  # data + byte_offset
    device_type: int
    device_id: int
    shape: Tuple[int, ...]
    typestr: Optional[str]  # NumPy type string; None where NumPy has no such type
    itemsize: int  # bytes per element (lanes included)
    nbytes: int
    contiguous: bool  # C-contiguous (row-major, compact)
    read_only: bool  # DLPACK_FLAG_BITMASK_READ_ONLY (versioned capsules only)
    byte_strides: Optional[Tuple[int, ...]] = None  # in bytes; None: compact


DLPACK_FLAG_BITMASK_READ_ONLY = 1

_KINDS = {kDLInt: "i", kDLUInt: "u", kDLFloat: "f", kDLComplex: "c", kDLBool: "b"}
_NATIVE = "<" if sys.byteorder == "little" else ">"


def _typestr(code: int, bits: int, lanes: int) -> Optional[str]:
    """The NumPy type string of a DLPack dtype, or None (bfloat16, float8,
    vector lanes ... have none: such memory is seen as raw bytes)."""
    kind = _KINDS.get(code)
    if kind is None or lanes != 1:
        return None
    if kind == "b":
        return "|b1" if bits == 8 else None
    if (kind == "c" and bits not in (64, 128)) or (
        kind != "c" and bits not in (8, 16, 32, 64)
    ):
        return None
    if kind == "f" and bits == 8:
        return None
    return ("|" if bits == 8 else _NATIVE) + kind + str(bits // 8)


def _managed_tensor(capsule: Any) -> Tuple[DLTensor, bool]:
    """The DLTensor inside an unconsumed capsule, and its read-only flag."""
    name = _PyCapsule_GetName(capsule)
    if name == b"dltensor":
        managed: Any = DLManagedTensor.from_address(
            _PyCapsule_GetPointer(capsule, b"dltensor")
        )
        return managed.dl_tensor, False
    if name == b"dltensor_versioned":
        managed = DLManagedTensorVersioned.from_address(
            _PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        )
        major, minor = managed.version.major, managed.version.minor
        if major != DLPACK_MAJOR_VERSION:
            raise BufferError(
                f"the DLPack capsule is version {major}.{minor}; cuabi reads "
                f"{DLPACK_MAJOR_VERSION}.x"
            )
        read_only = bool(managed.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
        return managed.dl_tensor, read_only
    raise BufferError(f"not an unconsumed DLPack capsule (its name is {name!r})")


def capsule_tensor(capsule: Any) -> DLPackTensor:
    """Address, device, shape, element type and size of the tensor in an
    unconsumed DLPack capsule (``"dltensor"`` or ``"dltensor_versioned"``),
    which is left unconsumed (its producer frees it when the capsule dies)."""
    t, read_only = _managed_tensor(capsule)
    ndim = int(t.ndim)
    if ndim < 0:
        raise BufferError(f"the DLPack tensor has ndim {ndim}")
    if ndim and not t.shape:
        raise BufferError(f"the DLPack tensor has ndim {ndim} but no shape")
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    if any(d < 0 for d in shape):
        raise BufferError(f"the DLPack tensor has a negative extent: {shape}")
    code, bits, lanes = int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes)
    if bits * lanes == 0 or bits * lanes % 8:
        raise BufferError(
            f"the DLPack dtype (code {code}, {bits} bits, {lanes} lanes) is not "
            "a whole number of bytes per element"
        )
    itemsize = bits * lanes // 8
    count = math.prod(shape)
    strides = tuple(int(t.strides[i]) for i in range(ndim)) if t.strides else None
    compact = _compact_strides(shape, 1)
    contiguous = not (strides and count) or all(
        s == c for s, c, d in zip(strides, compact, shape) if d != 1
    )
    byte_strides = None if strides is None else tuple(s * itemsize for s in strides)
    return DLPackTensor(
        ptr=(t.data or 0) + int(t.byte_offset),
        device_type=int(t.device.device_type),
        device_id=int(t.device.device_id),
        shape=shape,
        typestr=_typestr(code, bits, lanes),
        itemsize=itemsize,
        nbytes=count * itemsize,
        contiguous=contiguous,
        read_only=read_only,
        byte_strides=byte_strides,
    )


def capsule_pointer(capsule: Any) -> Tuple[int, int, int]:
    """(data pointer, device_type, device_id) of an unconsumed DLPack capsule,
    which is left unconsumed (its producer frees it when the capsule dies)."""
    t = capsule_tensor(capsule)
    return t.ptr, t.device_type, t.device_id


def _ask_capsule(obj: Any, stream: Optional[int]) -> Any:
    """``obj.__dlpack__``, asking for a versioned capsule; a producer that
    predates DLPack 1.0 (no ``max_version`` keyword) is asked again without."""
    kwargs: Dict[str, Any] = {} if stream is None else {"stream": stream}
    try:
        return obj.__dlpack__(
            max_version=(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION), **kwargs
        )
    except TypeError:
        return obj.__dlpack__(**kwargs)


def dlpack_tensor(obj: Any, stream: Optional[int] = None) -> Tuple[DLPackTensor, Any]:
    """The CUDA tensor behind an object that implements ``__dlpack__``, and the
    capsule that keeps it valid while held."""
    capsule = _ask_capsule(obj, stream)
    tensor = capsule_tensor(capsule)
    if tensor.device_type not in (kDLCUDA, kDLCUDAHost, kDLCUDAManaged):
        raise BufferError(
            f"DLPack tensor lives on device type {tensor.device_type}, "
            "not on a CUDA device"
        )
    return tensor, capsule


# --- Through the core: cuabi_buffer_export_dlpack / cuabi_buffer_import_dlpack
#
# The core checks everything (shape and strides against the buffer's size,
# the dtype, a foreign tensor's device, version, flags and strides) and owns
# the deleters; this module only moves the managed tensors in and out of
# capsules. The calls go through ctypes on either backend (the same library
# the backend loaded, by its path, with the header's prototypes), with
# handles as integers.


def _core(backend: Any) -> Any:
    return load_backend("ctypes", backend.path)


def export_capsule(
    backend: Any,
    handle: Any,
    byte_offset: int,
    shape: Sequence[int],
    dtype: Any,
    versioned: bool,
    read_only: bool = False,
    on_delete: Optional[Callable[[], None]] = None,
) -> Any:
    """A DLPack capsule over the buffer ``handle`` from byte ``byte_offset``
    (C-contiguous ``shape`` of ``dtype``), made by cuabi_buffer_export_dlpack:
    the tensor holds the buffer until its deleter runs, which then calls
    ``on_delete``. ``versioned``: a ``"dltensor_versioned"`` capsule (DLPack
    1.x), else a ``"dltensor"`` one over the same tensor."""
    code, bits, lanes = dtype_to_dlpack(dtype)
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*_compact_strides(shape, 1))
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    _core(backend).call(
        "cuabi_buffer_export_dlpack",
        backend.handle_int(handle),
        byte_offset,
        shape_arr,
        strides_arr,
        ndim,
        code,
        bits,
        lanes,
        DLPACK_FLAG_BITMASK_READ_ONLY if read_only else 0,
        ctypes.byref(out),
    )
    address = int(ctypes.cast(out, ctypes.c_void_p).value or 0)
    core_tensor: Any = DLManagedTensorVersioned.from_address(address)
    # A copy of the address: the field is overwritten below.
    core_deleter = _DELETER_T(ctypes.cast(core_tensor.deleter, ctypes.c_void_p).value or 0)

    def delete() -> None:
        try:
            core_deleter(address)  # drops the core's reference to the buffer
        finally:
            if on_delete is not None:
                on_delete()

    if versioned:
        managed: Any = core_tensor
        core_tensor.deleter = _DELETER
        name = _NAME_VERSIONED
    else:
        managed = DLManagedTensor()
        managed.dl_tensor = core_tensor.dl_tensor  # its arrays live until `delete`
        managed.manager_ctx = None
        managed.deleter = _DELETER
        name = _NAME_LEGACY
    return _capsule(managed, name, (managed if not versioned else None, None, None, None, delete))


# PyCapsule_SetName keeps the pointer: the names live forever, passed by address.
_PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(
    ("PyCapsule_SetName", _api)
)
_USED_LEGACY = ctypes.create_string_buffer(b"used_dltensor")
_USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")


def import_capsule(backend: Any, capsule: Any, read_only: bool = False) -> Any:
    """Takes the tensor of an unconsumed DLPack capsule over as a borrowed
    cuabi buffer (cuabi_buffer_import_dlpack[_unversioned]): the capsule is
    marked used and the buffer keeps the producer's tensor until its last
    reference goes. Answers the new buffer handle (an int). A refusal (the
    core's error, raised) leaves the capsule unconsumed."""
    name = _PyCapsule_GetName(capsule)
    tensor: Any
    if name == b"dltensor_versioned":
        func, used, tensor = "cuabi_buffer_import_dlpack", _USED_VERSIONED, DLManagedTensorVersioned
    elif name == b"dltensor":
        func, used, tensor = "cuabi_buffer_import_dlpack_unversioned", _USED_LEGACY, DLManagedTensor
    else:
        raise BufferError(f"not an unconsumed DLPack capsule (its name is {name!r})")
    managed = ctypes.byref(tensor.from_address(_PyCapsule_GetPointer(capsule, name)))
    out = ctypes.c_void_p()
    _core(backend).call(func, managed, 1 if read_only else 0, ctypes.byref(out))
    # Ours now: the capsule's destructor must not call the deleter.
    _PyCapsule_SetName(capsule, ctypes.addressof(used))
    return int(out.value or 0)
