"""cuabi exports the generated layer's public names by rule: whatever
bindings/python/cuabi/_objects.py lists in ``__all__`` (value types, the
enums the generated members take and answer, library functions, scopes),
with no list of its own in cuabi/__init__.py; so a new plain library
function of the header reaches ``cuabi.<name>`` when scripts/regen runs."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest

import cuabi
from cuabi import _objects

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGEN_API = os.path.join(ROOT, "scripts", "regen_api")
MODEL = os.path.join(ROOT, "include", "cuabi", "cuabi.json")
INIT = os.path.join(ROOT, "bindings", "python", "cuabi", "__init__.py")


def test_library_functions_exported_by_rule():
    """Every public name of the generated layer is cuabi's, the same object."""
    for name in _objects.__all__:
        assert name in cuabi.__all__, name
        assert getattr(cuabi, name) is getattr(_objects, name), name
    for name in ("driver_log_read", "driver_log_dump", "context_lost_message", "coredump_set",
                 "nvtx_range_push", "nvtx_range_pop", "nvtx_mark", "nvtx_range_start",
                 "nvtx_range_end", "nvtx_range", "Health", "CoredumpFlag", "init",
                 "device_count", "AccessPolicyWindow"):
        assert name in _objects.__all__, name
    # The classes per handle kind are the hand-written classes' bases.
    assert "DeviceBase" not in cuabi.__all__ and "register_owner" not in cuabi.__all__
    assert cuabi.Device.__mro__[1] is _objects.DeviceBase
    # The hand-written names stay: the old exports and on_context_lost.
    for name in ("Device", "version", "version_string", "use_backend", "copy_3d",
                 "on_context_lost", "CudaError", "ContextLostError"):
        assert name in cuabi.__all__, name
    assert len(cuabi.__all__) == len(set(cuabi.__all__))


def test_init_has_no_list_of_generated_names():
    with open(INIT, encoding="utf-8") as f:
        text = f.read()
    assert "from ._objects import *" in text and "__all__ += _objects.__all__" in text
    for name in ("driver_log_read", "nvtx_range", "coredump_set", "Health"):
        assert f'"{name}"' not in text and f"    {name},\n" not in text, name


def test_a_new_library_function_reaches_all():
    """A plain library call added to the model is listed in the generated
    ``__all__`` (and so exported), with nothing hand-written."""
    pytest.importorskip("pycparser", reason="scripts/regen_api needs pycparser")
    sys.path.insert(0, REGEN_API)
    try:
        import python_objects
    finally:
        sys.path.remove(REGEN_API)
    with open(MODEL, encoding="utf-8") as f:
        model = json.load(f)
    base = next(fn for fn in model["functions"] if fn["name"] == "cuabi_driver_log_dump")
    new = copy.deepcopy(base)
    new.update(name="cuabi_scratch_ping", method="scratch_ping", doc="A scratch call.")
    model["functions"].append(new)
    text = python_objects.objects(model)
    names = text[text.index("\n__all__ = [") :]
    assert '    "scratch_ping",\n' in names
    assert "\ndef scratch_ping(path: Union[str, bytes], *, backend: BackendArg = None) -> None:" in text


def test_context_lost_callback_is_hand_written():
    """The generated layer lists it as written by hand, with the reason."""
    with open(_objects.__file__, encoding="utf-8") as f:
        text = f.read()
    assert "#   cuabi_set_context_lost_callback: cuabi.on_context_lost(callable)" in text
    assert "set_context_lost_callback" not in _objects.__all__
    with pytest.raises(TypeError, match="handler must be callable or None"):
        cuabi.on_context_lost(42)  # type: ignore[arg-type]
