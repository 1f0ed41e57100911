"""Packing kernel arguments into the one block ``cuabi_function_launch_packed`` takes.

A pure function of the values and the kernel's parameter offsets and sizes,
so every rule is testable without a GPU:

* NumPy scalars (and one-element arrays) and ctypes values are copied
  exactly; their size must equal the parameter's.
* A Python ``float`` fills a 4-byte parameter as float32, an 8-byte one as
  float64 (a 2-byte one as float16); a ``complex`` an 8- or 16-byte one.
* A Python ``int`` (or ``bool``, ``IntEnum``) fills a 1, 2, 4 or 8-byte
  parameter; it must fit that size as a signed or an unsigned integer.
* A cuabi buffer, anything with ``__cuda_array_interface__`` (CuPy, PyTorch,
  Numba) or ``__dlpack__`` (JAX ...) passes its device address; ``None``
  passes a NULL pointer. The parameter must be pointer-sized.
* A NumPy structured scalar or a ``ctypes.Structure`` is a struct by value.

A mismatch raises :class:`~cuabi.errors.InvalidArgumentError` naming the
parameter, before anything reaches the GPU.
"""

from __future__ import annotations

import ctypes
import enum
import struct
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .errors import InvalidArgumentError

__all__ = [
    "pack_args",
    "pack_value",
    "POINTER_SIZE",
    "ArgumentLayout",
    "register_pointer_type",
]

POINTER_SIZE = ctypes.sizeof(ctypes.c_void_p)

_FLOAT = {2: struct.Struct("<e"), 4: struct.Struct("<f"), 8: struct.Struct("<d")}
_COMPLEX = {8: struct.Struct("<ff"), 16: struct.Struct("<dd")}
_POINTER = struct.Struct("<Q" if POINTER_SIZE == 8 else "<I")


def _what(value: Any) -> str:
    t = type(value)
    mod = t.__module__
    return t.__name__ if mod == "builtins" else f"{mod}.{t.__name__}"


def _where(index: int, kernel: Optional[str]) -> str:
    return f"kernel '{kernel}' parameter {index}" if kernel else f"parameter {index}"


def _size_error(value: Any, nbytes: int, size: int, index: int, kernel: Optional[str]):
    return InvalidArgumentError(
        f"{_where(index, kernel)} is {size} bytes, but the argument given is "
        f"{nbytes} bytes ({_what(value)})"
    )


def _pack_int(value: int, size: int, index: int, kernel: Optional[str]) -> bytes:
    if size not in (1, 2, 4, 8):
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes; a Python int fills only "
            "a 1, 2, 4 or 8-byte parameter (pass a NumPy or ctypes value)"
        )
    bits = size * 8
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes, and the int {value} does not fit "
            f"in {bits} bits (signed or unsigned)"
        )
    return value.to_bytes(size, "little", signed=value < 0)


def _pack_float(value: float, size: int, index: int, kernel: Optional[str]) -> bytes:
    fmt = _FLOAT.get(size)
    if fmt is None:
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes; a Python float fills a 4-byte "
            "(float32) or 8-byte (float64) parameter"
        )
    try:
        return fmt.pack(value)
    except (OverflowError, struct.error):
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes, and the float {value!r} is out "
            f"of the range of a {size * 8}-bit float"
        ) from None


def _pack_complex(
    value: complex, size: int, index: int, kernel: Optional[str]
) -> bytes:
    fmt = _COMPLEX.get(size)
    if fmt is None:
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes; a Python complex fills an 8-byte "
            "(complex64) or 16-byte (complex128) parameter"
        )
    try:
        return fmt.pack(value.real, value.imag)
    except (OverflowError, struct.error):
        raise InvalidArgumentError(
            f"{_where(index, kernel)}: the complex {value!r} is out of range"
        ) from None


def _pack_pointer(
    value: Any, address: int, size: int, index: int, kernel: Optional[str]
) -> bytes:
    if size != POINTER_SIZE:
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes, but the argument given is "
            f"{POINTER_SIZE} bytes (a device pointer: {_what(value)})"
        )
    return _POINTER.pack(address)


def _pack_exact(
    value: Any, data: bytes, size: int, index: int, kernel: Optional[str]
) -> bytes:
    if len(data) != size:
        raise _size_error(value, len(data), size, index, kernel)
    return data


def _numpy_name(dtype: Any) -> str:
    return dtype.name if dtype.fields is None else f"void {dtype}"


def _pack_numpy(value: Any, size: int, index: int, kernel: Optional[str]) -> bytes:
    np = sys.modules["numpy"]
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise InvalidArgumentError(
                f"{_where(index, kernel)}: the argument is a host array of "
                f"{value.size} elements; pass one value, or copy the array to the "
                "device and pass the buffer"
            )
        if value.dtype.hasobject:
            raise InvalidArgumentError(
                f"{_where(index, kernel)}: an object array has no C value"
            )
        nbytes = value.dtype.itemsize
        if nbytes != size:
            raise InvalidArgumentError(
                f"{_where(index, kernel)} is {size} bytes, but the argument given is "
                f"{nbytes} bytes (numpy.ndarray of {value.dtype})"
            )
        return value.tobytes()
    # np.generic: bool_, integers, floats, complex, void (structured)
    if isinstance(value, np.object_):
        raise InvalidArgumentError(
            f"{_where(index, kernel)}: a numpy object has no C value"
        )
    nbytes = value.dtype.itemsize
    if nbytes != size:
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes, but the argument given is "
            f"{nbytes} bytes (numpy.{_numpy_name(value.dtype)})"
        )
    return value.tobytes()


def _pack_ctypes(value: Any, size: int, index: int, kernel: Optional[str]) -> bytes:
    nbytes = ctypes.sizeof(value)
    if nbytes != size:
        raise InvalidArgumentError(
            f"{_where(index, kernel)} is {size} bytes, but the argument given is "
            f"{nbytes} bytes (ctypes.{type(value).__name__})"
        )
    return ctypes.string_at(ctypes.addressof(value), nbytes)


def _device_address(value: Any) -> Optional[int]:
    """The device address behind a buffer-like object, or None if it is not one."""
    address = getattr(value, "__cuabi_ptr__", None)
    if address is not None:
        return int(address)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0] or 0)
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        from ._dlpack import dlpack_pointer

        address, _capsule = dlpack_pointer(value)
        return address
    return None


_Packer = Callable[[Any, int, int, Optional[str]], bytes]


def _numpy_scalar_packer(t: type) -> _Packer:
    """A packer for one fixed-size NumPy scalar type (bool_, int32, float16 ...)."""
    itemsize = sys.modules["numpy"].dtype(t).itemsize

    def pack(v: Any, s: int, i: int, k: Optional[str]) -> bytes:
        if s != itemsize:
            return _pack_numpy(v, s, i, k)  # raises, naming the parameter
        return v.tobytes()

    return pack


def _resolve(value: Any) -> Optional[_Packer]:
    """The packer for values of ``type(value)``, or None when the value is no
    plain value (a device array is looked at per value)."""
    t = type(value)
    if t is float:
        return _pack_float
    if t is bool or t is int:
        return lambda v, s, i, k: _pack_int(int(v), s, i, k)
    if t is complex:
        return _pack_complex
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, (np.generic, np.ndarray)):
        if isinstance(value, np.generic) and not isinstance(
            value, (np.void, np.object_)
        ):
            return _numpy_scalar_packer(t)
        return _pack_numpy
    if isinstance(value, ctypes._SimpleCData) and t is ctypes.c_void_p:
        return lambda v, s, i, k: _pack_pointer(v, v.value or 0, s, i, k)
    if isinstance(
        value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)
    ):
        return _pack_ctypes
    if isinstance(value, ctypes._Pointer):
        return _pack_ctypes
    if isinstance(value, enum.Enum):
        return lambda v, s, i, k: pack_value(v.value, s, i, k)
    if isinstance(value, int):  # int subclasses that are not enums
        return lambda v, s, i, k: _pack_int(int(v), s, i, k)
    if isinstance(value, float):
        return lambda v, s, i, k: _pack_float(float(v), s, i, k)
    return None


def _pointer_packer(t: type) -> Optional[_Packer]:
    """A packer for a device-array type whose class declares where its address
    is (cuabi buffers, CUDA Array Interface objects); read anew per value."""
    if isinstance(getattr(t, "__cuabi_ptr__", None), property):
        return lambda v, s, i, k: _pack_pointer(v, v.__cuabi_ptr__, s, i, k)
    if isinstance(getattr(t, "__cuda_array_interface__", None), property):

        def pack(v: Any, s: int, i: int, k: Optional[str]) -> bytes:
            return _pack_pointer(
                v, int(v.__cuda_array_interface__["data"][0] or 0), s, i, k
            )

        return pack
    return None


_PACKERS: Dict[type, _Packer] = {}


def pack_value(
    value: Any, size: int, index: int = 0, kernel: Optional[str] = None
) -> bytes:
    """The ``size`` bytes that pass ``value`` to parameter ``index``."""
    packer = _PACKERS.get(type(value))
    if packer is not None:
        return packer(value, size, index, kernel)
    if value is None:
        return _pack_pointer(value, 0, size, index, kernel)
    packer = _resolve(value)
    if packer is None:
        # Not a plain value: a device array (cuabi, CuPy, PyTorch, JAX ...)?
        try:
            address = _device_address(value)
        except BufferError as exc:
            raise InvalidArgumentError(f"{_where(index, kernel)}: {exc}") from None
        if address is None:
            raise InvalidArgumentError(
                f"{_where(index, kernel)}: cannot pass a {_what(value)} as a kernel "
                "argument (use a number, a NumPy or ctypes value, a device buffer or "
                "array, or None)"
            )
        packer = _pointer_packer(type(value))
        if packer is None:
            return _pack_pointer(value, address, size, index, kernel)
    if len(_PACKERS) < 1024:
        _PACKERS[type(value)] = packer
    return packer(value, size, index, kernel)


def _apply_type(value: Any, ctype: Any, index: int, kernel: Optional[str]) -> Any:
    """The ctypes way: convert ``value`` to ``ctype`` (None: leave it as it is)."""
    if ctype is None:
        return value
    if ctype is ctypes.c_void_p:
        address = _device_address(value)
        if address is not None:
            return ctypes.c_void_p(address)
    try:
        return value if isinstance(value, ctype) else ctype(value)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(
            f"{_where(index, kernel)}: cannot convert {_what(value)} to {ctype.__name__}: {exc}"
        ) from None


# ---------------------------------------------------------------------------
# Packing in place, compiled per signature
# ---------------------------------------------------------------------------
#
# A launch plan owns its argument block; a launch writes the arguments into
# it with one struct.Struct.pack_into. Everything the rules above decide from
# an argument's type alone (which struct code, whether its size fits the
# parameter) is decided once per tuple of argument types and kept; what
# depends on the value (an int's range, a float's range, a one-element
# array's dtype, a closed buffer) is left to pack_into, and whenever the
# compiled form cannot take the values as they are, the block is packed again
# by the general rules above, which either succeed or raise their error
# naming the parameter. So the compiled form never changes what is accepted,
# what is written, or which error is raised.

_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}  # signed; an unsigned value past
# the signed range fails pack_into and takes the general rules
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}
_POINTER_CODE = "Q" if POINTER_SIZE == 8 else "I"
_NUMPY_CODES = {
    ("b", 1): "?",
    ("i", 1): "b",
    ("u", 1): "B",
    ("i", 2): "h",
    ("u", 2): "H",
    ("i", 4): "i",
    ("u", 4): "I",
    ("i", 8): "q",
    ("u", 8): "Q",
    # float16 is left to .tobytes(), which keeps NaN payloads exactly
    ("f", 4): "f",  # NaNs too (see _argument_code)
    ("f", 8): "d",
}

# Device-memory classes whose instances keep their address in a plain
# attribute (None once released, which makes pack_into fail and the general
# rules raise the class's own error).
_POINTER_ATTRIBUTES: Dict[type, str] = {}


def register_pointer_type(cls: type, attribute: str) -> None:
    """Packs instances of exactly ``cls`` as the int in ``attribute``, read
    without a call (a device buffer's cached address). The attribute must be
    None when the address is no longer valid, and ``cls`` must still give
    ``__cuabi_ptr__``, which the general rules read."""
    if not attribute.isidentifier():
        raise ValueError(f"{attribute!r} is not an attribute name")
    _POINTER_ATTRIBUTES[cls] = attribute


def _argument_code(t: type, size: int, index: int) -> Tuple[str, Optional[str]]:
    """(struct code, expression giving its value; None for padding) for
    argument ``index`` (in the variable ``a<index>``), of type ``t``, to a
    parameter of ``size`` bytes: the fast form of the rules of pack_value, or
    the general one (``Ns`` with pack_value's bytes) where no fast form is
    exact."""
    var = f"a{index}"
    general = f"{size}s", f"_pack_value({var}, {size}, {index}, _kernel)"
    if t is float:
        code = _FLOAT_CODES.get(size)
        return (code, var) if code else general
    if t is int or t is bool:
        code = _INT_CODES.get(size)
        return (code, var) if code else general
    if t is type(None):
        return (f"{size}x", None) if size == POINTER_SIZE else general
    attribute = _POINTER_ATTRIBUTES.get(t)
    if attribute is not None:
        if size != POINTER_SIZE:
            return general
        return _POINTER_CODE, f"{var}.{attribute}"
    np = sys.modules.get("numpy")
    if np is not None and issubclass(t, np.generic):
        if issubclass(t, (np.void, np.object_)):
            return general
        dtype = np.dtype(t)
        code = _NUMPY_CODES.get((dtype.kind, dtype.itemsize))
        if code is None or dtype.itemsize != size:
            return general
        if code == "f":
            # Through a double, a signalling NaN would come back quieted: a
            # NaN fails pack_into (None is no float) and takes .tobytes().
            return code, f"({var} if {var} == {var} else None)"
        return code, var
    if np is not None and issubclass(t, np.ndarray):
        return general
    if issubclass(t, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union)):
        return general
    if issubclass(t, (ctypes.Array, ctypes._Pointer, complex, enum.Enum)):
        return general
    if issubclass(t, int):
        code = _INT_CODES.get(size)
        return (code, f"int({var})") if code else general
    if issubclass(t, float):
        code = _FLOAT_CODES.get(size)
        return (code, f"float({var})") if code else general
    if isinstance(getattr(t, "__cuabi_ptr__", None), property):
        if size != POINTER_SIZE:
            return general
        return _POINTER_CODE, f"{var}.__cuabi_ptr__"
    return general


class ArgumentLayout:
    """A kernel's parameter offsets and sizes and the block size, prepared once."""

    __slots__ = ("offsets", "sizes", "args_size", "kernel", "_plan", "_tail")

    def __init__(
        self,
        offsets: Sequence[int],
        sizes: Sequence[int],
        args_size: Optional[int] = None,
        kernel: Optional[str] = None,
    ) -> None:
        if len(offsets) != len(sizes):
            raise ValueError("offsets and sizes differ in length")
        self.offsets = tuple(int(o) for o in offsets)
        self.sizes = tuple(int(s) for s in sizes)
        end = 0
        plan = []
        for i, (offset, size) in enumerate(zip(self.offsets, self.sizes)):
            if offset < end:
                raise ValueError(
                    f"parameter {i} at offset {offset} overlaps the one before"
                )
            plan.append((i, bytes(offset - end), size))  # zero padding, then the value
            end = offset + size
        self.args_size = end if args_size is None else int(args_size)
        if self.args_size < end:
            raise ValueError(
                f"args_size {self.args_size} is smaller than the parameters' end {end}"
            )
        self.kernel = kernel
        self._plan = tuple(plan)
        self._tail = bytes(self.args_size - end)

    def pack(
        self, values: Sequence[Any], types: Optional[Sequence[Any]] = None
    ) -> bytes:
        """The argument block for ``values`` (see the module docstring)."""
        if types is not None:
            values = self.apply_types(values, types)
        elif len(values) != len(self._plan):
            raise self.count_error(len(values))
        kernel = self.kernel
        parts = []
        append = parts.append
        packers = _PACKERS
        for (i, pad, size), value in zip(self._plan, values):
            if pad:
                append(pad)
            packer = packers.get(type(value))
            if packer is not None:
                append(packer(value, size, i, kernel))
            else:
                append(pack_value(value, size, i, kernel))
        append(self._tail)
        return b"".join(parts)

    def apply_types(self, values: Sequence[Any], types: Sequence[Any]) -> List[Any]:
        """The overview's ctypes way: each value converted to its ctypes type
        (None leaves it as it is), after checking both counts."""
        n = len(self._plan)
        if len(values) != n:
            raise self.count_error(len(values))
        if len(types) != n:
            raise InvalidArgumentError(
                f"{len(types)} types were given for {n} kernel arguments"
            )
        kernel = self.kernel
        return [
            _apply_type(v, t, i, kernel) for i, (v, t) in enumerate(zip(values, types))
        ]

    def count_error(self, given: int) -> InvalidArgumentError:
        n = len(self._plan)
        return InvalidArgumentError(
            f"{'kernel ' + repr(self.kernel) if self.kernel else 'the kernel'} takes {n} "
            f"parameter{'s' if n != 1 else ''}, but {given} "
            f"{'were' if given != 1 else 'was'} given"
        )

    def pack_into(self, view: Any, values: Sequence[Any]) -> None:
        """Writes the block for ``values`` into ``view`` (a writable buffer of
        ``args_size`` bytes) by the general rules; raises as :meth:`pack`."""
        data = self.pack(values)
        view[: len(data)] = data

    def compile_packer(
        self, types: Sequence[type]
    ) -> Callable[[Any, Sequence[Any]], bool]:
        """``pack(view, values) -> bool`` for values of exactly ``types``.

        When ``values`` are as many as ``types`` and each of exactly its type,
        it writes the whole block into ``view`` (gaps and tail zeroed) with
        one precompiled ``struct.Struct.pack_into`` and returns True; when
        that cannot take the values, it packs them by the general rules
        instead (:meth:`pack_into`), so its results and errors are those of
        :meth:`pack`. For other values it writes nothing and returns False
        (the caller then finds the packer of their types). Raises the count
        error when ``types`` has the wrong length."""
        n = len(self._plan)
        if len(types) != n:
            raise self.count_error(len(types))
        fmt = ["<"]
        exprs: List[str] = []
        end = 0
        for (i, _pad, size), offset, t in zip(self._plan, self.offsets, types):
            if offset > end:
                fmt.append(f"{offset - end}x")
            code, expr = _argument_code(t, size, i)
            fmt.append(code)
            if expr is not None:
                exprs.append(expr)
            end = offset + size
        if self.args_size > end:
            fmt.append(f"{self.args_size - end}x")
        packer = struct.Struct("".join(fmt))
        if packer.size != self.args_size:  # pragma: no cover - the layout is checked
            raise ValueError(f"format {packer.format!r} does not match the layout")
        # Generated from struct codes, attribute names and indices only.
        lines = ["def pack(view, values):"]
        if n:
            names = "".join(f"a{i}, " for i in range(n))
            checks = " or ".join(f"type(a{i}) is not _t{i}" for i in range(n))
            lines += [
                "    try:",
                f"        {names}= values",
                "    except (TypeError, ValueError):",
                "        return False",
                f"    if {checks}:",
                "        return False",
            ]
        else:
            lines += ["    if len(values):", "        return False"]
        lines += [
            "    try:",
            f"        _pack_into(view, 0{''.join(', ' + e for e in exprs)})",
            "    except Exception:",
            "        _general(view, values)",
            "    return True",
        ]
        env: Dict[str, Any] = {
            "_pack_into": packer.pack_into,
            "_general": self.pack_into,
            "_pack_value": pack_value,
            "_kernel": self.kernel,
        }
        env.update((f"_t{i}", t) for i, t in enumerate(types))
        code = compile(
            "\n".join(lines) + "\n",
            f"<cuabi packer for {self.kernel or 'a kernel'}>",
            "exec",
        )
        exec(code, env)
        pack = env["pack"]
        pack.format = packer.format
        pack.types = tuple(types)
        return pack


def no_packer(view: Any, values: Sequence[Any]) -> bool:
    """A compiled packer's stand-in before the first launch: takes nothing."""
    return False


def pack_args(
    values: Sequence[Any],
    offsets: Sequence[int],
    sizes: Sequence[int],
    args_size: Optional[int] = None,
    types: Optional[Sequence[Any]] = None,
    kernel: Optional[str] = None,
) -> bytes:
    """Packs ``values`` at ``offsets`` (each parameter ``sizes[i]`` bytes) into
    one block of ``args_size`` bytes (default: the end of the last parameter).

    ``types`` gives the ctypes way of the CUDA Python overview: each value is
    first converted to its ctypes type (None leaves it as it is)."""
    return ArgumentLayout(offsets, sizes, args_size, kernel).pack(values, types)


def _types_used() -> List[type]:  # for tests: which types took the cached path
    return list(_PACKERS)
