"""cuabi's low layer from Python: every ``cuabi_*`` function called as the
header declares it, through the backend named by ``$CUABI_BACKEND``
(``ctypes`` or ``cffi``). Results are reported as ``py_ctypes`` / ``py_cffi``.

The launch hot path is one ``cuabi_function_launch_packed`` call with an argument
block packed once (the low layer's equivalent of the raw driver's fixed
``void*`` array); ``launch_*_pack`` packs the block with ``struct`` on every
launch, as a caller whose arguments change would. ``launch_*_plan`` is the
fastest documented path: a launch plan (``cuabi_launch_plan_create``) whose
own argument block was written once, launched by
``cuabi_launch_plan_launch(plan)``; ``launch_*_plan_pack`` writes the
arguments into that block in place (``struct.Struct.pack_into``) before every
launch.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib as bl  # noqa: E402
from cuabi._loader import load_backend  # noqa: E402
from cuabi.errors import CudaError, InvalidHandleError  # noqa: E402
from cuabi import capi as C  # noqa: E402

_FORMAT = {4: {"f": "f", "i": "i"}, 8: {"p": "Q", "n": "Q"}}


class LowLevel:
    def __init__(self, ns) -> None:
        self.ns = ns
        self.b = load_backend()
        self.lib = self.b.lib
        self.out = bl.Out("py_" + self.b.name)
        self.dev = None

    # -- helpers --------------------------------------------------------------
    def device(self):
        if self.dev is None:
            self.dev = self.b.get("cuabi_device_get", 0, out="cuabi_device")
        return self.dev

    def compile_module(self, source: str, options=(), flags: int = 0):
        b = self.b
        opts = [o.encode() for o in options]
        arr, _keep = b.string_array(opts)
        desc, _keep2 = b.compile_desc(
            source=source.encode(), options=arr, num_options=len(opts), flags=flags
        )
        return b.get("cuabi_module_compile", self.device(), desc, out="cuabi_module")

    def function(self, module, name: str):
        return self.b.get("cuabi_module_get_function", module, name.encode(), out="cuabi_function")

    def layout(self, fn):
        """[(offset, size)] of each parameter and the block's size, in one
        cuabi_function_get_params call."""
        return self.b.function_params(fn)

    def packer(self, fn, kinds: str) -> struct.Struct:
        """A struct.Struct for the kernel's layout; ``kinds`` gives each
        parameter's kind: f(loat), i(nt), p(ointer), n (size_t)."""
        layout, total = self.layout(fn)
        fmt, pos = "<", 0
        for (offset, size), kind in zip(layout, kinds):
            fmt += "x" * (offset - pos) + _FORMAT[size][kind]
            pos = offset + size
        fmt += "x" * (total - pos)
        s = struct.Struct(fmt)
        assert s.size == total, (fmt, total)
        return s

    def block(self, data: bytes):
        """A reusable argument block for the backend, as the cheapest argument
        for a ``const void*`` (a cdata for cffi; for ctypes a c_void_p, which
        ctypes passes without converting) and what keeps its memory alive."""
        if self.b.name == "cffi":
            blk = self.b.ffi.new("char[]", data)
            return blk, blk
        buf = ctypes.create_string_buffer(data, len(data))
        return ctypes.c_void_p(ctypes.addressof(buf)), buf

    def view(self, address: int, size: int):
        """A writable buffer over memory the library owns (a plan's argument
        block), for struct.pack_into: a ctypes array for ctypes, a cffi
        buffer for cffi."""
        if self.b.name == "cffi":
            ffi = self.b.ffi
            return ffi.buffer(ffi.cast("char *", address), size)
        return memoryview((ctypes.c_char * size).from_address(address)).cast("B")

    def arg(self, handle):
        """A handle as the cheapest argument for the backend: ctypes passes a
        c_void_p as it is, but converts a Python int on every call."""
        return ctypes.c_void_p(handle) if self.b.name == "ctypes" else handle

    def stream(self):
        return self.b.get("cuabi_stream_create", self.device(), 0, 0, out="cuabi_stream")

    def alloc(self, nbytes: int):
        h = self.b.get("cuabi_buffer_alloc", self.device(), nbytes, out="cuabi_buffer")
        return h, int(self.b.get("cuabi_buffer_get_pointer", h, out="uint64_t"))

    # -- figures ------------------------------------------------------------
    def info(self) -> None:
        b = self.b
        major, minor = b.get_many(
            "cuabi_device_get_compute_capability", self.device(), outs=("int32_t", "int32_t")
        )
        self.arch = f"sm_{major}{minor}"
        self.out.info(
            device=b.get_string("cuabi_device_get_name", self.device()),
            cc=f"{major}.{minor}",
            backend=b.name,
            library=b.path,
        )

    def launch_and_graph(self) -> None:
        b, lib, ns, out = self.b, self.lib, self.ns, self.out
        module = self.compile_module(bl.EMPTY_SOURCE)
        stream = self.stream()
        buf, ptr = self.alloc(256)
        cfg = b.launch_config((1, 1, 1), (1, 1, 1), 0)
        sync = lambda: lib.cuabi_stream_synchronize(stream)  # noqa: E731
        launch_packed = lib.cuabi_function_launch_packed
        check = b.check

        for bench, name, kinds, values in (
            ("launch_2args", "empty2", "fp", [2.0, ptr]),
            ("launch_16args", "empty16", "fpin" * 4, bl.args16(ptr)),
        ):
            if not bl.wanted(ns, "launch"):
                break

            def figure() -> None:
                fn = self.function(module, name)
                packer = self.packer(fn, kinds)
                data = packer.pack(*values)
                (blk, keep), size = self.block(data), len(data)
                fn_arg, stream_arg = self.arg(fn), self.arg(stream)

                def hot() -> None:
                    st = launch_packed(fn_arg, cfg, stream_arg, blk, size)
                    if st:
                        check(st, "cuabi_function_launch_packed")

                out.stats(
                    bench,
                    "us",
                    bl.launch_bursts(hot, sync, ns),
                    burst=ns.burst_size,
                    args=len(values),
                    path="cuabi_function_launch_packed, block packed once, " "arguments converted once",
                )
                pack = packer.pack
                launcher = b.packed_launcher()

                def per_call() -> None:
                    d = pack(*values)
                    st = launcher(fn, cfg, stream, d, size)
                    if st:
                        check(st, "cuabi_function_launch_packed")

                out.stats(
                    bench + "_pack",
                    "us",
                    bl.launch_bursts(per_call, sync, ns),
                    burst=ns.burst_size,
                    args=len(values),
                    path="struct.pack + cuabi_function_launch_packed per launch",
                )
                del keep  # the block's memory lived until here

                # A launch plan: function, configuration and stream checked
                # once; the plan owns the argument block, which is written in
                # place, and a launch is one call of one argument.
                plan = b.get("cuabi_launch_plan_create", fn, cfg, stream, out="cuabi_launch_plan")
                address, block_size = b.get_many(
                    "cuabi_launch_plan_get_args", plan, outs=("void*", "size_t")
                )
                assert block_size == size, (block_size, size)
                view = self.view(int(address), int(block_size))
                pack_into = packer.pack_into
                pack_into(view, 0, *values)
                plan_launch, plan_arg = lib.cuabi_launch_plan_launch, self.arg(plan)

                def plan_once() -> None:
                    st = plan_launch(plan_arg)
                    if st:
                        check(st, "cuabi_launch_plan_launch")

                out.stats(
                    bench + "_plan",
                    "us",
                    bl.launch_bursts(plan_once, sync, ns),
                    burst=ns.burst_size,
                    args=len(values),
                    path="cuabi_launch_plan_launch, arguments written into the plan's block once",
                )

                def plan_write() -> None:
                    pack_into(view, 0, *values)
                    st = plan_launch(plan_arg)
                    if st:
                        check(st, "cuabi_launch_plan_launch")

                out.stats(
                    bench + "_plan_pack",
                    "us",
                    bl.launch_bursts(plan_write, sync, ns),
                    burst=ns.burst_size,
                    args=len(values),
                    path="struct.pack_into the plan's block + cuabi_launch_plan_launch per launch",
                )
                del view  # before the block goes
                lib.cuabi_launch_plan_release(plan)

            out.guard(bench, figure)

        if bl.wanted(ns, "graph"):

            def graph() -> None:
                fn = self.function(module, "empty2")
                data = self.packer(fn, "fp").pack(2.0, ptr)
                block, size = self.block(data), len(data)
                blk = block[0]
                b.call("cuabi_stream_begin_capture", stream, C.CUABI_CAPTURE_GLOBAL)
                try:
                    for _ in range(bl.GRAPH_KERNELS):
                        b.check(launch_packed(fn, cfg, stream, blk, size))
                finally:
                    g = b.get("cuabi_stream_end_capture", stream, out="cuabi_graph")
                del block  # captured launches hold copies of their arguments
                ex = b.get("cuabi_graph_instantiate", g, out="cuabi_graph_exec")
                lib.cuabi_graph_release(g)
                run = lib.cuabi_graph_exec_launch
                ex_arg, stream_arg = self.arg(ex), self.arg(stream)

                def replay() -> None:
                    st = run(ex_arg, stream_arg)
                    if st:
                        check(st, "cuabi_graph_exec_launch")

                bl.report_graph(out, replay, sync, ns)
                lib.cuabi_graph_exec_release(ex)

            out.guard("graph_replay", graph)
        lib.cuabi_buffer_release(buf)
        lib.cuabi_stream_release(stream)
        lib.cuabi_module_release(module)

    def copies(self) -> None:
        import numpy as np

        b, lib, out, ns = self.b, self.lib, self.out, self.ns
        buf, _ = self.alloc(bl.COPY_BYTES)
        n = bl.COPY_BYTES
        h2d, d2h = lib.cuabi_buffer_copy_from_host, lib.cuabi_buffer_copy_to_host

        def run(kind: str, address: int) -> None:
            p = b.pointer(address)
            out.guard(
                f"copy_h2d_{kind}",
                lambda: bl.copy_rate(
                    out, f"copy_h2d_{kind}", lambda: b.check(h2d(buf, 0, p, n)), ns
                ),
            )
            out.guard(
                f"copy_d2h_{kind}",
                lambda: bl.copy_rate(
                    out, f"copy_d2h_{kind}", lambda: b.check(d2h(buf, 0, p, n)), ns
                ),
            )

        host = np.ones(n, dtype=np.uint8)
        run("pageable", host.ctypes.data)
        pinned = b.get("cuabi_host_buffer_alloc", self.device(), n, out="cuabi_host_buffer")
        address = int(b.get("cuabi_host_buffer_get_pointer", pinned, out="void*"))
        ctypes.memset(address, 1, n)
        run("pinned", address)
        lib.cuabi_host_buffer_release(pinned)
        lib.cuabi_buffer_release(buf)

    def nvrtc_image(self, arch_option: str, cubin: bool = True) -> bytes:
        b = self.b
        prog = b.get(
            "cuabi_program_create",
            bl.SAXPY_SOURCE.encode(),
            b"saxpy.cu",
            0,
            b.NULL,
            b.NULL,
            out="cuabi_program",
        )
        try:
            opts = [b"--fmad=false", arch_option.encode()]
            arr, _keep = b.string_array(opts)
            b.call("cuabi_program_compile", prog, len(opts), arr)
            if cubin:
                return b.get_bytes("cuabi_program_get_cubin", prog)
            return b.get_bytes("cuabi_program_get_ptx", prog)
        finally:
            self.lib.cuabi_program_release(prog)

    def compile_nvrtc(self, arch: str) -> None:
        reps = max(self.ns.reps // 3, 5)
        t = bl.repeat_ms(lambda: self.nvrtc_image(f"--gpu-architecture={arch}"), reps)
        self.out.stats("compile_nvrtc", "ms", t, arch=arch)

    def compile_figures(self) -> None:
        b, lib, out, ns = self.b, self.lib, self.out, self.ns
        out.guard("compile_nvrtc", lambda: self.compile_nvrtc(self.arch))

        def cache_hit() -> None:
            lib.cuabi_module_release(self.compile_module(bl.SAXPY_SOURCE, ["--fmad=false"]))
            misses = []

            def once() -> None:
                m = self.compile_module(bl.SAXPY_SOURCE, ["--fmad=false"])
                if not b.get("cuabi_module_get_from_cache", m, out="int32_t"):
                    misses.append(1)
                lib.cuabi_module_release(m)

            t = bl.repeat_ms(once, max(ns.reps, 20), warmup=0)
            if misses:
                out.error("compile_cache_hit", f"{len(misses)} compiles missed a warm cache")
            else:
                out.stats("compile_cache_hit", "ms", t)

        out.guard("compile_cache_hit", cache_hit)

        for bench, cubin in (("load_cubin", True), ("load_ptx", False)):

            def load(bench=bench, cubin=cubin) -> None:
                target = ("sm_" if cubin else "compute_") + self.arch[3:]
                image = self.nvrtc_image(f"--gpu-architecture={target}", cubin)
                p, _keep = self.block(image)

                def once() -> None:
                    m = b.get(
                        "cuabi_module_load_data", self.device(), p, len(image), out="cuabi_module"
                    )
                    lib.cuabi_module_release(m)

                out.stats(bench, "ms", bl.repeat_ms(once, max(ns.reps // 3, 10)))

            out.guard(bench, load)

    # -- SAXPY ---------------------------------------------------------------
    def saxpy(self) -> None:
        b, out, ns = self.b, self.out, self.ns
        x, y, hout = bl.saxpy_host_data()
        nbytes = x.nbytes
        a = 2.0
        t0 = bl.perf_ns()
        dev = self.device()
        module = self.compile_module(bl.SAXPY_SOURCE, ["--fmad=false"])
        hit = b.get("cuabi_module_get_from_cache", module, out="int32_t")
        fn = self.function(module, "saxpy")
        (bx, px), (by, py), (bo, po) = self.alloc(nbytes), self.alloc(nbytes), self.alloc(nbytes)
        stream = self.stream()
        start = b.get("cuabi_event_create", dev, 0, out="cuabi_event")
        stop = b.get("cuabi_event_create", dev, 0, out="cuabi_event")
        b.call("cuabi_buffer_copy_from_host_async", bx, 0, b.pointer(x.ctypes.data), nbytes, stream)
        b.call("cuabi_buffer_copy_from_host_async", by, 0, b.pointer(y.ctypes.data), nbytes, stream)
        packer = self.packer(fn, "fpppn")
        cfg = b.launch_config((bl.SAXPY_BLOCKS, 1, 1), (bl.SAXPY_THREADS, 1, 1), 0)
        data = packer.pack(a, px, py, po, bl.SAXPY_N)
        blk, _keep = self.block(data)
        b.call("cuabi_event_record", start, stream)
        b.call("cuabi_function_launch_packed", fn, cfg, stream, blk, len(data))
        b.call("cuabi_event_record", stop, stream)
        b.call(
            "cuabi_buffer_copy_to_host_async", bo, 0, b.pointer(hout.ctypes.data), nbytes, stream
        )
        b.call("cuabi_stream_synchronize", stream)
        first = float(b.get("cuabi_event_get_elapsed_ms", start, stop, out="float"))

        def kernel_ms() -> float:
            # Untimed: keeps the stream busy while the timed launch is enqueued.
            b.call("cuabi_function_launch_packed", fn, cfg, stream, blk, len(data))
            b.call("cuabi_event_record", start, stream)
            b.call("cuabi_function_launch_packed", fn, cfg, stream, blk, len(data))
            b.call("cuabi_event_record", stop, stream)
            b.call("cuabi_stream_synchronize", stream)
            return float(b.get("cuabi_event_get_elapsed_ms", start, stop, out="float"))

        bl.report_saxpy(out, t0, a, x, y, hout, "hit" if hit else "miss", kernel_ms, first, ns)

    # -- CPU only ------------------------------------------------------------
    def cpu(self) -> None:
        b, lib, out, ns = self.b, self.lib, self.out, self.ns
        out.guard("compile_nvrtc", lambda: self.compile_nvrtc(ns.arch))

        def packing() -> None:
            # What a low-layer caller writes per launch: struct at the offsets
            # the driver reports (the layouts of empty2 and empty16), in place
            # into an argument block as a launch plan owns one.
            s2 = struct.Struct("<f4xQ")
            s16 = struct.Struct("<" + "f4xQi4xQ" * 4)
            v16 = bl.args16(0x7F0000000000)
            block = (ctypes.c_char * 128)()
            view = self.view(ctypes.addressof(block), 128)
            into2, into16 = s2.pack_into, s16.pack_into
            out.stats(
                "pack_2args",
                "ns",
                bl.per_call_ns(lambda: into2(view, 0, 2.0, 0x7F0000000000)),
                path="struct.Struct.pack_into a plan-like block",
            )
            out.stats(
                "pack_16args",
                "ns",
                bl.per_call_ns(lambda: into16(view, 0, *v16)),
                path="struct.Struct.pack_into a plan-like block",
            )
            del view

        out.guard("pack_2args", packing)

        def handles() -> None:
            prog = b.get(
                "cuabi_program_create",
                b'extern "C" __global__ void k() {}',
                b.NULL,
                0,
                b.NULL,
                b.NULL,
                out="cuabi_program",
            )
            lib.cuabi_program_release(prog)
            size = b.out("size_t")
            ref = b.ref(size)
            get_log = lib.cuabi_program_get_log
            get_count = lib.cuabi_function_get_param_count
            null = b.NULL

            def released() -> int:
                st = get_log(prog, null, ref)
                if st != C.CUABI_ERROR_INVALID_HANDLE:
                    raise AssertionError(f"status {st}, expected CUABI_ERROR_INVALID_HANDLE")
                return st

            def null_handle() -> int:
                st = get_count(null, ref)
                if st != C.CUABI_ERROR_INVALID_HANDLE:
                    raise AssertionError(f"status {st}, expected CUABI_ERROR_INVALID_HANDLE")
                return st

            out.stats("invalid_handle_released", "ns", bl.per_call_ns(released), path="status only")
            out.stats("invalid_handle_null", "ns", bl.per_call_ns(null_handle), path="status only")

            def raising() -> None:
                st = get_log(prog, null, ref)
                if st:
                    raise b.error(st, "cuabi_program_get_log")

            out.stats(
                "error_path",
                "ns",
                bl.failing_call_ns(raising, InvalidHandleError),
                path="failing call + CudaError built from the last error",
            )

        out.guard("invalid_handle_released", handles)


def main() -> int:
    ns = bl.parse_args()
    try:
        ll = LowLevel(ns)
    except Exception as exc:
        bl.Out("py_" + (os.environ.get("CUABI_BACKEND") or "ctypes")).error("init", exc)
        return 1
    if ns.mode == "cpu":
        ll.cpu()
        return 0
    try:
        if ns.mode == "saxpy":
            ll.saxpy()
            return 0
        ll.info()
    except CudaError as exc:
        ll.out.error("saxpy_app" if ns.mode == "saxpy" else "init", exc)
        return 1
    if bl.wanted(ns, "launch") or bl.wanted(ns, "graph"):
        ll.out.guard("launch_2args", ll.launch_and_graph)
    if bl.wanted(ns, "copy"):
        ll.out.guard("copy_h2d_pageable", ll.copies)
    if bl.wanted(ns, "compile"):
        ll.out.guard("compile_nvrtc", ll.compile_figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
