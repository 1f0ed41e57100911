#!/usr/bin/env bash
# Builds the C# binding with Mono's mcs into bindings/csharp/out/:
#   Cuabi.dll (+ Cuabi.xml, its API documentation), Cuabi.Tests.exe, Saxpy.exe.
#   build.sh --library builds Cuabi.dll (and Cuabi.xml) alone.
# $CUABI_CSHARP_OUT names another output folder.
# Warnings are errors (a public member without an XML doc comment included).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="${CUABI_CSHARP_OUT:-$here/out}"
mkdir -p "$out"

mcs=${MCS:-mcs}
flags=(-nologo -unsafe -warnaserror+ -warn:4 -debug- -optimize+ -sdk:4.7.2)
mapfile -t library < <(find "$here/src" -name '*.cs' | sort)
mapfile -t tests < <(find "$here/tests" -name '*.cs' | sort)

"$mcs" "${flags[@]}" -target:library -doc:"$out/Cuabi.xml" -out:"$out/Cuabi.dll" "${library[@]}"
if [ "${1:-}" = --library ]; then
  echo "built: $out/Cuabi.dll"
  exit 0
fi
"$mcs" "${flags[@]}" -target:exe -r:"$out/Cuabi.dll" -r:System.dll -r:System.Core.dll \
    -out:"$out/Cuabi.Tests.exe" "${tests[@]}"
"$mcs" "${flags[@]}" -target:exe -r:"$out/Cuabi.dll" -out:"$out/Saxpy.exe" "$repo/examples/csharp/Saxpy.cs"
"$mcs" "${flags[@]}" -target:exe -r:"$out/Cuabi.dll" -r:System.dll -out:"$out/MultiGpu.exe" \
    "$repo/examples/csharp/MultiGpu.cs"

echo "built: $out/Cuabi.dll $out/Cuabi.Tests.exe $out/Saxpy.exe $out/MultiGpu.exe"
