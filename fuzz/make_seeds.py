#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (seed-*.bin files).

Run it again after changing an input format; inputs that once failed
(regression-* files) are left alone, and so are the CUBIN seeds of
fuzz_image (seed-saxpy-sm*.cubin: the SAXPY kernel compiled by NVRTC 13 with
--gpu-architecture=sm_90 and sm_80, saved with cuabi_program_get_cubin).
"""

import hashlib
import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

SAXPY = b"""extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
"""
TEMPLATE = b"template <typename T> __global__ void store(T* out, T v) { *out = v; }\n"


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name + ".bin"), "wb") as f:
        f.write(data)


def program_input(source, name=b"", header=b"", header_name=b"", expr=b"", options=()):
    parts = [source, name, header, header_name, expr] + list(options)
    return b"\0".join(parts)


def program_seeds():
    t = "fuzz_program"
    write(t, "saxpy-sm90", program_input(SAXPY, b"saxpy.cu", options=[b"--gpu-architecture=sm_90"]))
    write(
        t,
        "saxpy-compute90",
        program_input(SAXPY, options=[b"--gpu-architecture=compute_90", b"-std=c++17"]),
    )
    write(
        t,
        "template-expression",
        program_input(TEMPLATE, expr=b"store<int>", options=[b"-arch=sm_90"]),
    )
    write(
        t,
        "header",
        program_input(
            b'#include "h.cuh"\n__global__ void k(int* x) { *x = H; }\n',
            header=b"#define H 3\n",
            header_name=b"h.cuh",
        ),
    )
    write(t, "syntax-error", program_input(b"__global__ void k( {"))
    write(t, "bad-option", program_input(b"__device__ int x;", options=[b"--no-such-option"]))
    write(
        t,
        "defines",
        program_input(b"__device__ int x = V;", options=[b"-DV=4", b"-w", b"--fmad=false"]),
    )
    write(
        t,
        "invalid-utf8",
        program_input(b"// \xff\xfe\n#error \xed\xa0\x80\n", name=b"n\xc3\xa9.cu"),
    )
    # Typed defines (the options again, through cuabi_program_compile_with):
    # the macro forms the core accepts, and ones it refuses.
    write(
        t,
        "typed-defines",
        program_input(
            b"static_assert(F(1, 2) == 3, \"\");",
            options=[b"F(a,b)=((a)+(b))", b"V(...)=__VA_ARGS__", b"E()", b"N=a b"],
        ),
    )
    write(
        t,
        "typed-defines-refused",
        program_input(b"", options=[b"OK", b"F(a, b)=a", b"2X", b"N=1\n#define M 2"]),
    )


def handle_kinds():
    """The kinds of handle in the order of the one list, capi/core/kinds.h
    (fuzz_handles picks a kind by its place there)."""
    with open(os.path.join(HERE, "..", "capi", "core", "kinds.h")) as f:
        return re.findall(r"^\s*X\((\w+), (\w+)\)", f.read(), re.M)


def handle_op(selector, which, mode, raw):
    return bytes([selector, which, mode]) + struct.pack("<Q", raw)


def handle_seeds():
    t = "fuzz_handles"
    names = [name for _, name in handle_kinds()]
    program = names.index("program")
    release = 0x80
    ops = b"".join(
        handle_op(k, w, m, r)
        for k, w, m, r in [
            (0, 0, 0, 0xDEADBEEF),
            (program, 1, 6, 1),
            (program, 1, 2, 3),
            (names.index("buffer"), 4, 1, 5),
            (release | program, 0, 2, 4),
            (release | program, 0, 6, 0),
            (program, 2, 5, 0),
            (names.index("graph_exec"), 1, 3, 9),
            (names.index("memory_pool"), 2, 4, 2),
            (release | names.index("texture"), 0, 2, 7),
            (names.index("library"), 0, 7, 123456789),
        ]
    )
    write(t, "mixed", ops)
    # Every call of each kind (an input runs at most 64 operations).
    for k, name in enumerate(names):
        calls = b"".join(handle_op(k, i, 0, 0x0000000102000001 + i) for i in range(64))
        write(t, "every-call-raw-" + name, calls)
    write(
        t,
        "every-release-forged",
        b"".join(handle_op(release | k, 0, 2, k) for k in range(len(names))),
    )
    live = [(program, 1), (program, 2), (release | program, 0), (program, 1), (program, 2)]
    write(t, "live-then-release", b"".join(handle_op(k, w, 6, 0) for k, w in live))


def launch_seeds():
    t = "fuzz_launch"
    write(
        t,
        "exact-config",
        bytes([0])
        + b"\x11" * 40
        + bytes([1, 0])
        + bytes(96)
        + bytes([1])
        + bytes([5])
        + b"\x01" * 50,
    )
    write(
        t,
        "newer-zero-tail",
        bytes([2, 16]) + b"\x22" * 56 + bytes([1]) + bytes([2, 8]) + bytes(104) + bytes([1]),
    )
    write(
        t,
        "newer-set-tail",
        bytes([2, 16]) + b"\x33" * 56 + bytes([0]) + bytes([3, 1, 2, 3, 4]) + b"\x44" * 200,
    )
    write(t, "too-small", bytes([1, 3]) + b"\x55" * 40 + bytes([4]) + b"\xff" * 8 + b"\x66" * 100)


def cache_entry(key, output, lowered, image):
    out = b"CUABICA1" + key + struct.pack("<II", output, len(lowered))
    for expr, name in sorted(lowered.items()):
        out += struct.pack("<I", len(expr)) + expr + struct.pack("<I", len(name)) + name
    out += struct.pack("<Q", len(image)) + image
    return out + hashlib.sha256(out).digest()


def cache_seeds():
    t = "fuzz_cache"
    key = hashlib.sha256(b"fuzzed kernel").digest()
    entry = cache_entry(key, 0, {b"store<int>": b"_Z5storeIiEvPT_S0_"}, b"\x7fELF" + bytes(60))
    write(t, "valid-entry", bytes([0]) + entry)
    write(
        t,
        "valid-ptx-entry",
        bytes([0]) + cache_entry(key, 1, {}, b".version 8.0\n.target sm_90\n\0"),
    )
    write(t, "truncated-entry", bytes([0]) + entry[: len(entry) // 2])
    fields = (
        struct.pack("<II", 0, 1)
        + struct.pack("<I", 3)
        + b"a<b"
        + struct.pack("<I", 2)
        + b"_Z"
        + struct.pack("<Q", 4)
        + b"\x7fELF"
    )
    write(t, "sealed-fields", bytes([1]) + fields)
    write(t, "sealed-bad-size", bytes([1]) + struct.pack("<IIQ", 0, 0, 99) + b"abc")
    write(
        t,
        "mutation",
        bytes([2, 1, 1, 4])
        + b"expr\0name\0image-bytes\0"
        + bytes([3])
        + struct.pack("<I", 10)
        + bytes([0, 2])
        + struct.pack("<I", 50)
        + bytes([1, 3]),
    )


def image_seeds():
    t = "fuzz_image"
    fat = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64) + bytes(64)
    write(t, "fatbin", fat)
    write(t, "fatbin-truncated", fat[:40])
    write(t, "elf-header-only", b"\x7fELF\x02\x01\x01" + bytes(57))
    write(t, "ptx", b".version 8.0\n.target sm_90\n.address_size 64\n")


if __name__ == "__main__":
    program_seeds()
    handle_seeds()
    launch_seeds()
    cache_seeds()
    image_seeds()
