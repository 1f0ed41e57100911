#!/usr/bin/env bash
# The diagnostic report without a driver (CUABI_DRIVER_PATH names a file that
# does not exist, so this holds on a GPU machine too):
#   tests/packaging/info.sh path/to/cuabi path/to/libcuabi.so [path/to/cuabi_test_cache_writer]
#
# The C program `cuabi` and `python -m cuabi` (from the source tree, on this
# libcuabi) must print the same report, name the path tried for the driver,
# exit 1, count the compile cache's entries and their size, and clear them
# (and nothing else) with --clear-cache, an entry written by the core's own
# cache code (cuabi_test_cache_writer) included; the cache folder follows
# CUABI_CACHE_DIR, XDG_CACHE_HOME and HOME, is reported off with CUABI_CACHE=0
# and not used when others can write to it. --version (the C program) and
# --help answer on stdout with exit 0, an unknown argument is named with the
# usage on stderr, exit 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=$(realpath "$1")
lib=$(realpath "$2")
writer=${3:-}
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-info.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' \
  "$root/include/cuabi/cuabi.h")

unset CUABI_CACHE XDG_CACHE_HOME CUABI_BACKEND
export CUABI_DRIVER_PATH="$work/no-driver/libcuda.so.1"
export CUABI_CACHE_DIR="$work/cache"
export CUABI_LIBRARY="$lib" PYTHONPATH="$root/bindings/python"
cache=$CUABI_CACHE_DIR

fill_cache() {  # two entries (1000 and 2000 bytes), an unfinished write, two other files
  mkdir -p "$cache"
  chmod 700 "$cache"
  head -c 1000 /dev/zero >"$cache/$(printf '%064d' 1).cubin-cache"
  head -c 2000 /dev/zero >"$cache/$(printf 'ab%062d' 2).cubin-cache"
  head -c 300 /dev/zero >"$cache/.tmp-0123456789abcdef-Xy12Zw"
  echo keep >"$cache/notes.txt"
  echo keep >"$cache/$(printf 'AB%062d' 3).cubin-cache"  # not lower-case hex: not an entry
}

run() {  # run NAME COMMAND...: stdout+stderr to $work/NAME.out, status to $work/NAME.rc
  local name=$1
  shift
  local rc=0
  "$@" >"$work/$name.out" 2>&1 || rc=$?
  echo "$rc" >"$work/$name.rc"
  echo "-- $name (exit $rc)"
  cat "$work/$name.out"
}
has() { grep -qxF -- "$2" "$work/$1.out" || fail "$1: no line '$2'"; }
status() { [ "$(cat "$work/$1.rc")" = "$2" ] || fail "$1 exited $(cat "$work/$1.rc"), not $2"; }

echo "== the report without a driver"
fill_cache
run c "$tool"
run py "$py" -m cuabi
for r in c py; do
  status $r 1
  has $r "cuabi $want"
  has $r "  library: $(realpath "$lib")"
  has $r "driver: not available (CUABI_ERROR_DRIVER_NOT_FOUND)"
  has $r "    $CUABI_DRIVER_PATH: cannot open shared object file: No such file or directory"
  has $r "devices: unknown (no driver)"
  has $r "cache: $cache"
  has $r "  entries: 2, 2.9 KiB"
  grep -qE '^nvrtc: ([0-9]+\.[0-9]+|not available \(CUABI_ERROR_NVRTC_NOT_FOUND\))$' "$work/$r.out" ||
    fail "$r: no nvrtc line"
done
# The default backend: compiled where its module lies beside the library.
backend=ctypes
ls "$(dirname "$lib")"/_cuabi_cffi.*so >/dev/null 2>&1 && "$py" -c 'import cffi' 2>/dev/null &&
  backend=compiled
grep -q "^  python: cuabi $want ($backend backend) at $root/bindings/python/cuabi$" "$work/py.out" ||
  fail "python -m cuabi does not name the package it runs from and its $backend backend"
grep -v '^  python: ' "$work/py.out" | diff -u "$work/c.out" - || fail "the C and Python reports differ"

echo "== --clear-cache removes the entries and unfinished writes, nothing else"
run c_clear "$tool" --clear-cache
status c_clear 0
has c_clear "cleared $cache: removed 2 entries, 2.9 KiB"
[ "$(ls -A "$cache" | sort | tr '\n' ' ')" = "$(printf 'AB%062d' 3).cubin-cache notes.txt " ] ||
  fail "--clear-cache left: $(ls -A "$cache")"
run c_after "$tool"
has c_after "  entries: 0, 0 bytes"
fill_cache
run py_clear "$py" -m cuabi --clear-cache
status py_clear 0
has py_clear "cleared $cache: removed 2 entries, 2.9 KiB"
[ "$(ls -A "$cache" | wc -l)" = 2 ] || fail "python -m cuabi --clear-cache left: $(ls -A "$cache")"

if [ -n "$writer" ]; then
  echo "== an entry as the library writes it"
  rm -rf "$cache"
  mkdir -m 700 "$cache"
  entry=$("$writer" "$cache")
  size=$(stat -c %s "$entry")
  human=$("$py" -c "import sys; from cuabi.__main__ import human_size; print(human_size(int(sys.argv[1])))" "$size")
  for r in c py; do
    cmd=("$tool")
    [ $r = py ] && cmd=("$py" -m cuabi)
    run ${r}_real "${cmd[@]}"
    has ${r}_real "  entries: 1, $human"
  done
  run c_real_clear "$tool" --clear-cache
  has c_real_clear "cleared $cache: removed 1 entry, $human"
  [ ! -e "$entry" ] || fail "--clear-cache left $entry"
fi

echo "== the cache folder's rules"
fill_cache
chmod 777 "$cache"
for r in c py; do
  cmd=("$tool")
  [ $r = py ] && cmd=("$py" -m cuabi)
  run ${r}_shared "${cmd[@]}"
  has ${r}_shared "cache: $cache (not used: writable by others)"
  run ${r}_shared_clear "${cmd[@]}" --clear-cache
  status ${r}_shared_clear 1
  # The refusal is the library's (cuabi_cache_clear), word for word.
  has ${r}_shared_clear \
    "cuabi: cuabi_cache_clear: not clearing $cache: writable by others (compiles do not use it; empty it yourself)"
done
[ "$(ls -A "$cache" | wc -l)" = 5 ] || fail "a cache writable by others was cleared"
chmod 700 "$cache"
for r in c py; do
  cmd=("$tool")
  [ $r = py ] && cmd=("$py" -m cuabi)
  run ${r}_off env CUABI_CACHE=0 "${cmd[@]}"
  has ${r}_off "cache: $cache (off: CUABI_CACHE=0)"
  has ${r}_off "  entries: 2, 2.9 KiB"
  run ${r}_absent env CUABI_CACHE_DIR="$work/absent" "${cmd[@]}"
  has ${r}_absent "cache: $work/absent (not created yet)"
  has ${r}_absent "  entries: 0, 0 bytes"
  [ ! -e "$work/absent" ] || fail "$r created the cache folder"
  run ${r}_absent_clear env CUABI_CACHE_DIR="$work/absent" "${cmd[@]}" --clear-cache
  status ${r}_absent_clear 0
  has ${r}_absent_clear "cleared $work/absent: removed 0 entries, 0 bytes"
  [ ! -e "$work/absent" ] || fail "$r --clear-cache created the cache folder"
  run ${r}_xdg env -u CUABI_CACHE_DIR XDG_CACHE_HOME="$work/xdg" "${cmd[@]}"
  has ${r}_xdg "cache: $work/xdg/cuabi (not created yet)"
  run ${r}_home env -u CUABI_CACHE_DIR XDG_CACHE_HOME=relative HOME="$work/home" "${cmd[@]}"
  has ${r}_home "cache: $work/home/.cache/cuabi (not created yet)"
  run ${r}_usage "${cmd[@]}" --bogus
  status ${r}_usage 2
done

echo "== --version, --help and a usage error: answers on stdout (exit 0), usage errors on stderr (exit 2)"
streams() {  # streams NAME COMMAND...: stdout to $work/NAME.stdout, stderr to $work/NAME.stderr
  local name=$1 rc=0
  shift
  "$@" >"$work/$name.stdout" 2>"$work/$name.stderr" || rc=$?
  echo "$rc" >"$work/$name.rc"
}
quiet() { [ ! -s "$work/$1" ] || fail "$1 is not empty: $(cat "$work/$1")"; }
streams c_version "$tool" --version
status c_version 0
[ "$(cat "$work/c_version.stdout")" = "cuabi $want" ] || fail "cuabi --version: $(cat "$work/c_version.stdout")"
quiet c_version.stderr
for r in c py; do
  cmd=("$tool")
  [ $r = py ] && cmd=("$py" -m cuabi)
  for flag in --help -h; do
    streams ${r}_help "${cmd[@]}" $flag
    status ${r}_help 0
    grep -q "^usage: " "$work/${r}_help.stdout" || fail "$r $flag prints no usage on stdout"
    quiet ${r}_help.stderr
  done
  streams ${r}_bogus "${cmd[@]}" --bogus
  status ${r}_bogus 2
  quiet ${r}_bogus.stdout
  grep -qxF "cuabi: unknown argument '--bogus'" "$work/${r}_bogus.stderr" || fail "$r --bogus: not named on stderr"
  grep -q "^usage: " "$work/${r}_bogus.stderr" || fail "$r --bogus: no usage on stderr"
done

echo "== the default driver search"
run c_default env -u CUABI_DRIVER_PATH "$tool"
if grep -q '^driver: CUDA ' "$work/c_default.out"; then
  echo "(a driver is installed here: nothing more to check without one)"
else
  status c_default 1
  grep -q '^    libcuda\.so\.1: ' "$work/c_default.out" || fail "the default search does not list libcuda.so.1"
fi

echo
echo "diagnostic report: all checks passed"
