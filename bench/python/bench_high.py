"""cuabi's Pythonic layer (Device, Module, Kernel, DeviceBuffer, Stream ...)
over the backend named by ``$CUABI_BACKEND``: reported as ``py_high``
(ctypes), ``py_high_cffi`` or ``py_high_compiled``.

The launch figure is the layer's own call, ``kernel(grid, block, args,
stream=s)``, with Python floats and ints and DeviceBuffer objects as
arguments: the layer packs them on every launch. ``launch_*_prepared`` times
the layer's prepared launch, ``launch = kernel.prepare(grid, block,
stream=s)`` then ``launch(*args)``: the configuration fixed once, the
arguments still packed on every launch.

``paired`` mode (bench/README.md, "Paired figures"): series ``c_ref`` (the
reference library's raw C launches), ``raw`` (cuLaunchKernel through ctypes),
``launch`` and ``prepared`` (the headline: the layer's fastest path) and,
where cuda.core imports, ``cuda_core``: cuda.core's ``launch`` of the same
empty kernels in this very process, interleaved like the others, on a
cuda.core Stream wrapping cuabi's own stream (``Stream.from_handle``, else
``Device.create_stream`` over the CUDA stream protocol; its own stream only
when neither works, said in the record's ``cuda_core_stream``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib as bl  # noqa: E402
import cuabi  # noqa: E402
from cuabi._packing import ArgumentLayout, register_pointer_type  # noqa: E402


class _Pointer:
    """Something with a device address, packed as a DeviceBuffer is (CPU mode):
    the address in a plain attribute registered with the packer."""

    def __init__(self, address: int) -> None:
        self._address = address

    @property
    def __cuabi_ptr__(self) -> int:
        return self._address


register_pointer_type(_Pointer, "_address")


HEADLINE = "prepared"
LAUNCH_PATHS = ("launch", "prepared")


def _cuda_core():
    """cuda.core's module (0.4 and newer export at the top level), or the
    reason it is not there."""
    try:
        import cuda.core as cc

        cc.launch  # noqa: B018
        return cc
    except (ImportError, AttributeError):
        pass
    try:
        import cuda.core.experimental as cc  # type: ignore[no-redef]

        return cc
    except Exception as exc:
        return f"cuda.core not importable: {type(exc).__name__}: {exc}"


class CudaCoreSeries:
    """cuda.core's launch of the empty kernels, in the same process as
    cuabi's, on cuabi's stream when cuda.core can wrap it."""

    def __init__(self, cc, stream: "cuabi.Stream", arch: str) -> None:
        import numpy as np

        self.cc, self.np = cc, np
        dev = cc.Device(0)
        dev.set_current()
        self.stream, self.how = None, ""
        raw = stream.ptr
        from_handle = getattr(cc.Stream, "from_handle", None)
        if from_handle is not None:
            try:
                self.stream, self.how = from_handle(raw), "Stream.from_handle(cuabi's stream)"
            except Exception:
                self.stream = None
        if self.stream is None:
            try:
                self.stream = dev.create_stream(stream)
                self.how = "Device.create_stream(cuabi's stream), the CUDA stream protocol"
            except Exception:
                self.stream = dev.create_stream()
                self.how = "its own stream (it would not wrap cuabi's)"
        opts = cc.ProgramOptions(arch=arch)
        self.module = cc.Program(bl.EMPTY_SOURCE, code_type="c++", options=opts).compile("cubin")
        self.buf = dev.allocate(256, stream=self.stream)
        self.config = cc.LaunchConfig(grid=1, block=1)

    def launcher(self, nargs: int):
        np = self.np
        k = self.module.get_kernel(bl.kernel_name(nargs))
        if nargs == 2:
            args = (np.float32(2.0), self.buf)
        else:
            args = tuple(bl.args16(self.buf, np.float32, np.int32, np.uint64))
        launch, s, cfg = self.cc.launch, self.stream, self.config
        return lambda: launch(s, cfg, k, *args)


class High:
    def __init__(self, ns) -> None:
        self.ns = ns
        self.backend = cuabi.get_backend()
        name = self.backend.name
        self.out = bl.Out("py_high" if name == "ctypes" else "py_high_" + name)
        self.dev = None
        self._keep: list = []

    def info(self) -> None:
        self.dev = cuabi.Device(0)
        major, minor = self.dev.compute_capability
        self.out.info(device=self.dev.name, cc=f"{major}.{minor}", backend=self.backend.name)

    def launch_and_graph(self) -> None:
        ns, out, dev = self.ns, self.out, self.dev
        module = dev.compile(bl.EMPTY_SOURCE)
        s = dev.create_stream()
        buf = dev.alloc(256)
        sync = s.synchronize
        for bench, name, args in (
            ("launch_2args", "empty2", (2.0, buf)),
            ("launch_16args", "empty16", tuple(bl.args16(buf))),
        ):
            if not bl.wanted(ns, "launch"):
                break

            def figure() -> None:
                k = module.get_kernel(name)
                out.stats(
                    bench,
                    "us",
                    bl.launch_bursts(lambda: k(1, 1, args, stream=s), sync, ns),
                    burst=ns.burst_size,
                    args=len(args),
                    path="kernel(grid, block, args, stream=s): packs every launch",
                )
                launch = k.prepare(1, 1, stream=s)
                out.stats(
                    bench + "_prepared",
                    "us",
                    bl.launch_bursts(lambda: launch(*args), sync, ns),
                    burst=ns.burst_size,
                    args=len(args),
                    path="launch = kernel.prepare(grid, block, stream=s); launch(*args): "
                    "packs every launch",
                )
                launch.close()

            out.guard(bench, figure)

        if bl.wanted(ns, "graph"):

            def graph() -> None:
                k = module.get_kernel("empty2")
                args = (2.0, buf)
                k(1, 1, args, stream=s)  # first use outside the capture
                s.synchronize()
                with s.capture() as cap:
                    for _ in range(bl.GRAPH_KERNELS):
                        k(1, 1, args, stream=s)
                exe = cap.graph.instantiate()
                bl.report_graph(out, lambda: exe.launch(s), sync, ns)
                exe.close()
                cap.graph.close()

            out.guard("graph_replay", graph)

    def launch_paths(self, module, s, buf, nargs: int):
        """The layer's launch paths for empty2 / empty16, as its variant rows
        name them: ``launch`` (kernel(grid, block, args, stream=s)) and
        ``prepared`` (launch(*args) of kernel.prepare(grid, block, stream=s))."""
        k = module.get_kernel(bl.kernel_name(nargs))
        args = (2.0, buf) if nargs == 2 else tuple(bl.args16(buf))
        prepared = k.prepare(1, 1, stream=s)
        self._keep += [k, prepared]
        return {"launch": lambda: k(1, 1, args, stream=s), "prepared": lambda: prepared(*args)}

    def paired(self) -> None:
        ns, out = self.ns, self.out
        setup: list = []

        def shared():
            if not setup:
                dev = self.dev
                s = dev.create_stream()
                setup.append((dev.compile(bl.EMPTY_SOURCE), s, dev.alloc(256), bl.Reference()))
            return setup[0]

        if bl.wanted(ns, "launch"):
            core: list = []

            def make(nargs: int):
                module, s, buf, ref = shared()
                if not core:
                    cc = _cuda_core()
                    if isinstance(cc, str):
                        core.append(cc)
                    else:
                        try:
                            core.append(CudaCoreSeries(cc, s, ns.arch))
                        except Exception as exc:
                            core.append(f"cuda.core failed: {type(exc).__name__}: {exc}")
                function = ref.load_kernel(self.dev.context, bl.kernel_name(nargs), ns.arch)
                params, keep = bl.ctypes_params(nargs, buf.ptr)
                self._keep += [params, keep]
                size = ns.burst_size
                paths = self.launch_paths(module, s, buf, nargs)
                series = [("c_ref", ref.burst(function, s.ptr, params, size)),
                          ("raw", bl.python_burst(bl.ctypes_raw_launch(function, s.ptr, params),
                                                  size))]
                series += [(p, bl.python_burst(paths[p], size)) for p in LAUNCH_PATHS]
                extra = {"ffi": self.backend.name}
                if isinstance(core[0], str):
                    extra["cuda_core"] = core[0]
                else:
                    series.append(("cuda_core", bl.python_burst(core[0].launcher(nargs), size)))
                    extra["cuda_core_stream"] = core[0].how
                return series, s.synchronize, HEADLINE, extra

            bl.paired_launch_figures(out, make, ns)

        if bl.wanted(ns, "copy"):

            def copies() -> None:
                import numpy as np

                _, s, _, ref = shared()
                buf = self.dev.alloc(bl.COPY_BYTES)
                host = np.ones(bl.COPY_BYTES, dtype=np.uint8)
                hosts = [("pageable", host, host.ctypes.data)]
                try:
                    pinned = self.dev.host_alloc(bl.COPY_BYTES)
                    view = pinned.as_array()
                    view[:] = 1
                    hosts.append(("pinned", view, view.ctypes.data))
                except Exception as exc:
                    pinned = None
                    hosts.append(("pinned", exc, 0))
                bl.paired_copy_figures(
                    out, ns, ref, buf.ptr, hosts,
                    lambda h: (lambda: buf.copy_from_host(h)),
                    lambda h: (lambda: buf.copy_to_host(h)),
                    lambda: None,
                )
                del hosts, view
                if pinned is not None:
                    pinned.close()
                buf.close()

            out.guard("paired_copy_to_device_pageable", copies)

    def instructions(self) -> int:
        """``instructions --path P --count N``: set-up, then N calls of P.
        Paths: raw/N, launch/N, prepared/N, cuda_core/N (where cuda.core
        imports; not in the spec), query/success, query/not_ready,
        alloc/ordered (``dev.alloc(256, stream=s).free(stream=s)``: from the
        buffer cache after the first) and alloc/sync (``dev.alloc(256)
        .close()``: cuMemAlloc and cuMemFree)."""
        ns = self.ns
        kind, _, arg = ns.path.partition("/")
        dev = self.dev = cuabi.Device(0)
        s = dev.create_stream()
        if kind == "query":
            if arg not in ("success", "not_ready"):
                raise SystemExit(f"unknown path {ns.path!r}")
            bl.stand_in_query_switch(arg == "not_ready")
            call = s.query
        elif kind == "alloc":
            if arg == "ordered":
                def call() -> None:
                    dev.alloc(256, stream=s).free(stream=s)
            elif arg == "sync":
                def call() -> None:
                    dev.alloc(256).close()
            else:
                raise SystemExit(f"unknown path {ns.path!r}")
        else:
            nargs = int(arg) if arg in ("2", "16") else 0
            if not nargs or kind not in ("raw", "cuda_core") + LAUNCH_PATHS:
                raise SystemExit(f"unknown path {ns.path!r}")
            buf = dev.alloc(256)
            if kind == "raw":
                function = bl.Reference().load_kernel(dev.context, bl.kernel_name(nargs), ns.arch)
                params, keep = bl.ctypes_params(nargs, buf.ptr)
                call = bl.ctypes_raw_launch(function, s.ptr, params)
            elif kind == "cuda_core":
                cc = _cuda_core()
                if isinstance(cc, str):
                    raise SystemExit(cc)
                call = CudaCoreSeries(cc, s, ns.arch).launcher(nargs)
            else:
                module = dev.load_module(bl.STAND_IN_IMAGE)
                call = self.launch_paths(module, s, buf, nargs)[kind]
        bl.count_calls(call, ns.count)
        s.synchronize()
        return 0

    def copies(self) -> None:
        import numpy as np

        out, ns, dev = self.out, self.ns, self.dev
        buf = dev.alloc(bl.COPY_BYTES)

        def run(kind: str, host) -> None:
            out.guard(
                f"copy_h2d_{kind}",
                lambda: bl.copy_rate(out, f"copy_h2d_{kind}", lambda: buf.copy_from_host(host), ns),
            )
            out.guard(
                f"copy_d2h_{kind}",
                lambda: bl.copy_rate(out, f"copy_d2h_{kind}", lambda: buf.copy_to_host(host), ns),
            )

        run("pageable", np.ones(bl.COPY_BYTES, dtype=np.uint8))
        pinned = dev.host_alloc(bl.COPY_BYTES)
        view = pinned.as_array()
        view[:] = 1
        run("pinned", view)
        del view
        pinned.close()
        buf.close()

    def nvrtc_image(self, arch_option: str, cubin: bool = True):
        with cuabi.Program(bl.SAXPY_SOURCE, "saxpy.cu") as prog:
            prog.compile(["--fmad=false", arch_option])
            return prog.cubin if cubin else prog.ptx.encode()

    def compile_nvrtc(self, arch: str) -> None:
        t = bl.repeat_ms(
            lambda: self.nvrtc_image(f"--gpu-architecture={arch}"), max(self.ns.reps // 3, 5)
        )
        self.out.stats("compile_nvrtc", "ms", t, arch=arch)

    def compile_figures(self) -> None:
        out, ns, dev = self.out, self.ns, self.dev
        major, minor = dev.compute_capability
        out.guard("compile_nvrtc", lambda: self.compile_nvrtc(f"sm_{major}{minor}"))

        def cache_hit() -> None:
            dev.compile(bl.SAXPY_SOURCE, ["--fmad=false"]).close()
            misses = []

            def once() -> None:
                m = dev.compile(bl.SAXPY_SOURCE, ["--fmad=false"])
                if not m.from_cache:
                    misses.append(1)
                m.close()

            t = bl.repeat_ms(once, max(ns.reps, 20), warmup=0)
            if misses:
                out.error("compile_cache_hit", f"{len(misses)} compiles missed a warm cache")
            else:
                out.stats("compile_cache_hit", "ms", t)

        out.guard("compile_cache_hit", cache_hit)
        for bench, cubin in (("load_cubin", True), ("load_ptx", False)):

            def load(bench=bench, cubin=cubin) -> None:
                target = f"{'sm' if cubin else 'compute'}_{major}{minor}"
                image = self.nvrtc_image(f"--gpu-architecture={target}", cubin)
                t = bl.repeat_ms(lambda: dev.load_module(image).close(), max(ns.reps // 3, 10))
                out.stats(bench, "ms", t)

            out.guard(bench, load)

    def saxpy(self) -> None:
        import numpy as np

        x, y, hout = bl.saxpy_host_data()
        nbytes = x.nbytes
        a = np.float32(2.0)
        t0 = bl.perf_ns()
        dev = cuabi.Device(0)
        module = dev.compile(bl.SAXPY_SOURCE, ["--fmad=false"], name="saxpy.cu")
        kernel = module.get_kernel("saxpy")
        dx, dy, dout = dev.alloc(nbytes), dev.alloc(nbytes), dev.alloc(nbytes)
        s = dev.create_stream()
        start, stop = dev.create_event(), dev.create_event()
        dx.copy_from_host(x, stream=s)
        dy.copy_from_host(y, stream=s)
        args = (a, dx, dy, dout, np.uint64(bl.SAXPY_N))
        start.record(s)
        kernel(bl.SAXPY_BLOCKS, bl.SAXPY_THREADS, args, stream=s)
        stop.record(s)
        dout.copy_to_host(hout, stream=s)
        s.synchronize()
        first = start.elapsed_ms(stop)

        def kernel_ms() -> float:
            # Untimed: keeps the stream busy while the timed launch is enqueued.
            kernel(bl.SAXPY_BLOCKS, bl.SAXPY_THREADS, args, stream=s)
            start.record(s)
            kernel(bl.SAXPY_BLOCKS, bl.SAXPY_THREADS, args, stream=s)
            stop.record(s)
            s.synchronize()
            return start.elapsed_ms(stop)

        cache = "hit" if module.from_cache else "miss"
        bl.report_saxpy(self.out, t0, 2.0, x, y, hout, cache, kernel_ms, first, self.ns)

    def cpu(self) -> None:
        out, ns = self.out, self.ns
        out.guard("compile_nvrtc", lambda: self.compile_nvrtc(ns.arch))

        def packing() -> None:
            # The layer's own packing, as kernel(...) runs it on every launch,
            # for the layouts the driver reports for empty2 and empty16. The
            # core's check of argument sizes needs a kernel, so a GPU; it runs
            # once per signature, not per launch, so none is timed here.
            ptr = _Pointer(0x7F0000000000)
            unchecked = lambda sizes: None  # noqa: E731
            l2 = ArgumentLayout([0, 8], [4, 8], 16, "empty2", unchecked)
            a2 = (2.0, ptr)
            l16 = ArgumentLayout(
                [32 * k + o for k in range(4) for o in (0, 8, 16, 24)],
                [4, 8, 4, 8] * 4,
                128,
                "empty16",
                unchecked,
            )
            a16 = tuple(bl.args16(ptr))
            # A launch writes into its plan's block with the packer compiled
            # for the arguments' types, found as the one used last.
            view = memoryview(bytearray(128))
            p2 = l2.compile_packer(tuple(map(type, a2)))
            p16 = l16.compile_packer(tuple(map(type, a16)))
            assert p2(view, a2) and p16(view, a16)
            out.stats(
                "pack_2args",
                "ns",
                bl.per_call_ns(lambda: p2(view, a2)),
                path="compiled packer into a plan-like block (float, buffer)",
            )
            out.stats(
                "pack_16args",
                "ns",
                bl.per_call_ns(lambda: p16(view, a16)),
                path="compiled packer into a plan-like block (float, buffer, int, int) x 4",
            )

        out.guard("pack_2args", packing)

        def handles() -> None:
            prog = cuabi.Program('extern "C" __global__ void k() {}')
            prog.close()
            out.stats(
                "error_path",
                "ns",
                bl.failing_call_ns(lambda: prog.log, cuabi.InvalidHandleError),
                path="closed Program: .log raises InvalidHandleError",
            )

        out.guard("error_path", handles)


def main() -> int:
    ns = bl.parse_args()
    try:
        h = High(ns)
    except Exception as exc:
        bl.Out("py_high").error("init", exc)
        return 1
    if ns.mode == "cpu":
        h.cpu()
        return 0
    if ns.mode == "instructions":
        return h.instructions()
    if ns.mode == "saxpy":
        try:
            h.saxpy()
        except Exception as exc:
            h.out.error("saxpy_app", exc)
            return 1
        return 0
    try:
        h.info()
    except Exception as exc:
        h.out.error("init", exc)
        return 1
    if ns.mode == "paired":
        h.paired()
        return 0
    if bl.wanted(ns, "launch") or bl.wanted(ns, "graph"):
        h.out.guard("launch_2args", h.launch_and_graph)
    if bl.wanted(ns, "copy"):
        h.out.guard("copy_h2d_pageable", h.copies)
    if bl.wanted(ns, "compile"):
        h.out.guard("compile_nvrtc", h.compile_figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
