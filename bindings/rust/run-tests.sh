#!/usr/bin/env bash
# Runs every check of the Rust binding; exits non-zero when one fails.
#
#   bindings/rust/run-tests.sh [LIB_DIR]
#
# LIB_DIR: a folder holding a built libcuabi.so (e.g. build/); without it,
# cuabi-sys's build script builds the core with CMake itself.
#
# 1. cargo test over the workspace: unit tests, bindgen's layout tests, the
#    no-GPU integration tests, the bad-input corpus, fault injection against
#    the stand-in driver ($CUABI_FAULT_FAKE_DRIVER, else LIB_DIR's
#    tests/fault/libcuabi_fault_fake_cuda.so; SKIPPED without it; the driver's
#    log and health against it, tests/health.rs, the same), NVTX recorded by
#    the test tool ($CUABI_TEST_NVTX_TOOL, else LIB_DIR's
#    tests/nvtx/libcuabi_record_nvtx.so; tests/nvtx.rs FAILS without it), the GPU
#    tests (each reported ok / FAILED / SKIPPED: no CUDA device) and the
#    doctests;
# 2. the downstream crate examples/rust/downstream: built and run;
# 3. cargo doc with warnings as errors;
# 4. rustfmt --check, and clippy with warnings as errors when clippy is installed.
#
# The generated files (cuabi-sys/src/bindings.rs, cuabi/src/generated.rs,
# values.rs, objects.rs and builders.rs, the crates' versions) are checked by `scripts/regen --check`,
# with the others.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

if [ $# -ge 1 ]; then
  if [ ! -e "$1/libcuabi.so" ]; then
    echo "run-tests.sh: $1/libcuabi.so does not exist; build the core first" >&2
    exit 1
  fi
  export CUABI_LIB_DIR="$(cd "$1" && pwd)"
  echo "run-tests.sh: linking libcuabi from $CUABI_LIB_DIR"
  # The fault-injection test's stand-in driver, from the same CMake build
  # (the CTest entry names it; tests/fault.rs reports SKIPPED without it).
  fake="$CUABI_LIB_DIR/tests/fault/libcuabi_fault_fake_cuda.so"
  if [ -z "${CUABI_FAULT_FAKE_DRIVER:-}" ] && [ -e "$fake" ]; then
    export CUABI_FAULT_FAKE_DRIVER="$fake"
  fi
  # The NVTX tool that records what tests/nvtx.rs annotates, likewise.
  tool="$CUABI_LIB_DIR/tests/nvtx/libcuabi_record_nvtx.so"
  if [ -z "${CUABI_TEST_NVTX_TOOL:-}" ] && [ -e "$tool" ]; then
    export CUABI_TEST_NVTX_TOOL="$tool"
  fi
else
  unset CUABI_LIB_DIR
  echo "run-tests.sh: no LIB_DIR given; cuabi-sys builds the core with CMake"
fi

cd "$here"
step() { echo; echo "== $*"; }

step "cargo test (workspace)"
cargo test --offline --workspace

step "downstream crate: build and run"
# The workspace's target folder, so a CMake-built core is not built twice.
(cd "$repo/examples/rust/downstream" &&
  CARGO_TARGET_DIR="$here/target" cargo build --offline &&
  CARGO_TARGET_DIR="$here/target" cargo run --offline --quiet)

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --offline --no-deps --workspace

step "rustfmt --check"
cargo fmt --all -- --check
(cd "$repo/examples/rust/downstream" && cargo fmt -- --check)

if cargo clippy --version >/dev/null 2>&1; then
  step "clippy (warnings are errors)"
  cargo clippy --offline --workspace --all-targets -- -D warnings
  (cd "$repo/examples/rust/downstream" &&
    CARGO_TARGET_DIR="$here/target" cargo clippy --offline -- -D warnings)
else
  step "clippy: SKIPPED (not installed)"
fi

echo
echo "run-tests.sh: all Rust checks passed"
