"""Writes the C source of cuabi's compiled module, ``cuabi._cuabi_cffi``,
and the cffi backend's declarations parsed ahead, ``_cuabi_cffi_abi.py``.

    python build_cffi_module.py --api cuabi/_api.py --out _cuabi_cffi.c
    python build_cffi_module.py --api cuabi/_api.py --abi-out _cuabi_cffi_abi.py

``--abi-out`` writes cffi's out-of-line ABI mode module over the same cdef:
plain Python holding the parsed declarations, which the cffi backend
imports (in about 2 ms) instead of parsing the cdef when the process starts
(about 40 ms). It records the cdef's SHA-256 (``CDEF_SHA256``): the backend
uses it only for the cdef it was made from.

The module is cffi's API (out-of-line) mode over ``cuabi/cuabi.h``: the
declarations are the cdef the regenerator writes into ``cuabi/_api.py``
(``CDEF``), the one list both cffi backends use, and the C compiler checks
each struct and constant against the header. CMake compiles the source into
a Python extension linked to libcuabi (cmake/CuabiPythonCompiled.cmake).

Exit status: 0 when the source was written; 3 when cffi is not installed
(the build then goes on without the module, saying so); 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import sys

MODULE = "cuabi._cuabi_cffi"
ABI_MODULE = "_cuabi_cffi_abi"
NO_CFFI = 3


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", required=True, help="the generated cuabi/_api.py")
    parser.add_argument("--out", help="the C file to write")
    parser.add_argument("--abi-out", help="the out-of-line ABI mode module to write (_cuabi_cffi_abi.py)")
    parser.add_argument("--module", default=MODULE, help=f"the module's name ({MODULE})")
    args = parser.parse_args(argv)
    if not args.out and not args.abi_out:
        parser.error("give --out, --abi-out or both")
    try:
        import cffi
    except ImportError:
        print("build_cffi_module: cffi is not installed; no compiled module", file=sys.stderr)
        return NO_CFFI
    # _api.py alone (standard library only), not the package around it.
    spec = importlib.util.spec_from_file_location("_cuabi_api_for_build", args.api)
    if spec is None or spec.loader is None:
        print(f"build_cffi_module: cannot read {args.api}", file=sys.stderr)
        return 1
    api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api)
    if args.abi_out:
        abi = cffi.FFI()
        abi.cdef(api.CDEF)
        abi.set_source(ABI_MODULE, None)
        abi.emit_python_code(args.abi_out)
        digest = hashlib.sha256(api.CDEF.encode("utf-8")).hexdigest()
        with open(args.abi_out, "a", encoding="utf-8") as f:
            f.write(f'\n# The cdef this was made from (cuabi/_api.py CDEF).\nCDEF_SHA256 = "{digest}"\n')
    if not args.out:
        return 0
    ffi = cffi.FFI()
    ffi.cdef(api.CDEF)
    # The module's own: the address its calls of cuabi_version go to, which
    # the package compares with the library it loaded.
    ffi.cdef("uintptr_t _cuabi_cffi_version_address(void);")
    ffi.set_source(
        args.module,
        '#include "cuabi/cuabi.h"\n'
        "static uintptr_t _cuabi_cffi_version_address(void)\n"
        "{ return (uintptr_t)&cuabi_version; }\n",
    )
    ffi.emit_c_code(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
