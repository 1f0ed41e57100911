"""Packing kernel arguments into the one block ``cuabi_launch_packed`` takes.

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
from typing import Any, Callable, Dict, List, Optional, Sequence

from .errors import InvalidArgumentError

__all__ = ["pack_args", "pack_value", "POINTER_SIZE", "ArgumentLayout"]

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
        n = len(self._plan)
        if len(values) != n:
            raise InvalidArgumentError(
                f"{'kernel ' + repr(self.kernel) if self.kernel else 'the kernel'} takes {n} "
                f"parameter{'s' if n != 1 else ''}, but {len(values)} "
                f"{'were' if len(values) != 1 else 'was'} given"
            )
        kernel = self.kernel
        if types is not None:
            if len(types) != n:
                raise InvalidArgumentError(
                    f"{len(types)} types were given for {n} kernel arguments"
                )
            values = [
                _apply_type(v, t, i, kernel)
                for i, (v, t) in enumerate(zip(values, types))
            ]
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
