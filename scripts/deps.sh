#!/usr/bin/env bash
# Installs what building and testing cuabi needs and this machine lacks.
# Idempotent: it installs nothing that is already there. Sourced by the
# scripts beside it; `deps_build` for the library and examples, `deps_test`
# for every test suite.

_apt_updated=0
_apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ $_apt_updated -eq 0 ]; then
    $sudo apt-get update -qq
    _apt_updated=1
  fi
  echo "installing: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

_cuda_toolkit_present() {
  local root=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}
  [ -f "$root/include/cuda.h" ] && [ -f "$root/include/nvrtc.h" ]
}

deps_build() {
  local pkgs=()
  command -v cmake >/dev/null || pkgs+=(cmake)
  command -v ninja >/dev/null || pkgs+=(ninja-build)
  command -v g++ >/dev/null || pkgs+=(g++)
  command -v pkg-config >/dev/null || pkgs+=(pkg-config)
  [ ${#pkgs[@]} -eq 0 ] || _apt_install "${pkgs[@]}"
  if ! _cuda_toolkit_present; then
    # Debian's toolkit package brings cuda.h, nvrtc.h and libnvrtc.
    _apt_install nvidia-cuda-toolkit || true
  fi
}

_py_has() { python3 -c "import $1" >/dev/null 2>&1; }

deps_test() {
  deps_build
  _apt_install libgtest-dev valgrind
  command -v mcs >/dev/null && command -v mkbundle >/dev/null || _apt_install mono-mcs mono-devel
  command -v bindgen >/dev/null || _apt_install bindgen
  command -v clang++ >/dev/null || _apt_install clang
  # clang only recommends its libFuzzer and sanitizer runtimes.
  _apt_install libclang-rt-14-dev
  if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    _apt_install cargo
  fi
  # scripts/regen formats bindgen's output with rustfmt.
  if ! command -v rustfmt >/dev/null && [ ! -x "$HOME/.cargo/bin/rustfmt" ]; then
    _apt_install rustfmt
  fi
  local py=()
  _py_has numpy || py+=(numpy)
  _py_has pytest || py+=(pytest)
  _py_has cffi || py+=(cffi)
  _py_has hypothesis || py+=(hypothesis)
  _py_has pycparser || py+=(pycparser)
  _py_has mypy || py+=(mypy)
  if [ ${#py[@]} -gt 0 ]; then
    echo "installing (pip): ${py[*]}"
    python3 -m pip install -q "${py[@]}"
  fi
}
