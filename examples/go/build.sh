#!/usr/bin/env bash
# Builds the Go SAXPY example into OUTDIR/saxpy-go:
#
#   examples/go/build.sh OUTDIR
#
# `go generate` writes the C declarations from cuabi.json ($CUABI_JSON, else
# include/cuabi/cuabi.json of this tree), then `go build` makes one executable
# that needs only the C library at run time (it opens libcuabi.so.0 with
# dlopen), stripped; gofmt and go vet must find nothing. The sources are copied to OUTDIR/src first, so the
# generated files stay out of the source tree; the Go caches (GOCACHE,
# GOPATH) are kept under OUTDIR too, and nothing is fetched: the module has no
# dependencies and the proxy is off.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if ! command -v go >/dev/null; then
  echo "build.sh: no Go toolchain (go) on PATH; on Debian: apt-get install golang-go" >&2
  exit 127
fi
mkdir -p "$1"
out="$(cd "$1" && pwd)"
json="${CUABI_JSON:-$repo/include/cuabi/cuabi.json}"
case "$json" in /*) ;; *) json="$PWD/$json" ;; esac

export GOPATH="$out/gopath" GOCACHE="$out/gocache" GOMODCACHE="$out/gopath/pkg/mod"
export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GO111MODULE=on GOWORK=off
export GOENV=off CGO_ENABLED=1 CUABI_JSON="$json"

src="$out/src"
rm -rf "$src"
mkdir -p "$src"
cp -R "$here/go.mod" "$here/saxpy.go" "$here/gen" "$src/"
cd "$src"
go generate .
# Formatting and vet findings are errors, as warnings are for the C code.
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "build.sh: not gofmt-formatted: $unformatted" >&2
  exit 1
fi
go vet ./...
go build -trimpath -ldflags="-s -w" -o "$out/saxpy-go.tmp" .
mv "$out/saxpy-go.tmp" "$out/saxpy-go"
echo "build.sh: $out/saxpy-go ($(du -h "$out/saxpy-go" | cut -f1); declarations from $json)"
