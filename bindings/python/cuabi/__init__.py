"""cuabi: compile CUDA C++ at run time, move data and launch kernels.

Two layers over one C library (``libcuabi``):

* :mod:`cuabi.capi`, the low layer: every function, constant and struct of
  ``cuabi.h`` one to one, through ctypes (default) or cffi
  (``CUABI_BACKEND=cffi``).
* The objects here: :class:`Device`, :class:`Program`, :class:`Module`,
  :class:`Kernel`, :class:`Stream`, :class:`Event`, :class:`DeviceBuffer`,
  :class:`PinnedBuffer`, :class:`MemoryPool`, :class:`PhysicalMemory`,
  :class:`AddressRange`, :class:`Array`,
  :class:`Texture`, :class:`Surface`, :class:`Graph`, :class:`GraphExec`,
  :class:`Linker`, :class:`Library` (and :func:`copy_3d` for boxes with
  pitches, :class:`CompileOptions` for NVRTC options as values). Each owns one
  handle, works as a context manager, has ``close()``, and is released when
  garbage-collected, in any order, from any thread. Failures raise
  :class:`CudaError` subclasses.
* Value types generated from the header's value structs:
  :class:`AccessPolicyWindow` (``Stream.access_policy_window``,
  ``Stream.set_access_policy_window``), :class:`ArrayDesc` (``Array.desc``)
  and :class:`MemoryPoolDesc`; a field left None takes the C init's default.
* Everything else the generated layer (:mod:`cuabi._objects`) makes public,
  exported by rule from its ``__all__``: each library call as a function
  (:func:`driver_log_read`, :func:`nvtx_mark`, :func:`coredump_set` ...),
  each scope as a context manager and decorator (:class:`nvtx_range`), and
  the enums they take and answer (:class:`Health`, :class:`CoredumpFlag` ...).
  :func:`on_context_lost` registers a callable for the context's loss; the
  :class:`ContextLostError` of a sticky fault lists the launches not seen
  complete as ``launches`` (:class:`FaultedLaunch`: the kernel's name and
  its :class:`LaunchRecord`).

>>> import numpy as np, cuabi
>>> dev = cuabi.Device(0)
>>> saxpy = dev.compile(SAXPY_SOURCE).get_kernel("saxpy")
>>> x = dev.to_device(np.random.rand(n).astype(np.float32))
>>> saxpy(blocks, threads, (np.float32(2.0), x, y, out, np.uint64(n)))
>>> saxpy(saxpy.suggest_config(n), (np.float32(2.0), x, y, out, np.uint64(n)))

The library is loaded on first use: ``$CUABI_LIBRARY`` when set, else the
copy installed in this package.
"""

from __future__ import annotations

from . import _objects, capi, errors
from ._objects import *  # noqa: F401,F403  (generated: functions, scopes, value types, enums)
from ._api import CUABI_VERSION_STRING
from ._context_lost import on_context_lost
# DLPack through the core (cuabi_buffer_import_dlpack); buffers export with __dlpack__.
from ._device import Device, from_dlpack
from ._error_base import FaultedLaunch
from ._loader import (
    BACKENDS,
    Backend,
    find_library,
    get_backend,
    load_backend,
    set_default_backend,
    use_backend,
)
from ._api import (
    AddressMode,
    # The launch attributes' enum no generated call takes (LaunchConfig's
    # cluster_scheduling).
    ClusterSchedulingPolicy,
    FilterMode,
    LaunchFlag,
    ReadMode,
)
from ._arrays import Array, Surface, Texture, copy_3d
from ._launch import LaunchConfig
from ._link import Library, Linker
from ._memory import LOCATION_HOST, DeviceArray, DeviceBuffer, MemoryPool, PinnedBuffer
from ._buffer_cache import BufferCache
from ._options import CompileOptions
from ._program import Kernel, KernelName, Module, PreparedLaunch, Program
from ._stream import Event, Graph, GraphExec, Stream
from ._green import TENSOR_MAP_BYTES, GreenContext, SmResource, TensorMap
from ._batch import Copy3dOp, CopyOp, ManagedRange, MemOp
from ._vmm import AddressRange, PhysicalMemory
from .errors import *  # noqa: F401,F403  (CudaError and one subclass per status)

__version__ = CUABI_VERSION_STRING

__all__ = [
    "capi",
    "Device",
    "Program",
    "CompileOptions",
    "Module",
    "KernelName",
    "Kernel",
    "PreparedLaunch",
    "Linker",
    "Library",
    "LaunchConfig",
    "LaunchFlag",
    "Stream",
    "Event",
    "Graph",
    "GraphExec",
    "DeviceBuffer",
    "BufferCache",
    "DeviceArray",
    "PinnedBuffer",
    "MemoryPool",
    "PhysicalMemory",
    "AddressRange",
    "Array",
    "Texture",
    "Surface",
    "copy_3d",
    "AddressMode",
    "FilterMode",
    "ReadMode",
    "LOCATION_HOST",
    "on_context_lost",
    "FaultedLaunch",
    "BACKENDS",
    "Backend",
    "find_library",
    "get_backend",
    "load_backend",
    "set_default_backend",
    "use_backend",
]
__all__ += ["SmResource", "GreenContext", "TensorMap", "TENSOR_MAP_BYTES"]
__all__ += ["MemOp", "CopyOp", "Copy3dOp", "ManagedRange"]
__all__ += ["ClusterSchedulingPolicy", "from_dlpack"]
__all__ += _objects.__all__
__all__ += errors.__all__
