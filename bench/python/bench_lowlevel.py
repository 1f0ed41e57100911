"""cuabi's low layer from Python: every ``cuabi_*`` function called as the
header declares it, through the backend named by ``$CUABI_BACKEND``
(``ctypes``, ``cffi`` or ``compiled``, cffi's API mode). Results are
reported as ``py_ctypes`` / ``py_cffi`` / ``py_compiled``.

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

# The empty kernels: name, each parameter's kind (f(loat), p(ointer), i(nt),
# n (size_t)) and the values (None: the device buffer's address).
_KERNELS = {
    2: ("empty2", "fp", [2.0, None]),
    16: ("empty16", "fpin" * 4, bl.args16(None)),
}

# The paired launch series of the low layer; the headline is "plan", its
# fastest path (cuabi_launch_plan_launch, arguments written once).
LAUNCH_PATHS = ("packed", "pack", "plan", "plan_pack")
HEADLINE = "plan"

_CUDA_CDEF = """
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned shmem, void *stream,
                   void **params, void **extra);
void instructions_fake_set_stream_query(int not_ready);
"""
_cffi_cuda = None


def _cffi_driver():
    """(ffi, lib): ``libcuda.so.1`` through cffi's ABI mode, with its own cdef."""
    global _cffi_cuda
    if _cffi_cuda is None:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(_CUDA_CDEF)
        _cffi_cuda = ffi, ffi.dlopen("libcuda.so.1")
    return _cffi_cuda


class LowLevel:
    def __init__(self, ns) -> None:
        self.ns = ns
        self.b = load_backend()
        self.lib = self.b.lib
        self.out = bl.Out("py_" + self.b.name)
        self.dev = None
        self._ref = None
        self._keep: list = []  # what paired series and their arguments need alive

    # -- helpers --------------------------------------------------------------
    def device(self):
        if self.dev is None:
            self.dev = self.b.get("cuabi_device_get", 0, out="cuabi_device")
        return self.dev

    def compile_module(self, source: str, options=(), flags: int = 0):
        b = self.b
        desc, _keep = C.fill_compile_desc(b, source=source, options=list(options), flags=flags)
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
        if self.b.name in ("cffi", "compiled"):
            blk = self.b.ffi.new("char[]", data)
            return blk, blk
        buf = ctypes.create_string_buffer(data, len(data))
        return ctypes.c_void_p(ctypes.addressof(buf)), buf

    def view(self, address: int, size: int):
        """A writable buffer over memory the library owns (a plan's argument
        block), for struct.pack_into: a ctypes array for ctypes, a cffi
        buffer for cffi."""
        if self.b.name in ("cffi", "compiled"):
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

    def launch_paths(self, module, stream, ptr: int, cfg, nargs: int):
        """The low layer's launch paths for the kernel of ``nargs`` arguments
        (2: empty2, 16: empty16), as the variant rows name them: ``packed``,
        ``pack``, ``plan``, ``plan_pack``; each a callable making one launch
        (status checked). Returns (paths, close): close() releases the plan."""
        b, lib = self.b, self.lib
        name, kinds, values = _KERNELS[nargs]
        values = [ptr if v is None else v for v in values]
        fn = self.function(module, name)
        packer = self.packer(fn, kinds)
        data = packer.pack(*values)
        (blk, keep), size = self.block(data), len(data)
        fn_arg, stream_arg = self.arg(fn), self.arg(stream)
        launch_packed, check = lib.cuabi_function_launch_packed, b.check

        def packed() -> None:
            st = launch_packed(fn_arg, cfg, stream_arg, blk, size)
            if st:
                check(st, "cuabi_function_launch_packed")

        pack = packer.pack
        launcher = b.packed_launcher()

        def per_call() -> None:
            d = pack(*values)
            st = launcher(fn, cfg, stream, d, size)
            if st:
                check(st, "cuabi_function_launch_packed")

        # A launch plan: function, configuration and stream checked once; the
        # plan owns the argument block, which is written in place, and a
        # launch is one call of one argument.
        plan = b.get("cuabi_launch_plan_create", fn, cfg, stream, out="cuabi_launch_plan")
        address, block_size = b.get_many(
            "cuabi_launch_plan_get_args", plan, outs=("void*", "size_t")
        )
        assert block_size == size, (block_size, size)
        view = self.view(int(address), int(block_size))
        pack_into = packer.pack_into
        pack_into(view, 0, *values)
        # The low layer's own fastest call of cuabi_launch_plan_launch(plan):
        # nothing converted per call (capi: ``f, arg = L.plan_launcher(plan)``).
        plan_launch, plan_arg = b.plan_launcher(plan)

        def plan_once() -> None:
            st = plan_launch(plan_arg)
            if st:
                check(st, "cuabi_launch_plan_launch")

        def plan_write() -> None:
            pack_into(view, 0, *values)
            st = plan_launch(plan_arg)
            if st:
                check(st, "cuabi_launch_plan_launch")

        def close() -> None:
            nonlocal view, keep
            view = keep = None  # the view before the block goes
            lib.cuabi_launch_plan_release(plan)
            lib.cuabi_function_release(fn)

        paths = {"packed": packed, "pack": per_call, "plan": plan_once, "plan_pack": plan_write}
        return paths, close

    def raw_launch(self, function: int, stream: int, ptr: int, nargs: int):
        """The ``raw`` series: cuLaunchKernel of ``libcuda.so.1`` through this
        backend's own FFI (ctypes, or cffi's dlopen with its own cdef), with
        the reference's CUfunction and the same argument values. Returns
        (launch, what keeps its arguments alive)."""
        if self.b.name not in ("cffi", "compiled"):
            params, keep = bl.ctypes_params(nargs, ptr)
            return bl.ctypes_raw_launch(function, stream, params), (params, keep)
        ffi, cuda = _cffi_driver()
        name, kinds, values = _KERNELS[nargs]
        ctype = {"f": "float *", "p": "uint64_t *", "i": "int32_t *", "n": "uint64_t *"}
        boxes = [ffi.new(ctype[k], ptr if v is None else v) for k, v in zip(kinds, values)]
        params = ffi.new("void *[]", boxes)
        fn, st = ffi.cast("void *", function), ffi.cast("void *", stream)
        launch = cuda.cuLaunchKernel
        null = ffi.NULL

        def raw() -> None:
            r = launch(fn, 1, 1, 1, 1, 1, 1, 0, st, params, null)
            if r:
                raise RuntimeError(f"cuLaunchKernel failed: CUresult {r}")

        return raw, (params, boxes)

    def launch_and_graph(self) -> None:
        b, lib, ns, out = self.b, self.lib, self.ns, self.out
        module = self.compile_module(bl.EMPTY_SOURCE)
        stream = self.stream()
        buf, ptr = self.alloc(256)
        cfg = b.launch_config((1, 1, 1), (1, 1, 1), 0)
        sync = lambda: lib.cuabi_stream_synchronize(stream)  # noqa: E731
        launch_packed = lib.cuabi_function_launch_packed
        check = b.check

        for bench, nargs in (("launch_2args", 2), ("launch_16args", 16)):
            if not bl.wanted(ns, "launch"):
                break

            def figure(bench=bench, nargs=nargs) -> None:
                paths, close = self.launch_paths(module, stream, ptr, cfg, nargs)
                for suffix, path, what in (
                    ("", "packed", "cuabi_function_launch_packed, block packed once, "
                     "arguments converted once"),
                    ("_pack", "pack", "struct.pack + cuabi_function_launch_packed per launch"),
                    ("_plan", "plan", "cuabi_launch_plan_launch, arguments written into "
                     "the plan's block once"),
                    ("_plan_pack", "plan_pack", "struct.pack_into the plan's block + "
                     "cuabi_launch_plan_launch per launch"),
                ):
                    out.stats(
                        bench + suffix,
                        "us",
                        bl.launch_bursts(paths[path], sync, ns),
                        burst=ns.burst_size,
                        args=nargs,
                        path=what,
                    )
                close()

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

    # -- paired figures and instruction counts -------------------------------
    def context(self) -> int:
        return int(self.b.get("cuabi_device_get_context", self.device(), out="uint64_t"))

    def reference(self) -> bl.Reference:
        """The reference library, loaded once (a failure raised again by
        every figure that needs it)."""
        if self._ref is None:
            try:
                self._ref = bl.Reference()
            except Exception as exc:
                self._ref = exc
        if isinstance(self._ref, BaseException):
            raise self._ref
        return self._ref

    def launch_setup(self, image: bytes = b""):
        """(module, stream, its raw CUstream, device buffer address, config,
        sync): what every launch path shares. The module is EMPTY_SOURCE
        compiled, or ``image`` loaded."""
        b, lib = self.b, self.lib
        if image:
            blk, keep = self.block(image)
            module = b.get("cuabi_module_load_data", self.device(), blk, len(image),
                           out="cuabi_module")
        else:
            module = self.compile_module(bl.EMPTY_SOURCE)
        stream = self.stream()
        buf, ptr = self.alloc(256)
        self._keep.append(buf)
        cfg = b.launch_config((1, 1, 1), (1, 1, 1), 0)
        raw_stream = int(b.get("cuabi_stream_get_handle", stream, out="uint64_t"))
        sync_fn, check = lib.cuabi_stream_synchronize, b.check

        def sync() -> None:
            st = sync_fn(stream)
            if st:
                check(st, "cuabi_stream_synchronize")

        return module, stream, raw_stream, ptr, cfg, sync

    def paired(self) -> None:
        ns, out = self.ns, self.out
        if bl.wanted(ns, "launch"):
            setup = []

            def make(nargs: int):
                if not setup:
                    setup.append(self.launch_setup())
                module, stream, raw_stream, ptr, cfg, sync = setup[0]
                ref = self.reference()
                function = ref.load_kernel(self.context(), bl.kernel_name(nargs), ns.arch)
                params, keep = bl.ctypes_params(nargs, ptr)
                raw, keep_raw = self.raw_launch(function, raw_stream, ptr, nargs)
                paths, close = self.launch_paths(module, stream, ptr, cfg, nargs)
                self._keep += [params, keep, keep_raw, close]
                size = ns.burst_size
                series = [("c_ref", ref.burst(function, raw_stream, params, size)),
                          ("raw", bl.python_burst(raw, size))]
                series += [(p, bl.python_burst(paths[p], size)) for p in LAUNCH_PATHS]
                return series, sync, HEADLINE, {"ffi": self.b.name}

            bl.paired_launch_figures(out, make, ns)
        if bl.wanted(ns, "copy"):
            out.guard("paired_copy_to_device_pageable", self.paired_copies)

    def paired_copies(self) -> None:
        import numpy as np

        b, lib, out, ns = self.b, self.lib, self.out, self.ns
        ref = self.reference()
        n = bl.COPY_BYTES
        buf, dptr = self.alloc(n)
        h2d, d2h, check = lib.cuabi_buffer_copy_from_host, lib.cuabi_buffer_copy_to_host, b.check
        host = np.ones(n, dtype=np.uint8)
        hosts = [("pageable", host.ctypes.data, host.ctypes.data)]
        try:
            pinned = b.get("cuabi_host_buffer_alloc", self.device(), n, out="cuabi_host_buffer")
            address = int(b.get("cuabi_host_buffer_get_pointer", pinned, out="void*"))
            ctypes.memset(address, 1, n)
            hosts.append(("pinned", address, address))
        except Exception as exc:
            pinned = None
            hosts.append(("pinned", exc, 0))

        def to_device(address: int):
            p = b.pointer(address)
            return lambda: check(h2d(buf, 0, p, n), "cuabi_buffer_copy_from_host")

        def to_host(address: int):
            p = b.pointer(address)
            return lambda: check(d2h(buf, 0, p, n), "cuabi_buffer_copy_to_host")

        # Synchronous copies: nothing is queued between samples.
        bl.paired_copy_figures(out, ns, ref, dptr, hosts, to_device, to_host, lambda: None)
        if pinned is not None:
            lib.cuabi_host_buffer_release(pinned)
        lib.cuabi_buffer_release(buf)

    def instructions(self) -> int:
        """``instructions --path P --count N``: set-up, then N calls of P."""
        ns, b, lib = self.ns, self.b, self.lib
        kind, _, arg = ns.path.partition("/")
        module, stream, raw_stream, ptr, cfg, sync = self.launch_setup(bl.STAND_IN_IMAGE)
        if kind == "query":
            if arg not in ("success", "not_ready"):
                raise SystemExit(f"unknown path {ns.path!r}")
            if b.name in ("cffi", "compiled"):
                _cffi_driver()[1].instructions_fake_set_stream_query(arg == "not_ready")
            else:
                bl.stand_in_query_switch(arg == "not_ready")
            query, stream_arg, check = lib.cuabi_stream_query, self.arg(stream), b.check
            not_ready = C.CUABI_ERROR_NOT_READY

            def call() -> None:
                # The low-level call as the header declares it; NOT_READY is
                # an answer (tested first), any other non-zero status raises.
                st = query(stream_arg)
                if st == not_ready:
                    return
                if st:
                    check(st, "cuabi_stream_query")

        else:
            nargs = int(arg) if arg in ("2", "16") else 0
            if not nargs or (kind != "raw" and kind not in LAUNCH_PATHS):
                raise SystemExit(f"unknown path {ns.path!r}")
            if kind == "raw":
                function = self.reference().load_kernel(
                    self.context(), bl.kernel_name(nargs), ns.arch)
                call, keep = self.raw_launch(function, raw_stream, ptr, nargs)
                self._keep.append(keep)
            else:
                paths, close = self.launch_paths(module, stream, ptr, cfg, nargs)
                call = paths[kind]
        bl.count_calls(call, ns.count)
        sync()
        return 0

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
    if ns.mode == "instructions":
        return ll.instructions()
    try:
        if ns.mode == "saxpy":
            ll.saxpy()
            return 0
        ll.info()
    except CudaError as exc:
        ll.out.error("saxpy_app" if ns.mode == "saxpy" else "init", exc)
        return 1
    if ns.mode == "paired":
        ll.paired()
        return 0
    if bl.wanted(ns, "launch") or bl.wanted(ns, "graph"):
        ll.out.guard("launch_2args", ll.launch_and_graph)
    if bl.wanted(ns, "copy"):
        ll.out.guard("copy_h2d_pageable", ll.copies)
    if bl.wanted(ns, "compile"):
        ll.out.guard("compile_nvrtc", ll.compile_figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
