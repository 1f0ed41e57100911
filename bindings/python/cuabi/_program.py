"""NVRTC programs, loaded modules and their kernels."""

from __future__ import annotations

import functools
import threading
import weakref
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ._api import FunctionAttribute
from ._base import (
    Resource,
    as_bytes,
    check_i32,
    check_u32,
    dim3,
    opt_bytes,
    resolve_backend,
)
from ._loader import Backend
from ._packing import ArgumentLayout, no_packer
from ._stream import Stream, stream_arg
from .errors import CompileError, InvalidHandleError

if TYPE_CHECKING:
    from ._device import Device

__all__ = [
    "Program",
    "Module",
    "Kernel",
    "PreparedLaunch",
    "Headers",
    "normalize_headers",
]

Headers = Union[
    Mapping[str, Union[str, bytes]], Iterable[Tuple[str, Union[str, bytes]]], None
]
Dim3 = Union[int, Tuple[int, ...]]


def normalize_headers(headers: Headers) -> Tuple[List[bytes], List[bytes]]:
    """(sources, names) from ``{include_name: source}`` or (name, source) pairs."""
    if not headers:
        return [], []
    items = headers.items() if isinstance(headers, Mapping) else headers
    names: List[bytes] = []
    sources: List[bytes] = []
    for name, source in items:
        names.append(as_bytes(name, "header name"))
        sources.append(as_bytes(source, "header source"))
    return sources, names


def _options(options: Union[str, Sequence[Union[str, bytes]], None]) -> List[bytes]:
    if options is None:
        return []
    if isinstance(options, (str, bytes)):
        options = [options]
    try:
        items = list(options)
    except TypeError:
        raise TypeError(
            "options must be a str, bytes or a sequence of them, "
            f"not {type(options).__name__}"
        ) from None
    return [as_bytes(o, "option") for o in items]


class Program(Resource):
    """An NVRTC program (``cuabi_program``): CUDA C++ source compiled to PTX
    or CUBIN at run time. Needs no GPU.

    >>> prog = Program(source, name_expressions=["write_scalar<float>"])
    >>> prog.compile(["--gpu-architecture=sm_90", "-std=c++17"])
    >>> prog.cubin, prog.log, prog.lowered_name("write_scalar<float>")

    A failed compile raises :class:`~cuabi.CompileError`, whose ``.log`` is
    NVRTC's log."""

    _release_fn = "cuabi_program_release"
    _handle_type = "cuabi_program"

    def __init__(
        self,
        source: Union[str, bytes],
        name: Optional[Union[str, bytes]] = None,
        headers: Headers = None,
        name_expressions: Iterable[str] = (),
        *,
        backend: Union[Backend, str, None] = None,
    ) -> None:
        b = resolve_backend(backend)
        srcs, names = normalize_headers(headers)
        src_arr, keep1 = b.string_array(srcs)
        name_arr, keep2 = b.string_array(names)
        h = b.get(
            "cuabi_program_create",
            as_bytes(source, "source"),
            opt_bytes(name, "name") or b.NULL,
            len(srcs),
            src_arr,
            name_arr,
            out="cuabi_program",
        )
        super().__init__(b, h)
        self.name_expressions: List[str] = []
        for expr in name_expressions:
            self.add_name_expression(expr)

    def add_name_expression(self, expression: str) -> None:
        """Registers e.g. ``"write_scalar<float>"`` before compiling, so its
        lowered name can be looked up after."""
        self._b.call(
            "cuabi_program_add_name_expression",
            self._handle,
            as_bytes(expression, "expression"),
        )
        self.name_expressions.append(expression)

    def compile(
        self, options: Union[str, Sequence[Union[str, bytes]], None] = ()
    ) -> "Program":
        """Compiles with NVRTC ``options`` (e.g. ``--gpu-architecture=sm_90``:
        CUBIN; ``compute_90``: PTX); returns self. Raises CompileError (with
        ``.log``) when NVRTC rejects the source or the options."""
        opts = _options(options)
        arr, _keep = self._b.string_array(opts)
        try:
            self._b.call("cuabi_program_compile", self._handle, len(opts), arr)
        except CompileError as exc:
            if not exc.log:
                try:
                    exc.log = self.log
                except Exception:
                    pass
            raise
        return self

    @property
    def log(self) -> str:
        """NVRTC's compile log ("" before compiling)."""
        return self._b.get_string("cuabi_program_get_log", self._handle)

    @property
    def ptx(self) -> str:
        """The PTX (NotFoundError when the target was an ``sm_XY`` architecture)."""
        return self._b.get_string("cuabi_program_get_ptx", self._handle)

    @property
    def cubin(self) -> bytes:
        """The CUBIN (NotFoundError when the target was a ``compute_XY`` one)."""
        return self._b.get_bytes("cuabi_program_get_cubin", self._handle)

    def lowered_name(self, expression: str) -> str:
        """The mangled name of a registered name expression."""
        return self._b.get_string(
            "cuabi_program_get_lowered_name",
            self._handle,
            as_bytes(expression, "expression"),
        )

    @property
    def lowered_names(self) -> Dict[str, str]:
        """Every registered name expression with its lowered name."""
        return {e: self.lowered_name(e) for e in self.name_expressions}

    def load(self, device: "Device") -> "Module":
        """Loads the compiled image (CUBIN if there is one, else PTX) on ``device``."""
        from .errors import NotFoundError

        try:
            image: bytes = self.cubin
        except NotFoundError:
            image = self.ptx.encode("utf-8")
        return device.load_module(image)


class Module(Resource):
    """Device code loaded on a device (``cuabi_module``); kernels come from it.

    Made by :meth:`Device.compile` (NVRTC plus the on-disk cache),
    :meth:`Device.load_module` or :meth:`Program.load`."""

    _release_fn = "cuabi_module_release"
    _handle_type = "cuabi_module"

    def __init__(self, backend: Backend, handle: Any, device: "Device") -> None:
        super().__init__(backend, handle)
        self.device = device

    @property
    def from_cache(self) -> bool:
        """True when Device.compile served this module from the on-disk cache."""
        return bool(self._b.get("cuabi_module_get_from_cache", self._handle, out="int32_t"))

    def get_kernel(self, name: str) -> "Kernel":
        """The kernel called ``name``, or given by a name expression at compile
        time (``"write_scalar<float>"``). NotFoundError if there is none."""
        h = self._b.get(
            "cuabi_module_get_function",
            self._handle,
            as_bytes(name, "name"),
            out="cuabi_function",
        )
        return Kernel(self._b, h, self)

    get_function = get_kernel
    __getitem__ = get_kernel

    def lowered_name(self, expression: str) -> str:
        """The mangled name of a name expression given at compile time."""
        return self._b.get_string(
            "cuabi_module_get_lowered_name",
            self._handle,
            as_bytes(expression, "expression"),
        )

    def get_global(self, name: str) -> Tuple[int, int]:
        """(device address, size in bytes) of a ``__device__`` global."""
        return tuple(  # type: ignore[return-value]
            int(v)
            for v in self._b.get_many(
                "cuabi_module_get_global",
                self._handle,
                as_bytes(name, "name"),
                outs=("uint64_t", "size_t"),
            )
        )


class _LaunchPlan(Resource):
    """One ``cuabi_launch_plan``: a kernel, a configuration and a stream
    checked once, and an argument block the plan owns."""

    _release_fn = "cuabi_launch_plan_release"
    _handle_type = "cuabi_launch_plan"


def _make_plan(
    owner: Any,
    kernel: "Kernel",
    grid: Dim3,
    block: Dim3,
    shared_mem: int,
    stream: Optional[Stream],
) -> Tuple[Any, Any, Any, _LaunchPlan]:
    """A new plan as what a launch unpacks: (a writable view of its block,
    the launch function, its argument, the plan). The plan comes along so
    that whoever holds the tuple's items keeps the block the view points into
    alive. ``owner`` (the Kernel or PreparedLaunch caching it) is told by the
    stream when the stream is closed, and drops its plans."""
    b = kernel._b
    cfg = b.launch_config(
        dim3(grid, "grid"),
        dim3(block, "block"),
        check_u32(shared_mem, "shared_mem"),
    )
    h = b.get(
        "cuabi_launch_plan_create",
        kernel._arg(b),
        cfg,
        stream_arg(stream, b),
        out="cuabi_launch_plan",
    )
    plan = _LaunchPlan(b, h)
    view = b.plan_block(h)
    launch, arg = b.plan_launcher(h)
    if stream is not None:
        stream._plan_users.add(owner)
    return view, launch, arg, plan


_MAX_PLANS = 32  # per kernel and thread: (grid, block, shared_mem, id(stream))
_MAX_SIGNATURES = 256  # per kernel: tuples of argument types


class Kernel(Resource):
    """A kernel (``cuabi_function``). Launch it by calling it:

    >>> kernel(grid, block, (np.float32(2.0), x, y, out, n), stream=s, shared_mem=0)

    or prepare the configuration once and call the result with the
    arguments alone, the fastest way to launch the same kernel many times:

    >>> launch = kernel.prepare(grid, block, stream=s)
    >>> launch(np.float32(2.0), x, y, out, n)

    Each launch writes the arguments in place into the argument block of a
    launch plan (``cuabi_launch_plan``; one per configuration, stream and
    thread, made on first use and kept) with one ``struct.pack_into``
    compiled per tuple of argument types, then calls
    ``cuabi_launch_plan_launch``: one foreign call with one argument. See
    :mod:`cuabi._packing` for the rules. Arguments that do not fit the
    kernel's parameters raise the core's InvalidArgumentError naming the
    parameter, before anything runs (the core is asked once per signature).
    Launching from several threads at once is safe: each thread writes its
    own plan's block.
    """

    _release_fn = "cuabi_function_release"
    _handle_type = "cuabi_function"

    def __init__(self, backend: Backend, handle: Any, module: Module) -> None:
        super().__init__(backend, handle)
        self.module = module
        self._layout: Optional[ArgumentLayout] = None
        self._name: Optional[str] = None
        # Per thread: {(grid, block, shared_mem, id(stream)): plan entry};
        # None once closed, which drops every thread's plans. Keyed by the
        # stream's id so that the cache does not keep the Stream alive: a
        # stream, when closed or collected, makes every kernel that holds a
        # plan on it drop its plans (before its id can be reused).
        self._tls: Any = threading.local()
        # {tuple of argument types: pack(view, args) -> bool}, shared by all
        # threads, and the one used last, tried first.
        self._packers: Dict[Tuple[type, ...], Callable[[Any, Any], bool]] = {}
        self._last_packer: Callable[[Any, Any], bool] = no_packer
        self._prepared: "weakref.WeakSet[PreparedLaunch]" = weakref.WeakSet()

    def _on_release(self) -> None:
        self._tls = None
        try:
            for prepared in list(self._prepared):
                prepared._tls = None
        except Exception:  # interpreter shutdown
            pass

    def _forget_plans(self) -> None:
        """A stream some plan was made on was closed: drop every thread's
        plans (the next launch makes new ones, or fails on that stream)."""
        if self._tls is not None:
            self._tls = threading.local()

    @property
    def name(self) -> str:
        """The kernel's (lowered) name."""
        if self._name is None:
            self._name = self._b.get_string("cuabi_function_get_name", self._handle)
        return self._name

    @property
    def param_count(self) -> int:
        return len((self._layout or self._load_layout()).sizes)

    @property
    def params(self) -> List[Tuple[int, int]]:
        """(offset, size) of each parameter, as the driver reports them."""
        layout = self._layout or self._load_layout()
        return list(zip(layout.offsets, layout.sizes))

    @property
    def args_size(self) -> int:
        """Bytes of the packed argument block."""
        return (self._layout or self._load_layout()).args_size

    def _load_layout(self) -> ArgumentLayout:
        """The parameters from one call, and the core's check of argument
        sizes (bound to the handle, not to this object)."""
        params, total = self._b.function_params(self._handle)
        check = functools.partial(self._b.check_arg_sizes, self._handle)
        offsets, sizes = [o for o, _ in params], [s for _, s in params]
        self._layout = ArgumentLayout(offsets, sizes, total, self.name, check)
        return self._layout

    def attribute(self, attribute: int) -> int:
        """A CUfunction_attribute (``cuabi.capi.FunctionAttribute``)."""
        return int(
            self._b.get(
                "cuabi_function_get_attribute",
                self._handle,
                check_i32(attribute, "attribute"),
                out="int32_t",
            )
        )

    def set_attribute(self, attribute: int, value: int) -> None:
        self._b.call(
            "cuabi_function_set_attribute",
            self._handle,
            check_i32(attribute, "attribute"),
            check_i32(value, "value"),
        )

    @property
    def max_threads_per_block(self) -> int:
        return self.attribute(FunctionAttribute.MAX_THREADS_PER_BLOCK)

    @property
    def num_regs(self) -> int:
        return self.attribute(FunctionAttribute.NUM_REGS)

    def pack(self, args: Sequence[Any], types: Optional[Sequence[Any]] = None) -> bytes:
        """The argument block a launch with ``args`` would pass."""
        return (self._layout or self._load_layout()).pack(args, types)

    # -- launching ------------------------------------------------------------

    def _packer(self, args: Sequence[Any]) -> Callable[[Any, Any], bool]:
        """The compiled packer for the types of ``args`` (made and kept on
        first use; raises the count error for a wrong number of arguments).
        It becomes the one tried first."""
        try:
            types = tuple(map(type, args))
        except TypeError:
            raise TypeError(
                "args must be a sequence of the kernel's arguments (a tuple or list), "
                f"not {type(args).__name__}"
            ) from None
        pack = self._packers.get(types)
        if pack is None:
            pack = (self._layout or self._load_layout()).compile_packer(types)
            if len(self._packers) >= _MAX_SIGNATURES:
                self._packers.clear()
            self._packers[types] = pack
        self._last_packer = pack
        return pack

    def _plan_entry(
        self, grid: Dim3, block: Dim3, shared_mem: int, stream: Optional[Stream]
    ) -> Tuple[Any, Any, Any, Any]:
        """This thread's plan for the configuration, made when missing."""
        tls = self._tls
        plans: Optional[Dict[Any, Tuple[Any, Any, Any, Any]]] = getattr(tls, "plans", None)
        key: Tuple[Any, ...] = (grid, block, shared_mem, id(stream))
        try:
            hash(key)
        except TypeError:  # a list for grid or block: normalise first
            key = (dim3(grid, "grid"), dim3(block, "block"), shared_mem, id(stream))
            entry = None if plans is None else plans.get(key)
            if entry is not None:
                return entry
        entry = _make_plan(self, self, grid, block, shared_mem, stream)
        if tls is not None:  # else closed: the core refused the plan above
            if plans is None:
                plans = tls.plans = {}
            elif len(plans) >= _MAX_PLANS:
                plans.clear()
            plans[key] = entry
        return entry

    def __call__(
        self,
        grid: Dim3,
        block: Dim3,
        args: Sequence[Any] = (),
        *,
        stream: Optional[Stream] = None,
        shared_mem: int = 0,
        types: Optional[Sequence[Any]] = None,
    ) -> None:
        """Launches on ``stream`` (None: the default stream).

        ``grid`` and ``block`` are an int or a tuple of up to three ints.
        ``types`` (optional, one ctypes type or None per argument) follows
        the overview's ctypes way: each value is converted to its type first."""
        try:
            view, launch, plan_arg, plan = self._tls.plans[
                grid, block, shared_mem, id(stream)
            ]
        except (AttributeError, KeyError, TypeError):
            view, launch, plan_arg, plan = self._plan_entry(
                grid, block, shared_mem, stream
            )
        if types is not None:
            args = (self._layout or self._load_layout()).apply_types(args, types)
        if not self._last_packer(view, args):
            self._packer(args)(view, args)
        status = launch(plan_arg)
        if status:
            raise self._b.error(status, "cuabi_launch_plan_launch")

    launch = __call__

    def prepare(
        self,
        grid: Dim3,
        block: Dim3,
        stream: Optional[Stream] = None,
        shared_mem: int = 0,
    ) -> "PreparedLaunch":
        """A launch of this kernel with the configuration fixed, called with
        the arguments alone: ``launch = kernel.prepare(grid, block,
        stream=s)`` then ``launch(*args)``, as many times as needed. The
        configuration is checked here (a bad one raises now)."""
        return PreparedLaunch(self, grid, block, stream, shared_mem)

    def __repr__(self) -> str:
        if self._closed:
            return "<cuabi.Kernel closed>"
        return f"<cuabi.Kernel {self.name}>"


class PreparedLaunch:
    """A kernel launch with its grid, block, stream and shared memory fixed
    (:meth:`Kernel.prepare`). Calling it with the kernel's arguments launches:

    >>> launch = kernel.prepare(blocks, threads, stream=s)
    >>> for step in range(1000):
    ...     launch(np.float32(2.0), x, y, out, np.uint64(n))

    The arguments follow the rules of ``kernel(grid, block, args)`` and are
    checked the same way. The launch is safe to call from several threads at
    once (each thread gets its own plan, made on its first call).
    ``close()`` (or leaving a ``with`` block) releases the plans now; calling
    it afterwards raises InvalidHandleError, as does calling it after its
    kernel or its stream was closed.
    """

    __slots__ = (
        "kernel",
        "grid",
        "block",
        "stream",
        "shared_mem",
        "_tls",
        "_packer",
        "_closed",
        "__weakref__",
    )

    def __init__(
        self,
        kernel: Kernel,
        grid: Dim3,
        block: Dim3,
        stream: Optional[Stream],
        shared_mem: int,
    ) -> None:
        if stream is not None and not isinstance(stream, Stream):
            stream_arg(stream, kernel.backend)  # raises the TypeError
        self.kernel = kernel
        self.grid = dim3(grid, "grid")
        self.block = dim3(block, "block")
        self.stream = stream
        self.shared_mem = check_u32(shared_mem, "shared_mem")
        self._packer: Callable[[Any, Any], bool] = no_packer
        self._closed = False
        self._tls: Any = threading.local()  # None once closed
        self._entry()  # this thread's plan: a bad configuration raises here
        kernel._prepared.add(self)
        if kernel.closed:  # closed in between: drop the plan made above
            self._tls = None

    def _entry(self) -> Tuple[Any, Any, Any, Any]:
        """This thread's plan, made on its first call."""
        if self._closed:
            raise InvalidHandleError("the prepared launch was closed")
        entry = _make_plan(
            self,
            self.kernel,
            self.grid,
            self.block,
            self.shared_mem,
            self.stream,
        )
        tls = self._tls
        if tls is not None:  # else its kernel was closed
            tls.entry = entry
        return entry

    def _forget_plans(self) -> None:
        """Its stream was closed: the next call fails as the core refuses a
        plan on it."""
        if self._tls is not None:
            self._tls = threading.local()

    def __call__(self, *args: Any) -> None:
        """Launches with ``args`` (as many as the kernel has parameters)."""
        try:
            view, launch, plan_arg, plan = self._tls.entry
        except AttributeError:
            view, launch, plan_arg, plan = self._entry()
        if not self._packer(view, args):
            self._packer = self.kernel._packer(args)
            self._packer(view, args)
        status = launch(plan_arg)
        if status:
            raise self.kernel._b.error(status, "cuabi_launch_plan_launch")

    launch = __call__

    def close(self) -> None:
        """Releases the plans of every thread now (idempotent)."""
        self._closed = True
        self._tls = None

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "PreparedLaunch":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return (
            f"<cuabi.PreparedLaunch{state} {self.kernel!r} grid={self.grid} "
            f"block={self.block} shared_mem={self.shared_mem}>"
        )
