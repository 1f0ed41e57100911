"""A stream's attributes through the generated object layer, on both
backends: synchronization policy, priority, memory-sync domain and the L2
access-policy window (a value type, cuabi.AccessPolicyWindow) round trips,
the core's refusals (the bound in the message), and a kernel run on a
stream with a window set."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import cuabi
from cuabi import _api

from kernels import SAXPY

pytestmark = pytest.mark.gpu

Prop = _api.AccessProperty
# CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE in cuda.h: the largest
# window (num_bytes) the device takes; 0 where it has none.
MAX_ACCESS_POLICY_WINDOW_SIZE = 109
SET_WINDOW = "cuabi_stream_set_access_policy_window: "


def test_sync_policy_round_trips(device):
    s = device.create_stream(non_blocking=True)
    for policy in (_api.SyncPolicy.SPIN, _api.SyncPolicy.YIELD, _api.SyncPolicy.BLOCKING_SYNC,
                   _api.SyncPolicy.AUTO):
        s.set_sync_policy(policy)
        assert s.sync_policy == policy
    with pytest.raises(cuabi.InvalidArgumentError, match="policy is 0, not one of"):
        s.set_sync_policy(0)


def test_priority_within_the_device_range(device):
    s = device.create_stream(non_blocking=True)
    least, greatest = device.stream_priority_range
    s.set_priority(greatest)
    assert s.priority == greatest
    with pytest.raises(cuabi.InvalidArgumentError,
                       match=rf"{greatest} \(highest\) to {least} \(lowest\)"):
        s.set_priority(greatest - 1)


def test_memory_sync_domain_round_trips(device):
    s = device.create_stream(non_blocking=True)
    s.set_memory_sync_domain(_api.MemSyncDomain.REMOTE)
    assert s.memory_sync_domain == _api.MemSyncDomain.REMOTE
    with pytest.raises(cuabi.InvalidArgumentError, match="domain is 7, not one of"):
        s.set_memory_sync_domain(7)


def max_window(device) -> int:
    most = device.attribute(MAX_ACCESS_POLICY_WINDOW_SIZE)
    if most <= 0:
        pytest.skip(f"device {device.ordinal} takes no access-policy window "
                    "(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE is 0)")
    return most


def test_access_policy_window_round_trips(device):
    most = max_window(device)
    s = device.create_stream(non_blocking=True)
    assert s.access_policy_window.bytes == 0  # none set yet
    buf = device.zeros(1 << 20, np.uint8)
    nbytes = min(buf.nbytes, most)
    # Every field other than the init's (hit_ratio 1, PERSISTING, STREAMING),
    # in values a float holds exactly.
    for hit_ratio, hit, miss in ((0.75, Prop.PERSISTING, Prop.NORMAL),
                                 (0.25, Prop.STREAMING, Prop.STREAMING)):
        window = cuabi.AccessPolicyWindow(base=buf.ptr, bytes=nbytes, hit_ratio=hit_ratio,
                                          hit_property=hit, miss_property=miss)
        s.set_access_policy_window(window)
        got = s.access_policy_window
        assert isinstance(got, cuabi.AccessPolicyWindow)
        assert (got.base, got.bytes, got.hit_ratio, got.hit_property, got.miss_property) == (
            buf.ptr, nbytes, hit_ratio, hit, miss)
        assert type(got.hit_property) is Prop and type(got.miss_property) is Prop
    # Keyword fields: the init's defaults, then those given.
    s.set_access_policy_window(base=buf.ptr, bytes=nbytes // 2)
    defaults = cuabi.AccessPolicyWindow.defaults(device.backend)
    assert s.access_policy_window == dataclasses.replace(defaults, base=buf.ptr, bytes=nbytes // 2)
    # Keyword fields over a value.
    s.set_access_policy_window(window, hit_ratio=0.5)
    assert s.access_policy_window == dataclasses.replace(window, hit_ratio=0.5)
    # bytes 0: no window.
    s.set_access_policy_window(bytes=0)
    assert s.access_policy_window.bytes == 0


def refused(call, *pieces: str) -> None:
    """``call`` raises InvalidArgumentError with the core's message, naming
    the call and holding each of ``pieces``."""
    with pytest.raises(cuabi.InvalidArgumentError) as info:
        call()
    message = info.value.message
    assert message.startswith(SET_WINDOW), message
    for piece in pieces:
        assert piece in message, message


def test_access_policy_window_refusals(device):
    most = max_window(device)
    s = device.create_stream(non_blocking=True)
    buf = device.zeros(1 << 16, np.uint8)
    kept = cuabi.AccessPolicyWindow(base=buf.ptr, bytes=min(buf.nbytes, most), hit_ratio=0.5,
                                    hit_property=Prop.PERSISTING, miss_property=Prop.NORMAL)
    s.set_access_policy_window(kept)
    base = buf.ptr
    # Bytes past the device's maximum window.
    refused(lambda: s.set_access_policy_window(base=base, bytes=most + 1),
            f"window->bytes is {most + 1}, past device {device.ordinal}'s maximum window of "
            f"{most} bytes (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)")
    # A hit ratio outside [0, 1].
    refused(lambda: s.set_access_policy_window(base=base, bytes=256, hit_ratio=1.5),
            "window->hit_ratio is 1.500000; it is from 0 to 1")
    refused(lambda: s.set_access_policy_window(base=base, bytes=256, hit_ratio=-0.25),
            "window->hit_ratio is -0.250000; it is from 0 to 1")
    # An unknown property.
    refused(lambda: s.set_access_policy_window(base=base, bytes=256, hit_property=7),
            "window->hit_property is 7, not one of CUABI_ACCESS_PROPERTY_NORMAL (0), "
            "_STREAMING (1), _PERSISTING (2)")
    refused(lambda: s.set_access_policy_window(base=base, bytes=256, miss_property=-1),
            "window->miss_property is -1, not one of CUABI_ACCESS_PROPERTY_NORMAL (0)")
    # A base of 0 with bytes.
    refused(lambda: s.set_access_policy_window(base=0, bytes=256),
            "window->base is 0 for a window of 256 bytes")
    # Nothing refused reached the stream.
    assert s.access_policy_window == kept


def test_a_kernel_runs_on_a_stream_with_a_window(device):
    most = max_window(device)
    saxpy = device.compile(SAXPY, options=["--fmad=false"], name="saxpy.cu").get_kernel("saxpy")
    n = 1 << 20
    rng = np.random.default_rng(5)
    hx = rng.random(n, dtype=np.float32)
    hy = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)
    with device.create_stream(non_blocking=True) as s:
        x = device.to_device(hx, s)
        y = device.to_device(hy, s)
        out = device.zeros(n, np.float32)
        window = cuabi.AccessPolicyWindow(base=x.ptr, bytes=min(x.nbytes, most), hit_ratio=0.6,
                                          hit_property=Prop.PERSISTING,
                                          miss_property=Prop.STREAMING)
        s.set_access_policy_window(window)
        saxpy((n + 255) // 256, 256, (a, x, y, out, np.uint64(n)), stream=s)
        result = out.copy_to_host(stream=s)
        s.synchronize()
        assert s.access_policy_window.bytes == window.bytes  # still set after the launch
    np.testing.assert_allclose(result, a * hx + hy, rtol=1e-6)
