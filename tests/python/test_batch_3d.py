"""3D batch copies on both backends (Stream.copy_3d_batch): boxes between
NumPy arrays, plain and pitched device buffers and arrays, several in one
call, each checked against the same box cut from the NumPy volume; and a
refusal naming the copy at fault, after which nothing of the batch ran."""

from __future__ import annotations

import numpy as np
import pytest

import cuabi
from cuabi import Copy3dOp

pytestmark = pytest.mark.gpu

D, H, W = 5, 6, 8


def volume() -> np.ndarray:
    return (np.arange(D * H * W, dtype=np.float32) * 3 + 0.5).reshape(D, H, W)


def test_boxes_between_host_buffers_pitched_memory_and_arrays(device):
    stream = device.create_stream(non_blocking=True)
    vol = volume()
    arr = cuabi.Array(device, (D, H, W), np.float32)
    arr2 = cuabi.Array(device, (D, H, W), np.float32)
    pitched = device.alloc_pitched(W * 4, H * D)
    row, rows = 64, 10
    plain = device.zeros(row * rows * D, np.uint8)
    tight = device.zeros(D * H * W, np.float32)
    stream.copy_3d_batch([
        Copy3dOp(arr, vol),
        Copy3dOp(pitched, vol, dst_height=H),
        # elements x 1..4, rows 2..4, slices 1..3 into rows of 64 bytes
        Copy3dOp(plain, vol[1:4, 2:5, 1:5], dst_origin=(8, 1, 1), dst_pitch=row, dst_height=rows),
    ])
    sub = np.full((2, 2, 3), -1, np.float32)
    plain_box = np.full((3, 3, 4), -1, np.float32)
    stream.copy_3d_batch([
        Copy3dOp(arr2, arr, (W * 4, H, D)),
        Copy3dOp(tight, pitched, (W * 4, H, D), src_height=H),
        Copy3dOp(sub, arr, src_origin=(2 * 4, 1, 1)),
        Copy3dOp(plain_box, plain, src_origin=(8, 1, 1), src_pitch=row, src_height=rows),
    ], prefer_overlap=True)
    back = np.full((D, H, W), -1, np.float32)
    wide = np.full((4, W + 2), -1, np.float32)
    stream.copy_3d_batch([
        Copy3dOp(back, arr2),
        # rows 1..4 of slice 2 of the pitched buffer into the first W of wider rows
        Copy3dOp(wide[:, :W], pitched, src_origin=(0, 1, 2), src_height=H),
    ])
    stream.synchronize()
    np.testing.assert_array_equal(back, vol)
    np.testing.assert_array_equal(tight.copy_to_host(), vol.ravel())
    np.testing.assert_array_equal(sub, vol[1:3, 1:3, 2:5])
    np.testing.assert_array_equal(plain_box, vol[1:4, 2:5, 1:5])
    np.testing.assert_array_equal(wide[:, :W], vol[2, 1:5, :])
    assert (wide[:, W:] == -1).all(), "a copy wrote past its box"
    want = np.zeros((D, rows, row // 4), np.float32)
    want[1:4, 1:4, 2:6] = vol[1:4, 2:5, 1:5]
    np.testing.assert_array_equal(plain.copy_to_host().view(np.float32).reshape(D, rows, row // 4), want)


def test_a_3d_batch_refusal_names_the_copy_and_queues_nothing(device):
    stream = device.create_stream(non_blocking=True)
    dev = device.zeros(4096, np.uint8)
    host = np.full((64, 16), 0x11, np.uint8)

    def box(x: int, y: int) -> Copy3dOp:
        return Copy3dOp(dev, host[:16], dst_origin=(x, y, 0), dst_pitch=64)

    copies = [box(0, 0), box(16, 0), box(0, 60)]
    with pytest.raises(cuabi.OutOfRangeError,
                       match=r"copies\[2\]: dst box reaches byte 4816 of the 4096-byte buffer"):
        stream.copy_3d_batch(copies)
    f32 = cuabi.Array(device, (D, H, W), np.float32)
    f32x4 = cuabi.Array(device, (D, H, W), np.float32, channels=4)
    with pytest.raises(cuabi.InvalidArgumentError,
                       match=r"copies\[1\]: the src array's elements are 4 bytes and the dst array's 16"):
        stream.copy_3d_batch([box(0, 0), Copy3dOp(f32x4, f32, (16, 1, 1))])
    with pytest.raises(cuabi.InvalidArgumentError, match=r"count is 0"):
        stream.copy_3d_batch([])
    with pytest.raises(TypeError, match=r"copies\[1\] must be a cuabi.Copy3dOp, not CopyOp"):
        stream.copy_3d_batch([box(0, 0), cuabi.CopyOp(dev, host, 16)])
    stream.synchronize()
    assert (dev.copy_to_host() == 0).all(), "a copy ran although the batch was refused"
    copies[2] = box(32, 0)
    stream.copy_3d_batch(copies)
    stream.synchronize()
    got = dev.copy_to_host().reshape(64, 64)
    want = np.zeros((64, 64), np.uint8)
    want[:16, :48] = 0x11
    np.testing.assert_array_equal(got, want)
