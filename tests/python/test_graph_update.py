"""An executable graph changed in place, on both backends: every node kind's
parameters updated without instantiating again, nodes disabled and enabled,
a 3D copy node, a kernel that launches a device graph (fire-and-forget and
tail launch), and the core's refusals as exceptions with its words."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu

SOURCE = r"""
typedef struct CUgraphExec_st* cudaGraphExec_t;
extern "C" __device__ __cudart_builtin__ cudaError_t cudaGraphLaunch(
    cudaGraphExec_t graph, cudaStream_t stream);
extern "C" __global__ void axpb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
extern "C" __global__ void axmb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] - b;
}
extern "C" __global__ void put(int* where, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *where = value;
}
extern "C" __global__ void bump(int* counter, int by) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(counter, by);
}
extern "C" __global__ void launch_graph(unsigned long long graph, unsigned long long mode,
                                        int* answer) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *answer = (int)cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)mode);
}
"""

# The device-side launch modes (cuda_device_runtime_api.h's values).
TAIL_LAUNCH = 0x0100000000000000
FIRE_AND_FORGET = 0x0200000000000000


@pytest.fixture
def module(device):
    if cuabi.driver_version() < 12040:
        pytest.skip("these updates need a driver of CUDA 12.4 or later")
    return device.compile(SOURCE, name="graph_update.cu")


@pytest.fixture
def stream(device):
    with device.create_stream(non_blocking=True) as s:
        yield s


def _run(exe, s):
    exe.launch(s)
    s.synchronize()


def test_every_node_kind_takes_new_parameters_without_instantiating_again(device, module, stream):
    axpb, axmb = module.get_kernel("axpb"), module.get_kernel("axmb")
    n = 2048
    x = (np.arange(n) % 61).astype(np.float32) - 7
    y = (np.arange(n) % 13).astype(np.float32)
    host_in = device.host_alloc(2 * n * 4)
    host_out = device.host_alloc(2 * n * 4)
    hin, hout = host_in.as_array(np.float32), host_out.as_array(np.float32)
    hin[:n], hin[n:] = x, y
    hout[:] = 0
    a, b, c = (device.alloc(n * 4) for _ in range(3))
    flags = device.alloc(64)
    g = cuabi.Graph.create(device)
    up = g.add_upload_node(None, a, 0, host_in, 0, n * 4)
    kern = g.add_kernel_node(axpb, 8, 128, (a, np.int32(n), np.float32(2), np.float32(1)), after=up)
    copy = g.add_copy_node(kern, b, 0, a, 0, n * 4)
    fill = g.add_fill_node(copy, flags, 0, 0x11, 4, 4)
    down = g.add_download_node(fill, host_out, 0, b, 0, n * 4)
    calls = []
    host = g.add_host_node(calls.append, "first", after=down)
    exe = g.instantiate()
    _run(exe, stream)
    np.testing.assert_array_equal(hout[:n], 2 * x + 1)
    assert flags.copy_to_host(np.empty(16, np.uint32))[0] == 0x11
    assert calls == ["first"]

    exe.set_upload_node(up, c, 0, host_in, n * 4, n * 4)
    exe.set_kernel_node(kern, axmb, 4, 256, (c, np.int32(n), np.float32(3), np.float32(0.5)))
    exe.set_copy_node(copy, b, 0, c, 0, n * 4)
    exe.set_fill_node(fill, flags, 16, 0x22, 4, 4)
    exe.set_download_node(down, host_out, n * 4, b, 0, n * 4)
    exe.set_host_node(host, calls.append, "second")
    _run(exe, stream)
    np.testing.assert_array_equal(hout[n:], 3 * y - np.float32(0.5))
    f = flags.copy_to_host(np.empty(16, np.uint32))
    assert f[0] == 0x11 and f[4] == 0x22
    assert calls == ["first", "second"]
    # The graph itself is unchanged: a new instance does the first work.
    hout[:n] = 0
    _run(g.instantiate(), stream)
    np.testing.assert_array_equal(hout[:n], 2 * x + 1)


def test_nodes_are_disabled_and_enabled_again(device, module, stream):
    bump = module.get_kernel("bump")
    counter = device.alloc(16)
    counter.memset(0)
    g = cuabi.Graph.create(device)
    k = g.add_kernel_node(bump, 1, 1, (counter, np.int32(5)))
    fill = g.add_fill_node(k, counter, 8, 7, 4, 1)
    calls = []
    host = g.add_host_node(calls.append, 1, after=fill)
    exe = g.instantiate()
    assert exe.get_node_enabled(k) == 1
    _run(exe, stream)
    exe.set_node_enabled(k, 0)
    exe.set_node_enabled(fill, 0)
    assert exe.get_node_enabled(k) == 0
    counter.memset(0, offset=8, nbytes=4)
    _run(exe, stream)
    got = counter.copy_to_host(np.empty(3, np.int32))
    assert got[0] == 5 and got[2] == 0, "disabled nodes do not run"
    assert calls == [1, 1], "the nodes after a disabled one still run"
    exe.set_node_enabled(k, 1)
    exe.set_node_enabled(fill, 1)
    _run(exe, stream)
    got = counter.copy_to_host(np.empty(3, np.int32))
    assert got[0] == 10 and got[2] == 7
    with pytest.raises(cuabi.NotSupportedError, match="the node is a host node"):
        exe.set_node_enabled(host, 0)


def test_the_refusals_name_what_was_wrong(device, module, stream):
    axpb, put = module.get_kernel("axpb"), module.get_kernel("put")
    a, b = device.alloc(4096), device.alloc(4096)
    pinned = device.host_alloc(4096)
    g, other = cuabi.Graph.create(device), cuabi.Graph.create(device)
    k = g.add_kernel_node(axpb, 1, 32, (a, np.int32(1024), np.float32(1), np.float32(0)))
    copy = g.add_copy_node(k, b, 0, a, 0, 4096)
    fill = g.add_fill_node(copy, a, 0, 1, 4, 16)
    down = g.add_download_node(fill, pinned, 0, b, 0, 64)
    foreign = other.add_fill_node(None, a, 0, 1, 4, 16)
    exe = g.instantiate()
    with pytest.raises(cuabi.InvalidArgumentError, match="keeps the kernel's signature"):
        exe.set_kernel_node(k, put, 1, 32, (a, np.int32(3)))
    with pytest.raises(cuabi.NotSupportedError, match="stay as instantiated"):
        exe.set_kernel_node(k, axpb, cuabi.LaunchConfig(1, 32, priority=1),
                            None, (a, np.int32(1024), np.float32(1), np.float32(0)))
    with pytest.raises(cuabi.InvalidArgumentError, match="the node is a copy node, not a kernel node"):
        exe.set_kernel_node(copy, axpb, 1, 32, (a, np.int32(1024), np.float32(1), np.float32(0)))
    with pytest.raises(cuabi.InvalidArgumentError, match="the node is a fill node, not a copy node"):
        exe.set_copy_node(fill, b, 0, a, 0, 64)
    with pytest.raises(cuabi.InvalidArgumentError, match="a download node, not an upload node"):
        exe.set_upload_node(down, b, 0, pinned, 0, 64)
    with pytest.raises(cuabi.InvalidArgumentError, match="not a node of the graph"):
        exe.set_fill_node(foreign, a, 0, 2, 4, 16)
    with pytest.raises(cuabi.OutOfRangeError, match="past the end of the 4096-byte buffer"):
        exe.set_copy_node(copy, b, 1, a, 0, 4096)
    with pytest.raises(cuabi.InvalidArgumentError, match="expected 1, 2 or 4"):
        exe.set_fill_node(fill, a, 0, 1, 3, 16)
    with pytest.raises(cuabi.InvalidArgumentError, match="fn is NULL"):
        exe.set_host_node(fill, None)
    with pytest.raises(TypeError):
        exe.set_host_node(fill, 42)
    # Nothing refused changed the executable graph.
    _run(exe, stream)


def test_a_3d_copy_node_copies_a_box_into_pitched_memory_and_an_array(device, module, stream):
    w, h = 40, 24
    host = (np.arange(w * h, dtype=np.float32) * 0.25).reshape(h, w)
    pitched = device.alloc_pitched(w * 4, h)
    arr = cuabi.Array(device, (h, w), np.float32)
    cuabi.copy_3d(arr, np.zeros((h, w), np.float32))
    back = np.full((h, w), -1, np.float32)
    g = cuabi.Graph.create(device)
    # The source is a copy nobody else holds: the graph keeps host memory
    # its nodes name for as long as it lives, and so does its clone.
    n1 = g.add_copy_3d_node(None, cuabi.Copy3dOp(pitched, host.copy(), (24 * 4, 16), src_origin=(8 * 4, 4)))
    n2 = g.add_copy_3d_node(n1, cuabi.Copy3dOp(arr, pitched, (24 * 4, 16), dst_origin=(8 * 4, 4)))
    n3 = g.add_copy_3d_node(n2, cuabi.Copy3dOp(back, arr))
    assert n3.type == _api.GraphNodeType.MEMCPY
    gc.collect()
    scribble = [np.full((h, w), -7, np.float32) for _ in range(8)]  # reuses what was freed
    _run(g.instantiate(), stream)
    want = np.zeros((h, w), np.float32)
    want[4:20, 8:32] = host[4:20, 8:32]
    np.testing.assert_array_equal(back, want)
    exe = g.instantiate()
    with pytest.raises(cuabi.NotSupportedError, match="3D copy node"):
        exe.set_copy_node(n2, device.alloc(64), 0, device.alloc(64), 0, 64)
    with pytest.raises(cuabi.OutOfRangeError):
        g.add_copy_3d_node(None, cuabi.Copy3dOp(back, arr, src_origin=(0, 8)))
    with pytest.raises(TypeError, match="desc must be a cuabi.Copy3dOp, not tuple"):
        g.add_copy_3d_node(None, (back, arr))
    back[:] = -1
    twin = g.clone()
    del g, n1, n2, n3, exe
    gc.collect()
    scribble += [np.full((h, w), -7, np.float32) for _ in range(8)]
    _run(twin.instantiate(), stream)
    np.testing.assert_array_equal(back, want)


def test_a_kernel_launches_a_device_graph_fire_and_forget_then_tail(device, module, stream):
    bump, launcher = module.get_kernel("bump"), module.get_kernel("launch_graph")
    words = device.alloc(16)
    child = cuabi.Graph.create(device)
    child.add_kernel_node(bump, 1, 1, (words, np.int32(3)))
    flags = _api.GraphInstantiateFlag.DEVICE_LAUNCH | _api.GraphInstantiateFlag.UPLOAD
    device_graph = child.instantiate_with_flags(flags, stream)
    handle = device_graph.launch_handle
    assert handle != 0
    for mode in (FIRE_AND_FORGET, TAIL_LAUNCH):
        words.memset(0)
        host = cuabi.Graph.create(device)
        host.add_kernel_node(launcher, 1, 1,
                             (np.uint64(handle), np.uint64(mode), np.uint64(words.pointer + 4)))
        exe = host.instantiate()
        for _ in range(2):
            _run(exe, stream)
        got = words.copy_to_host(np.empty(2, np.int32))
        assert got[1] == 0, f"cudaGraphLaunch answered {got[1]}"
        assert got[0] == 6, "two launches, each adding 3 from the device graph"
    # The driver refuses a stream launch of a kernel that launches a graph.
    with pytest.raises(cuabi.CudaError, match="cuLaunchKernel"):
        launcher(1, 1, (np.uint64(handle), np.uint64(FIRE_AND_FORGET), np.uint64(words.pointer + 4)),
                 stream=stream)
    stream.synchronize()
