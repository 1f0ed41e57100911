#!/usr/bin/env bash
# The scratch-function check: a new function reaches every language with no
# binding file edited by hand.
#
#   tests/scratch/run.sh [work folder]      (CTest: scratch_function, label scratch)
#
# In a copy of this tree (the files git knows, as they are in the working
# tree now, plus untracked files that are not ignored) it
#   1. appends to include/cuabi/cuabi.h a getter on an existing object,
#        cuabi_device_get_scratch_value(cuabi_device device, int32_t* value)
#      answering (the device's ordinal + 1) * 7 (7 for device 0: the stand-in
#      driver has one device, and 0 would not tell a written value from an
#      untouched one);
#   2. adds its core function and extern "C" shim in one new file,
#      capi/abi/scratch.cpp, built through the CUABI_EXTRA_SOURCES hook of the
#      root CMakeLists.txt;
#   3. runs scripts/regen, and nothing else touches a binding;
#   4. builds libcuabi and the stand-in driver (tests/fake/, target
#      cuabi_fault_fake_cuda), and
#   5. calls the function from each language against the stand-in driver
#      (CUABI_DRIVER_PATH / CUABI_NVRTC_PATH), asserting the value.
#
# Each language has its section below (check_<language>), called from the
# end of this file; a section fails the whole check when its language cannot
# call the function. The work folder (default: a new temporary folder,
# removed at the end unless CUABI_SCRATCH_KEEP=1) holds the copy in src/ and
# its build in build/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-}"
if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/cuabi-scratch.XXXXXX")"
  if [ "${CUABI_SCRATCH_KEEP:-0}" != 1 ]; then
    trap 'rm -rf "$work"' EXIT
  fi
fi
src="$work/src"
build="$work/build"
jobs="${CUABI_SCRATCH_JOBS:-2}"
py="${PYTHON:-python3}"

# The scratch function: its name, what it answers on device 0, and the names
# each language's generated layer gives it (the object-layer naming rules of
# scripts/regen_api/model.py: a getter get_x with one out value is x).
SCRATCH_FN=cuabi_device_get_scratch_value
SCRATCH_EXPECTED=7

step() { echo "== scratch: $*"; }
fail() {
  echo "scratch: FAILED: $*" >&2
  exit 1
}

# --- the copy -----------------------------------------------------------------
copy_tree() {
  step "copying the tree to $src"
  rm -rf "$src"
  mkdir -p "$src"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$src"
}

# --- the header and the core ---------------------------------------------------
add_function() {
  step "adding $SCRATCH_FN to the header and capi/abi/scratch.cpp"
  "$py" - "$src/include/cuabi/cuabi.h" <<'EOF'
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
end = "#ifdef __cplusplus\n}"
at = text.rindex(end)
decl = (
    "/* The scratch value of `device`: (its ordinal + 1) * 7. */\n"
    "CUABI_API cuabi_status CUABI_CALL cuabi_device_get_scratch_value(cuabi_device device,\n"
    "                                                                 int32_t* value);\n\n"
)
open(path, "w", encoding="utf-8").write(text[:at] + decl + text[at:])
EOF
  cat >"$src/capi/abi/scratch.cpp" <<'EOF'
// The scratch function of tests/scratch/run.sh: its core part and its shim.
#include "shim.hpp"

using namespace cuabi;
using namespace cuabi::abi;

namespace {
int32_t scratch_value(const Device& device) { return (device.ordinal + 1) * 7; }
}  // namespace

extern "C" cuabi_status cuabi_device_get_scratch_value(cuabi_device device, int32_t* value) {
  return get(__func__, device, "device", value, "value", &scratch_value);
}
EOF
}

regen() {
  step "scripts/regen"
  (cd "$src" && "$py" scripts/regen) | tee "$work/regen.log"
}

build_library() {
  step "building libcuabi and the stand-in driver in $build"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCUABI_EXTRA_SOURCES="$src/capi/abi/scratch.cpp" -DCUABI_BUILD_EXAMPLES=OFF \
    -DCUABI_BINDING_TESTS=OFF -DCUABI_WERROR=ON >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; fail "configure"; }
  cmake --build "$build" -j "$jobs" --target cuabi cuabi_fault_fake_cuda >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log" >&2; fail "build"; }
  LIB="$build/libcuabi.so"
  FAKE="$build/tests/fault/libcuabi_fault_fake_cuda.so"
  [ -f "$LIB" ] || fail "no $LIB"
  [ -f "$FAKE" ] || fail "no $FAKE"
  local exports
  exports="$(nm -D --defined-only "$LIB")"
  grep -q " $SCRATCH_FN\$" <<<"$exports" || fail "libcuabi does not export $SCRATCH_FN"
  export CUABI_LIBRARY="$LIB" CUABI_DRIVER_PATH="$FAKE" CUABI_NVRTC_PATH="$FAKE" CUABI_CACHE=0
}

# --- python ---
# The generated object layer (bindings/python/cuabi/_objects.py) gives
# DeviceBase, and so cuabi.Device, the read-only property `scratch_value`.
check_python() {
  local backend
  for backend in ctypes cffi; do
    step "python ($backend)"
    (cd "$src" && PYTHONPATH="$src/bindings/python" CUABI_BACKEND="$backend" "$py" - "$SCRATCH_EXPECTED" <<'EOF'
import sys
import cuabi
from cuabi import _objects

expected = int(sys.argv[1])
with cuabi.Device(0) as device:
    value = device.scratch_value
    assert value == expected, f"Device(0).scratch_value is {value!r}, expected {expected}"
    assert type(device).scratch_value is _objects.DeviceBase.scratch_value, "not the generated property"
    print(f"python {device.backend.name}: Device(0).scratch_value == {value}")
EOF
    ) || fail "python ($backend) cannot call $SCRATCH_FN"
  done
}

# --- rust ---
# The Rust part: call the scratch function through the crate's generated
# layer (bindings/rust/cuabi) in $src against $CUABI_LIBRARY and the stand-in
# driver, and fail unless it answers $SCRATCH_EXPECTED.
# A crate of its own in the work folder depends on the copy's crate by path,
# so no file of the binding is touched; its target folder is
# $CUABI_SCRATCH_CARGO_TARGET_DIR when set (to reuse a build), else the work
# folder's. Skipped where cargo is not installed.
check_rust() {
  export PATH="$HOME/.cargo/bin:$PATH"
  if ! command -v cargo >/dev/null 2>&1; then
    step "rust: SKIPPED (no cargo)"
    return
  fi
  step "rust"
  grep -q "pub fn scratch_value(&self) -> Result<i32>" "$src/bindings/rust/cuabi/src/objects.rs" ||
    fail "scripts/regen wrote no Device::scratch_value into bindings/rust/cuabi/src/objects.rs"
  local crate="$work/rust"
  mkdir -p "$crate/src"
  cat >"$crate/Cargo.toml" <<EOF
[package]
name = "cuabi-scratch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
cuabi = { path = "$src/bindings/rust/cuabi" }

[workspace]
EOF
  cat >"$crate/src/main.rs" <<'EOF'
//! Device::scratch_value(): the method objects.rs generates for the scratch getter.
fn main() -> cuabi::Result<()> {
    let expected: i32 = std::env::args().nth(1).expect("the expected value").parse().unwrap();
    let device = cuabi::Device::get(0)?;
    let value: i32 = device.scratch_value()?;
    assert_eq!(value, expected, "Device::get(0)?.scratch_value()");
    println!("rust: Device::get(0)?.scratch_value() == {value}");
    Ok(())
}
EOF
  (cd "$crate" && CUABI_LIB_DIR="$build" LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    CARGO_TARGET_DIR="${CUABI_SCRATCH_CARGO_TARGET_DIR:-$work/rust-target}" \
    cargo run --offline --quiet -- "$SCRATCH_EXPECTED") || fail "rust cannot call $SCRATCH_FN"
}

# --- csharp ---
# The C# part: call the scratch function through the generated partial
# classes (bindings/csharp) in $src, and fail unless it answers
# $SCRATCH_EXPECTED.
check_csharp() {
  step "csharp"
  local out="$work/csharp"
  grep -q "NativeMethods.$SCRATCH_FN(" "$src/bindings/csharp/src/Objects.g.cs" ||
    fail "scripts/regen wrote no C# form of $SCRATCH_FN into Objects.g.cs"
  CUABI_CSHARP_OUT="$out" "$src/bindings/csharp/build.sh" --library >"$work/csharp-build.log" 2>&1 ||
    { tail -30 "$work/csharp-build.log" >&2; fail "the C# binding does not build"; }
  cat >"$work/Scratch.cs" <<'EOF'
// Device.ScratchValue: the read-only property Objects.g.cs generates for the
// scratch getter.
using System;
using System.Reflection;
using Cuabi;

static class Scratch
{
    static int Main(string[] args)
    {
        int expected = int.Parse(args[0]);
        PropertyInfo property = typeof(Device).GetProperty("ScratchValue");
        if (property == null || property.PropertyType != typeof(int) || property.CanWrite)
        {
            Console.Error.WriteLine("Device has no read-only int property ScratchValue");
            return 1;
        }
        using (Device device = Device.Get(0))
        {
            int value = device.ScratchValue;
            if (value != expected)
            {
                Console.Error.WriteLine("Device.Get(0).ScratchValue is " + value + ", expected " + expected);
                return 1;
            }
            Console.WriteLine("csharp: Device.Get(0).ScratchValue == " + value);
        }
        return 0;
    }
}
EOF
  "${MCS:-mcs}" -nologo -warnaserror+ -sdk:4.7.2 -r:"$out/Cuabi.dll" -out:"$out/Scratch.exe" \
    "$work/Scratch.cs" || fail "the C# program reading Device.ScratchValue does not compile"
  mono "$out/Scratch.exe" "$SCRATCH_EXPECTED" || fail "C# cannot call $SCRATCH_FN"
}

# --- cpp ---
# The C++ part: compile a small program against $src/include (cuabi.hpp and
# the generated cuabi_objects.hpp), link $CUABI_LIBRARY, and fail unless the
# scratch function answers $SCRATCH_EXPECTED.
check_cpp() {
  step "cpp"
  grep -q "$SCRATCH_FN(" "$src/include/cuabi/cuabi_objects.hpp" ||
    fail "scripts/regen wrote no C++ form of $SCRATCH_FN into cuabi_objects.hpp"
  cat >"$work/scratch.cpp" <<'EOF'
// device.scratch_value(): the accessor cuabi_objects.hpp generates for the
// scratch getter, called through cuabi.hpp.
#include <cstdio>
#include <cstdlib>
#include <cuabi/cuabi.hpp>
#include <type_traits>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const long expected = std::strtol(argv[1], nullptr, 10);
  try {
    const cuabi::device device = cuabi::device::get(0);
    static_assert(std::is_same<decltype(device.scratch_value()), int32_t>::value,
                  "the accessor answers the out-parameter's type");
    const int32_t value = device.scratch_value();
    if (value != expected) {
      std::fprintf(stderr, "device.scratch_value() is %d, expected %ld\n", value, expected);
      return 1;
    }
    std::printf("cpp: cuabi::device::get(0).scratch_value() == %d\n", value);
    return 0;
  } catch (const cuabi::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
EOF
  c++ -std=c++17 -Wall -Wextra -pedantic -Werror -I"$src/include" "$work/scratch.cpp" \
    -o "$work/scratch_cpp" "$CUABI_LIBRARY" -Wl,-rpath,"$(dirname "$CUABI_LIBRARY")" ||
    fail "the C++ program calling device.scratch_value() does not compile"
  "$work/scratch_cpp" "$SCRATCH_EXPECTED" || fail "C++ cannot call $SCRATCH_FN"
}

# The files of the copy and their digests (before and after the scratch
# function): only the header and the scratch core file may be written by
# hand; every other file that changed must be one scripts/regen wrote.
manifest() {
  (cd "$src" && "$py" -c '
import hashlib, json, os, sys
out = {}
for dirpath, dirs, files in os.walk("."):
    for name in files:
        rel = os.path.normpath(os.path.join(dirpath, name))
        out[rel] = hashlib.sha256(open(rel, "rb").read()).hexdigest()
json.dump(out, open(sys.argv[1], "w"))
' "$1")
}

# --- run ---
copy_tree
manifest "$work/before.json"
add_function
regen
manifest "$work/after.json"
(cd "$src" && "$py" - "$work/before.json" "$work/after.json" "$work/regen.log" <<'EOF'
import json, sys
before, after = (json.load(open(p)) for p in sys.argv[1:3])
wrote = {line.split(None, 1)[1].strip() for line in open(sys.argv[3]) if line.startswith("wrote ")}
changed = [rel for rel, digest in after.items() if before.get(rel) != digest]
allowed = {"include/cuabi/cuabi.h", "capi/abi/scratch.cpp"}
bad = [rel for rel in changed if rel not in allowed and rel not in wrote]
if bad:
    sys.exit("scratch: files changed that scripts/regen did not write: " + ", ".join(sorted(bad)))
if not any(rel.startswith("bindings/python/") for rel in wrote):
    sys.exit("scratch: scripts/regen wrote nothing for Python")
print("scratch: written by hand: " + ", ".join(sorted(allowed)) + "; regenerated: "
      + ", ".join(sorted(rel for rel in changed if rel not in allowed)))
EOF
) || fail "a file other than the header and the scratch core changed"
build_library
check_python
check_rust
check_csharp
check_cpp
echo "scratch: $SCRATCH_FN reached every checked language"
