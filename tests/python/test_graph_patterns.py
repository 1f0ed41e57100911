"""Two graph patterns checked against NumPy, on both backends: a WHILE node
running a Jacobi iteration until the residual computed on the device falls
below a tolerance, and a hand-built graph of 1,000 kernel nodes in chained
diamonds, replayed."""

from __future__ import annotations

import numpy as np
import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void jacobi(float* x, const float* b, int n, float tol,
                                  int* iterations, cudaGraphConditionalHandle h) {
  __shared__ float xs[256];
  __shared__ float rs[256];
  int i = threadIdx.x;
  if (i < n) xs[i] = x[i];
  __syncthreads();
  float xn = 0.0f;
  if (i < n) xn = (b[i] + (i > 0 ? xs[i - 1] : 0.0f) + (i < n - 1 ? xs[i + 1] : 0.0f)) / 4.0f;
  __syncthreads();
  if (i < n) { xs[i] = xn; x[i] = xn; }
  __syncthreads();
  if (i < n) {
    float ax = 4.0f * xs[i] - (i > 0 ? xs[i - 1] : 0.0f) - (i < n - 1 ? xs[i + 1] : 0.0f);
    rs[i] = fabsf(b[i] - ax);
  } else rs[i] = 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (i < s) rs[i] = fmaxf(rs[i], rs[i + s]);
    __syncthreads();
  }
  if (i == 0) {
    *iterations += 1;
    if (rs[0] < tol) cudaGraphSetConditional(h, 0);
  }
}
extern "C" __global__ void combine(int* v, int out, int a, int b) {
  if (threadIdx.x == 0 && blockIdx.x == 0) v[out] = v[a] + 2 * v[b] + 1;
}
"""


@pytest.fixture
def module(device):
    if cuabi.driver_version() < 12040:
        pytest.skip("conditional nodes need a driver of CUDA 12.4 or later")
    return device.compile(SOURCE, name="graph_patterns.cu")


def _jacobi_numpy(b: np.ndarray, tol: np.float32):
    """The device's iteration in the same float32 operations."""
    x = np.zeros_like(b)
    zero = np.zeros(1, np.float32)
    steps = 0
    while True:
        left = np.concatenate([zero, x[:-1]])
        right = np.concatenate([x[1:], zero])
        x = ((b + left) + right) / np.float32(4)
        steps += 1
        left = np.concatenate([zero, x[:-1]])
        right = np.concatenate([x[1:], zero])
        ax = (np.float32(4) * x - left) - right
        if np.max(np.abs(b - ax)) < tol:
            return x, steps
        assert steps < 10000, "the NumPy iteration does not converge"


def test_a_while_node_runs_jacobi_until_the_residual_on_the_device_is_small(device, module):
    jacobi = module.get_kernel("jacobi")
    n, tol = 64, np.float32(1e-4)
    b = (((np.arange(n) * 7) % 11) - 3).astype(np.float32)
    x = device.to_device(np.zeros(n, np.float32))
    bb = device.to_device(b)
    iterations = device.to_device(np.zeros(1, np.int32))
    g = cuabi.Graph.create(device)
    handle = g.create_conditional_handle(1)
    loop = g.add_conditional_node(None, handle, _api.ConditionalType.WHILE, 1)
    body = loop.get_body(0)
    cuabi.Graph.add_kernel_node(
        body, jacobi, 1, n, (x, bb, np.int32(n), tol, iterations, np.uint64(handle))
    )
    g.instantiate().launch()
    device.synchronize()
    want, steps = _jacobi_numpy(b, tol)
    assert steps > 5
    assert iterations.copy_to_host(np.empty(1, np.int32))[0] == steps
    np.testing.assert_allclose(x.copy_to_host(np.empty(n, np.float32)), want, atol=1e-5)


def test_a_thousand_nodes_of_chained_diamonds_replay_in_order(device, module):
    combine = module.get_kernel("combine")
    diamonds = 333
    nodes = 1 + 3 * diamonds
    v = device.alloc(nodes * 4)
    g = cuabi.Graph.create(device)
    a_of, b_of, made = [0] * nodes, [0] * nodes, [None] * nodes

    def add(k, a, b, after):
        a_of[k], b_of[k] = a, b
        made[k] = g.add_kernel_node(
            combine, 1, 1, (v, np.int32(k), np.int32(a), np.int32(b)), after=after
        )

    add(0, 0, 0, None)
    top = 0
    for d in range(diamonds):
        left, right, bottom = 1 + 3 * d, 2 + 3 * d, 3 + 3 * d
        add(left, top, top, made[top])
        add(right, top, left, made[top])
        made[right].add_dependency(made[left])
        add(bottom, left, right, made[left])
        made[bottom].add_dependency(made[right])
        top = bottom
    assert g.node_count == nodes
    assert made[3].dependency_count == 2
    want = np.zeros(nodes, np.uint32)
    with np.errstate(over="ignore"):
        for k in range(nodes):
            want[k] = want[a_of[k]] + np.uint32(2) * want[b_of[k]] + np.uint32(1)
    exe = g.instantiate()
    for _ in range(3):
        v.memset(0)
        exe.launch()
        device.synchronize()
        np.testing.assert_array_equal(v.copy_to_host(np.empty(nodes, np.uint32)), want)
