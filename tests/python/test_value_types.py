"""The value types the generated object layer (cuabi/_objects.py) makes of
the header's value structs (the model's `value`), on both backends, without
a GPU: their defaults are the C init's, read at run time; converting one
gives the init's struct with the fields set over it, each range-checked and
named; reading one back gives every field, enums as their classes; and the
generated methods that take or return one reach the core, through functions
bound once."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest

import cuabi
from cuabi import _api, _objects
from cuabi._objects import AccessPolicyWindow, ArrayDesc, LaunchRecord, MemoryPoolDesc
from conftest import BACKEND_PARAMS

DEAD = 0xDEAD0000BEEF
MODEL = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "include", "cuabi", "cuabi.json",
)
VALUE_TYPES = {
    "cuabi_memory_pool_desc": MemoryPoolDesc,
    "cuabi_array_desc": ArrayDesc,
    "cuabi_access_policy_window": AccessPolicyWindow,
    "cuabi_launch_record": LaunchRecord,
}
Prop = _api.AccessProperty


def stale(backend, cls, kind):
    return cls._from_handle(backend, backend.handle(DEAD, "cuabi_" + kind))


def fields_of(ctype):
    return [name for name, _ in getattr(_api, ctype)._fields_[1:]]


def read(struct, names):
    return {name: getattr(struct, name) for name in names}


def test_every_value_struct_of_the_model_has_its_value_type():
    with open(MODEL, encoding="utf-8") as f:
        model = json.load(f)
    values = {s["name"] for s in model["structs"] if s.get("value")}
    assert values == set(VALUE_TYPES)
    for ctype, cls in VALUE_TYPES.items():
        assert dataclasses.is_dataclass(cls)
        assert [f.name for f in dataclasses.fields(cls)] == fields_of(ctype)
        # Every field None: what the C init gives.
        assert all(v is None for v in dataclasses.astuple(cls()))
        assert getattr(cuabi, cls.__name__) is cls
        assert cls.__name__ in cuabi.__all__ and cls.__name__ in _objects.__all__


@pytest.mark.parametrize("ctype", sorted(VALUE_TYPES))
def test_defaults_are_the_c_inits(backend, ctype):
    cls = VALUE_TYPES[ctype]
    got = cls.defaults(backend)
    # The same init through the low layer's own path (the struct, its init).
    arg, desc, size = backend.struct(ctype)
    backend.call(ctype + "_init", arg, size)
    assert dataclasses.astuple(got) == tuple(read(desc, fields_of(ctype)).values())
    assert all(v is not None for v in dataclasses.astuple(got))


def test_the_access_policy_windows_defaults_are_its_init_macros(backend):
    # CUABI_ACCESS_POLICY_WINDOW_INIT: {size, 0, 0, 1.0f, PERSISTING, STREAMING}
    got = AccessPolicyWindow.defaults(backend)
    assert got == AccessPolicyWindow(0, 0, 1.0, Prop.PERSISTING, Prop.STREAMING)
    assert type(got.hit_property) is Prop and type(got.miss_property) is Prop
    assert type(got.base) is int and type(got.hit_ratio) is float


def test_conversion_sets_the_fields_given_over_the_init(backend):
    window = AccessPolicyWindow(base=0x7F0000001000, hit_ratio=0.25, miss_property=Prop.NORMAL)
    arg, s = window._to_native(backend, "window")
    assert arg is not None
    _, _, size = backend.struct("cuabi_access_policy_window")
    assert s.struct_size == size
    assert read(s, fields_of("cuabi_access_policy_window")) == {
        "base": 0x7F0000001000,
        "bytes": 0,  # the init's
        "hit_ratio": 0.25,
        "hit_property": int(Prop.PERSISTING),  # the init's
        "miss_property": int(Prop.NORMAL),
    }
    assert AccessPolicyWindow._from_native(s) == dataclasses.replace(
        AccessPolicyWindow.defaults(backend), base=0x7F0000001000, hit_ratio=0.25,
        miss_property=Prop.NORMAL,
    )


def test_flag_sets_and_enums_convert_both_ways(backend):
    desc = ArrayDesc(width=8, height=4, format=_api.ArrayFormat.F16, channels=2,
                     flags=_api.ArrayFlag.SURFACE_LOAD_STORE | _api.ArrayFlag.TEXTURE_GATHER)
    _, s = desc._to_native(backend, "desc")
    back = ArrayDesc._from_native(s)
    assert back == dataclasses.replace(desc, depth=ArrayDesc.defaults(backend).depth)
    assert type(back.format) is _api.ArrayFormat and type(back.flags) is _api.ArrayFlag
    pool = MemoryPoolDesc(release_threshold=1 << 40, flags=_api.MemoryPoolFlag.IPC)
    _, s = pool._to_native(backend, "desc")
    assert (int(s.max_bytes), int(s.release_threshold), int(s.flags)) == (
        MemoryPoolDesc.defaults(backend).max_bytes, 1 << 40, int(_api.MemoryPoolFlag.IPC))


def test_an_unknown_enum_read_back_raises_as_the_generated_getters_do(backend):
    # The generated getters read an enum as its class, whose ValueError an
    # unknown value raises; a value type's fields do the same.
    _, s = AccessPolicyWindow._init(backend)
    s.miss_property = 7
    with pytest.raises(ValueError, match="7 is not a valid AccessProperty"):
        AccessPolicyWindow._from_native(s)
    with pytest.raises(ValueError, match="7 is not a valid AccessProperty"):
        _api.AccessProperty(7)


def test_fields_out_of_range_are_refused_naming_the_field(backend):
    with pytest.raises(cuabi.InvalidArgumentError, match=r"window\.bytes = -1 is out of range"):
        AccessPolicyWindow(bytes=-1)._to_native(backend, "window")
    with pytest.raises(cuabi.InvalidArgumentError, match=r"window\.base = 18446744073709551616 is"):
        AccessPolicyWindow(base=1 << 64)._to_native(backend, "window")
    with pytest.raises(cuabi.InvalidArgumentError, match=r"desc\.channels = 4294967296 is out of range"):
        ArrayDesc(channels=1 << 32)._to_native(backend, "desc")
    with pytest.raises(TypeError, match=r"^window\.hit_property must be an int, not str$"):
        AccessPolicyWindow(hit_property="persisting")._to_native(backend, "window")
    # An unknown enum value is the core's to refuse (it names the field and
    # the values it takes): passed on as it is.
    _, s = AccessPolicyWindow(hit_property=7)._to_native(backend, "window")
    assert s.hit_property == 7


def test_a_value_argument_with_keyword_fields(backend):
    window = AccessPolicyWindow(base=0x1000, bytes=256)
    _, s = _objects._value(window, AccessPolicyWindow, "window", backend, False,
                           {"bytes": 512, "base": None, "hit_ratio": 0.5})
    assert (s.base, s.bytes, s.hit_ratio) == (0x1000, 512, 0.5)
    assert window.bytes == 256  # the caller's value is left as it was
    _, s = _objects._value(None, AccessPolicyWindow, "window", backend, False, {"bytes": 64})
    assert (s.base, s.bytes, s.hit_property) == (0, 64, int(Prop.PERSISTING))
    # A nullable parameter: None with no field is NULL.
    arg, keep = _objects._value(None, MemoryPoolDesc, "desc", backend, True, None)
    assert arg is backend.NULL and keep is None
    with pytest.raises(TypeError, match="^window must be a cuabi.AccessPolicyWindow, not NoneType$"):
        _objects._value(None, AccessPolicyWindow, "window", backend, False, None)
    with pytest.raises(TypeError, match="^desc must be a cuabi.MemoryPoolDesc or None, not dict$"):
        _objects._value({}, MemoryPoolDesc, "desc", backend, True, None)


def test_the_stream_methods_reach_the_core(backend):
    stream = stale(backend, _objects.StreamBase, "stream")
    with pytest.raises(cuabi.InvalidHandleError) as info:
        stream.access_policy_window
    assert info.value.message.startswith("cuabi_stream_get_access_policy_window: ")
    for call in (
        lambda: stream.set_access_policy_window(AccessPolicyWindow(bytes=0)),
        lambda: stream.set_access_policy_window(bytes=0, hit_ratio=0.5),
        lambda: stream.set_access_policy_window(),
    ):
        with pytest.raises(cuabi.InvalidHandleError) as info:
            call()
        assert info.value.message.startswith("cuabi_stream_set_access_policy_window: ")
    # Refused before the core: the wrong type, a field out of range.
    with pytest.raises(TypeError, match="^window must be a cuabi.AccessPolicyWindow, not int$"):
        stream.set_access_policy_window(42)
    with pytest.raises(cuabi.InvalidArgumentError, match=r"window\.bytes = -1 is out of range"):
        stream.set_access_policy_window(bytes=-1)
    array = stale(backend, _objects.ArrayBase, "array")
    with pytest.raises(cuabi.InvalidHandleError) as info:
        array.desc
    assert info.value.message.startswith("cuabi_array_get_desc: ")


class _Recording:
    """A library that records every function looked up on it by name."""

    def __init__(self, lib):
        self._lib = lib
        self.looked_up = []

    def __getattr__(self, name):
        self.looked_up.append(name)
        return getattr(self._lib, name)


def test_value_types_look_up_no_name(backend, monkeypatch):
    recording = _Recording(backend.lib)
    monkeypatch.setattr(backend, "lib", recording)
    stream = stale(backend, _objects.StreamBase, "stream")
    with pytest.raises(cuabi.InvalidHandleError):
        stream.set_access_policy_window(AccessPolicyWindow(bytes=0))
    AccessPolicyWindow.defaults(backend)
    assert not [n for n in recording.looked_up if "access_policy_window" in n], recording.looked_up


# Through real objects on the stand-in driver (tests/fake/, no GPU), in a
# child process (cuabi reads CUABI_DRIVER_PATH once per process): the core's
# refusals of a window come before the driver, so they are the core's own
# messages. The stand-in's device has no access-policy window (attribute 109,
# CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, is 0).
CHILD = r"""
import cuabi
from cuabi import AccessPolicyWindow

dev = cuabi.Device(0)
stream = dev.create_stream(non_blocking=True)
buf = dev.alloc(256)
base = buf.ptr
assert base != 0


def refused(call, piece):
    try:
        call()
    except cuabi.InvalidArgumentError as exc:
        assert exc.message.startswith("cuabi_stream_set_access_policy_window: "), exc.message
        assert piece in exc.message, exc.message
    else:
        raise AssertionError("not refused: " + piece)


refused(lambda: stream.set_access_policy_window(base=base, bytes=1),
        "window->bytes is 1, past device 0's maximum window of 0 bytes "
        "(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)")
refused(lambda: stream.set_access_policy_window(AccessPolicyWindow(hit_ratio=1.5)),
        "window->hit_ratio is 1.500000; it is from 0 to 1")
refused(lambda: stream.set_access_policy_window(hit_ratio=-0.25),
        "window->hit_ratio is -0.250000; it is from 0 to 1")
refused(lambda: stream.set_access_policy_window(hit_property=7),
        "window->hit_property is 7, not one of CUABI_ACCESS_PROPERTY_NORMAL (0), "
        "_STREAMING (1), _PERSISTING (2)")
refused(lambda: stream.set_access_policy_window(miss_property=-1),
        "window->miss_property is -1, not one of CUABI_ACCESS_PROPERTY_NORMAL (0)")
refused(lambda: stream.set_access_policy_window(base=0, bytes=256),
        "window->base is 0 for a window of 256 bytes")
print("refusals ok")
"""


@pytest.mark.parametrize("backend_name", BACKEND_PARAMS)
def test_the_cores_window_refusals_on_the_stand_in_driver(backend_name, subprocess_env, tmp_path):
    if backend_name == "cffi":
        pytest.importorskip("cffi")
    fake = os.environ.get("CUABI_FAULT_FAKE_DRIVER", "")
    if not fake or not os.path.isfile(fake):
        pytest.skip("CUABI_FAULT_FAKE_DRIVER is not set or missing (the stand-in driver "
                    "build/tests/fault/libcuabi_fault_fake_cuda.so comes with a CMake build)")
    env = dict(subprocess_env, CUABI_DRIVER_PATH=os.path.abspath(fake),
               CUABI_NVRTC_PATH=os.path.abspath(fake), CUABI_BACKEND=backend_name,
               CUABI_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refusals ok" in done.stdout
