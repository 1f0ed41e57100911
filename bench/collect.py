#!/usr/bin/env python3
"""Merges a run's JSON lines (raw.jsonl) into results.json, results.md and
chart.png, and evaluates the targets.

    python3 bench/collect.py RESULTS_DIR [--baseline OLD/results.json]

Every figure is the median the benchmark reported (host time per launch over
bursts, GB/s from the median copy, ...); where a figure was measured in more
than one process (SAXPY runs), the median of those. Each target states the
measured figure, the reference it is compared with, the limit, and met /
missed / not measured. With --baseline, each figure also shows its ratio to
the same figure in an earlier results.json (for spotting regressions between
runs, e.g. of the CPU-only mode in CI).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired  # noqa: E402
import paired_report  # noqa: E402

LABELS = {
    "c_raw": "C (raw driver)",
    "c_cuabi": "C (cuabi)",
    "py_ctypes": "Python ctypes",
    "py_cffi": "Python cffi",
    "py_high": "Python high layer (ctypes)",
    "py_high_cffi": "Python high layer (cffi)",
    "py_compiled": "Python compiled (cffi API mode)",
    "py_high_compiled": "Python high layer (compiled)",
    "rust": "Rust",
    "csharp": "C#",
    "cuda_core": "cuda.core",
    "cuda_bindings": "cuda.bindings",
    "cupy": "CuPy RawModule",
}
ORDER = list(LABELS)
CUABI = ["c_cuabi", "py_ctypes", "py_cffi", "py_compiled", "py_high", "py_high_cffi",
         "py_high_compiled", "rust", "csharp"]
COPIES = ["copy_h2d_pageable", "copy_d2h_pageable", "copy_h2d_pinned", "copy_d2h_pinned"]
CPU_FIGURES = [
    ("compile_nvrtc", "NVRTC compile of SAXPY"),
    ("pack_2args", "pack 2 args"),
    ("pack_16args", "pack 16 args"),
    ("invalid_handle_released", "call on a released handle"),
    ("invalid_handle_null", "call on a NULL handle"),
    ("error_path", "failing call raised as the language's error"),
    ("disposed_object", "call on a disposed object"),
]


def oneline(text: str, limit: int = 300) -> str:
    """A multi-line message on one line, shortened to ``limit`` characters."""
    s = " / ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def label(impl: str) -> str:
    return LABELS.get(impl, impl)


def fmt(v: Optional[float], digits: int = 3) -> str:
    if v is None:
        return "–"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    if a < 0.01:
        return f"{v:.2g}"
    return f"{v:.{digits}f}"


class Results:
    def __init__(self, records: List[Dict[str, Any]]) -> None:
        self.records = records
        self.session = next((r for r in records if r.get("bench") == "session"), {})
        self.mode = self.session.get("mode", "gpu")
        self.skipped: Dict[str, str] = {}
        self.errors: List[Dict[str, Any]] = []
        self.skips: List[Dict[str, Any]] = []
        self.info: Dict[str, Dict[str, Any]] = {}
        self.samples: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
        for r in records:
            impl, bench = r.get("impl"), r.get("bench")
            if not impl or not bench:
                continue
            if "skipped" in r:
                if bench == "*":
                    self.skipped[impl] = r["skipped"]
                else:
                    self.skips.append(r)
                continue
            if "error" in r:
                self.errors.append(r)
                continue
            if bench == "info":
                self.info.setdefault(impl, {}).update(
                    {k: v for k, v in r.items() if k not in ("impl", "bench", "step")}
                )
                continue
            if r.get("value") is None or r.get("cache_state") == "fill":
                continue
            key = bench
            if bench in ("saxpy_app", "first_result_wall"):
                key = f"{bench}_{r.get('cache_state', 'warm')}"
            self.samples.setdefault((impl, key), []).append(r)

    def figure(self, impl: str, bench: str) -> Optional[Dict[str, Any]]:
        recs = self.samples.get((impl, bench))
        if not recs:
            return None
        values = [float(r["value"]) for r in recs]
        out = {
            k: v
            for k, v in recs[0].items()
            if k not in ("impl", "bench", "step", "value", "cache_state")
        }
        out["value"] = statistics.median(values)
        out["runs"] = len(values)
        if len(values) > 1:
            out["run_values"] = values
            for k in ("p10", "p90", "min", "max", "median", "n", "exit_ms", "best", "median_ms"):
                out.pop(k, None)
        return out

    def value(self, impl: str, bench: str) -> Optional[float]:
        f = self.figure(impl, bench)
        return None if f is None else f["value"]

    def impls(self) -> List[str]:
        seen = {i for i, _ in self.samples} | set(self.skipped) | set(self.info)
        seen |= {e["impl"] for e in self.errors}
        return [i for i in ORDER if i in seen] + sorted(seen - set(ORDER))

    def benches(self) -> List[str]:
        return sorted({b for _, b in self.samples})

    def why_missing(self, impl: str, bench: str) -> str:
        if impl in self.skipped:
            return f"{label(impl)} skipped: {self.skipped[impl]}"
        errs = [
            e
            for e in self.errors
            if e["impl"] == impl
            and (e["bench"] == bench or e["bench"] in ("init", bench.rsplit("_", 1)[0]))
        ]
        if errs:
            return f"{label(impl)}: {oneline(errs[0]['error'], 200)}"
        return f"{label(impl)}: {bench} not measured"


# ---------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------


def evaluate_targets(R: Results) -> List[Dict[str, Any]]:
    t: List[Dict[str, Any]] = []

    def add(tid, desc, impl, measured, reference, limit, unit, ok, detail="", missing=""):
        status = (
            "not measured" if measured is None or reference is None else ("met" if ok else "missed")
        )
        t.append(
            {
                "id": tid,
                "target": desc,
                "impl": impl,
                "measured": measured,
                "reference": reference,
                "limit": limit,
                "unit": unit,
                "status": status,
                "detail": detail if status != "not measured" else missing,
            }
        )

    def best(impl: str, bench: str) -> Tuple[Optional[float], str]:
        """An implementation's fastest launch path for `bench` (its headline
        figure or one of its variants: _sized, _packed, _pack, _plan, _plan_pack,
        _plan_set, _prepared, _builder, _plan_launch, _boxed)."""
        found = [
            (R.value(impl, b), b[len(bench) :])
            for (i, b) in R.samples
            if i == impl and (b == bench or b.startswith(bench + "_"))
        ]
        found = [(v, name) for v, name in found if v is not None]
        if not found:
            return None, ""
        v, name = min(found)
        return v, name

    def launch_delta(impl: str, bench: str, limit: float, tid: str) -> None:
        raw = R.value("c_raw", bench)
        v, variant = best(impl, bench)
        delta = None if raw is None or v is None else v - raw
        n = bench.split("_")[1].replace("args", "")
        add(
            tid,
            f"{label(impl)} launch ({n} args) within {limit} us of raw C",
            impl,
            delta,
            raw,
            limit,
            "us over raw",
            delta is not None and delta <= limit,
            f"{fmt(v)} us ({bench}{variant}) vs raw {fmt(raw)} us",
            R.why_missing(impl if v is None else "c_raw", bench),
        )

    def ahead(impl: str, peer: str, bench: str, tid: str) -> None:
        (v, variant), (p, _) = best(impl, bench), best(peer, bench)
        n = bench.split("_")[1].replace("args", "")
        add(
            tid,
            f"{label(impl)} launch ({n} args) ahead of {label(peer)}",
            impl,
            v,
            p,
            None,
            "us",
            v is not None and p is not None and v < p,
            f"{fmt(v)} us ({bench}{variant}) vs {label(peer)} {fmt(p)} us",
            R.why_missing(impl if v is None else peer, bench),
        )

    for bench in ("launch_2args", "launch_16args"):
        launch_delta("c_cuabi", bench, 0.15, "launch-c")
        launch_delta("rust", bench, 0.2, "launch-rust")
        launch_delta("csharp", bench, 0.5, "launch-csharp")
        launch_delta("py_cffi", bench, 0.3, "launch-cffi")
        ahead("py_cffi", "cuda_core", bench, "launch-cffi-vs-cuda.core")
        launch_delta("py_compiled", bench, 0.15, "launch-compiled")
        ahead("py_compiled", "cuda_core", bench, "launch-compiled-vs-cuda.core")
        launch_delta("py_ctypes", bench, 1.0, "launch-ctypes")
        ahead("py_ctypes", "cupy", bench, "launch-ctypes-vs-cupy")
        ahead("py_ctypes", "cuda_bindings", bench, "launch-ctypes-vs-cuda.bindings")
        ahead("py_high", "cuda_core", bench, "launch-high-vs-cuda.core")
        ahead("py_high_cffi", "cuda_core", bench, "launch-high-cffi-vs-cuda.core")
        ahead("py_high_compiled", "cuda_core", bench, "launch-high-compiled-vs-cuda.core")

    for impl in CUABI:
        ratios = {}
        for c in COPIES:
            raw, v = R.value("c_raw", c), R.value(impl, c)
            if raw and v is not None:
                ratios[c] = v / raw
        worst = min(ratios, key=ratios.get) if len(ratios) == len(COPIES) else None
        add(
            "copy",
            f"{label(impl)} copies at >= 97% of raw C (each of H2D/D2H, pageable/pinned)",
            impl,
            ratios[worst] * 100 if worst else None,
            100.0,
            97.0,
            "% of raw (worst)",
            worst is not None and ratios[worst] >= 0.97,
            ", ".join(f"{c[5:]} {r * 100:.1f}%" for c, r in ratios.items()),
            R.why_missing(impl, "copy_h2d_pageable"),
        )

    for impl in CUABI:
        raw, v = R.value("c_raw", "saxpy_kernel"), R.value(impl, "saxpy_kernel")
        dev = None if raw is None or v is None else (v / raw - 1) * 100
        add(
            "saxpy-kernel",
            f"{label(impl)} SAXPY kernel time within 2% of raw C",
            impl,
            dev,
            raw,
            2.0,
            "% off raw",
            dev is not None and abs(dev) <= 2.0,
            f"{fmt(v, 4)} ms vs raw {fmt(raw, 4)} ms",
            R.why_missing(impl if v is None else "c_raw", "saxpy_kernel"),
        )

    raw_first = R.value("c_raw", "saxpy_app_warm") or R.value("c_raw", "saxpy_app_cold")
    raw_wall = R.value("c_raw", "first_result_wall_warm")
    for impl in CUABI:
        v = R.value(impl, "saxpy_app_warm")
        wall = R.value(impl, "first_result_wall_warm")
        add(
            "first-result-warm",
            f"{label(impl)} time to first result, warm cache, below raw C's (which compiles "
            "every run)",
            impl,
            v,
            raw_first,
            raw_first,
            "ms (first API call to verified result)",
            v is not None and raw_first is not None and v < raw_first,
            f"{fmt(v)} ms vs raw {fmt(raw_first)} ms; from process start: {fmt(wall)} ms vs "
            f"raw {fmt(raw_wall)} ms",
            R.why_missing(impl if v is None else "c_raw", "saxpy_app"),
        )
    return t


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def table(head: List[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def spread(f: Optional[Dict[str, Any]]) -> str:
    if not f or "p10" not in f:
        return ""
    return f" ({fmt(f['p10'])}–{fmt(f['p90'])})"


def launch_table(R: Results, impls: List[str]) -> str:
    """Launch figures (and each implementation's variants), with Δ to raw C."""
    raw2, raw16 = R.value("c_raw", "launch_2args"), R.value("c_raw", "launch_16args")

    def delta(f: Optional[Dict[str, Any]], raw: Optional[float]) -> str:
        if not f or raw is None:
            return "–"
        d = f["value"] - raw
        return ("+" if d > 0 else "") + fmt(d)

    rows = []
    for impl in impls:
        variants = set()
        for i, b in R.samples:
            for base in ("launch_2args", "launch_16args"):
                if i == impl and b.startswith(base):
                    variants.add(b[len(base) :])
        for v in sorted(variants):
            f2, f16 = R.figure(impl, "launch_2args" + v), R.figure(impl, "launch_16args" + v)
            path = (f2 or f16 or {}).get("path", "")
            rows.append(
                [
                    label(impl) + (f" `{v.strip('_')}`" if v else ""),
                    fmt(f2["value"] if f2 else None) + spread(f2),
                    delta(f2, raw2),
                    fmt(f16["value"] if f16 else None) + spread(f16),
                    delta(f16, raw16),
                    path,
                ]
            )
    return table(["implementation", "2 args (us)", "Δ raw", "16 args (us)", "Δ raw", "how"], rows)


def markdown(
    R: Results,
    env: Dict[str, Any],
    targets: List[Dict[str, Any]],
    baseline: Optional["Results"],
    chart: Optional[str],
    paired_md: Optional[List[str]] = None,
    paired_chart: Optional[str] = None,
) -> str:
    out: List[str] = []
    impls = R.impls()
    gpu = env.get("gpu") or "no GPU"
    out.append(f"# cuabi benchmarks — {env.get('date', '')} — {gpu}\n")
    facts = [
        ("mode", "GPU" if R.mode == "gpu" else "CPU only"),
        (
            "GPU",
            (
                f"{gpu} (cc {env.get('cc') or '?'}), driver {env.get('driver') or '?'}"
                if R.mode == "gpu"
                else "none"
            ),
        ),
        ("host", f"{env.get('cpu', '?')}, {env.get('cores', '?')} cores"),
        ("python", env.get("python", "?")),
        ("cuabi", f"{env.get('cuabi_version', '?')} {env.get('commit', '')}".strip()),
        (
            "peers",
            ", ".join(f"{label(k)} {v}" for k, v in env.get("peer_versions", {}).items()) or "–",
        ),
        ("run time", f"{env.get('elapsed_s', 0):.0f} s"),
    ]
    out.append("\n".join(f"- **{k}**: {v}" for k, v in facts) + "\n")
    if chart:
        out.append(f"![chart]({chart})\n")

    if R.mode == "gpu":
        out.append("## Targets\n")
        rows = []
        for t in targets:
            m = t["measured"]
            status = {"met": "**met**", "missed": "**MISSED**"}.get(t["status"], t["status"])
            rows.append(
                [
                    t["target"],
                    fmt(m) + (f" {t['unit']}" if m is not None else ""),
                    status,
                    t["detail"],
                ]
            )
        out.append(table(["target", "measured", "status", "detail"], rows) + "\n")
        met = sum(1 for t in targets if t["status"] == "met")
        missed = sum(1 for t in targets if t["status"] == "missed")
        nm = sum(1 for t in targets if t["status"] == "not measured")
        und = sum(1 for t in targets if t["status"] == "undecided")
        out.append(f"{met} met, {missed} missed, {und} undecided (the interval straddles the "
                   f"limit), {nm} not measured.\n")
        if paired_chart:
            out.append(f"![paired figures]({paired_chart})\n")
        out.extend(paired_md or [])

        # 1. Launch overhead (unpaired; only when asked for with --figures launch)
        if any(b.startswith("launch_") for _, b in R.samples):
            out.append("## 1. Launch overhead (unpaired)\n")
            out.append(
                "Host time per launch of an empty kernel, median over bursts of launches "
                "(p10–p90 in brackets); the stream is synchronised between bursts, outside "
                "the timed region. Δ is the difference to raw C, timed in another process "
                "at another moment: the paired figures above are the ones to judge by.\n"
            )
            out.append(launch_table(R, impls) + "\n")

        # 2. Graph replay
        out.append("## 2. Graph replay\n")
        out.append(
            "A captured graph of 1000 launches of the 2-argument empty kernel: "
            "(replay + synchronize) / 1000, and the host time of the replay call.\n"
        )
        rows = []
        for impl in impls:
            g, c = R.figure(impl, "graph_replay"), R.figure(impl, "graph_launch_call")
            if g or c:
                rows.append(
                    [
                        label(impl),
                        fmt(g["value"] if g else None) + spread(g),
                        fmt(c["value"] if c else None) + spread(c),
                    ]
                )
        out.append(table(["implementation", "per kernel (us)", "replay call (us)"], rows) + "\n")

        # 3. Table 1
        out.append("## 3. SAXPY (the overview's Table 1 on this GPU)\n")
        out.append(
            "512 threads x 32768 blocks, a = 2. Kernel time: CUDA events around one "
            "SAXPY launch that is enqueued behind an untimed SAXPY (so the stream is "
            "busy while the host records the start event and launches, and the interval "
            "holds GPU work only, not the host's launch latency); median of the launches "
            "after the verified run in each process, then the median over processes. "
            "Application time: first API call to verified "
            "result, in a fresh process (host data made before the clock starts), "
            "median of the warm-cache runs.\n"
        )
        rk = R.value("c_raw", "saxpy_kernel")
        ra = R.value("c_raw", "saxpy_app_warm")
        rows = []
        for impl in impls:
            k, a = R.figure(impl, "saxpy_kernel"), R.figure(impl, "saxpy_app_warm")
            if not k and not a:
                continue
            rows.append(
                [
                    label(impl),
                    fmt(k["value"] * 1000 if k else None),
                    f"{(k['value'] / rk - 1) * 100:+.1f}%" if k and rk else "–",
                    fmt(a["value"] if a else None),
                    f"{a['value'] / ra:.2f}x" if a and ra else "–",
                    (a or {}).get("cache", ""),
                ]
            )
        out.append(
            table(
                ["implementation", "kernel (us)", "vs raw", "application (ms)", "vs raw", "cache"],
                rows,
            )
            + "\n"
        )

        # 4. Copies (unpaired; only when asked for with --figures copy)
        rows = []
        for impl in impls:
            vals = [R.value(impl, c) for c in COPIES]
            if all(v is None for v in vals):
                continue
            cells = []
            for c, v in zip(COPIES, vals):
                raw = R.value("c_raw", c)
                cells.append(
                    fmt(v, 2)
                    + (f" ({v / raw * 100:.0f}%)" if v and raw and impl != "c_raw" else "")
                )
            rows.append([label(impl)] + cells)
        if rows:
            out.append("## 4. Copies (64 MiB, unpaired)\n")
            out.append("GB/s = 1e9 bytes/s from the median of the timed copies.\n")
            out.append(
                table(
                    ["implementation", "H2D pageable", "D2H pageable", "H2D pinned", "D2H pinned"],
                    rows,
                )
                + "\n"
            )

        # 5. Compilation
        out.append("## 5. Compilation\n")
        out.append(
            "NVRTC compile of the SAXPY source (CUBIN); a cache hit of the one call "
            "from source to module (includes loading it); module load from CUBIN and "
            "from PTX (JIT; the driver's JIT cache is off); time to first result in a "
            "fresh process, in-process (first API call to verified result) and from "
            "process start to the result line, with a cold (empty) and a warm cache.\n"
        )
        rows = []
        for impl in impls:
            cells = [
                R.value(impl, b)
                for b in (
                    "compile_nvrtc",
                    "compile_cache_hit",
                    "load_cubin",
                    "load_ptx",
                    "saxpy_app_cold",
                    "saxpy_app_warm",
                    "first_result_wall_cold",
                    "first_result_wall_warm",
                )
            ]
            if all(c is None for c in cells):
                continue
            rows.append([label(impl)] + [fmt(c) for c in cells])
        out.append(
            table(
                [
                    "implementation",
                    "NVRTC (ms)",
                    "cache hit (ms)",
                    "load CUBIN (ms)",
                    "load PTX (ms)",
                    "first result cold (ms)",
                    "warm (ms)",
                    "from start, cold (ms)",
                    "warm (ms)",
                ],
                rows,
            )
            + "\n"
        )
    else:
        out.append("## CPU-only figures\n")
        out.append(
            "What needs no GPU, for spotting regressions between GPU runs (medians; "
            "p10–p90 in brackets"
            + ("; ratio to the baseline run in parentheses" if baseline else "")
            + ").\n"
        )
        head = ["implementation"] + [
            f"{d} ({'ms' if b == 'compile_nvrtc' else 'ns'})" for b, d in CPU_FIGURES
        ]
        rows = []
        for impl in impls:
            cells = []
            for b, _ in CPU_FIGURES:
                f = R.figure(impl, b)
                cell = fmt(f["value"] if f else None) + spread(f)
                if f and baseline:
                    old = baseline.value(impl, b)
                    if old:
                        cell += f" ({f['value'] / old:.2f}x)"
                cells.append(cell)
            if any(c != "–" for c in cells):
                rows.append([label(impl)] + cells)
        out.append(table(head, rows) + "\n")
        if any(b.startswith("launch_") for _, b in R.samples):
            out.append("### Against the stand-in driver\n")
            out.append(
                "Each implementation's launch path against tests/fake/fake_cuda.c, a "
                "driver whose cuLaunchKernel does nothing: the binding's and cuabi's own "
                "share of a launch, and what it adds over raw C (Δ). Same loops as the "
                "GPU figures; no GPU figure.\n"
            )
            out.append(launch_table(R, impls) + "\n")
            rows = []
            for impl in impls:
                c, h = R.figure(impl, "graph_launch_call"), R.figure(impl, "compile_cache_hit")
                if c or h:
                    rows.append(
                        [
                            label(impl),
                            fmt(c["value"] if c else None) + spread(c),
                            fmt(h["value"] if h else None) + spread(h),
                        ]
                    )
            out.append(
                table(["implementation", "graph replay call (us)", "compile cache hit (ms)"], rows)
                + "\n"
            )
        paths = sorted(
            {
                (label(i), b, R.figure(i, b).get("path", ""))
                for i, b in R.samples
                if R.figure(i, b) and R.figure(i, b).get("path")
            }
        )
        if paths:
            out.append("How each was measured:\n")
            out.append("\n".join(f"- {i}, `{b}`: {p}" for i, b, p in paths) + "\n")

    if R.skipped or R.errors or R.skips:
        out.append("## Skipped and failed\n")
        lines = [f"- {label(i)}: skipped — {why}" for i, why in R.skipped.items()]
        lines += [
            f"- {label(s['impl'])}, `{s['bench']}`: skipped — {s['skipped']}" for s in R.skips
        ]
        lines += [
            f"- {label(e['impl'])}, `{e['bench']}`: **error** — {oneline(e['error'])}"
            + (f" (logs/{e['step']}.log)" if e.get("step") and "logs/" not in e["error"] else "")
            for e in R.errors
        ]
        out.append("\n".join(lines) + "\n")

    out.append("## Method\n")
    out.append(
        "- Every implementation runs the same measurement: warm-up first; launch figures are "
        "the median of >= 50 bursts of launches timed with the language's monotonic clock "
        "(clock_gettime(CLOCK_MONOTONIC), time.perf_counter_ns, Instant, Stopwatch), the "
        "stream synchronised between bursts outside the timed region.\n"
        "- Each group of figures runs in its own process; SAXPY runs each in a fresh process. "
        "A cold cache is a new, empty cache folder (CUABI_CACHE_DIR, CUPY_CACHE_DIR); a warm "
        "one was filled by the first cold run. Raw C, cuda.core and cuda.bindings compile every "
        "run (no cache).\n"
        "- All SAXPY runs compile CUBIN for the device (sm_XY) with --fmad=false, use the "
        "device's primary context, pass n as size_t and verify every element on the host.\n"
        "- Raw data: raw.jsonl (one record per figure, with its step) and each step's log, "
        "logs/<step>.log, both in logs.tar.gz unless run with --keep-logs.\n"
    )
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Chart
# ---------------------------------------------------------------------------


def chart(R: Results, path: str) -> Optional[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:  # matplotlib missing: the Markdown says so
        return f"no chart: matplotlib is not available ({exc})"
    impls = R.impls()

    def bars(ax, benches, names, title, unit, log=False, scale=1.0):
        present = [i for i in impls if any(R.value(i, b) is not None for b in benches)]
        if not present:
            ax.set_visible(False)
            return
        width = 0.8 / len(benches)
        for j, (b, n) in enumerate(zip(benches, names)):
            xs = [k + (j - (len(benches) - 1) / 2) * width for k in range(len(present))]
            ys = [(R.value(i, b) or 0) * scale for i in present]
            ax.bar(xs, ys, width, label=n)
        ax.set_xticks(range(len(present)))
        ax.set_xticklabels([label(i) for i in present], rotation=35, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit, fontsize=8)
        if log:
            ax.set_yscale("log")
        if len(benches) > 1:
            ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)

    if R.mode == "gpu":
        fig, axes = plt.subplots(2, 3, figsize=(17, 9.5))
        bars(
            axes[0][0],
            ["launch_2args", "launch_16args"],
            ["2 args", "16 args"],
            "1. Launch overhead (host time per launch)",
            "us",
            log=True,
        )
        bars(axes[0][1], ["graph_replay"], ["per kernel"], "2. Graph replay (per kernel)", "us")
        bars(
            axes[0][2],
            ["saxpy_kernel"],
            ["kernel"],
            "3. SAXPY kernel time (events)",
            "us",
            scale=1000.0,
        )
        bars(
            axes[1][0],
            ["saxpy_app_cold", "saxpy_app_warm"],
            ["cold cache", "warm cache"],
            "3./5. SAXPY application time (first call to verified result)",
            "ms",
        )
        bars(
            axes[1][1],
            COPIES,
            ["H2D pageable", "D2H pageable", "H2D pinned", "D2H pinned"],
            "4. Copies, 64 MiB",
            "GB/s",
        )
        bars(
            axes[1][2],
            ["compile_nvrtc", "compile_cache_hit", "load_cubin", "load_ptx"],
            ["NVRTC", "cache hit", "load CUBIN", "load PTX"],
            "5. Compilation",
            "ms",
            log=True,
        )
    else:
        fig, axes = plt.subplots(1, 4, figsize=(20, 5))
        bars(axes[0], ["compile_nvrtc"], ["NVRTC"], "NVRTC compile of SAXPY", "ms")
        bars(
            axes[1],
            ["pack_2args", "pack_16args"],
            ["2 args", "16 args"],
            "Argument packing",
            "ns",
            log=True,
        )
        bars(
            axes[2],
            ["invalid_handle_released", "invalid_handle_null", "error_path"],
            ["released handle", "NULL handle", "error raised"],
            "Handle validation",
            "ns",
            log=True,
        )
        bars(
            axes[3],
            ["launch_2args", "launch_16args"],
            ["2 args", "16 args"],
            "Launch against the stand-in driver",
            "us",
            log=True,
        )
    fig.suptitle("cuabi benchmarks", fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# ---------------------------------------------------------------------------


def environment(R: Results, out_dir: str) -> Dict[str, Any]:
    env: Dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "machine": platform.machine(),
    }
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    env["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    started = R.session.get("started")
    if started:
        env["date"] = started[:10]
    end = next((r for r in R.records if r.get("bench") == "session_end"), {})
    env["elapsed_s"] = end.get("elapsed_s", 0)
    for impl in ("c_raw", "c_cuabi", "py_ctypes", "cuda_core", "cupy"):
        i = R.info.get(impl, {})
        env.setdefault("gpu", i.get("device"))
        env.setdefault("cc", i.get("cc"))
        if i.get("driver"):
            env["driver"] = i["driver"]
        if i.get("nvrtc"):
            env["nvrtc"] = i["nvrtc"]
    smi = R.session.get("gpu") or {}
    if not env.get("gpu") and smi.get("device"):
        env["gpu"] = smi["device"]
    if not env.get("driver") and smi.get("driver"):
        env["driver"] = smi["driver"]
    if R.mode != "gpu":
        env["gpu"] = None
    env["peer_versions"] = {
        p: R.info[p]["version"]
        for p in ("cuda_core", "cuda_bindings", "cupy")
        if p in R.info and R.info[p].get("version")
    }
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        env["commit"] = subprocess.run(
            ["git", "-C", repo, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except Exception:
        env["commit"] = ""
    try:  # the header's description, written by scripts/regen
        with open(os.path.join(repo, "include", "cuabi", "cuabi.json"), encoding="utf-8") as f:
            env["cuabi_version"] = json.load(f)["version"]["string"]
    except (OSError, ValueError, KeyError):
        pass
    return env


def paired_summary(P) -> Dict[str, Any]:
    """Each paired figure's medians and intervals (the samples stay in raw.jsonl)."""
    out: Dict[str, Any] = {}
    for (impl, bench), rec in sorted(P.items()):
        s = rec["series"]
        fig: Dict[str, Any] = {"pairs": rec.get("pairs"), "headline": rec.get("headline"),
                               "median": {k: paired.median(v) for k, v in s.items() if v}}
        if "c_ref" in s:
            fig["minus_c_ref"] = {k: paired.compare(s, k, "c_ref") for k in s if k != "c_ref"}
            fig["best"] = paired_report.best_path(rec)
        if "raw" in s:
            fig["minus_raw"] = {k: paired.compare(s, k, "raw") for k in s if k not in ("c_ref", "raw")}
        if "c_raw" in s:
            fig["minus_c_raw"] = {k: paired.compare(s, k, "c_raw") for k in s if k != "c_raw"}
            fig["over_c_raw"] = {k: paired.compare(s, k, "c_raw", ratio=True) for k in s if k != "c_raw"}
            w = rec.get("wall_series", {})
            fig["wall_median"] = {k: paired.median(v) for k, v in w.items() if v}
        out.setdefault(impl, {})[bench] = fig
    return out


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("results_dir")
    p.add_argument("--baseline", help="an earlier results.json to compare with")
    ns = p.parse_args()
    raw_path = os.path.join(ns.results_dir, "raw.jsonl")
    packed = os.path.join(ns.results_dir, "logs.tar.gz")
    if os.path.isfile(raw_path):
        with open(raw_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    elif os.path.isfile(packed):  # run.sh packs raw.jsonl with the logs
        import tarfile

        with tarfile.open(packed) as tar:
            member = tar.extractfile("raw.jsonl")
            lines = member.read().decode("utf-8").splitlines() if member else []
    else:
        print(f"collect.py: neither {raw_path} nor {packed}", file=sys.stderr)
        return 1
    records = []
    for line in lines:
        line = line.strip()
        if line:
            try:
                records.append(json.loads(line))
            except ValueError:
                pass
    R = Results(records)
    baseline = None
    if ns.baseline:
        try:
            with open(ns.baseline, encoding="utf-8") as f:
                old = json.load(f)
            recs = []
            for impl, benches in old.get("figures", {}).items():
                for bench, fig in benches.items():
                    recs.append({"impl": impl, "bench": bench, "value": fig.get("value")})
            baseline = Results(recs)
        except (OSError, ValueError) as exc:
            print(f"collect.py: baseline {ns.baseline} unreadable: {exc}", file=sys.stderr)
    env = environment(R, ns.results_dir)
    targets = evaluate_targets(R) if R.mode == "gpu" else []
    P = paired_report.collect(records)
    # The implementations of the paired tables: those with a figure, an error
    # or a note, and those with only paired records (a run of paired figures
    # alone).
    paired_impls = R.impls() + [i for i in ORDER if i not in R.impls() and any(k == i for k, _ in P)]
    paired_chart_note = None
    if P:
        # Launch, copy and first-result targets are judged on the paired
        # intervals; the unpaired ones of the same name are dropped.
        targets = [t for t in targets
                   if not (t["id"].startswith("launch-") or t["id"] in ("copy", "first-result-warm"))]
        targets += paired_report.targets(P, label)
        paired_chart_note = paired_report.chart(P, paired_impls, label, os.path.join(ns.results_dir, "paired.png"))
    chart_note = chart(R, os.path.join(ns.results_dir, "chart.png"))
    figures = {
        impl: {b: R.figure(impl, b) for i, b in R.samples if i == impl} for impl in R.impls()
    }
    figures = {k: v for k, v in figures.items() if v}
    result = {
        "mode": R.mode,
        "environment": env,
        "settings": R.session.get("settings", {}),
        "implementations": {
            impl: {
                "label": label(impl),
                "status": ("skipped: " + R.skipped[impl]) if impl in R.skipped else "ran",
                "errors": [
                    {"bench": e["bench"], "error": e["error"], "step": e.get("step")}
                    for e in R.errors
                    if e["impl"] == impl
                ],
                "info": R.info.get(impl, {}),
            }
            for impl in R.impls()
        },
        "figures": figures,
        "targets": targets,
        "summary": {
            s: sum(1 for t in targets if t["status"] == s)
            for s in ("met", "missed", "undecided", "not measured")
        },
        "paired": paired_summary(P),
        "chart": None if chart_note else "chart.png",
        "notes": [chart_note] if chart_note else [],
    }
    if baseline:
        result["baseline"] = ns.baseline
    with open(os.path.join(ns.results_dir, "results.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2, sort_keys=False)
        f.write("\n")
    md = markdown(R, env, targets, baseline, None if chart_note else "chart.png",
                  paired_report.markdown(P, paired_impls, label),
                  None if (paired_chart_note or not P) else "paired.png")
    if chart_note:
        md += f"\n_{chart_note}_\n"
    with open(os.path.join(ns.results_dir, "results.md"), "w", encoding="utf-8") as f:
        f.write(md)
    s = result["summary"]
    print(
        f"[bench] wrote {ns.results_dir}/results.json, results.md"
        + ("" if chart_note else ", chart.png")
        + (
            f"; targets: {s['met']} met, {s['missed']} missed, {s['undecided']} undecided, "
            f"{s['not measured']} not measured"
            if R.mode == "gpu"
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
