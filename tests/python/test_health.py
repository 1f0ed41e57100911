"""The driver's log, health, cuabi.on_context_lost and the launches a
sticky fault's ContextLostError carries, through the Python binding,
against the stand-in driver of tests/fake/ (no GPU), on each backend: each
case (health_child.py says what it checks) in a child process of its own,
as cuabi reads CUABI_DRIVER_PATH once per process and a lost context stays
lost.

The stand-in's path comes from $CUABI_FAULT_FAKE_DRIVER (set by the CTest
registration and by run-tests.sh), as for test_fault_injection.py; the test
is skipped, with the reason, without it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import BACKEND_PARAMS

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "health_child.py")


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


@pytest.mark.parametrize("case", ["log", "nologs", "lost", "lost_raising", "launches"])
@pytest.mark.parametrize("backend_name", BACKEND_PARAMS)
def test_against_the_stand_in(backend_name, case, subprocess_env, tmp_path):
    fake = _fake_driver()
    env = dict(
        subprocess_env,
        CUABI_DRIVER_PATH=fake,
        CUABI_NVRTC_PATH=fake,
        CUABI_BACKEND=backend_name,
        CUABI_CACHE_DIR=str(tmp_path / "cache"),
    )
    env.pop("FAKE_CUDA_NO_LOGS", None)
    if case == "nologs":
        env["FAKE_CUDA_NO_LOGS"] = "1"
    done = subprocess.run(
        [sys.executable, CHILD, fake, case], env=env, capture_output=True, text=True, timeout=120
    )
    output = done.stdout + done.stderr
    if done.returncode < 0:
        pytest.fail(f"the child crashed (signal {-done.returncode}):\n{output}")
    assert done.returncode == 0, f"exit {done.returncode}:\n{output}"
    assert f"{case} (Python {backend_name}): as expected" in done.stdout, output
