"""The Python binding's generated object layer (bindings/python/cuabi/_objects.py).

From the model's roles, for every handle kind a class over
:class:`cuabi._base.Resource` (``cuabi_device`` -> ``DeviceBase``) with a
method or property per function whose roles it knows and whose `idiom` is
null, and a free function per library call. The hand-written classes
(``Device``, ``Stream``, ``DeviceBuffer`` ...) extend these classes and keep
only what no generator can know.

The object-layer rules, the same as every language's:
* a method's name is the model's `method` (the function name without
  ``cuabi_<object>_``); a getter with only out-parameters is a read-only
  property (its `property`), a tuple when it has several;
* a two-call string returns ``str``, a blob ``bytes``;
* a value struct (the model's `value`: versioned, an init, numbers, enums
  and flag sets alone) is a ``@dataclass`` of its own
  (``cuabi_access_policy_window`` -> ``AccessPolicyWindow``) whose fields
  default to None, meaning what the struct's ``_init`` gives: the C init is
  the only source of defaults (``AccessPolicyWindow.defaults()`` reads them).
  A ``struct_in`` parameter takes one (the only one of a call also takes its
  fields as keywords, set over it); the struct passed is the init's, then
  each field given, range-checked. A ``struct_out`` parameter is returned as
  one, every field read back (enums and flag sets as their classes);
* a descriptor struct a hand-written class fills (DESC_FILLERS: a built
  struct with an init, ``cuabi_compile_desc``) gets ``fill_<struct>(b,
  **fields)``: the init's defaults, then each keyword given, converted by
  its field's type (enums by ``enum_in``, 0/1 fields by ``flag_in``,
  numbers range-checked, string arrays from sequences, their counts
  derived);
* a call taking such a descriptor (``cuabi_linker_create``) takes its
  fields as keywords (``**fields``), filled by ``fill_<struct>``; none given
  is the init's defaults, what a NULL descriptor means;
* an array of a built struct (``array_in`` of ``cuabi_mem_op``) takes a
  sequence of its registered type (each element checked, the one at fault
  named), laid out by its registered layout (``register_layout``); its
  count parameter is the layout's count;
* host bytes a call reads (``bytes_in``: ``cuabi_module_load_data``'s
  image) are bytes, a bytearray or a memoryview, their size derived;
* an ``int32_t location`` (a prefetch's, an advice's: a device ordinal or
  CUABI_LOCATION_HOST) also takes a Device or ``"host"``;
* a library call that takes nothing and answers a number or a string
  instead of a status (``cuabi_version``) is a free function returning it;
* a constructor is a classmethod of the made object's class
  (``BufferBase.alloc(device, bytes)``), which checks its receiver as any
  handle argument is checked (a TypeError naming it);
* a library call is a free function taking ``backend=None``;
* a new handle (a constructor's, or a method's of another kind) is returned
  in its kind's public class where a hand-written one declares itself that
  (``register_owner``: see OWNERS), made by that class's ``_made_by`` hook,
  else in its kind's generated class; either owns and releases it. The
  hook is given the device the call names, where it names one (the made
  object belongs to it: ``LibraryBase.get_module(device)``), else the
  receiver. A copy of a receiver whose kind keeps what calls name
  (``GraphBase.clone``) keeps what the receiver keeps;
* an IPC opening's handle bytes are read by the "ipc" reader
  (``register_reader``) first, which refuses a str;
* a row of PY_KEYED makes properties of a getter keyed by an enum, one per
  key (``FunctionBase.num_regs``), each documented by its member's comment;
* a row of PY_PARAMS gives a parameter the name the package has always
  given it; one of PY_NAMED takes an enum parameter by a member's name
  too; a getter of PY_CACHED is read once and kept; one of PY_SETTERS is
  settable through its ``set_`` twin;
* a parameter named ``bytes`` (the builtin's name) is ``nbytes`` in Python;
* a call of PY_LOGGED that fails to compile or link raises a CompileError
  whose ``log`` is the receiver's log where the last error had none;
* a row of PY_MADE_BY makes a constructor a method of its receiver's
  class too (``DeviceBase.create_stream``), forwarding to it;
* a row of PY_AFTER calls a hook of the receiver (declared here doing
  nothing, overridden by the public class) once the call succeeded;
* a row of PY_CHAIN makes a method answer its receiver (for chaining), a
  row of PY_DEFAULTS gives trailing parameters defaults, a row of
  BOOL_FLAGS takes a flag-set parameter as one bool choosing one flag, and
  one of PY_FIXED_FLAGS takes none, always passing one flag;
* a call and its ``*_async`` twin (the twin's parameters are the call's and
  a trailing nullable ``cuabi_stream stream``: ``cuabi_buffer_memset`` and
  ``cuabi_buffer_memset_async``) are one method, named after the call, that
  takes ``stream=None`` last: None makes the call, a Stream its twin, in
  order on it. A host byte range of such a pair (a copy's host side) is any
  host buffer the "host" reader reads (NumPy arrays, bytearrays, pinned
  buffers ...), kept alive over the call only;
* a location defaulting to None (PY_DEFAULTS) is the receiver's device;
  a row of PY_NAMED_SHORT lets a PY_NAMED parameter's names leave out a
  prefix (``advise("read_mostly")``);
* a row of PY_ORDER gives a call's parameters the order Python callers have
  always used (checked in that order), and one of PY_TO_END makes a range's
  length default to the receiver's end (``memset(value, offset=0,
  nbytes=None)``);
* a ``uint8_t`` input is a byte: outside 0 to 255 a ValueError says so,
  naming the method and the parameter (``memset value 256 is not a byte``);
* a consuming call (the model's `consumes`: the library releases the
  receiver's handle once it succeeds, ``cuabi_buffer_free_async``) closes
  the receiver after it (``Resource._consumed``);
* a failing status raises the existing exception of :mod:`cuabi.errors`
  (``Backend.error``), with the core's message unchanged;
* a scope (the model's `scope` of an opening call: ``@scope nvtx_range
  cuabi_nvtx_range_pop``) is a class named as the scope, lower case like
  contextlib's helpers (``cuabi.nvtx_range``): a context manager whose
  ``__enter__`` calls the opening call's generated form and whose
  ``__exit__`` calls the closing call's, and, through
  ``contextlib.ContextDecorator``, a decorator that does both around each
  call. Its parameters take an order Python callers can shorten, derived
  from the roles alone (see Emitter.scope_class): required ones first, then
  those C lets be NULL (default None), then numbers (default 0);
* ``__all__`` lists the public names, which ``cuabi/__init__.py`` exports
  by a star import with no list of its own: the value types, the enum
  classes (of :mod:`cuabi._api`) that the generated members take or answer,
  the free functions and the scopes. The classes per handle kind are not in
  it: the hand-written classes extending them are what cuabi exports.

Functions are called through ``backend.fn`` (:class:`cuabi._api.Functions`):
bound once per backend, never looked up by name on a call. A function with a
role this layer has no Python form for is left to the hand-written code; the
file lists each one with the reason at its end.
"""

from __future__ import annotations

import keyword
from typing import Any, Dict, List, Optional, Set, Tuple

from common import banner, built_types, one_line
from python import enum_class_name, member_prefix

OBJECTS = "bindings/python/cuabi/_objects.py"

INT_RANGES = {
    "int8_t": ("-(1 << 7)", "(1 << 7) - 1"),
    "int16_t": ("-(1 << 15)", "(1 << 15) - 1"),
    "int32_t": ("INT32_MIN", "INT32_MAX"),
    "int64_t": ("-(1 << 63)", "(1 << 63) - 1"),
    "uint8_t": ("0", "0xFF"),
    "uint16_t": ("0", "0xFFFF"),
    "uint32_t": ("0", "UINT32_MAX"),
    "uint64_t": ("0", "UINT64_MAX"),
    "uintptr_t": ("0", "UINT64_MAX"),
    "size_t": ("0", "UINT64_MAX"),
}

# Out-parameter boxes Backend.out makes.
BOXES = {"int32_t", "uint32_t", "int64_t", "size_t", "uint64_t", "float", "double", "uint8_t"}


# Functions whose Python form differs from the generated one (defaults,
# chaining, richer arguments), written in the hand-written classes.
HAND_WRITTEN = {
    "cuabi_program_compile": "Program.compile takes CompileOptions and typed options",
    "cuabi_linker_add_file": "Linker.add_file takes an input kind default and a PathLike",
    "cuabi_copy_3d": (
        "cuabi.copy_3d(dst, src, extent, ..., stream=) takes a box's sides, origins and "
        "pitches as arguments (Copy3dOp's fields); stream= picks cuabi_copy_3d_async"
    ),
    "cuabi_copy_3d_async": "cuabi.copy_3d(..., stream=s)",
    "cuabi_last_error_status": "Backend.error reads it: a failure raises its CudaError",
    "cuabi_last_error_message": "Backend.error reads it: CudaError's message",
    "cuabi_last_error_code": "Backend.error reads it: CudaError.code",
    "cuabi_last_error_log": "Backend.error reads it: CompileError.log carries it",
    "cuabi_last_error_get_launch_count": "Backend.error reads them: CudaError.launches",
    "cuabi_last_error_get_launch": "Backend.error reads them: CudaError.launches",
    "cuabi_last_error_get_launch_kernel": "Backend.error reads them: CudaError.launches",
    "cuabi_set_context_lost_callback": (
        "cuabi.on_context_lost(callable) (_context_lost.py): one Python callable, a C trampoline "
        "per backend kept for the process; an exception it raises never reaches C "
        "(sys.unraisablehook)"
    ),
}

# Python names of generated members that differ from the model's: a getter
# named after what Resource already has (``handle``, ``backend``), or a call
# the package has always named otherwise (``ipc_handle()``), given the
# public name the package has always had for it.
PY_NAMES = {
    "cuabi_stream_get_handle": "ptr",
    "cuabi_buffer_get_ipc_handle": "ipc_handle",
    "cuabi_event_get_ipc_handle": "ipc_handle",
    "cuabi_array_get_handle": "cu_array",
    "cuabi_linker_get_backend": "link_backend",
    # A buffer's size in bytes is its ``nbytes`` (``size`` is a typed view's
    # count of elements), which a range to the end reads (PY_TO_END).
    "cuabi_buffer_get_size": "nbytes",
    "cuabi_buffer_prefetch_async": "prefetch",
    "cuabi_tensor_map_encode_tiled": "tiled",
    "cuabi_tensor_map_encode_im2col": "im2col",
}

# Second public names of generated members: ``lowered_name =
# get_lowered_name`` in the class (the package's name for the call beside
# the model's).
PY_ALIASES = {
    "cuabi_program_get_lowered_name": "lowered_name",
    "cuabi_module_get_lowered_name": "lowered_name",
    "cuabi_device_get_attribute": "attribute",
    "cuabi_event_get_elapsed_ms": "elapsed_ms",
    "cuabi_stream_wait_event": "wait",
    "cuabi_function_get_available_dynamic_shared": "available_dynamic_shared",
    "cuabi_library_get_module": "module",
    "cuabi_module_get_function": "get_kernel",
    "cuabi_module_get_kernel_name": "kernel_name",
    "cuabi_function_get_attribute": "attribute",
    "cuabi_function_get_active_blocks_per_sm": "active_blocks_per_sm",
}

# Getters whose property is read once and kept (a value the object cannot
# change: a buffer's kind, a kernel's name), in ``_<property>``, a class
# attribute None until read (which a hand-written class may set first).
PY_CACHED = {
    "cuabi_buffer_get_kind",
    "cuabi_buffer_get_pitch",
    "cuabi_buffer_get_device_ordinal",
    "cuabi_function_get_name",
    "cuabi_array_get_element_size",
}

# Getter properties made settable through their ``set_`` twin (a pool's
# release threshold): {getter: setter}; the setter's value is named after
# the property (a refusal names it so).
PY_SETTERS = {"cuabi_memory_pool_get_release_threshold": "cuabi_memory_pool_set_release_threshold"}

# Calls whose generated method answers its receiver, for chaining
# (``ev.record(s).synchronize()``, ``linker.add_program(a).add_program(b)``):
# ``return self``, typed as the receiver's own class.
PY_CHAIN = {"cuabi_event_record", "cuabi_linker_add_program"}

# Defaults of generated parameters, by function and parameter: the Python
# value written after ``=`` (every later parameter must have one too).
PY_DEFAULTS: Dict[str, Dict[str, str]] = {
    "cuabi_sm_resource_split": {"min_sm_count": "0", "index": "0"},
    "cuabi_graph_instantiate_with_flags": {"flags": "0"},
    "cuabi_function_suggest_block_size": {"shared_per_block": "0", "shared_per_thread": "0", "limit": "0"},
    "cuabi_module_get_kernel_name": {"form": "_api.NameForm.DEMANGLED"},
    "cuabi_stream_create": {"priority": "0"},
    "cuabi_green_context_create_stream": {"priority": "0"},
    "cuabi_function_get_active_blocks_per_sm": {"dynamic_shared": "0"},
    "cuabi_buffer_memset": {"value": "0", "offset": "0"},
    "cuabi_buffer_fill": {"offset": "0"},
    "cuabi_buffer_copy_from_host": {"offset": "0"},
    "cuabi_buffer_copy_to_host": {"offset": "0"},
    "cuabi_buffer_prefetch_async": {"stream": "None", "offset": "0"},
    "cuabi_buffer_advise": {"location": "None", "offset": "0"},
    "cuabi_buffer_from_range": {"offset": "0"},
    "cuabi_stream_begin_capture": {"mode": '"global"'},
    "cuabi_tensor_map_encode_tiled": {
        "offset": "0", "element_strides": "()", "interleave": "_api.TensorInterleave.NONE",
        "swizzle": "_api.TensorSwizzle.NONE", "l2_promotion": "_api.TensorL2Promotion.NONE",
        "oob_fill": "_api.TensorOobFill.ZERO",
    },
    "cuabi_tensor_map_encode_im2col": {
        "offset": "0", "element_strides": "()", "interleave": "_api.TensorInterleave.NONE",
        "swizzle": "_api.TensorSwizzle.NONE", "l2_promotion": "_api.TensorL2Promotion.NONE",
        "oob_fill": "_api.TensorOobFill.ZERO",
    },
}

# The order a call's parameters take in Python where it is not C's: the
# Python names (after PY_PARAMS) first, in this order, then the rest in C
# order (a stream-picked twin's ``stream`` last); a "*" makes those after
# it keyword-only. PY_DEFAULTS then gives defaults by this order. The
# arguments are checked in this order too (a handle's when the call is
# made, last).
PY_ORDER: Dict[str, Tuple[str, ...]] = {
    "cuabi_buffer_memset": ("value", "offset", "nbytes"),
    "cuabi_buffer_fill": ("value", "element_size", "offset", "count"),
    "cuabi_buffer_copy_from_host": ("src", "offset"),
    "cuabi_buffer_copy_to_host": ("dst", "offset"),
    "cuabi_buffer_prefetch_async": ("location", "stream", "offset", "nbytes"),
    "cuabi_buffer_advise": ("advice", "location", "offset", "nbytes"),
    # A tensor map's layout first; where in the buffer, and the options, by keyword.
    "cuabi_tensor_map_encode_tiled": (
        "buffer", "data_type", "sizes", "strides", "box", "*", "offset", "element_strides",
    ),
    "cuabi_tensor_map_encode_im2col": (
        "buffer", "data_type", "sizes", "strides", "lower_corner", "upper_corner",
        "channels_per_pixel", "pixels_per_column", "*", "offset", "element_strides",
    ),
}

# A range of the receiver whose length defaults to its end: {function:
# (the offset, the length, the unit or None)}. The length is None by
# default: the receiver's size in bytes (its ``*_get_size`` getter's
# property, ``nbytes``) less the offset (0 past the end, which the core then
# names), in elements of the unit parameter's bytes where one is named.
PY_TO_END: Dict[str, Tuple[str, str, Optional[str]]] = {
    "cuabi_buffer_memset": ("offset", "nbytes", None),
    "cuabi_buffer_fill": ("offset", "count", "element_size"),
    "cuabi_buffer_prefetch_async": ("offset", "nbytes", None),
    "cuabi_buffer_advise": ("offset", "nbytes", None),
    "cuabi_buffer_from_range": ("offset", "nbytes", None),
}

# Constructors also made a method of the class of the object they are made
# from (their receiver), named here, as Rust's MADE_BY:
# ``device.create_stream(non_blocking, priority)`` is
# ``StreamBase.create(device, non_blocking, priority)``.
PY_MADE_BY: Dict[str, str] = {
    "cuabi_stream_create": "create_stream",
    "cuabi_host_buffer_alloc": "host_alloc",
}

# Calls after whose success the receiver's public class does something of
# its own: {function: the hook}, a method the generated class declares
# doing nothing (the public class overrides it), called with no arguments
# once the call succeeded (``Stream._capture_begun``: the buffer cache
# stands aside while a capture runs).
PY_AFTER: Dict[str, str] = {
    "cuabi_stream_begin_capture": "_capture_begun",
    "cuabi_stream_begin_capture_to_graph": "_capture_begun",
    "cuabi_buffer_grow": "_grown",
}

# Calls whose failure to compile or link (CUABI_ERROR_COMPILE) raises a
# CompileError whose ``log`` is the receiver's log where the library's last
# error had none: {function: the receiver's two-call log getter}.
PY_LOGGED: Dict[str, str] = {
    "cuabi_linker_link": "cuabi_linker_get_log",
    "cuabi_program_compile_with": "cuabi_program_get_log",
}

# Python names of generated parameters, by function and C parameter: the
# name a Python caller passes it by (and a refusal names), where the
# package has always named it otherwise (PY_DEFAULTS then uses this name).
PY_PARAMS: Dict[str, Dict[str, str]] = {
    "cuabi_function_suggest_block_size": {
        "shared_bytes_per_block": "shared_per_block",
        "shared_bytes_per_thread": "shared_per_thread",
        "block_size_limit": "limit",
    },
    "cuabi_function_get_active_blocks_per_sm": {"dynamic_shared_bytes": "dynamic_shared"},
    "cuabi_buffer_alloc_growable": {"reserve_bytes": "reserve"},
    "cuabi_buffer_copy_from_host": {"dst_offset": "offset"},
    "cuabi_buffer_copy_to_host": {"src_offset": "offset"},
}

# Enum parameters also taken by a member's name (any case), by function
# and parameter: (what an unknown name's ValueError calls the value, a hint
# it adds); an int is passed for the core to check, as always.
PY_NAMED: Dict[str, Dict[str, Tuple[str, str]]] = {
    "cuabi_function_get_attribute": {"attribute": ("kernel attribute", " (or any CUfunction_attribute value)")},
    "cuabi_function_set_attribute": {"attribute": ("kernel attribute", " (or any CUfunction_attribute value)")},
    "cuabi_module_get_kernel_name": {"form": ("name form", "")},
    "cuabi_stream_begin_capture": {"mode": ("capture mode", "")},
    "cuabi_stream_begin_capture_to_graph": {"mode": ("capture mode", "")},
    "cuabi_buffer_advise": {"advice": ("advice", "")},
}

# A prefix the names of a PY_NAMED parameter may leave out, by function and
# parameter: ``advise("read_mostly")`` is ``advise("set_read_mostly")``.
PY_NAMED_SHORT: Dict[str, Dict[str, str]] = {"cuabi_buffer_advise": {"advice": "set_"}}

# A flag-set parameter taken as one bool choosing one of its flags:
# {function: {parameter: (the Python name, the flag's member)}}; False (the
# default) passes 0, True the flag.
BOOL_FLAGS: Dict[str, Dict[str, Tuple[str, str]]] = {
    "cuabi_stream_copy_batch": {"flags": ("prefer_overlap", "PREFER_OVERLAP")},
    "cuabi_stream_copy_3d_batch": {"flags": ("prefer_overlap", "PREFER_OVERLAP")},
    "cuabi_stream_create": {"flags": ("non_blocking", "NON_BLOCKING")},
    "cuabi_buffer_alloc_managed": {"flags": ("attach_host", "ATTACH_HOST")},
    "cuabi_physical_memory_create": {"flags": ("exportable", "EXPORTABLE")},
}

# A flag-set parameter not taken, always passing one flag: {function:
# {parameter: the flag's member}} (a green context's stream is non-blocking,
# as the driver requires).
PY_FIXED_FLAGS: Dict[str, Dict[str, str]] = {
    "cuabi_green_context_create_stream": {"flags": "NON_BLOCKING"},
}

# Properties reading one key of a getter keyed by an enum (a kernel's
# attribute): {getter: {property: the key's member, or a tuple of members
# read as a tuple}}. The member's header comment is the property's doc; a
# member whose comment says "(settable)" gets a setter through the
# getter's ``set_`` twin, and one whose comment starts "1 when" or "1 to"
# reads (and is set) as a bool.
PY_KEYED: Dict[str, Dict[str, Any]] = {
    "cuabi_function_get_attribute": {
        "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
        "num_regs": "NUM_REGS",
        "max_dynamic_shared_size_bytes": "MAX_DYNAMIC_SHARED_SIZE_BYTES",
        "preferred_shared_memory_carveout": "PREFERRED_SHARED_MEMORY_CARVEOUT",
        "non_portable_cluster_size_allowed": "NON_PORTABLE_CLUSTER_SIZE_ALLOWED",
        "required_cluster_dims": ("REQUIRED_CLUSTER_WIDTH", "REQUIRED_CLUSTER_HEIGHT", "REQUIRED_CLUSTER_DEPTH"),
        "cluster_size_must_be_set": "CLUSTER_SIZE_MUST_BE_SET",
    },
}

# Idioms whose calls are generated where every parameter has a Python form:
# the ipc idiom's openings take
# the handle's bytes (bytes_in); its handles' reads (``ipc_handle()``, a
# bytes_out of CUABI_IPC_HANDLE_SIZE bytes) answer them as ``bytes``, and
# the idiom needs nothing written by hand.
GENERATED_IDIOMS = {"ipc"}

# The hand-written type describing each built struct (the model's `built`:
# it names cuabi objects or host memory), as the package's own modules
# declare it: ``register_layout("cuabi_copy_3d_desc", Copy3dOp, ...)``. A
# function taking one is generated over that type: it passes the C struct
# the registered layout makes, and where the struct is `lasting` for the
# receiver's life (a graph's node) the receiver keeps what that layout keeps
# alive (Resource._hold).
BUILT_TYPES = built_types(
    "bindings/python/cuabi", (".py",), r'register_layout\(\s*"(?P<struct>cuabi_\w+)",\s*(?P<type>\w+),'
)

# The public class of each handle kind, as the package's own modules declare
# it: ``register_owner("cuabi_stream", Stream)``. A generated method or
# constructor making a handle of that kind answers an object of that class
# (annotated by name, imported for type checking only, so the generated layer
# imports no hand-written module), made by the class's ``_made_by`` hook
# (Resource._made_by: the handle and what made it, whose device it keeps).
OWNERS = built_types(
    "bindings/python/cuabi", (".py",), r'register_owner\(\s*"(?P<struct>cuabi_\w+)",\s*(?P<type>\w+)\)'
)

# Descriptor structs filled from keyword arguments: for each (a built struct
# with an init), a function ``fill_<struct>(b, **fields)`` taking every field
# after struct_size as a keyword (None: what the init gives it) and answering
# (the ``const <struct>*`` argument, what keeps it alive: the struct first).
# A field's value is converted by its type: an enum's by ``enum_in`` (a
# member, an int the core checks or a member's name), a number range-checked,
# a ``const char*`` from str or bytes, a ``const char* const*`` from a
# sequence of them (each checked, named ``field[i]``; the count field after
# it, ``num_...``, is then its length and no keyword), a handle as an
# argument of the backend. The value is each struct's table: the fields'
# public names where they differ (``debug`` for ``device_debug``), the int
# fields the core reads as 0/1 (``"bool"``: True/False, by ``flag_in``), and
# what an enum's refusal names (``"enum:link backend"``).
DESC_FILLERS: Dict[str, Dict[str, str]] = {
    "cuabi_compile_desc": {
        "device_debug": "debug",
        "fast_math": "bool",
        "line_info": "bool",
        "debug": "bool",
        "lto": "bool",
        "relocatable": "bool",
    },
    "cuabi_link_desc": {"backend": "enum:link backend"},
    "cuabi_texture_desc": {
        "normalized_coords": "bool",
        "address_x": "enum:address mode",
        "address_y": "enum:address mode",
        "address_z": "enum:address mode",
        "filter": "enum:filter mode",
    },
}

# What every object already has (cuabi._base.Resource).
RESOURCE_NAMES = {"backend", "handle", "closed", "close"}

# What every value type already has, which no field may be named.
VALUE_NAMES = {"defaults", "_init", "_to_native", "_from_native"}


class Skip(Exception):
    pass


def camel(words: str) -> str:
    return "".join(w.capitalize() for w in words.split("_") if w)


def class_of(handle: str) -> str:
    """cuabi_host_buffer -> HostBufferBase."""
    return camel(handle[len("cuabi_") :]) + "Base"


def ident(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def value_class(struct: str) -> str:
    """cuabi_access_policy_window -> AccessPolicyWindow."""
    return camel(struct[len("cuabi_") :])


class Emitter:
    def __init__(self, model: Dict[str, Any]) -> None:
        self.model = model
        self.handles = {h["name"]: h for h in model["handles"]}
        self.enums = {e["name"]: e for e in model["enums"]}
        self.flags = {f["name"]: f for f in model["flags"]}
        self.structs = {s["name"]: s for s in model["structs"]}
        # The enum classes (cuabi._api) of the types the public layer takes
        # and answers: exported beside it (cuabi.Health, cuabi.CoredumpFlag).
        self.enum_uses: Set[str] = set()
        # The hand-written types of built structs the generated code names.
        self.built_uses: Set[Tuple[str, str]] = set()
        # The public classes (OWNERS) the generated code answers.
        self.owner_uses: Set[Tuple[str, str]] = set()
        # The kinds that keep what a call names for their life (a `lasting`
        # parameter for the receiver: a graph's nodes' host memory).
        self.holding = {
            next(q["type"]["base"] for q in fn["params"] if q["role"] == "receiver")
            for fn in model["functions"]
            if any(q.get("lasting") == "receiver" for q in fn["params"])
        }
        self.by_name = {fn["name"]: fn for fn in model["functions"]}
        # Each function generated: {C name: (its class or "", its member)}.
        self.made: Dict[str, Tuple[str, str]] = {}
        # Methods forwarding to a constructor (PY_MADE_BY), by class.
        self.made_by: Dict[str, List[str]] = {}
        # The PY_AFTER hooks each class declares: {class: {hook: the calls of it}}.
        self.hooks: Dict[str, Dict[str, List[str]]] = {}

    # -- types ---------------------------------------------------------------
    def note_enum(self, base: str) -> None:
        """Notes the enum class of `base` (an enum, or a flag set's bits), if any."""
        if base in self.flags:
            base = self.flags[base]["bits"]
        if base in self.enums:
            self.enum_uses.add(enum_class_name(self.enums[base]))

    def box(self, base: str) -> str:
        """The C type of an out-parameter box for a value of type `base`."""
        if base in self.enums:
            return "int32_t"
        if base in self.flags:
            return self.flags[base]["type"]
        if base in BOXES:
            return base
        raise Skip(f"no Python out-parameter for {base}")

    def out_value(self, base: str, expr: str) -> Tuple[str, str]:
        """(the Python type, the conversion of a raw out value)."""
        self.note_enum(base)
        if base in self.enums and not self.enums[base]["is_flag_bits"]:
            cls = enum_class_name(self.enums[base])
            return f"_api.{cls}", f"_api.{cls}({expr})"
        if base in ("float", "double"):
            return "float", f"float({expr})"
        return "int", f"int({expr})"

    def in_value(self, p: Dict[str, Any], method: str = "") -> Tuple[str, str]:
        """(the Python type, the checked C argument) of an input value."""
        base, name = p["type"]["base"], ident(p["name"])
        self.note_enum(base)
        if base in ("float", "double"):
            return "float", f"float({name})"
        if base == "uint8_t" and method:  # a byte: a ValueError naming the method too
            return "int", f'_byte({name}, "{method} {p["name"]}")'
        if base in self.enums:
            low, high = INT_RANGES["int32_t"]
        elif base in self.flags:
            low, high = INT_RANGES[self.flags[base]["type"]]
        elif base in INT_RANGES:
            low, high = INT_RANGES[base]
        else:
            raise Skip(f"no Python input for {base}")
        return "int", f'check_int({name}, "{p["name"]}", {low}, {high})'

    # -- value structs -------------------------------------------------------
    def value_struct(self, name: Optional[str]) -> Optional[Dict[str, Any]]:
        """The model's struct `name` if it is a value struct."""
        s = self.structs.get(name or "")
        return s if s is not None and s.get("value") else None

    def field(self, f: Dict[str, Any]) -> Tuple[str, str, str]:
        """A value struct's field: (its Python type, the checked C value of
        ``{v}`` named ``{what}`` (a format), its Python value read from the
        struct ``s``)."""
        t, name = f["type"], f["name"]
        base, kind = t["base"], t["kind"]
        self.note_enum(base)
        read = f"s.{name}"
        if kind == "float":
            return "float", "float({v})", f"float({read})"
        if kind == "enum":
            cls = enum_class_name(self.enums[base])
            low, high = INT_RANGES["int32_t"]
        elif kind == "flags":
            cls = enum_class_name(self.enums[self.flags[base]["bits"]])
            low, high = INT_RANGES[self.flags[base]["type"]]
        elif base in INT_RANGES:
            low, high = INT_RANGES[base]
            return "int", f"check_int({{v}}, {{what}}, {low}, {high})", f"int({read})"
        else:
            raise SystemExit(f"regen: {f['name']}: no Python form for a field of type {base}")
        # Any int in (the core names an unknown value); read back as the class:
        # an unknown value raises its ValueError, as the generated getters do.
        return f"_api.{cls}", f"check_int({{v}}, {{what}}, {low}, {high})", f"_api.{cls}({read})"

    def desc_filler(self, s: Dict[str, Any]) -> str:
        """``fill_<struct>``: a descriptor struct filled from keyword
        arguments (see DESC_FILLERS)."""
        name, init, table = s["name"], s["init"], DESC_FILLERS[s["name"]]
        fields = s["fields"][1:]  # after struct_size
        names = {f["name"] for f in fields}
        count_of: Dict[str, str] = {}  # a string array's count field
        for i, f in enumerate(fields):
            if f["type"]["c"] == "const char* const*":
                later = [g["name"] for g in fields[i + 1 :] if g["name"].startswith("num_")]
                count = "num_" + f["name"] if "num_" + f["name"] in names else later[0]
                count_of[f["name"]] = count
        params: List[str] = []
        body: List[str] = []
        for f in fields:
            t, field = f["type"], f["name"]
            if field in count_of.values():
                continue
            rename = table.get(field, "")
            py = rename if rename.isidentifier() and rename != "bool" else field
            spec = table.get(py, "")  # "bool", "enum:<what>" or none
            if t["kind"] == "handle":
                ptype, conv = "Any", py
            elif t["c"] == "const char*":
                ptype, conv = "Union[str, bytes, None]", f'b.field(as_bytes({py}, "{py}"), keep)'
            elif t["c"] == "const char* const*":
                ptype, conv = "Optional[Sequence[Union[str, bytes]]]", f'_strings(b, {py}, "{py}", keep)'
                body += [f"    if {py} is not None:", f"        s.{field}, s.{count_of[field]} = {conv}"]
                params.append(f"    {py}: {ptype} = None,")
                continue
            elif t["kind"] == "float":
                ptype, conv = "Optional[float]", f"float({py})"
            elif t["kind"] == "enum":
                cls = enum_class_name(self.enums[t["base"]])
                what = spec[len("enum:") :] if spec.startswith("enum:") else py.replace("_", " ")
                ptype, conv = f"Union[_api.{cls}, int, str, None]", f'enum_in({py}, _api.{cls}, "{what}")'
            elif spec == "bool":
                ptype, conv = "Union[bool, int, None]", f'flag_in({py}, "{py}")'
            else:
                base = self.flags[t["base"]]["type"] if t["kind"] == "flags" else t["base"]
                low, high = INT_RANGES[base]
                ptype, conv = "Optional[int]", f'check_int({py}, "{py}", {low}, {high})'
            params.append(f"    {py}: {ptype} = None,")
            body += [f"    if {py} is not None:", f"        s.{field} = {conv}"]
        doc = (
            f"The ``const {name}*`` argument and what keeps it alive (the struct first): "
            f"{init}'s defaults, then each field given (not None), converted by its type."
        )
        return "\n".join(
            [f"def fill_{name[len('cuabi_'):]}(", "    b: Backend,", "    *,"]
            + params
            + [") -> Tuple[Any, List[Any]]:"]
            + wrap_doc(doc, "    ")
            + [
                f'    arg, s, size = b.struct("{name}")',
                f"    status = b.fn.{init}(arg, size)",
                "    if status:",
                f'        raise b.error(status, "{init}")',
                "    keep: List[Any] = [s]",
            ]
            + body
            + ["    return arg, keep"]
        ) + "\n"

    def value_type(self, s: Dict[str, Any]) -> str:
        """The dataclass of a value struct."""
        cls, name, init = value_class(s["name"]), s["name"], s["init"]
        fields = s["fields"][1:]  # after struct_size
        for f in fields:
            if f["name"] in VALUE_NAMES or keyword.iskeyword(f["name"]):
                raise SystemExit(f"regen: {name}.{f['name']}: a field name the Python value type cannot have")
        doc = (
            f"{name}: {one_line(s['doc'])} A value: each field left None takes what {init} "
            f"gives it (``{cls}.defaults()`` reads them all), so the C init stays the one "
            "source of defaults."
        )
        lines = ["@dataclass", f"class {cls}:"] + wrap_doc(doc, "    ") + [""]
        for f in fields:
            ptype, _, _ = self.field(f)
            lines.append(f"    {f['name']}: Optional[{ptype}] = None")
            if f["doc"] and not f["doc"].startswith("sizeof("):
                lines += wrap_doc(one_line(f["doc"]), "    ")
        lines += [
            "",
            "    @classmethod",
            f"    def defaults(cls, backend: BackendArg = None) -> {cls}:",
        ] + wrap_doc(f"Every field as {init} gives it.", "        ") + [
            "        b = resolve_backend(backend)",
            "        return cls._from_native(cls._init(b)[1])",
            "",
            "    @staticmethod",
            "    def _init(b: Backend) -> Tuple[Any, Any]:",
        ] + wrap_doc(
            f"A {name} filled by {init}: (the argument that passes it, the struct).", "        "
        ) + [
            f'        arg, s, size = b.struct("{name}")',
            f"        status = b.fn.{init}(arg, size)",
            "        if status:",
            f'            raise b.error(status, "{init}")',
            "        return arg, s",
            "",
            "    def _to_native(self, b: Backend, what: str) -> Tuple[Any, Any]:",
        ] + wrap_doc(
            f"The ``const {name}*`` argument and the struct it points to (keep both alive "
            f"over the call): {init}'s defaults, then each field that is not None, checked "
            "(``what`` names the argument in a refusal).",
            "        ",
        ) + ["        arg, s = self._init(b)"]
        for f in fields:
            _, conv, _ = self.field(f)
            fname = f["name"]
            conv = conv.format(v=f"self.{fname}", what=f'what + ".{fname}"')
            lines += [f"        if self.{fname} is not None:", f"            s.{fname} = {conv}"]
        lines += [
            "        return arg, s",
            "",
            "    @classmethod",
            f"    def _from_native(cls, s: Any) -> {cls}:",
        ] + wrap_doc(f"Every field of a {name} (the struct, or a cffi pointer to it).", "        ") + [
            "        return cls(",
        ]
        for f in fields:
            _, _, read = self.field(f)
            lines.append(f"            {f['name']}={read},")
        lines.append("        )")
        return "\n".join(lines) + "\n"

    # -- one function --------------------------------------------------------
    def async_twin(self, fn: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The ``*_async`` twin of `fn` that one method with it makes: the
        same parameters (names, types, roles) and a trailing nullable
        ``cuabi_stream stream``; None if it has none, or `fn` is written by
        hand."""
        twin = self.by_name.get(fn["name"] + "_async")
        if twin is None or fn["name"] in HAND_WRITTEN or fn.get("idiom"):
            return None
        ps, qs = fn["params"], twin["params"]
        same = len(qs) == len(ps) + 1 and all(
            (p["name"], p["type"]["c"], p["role"]) == (q["name"], q["type"]["c"], q["role"]) for p, q in zip(ps, qs)
        )
        last = qs[-1] if qs else {}
        if not same or last.get("handle_type") != "cuabi_stream" or not last.get("nullable"):
            return None
        return twin

    def function(self, fn: Dict[str, Any]) -> Tuple[str, str]:
        """(the class it belongs to, or "" for a free function; its text)."""
        call = fn["call"]
        if fn["name"] in HAND_WRITTEN:
            raise Skip(HAND_WRITTEN[fn["name"]])
        sync = self.by_name.get(fn["name"][: -len("_async")]) if fn["name"].endswith("_async") else None
        if sync is not None and self.async_twin(sync) is fn:
            raise Skip(f"one method with {sync['name']}: stream= picks this one")
        twin = self.async_twin(fn)
        if fn.get("idiom") and fn["idiom"] not in GENERATED_IDIOMS:
            raise Skip(f"idiom {fn['idiom']}, written by hand")
        if call == "release":
            raise Skip("Resource.close")
        if call == "struct_init":
            vs = self.value_struct(fn["params"][0].get("struct"))
            if vs:
                raise Skip(f"{value_class(vs['name'])}.defaults")
            struct = fn["params"][0].get("struct") or ""
            if struct in DESC_FILLERS:
                raise Skip(f"fill_{struct[len('cuabi_'):]}")
            raise Skip("the hand-written code that fills the struct (Backend.struct)")
        if fn["returns"]["base"] != "cuabi_status":
            return self.plain_value(fn)
        renames = PY_PARAMS.get(fn["name"], {})
        if set(renames) - {p["name"] for p in fn["params"]}:
            raise SystemExit(f"regen: PY_PARAMS: {fn['name']} has no parameter {sorted(renames)}")
        # A parameter named `bytes` (the builtin's name) is `nbytes`, as the package has always named it.
        renames = {**({"bytes": "nbytes"} if any(p["name"] == "bytes" for p in fn["params"]) else {}), **renames}
        if "nbytes" in {p["name"] for p in fn["params"]} and renames.get("bytes") == "nbytes":
            raise SystemExit(f"regen: {fn['name']}: parameters `bytes` and `nbytes`")
        fn = dict(fn, params=[dict(p, name=renames.get(p["name"], p["name"])) for p in fn["params"]])
        by_name = {p["name"]: p for p in fn["params"]}
        receiver = by_name.get(fn["receiver"]) if fn["receiver"] else None
        outs = [p for p in fn["params"] if p["role"] in ("out", "out_handle")]
        if call == "constructor":
            made = next(p for p in fn["params"] if p["role"] == "out_handle")
            owner = class_of(made["handle_type"])
        elif receiver is not None:
            owner = class_of(receiver["type"]["base"])
        else:
            owner = ""
        derived = {p["name"] for p in fn["params"] if p["role"] in ("count", "size", "two_call_size")}

        # The one value struct a call takes may also be given as keyword
        # fields, where none is named like another parameter.
        value_ins = [p for p in fn["params"] if p["role"] == "struct_in" and self.value_struct(p.get("struct"))]
        keyword_fields: List[Dict[str, Any]] = []
        if len(value_ins) == 1:
            vs = self.value_struct(value_ins[0]["struct"])
            assert vs is not None
            taken = {ident(q["name"]) for q in fn["params"]} | {"self", "cls", "b", "backend", "status"}
            if not any(f["name"] in taken or f["name"].endswith(("_arg", "_keep")) for f in vs["fields"][1:]):
                keyword_fields = vs["fields"][1:]

        sig: List[str] = []  # Python parameters
        kw_sig: List[str] = []  # keyword-only parameters (a value struct's fields)
        var_kw: List[str] = []  # a descriptor's fields (DESC_FILLERS), last
        prep: List[str] = []  # statements before the call
        args: List[str] = []  # C arguments
        results: List[Tuple[str, str]] = []  # (Python type, expression)
        two_call: Optional[str] = None
        post: List[str] = []  # statements after a successful call
        backend_expr = "b"
        py_method = PY_NAMES.get(fn["name"], fn["method"])
        to_end = PY_TO_END.get(fn["name"])
        # Each parameter's statements before the call, and where its argument
        # is in `args`: a PY_ORDER or PY_TO_END call checks them in Python order.
        prep_of: Dict[str, List[str]] = {}
        arg_at: Dict[str, int] = {}
        for p in fn["params"]:
            role, name, t = p["role"], ident(p["name"]), p["type"]
            base = t["base"]
            start, given = len(prep), len(args)
            self.param(fn, p, receiver, by_name, derived, twin, to_end, py_method,
                       sig, kw_sig, var_kw, prep, args, results, post, keyword_fields)
            prep_of[p["name"]] = prep[start:]
            # A handle is checked by the call itself (last); a derived count has no parameter.
            if p is not receiver and p["name"] not in derived and role != "handle" and len(args) == given + 1:
                arg_at[p["name"]] = given
            if role == "two_call_buf":
                two_call = "str" if base == "char" else "bytes"
        if twin is not None:
            # The twin's stream, last: None makes this call, a Stream the twin.
            sig.append("stream: Optional[StreamBase]")
        order = PY_ORDER.get(fn["name"])
        if order is not None or to_end is not None or twin is not None:
            names = [q.split(":", 1)[0] for q in sig]
            first = list(order or ())
            if set(first) - set(names) - {"*"}:
                raise SystemExit(f"regen: PY_ORDER: {fn['name']} has no parameter {sorted(set(first) - set(names))}")
            sig = [sig[names.index(n)] if n != "*" else n for n in first] + [q for q, n in zip(sig, names) if n not in first]
            # Each argument checked in Python order, into <name>_c.
            prep = []
            for q in sig:
                n = q.split(":", 1)[0]
                prep += prep_of.pop(n, [])
                i = arg_at.get(n)
                if i is not None and not args[i].isidentifier():
                    prep.append(f"{n}_c = {args[i]}")
                    args[i] = f"{n}_c"
            prep += [line for lines in prep_of.values() for line in lines]
            if to_end is not None:
                offset, length, unit = to_end
                names = [q.split(":", 1)[0] for q in sig]
                if not (offset in names and length in names and names.index(offset) < names.index(length)
                        and (unit is None or names.index(unit) < names.index(length))):
                    raise SystemExit(f"regen: PY_TO_END: {fn['name']}: {to_end} are no parameters in that order")
        # Trailing nullable parameters default to None (a stream: the default stream).
        for i in range(len(sig) - 1, -1, -1):
            if sig[i] == "*" or not sig[i].split(": ", 1)[1].startswith("Optional["):
                break
            sig[i] += " = None"
        defaults = PY_DEFAULTS.get(fn["name"], {})
        for i in range(len(sig) - 1, -1, -1):
            pname = sig[i].split(":", 1)[0]
            if pname in defaults:
                if any("=" not in q for q in sig[i + 1 :]):
                    raise SystemExit(f"regen: PY_DEFAULTS: {fn['name']}.{pname} is no trailing parameter")
                sig[i] += f" = {defaults[pname]}"
        if set(defaults) - {q.split(":", 1)[0] for q in sig}:
            raise SystemExit(f"regen: PY_DEFAULTS: {fn['name']} has no parameter {sorted(defaults)}")
        if kw_sig:
            sig += ["*"] + kw_sig
        if fn.get("consumes"):
            # The library released the receiver's handle: the object is closed.
            post.append("self._consumed()")
        if fn["name"] in PY_AFTER:
            if receiver is None or call == "constructor":
                raise SystemExit(f"regen: PY_AFTER: {fn['name']} has no receiver to call a hook of")
            post.append(f"self.{PY_AFTER[fn['name']]}()")
            self.hooks.setdefault(owner, {}).setdefault(PY_AFTER[fn["name"]], []).append(fn["name"])
        if call == "constructor" and receiver is None or owner == "":
            if sig and "*" not in sig:
                sig.append("*")
            sig.append("backend: BackendArg = None")
            prep.insert(0, "b = resolve_backend(backend)")
        elif call != "constructor":
            prep.insert(0, "b = self._b")
        if var_kw:
            struct = next(p["struct"] for p in fn["params"] if p.get("struct") in DESC_FILLERS)
            fields = {DESC_FILLERS[struct].get(f["name"], f["name"]) for f in self.structs[struct]["fields"]}
            if fields & {q.split(":", 1)[0].split("=")[0].strip() for q in sig}:
                raise SystemExit(f"regen: {fn['name']}: a field of {struct} is named as a parameter")
            if "*" not in sig and "backend: BackendArg = None" in sig:
                sig.insert(sig.index("backend: BackendArg = None"), "*")
            sig += var_kw
        del backend_expr

        if two_call is not None:
            if results:
                raise Skip("a two-call buffer beside other out-parameters")
            rtype = two_call
            body_call = f"b.two_call(b.fn.{fn['name']}, ({', '.join(args)},))" if args else f"b.two_call(b.fn.{fn['name']}, ())"
            ret = (
                f"return {body_call}.rstrip(b\"\\0\").decode(\"utf-8\", \"replace\")"
                if two_call == "str"
                else f"return {body_call}"
            )
            body = prep + [ret]
        else:
            error = f'b.error(status, "{fn["name"]}")'
            if fn["name"] in PY_LOGGED:
                log = self.by_name[PY_LOGGED[fn["name"]]]
                if not owner or call == "constructor" or log.get("object") != fn.get("object") \
                        or log["call"] != "string" or not log.get("property"):
                    raise SystemExit(f"regen: PY_LOGGED: {fn['name']}'s receiver has no log {log['name']}")
                error = f'_logged({error}, self, "{log["property"]}")'
            body = prep + [
                f"status = b.fn.{fn['name']}({', '.join(args)})",
                "if status:",
                f"    raise {error}",
            ] + post
            if twin is not None:
                # stream= picks the call: None this one, a Stream its twin.
                stream = '_arg(stream, "cuabi_stream", StreamBase, "stream", b, True)'
                body = prep + [
                    "if stream is None:",
                    f"    status = b.fn.{fn['name']}({', '.join(args)})",
                    "else:",
                    f"    status = b.fn.{twin['name']}({', '.join(args + [stream])})",
                    "if status:",
                    f'    raise b.error(status, "{fn["name"]}" if stream is None else "{twin["name"]}")',
                ] + post
            if fn.get("ready_query"):
                # NOT_READY is an answer, not a failure: True when done.
                body = prep + [
                    f"status = b.fn.{fn['name']}({', '.join(args)})",
                    "if status == NOT_READY:",
                    "    return False",
                    "if status:",
                    f'    raise b.error(status, "{fn["name"]}")',
                    "return True",
                ]
                rtype = "bool"
            elif fn["name"] in PY_CHAIN:
                if results or not owner or call == "constructor":
                    raise SystemExit(f"regen: PY_CHAIN: {fn['name']} answers no receiver")
                rtype = "_Self"
                body.append("return self")
            elif not results:
                rtype = "None"
            elif len(results) == 1 and results[0][1].startswith("_OWNERS["):
                rtype = results[0][0]  # a public class, typed here (the hook answers Any)
                body.append(f"made: {rtype} = {results[0][1]}")
                made_kind = next(p["handle_type"] for p in fn["params"] if p["role"] == "out_handle")
                if call != "constructor" and receiver is not None and made_kind == receiver["type"]["base"] \
                        and made_kind in self.holding:
                    # A copy of the receiver (a graph's clone) names what it names: it keeps it too.
                    body += ['for keep in self.__dict__.get("_held", ()):', "    made._hold(keep)"]
                body.append("return made")
            elif len(results) == 1:
                rtype = results[0][0]
                body.append(f"return {results[0][1]}")
            else:
                rtype = "Tuple[" + ", ".join(r[0] for r in results) + "]"
                body.append("return " + ", ".join(r[1] for r in results))

        name = fn["property"] if (fn.get("property") and call != "setter" and owner and not sig) else None
        method = fn["method"]
        if fn["name"] in PY_NAMES:
            if name is not None:
                name = PY_NAMES[fn["name"]]
            else:
                method = PY_NAMES[fn["name"]]
        member = name if name is not None else method
        if owner and member in RESOURCE_NAMES:
            raise Skip(f"`{member}` is Resource's own")
        self.made[fn["name"]] = (owner, ident(member))
        doc = one_line(fn["doc"]) if fn["doc"] else fn["name"]
        doc = f"{fn['name']}: {doc}" if fn["doc"] else doc
        if keyword_fields:
            p = value_ins[0]
            doc += (
                f" ``{ident(p['name'])}``: a cuabi.{value_class(p['struct'])}, or its fields as keywords"
                " (set over it when both are given)"
                + (f"; None and no keyword: NULL ({p['null_means']})." if p.get("nullable") else ".")
            )
        if any(p["name"] == "location" and p["role"] == "in" and p["type"]["base"] == "int32_t" for p in fn["params"]):
            mine = " (None: this object's device)" if PY_DEFAULTS.get(fn["name"], {}).get("location") == "None" else ""
            doc += f' ``location``: a Device, a device ordinal or "host" (cuabi.LOCATION_HOST){mine}.'
        for pname, short in PY_NAMED_SHORT.get(fn["name"], {}).items():
            doc += f' ``{pname}`` is also a member\'s name (any case), "{short}" left out or not.'
        if to_end is not None:
            unit = f" (in elements of ``{to_end[2]}`` bytes)" if to_end[2] else ""
            whose = f" of ``{ident(receiver['name'])}``" if call == "constructor" and receiver is not None else ""
            doc += f" ``{to_end[1]}`` None: from ``{to_end[0]}`` to the end{whose}{unit}."
        if twin is not None:
            doc += f" ``stream``: None calls {fn['name']}; a Stream calls {twin['name']}, in order on it."
        if var_kw:
            dname = next(p["name"] for p in fn["params"] if p.get("struct") == struct)
            doc += f" ``{dname}``: its fields as keywords, as ``fill_{struct[len('cuabi_'):]}`` takes them."
        lines: List[str] = []
        indent = "    " if owner else ""
        if call == "constructor":
            lines.append(f"{indent}@classmethod")
            params = ["cls"] + sig
            lines.append(f"{indent}def {ident(method)}({', '.join(params)}) -> {rtype}:")
        elif name is not None:
            if fn["name"] in PY_CACHED:  # read once, kept in _<name>
                *rest, last = body
                if not last.startswith("return "):
                    raise SystemExit(f"regen: PY_CACHED: {fn['name']} answers no value")
                body = [f"if self._{name} is None:"] + ["    " + line for line in rest]
                body += [f"    self._{name} = {last[len('return '):]}", f"return self._{name}"]
                lines += [f"{indent}_{name}: Optional[{rtype}] = None", ""]
            lines.append(f"{indent}@property")
            lines.append(f"{indent}def {ident(name)}(self) -> {rtype}:")
        else:
            params = (["self: _Self" if rtype == "_Self" else "self"] if owner else []) + sig
            if params and params[-1] == "*":
                params.pop()
            lines.append(f"{indent}def {ident(method)}({', '.join(params)}) -> {rtype}:")
        lines += wrap_doc(doc, indent + "    ")
        lines += [indent + "    " + line for line in body]
        if fn["name"] in PY_MADE_BY:
            self.made_by_method(fn, owner, method, sig, rtype, doc)
        if fn["name"] in PY_ALIASES:
            lines += ["", f"{indent}{PY_ALIASES[fn['name']]} = {ident(member)}"]
        if fn["name"] in PY_SETTERS and name is not None:
            twin = self.by_name[PY_SETTERS[fn["name"]]]
            value = next(p["name"] for p in twin["params"] if p["role"] == "in")
            made = self.made[twin["name"]]
            _, text = self.function(dict(twin, params=[dict(p, name=name) if p["name"] == value else p
                                                       for p in twin["params"]]))
            self.made[twin["name"]] = made
            body_lines = text.rstrip("\n").split("\n")
            doc_end = next(i for i, line in enumerate(body_lines) if line.endswith('"""'))
            lines += ["", f"{indent}@{ident(name)}.setter", f"{indent}def {ident(name)}(self, {name}: {rtype}) -> None:"]
            lines += body_lines[doc_end + 1 :]  # the setter's body; its doc is the getter's
        return owner, "\n".join(lines) + "\n"


    def param(
        self, fn: Dict[str, Any], p: Dict[str, Any], receiver: Optional[Dict[str, Any]],
        by_name: Dict[str, Dict[str, Any]], derived: Set[str], twin: Optional[Dict[str, Any]],
        to_end: Optional[Tuple[str, str, Optional[str]]], py_method: str, sig: List[str],
        kw_sig: List[str], var_kw: List[str], prep: List[str], args: List[str],
        results: List[Tuple[str, str]], post: List[str], keyword_fields: List[Dict[str, Any]],
    ) -> None:
        """Parameter `p` of `fn`: its Python parameter (into `sig`, `kw_sig`
        or `var_kw`), the statements before the call (`prep`), its C argument
        (`args`), what the call answers through it (`results`) and the
        statements after it (`post`)."""
        call = fn["call"]
        role, name, t = p["role"], ident(p["name"]), p["type"]
        base = t["base"]
        if p is receiver:
            if call == "constructor":
                # Checked by _of, given as any handle argument (a buffer the
                # made object keeps is lent: DeviceBuffer._arg).
                sig.append(f"{name}: {class_of(base)}")
                prep.append(f'b = _of({name}, "{base}", {class_of(base)}, "{p["name"]}")._b')
                args.append(f"{name}._arg(b)")
            else:
                args.append("self._handle")
            return
        if p["name"] in derived:
            if role == "two_call_size":
                return
            of = by_name[p["of"]]
            if of["role"] == "bytes_out" and fn.get("idiom") == "ipc":
                args.append("_api.CUABI_IPC_HANDLE_SIZE")
            elif of["role"] == "array_in" and of["type"]["base"] in BUILT_TYPES or of["role"] in ("bytes_in", "bytes_out"):
                args.append(f"{ident(of['name'])}_n")  # the count its layout gives, the bytes' size
            else:
                args.append(f"len({ident(of['name'])}_c)" if of["role"] == "array_in" else f"len({ident(of['name'])})")
            return
        if to_end is not None and p["name"] == to_end[1]:
            # A length whose None is the rest of the receiver from the offset
            # (checked before it, into <offset>_c), in elements of the unit.
            if role != "in" or base not in ("size_t", "uint64_t"):
                raise SystemExit(f"regen: PY_TO_END: {fn['name']}.{p['name']} is no size")
            kind = receiver["type"]["base"] if receiver is not None else ""
            size = self.by_name.get(f"{kind}_get_size")
            if receiver is None or size is None or not size.get("property"):
                raise SystemExit(f"regen: PY_TO_END: {fn['name']}'s receiver has no size getter")
            who = ident(receiver["name"]) if call == "constructor" else "self"
            end = f"max({who}.{PY_NAMES.get(size['name'], size['property'])} - {to_end[0]}_c, 0)"
            if to_end[2] is not None:
                end += f" // max({to_end[2]}_c, 1)"
            _, checked = self.in_value(p)
            sig.append(f"{name}: Optional[int]")
            args.append(f"{end} if {name} is None else {checked}")
            return
        if role == "in" and p["name"] == "location" and base == "int32_t":
            # A prefetch's or an advice's location: a Device, an ordinal or "host";
            # defaulting to None: the receiver's device.
            read = f'_READERS["location"]({name}, "{p["name"]}")'
            if PY_DEFAULTS.get(fn["name"], {}).get(p["name"]) == "None":
                if f"cuabi_{fn['object']}_get_device_ordinal" not in self.by_name or receiver is None:
                    raise SystemExit(f"regen: PY_DEFAULTS: {fn['name']}'s receiver has no device for location=None")
                sig.append(f"{name}: Optional[Union[DeviceBase, int, str]]")
                args.append(f"self.device_ordinal if {name} is None else {read}")
            else:
                sig.append(f"{name}: Union[DeviceBase, int, str]")
                args.append(read)
        elif role == "in" and p["name"] in BOOL_FLAGS.get(fn["name"], {}):
            py, member = BOOL_FLAGS[fn["name"]][p["name"]]
            self.note_enum(base)
            cls = enum_class_name(self.enums[self.flags[base]["bits"]])
            sig.append(f"{py}: bool = False")
            args.append(f"int(_api.{cls}.{member}) if {py} else 0")
        elif role == "in" and p["name"] in PY_FIXED_FLAGS.get(fn["name"], {}):
            self.note_enum(base)
            cls = enum_class_name(self.enums[self.flags[base]["bits"]])
            args.append(f"int(_api.{cls}.{PY_FIXED_FLAGS[fn['name']][p['name']]})")
        elif role == "in" and p["name"] in PY_NAMED.get(fn["name"], {}):
            what, hint = PY_NAMED[fn["name"]][p["name"]]
            self.note_enum(base)
            cls = enum_class_name(self.enums[base])
            sig.append(f"{name}: Union[_api.{cls}, int, str]")
            table = f"{{m.name.lower(): m for m in _api.{cls}}}"
            short = PY_NAMED_SHORT.get(fn["name"], {}).get(p["name"])
            if short:
                table = (f"{{**{table}, **{{m.name.lower()[{len(short)}:]: m for m in _api.{cls} "
                         f'if m.name.lower().startswith("{short}")}}}}')
            args.append(f'named({name}, {table}, "{what}", "{p["name"]}", "{hint}")')
        elif role == "in":
            ptype, arg = self.in_value(p, py_method)
            sig.append(f"{name}: {ptype}")
            args.append(arg)
        elif role in ("bytes_in", "bytes_out") and twin is not None and not p.get("nullable"):
            # A copy's host side: any host buffer the "host" reader reads,
            # kept alive over the call (the stream's copy needs it longer).
            sig.append(f"{name}: Any")
            prep.append(f"{name}_arg, {name}_n, {name}_keep = _bytes_in({name}, b{', True' if role == 'bytes_out' else ''})")
            args.append(f"{name}_arg")
        elif role == "handle":
            cls = class_of(p["handle_type"])
            ht = p["handle_type"]
            if p.get("nullable"):
                sig.append(f"{name}: Optional[{cls}]")
                args.append(f'b.NULL if {name} is None else _arg({name}, "{ht}", {cls}, "{p["name"]}", b, True)')
            else:
                sig.append(f"{name}: {cls}")
                args.append(f'_arg({name}, "{ht}", {cls}, "{p["name"]}", b)')
        elif role == "bytes_in" and not p.get("nullable"):
            # Host bytes the call reads (and copies) before it returns.
            sig.append(f"{name}: Union[bytes, bytearray, memoryview]")
            # An IPC handle is first read as one (the "ipc" reader: bytes, not str).
            data = f'_READERS["ipc"]({name})' if fn.get("idiom") == "ipc" else name
            prep.append(f"{name}_arg, {name}_n, {name}_keep = _bytes_in({data}, b)")
            args.append(f"{name}_arg")
        elif role == "bytes_out" and fn.get("idiom") == "ipc":
            # An IPC handle's bytes, read into a buffer of their size.
            prep.append(f"{name}_buf = b.char_buffer(_api.CUABI_IPC_HANDLE_SIZE)")
            args.append(f"{name}_buf")
            results.append(("bytes", f"b.buffer_bytes({name}_buf, _api.CUABI_IPC_HANDLE_SIZE)"))
        elif role == "string_in":
            if p.get("nullable"):
                sig.append(f"{name}: Optional[Union[str, bytes]]")
                prep.append(f'{name}_c = b.NULL if {name} is None else as_bytes({name}, "{p["name"]}")')
            else:
                sig.append(f"{name}: Union[str, bytes]")
                prep.append(f'{name}_c = as_bytes({name}, "{p["name"]}")')
            args.append(f"{name}_c")
        elif role == "array_in" and base == "char" and len(t["pointers"]) == 2:
            sig.append(f"{name}: Sequence[Union[str, bytes]]")
            prep.append(
                f'{name}_c = [as_bytes(s, f"{p["name"]}[{{i}}]") for i, s in enumerate({name})]'
            )
            prep.append(f"{name}_arg, {name}_keep = b.string_array({name}_c)")
            args.append(f"{name}_arg")
        elif role == "array_in" and base in BUILT_TYPES and len(t["pointers"]) == 1:
            # An array of a built struct: each element checked (the one at
            # fault named), laid out by its registered layout.
            module, cls = BUILT_TYPES[base]
            self.built_uses.add((module, cls))
            sig.append(f'{name}: Sequence["{cls}"]')
            prep.append(f'{name}_arg, {name}_n, {name}_keep = _built_array({name}, "{base}", "{p["name"]}", b)')
            args.append(f"{name}_arg")
            if p.get("lasting") == "receiver":
                post.append(f"self._hold({name}_keep)")
        elif role == "array_in" and base in ("size_t", "int32_t") and len(t["pointers"]) == 1:
            low, high = INT_RANGES[base]
            sig.append(f"{name}: Sequence[int]")
            prep.append(
                f'{name}_c = [check_int(v, f"{p["name"]}[{{i}}]", {low}, {high}) for i, v in enumerate({name})]'
            )
            prep.append(f'{name}_arg = b.array("{base}", {name}_c)')
            args.append(f"{name}_arg")
        elif role == "out":
            box = "void*" if base == "void" else self.box(base)
            prep.append(f'{name}_box = b.out("{box}")')
            args.append(f"b.ref({name}_box)")
            if p.get("flag"):  # it receives 1 or 0
                results.append(("bool", f"bool(b.value({name}_box))"))
            else:
                results.append(self.out_value(base, f"b.value({name}_box)"))
        elif role == "out_handle":
            prep.append(f'{name}_box = b.out("{p["handle_type"]}")')
            args.append(f"b.ref({name}_box)")
            ht = p["handle_type"]
            if ht in OWNERS:
                # Its public class, made by its hook from the handle and
                # what made it: the device the call names (the one the
                # object belongs to), else the receiver, or a
                # constructor's first handle.
                module, cls = OWNERS[ht]
                self.owner_uses.add((module, cls))
                by = "None" if receiver is None else ident(receiver["name"]) if call == "constructor" else "self"
                devices = [q for q in fn["params"] if q["role"] == "handle" and not q.get("nullable")
                           and q["handle_type"] == "cuabi_device"]
                if devices:
                    by = ident(devices[0]["name"])
                results.append((f'"{cls}"', f'_OWNERS["{ht}"]._made_by(b, b.value({name}_box), {by})'))
            else:
                cls = class_of(ht)
                results.append((cls, f"{cls}._from_handle(b, b.value({name}_box))"))
        elif role == "two_call_buf":
            pass  # the caller answers the string or blob
        elif role == "struct_in" and self.value_struct(p.get("struct")):
            cls = value_class(p["struct"])
            nullable = bool(p.get("nullable"))
            if keyword_fields:
                sig.append(f"{name}: Optional[{cls}]")
                kw_sig += [f"{f['name']}: Optional[{self.field(f)[0]}] = None" for f in keyword_fields]
                given = "{" + ", ".join(f'"{f["name"]}": {f["name"]}' for f in keyword_fields) + "}"
            else:
                sig.append(f"{name}: Optional[{cls}]" if nullable else f"{name}: {cls}")
                given = "None"
            prep.append(
                f'{name}_arg, {name}_keep = _value({name}, {cls}, "{p["name"]}", b, {nullable}, {given})'
            )
            args.append(f"{name}_arg")
        elif role == "struct_in" and p.get("struct") in BUILT_TYPES and not p.get("nullable"):
            module, cls = BUILT_TYPES[p["struct"]]
            self.built_uses.add((module, cls))
            sig.append(f'{name}: "{cls}"')
            prep.append(f'{name}_arg, {name}_keep = _built({name}, "{p["struct"]}", "{p["name"]}", b)')
            args.append(f"{name}_arg")
            if p.get("lasting") == "receiver":
                post.append(f"self._hold({name}_keep)")
        elif role == "struct_in" and p.get("struct") in DESC_FILLERS:
            # A descriptor filled from keywords: its fields, as fill_<struct>
            # takes them (none given: the init's defaults, what NULL means).
            if var_kw:
                raise Skip("two descriptor parameters")
            var_kw.append("**fields: Any")
            prep.append(f'{name}_arg, {name}_keep = fill_{p["struct"][len("cuabi_"):]}(b, **fields)')
            args.append(f"{name}_arg")
        elif role == "struct_out" and self.value_struct(p.get("struct")):
            cls = value_class(p["struct"])
            prep.append(f"{name}_arg, {name}_s = {cls}._init(b)")
            args.append(f"{name}_arg")
            results.append((cls, f"{cls}._from_native({name}_s)"))
        else:
            raise Skip(f"parameter `{p['name']}` ({role}) has no generated Python form")

    def made_by_method(
        self, fn: Dict[str, Any], owner: str, method: str, sig: List[str], rtype: str, doc: str
    ) -> None:
        """The PY_MADE_BY method of a constructor's receiver class: the
        constructor's parameters after the receiver, forwarded to it."""
        receiver = next((p for p in fn["params"] if p["name"] == fn["receiver"]), None)
        if fn["call"] != "constructor" or receiver is None:
            raise SystemExit(f"regen: PY_MADE_BY: {fn['name']} is no constructor with a receiver")
        params = sig[1:]
        args, keyword = ["self"], False
        for q in params:
            name = q.split(":", 1)[0]
            if name == "*":
                keyword = True
            else:
                args.append(f"{name}={name}" if keyword else name)
        if params and params[-1] == "*":
            params = params[:-1]
        made = PY_MADE_BY[fn["name"]]
        lines = [f"    def {made}({', '.join(['self'] + params)}) -> {rtype}:"]
        lines += wrap_doc(f"{doc} Made by ``{owner}.{ident(method)}(self, ...)``.", "        ")
        lines.append(f"        return {owner}.{ident(method)}({', '.join(args)})")
        self.made_by.setdefault(class_of(receiver["type"]["base"]), []).append("\n".join(lines) + "\n")

    def keyed_properties(self, fn: Dict[str, Any]) -> str:
        """The PY_KEYED properties of getter `fn` (see there)."""
        key = next(p for p in fn["params"] if p["role"] == "in")
        enum = self.enums[key["type"]["base"]]
        cls = enum_class_name(enum)
        prefix = member_prefix(enum)
        docs = {v["name"][len(prefix) :]: one_line(v["doc"]) for v in enum["values"]}
        getter, setter = fn["method"], "set_" + fn["method"][len("get_") :]
        lines: List[str] = []
        for name, members in PY_KEYED[fn["name"]].items():
            several = isinstance(members, tuple)
            first = members[0] if several else members
            doc = docs[first]
            flag = doc.startswith(("1 when", "1 to"))
            rtype = f"Tuple[{', '.join(['int'] * len(members))}]" if several else "bool" if flag else "int"
            reads = [f"self.{getter}(_api.{cls}.{m})" for m in (members if several else [members])]
            value = f"({', '.join(reads)})" if several else f"bool({reads[0]})" if flag else reads[0]
            lines += ["", "    @property", f"    def {name}(self) -> {rtype}:"]
            lines += wrap_doc(doc, "        ") + [f"        return {value}"]
            if "(settable" in doc and not several:
                arg = "int(bool(value))" if flag else "value"
                lines += ["", f"    @{name}.setter", f"    def {name}(self, value: {rtype}) -> None:",
                          f"        self.{setter}(_api.{cls}.{first}, {arg})"]
        return "\n".join(lines[1:]) + "\n"

    def plain_value(self, fn: Dict[str, Any]) -> Tuple[str, str]:
        """A library call taking nothing and answering a number or a string
        instead of a status (``cuabi_version``): a free function returning
        it (``cuabi.version()``)."""
        r = fn["returns"]
        if fn["call"] != "library" or fn["params"]:
            raise Skip("answers no status")
        if r["base"] == "char" and len(r["pointers"]) == 1:
            rtype, value = "str", f"b.string(b.fn.{fn['name']}())"
        elif r["base"] in INT_RANGES and not r["pointers"]:
            rtype, value = "int", f"int(b.fn.{fn['name']}())"
        else:
            raise Skip("answers no status")
        self.made[fn["name"]] = ("", ident(fn["method"]))
        doc = f"{fn['name']}: {one_line(fn['doc'])}" if fn["doc"] else fn["name"]
        lines = [f"def {ident(fn['method'])}(backend: BackendArg = None) -> {rtype}:"]
        lines += wrap_doc(doc, "    ")
        lines += ["    b = resolve_backend(backend)", f"    return {value}"]
        return "", "\n".join(lines) + "\n"

    # -- scopes --------------------------------------------------------------
    def scope_class(self, fn: Dict[str, Any], closer: Dict[str, Any]) -> str:
        """The class of a scope (the model's `scope` of `fn`), named as the
        scope (``nvtx_range``, lower case like contextlib's helpers): a
        context manager and, through contextlib.ContextDecorator, a
        decorator. Made with the opening call's arguments, which it keeps;
        ``__enter__`` calls the opening call's generated form, ``__exit__``
        the closing call's with the kept arguments it takes.

        Its parameters, in an order Python callers can leave the usual ones
        out of (a generic rule, said in the class's docstring): the
        receiver, if the opening call has one; then each parameter with no
        default, in C order; then each one C lets be NULL, defaulting to
        None (what NULL means); then the numbers, defaulting to 0, C's zero
        value (a flag set: none; an enum only where it has a 0 value).
        Holding no state of its own (the opening call answers nothing), one
        instance may be entered again, nested, and on several threads."""
        scope = fn["scope"]
        cls = scope["name"]
        where = f"regen: python_objects.py: the scope {cls} of {fn['name']}"
        if not cls.isidentifier() or keyword.iskeyword(cls):
            raise SystemExit(f"{where}: `{cls}` is no Python class name")
        for f in (fn, closer):
            if f["name"] not in self.made:
                raise SystemExit(f"{where}: {f['name']} has no generated Python form")
        opener_owner, opener_member = self.made[fn["name"]]
        closer_owner, closer_member = self.made[closer["name"]]
        free = not opener_owner
        if free != (not closer_owner) or (not free and fn["receiver"] != closer["receiver"]):
            raise SystemExit(f"{where}: the opening and closing calls are not both free functions "
                             "or both methods of the same object")
        taken = {"self", "cls"} | ({"backend"} if free else set())
        # (Python parameter, its account in the docstring), by group.
        required: List[Tuple[str, str]] = []  # no default: the receiver, then C order
        nullable: List[Tuple[str, str]] = []
        numbers: List[Tuple[str, str]] = []
        receiver = ""
        for p in fn["params"]:
            role, name, base = p["role"], ident(p["name"]), p["type"]["base"]
            if name in taken:
                raise SystemExit(f"{where}: a parameter named `{name}`, the scope's own")
            if role == "receiver":
                receiver = name
                required.insert(0, (f"{name}: {class_of(base)}", name))
            elif role in ("string_in", "handle"):
                ptype = "Union[str, bytes]" if role == "string_in" else class_of(p["handle_type"])
                if p.get("nullable"):
                    nullable.append((f"{name}: Optional[{ptype}] = None",
                                     f"{name}=None ({p.get('null_means') or 'NULL'})"))
                else:
                    required.append((f"{name}: {ptype}", name))
            elif role == "in":
                ptype, _ = self.in_value(p)
                zero = "0.0" if ptype == "float" else "0"
                enum = self.enums.get(base)
                if enum is not None and not any(int(v["value"]) == 0 for v in enum["values"]):
                    required.append((f"{name}: {ptype}", name))
                else:
                    numbers.append((f"{name}: {ptype} = {zero}", f"{name}={zero}"))
            else:
                raise SystemExit(f"{where}: parameter `{p['name']}` ({role}) has no scope form")
        ordered = required + nullable + numbers
        order = [d for _, d in ordered]
        params = ["self"] + [q for q, _ in ordered]
        if free:
            params += ["*", "backend: BackendArg = None"]
        c_order = ", ".join(ident(p["name"]) for p in fn["params"])

        def call(f: Dict[str, Any], member: str) -> str:
            args = [f"{ident(q['name'])}=self.{ident(q['name'])}" for q in f["params"] if q["role"] != "receiver"]
            if free:
                return f"{member}({', '.join(args + ['backend=self.backend'])})"
            return f"self.{receiver}.{member}({', '.join(args)})"

        opening, closing = call(fn, opener_member), call(closer, closer_member)
        doc = (
            f"A scope of {fn['name']}: ``with {cls}(...):`` opens it on entering the block "
            f"({fn['name']}) and closes it on leaving ({closer['name']}, with the arguments it "
            f"takes); ``@{cls}(...)`` does the same around each call of the function it "
            f"decorates. {one_line(fn['doc'])} Parameters, in Python's order: "
            f"{'; '.join(order)} (in C: {c_order}). The rule, for every scope: required "
            "parameters first, then those C lets be NULL (None: what NULL means), then numbers "
            "(0, C's zero value). The scope keeps its arguments and no state of its own: one "
            "instance may be entered again, nested, and on several threads at once, each entry "
            f"closing what it opened. Leaving the block, a failure of {closer['name']} is "
            "raised only when no exception is leaving it already; else it is added to that "
            "exception as a note (Python 3.11 and later), which goes on."
        )
        lines = [f"class {cls}(ContextDecorator):"] + wrap_doc(doc, "    ") + [""]
        lines.append(f"    def __init__({', '.join(params)}) -> None:")
        kept = [q.split(":", 1)[0] for q, _ in ordered] + (["backend"] if free else [])
        lines += [f"        self.{n} = {n}" for n in kept]
        lines += [
            "",
            f"    def __enter__(self) -> {cls}:",
            f"        {opening}",
            "        return self",
            "",
            "    def __exit__(",
            "        self,",
            "        exc_type: Optional[Type[BaseException]],",
            "        exc: Optional[BaseException],",
            "        tb: Optional[TracebackType],",
            "    ) -> None:",
            "        if exc_type is None:",
            f"            {closing}",
            "            return",
            "        try:",
            f"            {closing}",
            "        except Exception as failure:",
            f'            _note(exc, "{closer["name"]}", failure)',
            "",
            "    def __repr__(self) -> str:",
        ]
        shown = ", ".join(f"{n}={{self.{n}!r}}" for n in kept if n != "backend")
        lines.append(f'        return f"{cls}({shown})"')
        return "\n".join(lines) + "\n"


def wrap_doc(text: str, indent: str, width: int = 88) -> List[str]:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    words = text.split()
    lines: List[str] = []
    line = indent + '"""'
    for w in words:
        if len(line) + 1 + len(w) > width and line.strip() != '"""':
            lines.append(line)
            line = indent + w
        else:
            line = line + ("" if line.endswith('"""') else " ") + w
    lines.append(line + '"""')
    return lines


def objects(model: Dict[str, Any]) -> str:
    em = Emitter(model)
    values = [s for s in model["structs"] if s.get("value")]
    classes: Dict[str, List[str]] = {class_of(h["name"]): [] for h in model["handles"]}
    free: List[str] = []
    skipped: List[Tuple[str, str]] = []
    free_names: List[str] = []
    for fn in model["functions"]:
        noted = set(em.enum_uses)
        try:
            owner, text = em.function(fn)
        except Skip as why:
            em.enum_uses = noted  # only what the generated members take and answer
            skipped.append((fn["name"], str(why)))
            continue
        (classes[owner] if owner else free).append(text)
        if fn["name"] in PY_KEYED:
            classes[owner].append(em.keyed_properties(fn))
        if not owner:
            free_names.append(em.made[fn["name"]][1])
    by_name = {fn["name"]: fn for fn in model["functions"]}
    scopes = [em.scope_class(fn, by_name[fn["scope"]["closer"]]) for fn in model["functions"] if fn.get("scope")]
    value_texts = [em.value_type(s) for s in values]

    # The public names, which cuabi/__init__.py exports as they are: the
    # value types, the enums the public layer takes and answers, the free
    # functions and the scopes. The classes per handle kind are extended by
    # hand-written ones, which cuabi exports instead.
    value_names = [value_class(s["name"]) for s in values]
    enum_names = sorted(em.enum_uses)
    scope_names = [fn["scope"]["name"] for fn in model["functions"] if fn.get("scope")]
    names = value_names + enum_names + free_names + scope_names
    clashes = sorted({n for n in names if names.count(n) > 1} | (set(names) & set(classes)))
    if clashes:
        raise SystemExit(f"regen: python_objects.py: public names made twice: {', '.join(clashes)}")

    out: List[str] = [banner("#")]
    out.append(
        '"""The object layer generated from the API model (include/cuabi/cuabi.json):\n'
        "a class per handle kind, a free function per library call and a scope\n"
        "class per scope, for both backends. The hand-written classes extend\n"
        "these; ``__all__`` lists the public names, which :mod:`cuabi` exports as\n"
        "they are. See scripts/regen_api/python_objects.py for the rules.\"\"\"\n\n"
        "from __future__ import annotations\n\n"
        "import operator\n"
        "from contextlib import ContextDecorator\n"
        "from dataclasses import dataclass, replace\n"
        "from types import TracebackType\n"
        "from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, Union\n\n"
        "from . import _api\n"
    )
    if enum_names:
        out.append("from ._api import (  # exported: the enums of the public layer\n")
        out += [f"    {n},\n" for n in enum_names]
        out.append(")\n")
    out.append(
        "from ._base import (\n"
        "    INT32_MAX,\n    INT32_MIN,\n    UINT32_MAX,\n    UINT64_MAX,\n"
        "    Resource,\n    as_bytes,\n    check_int,\n    named,\n    resolve_backend,\n)\n"
        "from ._loader import Backend\n\n"
    )
    if em.built_uses or em.owner_uses:
        out.append("if TYPE_CHECKING:  # the hand-written types of built structs and public classes\n")
        out += [f"    from .{module} import {cls}\n" for module, cls in sorted(em.built_uses | em.owner_uses)]
        out.append("\n")
    out.append(
        "BackendArg = Union[Backend, str, None]\n"
        "_Self = TypeVar(\"_Self\", bound=Resource)  # a chaining method's receiver (PY_CHAIN)\n"
        "NOT_READY = _api.CUABI_ERROR_NOT_READY\n\n"
        "# The public class of each kind of handle, the hand-written one registered\n"
        "# for it: what a generated call answers a new handle of that kind in (made\n"
        "# by its _made_by hook), and what is named when an argument of another\n"
        "# type is refused.\n"
        "_OWNERS: Dict[str, Any] = {}\n\n\n"
        "def register_owner(handle_type: str, cls: Any) -> None:\n"
        '    """Names ``cls`` (which extends the generated class of ``handle_type``)\n'
        '    as the public class of that kind: what a generated call answers and\n'
        '    an argument of that kind must be (scripts/regen finds these calls)."""\n'
        "    _OWNERS[handle_type] = cls\n\n\n"
        "def _of(obj: Any, handle_type: str, base: Any, what: str, nullable: bool = False) -> Any:\n"
        '    """``obj``, an object of the kind ``base``; a TypeError naming ``what``\n'
        "    for anything else (and the public class's ``_arg_hint``, if it has\n"
        '    one)."""\n'
        "    if not isinstance(obj, base):\n"
        "        owner = _OWNERS.get(handle_type, base)\n"
        '        also = " or None" if nullable else ""\n'
        '        hint = getattr(owner, "_arg_hint", "")\n'
        "        raise TypeError(\n"
        '            f"{what} must be a cuabi.{owner.__name__}{also}, not {type(obj).__name__}{hint}"\n'
        "        )\n"
        "    return obj\n\n\n"
        "def _arg(obj: Any, handle_type: str, base: Any, what: str, b: Backend, nullable: bool = False) -> Any:\n"
        '    """The handle argument for ``obj``, checked by ``_of``."""\n'
        "    return _of(obj, handle_type, base, what, nullable)._arg(b)\n\n\n"
        "# How each built struct is laid out: (the hand-written type that\n"
        "# describes one, what lays a list of them out as a C array).\n"
        "_LAYOUTS: Dict[str, Tuple[Any, Callable[[Backend, List[Any]], Tuple[Any, int, List[Any]]]]] = {}\n\n\n"
        "def register_layout(\n"
        "    struct: str, cls: Any, lay_out: Callable[[Backend, List[Any]], Tuple[Any, int, List[Any]]]\n"
        ") -> None:\n"
        '    """Names ``cls`` as the type describing a ``struct`` and ``lay_out`` as\n'
        '    what makes the C array of a list of them: (the array, its count, what\n'
        '    keeps it and what it names alive)."""\n'
        "    _LAYOUTS[struct] = (cls, lay_out)\n\n\n"
        "# What reads a Python value as some C values, registered by cuabi._hostmem:\n"
        '# "host", ``read(obj, writable) -> (address, nbytes, keep-alive)`` of a\n'
        '# C-contiguous host buffer; "location", ``read(value, what) -> int`` of a\n'
        '# Device, a device ordinal or "host"; "ipc", ``read(handle) -> bytes`` of an\n'
        "# IPC handle.\n"
        "_READERS: Dict[str, Callable[..., Any]] = {}\n\n\n"
        "def register_reader(kind: str, read: Callable[..., Any]) -> None:\n"
        '    """Names ``read`` as what reads a Python value as a C value of ``kind``."""\n'
        "    _READERS[kind] = read\n\n\n"
        "def _bytes_in(data: Any, b: Backend, writable: bool = False) -> Tuple[Any, int, Any]:\n"
        '    """The ``const void*`` argument for host bytes ``data`` (bytes, bytearray,\n'
        "    memoryview or another C-contiguous buffer), their size and what keeps\n"
        '    them alive; ``writable``: the ``void*`` of bytes the call writes."""\n'
        '    address, nbytes, keep = _READERS["host"](data, writable)\n'
        "    return b.pointer(address), nbytes, keep\n\n\n"
        "def _byte(value: Any, what: str) -> int:\n"
        '    """A ``uint8_t`` argument: a byte, else a ValueError naming ``what``."""\n'
        "    try:\n"
        "        v = operator.index(value)\n"
        "    except TypeError:\n"
        '        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None\n'
        "    if not 0 <= v <= 0xFF:\n"
        '        raise ValueError(f"{what} {v} is not a byte (0 to 255)")\n'
        "    return v\n\n\n"
        "def _built(value: Any, struct: str, what: str, b: Backend) -> Tuple[Any, List[Any]]:\n"
        '    """The argument for a built-struct parameter (``value``, of the type\n'
        '    registered for ``struct``) and what keeps it and what it names alive;\n'
        '    anything else: a TypeError naming ``what``."""\n'
        "    cls, lay_out = _LAYOUTS[struct]\n"
        "    if not isinstance(value, cls):\n"
        '        raise TypeError(f"{what} must be a cuabi.{cls.__name__}, not {type(value).__name__}")\n'
        "    arg, _, keep = lay_out(b, [value])\n"
        "    return arg, keep\n\n\n"
        "def _built_array(values: Sequence[Any], struct: str, what: str, b: Backend) -> Tuple[Any, int, List[Any]]:\n"
        '    """The argument for an array of built structs (``values``, each of the\n'
        "    type registered for ``struct``; anything else: a TypeError naming\n"
        '    ``what`` and the element at fault), its count and what keeps it and\n'
        '    what it names alive."""\n'
        "    cls, lay_out = _LAYOUTS[struct]\n"
        "    items = list(values)\n"
        "    for i, item in enumerate(items):\n"
        "        if not isinstance(item, cls):\n"
        '            raise TypeError(f"{what}[{i}] must be a cuabi.{cls.__name__}, not {type(item).__name__}")\n'
        "    return lay_out(b, items)\n\n\n"
        "def _value(\n"
        "    value: Any, cls: Any, what: str, b: Backend, nullable: bool, fields: Optional[Dict[str, Any]]\n"
        ") -> Tuple[Any, Any]:\n"
        '    """The argument for a value-struct parameter and what keeps it alive:\n'
        "    ``value`` (a ``cls``) with the keyword ``fields`` that are not None set\n"
        "    over it; None: ``cls()`` with them, or NULL where the parameter is\n"
        "    nullable and no field is given (``fields`` None: the call takes no\n"
        '    keyword fields). Anything else: a TypeError naming ``what``."""\n'
        "    given = {k: v for k, v in (fields or {}).items() if v is not None}\n"
        "    if value is None and nullable and not given:\n"
        "        return b.NULL, None\n"
        "    if value is None and fields is not None:\n"
        "        value = cls(**given)\n"
        "    elif not isinstance(value, cls):\n"
        '        also = " or None" if nullable else ""\n'
        '        raise TypeError(f"{what} must be a cuabi.{cls.__name__}{also}, not {type(value).__name__}")\n'
        "    elif given:\n"
        "        value = replace(value, **given)\n"
        "    arg, keep = value._to_native(b, what)\n"
        "    return arg, keep\n\n\n"
        "def enum_in(value: Any, cls: Any, what: str) -> int:\n"
        '    """An enum value: a member or an int (which the core checks), or a\n'
        '    member\'s name (any case); anything else a TypeError naming ``what``."""\n'
        "    table = {member.name.lower(): member for member in cls}\n"
        '    if isinstance(value, bool) or not (isinstance(value, str) or hasattr(value, "__index__")):\n'
        "        raise TypeError(\n"
        "            f\"{what} must be one of {', '.join(table)} (or its enum), \"\n"
        "            f\"not {type(value).__name__}\"\n"
        "        )\n"
        "    return named(value, table, what, what)\n\n\n"
        "def flag_in(value: Any, what: str) -> Union[bool, int]:\n"
        '    """A field the core reads as 0 or 1: True/False, or an int handed to\n'
        '    the core as it is (which refuses anything but 0 and 1)."""\n'
        "    if isinstance(value, (bool, int)):\n"
        "        return value\n"
        '    raise TypeError(f"{what} must be True or False, not {type(value).__name__}")\n\n\n'
        "def _strings(b: Backend, items: Sequence[Any], what: str, keep: List[Any]) -> Tuple[Any, int]:\n"
        '    """A ``const char* const*`` field\'s array of ``items`` (each str or bytes,\n'
        '    the one at fault named ``what[i]``) and its count; ``keep`` keeps them\n'
        '    alive."""\n'
        '    raw = [as_bytes(item, f"{what}[{i}]") for i, item in enumerate(items)]\n'
        "    arr, held = b.string_array(raw)\n"
        "    keep += [raw, held]\n"
        "    return b.field(arr, keep), len(raw)\n\n\n"
        "def _logged(exc: Any, obj: Any, log: str) -> Any:\n"
        '    """A failed compile\'s or link\'s ``exc`` (a CudaError) with ``obj``\'s ``log``\n'
        '    where the library\'s last error had none (PY_LOGGED); any other failure as\n'
        '    it is."""\n'
        "    if exc.status == _api.CUABI_ERROR_COMPILE and not exc.log:\n"
        "        try:\n"
        "            exc.log = getattr(obj, log)\n"
        "        except Exception:\n"
        "            pass\n"
        "    return exc\n\n\n"
        "def _note(exc: Optional[BaseException], closer: str, failure: Exception) -> None:\n"
        '    """A scope\'s closing call failed while ``exc`` left its block: noted\n'
        '    on ``exc`` (PEP 678, Python 3.11 and later), which goes on."""\n'
        '    add_note = getattr(exc, "add_note", None)\n'
        "    if add_note is not None:\n"
        '        add_note(f"while this exception left the scope, {closer} failed: {failure}")\n'
    )
    for text in value_texts:
        out.append("\n\n" + text)
    for struct in DESC_FILLERS:
        out.append("\n\n" + em.desc_filler(em.structs[struct]))
    for h in model["handles"]:
        cls = class_of(h["name"])
        out.append(f"\n\nclass {cls}(Resource):\n")
        out.append("\n".join(wrap_doc(f"{h['name']}: {one_line(h['doc'])}", "    ")) + "\n\n")
        out.append(f'    _release_fn = "{h["name"]}_release"\n')
        out.append(f'    _handle_type = "{h["name"]}"\n')
        for text in classes[cls] + em.made_by.get(cls, []):
            out.append("\n" + text)
        for hook, fns in em.hooks.get(cls, {}).items():
            out.append(f"\n    def {hook}(self) -> None:\n")
            out.append("\n".join(wrap_doc(
                f"Runs once {' or '.join(fns)} succeeded (PY_AFTER); the public class overrides it.",
                "        ",
            )) + "\n")
    for text in free:
        out.append("\n\n" + text)
    for text in scopes:
        out.append("\n\n" + text)
    out.append("\n\n# Left to the hand-written layer:\n")
    for name, why in skipped:
        out.append(f"#   {name}: {why}\n")
    out.append("\n__all__ = [\n")
    out += [f'    "{n}",\n' for n in names]
    out.append("]\n")
    return "".join(out)


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    return {OBJECTS: objects(model)}
