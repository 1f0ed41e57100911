"""On a CUDA device: launch plans on the low layer (cuabi_launch_plan_*),
Kernel.prepare, launches whose argument types change, and several threads
launching through one Kernel or one prepared launch. Skipped, with the
reason, where there is no device."""

from __future__ import annotations

import ctypes
import gc
import struct
import sys
import threading
import weakref

import numpy as np
import pytest

import cuabi
from cuabi import capi
from kernels import SAXPY

pytestmark = pytest.mark.gpu

N = 4096
THREADS = 256


@pytest.fixture
def saxpy(device):
    return device.compile(SAXPY, options=["--fmad=false"]).get_kernel("saxpy")


def _host(n: int = N):
    rng = np.random.default_rng(7)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


# --------------------------------------------------------------------------
# The low layer
# --------------------------------------------------------------------------


def test_low_layer_plan_writes_in_place_and_relaunches(backend, device, saxpy):
    """cuabi_launch_plan_create / _get_args / _launch / _release as the header
    declares them: the block is the plan's, aligned, zero-filled, and a launch
    reads it as it is at the call."""
    b, lib = backend, backend.lib
    hX, hY = _host()
    dX, dY, dOut = device.to_device(hX), device.to_device(hY), device.zeros(N, "f4")
    cfg = b.launch_config((N // THREADS, 1, 1), (THREADS, 1, 1), 0)
    with device.create_stream() as stream:
        plan = b.get(
            "cuabi_launch_plan_create",
            saxpy.handle,
            cfg,
            stream.handle,
            out="cuabi_launch_plan",
        )
        try:
            address, size = b.get_many(
                "cuabi_launch_plan_get_args", plan, outs=("void*", "size_t")
            )
            assert size == saxpy.args_size == 40
            assert address % 16 == 0
            block = b.memory_view(int(address), int(size))
            assert bytes(block) == bytes(40)
            layout = struct.Struct("<f4xQQQQ")
            for a in (2.0, -0.5, 3.0):
                layout.pack_into(block, 0, a, dX.ptr, dY.ptr, dOut.ptr, N)
                b.check(lib.cuabi_launch_plan_launch(plan))
                stream.synchronize()
                assert np.array_equal(dOut.to_numpy(), np.float32(a) * hX + hY), a
            # the block as written by the last launch's caller
            assert bytes(block) == layout.pack(3.0, dX.ptr, dY.ptr, dOut.ptr, N)
        finally:
            lib.cuabi_launch_plan_release(plan)
            lib.cuabi_launch_plan_release(plan)  # a second release is ignored
    status = lib.cuabi_launch_plan_launch(plan)
    assert status == capi.CUABI_ERROR_INVALID_HANDLE


def test_low_layer_plan_refuses_a_bad_configuration(backend, device, saxpy):
    b, lib = backend, backend.lib
    out = b.out("cuabi_launch_plan")
    zero_grid = b.launch_config((0, 1, 1), (THREADS, 1, 1), 0)
    status = lib.cuabi_launch_plan_create(saxpy.handle, zero_grid, b.NULL, b.ref(out))
    assert status == capi.CUABI_ERROR_INVALID_ARGUMENT
    cfg = b.launch_config((1, 1, 1), (1, 1, 1), 0)
    status = lib.cuabi_launch_plan_create(b.NULL, cfg, b.NULL, b.ref(out))
    assert status == capi.CUABI_ERROR_INVALID_HANDLE
    assert "cuabi_launch_plan_create" in b.string(lib.cuabi_last_error_message())


# --------------------------------------------------------------------------
# Kernel.prepare
# --------------------------------------------------------------------------


def test_prepared_launch_runs_and_checks_like_a_kernel_call(device, saxpy):
    hX, hY = _host()
    dX, dY = device.to_device(hX), device.to_device(hY)
    out1, out2 = device.zeros(N, np.float32), device.zeros(N, np.float32)
    with device.create_stream() as stream:
        launch = saxpy.prepare(N // THREADS, THREADS, stream=stream)
        assert isinstance(launch, cuabi.PreparedLaunch)
        assert launch.grid == (N // THREADS, 1, 1) and launch.block == (THREADS, 1, 1)
        # the arguments may change, in value and in type, from call to call
        cases = [
            (np.float32(2.0), out1, np.uint64(N)),
            (1.5, out2, N),
            (np.float32(-3.0), out1, N),
        ]
        for a, out, n in cases:
            launch(a, dX, dY, out, n)
            stream.synchronize()
            assert np.array_equal(out.to_numpy(), np.float32(a) * hX + hY), (a, n)
        # the overview's 4-byte n is refused, naming the parameter; nothing runs
        before = out2.to_numpy()
        with pytest.raises(cuabi.InvalidArgumentError) as info:
            launch(np.float32(9.0), dX, dY, out2, np.uint32(N))
        assert "kernel 'saxpy' parameter 4 is 8 bytes" in info.value.message
        with pytest.raises(cuabi.InvalidArgumentError, match="takes 5 parameters"):
            launch(np.float32(9.0), dX, dY, out2)
        stream.synchronize()
        assert np.array_equal(out2.to_numpy(), before)
        # a closed buffer is refused even after its type was seen
        dead = device.zeros(N, np.float32)
        launch(np.float32(1.0), dX, dY, dead, N)
        dead.close()
        with pytest.raises(cuabi.InvalidHandleError):
            launch(np.float32(1.0), dX, dY, dead, N)
        launch.close()
        assert launch.closed
        with pytest.raises(cuabi.InvalidHandleError, match="closed"):
            launch(np.float32(1.0), dX, dY, out1, N)


def test_prepare_checks_the_configuration_at_once(device, saxpy):
    with pytest.raises(cuabi.InvalidArgumentError):
        saxpy.prepare(0, THREADS)
    with pytest.raises(cuabi.InvalidArgumentError):
        saxpy.prepare(1, 1 << 20)
    with pytest.raises(TypeError, match="stream must be a cuabi.Stream"):
        saxpy.prepare(1, 1, stream=1234)
    with saxpy.prepare((1, 1), [32, 1, 1], shared_mem=0) as launch:
        assert launch.block == (32, 1, 1) and "saxpy" in repr(launch)
    assert launch.closed


def test_closing_the_stream_or_the_kernel_stops_its_launches(device, saxpy):
    dX = device.zeros(N, np.float32)
    stream = device.create_stream()
    launch = saxpy.prepare(N // THREADS, THREADS, stream=stream)
    launch(1.0, dX, dX, dX, N)
    saxpy(N // THREADS, THREADS, (1.0, dX, dX, dX, N), stream=stream)
    stream.synchronize()
    stream.close()
    with pytest.raises(cuabi.InvalidHandleError):
        launch(1.0, dX, dX, dX, N)
    with pytest.raises(cuabi.InvalidHandleError):
        saxpy(N // THREADS, THREADS, (1.0, dX, dX, dX, N), stream=stream)
    on_default = saxpy.prepare(N // THREADS, THREADS)
    on_default(1.0, dX, dX, dX, N)
    saxpy.close()
    with pytest.raises(cuabi.InvalidHandleError):
        on_default(1.0, dX, dX, dX, N)
    with pytest.raises(cuabi.InvalidHandleError):
        saxpy(N // THREADS, THREADS, (1.0, dX, dX, dX, N))
    with pytest.raises(cuabi.InvalidHandleError):
        saxpy.prepare(N // THREADS, THREADS)


def test_a_kernel_does_not_keep_its_streams_alive(device, saxpy):
    """Streams dropped after a launch are collected, and streams made after
    them (which may get their ids) launch on themselves."""
    ones = device.to_device(np.ones(N, np.float32))
    out = device.zeros(N, np.float32)
    refs = []
    for i in range(40):
        stream = device.create_stream()
        saxpy(N // THREADS, THREADS, (1.0, ones, out, out, N), stream=stream)
        stream.synchronize()
        refs.append(weakref.ref(stream))
        del stream
        gc.collect()
    assert all(r() is None for r in refs)
    assert np.array_equal(out.to_numpy(), np.full(N, 40.0, np.float32))


# --------------------------------------------------------------------------
# Argument types that change between launches
# --------------------------------------------------------------------------


def test_a_kernel_call_follows_the_types_of_each_launch(device, saxpy):
    """The packer is chosen by the arguments' types on every launch: a float
    fills `float a` as float32, an int as the int32 of the same value."""
    hX, hY = _host()
    dX, dY, dOut = device.to_device(hX), device.to_device(hY), device.zeros(N, "f4")
    grid = N // THREADS

    def run(a, n=N):
        saxpy(grid, THREADS, (a, dX, dY, dOut, n))
        return dOut.to_numpy()

    assert np.array_equal(run(2.0), np.float32(2.0) * hX + hY)
    assert np.array_equal(run(np.float32(0.5), np.uint64(N)), np.float32(0.5) * hX + hY)
    bits_of_int_2 = np.frombuffer(struct.pack("<i", 2), np.float32)[0]
    assert np.array_equal(run(2), bits_of_int_2 * hX + hY)  # int bits, not 2.0f
    with pytest.raises(cuabi.InvalidArgumentError, match="parameter 0 is 4 bytes"):
        run(np.float64(2.0))
    assert np.array_equal(run(2.0, np.int64(N)), np.float32(2.0) * hX + hY)
    # the ctypes way converts first, then packs as well
    saxpy.launch(grid, THREADS, (3, dX, dY, dOut, N), types=_SAXPY_CTYPES)
    assert np.array_equal(dOut.to_numpy(), np.float32(3.0) * hX + hY)


_SAXPY_CTYPES = (
    ctypes.c_float,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_size_t,
)


# --------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------

WORKERS = 8
LAUNCHES = 1000


@pytest.fixture
def fast_switching():
    """Threads switch as often as the interpreter allows, so that writes of
    several threads into one block would interleave if they could."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run_workers(work) -> None:
    errors = []
    barrier = threading.Barrier(WORKERS)

    def body(t):
        try:
            barrier.wait()
            work(t)
        except BaseException as exc:  # reported below, with the thread
            errors.append((t, exc))

    threads = [threading.Thread(target=body, args=(t,)) for t in range(WORKERS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def _accumulated(out, t) -> bool:
    # out = a * x + out with x = 1, LAUNCHES times with a = t + 1
    return np.array_equal(out.to_numpy(), np.full(N, LAUNCHES * (t + 1), np.float32))


def test_threads_launch_through_one_kernel(device, saxpy, fast_switching):
    """Half the threads on the default stream (one configuration for all of
    them), half on a stream each; the argument types alternate."""
    ones = device.to_device(np.ones(N, np.float32))
    outs = [device.zeros(N, np.float32) for _ in range(WORKERS)]
    streams = [device.create_stream() if t % 2 else None for t in range(WORKERS)]
    grid = N // THREADS

    def work(t):
        a, out, s = np.float32(t + 1), outs[t], streams[t]
        for i in range(LAUNCHES):
            if i % 2:
                saxpy(grid, THREADS, (a, ones, out, out, N), stream=s)
            else:
                saxpy(grid, THREADS, (float(a), ones, out, out, np.uint64(N)), stream=s)

    _run_workers(work)
    device.synchronize()
    for t in range(WORKERS):
        assert _accumulated(outs[t], t), t


def test_threads_share_one_prepared_launch(device, saxpy, fast_switching):
    ones = device.to_device(np.ones(N, np.float32))
    outs = [device.zeros(N, np.float32) for _ in range(WORKERS)]
    launch = saxpy.prepare(N // THREADS, THREADS)  # the default stream, for all

    def work(t):
        a, out = float(t + 1), outs[t]
        for _ in range(LAUNCHES):
            launch(a, ones, out, out, N)

    _run_workers(work)
    device.synchronize()
    for t in range(WORKERS):
        assert _accumulated(outs[t], t), t


def test_graph_capture_takes_the_arguments_of_each_launch(device, saxpy):
    """The driver copies a plan's block at each launch, so a captured graph
    keeps every launch's own arguments although they share one block."""
    ones = device.to_device(np.ones(N, np.float32))
    out = device.zeros(N, np.float32)
    with device.create_stream() as stream:
        launch = saxpy.prepare(N // THREADS, THREADS, stream=stream)
        launch(0.0, ones, out, out, N)  # the plan exists before the capture
        stream.synchronize()
        with stream.capture() as cap:
            for a in (1.0, 2.0, 4.0):
                launch(a, ones, out, out, N)
        assert not out.to_numpy().any()  # captured, not run
        exe = cap.graph.instantiate()
        exe.launch(stream)
        exe.launch(stream)
        stream.synchronize()
    assert np.array_equal(out.to_numpy(), np.full(N, 14.0, np.float32))
