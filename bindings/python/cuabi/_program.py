"""NVRTC programs, loaded modules and their kernels."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _constants as C
from ._base import Resource, as_bytes, check_u32, dim3, opt_bytes, resolve_backend
from ._loader import Backend
from ._packing import ArgumentLayout
from ._stream import Stream, stream_arg
from .errors import CompileError

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["Program", "Module", "Kernel", "Headers", "normalize_headers"]

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
    return [as_bytes(o, "option") for o in options]


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
        return bool(self._b.get("cuabi_module_from_cache", self._handle, out="int32_t"))

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


class Kernel(Resource):
    """A kernel (``cuabi_function``). Launch it by calling it:

    >>> kernel(grid, block, (np.float32(2.0), x, y, out, n), stream=s, shared_mem=0)

    Arguments are packed into one block at the kernel's parameter offsets
    (queried once and cached) and launched with one foreign call
    (``cuabi_launch_packed``); see :mod:`cuabi._packing` for the rules. An
    argument whose size differs from its parameter's raises
    InvalidArgumentError naming the parameter, before anything runs.
    """

    _release_fn = "cuabi_function_release"
    _handle_type = "cuabi_function"

    def __init__(self, backend: Backend, handle: Any, module: Module) -> None:
        super().__init__(backend, handle)
        self.module = module
        self._layout: Optional[ArgumentLayout] = None
        self._configs: Dict[Any, Any] = {}
        self._launch_fn = backend.packed_launcher()
        self._name: Optional[str] = None

    @property
    def name(self) -> str:
        """The kernel's (lowered) name."""
        if self._name is None:
            self._name = self._b.get_string("cuabi_function_get_name", self._handle)
        return self._name

    @property
    def param_count(self) -> int:
        return int(
            self._b.get("cuabi_function_get_param_count", self._handle, out="size_t")
        )

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
        b = self._b
        count = int(b.get("cuabi_function_get_param_count", self._handle, out="size_t"))
        offsets, sizes = [], []
        for i in range(count):
            off, size = b.get_many(
                "cuabi_function_get_param_info",
                self._handle,
                i,
                outs=("size_t", "size_t"),
            )
            offsets.append(int(off))
            sizes.append(int(size))
        total = int(b.get("cuabi_function_get_args_size", self._handle, out="size_t"))
        self._layout = ArgumentLayout(offsets, sizes, total, self.name)
        return self._layout

    def attribute(self, attribute: int) -> int:
        """A CUfunction_attribute (``cuabi.capi.CUABI_FUNC_*``)."""
        return int(
            self._b.get(
                "cuabi_function_get_attribute",
                self._handle,
                int(attribute),
                out="int32_t",
            )
        )

    def set_attribute(self, attribute: int, value: int) -> None:
        self._b.call(
            "cuabi_function_set_attribute", self._handle, int(attribute), int(value)
        )

    @property
    def max_threads_per_block(self) -> int:
        return self.attribute(C.CUABI_FUNC_MAX_THREADS_PER_BLOCK)

    @property
    def num_regs(self) -> int:
        return self.attribute(C.CUABI_FUNC_NUM_REGS)

    def pack(self, args: Sequence[Any], types: Optional[Sequence[Any]] = None) -> bytes:
        """The argument block a launch with ``args`` would pass."""
        return (self._layout or self._load_layout()).pack(args, types)

    def _config(self, grid: Dim3, block: Dim3, shared_mem: int) -> Any:
        key = (grid, block, shared_mem)
        try:
            return self._configs[key]
        except KeyError:
            pass
        except TypeError:  # unhashable (a list): normalise first
            key = (dim3(grid, "grid"), dim3(block, "block"), shared_mem)
            cfg = self._configs.get(key)
            if cfg is not None:
                return cfg
        cfg = self._b.launch_config(
            dim3(grid, "grid"),
            dim3(block, "block"),
            check_u32(shared_mem, "shared_mem"),
        )
        if len(self._configs) >= 64:
            self._configs.clear()
        self._configs[key] = cfg
        return cfg

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
        layout = self._layout or self._load_layout()
        cfg = self._config(grid, block, shared_mem)
        data = layout.pack(args, types)
        if stream is None:
            s = self._b.NULL
        elif type(stream) is Stream and stream._b is self._b:
            s = stream._handle
        else:
            s = stream_arg(stream, self._b)
        status = self._launch_fn(self._handle, cfg, s, data, len(data))
        if status:
            raise self._b.error(status, "cuabi_launch_packed")

    launch = __call__

    def __repr__(self) -> str:
        if self._closed:
            return "<cuabi.Kernel closed>"
        return f"<cuabi.Kernel {self.name}>"
