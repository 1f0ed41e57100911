#!/usr/bin/env bash
# Builds the Rust binding's test binaries and examples here, and packs them
# with a run.sh for a GPU machine that has no Rust toolchain.
#
#   bindings/rust/bundle-gpu.sh OUTDIR        (CUABI_LIB_DIR may name a built core)
#
# On the GPU machine, after building the core there:
#
#   OUTDIR/run.sh LIB_DIR      LIB_DIR holds libcuabi.so.0 (e.g. build/)
#
# run.sh runs every binary with LD_LIBRARY_PATH=LIB_DIR and exits non-zero if
# any fails. The binaries are x86-64 Linux, release, stripped.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
rm -rf "$out/bin" "$out/run.sh" "$out/BINARIES"
mkdir -p "$out/bin"

json="$(mktemp)"
trap 'rm -f "$json"' EXIT

cd "$here"
# Test binaries of the workspace (unit, layout, integration, GPU runner).
cargo test --offline --release --workspace --no-run --message-format=json >"$json"
# The SAXPY example, and the multi-GPU one (scripts/gpu-pass multi runs it,
# plain and with --one-gpu; on one GPU it says it needs two devices).
cargo build --offline --release -p cuabi --example saxpy --example multi_gpu \
  --message-format=json >>"$json"
# The downstream crate, built as a user's project would be.
(cd "$repo/examples/rust/downstream" &&
  CARGO_TARGET_DIR="$here/target" cargo build --offline --release --message-format=json) >>"$json"

# name<TAB>path for every executable; test binaries are named after their
# package and target (cuabi-lib, cuabi-gpu, ...).
python3 - "$json" >"$out/BINARIES.tmp" <<'PY'
import json, sys
found = {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    msg = json.loads(line)
    if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
        continue
    kinds, target = msg["target"]["kind"], msg["target"]["name"].replace("_", "-")
    if msg["profile"]["test"]:
        name = "test-%s%s" % (target, "-lib" if "lib" in kinds else "")
    elif "example" in kinds:
        name = "example-" + target
    elif "bin" in kinds:
        name = "bin-" + target
    else:
        continue
    found[name] = msg["executable"]
for name in sorted(found):
    print("%s\t%s" % (name, found[name]))
PY

: >"$out/BINARIES"
while IFS=$'\t' read -r name path; do
  cp "$path" "$out/bin/$name"
  strip --strip-all "$out/bin/$name" 2>/dev/null || true
  echo "$name" >>"$out/BINARIES"
done <"$out/BINARIES.tmp"
rm -f "$out/BINARIES.tmp"

cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled cuabi Rust binaries against a libcuabi built on this machine.
#
#   run.sh LIB_DIR       LIB_DIR holds libcuabi.so.0 (e.g. the repository's build/)
#
# Exits non-zero when any binary fails. The GPU tests (test-gpu) print one
# line per test and "N passed, N failed, N skipped"; some start bin/test-gpu
# again as their child process (IPC, a sticky fault and its launches, device
# core dumps). The stand-in driver's tests (test-health, test-fault) run
# where $CUABI_FAULT_FAKE_DRIVER names it and report SKIPPED otherwise.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 LIB_DIR" >&2
  exit 2
fi
lib="$(cd "$1" && pwd)" || exit 2
if [ ! -e "$lib/libcuabi.so.0" ] && [ ! -e "$lib/libcuabi.so" ]; then
  echo "run.sh: no libcuabi.so.0 in $lib" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The test NVTX tool of the same CMake build, which test-nvtx needs (it
# fails without it): LIB_DIR/tests/nvtx/libcuabi_record_nvtx.so.
if [ -z "${CUABI_TEST_NVTX_TOOL:-}" ] && [ -e "$lib/tests/nvtx/libcuabi_record_nvtx.so" ]; then
  export CUABI_TEST_NVTX_TOOL="$lib/tests/nvtx/libcuabi_record_nvtx.so"
fi
# The DLPack producer library of the same build, which the DLPack tests take
# tensors from (they skip without it): LIB_DIR/tests/dlpack_producer/.
if [ -z "${CUABI_TEST_DLPACK_PRODUCER:-}" ] &&
  [ -e "$lib/tests/dlpack_producer/libcuabi_test_dlpack_producer.so" ]; then
  export CUABI_TEST_DLPACK_PRODUCER="$lib/tests/dlpack_producer/libcuabi_test_dlpack_producer.so"
fi

failed=()
total=0
while read -r name; do
  [ -n "$name" ] || continue
  total=$((total + 1))
  echo "== $name"
  if "$here/bin/$name"; then
    :
  else
    status=$?
    echo "== $name FAILED (exit $status)"
    failed+=("$name")
  fi
done <"$here/BINARIES"

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "run.sh: all $total binaries passed"
  exit 0
fi
echo "run.sh: ${#failed[@]} of $total binaries failed: ${failed[*]}"
exit 1
RUN
chmod +x "$out/run.sh" "$out"/bin/*

echo "bundle-gpu.sh: $(wc -l <"$out/BINARIES") binaries in $out ($(du -sh "$out" | cut -f1)):"
sed 's/^/  /' "$out/BINARIES"
echo "on the GPU machine: $out/run.sh LIB_DIR"
