#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer + UBSan) and runs
# each for a bounded time, printing how many inputs each executed (the NVRTC
# program target only with FUZZ_NVRTC=1, see below).
#
#   fuzz/run.sh [SECONDS]     seconds per target (default 20); NVRTC makes the
#                             program target slow, so it also stops after
#                             FUZZ_PROGRAM_RUNS inputs (default 3000)
#
# Environment: BUILD_DIR (default <repo>/build-fuzz), CC/CXX (default clang,
# clang++). New inputs go to BUILD_DIR/work/<target>/, never into the committed
# seeds. A failing input is saved under BUILD_DIR/artifacts/; copy it to
# fuzz/corpus/<target>/regression-<what>.bin so the hardening suite replays it
# from then on, and add a test for it to tests/hardening/regression_test.cc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
seconds=${1:-20}
program_runs=${FUZZ_PROGRAM_RUNS:-3000}
build=${BUILD_DIR:-$root/build-fuzz}
export CC=${CC:-clang} CXX=${CXX:-clang++}
jobs=$(nproc 2>/dev/null || echo 2)

if ! command -v "$CXX" >/dev/null; then
  echo "fuzz/run.sh: $CXX not found; install clang (apt-get install -y clang)" >&2
  exit 1
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$probe/p.cc"
if ! "$CXX" -fsanitize=fuzzer "$probe/p.cc" -o "$probe/p" 2>"$probe/err"; then
  echo "fuzz/run.sh: $CXX cannot link -fsanitize=fuzzer; install clang (apt-get install -y clang)" >&2
  cat "$probe/err" >&2
  exit 1
fi

# Through the top-level project where it adds this folder, else on its own.
if grep -q 'add_subdirectory(fuzz)' "$root/CMakeLists.txt"; then
  src=$root
  fuzz_bin=$build/fuzz
else
  src=$here
  fuzz_bin=$build
fi
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUABI_FUZZ=ON \
  -DCUABI_SANITIZE=ON -DCUABI_WERROR=OFF -DCUABI_BUILD_TESTS=OFF -DCUABI_BUILD_EXAMPLES=OFF >/dev/null
targets=(cache image handles launch program)
cmake --build "$build" -j "$jobs" --target cuabi_fuzz_cache cuabi_fuzz_image cuabi_fuzz_handles \
  cuabi_fuzz_launch
# NVRTC 13.0 faults inside libFuzzer processes on some valid programs (a
# templated kernel with a name expression, compiled for sm_90:
# fuzz/known/nvrtc-in-libfuzzer.bin), with or without AddressSanitizer, while
# the same compile runs cleanly in an ordinary process (the replay below). The
# program target therefore runs only with FUZZ_NVRTC=1; its corpus is replayed
# in every test run (tests/hardening, fuzz_replay.fuzz_program).
if [ "${FUZZ_NVRTC:-0}" = 1 ]; then
  cmake --build "$build" -j "$jobs" --target cuabi_fuzz_program
else
  targets=(cache image handles launch)
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
unset CUABI_DRIVER_PATH
failed=0
summary=()
for t in "${targets[@]}"; do
  work=$build/work/$t
  artifacts=$build/artifacts
  mkdir -p "$work" "$artifacts"
  args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
        -artifact_prefix="$artifacts/$t-")
  env_extra=()
  if [ "$t" = program ]; then
    args+=(-runs="$program_runs" -max_len=4096 -dict="$here/program.dict")
    # NVRTC keeps allocations for the life of the process; they are not ours.
    env_extra=(ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}")
  fi
  log=$build/fuzz-$t.log
  echo "== cuabi_fuzz_$t (${seconds}s)"
  rc=0
  env "${env_extra[@]}" "$fuzz_bin/cuabi_fuzz_$t" "${args[@]}" "$work" "$here/corpus/fuzz_$t" \
    >"$log" 2>&1 || rc=$?
  runs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -n 1 || true)
  secs=$(grep -E '^Done [0-9]+ runs in' "$log" | awk '{print $5}' | tail -n 1 || true)
  corpus=$(find "$work" -type f | wc -l)
  if [ $rc -ne 0 ]; then
    failed=1
    echo "FAILED cuabi_fuzz_$t (exit $rc); last lines of $log:"
    tail -n 40 "$log"
    ls -1 "$artifacts"/"$t"-* 2>/dev/null | sed 's/^/  artifact: /' || true
    summary+=("cuabi_fuzz_$t: FAILED after ${runs:-?} inputs (log $log)")
  else
    summary+=("cuabi_fuzz_$t: ${runs:-?} inputs executed in ${secs:-?} s, no failure (new corpus entries: $corpus)")
  fi
done
echo
echo "fuzzing summary:"
printf '  %s\n' "${summary[@]}"
exit $failed
