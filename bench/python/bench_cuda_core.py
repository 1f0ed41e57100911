"""The peer cuda.core (NVIDIA's Pythonic CUDA layer), timed with the same
loops as cuabi: ``launch(stream, config, kernel, *args)`` with NumPy scalars
and Buffer objects as arguments, graphs through its GraphBuilder, copies
through Buffer.copy_from/copy_to, NVRTC through its Program.

``paired`` mode (bench/README.md, "Paired figures"): series ``c_ref`` (the
reference library's raw C launches, on cuda.core's stream in its context)
and ``launch`` (cuda.core's ``launch``, the headline); copies ``c_ref`` and
``copy`` (``copy_from`` / ``copy_to`` and ``sync``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib as bl  # noqa: E402

try:  # cuda.core 0.4 and newer export at the top level
    import cuda.core as cc

    cc.launch  # noqa: B018
except (ImportError, AttributeError):
    import cuda.core.experimental as cc  # type: ignore[no-redef]

import numpy as np  # noqa: E402

out = bl.Out("cuda_core")
_keep: list = []  # what the paired series' arguments need alive


def version() -> str:
    for mod in ("cuda.core", "cuda.core.experimental"):
        try:
            m = __import__(mod, fromlist=["__version__"])
            v = getattr(m, "__version__", None)
            if v:
                return str(v)
        except ImportError:
            pass
    return "?"


class CudaCore:
    def __init__(self, ns) -> None:
        self.ns = ns
        self.dev = cc.Device(0)
        self.dev.set_current()
        self.arch = f"sm_{self.dev.arch}"

    def compile(self, source: str, target: str = "cubin", arch: str | None = None, fmad=None):
        opts = (
            cc.ProgramOptions(arch=arch or self.arch, fma=fmad)
            if fmad is not None
            else cc.ProgramOptions(arch=arch or self.arch)
        )
        return cc.Program(source, code_type="c++", options=opts).compile(target)

    def info(self) -> None:
        out.info(device=self.dev.name, cc=self.dev.arch, version=version())

    def launch_and_graph(self) -> None:
        ns, dev = self.ns, self.dev
        mod = self.compile(bl.EMPTY_SOURCE)
        s = dev.create_stream()
        buf = dev.allocate(256, stream=s)
        cfg = cc.LaunchConfig(grid=1, block=1)
        launch = cc.launch
        sync = s.sync
        for bench, name, args in (
            ("launch_2args", "empty2", (np.float32(2.0), buf)),
            ("launch_16args", "empty16", tuple(bl.args16(buf, np.float32, np.int32, np.uint64))),
        ):
            if not bl.wanted(ns, "launch"):
                break

            def figure() -> None:
                k = mod.get_kernel(name)
                samples = bl.launch_bursts(lambda: launch(s, cfg, k, *args), sync, ns)
                out.stats(
                    bench,
                    "us",
                    samples,
                    burst=ns.burst_size,
                    args=len(args),
                    path="launch(stream, config, kernel, *args)",
                )

            out.guard(bench, figure)

        if bl.wanted(ns, "graph"):

            def graph() -> None:
                k = mod.get_kernel("empty2")
                args = (np.float32(2.0), buf)
                launch(s, cfg, k, *args)  # first use outside the capture
                s.sync()
                gb = s.create_graph_builder()
                gb.begin_building("global")
                for _ in range(bl.GRAPH_KERNELS):
                    launch(gb, cfg, k, *args)
                gb.end_building()
                g = gb.complete()
                bl.report_graph(out, lambda: g.launch(s), sync, ns)

            out.guard("graph_replay", graph)

    def copies(self) -> None:
        ns, dev = self.ns, self.dev
        s = dev.create_stream()
        dbuf = dev.allocate(bl.COPY_BYTES, stream=s)
        host = np.ones(bl.COPY_BYTES, dtype=np.uint8)
        pageable = cc.Buffer.from_handle(host.ctypes.data, bl.COPY_BYTES, owner=host)
        pinned = cc.LegacyPinnedMemoryResource().allocate(bl.COPY_BYTES)
        for kind, hb in (("pageable", pageable), ("pinned", pinned)):

            def h2d(hb=hb) -> None:
                dbuf.copy_from(hb, stream=s)
                s.sync()

            def d2h(hb=hb) -> None:
                dbuf.copy_to(hb, stream=s)
                s.sync()

            out.guard(f"copy_h2d_{kind}", lambda: bl.copy_rate(out, f"copy_h2d_{kind}", h2d, ns))
            out.guard(f"copy_d2h_{kind}", lambda: bl.copy_rate(out, f"copy_d2h_{kind}", d2h, ns))

    def compile_figures(self) -> None:
        ns = self.ns

        def nvrtc() -> None:
            t = bl.repeat_ms(
                lambda: self.compile(bl.SAXPY_SOURCE, fmad=False), max(ns.reps // 3, 5)
            )
            out.stats("compile_nvrtc", "ms", t, arch=self.arch)

        out.guard("compile_nvrtc", nvrtc)
        out.skip("compile_cache_hit", "cuda.core has no on-disk compile cache by default")

        def load(bench: str, target: str) -> None:
            arch = self.arch if target == "cubin" else "compute_" + self.arch[3:]
            code = self.compile(bl.SAXPY_SOURCE, target, arch=arch, fmad=False).code
            maker = cc.ObjectCode.from_cubin if target == "cubin" else cc.ObjectCode.from_ptx
            # ObjectCode loads lazily: get_kernel makes it load the module.
            t = bl.repeat_ms(lambda: maker(code).get_kernel("saxpy"), max(ns.reps // 3, 10))
            out.stats(bench, "ms", t, path="ObjectCode.from_*(image).get_kernel")

        out.guard("load_cubin", lambda: load("load_cubin", "cubin"))
        out.guard("load_ptx", lambda: load("load_ptx", "ptx"))


def paired(ns) -> None:
    dev = cc.Device(0)
    dev.set_current()
    out.info(device=dev.name, cc=dev.arch, version=version())
    s = dev.create_stream()
    raw_stream = int(s.handle)
    sync = s.sync
    ref: list = []

    def reference() -> bl.Reference:
        if not ref:
            ref.append(bl.Reference())
        return ref[0]

    if bl.wanted(ns, "launch"):
        mod = CudaCore(ns).compile(bl.EMPTY_SOURCE)
        buf = dev.allocate(256, stream=s)
        cfg = cc.LaunchConfig(grid=1, block=1)
        launch = cc.launch

        def make(nargs: int):
            r = reference()
            # benchref_load_kernel(0, ...): the current context, cuda.core's.
            function = r.load_kernel(0, bl.kernel_name(nargs), ns.arch)
            params, keep = bl.ctypes_params(nargs, int(buf.handle))
            k = mod.get_kernel(bl.kernel_name(nargs))
            if nargs == 2:
                args = (np.float32(2.0), buf)
            else:
                args = tuple(bl.args16(buf, np.float32, np.int32, np.uint64))
            size = ns.burst_size
            series = [
                ("c_ref", r.burst(function, raw_stream, params, size)),
                ("launch", bl.python_burst(lambda: launch(s, cfg, k, *args), size)),
            ]
            _keep.append((params, keep))
            return series, sync, "launch", {}

        bl.paired_launch_figures(out, make, ns)

    if bl.wanted(ns, "copy"):

        def copies() -> None:
            r = reference()
            dbuf = dev.allocate(bl.COPY_BYTES, stream=s)
            host = np.ones(bl.COPY_BYTES, dtype=np.uint8)
            hosts = [("pageable", cc.Buffer.from_handle(host.ctypes.data, bl.COPY_BYTES,
                                                        owner=host), host.ctypes.data)]
            try:
                pinned = cc.LegacyPinnedMemoryResource().allocate(bl.COPY_BYTES)
                import ctypes

                ctypes.memset(int(pinned.handle), 1, bl.COPY_BYTES)
                hosts.append(("pinned", pinned, int(pinned.handle)))
            except Exception as exc:
                hosts.append(("pinned", exc, 0))

            def to_device(hb):
                def copy() -> None:
                    dbuf.copy_from(hb, stream=s)
                    s.sync()

                return copy

            def to_host(hb):
                def copy() -> None:
                    dbuf.copy_to(hb, stream=s)
                    s.sync()

                return copy

            bl.paired_copy_figures(out, ns, r, int(dbuf.handle), hosts, to_device, to_host,
                                   lambda: None)

        out.guard("paired_copy_to_device_pageable", copies)


def timing_options():
    """EventOptions with timing on (the field was renamed in cuda.core 0.4)."""
    try:
        return cc.EventOptions(timing_enabled=True)
    except TypeError:
        return cc.EventOptions(enable_timing=True)


def saxpy(ns) -> None:
    x, y, hout = bl.saxpy_host_data()
    nbytes = x.nbytes
    t0 = bl.perf_ns()
    dev = cc.Device(0)
    dev.set_current()
    s = dev.create_stream()
    opts = cc.ProgramOptions(arch=f"sm_{dev.arch}", fma=False)
    mod = cc.Program(bl.SAXPY_SOURCE, code_type="c++", options=opts).compile("cubin")
    k = mod.get_kernel("saxpy")
    dx, dy, dout = (dev.allocate(nbytes, stream=s) for _ in range(3))
    hx = cc.Buffer.from_handle(x.ctypes.data, nbytes, owner=x)
    hy = cc.Buffer.from_handle(y.ctypes.data, nbytes, owner=y)
    ho = cc.Buffer.from_handle(hout.ctypes.data, nbytes, owner=hout)
    dx.copy_from(hx, stream=s)
    dy.copy_from(hy, stream=s)
    cfg = cc.LaunchConfig(grid=bl.SAXPY_BLOCKS, block=bl.SAXPY_THREADS)
    args = (np.float32(2.0), dx, dy, dout, np.uint64(bl.SAXPY_N))
    timing = timing_options()
    e0 = s.record(options=timing)
    cc.launch(s, cfg, k, *args)
    e1 = s.record(options=timing)
    dout.copy_to(ho, stream=s)
    s.sync()
    first = e1 - e0

    def kernel_ms() -> float:
        # Untimed: keeps the stream busy while the timed launch is enqueued.
        cc.launch(s, cfg, k, *args)
        a = s.record(options=timing)
        cc.launch(s, cfg, k, *args)
        b = s.record(options=timing)
        b.sync()
        return b - a

    bl.report_saxpy(out, t0, 2.0, x, y, hout, "none", kernel_ms, first, ns)


def main() -> int:
    ns = bl.parse_args()
    if ns.mode == "cpu":
        out.skip("compile_nvrtc", "peers are timed in GPU mode only")
        return 0
    if ns.mode == "instructions":
        raise SystemExit("cuda_core: no instructions mode (bench_high.py counts cuda_core/N)")
    if ns.mode == "saxpy":
        try:
            saxpy(ns)
        except Exception as exc:
            out.error("saxpy_app", exc)
            return 1
        return 0
    if ns.mode == "paired":
        try:
            paired(ns)
        except Exception as exc:
            out.error("init", exc)
            return 1
        return 0
    try:
        c = CudaCore(ns)
        c.info()
    except Exception as exc:
        out.error("init", exc)
        return 1
    if bl.wanted(ns, "launch") or bl.wanted(ns, "graph"):
        out.guard("launch_2args", c.launch_and_graph)
    if bl.wanted(ns, "copy"):
        out.guard("copy_h2d_pageable", c.copies)
    if bl.wanted(ns, "compile"):
        out.guard("compile_nvrtc", c.compile_figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
