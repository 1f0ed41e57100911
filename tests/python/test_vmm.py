"""Virtual memory through each backend: a growable buffer that keeps its
address and contents as it grows (64 MiB to 4 GiB, checked by a kernel after
each step) and behaves as any DeviceBuffer; physical memory mapped into
ranges and used through buffers over them; memory exported to a child
process by file descriptor (sent over a Unix socket), written there and read
back here, and across two GPUs through set-access where there are two; and
the bad-input corpus of these calls, ``bad-input corpus (Python <backend>,
virtual memory, GPU)``. Skipped, with the reason, where there is no device."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from typing import Any, List

import numpy as np
import pytest

import cuabi
from cuabi._loader import Backend
from conftest import no_device_reason
from test_corpus import Case, CaseContext, Table, no_collection, report, run_corpus

pytestmark = pytest.mark.gpu

MiB = 1 << 20

KERNELS = r"""
__device__ unsigned value_at(unsigned long long i, unsigned salt)
{
    return (unsigned)(i * 2654435761ull) ^ salt;
}
extern "C" __global__ void pattern(unsigned* p, unsigned long long from, unsigned long long to,
                                   unsigned salt)
{
    for (unsigned long long i = from + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < to; i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = value_at(i, salt);
}
extern "C" __global__ void verify(const unsigned* p, unsigned long long n, unsigned salt,
                                  unsigned long long* bad)
{
    unsigned long long wrong = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        wrong += p[i] != value_at(i, salt);
    if (wrong) atomicAdd(bad, wrong);
}
"""


def value_at(i: int, salt: int) -> int:
    return ((i * 2654435761) & 0xFFFFFFFF) ^ salt


def test_growable_buffer_grows_to_4gib_keeping_its_contents(device):
    reserve = 4096 * MiB
    free, _ = device.memory_info
    if free < reserve + 512 * MiB:
        pytest.skip("the device has less than 4.5 GiB free")
    mod = device.compile(KERNELS)
    pattern, verify = mod.get_kernel("pattern"), mod.get_kernel("verify")
    salt = np.uint32(0x5EED)
    bad = device.alloc(8)

    def wrong(buf: cuabi.DeviceBuffer, n: int) -> int:
        bad.memset(0)
        verify(1024, 256, (buf, np.uint64(n), salt, bad))
        return int(bad.copy_to_host(np.empty(1, np.uint64))[0])

    buf = device.alloc_growable(64 * MiB, reserve, dtype=np.uint32)
    assert buf.kind == cuabi.BufferKind.GROWABLE
    assert buf.reserved_size == reserve
    address = buf.ptr
    pattern(1024, 256, (buf, np.uint64(0), np.uint64(64 * MiB // 4), salt))
    size = 64 * MiB
    while size < reserve:
        with pytest.raises(cuabi.OutOfRangeError):  # not there yet, as for any buffer
            buf.copy_to_host(np.empty(1, np.uint32), offset=size)
        buf.grow(size * 2)
        assert buf.ptr == address and buf.nbytes == size * 2
        assert buf.shape == (size * 2 // 4,)
        assert buf.__cuda_array_interface__["shape"] == (size * 2 // 4,)
        assert wrong(buf, size // 4) == 0, f"after growing to {size * 2}"
        pattern(1024, 256, (buf, np.uint64(size // 4), np.uint64(size * 2 // 4), salt))
        assert wrong(buf, size * 2 // 4) == 0, f"at {size * 2}"
        seam = buf.copy_to_host(np.empty(2, np.uint32), offset=size - 4)
        assert list(seam) == [value_at(size // 4 - 1, 0x5EED), value_at(size // 4, 0x5EED)]
        size *= 2
    with pytest.raises(cuabi.OutOfRangeError, match="reservation"):
        buf.grow(reserve + 64 * MiB)
    with pytest.raises(cuabi.InvalidArgumentError, match="does not shrink"):
        buf.grow(64 * MiB)
    buf.close()
    bad.close()


def test_growable_buffer_in_small_steps(device):
    g = device.vm_granularity[0]
    buf = device.alloc_growable(0, 8 * g, dtype=np.int32)
    assert buf.nbytes == 0 and buf.shape == (0,)
    for step in range(1, 9):
        buf.grow(step * g)
        buf.copy_from_host(np.full(g // 4, step, np.int32), offset=(step - 1) * g)
    got = buf.copy_to_host()
    assert np.array_equal(got, np.repeat(np.arange(1, 9, dtype=np.int32), g // 4))
    # As any buffer: a copy into a plain one.
    plain = device.alloc(g)
    plain.copy_from(buf, nbytes=g, src_offset=7 * g)
    assert (plain.copy_to_host(np.empty(g // 4, np.int32)) == 8).all()
    with pytest.raises(cuabi.InvalidArgumentError, match="not growable"):
        plain.grow(2 * g)
    plain.close()
    buf.close()


def test_physical_memory_in_a_range(device):
    g = device.vm_granularity[0]
    a = cuabi.PhysicalMemory(device, g)
    c = cuabi.PhysicalMemory(device, 2 * g)
    assert c.size == 2 * g and c.device_ordinal == 0
    r = cuabi.AddressRange(device, 4 * g)
    assert r.size == 4 * g and r.pointer
    r.map(0, a)
    r.map(g, c)
    view = r.buffer(0, 3 * g, dtype=np.uint32)
    assert view.kind == cuabi.BufferKind.RANGE and view.ptr == r.pointer
    view.copy_from_host(np.arange(3 * g // 4, dtype=np.uint32))
    with pytest.raises(cuabi.InvalidArgumentError, match="view the range"):
        r.unmap(0, g)
    with pytest.raises(cuabi.InvalidArgumentError, match="still mapped"):
        c.free()
    assert not c.closed
    view.close()
    r.set_access(0, 3 * g, device, cuabi.VmAccess.READ)
    r.set_access(0, 3 * g, device, cuabi.VmAccess.READWRITE)
    r.unmap(g, 2 * g)
    r.map(2 * g, c)  # elsewhere, with its contents
    again = r.buffer(2 * g, 2 * g, dtype=np.uint32)
    assert np.array_equal(again.copy_to_host(), np.arange(g // 4, 3 * g // 4, dtype=np.uint32))
    again.close()
    r.unmap(2 * g, 2 * g)
    c.free()
    assert c.closed
    a.close()  # the range keeps `a` mapped
    assert r.buffer(0, 8, dtype=np.uint32).copy_to_host()[1] == 1
    r.close()


CHILD = textwrap.dedent(
    """
    import socket, sys
    import numpy as np
    import cuabi

    sock = socket.socket(fileno=int(sys.argv[1]))
    nbytes, expect, write, ordinal = (int(v) for v in sys.argv[2:6])
    _, fds, _, _ = socket.recv_fds(sock, 1, 1)
    sock.close()
    home, user = cuabi.Device(0), cuabi.Device(ordinal)
    mem = cuabi.PhysicalMemory.import_fd(home, fds[0], nbytes)
    import os
    os.close(fds[0])
    r = cuabi.AddressRange(home, nbytes)
    r.map(0, mem)
    mem.close()  # the range keeps it
    if ordinal != 0:
        r.set_access(0, nbytes, user, cuabi.VmAccess.READWRITE)
    view = r.buffer(device=user, dtype=np.uint32)
    got = view.copy_to_host()
    if not (got == expect).all():
        print("child: wrong data", got[:8], file=sys.stderr)
        sys.exit(3)
    view.fill(write)
    user.synchronize()
    print("child: ok")
    """
)


def export_to_child(env: dict, home: cuabi.Device, user: cuabi.Device, ordinal: int) -> None:
    g = home.vm_granularity[0]
    nbytes = 8 * g
    try:
        mem = cuabi.PhysicalMemory(home, nbytes, exportable=True)
    except cuabi.NotSupportedError as exc:  # the driver cannot export memory here
        pytest.skip(f"memory cannot be exported on this system: {exc.message}")
    r = cuabi.AddressRange(home, nbytes)
    r.map(0, mem)
    if ordinal != 0:
        r.set_access(0, nbytes, user, cuabi.VmAccess.READWRITE)
    view = r.buffer(device=user, dtype=np.uint32)
    view.fill(5)
    user.synchronize()
    try:
        fd = mem.export_fd()
    except cuabi.NotSupportedError as exc:
        pytest.skip(f"memory cannot be exported on this system: {exc.message}")
    parent, child = socket.socketpair()
    try:
        env = dict(env)
        env["CUABI_BACKEND"] = home.backend.name
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(child.fileno()), str(nbytes), "5", "9", str(ordinal)],
            env=env,
            pass_fds=(child.fileno(),),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        child.close()
        socket.send_fds(parent, [b"m"], [fd])
        out, err = proc.communicate(timeout=300)
    finally:
        parent.close()
        os.close(fd)
    assert proc.returncode == 0, out + err
    assert "child: ok" in out
    assert (view.copy_to_host() == 9).all()  # the child's writes
    view.close()
    r.close()
    mem.close()


def test_memory_exported_to_a_child_process_by_fd(device, subprocess_env):
    export_to_child(subprocess_env, device, device, 0)


def test_two_gpus_through_set_access(device, subprocess_env):
    if cuabi.device_count(backend=device.backend) < 2:
        pytest.skip("needs two devices")
    with cuabi.Device(1, backend=device.backend) as other:
        g = device.vm_granularity[0]
        mem = cuabi.PhysicalMemory(device, 4 * g)
        r = cuabi.AddressRange(device, 4 * g)
        r.map(0, mem)
        with pytest.raises(cuabi.InvalidArgumentError, match="no access"):
            r.buffer(device=other)
        r.set_access(0, 4 * g, other, cuabi.VmAccess.READWRITE)
        there = r.buffer(device=other, dtype=np.uint32)
        k = other.compile(KERNELS).get_kernel("pattern")
        k(64, 256, (there, np.uint64(0), np.uint64(4 * g // 4), np.uint32(77)))
        other.synchronize()
        here = r.buffer(dtype=np.uint32).copy_to_host()
        i = np.arange(4 * g // 4, dtype=np.uint64)
        want = ((i * 2654435761) & 0xFFFFFFFF).astype(np.uint32) ^ np.uint32(77)
        assert np.array_equal(here, want)
        there.close()
        r.close()
        mem.close()
        export_to_child(subprocess_env, device, other, 1)


# ---------------------------------------------------------------------------
# The bad-input corpus of virtual memory, through the objects
# ---------------------------------------------------------------------------


def gpu_cases(dev: cuabi.Device) -> List[Case]:
    t = Table()
    add = t.add
    g = dev.vm_granularity[0]
    IA, OOR, IH = cuabi.InvalidArgumentError, cuabi.OutOfRangeError, cuabi.InvalidHandleError

    def mapped() -> Any:
        mem = cuabi.PhysicalMemory(dev, 2 * g)
        r = cuabi.AddressRange(dev, 4 * g)
        r.map(g, mem)
        return r, mem

    add("physical memory off the granularity", IA,
        f"is not a multiple of the virtual memory granularity of device 0, {g} bytes",
        lambda ctx: cuabi.PhysicalMemory(dev, g + 4096))
    add("a range off the granularity", IA, "bytes 4096 is not a multiple",
        lambda ctx: cuabi.AddressRange(dev, 4096))
    add("mapping over a mapped range", IA, "overlaps the memory already at",
        lambda ctx: mapped()[0].map(2 * g, cuabi.PhysicalMemory(dev, g)))
    add("a mapping past the range's end", OOR, "reaches past the end",
        lambda ctx: (lambda rm: rm[0].map(3 * g, rm[1]))(mapped()))
    add("a map of a str", TypeError, "memory must be a cuabi.PhysicalMemory, not str",
        lambda ctx: mapped()[0].map(0, "memory"))
    add("access to an unmapped address", IA, "which has no memory mapped",
        lambda ctx: mapped()[0].set_access(0, 4 * g, dev, cuabi.VmAccess.READWRITE))
    add("a buffer over an unmapped address", IA, "which has no memory mapped",
        lambda ctx: mapped()[0].buffer(0, 8))
    add("unmapping half a mapping", IA, "in two", lambda ctx: mapped()[0].unmap(g, g))

    def free_mapped(ctx: CaseContext) -> None:
        r, mem = mapped()
        try:
            mem.free()
        finally:
            ctx.expect(not mem.closed, "the memory was marked closed")

    add("freeing memory that is still mapped", IA, "is still mapped at offset", free_mapped)
    add("exporting memory made without exportable", IA, "without CUABI_PHYSICAL_MEMORY_EXPORTABLE",
        lambda ctx: cuabi.PhysicalMemory(dev, g).export_fd())

    def import_pipe(ctx: CaseContext) -> None:
        rd, wr = os.pipe()
        try:
            cuabi.PhysicalMemory.import_fd(dev, rd, g)
        finally:
            os.close(rd)
            os.close(wr)

    add("importing a pipe", IA, "is a pipe, not memory exported by", import_pipe)
    add("importing fd -1", IA, "fd -1 is no file descriptor",
        lambda ctx: cuabi.PhysicalMemory.import_fd(dev, -1, g))
    add("growing past the reservation", OOR, "past the buffer's reservation of",
        lambda ctx: dev.alloc_growable(g, 2 * g).grow(3 * g))
    add("shrinking a growable buffer", IA, "does not shrink",
        lambda ctx: dev.alloc_growable(2 * g, 2 * g).grow(g))
    add("growing off the granularity", IA, "is not a multiple",
        lambda ctx: dev.alloc_growable(0, 2 * g).grow(g + 1))
    add("growing a plain buffer", IA, "not growable", lambda ctx: dev.alloc(64).grow(g))
    add("a growable buffer's IPC handle", IA, "this one is a growable buffer",
        lambda ctx: dev.alloc_growable(g, g).ipc_handle())
    add("a growable buffer read past its size", OOR, "reaches past the end",
        lambda ctx: dev.alloc_growable(g, 2 * g).copy_to_host(np.empty(1, np.uint32), offset=g))

    def freed_then_mapped(ctx: CaseContext) -> None:
        mem = cuabi.PhysicalMemory(dev, g)
        mem.free()
        mapped()[0].map(0, mem)

    add("mapping freed memory", IH, "memory is not a live cuabi_physical_memory", freed_then_mapped)
    return t.cases


def test_bad_input_corpus_vmm_gpu(default_backend: Backend, summary_line) -> None:
    b = default_backend
    label = f"Python {b.name}, virtual memory, GPU"
    reason = no_device_reason()
    if reason:
        summary_line(f"bad-input corpus ({label}): SKIPPED: {reason}")
        pytest.skip(reason)
    with no_collection():
        dev = cuabi.Device(0, backend=b)
        try:
            result = run_corpus(b, gpu_cases(dev))
            dev.synchronize()  # the context survived every case
        finally:
            dev.close()
    report(label, result, summary_line)
    assert result.cases >= 19
