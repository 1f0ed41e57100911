"""Packing in place: the packers a launch compiles per tuple of argument types
and runs into a launch plan's argument block. No GPU, no library.

The reference is ArgumentLayout.pack (the general rules, tested in
test_packing.py): for every value and parameter size, the compiled packer
must write exactly the bytes pack returns, or raise exactly its error, with
the core's check of argument sizes stood in for as there.
"""

from __future__ import annotations

import ctypes
import enum
import struct
import threading

import numpy as np
import pytest

import cuabi
from cuabi._packing import (
    ArgumentLayout,
    _POINTER_ATTRIBUTES,
    no_packer,
    register_pointer_type,
)
from cuabi._program import Kernel
from test_packing import CTestStruct, FakeCudaArray, FakeDLPack, layout


class Buffer:
    """Packed as cuabi.DeviceBuffer is: the address in a plain attribute that
    is None once released, and __cuabi_ptr__ raising then."""

    def __init__(self, ptr: int) -> None:
        self._ptr = ptr

    def close(self) -> None:
        self._ptr = None

    @property
    def __cuabi_ptr__(self) -> int:
        if self._ptr is None:
            raise cuabi.InvalidHandleError("the buffer was closed")
        return self._ptr


register_pointer_type(Buffer, "_ptr")


class PropertyPointer:
    """A device array that gives its address through a __cuabi_ptr__ property."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    @property
    def __cuabi_ptr__(self) -> int:
        return self.ptr


class AttributePointer:
    """A device array with __cuabi_ptr__ as an instance attribute."""

    def __init__(self, ptr: int) -> None:
        self.__cuabi_ptr__ = ptr


class Color(enum.IntEnum):
    RED = 7


class Flags(enum.IntFlag):
    A = 1
    B = 2


class Plain(enum.Enum):
    A = 300


class MyInt(int):
    pass


class MyFloat(float):
    pass


def _closed_buffer() -> Buffer:
    b = Buffer(0x1000)
    b.close()
    return b


_NAN16 = np.frombuffer(b"\x01\x7e", np.float16)[0]  # a NaN with a payload
_NAN32 = np.frombuffer(b"\x01\x00\xc0\x7f", np.float32)[0]
_SNAN32 = np.frombuffer(b"\x01\x00\x80\x7f", np.float32)[0]  # signalling
_PAIR = np.dtype([("a", np.int8), ("b", np.float64)], align=True)

VALUES = [
    # Python numbers, at and past each boundary
    0.0,
    -0.0,
    1.5,
    float("inf"),
    float("nan"),
    1e39,
    1e-50,
    70000.0,
    0,
    -1,
    127,
    128,
    255,
    256,
    -129,
    2**31,
    2**32 - 1,
    2**32,
    2**63,
    2**64 - 1,
    2**64,
    -(2**63) - 1,
    True,
    False,
    1 + 2j,
    Color.RED,
    Flags.A | Flags.B,
    Plain.A,
    MyInt(9),
    MyFloat(2.5),
    # NumPy scalars of every kind
    np.True_,
    np.int8(-5),
    np.uint8(250),
    np.int16(-300),
    np.uint16(60000),
    np.int32(-(2**31)),
    np.uint32(2**32 - 1),
    np.int64(-(2**63)),
    np.uint64(2**64 - 1),
    np.float16(1.5),
    _NAN16,
    np.float32(2.5),
    _NAN32,
    _SNAN32,
    np.float32("inf"),
    np.float64(-3.25),
    np.complex64(1 + 2j),
    np.complex128(3 - 4j),
    np.array([(1, 2.5)], _PAIR)[0],
    # one-element, 0-d and longer host arrays
    np.array([7], np.int32),
    np.array(7.5, np.float64),
    np.zeros(3, np.float32),
    # ctypes values
    ctypes.c_int(-2),
    ctypes.c_double(0.5),
    ctypes.c_void_p(0x1234),
    ctypes.c_void_p(None),
    CTestStruct(5),
    # device memory and NULL
    None,
    Buffer(0x7F0000001000),
    _closed_buffer(),
    PropertyPointer(0x2000),
    AttributePointer(0x3000),
    FakeCudaArray(0x4000),
    FakeDLPack(0x5000),
    # what no parameter takes
    "text",
    b"\x01\x02",
    [1, 2],
    object(),
]

SIZES = [1, 2, 3, 4, 8, 16]


def _reference(layout: ArgumentLayout, values):
    try:
        return layout.pack(values), None
    except Exception as exc:  # the general rules' error, to be matched
        return None, exc


def _run(layout: ArgumentLayout, values):
    """The compiled packer's result, into a block full of stale bytes."""
    block = bytearray(b"\xaa" * layout.args_size)
    view = memoryview(block)
    try:
        pack = layout.compile_packer(tuple(map(type, values)))
        taken = pack(view, values)
    except Exception as exc:
        return None, exc
    assert taken is True
    return bytes(block), None


def _same(layout, values) -> None:
    want, want_exc = _reference(layout, values)
    got, got_exc = _run(layout, values)
    if want_exc is None:
        assert got_exc is None, f"{values!r}: {got_exc!r}"
        assert got == want, f"{values!r}: {got.hex()} != {want.hex()}"
    else:
        assert got_exc is not None, f"{values!r}: packed {got.hex()}, expected an error"
        assert type(got_exc) is type(want_exc)
        assert str(got_exc) == str(want_exc)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "value", VALUES, ids=lambda v: f"{type(v).__name__}:{str(v)[:12]}"
)
def test_compiled_packer_writes_what_pack_writes(value, size):
    """Alone, and between two neighbours with gaps before and after it."""
    _same(layout([0], [size], size, "k"), [value])
    offsets = [0, 8, 8 + ((size + 7) // 8) * 8]
    _same(layout(offsets, [4, size, 8], None, "k"), [np.float32(1.25), value, 2**40])
    _same(layout([0, 16], [size, 4], 32, "k"), [value, 3])


def test_common_signatures_compile_to_one_struct_without_fallbacks():
    saxpy = layout([0, 8, 16, 24, 32], [4, 8, 8, 8, 8], 40, "saxpy")
    buf = Buffer(0x1000)
    types = (np.float32, Buffer, Buffer, Buffer, np.uint64)
    assert saxpy.compile_packer(types).format == "<f4xQQQQ"
    view = memoryview(bytearray(40))
    assert saxpy.compile_packer(types)(view, (_SNAN32, buf, buf, buf, np.uint64(1)))
    assert bytes(view[:4]) == _SNAN32.tobytes()  # bit for bit
    types = (float, Buffer, PropertyPointer, type(None), int)
    assert saxpy.compile_packer(types).format == "<f4xQQ8xq"
    empty16 = layout(
        [32 * k + o for k in range(4) for o in (0, 8, 16, 24)], [4, 8, 4, 8] * 4, 128
    )
    args = [1.0, buf, 2, 3] * 4
    assert empty16.compile_packer(tuple(map(type, args))).format == "<" + "f4xQi4xq" * 4


def test_gaps_and_tail_are_zeroed_in_a_used_block():
    pack = layout([0, 8], [1, 4], 16, "k").compile_packer((int, float))
    view = memoryview(bytearray(b"\xff" * 16))
    assert pack(view, (5, 2.0))
    assert bytes(view) == b"\x05" + bytes(7) + struct.pack("<f", 2.0) + bytes(4)


def test_other_types_or_counts_are_not_taken_and_nothing_is_written():
    pack = layout([0, 8], [4, 8], 16, "k").compile_packer((float, Buffer))
    block = bytearray(b"\xaa" * 16)
    view = memoryview(block)
    for values in (
        (2, Buffer(1)),  # an int where the float was
        (np.float32(2), Buffer(1)),
        (2.0, PropertyPointer(1)),
        (MyFloat(2.0), Buffer(1)),  # subclasses are other types
        (2.0,),
        (2.0, Buffer(1), 3),
        [],
        5,  # not a sequence
    ):
        assert pack(view, values) is False, values
        assert block == b"\xaa" * 16
    assert pack(view, [2.0, Buffer(0x10)]) is True  # a list of those types is
    assert bytes(view) == struct.pack("<f4xQ", 2.0, 0x10)
    assert no_packer(view, (2.0, Buffer(1))) is False


def test_an_int_to_a_float_parameter_packs_an_int():
    """Types decide the bytes, so the signature must: 2 and 2.0 differ."""
    k = layout([0], [4], 4, "k")
    view = memoryview(bytearray(4))
    assert k.compile_packer((float,))(view, (2.0,))
    assert bytes(view) == struct.pack("<f", 2.0)
    assert k.compile_packer((int,))(view, (2,))
    assert bytes(view) == struct.pack("<i", 2)


def test_signatures_go_to_the_core_when_compiled():
    k = layout([0, 8], [4, 8], 16, "saxpy2")
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        k.compile_packer((float,))  # a wrong count
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        k.compile_packer((np.float64, Buffer))  # an 8-byte float for 4 bytes
    k.compile_packer((float, Buffer))
    k.compile_packer((np.float32, type(None)))  # the same sizes: not asked again
    assert k._check.asked == [(4,), (8, 8), (4, 8)]
    # sizes a value decides are checked as the values come
    pack = k.compile_packer((np.ndarray, Buffer))
    assert pack.format is None and k._check.asked[-1] == (4, 8)
    view = memoryview(bytearray(16))
    assert pack(view, (np.array([1.5], np.float32), Buffer(7)))
    assert bytes(view) == struct.pack("<f4xQ", 1.5, 7)
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        pack(view, (np.array([1.5]), Buffer(7)))
    assert k._check.asked[-1] == (8, 8)
    empty = layout([], [], 0, "none")
    view = memoryview(bytearray(0))
    assert empty.compile_packer(())(view, ())
    assert empty.compile_packer(())(view, (1,)) is False


def test_a_closed_buffer_raises_its_own_error_after_the_fast_path():
    buf = Buffer(0x1000)
    pack = layout([0, 8], [4, 8], 16, "k").compile_packer((float, Buffer))
    view = memoryview(bytearray(16))
    assert pack(view, (1.0, buf))
    buf.close()
    with pytest.raises(cuabi.InvalidHandleError, match="closed"):
        pack(view, (1.0, buf))


def test_value_dependent_failures_name_the_parameter():
    pack = layout([0, 8], [4, 1], 16, "k").compile_packer((float, int))
    view = memoryview(bytearray(16))
    with pytest.raises(cuabi.InvalidArgumentError, match="'k' parameter 0 .*out of"):
        pack(view, (1e39, 1))
    with pytest.raises(cuabi.InvalidArgumentError, match="'k' parameter 1 .*8 bits"):
        pack(view, (1.0, 256))
    assert pack(view, (1.0, 255))  # unsigned: past the signed range, still taken
    assert view[8] == 255


def test_cffi_buffers_take_the_packers_too():
    cffi = pytest.importorskip("cffi", reason="cffi is not installed")
    ffi = cffi.FFI()
    block = ffi.new("char[]", 16)
    view = ffi.buffer(block, 16)
    k = layout([0, 8], [4, 8], 16, "k")
    assert k.compile_packer((float, Buffer))(view, (1.5, Buffer(0x99)))
    assert view[:] == struct.pack("<f4xQ", 1.5, 0x99)
    # and the general path too
    assert k.compile_packer((float, FakeCudaArray))(view, (1.5, FakeCudaArray(7)))
    assert view[:] == struct.pack("<f4xQ", 1.5, 7)


def test_register_pointer_type_checks_the_name():
    with pytest.raises(ValueError):
        register_pointer_type(PropertyPointer, "not an attribute")
    assert _POINTER_ATTRIBUTES[cuabi.DeviceBuffer] == "_ptr"


# --------------------------------------------------------------------------
# The per-kernel signature cache (a kernel object without a device: only its
# packing is used here, never a launch)
# --------------------------------------------------------------------------


@pytest.fixture
def detached_kernel():
    backend = cuabi.get_backend()
    k = Kernel(backend, backend.NULL, None)
    k._name = "k"
    k._layout = layout([0, 8], [4, 8], 16, "k")
    yield k
    k.close()


def test_the_kernel_keeps_one_packer_per_signature(detached_kernel):
    k = detached_kernel
    first = k._packer((2.0, Buffer(1)))
    assert k._last_packer is first
    assert k._packer((3.0, Buffer(2))) is first  # same types: the kept one
    other = k._packer((2, Buffer(1)))
    assert other is not first and k._last_packer is other
    assert first.format == "<f4xQ" and other.format == "<i4xQ"
    assert set(k._packers) == {(float, Buffer), (int, Buffer)}
    assert k._packer((2.0, Buffer(1))) is first
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        k._packer((2.0,))
    assert len(k._packers) == 2


def test_the_kernel_signature_cache_is_bounded(detached_kernel):
    from cuabi import _program

    k = detached_kernel
    kinds = [float, int, np.float32, np.int32, np.uint32, bool, MyInt, MyFloat]
    for a in kinds:
        for b in (Buffer, PropertyPointer, AttributePointer, type(None)):
            for c in range(40):
                k._packers[(a, b, c)] = no_packer  # fill with dummies
    assert len(k._packers) >= _program._MAX_SIGNATURES
    k._packer((2.0, Buffer(1)))
    assert len(k._packers) == 1


def test_packers_are_shared_safely_between_threads(detached_kernel):
    """Threads switching signatures on one kernel each get their own bytes."""
    k = detached_kernel
    errors = []

    def work(value, want):
        view = memoryview(bytearray(16))
        for _ in range(2000):
            if not k._last_packer(view, (value, Buffer(0x10))):
                k._packer((value, Buffer(0x10)))(view, (value, Buffer(0x10)))
            if bytes(view) != want:
                errors.append(bytes(view))
                return

    threads = [
        threading.Thread(target=work, args=(2.0, struct.pack("<f4xQ", 2.0, 0x10))),
        threading.Thread(target=work, args=(3, struct.pack("<i4xQ", 3, 0x10))),
        threading.Thread(
            target=work, args=(np.float32(4), struct.pack("<f4xQ", 4.0, 0x10))
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
