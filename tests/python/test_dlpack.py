"""The DLPack capsules cuabi makes, checked on host memory with NumPy as the
consumer (the same code exports device memory to CuPy and PyTorch)."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from cuabi import _dlpack


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
