#!/usr/bin/env bash
# Tests the benchmark harness itself, without a GPU: runs bench/run.sh in its
# GPU mode against a stand-in CUDA driver (tests/fake/fake_cuda.c: host
# memory, SAXPY computed on the host), then checks that every implementation
# that can run here produced every figure, that collect.py evaluated every
# target it could, and that results.json, results.md and chart.png exist.
# It checks that figures exist, never how fast anything is.
#
#   bench/selftest.sh [--lib-dir DIR] [--carry DIR] [--keep]
#
# Exit status 0 when the harness works; the last line reads
# "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
lib_dir="build"
carry=".carry/bench"
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --lib-dir) lib_dir="$2"; shift 2 ;;
        --carry) carry="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "selftest.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
cd "$repo" || exit 2
out=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-bench-selftest.XXXXXX")
[ $keep = 1 ] || trap 'rm -rf "$out"' EXIT
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
c_build="$here/.build/c"
lib_abs=$(cd "$lib_dir" 2>/dev/null && pwd || echo "$repo/$lib_dir")
# shellcheck disable=SC2086
if ! { cmake -S "$here" -B "$c_build" $gen -DCMAKE_BUILD_TYPE=Release -DCUABI_LIB_DIR="$lib_abs" &&
       cmake --build "$c_build"; } >"$out/build.log" 2>&1; then
    cat "$out/build.log" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
fake="$c_build/fake-driver"
if [ ! -e "$fake/libcuda.so.1" ]; then
    echo "selftest.sh: the fake driver did not build (no CUDA toolkit headers?)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# The Rust and C# benchmarks, where their toolchains are and they are missing.
for part in rust csharp; do
    exe="$carry/$part/cuabi-bench"
    [ -x "$exe" ] && continue
    case $part in rust) tool=cargo ;; csharp) tool=mcs ;; esac
    command -v "$tool" >/dev/null 2>&1 || continue
    "$here/prepare-carry.sh" "$carry" --lib-dir "$lib_abs" --only "$part" >"$out/carry-$part.log" 2>&1 ||
        echo "note: building the $part benchmark failed ($out/carry-$part.log)"
done
# Peers need the real driver's internals; only cuabi and raw C run on the fake.
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUABI_DRIVER_PATH="$fake/libcuda.so.1"
"$here/run.sh" --quick --keep-logs --out "$out/results" --lib-dir "$lib_dir" --carry "$carry" \
    --impls c_raw,c_cuabi,py_ctypes,py_cffi,py_high,py_high_cffi,rust,csharp >"$out/run.log" 2>&1
rc=$?
python3 - "$out/results" "$rc" <<'EOF'
import json, os, sys

out, rc = sys.argv[1], int(sys.argv[2])
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}")


check(rc == 0, f"run.sh exit status {rc}")
for name in ("results.json", "results.md", "raw.jsonl"):
    check(os.path.isfile(os.path.join(out, name)), f"{name} written")
try:
    import matplotlib  # noqa: F401

    check(os.path.isfile(os.path.join(out, "chart.png")), "chart.png written")
except ImportError:
    print("note: no matplotlib here, chart.png not checked")
res = json.load(open(os.path.join(out, "results.json")))
figures = res.get("figures", {})
status = {i: v["status"] for i, v in res.get("implementations", {}).items()}
want = ["graph_replay", "graph_launch_call", "compile_nvrtc", "load_cubin", "load_ptx",
        "saxpy_kernel", "saxpy_app_cold", "saxpy_app_warm", "first_result_wall_cold",
        "first_result_wall_warm"]
paired_want = ["paired_launch_2args", "paired_launch_16args", "paired_copy_to_device_pageable",
               "paired_copy_to_host_pageable", "paired_copy_to_device_pinned",
               "paired_copy_to_host_pinned"]
alloc_want = ["paired_alloc_ordered_256", "paired_alloc_ordered_1048576", "paired_alloc_sync_256",
              "paired_alloc_sync_1048576"]
cached = ["compile_cache_hit"]
for impl in ("c_raw", "c_cuabi", "py_ctypes", "py_cffi", "py_high", "py_high_cffi", "rust",
             "csharp"):
    if status.get(impl, "").startswith("skipped"):
        print(f"note: {impl} {status[impl]}")
        continue
    for bench in want + ([] if impl == "c_raw" else cached):
        fig = figures.get(impl, {}).get(bench)
        check(fig is not None and fig.get("value") is not None, f"{impl}: {bench} measured")
    for bench in paired_want:
        fig = res.get("paired", {}).get(impl, {}).get(bench) or {}
        meds = fig.get("median", {})
        check("c_ref" in meds and len(meds) >= 2, f"{impl}: {bench} paired with c_ref ({sorted(meds)})")
        if bench.startswith("paired_launch") and impl not in ("c_raw", "c_cuabi"):
            check("raw" in meds, f"{impl}: {bench} has the language's own raw series")
    for bench in alloc_want if impl in ("rust", "csharp") else ():
        fig = res.get("paired", {}).get(impl, {}).get(bench) or {}
        meds = fig.get("median", {})
        check(sorted(meds) == ["alloc", "c_ref"], f"{impl}: {bench} paired with c_ref ({sorted(meds)})")
    first = res.get("paired", {}).get("*", {}).get("paired_first_result") or {}
    check(impl in first.get("median", {}), f"{impl}: paired time to first result measured")
    errs = res["implementations"].get(impl, {}).get("errors", [])
    check(not errs, f"{impl}: no errors ({[e['error'][:120] for e in errs]})")
    saxpy = figures.get(impl, {}).get("saxpy_app_warm") or {}
    if impl != "c_raw":
        check(saxpy.get("cache") == "hit", f"{impl}: warm SAXPY runs hit the cache")
cold = figures.get("c_cuabi", {}).get("saxpy_app_cold") or {}
check(cold.get("cache") == "miss", "c_cuabi: the cold SAXPY run missed the cache")
targets = res.get("targets", [])
check(len(targets) >= 25, f"{len(targets)} targets evaluated")
ran = {i for i, s in status.items() if s == "ran"}
for t in targets:
    needs = {t["impl"], "c_raw"}
    peer = next((p for p in ("cuda_core", "cupy", "cuda_bindings") if p in t["target"]
                 .replace("cuda.core", "cuda_core").replace("cuda.bindings", "cuda_bindings")
                 .replace("CuPy RawModule", "cupy")), None)
    if peer or "every Python peer" in t["target"]:
        continue  # peers do not run on the stand-in driver
    if needs <= ran:
        check(t["status"] in ("met", "missed", "undecided"), f"target evaluated: {t['target']} ({t['status']}: "
              f"{t['detail']})")
md = open(os.path.join(out, "results.md")).read()
check("## Targets" in md and "## Paired figures" in md and "## 5. Compilation" in md,
      "results.md has every section")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOF
status=$?
if [ $status -ne 0 ]; then
    echo "--- run.sh output ($out/run.log)"
    tail -40 "$out/run.log"
    [ $keep = 1 ] && echo "kept: $out"
fi
[ $keep = 1 ] && echo "results kept in $out/results"
exit $status
