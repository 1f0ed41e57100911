"""Without a usable CUDA driver: DriverNotFoundError (listing what was tried),
StubDriverError for the toolkit's stub library. Run in child processes with
CUABI_DRIVER_PATH, so they hold on a GPU machine too (the core remembers a
driver-load failure for the life of the process)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import textwrap

import pytest

PROBE = """
import cuabi
for name, call in (("device_count", cuabi.device_count), ("Device", lambda: cuabi.Device(0)),
                   ("init", cuabi.init), ("driver_version", cuabi.driver_version)):
    try:
        call()
        print(name, "OK")
    except cuabi.CudaError as e:
        print(name, type(e).__name__, e.status, e.name)
        print("MESSAGE", e.message.replace("\\n", " | "))
# NVRTC needs no driver: compiling still works
p = cuabi.Program('extern "C" __global__ void f() {}').compile(["-arch=compute_75"])
print("compile OK", ".entry f" in p.ptx)
"""


def _run(env: dict, backend: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE)],
        env=dict(env, CUABI_BACKEND=backend),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_missing_driver_raises_driver_not_found(subprocess_env, tmp_path, backend):
    missing = str(tmp_path / "no" / "libcuda.so.1")
    out = _run(dict(subprocess_env, CUABI_DRIVER_PATH=missing), backend.name)
    for name in ("device_count", "Device", "init", "driver_version"):
        assert f"{name} DriverNotFoundError 9 CUABI_ERROR_DRIVER_NOT_FOUND" in out, out
    assert missing in out  # the message names what was tried
    assert "compile OK True" in out


def _stub_driver():
    roots = [
        os.environ.get("CUDA_HOME"),
        os.environ.get("CUDA_PATH"),
        "/usr/local/cuda",
    ]
    for root in filter(None, roots):
        for path in glob.glob(
            os.path.join(root, "lib*", "stubs", "libcuda.so")
        ) + glob.glob(os.path.join(root, "targets", "*", "lib", "stubs", "libcuda.so")):
            return path
    return None


@pytest.mark.skipif(
    _stub_driver() is None, reason="the CUDA toolkit's stub libcuda.so is absent"
)
def test_stub_driver_raises_stub_driver_error(subprocess_env, backend):
    out = _run(dict(subprocess_env, CUABI_DRIVER_PATH=_stub_driver()), backend.name)
    assert "device_count StubDriverError 10 CUABI_ERROR_STUB_DRIVER" in out, out
    assert "Device StubDriverError" in out
    assert "compile OK True" in out
