#!/bin/sh
# Builds the C# binding with mcs and runs its tests with mono.
#   bindings/csharp/run-tests.sh [path/to/libcuabi.so] [test-name-substring ...]
# The library defaults to build/libcuabi.so under the repository root.
# Exit status: non-zero when the build or any test fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

lib=${1:-"$repo/build/libcuabi.so"}
[ $# -gt 0 ] && shift
case "$lib" in /*) ;; *) lib="$PWD/$lib" ;; esac
if [ ! -e "$lib" ]; then
    echo "run-tests.sh: no library at $lib (build the core, or pass the path of libcuabi.so)" >&2
    exit 2
fi

"$here/build.sh"

cache=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-cs-cache.XXXXXX")
trap 'rm -rf "$cache"' EXIT INT TERM
export CUABI_LIBRARY="$lib"
export CUABI_CACHE_DIR="${CUABI_CACHE_DIR:-$cache}"
# The fault-injection test's stand-in driver and NVRTC (a CMake build makes it
# next to the library); the test is skipped, saying why, without it.
if [ -z "${CUABI_FAULT_FAKE_DRIVER:-}" ]; then
    fake="$(dirname "$lib")/tests/fault/libcuabi_fault_fake_cuda.so"
    [ -e "$fake" ] && export CUABI_FAULT_FAKE_DRIVER="$fake"
fi
# The test NVTX tool (tests/nvtx/record_nvtx.c, also made by a CMake build);
# the NVTX test fails, saying why, without it.
if [ -z "${CUABI_TEST_NVTX_TOOL:-}" ]; then
    tool="$(dirname "$lib")/tests/nvtx/libcuabi_record_nvtx.so"
    [ -e "$tool" ] && export CUABI_TEST_NVTX_TOOL="$tool"
fi
cd "$repo"
mono --debug "${CUABI_CSHARP_OUT:-$here/out}/Cuabi.Tests.exe" "$@"
