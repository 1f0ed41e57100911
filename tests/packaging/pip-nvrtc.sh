#!/usr/bin/env bash
# NVRTC from pip alone: a fresh virtual environment with the cuabi package
# and pip's NVRTC wheel (nvidia-cuda-nvrtc, CUDA 13), no CUDA_HOME, no
# CUDA_PATH, no LD_LIBRARY_PATH, compiles SAXPY to PTX with the wheel's
# libnvrtc: the core finds it beside itself in site-packages/nvidia/. Where
# a GPU exists, the same environment runs SAXPY and checks the result.
#   tests/packaging/pip-nvrtc.sh path/to/libcuabi.so
# The NVIDIA wheel comes from $CUABI_TEST_WHEELS (scripts/deps.sh fetches it
# there); without it the test says so and exits 77 (skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(realpath "$1")
py=${PYTHON:-python3}
wheels=${CUABI_TEST_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/cuabi-test-wheels}
nvrtc=$(ls "$wheels"/nvidia_cuda_nvrtc-13*.whl 2>/dev/null | sort -V | tail -n1 || true)
if [ -z "$nvrtc" ]; then
  echo "SKIPPED: no nvidia-cuda-nvrtc 13 wheel in $wheels (scripts/deps.sh fetches it with pip; it needs the network)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-pip-nvrtc.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset CUABI_LIBRARY CUABI_BACKEND PYTHONPATH CUABI_NVRTC_PATH CUABI_NVJITLINK_PATH
export PIP_NO_INDEX=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 CUABI_CACHE_DIR="$work/cache"

echo "== a virtual environment: the package (this build's libcuabi) and $(basename "$nvrtc")"
"$py" -m venv --system-site-packages "$work/venv"
vpy="$work/venv/bin/python"
"$vpy" -m pip install -q --no-deps "$nvrtc"
# A wheel built from the source tree with this build's library bundled (no
# compile), by the interpreter running this script: the build backend
# (scikit-build-core) may sit in its user site, which a virtual environment
# does not see.
cp -rL "$root/bindings/python" "$work/src"
CUABI_LIBRARY="$lib" "$py" -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" "$work/src"
"$vpy" -m pip install -q --no-deps "$work"/dist/cuabi-*.whl
site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
[ -f "$site/nvidia/cu13/lib/libnvrtc.so.13" ] || fail "the wheel put no libnvrtc.so.13 in $site/nvidia/cu13/lib"

echo "== no toolkit named anywhere: SAXPY to PTX with the wheel's NVRTC"
cd "$work"
out=$(env -u CUDA_HOME -u CUDA_PATH -u LD_LIBRARY_PATH "$vpy" - <<'PY'
import cuabi
print("LIB", cuabi.find_library())
src = r'''
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}'''
p = cuabi.Program(src).compile(["-arch=compute_90"])
print("PTX", ".entry saxpy" in p.ptx)
print("NVRTC", cuabi.nvrtc_path())
print("VERSION", cuabi.nvrtc_version())
# Where a GPU exists, the same environment runs SAXPY and checks it.
try:
    count = cuabi.device_count()
except cuabi.CudaError as e:
    print("GPU none:", type(e).__name__)
    count = 0
if count > 0:
    # No NumPy: a pip-only environment may have none (the package does not
    # need it); array('f') is the host memory, Python floats the scalars.
    from array import array
    dev = cuabi.Device(0)
    n = 1 << 20
    x = array("f", range(n))
    y = array("f", [2.0]) * n
    dx, dy, dout = dev.alloc(n * 4), dev.alloc(n * 4), dev.alloc(n * 4)
    dx.copy_from_host(x)
    dy.copy_from_host(y)
    k = dev.compile(src).get_kernel("saxpy")
    k((n + 255) // 256, 256, (3.0, dx, dy, dout, n))
    got = array("f", bytes(n * 4))
    dout.copy_to_host(got)
    want = array("f", [3.0 * a + b for a, b in zip(x, y)])
    print("GPU SAXPY", got == want)
PY
)
echo "$out"
grep -qx "LIB $site/cuabi/libcuabi.so" <<<"$out" || fail "the library loaded is not the package's"
grep -qx "PTX True" <<<"$out" || fail "NVRTC did not compile SAXPY to PTX"
grep -q "^NVRTC $site/nvidia/cu13/lib/libnvrtc.so.13" <<<"$out" ||
  fail "the NVRTC loaded is not the wheel's ($site/nvidia/cu13/lib)"
if grep -q "^GPU SAXPY" <<<"$out"; then
  grep -qx "GPU SAXPY True" <<<"$out" || fail "SAXPY on the GPU gave wrong results"
  echo "pip-nvrtc: SAXPY compiled by pip's NVRTC, found beside the package, and verified on the GPU"
else
  echo "pip-nvrtc: SAXPY compiled to PTX by pip's NVRTC, found beside the package (no GPU to run it)"
fi
