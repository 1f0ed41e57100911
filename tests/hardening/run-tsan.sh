#!/usr/bin/env bash
# ThreadSanitizer over the CPU thread stress tests: the core and the hardening
# suite built with -fsanitize=thread in their own folder, then the
# ThreadStress.* tests run there (8 threads creating, using and releasing
# shared program handles, releases racing uses, forged releases racing real
# ones, concurrent NVRTC compiles). Any report fails the run.
#
#   tests/hardening/run-tsan.sh [BUILD_DIR]     (default: <repo>/build-tsan)
#
# NVRTC is not instrumented; TSan sees only cuabi's side of each call into it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-tsan}
jobs=$(nproc 2>/dev/null || echo 2)
flags="-fsanitize=thread -g -O1"

echo "== ThreadSanitizer build ($build)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DCUABI_SANITIZE=OFF -DCUABI_BUILD_TESTS=ON -DCUABI_BINDING_TESTS=OFF -DCUABI_HEAVY_TESTS=OFF \
  -DCUABI_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target cuabi_hardening_tests

export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:history_size=4}
unset CUABI_DRIVER_PATH
log=$build/tsan-stress.log
set +e
"$build/tests/hardening/cuabi_hardening_tests" --gtest_filter='ThreadStress.*' 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo
echo "ThreadSanitizer summary:"
grep -E '^thread stress|^forged-kind' "$log" | sed 's/^/  /' || true
reports=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
if [ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]; then
  echo "  ThreadStress.* under ThreadSanitizer: passed, 0 reports"
  exit 0
fi
echo "  ThreadStress.* under ThreadSanitizer: FAILED (exit $rc, $reports report(s); log $log)"
exit 1
