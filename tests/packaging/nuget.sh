#!/usr/bin/env bash
# The NuGet package as a consumer gets it, without a GPU:
#   tests/packaging/nuget.sh path/to/libcuabi.so [--bundle OUTDIR]
#
# 1. bindings/csharp/pack.sh makes Cuabi.<version>.nupkg (the header's
#    version) holding lib/net472/Cuabi.dll (one assembly for Mono and .NET)
#    and runtimes/linux-x64/native/libcuabi.so (this libcuabi);
# 2. `nuget install` puts it into a fresh consumer folder from a local
#    folder feed; tests/packaging/nuget/Consumer.cs is built with mcs against
#    the installed Cuabi.dll. No file is copied: Mono loads Cuabi.dll where
#    the package holds it (MONO_PATH, its assembly search path, names the
#    package's lib/net472/), and the binding finds libcuabi.so in the
#    package's runtimes/linux-x64/native/;
# 3. the consumer runs with neither CUABI_LIBRARY nor LD_LIBRARY_PATH: it
#    must have loaded runtimes/linux-x64/native/libcuabi.so of the installed
#    package (the path it prints, CuabiLibrary.LoadedFrom, is checked), then
#    compiles SAXPY with NVRTC, reports the missing driver (CUABI_DRIVER_PATH
#    names a file that does not exist, so this holds on a GPU machine too)
#    and exits 2, or 1 with --require-gpu;
# 4. with the package's libcuabi.so taken away, the consumer fails (exit 1)
#    with the binding's DllNotFoundException listing that path as tried.
#
# --bundle OUTDIR then makes, for a GPU machine without Mono, OUTDIR/consumer
# (mkbundle --simple: the consumer, the package's Cuabi.dll and the Mono
# runtime), OUTDIR/libcuabi.so (the package's) and OUTDIR/run.sh, which runs
# SAXPY through them and fails unless it ran on a device with the package's
# library.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(realpath "$1")
bundle_dir=
if [ "${2:-}" = --bundle ]; then
  mkdir -p "$3"
  bundle_dir=$(cd "$3" && pwd)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-pkg-nuget.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' \
  "$root/include/cuabi/cuabi.h")
unset CUABI_LIBRARY LD_LIBRARY_PATH
# NuGet's per-user configuration and caches stay in here.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share"
mkdir -p "$HOME"

echo "== bindings/csharp/pack.sh"
bash "$root/bindings/csharp/pack.sh" "$work/feed" "$lib"
nupkg="$work/feed/Cuabi.$want.nupkg"
[ -f "$nupkg" ] || fail "no Cuabi.$want.nupkg"
python3 - "$nupkg" "$want" <<'PY'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = set(z.namelist())
    for need in ("lib/net472/Cuabi.dll", "lib/net472/Cuabi.xml",
                 "runtimes/linux-x64/native/libcuabi.so", "Cuabi.nuspec", "LICENSE", "README.md"):
        assert need in names, f"the package lacks {need}: {sorted(names)}"
    spec = z.read("Cuabi.nuspec").decode("utf-8")
    assert re.search(r"<version>%s</version>" % re.escape(sys.argv[2]), spec), spec
    assert re.search(r"<id>Cuabi</id>", spec), spec
    # The metadata nuget 2.8 can hold: the license (LICENSE is MIT), a description.
    assert "<licenseUrl>https://opensource.org/licenses/MIT</licenseUrl>" in spec, spec
    assert "MIT License" in z.read("LICENSE").decode("utf-8"), "LICENSE is not the MIT license"
    assert re.search(r"<description>[^<]*Mono and \.NET[^<]*</description>", spec), spec
print("package holds", ", ".join(sorted(n for n in names if "/" in n and not n.startswith(("_rels", "package/")))))
PY

echo "== nuget install from a local feed, into a fresh consumer"
app="$work/app"
mkdir -p "$app/bin"
(cd "$app" && nuget install Cuabi -Version "$want" -Source "$work/feed" -OutputDirectory packages \
  -NonInteractive)
pkg="$app/packages/Cuabi.$want"
[ -f "$pkg/lib/net472/Cuabi.dll" ] && [ -f "$pkg/runtimes/linux-x64/native/libcuabi.so" ] ||
  fail "nuget install did not unpack the assembly and the native library"
cmp "$pkg/runtimes/linux-x64/native/libcuabi.so" "$lib" || fail "the package's libcuabi.so is not $lib"
mcs -nologo -warnaserror+ -sdk:4.7.2 -r:"$pkg/lib/net472/Cuabi.dll" -out:"$app/bin/Consumer.exe" \
  "$root/tests/packaging/nuget/Consumer.cs"
assembly="$pkg/lib/net472/Cuabi.dll"
pkg_native="$pkg/runtimes/linux-x64/native/libcuabi.so"
[ "$(cd "$app/bin" && ls)" = Consumer.exe ] || fail "the consumer's folder holds more than Consumer.exe: $(ls "$app/bin")"
consumer() { (cd "$work" && MONO_PATH="$pkg/lib/net472" mono "$app/bin/Consumer.exe" "$@"); }

echo "== the consumer, no driver"
missing="$work/no-driver/libcuda.so.1"
rc=0
out=$(CUABI_DRIVER_PATH="$missing" consumer 2>&1) || rc=$?
echo "$out"
[ $rc -eq 2 ] || fail "the consumer exited $rc without a driver, not 2"
grep -qx "cuabi $want" <<<"$out" || fail "not cuabi $want"
grep -qx "assembly $want.0 $assembly" <<<"$out" || fail "not the package's Cuabi.dll $want.0, loaded where the package holds it"
# The library must have been found in the package's runtimes/linux-x64/native/
# (not beside the consumer, not through the loader's search path).
loaded=$(sed -n 's/^library //p' <<<"$out")
[ "$loaded" = "$pkg_native" ] || fail "the binding loaded '$loaded', not the package's $pkg_native"
grep -qx "compiled saxpy.cu: PTX ok" <<<"$out" || fail "NVRTC did not compile"
grep -qx "no CUDA driver: CUABI_ERROR_DRIVER_NOT_FOUND" <<<"$out" || fail "no DRIVER_NOT_FOUND"
grep -qF "$missing" <<<"$out" || fail "the message does not name $missing"
rc=0
CUABI_DRIVER_PATH="$missing" consumer --require-gpu >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "--require-gpu without a driver exited $rc, not 1"

echo "== the consumer, the package's libcuabi.so taken away"
mv "$pkg_native" "$work/libcuabi.so.aside"
rc=0
out=$(CUABI_DRIVER_PATH="$missing" consumer 2>&1) || rc=$?
mv "$work/libcuabi.so.aside" "$pkg_native"
echo "$out"
if [ $rc -eq 2 ] && grep -q '^library ' <<<"$out"; then
  fail "without the package's libcuabi.so the consumer still loaded one: $(sed -n 's/^library //p' <<<"$out")"
fi
[ $rc -eq 1 ] || fail "without the package's libcuabi.so the consumer exited $rc, not 1"
grep -q "^consumer: DllNotFoundException: cuabi: could not load the cuabi library" <<<"$out" ||
  fail "no DllNotFoundException from the binding"
grep -qxF "  $pkg_native: no such file" <<<"$out" || fail "the message does not list $pkg_native as tried"

if [ -n "$bundle_dir" ]; then
  echo "== mkbundle --simple into $bundle_dir"
  mono_bin=$(readlink -f "$(command -v mono)")
  prefix=$(dirname "$(dirname "$mono_bin")")
  framework="$prefix/lib/mono/4.5"
  if [ "$prefix" = /usr ]; then etc=/etc/mono; else etc="$prefix/etc/mono"; fi
  mono_native="$prefix/lib/libmono-native.so"
  # Mono's dllmap, with its native helpers found in the bundle.
  sed 's#\$mono_libdir/##g' "$etc/config" >"$work/config"
  rm -f "$bundle_dir/consumer" "$bundle_dir"/libcuabi.so* "$bundle_dir/run.sh"
  mkbundle --simple --nodeps --i18n none \
    --machine-config "$etc/4.5/machine.config" --config "$work/config" \
    --library "libmono-native.so,$mono_native" \
    -o "$bundle_dir/consumer" "$app/bin/Consumer.exe" "$assembly" "$framework/mscorlib.dll" \
    >"$work/mkbundle.log" 2>&1 || { cat "$work/mkbundle.log" >&2; exit 1; }
  cp "$pkg_native" "$bundle_dir/libcuabi.so"
  cat >"$bundle_dir/run.sh" <<EOF
#!/bin/sh
# Runs the NuGet consumer (built against the installed Cuabi $want package)
# on this machine's GPU, with the package's own libcuabi.so. Exit status 0
# only when SAXPY ran on a device and checked out.
here=\$(cd "\$(dirname "\$0")" && pwd)
unset CUABI_LIBRARY
tmp=\$(mktemp -d "\${TMPDIR:-/tmp}/cuabi-nuget.XXXXXX")
trap 'rm -rf "\$tmp"' EXIT INT TERM
# The package's library under both names the binding asks the loader for,
# ahead of any other on the search path.
mkdir -p "\$tmp/lib" "\$tmp/cache"
ln -s "\$here/libcuabi.so" "\$tmp/lib/libcuabi.so.0"
ln -s "\$here/libcuabi.so" "\$tmp/lib/libcuabi.so"
export LD_LIBRARY_PATH="\$tmp/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
out=\$(cd "\$tmp" && CUABI_CACHE_DIR="\$tmp/cache" "\$here/consumer" --require-gpu 2>&1)
rc=\$?
echo "\$out"
[ \$rc -eq 0 ] || { echo "FAIL: the consumer exited \$rc"; exit 1; }
echo "\$out" | grep -qx "cuabi $want" || { echo "FAIL: not cuabi $want"; exit 1; }
loaded=\$(echo "\$out" | sed -n 's/^library //p')
[ "\$(readlink -f "\$loaded")" = "\$here/libcuabi.so" ] || { echo "FAIL: \$loaded was loaded, not the package's libcuabi.so"; exit 1; }
echo "\$out" | grep -q "^SAXPY ok: " || { echo "FAIL: SAXPY did not pass"; exit 1; }
echo "NuGet consumer: SAXPY passed with the package's libcuabi.so"
EOF
  chmod +x "$bundle_dir/run.sh"
  echo "== the bundle, no driver"
  rc=0
  out=$(cd "$work" && CUABI_DRIVER_PATH="$missing" LD_LIBRARY_PATH="$bundle_dir" "$bundle_dir/consumer" 2>&1) ||
    rc=$?
  echo "$out"
  [ $rc -eq 2 ] || fail "the bundled consumer exited $rc without a driver, not 2"
  grep -qx "library $bundle_dir/libcuabi.so" <<<"$out" || fail "the bundle did not load $bundle_dir/libcuabi.so"
  rc=0
  out=$(CUABI_DRIVER_PATH="$missing" "$bundle_dir/run.sh" 2>&1) || rc=$?
  echo "$out"
  [ $rc -eq 1 ] && grep -q "^FAIL: the consumer exited 1" <<<"$out" || fail "run.sh passed without a device"
  ls -l "$bundle_dir"
fi

echo
echo "nuget packaging: all checks passed"
