"""Batches on both backends: writes and waits in one call (a batch held back
by a word the host writes into pinned memory; producer and consumer streams
ordered by batched words alone), 1,000 copies of mixed directions in one
call, and batched prefetches and discards of managed memory; each refusal
naming the element at fault, with nothing queued."""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest

import cuabi
from cuabi import CopyOp, ManagedRange, MemOp, _api

pytestmark = pytest.mark.gpu

Wait = _api.WaitCondition


def test_a_batch_waits_for_the_host_to_write_the_word(device):
    stream = device.create_stream(non_blocking=True)
    host = device.host_alloc(64)
    words = host.as_array("uint32")
    words[:] = 0
    b = device.zeros(8, np.uint64)
    ops = [
        MemOp.wait(host, 0, 7, 4, Wait.GEQ),
        MemOp.write(b, 4, 0xC0DE, 4),
        MemOp.write(b, 8, 0x0102030405060708, 8),
        MemOp.write(host, 16, 0x5151, 4),
    ]
    gc.collect()
    gc.disable()
    try:
        stream.mem_op_batch(ops)
        try:
            time.sleep(0.2)
            assert not stream.query(), "the batch ran before the host wrote the word"
            assert words[4] == 0, "a write after the wait landed before it"
        finally:
            words[0] = 7  # never leave the stream waiting
            stream.synchronize()
    finally:
        gc.enable()
    assert words[4] == 0x5151
    raw = b.copy_to_host().view(np.uint8)
    assert raw[4:8].view(np.uint32)[0] == 0xC0DE
    assert raw[8:16].view(np.uint64)[0] == 0x0102030405060708
    assert raw[:4].sum() == 0 and raw[16:].sum() == 0


def test_producer_and_consumer_ordered_by_batched_words_alone(device):
    producer = device.create_stream(non_blocking=True)
    consumer = device.create_stream(non_blocking=True)
    n = 1 << 20
    x, y, flags = device.zeros(n, np.uint8), device.zeros(n, np.uint8), device.zeros(2, np.uint64)
    keep = []
    gc.collect()
    gc.disable()
    try:
        for round_ in (1, 2, 3):
            consumer.mem_op_batch(
                [MemOp.wait(flags, 0, round_, 4, Wait.EQ), MemOp.wait(flags, 8, round_ << 40, 8)]
            )
            consumer.copy_batch([CopyOp(y, x, n)])
            fill = np.full(n, round_ * 11, np.uint8)
            keep.append(fill)  # read when the producer reaches the copy
            producer.copy_batch([CopyOp(x, fill, n)])
            producer.mem_op_batch([MemOp.write(flags, 0, round_, 4), MemOp.write(flags, 8, round_ << 40, 8)])
            consumer.synchronize()
            producer.synchronize()
            got = y.copy_to_host()
            assert (got == round_ * 11).all(), f"round {round_}: the consumer read before the words"
    finally:
        gc.enable()


def test_a_thousand_copies_of_mixed_directions_in_one_call(device):
    stream = device.create_stream(non_blocking=True)
    copies, slot = 1000, 256
    nbytes = copies * slot
    dev = device.to_device(np.full(nbytes, 0x5A, np.uint8))
    rng = np.random.default_rng(7)
    src_pattern = rng.integers(0, 256, nbytes, dtype=np.uint8)
    dev_src = device.to_device(src_pattern)
    plain = rng.integers(0, 256, nbytes, dtype=np.uint8)
    pinned = device.host_alloc(nbytes)
    pinned_arr = pinned.as_array("uint8")
    pinned_arr[:] = rng.integers(0, 256, nbytes, dtype=np.uint8)
    back = np.full(nbytes, 0xEE, np.uint8)
    ops, sizes = [], []
    for i in range(copies):
        at, n = i * slot, 4 + (i * 37) % (slot - 4)
        sizes.append(n)
        kind = i % 4
        if kind == 0:
            ops.append(CopyOp(dev, plain, n, at, at))
        elif kind == 1:
            ops.append(CopyOp(back, dev_src, n, at, at))
        elif kind == 2:
            ops.append(CopyOp(dev, dev_src, n, at, at))
        else:
            ops.append(CopyOp(dev, pinned, n, at, at))
    stream.copy_batch(ops)
    stream.synchronize()
    got = dev.copy_to_host().view(np.uint8)
    want = np.full(nbytes, 0x5A, np.uint8)
    want_back = np.full(nbytes, 0xEE, np.uint8)
    for i, n in enumerate(sizes):
        at = i * slot
        kind = i % 4
        if kind == 0:
            want[at:at + n] = plain[at:at + n]
        elif kind == 1:
            want_back[at:at + n] = src_pattern[at:at + n]
        elif kind == 2:
            want[at:at + n] = src_pattern[at:at + n]
        else:
            want[at:at + n] = pinned_arr[at:at + n]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(back, want_back)


def test_a_copy_batch_refusal_names_the_copy_and_queues_nothing(device):
    stream = device.create_stream(non_blocking=True)
    dev = device.zeros(4096, np.uint8)
    host = np.full(4096, 9, np.uint8)
    ops = [CopyOp(dev, host, 8, i * 8, 0) for i in range(500)]
    ops[412] = CopyOp(dev, host, 200, 4000, 0)
    with pytest.raises(cuabi.OutOfRangeError, match=r"ops\[412\]: destination range \[4000, 4000 \+ 200\)"):
        stream.copy_batch(ops)
    ops[412] = CopyOp(dev, None, 8, 0, 0)
    with pytest.raises(cuabi.InvalidArgumentError, match=r"ops\[412\]: none of src_buffer"):
        stream.copy_batch(ops)
    stream.synchronize()
    assert not dev.copy_to_host().any(), "a copy ran although the batch was refused"


def test_a_mem_op_batch_refusal_names_the_element(device):
    stream = device.create_stream(non_blocking=True)
    b = device.zeros(8, np.uint64)
    with pytest.raises(cuabi.InvalidArgumentError, match=r"ops\[2\]: offset 6 is not a multiple"):
        stream.mem_op_batch([MemOp.write(b, 0, 1), MemOp.write(b, 8, 2, 8), MemOp.write(b, 6, 3)])
    with pytest.raises(cuabi.InvalidArgumentError, match="a batch holds at most 255"):
        stream.mem_op_batch([MemOp.write(b, 0, 1)] * 256)
    stream.synchronize()
    assert not b.copy_to_host().any(), "ops[0] ran although ops[2] was refused"


def test_managed_ranges_prefetched_and_discarded_in_one_call(device):
    if not device.attribute(89):  # CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
        pytest.skip("the device has no concurrent managed access")
    stream = device.create_stream(non_blocking=True)
    count, size = 64, 64 * 1024
    m = device.alloc_managed(count * size)
    host = m.host_array("uint32")
    host[:] = np.arange(host.size, dtype=np.uint32) * np.uint32(2654435761 & 0xFFFFFFFF)
    expect = host.copy()
    ranges = [ManagedRange(m, i * size, size) for i in range(count)]
    stream.prefetch_batch(ranges, device)
    copy = device.zeros(count * size, np.uint8)
    stream.copy_batch([CopyOp(copy, m, count * size)])
    stream.prefetch_batch(ranges, "host")
    stream.synchronize()
    np.testing.assert_array_equal(copy.copy_to_host().view(np.uint32), expect)
    stream.discard_batch(ranges)
    stream.discard_and_prefetch_batch(ranges, device)
    stream.synchronize()
    plain = device.zeros(size, np.uint8)
    ranges[5] = ManagedRange(plain, 0, size)
    with pytest.raises(cuabi.InvalidArgumentError, match=r"ranges\[5\]: the buffer is a device buffer"):
        stream.prefetch_batch(ranges, device)
    ranges[5] = ManagedRange(m, 5 * size, size)
    ranges[9] = ManagedRange(m, 9 * size, count * size)
    with pytest.raises(cuabi.OutOfRangeError, match=r"ranges\[9\]: discard range"):
        stream.discard_batch(ranges)
