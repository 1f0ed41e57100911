"""A stream's attributes through the generated object layer, on both
backends: synchronization policy, priority and memory-sync domain round
trips, and the core's refusals (the bound in the message)."""

from __future__ import annotations

import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu


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
