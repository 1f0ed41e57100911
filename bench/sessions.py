#!/usr/bin/env python3
"""Puts several sessions' paired figures side by side.

    python3 bench/sessions.py RESULTS_DIR... [--out DIR] [--min 3]

Each RESULTS_DIR is a folder bench/run.sh wrote (its results.json, from the
paired method). For every figure the table shows each session's median with
its 95% interval, then the median of the sessions' medians and their spread
(lowest to highest), and how many sessions met, missed or left each target
undecided. Writes DIR/sessions.md and DIR/sessions.png (default: the parent
folder of the first RESULTS_DIR). Refuses fewer than --min sessions or
sessions on different GPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from collect import label  # noqa: E402


def load(folder: str) -> Dict[str, Any]:
    with open(os.path.join(folder, "results.json"), encoding="utf-8") as f:
        res = json.load(f)
    res["_folder"] = os.path.basename(os.path.normpath(folder))
    return res


def cell(iv) -> str:
    if not iv:
        return "–"
    return "%+.3f [%+.3f, %+.3f]" % (iv["median"], iv["lo"], iv["hi"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--min", type=int, default=3)
    ns = ap.parse_args()
    runs = [load(f) for f in ns.folders]
    runs = [r for r in runs if r.get("paired")]
    if len(runs) < ns.min:
        print("sessions.py: %d sessions with paired figures; at least %d wanted" % (len(runs), ns.min))
        return 1
    gpus = {r["environment"].get("gpu") for r in runs}
    if len(gpus) != 1:
        print("sessions.py: the sessions ran on different GPUs: %s" % ", ".join(sorted(map(str, gpus))))
        return 1
    gpu = gpus.pop()
    out_dir = ns.out or os.path.dirname(os.path.abspath(ns.folders[0]))
    names = [r["_folder"] for r in runs]
    md: List[str] = ["# cuabi benchmarks across sessions — %s\n" % gpu]
    md.append("Sessions: " + ", ".join("`%s`" % n for n in names) + ". Each cell: the session's "
              "median of the paired per-round differences [95% bootstrap interval]; the last "
              "columns: the median of the session medians and their spread (lowest to highest).\n")

    # Launch: each implementation's best path minus raw C, 2 and 16 args.
    rows = []
    series: Dict[str, List[float]] = {}
    intervals: Dict[str, List[Any]] = {}
    for bench, n in (("paired_launch_2args", 2), ("paired_launch_16args", 16)):
        impls = []
        for r in runs:
            for impl, figs in r["paired"].items():
                if bench in figs and impl not in impls:
                    impls.append(impl)
        for impl in impls:
            cells, meds, ivs = [], [], []
            for r in runs:
                fig = r["paired"].get(impl, {}).get(bench)
                iv = fig["minus_c_ref"].get(fig.get("best")) if fig and fig.get("best") else None
                cells.append(cell(iv) + (" `%s`" % fig["best"] if iv else ""))
                ivs.append(iv)
                if iv:
                    meds.append(iv["median"])
            if not meds:
                continue
            series["%s %d" % (label(impl), n)] = meds
            intervals["%s %d" % (label(impl), n)] = ivs
            rows.append([label(impl), str(n)] + cells +
                        ["%+.3f" % statistics.median(meds), "%+.3f … %+.3f" % (min(meds), max(meds))])
    md.append("## Launch: us per launch over raw C (best path)\n")
    head = ["implementation", "args"] + names + ["median", "spread"]
    md.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    md.extend("| " + " | ".join(x) + " |" for x in rows)
    md.append("")

    # First result: each implementation over raw C (ratio).
    rows = []
    impls = []
    for r in runs:
        fig = r["paired"].get("*", {}).get("paired_first_result")
        for impl in (fig or {}).get("median", {}):
            if impl not in impls:
                impls.append(impl)
    for impl in impls:
        cells, meds = [], []
        for r in runs:
            fig = r["paired"].get("*", {}).get("paired_first_result") or {}
            iv = fig.get("over_c_raw", {}).get(impl)
            med = fig.get("median", {}).get(impl)
            cells.append(("%.0f ms" % med if med is not None else "–") +
                         (" (%.2f× [%.2f, %.2f])" % (iv["median"], iv["lo"], iv["hi"]) if iv else ""))
            if med is not None:
                meds.append(med)
        if meds:
            rows.append([label(impl)] + cells + ["%.0f ms" % statistics.median(meds),
                                                 "%.0f … %.0f ms" % (min(meds), max(meds))])
    if rows:
        md.append("## Time to first result, warm cache (in-process; × raw C, paired runs)\n")
        head = ["implementation"] + names + ["median", "spread"]
        md.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        md.extend("| " + " | ".join(x) + " |" for x in rows)
        md.append("")

    # Targets: how many sessions met each.
    tally: Dict[str, Dict[str, int]] = {}
    order: List[str] = []
    for r in runs:
        for t in r.get("targets", []):
            key = t["target"]
            if key not in tally:
                tally[key] = {}
                order.append(key)
            tally[key][t["status"]] = tally[key].get(t["status"], 0) + 1
    md.append("## Targets over %d sessions\n" % len(runs))
    md.append("| target | met | missed | undecided | not measured |\n|---|---|---|---|---|")
    for key in order:
        c = tally[key]
        md.append("| %s | %d | %d | %d | %d |" % (key, c.get("met", 0), c.get("missed", 0),
                                                 c.get("undecided", 0), c.get("not measured", 0)))
    md.append("")

    chart_note = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(11, 0.35 * len(series) + 2))
        names_y = list(series)
        colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
        k = len(runs)
        for y, name in enumerate(names_y):
            for j, iv in enumerate(intervals[name]):
                if not iv:
                    continue
                yy = y + (j - (k - 1) / 2) * 0.22
                ax.errorbar([iv["median"]], [yy], xerr=[[iv["median"] - iv["lo"]], [iv["hi"] - iv["median"]]],
                            fmt="o", ms=3, capsize=2, color=colors[j % len(colors)],
                            label=names[j] if y == 0 else None)
            ax.plot([statistics.median(series[name])], [y], "|", color="black", ms=16)
        ax.legend(fontsize=7, loc="lower right")
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(range(len(names_y)))
        ax.set_yticklabels(names_y, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("us per launch over raw C: each session's paired median and 95% interval "
                      "(one colour per session); bar: the median of the sessions' medians", fontsize=8)
        ax.set_title("Launch overhead over raw C across %d sessions, %s" % (len(runs), gpu), fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "sessions.png"), dpi=110)
        plt.close(fig)
        md.insert(2, "![sessions](sessions.png)\n")
    except Exception as exc:  # matplotlib missing: say so
        chart_note = "no chart: %s" % exc
        md.append("_%s_\n" % chart_note)
    with open(os.path.join(out_dir, "sessions.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print("sessions.py: wrote %s/sessions.md%s" % (out_dir, "" if chart_note else " and sessions.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
