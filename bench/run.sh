#!/usr/bin/env bash
# Runs every benchmark side by side in one session and writes results.json,
# results.md, chart.png, raw.jsonl and logs/ into one results folder.
#
#   bench/run.sh [--cpu-only] [--out DIR] [--lib-dir DIR] [--carry DIR]
#                [--impls a,b,...] [--figures a,b,...] [--quick] [--baseline FILE]
#
#   --cpu-only   time what needs no GPU (NVRTC compile, argument packing,
#                handle validation) for every binding; for CI-sized machines
#   --out DIR    results folder (default bench/results/DATE-GPU, e.g.
#                bench/results/2026-11-22-NVIDIA-H200; DATE-cpu with --cpu-only)
#   --lib-dir    folder holding libcuabi.so (default build; built into
#                bench/.build/core when missing there)
#   --carry DIR  folder from bench/prepare-carry.sh with the Rust and C#
#                executables (default .carry/bench); with --cpu-only they are
#                built there first when missing and cargo / mcs are present
#   --impls      a subset of: c_raw c_cuabi py_ctypes py_cffi py_compiled py_high
#                py_high_cffi py_high_compiled rust csharp cuda_core cuda_bindings cupy
#   --figures    a subset of: paired graph compile saxpy first (the default),
#                launch copy (unpaired, GPU mode)
#   --quick      fewer repetitions (a smoke run)
#   --baseline   an earlier results.json: each figure shows its ratio to it
#   --keep-logs  leave logs/ and raw.jsonl as loose files (by default they are
#                packed into logs.tar.gz; the folder holds results.json,
#                results.md, chart.png, paired.png, logs.tar.gz, and
#                instructions.md where valgrind is)
#   --first-pairs N  rounds of the paired time to first result (default 12;
#                more narrow its intervals)
#
# An implementation that cannot run (no binary, no binding, no library) is
# skipped with a note saying why; one that fails costs only its own figures.
# The exit status is 0 once the results are written.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo" || exit 2

mode=gpu
out=""
lib_dir="build"
carry=".carry/bench"
impls=""
figures="paired,graph,compile,saxpy,first"
quick=0
baseline=""
keep_logs=0
first_pairs=""
python="${PYTHON:-python3}"
while [ $# -gt 0 ]; do
    case "$1" in
        --cpu-only) mode=cpu; shift ;;
        --out) out="$2"; shift 2 ;;
        --lib-dir) lib_dir="$2"; shift 2 ;;
        --carry) carry="$2"; shift 2 ;;
        --impls) impls="$2"; shift 2 ;;
        --figures) figures="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --baseline) baseline="$2"; shift 2 ;;
        --keep-logs) keep_logs=1; shift ;;
        --first-pairs) first_pairs="$2"; shift 2 ;;
        --python) python="$2"; shift 2 ;;
        -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if ! command -v "$python" >/dev/null 2>&1; then
    echo "run.sh: $python not found" >&2
    exit 2
fi
say() { echo "[bench] $*"; }
started=$(date +%s)

# --- the results folder ------------------------------------------------------------
if [ -z "$out" ]; then
    if [ $mode = gpu ]; then
        gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
        [ -n "$gpu" ] || gpu="GPU"
    else
        gpu="cpu"
    fi
    tag="$(date +%Y-%m-%d)-$(echo "$gpu" | tr -cs 'A-Za-z0-9._' '-' | sed 's/-*$//')"
    out="$here/results/$tag"
    n=2
    while [ -e "$out" ]; do out="$here/results/$tag-$n"; n=$((n + 1)); done
fi
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)
say "results: $out"

# --- libcuabi ------------------------------------------------------------------------
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
if [ ! -e "$lib_dir/libcuabi.so" ]; then
    say "no libcuabi.so in $lib_dir: building the core into bench/.build/core"
    lib_dir="$here/.build/core"
    # shellcheck disable=SC2086
    { cmake -S "$repo" -B "$lib_dir" $gen -DCMAKE_BUILD_TYPE=Release -DCUABI_BUILD_TESTS=OFF \
          -DCUABI_BUILD_EXAMPLES=OFF -DCUABI_BINDING_TESTS=OFF \
          -DPython_EXECUTABLE="$(command -v "$python")" &&
      cmake --build "$lib_dir"; } >"$out/logs/build-core.log" 2>&1 ||
        say "building the core FAILED (logs/build-core.log): cuabi implementations will be skipped"
fi
lib_dir=$(cd "$lib_dir" 2>/dev/null && pwd || echo "$lib_dir")
# The compiled Python backend (py_compiled, py_high_compiled) needs the module
# cuabi._cuabi_cffi beside libcuabi.so: a CMake build of the tree writes it
# (target cuabi_python_compiled, with cffi and Python's C headers for this
# Python); without it those implementations are skipped, saying so.
if ! ls "$lib_dir"/_cuabi_cffi.*so >/dev/null 2>&1 && [ -f "$lib_dir/CMakeCache.txt" ]; then
    say "building the compiled Python module in $lib_dir (logs/build-compiled.log)"
    { cmake -S "$repo" -B "$lib_dir" -DCUABI_PYTHON_COMPILED=ON \
          -DPython_EXECUTABLE="$(command -v "$python")" &&
      cmake --build "$lib_dir" --target cuabi_python_compiled; } >"$out/logs/build-compiled.log" 2>&1 ||
        say "no compiled Python module (logs/build-compiled.log): py_compiled is skipped"
fi

# --- the C benchmarks -----------------------------------------------------------------
c_build="$here/.build/c"
say "building the C benchmarks (logs/build-c.log)"
# shellcheck disable=SC2086
{ cmake -S "$here" -B "$c_build" $gen -DCMAKE_BUILD_TYPE=Release -DCUABI_LIB_DIR="$lib_dir" &&
  cmake --build "$c_build"; } >"$out/logs/build-c.log" 2>&1 ||
    say "building the C benchmarks FAILED (logs/build-c.log): C implementations will be skipped"

# --- Rust and C# executables ----------------------------------------------------------------
if [ $mode = cpu ]; then
    need=""
    [ -x "$carry/rust/cuabi-bench" ] || { command -v cargo >/dev/null 2>&1 && need="rust"; }
    [ -x "$carry/csharp/cuabi-bench" ] || [ -e "$carry/csharp/cuabi-bench.exe" ] ||
        { command -v mcs >/dev/null 2>&1 && need="$need csharp"; }
    for part in $need; do
        say "building the $part benchmark into $carry (logs/prepare-carry-$part.log)"
        "$here/prepare-carry.sh" "$carry" --lib-dir "$lib_dir" --only "$part" \
            >"$out/logs/prepare-carry-$part.log" 2>&1 ||
            say "building the $part benchmark FAILED (logs/prepare-carry-$part.log)"
    done
fi
carry_abs=$(cd "$carry" 2>/dev/null && pwd || echo "")

# --- environment for every step ----------------------------------------------------------
export CUABI_LIBRARY="$lib_dir/libcuabi.so"
export LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$repo/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
export CUABI_CACHE_DIR="$out/cache/session"
# The raw C reference every paired figure alternates with (bench/c/reference.c).
export CUABI_BENCH_REFERENCE="$c_build/libcuabi_bench_reference.so"
export CUPY_CACHE_DIR="$out/cache/cupy-session"
# No driver JIT cache: load_ptx then times the JIT itself every time.
export CUDA_CACHE_DISABLE=1
mkdir -p "$CUABI_CACHE_DIR" "$CUPY_CACHE_DIR"
chmod 700 "$out/cache" "$CUABI_CACHE_DIR" "$CUPY_CACHE_DIR" 2>/dev/null

settings=()
if [ $quick = 1 ]; then
    settings=(--bursts 50 --reps 10 --kernel-reps 10 --cold-runs 1 --warm-runs 1 --pairs 30
              --copy-pairs 10 --first-pairs 3)
fi
[ -n "$first_pairs" ] && settings+=(--first-pairs "$first_pairs")
budget=600
if [ $mode = cpu ]; then
    budget=105
    # The launch path against a driver that does nothing (see driver.py).
    [ -e "$c_build/fake-driver/libcuda.so.1" ] && settings+=(--fake-driver "$c_build/fake-driver")
fi
say "running ($mode mode; every step's log in $out/logs)"
"$python" "$here/driver.py" --mode "$mode" --out "$out" --c-build "$c_build" \
    --carry "$carry_abs" --stub-driver "$c_build/stub-driver" --python "$(command -v "$python")" \
    --impls "$impls" --figures "$figures" --budget "$budget" "${settings[@]}" \
    2>&1 | tee "$out/logs/driver.log"

# --- instructions per call (callgrind against the stand-in; where valgrind is) ----------------
instr="$lib_dir/tests/instructions"
if command -v valgrind >/dev/null 2>&1 && [ -x "$instr/cuabi_instructions" ]; then
    say "instructions per call, C core and bindings (logs/instructions*.log)"
    "$python" "$here/instructions/run.py" --program "$instr/cuabi_instructions" \
        --driver "$instr/libcuabi_instructions_fake_cuda.so" >"$out/logs/instructions.log" 2>&1
    if [ -e "$instr/libcuabi_instructions_reference.so" ]; then
        "$python" "$here/instructions/bindings.py" --build "$lib_dir" \
            --reference "$instr/libcuabi_instructions_reference.so" \
            --driver "$instr/libcuabi_instructions_fake_cuda.so" --carry "$carry" \
            --python "$(command -v "$python")" >"$out/logs/instructions-bindings.log" 2>&1
    fi
    cat "$out/logs/instructions.log" "$out/logs/instructions-bindings.log" 2>/dev/null \
        >"$out/instructions.md"
    grep -hE "^instructions per|BUDGET MISSED|FAILED" "$out/instructions.md" | sed 's/^/[bench] /'
else
    say "instructions per call: skipped (needs valgrind and the build's tests/instructions programs)"
fi

# --- results ---------------------------------------------------------------------------------
args=("$out")
[ -n "$baseline" ] && args+=(--baseline "$baseline")
"$python" "$here/collect.py" "${args[@]}" 2>&1 | tee "$out/logs/collect.log"
rm -rf "$out/cache"
if [ $keep_logs = 0 ] && tar -czf "$out/logs.tar.gz" -C "$out" logs raw.jsonl 2>/dev/null; then
    rm -rf "$out/logs" "$out/raw.jsonl"
    say "logs and raw records packed into $out/logs.tar.gz"
fi
say "done in $(( $(date +%s) - started )) s: $out/results.md"
exit 0
