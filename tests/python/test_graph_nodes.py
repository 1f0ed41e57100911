"""Graphs built node by node, on both backends: a hand-built copy -> kernel
-> copy graph with a host node and an event, checked against the same work
on a stream; a WHILE node looping until device code clears its condition;
IF/ELSE and SWITCH chosen on the device; clone, DOT dump, flags; and the
core's refusals."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu

# cudaGraphSetConditional is a device builtin the driver resolves; an NVRTC
# program declares it (see the README).
SOURCE = r"""
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void axpb(float* x, int n, float a, float b) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = a * x[i] + b;
}
extern "C" __global__ void count_down(int* counter, int* iterations,
                                      cudaGraphConditionalHandle h) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    *iterations += 1;
    *counter -= 1;
    if (*counter <= 0) cudaGraphSetConditional(h, 0);
  }
}
extern "C" __global__ void set_condition(const int* value, cudaGraphConditionalHandle h) {
  if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(h, (unsigned)*value);
}
extern "C" __global__ void put(int* where, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *where = value;
}
"""


@pytest.fixture
def module(device):
    if cuabi.driver_version() < 12040:
        pytest.skip("conditional nodes need a driver of CUDA 12.4 or later")
    return device.compile(SOURCE, name="graph_nodes.cu")


def test_a_hand_built_graph_matches_the_same_work_on_a_stream(device, module):
    axpb = module.get_kernel("axpb")
    n = 4096
    hx = (np.arange(n) % 97).astype(np.float32) * 0.5
    a, b = np.float32(3.0), np.float32(-1.25)
    with device.create_stream(non_blocking=True) as s:
        ref = device.to_device(hx, s)
        axpb(16, 256, (ref, np.int32(n), a, b), stream=s)
        want = ref.copy_to_host(stream=s)
        s.synchronize()

        host_in = device.host_alloc(n * 4)
        host_out = device.host_alloc(n * 4)
        host_in.as_array(np.float32)[:] = hx
        host_out.as_array(np.float32)[:] = 0
        dev = device.alloc(n * 4)
        g = cuabi.Graph.create(device)
        up = g.add_upload_node(None, dev, 0, host_in, 0, n * 4)
        kern = g.add_kernel_node(axpb, 16, 256, (dev, np.int32(n), a, b), after=up)
        down = g.add_download_node(kern, host_out, 0, dev, 0, n * 4)
        calls = []
        host = g.add_host_node(calls.append, "ran", after=down)
        event = device.create_event()
        rec = g.add_event_record_node(down, event)
        assert g.node_count == 5
        assert kern.type == _api.GraphNodeType.KERNEL
        assert up.type == _api.GraphNodeType.MEMCPY
        assert host.type == _api.GraphNodeType.HOST
        assert rec.type == _api.GraphNodeType.EVENT_RECORD
        assert kern.dependency_count == 1 and down.dependent_count == 2
        exe = g.instantiate()
        exe.launch(s)
        s.synchronize()
        assert calls == ["ran"]
        np.testing.assert_array_equal(host_out.as_array(np.float32), want)
        exe.launch(s)
        s.synchronize()
        assert calls == ["ran", "ran"]

        def fails():
            raise ValueError("bad row")

        g2 = cuabi.Graph.create(device)
        g2.add_host_node(fails)
        exe2 = g2.instantiate()
        exe2.launch(s)
        with pytest.raises(cuabi.HostFunctionError, match="ValueError: bad row"):
            s.synchronize()
        s.synchronize()  # cleared


def test_a_while_node_loops_until_device_code_clears_the_condition(device, module):
    count_down = module.get_kernel("count_down")
    counter = device.alloc(4)
    iterations = device.alloc(4)
    g = cuabi.Graph.create(device)
    handle = g.create_conditional_handle(1)
    loop = g.add_conditional_node(None, handle, _api.ConditionalType.WHILE, 1)
    assert loop.type == _api.GraphNodeType.CONDITIONAL
    body = loop.get_body(0)
    _add_kernel(body, count_down, (counter, iterations, np.uint64(handle)))
    with pytest.raises(cuabi.OutOfRangeError):
        loop.get_body(1)
    exe = g.instantiate()
    with device.create_stream(non_blocking=True) as s:
        for start in (7, 1, 23):
            counter.copy_from_host(np.array([start], np.int32))
            iterations.copy_from_host(np.array([0], np.int32))
            exe.launch(s)
            s.synchronize()
            got = iterations.copy_to_host(np.empty(1, np.int32))
            assert got[0] == start


def _add_kernel(graph, kernel, args, after=None):
    """A kernel node in a graph the generated layer answered (a body)."""
    return cuabi.Graph.add_kernel_node(graph, kernel, 1, 1, args, after=after)


def test_if_else_and_switch_choose_their_bodies_on_the_device(device, module):
    set_condition = module.get_kernel("set_condition")
    put = module.get_kernel("put")
    value = device.alloc(4)
    out = device.alloc(4)
    with device.create_stream(non_blocking=True) as s:
        for kind, size, cases in ((_api.ConditionalType.IF, 2, (1, 0, 5)),
                                  (_api.ConditionalType.SWITCH, 4, (2, 0, 3, 1, 4))):
            g = cuabi.Graph.create(device)
            h = g.create_conditional_handle(0)
            setter = g.add_kernel_node(set_condition, 1, 1, (value, np.uint64(h)))
            node = g.add_conditional_node(setter, h, kind, size)
            for i in range(size):
                mark = (100 if i == 0 else 200) if kind == _api.ConditionalType.IF else 10 * i + 1
                _add_kernel(node.get_body(i), put, (out, np.int32(mark)))
            exe = g.instantiate()
            for v in cases:
                value.copy_from_host(np.array([v], np.int32))
                out.copy_from_host(np.array([-1], np.int32))
                exe.launch(s)
                s.synchronize()
                got = int(out.copy_to_host(np.empty(1, np.int32))[0])
                if kind == _api.ConditionalType.IF:
                    assert got == (100 if v else 200)
                else:
                    assert got == (10 * v + 1 if v < 4 else -1)


def test_clone_dot_dump_and_flags(device, module):
    put = module.get_kernel("put")
    out = device.alloc(4)
    g = cuabi.Graph.create(device)
    first = g.add_kernel_node(put, 1, 1, (out, np.int32(41)))
    g.add_empty_node(first)
    copy = g.clone()
    assert isinstance(copy, cuabi.Graph) and copy.node_count == 2
    g.add_empty_node(None)
    assert copy.node_count == 2 and g.node_count == 3
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.dot")
        g.write_dot(path)
        with open(path) as f:
            text = f.read()
    assert "digraph" in text and "put" in text
    with pytest.raises(cuabi.InvalidArgumentError, match="bits this version does not define"):
        g.instantiate_with_flags(1 << 9)
    with device.create_stream(non_blocking=True) as s:
        exe = g.instantiate_with_flags(_api.GraphInstantiateFlag.UPLOAD, s)
        exe.launch(s)
        s.synchronize()
    assert int(out.copy_to_host(np.empty(1, np.int32))[0]) == 41


def test_refusals(device, module):
    put = module.get_kernel("put")
    buf = device.alloc(64)
    g = cuabi.Graph.create(device)
    other = cuabi.Graph.create(device)
    a = g.add_empty_node(None)
    b = g.add_empty_node(a)
    foreign = other.add_empty_node(None)
    with pytest.raises(cuabi.InvalidArgumentError, match="node of another graph"):
        g.add_empty_node(foreign)
    with pytest.raises(cuabi.InvalidArgumentError, match="would make a cycle"):
        a.add_dependency(b)
    with pytest.raises(cuabi.InvalidArgumentError, match="takes 2 parameters, but 1 was given"):
        g.add_kernel_node(put, 1, 1, (buf,))
    with pytest.raises(cuabi.OutOfRangeError, match="reaches past the end"):
        g.add_copy_node(None, buf, 32, buf, 0, 33)
    h = g.create_conditional_handle(0)
    with pytest.raises(cuabi.InvalidArgumentError, match="at least 1 case"):
        g.add_conditional_node(None, h, _api.ConditionalType.SWITCH, 0)
    # The driver numbers every graph's handles alike: the other graph's
    # second handle is a number this graph never made.
    other.create_conditional_handle(0)
    h_other = other.create_conditional_handle(0)
    assert h_other != h
    with pytest.raises(cuabi.InvalidArgumentError, match="not made for this graph"):
        g.add_conditional_node(None, h_other, _api.ConditionalType.IF, 1)
    # The driver clones no graph with a conditional node, nor a body.
    cond = g.add_conditional_node(None, h, _api.ConditionalType.IF, 1)
    for which in (g, cond.get_body(0)):
        with pytest.raises(cuabi.NotSupportedError, match="the driver clones no"):
            which.clone()
    with pytest.raises(TypeError, match="after"):
        g.add_kernel_node(put, 1, 1, (buf, np.int32(1)), after="node")
