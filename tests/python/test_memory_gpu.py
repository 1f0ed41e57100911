"""On a CUDA device, through each backend: stream-ordered allocation and
memory pools, allocation inside a stream capture, managed memory, IPC with
a child process (a buffer, an event, a pool's allocation through an
exported file descriptor), peer queries and copy paths, pitched memory and
2D/3D copies, fills, arrays (3D, layered, cubemap, with channels), texture
objects over arrays and over linear and pitched memory, surface objects,
and texture and surface objects in every launch form. Skipped, with the
reason, where there is no device."""

from __future__ import annotations

import ctypes
import gc
import os
import struct
import subprocess
import sys
import textwrap
import weakref
from typing import Any, List

import numpy as np
import pytest

import cuabi

pytestmark = pytest.mark.gpu

# Every kernel the tests below launch; NVRTC knows the texture and surface
# types and functions without any #include.
MEMORY_KERNELS = r"""
extern "C" __global__ void add_one(int* p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

extern "C" __global__ void scale(float* p, float k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] *= k;
}

// Writes through a temporary the graph allocates and frees.
extern "C" __global__ void through_tmp(int* tmp, int* out, int k, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        tmp[i] = (int)i * k;
        out[i] = tmp[i] + 1;
    }
}

// Spins for `cycles` clock cycles first, so that a waiter that did not wait
// would see the old data.
extern "C" __global__ void slow_add_one(int* p, size_t n, long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) { }
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

// Reads a pitched buffer row by row: out[y][x] = 2 * row(y)[x].
extern "C" __global__ void rows_by_pitch(const char* base, size_t pitch, int width,
                                         int height, float* out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < width && y < height) {
        const float* row = (const float*)(base + (size_t)y * pitch);
        out[y * width + x] = 2.0f * row[x];
    }
}

extern "C" __global__ void tex2d_at(cudaTextureObject_t t, const float* uv, float* out, int n)
{
    int i = threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, uv[2 * i], uv[2 * i + 1]);
}

extern "C" __global__ void tex1d_fetch(cudaTextureObject_t t, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * tex1Dfetch<float>(t, i);
}

extern "C" __global__ void tex2d_elements(cudaTextureObject_t t, float* out, int width,
                                          int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < width && y < height) out[y * width + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

extern "C" __global__ void tex3d_elements(cudaTextureObject_t t, float* out, int width,
                                          int height)
{
    int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
    out[(z * height + y) * width + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

extern "C" __global__ void tex_layered(cudaTextureObject_t t, float* out, int width,
                                       int height)
{
    int x = threadIdx.x, y = threadIdx.y, layer = blockIdx.x;
    out[(layer * height + y) * width + x] =
        tex2DLayered<float>(t, x + 0.5f, y + 0.5f, layer);
}

// Reads a cubemap at the centre of each face, in CUDA's face order +X, -X,
// +Y, -Y, +Z, -Z: the direction (1, 0, 0) for +X and so on.
extern "C" __global__ void cube_centres(cudaTextureObject_t t, float* out)
{
    int face = threadIdx.x;
    if (face < 6) {
        float sign = face % 2 ? -1.0f : 1.0f;
        int axis = face / 2;
        out[face] = texCubemap<float>(t, axis == 0 ? sign : 0.0f, axis == 1 ? sign : 0.0f,
                                      axis == 2 ? sign : 0.0f);
    }
}

extern "C" __global__ void surf_write(cudaSurfaceObject_t s, int width, int height)
{
    int x = threadIdx.x, y = threadIdx.y;
    if (x < width && y < height) surf2Dwrite((float)(y * 100 + x), s, x * (int)sizeof(float), y);
}

extern "C" __global__ void surf_read(cudaSurfaceObject_t s, float* out, int width, int height)
{
    int x = threadIdx.x, y = threadIdx.y;
    if (x < width && y < height) {
        float v;
        surf2Dread(&v, s, x * (int)sizeof(float), y);
        out[y * width + x] = v + 0.5f;
    }
}
"""


@pytest.fixture
def mod(device):
    return device.compile(MEMORY_KERNELS, name="memory.cu")


def blocks(n: int, threads: int = 256) -> int:
    return (n + threads - 1) // threads


# ---------------------------------------------------------------------------
# Stream-ordered allocation and memory pools
# ---------------------------------------------------------------------------


def test_stream_ordered_alloc_kernel_free_on_a_user_stream_and_pool(device, mod):
    add_one = mod.get_kernel("add_one")
    pool = cuabi.MemoryPool(device)
    assert not pool.is_default and pool.device is device
    assert pool.release_threshold == 0
    pool.release_threshold = 1 << 30  # keep what is freed reserved
    assert pool.release_threshold == 1 << 30
    n = 1 << 18
    x = np.arange(n, dtype=np.int32)
    got = np.zeros(n, np.int32)
    with device.create_stream() as s:
        buf = device.alloc(n * 4, stream=s, pool=pool)
        assert buf.kind == cuabi.BufferKind.STREAM_ORDERED
        assert buf.pool is pool and buf.nbytes == n * 4 and buf.pitch == 0
        buf.copy_from_host(x, stream=s)
        add_one(blocks(n), 256, (buf, np.uint64(n)), stream=s)
        buf.copy_to_host(got, stream=s)
        reserved, used = pool.usage
        assert used >= n * 4 and reserved >= used
        buf.free(s)
        assert buf.closed
        s.synchronize()
    assert np.array_equal(got, x + 1)
    reserved, used = pool.usage
    assert used == 0
    assert reserved >= n * 4  # the threshold kept it
    pool.trim(0)
    assert pool.usage == (0, 0)

    # pool.alloc is the same; close() frees in order on the allocation stream
    with device.create_stream() as s:
        b2 = pool.alloc(4096, stream=s, dtype=np.float32)
        assert b2.shape == (1024,) and b2.kind == cuabi.BufferKind.STREAM_ORDERED
        assert pool.usage[1] >= 4096
        b2.close()
        s.synchronize()
    assert pool.usage[1] == 0
    pool.close()


def test_the_default_pool(device, mod):
    pool = device.default_memory_pool
    assert pool.is_default and "default" in repr(pool)
    with device.create_stream() as s:
        buf = device.alloc(1 << 20, stream=s)  # no pool: the default one
        assert buf.kind == cuabi.BufferKind.STREAM_ORDERED and buf.pool is None
        assert pool.usage[1] >= 1 << 20
        buf.memset(7, stream=s)
        got = buf.copy_to_host(np.empty(1 << 20, np.uint8), stream=s)
        buf.free(s)
        s.synchronize()
    assert (got == 7).all()
    pool.close()  # leaves the pool itself alone
    again = device.default_memory_pool
    with device.create_stream() as s:
        device.alloc(64, stream=s).free(s)
        s.synchronize()
    again.close()


def test_a_pool_with_a_limit(device):
    pool = cuabi.MemoryPool(device, max_bytes=32 << 20)
    with device.create_stream() as s:
        with pytest.raises(cuabi.OutOfMemoryError):
            device.alloc(256 << 20, stream=s, pool=pool)
        ok = device.alloc(1 << 20, stream=s, pool=pool)
        ok.free(s)
        s.synchronize()
    pool.close()


def test_alloc_on_the_default_stream_with_a_pool(device):
    with cuabi.MemoryPool(device) as pool:
        buf = device.alloc(4096, pool=pool)  # stream None: the default stream
        assert buf.kind == cuabi.BufferKind.STREAM_ORDERED
        buf.memset(1)
        assert (buf.copy_to_host(np.empty(4096, np.uint8)) == 1).all()
        buf.free()
        device.synchronize()


class _CountingLib:
    """Forwards to a backend's lib and counts cuabi_buffer_release calls."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self.releases: List[Any] = []

    def cuabi_buffer_release(self, handle: Any) -> None:
        self.releases.append(handle)
        self._lib.cuabi_buffer_release(handle)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lib, name)


class _CountingBackend:
    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.lib = _CountingLib(backend.lib)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def test_a_freed_buffer_is_dead_and_its_finalizer_does_nothing(device):
    with device.create_stream() as s:
        buf = device.alloc(4096, stream=s)
        counting = _CountingBackend(buf.backend)
        buf._b = counting  # every later call of this object goes through it
        buf.free(s)
        assert buf.closed
        with pytest.raises(cuabi.InvalidHandleError, match="the buffer was closed"):
            buf.ptr
        with pytest.raises(cuabi.InvalidHandleError, match="is not a live cuabi_buffer"):
            buf.free(s)  # the core released the handle
        with pytest.raises(cuabi.InvalidHandleError, match="is not a live cuabi_buffer"):
            buf.memset(0)
        buf.close()
        ref = weakref.ref(buf)
        del buf
        gc.collect()
        assert ref() is None
        assert counting.lib.releases == []  # neither close() nor the finalizer released it
        # the process goes on: a new buffer works
        other = device.alloc(4096, stream=s)
        other.memset(3, stream=s)
        assert (other.copy_to_host(np.empty(4096, np.uint8), stream=s) == 3).all()
        other.free(s)
        s.synchronize()


def test_free_refused_for_other_kinds_and_the_buffer_lives_on(device):
    buf = device.alloc(256)
    assert buf.kind == cuabi.BufferKind.DEVICE
    with pytest.raises(cuabi.InvalidArgumentError, match="cuabi_buffer_free_async"):
        buf.free()
    assert not buf.closed
    buf.memset(9)
    assert (buf.copy_to_host(np.empty(256, np.uint8)) == 9).all()
    buf.close()


def test_free_waits_for_no_view(device):
    with device.create_stream() as s:
        buf = device.alloc(1024, stream=s)
        view = buf.as_array(np.float32)
        with pytest.raises(cuabi.InvalidArgumentError, match="live view"):
            buf.free(s)
        del view
        buf.free(s)
        s.synchronize()


def test_capture_with_alloc_and_free_nodes_replayed_twice(device, mod):
    through_tmp = mod.get_kernel("through_tmp")
    n = 4096
    out = device.zeros(n, np.int32)
    with device.create_stream() as s:
        with s.capture() as cap:
            tmp = device.alloc(n * 4, stream=s)  # a graph allocation node
            through_tmp(blocks(n), 256, (tmp, out, np.int32(3), np.uint64(n)), stream=s)
            tmp.free(s)  # its free node
        assert tmp.closed
        graph = cap.graph
        assert graph.node_count == 3  # alloc, kernel, free
        assert graph.kernel_node_count == 1
        exe = graph.instantiate()
        want = np.arange(n, dtype=np.int32) * 3 + 1
        for _ in range(2):
            out.memset(0, stream=s)
            exe.launch(s)
            got = out.copy_to_host(stream=s)
            s.synchronize()
            assert np.array_equal(got, want)
        exe.close()
        graph.close()


# ---------------------------------------------------------------------------
# Managed memory
# ---------------------------------------------------------------------------


def test_managed_host_view_kernel_and_back(device, mod):
    scale = mod.get_kernel("scale")
    n = 1 << 16
    buf = device.alloc_managed(n * 4)
    assert buf.kind == cuabi.BufferKind.MANAGED and buf.pitch == 0
    host = buf.host_array(np.float32)
    assert host.shape == (n,) and host.dtype == np.float32
    assert host.ctypes.data == buf.ptr  # one address, host and device
    host[:] = np.arange(n, dtype=np.float32)  # no kernel runs: the host may write
    scale(blocks(n), 256, (buf, np.float32(2.0), np.uint64(n)))
    device.synchronize()  # the kernel is known to have finished
    assert np.array_equal(host, np.arange(n, dtype=np.float32) * 2)

    with device.create_stream() as s:
        buf.prefetch(device, stream=s)
        scale(blocks(n), 256, (buf, np.float32(0.5), np.uint64(n)), stream=s)
        buf.prefetch("host", stream=s)
        buf.prefetch(cuabi.LOCATION_HOST, stream=s, offset=4096, nbytes=4096)
        s.synchronize()
    assert np.array_equal(host, np.arange(n, dtype=np.float32))
    buf.prefetch(device.ordinal)  # the default stream
    device.synchronize()

    for advice, location in [
        ("read_mostly", None),
        ("unset_read_mostly", None),
        ("preferred_location", device),
        ("unset_preferred_location", device),
        ("preferred_location", "host"),
        ("unset_preferred_location", "host"),
        (cuabi.MemoryAdvice.SET_ACCESSED_BY, device),
        (cuabi.MemoryAdvice.UNSET_ACCESSED_BY, device),
    ]:
        buf.advise(advice, location)
        scale(blocks(n), 256, (buf, np.float32(3.0), np.uint64(n)))
        device.synchronize()
        host /= 3.0
        assert np.array_equal(host, np.arange(n, dtype=np.float32)), advice
    buf.advise("read_mostly", offset=0, nbytes=8192)


def test_managed_host_view_keeps_the_buffer_alive(device):
    buf = device.alloc_managed(64 * 4, dtype=np.int32)
    assert buf.shape == (64,)
    host = buf.host_array()  # the buffer's dtype and shape
    assert host.dtype == np.int32 and host.shape == (64,)
    host[:] = 5
    ref = weakref.ref(buf)
    buf.close()  # waits for the view
    assert not buf.closed
    del buf
    gc.collect()
    assert ref() is not None
    assert (host == 5).all()
    assert np.array_equal(ref().copy_to_host(), np.full(64, 5, np.int32))
    del host
    gc.collect()
    assert ref() is None


def test_managed_attached_to_the_host(device):
    buf = device.alloc_managed(4096, attach_host=True)
    assert buf.kind == cuabi.BufferKind.MANAGED
    h = buf.host_array(np.uint16, (2, 1024))
    h[0] = 7
    h[1] = np.arange(1024)
    again = buf.host_array(np.uint16, (2, 1024))
    assert (again[0] == 7).all() and np.array_equal(again[1], np.arange(1024))


# ---------------------------------------------------------------------------
# IPC: a child process opens what this one exports
# ---------------------------------------------------------------------------

CHILD = textwrap.dedent(
    r"""
    import sys
    import numpy as np
    import cuabi

    mode = sys.argv[1]
    dev = cuabi.Device(0)
    if mode == "buffer":
        buf_handle, ev_handle, n = bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3]), int(sys.argv[4])
        ev = cuabi.Event.open_ipc(dev, ev_handle)
        buf = cuabi.DeviceBuffer.open_ipc(dev, buf_handle)
        assert buf.kind == cuabi.BufferKind.IPC, buf.kind
        assert buf.nbytes == n * 4, buf.nbytes
        s = dev.create_stream()
        s.wait(ev)  # the parent recorded it after its (slow) kernel
        got = np.empty(n, np.int32)
        buf.copy_to_host(got, stream=s)
        s.synchronize()
        want = np.arange(n, dtype=np.int32) + 1
        if not np.array_equal(got, want):
            print("child: wrong data", got[:8], file=sys.stderr)
            sys.exit(3)
        buf.copy_from_host(got * 10)
        buf.close()
        ev.close()
    elif mode == "pool":
        fd, handle, n = int(sys.argv[2]), bytes.fromhex(sys.argv[3]), int(sys.argv[4])
        pool = cuabi.MemoryPool.import_fd(dev, fd)
        buf = cuabi.DeviceBuffer.open_ipc(dev, handle, pool=pool)
        assert buf.kind == cuabi.BufferKind.IPC, buf.kind
        assert buf.nbytes == n * 4, buf.nbytes
        got = buf.copy_to_host(np.empty(n, np.int32))
        if not np.array_equal(got, np.arange(n, dtype=np.int32) * 7):
            print("child: wrong data", got[:8], file=sys.stderr)
            sys.exit(3)
        buf.copy_from_host(-got)
        dev.synchronize()
        buf.close()
        pool.close()
    elif mode == "closed":
        try:
            cuabi.DeviceBuffer.open_ipc(dev, bytes.fromhex(sys.argv[2]))
        except cuabi.CudaError as exc:
            print("refused:", type(exc).__name__, exc)
            sys.exit(4)
        sys.exit(5)
    print("child: ok")
    """
)


def run_child(env: dict, backend: Any, *args: str, pass_fds=()) -> subprocess.CompletedProcess:
    env = dict(env)
    env["CUABI_BACKEND"] = backend.name
    return subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        pass_fds=pass_fds,
    )


def test_ipc_buffer_and_event_to_a_child_process(device, mod, subprocess_env):
    slow = mod.get_kernel("slow_add_one")
    n = 4096
    buf = device.to_device(np.arange(n, dtype=np.int32))
    handle = buf.ipc_handle()
    assert isinstance(handle, bytes) and len(handle) == cuabi.capi.CUABI_IPC_HANDLE_SIZE == 128
    assert buf.ipc_handle() == handle  # the same memory, the same handle
    ev = cuabi.Event(device, interprocess=True)
    ev_handle = ev.ipc_handle()
    assert len(ev_handle) == 128 and ev_handle != handle
    with device.create_stream() as s:
        # about a second of spinning, then the data the child must see
        slow(blocks(n), 256, (buf, np.uint64(n), np.int64(2_000_000_000)), stream=s)
        ev.record(s)
        proc = run_child(subprocess_env, device.backend, "buffer", handle.hex(), ev_handle.hex(), str(n))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "child: ok" in proc.stdout
        s.synchronize()
    got = buf.copy_to_host()
    assert np.array_equal(got, (np.arange(n, dtype=np.int32) + 1) * 10)  # the child's writes
    ev.close()
    buf.close()


def test_ipc_pool_allocation_through_an_exported_fd(device, subprocess_env):
    try:
        pool = cuabi.MemoryPool(device, ipc=True)
    except cuabi.NotSupportedError as exc:  # the driver cannot share pools here
        pytest.skip(f"pools cannot be shared on this system: {exc.message}")
    n = 8192
    with device.create_stream() as s:
        buf = device.alloc(n * 4, stream=s, pool=pool)
        buf.copy_from_host(np.arange(n, dtype=np.int32) * 7, stream=s)
        s.synchronize()
        handle = buf.ipc_handle()
        assert len(handle) == 128
        fd = pool.export_fd()
        try:
            assert fd >= 0
            proc = run_child(
                subprocess_env, device.backend, "pool", str(fd), handle.hex(), str(n),
                pass_fds=(fd,),
            )
        finally:
            os.close(fd)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        got = buf.copy_to_host(np.empty(n, np.int32), stream=s)
        s.synchronize()
        assert np.array_equal(got, -np.arange(n, dtype=np.int32) * 7)
        buf.free(s)
        s.synchronize()
    pool.close()


def test_ipc_handle_of_a_closed_buffer_is_refused_in_the_child(device, subprocess_env):
    # 64 MiB: a small allocation shares its block with others, which the
    # driver keeps while any of them lives.
    buf = device.alloc(64 << 20)
    handle = buf.ipc_handle()
    buf.close()
    proc = run_child(subprocess_env, device.backend, "closed", handle.hex())
    assert proc.returncode == 4, proc.stdout + proc.stderr  # a cuabi.CudaError, not a crash
    assert "refused:" in proc.stdout


def test_ipc_handles_refused_in_this_process(device):
    buf = device.alloc(4096)
    handle = buf.ipc_handle()
    ev = device.create_event(interprocess=True)
    ev_handle = ev.ipc_handle()
    IA = cuabi.InvalidArgumentError
    with pytest.raises(IA, match="cuabi_buffer_open_ipc"):
        cuabi.DeviceBuffer.open_ipc(device, handle)  # this very process
    with pytest.raises(IA, match="cuabi_event_open_ipc"):
        cuabi.Event.open_ipc(device, ev_handle)
    garbage = bytes((i * 37 + 11) & 0xFF for i in range(128))
    with pytest.raises(IA, match="cuabi_buffer_open_ipc"):
        cuabi.DeviceBuffer.open_ipc(device, garbage)
    with pytest.raises(IA, match="cuabi_buffer_open_ipc"):
        cuabi.DeviceBuffer.open_ipc(device, handle[:100])  # the wrong size
    damaged = bytearray(handle)
    damaged[40] ^= 0x10
    with pytest.raises(IA, match="cuabi_buffer_open_ipc"):
        cuabi.DeviceBuffer.open_ipc(device, bytes(damaged))  # a bad checksum
    with pytest.raises(IA, match="cuabi_buffer_open_ipc"):
        cuabi.DeviceBuffer.open_ipc(device, ev_handle)  # an event's handle
    with pytest.raises(IA, match="cuabi_event_open_ipc"):
        cuabi.Event.open_ipc(device, handle)  # a buffer's handle
    with pytest.raises(TypeError, match="bytes.fromhex"):
        cuabi.DeviceBuffer.open_ipc(device, handle.hex())
    ev.close()
    buf.close()


# ---------------------------------------------------------------------------
# Peers and copy paths
# ---------------------------------------------------------------------------


def test_peer_queries_of_a_device_and_itself(device):
    same = cuabi.Device(device.ordinal, backend=device.backend)  # another handle, same GPU
    for other in (device, same):
        assert device.can_access_peer(other) is False
        with pytest.raises(cuabi.InvalidArgumentError, match="cuabi_device_enable_peer_access"):
            device.enable_peer_access(other)
        with pytest.raises(cuabi.InvalidArgumentError, match="cuabi_device_get_peer_attribute"):
            device.peer_attribute(other, "performance_rank")
    x = np.arange(1000, dtype=np.float32)
    a = device.to_device(x)
    b = same.zeros(1000, np.float32)
    assert b.copy_path(a) is cuabi.CopyPath.SAME_DEVICE
    assert a.copy_path(b.as_array(np.float32)) is cuabi.CopyPath.SAME_DEVICE
    b.copy_from(a)
    assert np.array_equal(b.copy_to_host(), x)
    same.close()


def test_peer_access_and_copies_between_two_devices(backend):
    if cuabi.device_count(backend) < 2:
        pytest.skip("needs two CUDA devices")
    d0, d1 = cuabi.Device(0, backend=backend), cuabi.Device(1, backend=backend)
    can = d0.can_access_peer(d1)
    assert d0.peer_attribute(d1, "access_supported") == int(can)
    x = np.arange(1 << 16, dtype=np.int32)
    a = d0.to_device(x)
    b = d1.zeros(x.size, np.int32)
    assert b.copy_path(a) is cuabi.CopyPath.THROUGH_HOST
    b.copy_from(a)
    assert np.array_equal(b.copy_to_host(), x)
    if can:
        d0.enable_peer_access(d1)
        d1.enable_peer_access(d0)
        d1.enable_peer_access(d0)  # enabling what is enabled succeeds
        try:
            assert b.copy_path(a) is cuabi.CopyPath.PEER
            b.memset(0)
            b.copy_from(a)
            assert np.array_equal(b.copy_to_host(), x)
        finally:
            d0.disable_peer_access(d1)
            d1.disable_peer_access(d0)
        d1.disable_peer_access(d0)  # disabling what is not enabled succeeds
        assert b.copy_path(a) is cuabi.CopyPath.THROUGH_HOST
    else:
        with pytest.raises(cuabi.CudaError, match="cuabi_device_enable_peer_access"):
            d0.enable_peer_access(d1)


# ---------------------------------------------------------------------------
# Pitched memory, fills, 2D and 3D copies
# ---------------------------------------------------------------------------


def test_pitched_round_trip_and_a_kernel_reading_rows_by_pitch(device, mod):
    rows_by_pitch = mod.get_kernel("rows_by_pitch")
    h, w = 33, 100  # floats
    buf = device.alloc_pitched(w * 4, h, element_size=4)
    assert buf.kind == cuabi.BufferKind.PITCHED
    pitch = buf.pitch
    assert pitch >= w * 4 and buf.nbytes == pitch * h
    big = np.random.default_rng(5).random((h, 150), dtype=np.float32)
    host = big[:, :w]  # rows 600 bytes apart
    assert host.strides[0] != pitch
    cuabi.copy_3d(buf, host)  # the box: the host array's (w * 4, h, 1)
    out = device.zeros((h, w), np.float32)
    rows_by_pitch(
        (blocks(w, 32), h), 32, (buf, np.uint64(pitch), np.int32(w), np.int32(h), out)
    )
    assert np.array_equal(out.copy_to_host(), host * 2)
    back_big = np.zeros((h, 160), np.float32)
    cuabi.copy_3d(back_big[:, :w], buf)
    assert np.array_equal(back_big[:, :w], host)
    assert not back_big[:, w:].any()  # nothing past the box
    # asynchronous, and a sub-box: rows 3..9, floats 10..29
    with device.create_stream() as s:
        part = np.zeros((7, 20), np.float32)
        cuabi.copy_3d(part, buf, (20 * 4, 7), src_origin=(10 * 4, 3), stream=s)
        s.synchronize()
    assert np.array_equal(part, host[3:10, 10:30])
    # device to device: the pitched rows into a packed buffer
    packed = device.zeros((h, w), np.float32)
    cuabi.copy_3d(packed, buf)  # the box: the pitched buffer's rows
    assert np.array_equal(packed.copy_to_host(), host)


def test_fills(device):
    buf = device.alloc(256)
    u16 = np.empty(128, np.uint16)
    buf.fill(0xBEEF, np.uint16)
    assert (buf.copy_to_host(u16) == 0xBEEF).all()
    buf.fill(0x1234, np.uint16, offset=4, count=3)
    want = np.full(128, 0xBEEF, np.uint16)
    want[2:5] = 0x1234
    assert np.array_equal(buf.copy_to_host(u16), want)
    with device.create_stream() as s:
        buf.fill(0xDEADBEEF, np.uint32, stream=s)
        u32 = buf.copy_to_host(np.empty(64, np.uint32), stream=s)
        s.synchronize()
    assert (u32 == 0xDEADBEEF).all()
    buf.fill(1.5, np.float32, offset=8, count=2)
    f32 = buf.copy_to_host(np.empty(64, np.float32))
    assert (f32[2:4] == 1.5).all() and (f32[4:].view(np.uint32) == 0xDEADBEEF).all()
    buf.fill(-2, np.int16)
    assert (buf.copy_to_host(np.empty(128, np.int16)) == -2).all()
    buf.fill(0xAB, 1, offset=1, count=1)
    raw = buf.copy_to_host(np.empty(256, np.uint8))
    assert raw[1] == 0xAB and raw[0] == 0xFE and raw[2] == 0xFE
    typed = device.zeros(32, np.uint16)
    typed.fill(513)  # the buffer's own dtype
    assert (typed.copy_to_host() == 513).all()


def test_3d_copy_host_to_array_to_host(device, mod):
    d, h, w = 3, 4, 5
    src = np.arange(d * h * w, dtype=np.float32).reshape(d, h, w)
    arr = cuabi.Array(device, (d, h, w), np.float32)
    assert arr.extent == (w, h, d) and arr.host_shape == (d, h, w)
    desc = arr.describe()
    assert (desc["width"], desc["height"], desc["depth"]) == (w, h, d)
    assert desc["format"] == cuabi.ArrayFormat.F32 and desc["channels"] == 1
    assert arr.cu_array != 0
    arr.copy_from(src)
    assert np.array_equal(arr.copy_to(), src)
    # into a strided view of a larger array
    big = np.zeros((d, h + 2, w + 3), np.float32)
    arr.copy_to(big[:, 1 : h + 1, 2 : w + 2])
    assert np.array_equal(big[:, 1 : h + 1, 2 : w + 2], src)
    big[:, 1 : h + 1, 2 : w + 2] = 0
    assert not big.any()
    # a sub-box written at (x=1, y=1, z=1)
    cuabi.copy_3d(arr, -np.ones((2, 2, 2), np.float32), dst_origin=(1 * 4, 1, 1))
    want = src.copy()
    want[1:3, 1:3, 1:3] = -1
    with device.create_stream() as s:
        out = np.empty_like(src)
        arr.copy_to(out, stream=s)
        s.synchronize()
    assert np.array_equal(out, want)
    # what a kernel reads through a 3D texture
    tex = cuabi.Texture(arr)
    dev_out = device.zeros((d, h, w), np.float32)
    mod.get_kernel("tex3d_elements")(d, (w, h), (tex, dev_out, np.int32(w), np.int32(h)))
    assert np.array_equal(dev_out.copy_to_host(), want)
    # device buffer to array and back
    lin = device.to_device(src)
    arr.copy_from(lin)
    again = device.zeros((d, h, w), np.float32)
    arr.copy_to(again)
    assert np.array_equal(again.copy_to_host(), src)
    # array to array
    other = cuabi.Array(device, (d, h, w), np.float32)
    other.copy_from(arr)
    assert np.array_equal(other.copy_to(), src)


def test_arrays_with_channels_and_1d(device):
    h, w = 6, 7
    rgba = np.random.default_rng(2).integers(0, 255, (h, w, 4), dtype=np.uint8)
    arr = cuabi.Array(device, (h, w), np.uint8, channels=4)
    assert arr.host_shape == (h, w, 4) and arr.element_size == 4
    arr.copy_from(rgba)
    assert np.array_equal(arr.copy_to(), rgba)
    one = cuabi.Array(device, 100, "int16")
    assert one.extent == (100, 0, 0) and one.shape == (100,)
    assert one.element_size == 2
    assert cuabi.Array(device, 8, np.float16, channels=2).element_size == 4
    assert cuabi.Array(device, 8, np.float32, channels=4).element_size == 16
    closed = cuabi.Array(device, 8, np.float32, channels=2)
    closed.close()
    assert closed.element_size == 8  # read when made, as its shape
    x = np.arange(-50, 50, dtype=np.int16)
    one.copy_from(x)
    assert np.array_equal(one.copy_to(), x)
    half = cuabi.Array(device, (2, 8), np.float16, channels=2)
    hx = np.arange(32, dtype=np.float16).reshape(2, 8, 2)
    half.copy_from(hx)
    assert np.array_equal(half.copy_to(), hx)


def test_layered_array(device, mod):
    layers, h, w = 3, 4, 5
    src = np.arange(layers * h * w, dtype=np.float32).reshape(layers, h, w) * 0.5
    arr = cuabi.Array(device, (layers, h, w), np.float32, layered=True)
    assert arr.layered and cuabi.capi.ArrayFlag.LAYERED in arr.flags
    assert arr.extent == (w, h, layers) and arr.describe()["depth"] == layers
    arr.copy_from(src)
    assert np.array_equal(arr.copy_to(), src)
    tex = cuabi.Texture(arr)
    out = device.zeros((layers, h, w), np.float32)
    mod.get_kernel("tex_layered")(layers, (w, h), (tex, out, np.int32(w), np.int32(h)))
    assert np.array_equal(out.copy_to_host(), src)


def test_cubemap_filled_face_by_face_and_read_by_texcubemap(device, mod):
    size = 7  # odd: each face's centre is the centre of one texel
    values = np.array([1.5, -2.0, 3.25, -4.5, 5.0, -6.75], np.float32)  # +X, -X, +Y, -Y, +Z, -Z
    arr = cuabi.Array(device, (6, size, size), np.float32, cubemap=True)
    assert cuabi.capi.ArrayFlag.CUBEMAP in arr.flags and not arr.layered
    assert arr.extent == (size, size, 6) and arr.host_shape == (6, size, size)
    desc = arr.describe()
    assert (desc["width"], desc["height"], desc["depth"]) == (size, size, 6)
    assert desc["flags"] == int(cuabi.capi.ArrayFlag.CUBEMAP)
    assert "cubemap" in repr(arr)
    faces = np.empty((6, size, size), np.float32)
    for face, value in enumerate(values):
        faces[face] = value
        faces[face, 0, 0] = 100 + face  # a corner apart, so that the round trip sees the layout
        cuabi.copy_3d(arr, faces[face], dst_origin=(0, 0, face))  # one face: slice `face`
    assert np.array_equal(arr.copy_to(), faces)
    tex = cuabi.Texture(arr, normalized_coords=True, filter_mode="point")
    out = device.zeros(6, np.float32)
    mod.get_kernel("cube_centres")(1, 32, (tex, out))
    got = out.copy_to_host()
    assert np.array_equal(got, values), got


@pytest.mark.parametrize(
    "shape, layered, message",
    [
        ((6, 8, 4), False, "a cubemap has square faces (width 4, height 8) and depth 6, or a "
         "multiple of 6 when layered (depth 6)"),
        ((5, 8, 8), False, "a cubemap has square faces (width 8, height 8) and depth 6, or a "
         "multiple of 6 when layered (depth 5)"),
        ((9, 8, 8), True, "or a multiple of 6 when layered (depth 9)"),
    ],
    ids=["non-square faces", "depth 5", "layered depth 9"],
)
def test_cubemap_shapes_the_core_refuses(device, shape, layered, message):
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        cuabi.Array(device, shape, np.float32, cubemap=True, layered=layered)
    assert type(info.value) is cuabi.InvalidArgumentError
    # The core's own words: the binding checks nothing of a cubemap's shape.
    assert info.value.message.startswith("cuabi_array_create: "), info.value.message
    assert message in info.value.message, info.value.message


# ---------------------------------------------------------------------------
# Texture and surface objects
# ---------------------------------------------------------------------------


def sample(device, mod, tex, uv) -> np.ndarray:
    uv = np.asarray(uv, np.float32)
    n = len(uv)
    duv = device.to_device(uv.reshape(-1))
    out = device.zeros(n, np.float32)
    mod.get_kernel("tex2d_at")(1, 32, (tex, duv, out, np.int32(n)))
    return out.copy_to_host()


def test_texture_over_a_2d_array_normalised_and_linear(device, mod):
    data = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)
    arr = cuabi.Array(device, (2, 2), np.float32)
    arr.copy_from(data)
    tex = cuabi.Texture(arr, normalized_coords=True, filter_mode="linear", address_mode="clamp")
    assert tex.source is arr and tex.tex_object != 0
    # texel centres are at (i + 0.5) / 2; between them, the weighted mean
    got = sample(device, mod, tex, [(0.5, 0.5), (0.25, 0.25), (0.5, 0.25), (0.25, 0.5), (0.375, 0.75)])
    assert np.allclose(got, [1.5, 0.0, 0.5, 1.0, 2.25], atol=1 / 256), got
    assert got[0] not in data  # an interpolated value
    # point filtering, element coordinates, and the border colour
    point = cuabi.Texture(
        arr,
        address_mode=("border", cuabi.AddressMode.BORDER),
        filter_mode=cuabi.FilterMode.POINT,
        border_color=(7.0, 0.0, 0.0, 0.0),
    )
    got = sample(device, mod, point, [(1.5, 0.5), (0.5, 1.5), (1.5, 1.5), (-1.5, 0.5), (0.5, 5.0)])
    assert np.array_equal(got, [1.0, 2.0, 3.0, 7.0, 7.0]), got


def test_texture_over_linear_memory_tex1dfetch(device, mod):
    n = 1000
    data = np.random.default_rng(7).random(n, dtype=np.float32)
    buf = device.to_device(data)
    tex = cuabi.Texture(buf)  # the buffer's dtype, every element
    out = device.zeros(n, np.float32)
    mod.get_kernel("tex1d_fetch")(blocks(n), 256, (tex, out, np.int32(n)))
    assert np.array_equal(out.copy_to_host(), data * 2)
    raw = device.alloc(n * 4)  # untyped: float32 unless told
    raw.copy_from_host(data)
    part = cuabi.Texture(raw, dtype=np.float32, width=100)
    out.memset(0)
    mod.get_kernel("tex1d_fetch")(1, 128, (part, out, np.int32(100)))
    assert np.array_equal(out.copy_to_host()[:100], data[:100] * 2)


def test_texture_over_pitched_memory_tex2d(device, mod):
    h, w = 20, 37
    data = np.random.default_rng(8).random((h, w), dtype=np.float32)
    buf = device.alloc_pitched(w * 4, h)
    cuabi.copy_3d(buf, data)
    tex = cuabi.Texture(buf, dtype=np.float32)  # the buffer's rows and pitch
    out = device.zeros((h, w), np.float32)
    mod.get_kernel("tex2d_elements")((blocks(w, 32), h), 32, (tex, out, np.int32(w), np.int32(h)))
    assert np.array_equal(out.copy_to_host(), data)
    # explicit rows: the first 5 rows of the first 16 elements
    small = cuabi.Texture(buf, dtype="float32", width=16, height=5, pitch=buf.pitch)
    out2 = device.zeros((5, 16), np.float32)
    mod.get_kernel("tex2d_elements")((1, 5), 32, (small, out2, np.int32(16), np.int32(5)))
    assert np.array_equal(out2.copy_to_host(), data[:5, :16])


def test_surface_written_by_a_kernel_and_read_back(device, mod):
    h, w = 8, 16
    arr = cuabi.Array(device, (h, w), np.float32, surface=True)
    surf = cuabi.Surface(arr)
    assert surf.array is arr and surf.surf_object != 0
    mod.get_kernel("surf_write")(1, (w, h), (surf, np.int32(w), np.int32(h)))
    want = np.add.outer(np.arange(h) * 100, np.arange(w)).astype(np.float32)
    assert np.array_equal(arr.copy_to(), want)
    out = device.zeros((h, w), np.float32)
    mod.get_kernel("surf_read")(1, (w, h), (surf, out, np.int32(w), np.int32(h)))
    assert np.array_equal(out.copy_to_host(), want + 0.5)


def test_texture_and_surface_in_every_launch_form(device, mod):
    fetch = mod.get_kernel("tex1d_fetch")
    n = 256
    data = np.arange(n, dtype=np.float32)
    tex = cuabi.Texture(device.to_device(data))
    other = cuabi.Texture(device.to_device(data + 1000))
    out = device.zeros(n, np.float32)
    nn = np.int32(n)

    def check(want):
        device.synchronize()
        assert np.array_equal(out.copy_to_host(), want * 2)
        out.memset(0)

    fetch(1, n, (tex, out, nn))
    check(data)
    fetch.prepare(1, n)(tex, out, nn)
    check(data)
    fetch(cuabi.LaunchConfig(1, n), (other, out, nn))
    check(data + 1000)
    fetch(1, n, (tex, out, nn), types=[ctypes.c_uint64, None, None])
    check(data)
    fetch(1, n, (other, out, nn), types=[None, None, ctypes.c_int32])
    check(data + 1000)
    assert fetch.pack((tex, out, nn))[:8] == struct.pack("<Q", tex.tex_object)
    with device.create_stream() as s:
        with s.capture() as cap:
            fetch(1, n, (tex, out, nn), stream=s)
        exe = cap.graph.instantiate()
        exe.set_kernel_node_args(0, fetch, (other, out, nn))
        exe.launch(s)
        s.synchronize()
        check(data + 1000)
        exe.set_kernel_node_args(0, fetch, (tex, out, nn), types=[ctypes.c_uint64, None, None])
        exe.launch(s)
        s.synchronize()
        check(data)
    # a surface the same way
    arr = cuabi.Array(device, (4, 8), np.float32, surface=True)
    surf = cuabi.Surface(arr)
    write = mod.get_kernel("surf_write")
    write.prepare(1, (8, 4))(surf, np.int32(8), np.int32(4))
    device.synchronize()
    assert arr.copy_to()[3, 7] == 307.0
    # a closed texture is refused by every form, naming it
    other.close()
    with pytest.raises(cuabi.InvalidHandleError, match="the texture was closed"):
        fetch(1, n, (other, out, nn))
    with pytest.raises(cuabi.InvalidHandleError, match="the texture was closed"):
        fetch.prepare(1, n)(other, out, nn)


def test_textures_and_surfaces_keep_their_source_alive(device, mod):
    data = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)
    arr = cuabi.Array(device, (2, 2), np.float32, surface=True)
    arr.copy_from(data)
    tex = cuabi.Texture(arr)
    surf = cuabi.Surface(arr)
    ref = weakref.ref(arr)
    del arr
    gc.collect()
    assert ref() is tex.source is surf.array
    ref().close()  # the core keeps the array for the texture and the surface
    got = sample(device, mod, tex, [(0.5, 0.5), (1.5, 1.5)])
    assert np.array_equal(got, [0.0, 3.0])
    mod.get_kernel("surf_write")(1, (2, 2), (surf, np.int32(2), np.int32(2)))
    device.synchronize()
    assert np.array_equal(sample(device, mod, tex, [(1.5, 1.5)]), [101.0])
    buf = device.to_device(np.arange(64, dtype=np.float32))
    btex = cuabi.Texture(buf)
    bref = weakref.ref(buf)
    buf.close()
    del buf
    gc.collect()
    assert bref() is btex.source
    out = device.zeros(64, np.float32)
    mod.get_kernel("tex1d_fetch")(1, 64, (btex, out, np.int32(64)))
    assert np.array_equal(out.copy_to_host(), np.arange(64, dtype=np.float32) * 2)


def test_a_stream_ordered_buffer_a_texture_reads_is_not_freed(device):
    pool = cuabi.MemoryPool(device)  # its first allocation starts at its (aligned) base
    with device.create_stream() as s:
        buf = device.alloc(1 << 20, stream=s, pool=pool, dtype=np.float32)
        tex = cuabi.Texture(buf)
        with pytest.raises(cuabi.InvalidArgumentError, match="cuabi_buffer_free_async"):
            buf.free(s)
        assert not buf.closed
        tex.close()
        buf.free(s)
        s.synchronize()
    pool.close()


def test_buffer_kinds(device):
    plain = device.alloc(64)
    assert plain.kind is cuabi.BufferKind.DEVICE and plain.pitch == 0
    wrapped = device.wrap_buffer(plain.ptr, 64)
    assert wrapped.kind is cuabi.BufferKind.WRAPPED
    assert device.alloc_managed(64).kind is cuabi.BufferKind.MANAGED
    assert device.alloc_pitched(64, 2).kind is cuabi.BufferKind.PITCHED
    with device.create_stream() as s:
        so = device.alloc(64, stream=s)
        assert so.kind is cuabi.BufferKind.STREAM_ORDERED
        so.free(s)
        s.synchronize()


def test_events_made_directly(device):
    ev = cuabi.Event(device)
    with device.create_stream() as s:
        start = cuabi.Event(device).record(s)
        ev.record(s)
        s.synchronize()
    assert ev.query() and ev - start >= 0
    shared = cuabi.Event(device, interprocess=True, blocking_sync=True)
    assert len(shared.ipc_handle()) == 128
    shared.record()
    shared.synchronize()
    with pytest.raises(cuabi.InvalidArgumentError, match="cuabi_event_get_ipc_handle"):
        ev.ipc_handle()  # not made interprocess
