"""Fault injection through the Python objects, no GPU: the SAXPY flow against
the stand-in driver and NVRTC (tests/fake/), every driver and
NVRTC call failed in turn, on each backend. See fault_driver.py for what a
run must do to count as handled.

cuabi reads CUABI_DRIVER_PATH and CUABI_NVRTC_PATH once per process, so each
backend's run is a child process of its own (the rest of the suite keeps the
real driver, or its absence). The stand-in exists only in a CMake build; its
path comes from $CUABI_FAULT_FAKE_DRIVER (set by the CTest registration and by
run-tests.sh), and the test is skipped, with the reason, without it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import BACKEND_PARAMS

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "fault_driver.py")


def _fake_driver() -> str:
    path = os.environ.get("CUABI_FAULT_FAKE_DRIVER", "")
    if not path:
        pytest.skip(
            "CUABI_FAULT_FAKE_DRIVER is not set (the stand-in driver "
            "build/tests/fault/libcuabi_fault_fake_cuda.so comes with a CMake build)"
        )
    if not os.path.isfile(path):
        pytest.skip(f"CUABI_FAULT_FAKE_DRIVER={path} does not exist (build it with CMake)")
    return os.path.abspath(path)


@pytest.mark.parametrize("backend_name", BACKEND_PARAMS)
def test_fault_injection(backend_name, subprocess_env, tmp_path, capsys):
    """Each call of the SAXPY flow failed in turn: a CudaError naming the
    failed entry point (or verified results), no leak once the objects are
    collected, and the flow passes right after with no fault."""
    fake = _fake_driver()
    env = dict(
        subprocess_env,
        CUABI_DRIVER_PATH=fake,
        CUABI_NVRTC_PATH=fake,
        CUABI_BACKEND=backend_name,
        CUABI_CACHE_DIR=str(tmp_path / "cache"),
    )
    env.pop("CUABI_CACHE", None)
    done = subprocess.run(
        [sys.executable, DRIVER, fake],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = done.stdout + done.stderr
    counts = [
        line for line in done.stdout.splitlines() if line.startswith("fault injection (")
    ]
    # The count line, at the start of a line of the suite's output (what
    # scripts/test gathers from the CTest log), whatever pytest's capture.
    with capsys.disabled():
        sys.stdout.write("\n" + "".join(line + "\n" for line in counts))
        sys.stdout.flush()
    if done.returncode < 0:
        pytest.fail(f"the fault-injection run crashed (signal {-done.returncode}):\n{output}")
    assert done.returncode == 0, f"runs not handled (exit {done.returncode}):\n{output}"
    summary = [line for line in counts if "calls failed in turn" in line]
    assert summary, f"no count line in the output:\n{output}"
    m = re.search(r": (\d+) calls failed in turn, (\d+) handled$", summary[-1])
    assert m, summary[-1]
    failed, handled = int(m.group(1)), int(m.group(2))
    assert failed > 0 and failed == handled, output
