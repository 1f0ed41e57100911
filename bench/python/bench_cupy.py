"""The peer CuPy, through ``RawModule``: kernels launched as
``kernel(grid, block, args)`` on the current stream, with NumPy scalars and
CuPy arrays as arguments; graphs by stream capture; copies by
``ndarray.set``/``get`` from pageable and pinned (``cupyx.empty_pinned``)
NumPy arrays. ``$CUPY_CACHE_DIR`` is CuPy's on-disk kernel cache.

``paired`` mode (bench/README.md, "Paired figures"): series ``c_ref`` (the
reference library's raw C launches on CuPy's stream, in the primary context
CuPy uses) and ``launch`` (``RawKernel(grid, block, args)`` on that stream,
the headline); copies ``c_ref`` and ``copy`` (``ndarray.set`` / ``get`` and
synchronize).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib as bl  # noqa: E402
import numpy as np  # noqa: E402

out = bl.Out("cupy")


def figures(ns) -> None:
    import cupy as cp
    import cupyx

    dev = cp.cuda.Device(0)
    dev.use()
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    out.info(
        device=name.decode() if isinstance(name, bytes) else str(name),
        cc=f"{props['major']}.{props['minor']}",
        version=cp.__version__,
    )
    s = cp.cuda.Stream(non_blocking=False)
    sync = s.synchronize

    if bl.wanted(ns, "launch") or bl.wanted(ns, "graph"):
        mod = cp.RawModule(code=bl.EMPTY_SOURCE)
        buf = cp.empty(64, dtype=cp.float32)
        for bench, fname, args in (
            ("launch_2args", "empty2", (np.float32(2.0), buf)),
            ("launch_16args", "empty16", tuple(bl.args16(buf, np.float32, np.int32, np.uint64))),
        ):
            if not bl.wanted(ns, "launch"):
                break

            def figure() -> None:
                k = mod.get_function(fname)
                with s:
                    samples = bl.launch_bursts(lambda: k((1,), (1,), args), sync, ns)
                out.stats(
                    bench,
                    "us",
                    samples,
                    burst=ns.burst_size,
                    args=len(args),
                    path="RawKernel(grid, block, args) on the current stream",
                )

            out.guard(bench, figure)

        if bl.wanted(ns, "graph"):

            def graph() -> None:
                k = mod.get_function("empty2")
                args = (np.float32(2.0), buf)
                gs = cp.cuda.Stream(non_blocking=True)  # as CuPy's docs capture
                with gs:
                    k((1,), (1,), args)  # first use outside the capture
                    gs.synchronize()
                    gs.begin_capture()
                    try:
                        for _ in range(bl.GRAPH_KERNELS):
                            k((1,), (1,), args)
                    finally:
                        g = gs.end_capture()
                    bl.report_graph(out, lambda: g.launch(gs), gs.synchronize, ns)

            out.guard("graph_replay", graph)

    if bl.wanted(ns, "copy"):

        def copies() -> None:
            d = cp.empty(bl.COPY_BYTES, dtype=cp.uint8)
            pageable = np.ones(bl.COPY_BYTES, dtype=np.uint8)
            pinned = cupyx.empty_pinned(bl.COPY_BYTES, dtype=np.uint8)
            pinned[:] = 1
            for kind, host in (("pageable", pageable), ("pinned", pinned)):

                def h2d(host=host) -> None:
                    d.set(host, stream=s)
                    s.synchronize()

                def d2h(host=host) -> None:
                    d.get(stream=s, out=host)
                    s.synchronize()

                out.guard(
                    f"copy_h2d_{kind}", lambda: bl.copy_rate(out, f"copy_h2d_{kind}", h2d, ns)
                )
                out.guard(
                    f"copy_d2h_{kind}", lambda: bl.copy_rate(out, f"copy_d2h_{kind}", d2h, ns)
                )

        out.guard("copy_h2d_pageable", copies)

    if bl.wanted(ns, "compile"):

        def nvrtc() -> None:
            from cupy.cuda import compiler  # internal entry point; may move

            arch = f"{props['major']}{props['minor']}"
            t = bl.repeat_ms(
                lambda: compiler.compile_using_nvrtc(bl.SAXPY_SOURCE, ("--fmad=false",), arch),
                max(ns.reps // 3, 5),
            )
            out.stats(
                "compile_nvrtc",
                "ms",
                t,
                arch="sm_" + arch,
                path="cupy.cuda.compiler.compile_using_nvrtc",
            )

        out.guard("compile_nvrtc", nvrtc)


_keep: list = []  # what the paired series' arguments need alive


def paired(ns) -> None:
    import cupy as cp
    import cupyx

    dev = cp.cuda.Device(0)
    dev.use()
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    out.info(
        device=name.decode() if isinstance(name, bytes) else str(name),
        cc=f"{props['major']}.{props['minor']}",
        version=cp.__version__,
    )
    s = cp.cuda.Stream(non_blocking=False)
    sync = s.synchronize
    ref: list = []

    def reference() -> bl.Reference:
        if not ref:
            ref.append(bl.Reference())
        return ref[0]

    if bl.wanted(ns, "launch"):
        mod = cp.RawModule(code=bl.EMPTY_SOURCE)
        buf = cp.empty(64, dtype=cp.float32)

        def make(nargs: int):
            r = reference()
            # benchref_load_kernel(0, ...): the current context, the primary
            # one CuPy made current.
            function = r.load_kernel(0, bl.kernel_name(nargs), ns.arch)
            params, keep = bl.ctypes_params(nargs, int(buf.data.ptr))
            _keep.append((params, keep))
            k = mod.get_function(bl.kernel_name(nargs))
            if nargs == 2:
                args = (np.float32(2.0), buf)
            else:
                args = tuple(bl.args16(buf, np.float32, np.int32, np.uint64))
            size = ns.burst_size
            series = [
                ("c_ref", r.burst(function, int(s.ptr), params, size)),
                ("launch", bl.python_burst(lambda: k((1,), (1,), args), size)),
            ]
            return series, sync, "launch", {}

        with s:  # CuPy launches on the current stream
            bl.paired_launch_figures(out, make, ns)

    if bl.wanted(ns, "copy"):

        def copies() -> None:
            r = reference()
            d = cp.empty(bl.COPY_BYTES, dtype=cp.uint8)
            pageable = np.ones(bl.COPY_BYTES, dtype=np.uint8)
            hosts = [("pageable", pageable, pageable.ctypes.data)]
            try:
                pinned = cupyx.empty_pinned(bl.COPY_BYTES, dtype=np.uint8)
                pinned[:] = 1
                hosts.append(("pinned", pinned, pinned.ctypes.data))
            except Exception as exc:
                hosts.append(("pinned", exc, 0))

            def to_device(host):
                def copy() -> None:
                    d.set(host, stream=s)
                    s.synchronize()

                return copy

            def to_host(host):
                def copy() -> None:
                    d.get(stream=s, out=host)
                    s.synchronize()

                return copy

            bl.paired_copy_figures(out, ns, r, int(d.data.ptr), hosts, to_device, to_host,
                                   lambda: None)

        out.guard("paired_copy_to_device_pageable", copies)


def saxpy(ns) -> None:
    import cupy as cp

    hx, hy, hout = bl.saxpy_host_data()
    t0 = bl.perf_ns()
    mod = cp.RawModule(code=bl.SAXPY_SOURCE, options=("--fmad=false",))
    k = mod.get_function("saxpy")
    n = bl.SAXPY_N
    s = cp.cuda.Stream(non_blocking=False)
    dx = cp.empty(n, dtype=cp.float32)
    dy = cp.empty(n, dtype=cp.float32)
    dout = cp.empty(n, dtype=cp.float32)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    args = (np.float32(2.0), dx, dy, dout, np.uint64(n))
    with s:
        dx.set(hx, stream=s)
        dy.set(hy, stream=s)
        start.record(s)
        k((bl.SAXPY_BLOCKS,), (bl.SAXPY_THREADS,), args)
        stop.record(s)
        dout.get(stream=s, out=hout)
        s.synchronize()
    first = cp.cuda.get_elapsed_time(start, stop)

    def kernel_ms() -> float:
        with s:
            # Untimed: keeps the stream busy while the timed launch is enqueued.
            k((bl.SAXPY_BLOCKS,), (bl.SAXPY_THREADS,), args)
            start.record(s)
            k((bl.SAXPY_BLOCKS,), (bl.SAXPY_THREADS,), args)
            stop.record(s)
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop)

    bl.report_saxpy(out, t0, 2.0, hx, hy, hout, "cupy", kernel_ms, first, ns)


def main() -> int:
    ns = bl.parse_args()
    if ns.mode == "cpu":
        out.skip("compile_nvrtc", "peers are timed in GPU mode only")
        return 0
    if ns.mode == "instructions":
        raise SystemExit("cupy: no instructions mode")
    try:
        if ns.mode == "saxpy":
            saxpy(ns)
        elif ns.mode == "paired":
            paired(ns)
        else:
            figures(ns)
    except Exception as exc:
        out.error("saxpy_app" if ns.mode == "saxpy" else "init", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
