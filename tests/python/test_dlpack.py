"""The DLPack capsules cuabi makes, checked on host memory with NumPy as the
consumer (the same code exports device memory to CuPy and PyTorch)."""

from __future__ import annotations

import ctypes
import gc
import struct
import threading

import numpy as np
import pytest

import cuabi
from cuabi import _dlpack
from cuabi._memory import foreign_memory


class HostExport:
    """Exports a NumPy array's memory through cuabi's capsule code."""

    def __init__(self, array: np.ndarray, force_legacy: bool = False) -> None:
        self.array = array
        self.force_legacy = force_legacy
        self.asked = None

    def __dlpack_device__(self):
        return (_dlpack.kDLCPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked = max_version
        versioned = (
            not self.force_legacy and max_version is not None and max_version[0] >= 1
        )
        return _dlpack.make_capsule(
            self.array.ctypes.data,
            self.array.shape,
            self.array.dtype,
            _dlpack.kDLCPU,
            0,
            owner=self.array,
            versioned=versioned,
        )


@pytest.mark.parametrize("legacy", [False, True], ids=["versioned", "legacy"])
@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.uint16,
        np.int32,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    ],
)
def test_numpy_consumes_our_capsule_without_a_copy(dtype, legacy):
    before = _dlpack.live_exports()
    source = (np.arange(24) % 7).astype(dtype).reshape(2, 3, 4)
    producer = HostExport(source, force_legacy=legacy)
    view = np.from_dlpack(producer)
    assert view.dtype == source.dtype and view.shape == source.shape
    assert view.ctypes.data == source.ctypes.data  # the same memory
    np.testing.assert_array_equal(view, source)
    if not legacy and producer.asked is None:
        pytest.skip(
            f"NumPy {np.__version__} does not ask for versioned DLPack capsules"
        )
    assert _dlpack.live_exports() == before + 1
    del view
    gc.collect()
    assert _dlpack.live_exports() == before  # the consumer called our deleter


def test_an_unconsumed_capsule_calls_the_deleter_itself():
    before = _dlpack.live_exports()
    for versioned in (False, True):
        arr = np.zeros(4, np.float32)
        capsule = _dlpack.make_capsule(
            arr.ctypes.data, arr.shape, arr.dtype, 1, 0, arr, versioned
        )
        assert _dlpack.live_exports() == before + 1
        ptr, device_type, device_id = _dlpack.capsule_pointer(capsule)
        assert (ptr, device_type, device_id) == (arr.ctypes.data, 1, 0)
        del capsule
        assert _dlpack.live_exports() == before


def test_deleter_runs_on_another_thread_and_calls_back_once():
    calls = []
    arr = np.ones(8, np.int32)
    capsules = [
        _dlpack.make_capsule(
            arr.ctypes.data,
            arr.shape,
            arr.dtype,
            1,
            0,
            arr,
            on_delete=lambda: calls.append(1),
        )
    ]

    class Holder:
        def __dlpack__(self, **kwargs):
            return capsules.pop()  # the consumer gets the only reference

        def __dlpack_device__(self):
            return (_dlpack.kDLCPU, 0)

    view = np.from_dlpack(Holder())
    assert calls == []
    box = [view]
    del view
    t = threading.Thread(target=lambda: (box.clear(), gc.collect()))
    t.start()
    t.join()
    gc.collect()
    assert calls == [1]


def test_consumed_capsule_cannot_be_read_again():
    arr = np.zeros(2, np.float64)
    producer = HostExport(arr, force_legacy=True)
    capsule = producer.__dlpack__()

    class Holder:
        def __dlpack__(self, **kwargs):
            return capsule

        def __dlpack_device__(self):
            return (_dlpack.kDLCPU, 0)

    view = np.from_dlpack(Holder())
    with pytest.raises(BufferError, match="not an unconsumed DLPack capsule"):
        _dlpack.capsule_pointer(capsule)  # NumPy renamed it to used_dltensor
    del view


def test_dtype_codes():
    assert _dlpack.dtype_to_dlpack(np.float32) == (_dlpack.kDLFloat, 32, 1)
    assert _dlpack.dtype_to_dlpack(np.uint64) == (_dlpack.kDLUInt, 64, 1)
    assert _dlpack.dtype_to_dlpack(np.bool_) == (_dlpack.kDLBool, 8, 1)
    assert _dlpack.dtype_to_dlpack(np.complex64) == (_dlpack.kDLComplex, 64, 1)
    with pytest.raises(BufferError):
        _dlpack.dtype_to_dlpack(np.dtype([("a", np.int32)]))


# --------------------------------------------------------------------------
# Reading other producers' capsules (what Device.wrap_buffer and kernel
# arguments do with CuPy/PyTorch tensors), with capsules built here byte by
# byte after dlpack.h, independently of the ctypes structures in _dlpack.
# --------------------------------------------------------------------------

_PyCapsule_New = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
)(("PyCapsule_New", ctypes.pythonapi))
_DELETER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_ALIVE = []  # what hand-made capsules point into, kept for the whole session


class HandMadeProducer:
    """A DLPack producer written against dlpack.h alone.

    DLTensor (48 bytes): data @0, device {int32 type, int32 id} @8, ndim @16,
    dtype {uint8 code, uint8 bits, uint16 lanes} @20, shape @24, strides @32,
    byte_offset @40. DLManagedTensor: dl_tensor @0, manager_ctx @48,
    deleter @56. DLManagedTensorVersioned: version {uint32 major, minor} @0,
    manager_ctx @8, deleter @16, flags @24, dl_tensor @32.

    It hands out a versioned capsule only when asked with max_version (as
    CuPy 14 and PyTorch do), or never when ``legacy_only`` (its __dlpack__
    then lacks the keyword, as producers older than DLPack 1.0 do).
    """

    def __init__(
        self,
        data,
        shape,
        dtype=(_dlpack.kDLInt, 32, 1),
        device=(_dlpack.kDLCUDA, 0),
        strides=None,
        byte_offset=0,
        version=(1, 0),
        flags=0,
        legacy_only=False,
        keep=None,
    ):
        self.data, self.shape, self.dtype = data, tuple(shape), dtype
        self.device, self.strides, self.byte_offset = device, strides, byte_offset
        self.version, self.flags, self.keep = version, flags, keep
        self.deleted = []
        self.asked = []
        self._deleter = _DELETER_T(self.deleted.append)
        if legacy_only:
            self.__dlpack__ = self._legacy_dlpack

    def __dlpack_device__(self):
        return self.device

    def _legacy_dlpack(self, stream=None):
        self.asked.append(None)
        return self.capsule(versioned=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked.append(max_version)
        return self.capsule(versioned=max_version is not None and max_version[0] >= 1)

    def capsule(self, versioned):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = None
        if self.strides is not None:
            strides = (ctypes.c_int64 * max(ndim, 1))(*self.strides)
        code, bits, lanes = self.dtype
        tensor = struct.pack(
            "=QiiiBBHQQQ",
            self.data,
            self.device[0],
            self.device[1],
            ndim,
            code,
            bits,
            lanes,
            ctypes.addressof(shape),
            ctypes.addressof(strides) if strides is not None else 0,
            self.byte_offset,
        )
        assert len(tensor) == 48
        deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        if versioned:
            raw = struct.pack("=IIQQQ", *self.version, 0, deleter, self.flags) + tensor
            name = ctypes.create_string_buffer(b"dltensor_versioned")
            assert len(raw) == 80
        else:
            raw = tensor + struct.pack("=QQ", 0, deleter)
            name = ctypes.create_string_buffer(b"dltensor")
            assert len(raw) == 64
        managed = ctypes.create_string_buffer(raw, len(raw))
        _ALIVE.append((shape, strides, managed, name))
        # no capsule destructor: the test owns the memory it describes
        return _PyCapsule_New(ctypes.addressof(managed), ctypes.addressof(name), None)


class DLPackOnly:
    """Hides everything of a producer but its DLPack methods (no shape, no
    dtype attributes), as a wrapper around a CuPy array would."""

    def __init__(self, producer) -> None:
        self._producer = producer

    def __dlpack__(self, **kwargs):
        return self._producer.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._producer.__dlpack_device__()


DEVICE_ADDRESS = 0x7F12_3400_0000
OTHER_NAME = ctypes.create_string_buffer(b"something_else")


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_numpy_reads_the_hand_made_capsule_the_same_way(versioned):
    """Checks the hand-made layout itself against NumPy's reader."""
    source = np.arange(12, dtype=np.int32).reshape(3, 4)
    producer = HandMadeProducer(
        source.ctypes.data, source.shape, device=(_dlpack.kDLCPU, 0), keep=source
    )
    capsule = producer.capsule(versioned)

    class Holder:
        def __dlpack__(self, **kwargs):
            return capsule

        def __dlpack_device__(self):
            return (_dlpack.kDLCPU, 0)

    if versioned and tuple(map(int, np.__version__.split(".")[:2])) < (2, 1):
        pytest.skip(f"NumPy {np.__version__} reads no versioned DLPack capsules")
    view = np.from_dlpack(Holder())
    assert view.ctypes.data == source.ctypes.data and view.shape == (3, 4)
    np.testing.assert_array_equal(view, source)
    del view
    gc.collect()
    assert len(producer.deleted) == 1  # NumPy found the deleter where we put it


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_capsule_tensor_reads_shape_dtype_and_size(versioned):
    producer = HandMadeProducer(
        DEVICE_ADDRESS,
        (64,),
        dtype=(_dlpack.kDLInt, 32, 1),
        device=(_dlpack.kDLCUDA, 3),
    )
    t = _dlpack.capsule_tensor(producer.capsule(versioned))
    assert t.ptr == DEVICE_ADDRESS
    assert (t.device_type, t.device_id) == (_dlpack.kDLCUDA, 3)
    assert t.shape == (64,) and t.nbytes == 64 * 4 and t.itemsize == 4
    assert np.dtype(t.typestr) == np.int32
    assert t.contiguous and not t.read_only
    assert producer.deleted == []  # read, not consumed

    producer = HandMadeProducer(
        DEVICE_ADDRESS,
        (2, 3, 5),
        dtype=(_dlpack.kDLFloat, 64, 1),
        byte_offset=96,
        strides=(15, 5, 1),
        flags=_dlpack.DLPACK_FLAG_BITMASK_READ_ONLY,
    )
    t = _dlpack.capsule_tensor(producer.capsule(versioned))
    assert t.ptr == DEVICE_ADDRESS + 96
    assert t.shape == (2, 3, 5) and t.nbytes == 30 * 8
    assert np.dtype(t.typestr) == np.float64 and t.contiguous
    assert t.read_only == versioned  # only versioned capsules carry flags


@pytest.mark.parametrize(
    "dtype, typestr, itemsize",
    [
        ((_dlpack.kDLUInt, 8, 1), "|u1", 1),
        ((_dlpack.kDLInt, 64, 1), "<i8", 8),
        ((_dlpack.kDLFloat, 16, 1), "<f2", 2),
        ((_dlpack.kDLComplex, 64, 1), "<c8", 8),
        ((_dlpack.kDLBool, 8, 1), "|b1", 1),
        ((4, 16, 1), None, 2),  # bfloat16: raw bytes
        ((_dlpack.kDLFloat, 32, 4), None, 16),  # float4 vector lanes
    ],
)
def test_capsule_dtypes(dtype, typestr, itemsize):
    producer = HandMadeProducer(DEVICE_ADDRESS, (3, 7), dtype=dtype)
    t = _dlpack.capsule_tensor(producer.capsule(True))
    assert t.typestr == typestr and t.itemsize == itemsize
    assert t.nbytes == 21 * itemsize


def test_scalar_and_empty_tensors():
    t = _dlpack.capsule_tensor(HandMadeProducer(DEVICE_ADDRESS, ()).capsule(True))
    assert t.shape == () and t.nbytes == 4
    t = _dlpack.capsule_tensor(HandMadeProducer(DEVICE_ADDRESS, (0, 5)).capsule(False))
    assert t.shape == (0, 5) and t.nbytes == 0 and t.contiguous


def test_strided_tensors():
    # extent-1 dimensions may carry any stride
    t = _dlpack.capsule_tensor(
        HandMadeProducer(DEVICE_ADDRESS, (1, 4), strides=(99, 1)).capsule(True)
    )
    assert t.contiguous and t.nbytes == 16
    for shape, strides in (((4, 2), (1, 4)), ((8,), (2,)), ((2, 2), (4, 1))):
        t = _dlpack.capsule_tensor(
            HandMadeProducer(DEVICE_ADDRESS, shape, strides=strides).capsule(True)
        )
        assert not t.contiguous, (shape, strides)


def test_bad_capsules_are_refused_clearly():
    with pytest.raises(BufferError, match=r"version 2\.0; cuabi reads 1\.x"):
        _dlpack.capsule_tensor(
            HandMadeProducer(DEVICE_ADDRESS, (4,), version=(2, 0)).capsule(True)
        )
    with pytest.raises(BufferError, match="not a whole number of bytes"):
        _dlpack.capsule_tensor(
            HandMadeProducer(
                DEVICE_ADDRESS, (4,), dtype=(_dlpack.kDLFloat, 4, 1)
            ).capsule(True)
        )
    with pytest.raises(BufferError, match="negative extent"):
        _dlpack.capsule_tensor(HandMadeProducer(DEVICE_ADDRESS, (-1,)).capsule(True))
    with pytest.raises(BufferError, match="not an unconsumed DLPack capsule"):
        _dlpack.capsule_tensor(
            _PyCapsule_New(DEVICE_ADDRESS, ctypes.addressof(OTHER_NAME), None)
        )


def test_consumer_asks_for_a_versioned_capsule_and_falls_back():
    producer = HandMadeProducer(DEVICE_ADDRESS, (64,))
    t, capsule = _dlpack.dlpack_tensor(DLPackOnly(producer))
    assert producer.asked == [(1, 0)]
    assert _dlpack._PyCapsule_GetName(capsule) == b"dltensor_versioned"
    assert (t.ptr, t.shape, t.nbytes) == (DEVICE_ADDRESS, (64,), 256)

    old = HandMadeProducer(DEVICE_ADDRESS, (64,), legacy_only=True)
    t, capsule = _dlpack.dlpack_tensor(old)
    assert old.asked == [None]  # asked again without max_version
    assert _dlpack._PyCapsule_GetName(capsule) == b"dltensor"
    assert (t.ptr, t.shape, t.nbytes) == (DEVICE_ADDRESS, (64,), 256)

    host = HandMadeProducer(DEVICE_ADDRESS, (64,), device=(_dlpack.kDLCPU, 0))
    with pytest.raises(BufferError, match="not on a CUDA device"):
        _dlpack.dlpack_tensor(host)


@pytest.mark.parametrize("legacy_only", [False, True], ids=["versioned", "legacy"])
def test_wrapping_takes_size_and_type_from_the_capsule(legacy_only):
    """Device.wrap_buffer(DLPackOnly(cupy.arange(64, dtype=int32))) must wrap
    256 bytes of int32, not 1 byte: the object itself has no shape or dtype."""
    producer = HandMadeProducer(
        DEVICE_ADDRESS, (64,), dtype=(_dlpack.kDLInt, 32, 1), legacy_only=legacy_only
    )
    ptr, nbytes, dtype, shape, keep = foreign_memory(DLPackOnly(producer))
    assert (ptr, nbytes, shape) == (DEVICE_ADDRESS, 256, (64,))
    assert np.dtype(dtype) == np.int32
    assert producer.deleted == []  # the capsule is kept, unconsumed, with the object
    assert _dlpack.capsule_tensor(keep[1]).ptr == DEVICE_ADDRESS

    producer = HandMadeProducer(DEVICE_ADDRESS, (4, 8), dtype=(4, 16, 1), byte_offset=8)
    ptr, nbytes, dtype, shape, _ = foreign_memory(DLPackOnly(producer))
    assert (ptr, nbytes, dtype, shape) == (DEVICE_ADDRESS + 8, 64, None, None)

    assert foreign_memory(DLPackOnly(producer), nbytes=16)[1] == 16

    strided = HandMadeProducer(DEVICE_ADDRESS, (4, 8), strides=(1, 4))
    with pytest.raises(ValueError, match="only C-contiguous"):
        foreign_memory(DLPackOnly(strided))


def test_wrapping_through_the_cuda_array_interface():
    class CudaArray:
        def __init__(self, shape, typestr, strides=None):
            self.__cuda_array_interface__ = {
                "shape": shape,
                "typestr": typestr,
                "data": (DEVICE_ADDRESS, False),
                "strides": strides,
                "version": 3,
            }

    ptr, nbytes, dtype, shape, _ = foreign_memory(CudaArray((3, 5), "<f8"))
    assert (ptr, nbytes, dtype, shape) == (DEVICE_ADDRESS, 120, "<f8", (3, 5))
    assert foreign_memory(CudaArray((1, 5), "<f4", strides=(4, 4)))[1] == 20
    with pytest.raises(ValueError, match="only C-contiguous"):
        foreign_memory(CudaArray((3, 5), "<f4", strides=(4, 12)))
    with pytest.raises(ValueError, match="needs nbytes"):
        foreign_memory(DEVICE_ADDRESS)
    assert foreign_memory(DEVICE_ADDRESS, 10)[:2] == (DEVICE_ADDRESS, 10)
    with pytest.raises(TypeError, match="neither __cuda_array_interface__"):
        foreign_memory(object())


# --- The core's import: refusals named, the capsule left unconsumed ----------


@pytest.mark.parametrize(
    "kwargs, error, needle",
    [
        ({"device": (_dlpack.kDLCPU, 0)}, "InvalidArgumentError", "device.device_type is 1"),
        ({"version": (2, 0)}, "NotSupportedError", "tensor.version is 2.0"),
        ({"flags": 1}, "InvalidArgumentError", "read-only"),
        ({"dtype": (_dlpack.kDLInt, 4, 1)}, "NotSupportedError", "dtype.bits is 4"),
        ({"strides": (-1,)}, "NotSupportedError", "strides[0] is -1"),
        ({"shape": (0,)}, "InvalidArgumentError", "no elements"),
    ],
    ids=["cpu-device", "version-2", "read-only", "sub-byte", "negative-stride", "empty"],
)
def test_core_import_refusals_leave_the_capsule_unconsumed(backend, kwargs, error, needle):
    if not hasattr(backend.lib, "cuabi_buffer_import_dlpack"):
        pytest.skip(f"{backend.path} predates cuabi_buffer_import_dlpack")
    args = dict(data=DEVICE_ADDRESS, shape=(16,), version=(1, 1))
    args.update(kwargs)
    producer = HandMadeProducer(**args)
    capsule = producer.__dlpack__(max_version=(1, 1))
    with pytest.raises(getattr(cuabi, error)) as info:
        _dlpack.import_capsule(backend, capsule)
    assert needle in str(info.value)
    assert producer.deleted == [], "a refused tensor stays its producer's"
    # Still unconsumed: another consumer may take it.
    assert _dlpack._PyCapsule_GetName(capsule) == b"dltensor_versioned"


def test_core_import_takes_a_read_only_tensor_when_asked(backend):
    if not hasattr(backend.lib, "cuabi_buffer_import_dlpack"):
        pytest.skip(f"{backend.path} predates cuabi_buffer_import_dlpack")
    producer = HandMadeProducer(DEVICE_ADDRESS, (4,), version=(1, 1), flags=1,
                                device=(_dlpack.kDLCUDA, -1))
    capsule = producer.__dlpack__(max_version=(1, 1))
    # Every check passes but the device ordinal -1, which needs no driver.
    with pytest.raises(cuabi.InvalidArgumentError, match="device_id is -1"):
        _dlpack.import_capsule(backend, capsule, read_only=True)
    assert producer.deleted == []


def test_export_and_import_through_the_core_on_the_stand_in(backend, subprocess_env):
    """dlpack_fake_child.py against the stand-in driver, on each backend."""
    import os
    import subprocess
    import sys

    fake = os.environ.get("CUABI_FAULT_FAKE_DRIVER", "")
    if not fake or not os.path.isfile(fake):
        pytest.skip("CUABI_FAULT_FAKE_DRIVER is not set to the stand-in driver (a CMake build)")
    child = os.path.join(os.path.dirname(__file__), "dlpack_fake_child.py")
    env = dict(subprocess_env, CUABI_DRIVER_PATH=fake, CUABI_NVRTC_PATH=fake, CUABI_CACHE="0")
    done = subprocess.run(
        [sys.executable, child, backend.name], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dlpack on the stand-in: ok" in done.stdout
