"""The driver's own explanation on a real driver, on both backends: a limit
the driver refuses for a reason cuabi does not check first raises an error
whose message carries the lines the driver logged during that call, and
driver_log_read keeps the same line (as tests/c/gpu_driver_log_test.cc)."""

from __future__ import annotations

import pytest

import cuabi
from cuabi import _api

pytestmark = pytest.mark.gpu


def test_a_limit_the_driver_refuses_carries_its_explanation(device):
    if cuabi.driver_version() < 12090:
        pytest.skip("the driver keeps no log before CUDA 12.9")
    with pytest.raises(cuabi.InvalidArgumentError) as caught:
        device.set_limit(_api.Limit.STACK_SIZE, 1 << 40)
    message = str(caught.value)
    assert "; the driver logged: " in message, message
    assert "from cuCtxSetLimit" in message, message
    last = cuabi.driver_log_read(1)
    assert "][E] Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuCtxSetLimit" in last, last
