"""Packing kernel arguments into the one block a launch plan (or
``cuabi_function_launch_packed``) takes.

Each argument becomes bytes by these rules:

* NumPy scalars (and one-element arrays) and ctypes values are copied
  exactly: their own bytes.
* A Python ``float`` fills a 4-byte parameter as float32, an 8-byte one as
  float64 (a 2-byte one as float16); a ``complex`` an 8- or 16-byte one.
* A Python ``int`` (or ``bool``, ``IntEnum``) fills a 1, 2, 4 or 8-byte
  parameter; it must fit that size as a signed or an unsigned integer.
* A cuabi buffer, anything with ``__cuda_array_interface__`` (CuPy, PyTorch,
  Numba) or ``__dlpack__`` (JAX ...) passes its device address; ``None``
  passes a NULL pointer. Both are pointer-sized.
* A cuabi Texture or Surface passes its 64-bit object value
  (``cudaTextureObject_t``, ``cudaSurfaceObject_t``): 8 bytes.
* A NumPy structured scalar or a ``ctypes.Structure`` is a struct by value.
* An object whose class gives ``__cuabi_arg_bytes__`` (a property: the
  bytes) and ``__cuabi_arg_size__`` (their fixed length) passes those bytes
  by value: a cuabi TensorMap, a ``const __grid_constant__ CUtensorMap``.

Whether the arguments fit the kernel (their count, and each one's size
against its parameter's) is the core's check,
``cuabi_function_check_arg_sizes``, made once per signature of argument
sizes; its InvalidArgumentError names the parameter. What only Python can
know (a value of no C type, an int or a float out of the parameter's range,
a host array of several elements) raises InvalidArgumentError here, naming
the parameter too. Either way nothing reaches the GPU.
"""

from __future__ import annotations

import ctypes
import enum
import struct
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ._dlpack import _compact_strides, dlpack_tensor
from .errors import InvalidArgumentError

__all__ = ["pack_value", "POINTER_SIZE", "ArgumentLayout", "register_pointer_type"]

POINTER_SIZE = ctypes.sizeof(ctypes.c_void_p)

_FLOAT = {2: struct.Struct("<e"), 4: struct.Struct("<f"), 8: struct.Struct("<d")}
_COMPLEX = {8: struct.Struct("<ff"), 16: struct.Struct("<dd")}
_POINTER = struct.Struct("<Q")
# The ctypes values passed as their own bytes.
_CTYPES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array, ctypes._Pointer)


def _what(value: Any) -> str:
    t = type(value)
    mod = t.__module__
    return t.__name__ if mod == "builtins" else f"{mod}.{t.__name__}"


def _where(index: int, kernel: Optional[str]) -> str:
    return f"kernel '{kernel}' parameter {index}" if kernel else f"parameter {index}"


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


def _pack_complex(value: complex, size: int, index: int, kernel: Optional[str]) -> bytes:
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


def _pack_numpy(value: Any, size: int, index: int, kernel: Optional[str]) -> bytes:
    if isinstance(value, sys.modules["numpy"].ndarray):
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
    return bytes(value.tobytes())


def _pack_ctypes(value: Any, size: int, index: int, kernel: Optional[str]) -> bytes:
    return ctypes.string_at(ctypes.addressof(value), ctypes.sizeof(value))


def _refuse_strided(
    value: Any,
    shape: Sequence[int],
    strides: Optional[Sequence[int]],
    itemsize: int,
    index: int,
    kernel: Optional[str],
) -> None:
    """A kernel's pointer parameter sees one address: an array whose elements
    are not compact row-major from there (a transposed or sliced view) is
    refused, naming the parameter and the strides (in bytes). Its base pointer
    passed as an int is taken as the caller's explicit choice."""
    if strides is None:
        return
    shape = tuple(int(d) for d in shape)
    strides = tuple(int(s) for s in strides)
    if any(d == 0 for d in shape):
        return
    compact = _compact_strides(shape, itemsize)
    if all(d == 1 or s == c for d, s, c in zip(shape, strides, compact)):
        return
    raise InvalidArgumentError(
        f"{_where(index, kernel)}: the {_what(value)} is not contiguous (shape {shape}, "
        f"strides {strides} bytes; contiguous would be {compact}): a kernel's pointer "
        "parameter sees only its first address. Pass a contiguous copy, or pass its base "
        "pointer explicitly as an int (for example tensor.data_ptr()) if the kernel "
        "follows the strides itself"
    )


def _cai_address(value: Any, cai: Dict[str, Any], index: int, kernel: Optional[str]) -> int:
    """The address of a CUDA Array Interface object, refused if it is strided."""
    strides = cai.get("strides")
    if strides is not None:
        typestr = str(cai.get("typestr", "|u1"))
        itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
        _refuse_strided(value, cai.get("shape", ()), strides, itemsize, index, kernel)
    return int(cai["data"][0] or 0)


def _device_address(value: Any, index: int = 0, kernel: Optional[str] = None) -> Optional[int]:
    """The device address behind a buffer-like object, or None if it is not one."""
    address = getattr(value, "__cuabi_ptr__", None)
    if address is not None:
        return int(address)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        return _cai_address(value, cai, index, kernel)
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        tensor, _capsule = dlpack_tensor(value)
        if not tensor.contiguous:
            _refuse_strided(
                value, tensor.shape, tensor.byte_strides, tensor.itemsize, index, kernel
            )
        return int(tensor.ptr)
    return None


_Packer = Callable[[Any, int, int, Optional[str]], bytes]


def _resolve(value: Any) -> Optional[_Packer]:
    """The packer for values of ``type(value)``, or None when the value is no
    plain value (a device array is looked at per value)."""
    t = type(value)
    if t is float:
        return _pack_float
    if t is complex:
        return _pack_complex
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, (np.generic, np.ndarray)):
        return _pack_numpy
    if t is ctypes.c_void_p:
        return lambda v, s, i, k: _POINTER.pack(v.value or 0)
    if isinstance(value, _CTYPES):
        return _pack_ctypes
    if isinstance(getattr(t, "__cuabi_arg_bytes__", None), property):
        return lambda v, s, i, k: bytes(v.__cuabi_arg_bytes__)
    if isinstance(value, enum.Enum):
        return lambda v, s, i, k: pack_value(v.value, s, i, k)
    if isinstance(value, int):  # ints, bools and int subclasses that are not enums
        return lambda v, s, i, k: _pack_int(int(v), s, i, k)
    if isinstance(value, float):
        return lambda v, s, i, k: _pack_float(float(v), s, i, k)
    return None


def _pointer_packer(t: type) -> Optional[_Packer]:
    """A packer for a device-array type whose class declares where its address
    is (cuabi buffers, CUDA Array Interface objects); read anew per value."""
    if isinstance(getattr(t, "__cuabi_ptr__", None), property):
        return lambda v, s, i, k: _POINTER.pack(v.__cuabi_ptr__)
    if isinstance(getattr(t, "__cuda_array_interface__", None), property):
        return lambda v, s, i, k: _POINTER.pack(
            _cai_address(v, v.__cuda_array_interface__, i, k)
        )
    return None


_PACKERS: Dict[type, _Packer] = {}


def pack_value(value: Any, size: int, index: int = 0, kernel: Optional[str] = None) -> bytes:
    """The bytes that pass ``value`` to parameter ``index`` of ``size`` bytes:
    a value of a C type gives its own bytes, a Python number the parameter's
    size (see the module docstring)."""
    packer = _PACKERS.get(type(value))
    if packer is not None:
        return packer(value, size, index, kernel)
    if value is None:
        return bytes(POINTER_SIZE)
    packer = _resolve(value)
    if packer is None:
        # Not a plain value: a device array (cuabi, CuPy, PyTorch, JAX ...)?
        try:
            address = _device_address(value, index, kernel)
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
            return _POINTER.pack(address)
    if len(_PACKERS) < 1024:
        _PACKERS[type(value)] = packer
    return packer(value, size, index, kernel)


_U64_TYPES = (ctypes.c_uint64, ctypes.c_ulonglong)


def _apply_type(value: Any, ctype: Any, index: int, kernel: Optional[str]) -> Any:
    """The ctypes way: convert ``value`` to ``ctype`` (None: leave it as it is)."""
    if ctype is None:
        return value
    if ctype is ctypes.c_void_p:
        address = _device_address(value, index, kernel)
        if address is not None:
            return ctypes.c_void_p(address)
    if ctype in _U64_TYPES and not isinstance(value, int):
        # A texture or surface object (or a buffer's address) as a 64-bit value.
        address = getattr(value, "__cuabi_ptr__", None)
        if address is not None:
            return ctype(address)
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
# an argument's type alone (which struct code, how many bytes, and so whether
# the core accepts the signature) is decided once per tuple of argument types
# and kept; what depends on the value (an int's range, a float's range, a
# closed buffer) is left to pack_into, and whenever the compiled form cannot
# take the values as they are, the block is packed again by the general
# rules above, which either succeed or raise their error naming the
# parameter. So the compiled form never changes what is accepted, what is
# written, or which error is raised. Types whose size depends on the value
# (NumPy arrays and structured scalars, DLPack producers ...) always take the
# general rules.

_INT_CODES = {1: "b", 2: "h", 4: "i", 8: "q"}  # signed; an unsigned value past
# the signed range fails pack_into and takes the general rules
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}
_POINTER_CODE = "Q"
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


_Code = Tuple[str, Optional[str], Optional[int]]


def _argument_code(t: type, size: int, index: int) -> _Code:
    """(struct code, expression giving its value or None for padding, the
    bytes it passes) for argument ``index`` (in the variable ``a<index>``) of
    type ``t`` to a parameter of ``size`` bytes: the fast form of the rules
    of pack_value, or the general one (``Ns`` with pack_value's bytes) where
    no fast form is exact. The bytes are None where the value decides them."""
    var = f"a{index}"

    def general(nbytes: int) -> _Code:
        return f"{nbytes}s", f"_pack_value({var}, {size}, {index}, _kernel)", nbytes

    if t is float or t is int or t is bool:
        code = (_FLOAT_CODES if t is float else _INT_CODES).get(size)
        return (code, var, size) if code else general(size)
    if t is type(None):
        return f"{POINTER_SIZE}x", None, POINTER_SIZE
    attribute = _POINTER_ATTRIBUTES.get(t)
    if attribute is not None:
        return _POINTER_CODE, f"{var}.{attribute}", POINTER_SIZE
    np = sys.modules.get("numpy")
    if np is not None and issubclass(t, (np.generic, np.ndarray)):
        if issubclass(t, (np.ndarray, np.flexible, np.object_)):
            return "", None, None
        dtype = np.dtype(t)
        code = _NUMPY_CODES.get((dtype.kind, dtype.itemsize))
        if code is None:
            return general(dtype.itemsize)
        if code == "f":
            # Through a double, a signalling NaN would come back quieted: a
            # NaN fails pack_into (None is no float) and takes .tobytes().
            return code, f"({var} if {var} == {var} else None)", 4
        return code, var, dtype.itemsize
    if issubclass(t, _CTYPES):
        return general(ctypes.sizeof(t))
    if issubclass(t, complex):
        return general(size)
    if isinstance(getattr(t, "__cuabi_arg_bytes__", None), property):
        nbytes = getattr(t, "__cuabi_arg_size__", None)
        return general(nbytes) if isinstance(nbytes, int) else ("", None, None)
    if issubclass(t, enum.Enum) and not issubclass(t, int):
        return "", None, None
    if issubclass(t, int) or issubclass(t, float):
        code = (_INT_CODES if issubclass(t, int) else _FLOAT_CODES).get(size)
        convert = "int" if issubclass(t, int) else "float"
        return (code, f"{convert}({var})", size) if code else general(size)
    if isinstance(getattr(t, "__cuabi_ptr__", None), property):
        return _POINTER_CODE, f"{var}.__cuabi_ptr__", POINTER_SIZE
    if isinstance(getattr(t, "__cuda_array_interface__", None), property):
        return general(POINTER_SIZE)
    return "", None, None


class ArgumentLayout:
    """A kernel's parameter offsets and sizes and its block size, prepared
    once, with ``check(sizes)``: the core's check that arguments of these
    byte sizes fit the kernel, which raises when they do not. Each signature
    of sizes that passed is kept, so the core is asked once per signature."""

    __slots__ = ("offsets", "sizes", "args_size", "kernel", "_check", "_checked")

    def __init__(
        self,
        offsets: Sequence[int],
        sizes: Sequence[int],
        args_size: int,
        kernel: Optional[str],
        check: Callable[[Tuple[int, ...]], None],
    ) -> None:
        self.offsets = tuple(int(o) for o in offsets)
        self.sizes = tuple(int(s) for s in sizes)
        self.args_size = int(args_size)
        self.kernel = kernel
        self._check = check
        self._checked: Set[Tuple[int, ...]] = set()

    def check_sizes(self, sizes: Tuple[int, ...]) -> None:
        """Raises the core's error unless arguments of ``sizes`` bytes fit."""
        if sizes not in self._checked:
            self._check(sizes)
            self._checked.add(sizes)

    def _check_count(self, count: int) -> None:
        """``count`` arguments, when they are not as many as the parameters,
        go to the core at once, which raises its error naming both counts."""
        if count != len(self.sizes):
            self.check_sizes(self.sizes[:count] + (0,) * (count - len(self.sizes)))

    def pack(self, values: Sequence[Any], types: Optional[Sequence[Any]] = None) -> bytes:
        """The argument block for ``values`` (see the module docstring)."""
        if types is not None:
            values = self.apply_types(values, types)
        self._check_count(len(values))
        pairs = list(enumerate(zip(values, self.sizes)))
        # Sizes the types decide go to the core first, as compile_packer does.
        known = [_argument_code(type(v), s, i)[2] for i, (v, s) in pairs]
        if None not in known:
            self.check_sizes(tuple(s for s in known if s is not None))
        parts = [pack_value(v, s, i, self.kernel) for i, (v, s) in pairs]
        self.check_sizes(tuple(map(len, parts)))
        block = bytearray(self.args_size)
        for offset, data in zip(self.offsets, parts):
            block[offset : offset + len(data)] = data
        return bytes(block)

    def apply_types(self, values: Sequence[Any], types: Sequence[Any]) -> List[Any]:
        """The overview's ctypes way: each value converted to its ctypes type
        (None leaves it as it is)."""
        if len(types) != len(values):
            raise InvalidArgumentError(
                f"{len(types)} types were given for {len(values)} kernel arguments"
            )
        kernel = self.kernel
        return [_apply_type(v, t, i, kernel) for i, (v, t) in enumerate(zip(values, types))]

    def pack_into(self, view: Any, values: Sequence[Any]) -> None:
        """Writes the block for ``values`` into ``view`` (a writable buffer of
        ``args_size`` bytes) by the general rules; raises as :meth:`pack`."""
        data = self.pack(values)
        view[: len(data)] = data

    def compiled_form(self, types: Sequence[type]) -> Tuple[Optional[struct.Struct], List[str]]:
        """The fast form of packing values of exactly ``types``: the
        ``struct.Struct`` that writes the whole block (gaps and tail zeroed)
        and the expression of each value it takes, in the variables ``a0``,
        ``a1`` ...; the Struct is None where the values decide their bytes
        (then only the general rules pack). Raises the core's error when
        arguments of these types cannot fit the kernel (their count, or the
        sizes the types decide). The expressions are generated from struct
        codes, attribute names and indices only, and may use the names
        ``_pack_value`` and ``_kernel`` (see :meth:`compile_env`)."""
        n = len(types)
        self._check_count(n)
        fmt = ["<"]
        exprs: List[str] = []
        arg_sizes: List[Optional[int]] = []
        end = 0
        for i, (offset, size, t) in enumerate(zip(self.offsets, self.sizes, types)):
            if offset > end:
                fmt.append(f"{offset - end}x")
            code, expr, nbytes = _argument_code(t, size, i)
            fmt.append(code)
            if expr is not None:
                exprs.append(expr)
            arg_sizes.append(nbytes)
            end = offset + size
        if self.args_size > end:
            fmt.append(f"{self.args_size - end}x")
        if None in arg_sizes:  # the values decide: the general rules check each time
            return None, exprs
        self.check_sizes(tuple(s for s in arg_sizes if s is not None))
        return struct.Struct("".join(fmt)), exprs

    def compile_env(self, packer: Optional[struct.Struct], types: Sequence[type]) -> Dict[str, Any]:
        """The names code made from :meth:`compiled_form` uses: ``_pack_into``
        (the Struct's), ``_general`` (:meth:`pack_into`, the general rules),
        ``_pack_value``, ``_kernel`` and ``_t0``, ``_t1`` ... (the types)."""
        env: Dict[str, Any] = {
            "_pack_into": packer.pack_into if packer else None,
            "_general": self.pack_into,
            "_pack_value": pack_value,
            "_kernel": self.kernel,
        }
        env.update((f"_t{i}", t) for i, t in enumerate(types))
        return env

    def compile_packer(self, types: Sequence[type]) -> Callable[[Any, Sequence[Any]], bool]:
        """``pack(view, values) -> bool`` for values of exactly ``types``.

        When ``values`` are as many as ``types`` and each of exactly its type,
        it writes the whole block into ``view`` (gaps and tail zeroed) with
        one precompiled ``struct.Struct.pack_into`` and returns True; when
        that cannot take the values, it packs them by the general rules
        instead (:meth:`pack_into`), so its results and errors are those of
        :meth:`pack`. For other values it writes nothing and returns False
        (the caller then finds the packer of their types). Raises the core's
        error when arguments of these types cannot fit the kernel."""
        n = len(types)
        packer, exprs = self.compiled_form(types)
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
        if packer is not None:
            lines += [
                "    try:",
                f"        _pack_into(view, 0{''.join(', ' + e for e in exprs)})",
                "    except Exception:",
                "        _general(view, values)",
            ]
        else:
            lines.append("    _general(view, values)")
        lines.append("    return True")
        env = self.compile_env(packer, types)
        name = f"<cuabi packer for {self.kernel or 'a kernel'}>"
        exec(compile("\n".join(lines) + "\n", name, "exec"), env)
        pack = env["pack"]
        pack.format = packer.format if packer else None
        pack.types = tuple(types)
        pack.exprs = tuple(exprs) if packer else None
        return pack  # type: ignore[no-any-return]


def no_packer(view: Any, values: Sequence[Any]) -> bool:
    """A compiled packer's stand-in before the first launch: takes nothing."""
    return False
