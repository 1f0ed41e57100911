#!/usr/bin/env bash
# The Rust crates as packaged for a registry, used outside this repository,
# offline and without a GPU:
#   tests/packaging/rust.sh LIB_DIR        (a folder holding a built libcuabi.so)
#
# 1. `cargo package --workspace --no-verify --allow-dirty --offline`: both
#    crates; cuabi-sys must carry the C library's sources (libcuabi/) as
#    files, not links;
# 2. a new crate in a temporary folder, with no build script of its own,
#    depends on the unpacked crates (the `cuabi` crate's dependency on
#    cuabi-sys patched to the unpacked one, as a registry would resolve it)
#    and builds without CUABI_LIB_DIR: the packaged cuabi-sys builds libcuabi
#    from its own sources with CMake and links it statically; the binary
#    needs no libcuabi.so, and copied to a fresh folder it runs, reports the
#    header's version and the missing driver;
# 3. the same crate with CUABI_LIB_DIR=LIB_DIR links that library instead
#    (found through LD_LIBRARY_PATH).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
libdir=$(cd "$1" && pwd)
export PATH="$HOME/.cargo/bin:$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-pkg-rust.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' \
  "$root/include/cuabi/cuabi.h")
unset CUABI_LIB_DIR CARGO_TARGET_DIR

echo "== cargo package --workspace"
(cd "$root/bindings/rust" &&
  cargo package --workspace --no-verify --allow-dirty --offline --target-dir "$work/target")
sys_crate="$work/target/package/cuabi-sys-$want.crate"
safe_crate="$work/target/package/cuabi-$want.crate"
[ -f "$sys_crate" ] && [ -f "$safe_crate" ] || fail "no cuabi-sys-$want.crate and cuabi-$want.crate"

echo "== cuabi-sys carries the C library's sources"
listing=$(tar -tvzf "$sys_crate")
for f in libcuabi/CMakeLists.txt libcuabi/include/cuabi/cuabi.h libcuabi/capi/core/cache.cpp \
  libcuabi/capi/abi/exports.map libcuabi/cmake/cuabi.pc.in build.rs src/bindings.rs; do
  grep -qE "^-.* cuabi-sys-$want/$f\$" <<<"$listing" || fail "cuabi-sys-$want.crate lacks the file $f"
done
! grep -q '^l' <<<"$listing" || fail "links in the crate: $(grep '^l' <<<"$listing")"
cmp <(tar -xzOf "$sys_crate" "cuabi-sys-$want/libcuabi/include/cuabi/cuabi.h") "$root/include/cuabi/cuabi.h" ||
  fail "the crate's cuabi.h is not the repository's"
echo "$(grep -c " cuabi-sys-$want/libcuabi/" <<<"$listing") files under libcuabi/"

mkdir -p "$work/crates" "$work/user/src"
tar -xzf "$sys_crate" -C "$work/crates"
tar -xzf "$safe_crate" -C "$work/crates"
cat >"$work/user/Cargo.toml" <<EOF
[package]
name = "cuabi-user"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
cuabi = { path = "../crates/cuabi-$want" }
cuabi-sys = { path = "../crates/cuabi-sys-$want" }

# The unpacked crate stands in for the registry's cuabi-sys.
[patch.crates-io]
cuabi-sys = { path = "../crates/cuabi-sys-$want" }

[workspace]
EOF
cat >"$work/user/src/main.rs" <<'EOF'
fn main() {
    println!("version {}", cuabi::version_string());
    let raw = unsafe { cuabi_sys::cuabi_version() };
    println!("raw {raw}");
    match cuabi::Device::count() {
        Ok(n) => println!("devices {n}"),
        Err(e) => {
            println!("error {}", e.name());
            println!("{}", e.message());
        }
    }
}
EOF

run_user() {  # run_user LABEL BINARY [ENV...]: runs the built crate; output in $work/LABEL.out
  local label=$1 bin=$2
  shift 2
  env -u LD_LIBRARY_PATH "$@" CUABI_DRIVER_PATH="$work/no-driver/libcuda.so.1" "$bin" | tee "$work/$label.out"
  grep -qx "version $want" "$work/$label.out" || fail "$label: not version $want"
  grep -qx "error CUABI_ERROR_DRIVER_NOT_FOUND" "$work/$label.out" || fail "$label: no DRIVER_NOT_FOUND"
  grep -qF "$work/no-driver/libcuda.so.1" "$work/$label.out" || fail "$label: the path tried is not named"
}
build_user() {  # build_user TARGET_DIR: cargo build of the crate
  (cd "$work/user" && cargo build --offline --quiet --target-dir "$1")
}

echo "== outside the repository, no CUABI_LIB_DIR: libcuabi built from the crate's sources, linked in"
build_user "$work/user-target-vendored"
bin="$work/user-target-vendored/debug/cuabi-user"
grep -q "CMAKE_HOME_DIRECTORY:INTERNAL=$work/crates/cuabi-sys-$want/libcuabi\$" \
  "$work"/user-target-vendored/debug/build/cuabi-sys-*/out/cuabi-cmake/CMakeCache.txt ||
  fail "CMake did not build the crate's own sources"
! ldd "$bin" | grep -q libcuabi || fail "the binary still needs a libcuabi.so: $(ldd "$bin" | grep libcuabi)"
mkdir -p "$work/elsewhere"
cp "$bin" "$work/elsewhere/"
rm -rf "$work/user-target-vendored"  # nothing of the build is left to find
run_user vendored "$work/elsewhere/cuabi-user"

echo "== outside the repository, CUABI_LIB_DIR=$libdir"
CUABI_LIB_DIR="$libdir" build_user "$work/user-target-prebuilt"
bin="$work/user-target-prebuilt/debug/cuabi-user"
# ldd's output is read whole before grep looks at it: `ldd | grep -q` under
# pipefail fails whenever grep's early exit cuts ldd off (SIGPIPE).
linked=$(ldd "$bin"; LD_LIBRARY_PATH="$libdir" ldd "$bin")
grep -q "libcuabi.so.0 => $(realpath "$libdir")/libcuabi.so.0" <<<"$linked" ||
  fail "CUABI_LIB_DIR's library is not the one linked: $(grep libcuabi <<<"$linked")"
run_user prebuilt "$bin" LD_LIBRARY_PATH="$libdir"

echo
echo "rust packaging: all checks passed"
