#!/usr/bin/env bash
# cuabi as another CMake project's dependency, built from source with
# GoogleTest hidden, in two builds of tests/packaging/subproject:
#   fetchcontent   FetchContent of a .tar.gz of this tree (file:// URL, no
#                  network), Release, CUABI_BUILD_TOOLS set OFF by the consumer
#   subdirectory   add_subdirectory of this tree, no build type given (cuabi
#                  must not choose one for the consumer), the cuabi command built
# Each must configure without GoogleTest, define and build none of cuabi's
# tests or examples, and its C and C++ programs must print the library's
# version, then the missing driver as the library reports it
# (CUABI_ERROR_DRIVER_NOT_FOUND, naming the path tried; exit 3). Where a
# driver is installed, the default search may find it (exit 0).
#   tests/packaging/cmake-subproject.sh   (KEEP=1 keeps its temporary folder)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
consumer=$root/tests/packaging/subproject
work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-subproject.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' \
  "$root/include/cuabi/cuabi.h")
jobs=${CUABI_SUBPROJECT_JOBS:-2}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# GoogleTest hidden: find_package(GTest) disabled, and any other way of
# looking for it (module or config mode, GTEST_ROOT) ends the configure.
hide=$work/hide-gtest
mkdir -p "$hide"
for f in FindGTest.cmake GTestConfig.cmake FindGoogleTest.cmake GoogleTestConfig.cmake; do
  echo 'message(FATAL_ERROR "GoogleTest was looked for")' >"$hide/$f"
done
unset GTEST_ROOT GTest_ROOT GTest_DIR CMAKE_PREFIX_PATH CMAKE_MODULE_PATH CMAKE_BUILD_TYPE
hidden=(--no-warn-unused-cli -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_MODULE_PATH="$hide" -DGTest_DIR="$hide"
        -DGoogleTest_DIR="$hide" -DGTEST_ROOT="$hide")

# The tree as a release archive: the files git tracks or would track.
(cd "$root" && git ls-files -co --exclude-standard -z 2>/dev/null |
  while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
  tar --null -czf "$work/cuabi-src.tar.gz" --transform 's,^,cuabi-src/,' -T -) ||
  fail "could not archive $root (a git checkout)"

check_build() {  # check_build NAME BUILD_DIR EXPECTED_PROGRAMS...
  local name=$1 b=$2
  shift 2
  grep -qi 'gtest\|googletest' "$work/$name.configure.log" && fail "$name: the configure mentions GoogleTest"
  local cache=$b/CMakeCache.txt
  for opt in CUABI_BUILD_TESTS CUABI_BUILD_EXAMPLES CUABI_WERROR; do
    grep -qx "$opt:BOOL=OFF" "$cache" || fail "$name: $opt is not OFF: $(grep "^$opt:" "$cache")"
  done
  [ -z "$(find "$b" -name CTestTestfile.cmake)" ] || fail "$name: cuabi registered tests"
  # Programs built: the consumer's (and the cuabi command where asked), no
  # test or example of cuabi's.
  local got
  got=$(find "$b" \( -name CMakeFiles -o -path "$b/_deps/*-src" \) -prune -o \
      -type f -perm -u+x ! -name '*.so*' -print |
    while read -r f; do if [ "$(head -c 4 "$f")" = $'\x7fELF' ]; then basename "$f"; fi; done |
    sort | paste -sd' ')
  [ "$got" = "$*" ] || fail "$name: programs built: '$got', expected '$*'"
  echo "$name: programs built: $got"
}

run_consumer() {  # run_consumer NAME PROGRAM: must report the missing driver, and the default search must not fail
  local name=$1 prog=$2 rc=0 out
  out=$(env CUABI_DRIVER_PATH="$work/no-driver/libcuda.so.1" "$prog" 2>&1) || rc=$?
  echo "$out"
  [ $rc -eq 3 ] || fail "$name: exited $rc without a driver, not 3"
  grep -qx "cuabi $want (C\(++\)\?)" <<<"$out" || fail "$name: no version line 'cuabi $want'"
  grep -q "^devices: CUABI_ERROR_DRIVER_NOT_FOUND: .*the CUDA driver library could not be loaded" <<<"$out" ||
    fail "$name: the missing driver is not reported as CUABI_ERROR_DRIVER_NOT_FOUND"
  grep -qF "$work/no-driver/libcuda.so.1: cannot open shared object file" <<<"$out" ||
    fail "$name: the path tried is not named"
  rc=0
  out=$(env -u CUABI_DRIVER_PATH "$prog" 2>&1) || rc=$?
  echo "$out"
  case $rc in
    0) grep -q '^devices: [0-9][0-9]*$' <<<"$out" || fail "$name: no device count" ;;
    3) grep -q '^  libcuda\.so\.1: ' <<<"$out" || fail "$name: the default search does not list libcuda.so.1" ;;
    *) fail "$name: exited $rc with the default driver search" ;;
  esac
}

echo "== FetchContent of a source archive (file:// URL), Release"
b=$work/fetchcontent
cmake -S "$consumer" -B "$b" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCUABI_CONSUME=fetchcontent \
  -DCUABI_ARCHIVE="$work/cuabi-src.tar.gz" "${hidden[@]}" >"$work/fetchcontent.configure.log" 2>&1 ||
  { cat "$work/fetchcontent.configure.log"; fail "fetchcontent: configure"; }
cmake --build "$b" -j "$jobs" >"$work/fetchcontent.build.log" 2>&1 ||
  { tail -40 "$work/fetchcontent.build.log"; fail "fetchcontent: build"; }
check_build fetchcontent "$b" consumer_c consumer_cpp
for p in c cpp; do run_consumer "fetchcontent consumer_$p" "$b/consumer_$p"; done

echo "== add_subdirectory of the source tree, no build type"
b=$work/subdirectory
cmake -S "$consumer" -B "$b" "${generator[@]}" -DCUABI_CONSUME=subdirectory -DCUABI_SOURCE_DIR="$root" \
  "${hidden[@]}" >"$work/subdirectory.configure.log" 2>&1 ||
  { cat "$work/subdirectory.configure.log"; fail "subdirectory: configure"; }
grep -qx 'CMAKE_BUILD_TYPE:STRING=' "$b/CMakeCache.txt" ||
  fail "subdirectory: cuabi set the consumer's build type: $(grep '^CMAKE_BUILD_TYPE:' "$b/CMakeCache.txt")"
cmake --build "$b" -j "$jobs" >"$work/subdirectory.build.log" 2>&1 ||
  { tail -40 "$work/subdirectory.build.log"; fail "subdirectory: build"; }
check_build subdirectory "$b" consumer_c consumer_cpp cuabi
for p in c cpp; do run_consumer "subdirectory consumer_$p" "$b/consumer_$p"; done
# The command in cuabi's own build folder ($b/cuabi, as add_subdirectory(cuabi)
# names it), not at the consumer's top where that folder is.
[ "$("$b/cuabi/cuabi" --version)" = "cuabi $want" ] || fail "subdirectory: cuabi --version is not 'cuabi $want'"

echo
echo "cmake subproject: cuabi built from source by FetchContent and add_subdirectory, without GoogleTest"
