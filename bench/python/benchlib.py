"""What every Python benchmark script shares: the kernels, the command line,
the timing loops and the JSON-lines output.

Each script runs one implementation (a cuabi layer or a peer library) and
prints one JSON object per figure on stdout; collect.py merges them. Modes:

* ``gpu``   the figures named by ``--only`` (launch, graph, copy, compile);
* ``saxpy`` one SAXPY application run: first API call to verified result,
            then the kernel time of further launches (events);
* ``cpu``   what needs no GPU (NVRTC compile, argument packing, handle
            validation).

Timing: ``time.perf_counter_ns`` around the measured region only; launch
bursts are synchronised between bursts, outside the timed region; each
figure is the median of its samples (p10, p90, min and max come along).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence

SAXPY_SOURCE = """\
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
"""

# Empty kernels for launch overhead: 2 and 16 arguments of mixed sizes
# (the same text as bench/c/bench.c).
EMPTY_SOURCE = (
    'extern "C" __global__ void empty2(float a, float *p) {}\n'
    'extern "C" __global__ void empty16(float a0, float *p1, int i2, size_t n3,\n'
    "    float a4, float *p5, int i6, size_t n7, float a8, float *p9, int i10, size_t n11,\n"
    "    float a12, float *p13, int i14, size_t n15) {}\n"
)

SAXPY_THREADS = 512
SAXPY_BLOCKS = 32768
SAXPY_N = SAXPY_THREADS * SAXPY_BLOCKS
COPY_BYTES = 64 << 20
GRAPH_KERNELS = 1000

perf_ns = time.perf_counter_ns


def args16(
    pointer: Any,
    f32: Callable[[float], Any] = float,
    i32: Callable[[int], Any] = int,
    u64: Callable[[int], Any] = int,
) -> List[Any]:
    """The 16 arguments of empty16 (float, pointer, int, size_t) x 4, with
    each language's own value types."""
    out: List[Any] = []
    for k in range(4):
        out += [f32(1.0 + k), pointer, i32(1 + k), u64(10 * (k + 1))]
    return out


# ---------------------------------------------------------------------------
# Command line and output
# ---------------------------------------------------------------------------


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("gpu", "saxpy", "cpu"))
    p.add_argument("--bursts", type=int, default=100)
    p.add_argument("--burst-size", type=int, default=200)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--kernel-reps", type=int, default=30)
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--only", default="")
    ns = p.parse_args(argv)
    ns.only = {s for s in ns.only.split(",") if s}
    return ns


def wanted(ns: argparse.Namespace, name: str) -> bool:
    return not ns.only or name in ns.only


def summarize(samples: Sequence[float]) -> Dict[str, float]:
    v = sorted(samples)
    n = len(v)
    if not n:
        return {"n": 0}
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    at = lambda q: v[int(math.floor(q * (n - 1) + 0.5))]  # noqa: E731
    return {"median": median, "p10": at(0.1), "p90": at(0.9), "min": v[0], "max": v[-1], "n": n}


class Out:
    """Writes one implementation's results as JSON lines."""

    def __init__(self, impl: str) -> None:
        self.impl = impl

    def _write(self, record: Dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"impl": self.impl, **record}) + "\n")
        sys.stdout.flush()

    def stats(self, bench: str, unit: str, samples: Sequence[float], **extra: Any) -> None:
        s = summarize(samples)
        self._write({"bench": bench, "unit": unit, "value": s.get("median"), **s, **extra})

    def value(self, bench: str, unit: str, value: float, **extra: Any) -> None:
        self._write({"bench": bench, "unit": unit, "value": value, "n": 1, **extra})

    def info(self, **fields: Any) -> None:
        self._write({"bench": "info", **fields})

    def error(self, bench: str, exc: BaseException | str) -> None:
        msg = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        self._write({"bench": bench, "error": msg})
        print(f"[{self.impl}] {bench}: {msg}", file=sys.stderr)
        if not isinstance(exc, str):
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)

    def skip(self, bench: str, why: str) -> None:
        self._write({"bench": bench, "skipped": why})

    def guard(self, bench: str, fn: Callable[[], None]) -> None:
        """Runs one figure; a failure becomes an error record, not an exit."""
        try:
            fn()
        except Exception as exc:  # each figure is isolated from the others
            self.error(bench, exc)


# ---------------------------------------------------------------------------
# Timing loops
# ---------------------------------------------------------------------------


def launch_bursts(
    launch: Callable[[], Any], sync: Callable[[], Any], ns: argparse.Namespace
) -> List[float]:
    """Host microseconds per launch in each burst of ``ns.burst_size``
    launches; the stream is synchronised between bursts, outside the timed
    region, so the launch queue never fills."""
    size = ns.burst_size
    rng = range(size)
    for _ in range(ns.warmup):
        for _ in rng:
            launch()
        sync()
    out = []
    for _ in range(ns.bursts):
        t0 = perf_ns()
        for _ in rng:
            launch()
        t1 = perf_ns()
        sync()
        out.append((t1 - t0) / size / 1000.0)
    return out


def graph_replay(
    replay: Callable[[], Any], sync: Callable[[], Any], ns: argparse.Namespace
) -> tuple:
    """(per-kernel microseconds of replay + synchronize, host microseconds of
    the replay call alone), one sample per repetition."""
    for _ in range(ns.warmup):
        replay()
        sync()
    per_kernel, host = [], []
    for _ in range(max(ns.reps, 50)):
        t0 = perf_ns()
        replay()
        t1 = perf_ns()
        sync()
        t2 = perf_ns()
        per_kernel.append((t2 - t0) / GRAPH_KERNELS / 1000.0)
        host.append((t1 - t0) / 1000.0)
    return per_kernel, host


def report_graph(out: Out, replay: Callable[[], Any], sync: Callable[[], Any], ns) -> None:
    per_kernel, host = graph_replay(replay, sync, ns)
    out.stats("graph_replay", "us", per_kernel, kernels=GRAPH_KERNELS)
    out.stats("graph_launch_call", "us", host, kernels=GRAPH_KERNELS)


def copy_rate(out: Out, bench: str, copy: Callable[[], Any], ns: argparse.Namespace) -> None:
    """GB/s (1e9 bytes per second) of COPY_BYTES from the median copy time."""
    for _ in range(ns.warmup):
        copy()
    t = []
    for _ in range(ns.reps):
        t0 = perf_ns()
        copy()
        t.append((perf_ns() - t0) / 1e6)
    s = summarize(t)
    out._write(
        {
            "bench": bench,
            "unit": "GB/s",
            "value": COPY_BYTES / (s["median"] * 1e6),
            "best": COPY_BYTES / (s["min"] * 1e6),
            "median_ms": s["median"],
            "bytes": COPY_BYTES,
            "n": s["n"],
        }
    )


def repeat_ms(fn: Callable[[], Any], reps: int, warmup: int = 1) -> List[float]:
    """Milliseconds of each of ``reps`` calls of ``fn`` after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    t = []
    for _ in range(reps):
        t0 = perf_ns()
        fn()
        t.append((perf_ns() - t0) / 1e6)
    return t


def per_call_ns(fn: Callable[[], Any], calls: int = 2000, rounds: int = 50) -> List[float]:
    """Nanoseconds per call of ``fn``: one sample per round of ``calls``."""
    rng = range(calls)
    for _ in rng:
        fn()
    out = []
    for _ in range(rounds):
        t0 = perf_ns()
        for _ in rng:
            fn()
        out.append((perf_ns() - t0) / calls)
    return out


def failing_call_ns(
    fn: Callable[[], Any], exc_type: type, calls: int = 2000, rounds: int = 50
) -> List[float]:
    """As per_call_ns for a call that must raise ``exc_type``."""

    def once() -> None:
        try:
            fn()
        except exc_type:
            return
        raise AssertionError("the call on an invalid handle did not fail")

    return per_call_ns(once, calls, rounds)


# ---------------------------------------------------------------------------
# SAXPY data
# ---------------------------------------------------------------------------


def saxpy_host_data():
    """(x, y, out) as float32 NumPy arrays; made before the clock starts."""
    import numpy as np

    rng = np.random.default_rng(1234)
    x = rng.random(SAXPY_N, dtype=np.float32)
    y = rng.random(SAXPY_N, dtype=np.float32)
    return x, y, np.zeros(SAXPY_N, dtype=np.float32)


def saxpy_verify(a: float, x, y, out) -> int:
    """Number of results that differ from the host's a * x + y."""
    import numpy as np

    want = np.float32(a) * x + y
    bad = np.abs(out - want) > np.float32(1e-5) * (np.float32(1) + np.abs(want))
    return int(np.count_nonzero(bad))


def report_saxpy(
    out: Out,
    t0_ns: int,
    a: float,
    x,
    y,
    hout,
    cache: str,
    kernel_ms: Callable[[], float],
    first_ms: float,
    ns,
) -> bool:
    """Verifies, then emits saxpy_app (ms since t0_ns, including the check)
    and saxpy_kernel (median of ns.kernel_reps event timings)."""
    bad = saxpy_verify(a, x, y, hout)
    app_ms = (perf_ns() - t0_ns) / 1e6
    if bad:
        out.error("saxpy_app", f"{bad} of {len(hout)} results differ from the host's")
        return False
    out.value("saxpy_app", "ms", app_ms, cache=cache, verified=True)
    k = [kernel_ms() for _ in range(ns.kernel_reps)]
    out.stats("saxpy_kernel", "ms", k, first_ms=first_ms, elements=len(hout))
    return True


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")
