"""The two SAXPY examples, run as scripts: verified on a device; without one,
they compile the kernel, say that no CUDA device was found and exit non-zero."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import EXAMPLES, no_device_reason


@pytest.mark.parametrize(
    "script,backend_name",
    [
        ("saxpy.py", "ctypes"),
        ("saxpy_pythonic.py", "ctypes"),
        ("saxpy_pythonic.py", "cffi"),
    ],
)
def test_example_runs(script, backend_name, subprocess_env):
    if backend_name == "cffi":
        pytest.importorskip("cffi", reason="cffi is not installed")
    env = dict(subprocess_env, CUABI_BACKEND=backend_name)
    done = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    if no_device_reason():
        assert done.returncode == 2, output
        assert "No CUDA device found" in done.stderr
        assert "compiled saxpy with NVRTC" in output
    else:
        assert done.returncode == 0, output
        assert "check: OK" in done.stdout
        assert re.search(r"kernel time: \d+\.\d+ ms", done.stdout)
        if script == "saxpy_pythonic.py":
            assert "suggested config: OK; graph replay: OK" in done.stdout
        if script == "saxpy.py":
            assert "refused as it should be" in done.stdout
            assert "parameter 4 is 8 bytes" in done.stdout
            assert "launch plan: OK" in done.stdout
