"""The paired figures of a results folder: tables, targets and the chart
(bench/README.md, "Paired figures"). collect.py calls these; sessions.py
reuses them across several results folders."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import paired

LAUNCH_BENCHES = ("paired_launch_2args", "paired_launch_16args")
COPY_BENCHES = (
    ("paired_copy_to_device_pageable", "H2D pageable"),
    ("paired_copy_to_host_pageable", "D2H pageable"),
    ("paired_copy_to_device_pinned", "H2D pinned"),
    ("paired_copy_to_host_pinned", "D2H pinned"),
)
# Allocate + free, each way and size (Rust and C#): the binding's `alloc`
# against the reference's raw driver calls in the same process.
ALLOC_BENCHES = tuple(
    ("paired_alloc_%s_%d" % (way, n), "%s, %s" % (what, size))
    for way, what in (("ordered", "stream-ordered"), ("sync", "cuMemAlloc"))
    for n, size in ((256, "256 B"), (1048576, "1 MiB"))
)
# Series that are references or peers, never one of the implementation's paths.
NOT_PATHS = {"c_ref", "raw", "cuda_core"}
PYTHON = ["py_ctypes", "py_cffi", "py_compiled", "py_high", "py_high_cffi", "py_high_compiled"]
PY_PEERS = ["cuda_core", "cupy", "cuda_bindings"]


def collect(records: List[Dict[str, Any]]) -> Dict[Tuple[str, str], Dict[str, Any]]:
    """(impl, bench) -> the paired record (the last one, if repeated)."""
    out: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for r in records:
        if r.get("kind") == "paired" and isinstance(r.get("series"), dict) and "error" not in r:
            series = {k: [float(x) for x in v if x is not None] for k, v in r["series"].items()}
            r = dict(r, series=series)
            if "wall_series" in r:
                r["wall_series"] = {k: [float(x) for x in v if x is not None]
                                    for k, v in r["wall_series"].items()}
            out[(r.get("impl", "*"), r["bench"])] = r
    return out


def best_path(rec: Dict[str, Any]) -> Optional[str]:
    """The implementation's fastest path: the lowest median of path - c_ref."""
    s = rec["series"]
    cands = []
    for k in s:
        if k in NOT_PATHS:
            continue
        iv = paired.compare(s, k, "c_ref")
        if iv:
            cands.append((iv["median"], k))
    return min(cands)[1] if cands else None


def fmt_iv(iv: Optional[Dict[str, float]], digits: int = 3, unit: str = "") -> str:
    if not iv:
        return "–"
    f = "%+." + str(digits) + "f"
    return (f % iv["median"]) + " [" + (f % iv["lo"]) + ", " + (f % iv["hi"]) + "]" + unit


def fmt_ratio(iv: Optional[Dict[str, float]], pct: bool = True) -> str:
    if not iv:
        return "–"
    if pct:
        return "%.1f%% [%.1f, %.1f]" % (iv["median"] * 100, iv["lo"] * 100, iv["hi"] * 100)
    return "%.3f [%.3f, %.3f]" % (iv["median"], iv["lo"], iv["hi"])


def launch_rows(P, impls: List[str], label) -> List[List[str]]:
    rows = []
    for impl in impls:
        for bench in LAUNCH_BENCHES:
            rec = P.get((impl, bench))
            if not rec:
                continue
            s = rec["series"]
            n = bench.split("_")[2].replace("args", "")
            raw_iv = paired.compare(s, "raw", "c_ref")
            ref_med = paired.median(s["c_ref"]) if s.get("c_ref") else None
            for k in s:
                if k in ("c_ref", "raw"):
                    continue
                mark = " (headline)" if k == rec.get("headline") else ""
                rows.append([
                    label(impl), n, "`%s`%s" % (k, mark),
                    "%.3f" % paired.median(s[k]),
                    fmt_iv(paired.compare(s, k, "c_ref")),
                    fmt_iv(paired.compare(s, k, "raw")) if "raw" in s and k not in NOT_PATHS else "–",
                    fmt_iv(raw_iv) if "raw" in s else "–",
                    "%.3f" % ref_med if ref_med is not None else "–",
                ])
    return rows


def copy_rows(P, impls: List[str], label) -> List[List[str]]:
    rows = []
    for impl in impls:
        cells = []
        found = False
        for bench, _ in COPY_BENCHES:
            rec = P.get((impl, bench))
            if rec:
                found = True
                # Bandwidth relative to raw C: t_ref / t_impl per round.
                cells.append(fmt_ratio(paired.compare(rec["series"], "c_ref", "copy", ratio=True)))
            else:
                cells.append("–")
        if found:
            rows.append([label(impl)] + cells)
    return rows


def alloc_rows(P, impls: List[str], label) -> List[List[str]]:
    rows = []
    for impl in impls:
        for bench, name in ALLOC_BENCHES:
            rec = P.get((impl, bench))
            if not rec or "alloc" not in rec["series"] or not rec["series"].get("c_ref"):
                continue
            s = rec["series"]
            rows.append([label(impl), name, "%.3f" % paired.median(s["alloc"]),
                         "%.3f" % paired.median(s["c_ref"]), fmt_iv(paired.compare(s, "alloc", "c_ref")),
                         fmt_ratio(paired.compare(s, "alloc", "c_ref", ratio=True), pct=False)])
    return rows


def first_rows(P, label) -> List[List[str]]:
    rec = P.get(("*", "paired_first_result"))
    if not rec:
        return []
    s, w = rec["series"], rec.get("wall_series", {})
    rows = []
    for impl in s:
        rows.append([
            label(impl), "%.1f" % paired.median(s[impl]) if s[impl] else "–",
            fmt_iv(paired.compare(s, impl, "c_raw"), 1) if impl != "c_raw" else "–",
            fmt_ratio(paired.compare(s, impl, "c_raw", ratio=True), pct=False) if impl != "c_raw" else "–",
            "%.1f" % paired.median(w[impl]) if w.get(impl) else "–",
            fmt_iv(paired.compare(w, impl, "c_raw"), 1) if impl != "c_raw" and w.get(impl) else "–",
        ])
    return rows


def targets(P, label) -> List[Dict[str, Any]]:
    """The issue's targets on the paired intervals."""
    t: List[Dict[str, Any]] = []

    def add(tid, desc, impl, iv, limit, unit, status, detail, missing=""):
        t.append({"id": tid, "target": desc, "impl": impl,
                  "measured": None if iv is None else iv["median"],
                  "interval": None if iv is None else [iv["lo"], iv["hi"]],
                  "reference": None, "limit": limit, "unit": unit, "status": status,
                  "detail": detail if iv is not None else (missing or "not measured")})

    def launch_limit(impl, limit, tid):
        for bench in LAUNCH_BENCHES:
            n = bench.split("_")[2].replace("args", "")
            rec = P.get((impl, bench))
            path = best_path(rec) if rec else None
            iv = paired.compare(rec["series"], path, "c_ref") if path else None
            add(tid, "%s launch (%s args) within %s us of raw C (paired)" % (label(impl), n, limit),
                impl, iv, limit, "us over raw C", paired.judge_at_most(iv, limit),
                "`%s` - c_ref: %s us" % (path, fmt_iv(iv)) if iv else "",
                "no paired record for %s" % label(impl))

    launch_limit("c_cuabi", 0.15, "launch-c")
    launch_limit("rust", 0.2, "launch-rust")
    launch_limit("csharp", 0.5, "launch-csharp")
    launch_limit("py_cffi", 0.3, "launch-cffi")
    launch_limit("py_compiled", 0.15, "launch-compiled")
    launch_limit("py_ctypes", 1.0, "launch-ctypes")

    # The object layer against cuda.core, interleaved in one process.
    for impl in ("py_high", "py_high_cffi", "py_high_compiled"):
        for bench in LAUNCH_BENCHES:
            n = bench.split("_")[2].replace("args", "")
            rec = P.get((impl, bench))
            path = best_path(rec) if rec else None
            iv = (paired.compare(rec["series"], path, "cuda_core")
                  if rec and path and "cuda_core" in rec["series"] else None)
            add("launch-high-vs-cuda.core",
                "%s launch (%s args) ahead of cuda.core (paired in one process)" % (label(impl), n),
                impl, iv, 0.0, "us vs cuda.core", paired.judge_at_most(iv, 0.0) if iv else "not measured",
                "`%s` - cuda_core: %s us" % (path, fmt_iv(iv)) if iv else "",
                "no cuda_core series in %s's record" % label(impl))

    # Low layers against peers measured in their own processes: each is paired
    # with c_ref, and the two differences are compared.
    for impl, peer in (("py_cffi", "cuda_core"), ("py_compiled", "cuda_core"), ("py_ctypes", "cupy"),
                       ("py_ctypes", "cuda_bindings")):
        for bench in LAUNCH_BENCHES:
            n = bench.split("_")[2].replace("args", "")
            a, b = P.get((impl, bench)), P.get((peer, bench))
            iv = None
            if a and b:
                pa, pb = best_path(a), best_path(b)
                if pa and pb:
                    iv = paired.compare_across(
                        paired.differences(a["series"][pa], a["series"]["c_ref"]),
                        paired.differences(b["series"][pb], b["series"]["c_ref"]))
            add("launch-%s-vs-%s" % (impl, peer),
                "%s launch (%s args) ahead of %s (each paired with raw C)" % (label(impl), n, label(peer)),
                impl, iv, 0.0, "us vs peer", paired.judge_at_most(iv, 0.0) if iv else "not measured",
                "(%s - c_ref) - (%s - c_ref): %s us" % (label(impl), label(peer), fmt_iv(iv)) if iv else "",
                "missing paired record of %s or %s" % (label(impl), label(peer)))

    def combine(parts):
        """One status over several intervals: missed if any is, met if all are."""
        st = [p for p in parts if p != "not measured"]
        if not st:
            return "not measured"
        if "missed" in st:
            return "missed"
        if len(st) == len(parts) and all(p == "met" for p in st):
            return "met"
        return "undecided"

    cuabi = ["c_cuabi", "py_ctypes", "py_cffi", "py_compiled", "py_high", "py_high_cffi",
             "py_high_compiled", "rust", "csharp"]
    for impl in cuabi:
        ivs, parts, details = [], [], []
        for bench, name in COPY_BENCHES:
            rec = P.get((impl, bench))
            iv = paired.compare(rec["series"], "c_ref", "copy", ratio=True) if rec else None
            parts.append(paired.judge_at_least(iv, 0.97))
            if iv:
                ivs.append(iv)
                details.append("%s %s" % (name, fmt_ratio(iv)))
        worst = min(ivs, key=lambda x: x["median"]) if ivs else None
        t.append({"id": "copy", "impl": impl,
                  "target": "%s copies at >= 97%% of raw C's bandwidth, each of H2D/D2H x pageable/pinned (paired)" % label(impl),
                  "measured": worst["median"] if worst else None,
                  "interval": [worst["lo"], worst["hi"]] if worst else None,
                  "reference": None, "limit": 0.97, "unit": "x raw C (worst)",
                  "status": combine(parts), "detail": "; ".join(details) or "not measured"})

    rec = P.get(("*", "paired_first_result"))
    s = rec["series"] if rec else {}
    for impl in ("c_cuabi", "rust"):
        iv = paired.compare(s, impl, "c_raw") if s else None
        add("first-result", "%s time to first result (warm cache) below raw C's (paired runs)" % label(impl),
            impl, iv, 0.0, "ms vs raw C", paired.judge_at_most(iv, 0.0) if iv else "not measured",
            "%s - raw C: %s ms" % (label(impl), fmt_iv(iv, 1)) if iv else "")
    for impl in PYTHON:
        ivs, parts, details = [], [], []
        for peer in PY_PEERS:
            iv = paired.compare(s, impl, peer) if s else None
            parts.append(paired.judge_at_most(iv, 0.0) if iv else "not measured")
            if iv:
                ivs.append(iv)
                details.append("- %s: %s ms" % (label(peer), fmt_iv(iv, 1)))
        worst = max(ivs, key=lambda x: x["median"]) if ivs else None
        t.append({"id": "first-result-python", "impl": impl,
                  "target": "%s time to first result (warm cache) below every Python peer's (paired runs)" % label(impl),
                  "measured": worst["median"] if worst else None,
                  "interval": [worst["lo"], worst["hi"]] if worst else None,
                  "reference": None, "limit": 0.0, "unit": "ms vs the closest peer",
                  "status": combine(parts), "detail": "; ".join(details) or "not measured"})
    iv = paired.compare(s, "csharp", "c_raw", ratio=True) if s else None
    add("first-result-csharp", "C# time to first result (warm cache) within 1.3x raw C's (paired runs)",
        "csharp", iv, 1.3, "x raw C", paired.judge_at_most(iv, 1.3) if iv else "not measured",
        "C# / raw C: %s" % fmt_ratio(iv, pct=False) if iv else "")
    for x in t:
        if x["status"] == "not measured" and not x["detail"]:
            x["detail"] = "not measured"
    return t


def markdown(P, impls: List[str], label) -> List[str]:
    out: List[str] = []
    if not P:
        return out
    out.append("## Paired figures\n")
    out.append(
        "Each implementation's launches alternate, in its own process, with bursts of C's raw "
        "`cuLaunchKernel` (`c_ref`, bench/c/reference.c) on the same stream and kernel; each "
        "cell is the median of the per-round differences with its 95% bootstrap interval "
        "(bench/README.md, \"Paired figures\"). `- c_ref` is what the path costs over raw C; "
        "`- raw` what cuabi adds over the language's own raw call; `raw - c_ref` what the "
        "language's FFI adds.\n")
    rows = launch_rows(P, impls, label)
    if rows:
        out.append(paired_table(["implementation", "args", "series", "median (us)",
                                 "- c_ref (us)", "- raw (us)", "raw - c_ref (us)", "c_ref (us)"], rows) + "\n")
    rows = copy_rows(P, impls, label)
    if rows:
        out.append("Copies of 64 MiB: bandwidth as a share of raw C's, t(c_ref) / t(copy) per "
                   "round, median [95% interval].\n")
        out.append(paired_table(["implementation"] + [n for _, n in COPY_BENCHES], rows) + "\n")
    rows = alloc_rows(P, impls, label)
    if rows:
        out.append("Allocate + free: bursts of %s allocations each freed at once, alternating with "
                   "the same through the raw driver in C (`c_ref`: cuMemAllocAsync + cuMemFreeAsync "
                   "on the same stream, or cuMemAlloc + cuMemFree), us per allocate + free, median "
                   "[95%% interval] over the rounds.\n" % next(
                       (str(r.get("burst")) for (i, b), r in P.items() if b == ALLOC_BENCHES[0][0]), "100"))
        out.append(paired_table(["implementation", "way", "median (us)", "c_ref (us)", "- c_ref (us)",
                                 "/ c_ref"], rows) + "\n")
    rows = first_rows(P, label)
    if rows:
        rec = P[("*", "paired_first_result")]
        out.append("Time to first result with a warm cache, %d rounds; in each round every "
                   "implementation ran one fresh SAXPY process (rotated order). In-process: first "
                   "API call to verified result; wall: process start to result.\n" % rec.get("pairs", 0))
        out.append(paired_table(["implementation", "in-process (ms)", "- raw C (ms)", "/ raw C",
                                 "wall (ms)", "wall - raw C (ms)"], rows) + "\n")
    return out


def paired_table(head: List[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def chart(P, impls: List[str], label, path: str) -> Optional[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:
        return "no chart: matplotlib is not available (%s)" % exc
    fig, axes = plt.subplots(1, 3, figsize=(18, 6))
    for ax, bench in zip(axes[:2], LAUNCH_BENCHES):
        names, meds, los, his = [], [], [], []
        for impl in impls:
            rec = P.get((impl, bench))
            if not rec:
                continue
            p = best_path(rec)
            iv = paired.compare(rec["series"], p, "c_ref") if p else None
            if iv:
                names.append("%s `%s`" % (label(impl), p))
                meds.append(iv["median"])
                los.append(iv["median"] - iv["lo"])
                his.append(iv["hi"] - iv["median"])
        y = list(range(len(names)))
        ax.errorbar(meds, y, xerr=[los, his], fmt="o", capsize=4)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("us per launch over raw C (median, 95% interval)", fontsize=8)
        ax.set_title("Launch, %s args, paired with raw C" % bench.split("_")[2].replace("args", ""), fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    ax = axes[2]
    rec = P.get(("*", "paired_first_result"))
    if rec:
        s = rec["series"]
        names, meds, los, his = [], [], [], []
        for impl in s:
            if impl == "c_raw":
                continue
            iv = paired.compare(s, impl, "c_raw", ratio=True)
            if iv:
                names.append(label(impl))
                meds.append(iv["median"])
                los.append(iv["median"] - iv["lo"])
                his.append(iv["hi"] - iv["median"])
        y = list(range(len(names)))
        ax.errorbar(meds, y, xerr=[los, his], fmt="o", capsize=4, color="tab:green")
        ax.axvline(1.0, color="grey", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("time to first result / raw C's (warm cache; median, 95% interval)", fontsize=8)
        ax.set_title("First result, paired runs", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    else:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
