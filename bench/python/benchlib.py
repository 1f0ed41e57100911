"""What every Python benchmark script shares: the kernels, the command line,
the timing loops and the JSON-lines output.

Each script runs one implementation (a cuabi layer or a peer library) and
prints one JSON object per figure on stdout; collect.py merges them. Modes:

* ``gpu``   the figures named by ``--only`` (launch, graph, copy, compile);
* ``saxpy`` one SAXPY application run: first API call to verified result,
            then the kernel time of further launches (events);
* ``cpu``   what needs no GPU (NVRTC compile, argument packing, handle
            validation);
* ``paired`` the launch and copy figures taken paired with the C reference
            (bench/README.md, "Paired figures"): :func:`paired_rounds` and
            :class:`Reference` here, the series in each script;
* ``instructions`` ``--path P --count N``: set-up, then exactly N calls of
            one path, for callgrind (bench/instructions/bindings.py):
            :func:`count_calls`.

Timing: ``time.perf_counter_ns`` around the measured region only; launch
bursts are synchronised between bursts, outside the timed region; each
figure is the median of its samples (p10, p90, min and max come along).
"""

from __future__ import annotations

import argparse
import ctypes
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
MIN_PAIRS = 30

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
    p.add_argument("mode", choices=("gpu", "saxpy", "cpu", "paired", "instructions"))
    p.add_argument("--bursts", type=int, default=100)
    p.add_argument("--pairs", type=int, default=100, help="paired: rounds (at least 30)")
    p.add_argument("--copy-pairs", type=int, default=30, help="paired: rounds of copies")
    p.add_argument("--path", default="", help="instructions: the path to call")
    p.add_argument("--count", type=int, default=0, help="instructions: how many calls")
    p.add_argument("--burst-size", type=int, default=200)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--kernel-reps", type=int, default=30)
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--only", default="")
    ns = p.parse_args(argv)
    ns.only = {s for s in ns.only.split(",") if s}
    if ns.mode == "paired":
        if ns.pairs < MIN_PAIRS:
            p.error(f"--pairs must be at least {MIN_PAIRS}, not {ns.pairs}")
        if ns.burst_size < 1 or ns.copy_pairs < 1 or ns.warmup < 0:
            p.error("--burst-size and --copy-pairs must be positive, --warmup not negative")
    if ns.mode == "instructions" and (not ns.path or ns.count < 0):
        p.error("instructions needs --path P and --count N (N >= 0)")
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

    # In blocks of 256K elements, into two reused buffers: whole-array
    # temporaries (six of 64 MiB for the SAXPY's 16M floats) cost their page
    # faults in every fresh process, all of it counted in the time to first
    # result, and as much noise as the figure's differences.
    a32, tol, one = np.float32(a), np.float32(1e-5), np.float32(1)
    step = 1 << 18
    want = np.empty(min(step, len(out)), np.float32)
    diff = np.empty_like(want)
    bad = 0
    for i in range(0, len(out), step):
        n = min(step, len(out) - i)
        w, d = want[:n], diff[:n]
        np.multiply(x[i : i + n], a32, out=w)
        np.add(w, y[i : i + n], out=w)
        np.subtract(out[i : i + n], w, out=d)
        np.abs(d, out=d)
        np.abs(w, out=w)
        np.add(w, one, out=w)
        np.multiply(w, tol, out=w)
        bad += int(np.count_nonzero(d > w))
    return bad


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


# ---------------------------------------------------------------------------
# Paired figures (bench/README.md, "Paired figures")
# ---------------------------------------------------------------------------


class Reference:
    """``libcuabi_bench_reference.so`` (``$CUABI_BENCH_REFERENCE``) through
    ctypes: raw C driver calls, timed in C. Values cross as ints (CUcontext,
    CUfunction, CUstream, CUdeviceptr); times come back in nanoseconds."""

    def __init__(self, path: Optional[str] = None) -> None:
        path = path or os.environ.get("CUABI_BENCH_REFERENCE", "")
        if not path:
            raise RuntimeError(
                "CUABI_BENCH_REFERENCE is not set (the path of libcuabi_bench_reference.so)"
            )
        lib = ctypes.CDLL(path)
        u64, i64, vp = ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p
        lib.benchref_error.restype = ctypes.c_char_p
        lib.benchref_error.argtypes = []
        lib.benchref_load_kernel.restype = ctypes.c_int
        lib.benchref_load_kernel.argtypes = [
            u64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(u64)]
        lib.benchref_launch_burst.restype = i64
        lib.benchref_launch_burst.argtypes = [u64, u64, vp, ctypes.c_uint32]
        lib.benchref_copy_to_device.restype = i64
        lib.benchref_copy_to_device.argtypes = [u64, vp, ctypes.c_size_t]
        lib.benchref_copy_to_host.restype = i64
        lib.benchref_copy_to_host.argtypes = [vp, u64, ctypes.c_size_t]
        lib.benchref_stream_sync.restype = ctypes.c_int
        lib.benchref_stream_sync.argtypes = [u64]
        self.path = path
        self.lib = lib

    def _fail(self, what: str) -> RuntimeError:
        msg = self.lib.benchref_error() or b""
        return RuntimeError(f"{what}: {msg.decode('utf-8', 'replace') or 'failed'}")

    def load_kernel(self, context: int, name: str, arch: str) -> int:
        """The raw CUfunction of ``name`` (an empty kernel of EMPTY_SOURCE),
        compiled by NVRTC for ``arch`` and loaded into ``context``."""
        f = ctypes.c_uint64()
        if self.lib.benchref_load_kernel(
            context, EMPTY_SOURCE.encode(), name.encode(), arch.encode(), ctypes.byref(f)
        ):
            raise self._fail("benchref_load_kernel")
        return int(f.value)

    def burst(self, function: int, stream: int, params: Any, size: int) -> Callable[[], float]:
        """A sample of the c_ref series: microseconds per launch of one burst
        of ``size`` raw cuLaunchKernel calls, timed in C."""
        fn = self.lib.benchref_launch_burst
        args = (ctypes.c_uint64(function), ctypes.c_uint64(stream), params, size)

        def sample() -> float:
            t = fn(*args)
            if t < 0:
                raise self._fail("benchref_launch_burst")
            return t / size / 1000.0

        return sample

    def copy_to_device(self, dst: int, src: int, nbytes: int) -> Callable[[], float]:
        """A sample of a copy's c_ref series: microseconds of one cuMemcpyHtoD."""
        fn, args = self.lib.benchref_copy_to_device, (dst, src, nbytes)

        def sample() -> float:
            t = fn(*args)
            if t < 0:
                raise self._fail("benchref_copy_to_device")
            return t / 1000.0

        return sample

    def copy_to_host(self, dst: int, src: int, nbytes: int) -> Callable[[], float]:
        fn, args = self.lib.benchref_copy_to_host, (dst, src, nbytes)

        def sample() -> float:
            t = fn(*args)
            if t < 0:
                raise self._fail("benchref_copy_to_host")
            return t / 1000.0

        return sample

    def stream_sync(self, stream: int) -> None:
        if self.lib.benchref_stream_sync(stream):
            raise self._fail("benchref_stream_sync")


def kernel_name(nargs: int) -> str:
    return "empty2" if nargs == 2 else "empty16"


def ctypes_params(nargs: int, pointer: int) -> tuple:
    """(``void**`` array for cuLaunchKernel, what keeps its values alive):
    the arguments of empty2 (2.0, pointer) or of empty16 (args16), each a
    ctypes value of the parameter's C type."""
    if nargs == 2:
        values: List[Any] = [ctypes.c_float(2.0), ctypes.c_uint64(pointer)]
    else:
        values = args16(ctypes.c_uint64(pointer), ctypes.c_float, ctypes.c_int32, ctypes.c_uint64)
    arr = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    return arr, values


def ctypes_raw_launch(function: int, stream: int, params: Any) -> Callable[[], None]:
    """The ``raw`` series for ctypes: cuLaunchKernel of ``libcuda.so.1``
    through ctypes (its prototype declared), grid and block 1, on ``stream``."""
    cuda = ctypes.CDLL("libcuda.so.1")
    launch = cuda.cuLaunchKernel
    u = ctypes.c_uint
    launch.restype = ctypes.c_int
    launch.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p,
                       ctypes.c_void_p, ctypes.c_void_p]
    fn, st = ctypes.c_void_p(function), ctypes.c_void_p(stream)

    def raw() -> None:
        r = launch(fn, 1, 1, 1, 1, 1, 1, 0, st, params, None)
        if r:
            raise RuntimeError(f"cuLaunchKernel failed: CUresult {r}")

    return raw


def python_burst(launch: Callable[[], Any], size: int) -> Callable[[], float]:
    """A sample of a Python-timed launch series: microseconds per launch of
    one burst of ``size`` calls of ``launch``."""
    rng = range(size)

    def sample() -> float:
        t0 = perf_ns()
        for _ in rng:
            launch()
        return (perf_ns() - t0) / size / 1000.0

    return sample


def python_copy(copy: Callable[[], Any]) -> Callable[[], float]:
    """A sample of a copy series: microseconds of one synchronous copy."""

    def sample() -> float:
        t0 = perf_ns()
        copy()
        return (perf_ns() - t0) / 1000.0

    return sample


def paired_rounds(
    series: Sequence[tuple], sync: Callable[[], Any], rounds: int, warmup: int
) -> Dict[str, List[float]]:
    """Interleaved rounds: ``warmup`` rounds (discarded), then ``rounds``
    rounds, each taking one sample of every series ``(name, sample)`` in an
    order rotated by the round's index (round r starts with series r mod S).
    The stream is synchronised before every sample, outside its timing."""
    n = len(series)
    out: Dict[str, List[float]] = {name: [] for name, _ in series}
    for r in range(-warmup, rounds):
        for j in range(n):
            name, sample = series[(r + j) % n]
            sync()
            value = sample()
            if r >= 0:
                out[name].append(value)
    return out


def paired_launch(
    out: Out,
    bench: str,
    series: Sequence[tuple],
    sync: Callable[[], Any],
    ns: argparse.Namespace,
    headline: str,
    **extra: Any,
) -> None:
    """One paired launch figure: ``series`` are (name, sample) pairs, each
    sample one burst (Reference.burst, python_burst)."""
    values = paired_rounds(series, sync, ns.pairs, ns.warmup)
    out._write({"bench": bench, "kind": "paired", "unit": "us", "burst": ns.burst_size,
                "pairs": ns.pairs, "headline": headline, **extra, "series": values})


def paired_copy(
    out: Out,
    bench: str,
    series: Sequence[tuple],
    sync: Callable[[], Any],
    ns: argparse.Namespace,
    headline: str,
    **extra: Any,
) -> None:
    """One paired copy figure: one synchronous COPY_BYTES copy per sample."""
    values = paired_rounds(series, sync, ns.copy_pairs, ns.warmup)
    out._write({"bench": bench, "kind": "paired", "unit": "us", "bytes": COPY_BYTES,
                "pairs": ns.copy_pairs, "headline": headline, **extra, "series": values})


def paired_launch_figures(
    out: Out,
    make: Callable[[int], tuple],
    ns: argparse.Namespace,
) -> None:
    """paired_launch_2args and paired_launch_16args: ``make(nargs)`` gives
    (series, sync, headline, extra) for the kernel of that many arguments;
    a failure of one figure becomes its error record."""
    for nargs in (2, 16):
        bench = f"paired_launch_{nargs}args"

        def figure(nargs: int = nargs, bench: str = bench) -> None:
            series, sync, headline, extra = make(nargs)
            paired_launch(out, bench, series, sync, ns, headline, args=nargs, **extra)

        out.guard(bench, figure)


def paired_copy_figures(
    out: Out,
    ns: argparse.Namespace,
    ref: Reference,
    device_ptr: int,
    hosts: Sequence[tuple],
    to_device: Callable[[Any], Callable[[], Any]],
    to_host: Callable[[Any], Callable[[], Any]],
    sync: Callable[[], Any],
    name: str = "copy",
    **extra: Any,
) -> None:
    """The four paired copy figures. ``hosts``: (kind, host object, its
    address) for "pageable" and "pinned" (or an exception: that host memory
    could not be made); ``to_device(host)`` / ``to_host(host)`` give the
    implementation's synchronous copy of COPY_BYTES between that host memory
    and the device buffer at ``device_ptr``, which the reference copies
    between too."""
    n = COPY_BYTES
    for kind, host, address in hosts:
        for direction in ("to_device", "to_host"):
            bench = f"paired_copy_{direction}_{kind}"

            def figure(direction=direction, host=host, address=address, bench=bench) -> None:
                if isinstance(host, BaseException):
                    raise host
                if direction == "to_device":
                    c_ref = ref.copy_to_device(device_ptr, address, n)
                    own = to_device(host)
                else:
                    c_ref = ref.copy_to_host(address, device_ptr, n)
                    own = to_host(host)
                series = [("c_ref", c_ref), (name, python_copy(own))]
                paired_copy(out, bench, series, sync, ns, name, **extra)

            out.guard(bench, figure)


# ---------------------------------------------------------------------------
# Instructions per call (bench/instructions/bindings.py)
# ---------------------------------------------------------------------------


# What the instructions mode loads as cuabi's module instead of compiling
# EMPTY_SOURCE (as bench/instructions/instructions.c does): the stand-in takes
# any image and knows empty2 and empty16 by name, and a run neither compiles
# nor depends on the compile cache being warm.
STAND_IN_IMAGE = b".version 8.0\n.target sm_90\n.address_size 64\n\0"


def count_calls(call: Callable[[], Any], count: int, warmup: int = 50) -> None:
    """Exactly ``count`` calls of ``call`` after ``warmup`` more in set-up
    (first-use caches filled, the interpreter's specialisation settled), and
    nothing printed. The loop is the paired bursts' loop."""
    for _ in range(warmup):
        call()
    for _ in range(count):
        call()


def stand_in_query_switch(not_ready: bool) -> None:
    """Makes the instructions stand-in's cuStreamQuery answer NOT_READY (or
    SUCCESS), through ctypes on ``libcuda.so.1`` (the stand-in there)."""
    ctypes.CDLL("libcuda.so.1").instructions_fake_set_stream_query(1 if not_ready else 0)


def _warm_pycache(marker: str, paths: str, command: Sequence[str]) -> int:
    """``benchlib.py pycache MARKER PATHS PROGRAM...``: runs ``PROGRAM
    instructions --path P --count 1`` for each P of the comma-separated
    PATHS with bytecode writing on, so that every module those runs import
    is compiled into ``$PYTHONPYCACHEPREFIX`` (a folder of the build, set by
    the instructions spec), then writes MARKER. The counted runs (bytecode
    writing off) load what they import instead of compiling it each time:
    half the instructions of a run under callgrind. Used as the specs'
    "build" step; a source changed later is compiled again in every run
    (slower, the counts unchanged) until the marker is removed."""
    import importlib.util
    import subprocess

    if not os.environ.get("PYTHONPYCACHEPREFIX"):
        print("pycache: PYTHONPYCACHEPREFIX is not set", file=sys.stderr)
        return 2
    if os.environ.get("CUABI_BACKEND") in ("cffi", "compiled") and importlib.util.find_spec("cffi") is None:
        # No marker: the runner then reports the implementation skipped
        # (its marker missing) instead of failing where cffi is not installed.
        print("pycache: cffi is not installed; the cffi implementation is skipped")
        return 0
    lib_dir = os.path.dirname(os.environ.get("CUABI_LIBRARY", ""))
    if os.environ.get("CUABI_BACKEND") == "compiled" and not any(
        n.startswith("_cuabi_cffi.") for n in (os.listdir(lib_dir) if os.path.isdir(lib_dir) else ())
    ):
        # As for cffi: no marker, and the runner names the module missing.
        print(f"pycache: no compiled module (_cuabi_cffi) beside CUABI_LIBRARY in {lib_dir!r}; "
              "the compiled implementation is skipped")
        return 0
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for path in paths.split(","):
        r = subprocess.run(list(command) + ["instructions", "--path", path, "--count", "1"],
                           env=env)
        if r.returncode:
            return r.returncode
    os.makedirs(os.path.dirname(os.path.abspath(marker)), exist_ok=True)
    with open(marker, "w", encoding="utf-8") as f:
        f.write("bytecode of the instructions runs, compiled by benchlib.py pycache\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 4 and sys.argv[1] == "pycache":
        sys.exit(_warm_pycache(sys.argv[2], sys.argv[3], sys.argv[4:]))
    sys.exit("usage: benchlib.py pycache MARKER PATH,PATH... PROGRAM...")
