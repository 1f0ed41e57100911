"""Fault injection through the Python binding's objects, against the stand-in
driver and NVRTC of tests/fake/ (no GPU). Run by
test_fault_injection.py in a process of its own, once per backend:

    CUABI_DRIVER_PATH=FAKE CUABI_NVRTC_PATH=FAKE CUABI_BACKEND=ctypes \\
        python fault_driver.py FAKE [--max-runs N] [--seed S]

(cuabi reads the two paths once per process, so the rest of the suite cannot
share this process.) The SAXPY scenario runs once clean to count the driver
and NVRTC calls, then once per call index with that call failing:
CUDA_ERROR_OUT_OF_MEMORY and CUDA_ERROR_INVALID_VALUE for driver calls,
NVRTC_ERROR_COMPILATION and NVRTC_ERROR_OUT_OF_MEMORY for NVRTC ones
(CUDA_ERROR_LAUNCH_FAILED, sticky, is left to the C test). Beyond --max-runs
cases, the cases are sampled with the printed seed.

A run is handled when the scenario raises a CudaError whose message names the
failed entry point (a CompileError for a failed nvrtcCompileProgram), or
completes with verified results (tolerated, counted apart); and then, once
every object is dropped and the garbage collector has run, the stand-in holds
no more live resources than after the clean run, and the scenario passes right
after with no fault. Prints

    fault injection (Python <backend>): N calls failed in turn, N handled

and exits 1 when a run is not handled (2 when it cannot start).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import random
import sys
import time
import traceback
from typing import List, Optional, Set, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bindings", "python")
if os.environ.get("CUABI_TEST_INSTALLED") != "1" and BINDING not in sys.path:
    sys.path.insert(0, BINDING)

import cuabi  # noqa: E402

# cuda.h and nvrtc.h (checked against /usr/local/cuda/include).
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
NVRTC_ERROR_OUT_OF_MEMORY = 1
NVRTC_ERROR_COMPILATION = 6
CODE_NAMES = {
    (False, CUDA_ERROR_OUT_OF_MEMORY): "CUDA_ERROR_OUT_OF_MEMORY",
    (False, CUDA_ERROR_INVALID_VALUE): "CUDA_ERROR_INVALID_VALUE",
    (True, NVRTC_ERROR_COMPILATION): "NVRTC_ERROR_COMPILATION",
    (True, NVRTC_ERROR_OUT_OF_MEMORY): "NVRTC_ERROR_OUT_OF_MEMORY",
}

SAXPY = """\
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"""
N = 256


class Fake:
    """The stand-in's controls (the instance cuabi loaded: same path)."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        try:
            self.live = lib.fake_live_resources
            self.calls = lib.fake_calls
            self._call_name = lib.fake_call_name
            self._failed_name = lib.fake_failed_name
            self.reset = lib.fake_reset
            self.fail_call = lib.fake_fail_call
        except AttributeError:
            raise SystemExit(f"{path} is not the fault-injection stand-in (no fake_* controls)")
        self.live.restype = ctypes.c_long
        self.live.argtypes = []
        self.calls.restype = ctypes.c_long
        self.calls.argtypes = []
        self._call_name.restype = ctypes.c_char_p
        self._call_name.argtypes = [ctypes.c_long]
        self._failed_name.restype = ctypes.c_char_p
        self._failed_name.argtypes = []
        self.reset.restype = None
        self.reset.argtypes = []
        self.fail_call.restype = None
        self.fail_call.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_int]

    def call_name(self, i: int) -> str:
        name = self._call_name(i)
        return name.decode() if name else "?"

    def failed_name(self) -> Optional[str]:
        name = self._failed_name()
        return name.decode() if name else None


class Outcome:
    def __init__(self) -> None:
        self.error_type = ""
        self.error_text = ""
        self.status_name = ""
        self.cuda_error = False
        self.verified = False
        self.step = ""

    @property
    def ok(self) -> bool:
        return not self.error_type


def saxpy(backend: str, outcome: Outcome) -> None:
    """The SAXPY flow on the objects: compile, get the kernel, allocate, copy
    in, launch three ways (a plain call on a stream, a prepared launch, a
    LaunchConfig on the default stream), copy out, verify each; between
    them a batch of memory operations and a batch of copies; then virtual
    memory and a graph built node by node, each verified."""
    hx = np.arange(N, dtype=np.float32)
    hy = (2 * np.arange(N) + 1).astype(np.float32)
    n = np.uint64(N)
    ok = True

    outcome.step = "Device(0)"
    dev = cuabi.Device(0, backend=backend)
    outcome.step = "compile"
    mod = dev.compile(SAXPY, name="saxpy.cu", cache=False)
    outcome.step = "get_kernel"
    kernel = mod.get_kernel("saxpy")
    outcome.step = "alloc"
    x = dev.to_device(hx)
    y = dev.alloc(hy.nbytes, np.float32, (N,))
    out = dev.empty(N, np.float32)
    outcome.step = "create_stream"
    with dev.create_stream() as stream:
        outcome.step = "copy in (stream)"
        y.copy_from_host(hy, stream=stream)
        outcome.step = "memset (stream)"
        out.memset(0, stream=stream)
        a = np.float32(2.0)
        outcome.step = "launch (call)"
        kernel(2, N // 2, (a, x, y, out, n), stream=stream)
        outcome.step = "copy out (stream)"
        res = out.copy_to_host(stream=stream)
        outcome.step = "stream.synchronize"
        stream.synchronize()
        ok = ok and bool(np.array_equal(res, a * hx + hy))

        # Batches: a written word and a met wait, then copies, in one call each.
        outcome.step = "alloc (batch word)"
        word = dev.zeros(2, np.uint64)
        outcome.step = "mem_op_batch"
        stream.mem_op_batch(
            [cuabi.MemOp.write(word, 8, 5, 8), cuabi.MemOp.wait(word, 8, 5, 8, 1)]
        )
        back = np.zeros(N, np.float32)
        outcome.step = "copy_batch"
        stream.copy_batch([cuabi.CopyOp(back, out, out.nbytes), cuabi.CopyOp(y, hy, hy.nbytes)])
        outcome.step = "stream.synchronize"
        stream.synchronize()
        ok = ok and bool(np.array_equal(back, res)) and int(word.copy_to_host()[1]) == 5
        # A 3D batch: the result read back as 2 boxes of rows of 8 floats.
        boxes = np.zeros((N // 8, 8), np.float32)
        half = N // 16
        outcome.step = "copy_3d_batch"
        stream.copy_3d_batch([
            cuabi.Copy3dOp(boxes[:half], out, src_pitch=32),
            cuabi.Copy3dOp(boxes[half:, 4:], out, src_origin=(16, half, 0), src_pitch=32),
        ])
        outcome.step = "stream.synchronize"
        stream.synchronize()
        want = res.reshape(N // 8, 8).copy()
        want[half:, :4] = 0
        ok = ok and bool(np.array_equal(boxes, want))

        a = np.float32(3.0)
        outcome.step = "prepare"
        launch = kernel.prepare(2, N // 2, stream=stream)
        outcome.step = "launch (prepared)"
        launch(a, x, y, out, n)
        outcome.step = "stream.synchronize"
        stream.synchronize()
        outcome.step = "copy out"
        res = out.copy_to_host()
        ok = ok and bool(np.array_equal(res, a * hx + hy))

    a = np.float32(4.0)
    outcome.step = "memset"
    out.memset(0)
    outcome.step = "launch (LaunchConfig)"
    kernel(cuabi.LaunchConfig(1, N), (a, x, y, out, n))
    outcome.step = "device.synchronize"
    dev.synchronize()
    outcome.step = "copy out"
    res = out.copy_to_host()
    ok = ok and bool(np.array_equal(res, a * hx + hy))

    # Virtual memory: a growable buffer grown once, and exported memory
    # imported again and viewed through a range, each checked.
    outcome.step = "vm_granularity"
    g = dev.vm_granularity[0]
    outcome.step = "alloc_growable"
    grown = dev.alloc_growable(g, 2 * g, np.float32)
    grown.copy_from_host(res)
    outcome.step = "grow"
    grown.grow(2 * g)
    grown.copy_from_host(res, offset=2 * g - res.nbytes)
    ok = ok and bool(np.array_equal(grown.copy_to_host()[: N], res))
    outcome.step = "PhysicalMemory"
    mem = cuabi.PhysicalMemory(dev, g, exportable=True)
    outcome.step = "AddressRange.map"
    r = cuabi.AddressRange(dev, g)
    r.map(0, mem)
    r.buffer(dtype=np.float32).copy_from_host(res)
    outcome.step = "export_fd / import_fd"
    fd = mem.export_fd()
    try:
        again = cuabi.PhysicalMemory.import_fd(dev, fd, g)
    finally:
        os.close(fd)
    outcome.step = "map the import"
    r2 = cuabi.AddressRange(dev, g)
    r2.map(0, again)
    ok = ok and bool(np.array_equal(r2.buffer(0, res.nbytes, dtype=np.float32).copy_to_host(), res))

    # A graph built node by node: upload, fill, kernel, copy, download.
    outcome.step = "Graph.create"
    graph = cuabi.Graph.create(dev)
    outcome.step = "host_alloc (graph)"
    pin_in, pin_out = dev.host_alloc(N * 4), dev.host_alloc(N * 4)
    pin_in.as_array(np.float32)[:] = hx
    outcome.step = "alloc (graph)"
    gx, ones, gout, gcopy = (dev.alloc(N * 4) for _ in range(4))
    outcome.step = "add nodes"
    up = graph.add_upload_node(None, gx, 0, pin_in, 0, N * 4)
    fill = graph.add_fill_node(up, ones, 0, 0x3F800000, 4, N)  # 1.0f
    kern = graph.add_kernel_node(kernel, 2, N // 2, (np.float32(3.0), gx, ones, gout, n), after=fill)
    copy = graph.add_copy_node(kern, gcopy, 0, gout, 0, N * 4)
    graph.add_download_node(copy, pin_out, 0, gcopy, 0, N * 4)
    outcome.step = "Graph.instantiate"
    exe = graph.instantiate()
    outcome.step = "GraphExec.launch"
    exe.launch()
    outcome.step = "device.synchronize (graph)"
    dev.synchronize()
    ok = ok and bool(np.array_equal(pin_out.as_array(np.float32), np.float32(3.0) * hx + 1))
    outcome.step = "done"
    outcome.verified = ok


def run_scenario(backend: str) -> Outcome:
    """Runs the scenario; drops every object it made and collects them."""
    outcome = Outcome()
    try:
        saxpy(backend, outcome)
    except Exception as exc:  # judged by the caller; no crash escapes
        outcome.error_type = type(exc).__name__
        if isinstance(exc, cuabi.CudaError):
            outcome.cuda_error = True
            outcome.status_name = exc.name
            outcome.error_text = f"{exc.message}"
        else:
            outcome.error_text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        del exc  # the traceback holds the scenario's frames, and so its objects
    gc.collect()
    return outcome


def judge(o: Outcome, failed: str, nvrtc: bool, code: int) -> str:
    """Why the run did not report (or survive) the failure properly; empty when it did."""
    if o.ok:
        return "" if o.verified else "completed with wrong results"
    if not o.cuda_error:
        return f"raised {o.error_text!r} at {o.step}, not a CudaError"
    if failed in o.error_text:
        return ""
    if nvrtc and code == NVRTC_ERROR_COMPILATION and failed == "nvrtcCompileProgram" \
            and o.error_type == "CompileError":
        return ""  # a compile error: the class says so and the log is kept
    return (f"{o.error_type} ({o.status_name}) at {o.step} with a message that does not name "
            f"{failed}: {o.error_text!r}")


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("fake")
    ap.add_argument(
        "--max-runs", type=int, default=int(os.environ.get("CUABI_FAULT_MAX_RUNS", "600"))
    )
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args(argv)
    backend = (os.environ.get("CUABI_BACKEND") or "ctypes").strip().lower()
    label = f"Python {backend}"
    seed = args.seed
    if seed is None:
        seed = int(os.environ.get("CUABI_FAULT_SEED") or time.time())
    print(f"fault injection ({label}): seed {seed}", flush=True)
    rng = random.Random(seed)

    fake_path = os.path.abspath(args.fake)
    for var in ("CUABI_DRIVER_PATH", "CUABI_NVRTC_PATH"):
        if os.path.abspath(os.environ.get(var, "")) != fake_path:
            print(f"{var} must be {fake_path} (set before cuabi is first used)", file=sys.stderr)
            return 2

    warm = run_scenario(backend)  # loads the driver and NVRTC through cuabi
    fake = Fake(fake_path)
    if not warm.ok or not warm.verified:
        print(f"NOT HANDLED: the warm-up run fails at {warm.step}: "
              f"{warm.error_type}: {warm.error_text or 'wrong results'}")
        return 1
    baseline = fake.live()
    fake.reset()
    counted = run_scenario(backend)
    calls = fake.calls()
    names = [fake.call_name(i) for i in range(1, calls + 1)]
    if not counted.ok or not counted.verified or fake.live() != baseline:
        reason = (f"{counted.error_type}: {counted.error_text}" if not counted.ok
               else "wrong results" if not counted.verified
               else f"leaks {fake.live() - baseline} driver resources")
        print(f"NOT HANDLED: the clean run fails: {reason}")
        return 1

    cases: List[Tuple[int, int]] = []
    for i, name in enumerate(names, 1):
        if name.startswith("nvrtc"):
            cases += [(i, NVRTC_ERROR_COMPILATION), (i, NVRTC_ERROR_OUT_OF_MEMORY)]
        else:
            cases.append((i, CUDA_ERROR_OUT_OF_MEMORY))
            # INVALID_VALUE is how cuFuncGetParamInfo says the index is past
            # the last parameter: failing it with that only shortens the list.
            if name != "cuFuncGetParamInfo":
                cases.append((i, CUDA_ERROR_INVALID_VALUE))
    total_cases = len(cases)
    if len(cases) > args.max_runs:
        cases = sorted(rng.sample(cases, args.max_runs))

    failed_n = handled = tolerated_n = 0
    tolerated: Set[str] = set()
    problems: List[str] = []
    for index, code in cases:
        expected = names[index - 1]
        nvrtc = expected.startswith("nvrtc")
        fake.reset()
        fake.fail_call(index, 0 if nvrtc else code, code if nvrtc else 0)
        o = run_scenario(backend)
        failed = fake.failed_name()
        fake.reset()
        if failed is None:
            continue  # the run made fewer calls this time
        failed_n += 1
        why: List[str] = []
        report = judge(o, failed, nvrtc, code)
        if report:
            why.append(report)
        live = fake.live()
        if live != baseline:
            why.append(f"leaked {live - baseline} driver resources (objects collected)")
        again = run_scenario(backend)
        if not again.ok or not again.verified:
            why.append(f"the same scenario then fails with no fault at {again.step}: "
                       f"{again.error_type}: {again.error_text or 'wrong results'}")
        if fake.live() != live:
            why.append("the clean run after it leaks")
        if why:
            problems.append(f"saxpy call {index} ({failed}, {CODE_NAMES[nvrtc, code]}): "
                            + "; ".join(why))
        else:
            handled += 1
            if o.ok:
                tolerated_n += 1
                tolerated.add(failed)

    print(f"  saxpy {calls} calls, {total_cases} cases ({len(cases)} run); {failed_n} failed "
          f"in turn, {handled} handled ({tolerated_n} tolerated with correct results)")
    print(f"fault injection ({label}): {failed_n} calls failed in turn, {handled} handled")
    print("  failures tolerated with correct results:"
          + "".join(" " + t for t in sorted(tolerated)))
    for p in problems:
        print(f"NOT HANDLED: {p}")
    sys.stdout.flush()
    return 0 if not problems and failed_n > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
