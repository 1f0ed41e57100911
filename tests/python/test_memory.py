"""The memory features' Python side, no GPU: texture and surface objects as
kernel arguments in every packing form, the conversions of fill values,
locations, advice, array formats, IPC handles and event options, and the
geometry of NumPy arrays as sides of a 2D/3D copy (with the checks only the
binding can make, since the core sees a host pointer without a size).

What the core checks (ranges of buffers and arrays, kinds, flags, modes) is
tested through the library by test_memory_gpu.py and the bad-input corpus."""

from __future__ import annotations

import ctypes
import struct
import weakref
from types import SimpleNamespace

import numpy as np
import pytest

import cuabi
from cuabi import capi
from cuabi._arrays import Surface, Texture, _host_side, array_format, copy_3d
from cuabi._base import Resource
from cuabi._memory import _fill_value, ipc_handle_arg, location_arg
from cuabi._stream import event_flags
from test_packing import layout


def fake(cls, value: int):
    """A Texture or Surface holding ``value`` without a library: what the
    packing rules read of one (its handle is never used here)."""
    obj = cls.__new__(cls)
    Resource.__init__(obj, None, None)
    obj._value = value
    return obj


TEX = 0x1122334455667788
SURF = 0x0000000100000002


# ---------------------------------------------------------------------------
# Texture and surface objects as kernel arguments
# ---------------------------------------------------------------------------


def test_texture_and_surface_pass_their_8_byte_values_by_the_general_rules():
    lay = layout([0, 8, 16], [8, 8, 4])
    tex, surf = fake(Texture, TEX), fake(Surface, SURF)
    assert lay.pack((tex, surf, np.int32(5))) == struct.pack("<QQi", TEX, SURF, 5)
    assert lay._check.asked == [(8, 8, 4)]


def test_texture_and_surface_through_a_compiled_packer():
    lay = layout([0, 8], [8, 8])
    tex, surf = fake(Texture, TEX), fake(Surface, SURF)
    pack = lay.compile_packer((Texture, Surface))
    assert pack.format == "<QQ"  # the fast form: the value read without a call
    view = bytearray(16)
    assert pack(view, (tex, surf))
    assert bytes(view) == struct.pack("<QQ", TEX, SURF)
    other = fake(Texture, 42)
    assert pack(view, (other, surf))
    assert bytes(view) == struct.pack("<QQ", 42, SURF)


def test_a_texture_to_a_4_byte_parameter_goes_to_the_core_as_8_bytes():
    lay = layout([0], [4])
    with pytest.raises(cuabi.InvalidArgumentError, match="refuses"):
        lay.pack((fake(Texture, TEX),))
    assert lay._check.asked == [(8,)]


def test_a_closed_texture_or_surface_is_refused_naming_it():
    lay = layout([0], [8])
    tex, surf = fake(Texture, TEX), fake(Surface, SURF)
    pack = lay.compile_packer((Texture,))
    tex.close()
    assert tex.closed and tex._value is None
    view = bytearray(8)
    with pytest.raises(cuabi.InvalidHandleError, match="the texture was closed"):
        pack(view, (tex,))
    with pytest.raises(cuabi.InvalidHandleError, match="the texture was closed"):
        lay.pack((tex,))
    with pytest.raises(cuabi.InvalidHandleError, match="the texture was closed"):
        tex.tex_object
    surf.close()
    with pytest.raises(cuabi.InvalidHandleError, match="the surface was closed"):
        lay.pack((surf,))


def test_textures_the_ctypes_way():
    lay = layout([0, 8], [8, 8])
    tex, surf = fake(Texture, TEX), fake(Surface, SURF)
    want = struct.pack("<QQ", TEX, SURF)
    assert lay.pack((tex, surf), types=[ctypes.c_uint64, ctypes.c_void_p]) == want
    assert lay.pack((tex, surf), types=[None, ctypes.c_ulonglong]) == want
    params = capi.kernel_params([tex], [None])
    assert params.count == 1 and params.values[0].value == TEX
    with pytest.raises(cuabi.InvalidArgumentError, match="cannot convert"):
        lay.pack((tex, surf), types=[ctypes.c_float, None])


def test_the_object_value_properties():
    tex, surf = fake(Texture, TEX), fake(Surface, SURF)
    assert tex.tex_object == TEX and tex.__cuabi_ptr__ == TEX
    assert surf.surf_object == SURF


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, dtype, want",
    [
        (0xBEEF, np.uint16, (0xBEEF, 2)),
        (-1, np.int16, (0xFFFF, 2)),
        (-2, "int8", (0xFE, 1)),
        (True, np.bool_, (1, 1)),
        (0xDEADBEEF, np.uint32, (0xDEADBEEF, 4)),
        (-(1 << 31), np.int32, (0x80000000, 4)),
        (1.5, np.float32, (0x3FC00000, 4)),
        (-0.0, np.float32, (0x80000000, 4)),
        (1.0, np.float16, (0x3C00, 2)),
        (np.float32(2.0), np.float32, (0x40000000, 4)),
        (0xBEEF, 2, (0xBEEF, 2)),  # an element size: the value is its bits
        (0x1FFFF, 2, (0x1FFFF, 2)),  # bits above it are the core's to refuse
    ],
)
def test_fill_values(value, dtype, want):
    assert _fill_value(value, dtype) == want


@pytest.mark.parametrize(
    "value, dtype, exc, needle",
    [
        (0x10000, np.uint16, cuabi.InvalidArgumentError, "value = 65536 does not fit uint16"),
        (-1, np.uint32, cuabi.InvalidArgumentError, "value = -1 does not fit uint32"),
        (128, np.int8, cuabi.InvalidArgumentError, "does not fit int8 (-128 to 127)"),
        (1.5, np.int32, TypeError, "a fill of int32 takes an int, not float"),
        (1e6, np.float16, cuabi.InvalidArgumentError, "out of the range of float16"),
        ("1", np.float32, TypeError, "takes a number, not str"),
        (-1, 4, cuabi.InvalidArgumentError, "value = -1 is out of range"),
        (1 << 32, 4, cuabi.InvalidArgumentError, "value = 4294967296 is out of range"),
        (1, np.dtype("U1"), TypeError, "integer or floating-point dtype"),
    ],
)
def test_fill_values_refused(value, dtype, exc, needle):
    with pytest.raises(exc) as info:
        _fill_value(value, dtype)
    assert type(info.value) is exc and needle in str(info.value)


def test_fill_of_an_element_size_the_core_refuses_passes_it_on():
    # 8-byte elements: the core answers, in its words, whatever the value.
    assert _fill_value(1.0, np.float64) == (0, 8)
    assert _fill_value(7, np.int64) == (0, 8)


def test_locations():
    assert location_arg("host") == capi.CUABI_LOCATION_HOST == cuabi.LOCATION_HOST == -1
    assert location_arg(" HOST ") == -1
    assert location_arg(cuabi.LOCATION_HOST) == -1
    assert location_arg(3) == 3
    assert location_arg(np.int32(1)) == 1
    with pytest.raises(ValueError, match="a device ordinal or 'host', not 'gpu'"):
        location_arg("gpu")
    with pytest.raises(TypeError, match="not float"):
        location_arg(1.0)
    with pytest.raises(TypeError, match="not bool"):
        location_arg(True)
    with pytest.raises(cuabi.InvalidArgumentError, match="location = 2147483648 is out of range"):
        location_arg(1 << 31)


def advice_arg(advice):
    """The ``advice`` argument DeviceBuffer.advise passes the library (the
    generated method, over a stand-in for the library's function)."""
    passed = []

    class Fn:
        def cuabi_buffer_advise(self, *args):
            passed.append(args)
            return 0

    buf = cuabi.DeviceBuffer.__new__(cuabi.DeviceBuffer)
    Resource.__init__(buf, SimpleNamespace(fn=Fn()), None)
    buf._nbytes, buf._device_ordinal = 64, 0
    buf.advise(advice)
    return passed[0][3]


def test_advice_by_member_value_and_name():
    assert advice_arg(cuabi.MemoryAdvice.SET_READ_MOSTLY) == 1
    assert advice_arg("read_mostly") == advice_arg("SET_READ_MOSTLY") == 1
    assert advice_arg("unset_read_mostly") == 2
    assert advice_arg("preferred_location") == 3
    assert advice_arg("unset_preferred_location") == 4
    assert advice_arg("accessed_by") == 5
    assert advice_arg("Unset_Accessed_By") == 6
    assert advice_arg(99) == 99  # the core refuses it
    with pytest.raises(ValueError, match="unknown advice 'read_often'; use one of set_read_mostly"):
        advice_arg("read_often")


@pytest.mark.parametrize(
    "value, want",
    [
        (np.float32, cuabi.ArrayFormat.F32),
        ("float16", cuabi.ArrayFormat.F16),
        (np.uint8, cuabi.ArrayFormat.U8),
        ("u2", cuabi.ArrayFormat.U16),
        (np.uint32, cuabi.ArrayFormat.U32),
        (np.int8, cuabi.ArrayFormat.S8),
        ("int16", cuabi.ArrayFormat.S16),
        (np.dtype("i4"), cuabi.ArrayFormat.S32),
        (cuabi.ArrayFormat.F16, cuabi.ArrayFormat.F16),
        (0x20, cuabi.ArrayFormat.F32),
    ],
)
def test_array_formats(value, want):
    assert array_format(value) is want


def test_array_formats_refused():
    with pytest.raises(ValueError, match="no array format holds float64; use one of uint8"):
        array_format(np.float64)
    with pytest.raises(ValueError, match="no array format has the value 7"):
        array_format(7)
    with pytest.raises(TypeError, match="dtype must be a NumPy dtype or a cuabi.ArrayFormat"):
        array_format(object())


def test_ipc_handles_are_bytes():
    raw = bytes(range(128))
    assert ipc_handle_arg(raw) == raw
    assert ipc_handle_arg(bytearray(raw)) == raw
    assert ipc_handle_arg(memoryview(raw)) == raw
    assert ipc_handle_arg(np.frombuffer(raw, np.uint8)) == raw
    assert ipc_handle_arg(b"") == b""  # the core refuses the size
    with pytest.raises(TypeError, match=r"bytes, not str \(bytes.fromhex"):
        ipc_handle_arg(raw.hex())
    with pytest.raises(TypeError, match="bytes, not int"):
        ipc_handle_arg(7)


def test_event_flags():
    F = cuabi.capi.EventFlag
    assert event_flags(None, False, False) == 0
    assert event_flags(False, False, False) == F.DISABLE_TIMING
    assert event_flags(None, True, False) == F.BLOCKING_SYNC
    # interprocess events turn timing off unless asked (the core refuses timing)
    assert event_flags(None, False, True) == F.INTERPROCESS | F.DISABLE_TIMING
    assert event_flags(True, False, True) == F.INTERPROCESS


def test_the_new_names_are_exported():
    for name in (
        "MemoryPool",
        "Array",
        "Texture",
        "Surface",
        "copy_3d",
        "BufferKind",
        "MemoryAdvice",
        "CopyPath",
        "ArrayFormat",
        "AddressMode",
        "FilterMode",
        "ReadMode",
        "LOCATION_HOST",
    ):
        assert name in cuabi.__all__ and hasattr(cuabi, name), name
    assert cuabi.BufferKind is capi.BufferKind


# ---------------------------------------------------------------------------
# NumPy arrays as one side of a 2D/3D copy
# ---------------------------------------------------------------------------


def test_host_geometry_of_a_contiguous_array():
    a = np.zeros((3, 4, 5), np.float32)
    s = _host_side(a, "src", False, 1)
    assert (s.row_bytes, s.rows, s.slices, s.pitch, s.slice_rows) == (20, 4, 3, 20, 4)
    assert s.address == a.ctypes.data


def test_host_geometry_of_a_slice_gives_the_pitches():
    big = np.zeros((6, 10, 32), np.uint16)
    view = big[1:4, 2:7, 3:11]
    s = _host_side(view, "dst", True, 1)
    assert (s.row_bytes, s.rows, s.slices) == (16, 5, 3)
    assert s.pitch == 64 and s.slice_rows == 10  # the big array's row and slice
    assert s.address == view.ctypes.data


def test_host_geometry_of_channels():
    a = np.zeros((2, 7, 4), np.uint8)  # 2 rows of 7 elements of 4 channels
    s = _host_side(a, "src", False, 2)
    assert (s.row_bytes, s.rows, s.slices, s.pitch) == (28, 2, 1, 28)
    a4 = np.zeros((3, 2, 7, 4), np.uint8)[:, :, :5]
    s = _host_side(a4, "src", False, 2)
    assert (s.row_bytes, s.rows, s.slices, s.pitch, s.slice_rows) == (20, 2, 3, 28, 2)


def test_host_geometry_one_row_per_slice():
    a = np.zeros((4, 1, 8), np.float32)[:, :, :6]
    s = _host_side(a, "src", False, 1)
    assert (s.row_bytes, s.rows, s.slices, s.pitch, s.slice_rows) == (24, 1, 4, 32, 1)


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: np.zeros((4, 8), np.float32)[:, ::2], "rows are not contiguous"),
        (lambda: np.zeros((4, 8), np.float32)[::-1], "negative or overlapping strides"),
        (lambda: np.zeros((8, 4), np.float32).T, "rows are not contiguous"),
        (lambda: np.zeros((2, 3, 4, 5, 6), np.float32), "has 5 dimensions"),
        (
            lambda: np.lib.stride_tricks.as_strided(
                np.zeros(64, np.float32), (2, 3, 4), (20, 16, 4)
            ),
            "slices are 20 bytes apart",
        ),
    ],
)
def test_host_geometry_refused(make, needle):
    with pytest.raises(ValueError, match=needle):
        _host_side(make(), "src", False, 1)


def test_read_only_destination_refused():
    a = np.zeros((2, 2), np.float32)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="dst is read-only"):
        copy_3d(a, np.zeros((2, 2), np.float32))


@pytest.mark.parametrize(
    "extent, kw, needle",
    [
        ((100, 1, 1), {}, "src box's x range 0 + 100 bytes is past the end of the host array"),
        ((8, 3, 1), {}, "src box's y range 0 + 3 rows is past the end of the host array (2 rows)"),
        ((8, 1, 2), {}, "z range 0 + 2 slices"),
        ((8, 1, 1), {"src_origin": (0, 2)}, "src box's y range 2 + 1 rows"),
        ((8, 0, 0), {"dst_origin": (0, 2, 0)}, "dst box's y range 2 + 1 rows"),
        ((4, 1, 1), {"dst_origin": (12,)}, "dst box's x range 12 + 4 bytes"),
    ],
)
def test_a_box_past_a_host_array_is_refused_before_the_core(extent, kw, needle):
    a, b = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)
    with pytest.raises(cuabi.OutOfRangeError) as info:
        copy_3d(a, b, extent, **kw)
    assert needle in info.value.message


@pytest.mark.parametrize(
    "dst, src, kw, exc, needle",
    [
        (np.zeros(4), "x", {}, TypeError, "src must be a NumPy array, a cuabi.DeviceBuffer"),
        ([0.0] * 4, np.zeros(4), {}, TypeError, "dst must be a NumPy array"),
        (np.zeros(4), b"abcd", {}, TypeError, "not bytes"),
        (np.zeros(4), np.zeros(4), {"src_pitch": 64}, ValueError, "a host array's strides give"),
        (np.zeros(4), np.zeros(4), {"extent": (1, 2, 3, 4)}, ValueError, "extent must have 1 to 3"),
        (np.zeros(4), np.zeros(4), {"src_origin": -1}, cuabi.InvalidArgumentError,
         "src_origin[0] = -1 is out of range"),
        (np.zeros(4), np.zeros(4), {"extent": "big"}, TypeError, "extent must be an int or a tuple"),
        (np.zeros(4), np.zeros(4), {"extent": (8.0,)}, TypeError, "extent[0] must be an int"),
    ],
)
def test_copy_3d_arguments_refused(dst, src, kw, exc, needle):
    with pytest.raises(exc) as info:
        copy_3d(dst, src, **kw)
    assert type(info.value) is exc and needle in str(info.value)


# ---------------------------------------------------------------------------
# Objects refused before any device is needed
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: cuabi.Texture(42), "a texture's source must be a cuabi.Array or a cuabi.DeviceBuffer, not int"),
        (lambda: cuabi.Texture(np.zeros(4)), "not ndarray"),
        (lambda: cuabi.Surface(None), "a surface's array must be a cuabi.Array, not NoneType"),
        (lambda: cuabi.Array("0", 8), "device must be a cuabi.Device, not str"),
        (lambda: cuabi.MemoryPool(0), "device must be a cuabi.Device, not int"),
        (lambda: cuabi.MemoryPool.import_fd(None, 3), "device must be a cuabi.Device"),
        (lambda: cuabi.Event(None, interprocess=True), "device must be a cuabi.Device"),
        (lambda: cuabi.DeviceBuffer.open_ipc(None, bytes(128)), "device must be a cuabi.Device"),
        (lambda: cuabi.Event.open_ipc(1, bytes(128)), "device must be a cuabi.Device, not int"),
    ],
)
def test_objects_refused_without_a_device(make, needle):
    with pytest.raises(TypeError) as info:
        make()
    assert needle in str(info.value)


def test_objects_keep_nothing_alive_when_refused():
    holder = np.zeros(4)
    ref = weakref.ref(holder)
    with pytest.raises(TypeError):
        cuabi.Texture(holder)
    del holder
    assert ref() is None


# ---------------------------------------------------------------------------
# Every call reaches the core, on either backend
# ---------------------------------------------------------------------------

DEAD = 0xDEAD0000BEEF  # a handle value no object ever had


def stale(b, cls, kind: str, **attrs):
    """An object of ``cls`` over a made-up ``cuabi_<kind>`` handle, built
    without calling the library: each of its calls must reach the core and
    come back as the core's InvalidHandleError, whatever the backend (so the
    arguments, out-parameters and structs were marshalled as the header
    declares them)."""
    obj = cls.__new__(cls)
    Resource.__init__(obj, b, b.handle(DEAD, "cuabi_" + kind))
    for key, value in attrs.items():
        setattr(obj, key, value)
    return obj


def stale_buffer(b, device, **attrs):
    fields = dict(
        device=device,
        _foreign=None,
        pool=None,
        _rows=None,
        _kind=None,
        _pitch=None,
        _ptr=0x7000,
        _nbytes=4096,
        _ordinal=0,
        _dtype=None,
        _typestr="|u1",
        shape=(4096,),
        _cai_stream=None,
    )
    fields.update(attrs)
    return stale(b, cuabi.DeviceBuffer, "buffer", **fields)


def reaching_calls(b):
    dev = stale(b, cuabi.Device, "device", _ordinal=0)
    other = stale(b, cuabi.Device, "device", _ordinal=1)
    stream = stale(b, cuabi.Stream, "stream", device=dev, _owner=None,
                   _plan_users=weakref.WeakSet())
    pool = stale(b, cuabi.MemoryPool, "memory_pool", device=dev, is_default=False)
    buf = stale_buffer(b, dev)
    typed = stale_buffer(b, dev, _dtype=np.dtype(np.float32), _typestr="<f4", shape=(1024,))
    event = stale(b, cuabi.Event, "event", device=dev)
    arr = stale(b, cuabi.Array, "array", device=dev, shape=(4, 8), format=cuabi.ArrayFormat.F32,
                channels=1, layered=False, flags=cuabi.capi.ArrayFlag(0), _extent=(8, 4, 0),
                _element_size=4)
    unread = stale(b, cuabi.Array, "array", device=dev, shape=(4, 8), format=cuabi.ArrayFormat.F32,
                   channels=1, layered=False, flags=cuabi.capi.ArrayFlag(0), _extent=(8, 4, 0))
    tex = stale(b, cuabi.Texture, "texture", _value=None)
    handle = bytes(128)
    host = np.zeros((4, 8), np.float32)
    return [
        # (what, call, the function the core names)
        ("alloc", lambda: dev.alloc(64), "cuabi_buffer_alloc_with_pointer"),
        ("alloc on a stream", lambda: dev.alloc(64, stream=stream),
         "cuabi_buffer_alloc_async_with_pointer"),
        ("alloc from a pool", lambda: dev.alloc(64, pool=pool),
         "cuabi_buffer_alloc_async_with_pointer"),
        ("alloc_managed", lambda: dev.alloc_managed(64, attach_host=True), "cuabi_buffer_alloc_managed"),
        ("alloc_pitched", lambda: dev.alloc_pitched(64, 4, 8), "cuabi_buffer_alloc_pitched"),
        ("default_memory_pool", lambda: dev.default_memory_pool, "cuabi_device_get_default_memory_pool"),
        ("create_event", lambda: dev.create_event(interprocess=True), "cuabi_event_create"),
        ("Event()", lambda: cuabi.Event(dev, blocking_sync=True), "cuabi_event_create"),
        ("can_access_peer", lambda: dev.can_access_peer(other), "cuabi_device_can_access_peer"),
        ("enable_peer_access", lambda: dev.enable_peer_access(other), "cuabi_device_enable_peer_access"),
        ("disable_peer_access", lambda: dev.disable_peer_access(other), "cuabi_device_disable_peer_access"),
        ("peer_attribute", lambda: dev.peer_attribute(other, "native_atomic_supported"),
         "cuabi_device_get_peer_attribute"),
        ("MemoryPool()", lambda: cuabi.MemoryPool(dev, 1 << 20, 1 << 10, ipc=True),
         "cuabi_memory_pool_create"),
        ("MemoryPool.import_fd", lambda: cuabi.MemoryPool.import_fd(dev, 3), "cuabi_memory_pool_import_fd"),
        ("pool.release_threshold", lambda: pool.release_threshold,
         "cuabi_memory_pool_get_release_threshold"),
        ("pool.release_threshold =", lambda: setattr(pool, "release_threshold", 5),
         "cuabi_memory_pool_set_release_threshold"),
        ("pool.trim", lambda: pool.trim(10), "cuabi_memory_pool_trim"),
        ("pool.usage", lambda: pool.usage, "cuabi_memory_pool_get_usage"),
        ("pool.export_fd", lambda: pool.export_fd(), "cuabi_memory_pool_export_fd"),
        ("pool.alloc", lambda: pool.alloc(64, stream), "cuabi_buffer_alloc_async_with_pointer"),
        ("buf.kind", lambda: buf.kind, "cuabi_buffer_get_kind"),
        ("buf.pitch", lambda: buf.pitch, "cuabi_buffer_get_pitch"),
        ("buf.free", lambda: buf.free(), "cuabi_buffer_free_async"),
        ("buf.host_array", lambda: buf.host_array(np.float32), "cuabi_buffer_get_host_pointer"),
        ("buf.prefetch", lambda: buf.prefetch(dev, stream), "cuabi_buffer_prefetch_async"),
        ("buf.prefetch host", lambda: buf.prefetch("host", offset=8, nbytes=8), "cuabi_buffer_prefetch_async"),
        ("buf.advise", lambda: buf.advise("accessed_by", dev), "cuabi_buffer_advise"),
        ("buf.advise host", lambda: buf.advise(cuabi.MemoryAdvice.SET_PREFERRED_LOCATION, "host"),
         "cuabi_buffer_advise"),
        ("buf.ipc_handle", lambda: buf.ipc_handle(), "cuabi_buffer_get_ipc_handle"),
        ("DeviceBuffer.open_ipc", lambda: cuabi.DeviceBuffer.open_ipc(dev, handle),
         "cuabi_buffer_open_ipc"),
        ("DeviceBuffer.open_ipc with a pool", lambda: cuabi.DeviceBuffer.open_ipc(dev, handle, pool),
         "cuabi_buffer_open_ipc"),
        ("buf.copy_path", lambda: buf.copy_path(typed), "cuabi_buffer_get_copy_path"),
        ("buf.fill", lambda: buf.fill(7, np.uint16), "cuabi_buffer_fill"),
        ("buf.fill async", lambda: typed.fill(1.5, stream=stream), "cuabi_buffer_fill_async"),
        ("event.ipc_handle", lambda: event.ipc_handle(), "cuabi_event_get_ipc_handle"),
        ("Event.open_ipc", lambda: cuabi.Event.open_ipc(dev, handle), "cuabi_event_open_ipc"),
        ("Array()", lambda: cuabi.Array(dev, (2, 3, 4), np.uint8, 4, surface=True),
         "cuabi_array_create"),
        ("Array() layered", lambda: cuabi.Array(dev, (2, 4), "float16", layered=True, gather=True),
         "cuabi_array_create"),
        ("arr.cu_array", lambda: arr.cu_array, "cuabi_array_get_handle"),
        ("arr.describe", lambda: arr.describe(), "cuabi_array_get_desc"),
        ("arr.element_size", lambda: unread.element_size, "cuabi_array_get_element_size"),
        ("arr.copy_from", lambda: arr.copy_from(host), "cuabi_copy_3d"),
        ("arr.copy_from a buffer", lambda: arr.copy_from(buf, stream=stream), "cuabi_copy_3d_async"),
        ("arr.copy_to", lambda: arr.copy_to(), "cuabi_copy_3d"),
        ("copy_3d", lambda: copy_3d(buf, host, src_origin=(4, 1), extent=(8, 2)), "cuabi_copy_3d"),
        ("copy_3d async", lambda: copy_3d(host, buf, stream=stream, src_pitch=64, src_height=4),
         "cuabi_copy_3d_async"),
        ("Texture() of an array", lambda: cuabi.Texture(
            arr, address_mode=("wrap", "mirror", cuabi.AddressMode.BORDER),
            filter_mode="linear", read_mode="normalized_float", normalized_coords=True,
            border_color=(1, 2, 3, 4)), "cuabi_texture_create"),
        ("Texture() of a buffer", lambda: cuabi.Texture(buf, dtype=np.uint16, channels=2, width=8,
                                                       height=0), "cuabi_texture_create"),
        ("Texture() of a buffer's rows", lambda: cuabi.Texture(typed, width=8, height=4, pitch=64,
                                                              offset=512), "cuabi_texture_create"),
        ("Texture() of a buffer, its pitch asked", lambda: cuabi.Texture(typed), "cuabi_buffer_get_pitch"),
        ("Surface()", lambda: cuabi.Surface(arr), "cuabi_surface_create"),
        ("a stale texture's handle", lambda: b.get("cuabi_texture_get_handle", tex.handle,
                                                  out="uint64_t"), "cuabi_texture_get_handle"),
    ]


@pytest.mark.parametrize("what", [c[0] for c in reaching_calls(cuabi.load_backend("ctypes"))])
def test_every_memory_call_reaches_the_core(backend, what):
    calls = {c[0]: c for c in reaching_calls(backend)}
    _, call, fn = calls[what]
    with pytest.raises(cuabi.InvalidHandleError) as info:
        call()
    assert info.value.message.startswith(fn + ": "), info.value.message
    assert "is not a live cuabi_" in info.value.message
