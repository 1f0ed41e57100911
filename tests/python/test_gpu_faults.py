"""On a real GPU, on both backends: the launches a sticky fault's error
names, the profiler's start and stop, and device core dumps. Each fault
runs in a child process (gpu_fault_child.py), as it poisons the process
that takes it; this process's device stays usable (as
tests/hardening/fault_test.cc, tests/c/gpu_fault_child_test.cc and
tests/c/gpu_coredump_test.cc check in C and C++)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest

import cuabi

pytestmark = pytest.mark.gpu

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "gpu_fault_child.py")
SECTION = "GPU faults"
# Set before CUDA initialises, these take precedence over coredump_set.
COREDUMP_VARS = (
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    "CUDA_COREDUMP_FILE",
    "CUDA_COREDUMP_GENERATION_FLAGS",
    "CUDA_ENABLE_LIGHTWEIGHT_COREDUMP",
)


CHILD_SECONDS = 120


def _run_child(
    env: Dict[str, str], *args: str, seconds: int = CHILD_SECONDS, may_hang: bool = False
) -> Tuple[Optional[int], str]:
    """The child's exit status (or -signal) and its output. A child that does
    not exit in ``seconds`` is killed; the test then fails with what the
    child printed, or, with ``may_hang``, the status is None."""
    try:
        done = subprocess.run(
            [sys.executable, CHILD, *args], env=env, capture_output=True, text=True,
            timeout=seconds,
        )
    except subprocess.TimeoutExpired as exc:
        said = "".join(
            x.decode("utf-8", "replace") if isinstance(x, bytes) else (x or "")
            for x in (exc.stdout, exc.stderr)
        )
        if may_hang:
            return None, said
        pytest.fail(f"the child {' '.join(args)} did not exit in {seconds} s; it printed:\n{said}")
    return done.returncode, done.stdout + done.stderr


def _report(output: str) -> Dict[str, Any]:
    for line in output.splitlines():
        if line.startswith("REPORT "):
            report: Dict[str, Any] = json.loads(line[len("REPORT ") :])
            return report
    pytest.fail(f"the child printed no report:\n{output}")


def test_the_error_names_the_launches_not_seen_complete(device, subprocess_env, summary_line):
    name = device.backend.name
    rc, output = _run_child(dict(subprocess_env, CUABI_BACKEND=name), "launches")
    print(f"the child's report ({name}):\n{output}")
    assert rc == 0, f"the child exited {rc}:\n{output}"
    report = _report(output)
    a, b = report["a"], report["b"]
    assert report.get("cls") == "ContextLostError", report
    assert report["name"] == "CUABI_ERROR_CONTEXT_LOST", report
    message = report["message"]
    print(f"the fault, as {report['seen_by']} raised it:\n  {message}")
    assert (
        f"kernel 'write_far' grid (3, 1, 1) block (64, 1, 1) shared 0 bytes, launch 1 on stream {b} "
        "of device 0" in message
    ), message
    assert (
        f"kernel 'fill' grid (8, 1, 1) block (256, 1, 1) shared 0 bytes, launch 2 on stream {a}"
        in message
    ), message
    assert "grid (4, 1, 1)" not in message, f"the launch seen complete is named: {message}"
    logged = "; the driver logged: " in message
    assert logged or "the driver logged nothing during the failing call" in message, message
    said = "lines carried in the message" if logged else "none"
    print(f"the driver's log during the failing call: {said}")
    summary_line(f"Python {name}: the driver's log during the failing call: {said}", SECTION)

    # .launches: the most recent first; the third launch only where it ran.
    launches: List[Dict[str, Any]] = report["launches"]
    third_ran = report["seen_by"] == "device.synchronize"
    assert len(launches) == (3 if third_ran else 2), launches
    w = 1 if third_ran else 0  # where write_far is
    far = launches[w]
    assert far["kernel"] == "write_far", launches
    assert (far["grid_x"], far["grid_y"], far["grid_z"]) == (3, 1, 1), far
    assert (far["block_x"], far["block_y"], far["block_z"]) == (64, 1, 1), far
    assert (far["shared_mem_bytes"], far["stream_id"], far["sequence"], far["device"]) == (
        0, b, 1, 0), far
    first = launches[w + 1]
    assert first["kernel"] == "fill", launches
    assert (first["grid_x"], first["block_x"], first["stream_id"], first["sequence"]) == (
        8, 256, a, 2), first
    if third_ran:
        third = launches[0]
        assert (third["kernel"], third["grid_x"], third["block_x"], third["stream_id"],
                third["sequence"]) == ("fill", 16, 32, a, 3), third

    assert report["health"] == "LOST", report
    assert device.health == cuabi.Health.USABLE, "this process's device"


def test_the_profiler_starts_and_stops(device):
    # Without a profiler attached both do nothing, and succeed.
    device.profiler_start()
    device.profiler_stop()
    device.profiler_start()
    device.profiler_stop()
    assert device.health == cuabi.Health.USABLE


def test_a_faulting_child_writes_a_core_dump_only_when_enabled(
    backend, subprocess_env, tmp_path, summary_line
):
    env = {k: v for k, v in subprocess_env.items() if k not in COREDUMP_VARS}
    env["CUABI_BACKEND"] = backend.name
    off_dir, on_dir = tmp_path / "off", tmp_path / "on"
    off_dir.mkdir()
    on_dir.mkdir()

    # A child that faults and exits takes seconds: a minute is plenty.
    rc, output = _run_child(env, "coredump", "off", str(off_dir / "core.%p"), seconds=60)
    print(output)
    if rc == 77:  # the driver refuses even to turn them off (no dump settings at all)
        pytest.skip(f"this machine cannot set device core dumps: {output.strip()}")
    assert rc == 0, f"the child with dumps off exited {rc}:\n{output}"
    assert not list(off_dir.iterdir()), f"dumps off, yet written: {list(off_dir.iterdir())}"

    # With dumps on, a driver that cannot write them may report no fault and
    # then never let the process end: a child still there after 30 s is killed.
    rc, output = _run_child(
        env, "coredump", "on", str(on_dir / "core.%p"), seconds=30, may_hang=True
    )
    print(output)
    if rc == 77:
        pytest.skip(f"this machine cannot write device core dumps: {output.strip()}")
    written = [p for p in on_dir.iterdir() if p.name.startswith("core.")]
    if not written:
        # The driver wrote no dump here: said, and not counted as passed.
        ended = "did not exit in 30 s" if rc is None else f"exited {rc}"
        pytest.skip(
            f"the driver wrote no device core dump in {on_dir} (dumps enabled, lightweight, "
            f"no abort; the child {ended}): {' | '.join(output.split(chr(10))).strip()}"
        )
    assert rc is not None, f"the child with dumps on wrote {written} but did not exit:\n{output}"
    assert rc == 0, f"the child with dumps on exited {rc}:\n{output}"
    assert len(written) == 1, written
    dump = written[0]
    assert dump.name != "core.%p", "the pattern's %p was not replaced"
    assert dump.stat().st_size > 0, dump
    summary_line(f"Python {backend.name}: device core dump {dump.name}, "
                 f"{dump.stat().st_size} bytes", SECTION)


def test_a_devices_own_core_dump_setting(device, subprocess_env):
    """Bad settings are refused by name before the driver sees them. A valid
    one is taken, or refused as NOT_SUPPORTED where the driver cannot write
    dumps (then skipped, saying so); it is set in a child process, as a
    driver may refuse module loads in a context whose dumps were turned on
    after it was made, even once they are off again (the test process of an
    H200 with driver 580 saw module loads refused after an in-process run)."""
    with pytest.raises(cuabi.InvalidArgumentError, match="0x200 hold bits"):
        device.set_coredump(1, None, 1 << 9)
    with pytest.raises(cuabi.InvalidArgumentError, match="1024 bytes long"):
        device.set_coredump(1, "x" * 1024, 0)
    env = {k: v for k, v in subprocess_env.items() if k not in COREDUMP_VARS}
    env["CUABI_BACKEND"] = device.backend.name
    rc, output = _run_child(env, "device-setting", seconds=60)
    if rc == 77:
        assert "libcudadebugger.so.1" in output, output
        pytest.skip(f"this machine cannot write device core dumps: {output.strip()}")
    assert rc == 0, f"the child exited {rc}:\n{output}"
    assert "set on, then off" in output, output
