"""The buffer cache (Device.buffer_cache, cuabi.BufferCache): allocation at
pool speed. Against the stand-in driver, in a child process per backend
(buffer_cache_fake_child.py: calls per allocation and free, reuse by size
and stream, close and collection, dead objects, views and lending, stats,
trim, stream close, limits, the out-of-memory trim and retry, captures,
threads); on a CUDA device, through each backend: a kernel writing a reused
block in stream order, a block freed on another stream, trimming back to the
pool, the out-of-memory trim and retry on real memory, captures that leave
the cache alone. The GPU tests are skipped, with the reason, without a
device."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import cuabi

# Writes k + i into p[i], spinning first so that a reader that did not wait
# in stream order would see the old data.
KERNELS = r"""
extern "C" __global__ void slow_fill(int* p, int k, size_t n, long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) { }
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = k + (int)i;
}

extern "C" __global__ void add_one(int* p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}
"""


def blocks(n: int, threads: int = 256) -> int:
    return (n + threads - 1) // threads


# ---------------------------------------------------------------------------
# Without a GPU: the stand-in driver
# ---------------------------------------------------------------------------


def test_buffer_cache_on_the_stand_in(backend, subprocess_env):
    """buffer_cache_fake_child.py against the stand-in driver, on each backend."""
    fake = os.environ.get("CUABI_FAULT_FAKE_DRIVER", "")
    if not fake or not os.path.isfile(fake):
        pytest.skip("CUABI_FAULT_FAKE_DRIVER is not set to the stand-in driver (a CMake build)")
    child = os.path.join(os.path.dirname(__file__), "buffer_cache_fake_child.py")
    env = dict(subprocess_env, CUABI_DRIVER_PATH=fake, CUABI_NVRTC_PATH=fake, CUABI_CACHE="0")
    env.pop("CUABI_BUFFER_CACHE", None)
    done = subprocess.run(
        [sys.executable, child, backend.name, fake],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "buffer cache on the stand-in: ok" in done.stdout


def test_the_environment_turns_it_off(subprocess_env):
    """CUABI_BUFFER_CACHE=0: every device's cache starts off."""
    code = (
        "import cuabi._buffer_cache as c\n"
        "import cuabi\n"
        "print(c.BufferCache(cuabi.load_backend('ctypes'), 0).enabled)\n"
    )
    env = dict(subprocess_env, CUABI_BUFFER_CACHE="0")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_max_bytes_refuses_a_negative_limit(backend):
    cache = cuabi.BufferCache(backend, 0)
    with pytest.raises(ValueError, match="max_bytes = -1 is negative"):
        cache.max_bytes = -1
    assert cache.max_bytes is None and cache.blocks == 0 and cache.held_bytes == 0


# ---------------------------------------------------------------------------
# On a device
# ---------------------------------------------------------------------------


@pytest.fixture
def kernels(device):
    return device.compile(KERNELS, name="buffer_cache.cu")


@pytest.mark.gpu
def test_a_reused_block_is_written_in_stream_order(device, kernels):
    """A block freed on s and allocated again on s: the kernel writing the
    new buffer runs after the reads of the old one queued before the free."""
    slow_fill, add_one = kernels.get_kernel("slow_fill"), kernels.get_kernel("add_one")
    cache = device.buffer_cache
    cache.trim()
    n = 1 << 16
    with device.create_stream(non_blocking=True) as s:
        host_a = device.host_alloc(n * 4)
        host_b = device.host_alloc(n * 4)
        a = device.alloc(n * 4, stream=s)
        pa = a.ptr
        slow_fill(blocks(n), 256, (a, np.int32(100), np.uint64(n), np.int64(20_000_000)), stream=s)
        a.copy_to_host(host_a.as_array(np.int32), stream=s)
        a.free(s)  # queued after the copy; the block goes to s's list
        hits = cache.hits
        b = device.alloc(n * 4, stream=s)
        assert b.ptr == pa and cache.hits == hits + 1, "the block was not reused"
        slow_fill(blocks(n), 256, (b, np.int32(7), np.uint64(n), np.int64(0)), stream=s)
        add_one(blocks(n), 256, (b, np.uint64(n)), stream=s)
        b.copy_to_host(host_b.as_array(np.int32), stream=s)
        s.synchronize()
        want = np.arange(n, dtype=np.int32)
        assert (host_a.as_array(np.int32) == want + 100).all(), "the old buffer's data was overwritten"
        assert (host_b.as_array(np.int32) == want + 8).all()
        b.free(s)
        s.synchronize()
    cache.trim()


@pytest.mark.gpu
def test_a_block_freed_on_another_stream_is_reused_there(device, kernels):
    add_one = kernels.get_kernel("add_one")
    cache = device.buffer_cache
    cache.trim()
    n = 4096
    with device.create_stream() as s, device.create_stream() as t:
        buf = device.alloc(n * 4, stream=s)
        buf.memset(0, stream=s)
        done = s.record()
        t.wait(done)  # t's later work is ordered after s's
        add_one(blocks(n), 256, (buf, np.uint64(n)), stream=t)
        got = buf.copy_to_host(np.empty(n, np.int32), stream=t)
        p = buf.ptr
        buf.free(t)  # in order on t, after the kernel and the copy
        other = device.alloc(n * 4, stream=s)
        assert other.ptr != p, "a block freed on t was handed out on s"
        other.free(s)
        again = device.alloc(n * 4, stream=t)
        assert again.ptr == p
        again.memset(9, stream=t)
        out = again.copy_to_host(np.empty(n * 4, np.uint8), stream=t)
        t.synchronize()
        assert (got == 1).all() and (out == 9).all()
        again.free(t)
        s.synchronize()
        t.synchronize()
    cache.trim()


@pytest.mark.gpu
def test_trim_gives_the_blocks_back_to_the_default_pool(device):
    cache = device.buffer_cache
    cache.trim()
    pool = device.default_memory_pool
    with device.create_stream() as s:
        s.synchronize()
        _, used_before = pool.usage
        bufs = [device.alloc(1 << 20, stream=s) for _ in range(4)]
        for buf in bufs:
            buf.free(s)
        s.synchronize()
        assert cache.blocks == 4 and cache.held_bytes == 4 << 20
        _, used = pool.usage
        assert used >= used_before + (4 << 20), "cached blocks are still the pool's, in use"
        assert cache.trim(s) == 4 << 20 and cache.blocks == 0
        s.synchronize()
        _, used = pool.usage
        assert used <= used_before
        # The default pool's own trim gives the cache's blocks back first.
        device.alloc(1 << 20, stream=s).free(s)
        assert cache.blocks == 1
        pool.trim(0)
        assert cache.blocks == 0
        s.synchronize()
    pool.close()


@pytest.mark.gpu
def test_out_of_memory_trims_the_cache_and_retries(device):
    """Cached blocks holding most of the free memory: an allocation on
    another stream that fits only once they are freed succeeds."""
    cache = device.buffer_cache
    cache.trim()
    free, _ = device.memory_info
    chunk = (free // 3) & ~((2 << 20) - 1)
    with device.create_stream() as s, device.create_stream() as t:
        try:
            held = [device.alloc(chunk, stream=s) for _ in range(2)]
        except cuabi.OutOfMemoryError as exc:  # the set-up, not the behaviour under test
            pytest.skip(f"another process took the device's free memory meanwhile: {exc}")
        for buf in held:
            buf.free(s)
        assert cache.blocks == 2
        free_now, _ = device.memory_info
        if free_now >= 2 * chunk:  # the set-up again: it no longer fails at first
            pytest.skip(f"another process freed device memory meanwhile ({free_now} bytes free)")
        big = device.alloc(2 * chunk, stream=t)  # fails at first, then fits
        assert cache.blocks == 0, "the cache was not trimmed"
        big.memset(3, stream=t)
        assert (big.copy_to_host(np.empty(4096, np.uint8), stream=t) == 3).all()
        big.free(t)
        t.synchronize()
        cache.trim()
        s.synchronize()
        t.synchronize()
    device.default_memory_pool.trim(0)


@pytest.mark.gpu
def test_a_capture_leaves_the_cache_alone(device, kernels):
    add_one = kernels.get_kernel("add_one")
    cache = device.buffer_cache
    cache.trim()
    n = 4096
    out = device.zeros(n, np.int32)
    with device.create_stream() as s:
        device.alloc(n * 4, stream=s).free(s)
        assert cache.blocks == 1
        hits = cache.hits
        with s.capture() as cap:
            tmp = device.alloc(n * 4, stream=s)  # the graph's allocation node
            tmp.memset(0, stream=s)
            add_one(blocks(n), 256, (tmp, np.uint64(n)), stream=s)
            out.copy_from(tmp, stream=s)
            tmp.free(s)  # the graph's free node
        assert cache.blocks == 1 and cache.hits == hits
        graph = cap.graph
        assert graph.node_count >= 4
        exe = graph.instantiate()
        for _ in range(2):
            exe.launch(s)
        s.synchronize()
        assert (out.copy_to_host(np.empty(n, np.int32)) == 1).all()
        # After the capture the cache works again.
        again = device.alloc(n * 4, stream=s)
        assert cache.hits == hits + 1
        again.free(s)
        exe.close()
        graph.close()
        s.synchronize()
    cache.trim()


@pytest.mark.gpu
def test_closing_a_stream_frees_its_blocks_on_a_device(device):
    cache = device.buffer_cache
    cache.trim()
    s = device.create_stream()
    t = device.create_stream()
    device.alloc(4096, stream=s).free(s)
    device.alloc(4096, stream=t).free(t)
    assert cache.blocks == 2
    s.close()  # its block is freed in order on it first
    assert cache.blocks == 1
    assert cache.by_stream() == {device.backend.handle_int(t.handle): (1, 4096)}
    t.synchronize()
    t.close()
    assert cache.blocks == 0
