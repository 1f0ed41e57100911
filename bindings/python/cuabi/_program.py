"""NVRTC programs, loaded modules and their kernels."""

from __future__ import annotations

import concurrent.futures
import functools
import weakref
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ._api import NameForm
from ._background import submit
from ._objects import (
    FunctionBase,
    LaunchPlanBase,
    ModuleBase,
    ProgramBase,
    register_owner,
)
from ._base import (
    as_bytes,
    check_size,
    dim3,
)
from ._launch import Dim3, LaunchConfig
from ._loader import Backend
from ._options import CompileOptions, OptionsArg, desc_fields, merged_options
from ._packing import ArgumentLayout, no_packer
from ._stream import Stream, stream_arg
from .errors import InvalidHandleError, NotFoundError

if TYPE_CHECKING:
    from ._device import Device

__all__ = [
    "Program",
    "Module",
    "Kernel",
    "KernelName",
    "PreparedLaunch",
    "Headers",
    "normalize_headers",
]

Headers = Union[
    Mapping[str, Union[str, bytes]], Iterable[Tuple[str, Union[str, bytes]]], None
]
GridOrConfig = Union[Dim3, LaunchConfig]


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


class KernelName(NamedTuple):
    """A kernel of a module (:attr:`Module.kernels`): its name demangled
    (``"doublify(float*)"``, ``"void ops::scale<float>(float*, float)"``;
    an ``extern "C"`` kernel's name as it is) and its symbol in the image
    (``"_ZN3ops5scaleIfEEvPT_S1_"``), which :meth:`Module.get_kernel` takes."""

    name: str
    symbol: str


class Program(ProgramBase):
    """An NVRTC program (``cuabi_program``): CUDA C++ source compiled to PTX
    or CUBIN at run time. Needs no GPU.

    >>> prog = Program(source, name_expressions=["write_scalar<float>"])
    >>> prog.compile(["--gpu-architecture=sm_90", "-std=c++17"])
    >>> prog.compile(arch="sm_90", std=17)          # the same, as typed options
    >>> prog.cubin, prog.log, prog.lowered_name("write_scalar<float>")

    A failed compile raises :class:`~cuabi.CompileError`, whose ``.log`` is
    NVRTC's log. :meth:`compile_async` compiles in the background."""

    def __init__(
        self,
        source: Union[str, bytes],
        name: Optional[Union[str, bytes]] = None,
        headers: Headers = None,
        name_expressions: Iterable[str] = (),
        *,
        backend: Union[Backend, str, None] = None,
    ) -> None:
        srcs, names = normalize_headers(headers)
        # An empty name is NULL too: the core's default file name.
        self._own(ProgramBase.create(source, name or None, srcs, names, backend=backend))
        self.name_expressions: List[str] = []
        for expr in name_expressions:
            self.add_name_expression(expr)

    def add_name_expression(self, expression: str) -> None:  # type: ignore[override]
        """Registers e.g. ``"write_scalar<float>"`` before compiling, so its
        lowered name can be looked up after."""
        super().add_name_expression(expression)
        self.name_expressions.append(expression)

    def compile(self, options: OptionsArg = (), **typed: Any) -> "Program":
        """Compiles with NVRTC ``options`` (e.g. ``--gpu-architecture=sm_90``:
        CUBIN; ``compute_90``: PTX) and the typed options of
        :class:`~cuabi.CompileOptions` as keywords (``arch="sm_90"``,
        ``std=17``, ``defines={"N": 4}``, ``lto=True`` ...; an unknown one
        raises TypeError); ``options`` may be a CompileOptions too. Returns
        self. Raises CompileError (with ``.log``) when NVRTC rejects the
        source or the options, InvalidArgumentError when the core refuses a
        typed value (``desc->defines[0]``: a name that is no macro name)."""
        return self._compile(*merged_options(options, typed))

    def compile_async(
        self,
        options: OptionsArg = (),
        *,
        executor: Optional[concurrent.futures.Executor] = None,
        **typed: Any,
    ) -> "concurrent.futures.Future[Program]":
        """:meth:`compile` in the background: a Future whose result is this
        program (or whose exception is the CompileError). Runs on a small
        shared executor unless ``executor`` is given; the GIL is released
        while NVRTC works, so Python threads go on. A wrong keyword or a value
        of the wrong type raises here; what the core refuses (a macro name, a
        standard) comes from the future."""
        opts, raw = merged_options(options, typed)
        return submit(self._compile, opts, raw, on=executor)

    def _compile(self, opts: CompileOptions, raw: List[bytes]) -> "Program":
        self.compile_with(**desc_fields(opts, raw))  # a CompileError carries the log
        return self

    @property
    def lowered_names(self) -> Dict[str, str]:
        """Every registered name expression with its lowered name."""
        return {e: self.lowered_name(e) for e in self.name_expressions}

    def load(self, device: "Device") -> "Module":
        """Loads the compiled image (CUBIN if there is one, else PTX) on ``device``."""
        try:
            image: bytes = self.cubin
        except NotFoundError:
            image = self.ptx.encode("utf-8")
        return device.load_module(image)


class Module(ModuleBase):
    """Device code loaded on a device (``cuabi_module``); kernels come from it.

    Made by :meth:`Device.compile` (NVRTC plus the on-disk cache),
    :meth:`Device.load_module`, :meth:`Program.load`, :meth:`Linker.link
    <cuabi.Linker.link>` or :meth:`Library.get_module
    <cuabi.Library.get_module>`. :attr:`kernels` lists its kernels."""

    def __init__(self, backend: Backend, handle: Any, device: "Device") -> None:
        super().__init__(backend, handle)
        self.device = device

    @property
    def kernels(self) -> List[KernelName]:
        """Every kernel of the module as (name, symbol) pairs
        (:class:`~cuabi.KernelName`), in the driver's order:

        >>> [k.name for k in mod.kernels]
        ['void ops::scale<float>(float*, float)', 'void ops::scale<int>(int*, int)', 'doublify(float*)']
        >>> mod.get_kernel(mod.kernels[0].symbol)"""
        return [
            KernelName(
                self.kernel_name(i, NameForm.DEMANGLED), self.kernel_name(i, NameForm.SYMBOL)
            )
            for i in range(self.kernel_count)
        ]

    # get_kernel, get_function (ModuleBase): a Kernel of this module.
    __getitem__ = ModuleBase.get_function


class _LaunchPlan(LaunchPlanBase):
    """One ``cuabi_launch_plan``: a kernel, a configuration and a stream
    checked once, and an argument block the plan owns."""

    _config: Optional[LaunchConfig] = None


def _make_plan(
    owner: Any,
    kernel: "Kernel",
    config: LaunchConfig,
    stream: Optional[Stream],
) -> Tuple[Any, Any, Any, _LaunchPlan]:
    """A new plan as what a launch unpacks: (a writable view of its block,
    the launch function, its argument, the plan). The plan comes along so
    that whoever holds the tuple's items keeps the block the view points into
    alive. ``owner`` (the Kernel or PreparedLaunch caching it) is told by the
    stream when the stream is closed, and drops its plans."""
    b = kernel._b
    cfg = config.as_struct(b)
    h = b.get(
        "cuabi_launch_plan_create",
        kernel._arg(b),
        cfg,
        stream_arg(stream, b),
        out="cuabi_launch_plan",
    )
    plan = _LaunchPlan(b, h)
    plan._config = config  # keeps its programmatic event alive with the plan
    view = b.plan_block(h)
    launch, arg = b.plan_launcher(h)
    if stream is not None:
        stream._plan_users.add(owner)
    return view, launch, arg, plan


def _take(pool: List[Any]) -> Any:
    """A free plan entry out of ``pool``, or None when there is none.

    A pool is a list whose first item is None, a marker that keeps the list
    from becoming empty (CPython frees a list's storage when it empties, so
    every launch would free and allocate it again); entries are popped from
    and appended at the end, each by one C call, safe between threads."""
    try:
        entry = pool.pop()
    except IndexError:  # emptied by other threads for a moment
        return None
    if entry is None:  # the marker: other threads hold every plan
        pool.insert(0, None)
    return entry


_MAX_PLANS = 32  # per kernel: (grid, block, shared_mem, id(stream)) or (config, id(stream))
# The keyword options of a launch: LaunchConfig's, past grid, block and shared_mem.
_LAUNCH_OPTIONS = frozenset(LaunchConfig.__slots__) - {"grid", "block", "shared_mem", "_key"}
_MAX_SIGNATURES = 256  # per kernel: tuples of argument types
# The launch configuration structs of plain kernel nodes, by (backend, grid,
# block, shared memory): read-only once made.
_NODE_CONFIGS: Dict[Any, Any] = {}
_PLAIN_DIMS = (int, tuple)
_NOT_A_HANDLE = object()  # what no remembered stream handle is


class Kernel(FunctionBase):
    """A kernel (``cuabi_function``). Launch it by calling it:

    >>> kernel(grid, block, (np.float32(2.0), x, y, out, n), stream=s, shared_mem=0)

    or prepare the configuration once and call the result with the
    arguments alone, the fastest way to launch the same kernel many times:

    >>> launch = kernel.prepare(grid, block, stream=s)
    >>> launch(np.float32(2.0), x, y, out, n)

    Each launch writes the arguments in place into the argument block of a
    launch plan (``cuabi_launch_plan``; one per configuration and stream,
    made on first use and kept) with one ``struct.pack_into`` compiled per
    tuple of argument types, then calls ``cuabi_launch_plan_launch``: one
    foreign call with one argument. See :mod:`cuabi._packing` for the rules.
    Arguments that do not fit the kernel's parameters raise the core's
    InvalidArgumentError naming the parameter, before anything runs (the
    core is asked once per signature). Launching from several threads at
    once is safe: a launch takes its plan out of the configuration's pool
    for as long as it writes the block and launches, so launches that
    overlap each write a plan of their own (a second one is made when
    another thread holds the first).
    """

    def __init__(self, backend: Backend, handle: Any, module: Module) -> None:
        super().__init__(backend, handle)
        self.module = module
        self._layout: Optional[ArgumentLayout] = None
        # {(grid, block, shared_mem, id(stream)): pool of plan entries},
        # shared by all threads: a launch pops an entry (a plan nobody else
        # is writing) and puts it back when launched, so a plan's block is
        # written by one launch at a time. None once closed, which drops
        # every plan. Keyed by the stream's id so that the cache does not
        # keep the Stream alive: a stream, when closed or collected, makes
        # every kernel that holds a plan on it drop its plans (before its id
        # can be reused).
        self._plans: Optional[Dict[Any, List[Any]]] = {}
        # The plain configuration launched last, checked by identity (or, for
        # ints and tuples, by value) before any key is built: (grid, block,
        # shared_mem, the stream's handle
        # object or None, its pool, the plain launcher of the argument types
        # launched last, see _plain_launcher). The handle object, not the
        # Stream, so that the Stream is not kept alive; it is cleared with
        # the plans.
        self._memo: Optional[Tuple[Any, Any, Any, Any, List[Any], Any]] = None
        # The one remembered before it, tried second, so that launches
        # alternating between two configurations (two streams, two sizes)
        # both find theirs.
        self._memo2: Optional[Tuple[Any, Any, Any, Any, List[Any], Any]] = None
        # {tuple of argument types: launch(pool, args) -> bool}, see
        # _plain_launcher.
        self._plain_launchers: Dict[Tuple[type, ...], Callable[[List[Any], Any], bool]] = {}
        # {tuple of argument types: pack(view, args) -> bool}, shared by all
        # threads, and the one used last, tried first.
        self._packers: Dict[Tuple[type, ...], Callable[[Any, Any], bool]] = {}
        self._last_packer: Callable[[Any, Any], bool] = no_packer
        # {tuple of argument types: the PreparedLaunch class whose __call__
        # is compiled for them}, see _prepared_class.
        self._prepared_classes: Dict[Tuple[type, ...], type] = {}
        self._prepared: "weakref.WeakSet[PreparedLaunch]" = weakref.WeakSet()

    @classmethod
    def _made_by(cls, backend: Backend, handle: Any, by: Any) -> "Kernel":
        return cls(backend, handle, by)  # by: its Module (Module.get_kernel)

    def _on_release(self) -> None:
        self._plans = None
        self._memo = self._memo2 = None
        try:
            for prepared in list(self._prepared):
                prepared._pool = None
        except Exception:  # interpreter shutdown
            pass

    def _forget_plans(self) -> None:
        """A stream some plan was made on was closed: drop every plan (the
        next launch makes new ones, or fails on that stream). The plans
        before the memo (see _launch)."""
        if self._plans is not None:
            self._plans = {}
        self._memo = self._memo2 = None

    @property
    def param_count(self) -> int:
        """The number of the kernel's parameters."""
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
    # -- occupancy (active_blocks_per_sm: FunctionBase) ----------------------

    @property
    def suggested_block_size(self) -> int:
        """The block size that maximises occupancy (no dynamic shared memory)."""
        return self.suggest_block_size()[0]

    @property
    def min_grid_size(self) -> int:
        """The smallest grid that fills the device at :attr:`suggested_block_size`."""
        return self.suggest_block_size()[1]

    def suggest_config(
        self,
        elements: int,
        shared_per_block: int = 0,
        shared_per_thread: int = 0,
        **options: Any,
    ) -> LaunchConfig:
        """A launch configuration for ``elements`` independent work items, one
        per thread: a 1-D block of the suggested size and as many blocks as
        cover ``elements``, with the shared memory of the two rules of
        :meth:`suggest_block_size`. ``options`` (``cooperative``,
        ``priority`` ...) are added to it.

        >>> kernel(kernel.suggest_config(n), (x, y, np.uint64(n)))"""
        arg, cfg, size = self._b.struct("cuabi_launch_config")
        self._b.call("cuabi_launch_config_init", arg, size)
        self._b.call(
            "cuabi_function_suggest_config",
            self._handle,
            check_size(elements, "elements"),
            check_size(shared_per_block, "shared_per_block"),
            check_size(shared_per_thread, "shared_per_thread"),
            arg,
        )
        config = LaunchConfig.from_struct(self._b, cfg)
        return config.replace(**options) if options else config

    def max_cluster_size(
        self, grid: GridOrConfig, block: Optional[Dim3] = None, shared_mem: int = 0
    ) -> int:
        """The largest cluster (in blocks) the device can run this kernel
        with, for the grid, block and shared memory given (or a LaunchConfig,
        whose cluster is not read)."""
        return self._per_config("cuabi_function_get_max_cluster_size", grid, block, shared_mem)

    def max_active_clusters(
        self,
        grid: GridOrConfig,
        block: Optional[Dim3] = None,
        shared_mem: int = 0,
        *,
        cluster: Optional[Dim3] = None,
    ) -> int:
        """How many clusters of the configuration's cluster dimensions can be
        resident on the device at once."""
        options = {} if cluster is None else {"cluster": cluster}
        return self._per_config(
            "cuabi_function_get_max_active_clusters", grid, block, shared_mem, **options
        )

    def _per_config(self, func: str, grid: Any, block: Any, shared_mem: int, **options: Any) -> int:
        """``func(kernel, config, &count)`` for the LaunchConfig of these arguments."""
        config = LaunchConfig.of(grid, block, shared_mem, **options).as_struct(self._b)
        return int(self._b.get(func, self._handle, config, out="uint32_t"))

    def _node_launch(
        self,
        grid: Any,
        block: Any,
        args: Sequence[Any],
        types: Optional[Sequence[Any]],
        shared_mem: int,
        options: Dict[str, Any],
    ) -> Tuple[Any, bytes]:
        """A kernel node's ``const cuabi_launch_config*`` argument and packed
        argument block, made as a launch makes them (Graph.add_kernel_node).
        A plain grid, block and shared memory seen before reuse their
        struct: a graph built node by node asks for the same one each time."""
        struct = None
        key: Any = None
        if (
            not options
            and type(shared_mem) is int
            and type(grid) in _PLAIN_DIMS
            and type(block) in _PLAIN_DIMS
        ):
            key = (self._b, grid, block, shared_mem)
            try:
                struct = _NODE_CONFIGS.get(key)
            except TypeError:  # unhashable (a list): made each time
                key = None
        if struct is None:
            struct = LaunchConfig.of(grid, block, shared_mem, **options).as_struct(self._b)
            if key is not None:
                if len(_NODE_CONFIGS) >= _MAX_SIGNATURES:
                    _NODE_CONFIGS.clear()
                _NODE_CONFIGS[key] = struct
        return struct, self._node_args(args, types)

    def _node_args(self, args: Sequence[Any], types: Optional[Sequence[Any]]) -> bytes:
        """The argument block of a kernel node (or its update), packed as a
        launch packs it: the compiled packer of these argument types, one
        ``struct.pack_into``, the signature checked once."""
        if types is not None:
            return self.pack(args, types)
        view = bytearray(self.args_size)
        if not self._last_packer(view, args):
            self._packer(args)(view, args)
        return bytes(view)

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

    def _prepared_class(self, packer: Callable[[Any, Any], bool]) -> type:
        """The class a PreparedLaunch of this kernel takes once called with
        arguments of ``packer``'s types: PreparedLaunch itself where the
        values decide the packing, else a subclass (no state of its own)
        whose ``__call__`` is compiled for these types. It checks the types,
        takes a plan, packs with one ``struct.pack_into``, launches and gives
        the plan back in one frame; any other call (other types, no free
        plan, closed) goes to PreparedLaunch.__call__, which packs, checks
        and raises as always, so the compiled form changes no result and no
        error. Made once per signature and kept."""
        types: Tuple[type, ...] = getattr(packer, "types", ())
        cls = self._prepared_classes.get(types)
        if cls is not None:
            return cls
        layout = self._layout or self._load_layout()
        exprs = getattr(packer, "exprs", None)
        if exprs is None or getattr(packer, "format", None) is None:
            cls = PreparedLaunch
        else:
            cls = _compile_prepared_class(self, layout, types, exprs)
        if len(self._prepared_classes) >= _MAX_SIGNATURES:
            self._prepared_classes.clear()
        self._prepared_classes[types] = cls
        return cls

    def _plain_launcher(
        self, packer: Callable[[Any, Any], bool]
    ) -> Callable[[List[Any], Any], bool]:
        """``launch(pool, args) -> bool``: the plain call's launch of
        arguments of ``packer``'s types with a plan of ``pool`` (see
        ``__call__``). For arguments of exactly these types, as many, and a
        free plan in the pool, it packs (as ``packer`` does: one
        ``struct.pack_into`` where the types decide the bytes, else the
        general rules), launches, gives the plan back, raises the launch's
        error and returns True; for anything else it touches nothing and
        returns False, and the call goes the general way. Compiled, as a
        prepared launch's call, once per signature and kept."""
        types: Tuple[type, ...] = getattr(packer, "types", ())
        fn = self._plain_launchers.get(types)
        if fn is None:
            exprs = getattr(packer, "exprs", None)
            if exprs is None or getattr(packer, "format", None) is None:
                fn = functools.partial(_plain_launch_by, packer, self._b.error)
            else:
                layout = self._layout or self._load_layout()
                fn = _compile_launch(self, layout, types, exprs, prepared=False)
            if len(self._plain_launchers) >= _MAX_SIGNATURES:
                self._plain_launchers.clear()
            self._plain_launchers[types] = fn
        return fn

    def _take_plan(
        self,
        grid: Any,
        block: Any,
        args: Sequence[Any],
        shared_mem: int,
        stream: Optional[Stream],
        options: Dict[str, Any],
    ) -> Tuple[List[Any], Tuple[Any, Any, Any, Any], Sequence[Any], Any]:
        """The general way to a plan (the fast way is the identity check of
        ``_memo`` in ``__call__``): (its pool, an entry taken out of it, the
        arguments, the plans the pool is in when the configuration may be
        remembered by identity, else None).
        Checks the options, makes the LaunchConfig of a launch with options
        or a LaunchConfig, finds the pool of the configuration and the
        stream, and takes a free plan from it, made when there is none
        (first use, or another thread holds it)."""
        if options:
            unknown = [name for name in options if name not in _LAUNCH_OPTIONS]
            if unknown:
                raise TypeError(
                    f"Kernel.__call__() got an unexpected keyword argument '{unknown[0]}'"
                )
        config: Optional[LaunchConfig] = None
        plain = not options and not isinstance(grid, LaunchConfig)
        if not plain:
            config, args = _config_and_args(grid, block, args, shared_mem, options)
            key: Any = (config, id(stream))
        else:
            if block is None:
                raise TypeError("a launch needs a block size (or a LaunchConfig for grid)")
            key = (grid, block, shared_mem, id(stream))
            try:
                hash(key)
            except TypeError:  # a list for grid or block: normalise first
                key = (dim3(grid, "grid"), dim3(block, "block"), shared_mem, id(stream))
        plans = self._plans
        pool = None if plans is None else plans.get(key)
        if pool is None:
            pool, entry = [None], None
            if plans is not None:  # else closed: the core refuses the plan below
                if len(plans) >= _MAX_PLANS:
                    plans.clear()
                plans[key] = pool
        else:
            entry = _take(pool)
        if entry is None:
            if config is None:
                config = LaunchConfig(grid, block, shared_mem)
            entry = _make_plan(self, self, config, stream)
        # A plain configuration as given (not normalised: hashable, so no
        # list that could change in place) may be found again by identity.
        remember = plain and plans is not None and key[0] is grid and key[1] is block
        return pool, entry, args, plans if remember else None

    def __call__(
        self,
        grid: GridOrConfig,
        block: Any = None,
        args: Sequence[Any] = (),
        *,
        stream: Optional[Stream] = None,
        shared_mem: int = 0,
        types: Optional[Sequence[Any]] = None,
        **options: Any,
    ) -> None:
        """Launches on ``stream`` (None: the default stream).

        ``kernel(grid, block, args, ...)``: ``grid`` and ``block`` are an int
        or a tuple of up to three ints. ``kernel(config, args, ...)``: a
        :class:`LaunchConfig` instead (from :meth:`suggest_config`, say).
        The keyword options of :class:`LaunchConfig` (``cooperative=True``,
        ``cluster=(2, 1, 1)``, ``programmatic=True``,
        ``programmatic_event=ev``, ``event_at_block_start=True``,
        ``priority=p``, and the launch attributes ``access_policy_window``,
        ``sync_policy``, ``cluster_scheduling``, ``mem_sync_domain``,
        ``mem_sync_domain_map``, ``shared_carveout``, ``completion_event``,
        ``device_updatable``) apply to either form.
        ``types`` (optional, one ctypes type or None per argument) follows
        the overview's ctypes way: each value is converted to its type first."""
        # The plain configuration launched last (then the one before it),
        # found by identity (the very grid, block and shared_mem objects,
        # the stream's handle object) or by the value of ints and tuples, no
        # key built and no option looked at; its plain launcher checks the arguments' count and exact
        # types, then takes a plan of the configuration's pool, packs and
        # launches in one frame. Anything else (other objects, other types,
        # no free plan) goes the general way.
        memo = self._memo
        if memo is not None and types is None and not options:
            try:
                handle = None if stream is None else stream._handle
            except AttributeError:  # not a Stream: the general way raises the TypeError
                handle = _NOT_A_HANDLE
            if (
                handle is memo[3]
                and (
                    (grid is memo[0] and block is memo[1] and shared_mem is memo[2])
                    # Equal ints and tuples made anew for each call, as
                    # ``kernel((n + 255) // 256, 256, ...)`` makes them:
                    # compared as the plans' keys compare.
                    or (
                        type(grid) in _PLAIN_DIMS
                        and type(block) in _PLAIN_DIMS
                        and type(shared_mem) is int
                        and grid == memo[0]
                        and block == memo[1]
                        and shared_mem == memo[2]
                    )
                )
                and memo[5](memo[4], args)
            ):
                return
            memo = self._memo2
            if (
                memo is not None
                and handle is memo[3]
                and (
                    (grid is memo[0] and block is memo[1] and shared_mem is memo[2])
                    or (
                        type(grid) in _PLAIN_DIMS
                        and type(block) in _PLAIN_DIMS
                        and type(shared_mem) is int
                        and grid == memo[0]
                        and block == memo[1]
                        and shared_mem == memo[2]
                    )
                )
                and memo[5](memo[4], args)
            ):
                return
        self._launch(grid, block, args, stream, shared_mem, types, options)

    def _launch(
        self,
        grid: Any,
        block: Any,
        args: Sequence[Any],
        stream: Optional[Stream],
        shared_mem: int,
        types: Optional[Sequence[Any]],
        options: Dict[str, Any],
    ) -> None:
        """The general way of ``__call__``: checks the options, finds (or
        makes) the plan of the configuration and the stream, packs with the
        packer of the arguments' types and launches; then remembers a plain
        configuration given as it is, with the plain launcher of these types,
        for the identity check of the next call."""
        pool, entry, args, plans = self._take_plan(
            grid, block, args, shared_mem, stream, options
        )
        view, launch, plan_arg, plan = entry
        try:
            if types is not None:
                args = (self._layout or self._load_layout()).apply_types(args, types)
            packer = self._last_packer
            if not packer(view, args):
                packer = self._packer(args)
                packer(view, args)
            status = launch(plan_arg)
        finally:
            pool.append(entry)
        if plans is not None and types is None:
            memo = (
                grid,
                block,
                shared_mem,
                None if stream is None else stream._handle,
                pool,
                self._plain_launcher(packer),
            )
            self._memo2 = self._memo
            self._memo = memo
            # Closed, or a stream closed, meanwhile: both drop the plans
            # (a new dict, or None) before the memos, so one of the two
            # clears them.
            if self._plans is not plans:
                self._memo = self._memo2 = None
        if status:
            raise self._b.error(status, "cuabi_launch_plan_launch")

    launch = __call__

    def prepare(
        self,
        grid: GridOrConfig,
        block: Optional[Dim3] = None,
        stream: Optional[Stream] = None,
        shared_mem: int = 0,
        **options: Any,
    ) -> "PreparedLaunch":
        """A launch of this kernel with the configuration fixed, called with
        the arguments alone: ``launch = kernel.prepare(grid, block,
        stream=s)`` then ``launch(*args)``, as many times as needed. ``grid``
        may be a :class:`LaunchConfig` (``block`` then left out), and the
        keyword options of LaunchConfig (``cooperative``, ``cluster``,
        ``programmatic``, ``programmatic_event``, ``event_at_block_start``,
        ``priority`` and the launch attributes) apply. The configuration is
        checked here (a bad one raises now)."""
        return PreparedLaunch(self, LaunchConfig.of(grid, block, shared_mem, **options), stream)

    def _describe(self) -> str:
        return self.name


def _config_and_args(
    grid: GridOrConfig,
    block: Any,
    args: Sequence[Any],
    shared_mem: int,
    options: Dict[str, Any],
) -> Tuple[LaunchConfig, Sequence[Any]]:
    """The LaunchConfig and the arguments of a launch with ``options`` (of
    LaunchConfig) or a LaunchConfig (``kernel(config, args)`` puts the
    arguments second). The launch options left at their defaults replace
    nothing of a LaunchConfig; its launch attributes apply as given."""
    options = {
        name: value
        for name, value in options.items()
        if not (name in _UNSET_WHEN_NONE and value is None or name in _UNSET_WHEN_FALSE and not value)
    }
    if isinstance(grid, LaunchConfig):
        if block is not None:
            if args:
                raise TypeError(
                    "kernel(config, args): with a LaunchConfig the arguments come second"
                )
            args = block
        return LaunchConfig.of(grid, None, shared_mem, **options), args
    return LaunchConfig.of(grid, block, shared_mem, **options), args


_UNSET_WHEN_NONE = frozenset(("cluster", "programmatic_event"))
_UNSET_WHEN_FALSE = frozenset(("cooperative", "programmatic", "event_at_block_start", "priority"))


# The compiled launch of one signature (a prepared launch's ``__call__``, a
# plain call's ``launch``), generated from indices and the packer's
# expressions only: checks the arguments, takes a plan (``take``: its
# ``mismatch`` when none is free), packs with one ``struct.pack_into`` and
# launches.
_LAUNCH_SOURCE = """\
def {name}({params}):
    {unpack}
{take}
    view, launch, plan_arg, plan = entry
    try:
        try:
            _pack_into(view, 0{exprs})
        except Exception:
            _general(view, args)
        status = launch(plan_arg)
    finally:
        pool.append(entry)
    if status:
        raise _error(status, "cuabi_launch_plan_launch"){done}
"""

_PREPARED_TAKE = """\
    pool = self._pool
    try:
        entry = pool.pop()
        if entry is None:
            pool.insert(0, None)
            raise IndexError
    except (IndexError, AttributeError):
        return _generic(self, *args)"""

_PLAIN_TAKE = """\
    try:
        entry = pool.pop()
    except IndexError:
        return False
    if entry is None:
        pool.insert(0, None)
        return False"""


def _unpack_source(n: int, mismatch: str) -> str:
    """Code that unpacks ``args`` into ``a0`` ... ``a<n-1>`` and runs
    ``mismatch`` (a return) unless they are exactly ``n`` values of exactly
    the types ``_t0`` ... (generated from indices only)."""
    if not n:
        return f"if args:\n        {mismatch}"
    names = "".join(f"a{i}, " for i in range(n))
    checks = " or ".join(f"type(a{i}) is not _t{i}" for i in range(n))
    return (
        f"try:\n        {names}= args\n    except (TypeError, ValueError):\n"
        f"        {mismatch}\n    if {checks}:\n        {mismatch}"
    )


def _compile_launch(
    kernel: "Kernel",
    layout: ArgumentLayout,
    types: Tuple[type, ...],
    exprs: Sequence[str],
    prepared: bool,
) -> Any:
    """The compiled launch of arguments of exactly ``types``: a prepared
    launch's ``__call__`` (``prepared``; anything else goes to
    PreparedLaunch.__call__) or Kernel._plain_launcher's ``launch(pool,
    args) -> bool`` (anything else answers False): the compiled packer's
    checks and ``struct.pack_into`` written into the launch itself."""
    mismatch = "return _generic(self, *args)" if prepared else "return False"
    source = _LAUNCH_SOURCE.format(
        name="__call__" if prepared else "launch",
        params="self, *args" if prepared else "pool, args",
        unpack=_unpack_source(len(types), mismatch),
        take=_PREPARED_TAKE if prepared else _PLAIN_TAKE,
        exprs="".join(", " + e for e in exprs),
        done="" if prepared else "\n    return True",
    )
    packer, _ = layout.compiled_form(types)
    env = layout.compile_env(packer, types)
    env.update({"_generic": PreparedLaunch.__call__, "_error": kernel._b.error})
    what = "prepared launch" if prepared else "plain launch"
    name = f"<cuabi {what} of {layout.kernel or 'a kernel'}>"
    exec(compile(source, name, "exec"), env)
    return env["__call__" if prepared else "launch"]


def _plain_launch_by(
    packer: Callable[[Any, Any], bool], error: Callable[..., Exception], pool: List[Any], args: Any
) -> bool:
    """Kernel._plain_launcher's function where the values decide the
    packing (NumPy arrays, structured scalars ...): ``packer`` packs or
    declines, as in the general way."""
    entry = _take(pool)
    if entry is None:
        return False
    view, launch, plan_arg, plan = entry
    status = 0
    try:
        packed = packer(view, args)
        if packed:
            status = launch(plan_arg)
    finally:
        pool.append(entry)
    if not packed:
        return False
    if status:
        raise error(status, "cuabi_launch_plan_launch")
    return True


def _compile_prepared_class(
    kernel: "Kernel", layout: ArgumentLayout, types: Tuple[type, ...], exprs: Sequence[str]
) -> type:
    """A PreparedLaunch subclass whose ``__call__`` is compiled for
    arguments of exactly ``types`` (see Kernel._prepared_class)."""
    call = _compile_launch(kernel, layout, types, exprs, prepared=True)
    call.__doc__ = PreparedLaunch.__call__.__doc__
    return type(
        "PreparedLaunch",
        (PreparedLaunch,),
        {
            "__slots__": (),
            "__module__": PreparedLaunch.__module__,
            "__qualname__": PreparedLaunch.__qualname__,
            "__doc__": PreparedLaunch.__doc__,
            "__call__": call,
            "launch": call,
        },
    )


class PreparedLaunch:
    """A kernel launch with its configuration and stream fixed
    (:meth:`Kernel.prepare`). Calling it with the kernel's arguments launches:

    >>> launch = kernel.prepare(blocks, threads, stream=s)
    >>> for step in range(1000):
    ...     launch(np.float32(2.0), x, y, out, np.uint64(n))

    The arguments follow the rules of ``kernel(grid, block, args)`` and are
    checked the same way. The launch is safe to call from several threads at
    once (a call takes a plan out of the launch's pool while it writes and
    launches it; calls that overlap get a plan each, made when needed).
    ``close()`` (or leaving a ``with`` block) releases the plans now; calling
    it afterwards raises InvalidHandleError, as does calling it after its
    kernel or its stream was closed.
    """

    __slots__ = (
        "kernel",
        "config",
        "stream",
        "_pool",
        "_packer",
        "_closed",
        "__weakref__",
    )

    def __init__(
        self,
        kernel: Kernel,
        config: LaunchConfig,
        stream: Optional[Stream],
    ) -> None:
        if stream is not None and not isinstance(stream, Stream):
            stream_arg(stream, kernel.backend)  # raises the TypeError
        self.kernel = kernel
        self.config = config
        self.stream = stream
        self._packer: Callable[[Any, Any], bool] = no_packer
        self._closed = False
        # The free plans (entries as _make_plan gives them) above a None
        # marker (see _take); a call takes one out while it writes its block
        # and launches. None once closed.
        self._pool: Optional[List[Any]] = None
        self._pool = [None, self._entry()]  # a bad configuration raises here
        kernel._prepared.add(self)
        if kernel.closed:  # closed in between: drop the plan made above
            self._pool = None

    @property
    def grid(self) -> Tuple[int, int, int]:
        """The grid the launch was prepared with, in blocks."""
        return self.config.grid

    @property
    def block(self) -> Tuple[int, int, int]:
        """The block the launch was prepared with, in threads."""
        return self.config.block

    @property
    def shared_mem(self) -> int:
        """The dynamic shared memory per block, in bytes."""
        return self.config.shared_mem

    def _entry(self) -> Tuple[Any, Any, Any, Any]:
        """A new plan: on the first call, and whenever the calls that
        overlap outnumber the plans."""
        if self._closed:
            raise InvalidHandleError("the prepared launch was closed")
        return _make_plan(self, self.kernel, self.config, self.stream)

    def _forget_plans(self) -> None:
        """Its stream was closed: the next call fails as the core refuses a
        plan on it."""
        if self._pool is not None:
            self._pool = [None]

    def __call__(self, *args: Any) -> None:
        """Launches with ``args`` (as many as the kernel has parameters)."""
        pool = self._pool
        try:
            entry = pool.pop()  # type: ignore[union-attr]
            if entry is None:  # the marker (see _take): other threads hold every plan
                pool.insert(0, None)  # type: ignore[union-attr]
                raise IndexError
        except (IndexError, AttributeError):  # none free, or closed (None)
            entry = self._entry()
            if pool is None:  # its kernel was closed: the plan goes with this call
                pool = []
        view, launch, plan_arg, plan = entry
        try:
            if not self._packer(view, args):
                packer = self.kernel._packer(args)
                self._packer = packer
                packer(view, args)
                # Calls with these types from now on: one frame (see
                # _prepared_class); others come back here.
                self.__class__ = self.kernel._prepared_class(packer)
            status = launch(plan_arg)
        finally:
            pool.append(entry)  # type: ignore[union-attr]
        if status:
            raise self.kernel._b.error(status, "cuabi_launch_plan_launch")

    launch = __call__

    def close(self) -> None:
        """Releases the plans of every thread now (idempotent)."""
        self._closed = True
        self._pool = None

    @property
    def closed(self) -> bool:
        """Whether close() has released the prepared launch."""
        return self._closed

    def __enter__(self) -> "PreparedLaunch":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<cuabi.PreparedLaunch{state} {self.kernel!r} {self.config!r}>"


register_owner("cuabi_program", Program)
register_owner("cuabi_module", Module)
register_owner("cuabi_function", Kernel)
