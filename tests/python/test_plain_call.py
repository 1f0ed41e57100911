"""The plain kernel call, ``kernel(grid, block, args, stream=s)``, which finds
the configuration it launched last by identity and launches through that
configuration's plan with the launcher compiled for the arguments' types:
whatever the launch depends on changes (grid, block, a grid list changed in
place, shared memory, stream, the count, types or values of the arguments),
the launch is the one asked for, and closed streams and kernels raise the
core's error.

On the CPU through the stand-in driver (tests/fake/), which runs the SAXPY
kernel on the host over ``min(n, grid * block)`` elements and records a
launch on a capturing stream instead of running it, in a child process per
backend (plain_call_child.py; cuabi reads CUABI_DRIVER_PATH once per
process). On a GPU the same checks on real results (marked gpu)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import cuabi
from conftest import BACKEND_PARAMS
from kernels import SAXPY

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4096


@pytest.mark.parametrize("backend_name", BACKEND_PARAMS)
def test_plain_call_never_launches_a_stale_plan_on_the_stand_in_driver(
    backend_name, subprocess_env, tmp_path
):
    if backend_name == "cffi":
        pytest.importorskip("cffi")
    fake = os.environ.get("CUABI_FAULT_FAKE_DRIVER", "")
    if not fake or not os.path.isfile(fake):
        pytest.skip(
            "CUABI_FAULT_FAKE_DRIVER is not set or missing (the stand-in driver "
            "build/tests/fault/libcuabi_fault_fake_cuda.so comes with a CMake build)"
        )
    env = dict(
        subprocess_env,
        CUABI_DRIVER_PATH=os.path.abspath(fake),
        CUABI_NVRTC_PATH=os.path.abspath(fake),
        CUABI_BACKEND=backend_name,
        CUABI_CACHE_DIR=str(tmp_path / "cache"),
    )
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "plain_call_child.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"plain call: 14 checks passed ({backend_name})" in done.stdout, done.stdout


# --------------------------------------------------------------------------
# On a GPU
# --------------------------------------------------------------------------


@pytest.fixture
def saxpy(device):
    return device.compile(SAXPY, options=["--fmad=false"]).get_kernel("saxpy")


def _inputs(device):
    rng = np.random.default_rng(11)
    hx, hy = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    return hx, hy, device.to_device(hx), device.to_device(hy), device.zeros(N, np.float32)


def _want(a, hx, hy, count):
    want = np.zeros(N, np.float32)
    want[:count] = (np.float32(a) * hx + hy)[:count]
    return want


@pytest.mark.gpu
def test_plain_call_follows_each_changed_configuration_on_the_gpu(device, saxpy):
    """The same grid or block object with the other one changed, a grid list
    changed in place, the shared memory: each launch covers grid * block
    threads, no more, no fewer (the kernel writes only below n = N)."""
    hx, hy, dX, dY, dOut = _inputs(device)
    n = np.uint64(N)
    with device.create_stream() as s:
        grid = 4
        for block in (32, 64, (128, 1, 1), 256):
            dOut.memset(0)
            saxpy(grid, block, (np.float32(2.0), dX, dY, dOut, n), stream=s)
            s.synchronize()
            threads = block if isinstance(block, int) else block[0]
            assert np.array_equal(dOut.to_numpy(), _want(2.0, hx, hy, grid * threads)), block
        block = 128
        for grid in (1, 3, (2, 1, 1), 32):
            dOut.memset(0)
            saxpy(grid, block, (np.float32(3.0), dX, dY, dOut, n), stream=s)
            s.synchronize()
            blocks = grid if isinstance(grid, int) else grid[0]
            assert np.array_equal(dOut.to_numpy(), _want(3.0, hx, hy, blocks * block)), grid
        grid_list = [1]
        for blocks in (1, 5, 2):
            grid_list[0] = blocks
            dOut.memset(0)
            saxpy(grid_list, block, (np.float32(-1.0), dX, dY, dOut, n), stream=s)
            s.synchronize()
            assert np.array_equal(dOut.to_numpy(), _want(-1.0, hx, hy, blocks * block)), blocks
        for shared in (0, 1024, 0):
            dOut.memset(0)
            saxpy(2, block, (np.float32(0.5), dX, dY, dOut, n), stream=s, shared_mem=shared)
            s.synchronize()
            assert np.array_equal(dOut.to_numpy(), _want(0.5, hx, hy, 2 * block)), shared
        with pytest.raises(cuabi.InvalidArgumentError, match="dynamic shared memory"):
            saxpy(2, block, (np.float32(0.5), dX, dY, dOut, n), stream=s, shared_mem=1 << 30)


@pytest.mark.gpu
def test_plain_call_follows_the_arguments_of_each_launch_on_the_gpu(device, saxpy):
    """Values, types and count change between calls with one configuration:
    each launch computes with its own arguments; a wrong count raises."""
    hx, hy, dX, dY, dOut = _inputs(device)
    other = device.zeros(N, np.float32)
    grid, block = N // 256, 256
    with device.create_stream() as s:
        cases = [
            ((np.float32(2.0), dX, dY, dOut, np.uint64(N)), dOut, 2.0),
            ((1.5, dX, dY, dOut, N), dOut, 1.5),
            ((np.float32(4.0), dX.ptr, dY.ptr, other.ptr, N), other, 4.0),
            ((np.float32(-3.0), dX, dY, dOut, np.uint64(N)), dOut, -3.0),
        ]
        for args, target, a in cases:
            target.memset(0)
            saxpy(grid, block, args, stream=s)
            s.synchronize()
            assert np.array_equal(target.to_numpy(), _want(a, hx, hy, N)), args
        with pytest.raises(cuabi.InvalidArgumentError):
            saxpy(grid, block, (np.float32(2.0), dX, dY, dOut), stream=s)


@pytest.mark.gpu
def test_plain_call_launches_on_the_stream_given_on_the_gpu(device, saxpy):
    """One configuration on two streams: a launch on a capturing stream is
    captured (it runs when the graph runs), not launched on the other."""
    hx, hy, dX, dY, dOut = _inputs(device)
    grid, block = N // 256, 256
    args = (np.float32(2.0), dX, dY, dOut, np.uint64(N))
    with device.create_stream() as s1, device.create_stream() as s2:
        saxpy(grid, block, args, stream=s2)  # s2's plan exists before the capture
        s2.synchronize()
        assert np.array_equal(dOut.to_numpy(), _want(2.0, hx, hy, N))
        dOut.memset(0)
        saxpy(grid, block, args, stream=s1)  # the call remembers s1
        s1.synchronize()
        assert np.array_equal(dOut.to_numpy(), _want(2.0, hx, hy, N))
        dOut.memset(0)
        device.synchronize()
        s2.begin_capture("relaxed")
        saxpy(grid, block, (np.float32(5.0), dX, dY, dOut, np.uint64(N)), stream=s2)
        graph = s2.end_capture()
        device.synchronize()
        assert not dOut.to_numpy().any()  # captured, not run
        exe = graph.instantiate()
        exe.launch(s1)
        s1.synchronize()
        assert np.array_equal(dOut.to_numpy(), _want(5.0, hx, hy, N))
        s2.close()
        with pytest.raises(cuabi.InvalidHandleError):
            saxpy(grid, block, args, stream=s2)


@pytest.mark.gpu
def test_plain_call_and_prepared_launch_agree_across_threads_on_the_gpu(device, saxpy):
    """Threads launching one configuration on one stream, each into its own
    output with its own ``a``, through the plain call and a prepared
    launch: every thread's output is its own."""
    hx, hy, dX, dY, _ = _inputs(device)
    grid, block = N // 256, 256
    failures = []
    with device.create_stream() as s:
        prepared = saxpy.prepare(grid, block, stream=s)
        outs = [device.zeros(N, np.float32) for _ in range(8)]

        def worker(i):
            a = np.float32(i + 1)
            try:
                for _ in range(50):
                    if i % 2:
                        prepared(a, dX, dY, outs[i], np.uint64(N))
                    else:
                        saxpy(grid, block, (a, dX, dY, outs[i], np.uint64(N)), stream=s)
            except Exception as exc:  # reported below
                failures.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        s.synchronize()
    assert not failures, failures[0]
    for i, out in enumerate(outs):
        assert np.array_equal(out.to_numpy(), _want(i + 1, hx, hy, N)), i
