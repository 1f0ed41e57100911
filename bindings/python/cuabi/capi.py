"""The low layer: ``include/cuabi/cuabi.h`` one to one.

>>> from cuabi import capi
>>> L = capi.load("ctypes")       # or "cffi", "compiled"; none: $CUABI_BACKEND, else auto
>>> lib = L.lib                   # every cuabi_* function, as the header declares it
>>> n = ctypes.c_int32()
>>> L.check(lib.cuabi_device_get_count(ctypes.byref(n)))

Everything here is generated from the header (:mod:`cuabi._api`): its
constants (``CUABI_ERROR_INVALID_HANDLE``) and an IntEnum or IntFlag per
enum (``Status``, ``CaptureMode``, ``StreamFlag`` ...), and for ctypes its
types, structs and prototypes. With the ctypes backend, ``lib`` is a
``ctypes.CDLL`` whose functions carry those prototypes (handles are
``c_void_p``, out-parameters ``POINTER(T)``); a struct is filled with its
defaults by its ``*_init`` function (``lib.cuabi_launch_config_init``).
With the cffi backend (``load("cffi")``), ``lib`` comes from ``ffi.dlopen``
with the header's declarations, ``L.ffi`` is the FFI and the constants are
also on ``lib``. The compiled backend (``load("compiled")``) is the same
``ffi`` and ``lib`` from the extension module ``cuabi._cuabi_cffi`` (cffi's
API mode, linked to libcuabi). With no name, ``$CUABI_BACKEND`` decides,
else the compiled backend where its module is present, else ctypes.

``L.check(status)`` raises the :class:`~cuabi.CudaError` subclass of a
non-zero status with this thread's last-error message.

A launch plan (``cuabi_launch_plan_create``) is the fastest way to launch a
kernel many times: ``L.plan_block(plan)`` (or ``L.memory_view(address,
size)`` on what ``cuabi_launch_plan_get_args`` returns) is a writable view of
its argument block for ``struct.Struct.pack_into``, valid until the plan is
released, and ``f, arg = L.plan_launcher(plan)`` gives the launch as
``f(arg)``, with nothing converted per call (``L.handle_caller(name, handle)``
does the same for any function taking one handle, e.g. a stream's query).

``desc, keep = fill_link_desc(L, backend="nvjitlink", flags=...)`` (and
``fill_compile_desc``, ``fill_texture_desc``, generated from the header's
descriptor structs) gives a descriptor argument filled with the library's
defaults first, then each keyword converted by its field's type; ``keep``
holds what the argument points to.
"""

from __future__ import annotations

import ctypes
import enum
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

from . import _api
from ._api import *  # noqa: F401,F403  (the header's constants, enums and types)
from ._packing import _apply_type
from ._objects import fill_compile_desc, fill_link_desc, fill_texture_desc
from ._loader import (
    BACKENDS,
    Backend,
    find_library,
    get_backend,
    library_candidates,
    load_backend,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "load",
    "check",
    "find_library",
    "library_candidates",
    "KernelParams",
    "kernel_params",
    "fill_compile_desc",
    "fill_link_desc",
    "fill_texture_desc",
]
__all__ += _api.__all__


def load(backend: Optional[str] = None, path: Optional[str] = None) -> Backend:
    """The library through ``backend`` (``"ctypes"``, ``"cffi"``,
    ``"compiled"`` or ``"auto"``; default ``$CUABI_BACKEND``, else auto: the
    compiled backend where its module is present, else ctypes), from
    ``path`` or the usual search."""
    return load_backend(backend, path)


def check(status: int, backend: Optional[Backend] = None) -> None:
    """Raises the CudaError of a non-zero ``status`` (the overview's
    ``checkCudaErrors``), reading the last error through ``backend``."""
    (backend or get_backend()).check(int(status))


@dataclass(frozen=True)
class KernelParams:
    """The overview's ``kernelParams`` for :func:`cuabi_function_launch` /
    :func:`cuabi_function_launch_sized` (ctypes backend): ``params`` (``void**``),
    ``sizes`` (``size_t*``), ``count``, and the values they point to."""

    params: Any
    sizes: Any
    count: int
    values: List[Any]


def kernel_params(values: Sequence[Any], types: Sequence[Any]) -> KernelParams:
    """The overview's ctypes way: each value converted to its ctypes type;
    a type of None takes the value as it is (a ``ctypes.Structure`` or other
    ctypes value, an ``Enum`` as a C ``int``, or a cuabi buffer as its
    address). Keep the result alive until the launch call returns."""
    if len(values) != len(types):
        raise ValueError(f"{len(values)} values but {len(types)} types")
    objs: List[Any] = []
    for i, (value, ctype) in enumerate(zip(values, types)):
        obj = _apply_type(value, ctype, i, None)
        if isinstance(obj, enum.Enum):
            obj = ctypes.c_int(obj.value)
        elif getattr(obj, "__cuabi_ptr__", None) is not None:
            obj = ctypes.c_void_p(obj.__cuabi_ptr__)
        if not isinstance(
            obj, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)
        ):
            raise TypeError(
                f"argument {i}: a {type(obj).__name__} with type None must be a ctypes "
                "value, an Enum or a cuabi buffer"
            )
        objs.append(obj)
    n = len(objs)
    params = (ctypes.c_void_p * n)(*[ctypes.addressof(o) for o in objs])
    sizes = (ctypes.c_size_t * n)(*[ctypes.sizeof(o) for o in objs])
    return KernelParams(params, sizes, n, objs)
