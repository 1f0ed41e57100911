"""Two launch features side by side with cuda.core, in one process,
alternating in rounds.

Graph update: replaying a captured SAXPY with a new ``a`` each time:

  cuabi update      GraphExec.set_kernel_node_args + launch (no new graph)
  cuabi recapture   capture + instantiate + launch
  cuda.core update  capture into a GraphBuilder + Graph.update + launch
  cuda.core recapture  capture into a GraphBuilder + complete + launch

Each iteration ends with a stream synchronize; the last result of every way
is checked against NumPy.

PDL: a producer/consumer kernel pair, the consumer launched plainly or with
programmatic dependent launch (cuabi's ``programmatic=True``, cuda.core's
``programmatic_stream_serialization``), the pairs queued back to back and
synchronized at the end; the consumer's output is checked.

Prints a table of the median microseconds per iteration. cuda.core's rows are left out, with the reason, where it is not
importable. Exit 2 without a device.

    python3 bench/python/bench_graph_update.py [--rounds N] [--iters N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import cuabi

SAXPY = """\
extern "C" __global__
void saxpy(float a, const float* x, const float* y, float* out, unsigned long long n)
{
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
"""
PDL = """\
extern "C" __global__ void produce(float* data, unsigned long long n, int work)
{
  asm volatile("griddepcontrol.launch_dependents;");
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  float v = (float)i;
  for (int k = 0; k < work; ++k) v = v * 0.999f + 1.0f;
  if (i < n) data[i] = v;
}
extern "C" __global__ void consume(const float* data, float* out, unsigned long long n, int work)
{
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  float w = 1.0f;
  for (int k = 0; k < work; ++k) w = w * 0.999f + 0.5f;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (i < n) out[i] = data[i] + w;
}
"""
PDL_BLOCKS, PDL_THREADS, PDL_WORK = 64, 128, 4000
PDL_N = PDL_BLOCKS * PDL_THREADS
N = 1 << 20
THREADS = 256
PDL_PAIRS = 20
BLOCKS = (N + THREADS - 1) // THREADS


def check(out: np.ndarray, a: float, x: np.ndarray, y: np.ndarray, who: str) -> None:
    want = np.float32(a) * x + y
    if not np.allclose(out, want, rtol=1e-5, atol=1e-5):
        raise SystemExit(f"bench_graph_update: {who} computed a wrong result")


def pdl_expected() -> np.ndarray:
    """What consume writes, computed on the host in float32."""
    v = np.arange(PDL_N, dtype=np.float32)
    w = np.float32(1.0)
    for _ in range(PDL_WORK):
        v = v * np.float32(0.999) + np.float32(1.0)
        w = w * np.float32(0.999) + np.float32(0.5)
    return v + w


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--iters", type=int, default=50)
    ns = p.parse_args()
    try:
        dev = cuabi.Device(0)
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"bench_graph_update: no CUDA device ({exc})", file=sys.stderr)
        return 2
    x = np.random.rand(N).astype(np.float32)
    y = np.random.rand(N).astype(np.float32)
    saxpy = dev.compile(SAXPY).get_kernel("saxpy")
    ways = {}
    last = {}

    with dev.create_stream() as s:
        dx, dy, dout = dev.to_device(x, s), dev.to_device(y, s), dev.empty(N, np.float32)
        s.synchronize()

        def args(a: float):
            return (np.float32(a), dx, dy, dout, np.uint64(N))

        with s.capture() as cap:
            saxpy(BLOCKS, THREADS, args(1.0), stream=s)
        exec_ = cap.graph.instantiate()
        exec_.upload(s)

        def cuabi_update(a: float) -> None:
            exec_.set_kernel_node_args(0, saxpy, args(a))
            exec_.launch(s)
            s.synchronize()

        def cuabi_recapture(a: float) -> None:
            with s.capture() as c:
                saxpy(BLOCKS, THREADS, args(a), stream=s)
            with c.graph, c.graph.instantiate() as e:
                e.launch(s)
                s.synchronize()

        def cuabi_result() -> np.ndarray:
            host = np.empty(N, np.float32)
            dout.copy_to_host(host)
            return host

        ways["cuabi: set_kernel_node_args + launch"] = (cuabi_update, cuabi_result)
        ways["cuabi: capture + instantiate + launch"] = (cuabi_recapture, cuabi_result)

        cc_note = ""
        cc_cfgs = None
        try:
            try:
                import cuda.core as cc

                cc.launch  # noqa: B018
            except (ImportError, AttributeError):
                import cuda.core.experimental as cc  # type: ignore[no-redef]
            cdev = cc.Device(0)
            cdev.set_current()
            prog = cc.Program(SAXPY, code_type="c++", options=cc.ProgramOptions(arch=f"sm_{cdev.arch}"))
            ck = prog.compile("cubin").get_kernel("saxpy")
            cs = cdev.create_stream()
            cx, cy = cdev.allocate(N * 4, stream=cs), cdev.allocate(N * 4, stream=cs)
            cout = cdev.allocate(N * 4, stream=cs)
            # Inputs through cuabi's view of the same device memory.
            for buf, host in ((cx, x), (cy, y)):
                dev.wrap_buffer(int(buf.handle), N * 4).copy_from_host(host)
            cfg = cc.LaunchConfig(grid=BLOCKS, block=THREADS)

            def cargs(a: float):
                return (np.float32(a), cx, cy, cout, np.uint64(N))

            def build(a: float):
                gb = cs.create_graph_builder()
                gb.begin_building("thread_local")
                cc.launch(gb, cfg, ck, *cargs(a))
                gb.end_building()
                return gb

            graph = build(1.0).complete()

            def cc_update(a: float) -> None:
                graph.update(build(a))
                graph.launch(cs)
                cs.sync()

            def cc_recapture(a: float) -> None:
                g = build(a).complete()
                g.launch(cs)
                cs.sync()
                g.close()

            def cc_result() -> np.ndarray:
                host = np.empty(N, np.float32)
                dev.wrap_buffer(int(cout.handle), N * 4).copy_to_host(host)
                return host

            ways["cuda.core: capture + Graph.update + launch"] = (cc_update, cc_result)
            ways["cuda.core: capture + complete + launch"] = (cc_recapture, cc_result)
            pprog = cc.Program(PDL, code_type="c++", options=cc.ProgramOptions(arch=f"sm_{cdev.arch}"))
            pobj = pprog.compile("cubin")
            cprod, ccons = pobj.get_kernel("produce"), pobj.get_kernel("consume")
            cplain = cc.LaunchConfig(grid=PDL_BLOCKS, block=PDL_THREADS)
            cpdl = cc.LaunchConfig(
                grid=PDL_BLOCKS, block=PDL_THREADS, programmatic_stream_serialization=True
            )
            cc_cfgs = (
                cplain,
                cpdl,
                cprod,
                cdev.allocate(PDL_N * 4, stream=cs),
                cdev.allocate(PDL_N * 4, stream=cs),
            )
        except Exception as exc:  # reported, the cuabi rows still run
            cc_note = f"cuda.core left out: {type(exc).__name__}: {exc}\n"

        # --- PDL pairs -------------------------------------------------------
        pmod = dev.compile(PDL)
        produce, consume = pmod.get_kernel("produce"), pmod.get_kernel("consume")
        pdata, pout = dev.empty(PDL_N, np.float32), dev.empty(PDL_N, np.float32)
        pn, pw = np.uint64(PDL_N), np.int32(PDL_WORK)
        plain_c = consume.prepare(PDL_BLOCKS, PDL_THREADS, stream=s)
        pdl_c = consume.prepare(PDL_BLOCKS, PDL_THREADS, stream=s, programmatic=True)
        prod = produce.prepare(PDL_BLOCKS, PDL_THREADS, stream=s)

        def pairs(consumer):
            def run(a: float) -> None:
                for _ in range(PDL_PAIRS):
                    prod(pdata, pn, pw)
                    consumer(pdata, pout, pn, pw)
                s.synchronize()
            return run

        def pdl_result() -> np.ndarray:
            host = np.empty(PDL_N, np.float32)
            pout.copy_to_host(host)
            return host

        pdl_ways = {
            "cuabi: 20 producer + consumer pairs, plain": (pairs(plain_c), pdl_result),
            "cuabi: 20 producer + consumer pairs, PDL": (pairs(pdl_c), pdl_result),
        }
        if cc_cfgs is not None:
            cplain, cpdl, cprod, cpdata, cpout = cc_cfgs

            def cc_pairs(cfg2):
                def run(a: float) -> None:
                    for _ in range(PDL_PAIRS):
                        cc.launch(cs, cplain, cprod, cpdata, pn, pw)
                        cc.launch(cs, cfg2, ccons, cpdata, cpout, pn, pw)
                    cs.sync()
                return run

            def cc_pdl_result() -> np.ndarray:
                host = np.empty(PDL_N, np.float32)
                dev.wrap_buffer(int(cpout.handle), PDL_N * 4).copy_to_host(host)
                return host

            pdl_ways["cuda.core: 20 producer + consumer pairs, plain"] = (cc_pairs(cplain), cc_pdl_result)
            pdl_ways["cuda.core: 20 producer + consumer pairs, PDL"] = (cc_pairs(cpdl), cc_pdl_result)
        ways.update(pdl_ways)

        for name, (fn, _) in list(ways.items()):  # warm up; a peer that fails is left out
            try:
                fn(0.5)
            except Exception as exc:
                if not name.startswith("cuda.core"):
                    raise
                del ways[name]
                cc_note += f"{name} left out: {type(exc).__name__}: {exc}\n"
        times: dict = {name: [] for name in ways}
        a = 0.0
        for r in range(ns.rounds):
            for name, (fn, result) in ways.items():
                t0 = time.perf_counter()
                for k in range(ns.iters):
                    a = float(r * ns.iters + k) * 0.25
                    fn(a)
                times[name].append((time.perf_counter() - t0) / ns.iters * 1e6)
                last[name] = a
        want_pdl = pdl_expected()
        for name, (_, result) in ways.items():
            if name in pdl_ways:
                if not np.allclose(result(), want_pdl, rtol=1e-4, atol=1e-2):
                    raise SystemExit(f"bench_graph_update: {name} computed a wrong result")
            else:
                check(result(), last[name], x, y, name)

    print(f"| way | us per iteration (median of {ns.rounds} rounds of {ns.iters}) |")
    print("|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.2f} |")
    if cc_note:
        print(cc_note.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
