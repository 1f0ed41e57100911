#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds consumers
# against it: a C and a C++ one through find_package(cuabi), and both again
# through pkg-config.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")" && pwd)/consumer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name 'libcuabi.so.0' -printf '%h\n' | head -n1)
for f in include/cuabi/cuabi.h include/cuabi/cuabi.hpp include/cuabi/cuabi_objects.hpp include/cuabi/cuabi.json; do test -f "$prefix/$f" || { echo "missing $f"; exit 1; }; done
for f in libcuabi.so libcuabi.so.0; do test -L "$libdir/$f" || { echo "missing link $f"; exit 1; }; done

echo "== the cuabi command, from the prefix"
# It finds the installed library through its RUNPATH; without a driver it says
# what it tried and exits 1.
test -x "$prefix/bin/cuabi" || { echo "missing bin/cuabi"; exit 1; }
rc=0
out=$(env -u LD_LIBRARY_PATH CUABI_DRIVER_PATH="$work/none/libcuda.so.1" "$prefix/bin/cuabi") || rc=$?
echo "$out"
test $rc -eq 1 || { echo "bin/cuabi exited $rc without a driver, not 1"; exit 1; }
echo "$out" | grep -qx "  library: $(realpath "$libdir/libcuabi.so.0")" ||
  { echo "bin/cuabi did not load the installed library"; exit 1; }
echo "$out" | grep -qF "$work/none/libcuda.so.1" || { echo "bin/cuabi does not name the driver path tried"; exit 1; }

echo "== cuabi --version and --help"
version=$(for p in MAJOR MINOR PATCH; do sed -n "s/^#define CUABI_VERSION_$p \([0-9]*\)$/\1/p" "$prefix/include/cuabi/cuabi.h"; done | paste -sd.)
test "$("$prefix/bin/cuabi" --version)" = "cuabi $version" || { echo "cuabi --version is not 'cuabi $version'"; exit 1; }
"$prefix/bin/cuabi" --help | grep -q "^usage: cuabi" || { echo "cuabi --help prints no usage"; exit 1; }
rc=0; "$prefix/bin/cuabi" --no-such-flag >/dev/null 2>&1 || rc=$?
test $rc -eq 2 || { echo "cuabi exited $rc on an unknown flag, not 2"; exit 1; }

echo "== find_package(cuabi)"
cmake -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH=$libdir "$work/cmake-build/consumer"
LD_LIBRARY_PATH=$libdir "$work/cmake-build/consumer_cpp"

echo "== pkg-config cuabi"
export PKG_CONFIG_PATH=$libdir/pkgconfig
# The version the header declares, as pkg-config must report it.
header=$(cd "$(dirname "$0")/../.." && pwd)/include/cuabi/cuabi.h
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' "$header")
test "$(pkg-config --modversion cuabi)" = "$want" || { echo "pkg-config reports $(pkg-config --modversion cuabi), the header $want"; exit 1; }
cc -std=c99 -Wall -Werror "$src/main.c" $(pkg-config --cflags --libs cuabi) -o "$work/consumer-pc"
LD_LIBRARY_PATH=$libdir "$work/consumer-pc"
c++ -std=c++17 -Wall -Wextra -pedantic -Werror "$src/main.cpp" $(pkg-config --cflags --libs cuabi) \
  -o "$work/consumer-cpp-pc"
LD_LIBRARY_PATH=$libdir "$work/consumer-cpp-pc"
