"""DLPack through the core (cuabi_buffer_export_dlpack, cuabi_buffer_import_dlpack,
cuabi_stream_dlpack_handoff): PyTorch, CuPy and JAX arrays taken over by
``cuabi.from_dlpack`` and cuabi buffers handed to them, zero-copy both ways
(the same pointer), with the stream handshake ordering the consumer's stream
after the producer's work; the core's refusals; a strided array refused as
a kernel's pointer argument. Run on both backends; skipped, with the reason,
without a device or the framework."""

from __future__ import annotations

import gc
import os

import numpy as np

import pytest

import cuabi
from cuabi import _dlpack
from kernels import ADD_ONE

pytestmark = pytest.mark.gpu

# Spins about `cycles` clock cycles, then writes `value` to out[0..n).
SLOW_FILL = """\
extern "C" __global__ void slow_fill(float* out, size_t n, float value, long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {}
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = value;
}
"""
CYCLES = 200_000_000  # about 0.1 s


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch was built without CUDA or sees no device")
    return torch


@pytest.fixture
def cp():
    return pytest.importorskip("cupy", reason="CuPy is not installed")


@pytest.fixture
def jax():
    # JAX takes 75% of every GPU's memory at its first use unless told not
    # to, and holds it until the process ends: every other process on the
    # machine (the other backend's suite, the C tests) would then fail to
    # make a context. It allocates what it uses instead.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    os.environ.setdefault("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("JAX sees no GPU (jax[cuda] is not installed)")
    return jax


# --- PyTorch ------------------------------------------------------------------


def test_torch_tensor_taken_over_launched_on_and_kept_alive(device, backend, torch):
    t = torch.arange(256, dtype=torch.int32, device="cuda")
    ptr = t.data_ptr()
    buf = cuabi.from_dlpack(t, backend=backend)
    assert buf.ptr == ptr, "zero-copy: PyTorch's own memory"
    assert buf.kind == cuabi.BufferKind.WRAPPED
    assert buf.nbytes == 256 * 4 and buf.dtype == np.int32 and buf.shape == (256,)
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    add_one(1, 256, (buf, 256))
    device.synchronize()
    assert t.cpu().tolist() == list(range(1, 257))
    # The buffer, not the Python tensor, keeps the memory: drop PyTorch's side.
    del t
    gc.collect()
    torch.cuda.empty_cache()
    filler = torch.full((256,), -7, dtype=torch.int32, device="cuda")  # reuses freed memory
    torch.cuda.synchronize()
    assert buf.to_numpy().tolist() == list(range(1, 257))
    del filler


def test_cuabi_buffer_handed_to_torch_without_a_copy(device, backend, torch):
    host = np.arange(12, dtype=np.float32)
    buf = device.to_device(host)
    before = _dlpack.live_exports()
    u = torch.from_dlpack(buf.as_array(np.float32, (3, 4)))
    assert u.data_ptr() == buf.ptr and tuple(u.shape) == (3, 4)
    u *= 2
    torch.cuda.synchronize()
    assert np.array_equal(buf.to_numpy(), host * 2)
    # Back again: the exported tensor taken over by cuabi is the same memory.
    again = cuabi.from_dlpack(u, backend=backend)
    assert again.ptr == buf.ptr
    del u, again
    gc.collect()
    assert _dlpack.live_exports() == before


def test_torch_stream_orders_our_stream(device, backend, torch):
    ours = device.create_stream(non_blocking=True)
    producer = torch.cuda.Stream()
    t = torch.zeros(1 << 16, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(producer):
        torch.cuda._sleep(CYCLES)
        t.fill_(5.0)
        # torch's __dlpack__(stream=ours) makes ours wait for `producer`.
        buf = cuabi.from_dlpack(t, stream=ours, backend=backend)
    host = np.empty(1 << 16, dtype=np.float32)
    buf.copy_to_host(host, stream=ours)
    ours.synchronize()
    assert host[0] == 5.0 and host[-1] == 5.0


def test_our_stream_orders_torch_stream(device, torch):
    slow = device.compile(SLOW_FILL).get_kernel("slow_fill")
    ours = device.create_stream(non_blocking=True)
    n = 1 << 16
    buf = device.alloc(n * 4)
    buf.memset(0)
    slow(1, 256, (buf, n, np.float32(3.0), np.int64(CYCLES)), stream=ours)
    consumer = torch.cuda.Stream()
    with torch.cuda.stream(consumer):
        # torch passes its current stream; our __dlpack__ hands off to it.
        u = torch.from_dlpack(buf.as_array(np.float32, (n,), stream=ours))
        copy = u.clone()
    consumer.synchronize()
    assert copy[0].item() == 3.0 and copy[-1].item() == 3.0


def test_strided_torch_view_refused_as_a_pointer_argument(device, torch):
    t = torch.zeros((4, 8), dtype=torch.int32, device="cuda")
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    with pytest.raises(cuabi.InvalidArgumentError, match=r"parameter 0.*strides"):
        add_one(1, 32, (t.T, 32))
    add_one(1, 32, (t.T.data_ptr(), 32))  # the base pointer, explicitly
    device.synchronize()
    assert int(t.sum().item()) == 32


def test_read_only_and_cpu_tensors_refused_by_the_core(device, backend, torch):
    cpu = torch.arange(4)
    with pytest.raises(cuabi.InvalidArgumentError, match="device_type is 1"):
        cuabi.from_dlpack(cpu.__dlpack__(), backend=backend)


# --- CuPy ---------------------------------------------------------------------


def test_cupy_both_ways_zero_copy(device, backend, cp):
    a = cp.arange(64, dtype=cp.int32)
    buf = cuabi.from_dlpack(a, backend=backend)
    assert buf.ptr == a.data.ptr and buf.shape == (64,)
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    add_one(1, 64, (buf, 64))
    device.synchronize()
    assert cp.asnumpy(a).tolist() == list(range(1, 65))
    back = cp.from_dlpack(buf)
    assert back.data.ptr == a.data.ptr
    mine = device.to_device(np.arange(8, dtype=np.float64))
    view = cp.from_dlpack(mine)
    assert view.data.ptr == mine.ptr and cp.asnumpy(view).tolist() == list(range(8))


def test_cupy_stream_orders_our_stream(device, backend, cp):
    ours = device.create_stream(non_blocking=True)
    slow = device.compile(SLOW_FILL).get_kernel("slow_fill")
    n = 1 << 16
    a = cp.zeros(n, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    producer = cp.cuda.Stream(non_blocking=True)
    with producer:
        # CuPy's own work: our kernel queued on CuPy's stream, wrapped.
        slow(1, 256, (a, n, np.float32(8.0), np.int64(CYCLES)), stream=device.wrap_stream(producer))
        buf = cuabi.from_dlpack(a, stream=ours, backend=backend)
    host = np.empty(n, dtype=np.float32)
    buf.copy_to_host(host, stream=ours)
    ours.synchronize()
    assert host[0] == 8.0 and host[-1] == 8.0


def test_strided_cupy_view_refused_as_a_pointer_argument(device, cp):
    a = cp.zeros((4, 8), dtype=cp.int32)
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    with pytest.raises(cuabi.InvalidArgumentError, match=r"parameter 0.*strides \(4, 32\)"):
        add_one(1, 32, (a.T, 32))


# --- JAX ----------------------------------------------------------------------


def test_jax_both_ways_zero_copy(device, backend, jax):
    import jax.numpy as jnp

    x = jnp.arange(16, dtype=jnp.float32)
    x.block_until_ready()
    buf = cuabi.from_dlpack(x, read_only=True, backend=backend)
    assert buf.ptr == x.unsafe_buffer_pointer()
    assert buf.to_numpy().tolist() == list(range(16))
    mine = device.to_device(np.arange(4, dtype=np.float32))
    y = jax.dlpack.from_dlpack(mine)
    assert y.unsafe_buffer_pointer() == mine.ptr
    assert np.asarray(y).tolist() == [0.0, 1.0, 2.0, 3.0]
