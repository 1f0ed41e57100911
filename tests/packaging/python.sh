#!/usr/bin/env bash
# The Python package as a user gets it, without a GPU and offline:
#   tests/packaging/python.sh path/to/libcuabi.so
#
# 1. scripts/package-python: the sdist, the wheel built from it, repaired
#    into a manylinux wheel; the sdist must carry the C library's sources as
#    files;
# 2. the wheel installed with --no-index into a fresh virtual environment:
#    the version is the header's, the library is the wheel's own copy, NVRTC
#    compiles, a missing driver raises DriverNotFoundError naming the path
#    tried, `python -m cuabi` and the `cuabi` command report it and exit 1,
#    $CUABI_LIBRARY still wins, a missing library is named, and `cuabi[cffi]`
#    asks for cffi; the wheel's RECORD is complete and correct; without cffi
#    the package runs on ctypes and says why the compiled module is unused;
# 2b. the wheel installed with its dependency (cffi) into a fresh virtual
#    environment uses the compiled path (cuabi._cuabi_cffi) and
#    `python -m cuabi` says so; with $CUABI_LIBRARY the module binds to
#    that library;
# 3. a wheel built from the source tree (pip wheel bindings/python) compiles
#    libcuabi; one made with CUABI_LIBRARY set at build time bundles that file;
#    one made where cffi cannot be imported builds, without the module, saying why;
# 4. an editable install runs from the source tree with the library beside
#    its modules.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(realpath "$1")
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/cuabi-pkg-python.XXXXXX")
pkg="$root/bindings/python/cuabi"
made=()
cleanup() {
  for f in "${made[@]}"; do rm -rf "$f"; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
want=$(awk '/^#define CUABI_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' \
  "$root/include/cuabi/cuabi.h")

# Nothing from the calling environment decides what is loaded or fetched.
unset CUABI_LIBRARY CUABI_BACKEND PYTHONPATH PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
export PIP_NO_INDEX=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 CUABI_CACHE_DIR="$work/cache"

echo "== scripts/package-python"
bash "$root/scripts/package-python" "$work/dist"
sdist="$work/dist/cuabi-$want.tar.gz"
wheel=$(ls "$work"/dist/cuabi-"$want"-cp38-abi3-manylinux_*.whl) || fail "no manylinux wheel of version $want"
[ -f "$sdist" ] || fail "no sdist cuabi-$want.tar.gz"

echo "== the sdist carries the C library's sources as files"
"$py" - "$sdist" "$want" <<'PY'
import sys, tarfile
path, version = sys.argv[1:]
base = f"cuabi-{version}"
with tarfile.open(path) as tar:
    members = {m.name: m for m in tar.getmembers()}
for need in ("pyproject.toml", "CMakeLists.txt", "PKG-INFO", "cuabi/__init__.py",
             "cuabi/__main__.py", "libcuabi/CMakeLists.txt", "libcuabi/include/cuabi/cuabi.h",
             "libcuabi/capi/core/cache.cpp", "libcuabi/capi/abi/exports.map",
             "libcuabi/cmake/cuabi.pc.in"):
    m = members.get(f"{base}/{need}")
    assert m is not None, f"the sdist lacks {need}"
    assert m.isfile(), f"{need} is not a plain file in the sdist"
links = [n for n, m in members.items() if m.issym() or m.islnk()]
assert not links, f"links in the sdist: {links}"
assert not any("/libcuabi.so" in n for n in members), "a built library in the sdist"
print(f"{len(members)} members, none a link")
PY

echo "== the wheel's RECORD lists every file with its hash and size"
"$py" - "$wheel" "$want" <<'PY'
import base64, hashlib, sys, zipfile
path, version = sys.argv[1:]
with zipfile.ZipFile(path) as whl:
    names = {n for n in whl.namelist() if not n.endswith("/")}  # files, not folders
    record = whl.read(f"cuabi-{version}.dist-info/RECORD").decode().splitlines()
    listed = {}
    for line in record:
        name, digest, size = line.rsplit(",", 2)
        listed[name] = (digest, size)
    assert set(listed) == names, set(listed) ^ names
    for name, (digest, size) in listed.items():
        if name.endswith("/RECORD"):
            continue
        data = whl.read(name)
        want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={want}" and int(size) == len(data), name
    wheel_meta = whl.read(f"cuabi-{version}.dist-info/WHEEL").decode()
    assert "Root-Is-Purelib: false" in wheel_meta, wheel_meta
    assert "Tag: cp38-abi3-manylinux_" in wheel_meta, wheel_meta
    assert "cuabi/_cuabi_cffi.abi3.so" in names, "the wheel lacks the compiled module"
    assert "cuabi/_cuabi_cffi_abi.py" in names, "the wheel lacks the cffi backend's cdef parsed ahead"
print(f"{len(names)} files, each listed and intact")
PY

echo "== a fresh virtual environment, the wheel installed with --no-index"
"$py" -m venv "$work/venv"
vpy="$work/venv/bin/python"
"$vpy" -m pip install -q --no-index --no-deps "$wheel"
site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
cd "$work"
out=$("$vpy" - <<'PY'
import cuabi, os
print("VERSION", cuabi.__version__)
print("FILE", cuabi.__file__)
print("LIB", cuabi.find_library())
print("LIBVERSION", cuabi.version_string())
p = cuabi.Program('extern "C" __global__ void f() {}').compile(["-arch=compute_75"])
print("PTX", ".entry f" in p.ptx)
PY
)
echo "$out"
grep -qx "VERSION $want" <<<"$out" || fail "the package's version is not the header's $want"
grep -qx "LIBVERSION $want" <<<"$out" || fail "the bundled library's version is not $want"
grep -qx "FILE $site/cuabi/__init__.py" <<<"$out" || fail "cuabi was not imported from $site"
grep -qx "LIB $site/cuabi/libcuabi.so" <<<"$out" || fail "the library loaded is not the wheel's"
grep -qx "PTX True" <<<"$out" || fail "NVRTC did not compile"
# Installed with --no-deps, this environment has no cffi: ctypes, saying why.
out=$(CUABI_DRIVER_PATH="$work/no-driver/libcuda.so.1" "$vpy" -m cuabi 2>&1 || true)
grep -q "^  python: cuabi $want (ctypes backend) at " <<<"$out" || fail "without cffi the backend is not ctypes: $out"
grep -qxF "  python: compiled module $site/cuabi/_cuabi_cffi.abi3.so (not used: the compiled backend needs the cffi package (pip install cffi); the ctypes backend (CUABI_BACKEND=ctypes) needs nothing)" <<<"$out" ||
  fail "without cffi the report does not say why the compiled module is unused: $out"

echo "== no driver: DriverNotFoundError, and the report says what was tried"
missing="$work/no-driver/libcuda.so.1"
out=$(CUABI_DRIVER_PATH="$missing" "$vpy" -c '
import cuabi
try:
    cuabi.device_count()
except cuabi.DriverNotFoundError as e:
    print("RAISED", e.name)
    print(e.message)
' 2>&1)
echo "$out"
grep -qx "RAISED CUABI_ERROR_DRIVER_NOT_FOUND" <<<"$out" || fail "no DriverNotFoundError"
grep -qF "$missing" <<<"$out" || fail "the error does not name $missing"
for cmd in "$vpy -m cuabi" "$work/venv/bin/cuabi"; do
  rc=0
  out=$(CUABI_DRIVER_PATH="$missing" $cmd 2>&1) || rc=$?
  echo "$out"
  [ $rc -eq 1 ] || fail "$cmd exited $rc without a driver, not 1"
  grep -qx "driver: not available (CUABI_ERROR_DRIVER_NOT_FOUND)" <<<"$out" || fail "$cmd: no driver line"
  grep -qF "$missing" <<<"$out" || fail "$cmd does not name $missing"
  grep -qx "  library: $(realpath "$site/cuabi/libcuabi.so")" <<<"$out" || fail "$cmd: wrong library line"
  grep -qx "devices: unknown (no driver)" <<<"$out" || fail "$cmd: no devices line"
done

echo "== CUABI_LIBRARY still wins at run time"
rc=0
out=$(CUABI_LIBRARY="$work/elsewhere/libcuabi.so" "$vpy" -c 'import cuabi; cuabi.device_count()' 2>&1) || rc=$?
[ $rc -ne 0 ] || fail "a missing CUABI_LIBRARY was not refused"
grep -q "LibraryNotFoundError" <<<"$out" && grep -qF "$work/elsewhere/libcuabi.so" <<<"$out" ||
  fail "the failure does not name CUABI_LIBRARY's file: $out"
out=$(CUABI_LIBRARY="$lib" "$vpy" -c 'import cuabi; print(cuabi.find_library())')
[ "$out" = "$lib" ] || fail "CUABI_LIBRARY=$lib loaded $out"

echo "== without its library the package names where it looked"
mv "$site/cuabi/libcuabi.so" "$work/libcuabi.so.aside"
rc=0
out=$("$vpy" -c 'import cuabi; cuabi.device_count()' 2>&1) || rc=$?
mv "$work/libcuabi.so.aside" "$site/cuabi/libcuabi.so"
[ $rc -ne 0 ] || fail "the package ran without its library"
grep -q "LibraryNotFoundError" <<<"$out" && grep -qF "$site/cuabi/libcuabi.so" <<<"$out" ||
  fail "the failure does not name $site/cuabi/libcuabi.so: $out"

echo "== the wheel with its dependency (cffi): the compiled path"
# cffi from a folder of wheels (\$CUABI_TEST_WHEELS, else .whl/ of the
# checkout) when one there installs; else a virtual environment that sees
# this Python's own packages, where cffi is installed.
wheels=${CUABI_TEST_WHEELS:-$root/.whl}
"$py" -m venv "$work/venv-c"
cpy="$work/venv-c/bin/python"
if ! "$cpy" -m pip install -q --no-index --find-links "$wheels" "$wheel" 2>"$work/pip-c.log"; then
  "$py" -c 'import cffi' 2>/dev/null || fail "no cffi wheel for this Python in $wheels and no cffi here"
  echo "(no cffi wheel for this Python in $wheels: a virtual environment over this Python's packages)"
  rm -rf "$work/venv-c"
  "$py" -m venv --system-site-packages "$work/venv-c"
  "$cpy" -m pip install -q --no-index --no-deps "$wheel"
fi
csite=$("$cpy" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
for cmd in "$cpy -m cuabi" "$work/venv-c/bin/cuabi"; do
  out=$(CUABI_DRIVER_PATH="$work/no-driver/libcuda.so.1" $cmd 2>&1 || true)
  echo "$out"
  grep -q "^  python: cuabi $want (compiled backend) at $csite/cuabi$" <<<"$out" ||
    fail "$cmd: the installed wheel does not use the compiled backend"
  grep -qxF "  python: compiled module $csite/cuabi/_cuabi_cffi.abi3.so (in use)" <<<"$out" ||
    fail "$cmd: the report does not name the compiled module in use"
done
out=$("$cpy" - <<'PY'
import ctypes, cuabi
b = cuabi.get_backend()
p = cuabi.Program('extern "C" __global__ void f() {}').compile(["-arch=compute_75"])
print("BACKEND", b.name, p.backend.name, ".entry f" in p.ptx)
want = ctypes.cast(ctypes.CDLL(b.path).cuabi_version, ctypes.c_void_p).value
print("BOUND", int(b.ffi.cast("uintptr_t", b.lib._cuabi_cffi_version_address())) == want)
PY
)
echo "$out"
grep -qx "BACKEND compiled compiled True" <<<"$out" || fail "NVRTC through the compiled backend: $out"
grep -qx "BOUND True" <<<"$out" || fail "the compiled module calls another libcuabi than the wheel's"
# CUABI_LIBRARY names another library (no module beside it): the wheel's
# module binds to that one, loaded first.
mkdir -p "$work/other"
cp "$(realpath "$lib")" "$work/other/libcuabi.so"
out=$(CUABI_LIBRARY="$work/other/libcuabi.so" "$cpy" - <<'PY'
import ctypes, cuabi
b = cuabi.get_backend()
want = ctypes.cast(ctypes.CDLL(b.path).cuabi_version, ctypes.c_void_p).value
print(b.name, b.path, b.module_path,
      int(b.ffi.cast("uintptr_t", b.lib._cuabi_cffi_version_address())) == want)
PY
)
echo "$out"
[ "$out" = "compiled $work/other/libcuabi.so $csite/cuabi/_cuabi_cffi.abi3.so True" ] ||
  fail "with CUABI_LIBRARY the wheel's module does not bind to that library: $out"
for name in ctypes cffi; do
  out=$(CUABI_BACKEND=$name "$cpy" -c 'import cuabi; print(cuabi.get_backend().name)')
  [ "$out" = "$name" ] || fail "CUABI_BACKEND=$name gave $out"
done

echo "== the cffi extra"
"$vpy" - <<'PY'
from importlib.metadata import metadata, entry_points
m = metadata("cuabi")
reqs = m.get_all("Requires-Dist") or []
assert 'cffi>=1.15; extra == "cffi"' in reqs, reqs
# cffi, the compiled module's runtime, is the one hard dependency.
assert [r for r in reqs if "extra" not in r] == ["cffi>=1.15"], f"hard dependencies: {reqs}"
assert "cffi" in (m.get_all("Provides-Extra") or [])
scripts = [e for e in entry_points(group="console_scripts") if e.name == "cuabi"]
assert scripts and scripts[0].value == "cuabi.__main__:main", scripts
print("Requires-Dist:", reqs)
PY

echo "== from the source tree: libcuabi built through the links in libcuabi/"
"$py" -m pip wheel -q --no-build-isolation --no-deps -w "$work/tree" "$root/bindings/python"
"$py" - "$work"/tree/cuabi-*.whl "$work/tree-lib" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    whl.extract("cuabi/libcuabi.so", sys.argv[2])
    assert "cuabi/include/cuabi/cuabi.h" in whl.namelist()
    assert "cuabi/_cuabi_cffi.abi3.so" in whl.namelist(), "no compiled module"
PY
readelf -d "$work/tree-lib/cuabi/libcuabi.so" | grep -q 'SONAME.*\[libcuabi\.so\.0\]' ||
  fail "the wheel built from the tree holds no libcuabi"
out=$(CUABI_LIBRARY="$work/tree-lib/cuabi/libcuabi.so" "$vpy" -c 'import cuabi; print(cuabi.version_string())')
[ "$out" = "$want" ] || fail "the library built from the tree is version $out, not $want"

echo "== CUABI_LIBRARY at build time: that file is bundled"
CUABI_LIBRARY="$lib" "$py" -m pip wheel -q --no-build-isolation --no-deps -w "$work/prebuilt" \
  "$root/bindings/python"
"$py" - "$work"/prebuilt/cuabi-*.whl "$lib" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl, open(sys.argv[2], "rb") as f:
    assert whl.read("cuabi/libcuabi.so") == f.read(), "the bundled library differs"
print("bundled", sys.argv[2])
PY

echo "== without cffi at build time: the wheel is built without the compiled module"
mkdir -p "$work/no-cffi/cffi"
echo 'raise ImportError("cffi hidden for this test")' >"$work/no-cffi/cffi/__init__.py"
PYTHONPATH="$work/no-cffi" CUABI_LIBRARY="$lib" "$py" -m pip wheel -v --no-build-isolation --no-deps \
  -w "$work/no-module" "$root/bindings/python" >"$work/no-module.log" 2>&1 ||
  { tail -30 "$work/no-module.log"; fail "the wheel did not build without cffi"; }
grep -q "cuabi: no compiled Python module (cffi is not installed" "$work/no-module.log" ||
  fail "the build without cffi does not say why it has no compiled module"
"$py" - "$work"/no-module/cuabi-*.whl <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    names = whl.namelist()
assert "cuabi/libcuabi.so" in names and not [n for n in names if "_cuabi_cffi" in n], names
print("built without the module:", sys.argv[1].rsplit("/", 1)[-1])
PY

echo "== an editable install runs from the source tree"
for f in "$pkg/libcuabi.so" "$pkg/include" "$pkg/_cuabi_cffi.abi3.so" "$pkg/_cuabi_cffi_abi.py"; do
  [ -e "$f" ] || made+=("$f")
done
"$py" -m venv --system-site-packages "$work/venv-edit"
CUABI_LIBRARY="$lib" "$work/venv-edit/bin/python" -m pip install -q --no-build-isolation --no-deps \
  -e "$root/bindings/python"
out=$("$work/venv-edit/bin/python" -c 'import cuabi, os; print(cuabi.__file__); print(cuabi.find_library())')
echo "$out"
grep -qx "$pkg/__init__.py" <<<"$out" || fail "the editable install does not import from $pkg"
grep -qx "$pkg/libcuabi.so" <<<"$out" || fail "the editable install does not load $pkg/libcuabi.so"
cmp "$pkg/libcuabi.so" "$lib" || fail "$pkg/libcuabi.so is not CUABI_LIBRARY's file"

echo
echo "python packaging: all checks passed"
