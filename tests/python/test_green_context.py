"""Green contexts on both backends: the device's SM resource, a split into
groups and a remainder, a green context of one group and its streams
(ordinary Streams). A kernel recording %smid from every block reaches at most
the group's SMs on the green context's stream and more on the primary
context's; the core's refusals carry their bounds."""

from __future__ import annotations

import numpy as np
import pytest

import cuabi

pytestmark = pytest.mark.gpu

SMID = r"""
extern "C" __global__ void record_smid(unsigned* out, long long spin) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = id;
}
"""
BLOCKS = 1024


def sms_seen(kernel, out, stream) -> set:
    out.memset(0xFF, stream=stream)
    kernel(BLOCKS, 64, (out, np.int64(200000)), stream=stream)
    ids = out.copy_to_host(stream=stream)
    stream.synchronize()
    assert (ids != 0xFFFFFFFF).all(), "a block recorded nothing"
    return set(int(i) for i in ids)


def test_device_resource_describes_its_sms(device):
    res = device.sm_resource
    assert isinstance(res, cuabi.SmResource)
    assert res.sm_count == device.attribute(16)  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    assert res.min_partition_size > 0 and res.alignment > 0
    groups = res.get_group_count(0)
    assert groups >= 1 and groups * res.min_partition_size <= res.sm_count


def test_kernel_on_a_green_context_stays_on_its_sms(device):
    res = device.sm_resource
    total = res.sm_count
    groups, rest = res.split_groups(2)
    n = groups[0].sm_count
    assert groups[1].sm_count == n
    assert n + groups[1].sm_count + rest.sm_count == total
    green = groups[0].create_green_context()
    assert green.sm_count == n
    gs = green.create_stream()
    assert isinstance(gs, cuabi.Stream)
    green.check_stream(gs)
    kernel = device.compile(SMID, name="smid.cu").get_kernel("record_smid")
    out = device.zeros(BLOCKS, np.uint32)
    # What the stream was made from stays alive without these.
    green.close()
    for g in groups:
        g.close()
    on_green = sms_seen(kernel, out, gs)
    assert len(on_green) <= n, f"ran on {len(on_green)} SMs, more than the context's {n}"
    with device.create_stream(non_blocking=True) as primary:
        on_primary = sms_seen(kernel, out, primary)
    assert len(on_primary) > n, f"the primary context reached only {len(on_primary)} SMs"
    # An ordinary stream: copies ordered on it work too.
    host = np.arange(BLOCKS, dtype=np.uint32)
    buf = device.to_device(host, gs)
    back = buf.copy_to_host(stream=gs)
    gs.synchronize()
    np.testing.assert_array_equal(back, host)


def test_context_resource_splits_again(device):
    res = device.sm_resource
    if res.sm_count < 4 * res.min_partition_size:
        pytest.skip("too few SMs to split twice")
    align = res.alignment
    want = -(-2 * res.min_partition_size // align) * align
    green = res.split(1, want, 0).create_green_context()
    mine = green.sm_resource
    assert mine.sm_count >= want
    piece = mine.split(1, 0, 0)
    assert res.min_partition_size <= piece.sm_count <= mine.sm_count


def refused(call, *pieces: str) -> None:
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        call()
    for piece in pieces:
        assert piece in info.value.message, info.value.message


def test_refusals_name_the_bound(device):
    res = device.sm_resource
    total, align = res.sm_count, res.alignment
    refused(lambda: res.split(0), "group_count is 0")
    refused(lambda: res.split(1, total + align), f"{total} SMs")
    if align > 1:
        refused(lambda: res.split(1, align + 1), f"not a multiple of {align}")
    refused(lambda: res.split(total + 1), f"the resource has {total} SMs")
    refused(lambda: res.split(1, 0, 2), "index 2 is past group_count 1")
    part = res.split(1)
    refused(lambda: part.split(1), "does not split again")
    g1 = res.split(2, 0, 0).create_green_context()
    g2 = res.split(2, 0, 1).create_green_context()
    s2 = g2.create_stream()
    refused(lambda: g1.check_stream(s2), "another green context")
    with device.create_stream() as plain:
        refused(lambda: g1.check_stream(plain), "primary context")
    s1 = g1.create_stream()
    g1.close()
    with pytest.raises(cuabi.InvalidHandleError):
        g1.sm_count
    s1.synchronize()  # the stream keeps its context
