"""Finding libcuabi and binding it through one of two backends.

The library is looked for as ``$CUABI_LIBRARY`` alone when that is set;
otherwise in this package (where ``pip install`` puts it), in the build
folder of a source checkout, and through the system's dynamic loader. When
none loads, :class:`~cuabi.errors.LibraryNotFoundError` lists every path
tried and why each failed.

Backends: ``compiled`` (cffi's API mode: the extension module
``_cuabi_cffi``, built with the wheel and linked to libcuabi), ``cffi`` (ABI
mode, ``ffi.dlopen``) and ``ctypes`` (standard library only). All three take
their declarations from :mod:`cuabi._api`, generated from the header (the
compiled module is cffi's C source of its ``CDEF``). ``$CUABI_BACKEND``
picks the default; unset (or ``auto``), it is ``compiled`` where the module
is present and binds to the library found, else ``ctypes``
(:func:`compiled_status` says which and why). :func:`load_backend` gives
any one explicitly, and :func:`use_backend` switches the default for the
objects created afterwards.

The compiled module is looked for beside the library loaded (a CMake build
writes it beside ``libcuabi.so``), then in this package. The library is
loaded first, so the module binds to that library, wherever
``$CUABI_LIBRARY`` points; the module is used only when the function
addresses it calls are that library's. Named explicitly, ``compiled``
raises ImportError saying why when it cannot be used; as the default, it
falls back to ``ctypes``.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import importlib.machinery
import importlib.util
import itertools
import os
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from . import _api
from ._error_base import FaultedLaunch
from .errors import CudaError, LibraryNotFoundError, error_class

__all__ = [
    "Backend",
    "CtypesBackend",
    "CffiBackend",
    "CompiledBackend",
    "compiled_status",
    "library_candidates",
    "find_library",
    "load_backend",
    "get_backend",
    "set_default_backend",
    "use_backend",
    "BACKENDS",
]

BACKENDS: Tuple[str, ...] = ("ctypes", "cffi", "compiled")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

if sys.platform == "win32":
    _LIB_NAMES = ("cuabi.dll",)
elif sys.platform == "darwin":
    _LIB_NAMES = ("libcuabi.dylib",)
else:
    _LIB_NAMES = ("libcuabi.so", "libcuabi.so.0")


def library_candidates() -> List[str]:
    """The places libcuabi is looked for, in order (see the module docstring)."""
    env = os.environ.get("CUABI_LIBRARY")
    if env:
        return [env]
    paths = [os.path.join(_PACKAGE_DIR, n) for n in _LIB_NAMES]
    root = os.path.dirname(os.path.dirname(os.path.dirname(_PACKAGE_DIR)))
    if os.path.isfile(os.path.join(root, "include", "cuabi", "cuabi.h")):
        paths.append(os.path.join(root, "build", _LIB_NAMES[0]))
    # Bare names go through the dynamic loader's own search path.
    paths.append(_LIB_NAMES[-1])
    return paths


def _try_load(
    candidates: Sequence[str], opener: Callable[[str], Any]
) -> Tuple[str, Any]:
    """Opens the first candidate that loads; raises LibraryNotFoundError
    naming each path tried and why it failed."""
    reasons: List[str] = []
    for path in candidates:
        if os.sep in path and not os.path.exists(path):
            reasons.append(f"{path}: no such file")
            continue
        try:
            return path, opener(path)
        except OSError as exc:
            reasons.append(f"{path}: {exc}")
    lines = "\n  ".join(reasons)
    hint = (
        "set CUABI_LIBRARY to the full path of libcuabi.so, or reinstall the "
        "package (pip install bindings/python builds it)"
    )
    raise LibraryNotFoundError(
        f"libcuabi could not be loaded; tried:\n  {lines}\n{hint}", list(candidates)
    )


def find_library() -> str:
    """The path of the libcuabi that :func:`load_backend` would load."""
    path, _ = _try_load(library_candidates(), ctypes.CDLL)
    return path


class Backend:
    """One loaded libcuabi behind one foreign-function interface.

    ``lib`` is the low layer: every function of the header, called exactly as
    the header declares it. The methods below are the few primitives the
    object layer needs, so that it runs unchanged on either backend.
    """

    name: str = ""
    NULL: Any = None

    def __init__(self, path: str, lib: Any, missing: Dict[str, str]) -> None:
        self.path = path
        self.lib = lib
        # Every function bound once: the generated layer calls through these.
        self.fn = _api.Functions(lib)
        self.missing = missing
        self._trampoline: Any = None
        version = int(lib.cuabi_version())
        if version // 10000 != _api.CUABI_VERSION_MAJOR:
            raise LibraryNotFoundError(
                f"{path} is libcuabi {version // 10000}.x; this binding needs "
                f"{_api.CUABI_VERSION_MAJOR}.x",
                [path],
            )
        self.version = version

    def __repr__(self) -> str:
        return f"<cuabi {self.name} backend: {self.path}>"

    # -- primitives each backend provides ---------------------------------
    def out(self, ctype: str) -> Any:
        """A new out-parameter box for a C type (``int32_t``, ``size_t``,
        ``uint64_t``, ``float``, ``void*`` or a handle type)."""
        raise NotImplementedError

    def ref(self, box: Any) -> Any:
        """The argument that passes ``box`` by address."""
        raise NotImplementedError

    def value(self, box: Any) -> Any:
        """The Python value in ``box`` (an int for pointers; a handle as
        this backend represents it)."""
        raise NotImplementedError

    def set_value(self, box: Any, value: int) -> None:
        """Stores an integer in a scalar out-parameter box (an in-out value)."""
        raise NotImplementedError

    def char_buffer(self, size: int) -> Any:
        """A writable buffer of ``size`` chars for a two-call string."""
        raise NotImplementedError

    def buffer_bytes(self, buf: Any, size: int) -> bytes:
        """The first ``size`` bytes of a buffer char_buffer made."""
        raise NotImplementedError

    def string(self, ptr: Any) -> str:
        """A ``const char*`` result (or a callback's ``char*`` argument) as ``str``."""
        raise NotImplementedError

    def pointer(self, address: int) -> Any:
        """A ``void*`` argument from an integer address (a host function's
        user data too)."""
        return self.handle(address, "void *")

    def handle(self, value: int, ctype: str) -> Any:
        """A handle argument from a raw integer (for interop and tests)."""
        raise NotImplementedError

    def handle_int(self, handle: Any) -> int:
        """The raw integer of a handle (0 for NULL)."""
        raise NotImplementedError

    def string_array(self, items: Sequence[bytes]) -> Tuple[Any, Any]:
        """A ``const char* const*`` argument (NULL when empty) and what keeps
        it alive."""
        raise NotImplementedError

    def array(self, ctype: str, items: Sequence[int]) -> Any:
        """A C array of ``ctype`` (a number type :meth:`out` takes) holding ``items``."""
        raise NotImplementedError

    def size_array(self, items: Sequence[int]) -> Any:
        """A C array of size_t holding ``items``."""
        return self.array("size_t", items)

    def struct(self, ctype: str, count: int = 0) -> Tuple[Any, Any, int]:
        """A zeroed header struct: (the argument that passes it by address,
        the struct whose fields are set by name, its size). With ``count``,
        an array of that many instead (the struct is the array)."""
        raise NotImplementedError

    def field(self, value: Any, keep: List[Any]) -> Any:
        """``value`` as a struct field takes it (``bytes`` for ``const
        char*``, None for NULL, an array); ``keep`` keeps it alive."""
        raise NotImplementedError

    def packed_launcher(self) -> Callable[[Any, Any, Any, bytes, int], int]:
        """``f(function, config, stream, args, args_size) -> status``: the
        cuabi_function_launch_packed entry point, taking the block as ``bytes``."""
        return self.lib.cuabi_function_launch_packed  # type: ignore[no-any-return]

    def memory_view(self, address: int, size: int) -> Any:
        """A writable buffer over ``size`` bytes at ``address`` (memory the
        library owns, e.g. a launch plan's argument block), for
        ``struct.pack_into``. It does not keep that memory alive."""
        raise NotImplementedError

    def plan_launcher(self, plan: Any) -> Tuple[Callable[[Any], int], Any]:
        """``(f, arg)`` such that ``f(arg)`` is ``cuabi_launch_plan_launch(plan)``
        with nothing converted per call: the fastest way to launch a plan."""
        return self.handle_caller("cuabi_launch_plan_launch", plan)

    def handle_caller(self, func: str, handle: Any) -> Tuple[Callable[[Any], int], Any]:
        """``(f, arg)`` such that ``f(arg)`` is ``func(handle)`` for a function
        of the header that takes one handle and returns a status, with
        nothing converted per call (a launch plan's launch, a stream's
        query): made once, called many times."""
        raise NotImplementedError

    # -- helpers built on the primitives ----------------------------------
    def launch_config(
        self,
        grid: Tuple[int, int, int],
        block: Tuple[int, int, int],
        shmem: int,
        flags: int = 0,
        cluster: Tuple[int, int, int] = (0, 0, 0),
        priority: int = 0,
        programmatic_event: Any = None,
        attributes: Optional[Dict[str, Any]] = None,
    ) -> Any:
        """A ``const cuabi_launch_config*`` argument, reusable across calls:
        the library's defaults (``cuabi_launch_config_init``), then these.
        ``programmatic_event`` is a ``cuabi_event`` argument of this backend
        (None: none). ``attributes`` (None: none) holds launch
        attributes by the struct's field names, each None where not set;
        its ``access_policy_window`` is a ``cuabi_access_policy_window`` of
        this backend, its ``completion_event`` a ``cuabi_event`` argument."""
        arg, cfg, size = self.struct("cuabi_launch_config")
        self.call("cuabi_launch_config_init", arg, size)
        cfg.grid_x, cfg.grid_y, cfg.grid_z = grid
        cfg.block_x, cfg.block_y, cfg.block_z = block
        cfg.shared_mem_bytes = shmem
        if flags:
            cfg.flags = flags
        if cluster != (0, 0, 0):
            cfg.cluster_x, cfg.cluster_y, cfg.cluster_z = cluster
        if priority:
            cfg.priority = priority
        if programmatic_event is not None:
            cfg.programmatic_event = programmatic_event
        for name, value in (attributes or {}).items():
            if value is None:
                continue
            if name == "access_policy_window":  # a cuabi_access_policy_window of this backend
                for field in ("base", "bytes", "hit_ratio", "hit_property", "miss_property"):
                    setattr(cfg.access_policy_window, field, getattr(value, field))
            else:
                setattr(cfg, name, int(value) if isinstance(value, int) else value)
        return arg

    def read_launch_config(self, cfg: Any) -> Dict[str, Any]:
        """The fields of a ``cuabi_launch_config`` (the struct itself, as
        :meth:`struct` gives it) as plain values, the event as an int."""
        if not hasattr(cfg, "grid_x"):  # a cffi pointer to the struct
            cfg = cfg[0]
        return {
            "grid": (int(cfg.grid_x), int(cfg.grid_y), int(cfg.grid_z)),
            "block": (int(cfg.block_x), int(cfg.block_y), int(cfg.block_z)),
            "shared_mem": int(cfg.shared_mem_bytes),
            "flags": int(cfg.flags),
            "cluster": (int(cfg.cluster_x), int(cfg.cluster_y), int(cfg.cluster_z)),
            "priority": int(cfg.priority),
            "programmatic_event": self.handle_int(cfg.programmatic_event),
        }

    # -- host functions ------------------------------------------------------
    # One trampoline per backend, made once and kept for the life of the
    # backend: each launch passes the key of its (callable, args) entry as
    # the user data, and the trampoline takes the entry out (exactly once)
    # and runs it. No per-call closure is made or freed on the driver thread.

    def callback(self, ctype: str, fn: Callable[..., Any], error: Any = None) -> Any:
        """A C function pointer of the header's type ``ctype`` calling ``fn``
        (``error``: what it answers should ``fn`` raise); the caller keeps it."""
        raise NotImplementedError

    def memmove(self, dst: Any, src: bytes, size: int) -> Any:
        """Copies ``size`` bytes of ``src`` to the C pointer ``dst``."""
        raise NotImplementedError

    def host_trampoline(self) -> Any:
        """The ``cuabi_host_fn`` argument every host function launch passes."""
        if self._trampoline is None:
            key_of, memmove = self.handle_int, self.memmove

            def trampoline(user_data: Any, message: Any, size: int) -> int:
                def write(data: bytes) -> None:
                    memmove(message, data, len(data))

                return _run_host_func(key_of(user_data), write, int(size))

            self._trampoline = self.callback("cuabi_host_fn", trampoline, error=1)
        return self._trampoline

    def null_callback(self, ctype: str) -> Any:
        """A NULL argument of the header's function-pointer type ``ctype``."""
        return self.NULL

    def launch_host_func(
        self, stream: Any, fn: Optional[Callable[..., Any]], args: Tuple[Any, ...]
    ) -> None:
        """``cuabi_stream_launch_host_func`` running ``fn(*args)``: kept alive
        until it has run, dropped at once when the core refuses the launch.
        ``fn`` None passes NULL, for the core to refuse."""
        self._host_call(_host_pending, "cuabi_stream_launch_host_func", fn, args, stream)

    def graph_host_node(
        self, graph: Any, after: Any, fn: Optional[Callable[..., Any]], args: Tuple[Any, ...]
    ) -> Any:
        """``cuabi_graph_add_host_node`` running ``fn(*args)`` at every launch
        of the graph: the entry stays (the graph may run any number of
        times) unless the core refuses the node. ``fn`` None passes NULL, for
        the core to refuse. Answers the new node's handle."""
        box = self.out("cuabi_graph_node")
        self._host_call(_host_kept, "cuabi_graph_add_host_node", fn, args, graph, after,
                        tail=(self.ref(box),))
        return self.value(box)

    def exec_host_node(
        self, exec_: Any, node: Any, fn: Optional[Callable[..., Any]], args: Tuple[Any, ...]
    ) -> None:
        """``cuabi_graph_exec_set_host_node`` making host node ``node`` run
        ``fn(*args)``, kept as :meth:`graph_host_node` keeps its entry."""
        self._host_call(_host_kept, "cuabi_graph_exec_set_host_node", fn, args, exec_, node)

    def _host_call(
        self,
        table: Dict[int, Tuple[Callable[..., Any], Tuple[Any, ...]]],
        name: str,
        fn: Optional[Callable[..., Any]],
        args: Tuple[Any, ...],
        *lead: Any,
        tail: Tuple[Any, ...] = (),
    ) -> None:
        """Calls ``name(*lead, trampoline, key, *tail)`` with ``fn(*args)``
        entered in ``table`` (_host_pending: until it has run; _host_kept:
        for the life of the process) unless the core refuses; ``fn`` None
        passes NULL, for the core to refuse."""
        if fn is None:
            self.call(name, *lead, self.null_callback("cuabi_host_fn"), self.NULL, *tail)
            return
        if not callable(fn):
            raise TypeError(f"a host function must be callable, not {type(fn).__name__}")
        key = next(_host_keys)
        table[key] = (fn, args)
        try:
            self.call(name, *lead, self.host_trampoline(), self.pointer(key), *tail)
        except BaseException:  # the core refused it: it never runs
            table.pop(key, None)
            raise

    def plan_block(self, plan: Any) -> Any:
        """A launch plan's argument block as a writable buffer (see
        :meth:`memory_view`); valid until the plan is released."""
        address, size = self.get_many(
            "cuabi_launch_plan_get_args", plan, outs=("void*", "size_t")
        )
        return self.memory_view(int(address), int(size))

    def function_params(self, function: Any) -> Tuple[List[Tuple[int, int]], int]:
        """A kernel's parameters as (offset, size) pairs and its argument
        block's size, from one ``cuabi_function_get_params`` call (a second
        only for a kernel of more than 64 parameters)."""
        count, total = self.out("size_t"), self.out("size_t")
        self.set_value(count, 64)
        for _ in range(2):
            ref, params, _ = self.struct("cuabi_param_info", int(self.value(count)))
            status = self.lib.cuabi_function_get_params(
                function, ref, self.ref(count), self.ref(total)
            )
            if status != _api.CUABI_ERROR_INSUFFICIENT_BUFFER:
                break
        self.check(status, "cuabi_function_get_params")
        n = int(self.value(count))
        return [(int(params[i].offset), int(params[i].size)) for i in range(n)], int(
            self.value(total)
        )

    def check_arg_sizes(self, function: Any, sizes: Sequence[int]) -> None:
        """Raises the core's InvalidArgumentError unless arguments of these
        byte sizes fit ``function``'s parameters (count and each size)."""
        self.call(
            "cuabi_function_check_arg_sizes", function, self.size_array(sizes), len(sizes)
        )

    def error(self, status: int, func: str = "") -> CudaError:
        """The exception for a failed call, from this thread's last error."""
        lib = self.lib
        message = self.string(lib.cuabi_last_error_message())
        if not message:
            message = f"{func} failed" if func else ""
        name = self.string(lib.cuabi_status_get_name(status))
        code = int(lib.cuabi_last_error_code())
        log = ""
        if status == _api.CUABI_ERROR_COMPILE:
            try:
                log = self.get_string("cuabi_last_error_log")
            except CudaError:
                log = ""
        launches = self._faulted_launches() if status == _api.CUABI_ERROR_CONTEXT_LOST else ()
        return error_class(status)(message, status, name, code, log, launches)

    def _faulted_launches(self) -> Tuple[FaultedLaunch, ...]:
        """The launches this thread's last error names (those of a sticky
        fault), most recent first. The readers leave the last error as it is."""
        record_type = _launch_record_type
        if record_type is None:  # the package is still loading
            return ()
        lib = self.lib
        launches: List[FaultedLaunch] = []
        # Within the count the readers succeed; were one to fail, the list
        # ends there rather than the error being lost.
        for index in range(int(lib.cuabi_last_error_get_launch_count())):
            arg, record = record_type._init(self)
            if lib.cuabi_last_error_get_launch(index, arg):
                break
            try:
                kernel = self.get_string("cuabi_last_error_get_launch_kernel", index)
            except CudaError:
                break
            launches.append(FaultedLaunch(kernel, record_type._from_native(record)))
        return tuple(launches)

    def check(self, status: int, func: str = "") -> None:
        """Raises the CudaError of ``status`` (from ``func``) when it is not success."""
        if status:
            raise self.error(status, func)

    def call(self, func: str, *args: Any) -> None:
        """Calls ``func`` and raises its CudaError if it failed."""
        status = getattr(self.lib, func)(*args)
        if status:
            raise self.error(status, func)

    def get(self, func: str, *args: Any, out: str = "int32_t") -> Any:
        """Calls ``func(*args, &out)`` and returns the out value."""
        return self.get_many(func, *args, outs=(out,))[0]

    def get_many(self, func: str, *args: Any, outs: Sequence[str]) -> Tuple[Any, ...]:
        """Calls ``func`` with ``args`` and one out-parameter per type of ``outs``; their values."""
        boxes = [self.out(t) for t in outs]
        self.call(func, *args, *[self.ref(b) for b in boxes])
        return tuple(self.value(b) for b in boxes)

    def two_call(self, fn: Any, args: Tuple[Any, ...]) -> bytes:
        """``fn(*args, buf, &size)`` through the two-call pattern: the bytes
        written (a string's with its NUL)."""
        name = getattr(fn, "__name__", "")
        size = self.out("size_t")
        self.check(fn(*args, self.NULL, self.ref(size)), name)
        for _ in range(8):
            buf = self.char_buffer(max(self.value(size), 1))
            status = fn(*args, buf, self.ref(size))
            if status == _api.CUABI_ERROR_INSUFFICIENT_BUFFER:
                continue  # grew in between: *size holds the new size
            self.check(status, name)
            return self.buffer_bytes(buf, self.value(size))
        raise self.error(status, name)

    def get_string(self, func: str, *args: Any) -> str:
        """A string through the two-call pattern (``char* buf, size_t* size``)."""
        data = self.two_call(getattr(self.lib, func), args)
        return data.rstrip(b"\0").decode("utf-8", "replace")

    def get_bytes(self, func: str, *args: Any) -> bytes:
        """A blob through the two-call pattern (``void* buf, size_t* size``)."""
        return self.two_call(getattr(self.lib, func), args)


# The value type of a cuabi_launch_record (cuabi.LaunchRecord), of which
# Backend.error makes a sticky fault's launches. It is generated in
# _objects, which imports this module, so _context_lost registers it when
# the package loads.
_launch_record_type: Any = None


def register_launch_record_type(cls: Any) -> None:
    """Names the value type of ``cuabi_launch_record`` (its ``_init`` and
    ``_from_native``) for :meth:`Backend.error`."""
    global _launch_record_type
    _launch_record_type = cls


# Host functions launched and not yet run: {key: (callable, args)}.
_host_pending: Dict[int, Tuple[Callable[..., Any], Tuple[Any, ...]]] = {}
_host_keys = itertools.count(1)
# Host nodes of graphs, run at every launch: {key: (callable, args)}, kept.
_host_kept: Dict[int, Tuple[Callable[..., Any], Tuple[Any, ...]]] = {}


def host_failure_message(exc: BaseException) -> str:
    """What a host function that raised ``exc`` reports: the exception's
    type and text, as the stream's next synchronize raises it."""
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _utf8_prefix(text: str, limit: int) -> bytes:
    """``text`` as UTF-8 in at most ``limit`` bytes, cut at a character."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data
    return data[:limit].decode("utf-8", "ignore").encode("utf-8")


def _run_host_func(key: int, write: Callable[[bytes], None], size: int) -> int:
    """The trampoline's body, on the driver thread (holding the GIL): runs
    the entry of ``key`` and turns an exception into the failure message.
    Never raises into the driver."""
    try:
        entry = _host_kept.get(key)
        if entry is None:
            entry = _host_pending.pop(key, None)
        if entry is None:
            return 0
        fn, args = entry
        del entry
        try:
            fn(*args)
        except BaseException as exc:  # reported, never unwound into the driver
            if size > 0:
                write(_utf8_prefix(host_failure_message(exc), size - 1) + b"\0")
            return 1
        return 0
    except BaseException:  # noqa: B036 (nothing may escape into the driver)
        return 1


# cuabi_status (*)(handle), its argument left undeclared: see
# CtypesBackend.handle_caller. Releases the GIL during the call, as every
# call into the library does.
_HANDLE_CALL_PROTO = ctypes.CFUNCTYPE(ctypes.c_int32)


def _bind_each(lib: Any, declare: bool) -> Dict[str, str]:
    """The functions of the header ``lib`` lacks, each with why ({name:
    reason}), each other one given its ctypes prototype where ``declare``. A
    library of the same major version but older than this binding may lack
    some functions; only those then fail (AttributeError) if called."""
    missing: Dict[str, str] = {}
    for name, restype, argtypes in _api.DECLARATIONS:
        try:
            fn = getattr(lib, name)
        except AttributeError as exc:
            missing[name] = str(exc)
            continue
        if declare:
            fn.restype, fn.argtypes = restype, argtypes
    return missing


class CtypesBackend(Backend):
    """The standard-library backend (``ctypes.CDLL`` with the prototypes of
    :mod:`cuabi._api`)."""

    name = "ctypes"
    NULL = None

    def __init__(self, path: Optional[str] = None) -> None:
        candidates = [path] if path else library_candidates()
        path, cdll = _try_load(candidates, ctypes.CDLL)
        self._handle_callers: Dict[str, Any] = {}
        super().__init__(path, cdll, _bind_each(cdll, declare=True))

    def out(self, ctype: str) -> Any:
        cls = _api.OUT_BOXES.get(ctype)
        if cls is None:
            raise TypeError(f"no out-parameter type {ctype!r}")
        return cls()

    def ref(self, box: Any) -> Any:
        return ctypes.byref(box)

    def value(self, box: Any) -> Any:
        v = box.value
        return 0 if v is None and isinstance(box, ctypes.c_void_p) else v

    def set_value(self, box: Any, value: int) -> None:
        box.value = value

    def char_buffer(self, size: int) -> Any:
        return ctypes.create_string_buffer(size)

    def buffer_bytes(self, buf: Any, size: int) -> bytes:
        return bytes(buf.raw[:size])

    def string(self, ptr: Any) -> str:
        if not ptr:
            return ""
        return (ptr if isinstance(ptr, bytes) else ctypes.string_at(ptr)).decode("utf-8", "replace")

    def handle(self, value: int, ctype: str) -> Any:
        return value or None

    def handle_int(self, handle: Any) -> int:
        return int(handle or 0)

    def string_array(self, items: Sequence[bytes]) -> Tuple[Any, Any]:
        if not items:
            return None, None
        arr = (ctypes.c_char_p * len(items))(*items)
        return arr, arr

    def array(self, ctype: str, items: Sequence[int]) -> Any:
        return (_api.OUT_BOXES[ctype] * len(items))(*items)

    def struct(self, ctype: str, count: int = 0) -> Tuple[Any, Any, int]:
        cls = getattr(_api, ctype)
        if count:  # an array passes as the pointer to its first element
            arr = (cls * count)()
            return arr, arr, ctypes.sizeof(cls)
        obj = cls()
        return ctypes.byref(obj), obj, ctypes.sizeof(cls)  # byref keeps obj alive

    def field(self, value: Any, keep: List[Any]) -> Any:
        keep.append(value)
        return value

    def memory_view(self, address: int, size: int) -> Any:
        if size == 0:
            return memoryview(bytearray(0))
        return memoryview((ctypes.c_char * size).from_address(address)).cast("B")

    def handle_caller(self, func: str, handle: Any) -> Tuple[Callable[[Any], int], Any]:
        # The cheapest call ctypes makes: a function pointer of no declared
        # argument types (so no converter runs), given the handle as ctypes
        # passes a byref() argument, copied as it is (a c_void_p or an int
        # would be converted into a new argument object on every call). The
        # c_char at the handle's address is never read or written.
        fn = self._handle_callers.get(func)
        if fn is None:
            fn = _HANDLE_CALL_PROTO((func, self.lib))
            self._handle_callers[func] = fn
        if not handle:
            return fn, None  # NULL, for the core to refuse
        return fn, ctypes.byref(ctypes.c_char.from_address(int(handle)))

    def callback(self, ctype: str, fn: Callable[..., Any], error: Any = None) -> Any:
        return getattr(_api, ctype)(fn)

    memmove = staticmethod(ctypes.memmove)  # type: ignore[assignment]

    def null_callback(self, ctype: str) -> Any:
        # ctypes takes only a function-pointer instance for this argtype; one
        # made without a callable is NULL.
        return getattr(_api, ctype)()


class CffiBackend(Backend):
    """The cffi backend (ABI mode, ``ffi.dlopen`` with the cdef of
    :mod:`cuabi._api`)."""

    name = "cffi"
    #: Where the cdef came from: the ``_cuabi_cffi_abi.py`` parsed ahead, or
    #: "parsed at load".
    cdef_from = ""

    def __init__(self, path: Optional[str] = None) -> None:
        candidates = [path] if path else library_candidates()
        ffi, path, lib = self._bind(candidates)
        self.ffi = ffi
        self.NULL = ffi.NULL
        self._void_pp = ffi.typeof("void * *")
        super().__init__(path, lib, _bind_each(lib, declare=False))

    def _bind(self, candidates: Sequence[str]) -> Tuple[Any, str, Any]:
        """``(ffi, path, lib)``: the first candidate opened with ``ffi.dlopen``
        under the generated cdef (ABI mode). The cdef comes parsed ahead
        (:data:`cdef_from`) where a build left ``_cuabi_cffi_abi.py`` beside
        a candidate or in the package, made from this very cdef; else it is
        parsed here (about 40 ms of the process's start)."""
        cffi = _import_cffi(self.name)
        ffi, self.cdef_from = _parsed_ahead(candidates)
        if ffi is None:
            ffi = cffi.FFI()
            ffi.cdef(_api.CDEF)
            self.cdef_from = "parsed at load"
        path, lib = _try_load(candidates, ffi.dlopen)
        return ffi, path, lib

    def out(self, ctype: str) -> Any:
        return self.ffi.new(ctype + " *")

    def ref(self, box: Any) -> Any:
        return box

    def value(self, box: Any) -> Any:
        v = box[0]
        if self.ffi.typeof(box) is self._void_pp:
            return int(self.ffi.cast("uintptr_t", v))
        return v

    def set_value(self, box: Any, value: int) -> None:
        box[0] = value

    def char_buffer(self, size: int) -> Any:
        return self.ffi.new("char[]", size)

    def buffer_bytes(self, buf: Any, size: int) -> bytes:
        return bytes(self.ffi.buffer(buf, size)[:])

    def string(self, ptr: Any) -> str:
        if ptr == self.ffi.NULL:
            return ""
        return str(self.ffi.string(ptr).decode("utf-8", "replace"))

    def handle(self, value: int, ctype: str) -> Any:
        return self.ffi.cast(ctype, value)

    def handle_int(self, handle: Any) -> int:
        if handle is None:
            return 0
        return int(self.ffi.cast("uintptr_t", handle))

    def string_array(self, items: Sequence[bytes]) -> Tuple[Any, Any]:
        if not items:
            return self.ffi.NULL, None
        keep = [self.ffi.new("char[]", s) for s in items]
        arr = self.ffi.new("const char *[]", keep)
        return arr, (arr, keep)

    def array(self, ctype: str, items: Sequence[int]) -> Any:
        return self.ffi.new(ctype + "[]", list(items))

    def struct(self, ctype: str, count: int = 0) -> Tuple[Any, Any, int]:
        obj = self.ffi.new(f"{ctype}[]", count) if count else self.ffi.new(ctype + " *")
        return obj, obj, int(self.ffi.sizeof(ctype))

    def field(self, value: Any, keep: List[Any]) -> Any:
        if value is None:
            return self.ffi.NULL
        if isinstance(value, bytes):
            value = self.ffi.new("char[]", value)
        keep.append(value)
        return value

    def memory_view(self, address: int, size: int) -> Any:
        if size == 0:
            return memoryview(bytearray(0))
        return self.ffi.buffer(self.ffi.cast("char *", address), size)

    def handle_caller(self, func: str, handle: Any) -> Tuple[Callable[[Any], int], Any]:
        return getattr(self.lib, func), handle

    def callback(self, ctype: str, fn: Callable[..., Any], error: Any = None) -> Any:
        return self.ffi.callback(ctype, fn, error=error)

    def memmove(self, dst: Any, src: bytes, size: int) -> Any:
        return self.ffi.memmove(dst, src, size)


ABI_MODULE = "_cuabi_cffi_abi"
_CDEF_SHA256: List[str] = []


def _parsed_ahead(candidates: Sequence[str]) -> Tuple[Any, str]:
    """``(ffi, its file)``: the ``ffi`` of a ``_cuabi_cffi_abi.py`` (cffi's out-of-line ABI mode,
    written by bindings/python/build_cffi_module.py at build time) beside a
    candidate library file or in the package, made from the cdef of
    :mod:`cuabi._api` (its ``CDEF_SHA256``); ``(None, "")`` where there is none."""
    folders = [os.path.dirname(os.path.abspath(c)) for c in candidates if os.sep in c and os.path.isfile(c)]
    folders.append(os.path.dirname(os.path.abspath(__file__)))
    for folder in folders:
        path = os.path.join(folder, ABI_MODULE + ".py")
        if not os.path.isfile(path):
            continue
        if not _CDEF_SHA256:
            import hashlib

            _CDEF_SHA256.append(hashlib.sha256(_api.CDEF.encode("utf-8")).hexdigest())
        try:
            spec = importlib.util.spec_from_file_location("cuabi." + ABI_MODULE, path)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except Exception:  # noqa: BLE001 - another cffi's format, a broken file: parse instead
            continue
        if getattr(module, "CDEF_SHA256", None) == _CDEF_SHA256[0]:
            return module.ffi, path
    return None, ""


def _import_cffi(backend: str) -> Any:
    try:  # optional, and typed here as a module of unknown types
        return importlib.import_module("cffi")
    except ImportError as exc:
        raise ImportError(
            f"the {backend} backend needs the cffi package (pip install cffi); "
            "the ctypes backend (CUABI_BACKEND=ctypes) needs nothing"
        ) from exc


COMPILED_MODULE = "_cuabi_cffi"


def compiled_module_candidates(library: str) -> List[str]:
    """The compiled module's files that exist, in the order they are tried:
    beside ``library`` (a path), then in this package."""
    folders = []
    if os.sep in library:
        folders.append(os.path.dirname(os.path.abspath(library)))
    folders.append(_PACKAGE_DIR)
    found: List[str] = []
    for folder in folders:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, COMPILED_MODULE + suffix)
            if path not in found and os.path.isfile(path):
                found.append(path)
    return found


def _import_compiled(path: str) -> Any:
    """The compiled module at ``path``, imported as ``cuabi._cuabi_cffi``
    (once per file)."""
    name = f"{__package__ or 'cuabi'}.{COMPILED_MODULE}"
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__file__", None) == path:
        return module
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        raise ImportError(f"{path}: not an extension module")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules.setdefault(name, module)
    return module


class CompiledBackend(CffiBackend):
    """The compiled backend: cffi's API (out-of-line) mode, the extension
    module ``_cuabi_cffi`` linked to libcuabi. Everything but how ``ffi``
    and ``lib`` are obtained is the cffi backend's; each call goes from
    Python to the library through C the compiler wrote, with no libffi call
    in between."""

    name = "compiled"

    def _bind(self, candidates: Sequence[str]) -> Tuple[Any, str, Any]:
        _import_cffi(self.name)  # the module's runtime, _cffi_backend, comes with it
        # The library first: the module's link to libcuabi (its soname) then
        # resolves to this one, wherever it lies.
        path, cdll = _try_load(candidates, ctypes.CDLL)
        modules = compiled_module_candidates(path)
        if not modules:
            folder = os.path.dirname(os.path.abspath(path)) if os.sep in path else None
            where = " and ".join(f for f in (folder, _PACKAGE_DIR) if f)
            raise ImportError(
                f"no {COMPILED_MODULE} module in {where} (built without cffi or a C "
                "compiler); CUABI_BACKEND=cffi or ctypes need none"
            )
        reasons: List[str] = []
        want = ctypes.cast(cdll.cuabi_version, ctypes.c_void_p).value
        for module_path in modules:
            try:
                module = _import_compiled(module_path)
            except ImportError as exc:  # e.g. a library older than the module
                reasons.append(f"{module_path}: {exc}")
                continue
            ffi, lib = module.ffi, module.lib
            bound = int(ffi.cast("uintptr_t", lib._cuabi_cffi_version_address()))
            if bound != want:
                reasons.append(
                    f"{module_path}: binds to another libcuabi than {path} (one "
                    "loaded earlier in this process with the same soname)"
                )
                continue
            self._cdll = cdll  # keeps the library loaded
            self.module_path = module_path
            return ffi, path, lib
        raise ImportError(
            "the compiled backend cannot use its module:\n  " + "\n  ".join(reasons)
        )


# Why the default backend is not the compiled one (None while it is, or
# before the default was chosen).
_compiled_reason: Optional[str] = None


def compiled_status() -> Tuple[Optional[str], Optional[str]]:
    """``(module, reason)``: the compiled module's file the default backend
    uses (None when it uses none), and why not (None when it does;
    ``"CUABI_BACKEND=<name>"`` when ``$CUABI_BACKEND`` named another one)."""
    backend = get_backend()
    if isinstance(backend, CompiledBackend):
        return backend.module_path, None
    chosen = os.environ.get("CUABI_BACKEND", "").strip().lower()
    if chosen and chosen != "auto":
        return None, f"CUABI_BACKEND={chosen}"
    return None, _compiled_reason or "not loaded"


_lock = threading.Lock()
_loaded: Dict[Tuple[str, Optional[str]], Backend] = {}
_default: Optional[Backend] = None


_CLASSES = {"ctypes": CtypesBackend, "cffi": CffiBackend, "compiled": CompiledBackend}


def load_backend(name: Optional[str] = None, path: Optional[str] = None) -> Backend:
    """The backend ``name`` (``"compiled"``, ``"cffi"`` or ``"ctypes"``;
    default ``$CUABI_BACKEND``, else ``"auto"``: compiled where its module is
    present and binds, else ctypes) over the library at ``path`` (default:
    the search described in this module). Loaded once per (name, path)."""
    global _compiled_reason
    name = (name or os.environ.get("CUABI_BACKEND") or "auto").strip().lower()
    if name != "auto" and name not in BACKENDS:
        raise ValueError(
            f"unknown cuabi backend {name!r}; choose one of {', '.join(BACKENDS)} or auto"
        )
    if name == "auto":
        chosen = _loaded.get(("auto", path))
        if chosen is not None:
            return chosen
        try:  # LibraryNotFoundError (an OSError) goes through
            chosen = load_backend("compiled", path)
            _compiled_reason = None
        except ImportError as exc:  # no module, no cffi, or bound elsewhere
            _compiled_reason = "; ".join(
                line.strip() for line in str(exc).splitlines() if line.strip()
            ) or type(exc).__name__
            chosen = load_backend("ctypes", path)
        _loaded[("auto", path)] = chosen
        return chosen
    key = (name, path)
    with _lock:
        loaded = _loaded.get(key)
        if loaded is None:
            loaded = _CLASSES[name](path)
            _loaded[key] = loaded
        return loaded


def get_backend() -> Backend:
    """The default backend, loaded on first use."""
    global _default
    backend = _default
    if backend is None:
        backend = load_backend()
        with _lock:
            if _default is None:
                _default = backend
            backend = _default
    return backend


def set_default_backend(backend: "Backend | str | None") -> Optional[Backend]:
    """Makes ``backend`` (a Backend or a name) the default for objects created
    afterwards; None goes back to ``$CUABI_BACKEND``. Returns the previous one."""
    global _default
    if isinstance(backend, str):
        backend = load_backend(backend)
    with _lock:
        previous, _default = _default, backend
    return previous


@contextlib.contextmanager
def use_backend(backend: "Backend | str") -> Iterator[Backend]:
    """``with use_backend("cffi"):`` objects created inside use that backend."""
    chosen = load_backend(backend) if isinstance(backend, str) else backend
    previous = set_default_backend(chosen)
    try:
        yield chosen
    finally:
        set_default_backend(previous)
