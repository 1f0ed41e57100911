"""Extended launches (cooperative, clusters, programmatic dependent launch,
priority), occupancy and suggested configurations, host functions, and
graph updates. The first part needs no GPU; the rest is marked ``gpu`` and
skipped, with the reason, where there is no device."""

from __future__ import annotations

import ctypes
import gc
import threading
import weakref
from typing import Any, List

import numpy as np
import pytest

import cuabi
from cuabi import _loader, capi
from kernels import ADD_ONE, SAXPY

# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------

# A sum over the whole grid in one launch: each block reduces its share,
# then waits at a grid barrier (a global counter, safe because a cooperative
# launch keeps every block resident) before block 0 adds the partial sums.
COOP_SUM = """\
extern "C" __global__ void coop_sum(const int* x, unsigned long long n,
                                    unsigned long long* partial,
                                    unsigned int* arrived,
                                    unsigned long long* out)
{
    __shared__ unsigned long long s[256];
    unsigned long long acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        acc += (unsigned long long)x[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        atomicAdd(arrived, 1u);
        while (atomicAdd(arrived, 0u) < gridDim.x) {
        }
        __threadfence();
    }
    __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long total = 0;
        for (unsigned int b = 0; b < gridDim.x; ++b)
            total += ((volatile unsigned long long*)partial)[b];
        *out = total;
    }
}
"""

# Two blocks of a cluster read each other's shared memory (distributed
# shared memory through mapa / ld.shared::cluster), between cluster barriers.
CLUSTER_BODY = """\
{
    __shared__ int value;
    unsigned int rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) value = (int)(blockIdx.x * 1000 + 7);
    asm volatile("barrier.cluster.arrive.release.aligned;\\n\\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (threadIdx.x == 0) {
        unsigned int local, remote;
        asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }"
                     : "=r"(local) : "l"(&value));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                     : "=r"(remote) : "r"(local), "r"(rank ^ 1u));
        int got;
        asm volatile("ld.shared::cluster.s32 %0, [%1];" : "=r"(got) : "r"(remote) : "memory");
        out[blockIdx.x * 2] = got;
        out[blockIdx.x * 2 + 1] = (int)rank;
    }
    /* keep this block's shared memory until the peer has read it */
    asm volatile("barrier.cluster.arrive.release.aligned;\\n\\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
"""
CLUSTER = (
    'extern "C" __global__ void cluster_swap(int* out)\n'
    + CLUSTER_BODY
    + 'extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_swap_fixed(int* out)\n'
    + CLUSTER_BODY
)

# Programmatic dependent launch: the producer lets its dependent start once
# it has written; the consumer waits for the producer's memory before reading.
PDL = """\
extern "C" __global__ void pdl_producer(int* data, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = i * 3 + k;
    asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__ void pdl_consumer(const int* data, int* out, int n)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = data[i] * 2;
}
"""

# --------------------------------------------------------------------------
# No GPU needed
# --------------------------------------------------------------------------


def test_generated_callback_type_for_ctypes():
    fn = capi.cuabi_host_fn
    assert issubclass(fn, ctypes._CFuncPtr)  # type: ignore[attr-defined]
    assert fn._restype_ is ctypes.c_int32
    assert fn._argtypes_ == (ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
    decl = {name: argtypes for name, _, argtypes in capi.DECLARATIONS}
    assert decl["cuabi_stream_launch_host_func"][1] is fn
    assert "typedef int32_t (*cuabi_host_fn)(void*, char*, size_t);" in capi.CDEF


def test_generated_callback_type_for_cffi():
    pytest.importorskip("cffi")
    b = _loader.load_backend("cffi")
    t = b.ffi.typeof("cuabi_host_fn")
    assert t.kind == "function"  # cffi's kind for a function pointer type
    assert t.result.cname == "int32_t"
    assert [a.cname for a in t.args] == ["void *", "char *", "size_t"]


def test_launch_config_options():
    cfg = cuabi.LaunchConfig(8, (32, 2), 128, cooperative=True, cluster=2, priority=-1)
    assert cfg.grid == (8, 1, 1) and cfg.block == (32, 2, 1) and cfg.shared_mem == 128
    assert cfg.cluster == (2, 1, 1) and cfg.priority == -1
    assert cfg.flags == cuabi.LaunchFlag.COOPERATIVE
    assert not cfg.is_plain and cuabi.LaunchConfig(1, 32).is_plain
    assert cfg.threads == 8 * 64
    pdl = cfg.replace(cooperative=False, programmatic=True, cluster=None)
    assert pdl.flags == cuabi.LaunchFlag.PROGRAMMATIC_SERIALIZATION and pdl.cluster is None
    assert cfg.cooperative  # replace made a copy
    assert cfg == cuabi.LaunchConfig(8, (32, 2, 1), 128, cooperative=True, cluster=(2, 1, 1),
                                     priority=-1)
    assert hash(cfg) == hash(cuabi.LaunchConfig(8, (32, 2), 128, cooperative=True, cluster=2,
                                                priority=-1))
    assert cfg != pdl
    assert cuabi.LaunchConfig.of(cfg) is cfg
    assert cuabi.LaunchConfig.of(cfg, priority=0).priority == 0
    assert "cooperative=True" in repr(cfg) and "cluster=(2, 1, 1)" in repr(cfg)
    with pytest.raises(AttributeError):
        cfg.grid = (1, 1, 1)  # type: ignore[misc]
    with pytest.raises(TypeError, match="no option colour"):
        cfg.replace(colour=1)
    with pytest.raises(cuabi.InvalidArgumentError, match="cluster.x = -1 is out of range"):
        cuabi.LaunchConfig(2, 32, cluster=-1)
    with pytest.raises(cuabi.InvalidArgumentError, match="priority = 2147483648 is out of range"):
        cuabi.LaunchConfig(2, 32, priority=1 << 31)
    with pytest.raises(TypeError, match="programmatic_event must be a cuabi.Event"):
        cuabi.LaunchConfig(2, 32, programmatic_event=object())  # type: ignore[arg-type]


def test_launch_config_struct_round_trip(backend):
    cfg = cuabi.LaunchConfig((4, 2), (64,), 256, cooperative=True, cluster=(2, 1, 1),
                             programmatic=True, priority=-2)
    arg = cfg.as_struct(backend)
    struct = arg if backend.name in ("cffi", "compiled") else arg._obj
    fields = backend.read_launch_config(struct)
    assert fields == {
        "grid": (4, 2, 1),
        "block": (64, 1, 1),
        "shared_mem": 256,
        "flags": int(cuabi.LaunchFlag.COOPERATIVE | cuabi.LaunchFlag.PROGRAMMATIC_SERIALIZATION),
        "cluster": (2, 1, 1),
        "priority": -2,
        "programmatic_event": 0,
    }
    assert cuabi.LaunchConfig.from_struct(backend, struct) == cfg


# Launch attributes: each option reaches its C field on each backend; the
# ones left unset keep cuabi_launch_config_init's values (-1, 0, NULL), so
# the core sees a plain launch.
def test_launch_attributes_reach_the_struct(backend):
    window = cuabi.AccessPolicyWindow(base=4096, bytes=256, hit_ratio=0.5)
    cfg = cuabi.LaunchConfig(4, 32, access_policy_window=window, shared_carveout=10,
                             mem_sync_domain=cuabi.MemSyncDomain.REMOTE,
                             mem_sync_domain_map=(0, 1), device_updatable=True,
                             cluster_scheduling=cuabi.ClusterSchedulingPolicy.SPREAD,
                             sync_policy=9)
    assert not cfg.is_plain
    arg = cfg.as_struct(backend)
    s = arg if backend.name in ("cffi", "compiled") else arg._obj
    if backend.name in ("cffi", "compiled"):
        s = s[0]
    w = s.access_policy_window
    assert (w.base, w.bytes, w.hit_ratio) == (4096, 256, 0.5)
    assert (int(w.hit_property), int(w.miss_property)) == (2, 1)  # the init's PERSISTING, STREAMING
    assert (s.shared_carveout, s.mem_sync_domain, s.mem_sync_domain_map_default,
            s.mem_sync_domain_map_remote, s.cluster_scheduling_policy, s.sync_policy) == (
        10, 1, 0, 1, 1, 9)  # an unknown policy passes as given: the core refuses it
    assert s.flags == int(cuabi.LaunchFlag.DEVICE_UPDATABLE_KERNEL_NODE)
    plain = cuabi.LaunchConfig(4, 32)
    assert plain.is_plain
    p = plain.as_struct(backend)
    p = p if backend.name in ("cffi", "compiled") else p._obj
    if backend.name in ("cffi", "compiled"):
        p = p[0]
    assert (p.shared_carveout, p.mem_sync_domain, p.mem_sync_domain_map_default,
            p.mem_sync_domain_map_remote, p.access_policy_window.bytes, p.sync_policy) == (
        -1, -1, -1, -1, 0, 0)
    assert cfg.replace(access_policy_window=None, shared_carveout=None, mem_sync_domain=None,
                       mem_sync_domain_map=None, device_updatable=False, sync_policy=None,
                       cluster_scheduling=cuabi.ClusterSchedulingPolicy.DEFAULT).is_plain


def _call_trampoline(b: _loader.Backend, key: int, size: int) -> "tuple[int, bytes]":
    """Calls the backend's C trampoline as the core does, through its C
    function pointer; returns (result, the message written)."""
    tramp = b.host_trampoline()
    if b.name == "ctypes":
        buf = ctypes.create_string_buffer(b"\xff" * size, size)
        rc = tramp(key, buf, size)
        raw = buf.raw
    else:
        ffi = b.ffi
        buf = ffi.new("char[]", size)
        ffi.memmove(buf, b"\xff" * size, size)
        rc = tramp(ffi.cast("void *", key), buf, size)
        raw = bytes(ffi.buffer(buf, size))
    return int(rc), raw


def test_trampoline_runs_once_and_reports_exceptions(backend):
    calls: List[Any] = []
    key = next(_loader._host_keys)
    _loader._host_pending[key] = (calls.append, ("first",))
    assert _call_trampoline(backend, key, 64)[0] == 0
    assert calls == ["first"] and key not in _loader._host_pending
    # Called again (it never is), it finds nothing and runs nothing.
    assert _call_trampoline(backend, key, 64)[0] == 0
    assert calls == ["first"]

    def boom(row: int) -> None:
        raise ValueError(f"bad row {row}")

    key = next(_loader._host_keys)
    _loader._host_pending[key] = (boom, (7,))
    rc, raw = _call_trampoline(backend, key, 64)
    assert rc != 0 and key not in _loader._host_pending
    assert raw.split(b"\0")[0] == b"ValueError: bad row 7"

    # A message longer than the space is cut at a character, NUL-terminated.
    key = next(_loader._host_keys)
    _loader._host_pending[key] = (boom, ("\u00e9" * 40,))
    rc, raw = _call_trampoline(backend, key, 16)
    text = raw.split(b"\0")[0]
    assert rc != 0 and len(text) <= 15 and b"\0" in raw
    assert text.decode("utf-8").startswith("ValueError: ")

    class Custom(Exception):
        pass

    key = next(_loader._host_keys)
    _loader._host_pending[key] = (lambda: (_ for _ in ()).throw(Custom()), ())
    rc, raw = _call_trampoline(backend, key, 64)
    assert rc != 0 and raw.split(b"\0")[0] == b"Custom"


def test_refused_host_function_is_not_kept(backend):
    before = dict(_loader._host_pending)
    ran: List[int] = []
    with pytest.raises(cuabi.InvalidHandleError):
        backend.launch_host_func(backend.NULL, ran.append, (1,))
    assert _loader._host_pending == before
    with pytest.raises(TypeError, match="must be callable, not int"):
        backend.launch_host_func(backend.NULL, 5, ())  # type: ignore[arg-type]
    assert _loader._host_pending == before and not ran


def test_host_function_error_class():
    assert cuabi.HostFunctionError.status == capi.CUABI_ERROR_HOST_FUNCTION == 20
    assert issubclass(cuabi.HostFunctionError, cuabi.CudaError)
    assert cuabi.FunctionAttribute["REQUIRED_CLUSTER_WIDTH"] == 11


# --------------------------------------------------------------------------
# On a device
# --------------------------------------------------------------------------


@pytest.mark.gpu
def test_cooperative_reduction_in_one_launch(device):
    coop = device.compile(COOP_SUM, name="coop_sum.cu").get_kernel("coop_sum")
    per_sm = coop.active_blocks_per_sm(256)
    assert per_sm >= 1
    grid = per_sm * device.multiprocessor_count  # every block resident at once
    n = (1 << 21) + 13
    x = np.random.default_rng(5).integers(0, 1000, n, dtype=np.int32)
    dx = device.to_device(x)
    partial = device.zeros(grid, np.uint64)
    arrived = device.zeros(1, np.uint32)
    out = device.zeros(1, np.uint64)
    args = (dx, np.uint64(n), partial, arrived, out)
    with device.create_stream() as s:
        coop(grid, 256, args, stream=s, cooperative=True)
        s.synchronize()
        assert int(out.to_numpy()[0]) == int(x.sum(dtype=np.int64))
        # Again through a LaunchConfig and a prepared launch.
        arrived.memset(0)
        out.memset(0)
        launch = coop.prepare(cuabi.LaunchConfig(grid, 256, cooperative=True), stream=s)
        launch(*args)
        s.synchronize()
    assert int(out.to_numpy()[0]) == int(x.sum(dtype=np.int64))


@pytest.mark.gpu
def test_cluster_distributed_shared_memory(device):
    mod = device.compile(CLUSTER, name="cluster.cu")
    swap = mod.get_kernel("cluster_swap")
    fixed = mod.get_kernel("cluster_swap_fixed")
    blocks = 8
    want = np.empty(2 * blocks, np.int32)
    for b in range(blocks):
        want[2 * b] = (b ^ 1) * 1000 + 7
        want[2 * b + 1] = b % 2
    assert swap.max_cluster_size(blocks, 32) >= 2
    assert swap.max_active_clusters(blocks, 32, cluster=(2, 1, 1)) >= 1
    assert swap.required_cluster_dims == (0, 0, 0)
    assert fixed.required_cluster_dims == (2, 1, 1)
    with device.create_stream() as s:
        out = device.zeros(2 * blocks, np.int32)
        swap(blocks, 32, (out,), stream=s, cluster=(2, 1, 1))
        s.synchronize()
        assert np.array_equal(out.to_numpy(), want)
        out.memset(0)
        swap.prepare(cuabi.LaunchConfig(blocks, 32, cluster=2), stream=s)(out)
        s.synchronize()
        assert np.array_equal(out.to_numpy(), want)
        out.memset(0)
        fixed(blocks, 32, (out,), stream=s)  # its compile-time cluster dimensions
        s.synchronize()
        assert np.array_equal(out.to_numpy(), want)


@pytest.mark.gpu
def test_programmatic_dependent_launch(device):
    mod = device.compile(PDL, name="pdl.cu")
    producer, consumer = mod.get_kernel("pdl_producer"), mod.get_kernel("pdl_consumer")
    n = 1 << 16
    blocks = (n + 255) // 256
    data = device.zeros(n, np.int32)
    out = device.zeros(n, np.int32)
    idx = np.arange(n, dtype=np.int32)
    with device.create_stream() as s:
        prepared = consumer.prepare(blocks, 256, stream=s, programmatic=True)
        for k in range(5):
            producer(blocks, 256, (data, np.int32(n), np.int32(k)), stream=s)
            if k % 2:
                prepared(data, out, np.int32(n))
            else:
                consumer(blocks, 256, (data, out, np.int32(n)), stream=s, programmatic=True)
            s.synchronize()
            assert np.array_equal(out.to_numpy(), (idx * 3 + k) * 2), k


@pytest.mark.gpu
def test_programmatic_event_and_priority(device):
    mod = device.compile(PDL, name="pdl.cu")
    producer = mod.get_kernel("pdl_producer")
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    n = 4096
    data = device.zeros(n, np.int32)
    other = device.zeros(n, np.int32)
    least, greatest = device.stream_priority_range
    with device.create_stream() as s1, device.create_stream() as s2:
        for at_start in (False, True):
            ev = device.create_event(timing=False)
            producer(16, 256, (data, np.int32(n), np.int32(9)), stream=s1,
                     programmatic_event=ev, event_at_block_start=at_start, priority=greatest)
            s2.wait(ev)
            add_one(16, 256, (other, np.uint64(n)), stream=s2)
            s1.synchronize()
            s2.synchronize()
            assert ev.query()
        assert np.array_equal(data.to_numpy(), np.arange(n, dtype=np.int32) * 3 + 9)
        assert np.all(other.to_numpy() == 2)


@pytest.mark.gpu
def test_occupancy_and_suggested_configuration(device):
    saxpy = device.compile(SAXPY, name="saxpy.cu").get_kernel("saxpy")
    block, min_grid = saxpy.suggest_block_size()
    assert 32 <= block <= saxpy.max_threads_per_block and block % 32 == 0
    assert min_grid >= 1
    assert saxpy.suggested_block_size == block
    assert saxpy.active_blocks_per_sm(block) >= 1
    assert saxpy.suggest_block_size(limit=64)[0] <= 64
    assert saxpy.available_dynamic_shared(1, block) > 0
    n = 1_000_003
    cfg = saxpy.suggest_config(n)
    assert cfg.block == (block, 1, 1)
    assert cfg.grid[1:] == (1, 1) and cfg.grid[0] == (n + block - 1) // block
    assert cfg.shared_mem == 0 and cfg.is_plain
    shared = saxpy.suggest_config(n, shared_per_block=64, shared_per_thread=4)
    assert shared.shared_mem == 64 + 4 * shared.block[0]
    assert saxpy.suggest_config(n, priority=-1).priority == -1
    x = np.arange(n, dtype=np.float32) % 1000
    y = np.full(n, 3.0, np.float32)
    dx, dy, dout = device.to_device(x), device.to_device(y), device.zeros(n, np.float32)
    saxpy(cfg, (np.float32(2.0), dx, dy, dout, np.uint64(n)))
    device.synchronize()
    assert np.array_equal(dout.to_numpy(), 2 * x + y)


@pytest.mark.gpu
def test_kernel_attributes_by_name(device):
    saxpy = device.compile(SAXPY, name="saxpy.cu").get_kernel("saxpy")
    assert saxpy.attribute("num_regs") == saxpy.num_regs > 0
    assert saxpy.attribute("NUM_REGS") == saxpy.attribute(cuabi.FunctionAttribute.NUM_REGS)
    saxpy.set_attribute("max_dynamic_shared_size_bytes", 1024)
    assert saxpy.max_dynamic_shared_size_bytes == 1024
    saxpy.max_dynamic_shared_size_bytes = 2048
    assert saxpy.attribute("max_dynamic_shared_size_bytes") == 2048
    saxpy.preferred_shared_memory_carveout = 50
    assert saxpy.preferred_shared_memory_carveout == 50
    assert saxpy.cluster_size_must_be_set is False


@pytest.mark.gpu
def test_graph_node_update_without_reinstantiation(device):
    saxpy = device.compile(SAXPY, name="saxpy.cu").get_kernel("saxpy")
    n = 1 << 16
    x = (np.arange(n) % 97).astype(np.float32)
    y = (np.arange(n) % 13).astype(np.float32)
    dx, dy, dout = device.to_device(x), device.to_device(y), device.zeros(n, np.float32)
    blocks = (n + 255) // 256
    with device.create_stream() as s:
        with s.capture() as cap:
            saxpy(blocks, 256, (np.float32(0), dx, dy, dout, np.uint64(n)), stream=s)
        graph = cap.graph
        assert graph.kernel_node_count == 1
        exe = graph.instantiate()
        exe.upload(s)
        for a in range(100):
            exe.set_kernel_node_args(0, saxpy, (np.float32(a), dx, dy, dout, np.uint64(n)))
            exe.launch(s)
            got = dout.copy_to_host(stream=s)
            s.synchronize()
            assert np.array_equal(got, np.float32(a) * x + y), a
        # A whole-graph update: captured again with another output buffer.
        dout2 = device.zeros(n, np.float32)
        with s.capture() as cap2:
            saxpy(blocks, 256, (np.float32(-1), dx, dy, dout2, np.uint64(n)), stream=s)
        exe.update(cap2.graph)
        exe.launch(s)
        s.synchronize()
        assert np.array_equal(dout2.to_numpy(), y - x)
        assert np.array_equal(dout.to_numpy(), np.float32(99) * x + y)  # untouched
        exe.close()
        graph.close()


@pytest.mark.gpu
def test_host_functions_run_in_order_and_report_failures(device):
    add_one = device.compile(ADD_ONE).get_kernel("add_one")
    buf = device.zeros(256, np.int32)
    pinned = device.host_alloc(256 * 4)
    seen = pinned.as_array(np.int32)
    calls: List[Any] = []
    before = set(_loader._host_pending)
    with device.create_stream() as s:
        for i in range(3):
            add_one(1, 256, (buf, np.uint64(256)), stream=s)
            buf.copy_to_host(seen, stream=s)
            # Runs after the copy: sees the value the kernel made.
            s.launch_host_func(lambda i=i: calls.append((i, int(seen[0]))))
        for i in range(10):
            s.launch_host_func(calls.append, i)
        s.synchronize()
        assert calls == [(0, 1), (1, 2), (2, 3)] + list(range(10))

        def boom(row: int) -> None:
            raise ValueError(f"bad row {row}")

        calls.clear()
        s.launch_host_func(calls.append, "before")
        s.launch_host_func(boom, 7)
        s.launch_host_func(calls.append, "after")
        with pytest.raises(cuabi.HostFunctionError) as info:
            s.synchronize()
        assert "ValueError: bad row 7" in info.value.message
        assert info.value.status == capi.CUABI_ERROR_HOST_FUNCTION
        assert calls == ["before", "after"]  # work after the failure still ran
        s.synchronize()  # reported once
        s.launch_host_func(calls.append, "again")
        s.synchronize()
        assert calls[-1] == "again"
    assert set(_loader._host_pending) <= before  # every entry dropped once run
    pinned.close()


@pytest.mark.gpu
def test_host_function_kept_alive_until_it_ran(device):
    gate = threading.Event()

    class Task:
        def __init__(self) -> None:
            self.ran = False

        def __call__(self) -> None:
            self.ran = True

    started = threading.Event()
    log: list = []

    def hold() -> None:  # holds the stream until the gate is set
        started.set()
        log.append(("hold", gate.wait(30)))

    task = Task()
    ref = weakref.ref(task)
    gc.collect()
    # While `hold` waits on this thread, this thread must make no CUDA call
    # that waits for the driver's host-function thread (a release run by a
    # garbage collection would): the collector stays off until the gate opens.
    gc.disable()
    with device.create_stream() as s:
        s.launch_host_func(hold)
        try:
            assert started.wait(30), "the stream never reached the first host function"
            s.launch_host_func(task)
            del task  # the last reference outside the launch
            alive = ref()
            # Kept by the launch, not run yet: the stream is held before it.
            assert alive is not None, f"dropped before it ran (log {log})"
            assert not alive.ran, f"ran before the host function ahead of it ended (log {log})"
            del alive
        finally:
            gate.set()
            gc.enable()
        s.synchronize()
    assert log == [("hold", True)]
    gc.collect()
    assert ref() is None  # dropped after it ran
