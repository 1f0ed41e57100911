"""The primary context's limits through the object layer (cuabi_device_get_limit,
cuabi_device_set_limit, cuabi_device_reset_persisting_l2), on both backends:
round trips, the refusals the core decides, and device printf through a
FIFO raised in a fresh process (the FIFO and the heap can only change before
a context's first kernel that uses them; afterwards the refusal says so)
keeping every line."""

from __future__ import annotations

import subprocess
import sys

import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu

Limit = _api.Limit
MAX_PERSISTING_L2 = 108  # CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE

CHILD = r"""
import sys
import numpy as np
import cuabi
from cuabi import _api
dev = cuabi.Device(0)
# Before any kernel ran: the heap round-trips, the FIFO is raised.
heap = dev.get_limit(_api.Limit.MALLOC_HEAP_SIZE)
dev.set_limit(_api.Limit.MALLOC_HEAP_SIZE, heap * 2 + 4096)
assert dev.get_limit(_api.Limit.MALLOC_HEAP_SIZE) >= heap * 2 + 4096
dev.set_limit(_api.Limit.MALLOC_HEAP_SIZE, heap)
if sys.argv[1] == "raise":
    dev.set_limit(_api.Limit.PRINTF_FIFO_SIZE, 16 << 20)
    assert dev.get_limit(_api.Limit.PRINTF_FIFO_SIZE) >= 16 << 20
print("fifo", dev.get_limit(_api.Limit.PRINTF_FIFO_SIZE), flush=True)
src = ('extern "C" __global__ void chatter(int n) {'
       ' const int i = blockIdx.x * blockDim.x + threadIdx.x;'
       ' if (i < n) printf("cuabi printf line %08d ..............................\\n", i); }')
k = dev.compile(src).get_kernel("chatter")
n = 40000
k((n + 127) // 128, 128, (np.int32(n),))
dev.synchronize()
# After a printing kernel ran, the driver refuses a new FIFO size.
try:
    dev.set_limit(_api.Limit.PRINTF_FIFO_SIZE, 32 << 20)
    print("refusal: none", flush=True)
except cuabi.InvalidArgumentError as e:
    print("refusal:", e, flush=True)
"""


# The printf FIFO and malloc heap sizes change only before the context's
# first kernel that uses them: their round trips run in test_printf_fifo's
# fresh child process.
@pytest.mark.parametrize("limit", [Limit.STACK_SIZE])
def test_limit_round_trips(device, limit):
    before = device.get_limit(limit)
    assert before > 0
    want = before * 2 + 4096
    device.set_limit(limit, want)
    assert device.get_limit(limit) >= want  # the driver may round up, never down
    device.set_limit(limit, before)


def test_persisting_l2_within_the_device_maximum(device):
    most = device.get_attribute(MAX_PERSISTING_L2)
    if most <= 0:
        pytest.skip("this device has no persisting L2 set-aside")
    device.set_limit(Limit.PERSISTING_L2_CACHE_SIZE, most // 2)
    assert most // 2 <= device.get_limit(Limit.PERSISTING_L2_CACHE_SIZE) <= most
    device.reset_persisting_l2()
    with pytest.raises(cuabi.InvalidArgumentError, match=f"maximum of {most} bytes"):
        device.set_limit(Limit.PERSISTING_L2_CACHE_SIZE, most + 1)
    device.set_limit(Limit.PERSISTING_L2_CACHE_SIZE, 0)


def test_unknown_limit_is_refused_by_name(device):
    with pytest.raises(cuabi.InvalidArgumentError, match="limit is 42, not one of"):
        device.get_limit(42)


@pytest.mark.parametrize("mode", ["raise"])
def test_printf_fifo(device, backend, subprocess_env, mode):
    env = dict(subprocess_env, CUABI_BACKEND=backend.name)
    p = subprocess.run([sys.executable, "-c", CHILD, mode], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = sum(1 for line in p.stdout.splitlines() if line.startswith("cuabi printf line "))
    assert lines == 40000, p.stdout[:200]
    refusal = [line for line in p.stdout.splitlines() if line.startswith("refusal:")]
    assert len(refusal) == 1 and "CUABI_LIMIT_PRINTF_FIFO_SIZE" in refusal[0], refusal
    assert "only before the first kernel that uses printf" in refusal[0], refusal
