#!/bin/sh
# Makes the NuGet package of the C# binding with Debian's nuget (Mono;
# `apt-get install nuget`):
#   bindings/csharp/pack.sh OUTDIR [path/to/libcuabi.so]
# builds the binding with build.sh, lays the package out as Cuabi.nuspec
# lists it (lib/net472/Cuabi.dll, the one assembly for Mono and .NET, and
# its documentation; runtimes/linux-x64/native/libcuabi.so, where the
# assembly finds it: the library given, default build/libcuabi.so; LICENSE
# and README.md) and writes OUTDIR/Cuabi.<version>.nupkg, the version
# being the header's (scripts/regen stamps it into Cuabi.nuspec).
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 OUTDIR [path/to/libcuabi.so]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$1"
dest=$(cd "$1" && pwd)
lib=${2:-"$repo/build/libcuabi.so"}
if [ ! -e "$lib" ]; then
    echo "pack.sh: no library at $lib (build the core, or pass the path of libcuabi.so)" >&2
    exit 2
fi
if readelf -d "$lib" | grep -Eq 'NEEDED.*\[lib(cuda|nvrtc)'; then
    echo "pack.sh: $lib links libcuda or libnvrtc; cuabi must open them at run time" >&2
    exit 1
fi
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$here/Cuabi.nuspec")
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' \
    "$repo/include/cuabi/cuabi.h")
if [ "$version" != "$want" ]; then
    echo "pack.sh: Cuabi.nuspec says $version, the header $want: run scripts/regen" >&2
    exit 1
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-nuget.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM
mkdir -p "$stage/lib/net472" "$stage/runtimes/linux-x64/native"
CUABI_CSHARP_OUT="$stage/lib/net472" "$here/build.sh" --library
cp -L "$lib" "$stage/runtimes/linux-x64/native/libcuabi.so"
cp "$here/Cuabi.nuspec" "$stage/"
cp "$here/../../LICENSE" "$here/README.md" "$stage/"
rm -f "$dest/Cuabi.$version.nupkg"
nuget pack "$stage/Cuabi.nuspec" -BasePath "$stage" -OutputDirectory "$dest" \
    -NonInteractive -NoPackageAnalysis
test -f "$dest/Cuabi.$version.nupkg"
echo "pack.sh: wrote $dest/Cuabi.$version.nupkg"
