#!/usr/bin/env bash
# The hardening suite's GPU pass, on a machine with a CUDA GPU: every
# GPU-labelled hardening test through CTest (the bad-input corpus, the fork,
# thread and cache-process tests, the deliberate faults with device resets),
# then compute-sanitizer memcheck (run-compute-sanitizer.sh). Prints a summary
# with the counts; a GPU test that skips for want of a device counts as a
# failure here, except the tests that need two devices on a machine with one
# (listed as not run, by name).
#
#   tests/hardening/run-gpu.sh BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run-gpu.sh BUILD_DIR}
build=$(cd "$build" && pwd)
jobs=${JOBS:-4}
failed=0
summary=()

echo "== hardening GPU tests (ctest -R '^hardening\\.gpu')"
log=$build/hardening-gpu-ctest.log
# The fault tests poison their own processes only; still, keep the GPU tests
# from competing for the device while one faults.
ctest --test-dir "$build" -R '^hardening\.gpu' --output-on-failure -j 1 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
line=$(grep -E 'tests passed|tests failed' "$log" | tail -n 1)
devices=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
skipped=$(grep -E '\(Skipped\)' "$log" | grep -cvE 'OtherDevices' || true)
multi_skipped=$(grep -E '\(Skipped\)' "$log" | grep -cE 'OtherDevices' || true)
if [ "$rc" -ne 0 ]; then
  summary+=("hardening GPU tests: FAILED: ${line:-no result} (log $log)")
  failed=1
else
  summary+=("hardening GPU tests: ${line:-no result}")
fi
if [ "$multi_skipped" -gt 0 ]; then
  if [ "$devices" -ge 2 ]; then
    summary+=("hardening GPU tests: FAILED: $multi_skipped multi-device test(s) skipped with $devices devices")
    failed=1
  else
    summary+=("hardening GPU tests: NOT RUN: $multi_skipped test(s) need two devices; this machine has $devices")
  fi
fi
if [ "$skipped" -gt 0 ]; then
  summary+=("hardening GPU tests: FAILED: $skipped test(s) skipped (is there a CUDA device?)")
  failed=1
fi
# The counts the tests print.
details=$build/Testing/Temporary/LastTest.log
if [ -f "$details" ]; then
  while IFS= read -r l; do summary+=("  $l"); done < <(grep -aE \
    '^(bad-input corpus|thread stress|fault |after a fault|device [0-9]+ after a fault|neighbour process on device|a new process on device|cold cache|warm cache|truncated entry|rebuilt entry|garbage entry|one bit flipped|repaired entry)' \
    "$details")
fi

echo "== compute-sanitizer"
cs_log=$build/hardening-compute-sanitizer.log
bash "$here/run-compute-sanitizer.sh" "$build" 2>&1 | tee "$cs_log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then failed=1; fi
while IFS= read -r l; do summary+=("$l"); done < <(sed -n '/^compute-sanitizer summary:/,$p' "$cs_log")

echo
echo "hardening GPU summary:"
printf '  %s\n' "${summary[@]}"
exit $failed
