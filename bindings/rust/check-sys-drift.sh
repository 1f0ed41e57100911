#!/usr/bin/env bash
# Fails when cuabi-sys/src/bindings.rs differs from a fresh bindgen run over
# include/cuabi/cuabi.h (see regen-sys.sh for the flags). Whitespace is ignored,
# so the rustfmt version does not matter; everything else does, including the
# bindgen version named on the file's first line. A missing bindgen is a
# failure here (cuabi-sys/tests/drift.rs is the lenient form for `cargo test`).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
committed="$here/cuabi-sys/src/bindings.rs"
bindgen="${BINDGEN:-bindgen}"

if ! command -v "$bindgen" >/dev/null 2>&1; then
  echo "check-sys-drift: FAILED: '$bindgen' not found; install bindgen 0.60.1 (apt-get install bindgen)" >&2
  exit 1
fi

fresh="$(mktemp)"
trap 'rm -f "$fresh"' EXIT
if ! "$here/regen-sys.sh" --stdout >"$fresh"; then
  echo "check-sys-drift: FAILED: bindgen did not run" >&2
  exit 1
fi

if [ "$(tr -d ' \t\r\n' <"$committed")" = "$(tr -d ' \t\r\n' <"$fresh")" ]; then
  echo "check-sys-drift: ok: $committed matches $("$bindgen" --version)"
  exit 0
fi

echo "check-sys-drift: FAILED: $committed differs from a fresh run of $("$bindgen" --version)" >&2
diff -u "$committed" "$fresh" >&2 || true
echo "check-sys-drift: run bindings/rust/regen-sys.sh and commit the result" >&2
exit 1
