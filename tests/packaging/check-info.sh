#!/usr/bin/env bash
# On a GPU machine: the diagnostic report must find the driver, NVRTC and
# every device the driver sees.
#   tests/packaging/check-info.sh COMMAND...   (e.g. build/cuabi, or python -m cuabi)
# Prints the report; exits non-zero when the command fails or a line is missing.
# With EXPECT_LIBRARY_UNDER=DIR, the library reported must lie in DIR.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$@" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "$* exited $rc"
grep -qE '^driver: CUDA [0-9]+\.[0-9]+ \([0-9]+\)$' <<<"$out" || fail "no driver line"
grep -qE '^nvrtc: [0-9]+\.[0-9]+$' <<<"$out" || fail "no nvrtc line"
count=$(sed -n 's/^devices: \([0-9][0-9]*\)$/\1/p' <<<"$out")
[ -n "$count" ] && [ "$count" -ge 1 ] || fail "no device listed"
listed=$(grep -cE '^  [0-9]+: .+, compute capability [0-9]+\.[0-9]+, memory [0-9.]+ [KMGT]iB total, [0-9.]+ ([KMGT]iB|bytes) free$' <<<"$out")
[ "$listed" = "$count" ] || fail "$count devices counted, $listed described"
grep -qE '^cache: ' <<<"$out" || fail "no cache line"
if [ -n "${EXPECT_LIBRARY_UNDER:-}" ]; then
  grep -q "^  library: $(realpath "$EXPECT_LIBRARY_UNDER")/" <<<"$out" ||
    fail "the library reported is not under $EXPECT_LIBRARY_UNDER"
fi
echo "report: $count device(s), as expected"
