#!/usr/bin/env python3
"""Runs every benchmark step in its own process and gathers their JSON lines.

Called by bench/run.sh, which builds what is needed and sets the
environment; this script only runs and records:

* each step (one implementation, one group of figures) is a separate
  process with its own time limit, so one that fails, hangs or crashes
  costs only its own figures;
* every JSON line a step prints goes to ``raw.jsonl`` (with the step's name
  added); everything else it prints goes to ``logs/<step>.log``;
* an implementation that cannot run here (its binary, binding or library
  is missing) gets one "skipped" record saying why, and no step;
* SAXPY runs are timed from the spawn of a fresh process to the arrival of
  its verified result (``first_result_wall``), with a cold cache (a new,
  empty cache folder) and a warm one (the folder the first cold run filled);
* in CPU mode, where the stand-in driver of bench/testing was built, each
  implementation's launch, graph and compile figures run against it too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Mapping, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# id, label, kind. Kinds: c (a bench/c binary), py (a script in bench/python),
# native (a carried executable), peer (a peer library's script).
IMPLS: List[Tuple[str, str, str]] = [
    ("c_raw", "C (raw driver)", "c"),
    ("c_cuabi", "C (cuabi)", "c"),
    ("py_ctypes", "Python ctypes", "py"),
    ("py_cffi", "Python cffi", "py"),
    ("py_high", "Python high layer (ctypes)", "py"),
    ("py_high_cffi", "Python high layer (cffi)", "py"),
    ("py_compiled", "Python compiled (cffi API mode)", "py"),
    ("py_high_compiled", "Python high layer (compiled)", "py"),
    ("rust", "Rust", "native"),
    ("csharp", "C#", "native"),
    ("cuda_core", "cuda.core", "peer"),
    ("cuda_bindings", "cuda.bindings", "peer"),
    ("cupy", "CuPy RawModule", "peer"),
]
CUABI_IMPLS = ("c_cuabi", "py_ctypes", "py_cffi", "py_compiled", "py_high", "py_high_cffi",
               "py_high_compiled", "rust", "csharp")


class Runner:
    def __init__(self, ns: argparse.Namespace) -> None:
        self.ns = ns
        self.out = os.path.abspath(ns.out)
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.raw_path = os.path.join(self.out, "raw.jsonl")
        self.raw = open(self.raw_path, "a", encoding="utf-8")
        self.start = time.monotonic()
        self.cache_root = os.path.join(self.out, "cache")
        os.makedirs(self.cache_root, exist_ok=True)

    # -- records --------------------------------------------------------------
    def record(self, rec: Dict[str, object]) -> None:
        self.raw.write(json.dumps(rec) + "\n")
        self.raw.flush()

    def note(self, text: str) -> None:
        print(f"[bench] {text}", flush=True)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def over_budget(self) -> bool:
        return self.ns.budget > 0 and self.elapsed() > self.ns.budget

    # -- implementations ---------------------------------------------------------
    def command(self, impl: str, mode: str) -> Optional[List[str]]:
        ns = self.ns
        py = ns.python
        if impl in ("c_raw", "c_cuabi"):
            exe = os.path.join(ns.c_build, "bench_raw" if impl == "c_raw" else "bench_cuabi")
            return [exe, mode] if os.access(exe, os.X_OK) else None
        if impl in ("py_ctypes", "py_cffi", "py_compiled"):
            return [py, os.path.join(HERE, "python", "bench_lowlevel.py"), mode]
        if impl in ("py_high", "py_high_cffi", "py_high_compiled"):
            return [py, os.path.join(HERE, "python", "bench_high.py"), mode]
        if impl == "rust":
            exe = os.path.join(ns.carry, "rust", "cuabi-bench")
            return [exe, mode] if ns.carry and os.access(exe, os.X_OK) else None
        if impl == "csharp":
            exe = os.path.join(ns.carry, "csharp", "cuabi-bench")
            if ns.carry and os.access(exe, os.X_OK):
                return [exe, mode]
            assembly = os.path.join(ns.carry, "csharp", "cuabi-bench.exe")
            mono = shutil.which("mono")
            if ns.carry and os.path.isfile(assembly) and mono:
                return [mono, assembly, mode]
            return None
        script = {
            "cuda_core": "bench_cuda_core.py",
            "cuda_bindings": "bench_cuda_bindings.py",
            "cupy": "bench_cupy.py",
        }[impl]
        return [py, os.path.join(HERE, "python", script), mode]

    def env_for(self, impl: str, mode: str) -> Dict[str, str]:
        env = dict(os.environ)
        if impl in ("py_ctypes", "py_high"):
            env["CUABI_BACKEND"] = "ctypes"
        elif impl in ("py_cffi", "py_high_cffi"):
            env["CUABI_BACKEND"] = "cffi"
        elif impl in ("py_compiled", "py_high_compiled"):
            env["CUABI_BACKEND"] = "compiled"
        if impl == "c_raw" and mode == "cpu" and self.ns.stub_driver:
            # bench_raw needs a libcuda.so.1 to start; CPU mode times only NVRTC.
            env["LD_LIBRARY_PATH"] = (
                self.ns.stub_driver + os.pathsep + env.get("LD_LIBRARY_PATH", "")
            )
        return env

    def why_unavailable(self, impl: str) -> Optional[str]:
        ns = self.ns
        lib = os.environ.get("CUABI_LIBRARY", "")
        if impl in CUABI_IMPLS and not (lib and os.path.exists(lib)):
            return f"no libcuabi at CUABI_LIBRARY={lib!r}"
        cmd = self.command(impl, "cpu")
        if cmd is None:
            if impl.startswith("c_"):
                return (
                    f"no {impl} binary in {ns.c_build} (the C benchmarks did not build; "
                    "see logs/build-c.log)"
                )
            if impl == "rust":
                return (
                    f"no Rust benchmark binary at {ns.carry or '(no --carry)'}/rust/cuabi-bench "
                    "(build it where cargo is: bench/prepare-carry.sh DIR)"
                )
            return (
                f"no C# benchmark at {ns.carry or '(no --carry)'}/csharp/cuabi-bench "
                "(build it where mono is: bench/prepare-carry.sh DIR)"
            )
        probe = {
            "py_ctypes": "import cuabi, numpy",
            "py_high": "import cuabi, numpy",
            "py_cffi": "import cuabi, numpy, cffi",
            "py_high_cffi": "import cuabi, numpy, cffi",
            # The compiled module beside CUABI_LIBRARY (built with libcuabi).
            "py_compiled": "import cuabi, numpy; cuabi.load_backend('compiled')",
            "py_high_compiled": "import cuabi, numpy; cuabi.load_backend('compiled')",
            "cuda_core": "import numpy; import cuda.core",
            "cuda_bindings": "import numpy; from cuda.bindings import driver, nvrtc",
            "cupy": "import numpy, cupy",
        }.get(impl)
        if probe:
            r = subprocess.run(
                [ns.python, "-c", probe],
                capture_output=True,
                text=True,
                env=self.env_for(impl, "cpu"),
                timeout=120,
            )
            if r.returncode != 0:
                last = (r.stderr.strip().splitlines() or ["?"])[-1]
                return f"{ns.python} cannot '{probe}': {last}"
        return None

    # -- running ----------------------------------------------------------------
    def run_step(
        self,
        name: str,
        impl: str,
        mode: str,
        args: List[str],
        timeout: float,
        env_extra: Optional[Mapping[str, Optional[str]]] = None,
        wall_bench: Optional[str] = None,
        tags: Optional[Dict[str, object]] = None,
        quiet: bool = False,
    ) -> Dict[str, object]:
        """Runs one process; returns {rc, wall_ms, result_ms (time to the
        saxpy_app line), records}."""
        if self.over_budget():
            self.record(
                {
                    "impl": impl,
                    "bench": name,
                    "skipped": f"time budget of {self.ns.budget:.0f} s spent before this step",
                }
            )
            self.note(f"{name}: skipped (time budget spent)")
            return {"rc": None, "records": []}
        cmd = self.command(impl, mode)
        assert cmd is not None
        cmd = cmd + args
        env = self.env_for(impl, mode)
        for key, value in (env_extra or {}).items():
            if value is None:  # unset
                env.pop(key, None)
            else:
                env[key] = value
        log_path = os.path.join(self.logs, name + ".log")
        records: List[Dict[str, object]] = []
        result_ms = None
        t0 = time.monotonic()
        with open(log_path, "w", encoding="utf-8") as log:
            log.write("$ " + " ".join(cmd) + "\n")
            for k in ("CUABI_BACKEND", "CUABI_CACHE_DIR", "CUPY_CACHE_DIR"):
                if k in env:
                    log.write(f"  {k}={env[k]}\n")
            log.flush()
            try:
                proc = subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=log, env=env, cwd=REPO, text=True, bufsize=1
                )
            except OSError as exc:
                self.record({"impl": impl, "bench": name, "error": f"cannot start: {exc}"})
                return {"rc": None, "records": []}
            # A thread reads the output line by line and stamps each line's
            # arrival, so the time to the result can be told.
            arrived: List[Tuple[float, str]] = []

            def read() -> None:
                assert proc.stdout is not None
                for line in proc.stdout:
                    arrived.append((time.monotonic(), line))

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            timed_out = False
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                proc.kill()
                rc = proc.wait()
            ended = time.monotonic()
            reader.join(timeout=10)
            for when, line in list(arrived):
                text = line.strip()
                if not text:
                    continue
                try:
                    rec = json.loads(text)
                    if not isinstance(rec, dict):
                        raise ValueError
                except ValueError:
                    log.write(text + "\n")
                    continue
                if rec.get("bench") == "saxpy_app" and "value" in rec and result_ms is None:
                    result_ms = (when - t0) * 1000.0
                rec["step"] = name
                if tags:
                    rec.update(tags)
                records.append(rec)
                self.record(rec)
            wall_ms = (ended - t0) * 1000.0
            log.write(f"exit status {rc}, {wall_ms:.0f} ms\n")
        if timed_out:
            self.record(
                {
                    "impl": impl,
                    "bench": name,
                    "step": name,
                    "error": f"timed out after {timeout:.0f} s (see logs/{name}.log)",
                }
            )
            self.note(f"{name}: TIMED OUT after {timeout:.0f} s")
        elif rc != 0:
            self.note(f"{name}: exit status {rc} (see logs/{name}.log)")
            if rc < 0 or not any("error" in r for r in records):
                self.record(
                    {
                        "impl": impl,
                        "bench": name,
                        "step": name,
                        "error": f"exit status {rc} (see logs/{name}.log)",
                    }
                )
        elif not quiet:
            errors = sum(1 for r in records if "error" in r)
            self.note(
                f"{name}: {len(records)} records"
                + (f", {errors} errors (see logs/{name}.log)" if errors else "")
                + f", {wall_ms / 1000:.1f} s"
            )
        if wall_bench and result_ms is not None:
            rec = {
                "impl": impl,
                "bench": wall_bench,
                "unit": "ms",
                "value": result_ms,
                "exit_ms": wall_ms,
                "n": 1,
                "step": name,
            }
            if tags:
                rec.update(tags)
            self.record(rec)
        return {"rc": rc, "wall_ms": wall_ms, "result_ms": result_ms, "records": records}

    # -- plans ------------------------------------------------------------------
    def figure_args(self) -> List[str]:
        ns = self.ns
        return [
            "--bursts",
            str(ns.bursts),
            "--burst-size",
            str(ns.burst_size),
            "--warmup",
            str(ns.warmup),
            "--reps",
            str(ns.reps),
            "--kernel-reps",
            str(ns.kernel_reps),
        ]

    def paired(self, impls: List[str]) -> None:
        """Each implementation's paired launches and copies, in its own
        process, alternating with the raw C reference (bench/README.md)."""
        ns = self.ns
        for impl in impls:
            self.run_step(
                f"{impl}-paired",
                impl,
                "paired",
                ["--pairs", str(ns.pairs), "--burst-size", str(ns.burst_size),
                 "--copy-pairs", str(ns.copy_pairs), "--warmup", str(ns.warmup)],
                ns.step_timeout,
            )

    def first_results(self, impls: List[str]) -> None:
        """Time to first result with a warm cache, paired: in each round every
        implementation runs one fresh SAXPY process, in an order rotated by
        the round, so round i of one implementation and round i of another
        ran seconds apart. Each implementation's cache folder is filled by
        one untimed run first; raw C compiles every run (it has no cache)."""
        ns = self.ns
        folders: Dict[str, str] = {}
        args = ["--kernel-reps", "1"]

        def warm_env(folder: str) -> Dict[str, Optional[str]]:
            # Warm as a program's second run is: its kernels in the cache
            # folder and, for Python, the bytecode its first run wrote (into
            # the folder, every implementation alike). Without this, where
            # PYTHONDONTWRITEBYTECODE is set, every run compiles whatever
            # has no bytecode beside it (a source tree, a wheel unpacked
            # without compiling) and nothing of what pip installed.
            return {"CUABI_CACHE_DIR": folder, "CUPY_CACHE_DIR": folder,
                    "PYTHONPYCACHEPREFIX": os.path.join(folder, "pycache"),
                    "PYTHONDONTWRITEBYTECODE": None}

        for impl in impls:
            folder = tempfile.mkdtemp(prefix=f"{impl}-first-", dir=self.cache_root)
            folders[impl] = folder
            self.run_step(f"{impl}-first-fill", impl, "saxpy", args, ns.saxpy_timeout,
                          warm_env(folder), tags={"cache_state": "fill"})
        in_process: Dict[str, List[Optional[float]]] = {i: [] for i in impls}
        wall: Dict[str, List[Optional[float]]] = {i: [] for i in impls}
        n = len(impls)
        for r in range(ns.first_pairs):
            for j in range(n):
                impl = impls[(r + j) % n]
                res = self.run_step(f"{impl}-first-{r + 1}", impl, "saxpy", args, ns.saxpy_timeout,
                                    warm_env(folders[impl]),
                                    tags={"cache_state": "fill"}, quiet=True)
                app = next((x for x in res.get("records", [])
                            if x.get("bench") == "saxpy_app" and "value" in x), None)
                in_process[impl].append(float(app["value"]) if app else None)
                wall[impl].append(res.get("result_ms"))
        # Only rounds where every implementation produced a result pair up.
        good = [r for r in range(ns.first_pairs)
                if all(in_process[i][r] is not None and wall[i][r] is not None for i in impls)]
        if len(good) < ns.first_pairs:
            self.note(f"first results: {ns.first_pairs - len(good)} rounds lacked a result "
                      "and were left out")
        self.record({
            "impl": "*", "bench": "paired_first_result", "kind": "paired", "unit": "ms",
            "pairs": len(good), "cache_state": "warm",
            "series": {i: [in_process[i][r] for r in good] for i in impls},
            "wall_series": {i: [wall[i][r] for r in good] for i in impls},
        })

    def gpu(self, impls: List[str]) -> None:
        if "paired" in self.ns.figures:
            self.paired(impls)
        groups = [
            g
            for g in ("launch,graph", "copy", "compile")
            if any(f in self.ns.figures for f in g.split(","))
        ]
        for impl in impls:
            for group in groups:
                only = ",".join(f for f in group.split(",") if f in self.ns.figures)
                self.run_step(
                    f"{impl}-{only.replace(',', '-')}",
                    impl,
                    "gpu",
                    self.figure_args() + ["--only", only],
                    self.ns.step_timeout,
                )
        if "saxpy" in self.ns.figures:
            for impl in impls:
                self.saxpy_runs(impl)
        if "first" in self.ns.figures:
            self.first_results(impls)

    def saxpy_runs(self, impl: str) -> None:
        """Cold runs (the first fills the folder the warm runs then use; each
        further one gets a new, empty folder), then the warm runs."""
        ns = self.ns
        args = ["--kernel-reps", str(ns.kernel_reps)]
        warm = tempfile.mkdtemp(prefix=f"{impl}-warm-", dir=self.cache_root)
        for i in range(max(ns.cold_runs, 1)):
            folder = (
                warm if i == 0 else tempfile.mkdtemp(prefix=f"{impl}-cold{i}-", dir=self.cache_root)
            )
            self.run_step(
                f"{impl}-saxpy-cold{i + 1}",
                impl,
                "saxpy",
                args,
                ns.saxpy_timeout,
                {"CUABI_CACHE_DIR": folder, "CUPY_CACHE_DIR": folder},
                wall_bench="first_result_wall",
                tags={"cache_state": "cold"},
            )
        for i in range(ns.warm_runs):
            self.run_step(
                f"{impl}-saxpy-warm{i + 1}",
                impl,
                "saxpy",
                args,
                ns.saxpy_timeout,
                {"CUABI_CACHE_DIR": warm, "CUPY_CACHE_DIR": warm},
                wall_bench="first_result_wall",
                tags={"cache_state": "warm"},
            )

    def cpu(self, impls: List[str]) -> None:
        """The CPU-only figures; then, where the stand-in driver was built,
        each implementation's launch, graph and compile figures against it:
        a launch that reaches a driver doing nothing times the binding's and
        cuabi's own share of a launch, and cache hits need a device."""
        ns = self.ns
        fake = ns.fake_driver
        null_env = {}
        if fake:
            null_env = {
                "CUABI_DRIVER_PATH": os.path.join(fake, "libcuda.so.1"),
                "LD_LIBRARY_PATH": fake + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
            }
        for impl in impls:
            self.run_step(f"{impl}-cpu", impl, "cpu", ["--arch", ns.arch], ns.step_timeout)
            if fake:
                args = [
                    "--bursts",
                    str(min(ns.bursts, 50)),
                    "--burst-size",
                    str(ns.burst_size),
                    "--warmup",
                    "3",
                    "--reps",
                    str(min(ns.reps, 10)),
                    "--only",
                    "launch,graph,compile",
                ]
                self.run_step(
                    f"{impl}-null-driver",
                    impl,
                    "gpu",
                    args,
                    ns.step_timeout,
                    null_env,
                    tags={"driver": "null"},
                )
            else:
                self.record(
                    {
                        "impl": impl,
                        "bench": "null-driver",
                        "skipped": "the stand-in driver was not built (see logs/build-c.log)",
                    }
                )


def gpu_from_nvidia_smi() -> Optional[Dict[str, str]]:
    """{device, driver} of the first GPU as nvidia-smi names it, or None:
    the results' header where no implementation reported its device (a run
    of figures that record none, such as "first" alone)."""
    try:
        line = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30,
        ).stdout.strip().splitlines()[0]
        name, driver = (x.strip() for x in line.split(",", 1))
        return {"device": name, "driver": driver}
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mode", choices=("gpu", "cpu"), required=True)
    p.add_argument("--out", required=True, help="results folder")
    p.add_argument("--c-build", required=True, help="folder holding bench_raw and bench_cuabi")
    p.add_argument("--carry", default="", help="folder holding rust/ and csharp/ binaries")
    p.add_argument("--stub-driver", default="", help="folder with a stub libcuda.so.1 (CPU mode)")
    p.add_argument(
        "--fake-driver",
        default="",
        help="folder with the stand-in libcuda.so.1 of bench/testing (CPU mode)",
    )
    p.add_argument("--python", default=sys.executable)
    p.add_argument(
        "--impls",
        default="",
        help="comma-separated subset of: " + ", ".join(i for i, _, _ in IMPLS),
    )
    p.add_argument("--figures", default="paired,graph,compile,saxpy,first")
    p.add_argument("--pairs", type=int, default=100, help="rounds of each paired launch figure")
    p.add_argument("--copy-pairs", type=int, default=30, help="rounds of each paired copy")
    p.add_argument("--first-pairs", type=int, default=12,
                   help="rounds of the paired time to first result")
    p.add_argument("--bursts", type=int, default=100)
    p.add_argument("--burst-size", type=int, default=200)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--kernel-reps", type=int, default=30)
    p.add_argument("--cold-runs", type=int, default=2)
    p.add_argument("--warm-runs", type=int, default=1)
    p.add_argument("--arch", default="sm_90", help="NVRTC target in CPU mode")
    p.add_argument("--step-timeout", type=float, default=150.0)
    p.add_argument("--saxpy-timeout", type=float, default=90.0)
    p.add_argument(
        "--budget",
        type=float,
        default=0.0,
        help="seconds after which the remaining steps are skipped (0: none)",
    )
    ns = p.parse_args()
    ns.figures = {f for f in ns.figures.split(",") if f}
    known = [i for i, _, _ in IMPLS]
    chosen = [i for i in ns.impls.split(",") if i] or known
    unknown = [i for i in chosen if i not in known]
    if unknown:
        p.error(f"unknown implementation(s) {', '.join(unknown)}; known: {', '.join(known)}")

    r = Runner(ns)
    r.record(
        {
            "bench": "session",
            "mode": ns.mode,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "settings": {k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(ns).items()},
            "gpu": gpu_from_nvidia_smi() if ns.mode == "gpu" else None,
        }
    )
    runnable = []
    kinds = {i: k for i, _, k in IMPLS}
    for impl in chosen:
        if ns.mode == "cpu" and kinds[impl] == "peer":
            r.record({"impl": impl, "bench": "*", "skipped": "peers are compared in GPU mode only"})
            continue
        why = r.why_unavailable(impl)
        if why:
            r.record({"impl": impl, "bench": "*", "skipped": why})
            r.note(f"{impl}: SKIPPED: {why}")
        else:
            runnable.append(impl)
    if ns.mode == "gpu":
        r.gpu(runnable)
    else:
        r.cpu(runnable)
    r.record({"bench": "session_end", "elapsed_s": r.elapsed()})
    r.note(f"all steps done in {r.elapsed():.0f} s; raw results in {r.raw_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
