#!/usr/bin/env bash
# Runs the Python binding's test suite (tests/python) against one libcuabi.
#
#   bindings/python/run-tests.sh [path/to/libcuabi.so] [pytest arguments...]
#
# The library is the first argument, else $CUABI_LIBRARY, else build/libcuabi.so
# of this checkout. numpy, pytest and cffi are installed with pip when missing
# (pip honours PIP_FIND_LINKS / PIP_NO_INDEX for an offline wheel folder);
# without cffi the cffi backend's tests are skipped, with a warning. GPU tests
# are skipped, with the reason, where there is no CUDA device. The
# fault-injection, driver-log and health tests use $CUABI_FAULT_FAKE_DRIVER,
# else the stand-in driver of the library's build folder (tests/fault/), and
# are skipped without one. The NVTX test uses $CUABI_TEST_NVTX_TOOL, else the
# test NVTX tool of that build folder (tests/nvtx/), and FAILS without one.
# Exits non-zero when a test fails or when no test ran at all.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"

lib="${1:-}"
[ $# -gt 0 ] && shift
[ -n "$lib" ] || lib="${CUABI_LIBRARY:-$root/build/libcuabi.so}"
if [ ! -f "$lib" ]; then
  echo "run-tests.sh: no libcuabi at $lib" >&2
  echo "  build it (cmake -S . -B build -G Ninja && cmake --build build) or pass its path" >&2
  exit 1
fi
lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"

pip_install() {
  local opts=(-q --disable-pip-version-check --retries 1 --timeout 20)
  "$py" -m pip install "${opts[@]}" "$@" 2>/dev/null || "$py" -m pip install "${opts[@]}" --user "$@"
}

missing=()
for mod in numpy pytest; do
  "$py" -c "import $mod" >/dev/null 2>&1 || missing+=("$mod")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run-tests.sh: installing ${missing[*]}"
  if ! pip_install "${missing[@]}"; then
    echo "run-tests.sh: could not install ${missing[*]}" >&2
    exit 1
  fi
fi
if ! "$py" -c "import cffi" >/dev/null 2>&1; then
  echo "run-tests.sh: installing cffi"
  if ! pip_install cffi; then
    echo "run-tests.sh: WARNING: cffi could not be installed; the cffi backend's tests will be SKIPPED" >&2
  fi
fi

export CUABI_LIBRARY="$lib"
# The stand-in driver of the fault-injection test (tests/fault), built beside
# the library in a CMake build; without it that test is skipped.
if [ -z "${CUABI_FAULT_FAKE_DRIVER:-}" ] &&
   [ -f "$(dirname "$lib")/tests/fault/libcuabi_fault_fake_cuda.so" ]; then
  export CUABI_FAULT_FAKE_DRIVER="$(dirname "$lib")/tests/fault/libcuabi_fault_fake_cuda.so"
fi
# The test NVTX tool (tests/nvtx), built beside the library in a CMake build;
# without it the NVTX test fails, saying so.
if [ -z "${CUABI_TEST_NVTX_TOOL:-}" ] &&
   [ -f "$(dirname "$lib")/tests/nvtx/libcuabi_record_nvtx.so" ]; then
  export CUABI_TEST_NVTX_TOOL="$(dirname "$lib")/tests/nvtx/libcuabi_record_nvtx.so"
fi
# A private compile cache, so runs neither depend on nor fill ~/.cache/cuabi.
cache="$(mktemp -d "${TMPDIR:-/tmp}/cuabi-pytest-cache.XXXXXX")"
trap 'rm -rf "$cache"' EXIT
export CUABI_CACHE_DIR="$cache"

cd "$root"
"$py" -m pytest -p no:cacheprovider -ra "$root/tests/python" "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "run-tests.sh: pytest collected no tests" >&2
  exit 1
fi
exit $rc
