#!/usr/bin/env bash
# Runs one multi-GPU example (examples/multi_gpu) and judges what it did.
#
#   run_example.sh [--allow-one-gpu] [--expect ok|fault:K] -- COMMAND [ARGS...]
#
# Passes (exit 0) when the program
#   --expect ok       exited 0 and printed its "PASSED" line;
#   --expect fault:K  exited 4 and reported "rank K failed first (as
#                     --fault-rank asked)" (nccl_allreduce's fault mode);
#   --allow-one-gpu   or, with one device, skips (77) when it exited 0 and
#                     printed "needs two devices, found 1".
# Skips (exit 77, which CTest reports as skipped) when the program exited 3
# saying there is no CUDA device, when nccl_allreduce exited 2 because NCCL
# is not installed, or when a Python example finds no numpy. Anything else
# fails: a crash, another exit status, or neither expected message.
#
# For the C nccl_allreduce, CUABI_NCCL_PATH is taken from pip's
# nvidia-nccl-cu13 wheel (nvidia.nccl) when it is not set and python3 finds
# that package.
set -uo pipefail

allow_one=0
expect=ok
while [ $# -gt 0 ]; do
  case "$1" in
    --allow-one-gpu) allow_one=1; shift ;;
    --expect) expect="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "run_example.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "run_example.sh: no command" >&2; exit 2; }

case "${2:-}" in
  *.py)
    if ! "$1" -c "import numpy" >/dev/null 2>&1; then
      echo "run_example.sh: SKIPPED: $1 cannot import numpy, which the Python examples need"
      exit 77
    fi ;;
esac
case "$*" in
  *nccl_allreduce*)
    if [ -z "${CUABI_NCCL_PATH:-}" ]; then
      found="$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia.nccl
except ImportError:
    raise SystemExit
for base in getattr(nvidia.nccl, "__path__", []):
    for path in sorted(glob.glob(os.path.join(base, "lib", "libnccl.so*")), reverse=True):
        print(path)
        raise SystemExit
PY
)"
      if [ -n "$found" ]; then
        export CUABI_NCCL_PATH="$found"
        echo "run_example.sh: CUABI_NCCL_PATH=$found (pip's nvidia.nccl)"
      fi
    fi ;;
esac

export NCCL_NVLS_ENABLE=0
out="$(mktemp "${TMPDIR:-/tmp}/cuabi-multi-gpu.XXXXXX")"
trap 'rm -f "$out"' EXIT
echo "run_example.sh: $*"
"$@" >"$out" 2>&1
rc=$?
cat "$out"

if [ $rc -eq 77 ] && grep -q "SKIPPED:" "$out"; then
  exit 77  # with_launcher.sh: no such launcher here, or no device
fi
if [ $rc -eq 3 ] && grep -q "no CUDA device" "$out"; then
  echo "run_example.sh: SKIPPED: no CUDA device"
  exit 77
fi
if [ $rc -eq 2 ] && grep -q "NCCL could not be loaded" "$out"; then
  echo "run_example.sh: SKIPPED: NCCL is not installed (set CUABI_NCCL_PATH)"
  exit 77
fi
if [ $allow_one -eq 1 ] && [ $rc -eq 0 ] && grep -q "needs two devices, found 1" "$out"; then
  # Said as it should be, but nothing across devices ran: skipped, not passed.
  echo "run_example.sh: SKIPPED: one device (the program said it needs two and exited 0)"
  exit 77
fi
case "$expect" in
  ok)
    if [ $rc -eq 0 ] && grep -q ": PASSED" "$out"; then
      echo "run_example.sh: PASS"
      exit 0
    fi ;;
  fault:*)
    k="${expect#fault:}"
    if [ $rc -eq 4 ] && grep -q "rank $k failed first (as --fault-rank asked)" "$out"; then
      echo "run_example.sh: PASS (the planted fault of rank $k was contained and reported)"
      exit 0
    fi ;;
  *) echo "run_example.sh: unknown --expect $expect" >&2; exit 2 ;;
esac
if [ $rc -gt 128 ]; then
  echo "run_example.sh: FAIL: the program was killed by signal $((rc - 128))"
else
  echo "run_example.sh: FAIL: exit status $rc, and not the output expected ($expect)"
fi
exit 1
