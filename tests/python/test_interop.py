"""Zero-copy interop with CuPy and PyTorch, both ways: they view cuabi memory
through __cuda_array_interface__ and DLPack; cuabi wraps their memory and
streams and takes their arrays as kernel arguments. Skipped, with the reason,
where there is no device or the library is not importable."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cuabi import _dlpack
from kernels import ADD_ONE

pytestmark = pytest.mark.gpu


class DLPackOnly:
    """Hides everything of an array but its DLPack methods."""

    def __init__(self, array) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


@pytest.fixture
def cp():
    return pytest.importorskip("cupy", reason="CuPy is not installed")


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch was built without CUDA or sees no device")
    return torch


# --------------------------------------------------------------------------
# CuPy
# --------------------------------------------------------------------------


def test_cupy_views_cuabi_memory(device, cp):
    host = np.arange(12, dtype=np.float32)
    buf = device.to_device(host)
    a = cp.asarray(buf)  # __cuda_array_interface__
    assert a.data.ptr == buf.ptr and a.shape == (12,) and a.dtype == cp.float32
    a *= 2
    cp.cuda.runtime.deviceSynchronize()
    assert np.array_equal(buf.to_numpy(), host * 2)

    before = _dlpack.live_exports()
    b = cp.from_dlpack(buf.as_array(np.float32, (3, 4)))  # DLPack
    assert b.data.ptr == buf.ptr and b.shape == (3, 4)
    assert np.array_equal(cp.asnumpy(b), (host * 2).reshape(3, 4))
    del b
    gc.collect()
    assert _dlpack.live_exports() == before


def test_cuabi_wraps_cupy_memory_and_streams(device, cp):
    a = cp.arange(64, dtype=cp.int32)
    wrapped = device.wrap_buffer(a)
    assert (
        wrapped.ptr == a.data.ptr
        and wrapped.shape == (64,)
        and wrapped.dtype == np.int32
    )
    assert np.array_equal(wrapped.to_numpy(), np.arange(64))
    via_dlpack = device.wrap_buffer(DLPackOnly(a))
    assert via_dlpack.ptr == a.data.ptr and via_dlpack.nbytes == 64 * 4

    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    stream = cp.cuda.Stream(non_blocking=True)
    ours = device.wrap_stream(stream)
    assert ours.ptr == stream.ptr
    add_one(1, 64, (a, np.uint64(64)), stream=ours)  # a CuPy array as an argument
    add_one(1, 64, (DLPackOnly(a), 64), stream=ours)
    stream.synchronize()
    assert cp.asnumpy(a).tolist() == list(range(2, 66))
    ours.close()
    stream.synchronize()  # still CuPy's, not destroyed


# --------------------------------------------------------------------------
# PyTorch
# --------------------------------------------------------------------------


def test_torch_views_cuabi_memory(device, torch):
    host = np.arange(10, dtype=np.float32)
    buf = device.to_device(host)
    t = torch.as_tensor(buf, device="cuda")  # __cuda_array_interface__
    assert (
        t.data_ptr() == buf.ptr and t.dtype == torch.float32 and tuple(t.shape) == (10,)
    )

    before = _dlpack.live_exports()
    u = torch.from_dlpack(buf.as_array(np.float32, (2, 5)))  # DLPack
    assert u.data_ptr() == buf.ptr and tuple(u.shape) == (2, 5)
    u += 1
    torch.cuda.synchronize()
    assert np.array_equal(buf.to_numpy(), host + 1)
    del u
    gc.collect()
    assert _dlpack.live_exports() == before


def test_cuabi_wraps_torch_memory_and_streams(device, torch):
    t = torch.zeros(32, dtype=torch.int32, device="cuda")
    wrapped = device.wrap_buffer(t)
    assert (
        wrapped.ptr == t.data_ptr()
        and wrapped.shape == (32,)
        and wrapped.dtype == np.int32
    )
    via_dlpack = device.wrap_buffer(DLPackOnly(t))
    assert via_dlpack.ptr == t.data_ptr()

    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    stream = torch.cuda.Stream()
    ours = device.wrap_stream(stream)
    assert ours.ptr == stream.cuda_stream
    add_one(1, 32, (t, 32), stream=ours)  # a PyTorch tensor as an argument
    stream.synchronize()
    assert t.cpu().tolist() == [1] * 32
    wrapped.copy_from_host(np.full(32, 9, np.int32))
    assert t.cpu().tolist() == [9] * 32


def test_raw_handles_go_both_ways(device, torch):
    """Our primary context is the one PyTorch uses; our pointers are plain ints."""
    buf = device.to_device(np.arange(4, dtype=np.int64))
    t = torch.empty(4, dtype=torch.int64, device="cuda")
    ours = device.wrap_buffer(t.data_ptr(), 4 * 8)
    ours.copy_from(buf)
    assert t.cpu().tolist() == [0, 1, 2, 3]
    assert isinstance(buf.ptr, int) and isinstance(device.context, int)
