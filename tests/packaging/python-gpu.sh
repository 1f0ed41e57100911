#!/usr/bin/env bash
# On a GPU machine: a Python package installed into a fresh virtual
# environment, offline, must find the device through its own libcuabi and
# run the SAXPY example.
#   tests/packaging/python-gpu.sh VENV PACKAGE [pip options...]
# PACKAGE is a wheel, an sdist or a source folder; pip options such as
# `--find-links DIR` give what building an sdist needs (scikit-build-core).
# The machine's numpy is seen through a .pth file, as nothing can be
# downloaded. With EXPECT_BACKEND=compiled, `python -m cuabi` must report
# the compiled backend (cuabi._cuabi_cffi) in use: the package's dependency,
# cffi, then comes from a `--find-links` folder. Run by scripts/gpu-pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$1
package=$(realpath "$2")
shift 2
unset CUABI_LIBRARY CUABI_BACKEND PYTHONPATH
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1

rm -rf "$venv"
python3 -m venv "$venv"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
numpy_site=$(python3 -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))')
echo "$numpy_site" >"$site/machine-numpy.pth"

echo "== pip install --no-index $* $(basename "$package")"
(cd /tmp && "$venv/bin/python" -m pip install -q --no-index "$@" "$package")

echo "== python -m cuabi"
(cd /tmp && EXPECT_LIBRARY_UNDER="$venv" bash "$root/tests/packaging/check-info.sh" "$venv/bin/python" -m cuabi)

if [ -n "${EXPECT_BACKEND:-}" ]; then
  echo "== the default backend is $EXPECT_BACKEND"
  report=$(cd /tmp && "$venv/bin/python" -m cuabi 2>&1 || true)
  grep -E '^  python: ' <<<"$report"
  grep -q "^  python: cuabi .* ($EXPECT_BACKEND backend) at " <<<"$report" ||
    { echo "FAIL: the installed package does not use the $EXPECT_BACKEND backend" >&2; exit 1; }
fi

echo "== examples/python/saxpy.py"
(cd /tmp && "$venv/bin/python" "$root/examples/python/saxpy.py")
