"""Launch attributes (LaunchConfig's access_policy_window, sync_policy,
cluster_scheduling, mem_sync_domain, mem_sync_domain_map, shared_carveout,
completion_event, device_updatable) on both backends: through a plain
launch, a prepared launch (a plan) and a captured graph's kernel node, each
checked against NumPy; the launch completion event orders a second stream;
the core's refusals reach Python with their bound."""

from __future__ import annotations

import numpy as np
import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu

# CUdevice_attribute values of cuda.h.
MAX_ACCESS_POLICY_WINDOW_SIZE = 109
MEM_SYNC_DOMAIN_COUNT = 126

SOURCE = r"""
extern "C" __global__ void fill(int* out, int k, unsigned n, unsigned* done)
{
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = (int)i * k + 1;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(done, 1u);
}

extern "C" __global__ void twice_after(const int* in, int* out, unsigned n,
                                       const unsigned* done, unsigned blocks, int* ok)
{
  __shared__ int reached;
  if (threadIdx.x == 0) {
    const long long start = clock64();
    reached = 0;
    while (clock64() - start < 4000000000LL) {
      if (*(volatile const unsigned*)done >= blocks) { reached = 1; break; }
    }
    if (blockIdx.x == 0) ok[0] = reached;
  }
  __syncthreads();
  __threadfence();
  if (!reached) return;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = 2 * ((volatile const int*)in)[i];
}
"""

N = 1 << 20


@pytest.fixture
def kit(device):
    module = device.compile(SOURCE, name="launch_attributes.cu")
    return module.get_kernel("fill"), module.get_kernel("twice_after")


def expected(k: int) -> np.ndarray:
    return np.arange(N, dtype=np.int64).astype(np.int32) * np.int32(k) + np.int32(1)


def attributes(device, out) -> dict:
    """Every launch attribute the device can honour, as LaunchConfig options."""
    options = {
        "mem_sync_domain": _api.MemSyncDomain.REMOTE,
        "shared_carveout": 25,
    }
    most = device.attribute(MAX_ACCESS_POLICY_WINDOW_SIZE)
    if most > 0:
        options["access_policy_window"] = cuabi.AccessPolicyWindow(
            base=out.ptr, bytes=min(out.nbytes, most), hit_ratio=0.75)
    if device.attribute(MEM_SYNC_DOMAIN_COUNT) >= 2:
        options["mem_sync_domain_map"] = (0, 1)
    if device.compute_capability[0] >= 9:
        options["cluster_scheduling"] = _api.ClusterSchedulingPolicy.SPREAD
    return options


def test_plain_launch_with_every_attribute(device, kit):
    fill, _ = kit
    out = device.zeros(N, np.int32)
    done = device.zeros(1, np.uint32)
    with device.create_stream(non_blocking=True) as s:
        fill(N // 256, 256, (out, np.int32(3), np.uint32(N), done), stream=s,
             **attributes(device, out))
        got = out.copy_to_host(stream=s)
        s.synchronize()
    np.testing.assert_array_equal(got, expected(3))


def test_prepared_launch_with_every_attribute(device, kit):
    fill, _ = kit
    out = device.zeros(N, np.int32)
    done = device.zeros(1, np.uint32)
    event = device.create_event(timing=False)
    with device.create_stream(non_blocking=True) as s:
        launch = fill.prepare(N // 256, 256, stream=s, completion_event=event,
                              **attributes(device, out))
        for k in (5, 7):
            launch(out, np.int32(k), np.uint32(N), done)
            got = out.copy_to_host(stream=s)
            s.synchronize()
            np.testing.assert_array_equal(got, expected(k))
    event.synchronize()
    assert event.query()


def test_captured_kernel_node_takes_the_attributes(device, kit):
    fill, _ = kit
    out = device.zeros(N, np.int32)
    done = device.zeros(1, np.uint32)
    with device.create_stream(non_blocking=True) as s:
        with s.capture("thread_local") as cap:
            fill(N // 256, 256, (out, np.int32(9), np.uint32(N), done), stream=s,
                 **attributes(device, out))
        assert cap.graph.kernel_node_count == 1
        exec_ = cap.graph.instantiate()
        exec_.launch(s)
        got = out.copy_to_host(stream=s)
        s.synchronize()
    np.testing.assert_array_equal(got, expected(9))


def test_device_updatable_kernel_node_only_in_a_capture(device, kit):
    fill, _ = kit
    out = device.zeros(N, np.int32)
    done = device.zeros(1, np.uint32)
    args = (out, np.int32(11), np.uint32(N), done)
    with device.create_stream(non_blocking=True) as s:
        with pytest.raises(cuabi.InvalidArgumentError,
                           match="the stream is not capturing a graph"):
            fill(N // 256, 256, args, stream=s, device_updatable=True)
        with s.capture("thread_local") as cap:
            fill(N // 256, 256, args, stream=s, device_updatable=True)
        exec_ = cap.graph.instantiate()
        exec_.upload(s)
        exec_.launch(s)
        got = out.copy_to_host(stream=s)
        s.synchronize()
    np.testing.assert_array_equal(got, expected(11))


def test_completion_event_orders_a_second_stream(device, kit):
    fill, twice_after = kit
    out = device.zeros(N, np.int32)
    copy = device.zeros(N, np.int32)
    done = device.zeros(1, np.uint32)
    ok = device.zeros(1, np.int32)
    started = device.create_event(timing=False)
    blocks = 64
    with device.create_stream(non_blocking=True) as first, \
            device.create_stream(non_blocking=True) as second:
        fill(blocks, 256, (out, np.int32(13), np.uint32(N), done), stream=first,
             completion_event=started)
        second.wait(started)
        twice_after(1, 256, (out, copy, np.uint32(N), done, np.uint32(blocks), ok),
                    stream=second)
        got = copy.copy_to_host(stream=second)
        reached = ok.copy_to_host(stream=second)
        second.synchronize()
        first.synchronize()
    assert started.query()
    assert reached[0] == 1, "the first kernel's blocks never all finished"
    np.testing.assert_array_equal(got, 2 * expected(13))


def test_refusals_carry_the_device_bound(device, kit):
    fill, _ = kit
    out = device.zeros(N, np.int32)
    done = device.zeros(1, np.uint32)
    args = (out, np.int32(1), np.uint32(N), done)
    domains = device.attribute(MEM_SYNC_DOMAIN_COUNT)
    with pytest.raises(cuabi.InvalidArgumentError,
                       match=f"domains 0 to {domains - 1}"):
        fill(N // 256, 256, args, mem_sync_domain_map=(0, domains))
    with pytest.raises(cuabi.InvalidArgumentError, match="outside 0 to 100 percent"):
        fill(N // 256, 256, args, shared_carveout=101)
    with pytest.raises(cuabi.InvalidArgumentError, match="hit_ratio is 1.500000"):
        fill(N // 256, 256, args, access_policy_window=cuabi.AccessPolicyWindow(
            base=out.ptr, bytes=4096, hit_ratio=1.5))
    with pytest.raises(cuabi.InvalidArgumentError,
                       match="completion_event was made without CUABI_EVENT_DISABLE_TIMING"):
        fill(N // 256, 256, args, completion_event=device.create_event(timing=True))
    with pytest.raises(cuabi.InvalidArgumentError, match="sync_policy is 9"):
        fill(N // 256, 256, args, sync_policy=9)
    with pytest.raises(cuabi.NotSupportedError, match="cuabi_stream_set_sync_policy"):
        fill(N // 256, 256, args, sync_policy=_api.SyncPolicy.SPIN)
    device.synchronize()

