"""The bad-input corpus of the memory features (stream-ordered allocation
and pools, managed memory, IPC, peers, pitched memory, fills, 2D/3D copies,
arrays, texture and surface objects) through the Python binding, run and
reported as test_corpus.py runs its cases: ``bad-input corpus (Python
<backend>, memory): N cases, P passed``, and ``, memory, GPU`` for the part
that needs a device (``SKIPPED``, with the reason, without one).

The part without a GPU holds the core's checks that come before any driver
call (NULL, made-up and wrong-kind handles, NULL and short descriptions,
copies that name no memory), reached through the low layer and, where an
object can be made without a device, through the objects; and what only
Python checks (the types of arguments, the geometry of host arrays). The
GPU part is wrong input through the objects users call."""

from __future__ import annotations

import functools
from typing import Any, Callable, List

import numpy as np
import pytest

import cuabi
from cuabi._loader import Backend
from conftest import no_device_reason
from test_corpus import (
    TINY,
    Case,
    CaseContext,
    Raw,
    Table,
    no_collection,
    report,
    run_corpus,
)


# ---------------------------------------------------------------------------
# Without a GPU
# ---------------------------------------------------------------------------


def cpu_cases(b: Backend, program: cuabi.Program) -> List[Case]:
    t = Table()
    add = t.add
    r = Raw(b)
    lib = b.lib
    IH, IA = cuabi.InvalidHandleError, cuabi.InvalidArgumentError
    NULL = b.NULL
    pv = b.handle_int(program.handle)  # a live handle of another kind

    def call(fn: str, *args: Any) -> Callable[[CaseContext], None]:
        return lambda ctx: r.check(getattr(lib, fn)(*args))

    def out(kind: str) -> Any:
        return r.ref(r.out(kind))

    def made_up(kind: str) -> Any:
        return r.h(kind, 0xDEADBEEF)

    def as_kind(kind: str) -> Any:
        return r.h(kind, pv)

    handle_cases = [
        # (function, arguments, the argument at fault)
        ("cuabi_buffer_alloc_async", (NULL, 64, NULL, NULL, out("cuabi_buffer")), "device"),
        ("cuabi_buffer_free_async", (NULL, NULL), "buffer"),
        ("cuabi_buffer_get_kind", (NULL, out("int32_t")), "buffer"),
        ("cuabi_memory_pool_create", (NULL, NULL, out("cuabi_memory_pool")), "device"),
        ("cuabi_device_get_default_memory_pool", (NULL, out("cuabi_memory_pool")), "device"),
        ("cuabi_memory_pool_set_release_threshold", (NULL, 0), "pool"),
        ("cuabi_memory_pool_get_release_threshold", (NULL, out("uint64_t")), "pool"),
        ("cuabi_memory_pool_trim", (NULL, 0), "pool"),
        ("cuabi_memory_pool_get_usage", (NULL, out("uint64_t"), out("uint64_t")), "pool"),
        ("cuabi_memory_pool_export_fd", (NULL, out("int32_t")), "pool"),
        ("cuabi_memory_pool_import_fd", (NULL, 3, out("cuabi_memory_pool")), "device"),
        ("cuabi_buffer_alloc_managed", (NULL, 64, 0, out("cuabi_buffer")), "device"),
        ("cuabi_buffer_get_host_pointer", (NULL, out("void*")), "buffer"),
        ("cuabi_buffer_prefetch_async", (NULL, 0, 64, -1, NULL), "buffer"),
        ("cuabi_buffer_advise", (NULL, 0, 64, 1, 0), "buffer"),
        ("cuabi_buffer_get_ipc_handle", (NULL, b.char_buffer(128), 128), "buffer"),
        ("cuabi_buffer_open_ipc", (NULL, NULL, b.char_buffer(128), 128, out("cuabi_buffer")),
         "device"),
        ("cuabi_event_get_ipc_handle", (NULL, b.char_buffer(128), 128), "event"),
        ("cuabi_event_open_ipc", (NULL, b.char_buffer(128), 128, out("cuabi_event")), "device"),
        ("cuabi_device_can_access_peer", (NULL, NULL, out("int32_t")), "device"),
        ("cuabi_device_enable_peer_access", (NULL, NULL), "device"),
        ("cuabi_device_disable_peer_access", (NULL, NULL), "device"),
        ("cuabi_device_get_peer_attribute", (NULL, NULL, 1, out("int32_t")), "device"),
        ("cuabi_buffer_get_copy_path", (NULL, NULL, out("int32_t")), "dst"),
        ("cuabi_buffer_alloc_pitched", (NULL, 64, 4, 4, out("cuabi_buffer")), "device"),
        ("cuabi_buffer_get_pitch", (NULL, out("size_t")), "buffer"),
        ("cuabi_buffer_fill", (NULL, 0, 0, 4, 1), "buffer"),
        ("cuabi_buffer_fill_async", (NULL, 0, 0, 4, 1, NULL), "buffer"),
        ("cuabi_array_create", (NULL, NULL, out("cuabi_array")), "device"),
        ("cuabi_array_get_desc", (NULL, NULL), "array"),
        ("cuabi_array_get_handle", (NULL, out("uint64_t")), "array"),
        ("cuabi_texture_get_handle", (NULL, out("uint64_t")), "texture"),
        ("cuabi_surface_create", (NULL, out("cuabi_surface")), "array"),
        ("cuabi_surface_get_handle", (NULL, out("uint64_t")), "surface"),
    ]
    for fn, args, what in handle_cases:
        add(f"low layer: NULL {what} to {fn}", IH, f"{fn}: {what} is NULL", call(fn, *args))

    # Made-up and wrong-kind values in the first handle argument.
    kind_of = {
        "device": "device",
        "buffer": "buffer",
        "pool": "memory_pool",
        "event": "event",
        "array": "array",
        "texture": "texture",
        "surface": "surface",
        "dst": "buffer",
    }
    for fn, args, what in handle_cases:
        kind = kind_of[what]
        add(
            f"low layer: a made-up {what} to {fn}",
            IH,
            f"{fn}: {what} is not a live cuabi_{kind}",
            call(fn, made_up(kind), *args[1:]),
        )
        add(
            f"low layer: a program handle as the {what} of {fn}",
            IH,
            "it is a cuabi_program",
            call(fn, as_kind(kind), *args[1:]),
        )

    # --- Descriptions ------------------------------------------------------------
    for init in ("memory_pool", "copy_3d", "array", "texture"):
        fn = f"cuabi_{init}_desc_init"
        ctype = f"cuabi_{init}_desc"
        add(f"low layer: {fn} into NULL", IA, f"{fn}: desc is NULL", call(fn, NULL, 64))

        def short(ctx: CaseContext, fn: str = fn, ctype: str = ctype) -> None:
            arg, desc, size = b.struct(ctype)
            desc.struct_size = 77
            try:
                r.check(getattr(lib, fn)(arg, 4))
            finally:
                ctx.expect(int(desc.struct_size) == 77, "the struct was written on failure")

        add(f"low layer: {fn} with struct_size 4", IA, "struct_size 4 is smaller", short)

    def desc(ctype: str, **fields: Any) -> Any:
        arg, d, size = b.struct(ctype)
        r.check(getattr(lib, ctype + "_init")(arg, size))
        for key, value in fields.items():
            setattr(d, key, value)
        r._keep.append(d)
        return arg

    host = np.zeros(64, np.uint8)
    hp = b.pointer(host.ctypes.data)
    add("low layer: cuabi_copy_3d of NULL", IA, "cuabi_copy_3d: desc is NULL",
        call("cuabi_copy_3d", NULL))
    add("low layer: cuabi_copy_3d_async of NULL", IA, "cuabi_copy_3d_async: desc is NULL",
        call("cuabi_copy_3d_async", NULL, NULL))
    add(
        "low layer: a copy that names no memory",
        IA,
        "src: none of src_host, src_buffer, src_array is set",
        lambda ctx: r.check(lib.cuabi_copy_3d(desc("cuabi_copy_3d_desc", width_bytes=8))),
    )
    add(
        "low layer: a copy of host memory to host memory",
        IA,
        "both sides are host memory",
        lambda ctx: r.check(
            lib.cuabi_copy_3d(desc("cuabi_copy_3d_desc", src_host=hp, dst_host=hp, width_bytes=8))
        ),
    )
    add(
        "low layer: a copy with a made-up source buffer",
        IH,
        "desc->src_buffer is not a live cuabi_buffer",
        lambda ctx: r.check(
            lib.cuabi_copy_3d(
                desc("cuabi_copy_3d_desc", src_buffer=made_up("buffer"), dst_host=hp, width_bytes=8)
            )
        ),
    )
    add(
        "low layer: a copy with a program handle as its destination array",
        IH,
        "it is a cuabi_program",
        lambda ctx: r.check(
            lib.cuabi_copy_3d(
                desc("cuabi_copy_3d_desc", src_host=hp, dst_array=as_kind("array"), width_bytes=8)
            )
        ),
    )
    add(
        "low layer: a copy whose destination names no memory",
        IA,
        "dst: none of dst_host, dst_buffer, dst_array is set",
        lambda ctx: r.check(
            lib.cuabi_copy_3d(desc("cuabi_copy_3d_desc", src_host=hp, width_bytes=8))
        ),
    )
    add(
        "low layer: a copy whose source pitch is smaller than its row",
        IA,
        "src pitch 4 is smaller than the row: x_bytes 0 + width_bytes 8",
        lambda ctx: r.check(
            lib.cuabi_copy_3d(
                desc("cuabi_copy_3d_desc", src_host=hp, dst_host=hp, width_bytes=8, src_pitch=4)
            )
        ),
    )
    add(
        "low layer: a copy whose rows do not fit in its slices",
        IA,
        "dst box's rows [0, 4) do not fit in a slice of 2 rows (dst_height)",
        lambda ctx: r.check(
            lib.cuabi_copy_3d(
                desc(
                    "cuabi_copy_3d_desc",
                    src_host=hp,
                    dst_host=hp,
                    width_bytes=8,
                    height=4,
                    depth=2,
                    dst_height=2,
                )
            )
        ),
    )
    add("low layer: cuabi_array_create with a NULL desc and NULL device", IH, "device is NULL",
        call("cuabi_array_create", NULL, NULL, out("cuabi_array")))
    add("low layer: cuabi_texture_create of NULL", IA, "cuabi_texture_create: desc is NULL",
        call("cuabi_texture_create", NULL, out("cuabi_texture")))
    add(
        "low layer: a texture of neither an array nor a buffer",
        IA,
        "desc sets neither array nor buffer",
        lambda ctx: r.check(
            lib.cuabi_texture_create(desc("cuabi_texture_desc"), out("cuabi_texture"))
        ),
    )
    add(
        "low layer: a texture over a made-up array",
        IH,
        "desc->array is not a live cuabi_array",
        lambda ctx: r.check(
            lib.cuabi_texture_create(
                desc("cuabi_texture_desc", array=made_up("array")), out("cuabi_texture")
            )
        ),
    )
    add(
        "low layer: a texture over a program handle as its buffer",
        IH,
        "it is a cuabi_program",
        lambda ctx: r.check(
            lib.cuabi_texture_create(
                desc("cuabi_texture_desc", buffer=as_kind("buffer")), out("cuabi_texture")
            )
        ),
    )

    # --- The objects, where none needs a device -------------------------------------
    z = functools.partial(np.zeros, dtype=np.float32)
    copy = cuabi.copy_3d
    add("copy_3d: host memory to host memory", IA, "both sides are host memory",
        lambda ctx: copy(z(4), z(4)))
    add("copy_3d: a list as the source", TypeError,
        "src must be a NumPy array, a cuabi.DeviceBuffer or a cuabi.Array, not list",
        lambda ctx: copy(z(4), [0.0] * 4))
    add("copy_3d: a str as the destination", TypeError, "dst must be a NumPy array",
        lambda ctx: copy("out", z(4)))
    add("copy_3d: host rows that are not contiguous", ValueError, "src's rows are not contiguous",
        lambda ctx: copy(z((4, 4)), z((4, 8))[:, ::2]))
    add("copy_3d: a transposed host array", ValueError, "dst's rows are not contiguous",
        lambda ctx: copy(z((8, 4)).T, z((4, 8))))
    add("copy_3d: a host array of 5 dimensions", ValueError, "src has 5 dimensions",
        lambda ctx: copy(z(4), z((1, 1, 1, 1, 4))))
    add("copy_3d: a box wider than the host rows", cuabi.OutOfRangeError,
        "src box's x range 0 + 20 bytes is past the end of the host array (rows of 16 bytes)",
        lambda ctx: copy(z((2, 8)), z((2, 4)), (20, 1, 1)))
    add("copy_3d: a box past the host rows", cuabi.OutOfRangeError,
        "dst box's y range 1 + 2 rows is past the end of the host array (2 rows)",
        lambda ctx: copy(z((2, 4)), z((4, 4)), (16, 2), dst_origin=(0, 1)))
    add("copy_3d: a box past the host slices", cuabi.OutOfRangeError,
        "src box's z range 0 + 3 slices",
        lambda ctx: copy(z((3, 2, 4)), z((2, 2, 4)), (16, 2, 3)))
    add("copy_3d: a pitch for a host side", ValueError,
        "src_pitch and src_height describe a buffer; a host array's strides give its pitches",
        lambda ctx: copy(z(4), z(4), src_pitch=64))
    add("copy_3d: an extent of 4 dimensions", ValueError, "extent must have 1 to 3 items",
        lambda ctx: copy(z(4), z(4), (4, 1, 1, 1)))
    add("copy_3d: a negative origin", IA, "dst_origin[1] = -1 is out of range",
        lambda ctx: copy(z(4), z(4), dst_origin=(0, -1)))
    add("copy_3d: a float extent", TypeError, "extent[0] must be an int, not float",
        lambda ctx: copy(z(4), z(4), (16.0,)))
    ro = z(4)
    ro.flags.writeable = False
    add("copy_3d: a read-only destination", ValueError, "dst is read-only",
        lambda ctx: copy(ro, z(4)))
    add("copy_3d: an Event as the stream", TypeError, "stream must be a cuabi.Stream",
        lambda ctx: copy(z(4), z(4), stream=42))
    add("Texture of an int", TypeError,
        "a texture's source must be a cuabi.Array or a cuabi.DeviceBuffer, not int",
        lambda ctx: cuabi.Texture(42))
    add("Texture of a host array", TypeError, "not ndarray",
        lambda ctx: cuabi.Texture(z(16)))
    add("Surface of None", TypeError, "a surface's array must be a cuabi.Array, not NoneType",
        lambda ctx: cuabi.Surface(None))
    add("Array on a str", TypeError, "device must be a cuabi.Device, not str",
        lambda ctx: cuabi.Array("0", 8))
    add("MemoryPool on an int", TypeError, "device must be a cuabi.Device, not int",
        lambda ctx: cuabi.MemoryPool(0))
    add("MemoryPool.import_fd on None", TypeError, "device must be a cuabi.Device, not NoneType",
        lambda ctx: cuabi.MemoryPool.import_fd(None, 3))
    add("Event on None", TypeError, "device must be a cuabi.Device, not NoneType",
        lambda ctx: cuabi.Event(None, interprocess=True))
    add("DeviceBuffer.open_ipc on None", TypeError, "device must be a cuabi.Device",
        lambda ctx: cuabi.DeviceBuffer.open_ipc(None, bytes(128)))
    add("Event.open_ipc on an int", TypeError, "device must be a cuabi.Device, not int",
        lambda ctx: cuabi.Event.open_ipc(0, bytes(128)))
    return t.cases


def test_bad_input_corpus_memory(default_backend: Backend, summary_line) -> None:
    """The memory cases that need no GPU (nor a driver)."""
    b = default_backend
    with no_collection():
        program = cuabi.Program(TINY, backend=b)
        try:
            result = run_corpus(b, cpu_cases(b, program))
        finally:
            program.close()
    report(f"Python {b.name}, memory", result, summary_line)
    assert result.cases > 100


# ---------------------------------------------------------------------------
# With a GPU
# ---------------------------------------------------------------------------


class GpuFixture:
    def __init__(self, b: Backend) -> None:
        self.b = b
        self.dev = cuabi.Device(0, backend=b)
        self.stream = self.dev.create_stream()
        self.plain = self.dev.alloc(4096)
        self.managed = self.dev.alloc_managed(4096)
        self.pitched = self.dev.alloc_pitched(64, 8)
        self.array = cuabi.Array(self.dev, (8, 8), np.float32, surface=True)
        self.int_array = cuabi.Array(self.dev, (8, 8), np.int32)
        self.event = self.dev.create_event()

    def close(self) -> None:
        for obj in (
            self.event,
            self.int_array,
            self.array,
            self.pitched,
            self.managed,
            self.plain,
            self.stream,
            self.dev,
        ):
            obj.close()


def gpu_cases(b: Backend, f: GpuFixture) -> List[Case]:
    t = Table()
    add = t.add
    dev, s, plain, managed, pitched, arr = (
        f.dev,
        f.stream,
        f.plain,
        f.managed,
        f.pitched,
        f.array,
    )
    IH, IA, OOR = cuabi.InvalidHandleError, cuabi.InvalidArgumentError, cuabi.OutOfRangeError

    def alive(buf: cuabi.DeviceBuffer, ctx: CaseContext) -> None:
        try:
            buf.memset(0x42, 0, 16)
            ctx.expect((buf.copy_to_host(np.empty(16, np.uint8)) == 0x42).all(),
                       "the buffer lost its data")
        except cuabi.CudaError as exc:
            ctx.problem(f"the buffer stopped working: {exc}")

    # --- Stream-ordered allocation and pools --------------------------------------------
    add("alloc of 0 bytes on a stream", IA, "cuabi_buffer_alloc_async_with_pointer: bytes is 0",
        lambda ctx: dev.alloc(0, stream=s))
    add("alloc with a str as the pool", TypeError, "pool must be a cuabi.MemoryPool or None, not str",
        lambda ctx: dev.alloc(64, pool="default"))
    add("alloc with an Event as the stream", TypeError, "stream must be a cuabi.Stream",
        lambda ctx: dev.alloc(64, stream=f.event))

    def closed_pool(ctx: CaseContext) -> None:
        pool = cuabi.MemoryPool(dev)
        pool.close()
        dev.alloc(64, stream=s, pool=pool)

    add("alloc from a closed pool", IH, "pool is not a live cuabi_memory_pool", closed_pool)

    def free_plain(ctx: CaseContext) -> None:
        try:
            plain.free(s)
        finally:
            ctx.expect(not plain.closed, "the object was marked closed")
            alive(plain, ctx)

    add("free() of a plain buffer", IA,
        "the buffer is a device buffer (cuabi_buffer_alloc), not stream-ordered", free_plain)
    add("free() of a managed buffer", IA, "not stream-ordered", lambda ctx: managed.free())

    def free_twice(ctx: CaseContext) -> None:
        buf = dev.alloc(64, stream=s)
        buf.free(s)
        buf.free(s)

    add("free() twice", IH, "cuabi_buffer_free_async: buffer is not a live cuabi_buffer",
        free_twice)

    def free_on_event(ctx: CaseContext) -> None:
        buf = dev.alloc(64, stream=s)
        try:
            buf.free(f.event)
        finally:
            ctx.expect(not buf.closed, "the object was marked closed")
            buf.free(s)

    add("free() with an Event as the stream", TypeError, "stream must be a cuabi.Stream",
        free_on_event)

    def free_on_closed_stream(ctx: CaseContext) -> None:
        buf = dev.alloc(64, stream=s)
        other = dev.create_stream()
        other.close()
        try:
            buf.free(other)
        finally:
            ctx.expect(not buf.closed, "the object was marked closed")
            buf.free(s)

    add("free() on a closed stream", IH, "stream is not a live cuabi_stream", free_on_closed_stream)

    def free_with_view(ctx: CaseContext) -> None:
        buf = dev.alloc(64, stream=s)
        view = buf.as_array(np.uint8)
        try:
            buf.free(s)
        finally:
            del view
            buf.free(s)

    add("free() while a view is alive", IA, "live view(s) or export(s)", free_with_view)

    def free_with_texture(ctx: CaseContext) -> None:
        pool = cuabi.MemoryPool(dev)
        buf = dev.alloc(1 << 20, stream=s, pool=pool)
        tex = cuabi.Texture(buf, dtype=np.float32)
        try:
            buf.free(s)
        finally:
            ctx.expect(not buf.closed, "the object was marked closed")
            tex.close()
            buf.free(s)
            s.synchronize()
            pool.close()

    add("free() while a texture reads the buffer", IA, "still read by 1 texture object",
        free_with_texture)
    add("a pool of -1 bytes at most", IA, "max_bytes = -1 is out of range",
        lambda ctx: cuabi.MemoryPool(dev, max_bytes=-1))
    add("a release threshold past 64 bits", IA, "release_threshold = 18446744073709551616",
        lambda ctx: cuabi.MemoryPool(dev, release_threshold=1 << 64))

    def threshold_str(ctx: CaseContext) -> None:
        with cuabi.MemoryPool(dev) as pool:
            pool.release_threshold = "1 GiB"

    add("a release threshold given as a str", TypeError, "release_threshold must be an int",
        threshold_str)

    def trim_negative(ctx: CaseContext) -> None:
        with cuabi.MemoryPool(dev) as pool:
            pool.trim(-1)

    add("trim(-1)", IA, "keep = -1 is out of range", trim_negative)
    add("export_fd() of the default pool", IA, "the pool was made without CUABI_MEMORY_POOL_IPC",
        lambda ctx: dev.default_memory_pool.export_fd())

    def export_plain_pool(ctx: CaseContext) -> None:
        with cuabi.MemoryPool(dev) as pool:
            pool.export_fd()

    add("export_fd() of a pool made without ipc", IA, "without CUABI_MEMORY_POOL_IPC",
        export_plain_pool)
    add("import_fd(-1)", IA, "fd is -1, not a file descriptor",
        lambda ctx: cuabi.MemoryPool.import_fd(dev, -1))
    add("import_fd of a float", TypeError, "fd must be an int, not float",
        lambda ctx: cuabi.MemoryPool.import_fd(dev, 3.0))

    def ipc_of_plain_pool(ctx: CaseContext) -> None:
        with cuabi.MemoryPool(dev) as pool:
            buf = dev.alloc(64, stream=s, pool=pool)
            try:
                buf.ipc_handle()
            finally:
                buf.free(s)
                s.synchronize()

    add("ipc_handle() of a pool allocation of a pool made without ipc", IA,
        "from a pool made without CUABI_MEMORY_POOL_IPC", ipc_of_plain_pool)

    # --- Managed memory -------------------------------------------------------------------
    add("alloc_managed of 0 bytes", IA, "bytes is 0", lambda ctx: dev.alloc_managed(0))
    add("host_array() of a plain buffer", IA,
        "cuabi_buffer_get_host_pointer: the buffer is a device buffer (cuabi_buffer_alloc), "
        "not managed memory", lambda ctx: plain.host_array())
    add("host_array() of a shape bigger than the buffer", ValueError,
        "needs 8192 bytes but the managed buffer has 4096",
        lambda ctx: managed.host_array(np.float32, (2048,)))
    add("prefetch() of a plain buffer", IA, "not managed memory", lambda ctx: plain.prefetch(dev))
    add("prefetch() to device 99", IA, "location 99 is neither CUABI_LOCATION_HOST",
        lambda ctx: managed.prefetch(99))
    add("prefetch() to 'moon'", ValueError, "a device ordinal or 'host', not 'moon'",
        lambda ctx: managed.prefetch("moon"))
    add("prefetch() to a float", TypeError, "location must be a cuabi.Device, a device ordinal",
        lambda ctx: managed.prefetch(0.0))
    add("prefetch() past the end", OOR, "reaches past the end of the 4096-byte buffer",
        lambda ctx: managed.prefetch(dev, offset=4000, nbytes=200))
    add("advise() of an unknown name", ValueError, "unknown advice 'sideways'",
        lambda ctx: managed.advise("sideways"))
    add("advise() of 99", IA, "advice 99 is not a cuabi_memory_advice",
        lambda ctx: managed.advise(99))
    add("advise() of a plain buffer", IA, "not managed memory",
        lambda ctx: plain.advise("read_mostly"))
    add("advise() to device -7", IA, "location -7 is neither CUABI_LOCATION_HOST",
        lambda ctx: managed.advise("preferred_location", -7))

    # --- IPC ----------------------------------------------------------------------------------
    add("ipc_handle() of a managed buffer", IA, "cuabi_buffer_get_ipc_handle: only buffers from",
        lambda ctx: managed.ipc_handle())
    add("open_ipc of this process's handle", IA, "the handle was exported by this process",
        lambda ctx: cuabi.DeviceBuffer.open_ipc(dev, plain.ipc_handle()))
    add("open_ipc of 128 bytes of garbage", IA, "the handle is not a cuabi IPC handle",
        lambda ctx: cuabi.DeviceBuffer.open_ipc(dev, bytes(range(128))))
    add("open_ipc of a handle cut short", IA, "handle_size is 100; an IPC handle is 128 bytes",
        lambda ctx: cuabi.DeviceBuffer.open_ipc(dev, plain.ipc_handle()[:100]))

    def damaged(ctx: CaseContext) -> None:
        h = bytearray(plain.ipc_handle())
        h[100] ^= 0x01
        cuabi.DeviceBuffer.open_ipc(dev, bytes(h))

    add("open_ipc of a damaged handle", IA, "checksum does not match", damaged)

    def event_as_buffer(ctx: CaseContext) -> None:
        with dev.create_event(interprocess=True) as ev:
            cuabi.DeviceBuffer.open_ipc(dev, ev.ipc_handle())

    add("open_ipc of an event's handle", IA, "the handle is an event's handle, not a buffer's",
        event_as_buffer)
    add("Event.open_ipc of a buffer's handle", IA, "the handle is a buffer's handle, not an event's",
        lambda ctx: cuabi.Event.open_ipc(dev, plain.ipc_handle()))
    add("open_ipc of a hex str", TypeError, "bytes.fromhex",
        lambda ctx: cuabi.DeviceBuffer.open_ipc(dev, plain.ipc_handle().hex()))
    add("open_ipc with a str as the pool", TypeError, "pool must be a cuabi.MemoryPool or None",
        lambda ctx: cuabi.DeviceBuffer.open_ipc(dev, plain.ipc_handle(), pool="p"))

    def plain_handle_with_pool(ctx: CaseContext) -> None:
        with cuabi.MemoryPool(dev) as pool:
            cuabi.DeviceBuffer.open_ipc(dev, plain.ipc_handle(), pool=pool)

    add("open_ipc of this process's handle with a pool", IA, "cuabi_buffer_open_ipc",
        plain_handle_with_pool)
    add("ipc_handle() of an event made without interprocess", IA,
        "the event was made without CUABI_EVENT_INTERPROCESS", lambda ctx: f.event.ipc_handle())
    add("an interprocess event with timing", IA,
        "CUABI_EVENT_INTERPROCESS needs CUABI_EVENT_DISABLE_TIMING",
        lambda ctx: cuabi.Event(dev, interprocess=True, timing=True))
    add("Event(dev, handle) given positionally", TypeError, "takes its options as keywords",
        lambda ctx: cuabi.Event(dev, 1))

    # --- Peers ---------------------------------------------------------------------------------
    add("can_access_peer of an int", TypeError, "peer must be a cuabi.Device, not int",
        lambda ctx: dev.can_access_peer(0))
    add("enable_peer_access of a device and itself", IA, "a device is not its own peer",
        lambda ctx: dev.enable_peer_access(dev))

    def enable_same_gpu(ctx: CaseContext) -> None:
        with cuabi.Device(0, backend=b) as same:
            dev.enable_peer_access(same)

    add("enable_peer_access of another handle of the same GPU", IA, "not its own peer",
        enable_same_gpu)
    add("peer_attribute of a device and itself", IA, "cuabi_device_get_peer_attribute",
        lambda ctx: dev.peer_attribute(dev, 1))
    add("peer_attribute by an unknown name", ValueError, "unknown peer attribute 'speed'",
        lambda ctx: dev.peer_attribute(dev, "speed"))
    add("copy_path from a host array", TypeError, "src must be a DeviceBuffer, not ndarray",
        lambda ctx: plain.copy_path(np.zeros(4)))

    def copy_path_closed(ctx: CaseContext) -> None:
        gone = dev.alloc(64)
        gone.close()
        plain.copy_path(gone)

    add("copy_path from a closed buffer", IH, "src is not a live cuabi_buffer", copy_path_closed)

    # --- Pitched memory and fills ----------------------------------------------------------------
    add("alloc_pitched with 3-byte elements", IA, "element_size is 3; expected 4, 8 or 16",
        lambda ctx: dev.alloc_pitched(64, 4, 3))
    add("alloc_pitched of 0 rows", IA, "height is 0", lambda ctx: dev.alloc_pitched(64, 0))
    add("alloc_pitched of -1 bytes", IA, "width_bytes = -1 is out of range",
        lambda ctx: dev.alloc_pitched(-1, 4))

    def fill_past_end(ctx: CaseContext) -> None:
        plain.memset(0)
        try:
            plain.fill(7, np.uint32, offset=4000, count=100)
        finally:
            ctx.expect(not plain.copy_to_host(np.empty(4096, np.uint8)).any(),
                       "the buffer was written although the fill was refused")

    add("a fill past the end", OOR, "fill range", fill_past_end)
    add("a fill of 3-byte elements", IA, "element_size is 3; expected 1, 2 or 4",
        lambda ctx: plain.fill(1, 3))
    add("a fill of float64", IA, "element_size is 8; expected 1, 2 or 4",
        lambda ctx: plain.fill(1.0, np.float64))
    add("a fill value too big for its element size", IA, "value 65536 does not fit in 2 byte(s)",
        lambda ctx: plain.fill(0x10000, 2))
    add("a fill value too big for uint16", IA, "value = 65536 does not fit uint16",
        lambda ctx: plain.fill(0x10000, np.uint16))
    add("a fill off the element boundary", IA, "does not put the fill on a 4-byte boundary",
        lambda ctx: plain.fill(1, np.uint32, offset=2))
    add("a fill of a float as int32", TypeError, "a fill of int32 takes an int, not float",
        lambda ctx: plain.fill(1.5, np.int32))
    add("a fill of an untyped buffer without a dtype", TypeError, "needs a dtype",
        lambda ctx: plain.fill(1))
    add("a fill on an Event as the stream", TypeError, "stream must be a cuabi.Stream",
        lambda ctx: plain.fill(1, np.uint8, stream=f.event))

    # --- 2D and 3D copies -------------------------------------------------------------------------
    z = functools.partial(np.zeros, dtype=np.float32)
    copy = cuabi.copy_3d
    add("a box past a pitched buffer's rows", OOR, "dst box reaches byte",
        lambda ctx: copy(pitched, z((9, 16))))
    add("a box past a linear buffer's end", OOR, "src box reaches byte",
        lambda ctx: copy(z((2, 1024)), plain))
    add("a pitch smaller than the row", IA, "src pitch 8 is smaller than the row",
        lambda ctx: copy(z((2, 4)), plain, (16, 2), src_pitch=8))
    add("a box past an array's width", OOR, "dst box's x range [0, 9) exceeds the array's width of 8",
        lambda ctx: copy(arr, z((8, 9))))
    add("a box past an array's rows", OOR, "exceed the array's height of 8",
        lambda ctx: copy(arr, z((2, 8)), dst_origin=(0, 7)))
    add("an array box of part of an element", IA, "must be whole elements of the array's 4 bytes",
        lambda ctx: copy(arr, np.zeros((1, 6), np.uint8)))
    add("a pitch for an array side", IA, "dst_pitch and dst_height must be 0 for an array",
        lambda ctx: copy(arr, z((8, 8)), dst_pitch=64))
    add("a copy between buffers without an extent", ValueError, "copy_3d needs an extent",
        lambda ctx: copy(plain, dev.alloc(64)))

    def closed_array(ctx: CaseContext) -> None:
        a = cuabi.Array(dev, 8, np.float32)
        a.close()
        a.copy_from(z(8))

    add("copy_from() of a closed array", IH, "desc->dst_array is not a live cuabi_array",
        closed_array)

    # --- Arrays ------------------------------------------------------------------------------------
    add("an array of width 0", IA, "desc->width is 0", lambda ctx: cuabi.Array(dev, 0))
    add("an array of 4 dimensions", ValueError, "an array's shape is (width,)",
        lambda ctx: cuabi.Array(dev, (1, 2, 3, 4)))
    add("a layered array of one dimension", ValueError, "a layered array's shape is",
        lambda ctx: cuabi.Array(dev, 8, layered=True))
    add("an array of float64", ValueError, "no array format holds float64",
        lambda ctx: cuabi.Array(dev, 8, np.float64))
    add("an array of 3 channels", IA, "desc->channels is 3; expected 1, 2 or 4",
        lambda ctx: cuabi.Array(dev, 8, np.float32, 3))
    add("an array wider than the device allows", IA, "exceeds the device's limit",
        lambda ctx: cuabi.Array(dev, (4, 1 << 30)))
    add("an array with a negative extent", IA, "shape[0] = -4 is out of range",
        lambda ctx: cuabi.Array(dev, (-4, 4)))
    add("a gather array of 1D", IA, "TEXTURE_GATHER applies to 2D arrays only",
        lambda ctx: cuabi.Array(dev, 8, gather=True))
    add("a cubemap of faces that are not square", IA,
        "a cubemap has square faces (width 4, height 8) and depth 6",
        lambda ctx: cuabi.Array(dev, (6, 8, 4), np.float32, cubemap=True))
    add("a cubemap of 5 faces", IA,
        "and depth 6, or a multiple of 6 when layered (depth 5)",
        lambda ctx: cuabi.Array(dev, (5, 8, 8), np.float32, cubemap=True))
    add("a layered cubemap of 9 faces", IA, "or a multiple of 6 when layered (depth 9)",
        lambda ctx: cuabi.Array(dev, (9, 8, 8), np.float32, cubemap=True, layered=True))
    add("a cubemap of 2D shape", IA, "a cubemap has square faces (width 8, height 8) and depth 6",
        lambda ctx: cuabi.Array(dev, (8, 8), np.float32, cubemap=True))
    add("copy_from() of the wrong shape", ValueError,
        "src has shape (8, 7), but the array's is (8, 8)", lambda ctx: arr.copy_from(z((8, 7))))
    add("copy_from() of the wrong dtype", ValueError,
        "src has dtype float64, but the array's elements are float32",
        lambda ctx: arr.copy_from(np.zeros((8, 8))))
    add("copy_to() into the wrong shape", ValueError, "dst has shape (64,)",
        lambda ctx: arr.copy_to(z(64)))
    ro = z((8, 8))
    ro.flags.writeable = False
    add("copy_to() into a read-only array", ValueError, "dst is read-only",
        lambda ctx: arr.copy_to(ro))
    add("copy_from() of a list", TypeError, "src must be a NumPy array",
        lambda ctx: arr.copy_from([[0.0] * 8] * 8))

    # --- Textures and surfaces -----------------------------------------------------------------------
    Tex = cuabi.Texture
    add("an unknown filter mode", ValueError, "unknown filter mode 'bilinear'",
        lambda ctx: Tex(arr, filter_mode="bilinear"))
    add("an unknown address mode", ValueError, "unknown address mode 'repeat'",
        lambda ctx: Tex(arr, address_mode="repeat"))
    add("four address modes", ValueError, "address_mode must have 1 to 3 modes",
        lambda ctx: Tex(arr, address_mode=("clamp",) * 4))
    add("a border colour of three values", ValueError, "border_color must be 4 values",
        lambda ctx: Tex(arr, border_color=(1, 2, 3)))
    add("wrap without normalised coordinates", IA, "needs normalized_coords = 1",
        lambda ctx: Tex(arr, address_mode="wrap"))
    add("linear filtering of int32 elements", IA,
        "linear filtering of integer elements needs read_mode CUABI_READ_NORMALIZED_FLOAT",
        lambda ctx: Tex(f.int_array, filter_mode="linear"))
    add("normalised reads of int32 elements", IA, "applies to 8- and 16-bit integer formats only",
        lambda ctx: Tex(f.int_array, read_mode="normalized_float"))
    add("an address mode of 99", IA, "desc->address_x 99 is not a cuabi_address_mode",
        lambda ctx: Tex(arr, address_mode=99))
    add("a dtype for an array texture", TypeError, "dtype and channels describe a buffer's",
        lambda ctx: Tex(arr, dtype=np.float32))
    add("a width for an array texture", IA, "desc->offset, width, height and pitch describe a buffer",
        lambda ctx: Tex(arr, width=4))
    add("a texture over more than the buffer", OOR, "reach past the end of the 4096-byte buffer",
        lambda ctx: Tex(plain, dtype=np.float32, width=2048))
    add("a texture at an unaligned offset", IA, "is not a multiple of the device's texture alignment",
        lambda ctx: Tex(plain, dtype=np.float32, offset=4))
    add("a linear texture with linear filtering", IA, "takes neither linear filtering",
        lambda ctx: Tex(plain, dtype=np.float32, filter_mode="linear"))
    add("rows of a linear buffer without a pitch", IA, "desc->pitch is 0 and the buffer is not pitched",
        lambda ctx: Tex(plain, dtype=np.float32, width=16, height=4))
    add("a texture over a buffer of float64", ValueError, "no array format holds float64",
        lambda ctx: Tex(plain, dtype=np.float64))

    def closed_texture_arg(ctx: CaseContext) -> None:
        tex = Tex(arr)
        tex.close()
        tex.tex_object

    add("the value of a closed texture", IH, "the texture was closed", closed_texture_arg)
    add("a surface over an array made without surface=True", IA,
        "made without CUABI_ARRAY_SURFACE_LOAD_STORE", lambda ctx: cuabi.Surface(f.int_array))
    add("a surface over a buffer", TypeError, "a surface's array must be a cuabi.Array",
        lambda ctx: cuabi.Surface(plain))

    def surface_closed_array(ctx: CaseContext) -> None:
        a = cuabi.Array(dev, (4, 4), np.float32, surface=True)
        a.close()
        cuabi.Surface(a)

    add("a surface over a closed array", IH, "array is not a live cuabi_array", surface_closed_array)

    # --- Batches: the binding lays out the arrays; the core names the element at fault -------
    MemOp, CopyOp, ManagedRange = cuabi.MemOp, cuabi.CopyOp, cuabi.ManagedRange
    add("a memory-operation batch holding a tuple", TypeError, "ops[1] must be a cuabi.MemOp, not tuple",
        lambda ctx: s.mem_op_batch([MemOp.write(plain, 0, 1), (plain, 0, 1)]))
    add("a memory operation on a str", TypeError,
        "ops[0].buffer must be a cuabi.DeviceBuffer or cuabi.PinnedBuffer, not str",
        lambda ctx: s.mem_op_batch([MemOp.write("plain", 0, 1)]))
    add("a misaligned word in a batch", IA, "cuabi_stream_mem_op_batch: ops[1]: offset 2 is not a multiple",
        lambda ctx: s.mem_op_batch([MemOp.write(plain, 0, 1), MemOp.write(plain, 2, 1)]))
    add("an empty memory-operation batch", IA, "cuabi_stream_mem_op_batch: count is 0",
        lambda ctx: s.mem_op_batch([]))
    add("a copy batch past a buffer's end", OOR,
        "cuabi_stream_copy_batch: ops[1]: destination range [4000, 4000 + 200)",
        lambda ctx: s.copy_batch([CopyOp(plain, np.zeros(8, np.uint8), 8),
                                  CopyOp(plain, np.zeros(200, np.uint8), 200, 4000)]))
    add("a copy batch with no source", IA, "ops[0]: none of src_buffer, src_host_buffer and src_host is set",
        lambda ctx: s.copy_batch([CopyOp(plain, None, 8)]))
    add("a copy batch holding a MemOp", TypeError, "ops[0] must be a cuabi.CopyOp, not MemOp",
        lambda ctx: s.copy_batch([MemOp.write(plain, 0, 1)]))
    add("a 3D batch with a box past a buffer's end", OOR,
        "cuabi_stream_copy_3d_batch: copies[1]: dst box reaches byte 4816 of the 4096-byte buffer",
        lambda ctx: s.copy_3d_batch([
            cuabi.Copy3dOp(plain, np.zeros((16, 16), np.uint8), dst_pitch=64),
            cuabi.Copy3dOp(plain, np.zeros((16, 16), np.uint8), dst_origin=(0, 60, 0), dst_pitch=64)]))
    add("a 3D batch holding a CopyOp", TypeError, "copies[0] must be a cuabi.Copy3dOp, not CopyOp",
        lambda ctx: s.copy_3d_batch([CopyOp(plain, None, 8)]))
    add("a prefetch batch over a plain buffer", IA,
        "cuabi_stream_prefetch_batch: ranges[1]: the buffer is a device buffer",
        lambda ctx: s.prefetch_batch([ManagedRange(managed), ManagedRange(plain)], dev))
    add("a discard batch past a managed buffer's end", OOR,
        "cuabi_stream_discard_batch: ranges[0]: discard range [4000, 4000 + 200)",
        lambda ctx: s.discard_batch([ManagedRange(managed, 4000, 200)]))
    return t.cases


def test_bad_input_corpus_memory_gpu(default_backend: Backend, summary_line) -> None:
    b = default_backend
    label = f"Python {b.name}, memory, GPU"
    reason = no_device_reason()
    if reason:
        summary_line(f"bad-input corpus ({label}): SKIPPED: {reason}")
        pytest.skip(reason)
    with no_collection():
        fixture = GpuFixture(b)
        try:
            result = run_corpus(b, gpu_cases(b, fixture))
            fixture.dev.synchronize()  # the context survived every case
        finally:
            fixture.close()
    report(label, result, summary_line)
    assert result.cases > 80

