"""Tensor maps on both backends: a Hopper (sm_90) kernel copies 32 x 8 tiles
of a 2D float tensor into shared memory with cp.async.bulk.tensor through a
cuabi.TensorMap passed by value, and dumps each tile as it landed; checked
against NumPy without swizzle and with the 128-byte swizzle, then again after
the map's address is replaced. The core's refusals carry their bounds."""

from __future__ import annotations

import numpy as np
import pytest

import cuabi
from cuabi import TensorDataType, TensorSwizzle

pytestmark = pytest.mark.gpu

TILES = r"""
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

extern "C" __global__ void copy_tiles(const __grid_constant__ TensorMap map, float* out,
                                      int tiles_x) {
  __shared__ __align__(1024) float tile[256];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned mbar = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(mbar), "r"(1u) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int x = static_cast<int>(blockIdx.x % tiles_x) * 32;
    const int y = static_cast<int>(blockIdx.x / tiles_x) * 8;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(mbar), "r"(1024u) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y),
          "r"(mbar)
        : "memory");
  }
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(mbar), "r"(0u)
        : "memory");
  }
  out[blockIdx.x * 256 + threadIdx.x] = tile[threadIdx.x];
}
"""
ROWS, COLS, BOX_X, BOX_Y = 64, 128, 32, 8
TILES_X = COLS // BOX_X
N_TILES = TILES_X * (ROWS // BOX_Y)


def expected(host: np.ndarray, mask: int) -> np.ndarray:
    """The kernel's dump: each tile's element (r, c) at its byte offset in
    the box, 16-byte chunks XORed with the 128-byte row (``mask`` its bits)."""
    out = np.zeros(N_TILES * BOX_X * BOX_Y, np.float32)
    r, c = np.meshgrid(np.arange(BOX_Y), np.arange(BOX_X), indexing="ij")
    o = (r * BOX_X + c) * 4
    s = (o ^ (((o >> 7) & mask) << 4)) // 4
    for b in range(N_TILES):
        x0, y0 = (b % TILES_X) * BOX_X, (b // TILES_X) * BOX_Y
        out[b * 256 + s] = host[y0 + r, x0 + c]
    return out


@pytest.fixture
def tiles(device):
    major, _ = device.compute_capability
    if major < 9:
        pytest.skip(f"tensor maps need compute capability 9.0, not {major}.x")
    return device.compile(TILES, name="tiles.cu").get_kernel("copy_tiles")


def make_map(buf, swizzle):
    return cuabi.TensorMap.tiled(buf, TensorDataType.FLOAT32, (COLS, ROWS), (4, COLS * 4),
                                 (BOX_X, BOX_Y), swizzle=swizzle)


def run(device, kernel, tmap) -> np.ndarray:
    out = device.zeros(ROWS * COLS, np.float32)
    kernel(N_TILES, BOX_X * BOX_Y, (tmap, out, np.int32(TILES_X)))
    device.synchronize()
    return out.copy_to_host()


@pytest.mark.parametrize("swizzle,mask", [(TensorSwizzle.NONE, 0), (TensorSwizzle.B128, 7)])
def test_tiles_match_numpy_then_after_replace(device, tiles, swizzle, mask):
    rng = np.random.default_rng(9)
    host = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    host2 = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    a = device.to_device(host)
    tmap = make_map(a, swizzle)
    assert len(tmap.bytes) == cuabi.TENSOR_MAP_BYTES
    if mask:
        assert not np.array_equal(expected(host, mask), expected(host, 0))
    np.testing.assert_array_equal(run(device, tiles, tmap), expected(host, mask))
    b = device.to_device(host2)
    tmap.replace_address(b, 0)
    del b  # the map keeps its new buffer alive
    np.testing.assert_array_equal(run(device, tiles, tmap), expected(host2, mask))


def test_a_prepared_launch_takes_the_map(device, tiles):
    host = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    tmap = make_map(device.to_device(host), TensorSwizzle.NONE)
    for _ in range(2):  # the second launch takes the compiled packing
        np.testing.assert_array_equal(run(device, tiles, tmap), expected(host, 0))


def refused(call, *pieces: str) -> None:
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        call()
    for piece in pieces:
        assert piece in info.value.message, info.value.message


def test_refusals_name_the_bound(device):
    buf = device.zeros(1 << 14, np.float32)
    F = TensorDataType.FLOAT32
    tiled = cuabi.TensorMap.tiled
    refused(lambda: tiled(buf, F, (64, 64), (4, 256), (32, 8), offset=8), "16-byte aligned")
    refused(lambda: tiled(buf, F, (1,) * 6, (4,) * 6, (1,) * 6), "rank (num_sizes) is 6")
    refused(lambda: tiled(buf, F, (64, 64), (4, 260), (32, 8)), "not a multiple of 16")
    refused(lambda: tiled(buf, F, (64, 64), (4, 256), (32, 257)), "box[1] is 257, not within 1 to 256")
    refused(lambda: tiled(buf, F, (64, 64), (4, 256), (64, 8), swizzle=TensorSwizzle.B64),
            "more than the 64-byte span")
    refused(lambda: tiled(buf, F, (64, 64), (4, 256), (32,)), "box has 1 entries, not 2")
    refused(lambda: tiled(buf, F, (64, 1 << 20), (4, 256), (32, 8)), "past the buffer's")
    refused(lambda: cuabi.TensorMap.im2col(buf, F, (16, 4, 4, 2), (4, 64, 256, 1024), (-200, 0),
                                           (0, 0), 16, 16),
            "lower_corner[0] is -200, not within -128 to 127 for rank 4")
    tmap = tiled(buf, F, (64, 64), (4, 256), (32, 8))
    refused(lambda: tmap.replace_address(buf, 4), "16-byte aligned")
