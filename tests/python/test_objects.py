"""The generated object layer (cuabi/_objects.py), on both backends: the
hand-written classes extend it, it calls through functions bound once per
backend, and its failures are the existing exceptions with the core's
message. No GPU: the calls reach the core with a handle no object ever had."""

import pytest

import cuabi
from cuabi import _api, _objects
from cuabi._base import Resource

DEAD = 0xDEAD0000BEEF


def stale(backend, cls, kind):
    return cls._from_handle(backend, backend.handle(DEAD, "cuabi_" + kind))


@pytest.mark.parametrize(
    "public, generated",
    [
        (cuabi.Device, _objects.DeviceBase),
        (cuabi.Stream, _objects.StreamBase),
        (cuabi.Event, _objects.EventBase),
        (cuabi.DeviceBuffer, _objects.BufferBase),
        (cuabi.PinnedBuffer, _objects.HostBufferBase),
        (cuabi.MemoryPool, _objects.MemoryPoolBase),
        (cuabi.Program, _objects.ProgramBase),
        (cuabi.Module, _objects.ModuleBase),
        (cuabi.Kernel, _objects.FunctionBase),
        (cuabi.Graph, _objects.GraphBase),
        (cuabi.GraphExec, _objects.GraphExecBase),
        (cuabi.Linker, _objects.LinkerBase),
        (cuabi.Library, _objects.LibraryBase),
        (cuabi.Array, _objects.ArrayBase),
        (cuabi.Texture, _objects.TextureBase),
        (cuabi.Surface, _objects.SurfaceBase),
    ],
)
def test_hand_written_classes_extend_the_generated_ones(public, generated):
    assert issubclass(public, generated)
    assert issubclass(generated, Resource)


def test_every_function_is_bound_once(backend):
    for name, _, _ in _api.DECLARATIONS:
        assert getattr(backend.fn, name) is getattr(backend.fn, name)
    if backend.name == "ctypes":
        # the prototype the library's function object carries
        assert backend.fn.cuabi_device_get_ordinal.argtypes == backend.lib.cuabi_device_get_ordinal.argtypes


class _Recording:
    """A library that records every function looked up on it by name."""

    def __init__(self, lib):
        self._lib = lib
        self.looked_up = []

    def __getattr__(self, name):
        self.looked_up.append(name)
        return getattr(self._lib, name)


def test_a_generated_call_looks_up_no_name(backend, monkeypatch):
    recording = _Recording(backend.lib)
    monkeypatch.setattr(backend, "lib", recording)
    dev = stale(backend, _objects.DeviceBase, "device")
    with pytest.raises(cuabi.InvalidHandleError):
        dev.compute_capability
    with pytest.raises(cuabi.InvalidHandleError):
        dev.name  # the two-call pattern
    # The error path reads the last error; the calls themselves were bound.
    assert "cuabi_device_get_compute_capability" not in recording.looked_up
    assert "cuabi_device_get_name" not in recording.looked_up


def test_failures_are_the_existing_exceptions_with_the_core_message(backend):
    buf = stale(backend, _objects.BufferBase, "buffer")
    with pytest.raises(cuabi.InvalidHandleError) as caught:
        buf.pointer
    assert caught.value.status == _api.CUABI_ERROR_INVALID_HANDLE
    assert "cuabi_buffer_get_pointer" in caught.value.message
    stream = stale(backend, _objects.StreamBase, "stream")
    with pytest.raises(cuabi.InvalidHandleError, match="cuabi_stream_query"):
        stream.query()


def test_a_wrong_handle_argument_names_the_parameter_and_the_public_class(backend):
    dev = stale(backend, _objects.DeviceBase, "device")
    with pytest.raises(TypeError, match="^peer must be a cuabi.Device, not int$"):
        dev.enable_peer_access(42)
    graph_exec = stale(backend, _objects.GraphExecBase, "graph_exec")
    with pytest.raises(TypeError) as caught:
        graph_exec.launch("default")
    assert str(caught.value) == (
        "stream must be a cuabi.Stream or None, not str "
        "(wrap a foreign stream with Device.wrap_stream)"
    )


def test_checked_integers_name_the_argument(backend):
    dev = stale(backend, _objects.DeviceBase, "device")
    with pytest.raises(cuabi.InvalidArgumentError, match="cu_attribute = 4294967296 is out of range"):
        dev.get_attribute(1 << 32)
    with pytest.raises(TypeError, match="cu_attribute must be an int, not str"):
        dev.get_attribute("16")


def test_library_functions_are_free_functions(backend):
    assert cuabi.driver_version is _objects.driver_version
    assert cuabi.device_count is _objects.device_count
    assert cuabi.init is _objects.init


def test_generated_methods_answer_the_public_classes(backend):
    # Each public class declares itself its kind's (register_owner); the
    # generated layer makes a new handle of that kind in it, through its
    # _made_by hook, which keeps the device of what made it.
    for kind, public in [("stream", cuabi.Stream), ("graph", cuabi.Graph), ("buffer", cuabi.DeviceBuffer),
                         ("sm_resource", cuabi.SmResource), ("memory_pool", cuabi.MemoryPool)]:
        assert _objects._OWNERS["cuabi_" + kind] is public
    dev = stale(backend, cuabi.Device, "device")
    graph = cuabi.Graph._made_by(backend, backend.handle(DEAD, "cuabi_graph"), dev)
    exe = cuabi.GraphExec._made_by(backend, backend.handle(DEAD, "cuabi_graph_exec"), graph)
    stream = cuabi.Stream._made_by(backend, backend.handle(DEAD, "cuabi_stream"), dev)
    pool = cuabi.MemoryPool._made_by(backend, backend.handle(DEAD, "cuabi_memory_pool"), dev)
    assert (type(graph), type(exe), type(stream)) == (cuabi.Graph, cuabi.GraphExec, cuabi.Stream)
    assert graph.device is dev and exe.device is dev and stream.device is dev and pool.device is dev
    assert not pool.is_default and stream._owner is None
    for obj in (graph, exe, stream, pool, dev):
        obj._closed = True  # never released: the handles are no library's
