"""nccl_allreduce.py: nccl_allreduce.c in Python, NCCL through ctypes.

One process per GPU: the script started by the user is the launcher; it
starts one rank per GPU with subprocess (``python3 nccl_allreduce.py --rank
R ...``: a fresh interpreter, never a fork), passes the NCCL unique id from
rank 0 (a pipe) to the others (their standard input, which then stays open
as the launcher's control channel), and watches them with a deadline.

Each rank: ``cuabi.Device(rank)``, a buffer filled by a cuabi kernel with
(rank + 1) * (i % 251), ncclAllReduce (sum, float32, in place) on the
buffer's raw pointer and the cuabi stream's raw CUstream, a cuabi kernel
scaling by 1 / nranks, the result checked with NumPy; then 20 timed
all-reduces after 5 warm-ups, and rank 0 prints algbw (bytes / time) and
busbw (algbw * 2 (n - 1) / n), as nccl-tests defines them.

Every wait polls the stream, ncclCommGetAsyncError, the control channel and
a deadline; on a failure it calls ncclCommAbort and exits 4 (a peer failed)
or 5 (deadline). ``--fault-rank K`` makes rank K fail right after the
communicator is made (``--fault-kind address``: a kernel writing to an
illegal address; ``exit``: os.abort()); the launcher reports it and exits 4.

    python3 nccl_allreduce.py [--ranks N] [--mib M] [--iters I] [--warmup W]
                              [--timeout S] [--deadline S] [--fault-rank K]
                              [--fault-kind address|exit]

libnccl.so.2 is looked for as: $CUABI_NCCL_PATH, then the lib folder of the
``nvidia.nccl`` package (pip's nvidia-nccl-cu13) when importable, then
"libnccl.so.2" through the loader. NCCL_NVLS_ENABLE=0 is set before NCCL is
loaded, for every rank: NVLink multicast is never asked for.

Started by another launcher (torchrun, mpirun, srun), it starts nobody:
its rank, size and GPU (the local rank) come from that launcher's
environment, as in nccl_allreduce.c. Under mpirun, where mpi4py imports,
rank 0 hands the NCCL unique id to the others with MPI's broadcast;
otherwise over TCP at MASTER_ADDR (default 127.0.0.1), port
CUABI_NCCL_ID_PORT (default MASTER_PORT + 1, since torchrun's own store
listens on MASTER_PORT; 29501 when neither is set).

Exit status: 0 verified (or one device: "needs two devices, found 1"),
1 failure, 2 NCCL could not be loaded, 3 no CUDA device, 4 a rank failed,
5 the deadline passed.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from typing import List, Optional, Tuple

os.environ["NCCL_NVLS_ENABLE"] = "0"  # before NCCL is loaded; inherited by the ranks

import numpy as np  # noqa: E402

import cuabi  # noqa: E402

PROG = "nccl_allreduce.py"
EXIT_OK, EXIT_FAILED, EXIT_NO_NCCL, EXIT_NO_DEVICE = 0, 1, 2, 3
EXIT_PEER_FAILED, EXIT_TIMEOUT, EXIT_PLANTED_FAULT = 4, 5, 6

NCCL_SUCCESS, NCCL_IN_PROGRESS = 0, 7
NCCL_FLOAT32, NCCL_SUM = 7, 0

SOURCE = r"""
extern "C" __global__ void fill(float* x, size_t n, int rank) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = (float)((rank + 1) * (int)(i % 251));
}
extern "C" __global__ void scale(float* x, size_t n, float s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = x[i] * s;
}
"""
BLOCKS, THREADS = 4096, 256


# ---------------------------------------------------------------------------
# NCCL through ctypes (no nccl.h, no binding)
# ---------------------------------------------------------------------------


class UniqueId(ctypes.Structure):
    """ncclUniqueId: 128 opaque bytes."""

    _fields_ = [("internal", ctypes.c_char * 128)]


def nccl_candidates() -> List[str]:
    """Where libnccl.so.2 is looked for, in order."""
    found: List[str] = []
    env = os.environ.get("CUABI_NCCL_PATH")
    if env:
        found.append(env)
    try:
        import nvidia.nccl  # type: ignore[import-not-found]

        for base in list(getattr(nvidia.nccl, "__path__", [])):
            found += sorted(glob.glob(os.path.join(base, "lib", "libnccl.so*")), reverse=True)
    except ImportError:
        pass
    found.append("libnccl.so.2")
    return found


class Nccl:
    """The NCCL entry points this program uses."""

    def __init__(self) -> None:
        tried = []
        lib = None
        for path in nccl_candidates():
            try:
                lib = ctypes.CDLL(path)
                self.path = path
                break
            except OSError as exc:
                tried.append(f"  {path}: {exc}")
        if lib is None:
            raise OSError(
                "NCCL could not be loaded. Tried:\n" + "\n".join(tried) + "\nInstall NCCL "
                "(pip install nvidia-nccl-cu13, or libnccl.so.2 on the loader's path), or set "
                "CUABI_NCCL_PATH to the full path of libnccl.so.2."
            )
        self.lib = lib
        c_int, c_void_p, c_size_t = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
        self._fn("ncclGetVersion", [ctypes.POINTER(c_int)])
        self._fn("ncclGetUniqueId", [ctypes.POINTER(UniqueId)])
        self._fn("ncclCommInitRank", [ctypes.POINTER(c_void_p), c_int, UniqueId, c_int])
        self._fn("ncclAllReduce", [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p])
        self._fn("ncclCommGetAsyncError", [c_void_p, ctypes.POINTER(c_int)])
        self._fn("ncclCommAbort", [c_void_p])
        self._fn("ncclCommDestroy", [c_void_p])
        self._fn("ncclGetErrorString", [c_int], ctypes.c_char_p)
        self.finalize = self._fn("ncclCommFinalize", [c_void_p], optional=True)
        self.last_error = self._fn("ncclGetLastError", [c_void_p], ctypes.c_char_p, optional=True)
        v = c_int(0)
        self.version = v.value if lib.ncclGetVersion(ctypes.byref(v)) == NCCL_SUCCESS else 0
        self.version_text = (
            f"{self.version // 10000}.{self.version % 10000 // 100}.{self.version % 100}"
        )
        try:  # where the loader actually found it
            with open("/proc/self/maps") as maps:
                for line in maps:
                    if "libnccl.so" in line and "/" in line:
                        self.path = line[line.index("/"):].strip()
                        break
        except OSError:
            pass

    def _fn(self, name: str, argtypes, restype=ctypes.c_int, optional: bool = False):
        try:
            fn = getattr(self.lib, name)
        except AttributeError:
            if optional:
                return None
            raise OSError(f"the NCCL library at {self.path} has no {name}") from None
        fn.argtypes = argtypes
        fn.restype = restype
        return fn

    def error(self, result: int) -> str:
        text = self.lib.ncclGetErrorString(result)
        return text.decode() if text else f"NCCL error {result}"


def load_nccl() -> Optional[Nccl]:
    try:
        return Nccl()
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return None


# ---------------------------------------------------------------------------
# A rank
# ---------------------------------------------------------------------------


class Rank:
    def __init__(self, args: argparse.Namespace, nccl: Nccl) -> None:
        self.args = args
        self.nccl = nccl
        self.comm = ctypes.c_void_p()
        self.stream: Optional[cuabi.Stream] = None

    def say(self, text: str, err: bool = False) -> None:
        print(f"[rank {self.args.rank}] {text}", file=sys.stderr if err else sys.stdout, flush=True)

    def abort_and_exit(self, code: int) -> None:
        t0 = time.monotonic()
        r = self.nccl.lib.ncclCommAbort(self.comm)
        self.say(f"ncclCommAbort: {self.nccl.error(r)} ({time.monotonic() - t0:.2f} s); "
                 f"exiting with status {code}")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def wait_stream(self, what: str) -> None:
        """Waits for the stream without blocking: polls it, NCCL's async
        error, the launcher's control channel and the deadline."""
        assert self.stream is not None
        deadline = time.monotonic() + self.args.timeout
        status = ctypes.c_int(0)
        while True:
            try:
                if self.stream.query():
                    return
            except cuabi.CudaError as exc:
                self.say(f"waiting for {what}: {exc}", err=True)
                self.abort_and_exit(EXIT_FAILED)
            r = self.nccl.lib.ncclCommGetAsyncError(self.comm, ctypes.byref(status))
            if r != NCCL_SUCCESS or status.value not in (NCCL_SUCCESS, NCCL_IN_PROGRESS):
                detail = self.nccl.last_error(self.comm) if self.nccl.last_error else b""
                self.say(f"NCCL reports an error while waiting for {what}: "
                         f"{self.nccl.error(r if r != NCCL_SUCCESS else status.value)}"
                         f"{': ' + detail.decode() if detail else ''}", err=True)
                self.abort_and_exit(EXIT_PEER_FAILED)
            if not self.args.external and select.select([0], [], [], 0)[0]:
                data = os.read(0, 4)
                if len(data) == 4:
                    self.say(f"the launcher reports that rank {struct.unpack('<i', data)[0]} "
                             f"failed; aborting the communicator while waiting for {what}",
                             err=True)
                else:
                    self.say(f"the launcher's control channel closed; aborting the "
                             f"communicator while waiting for {what}", err=True)
                self.abort_and_exit(EXIT_PEER_FAILED)
            if time.monotonic() > deadline:
                self.say(f"{what} did not finish within {self.args.timeout} s; aborting the "
                         f"communicator", err=True)
                self.abort_and_exit(EXIT_TIMEOUT)
            time.sleep(0.001)

    def run(self) -> int:
        args, nccl, rank, n = self.args, self.nccl, self.args.rank, self.args.nranks
        dev = cuabi.Device(args.device if args.device is not None else rank)
        dev.synchronize()  # this device's primary context current on this thread, for NCCL
        uid = UniqueId()
        if rank == 0:
            r = nccl.lib.ncclGetUniqueId(ctypes.byref(uid))
            if r != NCCL_SUCCESS:
                self.say(f"ncclGetUniqueId: {nccl.error(r)}", err=True)
                return EXIT_FAILED
        if args.external:
            data = exchange_id(args, bytes(uid))
            if data is None:
                return EXIT_FAILED
            ctypes.memmove(ctypes.byref(uid), data, 128)
        elif rank == 0:
            os.write(args.id_fd, bytes(uid))
            os.close(args.id_fd)

        module = dev.compile(SOURCE, options=["--fmad=false"], name="nccl_allreduce.cu")
        fill, scale = module.get_kernel("fill"), module.get_kernel("scale")
        self.stream = stream = dev.create_stream(non_blocking=True)
        count = (args.mib << 20) // 4
        buf = dev.empty(count, np.float32)

        if rank != 0 and not args.external:
            data = read_exact(0, 128, time.monotonic() + args.timeout)
            if data is None:
                self.say(f"did not get the NCCL unique id from the launcher within "
                         f"{args.timeout} s", err=True)
                return EXIT_FAILED
            ctypes.memmove(ctypes.byref(uid), data, 128)
        dev.synchronize()
        r = nccl.lib.ncclCommInitRank(ctypes.byref(self.comm), n, uid, rank)
        if r != NCCL_SUCCESS:
            self.say(f"ncclCommInitRank: {nccl.error(r)}", err=True)
            return EXIT_FAILED
        self.say(f"GPU {dev.ordinal} ({dev.name}): communicator of {n} rank{'s' if n != 1 else ''} "
                 f"ready (NCCL {nccl.version_text})"
                 f"{', started by the job' + chr(39) + 's launcher' if args.external else ''}")

        fill(BLOCKS, THREADS, (buf, np.uint64(count), np.int32(rank)), stream=stream)
        if rank == args.fault_rank:
            if args.fault_kind == "exit":
                self.say("fault mode: ending this process with os.abort() instead of joining "
                         "the all-reduce")
                os.abort()
            scale(BLOCKS, THREADS, (np.uint64(16), np.uint64(count), np.float32(1.0)),
                  stream=stream)
            self.say("fault mode: launched a kernel that writes to an illegal address")
            deadline = time.monotonic() + args.timeout
            try:
                while not stream.query() and time.monotonic() < deadline:
                    time.sleep(0.001)
                self.say("the planted fault did not show", err=True)
            except cuabi.CudaError as exc:
                self.say(f"the planted fault: {exc}", err=True)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_PLANTED_FAULT)

        ptr, raw = ctypes.c_void_p(buf.ptr), ctypes.c_void_p(stream.ptr)
        r = nccl.lib.ncclAllReduce(ptr, ptr, count, NCCL_FLOAT32, NCCL_SUM, self.comm, raw)
        if r != NCCL_SUCCESS:
            self.say(f"ncclAllReduce: {nccl.error(r)}", err=True)
            self.abort_and_exit(EXIT_FAILED)
        inv = np.float32(1.0) / np.float32(n)
        scale(BLOCKS, THREADS, (buf, np.uint64(count), inv), stream=stream)
        self.wait_stream("the all-reduce and the scale kernel")
        got = buf.copy_to_host()
        tri = n * (n + 1) // 2
        want = (tri * (np.arange(count, dtype=np.int64) % 251)).astype(np.float32) * inv
        if not np.allclose(got, want, rtol=1e-6, atol=0):
            bad = int(np.count_nonzero(~np.isclose(got, want, rtol=1e-6, atol=0)))
            self.say(f"{bad} of {count} values are wrong", err=True)
            self.abort_and_exit(EXIT_FAILED)
        self.say(f"all-reduce + scale verified ({count} floats)")

        buf.memset(0, stream=stream)
        start, stop = dev.create_event(), dev.create_event()
        for i in range(args.warmup + args.iters):
            if i == args.warmup:
                start.record(stream)
            r = nccl.lib.ncclAllReduce(ptr, ptr, count, NCCL_FLOAT32, NCCL_SUM, self.comm, raw)
            if r != NCCL_SUCCESS:
                self.say(f"ncclAllReduce: {nccl.error(r)}", err=True)
                self.abort_and_exit(EXIT_FAILED)
        stop.record(stream)
        self.wait_stream("the timed all-reduces")
        seconds = (stop - start) * 1e-3 / args.iters
        if rank == 0:
            nbytes = count * 4
            algbw = nbytes / seconds / 1e9
            busbw = algbw * 2 * (n - 1) / n
            self.say(f"all-reduce (sum, float32) of {args.mib} MiB over {n} "
                     f"rank{'s' if n != 1 else ''}: {args.iters} iterations after {args.warmup} "
                     f"warm-up, {seconds * 1e3:.3f} ms each: algbw {algbw:.2f} GB/s, "
                     f"busbw {busbw:.2f} GB/s")
        if nccl.finalize is not None:
            r = nccl.finalize(self.comm)
            if r != NCCL_SUCCESS:
                self.say(f"ncclCommFinalize: {nccl.error(r)}", err=True)
        r = nccl.lib.ncclCommDestroy(self.comm)
        if r != NCCL_SUCCESS:
            self.say(f"ncclCommDestroy: {nccl.error(r)}", err=True)
            return EXIT_FAILED
        return EXIT_OK


LAUNCHER_ENV = (
    ("RANK", "WORLD_SIZE", "LOCAL_RANK"),  # torchrun
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),  # Open MPI
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),  # MPICH, Intel MPI
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),  # srun
)


def from_launcher_env(args: argparse.Namespace) -> bool:
    """Takes rank, size and GPU from torchrun's, mpirun's or srun's
    environment; False when none of them started this process."""
    for rank_var, size_var, local_var in LAUNCHER_ENV:
        if os.environ.get(rank_var) and os.environ.get(size_var):
            args.rank, args.nranks = int(os.environ[rank_var]), int(os.environ[size_var])
            local = os.environ.get(local_var)
            args.device = int(local) if local else args.rank
            args.external = True
            args.mpi = rank_var != "RANK" and rank_var != "SLURM_PROCID"
            return True
    return False


def id_address() -> Tuple[str, int]:
    host = os.environ.get("MASTER_ADDR") or "127.0.0.1"
    if os.environ.get("CUABI_NCCL_ID_PORT"):
        return host, int(os.environ["CUABI_NCCL_ID_PORT"])
    if os.environ.get("MASTER_PORT"):
        return host, int(os.environ["MASTER_PORT"]) + 1
    return host, 29501


def exchange_id(args: argparse.Namespace, uid: bytes) -> Optional[bytes]:
    """Rank 0's unique id on every rank: MPI's broadcast under mpirun where
    mpi4py imports, else TCP (rank 0 serves it to the others)."""
    if args.mpi:
        try:
            from mpi4py import MPI  # noqa: PLC0415 (only under mpirun)
        except ImportError:
            pass
        else:
            got = MPI.COMM_WORLD.bcast(uid if args.rank == 0 else None, root=0)
            print(f"[rank {args.rank}] the NCCL unique id came through MPI's broadcast", flush=True)
            return bytes(got)
    host, port = id_address()
    deadline = time.monotonic() + args.timeout
    if args.rank == 0:
        with socket.create_server(("", port), reuse_port=False) as server:
            for served in range(1, args.nranks):
                server.settimeout(max(0.1, deadline - time.monotonic()))
                try:
                    conn, _ = server.accept()
                except OSError:
                    print(f"[rank 0] {args.nranks - served} of {args.nranks - 1} ranks did not ask "
                          f"for the unique id on port {port} within {args.timeout} s",
                          file=sys.stderr, flush=True)
                    return None
                with conn:
                    conn.sendall(uid)
        return uid
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=5) as conn:
                data = b""
                while len(data) < 128:
                    chunk = conn.recv(128 - len(data))
                    if not chunk:
                        break
                    data += chunk
                if len(data) == 128:
                    return data
        except OSError:
            pass
        time.sleep(0.1)
    print(f"[rank {args.rank}] did not get the NCCL unique id from {host}:{port} within "
          f"{args.timeout} s", file=sys.stderr, flush=True)
    return None


def read_exact(fd: int, n: int, deadline: float) -> Optional[bytes]:
    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


# ---------------------------------------------------------------------------
# The launcher
# ---------------------------------------------------------------------------

MEANING = {
    EXIT_OK: "verified",
    EXIT_FAILED: "failed",
    EXIT_NO_NCCL: "NCCL could not be loaded",
    EXIT_NO_DEVICE: "no CUDA device",
    EXIT_PEER_FAILED: "stopped after a peer failed: aborted its communicator",
    EXIT_TIMEOUT: "timed out: aborted its communicator",
    EXIT_PLANTED_FAULT: "the planted fault",
}


def describe(code: Optional[int]) -> Tuple[str, str]:
    if code is None:
        return "still running", "?"
    if code < 0:
        return f"killed by signal {-code} ({signal.Signals(-code).name})", "ended abnormally"
    return f"exit status {code}", MEANING.get(code, "failed")


def launcher(args: argparse.Namespace) -> int:
    try:
        count = cuabi.device_count()
    except (cuabi.DriverNotFoundError, cuabi.StubDriverError, cuabi.NoDeviceError) as exc:
        print(f"{PROG}: no CUDA device: {exc}", file=sys.stderr)
        return EXIT_NO_DEVICE
    if count == 0:
        print(f"{PROG}: no CUDA device: the driver reports 0 devices", file=sys.stderr)
        return EXIT_NO_DEVICE
    if not args.ranks and count < 2:
        print(f"{PROG}: needs two devices, found {count}")
        return EXIT_OK
    n = args.ranks or count
    if n > count:
        print(f"{PROG}: --ranks {n}, but there {'is' if count == 1 else 'are'} only {count} "
              f"device{'s' if count != 1 else ''} (NCCL takes one GPU per rank)", file=sys.stderr)
        return EXIT_FAILED
    if args.fault_rank is not None and not 0 <= args.fault_rank < n:
        print(f"{PROG}: --fault-rank {args.fault_rank}, but there are {n} ranks", file=sys.stderr)
        return EXIT_FAILED
    nccl = load_nccl()
    if nccl is None:
        return EXIT_NO_NCCL
    print(f"{PROG}: {n} rank{'s' if n != 1 else ''}, one process per GPU; NCCL {nccl.version_text} "
          f"from {nccl.path}; NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}")
    if args.fault_rank is not None:
        print(f"{PROG}: fault mode: rank {args.fault_rank} will fail "
              f"({'os.abort()' if args.fault_kind == 'exit' else 'an illegal address'}) right "
              f"after the communicator is made")
    if nccl.path != "libnccl.so.2" and not os.environ.get("CUABI_NCCL_PATH"):
        os.environ["CUABI_NCCL_PATH"] = nccl.path  # the ranks load the same one

    common = ["--nranks", str(n), "--mib", str(args.mib), "--iters", str(args.iters),
              "--warmup", str(args.warmup), "--timeout", str(args.timeout)]
    if args.fault_rank is not None:
        common += ["--fault-rank", str(args.fault_rank), "--fault-kind", args.fault_kind]
    id_read, id_write = os.pipe()
    procs: List[subprocess.Popen] = []
    for r in range(n):
        cmd = [sys.executable, os.path.abspath(__file__), "--rank", str(r)] + common
        if r == 0:
            cmd += ["--id-fd", str(id_write)]
        procs.append(subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                      pass_fds=(id_write,) if r == 0 else ()))
    os.close(id_write)

    t0 = time.monotonic()
    grace = 30.0
    first_failed: Optional[int] = None
    failed_at = 0.0
    timed_out = killed_after_grace = False
    uid = read_exact(id_read, 128, t0 + args.timeout)
    os.close(id_read)
    if uid is not None:
        for p in procs[1:]:
            try:
                assert p.stdin is not None
                p.stdin.write(uid)
                p.stdin.flush()
            except OSError as exc:
                print(f"{PROG}: could not pass the unique id to a rank: {exc}", file=sys.stderr)
    else:
        print(f"{PROG}: rank 0 did not hand over the NCCL unique id within {args.timeout} s",
              file=sys.stderr)
        for p in procs:
            assert p.stdin is not None
            p.stdin.close()
        first_failed, failed_at = 0, time.monotonic()

    seen: set = set()
    while True:
        # Ranks that ended since the last look; of those that failed, one
        # that failed on its own comes before one stopped by a peer (4).
        ended = [r for r, p in enumerate(procs) if r not in seen and p.poll() is not None]
        seen.update(ended)
        failed = sorted((r for r in ended if procs[r].returncode != 0),
                        key=lambda r: (procs[r].returncode == EXIT_PEER_FAILED, r))
        if failed and first_failed is None:
            r = failed[0]
            first_failed, failed_at = r, time.monotonic()
            print(f"{PROG}: rank {r} failed ({describe(procs[r].returncode)[0]}); telling the "
                  f"other ranks", file=sys.stderr)
            for q in procs:
                if q.poll() is None and q.stdin is not None and not q.stdin.closed:
                    try:
                        q.stdin.write(struct.pack("<i", r))
                        q.stdin.flush()
                    except OSError:
                        pass
        if all(p.poll() is not None for p in procs):
            break
        if first_failed is not None and time.monotonic() > failed_at + grace:
            print(f"{PROG}: ranks still running {grace:.0f} s after rank {first_failed} failed; "
                  f"killing them", file=sys.stderr)
            killed_after_grace = True
            break
        if time.monotonic() > t0 + args.deadline:
            print(f"{PROG}: the deadline of {args.deadline} s passed; killing the ranks still "
                  f"running", file=sys.stderr)
            timed_out = True
            break
        time.sleep(0.01)
    killed = set()
    for r, p in enumerate(procs):
        if p.poll() is None:
            p.kill()
            p.wait()
            killed.add(r)
        if p.stdin is not None and not p.stdin.closed:
            try:
                p.stdin.close()
            except OSError:
                pass

    codes = [p.returncode for p in procs]
    for r, code in enumerate(codes):
        what, meaning = describe(code)
        print(f"{PROG}:   rank {r} (GPU {r}): {what}: "
              f"{'killed by the launcher' if r in killed else meaning}")
    took = time.monotonic() - t0
    if all(c == 0 for c in codes) and not killed:
        print(f"{PROG}: PASSED: all-reduce of {args.mib} MiB over {n} rank{'s' if n != 1 else ''} "
              f"verified on every rank ({took:.1f} s)")
        return EXIT_OK
    if all(c == EXIT_NO_NCCL for c in codes):
        return EXIT_NO_NCCL
    if timed_out:
        print(f"{PROG}: FAILED: not every rank ended within {args.deadline} s")
        return EXIT_TIMEOUT
    first = first_failed if first_failed is not None else 0
    ending = ("killed the ranks that did not stop" if killed_after_grace
              else "saw every other rank stop on its own")
    print(f"{PROG}: rank {first} failed first"
          f"{' (as --fault-rank asked)' if first == args.fault_rank else ''}; the launcher "
          f"{ending} after {took:.1f} s")
    return EXIT_PEER_FAILED


def main() -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=0)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--deadline", type=float, default=300.0)
    parser.add_argument("--fault-rank", type=int, default=None)
    parser.add_argument("--fault-kind", choices=("address", "exit"), default="address")
    parser.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--nranks", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--id-fd", type=int, default=-1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.external, args.mpi, args.device = False, False, None
    if args.ranks < 0 or args.mib < 1 or args.iters < 1 or args.warmup < 0:
        parser.error("--ranks, --mib, --iters and --warmup must be positive")
    if args.rank is None and from_launcher_env(args):
        nccl = load_nccl()
        if nccl is None:
            return EXIT_NO_NCCL
        rc = Rank(args, nccl).run()
        if rc == EXIT_OK and args.rank == 0:
            print(f"{PROG}: PASSED: all-reduce of {args.mib} MiB over {args.nranks} ranks verified "
                  f"on rank 0 (started by the job's launcher; each rank checks its own result)")
        return rc
    if args.rank is None:
        return launcher(args)
    if not 0 <= args.rank < args.nranks:
        print(f"{PROG}: --rank {args.rank} is not one of --nranks {args.nranks}", file=sys.stderr)
        return EXIT_FAILED
    nccl = load_nccl()
    if nccl is None:
        return EXIT_NO_NCCL
    return Rank(args, nccl).run()


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.exit(main())
