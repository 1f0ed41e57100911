#!/usr/bin/env bash
# Builds, on a machine with the toolchains, the benchmark executables that a
# GPU machine without them runs:
#
#   bench/prepare-carry.sh DIR [--lib-dir FOLDER-WITH-libcuabi.so] [--only rust|csharp]
#
# DIR/rust/cuabi-bench        the Rust benchmark (cargo --offline --release);
#                             finds libcuabi.so.0 through LD_LIBRARY_PATH
# DIR/csharp/cuabi-bench      the C# benchmark (bench/csharp/*.cs) with the Mono runtime bundled
#                             in (mkbundle --simple): needs only glibc and
#                             libcuabi.so (CUABI_LIBRARY)
# DIR/csharp/cuabi-bench.exe  the same program as an assembly, for `mono`
# DIR/MANIFEST.txt            what was built, from what, when
#
# The executables link against libcuabi's soname (libcuabi.so.0), not a
# path: the GPU machine's own build is used at run time. Each part is built
# independently; the exit status is 1 when a part whose toolchain is present
# failed to build, 0 otherwise (a missing toolchain is reported and skipped).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
dest=""
lib_dir="${CUABI_LIB_DIR:-}"
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --lib-dir) lib_dir="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "prepare-carry.sh: unknown option $1" >&2; exit 2 ;;
        *) dest="$1"; shift ;;
    esac
done
if [ -z "$dest" ]; then
    echo "usage: $0 DIR [--lib-dir FOLDER] [--only rust|csharp]" >&2
    exit 2
fi
mkdir -p "$dest" || exit 2
dest=$(cd "$dest" && pwd)
work="$here/.build"
mkdir -p "$work"
status=0
manifest="$dest/MANIFEST.txt"
{
    echo "cuabi benchmark executables, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
    echo "source: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet -- bench bindings include 2>/dev/null || echo ' (with local changes)')"
    echo "glibc: $(ldd --version 2>/dev/null | head -1)"
} > "$manifest"

# --- a libcuabi to link against ------------------------------------------------
if [ -z "$lib_dir" ]; then
    for d in "$repo/build" "$repo"/build-*; do
        if [ -e "$d/libcuabi.so" ]; then lib_dir="$d"; break; fi
    done
fi
if [ -z "$lib_dir" ] || [ ! -e "$lib_dir/libcuabi.so" ]; then
    lib_dir="$work/core"
    echo "== building libcuabi into $lib_dir (to link against)"
    gen=""
    command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
    # shellcheck disable=SC2086
    if ! { cmake -S "$repo" -B "$lib_dir" $gen -DCMAKE_BUILD_TYPE=Release -DCUABI_BUILD_TESTS=OFF \
            -DCUABI_BUILD_EXAMPLES=OFF -DCUABI_BINDING_TESTS=OFF >"$work/core-build.log" 2>&1 &&
           cmake --build "$lib_dir" >>"$work/core-build.log" 2>&1; }; then
        echo "prepare-carry.sh: could not build libcuabi (see $work/core-build.log)" >&2
        tail -20 "$work/core-build.log" >&2
        exit 1
    fi
fi
lib_dir=$(cd "$lib_dir" && pwd)
echo "linking against $lib_dir/libcuabi.so" | tee -a "$manifest"

# --- Rust ------------------------------------------------------------------------
build_rust() {
    if ! command -v cargo >/dev/null 2>&1; then
        echo "rust: SKIPPED (no cargo here)" | tee -a "$manifest"
        return 0
    fi
    echo "== rust: cargo build --offline --release"
    mkdir -p "$dest/rust"
    if CUABI_LIB_DIR="$lib_dir" cargo build --offline --release --quiet \
            --manifest-path "$here/rust/Cargo.toml" --target-dir "$work/rust-target"; then
        cp "$work/rust-target/release/cuabi-bench" "$dest/rust/cuabi-bench"
        echo "rust: $dest/rust/cuabi-bench ($(rustc --version))" | tee -a "$manifest"
    else
        echo "rust: FAILED to build" | tee -a "$manifest"
        return 1
    fi
}

# --- C# --------------------------------------------------------------------------
build_csharp() {
    if ! command -v mcs >/dev/null 2>&1; then
        echo "csharp: SKIPPED (no mcs here; apt-get install mono-devel)" | tee -a "$manifest"
        return 0
    fi
    echo "== csharp: mcs + mkbundle --simple"
    mkdir -p "$dest/csharp"
    local exe="$dest/csharp/cuabi-bench.exe"
    # The binding's sources compiled into the benchmark's own assembly.
    # shellcheck disable=SC2046
    if ! mcs -nologo -unsafe -warn:4 -debug- -optimize+ -sdk:4.7.2 -target:exe -out:"$exe" \
            -r:System.dll -r:System.Core.dll \
            $(find "$repo/bindings/csharp/src" -name '*.cs' | sort) "$here"/csharp/*.cs; then
        echo "csharp: FAILED to compile" | tee -a "$manifest"
        return 1
    fi
    if ! command -v mkbundle >/dev/null 2>&1; then
        echo "csharp: $exe only (no mkbundle here: the GPU machine would need mono)" |
            tee -a "$manifest"
        return 0
    fi
    local mono_bin prefix framework etc native tmp
    mono_bin=$(readlink -f "$(command -v mono)")
    prefix=$(dirname "$(dirname "$mono_bin")")
    framework="$prefix/lib/mono/4.5"
    if [ "$prefix" = /usr ]; then etc=/etc/mono; else etc="$prefix/etc/mono"; fi
    native="$prefix/lib/libmono-native.so"
    for f in "$framework/mscorlib.dll" "$framework/System.dll" "$framework/System.Core.dll" \
             "$etc/config" "$etc/4.5/machine.config" "$native"; do
        if [ ! -e "$f" ]; then
            echo "csharp: FAILED: $f not found (is mono-devel installed?)" | tee -a "$manifest"
            return 1
        fi
    done
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-bench-bundle.XXXXXX")
    # Mono's dllmap with its native helpers found in the bundle (a literal
    # $mono_libdir/ removed).
    # shellcheck disable=SC2016
    sed 's#\$mono_libdir/##g' "$etc/config" > "$tmp/config"
    if mkbundle --simple --nodeps --i18n none \
            --machine-config "$etc/4.5/machine.config" --config "$tmp/config" \
            --library "libmono-native.so,$native" \
            -o "$dest/csharp/cuabi-bench" "$exe" \
            "$framework/mscorlib.dll" "$framework/System.dll" "$framework/System.Core.dll" \
            >"$tmp/mkbundle.log" 2>&1; then
        echo "csharp: $dest/csharp/cuabi-bench ($(mono --version | head -1))" | tee -a "$manifest"
        rm -rf "$tmp"
    else
        cat "$tmp/mkbundle.log" >&2
        rm -rf "$tmp"
        echo "csharp: FAILED to bundle" | tee -a "$manifest"
        return 1
    fi
}

if [ -z "$only" ] || [ "$only" = rust ]; then build_rust || status=1; fi
if [ -z "$only" ] || [ "$only" = csharp ]; then build_csharp || status=1; fi
du -sh "$dest" 2>/dev/null | sed 's/^/carry size: /'
exit $status
