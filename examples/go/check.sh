#!/usr/bin/env bash
# The Go example's test (CTest: example.saxpy_go):
#
#   examples/go/check.sh OUTDIR LIBCUABI
#
# Builds the program into OUTDIR with build.sh or, where there is no Go
# toolchain (a GPU machine), takes the one scripts/prepare-carry built into
# .carry/go/; exits 77 (skipped) when there is neither. Then runs it against
# LIBCUABI (a built libcuabi.so; libcuabi.so.0 beside it):
#
#   1. with CUABI_LIBRARY naming a file that does not exist: exit 2, naming it;
#   2. with CUABI_DRIVER_PATH naming a driver that does not exist: exit 3, the
#      kernel compiled to PTX, and the core's report: the status name and the
#      message with the path tried;
#   3. as the machine is, libcuabi.so.0 found by the name cuabi.json gives,
#      through LD_LIBRARY_PATH: where nvidia-smi lists a GPU, exit 0 with the
#      refusal of the 4-byte n (naming parameter 4) and the "verified:" line;
#      where no libcuda.so.1 is installed, exit 3 and the report listing each
#      path tried; where a driver is installed but no GPU listed, exit 3 or 4
#      with the report.
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 OUTDIR LIBCUABI" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
lib="$(readlink -f "$2")"
libdir="$(dirname "$lib")"
if [ ! -e "$libdir/libcuabi.so.0" ]; then
  echo "check.sh: no libcuabi.so.0 beside $2" >&2
  exit 1
fi

if command -v go >/dev/null; then
  bash "$here/build.sh" "$out" || exit 1
  bin="$out/saxpy-go"
elif [ -x "$repo/.carry/go/saxpy-go" ]; then
  bin="$repo/.carry/go/saxpy-go"
  echo "check.sh: no Go toolchain; running $bin (built by scripts/prepare-carry)"
else
  echo "check.sh: SKIPPED: no Go toolchain (apt-get install golang-go) and no .carry/go/saxpy-go"
  exit 77
fi

cache="$(mktemp -d "$out/cache.XXXXXX")"
trap 'rm -rf "$cache"' EXIT
export CUABI_CACHE_DIR="$cache"
failed=0
log=""

# run NAME EXPECTED_STATUSES COMMAND...: runs, shows its output, checks its status.
run() {
  local name=$1 want=$2
  shift 2
  log="$out/$name.log"
  echo "== $name: $*"
  "$@" >"$log" 2>&1
  local rc=$?
  sed 's/^/   | /' "$log"
  case " $want " in
  *" $rc "*) echo "   exit $rc: as expected" ;;
  *)
    echo "FAIL $name: exit $rc, expected ${want// / or }"
    failed=1
    ;;
  esac
}
# re TEXT: TEXT as a grep -E pattern that matches it literally.
re() { printf '%s' "$1" | sed 's/[][\\.^$*+?(){}|]/\\&/g'; }
# need TEXT...: each (a grep -E pattern) must appear in the last run's output.
need() {
  local pattern
  for pattern in "$@"; do
    if ! grep -qE -- "$pattern" "$log"; then
      echo "FAIL: expected a line matching /$pattern/"
      failed=1
    fi
  done
}

run missing_library 2 env CUABI_LIBRARY="$out/no-such-dir/libcuabi.so.0" "$bin"
need "^saxpy-go: cannot load libcuabi \($(re "$out/no-such-dir/libcuabi.so.0")\)" "No such file or directory"

fake_driver="$out/no-such-dir/libcuda.so.1"
run missing_driver 3 env CUABI_LIBRARY="$lib" CUABI_DRIVER_PATH="$fake_driver" "$bin"
need "^libcuabi [0-9]+\.[0-9]+\.[0-9]+ from $(re "$lib") \(declarations from cuabi.json " \
  "^compiled saxpy with NVRTC: [0-9]+ bytes of PTX" \
  "^saxpy-go: no CUDA driver: CUABI_ERROR_DRIVER_NOT_FOUND$" \
  "^  cuabi_device_get_count: .*Tried:$" \
  "^    $(re "$fake_driver"): .*No such file or directory"

# What the machine has, found without asking cuabi.
gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu=1
fi
driver=0
if [ -n "${CUABI_DRIVER_PATH:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  driver=1
fi
ld_path="${LD_LIBRARY_PATH:-}"
for dir in ${ld_path//:/ } /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 \
  /usr/local/nvidia/lib64 /usr/lib/wsl/lib; do
  [ -e "$dir/libcuda.so.1" ] && driver=1
done

run_machine() {
  run "$1" "$2" env -u CUABI_LIBRARY LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin"
}
if [ $gpu -eq 1 ]; then
  run_machine gpu 0
  need "^libcuabi .* from .*libcuabi\.so\.0 " "^device 0: .+ \(sm_[0-9]+\)$" \
    "^refused as it should be: CUABI_ERROR_INVALID_ARGUMENT: .*'saxpy' parameter 4 is 8 bytes, but the argument given is 4 bytes" \
    "^verified: out = 2 \* x \+ y for all 16777216 elements"
elif [ $driver -eq 0 ]; then
  run_machine no_driver 3
  need "^libcuabi .* from .*libcuabi\.so\.0 " "^compiled saxpy with NVRTC: [0-9]+ bytes of PTX" \
    "^saxpy-go: no CUDA driver: CUABI_ERROR_DRIVER_NOT_FOUND$" "^  cuabi_device_get_count: .*Tried:$" \
    "^    libcuda\.so\.1: " "^    /.+/libcuda\.so\.1: "
else
  run_machine driver_no_gpu "3 4"
  need "^compiled saxpy with NVRTC: [0-9]+ bytes of PTX" "^saxpy-go: no CUDA (driver|device): "
fi

if [ $failed -ne 0 ]; then
  echo "check.sh: FAILED"
  exit 1
fi
echo "check.sh: the Go example behaved as expected ($([ $gpu -eq 1 ] && echo "GPU: verified" || echo "no GPU: the driver's absence reported"))"
