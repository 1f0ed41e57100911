#!/usr/bin/env bash
# Regenerates cuabi-sys/src/bindings.rs from include/cuabi/cuabi.h.
#
#   regen-sys.sh            rewrite the committed file
#   regen-sys.sh --stdout   print fresh bindings without touching the file
#
# The flags below are the only source of the generated file. scripts/regen
# (scripts/regen_api/rust.py) calls this script with --stdout, so
# `scripts/regen --check` sees every change here. The file is generated with
# bindgen 0.60.1 (Debian's `bindgen` package) and formatted with rustfmt;
# `$BINDGEN` selects another bindgen executable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
header="$repo/include/cuabi/cuabi.h"
out="$here/cuabi-sys/src/bindings.rs"
bindgen="${BINDGEN:-bindgen}"

if ! command -v "$bindgen" >/dev/null 2>&1; then
  echo "regen-sys.sh: '$bindgen' not found (apt-get install bindgen, or set BINDGEN)" >&2
  exit 127
fi

generate() {
  "$bindgen" "$header" \
    --no-rustfmt-bindings \
    --size_t-is-usize \
    --translate-enum-integer-types \
    --no-prepend-enum-name \
    --allowlist-function 'cuabi_.*' \
    --allowlist-type 'cuabi_.*' \
    --allowlist-var 'CUABI_.*' \
    --blocklist-type '__.*' \
    -- -x c -std=c11
}

# rustfmt is required: `scripts/regen --check` compares the text exactly.
format() {
  if ! command -v rustfmt >/dev/null 2>&1; then
    echo "regen-sys.sh: rustfmt not found (rustup component add rustfmt)" >&2
    return 127
  fi
  rustfmt --edition 2021 --emit stdout --quiet
}

case "${1:-}" in
  --stdout)
    generate | format
    ;;
  "")
    tmp="$(mktemp)"
    trap 'rm -f "$tmp"' EXIT
    generate | format >"$tmp"
    mv "$tmp" "$out"
    trap - EXIT
    echo "wrote $out"
    ;;
  *)
    echo "usage: $0 [--stdout]" >&2
    exit 2
    ;;
esac
