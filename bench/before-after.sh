#!/usr/bin/env bash
# Compares this tree's launch figures with another tree's, on one machine in
# one session: the two trees run bench/run.sh in turn (base then this in
# odd rounds, this then base in even ones), so both see the same GPU, driver and noise, and the spread
# between a tree's own rounds says how far apart two identical runs land.
#
#   bench/before-after.sh BASE_TREE [--rounds N] [--out DIR] [--figures launch]
#                         [--impls a,b,...]
#
# BASE_TREE is another checkout of cuabi (with its own .carry/bench for the
# Rust and C# figures). Writes DIR/base-K and DIR/this-K result folders and
# DIR/before-after.md (--summary-only writes it from the rounds already in
# DIR), which lists for every launch path the median of each
# tree's rounds, their difference and the larger of the two trees' spreads;
# with --figures paired, also each paired launch path's cost over raw C in
# both trees with its interval, slower only where the intervals part.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
base=""
rounds=2
out="$repo/bench/.before-after"
figures=launch
summary_only=0
impls=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --figures) figures="$2"; shift 2 ;;
        --summary-only) summary_only=1; shift ;;
        --impls) impls="$2"; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) echo "before-after.sh: unknown option $1" >&2; exit 2 ;;
        *) base="$1"; shift ;;
    esac
done
if [ -z "$base" ] || [ ! -x "$base/bench/run.sh" ]; then
    echo "usage: $0 BASE_TREE [--rounds N] [--out DIR]   (BASE_TREE has no bench/run.sh)" >&2
    exit 2
fi
base=$(cd "$base" && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
[ $summary_only = 1 ] && rounds=$(ls -d "$out"/this-* 2>/dev/null | wc -l)
for tree in "$base" "$repo"; do
    [ $summary_only = 1 ] && break
    if [ ! -e "$tree/build/libcuabi.so" ]; then
        echo "[before-after] building libcuabi in $tree/build"
        (cmake -S "$tree" -B "$tree/build" -G Ninja -DCUABI_BUILD_TESTS=OFF -DCUABI_BINDING_TESTS=OFF \
            -DCUABI_BUILD_EXAMPLES=OFF >/dev/null && cmake --build "$tree/build" >/dev/null) || exit 1
    fi
done
for r in $(seq 1 "$rounds"); do
    [ $summary_only = 1 ] && break
    order="base this"
    [ $((r % 2)) = 0 ] && order="this base"
    for side in $order; do
        tree=$repo
        [ $side = base ] && tree=$base
        echo "[before-after] round $r: $side ($tree)"
        (cd "$tree" && bash bench/run.sh --figures "$figures" --lib-dir build --carry .carry/bench \
            ${impls:+--impls "$impls"} --out "$out/$side-$r") >"$out/$side-$r.log" 2>&1
    done
done
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(side):
    runs = []
    for r in range(1, rounds + 1):
        try:
            with open(os.path.join(out, f"{side}-{r}", "results.json")) as f:
                runs.append(json.load(f)["figures"])
        except (OSError, ValueError, KeyError):
            pass
    return runs
base, this = load("base"), load("this")
rows = []
keys = sorted({(i, k) for runs in (base, this) for fig in runs for i in fig for k in fig[i]
               if k.startswith("launch_")})
def values(runs, i, k):
    return [fig[i][k]["value"] for fig in runs if i in fig and k in fig[i] and fig[i][k].get("value") is not None]
lines = ["| implementation | path | base (us) | this (us) | this - base | spread (max of each tree's rounds) | verdict |",
         "|---|---|---|---|---|---|---|"]
slower = 0
for i, k in keys:
    b, t = values(base, i, k), values(this, i, k)
    if not b or not t:
        lines.append(f"| {i} | {k} | {'/'.join(f'{v:.3f}' for v in b) or '-'} | {'/'.join(f'{v:.3f}' for v in t) or '-'} | | | not in both |")
        continue
    mb, mt = statistics.median(b), statistics.median(t)
    spread = max(max(b) - min(b), max(t) - min(t))
    d = mt - mb
    verdict = "slower beyond spread" if d > spread else "within spread" if d >= -spread else "faster beyond spread"
    slower += verdict.startswith("slower")
    lines.append(f"| {i} | {k} | {mb:.3f} ({'/'.join(f'{v:.3f}' for v in b)}) | {mt:.3f} ({'/'.join(f'{v:.3f}' for v in t)}) | {d:+.3f} | {spread:.3f} | {verdict} |")
lines.append("")
lines.append(f"before-after: {len(keys)} launch paths, {slower} slower beyond the run-to-run spread")

# The paired launch figures (--figures paired): each path's cost over raw C
# (minus_c_ref) with its bootstrap interval. Across a tree's rounds: the median
# of the medians, and the widest interval. A path is slower when this tree's
# interval lies wholly above the base tree's.
def load_paired(side):
    runs = []
    for r in range(1, rounds + 1):
        try:
            with open(os.path.join(out, f"{side}-{r}", "results.json")) as f:
                runs.append(json.load(f).get("paired") or {})
        except (OSError, ValueError):
            pass
    return runs
pbase, pthis = load_paired("base"), load_paired("this")
def cells(runs, i, k, path):
    return [run[i][k]["minus_c_ref"][path] for run in runs
            if i in run and k in run[i] and path in (run[i][k].get("minus_c_ref") or {})]
pkeys = sorted({(i, k, path) for runs in (pbase, pthis) for run in runs for i in run if i != "*"
                for k in run[i] if k.startswith("paired_launch")
                for path in (run[i][k].get("minus_c_ref") or {})})
if pkeys:
    lines += ["", "Paired launch figures, us over raw C (median [widest interval] across rounds):", "",
              "| implementation | figure | path | base | this | this - base | verdict |",
              "|---|---|---|---|---|---|---|"]
    pslower = 0
    for i, k, path in pkeys:
        b, t = cells(pbase, i, k, path), cells(pthis, i, k, path)
        if not b or not t:
            lines.append(f"| {i} | {k} | {path} | {'-' if not b else ''} | {'-' if not t else ''} | | not in both |")
            continue
        def agg(c):
            return (statistics.median(x["median"] for x in c), min(x["lo"] for x in c), max(x["hi"] for x in c))
        (bm, blo, bhi), (tm, tlo, thi) = agg(b), agg(t)
        verdict = "slower beyond interval" if tlo > bhi else "faster beyond interval" if thi < blo else "within interval"
        pslower += verdict.startswith("slower")
        lines.append(f"| {i} | {k} | {path} | {bm:+.3f} [{blo:+.3f}, {bhi:+.3f}] | {tm:+.3f} [{tlo:+.3f}, {thi:+.3f}] | {tm - bm:+.3f} | {verdict} |")
    lines.append("")
    lines.append(f"before-after (paired): {len(pkeys)} launch paths, {pslower} slower beyond their intervals")
text = "\n".join(lines) + "\n"
with open(os.path.join(out, "before-after.md"), "w") as f:
    f.write(text)
print(text)
PY
