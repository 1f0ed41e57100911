#!/usr/bin/env bash
# cuabi as another project's dependency from source (FetchContent of this
# checkout, tests/install/subproject): it configures with GoogleTest hidden,
# builds only the library, and the consumer links and runs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S "$repo/tests/install/subproject" -B "$work/build" -G Ninja -DCUABI_SOURCE_DIR="$repo" \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=TRUE -DCMAKE_DISABLE_FIND_PACKAGE_GoogleTest=TRUE >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j 2 >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
"$work/build/consumer"
echo "subproject consumer: cuabi built from source as a dependency, without GoogleTest, no tests or examples"
