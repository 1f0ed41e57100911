#!/bin/sh
# Makes self-contained executables of the C# tests and the SAXPY example for
# a machine without Mono:
#   bindings/csharp/bundle-gpu.sh OUTDIR
# OUTDIR then holds cuabi-tests, saxpy and run.sh. Each executable carries
# the Mono runtime, the assemblies it uses, Mono's configuration and
# libmono-native.so; it needs only the C library (glibc 2.36 or newer, as on
# the machine that built it) and libcuabi.so. On the target:
#   OUTDIR/run.sh DIR          DIR holds libcuabi.so (e.g. build; the NVTX
#                              test needs the tool a CMake build puts in
#                              DIR/tests/nvtx/)
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
dest=$(cd "$1" && pwd)

"$here/build.sh"
out="$here/out"

# Where this Mono keeps its framework, configuration and native helpers.
mono_bin=$(readlink -f "$(command -v mono)")
prefix=$(dirname "$(dirname "$mono_bin")")
framework="$prefix/lib/mono/4.5"
if [ "$prefix" = /usr ]; then etc=/etc/mono; else etc="$prefix/etc/mono"; fi
native="$prefix/lib/libmono-native.so"
for f in "$framework/mscorlib.dll" "$etc/config" "$etc/4.5/machine.config" "$native"; do
    if [ ! -e "$f" ]; then
        echo "bundle-gpu.sh: $f not found (is mono-devel installed?)" >&2
        exit 1
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# Mono's dllmap, with the native helpers found in the bundle instead of
# under $mono_libdir (which a bundle does not have).
# shellcheck disable=SC2016 # a literal $mono_libdir, not a shell variable
sed 's#\$mono_libdir/##g' "$etc/config" > "$work/config"

bundle() {
    target=$1
    shift
    mkbundle --simple --nodeps --i18n none \
        --machine-config "$etc/4.5/machine.config" --config "$work/config" \
        --library "libmono-native.so,$native" \
        -o "$target" "$@" > "$work/mkbundle.log" 2>&1 || {
        cat "$work/mkbundle.log" >&2
        exit 1
    }
}

bundle "$dest/cuabi-tests" "$out/Cuabi.Tests.exe" "$out/Cuabi.dll" \
    "$framework/mscorlib.dll" "$framework/System.dll" "$framework/System.Core.dll"
bundle "$dest/saxpy" "$out/Saxpy.exe" "$out/Cuabi.dll" "$framework/mscorlib.dll"
bundle "$dest/multi-gpu" "$out/MultiGpu.exe" "$out/Cuabi.dll" \
    "$framework/mscorlib.dll" "$framework/System.dll"

cat > "$dest/run.sh" <<'EOF'
#!/bin/sh
# Runs the bundled C# tests and the SAXPY example against DIR/libcuabi.so:
#   run.sh DIR
# Exit status: non-zero when any test fails or the example does not pass.
# GPU tests must run here: a missing device fails them unless
# CUABI_TEST_REQUIRE_GPU=0 is set. A GPU test the machine refuses what it
# needs (device core dumps without the driver's libcudadebugger.so.1) is
# reported as skipped, with the refusal.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
    echo "usage: $0 DIR-HOLDING-libcuabi.so" >&2
    exit 2
fi
libdir=$(cd "$1" && pwd) || exit 2
lib="$libdir/libcuabi.so"
[ -e "$lib" ] || lib="$libdir/libcuabi.so.0"
if [ ! -e "$lib" ]; then
    echo "run.sh: no libcuabi.so in $libdir" >&2
    exit 2
fi
export CUABI_LIBRARY="$lib"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUABI_TEST_REQUIRE_GPU="${CUABI_TEST_REQUIRE_GPU:-1}"
# The NVTX test needs the test NVTX tool, which a CMake build of DIR makes
# (tests/nvtx/libcuabi_record_nvtx.so); without it that test fails, saying so.
tool="$libdir/tests/nvtx/libcuabi_record_nvtx.so"
if [ -z "${CUABI_TEST_NVTX_TOOL:-}" ] && [ -e "$tool" ]; then
    export CUABI_TEST_NVTX_TOOL="$tool"
fi
# The DLPack producer library of the same build, which the DLPack tests take
# tensors from (DIR/tests/dlpack_producer/).
producer="$libdir/tests/dlpack_producer/libcuabi_test_dlpack_producer.so"
if [ -z "${CUABI_TEST_DLPACK_PRODUCER:-}" ] && [ -e "$producer" ]; then
    export CUABI_TEST_DLPACK_PRODUCER="$producer"
fi
cache=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-cs-cache.XXXXXX")
trap 'rm -rf "$cache"' EXIT INT TERM
export CUABI_CACHE_DIR="${CUABI_CACHE_DIR:-$cache}"

status=0
echo "== C# tests"
"$here/cuabi-tests" || status=1
echo "== C# SAXPY example"
"$here/saxpy" || status=1
exit $status
EOF
chmod +x "$dest/run.sh"

# The multi-GPU example (scripts/gpu-pass multi): across every device, then
# with --one-gpu (two logical devices on GPU 0). On one GPU the first run
# says it needs two devices and exits 0.
cat > "$dest/run-multi-gpu.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled C# multi-GPU example against a libcuabi built here.
#   run-multi-gpu.sh DIR-HOLDING-libcuabi.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
    echo "usage: $0 DIR-HOLDING-libcuabi.so" >&2
    exit 2
fi
libdir=$(cd "$1" && pwd) || exit 2
lib="$libdir/libcuabi.so"
[ -e "$lib" ] || lib="$libdir/libcuabi.so.0"
if [ ! -e "$lib" ]; then
    echo "run-multi-gpu.sh: no libcuabi.so in $libdir" >&2
    exit 2
fi
export CUABI_LIBRARY="$lib"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
echo "== C# multi-GPU example"
"$here/multi-gpu" || status=1
echo "== C# multi-GPU example, --one-gpu"
"$here/multi-gpu" --one-gpu || status=1
exit $status
RUN
chmod +x "$dest/run-multi-gpu.sh"

echo "bundled into $dest:"
ls -l "$dest"
du -ch "$dest/cuabi-tests" "$dest/saxpy" | tail -1
echo "shared libraries needed by the executables:"
ldd "$dest/cuabi-tests" | sed 's/ (0x[0-9a-f]*)//'
