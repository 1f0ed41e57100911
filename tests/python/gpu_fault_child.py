"""The faulting process of test_gpu_faults.py (a sticky fault poisons the
process that takes it, so each fault runs here, in a process of its own):

    CUABI_BACKEND=ctypes python gpu_fault_child.py launches
    CUABI_BACKEND=ctypes python gpu_fault_child.py coredump on|off PATH
    CUABI_BACKEND=ctypes python gpu_fault_child.py device-setting

launches  compiles fill and write_far with NVRTC; on streams a and b
          launches fill (grid 4, block 128) on a and synchronizes a, then
          fill (8, 256) on a, write_far (3, 64) on b, which writes far out
          of bounds, and fill (16, 32) on a (which may itself raise the
          ContextLostError), then synchronizes the device. Prints one line,
          "REPORT " and a JSON object: the streams' ids, which call raised,
          the error's class, name, message and launches, and the device's
          health after it.
coredump  sets device core dumps for the contexts it will create (on or
          off, at PATH, lightweight, no abort) before using a device, then
          writes to address 0x10 from a kernel. Exits 77 when the driver
          cannot write dumps here (coredump_set raised NotSupportedError,
          whose message it prints); 0 when the fault was reported as a
          ContextLostError, or, with dumps on, whatever the driver answered
          (the dump file is the test).
device-setting  turns device 0's dumps on (lightweight, no abort) and off
          again through Device.set_coredump; exits 77 where that is refused
          as NOT_SUPPORTED, printing why.
(the C tests tests/hardening/fault_test.cc, tests/c/gpu_fault_child_test.cc
and gpu_coredump_test.cc check the same.)
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import sys
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bindings", "python")
if os.environ.get("CUABI_TEST_INSTALLED") != "1" and BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import numpy as np  # noqa: E402

import cuabi  # noqa: E402

SOURCE = r"""
extern "C" __global__ void fill(float* x, unsigned n, float v) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
extern "C" __global__ void write_far(float* x, unsigned long long far) {
  x[far + threadIdx.x] = 1.0f;
}
"""

POKE = 'extern "C" __global__ void poke(unsigned long long a) { *(int*)a = 1; }\n'


def launches() -> int:
    dev = cuabi.Device(0)
    mod = dev.compile(SOURCE, name="launch_log.cu", cache=False)
    fill, write_far = mod.get_kernel("fill"), mod.get_kernel("write_far")
    nbytes = 1 << 20
    buf = dev.alloc(nbytes)
    a = dev.create_stream(non_blocking=True)
    b = dev.create_stream(non_blocking=True)
    n, v = np.uint32(nbytes // 4), np.float32(1)
    far = np.uint64(1 << 38)  # 1 TiB past the buffer, in floats
    report: Dict[str, Any] = {"a": a.id, "b": b.id}

    fill(4, 128, (buf, n, v), stream=a)
    a.synchronize()  # seen complete
    fill(8, 256, (buf, n, v), stream=a)
    write_far(3, 64, (buf, far), stream=b)
    caught = None
    seen_by = "the third launch"
    try:
        fill(16, 32, (buf, n, v), stream=a)
        seen_by = "device.synchronize"
        dev.synchronize()
    except cuabi.CudaError as exc:
        caught = exc
    if caught is None:
        report["seen_by"] = "nothing: no call raised"
    else:
        report.update(
            seen_by=seen_by,
            cls=type(caught).__name__,
            name=caught.name,
            message=caught.message,
            launches=[
                dict(kernel=launch.kernel, **dataclasses.asdict(launch.record))
                for launch in caught.launches
            ],
        )
    report["health"] = dev.health.name
    print("REPORT " + json.dumps(report), flush=True)
    return 0


def coredump(mode: str, path: str) -> int:
    on = mode == "on"
    flags = cuabi.CoredumpFlag.LIGHTWEIGHT | cuabi.CoredumpFlag.SKIP_ABORT
    try:
        cuabi.coredump_set(1 if on else 0, path, flags)
    except cuabi.NotSupportedError as exc:
        print(f"gpu_fault_child: {exc.message}", flush=True)
        return 77  # no dumps on this machine: the parent says so
    # Each stage is said as it is reached, so that a child that stops
    # answering shows where (the parent kills it after a while).
    print(f"gpu_fault_child (coredump {mode}): dumps set", flush=True)
    dev = cuabi.Device(0)
    poke = dev.compile(POKE, name="poke.cu", cache=False).get_kernel("poke")
    print(f"gpu_fault_child (coredump {mode}): poke compiled", flush=True)
    answer = "no error"
    lost = False
    try:
        poke(1, 1, (np.uint64(0x10),))
        dev.synchronize()
    except cuabi.CudaError as exc:
        answer = f"{exc.name}: {exc.message}"
        lost = isinstance(exc, cuabi.ContextLostError)
    # With dumps on, the driver may hand the exception to the dump and
    # answer as it pleases; the parent judges by the dump file.
    print(f"gpu_fault_child (coredump {mode}, pid {os.getpid()}): the fault answered {answer}",
          flush=True)
    del poke, dev
    gc.collect()
    print(f"gpu_fault_child (coredump {mode}): released", flush=True)
    return 0 if lost or on else 1


def device_setting() -> int:
    dev = cuabi.Device(0)
    flags = cuabi.CoredumpFlag.LIGHTWEIGHT | cuabi.CoredumpFlag.SKIP_ABORT
    try:
        dev.set_coredump(1, "/tmp/cuabi-%p.core", flags)
    except cuabi.NotSupportedError as exc:
        print(f"gpu_fault_child: {exc.message}", flush=True)
        return 77
    dev.set_coredump(0, None, 0)
    print("gpu_fault_child (device-setting): set on, then off", flush=True)
    return 0


def main(argv: List[str]) -> int:
    if argv == ["launches"]:
        return launches()
    if argv == ["device-setting"]:
        return device_setting()
    if len(argv) == 3 and argv[0] == "coredump" and argv[1] in ("on", "off"):
        return coredump(argv[1], argv[2])
    print("usage: gpu_fault_child.py launches | coredump on|off PATH | device-setting")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
