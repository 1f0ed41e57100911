"""The kernel-argument packing rules, no GPU: how each value becomes bytes,
and which argument sizes the binding hands the core to check.

Whether arguments fit a kernel is the core's check
(cuabi_function_check_arg_sizes), which needs a kernel and so a GPU; its
wording is tested by the core's tests and, through Python, by the GPU tests.
Here a stand-in records what the core would be asked and refuses what it
would refuse, so the binding's part is tested on its own."""

from __future__ import annotations

import ctypes
import enum
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import cuabi
from cuabi import _dlpack
from cuabi._packing import ArgumentLayout, pack_value
from conftest import BACKEND_PARAMS

# saxpy(float a, float* x, float* y, float* out, size_t n) as the driver lays it out
SAXPY_OFFSETS = [0, 8, 16, 24, 32]
SAXPY_SIZES = [4, 8, 8, 8, 8]


class CoreCheck:
    """Stands in for cuabi_function_check_arg_sizes: records every signature
    of argument sizes it is asked about, and refuses (InvalidArgumentError)
    each that differs from the parameters' sizes."""

    def __init__(self, sizes) -> None:
        self.sizes = tuple(sizes)
        self.asked = []

    def __call__(self, sizes) -> None:
        self.asked.append(tuple(sizes))
        if tuple(sizes) != self.sizes:
            raise cuabi.InvalidArgumentError(f"the core refuses {tuple(sizes)}")


def layout(offsets, sizes, args_size=None, kernel=None) -> ArgumentLayout:
    """A kernel's layout with the stand-in check (its ``_check``)."""
    end = max((o + s for o, s in zip(offsets, sizes)), default=0)
    size = end if args_size is None else args_size
    return ArgumentLayout(offsets, sizes, size, kernel, CoreCheck(sizes))


def pack_args(values, offsets, sizes, args_size=None, types=None, kernel=None) -> bytes:
    return layout(offsets, sizes, args_size, kernel).pack(values, types)


class FakeCudaArray:
    """Just enough of the CUDA Array Interface (what CuPy/PyTorch/Numba expose)."""

    def __init__(self, ptr: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (4,),
            "typestr": "<f4",
            "data": (ptr, False),
            "version": 3,
        }


class FakeDLPack:
    """A DLPack producer over a made-up address on ``device_type``."""

    def __init__(self, ptr: int, device_type: int = _dlpack.kDLCUDA) -> None:
        self.ptr = ptr
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return _dlpack.make_capsule(
            self.ptr, (4,), np.float32, self.device_type, 0, owner=self
        )


def test_saxpy_block_is_laid_out_at_the_offsets():
    x, y, out = 0x7F0000001000, 0x7F0000002000, 0x7F0000003000
    n = 512 * 32768
    saxpy = layout(SAXPY_OFFSETS, SAXPY_SIZES, 40, "saxpy")
    block = saxpy.pack(
        [np.float32(2.0), x, FakeCudaArray(y), FakeCudaArray(out), np.uint64(n)]
    )
    assert block == struct.pack("<f4xQQQQ", 2.0, x, y, out, n)
    assert saxpy._check.asked == [(4, 8, 8, 8, 8)]


def test_each_signature_of_sizes_goes_to_the_core_once():
    saxpy = layout(SAXPY_OFFSETS, SAXPY_SIZES, 40, "saxpy")
    for a in (1.0, np.float32(2.0), 3):
        saxpy.pack([a, 1, 2, 3, np.uint64(4)])
    assert saxpy._check.asked == [(4, 8, 8, 8, 8)]  # every one has those sizes
    for _ in range(2):
        with pytest.raises(cuabi.InvalidArgumentError, match="refuses"):
            saxpy.pack([np.float64(1.0), 1, 2, 3, 4])
    assert saxpy._check.asked[1:] == [(8, 8, 8, 8, 8)] * 2  # a refusal is not kept


def test_overview_uint32_n_for_size_t_goes_to_the_core_as_4_bytes():
    args = [
        np.array([2.0], dtype=np.float32),
        np.array([1], dtype=np.uint64),
        np.array([2], dtype=np.uint64),
        np.array([3], dtype=np.uint64),
        np.array(512 * 32768, dtype=np.uint32),
    ]
    saxpy = layout(SAXPY_OFFSETS, SAXPY_SIZES, 40, "saxpy")
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        saxpy.pack(args)
    assert saxpy._check.asked == [(4, 8, 8, 8, 4)]


def test_a_wrong_count_goes_to_the_core_before_any_value_is_packed():
    saxpy = layout(SAXPY_OFFSETS, SAXPY_SIZES, 40, "saxpy")
    for values in ([1.0, 2, 3, 4], [1.0, 2, 3, 4, 5, 6], []):
        with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
            saxpy.pack(values)
        assert len(saxpy._check.asked[-1]) == len(values)
    # a value Python cannot pass does not hide the wrong count
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        saxpy.pack(["text", 2, 3])


@pytest.mark.parametrize(
    "value,size,want",
    [
        (1.5, 4, struct.pack("<f", 1.5)),
        (1.5, 8, struct.pack("<d", 1.5)),
        (1.5, 2, struct.pack("<e", 1.5)),
        (float("inf"), 4, struct.pack("<f", float("inf"))),
        (1 + 2j, 8, struct.pack("<ff", 1, 2)),
        (1 + 2j, 16, struct.pack("<dd", 1, 2)),
    ],
)
def test_python_floats_follow_the_parameter_size(value, size, want):
    assert pack_value(value, size) == want


@pytest.mark.parametrize("size", [1, 3, 16])
def test_python_float_to_other_sizes_is_refused(size):
    with pytest.raises(
        cuabi.InvalidArgumentError, match=f"kernel 'k' parameter 2 is {size} bytes; a Python float"
    ):
        pack_value(1.0, size, 2, "k")


def test_python_float_out_of_float32_range_is_refused():
    with pytest.raises(cuabi.InvalidArgumentError, match="out of the range"):
        pack_value(1e39, 4, 0)
    assert pack_value(1e39, 8) == struct.pack("<d", 1e39)


@pytest.mark.parametrize("size", [1, 2, 4, 8])
def test_python_int_accepts_signed_and_unsigned_range(size):
    bits = size * 8
    lo, hi = -(1 << (bits - 1)), (1 << bits) - 1
    assert pack_value(lo, size) == lo.to_bytes(size, "little", signed=True)
    assert pack_value(hi, size) == hi.to_bytes(size, "little", signed=False)
    assert pack_value(-1, size) == b"\xff" * size
    for bad in (lo - 1, hi + 1):
        with pytest.raises(
            cuabi.InvalidArgumentError, match=f"does not fit in {bits} bits"
        ):
            pack_value(bad, size, 3)


def test_python_int_to_a_struct_sized_parameter_is_refused():
    with pytest.raises(cuabi.InvalidArgumentError, match="parameter 1 is 12 bytes; a Python int"):
        pack_value(5, 12, 1)


def test_bool_and_enums():
    assert pack_value(True, 1) == b"\x01"
    assert pack_value(False, 4) == b"\0\0\0\0"

    class Color(enum.IntEnum):
        RED = 7

    class Plain(enum.Enum):
        A = 300

    assert pack_value(Color.RED, 4) == struct.pack("<i", 7)
    assert pack_value(Plain.A, 2) == struct.pack("<H", 300)
    with pytest.raises(cuabi.InvalidArgumentError, match="does not fit in 8 bits"):
        pack_value(Plain.A, 1)


NUMPY_TYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


@pytest.mark.parametrize("dtype", NUMPY_TYPES, ids=lambda t: np.dtype(t).name)
def test_numpy_scalars_are_copied_exactly(dtype):
    value = np.True_ if dtype is np.bool_ else dtype(1)
    if np.dtype(dtype).kind in "fc":
        value = dtype(1.25)
    size = np.dtype(dtype).itemsize
    assert pack_value(value, size) == value.tobytes()
    # a 0-d and a one-element array pass the same bytes
    assert pack_value(np.array(value), size) == value.tobytes()
    assert pack_value(np.array([value]), size) == value.tobytes()
    # to a parameter of another size they are their own size, which the core refuses
    for wrong in {1, 2, 4, 8, 16} - {size}:
        k = layout([0, 16], [4, wrong], kernel="k")
        with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
            k.pack([1.0, value])
        assert k._check.asked == [(4, size)]


def test_host_arrays_of_several_elements_are_refused():
    with pytest.raises(cuabi.InvalidArgumentError, match="host array of 3 elements"):
        pack_value(np.zeros(3, np.float32), 8, 1)
    with pytest.raises(cuabi.InvalidArgumentError, match="object array has no C value"):
        pack_value(np.array([None], dtype=object), 8, 1)


def test_numpy_structured_scalar_is_a_struct_by_value():
    test_struct = np.dtype([("value", np.int32)], align=True)
    s = np.array([5], test_struct)
    assert pack_value(s[0], 4) == struct.pack("<i", 5)
    assert pack_value(s, 4) == struct.pack("<i", 5)
    pair = np.dtype([("a", np.int8), ("b", np.float64)], align=True)
    value = np.array([(1, 2.5)], pair)[0]
    assert struct.unpack("<b7xd", pack_value(value, 16)) == (1, 2.5)
    k = layout([0], [8])
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        k.pack([value])
    assert k._check.asked == [(16,)]


class CTestStruct(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int)]


def test_ctypes_values_and_structures():
    assert pack_value(ctypes.c_int(-2), 4) == struct.pack("<i", -2)
    assert pack_value(ctypes.c_double(0.5), 8) == struct.pack("<d", 0.5)
    assert pack_value(ctypes.c_void_p(0x1234), 8) == struct.pack("<Q", 0x1234)
    assert pack_value(ctypes.c_void_p(None), 8) == bytes(8)
    assert pack_value(CTestStruct(5), 4) == struct.pack("<i", 5)
    k = layout([0, 8], [4, 8])
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        k.pack([ctypes.c_int(1), ctypes.c_int(2)])
    assert k._check.asked == [(4, 4)]


def test_the_overviews_ctypes_way_values_and_types():
    """testkernel(int i, int* pi, float f, float* pf, testStruct s, testStruct* ps)."""
    p_int, p_float, p_struct = 0x1000, 0x2000, 0x3000
    values = (1, p_int, 123.456, p_float, CTestStruct(5), p_struct)
    types = (
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_float,
        ctypes.c_void_p,
        None,
        ctypes.c_void_p,
    )
    offsets, sizes = [0, 8, 16, 24, 32, 40], [4, 8, 4, 8, 4, 8]
    block = pack_args(values, offsets, sizes, types=types)
    want = struct.pack("<i4xQf4xQi4xQ", 1, p_int, 123.456, p_float, 5, p_struct)
    assert block == want
    # a wrong type for a parameter goes to the core as any other size
    bad = list(types)
    bad[0] = ctypes.c_int64
    k = layout(offsets, sizes)
    with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
        k.pack(values, bad)
    assert k._check.asked == [(8, 8, 4, 8, 4, 8)]
    with pytest.raises(
        cuabi.InvalidArgumentError, match="3 types were given for 6 kernel arguments"
    ):
        k.pack(values, types[:3])
    with pytest.raises(
        cuabi.InvalidArgumentError, match="parameter 0: cannot convert str to c_int"
    ):
        k.pack(("one",) + values[1:], types)


def test_the_overviews_numpy_way_values():
    """The same kernel with the overview's NumPy values (int is np.uint32 ...)."""
    test_struct = np.dtype([("value", np.int32)], align=True)
    values = (
        np.array(1, dtype=np.uint32),
        np.array([0x1000], dtype=np.intp),
        np.array(123.456, dtype=np.float32),
        np.array([0x2000], dtype=np.intp),
        np.array([5], test_struct),
        np.array([0x3000], dtype=np.intp),
    )
    block = pack_args(values, [0, 8, 16, 24, 32, 40], [4, 8, 4, 8, 4, 8])
    want = struct.pack(
        "<I4xqf4xqi4xq", 1, 0x1000, np.float32(123.456), 0x2000, 5, 0x3000
    )
    assert block == want


def test_device_pointers_are_pointer_sized():
    assert pack_value(None, 8) == bytes(8)
    assert pack_value(FakeCudaArray(0xABC), 8) == struct.pack("<Q", 0xABC)
    assert pack_value(FakeCudaArray(0xABC), 4) == struct.pack("<Q", 0xABC)
    k = layout([0], [4])
    for pointer in (None, FakeCudaArray(0xABC)):
        with pytest.raises(cuabi.InvalidArgumentError, match="the core refuses"):
            k.pack([pointer])
    assert k._check.asked == [(8,), (8,)]


def test_dlpack_producers_pass_their_device_address():
    before = _dlpack.live_exports()
    assert pack_value(FakeDLPack(0xBEEF00), 8) == struct.pack("<Q", 0xBEEF00)
    # the capsule was not consumed, so its destructor ran the deleter
    assert _dlpack.live_exports() == before
    with pytest.raises(
        cuabi.InvalidArgumentError, match="parameter 1.*not on a CUDA device"
    ):
        pack_value(FakeDLPack(0xBEEF00, _dlpack.kDLCPU), 8, 1)


@pytest.mark.parametrize("value", ["text", [1, 2], object(), b"\x01\x02"])
def test_unsupported_values_are_refused_naming_the_parameter(value):
    with pytest.raises(
        cuabi.InvalidArgumentError, match="kernel 'k' parameter 3: cannot pass"
    ):
        pack_value(value, 8, 3, "k")


def test_gaps_and_tail_are_zero_and_layout_is_reusable():
    k = layout([0, 8], [1, 4], args_size=16, kernel="k")
    assert k.pack([np.uint8(0xFF), np.int32(-1)]) == b"\xff" + bytes(7) + b"\xff" * 4 + bytes(4)
    # the same layout with other value types (the per-type cache must not leak)
    assert k.pack([1, 2.0]) == b"\x01" + bytes(7) + struct.pack("<f", 2.0) + bytes(4)
    assert layout([], []).pack([]) == b""


@pytest.mark.parametrize("backend_name", BACKEND_PARAMS)
def test_import_needs_no_library(tmp_path, backend_name):
    """Importing cuabi loads nothing: where libcuabi cannot be loaded, the
    first object says where either backend looked."""
    env = dict(os.environ, CUABI_LIBRARY=str(tmp_path / "missing" / "libcuabi.so"))
    env["CUABI_BACKEND"] = backend_name
    # this same cuabi first; the rest of PYTHONPATH stays (cffi may live there)
    env["PYTHONPATH"] = os.pathsep.join(
        p
        for p in (os.path.dirname(os.path.dirname(cuabi.__file__)),)
        + tuple(os.environ.get("PYTHONPATH", "").split(os.pathsep))
        if p
    )
    code = (
        "import cuabi\n"
        "print(cuabi.capi.Status.ERROR_NOT_FOUND == cuabi.NotFoundError.status)\n"
        "try:\n"
        "    prog = cuabi.Program('x')\n"
        "except cuabi.LibraryNotFoundError as e:\n"
        "    print('LibraryNotFoundError', e.tried)\n"
        "else:\n"
        "    print('loaded', prog.backend.name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0] == "True"
    assert "LibraryNotFoundError" in out and "missing" in out, out


def test_low_layer_kernel_params_the_ctypes_way():
    """capi.kernel_params: the overview's (values, types) as a void** array."""

    class Mode(enum.Enum):
        FAST = 3

    values = (1, 0x1000, 123.456, CTestStruct(5), Mode.FAST)
    types = (ctypes.c_int, ctypes.c_void_p, ctypes.c_float, None, None)
    p = cuabi.capi.kernel_params(values, types)
    assert p.count == 5
    assert list(p.sizes) == [4, 8, 4, 4, 4]
    read = [ctypes.string_at(p.params[i], p.sizes[i]) for i in range(5)]
    assert read == [
        struct.pack("<i", 1),
        struct.pack("<Q", 0x1000),
        struct.pack("<f", 123.456),
        struct.pack("<i", 5),
        struct.pack("<i", 3),
    ]
    with pytest.raises(TypeError, match="argument 0"):
        cuabi.capi.kernel_params(("x",), (None,))
    with pytest.raises(ValueError, match="2 values but 3 types"):
        cuabi.capi.kernel_params([1, 2], [ctypes.c_int] * 3)


# --- A strided array where a kernel takes a pointer ---------------------------


class StridedCudaArray:
    """A CUDA Array Interface view with explicit strides (bytes), as a
    transposed or sliced CuPy/PyTorch view gives them."""

    def __init__(self, ptr: int, shape, strides, typestr: str = "<f4") -> None:
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, False),
            "strides": None if strides is None else tuple(strides),
            "version": 3,
        }


def test_a_strided_array_is_refused_naming_the_parameter_and_its_strides():
    view = StridedCudaArray(0x7000_0000, (4, 3), (4, 16))  # a transposed 3x4 float32
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        pack_value(view, 8, 2, "saxpy")
    message = str(info.value)
    assert "kernel 'saxpy' parameter 2" in message
    assert "strides (4, 16)" in message
    assert "(12, 4)" in message  # what contiguous would be
    assert "base pointer" in message
    # Through a whole argument list too.
    with pytest.raises(cuabi.InvalidArgumentError, match=r"parameter 1.*strides \(4, 16\)"):
        pack_args([2.0, view, 0, 0, 4], SAXPY_OFFSETS, SAXPY_SIZES)


def test_contiguous_arrays_and_the_explicit_base_pointer_pass():
    address = 0x7000_0000
    # Explicit compact strides, unit extents with any stride, no strides at all.
    for view in (
        StridedCudaArray(address, (3, 4), (16, 4)),
        StridedCudaArray(address, (1, 4), (999, 4)),
        StridedCudaArray(address, (3, 4), None),
        StridedCudaArray(address, (0, 4), (4, 16)),  # no elements: nothing to misread
    ):
        assert pack_value(view, 8) == struct.pack("<Q", address)
    # The strided view's base pointer, passed on purpose as an int.
    assert pack_value(address, 8) == struct.pack("<Q", address)


def test_a_strided_dlpack_tensor_is_refused_too():
    class StridedDLPack:
        """A DLPack-only producer of a column of a 4x4 int32 matrix."""

        def __init__(self) -> None:
            self.shape = (4,)
            self._strides = (ctypes.c_int64 * 1)(4)
            self._shape = (ctypes.c_int64 * 1)(4)

        def __dlpack_device__(self):
            return (_dlpack.kDLCUDA, 0)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            t = _dlpack.DLManagedTensor()
            t.dl_tensor.data = 0x7000_0000
            t.dl_tensor.device = _dlpack.DLDevice(_dlpack.kDLCUDA, 0)
            t.dl_tensor.ndim = 1
            t.dl_tensor.dtype = _dlpack.DLDataType(_dlpack.kDLInt, 32, 1)
            t.dl_tensor.shape = self._shape
            t.dl_tensor.strides = self._strides
            self._keep = t
            name = ctypes.create_string_buffer(b"dltensor")
            self._name = name
            new = ctypes.PYFUNCTYPE(
                ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
            )(("PyCapsule_New", ctypes.pythonapi))
            return new(ctypes.addressof(t), ctypes.addressof(name), None)

    with pytest.raises(cuabi.InvalidArgumentError, match=r"parameter 3.*strides \(16,\)"):
        pack_value(StridedDLPack(), 8, 3, "k")
