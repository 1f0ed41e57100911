"""Turns bench/multi_gpu/run.sh's raw output into results.json, results.md
and chart.png: peer-copy bandwidth per device pair (cuabi and raw C, the
paired interval of their per-round ratio) and all-reduce bus bandwidth per
size (cuabi and torch.distributed, the interval of the per-run ratio).

    python3 bench/multi_gpu/report.py DIR --gpus N --name GPU-NAME
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import paired  # noqa: E402


def sweeps(files: List[str]) -> List[Dict[int, float]]:
    """busbw by size, one dict per run."""
    runs = []
    for path in sorted(files):
        got: Dict[int, float] = {}
        with open(path) as f:
            for line in f:
                m = re.match(r"^sweep (\d+) ([\d.]+) ([\d.]+) ([\d.]+)$", line.strip())
                if m:
                    got[int(m.group(1))] = float(m.group(4))
        if got:
            runs.append(got)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--gpus", type=int, required=True)
    ap.add_argument("--name", default="GPU")
    a = ap.parse_args()
    results: Dict[str, object] = {"gpus": a.gpus, "gpu": a.name}
    lines = [f"# Multi-GPU figures: {a.gpus} x {a.name}", ""]

    peer: Dict[str, Dict[str, List[float]]] = {}
    with open(os.path.join(a.dir, "peer.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            key = f"{r['src']}->{r['dst']}"
            gb = r["bytes"] / 1e9
            d = peer.setdefault(key, {"cuabi": [], "raw": [], "path": [r["path"]]})
            d["cuabi"].append(gb / (r["cuabi_ms"] * 1e-3))
            d["raw"].append(gb / (r["raw_ms"] * 1e-3))
    lines += ["## Peer copies (256 MiB, GB/s, median of rounds)", "",
              "| pair | path | cuabi | raw C | cuabi / raw [95% interval] | within 3% |",
              "| --- | --- | --- | --- | --- | --- |"]
    peer_out = {}
    for key, d in sorted(peer.items()):
        iv = paired.interval(paired.ratios(d["cuabi"], d["raw"]))
        ok = iv["lo"] >= 0.97
        peer_out[key] = {"cuabi_gbps": paired.median(d["cuabi"]), "raw_gbps": paired.median(d["raw"]),
                         "ratio": iv, "path": d["path"][0], "within_3pct": ok}
        lines.append(f"| {key} | {d['path'][0]} | {paired.median(d['cuabi']):.1f} | "
                     f"{paired.median(d['raw']):.1f} | {iv['median']:.4f} [{iv['lo']:.4f}, "
                     f"{iv['hi']:.4f}] | {'yes' if ok else 'no'} |")
    results["peer"] = peer_out

    cu = sweeps(glob.glob(os.path.join(a.dir, "allreduce-cuabi-*.txt")))
    th = sweeps(glob.glob(os.path.join(a.dir, "allreduce-torch-*.txt")))
    ar_out = {}
    lines += ["", f"## All-reduce bus bandwidth (GB/s, sum float32, {a.gpus} ranks; median of "
              f"{len(cu)} runs each, alternating)", "",
              "| size | cuabi + NCCL | torch.distributed | cuabi / torch [interval] | within 3% |",
              "| --- | --- | --- | --- | --- |"]
    sizes = sorted(set().union(*[set(r) for r in cu])) if cu else []
    for size in sizes:
        c = [r[size] for r in cu if size in r]
        t = [r[size] for r in th if size in r]
        row = {"cuabi_busbw": paired.median(c)}
        cell_t = cell_r = ok_text = "-"
        if t:
            iv = paired.interval(paired.ratios(c, t))
            row.update({"torch_busbw": paired.median(t), "ratio": iv})
            cell_t = f"{paired.median(t):.1f}"
            cell_r = f"{iv['median']:.4f} [{iv['lo']:.4f}, {iv['hi']:.4f}]"
            if size >= 256 << 20:
                row["within_3pct"] = iv["median"] >= 0.97
                ok_text = "yes" if iv["median"] >= 0.97 else "no"
        ar_out[str(size)] = row
        mib = size >> 20
        lines.append(f"| {mib} MiB | {paired.median(c):.1f} | {cell_t} | {cell_r} | {ok_text} |")
    results["allreduce"] = ar_out
    with open(os.path.join(a.dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.dir, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
        keys = sorted(peer_out)
        ax[0].bar([i - 0.2 for i in range(len(keys))], [peer_out[k]["cuabi_gbps"] for k in keys],
                  0.4, label="cuabi")
        ax[0].bar([i + 0.2 for i in range(len(keys))], [peer_out[k]["raw_gbps"] for k in keys],
                  0.4, label="raw C")
        ax[0].set_xticks(range(len(keys)), keys)
        ax[0].set_ylabel("GB/s")
        ax[0].set_title("peer copy, 256 MiB")
        ax[0].legend()
        if sizes:
            ax[1].plot([s >> 20 for s in sizes], [ar_out[str(s)]["cuabi_busbw"] for s in sizes],
                       "o-", label="cuabi + NCCL")
            if th:
                ax[1].plot([s >> 20 for s in sizes],
                           [ar_out[str(s)].get("torch_busbw", 0) for s in sizes], "s--",
                           label="torch.distributed")
            ax[1].set_xscale("log", base=2)
            ax[1].set_xlabel("MiB")
            ax[1].set_ylabel("bus bandwidth, GB/s")
            ax[1].set_title(f"all-reduce, {a.gpus} GPUs")
            ax[1].legend()
        fig.tight_layout()
        fig.savefig(os.path.join(a.dir, "chart.png"), dpi=110)
    except ImportError:
        print("report.py: matplotlib is missing: no chart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
