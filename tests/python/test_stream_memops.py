"""Stream memory operations through the generated object layer, on both
backends: a kernel held back by a wait on pinned host memory until the host
writes the word; two streams ordered by a written and awaited word alone;
and the word checks the core makes (the same refusals as the C corpus)."""

from __future__ import annotations

import contextlib
import gc
import time

import numpy as np
import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu

Wait = _api.WaitCondition
Flag = _api.MemOpFlag

SOURCE = r"""
extern "C" __global__ void spin_then_fill(float* x, int n, float v, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = v;
}
extern "C" __global__ void copy(float* y, const float* x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = x[i];
}
"""


@contextlib.contextmanager
def no_collection():
    """While a stream waits on a word that later work writes, nothing may
    synchronize the device: a buffer freed by the garbage collector then
    (cuMemFree synchronizes) would wait for the word forever. The collector
    runs first and stays off for the block."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_kernel_waits_for_the_host_to_write_the_word(device):
    fill = device.compile(SOURCE).get_kernel("spin_then_fill")
    stream = device.create_stream(non_blocking=True)
    host = device.host_alloc(64)
    word = host.as_array("uint32")
    word[0] = 0
    n = 1 << 16
    x = device.zeros(n, np.float32)
    fill(1, 1, (x, np.int32(0), np.float32(0), np.int64(0)), stream=stream)  # loads the kernel
    stream.synchronize()
    with no_collection():
        stream.wait_value_host(host, 0, 7, 4, Wait.GEQ, 0)
        fill(64, 256, (x, np.int32(n), np.float32(3.5), np.int64(0)), stream=stream)
        try:
            time.sleep(0.2)
            assert not stream.query(), "the kernel ran before the host wrote the word"
            word[0] = 6
            time.sleep(0.1)
            assert not stream.query()
        finally:
            word[0] = 7  # never leave the stream waiting
            stream.synchronize()
    assert (x.copy_to_host() == 3.5).all()


def test_producer_and_consumer_ordered_by_a_word_alone(device):
    module = device.compile(SOURCE)
    fill, copy = module.get_kernel("spin_then_fill"), module.get_kernel("copy")
    producer = device.create_stream(non_blocking=True)
    consumer = device.create_stream(non_blocking=True)
    n = 1 << 20
    x, y, flag = device.zeros(n, np.float32), device.zeros(n, np.float32), device.zeros(1, np.uint64)
    # Both kernels loaded before any stream waits.
    copy(1, 1, (y, x, np.int32(0)), stream=consumer)
    fill(1, 1, (x, np.int32(0), np.float32(0), np.int64(0)), stream=producer)
    device.synchronize()
    for round_ in (1, 2, 3):
        v = np.float32(round_ * 10)
        with no_collection():
            consumer.wait_value(flag, 0, round_, 8, Wait.EQ, 0)
            copy(64, 256, (y, x, np.int32(n)), stream=consumer)
            fill(64, 256, (x, np.int32(n), v, np.int64(50_000_000)), stream=producer)
            producer.write_value(flag, 0, round_, 8, 0)
            consumer.synchronize()
        assert (y.copy_to_host() == v).all(), f"round {round_}: the consumer read before the word"
    assert int(flag.copy_to_host()[0]) == 3


def test_words_of_both_widths_land_where_asked(device):
    stream = device.create_stream(non_blocking=True)
    b = device.zeros(8, np.uint64)
    stream.write_value(b, 4, 0x01020304, 4, 0)
    with pytest.raises(cuabi.NotSupportedError, match="CUABI_MEM_OP_NO_MEMORY_BARRIER"):
        stream.write_value(b, 16, 1, 8, Flag.NO_MEMORY_BARRIER)
    stream.write_value(b, 16, 0x1122334455667788, 8, 0)
    stream.wait_value(b, 16, 0x8, 8, Wait.AND, 0)
    stream.synchronize()
    raw = b.copy_to_host().view(np.uint8)
    assert raw[4:8].view(np.uint32)[0] == 0x01020304
    assert raw[16:24].view(np.uint64)[0] == 0x1122334455667788
    assert raw[:4].sum() == 0 and raw[24:].sum() == 0


@pytest.mark.parametrize(
    "args, error, needle",
    [
        ((0, 1, 3, 0), cuabi.InvalidArgumentError, "width is 3; a word is 4 or 8 bytes"),
        ((6, 1, 4, 0), cuabi.InvalidArgumentError, "offset 6 is not a multiple of the width"),
        ((64, 1, 8, 0), cuabi.OutOfRangeError, "reaches past the end of the 64-byte buffer"),
        ((0, 1 << 32, 4, 0), cuabi.InvalidArgumentError, "does not fit in a 4-byte word"),
        ((0, 1, 4, int(Flag.FLUSH)), cuabi.InvalidArgumentError,
         "CUABI_MEM_OP_FLUSH is for a wait, not a write"),
    ],
)
def test_word_checks(device, args, error, needle):
    stream = device.create_stream(non_blocking=True)
    b = device.zeros(8, np.uint64)
    with pytest.raises(error, match=needle):
        stream.write_value(b, *args)


def test_unknown_wait_condition(device):
    stream = device.create_stream(non_blocking=True)
    b = device.zeros(8, np.uint64)
    with pytest.raises(cuabi.InvalidArgumentError, match="condition is 9, not one of"):
        stream.wait_value(b, 0, 1, 4, 9, 0)
