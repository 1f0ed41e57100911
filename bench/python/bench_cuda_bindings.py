"""The peer cuda.bindings (the driver API and NVRTC one to one, the library
of NVIDIA's CUDA Python overview), used the overview's way: every call's
result checked, kernel arguments as a NumPy array of pointers to NumPy
values built once (its "Using NumPy" way), ``cuLaunchKernel`` per launch.

Two departures from the overview, the same for every implementation here:
the device's primary context (as cuabi, CuPy and the runtime use) instead
of a new one, and ``n`` passed as the ``size_t`` the kernel declares (the
overview passes a 4-byte ``np.uint32``).

``paired`` mode (bench/README.md, "Paired figures"): series ``c_ref`` (the
reference library's raw C launches on the same stream, in the same primary
context) and ``launch`` (its own ``cuLaunchKernel``, the headline); copies
``c_ref`` and ``copy`` (``cuMemcpyHtoD`` / ``cuMemcpyDtoH``).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib as bl  # noqa: E402

try:
    from cuda.bindings import driver, nvrtc
except ImportError:  # cuda-python 11.x / 12.0 layout
    from cuda import cuda as driver, nvrtc  # type: ignore[no-redef]

import numpy as np  # noqa: E402

out = bl.Out("cuda_bindings")


def check(result):
    """The overview's checkCudaErrors: raise on failure, else the values."""
    err = result[0]
    if err:
        if isinstance(err, driver.CUresult):
            _, name = driver.cuGetErrorName(err)
            raise RuntimeError(f"CUDA error {int(err)} ({name.decode() if name else '?'})")
        raise RuntimeError(f"NVRTC error {int(err)} ({nvrtc.nvrtcGetErrorString(err)[1]})")
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


def version() -> str:
    try:
        import cuda.bindings

        return str(cuda.bindings.__version__)
    except Exception:
        return "?"


def context():
    check(driver.cuInit(0))
    dev = check(driver.cuDeviceGet(0))
    ctx = check(driver.cuDevicePrimaryCtxRetain(dev))
    check(driver.cuCtxSetCurrent(ctx))
    attr = driver.CUdevice_attribute
    major = check(
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    )
    minor = check(
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    )
    return dev, major, minor


def compile_image(source: str, arch_option: str, cubin: bool = True) -> bytes:
    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), b"saxpy.cu", 0, [], []))
    try:
        opts = [b"--fmad=false", arch_option.encode()]
        check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts))
        if cubin:
            size = check(nvrtc.nvrtcGetCUBINSize(prog))
            image = b" " * size
            check(nvrtc.nvrtcGetCUBIN(prog, image))
        else:
            size = check(nvrtc.nvrtcGetPTXSize(prog))
            image = b" " * size
            check(nvrtc.nvrtcGetPTX(prog, image))
        return image
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def load(image: bytes):
    data = np.frombuffer(image, dtype=np.uint8)
    return check(driver.cuModuleLoadData(data.ctypes.data))


def figures(ns) -> None:
    dev, major, minor = context()
    out.info(
        device=check(driver.cuDeviceGetName(256, dev)).split(b"\0")[0].decode(),
        cc=f"{major}.{minor}",
        version=version(),
    )
    arch = f"sm_{major}{minor}"
    stream = check(driver.cuStreamCreate(0))
    sync = lambda: check(driver.cuStreamSynchronize(stream))  # noqa: E731
    SUCCESS = driver.CUresult.CUDA_SUCCESS

    if bl.wanted(ns, "launch") or bl.wanted(ns, "graph"):
        module = load(compile_image(bl.EMPTY_SOURCE, f"--gpu-architecture={arch}"))
        dptr = check(driver.cuMemAlloc(256))
        p = np.array([int(dptr)], dtype=np.uint64)
        values16 = bl.args16(p, np.float32, np.int32, np.uint64)
        values16 = [v if isinstance(v, np.ndarray) else np.array(v) for v in values16]
        launch = driver.cuLaunchKernel
        for bench, name, values in (
            ("launch_2args", b"empty2", [np.array(2.0, dtype=np.float32), p]),
            ("launch_16args", b"empty16", values16),
        ):
            if not bl.wanted(ns, "launch"):
                break

            def figure() -> None:
                k = check(driver.cuModuleGetFunction(module, name))
                params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
                ptr = params.ctypes.data

                def once() -> None:
                    err = launch(k, 1, 1, 1, 1, 1, 1, 0, stream, ptr, 0)[0]
                    if err != SUCCESS:
                        check((err,))

                out.stats(
                    bench,
                    "us",
                    bl.launch_bursts(once, sync, ns),
                    burst=ns.burst_size,
                    args=len(values),
                    path="cuLaunchKernel, NumPy kernelParams built once",
                )

            out.guard(bench, figure)

        if bl.wanted(ns, "graph"):

            def graph() -> None:
                k = check(driver.cuModuleGetFunction(module, b"empty2"))
                a = np.array(2.0, dtype=np.float32)
                params = np.array([a.ctypes.data, p.ctypes.data], dtype=np.uint64)
                check(launch(k, 1, 1, 1, 1, 1, 1, 0, stream, params.ctypes.data, 0))
                sync()  # first use outside the capture
                mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL
                check(driver.cuStreamBeginCapture(stream, mode))
                for _ in range(bl.GRAPH_KERNELS):
                    check(launch(k, 1, 1, 1, 1, 1, 1, 0, stream, params.ctypes.data, 0))
                g = check(driver.cuStreamEndCapture(stream))
                exe = check(driver.cuGraphInstantiate(g, 0))
                run = driver.cuGraphLaunch

                def replay() -> None:
                    err = run(exe, stream)[0]
                    if err != SUCCESS:
                        check((err,))

                bl.report_graph(out, replay, sync, ns)

            out.guard("graph_replay", graph)

    if bl.wanted(ns, "copy"):

        def copies() -> None:
            n = bl.COPY_BYTES
            dptr = check(driver.cuMemAlloc(n))
            host = np.ones(n, dtype=np.uint8)
            pinned = check(driver.cuMemHostAlloc(n, 0))
            import ctypes

            ctypes.memset(int(pinned), 1, n)
            for kind, address in (("pageable", host.ctypes.data), ("pinned", int(pinned))):
                out.guard(
                    f"copy_h2d_{kind}",
                    lambda: bl.copy_rate(
                        out,
                        f"copy_h2d_{kind}",
                        lambda: check(driver.cuMemcpyHtoD(dptr, address, n)),
                        ns,
                    ),
                )
                out.guard(
                    f"copy_d2h_{kind}",
                    lambda: bl.copy_rate(
                        out,
                        f"copy_d2h_{kind}",
                        lambda: check(driver.cuMemcpyDtoH(address, dptr, n)),
                        ns,
                    ),
                )
            check(driver.cuMemFreeHost(pinned))
            check(driver.cuMemFree(dptr))

        out.guard("copy_h2d_pageable", copies)

    if bl.wanted(ns, "compile"):

        def nvrtc_figure() -> None:
            t = bl.repeat_ms(
                lambda: compile_image(bl.SAXPY_SOURCE, f"--gpu-architecture={arch}"),
                max(ns.reps // 3, 5),
            )
            out.stats("compile_nvrtc", "ms", t, arch=arch)

        out.guard("compile_nvrtc", nvrtc_figure)
        out.skip("compile_cache_hit", "cuda.bindings has no compile cache")
        for bench, cubin in (("load_cubin", True), ("load_ptx", False)):

            def load_figure(bench=bench, cubin=cubin) -> None:
                target = arch if cubin else "compute_" + arch[3:]
                image = compile_image(bl.SAXPY_SOURCE, f"--gpu-architecture={target}", cubin)
                data = np.frombuffer(image, dtype=np.uint8)

                def once() -> None:
                    m = check(driver.cuModuleLoadData(data.ctypes.data))
                    check(driver.cuModuleUnload(m))

                out.stats(bench, "ms", bl.repeat_ms(once, max(ns.reps // 3, 10)))

            out.guard(bench, load_figure)


_keep: list = []  # what the paired series' arguments need alive


def paired(ns) -> None:
    dev, major, minor = context()
    out.info(
        device=check(driver.cuDeviceGetName(256, dev)).split(b"\0")[0].decode(),
        cc=f"{major}.{minor}",
        version=version(),
    )
    arch = f"sm_{major}{minor}"
    stream = check(driver.cuStreamCreate(0))
    raw_stream = int(stream)
    sync = lambda: check(driver.cuStreamSynchronize(stream))  # noqa: E731
    SUCCESS = driver.CUresult.CUDA_SUCCESS
    ref: list = []

    def reference() -> bl.Reference:
        if not ref:
            ref.append(bl.Reference())
        return ref[0]

    if bl.wanted(ns, "launch"):
        module = load(compile_image(bl.EMPTY_SOURCE, f"--gpu-architecture={arch}"))
        dptr = check(driver.cuMemAlloc(256))
        p = np.array([int(dptr)], dtype=np.uint64)
        launch = driver.cuLaunchKernel

        def make(nargs: int):
            r = reference()
            function = r.load_kernel(0, bl.kernel_name(nargs), ns.arch)
            params, keep = bl.ctypes_params(nargs, int(dptr))
            if nargs == 2:
                values = [np.array(2.0, dtype=np.float32), p]
            else:
                values = bl.args16(p, np.float32, np.int32, np.uint64)
                values = [v if isinstance(v, np.ndarray) else np.array(v) for v in values]
            k = check(driver.cuModuleGetFunction(module, bl.kernel_name(nargs).encode()))
            kparams = np.array([v.ctypes.data for v in values], dtype=np.uint64)
            ptr = kparams.ctypes.data
            _keep.append((params, keep, values, kparams))

            def once() -> None:
                err = launch(k, 1, 1, 1, 1, 1, 1, 0, stream, ptr, 0)[0]
                if err != SUCCESS:
                    check((err,))

            size = ns.burst_size
            series = [
                ("c_ref", r.burst(function, raw_stream, params, size)),
                ("launch", bl.python_burst(once, size)),
            ]
            return series, sync, "launch", {}

        bl.paired_launch_figures(out, make, ns)

    if bl.wanted(ns, "copy"):

        def copies() -> None:
            import ctypes

            r = reference()
            n = bl.COPY_BYTES
            dptr = check(driver.cuMemAlloc(n))
            host = np.ones(n, dtype=np.uint8)
            hosts = [("pageable", host.ctypes.data, host.ctypes.data)]
            try:
                pinned = check(driver.cuMemHostAlloc(n, 0))
                ctypes.memset(int(pinned), 1, n)
                hosts.append(("pinned", int(pinned), int(pinned)))
            except Exception as exc:
                pinned = None
                hosts.append(("pinned", exc, 0))
            bl.paired_copy_figures(
                out, ns, r, int(dptr), hosts,
                lambda a: (lambda: check(driver.cuMemcpyHtoD(dptr, a, n))),
                lambda a: (lambda: check(driver.cuMemcpyDtoH(a, dptr, n))),
                lambda: None,
            )
            if pinned is not None:
                check(driver.cuMemFreeHost(pinned))
            check(driver.cuMemFree(dptr))

        out.guard("paired_copy_to_device_pageable", copies)


def saxpy(ns) -> None:
    hx, hy, hout = bl.saxpy_host_data()
    t0 = bl.perf_ns()
    dev, major, minor = context()
    image = compile_image(bl.SAXPY_SOURCE, f"--gpu-architecture=sm_{major}{minor}")
    module = load(image)
    kernel = check(driver.cuModuleGetFunction(module, b"saxpy"))
    a = np.array([2.0], dtype=np.float32)
    n = np.array(bl.SAXPY_N, dtype=np.uint64)
    size = hx.nbytes
    dX, dY, dOut = (check(driver.cuMemAlloc(size)) for _ in range(3))
    stream = check(driver.cuStreamCreate(0))
    start = check(driver.cuEventCreate(0))
    stop = check(driver.cuEventCreate(0))
    check(driver.cuMemcpyHtoDAsync(dX, hx.ctypes.data, size, stream))
    check(driver.cuMemcpyHtoDAsync(dY, hy.ctypes.data, size, stream))
    ptrs = [np.array([int(d)], dtype=np.uint64) for d in (dX, dY, dOut)]
    args = np.array([v.ctypes.data for v in (a, *ptrs, n)], dtype=np.uint64)

    def launch() -> None:
        check(
            driver.cuLaunchKernel(
                kernel,
                bl.SAXPY_BLOCKS,
                1,
                1,
                bl.SAXPY_THREADS,
                1,
                1,
                0,
                stream,
                args.ctypes.data,
                0,
            )
        )

    def run() -> None:
        check(driver.cuEventRecord(start, stream))
        launch()
        check(driver.cuEventRecord(stop, stream))

    run()
    check(driver.cuMemcpyDtoHAsync(hout.ctypes.data, dOut, size, stream))
    check(driver.cuStreamSynchronize(stream))
    first = check(driver.cuEventElapsedTime(start, stop))

    def kernel_ms() -> float:
        launch()  # untimed: keeps the stream busy while the timed launch is enqueued
        run()
        check(driver.cuStreamSynchronize(stream))
        return check(driver.cuEventElapsedTime(start, stop))

    bl.report_saxpy(out, t0, 2.0, hx, hy, hout, "none", kernel_ms, first, ns)


def main() -> int:
    ns = bl.parse_args()
    if ns.mode == "cpu":
        out.skip("compile_nvrtc", "peers are timed in GPU mode only")
        return 0
    if ns.mode == "instructions":
        raise SystemExit("cuda_bindings: no instructions mode")
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
