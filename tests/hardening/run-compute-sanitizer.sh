#!/usr/bin/env bash
# compute-sanitizer memcheck (with device leak checking) over the GPU test
# binaries of a build, on a machine with a CUDA GPU:
#   - the hardening suite's Gpu* tests, without the deliberate-fault binary and
#     without the tests that fork or start other processes;
#   - tests/c's GPU suite (cuabi_gpu_tests), if built, without the tests that
#     fault on purpose (ContextLostTest), fork, need the cache environment
#     ctest gives them (ModuleCache*), or spin on a host flag (BlockedWorkTest:
#     far too slow under memcheck);
#   - the C SAXPY example, if built.
# CUDA API calls that fail on purpose (out-of-memory cases, launches the
# device refuses) are not counted as errors (--report-api-errors no);
# memory errors and leaks in kernels and device allocations are.
#
#   tests/hardening/run-compute-sanitizer.sh BUILD_DIR
#
# Environment: COMPUTE_SANITIZER (the tool), CS_C_FILTER (gtest filter for
# cuabi_gpu_tests, default below).
set -uo pipefail
build=${1:?usage: run-compute-sanitizer.sh BUILD_DIR}
build=$(cd "$build" && pwd)
tool=${COMPUTE_SANITIZER:-}
if [ -z "$tool" ]; then
  for c in compute-sanitizer "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" \
           /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda/bin/compute-sanitizer; do
    if command -v "$c" >/dev/null 2>&1; then
      tool=$(command -v "$c")
      break
    fi
  done
fi
if [ -z "$tool" ]; then
  echo "compute-sanitizer summary:"
  echo "  FAILED: compute-sanitizer not found (install the CUDA toolkit's compute-sanitizer or set COMPUTE_SANITIZER)"
  exit 1
fi
echo "using $tool"
cs=("$tool" --tool memcheck --leak-check full --report-api-errors no --error-exitcode 86
    --print-limit 50)
summary=()
failed=0
run_cs() {  # NAME COMMAND...
  local name=$1
  shift
  if [ ! -x "$1" ]; then
    summary+=("$name: not built ($1)")
    return
  fi
  local log=$build/compute-sanitizer-$name.log
  echo "== compute-sanitizer memcheck: $name"
  "${cs[@]}" "$@" >"$log" 2>&1
  local rc=$?
  local errors
  errors=$(grep -E 'ERROR SUMMARY' "$log" | tail -n 1)
  local skipped
  skipped=$(grep -cE '^\[  SKIPPED \] [A-Za-z]' "$log")
  if [ $rc -eq 0 ]; then
    summary+=("$name: ${errors:-no summary} (skipped tests: $skipped)")
  else
    summary+=("$name: FAILED (exit $rc): ${errors:-see log} (log $log)")
    grep -E '=========|FAILED' "$log" | head -n 40
    failed=1
  fi
  if [ "$skipped" -gt 0 ] && grep -q 'no CUDA device' "$log"; then
    summary+=("$name: FAILED: tests skipped for want of a device")
    failed=1
  fi
}

run_cs hardening_gpu "$build/tests/hardening/cuabi_hardening_tests" \
  "--gtest_filter=Gpu*:-GpuFork*:GpuCacheProcesses.SameKernelAtOnceThenDamagedEntries"
run_cs c_gpu "$build/tests/c/cuabi_gpu_tests" \
  "--gtest_filter=${CS_C_FILTER:-*:-ContextLostTest.*:*Fork*:ModuleCache*:BlockedWorkTest.*}"
run_cs saxpy_example "$build/saxpy"

echo
echo "compute-sanitizer summary:"
printf '  %s\n' "${summary[@]}"
exit $failed
