"""The Rust crate's object layer: bindings/rust/cuabi/src/objects.rs.

For every function of the model with known roles and no `idiom`, a safe
method in an `impl` block of the crate's owning type of its object:

* a receiver is `&self`; a borrowed handle `&T` (`Option<&T>` when nullable);
* scalars are their Rust numbers, enums and flag sets the generated types of
  `generated.rs`; a NUL-terminated string is `&str` (a path
  `impl AsRef<Path>`; nullable, `Option<&str>` and `Option<&Path>`),
  refused naming the parameter when it holds a NUL;
* an array with its count is a slice, a host byte range `&[u8]` or
  `&mut [u8]`;
* out-parameters are the result: one value, or a tuple of several (for
  the getters of COMPOSED, a value of the type named there, written in
  values.rs with a field per out-parameter);
* a value struct (the model's `value`: versioned, an init, numbers, enums
  and flag sets alone) is a Rust value type of its own, written here with
  its fields: `Default` is the C init's values (the only source of the
  defaults), `From` makes the C struct (the init, then every field) and
  `TryFrom` reads one (an enum value this crate does not know is the
  crate's `unknown` error). A `struct_in` of one is `&Type` (a nullable one
  `impl Into<Option<&Type>>`), a `struct_out` the result; one that a call
  takes is also a builder: `new()` (the defaults) and a setter named as
  each field;
* a built struct (the model's `built`) is `&impl Describes<sys::X>` (the
  crate's hand-written type that lays it out), an array of one
  `&impl DescribesEach<sys::X>` (a batch); where the library goes on using
  it after the call (`lasting`) and it names host memory, the method is
  `unsafe` (the cuabi objects it names the library keeps alive itself);
* an `int32_t` named `location` (a device ordinal or
  `CUABI_LOCATION_HOST`) is the crate's `Location`;
* a two-call string is a `String`, a two-call blob a `Vec<u8>`;
* a count or device ordinal of USIZE_OUTS (an `int32_t` never negative) is
  a `usize` (`Device::count`, `DeviceBuffer::device_ordinal`);
* a buffer's byte range of ELEMENT_RANGES is elements of T, from element
  `offset`: `len` of them or a host slice's, and the same over all of the
  buffer (`DeviceBuffer::copy_from_at` and `copy_from`, `copy_to_at`,
  `fill_range`, `ManagedBuffer::prefetch_range` and `prefetch`,
  `advise_range`); a call of WHOLE_BUFFER is made over all of the buffer
  (`fill_bytes`, `copy_from_buffer`, and the `unsafe` *_async forms taking
  their stream: `fill_async`, `copy_from_async`), and those of
  MANAGED_WRITES are forwarded from `ManagedBuffer` too;
* a library call of BUILT_CALLS taking a built struct is a method of the
  type describing the struct (`Copy3d::run`, `run_async`), in builders.rs;
* the values of an open enum of NEWTYPE_CONSTS are consts of the crate's
  newtype of its number (`CppStd::Cpp17`), in builders.rs;
* an IPC handle (the bytes and their size of the model's `ipc` idiom) is
  the crate's `IpcHandle`: `&IpcHandle` given, an `IpcHandle` answered
  (`DeviceBuffer::ipc_handle`, `Event::open_ipc`);
* a file descriptor (an `int32_t` named `fd`) is `impl AsFd` when given,
  which stays the caller's, and an `OwnedFd` when answered, which the
  caller owns (the header's rule); such a method is Unix's alone;
* a constructor is an associated function of the type it makes, returning
  the owning type (its handle released on drop); one of MADE_BY is also a
  method of the device it is made from (`Device::create_stream_with`);
* every owning type has `as_raw`, its raw handle;
* a hand-written builder of a built struct named in OPTIONS holds the
  struct's number, enum and flag fields it sets as they are in a generated
  `<Builder>Fields` (`Default` the init's values, `write` into the C struct),
  and its setters of them are generated in builders.rs
  (`CompileOptions::fast_math`, `LinkOptions::backend`,
  `TextureOptions::filter`); GROUP_SETTERS sets a group of them in one
  setter (`Copy3d::src_offset`, `TextureOptions::border_color`);
* a flag bit of FLAG_SETTERS is a builder's setter of its own, generated
  in builders.rs too, that sets or clears it (`LaunchConfig::cooperative`,
  `LinkOptions::lto`, `MemoryPoolDesc::ipc`) or only sets it
  (`CompileOptions::no_cache`);
* a call of CHAINING, which adds to its receiver and answers nothing, takes
  `&mut self` and answers `Result<&mut Self>`, so that calls chain
  (`Linker::add_program`, `add_data`, `add_file`); STRING_WHAT names a
  string whose parameter name alone would not say what it is;
* a call that consumes its receiver (the model's `consumes`: it releases
  the handle itself once it succeeds) takes `self` and answers
  `Result<(), (Self, Error)>`: refused, the object comes back with the error
  (`DeviceBuffer::free_async`, `PhysicalMemory::free`);
* a call that answers `CUABI_ERROR_NOT_READY` without failing (a query)
  returns `Result<bool>`;
* library-level calls are free functions of the crate;
* a call that opens a scope (the model's `scope`: its name and the call
  that closes it) also has a function named as the scope, taking the same
  parameters, that answers a guard (the scope's name in CamelCase:
  `nvtx_range` answers an `NvtxRange`): it keeps owned copies of the
  closer's arguments, calls the closer when dropped (a failure ignored:
  a drop cannot report one) and sooner by `end(self)`, which reports it.

Names: the function's name without `cuabi_<object>_`; Rust's getters drop
`get_` (a getter, string or blob `cuabi_device_get_name` is `name()`, a
library call `cuabi_driver_get_version` is `driver_version()`), but for the
few RUST_NAMES gives (`cuabi_stream_get_handle` is `cu_stream()`). A flag
out (the model's `flag`: it receives 1 or 0) is a `bool`.

What this layer does not write stays in the crate's idiom modules:
functions with an `idiom`, the roles it has no safe Rust form for (versioned
structs other than value structs, callbacks, arrays of strings, in-out
values), constructors of types whose owner holds more than the handle, and
the functions listed in HAND_WRITTEN, each with the reason its Rust form
differs. The generated file
lists them, so that a reader sees where each function went.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from common import banner, built_types
from rust import OPEN, RENAMED, camel, common_prefix, doc, doc_text, rustfmt, value_doc

OBJECTS = os.path.join("bindings", "rust", "cuabi", "src", "objects.rs")
VALUES = os.path.join("bindings", "rust", "cuabi", "src", "values.rs")

# The crate's owning type for each handle kind: (type as written in an impl
# block and a return type, generic parameters of the impl block, whether the
# type holds its handle alone as `handle: Owned<raw>` so that this layer can
# make one). A handle kind missing here gets a type generated below.
TYPES: Dict[str, Tuple[str, str, bool]] = {
    "cuabi_device": ("Device", "", False),
    "cuabi_program": ("Program", "", True),
    "cuabi_module": ("Module", "", True),
    "cuabi_function": ("Function", "", False),
    "cuabi_buffer": ("DeviceBuffer<T>", "<T: DeviceRepr>", False),
    "cuabi_host_buffer": ("PinnedBuffer<T>", "<T: DeviceRepr>", False),
    "cuabi_stream": ("Stream", "", True),
    "cuabi_event": ("Event", "", True),
    "cuabi_graph": ("Graph", "", True),
    "cuabi_graph_exec": ("GraphExec", "", True),
    "cuabi_launch_plan": ("LaunchPlan", "", False),
    "cuabi_memory_pool": ("MemoryPool", "", True),
    "cuabi_array": ("Array", "", False),
    "cuabi_texture": ("Texture<'a>", "<'a>", False),
    "cuabi_surface": ("Surface", "", False),
    "cuabi_linker": ("Linker", "", True),
    "cuabi_library": ("Library", "", True),
}

# Functions whose Rust form is written by hand although this layer could
# write one, and why: the safe Rust form differs from the plain one.
HAND_WRITTEN: Dict[str, str] = {
    "cuabi_last_error_status": "Error::last reads the thread's error state",
    "cuabi_last_error_log": "Error::log carries it",
    "cuabi_last_error_get_launch_count": "Error::launches carries them",
    "cuabi_last_error_get_launch": "Error::launches carries them",
    "cuabi_last_error_get_launch_kernel": "Error::launches carries them",
    "cuabi_set_context_lost_callback": "on_context_lost takes a closure; clear_context_lost_callback",
    "cuabi_device_get_ordinal": "Device::ordinal, kept with the device",
    "cuabi_device_reset": "Device::reset is unsafe: it invalidates every object of the device",
    "cuabi_graph_exec_launch": "GraphExec::launch is unsafe: the graph replays its captured arguments",
    "cuabi_linker_link": "Linker::link is a method of the linker",
    "cuabi_stream_wrap": "Device::wrap_stream is unsafe: the CUstream must outlive the Stream",
    "cuabi_texture_get_handle": "Texture::object, read once when made",
    "cuabi_surface_get_handle": "Surface::object, read once when made",
    "cuabi_buffer_get_pointer": "DeviceBuffer::device_ptr, read once when made",
    "cuabi_buffer_get_size": "DeviceBuffer::size_bytes, kept with the buffer",
    "cuabi_buffer_get_host_pointer": "ManagedBuffer's host view",
    "cuabi_buffer_get_pitch": "PitchedBuffer::pitch, kept with the buffer",
    "cuabi_host_buffer_get_pointer": "PinnedBuffer derefs to its slice",
    "cuabi_host_buffer_get_size": "PinnedBuffer::len, kept with the buffer",
    "cuabi_buffer_alloc": "Device::alloc calls cuabi_buffer_alloc_with_pointer instead",
    "cuabi_buffer_alloc_async": "Device::alloc_async calls cuabi_buffer_alloc_async_with_pointer instead",
    "cuabi_buffer_alloc_with_pointer": "DeviceBuffer holds more than its handle: Device::alloc, one call",
    "cuabi_buffer_alloc_async_with_pointer": (
        "DeviceBuffer holds more than its handle: Device::alloc_async, one call"
    ),
}

# Getters whose out-values make one value of a type of the crate's
# (`types.rs`), its fields named as the out-parameters: MemoryPool::usage
# answers a PoolUsage { reserved_bytes, used_bytes }.
# A field named otherwise than its out-parameter is in COMPOSED_FIELDS
# (`Module::global` answers a Global { device_ptr, size_bytes }).
COMPOSED: Dict[str, str] = {"cuabi_memory_pool_get_usage": "PoolUsage", "cuabi_module_get_global": "Global"}
COMPOSED_FIELDS: Dict[Tuple[str, str], str] = {("cuabi_module_get_global", "bytes"): "size_bytes"}

# Hand-written builders of the crate and the number, enum and flag fields of
# a built struct each sets (the rest of the struct, its memory and strings,
# stays the builder's own): the builder (with its lifetime, if it has one)
# -> the struct, the builder's module, and the header's fields, each mapped
# to its setter's name (None: the builder sets it by a method of its own or
# of GROUP_SETTERS, `address_modes` setting three). Two builders may set
# fields of one struct (`TextureSource` its memory, `TextureOptions` its
# sampling). The builder holds the fields in a generated `<Builder>Fields`
# (objects.rs: `Default` the init's values, `write` into the C struct) as
# `fields`, and the setters are generated in builders.rs.
OPTIONS: Dict[str, Tuple[str, str, Dict[str, Optional[str]]]] = {
    "CompileOptions": (
        "cuabi_compile_desc",
        "program",
        {
            "fast_math": "fast_math",
            "line_info": "line_info",
            "device_debug": "device_debug",
            "lto": "dlto",
            "relocatable": "rdc",
        },
    ),
    "LinkOptions": ("cuabi_link_desc", "link", {"backend": "backend", "flags": "flags"}),
    "Copy3d<'_>": (
        "cuabi_copy_3d_desc",
        "copy",
        {
            name: None
            for name in (
                "src_x_bytes",
                "src_y",
                "src_z",
                "src_pitch",
                "src_height",
                "dst_x_bytes",
                "dst_y",
                "dst_z",
                "dst_pitch",
                "dst_height",
                "width_bytes",
                "height",
                "depth",
            )
        },
    ),
    "TextureSource<'_>": (
        "cuabi_texture_desc",
        "texture",
        {
            "offset": "offset",
            "width": None,
            "height": None,
            "pitch": None,
            "format": None,
            "channels": None,
        },
    ),
    "TextureOptions": (
        "cuabi_texture_desc",
        "texture",
        {
            "address_x": None,
            "address_y": None,
            "address_z": None,
            "filter": "filter",
            "read_mode": "read_mode",
            "normalized_coords": "normalized_coords",
            "border_r": None,
            "border_g": None,
            "border_b": None,
            "border_a": None,
        },
    ),
}

# Fields of an OPTIONS builder that one setter of it sets together
# (a group of the header, `/**@{*/`, sharing one comment): the builder and
# the setter's name -> the struct and its fields. The setter takes a value
# per field, named as the field without the group's common prefix
# (`Copy3d::src_offset(x_bytes, y, z)` sets `src_x_bytes`, `src_y`, `src_z`),
# or, where a name is given, one array of them all, named so
# (`TextureOptions::border_color(rgba: [f32; 4])`); it is documented by the
# group's comment. Generated in builders.rs.
GROUP_SETTERS: Dict[Tuple[str, str], Tuple[str, Tuple[str, ...], Optional[str]]] = {
    ("Copy3d<'_>", "src_offset"): ("cuabi_copy_3d_desc", ("src_x_bytes", "src_y", "src_z"), None),
    ("Copy3d<'_>", "dst_offset"): ("cuabi_copy_3d_desc", ("dst_x_bytes", "dst_y", "dst_z"), None),
    ("Copy3d<'_>", "src_layout"): ("cuabi_copy_3d_desc", ("src_pitch", "src_height"), None),
    ("Copy3d<'_>", "dst_layout"): ("cuabi_copy_3d_desc", ("dst_pitch", "dst_height"), None),
    ("Copy3d<'_>", "extent"): ("cuabi_copy_3d_desc", ("width_bytes", "height", "depth"), None),
    ("TextureOptions", "address_modes"): ("cuabi_texture_desc", ("address_x", "address_y", "address_z"), None),
    ("TextureOptions", "border_color"): (
        "cuabi_texture_desc",
        ("border_r", "border_g", "border_b", "border_a"),
        "rgba",
    ),
}

# Flag bits that a builder of the crate sets by a setter of their own: the
# bit -> (the builder, its module, the builder's field holding the flag
# set, the setter's name, whether the setter takes `on: bool` and sets or
# clears the bit (`LaunchConfig::cooperative(true)`) rather than only
# setting it (`CompileOptions::no_cache()`)). Generated in builders.rs, each
# documented by its bit's comment in the header.
FLAG_SETTERS: Dict[str, Tuple[str, str, str, str, bool]] = {
    "CUABI_LAUNCH_COOPERATIVE": ("LaunchConfig", "launch", "flags", "cooperative", True),
    "CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION": (
        "LaunchConfig",
        "launch",
        "flags",
        "programmatic_serialization",
        True,
    ),
    "CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START": (
        "LaunchConfig",
        "launch",
        "flags",
        "programmatic_event_at_block_start",
        True,
    ),
    "CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE": ("LaunchConfig", "launch", "flags", "device_updatable", True),
    "CUABI_LINK_LTO": ("LinkOptions", "link", "fields.flags", "lto", True),
    "CUABI_LINK_NO_CACHE": ("LinkOptions", "link", "fields.flags", "no_cache", False),
    "CUABI_COMPILE_NO_CACHE": ("CompileOptions", "program", "flags", "no_cache", False),
    "CUABI_MEMORY_POOL_IPC": ("MemoryPoolDesc", "values", "flags", "ipc", True),
}

# Constructors also made a method of the object they are made from, named
# here: `device.create_stream_with(flags, priority)` is
# `Stream::create(&device, flags, priority)`.
MADE_BY: Dict[str, str] = {
    "cuabi_stream_create": "create_stream_with",
    "cuabi_event_create": "create_event_with",
    "cuabi_module_load_data": "load_module",
    "cuabi_module_load_file": "load_module_file",
    "cuabi_memory_pool_import_fd": "import_memory_pool",
    "cuabi_event_open_ipc": "open_ipc_event",
}

# Outs the header gives as an `int32_t` that is never negative, a count or
# a device ordinal, which Rust answers as the `usize` it indexes with
# (`Device::count`, `DeviceBuffer::device_ordinal`).
USIZE_OUTS = {("cuabi_device_get_count", "count"), ("cuabi_buffer_get_device_ordinal", "ordinal")}

# Rust names other than the rule's: the raw CUDA handles say which they are.
RUST_NAMES: Dict[str, str] = {
    "cuabi_device_get_context": "cu_context",
    "cuabi_stream_get_handle": "cu_stream",
    "cuabi_array_get_handle": "cu_array",
    "cuabi_device_get_count": "count",
    "cuabi_buffer_get_ipc_handle": "ipc_handle",
    "cuabi_event_get_ipc_handle": "ipc_handle",
}

# Calls that add to their receiver and answer nothing, made to chain: the
# method takes `&mut self` and answers `Result<&mut Self>`
# (`linker.add_program(&a)?.add_file(LinkInput::Auto, "b.o")?`).
CHAINING = {"cuabi_linker_add_data", "cuabi_linker_add_file", "cuabi_linker_add_program"}

# What a string's error names when it holds a NUL byte, where the
# parameter's name alone would not say ("input name contains a NUL byte").
STRING_WHAT: Dict[Tuple[str, str], str] = {
    ("cuabi_linker_add_data", "name"): "input name",
    ("cuabi_module_get_global", "name"): "global name",
}

# Typed memory: the buffer and host-buffer calls take byte offsets and
# sizes, which the crate's DeviceBuffer<T> and PinnedBuffer<T> give in
# elements of T; their Rust forms, but for the getters, are written with the
# types.
TYPED_MEMORY = {"cuabi_buffer", "cuabi_host_buffer"}

# Calls over a range of a buffer (its offset, and `bytes`, a `count` of
# elements or a host byte range) that the crate's typed buffers make over
# elements of T: function -> (the owning type, the name of its two methods,
# the range's name in their error). The range is elements from element
# `offset`: `len` of them, `<name>_range(offset, len, ..)`, or a host slice
# of them, `<name>_at(offset, slice, ..)`, `&[T]` copied into the buffer or
# `&mut [T]` filled from it; bytes that overflow usize are refused as past
# the end (DeviceBuffer::range), the library checks the rest. A fill's
# `value` and `element_size` are one `T` (fill_value). A call that writes
# the buffer (a copy into it, a fill) takes `&mut self`. `<name>(..)` is the
# same over all of the buffer's elements, or from element 0. A nullable
# stream is an `Option<&Stream>`.
MANAGED = "ManagedBuffer<T>"
ELEMENT_RANGES: Dict[str, Tuple[str, str, str]] = {
    "cuabi_buffer_copy_from_host": ("DeviceBuffer<T>", "copy_from", "destination"),
    "cuabi_buffer_copy_to_host": ("DeviceBuffer<T>", "copy_to", "source"),
    "cuabi_buffer_fill": ("DeviceBuffer<T>", "fill", "fill"),
    "cuabi_buffer_prefetch_async": (MANAGED, "prefetch", "prefetch"),
    "cuabi_buffer_advise": (MANAGED, "advise", "advise"),
}

# Calls over a typed buffer (DeviceBuffer<T>) made over all of it: function
# -> (the method's name, the range's name in its error when a host slice is
# copied). Every offset is 0; `bytes` is all of the buffer's, or of the
# buffer `src` copied from; `count` the buffer's length; a fill's `value`
# and `element_size` one `T` (fill_value); a host byte range a slice of `T`
# (`&[T]` read, `&mut [T]` filled: DeviceBuffer::range refuses a length
# whose bytes overflow usize, the library the rest); another buffer a
# `&DeviceBuffer<T>`. A call that writes the receiver (a copy into it, a
# fill) takes `&mut self`. An *_async call takes its stream (`&Stream`,
# which the whole forms always name) and is `unsafe`: what it names must
# outlive the queued work (`DeviceBuffer::fill_async`, `copy_from_async`).
WHOLE_BUFFER: Dict[str, Tuple[str, str]] = {
    "cuabi_buffer_memset": ("fill_bytes", ""),
    "cuabi_buffer_memset_async": ("fill_bytes_async", ""),
    "cuabi_buffer_fill_async": ("fill_async", ""),
    "cuabi_buffer_copy": ("copy_from_buffer", ""),
    "cuabi_buffer_copy_async": ("copy_from_buffer_async", ""),
    "cuabi_buffer_copy_from_host_async": ("copy_from_async", "destination"),
    "cuabi_buffer_copy_to_host_async": ("copy_to_async", "source"),
}

# Library calls that cannot fail and answer a value, not a status: free
# functions answering it, a number as it is, a string the header calls
# static and never NULL a `&'static str` (`version`, `version_string`,
# `status_name`). A status given is the raw `sys::cuabi_status`.
ANSWERS = {"cuabi_version", "cuabi_version_string", "cuabi_status_get_name"}

# Library calls taking a built struct that are a method of the crate's type
# describing it (BUILT_TYPES), named here: `self` is laid out in the
# struct's place, and a nullable stream is an `Option<&Stream>`
# (`Copy3d::run`, `Copy3d::run_async`).
BUILT_CALLS: Dict[str, str] = {"cuabi_copy_3d": "run", "cuabi_copy_3d_async": "run_async"}

# Open enums the crate keeps as a newtype of its number, so that a value the
# library may learn later passes (the library decides which exist): enum ->
# (the newtype, its module, (the generated variants' prefix, the consts'
# in its place): `Cxx17` is `CppStd::Cpp17`). Each value but 0 ("none set") is an
# associated const of the newtype, and `ALL` lists them in the header's order
# (`CppStd::Cpp17`, `CppStd::ALL`); generated in builders.rs.
NEWTYPE_CONSTS: Dict[str, Tuple[str, str, Tuple[str, str]]] = {
    "cuabi_cxx_standard": ("CppStd", "program", ("Cxx", "Cpp")),
}

# Calls writing all of a typed buffer that a ManagedBuffer forwards to its
# DeviceBuffer (which it lends no `&mut` to, so that the buffer it views
# stays the same), by their whole-buffer forms (ELEMENT_RANGES,
# WHOLE_BUFFER): `ManagedBuffer::fill`, `fill_bytes`, `copy_from_buffer`.
MANAGED_WRITES = {"cuabi_buffer_fill", "cuabi_buffer_memset", "cuabi_buffer_copy"}

SCALARS = {
    "int8_t": "i8",
    "int16_t": "i16",
    "int32_t": "i32",
    "int64_t": "i64",
    "uint8_t": "u8",
    "uint16_t": "u16",
    "uint32_t": "u32",
    "uint64_t": "u64",
    "uintptr_t": "usize",
    "size_t": "usize",
    "float": "f32",
    "double": "f64",
}

# Rust keywords a C parameter name may collide with.
KEYWORDS = {"type", "fn", "ref", "mut", "move", "match", "loop", "use", "mod", "impl", "self", "box", "where"}


class Skip(Exception):
    """This layer writes no method for the function; the text says why."""


def method_doc(text: str) -> str:
    """Header prose as Markdown: its `quoted` names stay code, the rest as
    rust.py writes it."""
    spans = text.split("`")
    if len(spans) % 2 == 0:  # an unpaired backtick: no spans
        return doc_text(text)

    def plain(s: str) -> str:  # doc_text, keeping the spaces at either end
        lead, trail = s[: len(s) - len(s.lstrip())], s[len(s.rstrip()) :]
        return lead + doc_text(s) + trail if s.strip() else s

    return "".join(plain(s) if i % 2 == 0 else f"`{s}`" for i, s in enumerate(spans))


def is_fd(p: Dict[str, Any]) -> bool:
    """A file descriptor: an `int32_t` (given or answered) named `fd`."""
    return p["name"] == "fd" and p["type"]["base"] == "int32_t"


def ident(name: str) -> str:
    return f"r#{name}" if name in KEYWORDS else name


def rust_type_name(c_name: str) -> str:
    """The crate's type for a handle kind (generated or hand-written), bare."""
    if c_name in TYPES:
        return TYPES[c_name][0].split("<")[0]
    return camel(c_name[len("cuabi_") :])


def struct_type(st: Dict[str, Any]) -> str:
    """The Rust value type of a value struct: cuabi_access_policy_window is
    AccessPolicyWindow."""
    return camel(st["name"][len("cuabi_") :])


class Model:
    def __init__(self, model: Dict[str, Any]) -> None:
        self.model = model
        self.enums = {e["name"]: e for e in model["enums"]}
        self.flags = {f["name"]: f for f in model["flags"]}
        self.handles = {h["name"]: h for h in model["handles"]}
        self.structs = {st["name"]: st for st in model["structs"]}
        # The structs some call takes (its struct_in), not only answers.
        self.taken = {
            p.get("struct") for f in model["functions"] for p in f["params"] if p.get("role") == "struct_in"
        }
        self.uses: set = set()
        self.element_generic = False  # the method being written borrows typed memory
        # (parameter, lasting, describing type) of each built struct whose
        # memory the library goes on using after the call: the method is unsafe.
        self.unsafe_because: List[Tuple[str, str, str]] = []
        self.new_handle: Optional[str] = None  # see parts()
        self.unix = False  # the method takes or answers a file descriptor
        self.made_by: List[str] = []  # the methods of MADE_BY, of Device
        self.managed: List[str] = []  # the forwards of MANAGED_WRITES, of ManagedBuffer

    def types_of(self, c_name: str) -> Tuple[str, str, bool]:
        if c_name in TYPES:
            return TYPES[c_name]
        return (rust_type_name(c_name), "", True)

    def enum_type(self, base: str) -> Optional[str]:
        if base in self.enums and not self.enums[base]["is_flag_bits"]:
            return RENAMED.get(base) or camel(base[len("cuabi_") :])
        return None

    def flags_type(self, base: str) -> Optional[str]:
        if base in self.flags:
            return camel(base[len("cuabi_") : -len("_flags")]) + "Flags"
        return None

    def value_type(self, t: Dict[str, Any], fn: str, param: str) -> str:
        """The Rust type of a value of C type `t` (no pointer level)."""
        base = t["base"]
        if base in SCALARS:
            return SCALARS[base]
        for rust in (self.enum_type(base), self.flags_type(base)):
            if rust:
                self.uses.add(rust)
                return rust
        raise Skip(f"parameter `{param}` of type {t['c']} has no Rust value type")

    def value_struct(self, c_name: Optional[str]) -> Optional[Dict[str, Any]]:
        """The model's struct `c_name` when it is a value struct."""
        st = self.structs.get(c_name or "")
        return st if st is not None and st.get("value") else None

    def built_struct(self, c_name: str) -> bool:
        """Whether `c_name` is a built struct: versioned, naming cuabi objects
        or host memory."""
        st = self.structs.get(c_name)
        return bool(st and st.get("built"))

    def names_host_memory(self, c_name: str) -> bool:
        """Whether struct `c_name` has a pointer field that is no handle (host
        memory): what the library uses after a call must then outlive it,
        which the caller promises (the method is unsafe). The cuabi objects
        it names the library keeps alive itself."""
        return any(f["type"]["pointers"] for f in self.structs[c_name]["fields"])

    def borrowed(self, c_name: str) -> str:
        """`&T` for a borrowed handle of kind `c_name`."""
        rust, generics, _ = self.types_of(c_name)
        if generics.startswith("<T"):
            # Memory of any element type: the method is generic in it (E),
            # and the C call's offsets and sizes stay bytes.
            self.element_generic = True
            rust = rust.replace("<T>", "<E>")
        self.uses.add(rust.split("<")[0])
        return "&" + rust.replace("<'a>", "<'_>")


def method_name(fn: Dict[str, Any], model: Model) -> str:
    if fn["name"] in RUST_NAMES:
        return RUST_NAMES[fn["name"]]
    name, obj = fn["name"], fn.get("object")
    prefixes = []
    if obj:
        prefixes.append(f"cuabi_{obj}_")
    receiver = receiver_param(fn)
    if receiver is not None:
        prefixes.append(f"cuabi_{model.handles[receiver['type']['base']]['object']}_")
    prefixes.append("cuabi_")
    for prefix in prefixes:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    if fn["call"] in ("getter", "string", "blob"):
        if name.startswith("get_"):
            name = name[len("get_") :]
        elif fn["call"] != "getter" or receiver is None:
            name = name.replace("_get_", "_", 1)
    elif fn["call"] == "library":
        name = name.replace("_get_", "_", 1)
    return ident(name)


def receiver_param(fn: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    name = fn.get("receiver")
    for p in fn["params"]:
        if name is not None and p["name"] == name:
            return p
    return None


def statuses(fn: Dict[str, Any]) -> List[str]:
    return list(fn.get("statuses") or [])


class Parts(NamedTuple):
    """A function's Rust form before its body: where it goes and what it
    takes, and the C call over the converted arguments."""

    owner: str  # the impl block's key: the Rust type, or "" for a free function
    call: str  # the model's call kind
    args: List[str]  # the Rust parameters, `&self` left out
    prep: List[str]  # statements before the call, converting the parameters
    c_call: str  # the C call over the converted parameters
    # (local, Rust type, conversion of the raw value, whether the conversion is a Result)
    outs: List[Tuple[str, str, str, bool]]
    two_call: Optional[str]  # "string" or "blob" for the two-call pattern
    lifetimes: str  # the function's generic parameters, "" or "<...>"
    method: bool  # takes `&self`


def parts(fn: Dict[str, Any], model: Model) -> Parts:
    """The Rust form of `fn` up to its body, or Skip."""
    call = fn.get("call")
    if call is None:
        raise Skip("the model gives it no call kind")
    if fn["name"] in HAND_WRITTEN:
        raise Skip(HAND_WRITTEN[fn["name"]])
    ipc = fn.get("idiom") == "ipc"  # its bytes are an IpcHandle
    if fn.get("idiom") and not ipc:
        raise Skip(f"idiom `{fn['idiom']}`, written by hand")
    if call == "struct_init":
        filled = model.value_struct(fn["params"][0].get("struct"))
        if filled is not None:
            raise Skip(f"{struct_type(filled)}'s Default")
        raise Skip("the idiom that fills the struct")
    if call == "release":
        raise Skip("Drop")
    if fn["returns"]["base"] != "cuabi_status":
        raise Skip("answers no status")
    receiver = receiver_param(fn)
    model.element_generic = False
    model.unsafe_because = []
    model.unix = False
    # A method (not a constructor) answering one new handle of a type that
    # holds only its handle (cuabi_graph_add_empty_node): its Rust type.
    model.new_handle = None
    if call == "constructor":
        outs = [p for p in fn["params"] if p.get("role") == "out_handle"]
        if len(outs) != 1:
            raise Skip("a constructor with other than one new handle")
        rust, _, plain = model.types_of(outs[0]["handle_type"])
        if not plain:
            raise Skip(f"{rust.split('<')[0]} holds more than its handle; made by hand")
        owner = rust
    elif receiver is not None:
        owner = model.types_of(receiver["type"]["base"])[0]
        typed = receiver["type"]["base"] in TYPED_MEMORY and not ipc
        if fn["name"] in ELEMENT_RANGES:
            owner = ELEMENT_RANGES[fn["name"]][0]
        elif typed and call != "getter" and not fn.get("consumes"):
            raise Skip("typed memory: offsets and sizes are elements of T in Rust")
    elif fn.get("object") and f"cuabi_{fn['object']}" in model.handles:
        # No receiver but an object (cuabi_device_get_count): an associated function.
        owner = model.types_of(f"cuabi_{fn['object']}")[0]
    else:
        owner = ""

    args: List[str] = []  # the Rust parameters
    prep: List[str] = []  # statements before the call
    c_args: List[str] = []  # the C arguments
    # (local, Rust type, conversion of the raw value, whether the conversion is a Result)
    outs: List[Tuple[str, str, str, bool]] = []
    two_call: Optional[str] = None
    lifetimes = ""
    by_name = {p["name"]: p for p in fn["params"]}
    derived = set()  # counts, sizes and two-call sizes: given by a slice or the pattern
    for p in fn["params"]:
        role = p.get("role")
        if role in ("count", "size") and p.get("of") in by_name:
            derived.add(p["name"])
        if role == "two_call_size":
            derived.add(p["name"])
    for p in fn["params"]:
        role, name, t = p.get("role"), p["name"], p["type"]
        local = ident(name)
        if role is None:
            raise Skip(f"parameter `{name}` has no role")
        if role == "receiver" or (p is receiver):
            c_args.append("self.as_raw()" if call != "constructor" else f"{local}.as_raw()")
            if call == "constructor":
                args.append(f"{local}: {model.borrowed(t['base'])}")
            continue
        offsets = ("offset", f"{fn.get('receiver')}_offset")
        ranged = name in offsets + ("bytes", "count", "value", "element_size") or role in ("bytes_in", "bytes_out")
        if fn["name"] in ELEMENT_RANGES and ranged:
            # Elements of T: the byte range of elements `offset..offset + len`.
            which = ELEMENT_RANGES[fn["name"]][2]
            if name in offsets:
                args.append("offset: usize")
                c_args.append("offset")
            elif name == "bytes":
                if role == "in":
                    args.append("len: usize")
                    prep.append(f'let (offset, bytes) = self.range("{which}", offset, len)?;')
                c_args.append("bytes")
            elif name == "count":
                args.append("len: usize")
                prep.append(f'let (offset, _) = self.range("{which}", offset, len)?;')
                c_args.append("len")
            elif name == "value":
                # Its bytes and their size, as cuabi_buffer_fill takes them.
                args.append("value: T")
                prep.append("let (value, element_size) = fill_value(&value);")
                model.uses.add("fill_value")
                c_args.append("value")
            elif name == "element_size":
                c_args.append("element_size")
            elif role in ("bytes_in", "bytes_out"):
                mut = "mut " if role == "bytes_out" else ""
                args.append(f"{local}: &{mut}[T]")
                prep.append(f'let (offset, bytes) = self.range("{which}", offset, {local}.len())?;')
                c_args.append(f"{local}.as_{mut.strip() + '_' if mut else ''}ptr().cast()")
            continue
        if name in derived:
            of = p.get("of")
            if role == "two_call_size":
                c_args.append("size")
            else:
                c_args.append(f"{ident(of)}.len()")
            continue
        if role == "handle":
            ref = model.borrowed(p.get("handle_type") or t["base"])
            if p.get("nullable") and (fn["name"] in ELEMENT_RANGES or fn["name"] in BUILT_CALLS):
                args.append(f"{local}: Option<{ref}>")
                c_args.append(f"{local}.map_or(std::ptr::null_mut(), {ref[1:]}::as_raw)")
            elif p.get("nullable"):
                # `&t` and `None` both: Into<Option<&T>>.
                args.append(f"{local}: impl Into<Option<&'h {ref[1:]}>>")
                lifetimes = "<'h>"
                c_args.append(f"{local}.into().map_or(std::ptr::null_mut(), |h| h.as_raw())")
            else:
                args.append(f"{local}: {ref}")
                c_args.append(f"{local}.as_raw()")
        elif role == "in" and is_fd(p):
            # The caller's descriptor, lent for the call.
            model.unix = True
            args.append(f"{local}: impl std::os::fd::AsFd")
            prep.append(f"let {local} = std::os::fd::AsRawFd::as_raw_fd(&{local}.as_fd());")
            c_args.append(local)
        elif role == "in" and name == "location" and t["base"] == "int32_t" and not t["pointers"]:
            # A device ordinal or CUABI_LOCATION_HOST: the crate's Location.
            args.append(f"{local}: Location")
            prep.append(f"let {local} = {local}.raw()?;")
            c_args.append(local)
            model.uses.add("Location")
        elif role == "in":
            if t["pointers"]:
                raise Skip(f"parameter `{name}` is an in value behind a pointer")
            rust = model.value_type(t, fn["name"], name)
            args.append(f"{local}: {rust}")
            if model.enum_type(t["base"]):
                c_args.append(f"{local}.raw()")
            elif model.flags_type(t["base"]):
                c_args.append(f"{local}.bits()")
            else:
                c_args.append(local)
        elif role == "out" and is_fd(p):
            # A new descriptor, the caller's (a negative one is refused).
            model.unix = True
            prep.append(f"let mut {local} = 0;")
            conv = f'crate::error::owned_fd("{fn["name"]}", {local})'
            outs.append((local, "std::os::fd::OwnedFd", conv, True))
            c_args.append(f"&mut {local}")
        elif role == "out":
            if len(t["pointers"]) == 2 and t["base"] == "void":
                outs.append((local, "*mut std::ffi::c_void", "", False))
                prep.append(f"let mut {local} = std::ptr::null_mut();")
            elif p.get("flag"):
                prep.append(f"let mut {local} = 0;")
                outs.append((local, "bool", f"{local} != 0", False))
            elif (fn["name"], name) in USIZE_OUTS:
                prep.append(f"let mut {local} = 0;")
                outs.append((local, "usize", f"usize::try_from({local}).unwrap_or(0)", False))
            elif len(t["pointers"]) == 1:
                rust = model.value_type(t, fn["name"], name)
                enum = model.enum_type(t["base"])
                if enum and t["base"] in OPEN:
                    raise Skip(f"out `{name}` is an open enum")
                if enum and t["base"] != "cuabi_status":
                    # A value newer than this crate: the same error for every enum.
                    conv = f'{enum}::from_raw({local}).ok_or_else(|| unknown("{fn["name"]}", "{name}", {local}))'
                    model.uses.add("unknown")
                elif model.flags_type(t["base"]):
                    conv = f"{rust}::from_bits({local})"
                else:
                    conv = ""
                zero = "0.0" if rust in ("f32", "f64") else "0"
                prep.append(f"let mut {local} = {zero};")
                outs.append((local, rust, conv, "unknown(" in conv))
            else:
                raise Skip(f"out `{name}` of type {t['c']}")
            c_args.append(f"&mut {local}")
        elif role == "out_handle":
            if call != "constructor":
                rust_new, _, plain_new = model.types_of(p["handle_type"])
                if not plain_new or model.new_handle is not None:
                    raise Skip(f"a new handle from a {call}")
                model.new_handle = rust_new.split("<")[0]
            c_args.append("out")
        elif role == "string_in":
            nullable = p.get("nullable")
            what = STRING_WHAT.get((fn["name"], name), name)
            if (name == "path" or name.endswith("_path")) and nullable:
                # `Some(Path::new(..))` or `None` (an `impl AsRef` could not infer `None`).
                args.append(f"{local}: Option<&std::path::Path>")
                prep.append(f"let {local} = {local}.map(c_path).transpose()?;")
                model.uses.add("c_path")
                c_args.append(f"{local}.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())")
            elif name == "path" or name.endswith("_path"):
                args.append(f"{local}: impl AsRef<std::path::Path>")
                prep.append(f"let {local} = c_path({local}.as_ref())?;")
                model.uses.add("c_path")
                c_args.append(f"{local}.as_ptr()")
            elif nullable:
                args.append(f"{local}: Option<&str>")
                prep.append(f'let {local} = {local}.map(|s| c_string("{what}", s)).transpose()?;')
                c_args.append(f"{local}.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())")
                model.uses.add("c_string")
            else:
                args.append(f"{local}: &str")
                prep.append(f'let {local} = c_string("{what}", {local})?;')
                c_args.append(f"{local}.as_ptr()")
                model.uses.add("c_string")
        elif role == "array_in" and model.built_struct(t["base"]) and len(t["pointers"]) == 1:
            # An array of a built struct: whatever lays out its entries (a
            # batch), through its DescribesEach impl.
            args.append(f"{local}: &impl DescribesEach<sys::{t['base']}>")
            prep.append(f"let {local} = {local}.entries();")
            c_args.append(f"{local}.as_ptr()")
            model.uses.add("DescribesEach")
            if p.get("lasting") and model.names_host_memory(t["base"]):
                model.unsafe_because.append((name, p["lasting"], f"an array of `{t['base']}`"))
            if p.get("count") not in derived:
                raise Skip(f"array `{name}` without its count")
        elif role in ("array_in", "array_out"):
            if len(t["pointers"]) != 1 or t["base"] not in SCALARS:
                raise Skip(f"array `{name}` of {t['c']}")
            rust = SCALARS[t["base"]]
            if role == "array_in":
                args.append(f"{local}: &[{rust}]")
                c_args.append(f"{local}.as_ptr()")
            else:
                args.append(f"{local}: &mut [{rust}]")
                c_args.append(f"{local}.as_mut_ptr()")
            if p.get("count") not in derived:
                raise Skip(f"array `{name}` without its count")
        elif role in ("bytes_in", "bytes_out") and ipc:
            # An IPC handle: its bytes, and their size from them.
            if role == "bytes_in":
                args.append(f"{local}: &IpcHandle")
                prep.append(f"let {local} = {local}.as_bytes();")
                c_args.append(f"{local}.as_ptr().cast()")
            else:
                prep.append(f"let mut {local} = [0u8; IpcHandle::SIZE];")
                c_args.append(f"{local}.as_mut_ptr().cast()")
                outs.append((local, "IpcHandle", f"IpcHandle::from({local})", False))
            model.uses.add("IpcHandle")
        elif role in ("bytes_in", "bytes_out"):
            if p.get("size") not in derived:
                raise Skip(f"bytes `{name}` without their size")
            if p.get("nullable"):
                raise Skip(f"nullable bytes `{name}`")
            if role == "bytes_in":
                args.append(f"{local}: &[u8]")
                c_args.append(f"{local}.as_ptr().cast()")
            else:
                args.append(f"{local}: &mut [u8]")
                c_args.append(f"{local}.as_mut_ptr().cast()")
        elif role == "struct_in" and p.get("struct") in BUILT_TYPES and not p.get("nullable"):
            # A built struct: whatever describes one (the crate's Copy3d for
            # a cuabi_copy_3d_desc), laid out by its Describes impl.
            raw = f"sys::{p['struct']}"
            args.append(f"{local}: &impl Describes<{raw}>")
            prep.append(f"let {local} = {local}.describe()?;")
            c_args.append(f"&{local}")
            model.uses.add("Describes")
            if p.get("lasting") and model.names_host_memory(p["struct"]):
                model.unsafe_because.append((name, p["lasting"], f"a `{BUILT_TYPES[p['struct']][1]}`"))
        elif role in ("struct_in", "struct_out"):
            st = model.value_struct(p.get("struct"))
            if st is None:
                raise Skip(f"parameter `{name}` is {role}")
            rust, raw = struct_type(st), f"sys::{st['name']}"
            if role == "struct_in":
                # The C struct from the value: the init's defaults, then every field.
                if p.get("nullable"):
                    args.append(f"{local}: impl Into<Option<&'h {rust}>>")
                    lifetimes = "<'h>"
                    prep.append(f"let {local} = {local}.into().map(|value| {raw}::from(*value));")
                    c_args.append(f"{local}.as_ref().map_or(std::ptr::null(), |raw| raw as *const {raw})")
                else:
                    args.append(f"{local}: &{rust}")
                    prep.append(f"let {local} = {raw}::from(*{local});")
                    c_args.append(f"&{local}")
            else:
                # Filled by the call, from the init's struct (its size says what to write).
                prep.append(f"let mut {local} = {rust}::init_raw();")
                c_args.append(f"&mut {local}")
                outs.append((local, rust, f'{rust}::from_raw_of(&{local}, "{fn["name"]}")', True))
        elif role == "two_call_buf":
            if t["base"] not in ("char", "void") or len(t["pointers"]) != 1:
                raise Skip(f"a two-call list of {t['c']}")
            two_call = "string" if t["base"] == "char" else "blob"
            c_args.append("buf" if two_call == "string" else "buf.cast()")
        else:
            raise Skip(f"parameter `{name}` is {role}")

    c_call = f"sys::{fn['name']}({', '.join(c_args)})"
    if fn["name"] in ELEMENT_RANGES:  # the range leads: `offset`, then `len`
        args.sort(key=lambda a: {"offset: usize": 0, "len: usize": 1}.get(a, 2))
    takes_self = call != "constructor" and receiver is not None
    if model.element_generic:
        model.uses.add("DeviceRepr")
        lifetimes = "<" + ", ".join(g for g in (lifetimes[1:-1], "E: DeviceRepr") if g) + ">"
    return Parts(owner, call, args, prep, c_call, outs, two_call, lifetimes, takes_self)


# The type describing each built struct (the model's `built`), as the
# crate's hand-written modules declare it:
# `unsafe impl Describes<sys::cuabi_copy_3d_desc> for Copy3d<'_>`.
BUILT_TYPES = built_types(
    "bindings/rust/cuabi/src", (".rs",), r"unsafe impl Describes<sys::(?P<struct>cuabi_\w+)> for (?P<type>\w+)"
)

_HAND_SOURCES: Optional[Dict[str, str]] = None


def hand_written(owner: str, name: str) -> Optional[str]:
    """The file of the crate's hand-written sources (not the generated ones)
    with an `impl <owner>` block and a `pub fn <name>(`: such a method is
    the binding's own, and the generated layer does not write it again."""
    global _HAND_SOURCES
    if _HAND_SOURCES is None:
        src = os.path.join(os.path.dirname(__file__), "..", "..", "bindings", "rust", "cuabi", "src")
        _HAND_SOURCES = {}
        if os.path.isdir(src):
            for entry in sorted(os.listdir(src)):
                if entry.endswith(".rs") and entry not in ("objects.rs", "generated.rs", "values.rs"):
                    with open(os.path.join(src, entry), encoding="utf-8") as f:
                        _HAND_SOURCES[entry] = f.read()
    for entry, text in _HAND_SOURCES.items():
        if f"impl {owner} {{" in text and f"pub fn {name}(" in text:
            return entry
    return None


def method(fn: Dict[str, Any], model: Model) -> Tuple[str, str]:
    """(the impl block's key: the Rust type or "" for free functions, the
    method's text), or Skip."""
    owner, call, args, prep, c_call, outs, two_call, lifetimes, takes_self = parts(fn, model)
    if fn["name"] in BUILT_CALLS:
        # `self` describes the struct: its parameter leaves the arguments.
        built = [p for p in fn["params"] if p.get("role") == "struct_in" and p.get("struct") in BUILT_TYPES]
        if call != "library" or len(built) != 1:
            raise SystemExit(
                f"regen: rust_objects.py: BUILT_CALLS names {fn['name']}, no library call of one built struct"
            )
        local = ident(built[0]["name"])
        args = [a for a in args if not a.startswith(f"{local}: ")]
        laid_out = f"let {local} = {local}.describe()?;"
        prep = [f"let {local} = self.describe()?;" if line == laid_out else line for line in prep]
        model.unsafe_because = [("self", lasting, described) for _, lasting, described in model.unsafe_because]
        owner, takes_self = BUILT_TYPES[built[0]["struct"]][1] + "<'_>", True
    chains = fn["name"] in CHAINING
    rust_args = ", ".join(([("&mut self" if chains else "&self")] if takes_self else []) + args)
    name = BUILT_CALLS.get(fn["name"]) or method_name(fn, model)
    whole = ELEMENT_RANGES.get(fn["name"], ("", "", ""))[1]
    slice_arg = next((a for a in args if a.endswith("[T]")), None)
    if whole:
        name = f"{whole}_at" if slice_arg else f"{whole}_range"
        if (slice_arg and "&[T]" in slice_arg) or "value: T" in args:  # written
            rust_args = rust_args.replace("&self", "&mut self", 1)
    body: List[str] = list(prep)
    if chains:
        if outs or two_call or not takes_self or model.new_handle is not None:
            raise SystemExit(f"regen: rust_objects.py: {fn['name']} answers more than its status")
        model.uses.add("check")
        body.append(f"check(unsafe {{ {c_call} }})?;")
        body.append("Ok(self)")
        returns = f"&mut {owner}"
    elif call == "constructor":
        if outs or two_call:
            raise Skip("a constructor with more outs than its handle")
        model.uses.add("create")
        ret = owner.split("<")[0]
        body.append(f"let handle = unsafe {{ create(|out| {c_call})? }};")
        body.append(f"Ok({ret} {{ handle }})")
        returns = ret
    elif model.new_handle is not None:
        if outs or two_call:
            raise Skip("a new handle with more outs")
        written = hand_written(owner.split("<")[0], name)
        if written:
            raise Skip(f"a new handle from a {call}, written by hand in src/{written}")
        model.uses.add("create")
        ret = model.new_handle
        body.append(f"let handle = unsafe {{ create(|out| {c_call})? }};")
        body.append(f"Ok({ret} {{ handle }})")
        returns = ret
    elif two_call:
        if outs:
            raise Skip("a two-call read with more outs")
        if two_call == "string":
            model.uses.add("read_string")
            body.append(f"read_string(|buf, size| unsafe {{ {c_call} }})")
            returns = "String"
        else:
            model.uses.add("read_list")
            body.append(f"read_list(0u8, 0, |buf, size| unsafe {{ {c_call} }})")
            returns = "Vec<u8>"
    elif fn.get("consumes"):
        if outs or not takes_self:
            raise SystemExit(f"regen: rust_objects.py: {fn['name']} consumes its receiver but answers more")
        model.uses.update({"check", "Error"})
        body.append(f"match check(unsafe {{ {c_call} }}) {{")
        body.append("    // The library released the handle: `self` gives it up unreleased.")
        body.append("    Ok(()) => {")
        body.append("        let Self { handle, .. } = self;")
        body.append("        handle.into_raw();")
        body.append("        Ok(())")
        body.append("    }")
        body.append("    Err(err) => Err((self, err)),")
        body.append("}")
        returns = "(), (Self, Error)"
    elif not outs and "CUABI_ERROR_NOT_READY" in statuses(fn):
        model.uses.add("check_ready")
        body.append(f"check_ready(unsafe {{ {c_call} }})")
        returns = "bool"
    else:
        model.uses.add("check")
        if not outs:
            body.append(f"check(unsafe {{ {c_call} }})")
            returns = "()"
        else:
            body.append(f"check(unsafe {{ {c_call} }})?;")
            # A conversion that can fail (an enum) is a Result itself.
            values = [(conv + "?" if fallible else conv) or local for local, _, conv, fallible in outs]
            if len(outs) == 1:
                body.append(outs[0][2] if outs[0][3] else f"Ok({values[0]})")
                returns = outs[0][1]
            elif fn["name"] in COMPOSED:
                returns = COMPOSED[fn["name"]]
                model.uses.add(returns)
                names = [COMPOSED_FIELDS.get((fn["name"], o[0]), o[0]) for o in outs]
                fields = [v if v == n else f"{n}: {v}" for n, v in zip(names, values)]
                body.append(f"Ok({returns} {{ {', '.join(fields)} }})")
            else:
                body.append(f"Ok(({', '.join(values)}))")
                returns = "(" + ", ".join(o[1] for o in outs) + ")"
    text = fn.get("doc") or ""
    docs = doc(method_doc(text), "    ", raw=True) if text.strip() else ""
    if whole:
        what = f"`{slice_arg.split(':')[0]}.len()`" if slice_arg else "`len`"
        size = "`count` is `len`" if "value: T" in args else f"`bytes` is {what} of them"
        value = (
            " `value` is a `T` 1, 2 or 4 bytes wide (`u8`, `u16`, `i16`, `u32`, `f32`, `[u8; 4]`, ...), "
            "whose bytes are repeated as they are; other element sizes are refused by the library with "
            "[`ErrorKind::InvalidArgument`](crate::generated::ErrorKind::InvalidArgument) naming the "
            "element size. May return before the device is done, as "
            "[`fill_bytes`](Self::fill_bytes) does."
            if "value: T" in args
            else ""
        )
        docs += "    ///\n" + doc(
            f"Here `offset` counts elements of `T`, and {size}. A range past the end is refused with "
            f"[`ErrorKind::OutOfRange`](crate::generated::ErrorKind::OutOfRange).{value}",
            "    ",
            raw=True,
        )
    docs += ("    ///\n" if docs else "") + f"    /// Calls `{fn['name']}`.\n"
    if fn.get("consumes"):
        rust_args = rust_args.replace("&self", "self", 1)
        docs += "    ///\n" + doc(
            "Takes `self`: once the call succeeds the library has released the handle; refused, "
            "`self` comes back with the error, still owning its handle (dropping it releases it).",
            "    ",
            raw=True,
        )
    unsafe = ""
    if model.unsafe_because:
        unsafe = "unsafe "
        docs += "    ///\n    /// # Safety\n"
        for param, lasting, described in model.unsafe_because:
            until = (
                "while an executable graph made from it may run"
                if lasting == "receiver"
                else "until the stream has reached the work"
            )
            docs += doc(
                f"The memory `{param}` ({described}) names must stay alive, host memory "
                f"unchanged (read) or untouched (written), {until}: the library goes on using "
                "it after this returns. It keeps the cuabi objects alive itself.",
                "    ",
                raw=True,
            )
    result = f"std::result::Result<{returns}>" if fn.get("consumes") else f"Result<{returns}>"
    head = f"    pub {unsafe}fn {name}{lifetimes}({rust_args}) -> {result} {{\n"
    # The C function's parameters, one for one: as many as it has.
    allows = []
    if len(args) + takes_self > 7:  # clippy's limit: seven
        allows.append("clippy::too_many_arguments")
    if name in ("clone", "default", "from_str", "hash", "eq", "cmp", "next", "drop"):
        allows.append("clippy::should_implement_trait")
    if allows:
        head = f"    #[allow({', '.join(allows)})]\n" + head
    if model.unix:
        head = "    #[cfg(unix)]\n" + head
    if fn["name"] in MADE_BY:
        if call != "constructor" or not args[0].startswith(("device: &Device",)):
            raise SystemExit(f"regen: rust_objects.py: MADE_BY names {fn['name']}, no constructor from a device")
        ret = owner.split("<")[0]
        given = ", ".join(a.split(":")[0] for a in args[1:])
        model.made_by.append(
            f"    /// [`{ret}::{name}`] on this device.\n"
            + ("    #[cfg(unix)]\n" if model.unix else "")
            + f"    pub fn {MADE_BY[fn['name']]}{lifetimes}(&self, {', '.join(args[1:])}) -> Result<{ret}> {{\n"
            + f"        {ret}::{name}(self, {given})\n    }}\n"
        )
    text = docs + head + "".join(f"        {line}\n" for line in body) + "    }\n"
    if whole:
        # The same over all of the buffer's elements.
        rest = [a for a in args if not a.startswith(("offset:", "len:"))]
        given = ", ".join(["0"] + ([] if slice_arg else ["self.len()"]) + [a.split(":")[0] for a in rest])
        over = "from element 0" if slice_arg else "over all of the buffer's elements"
        receiver_arg = rust_args.split(",")[0]
        if receiver_arg == "&mut self":
            forward_to_managed(fn, whole, rest, model)
        text += (
            f"\n    /// As [`{name}`](Self::{name}), {over}.\n"
            f"    pub fn {whole}({', '.join([receiver_arg] + rest)}) -> Result<()> {{\n"
            f"        self.{name}({given})\n    }}\n"
        )
    return owner, text


def forward_to_managed(fn: Dict[str, Any], name: str, args: List[str], model: Model) -> None:
    """The forward of MANAGED_WRITES' `fn` (whose whole-buffer form is
    `name(&mut self, args)`) from ManagedBuffer to its buffer."""
    if fn["name"] not in MANAGED_WRITES:
        return
    given = ", ".join(a.split(":")[0] for a in args)
    model.managed.append(
        f"    /// As [`DeviceBuffer::{name}`].\n"
        f"    pub fn {name}({', '.join(['&mut self'] + args)}) -> Result<()> {{\n"
        f"        self.buffer.{name}({given})\n    }}\n"
    )


def whole_buffer(fn: Dict[str, Any], model: Model) -> str:
    """The method of WHOLE_BUFFER for `fn`, over all of a typed buffer."""
    name, which = WHOLE_BUFFER[fn["name"]]
    where = f"regen: rust_objects.py: WHOLE_BUFFER names {fn['name']}"
    receiver = receiver_param(fn)
    if receiver is None or receiver["type"]["base"] != "cuabi_buffer":
        raise SystemExit(f"{where}, which has no buffer receiver")
    by_name = {p["name"]: p for p in fn["params"]}
    args: List[str] = []
    prep: List[str] = []
    c_args: List[str] = []
    writes = receiver["name"] != "src"  # a copy from the buffer reads it; the rest write it
    stream = False
    for p in fn["params"]:
        role, pname = p.get("role"), p["name"]
        if p is receiver:
            c_args.append("self.as_raw()")
        elif pname.endswith("offset") and role == "in":
            c_args.append("0")
        elif pname == "value" and "element_size" in by_name:
            args.append("value: T")
            prep.append("let (value, element_size) = fill_value(&value);")
            model.uses.add("fill_value")
            c_args.append("value")
        elif pname == "element_size":
            c_args.append("element_size")
        elif pname == "count" and role == "in":
            c_args.append("self.len()")
        elif pname == "bytes" and role == "in":
            from_src = "src" in by_name and by_name["src"]["role"] == "handle"
            c_args.append("src.size_bytes()" if from_src else "self.size_bytes()")
        elif pname == "bytes" and role == "size":
            c_args.append("bytes")
        elif role in ("bytes_in", "bytes_out"):
            mut = "mut " if role == "bytes_out" else ""
            args.append(f"{pname}: &{mut}[T]")
            prep.append(f'let (_, bytes) = self.range("{which}", 0, {pname}.len())?;')
            c_args.append(f"{pname}.as_{mut.strip() + '_' if mut else ''}ptr().cast()")
        elif role == "handle" and p.get("handle_type", p["type"]["base"]) == "cuabi_buffer":
            args.append(f"{pname}: &DeviceBuffer<T>")
            c_args.append(f"{pname}.as_raw()")
        elif role == "handle" and p["type"]["base"] == "cuabi_stream":
            stream = True
            args.append(f"{pname}: &Stream")
            c_args.append(f"{pname}.as_raw()")
            model.uses.add("Stream")
        elif role == "in" and p["type"]["base"] in SCALARS and not p["type"]["pointers"]:
            args.append(f"{ident(pname)}: {SCALARS[p['type']['base']]}")
            c_args.append(ident(pname))
        else:
            raise SystemExit(f"{where}, whose parameter `{pname}` ({role}) has no whole-buffer form")
    model.uses.update({"check", "DeviceBuffer"})
    c_call = f"sys::{fn['name']}({', '.join(c_args)})"
    receiver_arg = "&mut self" if writes else "&self"
    docs = doc(method_doc(fn.get("doc") or ""), "    ", raw=True) + "    ///\n"
    over = (
        "the host slice's `len()` elements of `T`, from element 0 (a range past the end is refused "
        "with [`ErrorKind::OutOfRange`](crate::generated::ErrorKind::OutOfRange))"
        if which
        else "all of the buffer" + (" `src`" if "src" in by_name else "")
    )
    docs += doc(f"Here every offset is 0 and the range is {over}.", "    ", raw=True)
    docs += f"    ///\n    /// Calls `{fn['name']}`.\n"
    unsafe = ""
    if stream:
        unsafe = "unsafe "
        docs += "    ///\n    /// # Safety\n" + doc(
            "Every buffer and host slice the call names must stay alive, host memory unchanged "
            "(read) or untouched (written), until `stream` has reached the work: the library "
            "goes on using it after this returns.",
            "    ",
            raw=True,
        )
    if writes and not stream:
        forward_to_managed(fn, name, args, model)
    body = prep + ([f"check({c_call})"] if stream else [f"check(unsafe {{ {c_call} }})"])
    return (
        docs
        + f"    pub {unsafe}fn {name}({', '.join([receiver_arg] + args)}) -> Result<()> {{\n"
        + "".join(f"        {line}\n" for line in body)
        + "    }\n"
    )


def example_args(fn: Dict[str, Any]) -> List[str]:
    """Arguments that type-check for a doc example of `fn`'s scope: None for
    a nullable string, "" for a string, 0 for a number."""
    out = []
    for q in fn["params"]:
        if q["role"] == "string_in":
            out.append("None" if q.get("nullable") else '""')
        else:
            out.append("0")
    return out


def scope(fn: Dict[str, Any], closer: Dict[str, Any], model: Model) -> Tuple[str, str]:
    """The scope of `fn` (the model's `scope`: a name and the closing call,
    whose parameters are some of `fn`'s inputs): (a function named as the
    scope, taking `fn`'s parameters, that calls `fn` and answers a guard;
    the guard's type, named as the scope in CamelCase, which keeps owned
    copies of the closer's arguments and calls the closer when dropped,
    ignoring a failure, or sooner by `end`, reporting one)."""
    where = f"regen: rust_objects.py: the scope of {fn['name']}"
    try:
        p = parts(fn, model)
    except Skip as why:
        raise SystemExit(f"{where}: no Rust form of the opening call: {why}")
    if p.owner or p.method or p.call == "constructor" or p.outs or p.two_call:
        raise SystemExit(f"{where}: an opening call with a receiver, an object or a result")
    name, guard = ident(fn["scope"]["name"]), camel(fn["scope"]["name"])
    by = {q["name"]: q for q in fn["params"]}
    fields: List[str] = []  # the guard's fields: the kept arguments, converted
    inits: List[str] = []
    closing: List[str] = []  # the closer's arguments, from the fields
    for c in closer["params"]:
        q = by[c["name"]]  # kept as the opener takes it (what C++ does too)
        local = ident(q["name"])
        if local == "open":
            raise SystemExit(f"{where}: a kept parameter named `open`, the guard's own field")
        if q["role"] == "string_in" and q.get("nullable"):
            fields.append(f"{local}: Option<std::ffi::CString>")
            closing.append(f"self.{local}.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())")
        elif q["role"] == "string_in":
            fields.append(f"{local}: std::ffi::CString")
            closing.append(f"self.{local}.as_ptr()")
        elif q["role"] == "in":
            t = q["type"]
            fields.append(f"{local}: {model.value_type(t, fn['name'], q['name'])}")
            if model.enum_type(t["base"]):
                closing.append(f"self.{local}.raw()")
            elif model.flags_type(t["base"]):
                closing.append(f"self.{local}.bits()")
            else:
                closing.append(f"self.{local}")
        else:
            raise SystemExit(f"{where} keeps `{q['name']}`, a {q['role']}")
        inits.append(local)
    model.uses.add("check")
    opener, close = fn["name"], closer["name"]
    text = fn.get("doc") or ""
    docs = doc(method_doc(text), raw=True) + "///\n" if text.strip() else ""
    docs += doc(
        f"The scope of `{opener}`: calls it and answers a [`{guard}`], which calls `{close}` "
        f"when dropped (a failure then ignored) or sooner by [`{guard}::end`] (a failure "
        "reported).",
        raw=True,
    )
    per_thread = bool(fn["scope"].get("thread"))
    if per_thread:
        inits.append("_thread: std::marker::PhantomData")
    body = p.prep + [f"check(unsafe {{ {p.c_call} }})?;", f"Ok({guard} {{ {', '.join(inits + ['open: true'])} }})"]
    function = (
        docs
        + f"pub fn {name}{p.lifetimes}({', '.join(p.args)}) -> Result<{guard}> {{\n"
        + "".join(f"    {line}\n" for line in body)
        + "}\n"
    )
    kept = ", ".join(f"`{q['name']}`" for q in closer["params"])
    guard_doc = (
        f"An open scope of `{opener}`, made by [`{name}`]. Dropped, it calls `{close}` "
        + (f"with its own copies of {kept} " if kept else "")
        + "and ignores a failure, which a drop cannot report (the calling thread's last "
        f"error still holds it); [`{guard}::end`] closes it sooner and reports a failure. "
        "The closing call runs on the thread that drops the guard or calls `end`."
        + (
            " The scope belongs to the thread that opened it: the guard is neither `Send` nor "
            "`Sync`, so it cannot be closed from another thread."
            if per_thread
            else ""
        )
    )
    args = ", ".join(example_args(fn))
    examples = (
        "///\n/// This compiles, and the same guard sent to another thread does not:\n///\n"
        + f"/// ```no_run\n/// fn keep<T>(_: T) {{}}\n/// keep(cuabi::{name}({args}).unwrap());\n/// ```\n///\n"
        + f"/// ```compile_fail\n/// fn needs_send<T: Send>(_: T) {{}}\n"
        + f"/// needs_send(cuabi::{name}({args}).unwrap());\n/// ```\n"
        if per_thread
        else ""
    )
    close_call = f"sys::{close}({', '.join(closing)})"
    type_text = (
        doc(guard_doc, raw=True)
        + examples
        + f'#[must_use = "the scope closes when the guard is dropped: bind it to a name"]\n'
        + "#[derive(Debug)]\n"
        + f"pub struct {guard} {{\n"
        + "".join(f"    {f},\n" for f in fields)
        + ("    _thread: std::marker::PhantomData<*const ()>,\n" if per_thread else "")
        + "    open: bool,\n"
        + "}\n\n"
        + f"impl {guard} {{\n"
        + doc(f"Closes the scope now (`{close}`), reporting a failure, which a drop ignores.", "    ", raw=True)
        + "    pub fn end(mut self) -> Result<()> {\n"
        + "        self.open = false;\n"
        + "        self.close()\n"
        + "    }\n\n"
        + f"    /// Calls `{close}` with the kept arguments.\n"
        + "    fn close(&self) -> Result<()> {\n"
        + f"        check(unsafe {{ {close_call} }})\n"
        + "    }\n"
        + "}\n\n"
        + f"impl Drop for {guard} {{\n"
        + doc(f"Calls `{close}` unless [`{guard}::end`] did; a failure is ignored.", "    ", raw=True)
        + "    fn drop(&mut self) {\n"
        + "        if self.open {\n"
        + "            // A drop cannot report a failure: end() is the call that does.\n"
        + "            let _ = self.close();\n"
        + "        }\n"
        + "    }\n"
        + "}\n"
    )
    return function, type_text


def value_types(model: Model, definitions: bool = False) -> str:
    """A Rust value type for each value struct of the model: its fields but
    `struct_size`, `Default` from the struct's init, and the conversions to
    and from the C struct. With `definitions`, the types themselves (for
    values.rs, below the error module: the error of a sticky fault holds
    LaunchRecords), each without enum fields with `read`, the infallible
    reading of the C struct; else their impls (for objects.rs)."""
    out = []
    for st in model.model["structs"]:
        if not st.get("value"):
            continue
        name, init, rust = st["name"], st["init"], struct_type(st)
        fields = st["fields"][1:]
        decls, to_c, from_c, setters = [], [], [], []
        floats = enums = False
        for f in fields:
            field, t = ident(f["name"]), f["type"]
            try:
                ty = model.value_type(t, name, f["name"])
            except Skip as why:
                raise SystemExit(f"regen: rust_objects.py: value struct {name}: {why}")
            floats = floats or ty in ("f32", "f64")
            text = f"`{f['name']}` of `{name}`" + (f": {f['doc']}" if f["doc"].strip() else ".")
            decls.append(doc(method_doc(text), "    ", raw=True) + f"    pub {field}: {ty},\n")
            setters.append(
                "\n"
                + doc(method_doc(f"Sets {text[0].lower()}{text[1:]}"), "    ", raw=True)
                + f"    pub fn {field}(mut self, {field}: {ty}) -> {rust} {{\n"
                + f"        self.{field} = {field};\n        self\n    }}\n"
            )
            enum = model.enum_type(t["base"])
            if enum:
                enums = True
                if t["base"] in OPEN:
                    raise SystemExit(f"regen: rust_objects.py: {name}.{f['name']} is an open enum")
                to_c.append(f"raw.{field} = value.{field}.raw();")
                model.uses.add("unknown")
                from_c.append(
                    f"{field}: {enum}::from_raw(raw.{field})"
                    f'.ok_or_else(|| unknown(call, "{f["name"]}", raw.{field}))?,'
                )
            elif model.flags_type(t["base"]):
                to_c.append(f"raw.{field} = value.{field}.bits();")
                from_c.append(f"{field}: {ty}::from_bits(raw.{field}),")
            else:
                to_c.append(f"raw.{field} = value.{field};")
                from_c.append(f"{field}: raw.{field},")
        model.uses.update({"init_struct", "Error"})
        builder = ""
        if name in model.taken:
            builder = (
                f"\n    /// The library's defaults (`{init}`), as [`Default`] gives them; each setter\n"
                "    /// below sets its field.\n"
                f"    pub fn new() -> {rust} {{\n        {rust}::default()\n    }}\n" + "".join(setters)
            )
        derives = "Debug, Clone, Copy, PartialEq" + ("" if floats else ", Eq, Hash")
        text = st.get("doc") or f"A `{name}`."
        if definitions:
            read = ""
            if not enums:
                read = (
                    f"\nimpl {rust} {{\n"
                    f"    /// The fields of `raw`.\n"
                    f"    pub(crate) fn read(raw: &sys::{name}) -> {rust} {{\n"
                    f"        {rust} {{\n"
                    + "".join(f"            {line}\n" for line in from_c)
                    + "        }\n    }\n}\n"
                )
            out.append(
                doc(method_doc(text), raw=True)
                + "///\n"
                + doc(
                    f"A value: [`Default`] holds the library's defaults (`{init}`); `From` makes "
                    f"the C struct (the defaults, then every field) and `TryFrom` reads one.",
                    raw=True,
                )
                + f"#[derive({derives})]\n"
                + f"pub struct {rust} {{\n"
                + "".join(decls)
                + "}\n"
                + read
            )
            continue
        out.append(
            f"impl {rust} {{\n"
            + f"    /// The C struct as `{init}` fills it.\n"
            + f"    fn init_raw() -> sys::{name} {{\n"
            + "        // The init refuses only a NULL or a size it cannot read: neither here.\n"
            + '        init_struct().unwrap_or_else(|err| panic!("{err}"))\n'
            + "    }\n\n"
            + "    /// The fields of `raw`, which `call` answered (named in the error for an enum value\n"
            + "    /// this crate does not know).\n"
            + f"    fn from_raw_of(raw: &sys::{name}, {'call' if enums else '_call'}: &str) -> Result<{rust}> {{\n"
            + (
                f"        Ok({rust} {{\n" + "".join(f"            {line}\n" for line in from_c) + "        })\n"
                if enums
                else f"        Ok({rust}::read(raw))\n"
            )
            + "    }\n"
            + builder
            + "}\n\n"
            + f"impl Default for {rust} {{\n"
            + f"    /// The library's defaults: `{init}`.\n"
            + f"    fn default() -> {rust} {{\n"
            + f'        {rust}::from_raw_of(&{rust}::init_raw(), "{init}").unwrap_or_else(|err| panic!("{{err}}"))\n'
            + "    }\n"
            + "}\n\n"
            + f"impl From<{rust}> for sys::{name} {{\n"
            + f"    /// The library's defaults (`{init}`), then every field of `value`.\n"
            + f"    fn from(value: {rust}) -> sys::{name} {{\n"
            + f"        let mut raw = {rust}::init_raw();\n"
            + "".join(f"        {line}\n" for line in to_c)
            + "        raw\n"
            + "    }\n"
            + "}\n\n"
            + f"impl TryFrom<&sys::{name}> for {rust} {{\n"
            + "    type Error = Error;\n\n"
            + "    /// Every field of `raw`; an enum value this crate does not know is\n"
            + "    /// [`ErrorKind::NotSupported`](crate::ErrorKind::NotSupported).\n"
            + f"    fn try_from(raw: &sys::{name}) -> Result<{rust}> {{\n"
            + f'        {rust}::from_raw_of(raw, "{name}")\n'
            + "    }\n"
            + "}\n\n"
            + f"impl TryFrom<sys::{name}> for {rust} {{\n"
            + "    type Error = Error;\n\n"
            + "    /// As `TryFrom<&_>`.\n"
            + f"    fn try_from(raw: sys::{name}) -> Result<{rust}> {{\n"
            + f"        {rust}::try_from(&raw)\n"
            + "    }\n"
            + "}\n"
        )
    return "\n".join(out)


def new_types(model: Model) -> str:
    """A type for each handle kind the crate has none for: it owns its
    handle and releases it on drop."""
    out = []
    for h in model.model["handles"]:
        if h["name"] in TYPES:
            continue
        rust = rust_type_name(h["name"])
        text = h.get("doc") or f"A `{h['name']}`."
        out.append(
            doc(text)
            + "#[derive(Debug)]\n"
            + f"pub struct {rust} {{\n    pub(crate) handle: Owned<sys::{h['name']}>,\n}}\n\n"
            + f"impl {rust} {{\n    /// The raw handle, still owned by `self`.\n"
            + f"    pub fn as_raw(&self) -> sys::{h['name']} {{\n        self.handle.get()\n    }}\n}}\n"
        )
        model.uses.add("Owned")
    return "\n".join(out)


def answer(fn: Dict[str, Any]) -> str:
    """The free function of `fn`, which ANSWERS names."""
    args, c_args = [], []
    for p in fn["params"]:
        if p["type"]["c"] != "cuabi_status":
            raise SystemExit(f"regen: rust_objects.py: ANSWERS: {fn['name']} takes {p['type']['c']}")
        args.append(f"{ident(p['name'])}: sys::cuabi_status")
        c_args.append(ident(p["name"]))
    ret, text = fn["returns"], " ".join(fn["doc"].split())
    c_call = f"sys::{fn['name']}({', '.join(c_args)})"
    if ret["c"] == "const char*" and "static" in text.lower() and "never null" in text.lower():
        ty, why, value = "&'static str", "a static NUL-terminated string, never NULL", f"crate::error::static_str({c_call})"
    elif ret["base"] in SCALARS and not ret["pointers"]:
        ty, why, value = SCALARS[ret["base"]], "takes no pointer and cannot fail", c_call
    else:
        raise SystemExit(f"regen: rust_objects.py: ANSWERS: {fn['name']} answers {ret['c']}")
    return (
        doc(method_doc(text), raw=True)
        + f"///\n/// Calls `{fn['name']}`.\npub fn {fn['method']}({', '.join(args)}) -> {ty} {{\n"
        + f"    // SAFETY: {why} (the header's word).\n    unsafe {{ {value} }}\n}}\n"
    )


def objects(description: Dict[str, Any]) -> str:
    model = Model(description)
    for name in HAND_WRITTEN:
        if not any(f["name"] == name for f in description["functions"]):
            raise SystemExit(f"regen: rust_objects.py: HAND_WRITTEN names {name}, which the header does not declare")
    blocks: Dict[str, List[str]] = {}
    skipped: List[Tuple[str, str]] = []
    guards: List[str] = []
    by_name = {f["name"]: f for f in description["functions"]}
    for fn in description["functions"]:
        if fn["name"] in WHOLE_BUFFER:
            blocks.setdefault("DeviceBuffer<T>", []).append(whole_buffer(fn, model))
            continue
        if fn["name"] in BUILT_CALLS:
            skipped.append((fn["name"], "a method of the type describing its struct, in builders.rs"))
            continue
        if fn["name"] in ANSWERS:
            blocks.setdefault("", []).append(answer(fn))
            continue
        uses = set(model.uses)
        try:
            owner, text = method(fn, model)
        except Skip as why:
            model.uses = uses  # what a skipped function named is not imported
            skipped.append((fn["name"], str(why)))
        else:
            blocks.setdefault(owner, []).append(text)
        if fn.get("scope"):
            function, guard = scope(fn, by_name[fn["scope"]["closer"]], model)
            blocks.setdefault("", []).append(function)
            guards.append(guard)
    blocks.setdefault("Device", []).extend(model.made_by)
    if model.managed:
        blocks.setdefault(MANAGED, []).extend(model.managed)
    for c_name, (owner, _, _) in TYPES.items():
        blocks.setdefault(owner, []).insert(
            0,
            "    /// The raw handle, still owned by `self`.\n"
            f"    pub fn as_raw(&self) -> sys::{c_name} {{\n        self.handle.get()\n    }}\n",
        )
    types = "\n".join(t for t in (value_types(model), option_fields(model), new_types(model), *guards) if t)
    generics = {t[0]: t[1] for t in TYPES.values()}
    generics[MANAGED] = "<T: DeviceRepr>"
    parts = []
    for owner in sorted(blocks, key=lambda o: (o != "", o)):
        if owner == "":
            parts.append("\n".join(blocks[owner]))
            continue
        model.uses.add(owner.split("<")[0])
        parts.append(f"impl{generics.get(owner, '')} {owner} {{\n" + "\n".join(blocks[owner]) + "}\n")
    helpers = (
        "c_path",
        "c_string",
        "check",
        "check_ready",
        "create",
        "Error",
        "init_struct",
        "read_list",
        "read_string",
        "unknown",
    )
    error_uses = sorted(u for u in model.uses if u in helpers)
    handle_uses = sorted(u for u in model.uses if u == "Owned")
    type_uses = {u for u in model.uses if u not in error_uses + handle_uses and u[:1].isupper()}
    if any("<T: DeviceRepr>" in generics.get(o, "") for o in blocks) or "DeviceRepr" in model.uses:
        type_uses.add("DeviceRepr")
    type_uses -= {rust_type_name(h["name"]) for h in description["handles"] if h["name"] not in TYPES}
    # The layers below this one only: the owning types and the generated enums.
    owners = {t[0].split("<")[0] for t in TYPES.values()}
    owners |= {"DeviceRepr", "Describes", "DescribesEach", "IpcHandle", "Location"}
    owners |= {owner.split("<")[0] for owner, _, _ in ELEMENT_RANGES.values()}
    crate_uses = sorted(type_uses & owners) + sorted(u for u in model.uses if u == "fill_value")
    enum_uses = sorted(type_uses - owners - set(COMPOSED.values()))
    uses = ["use cuabi_sys as sys;\n"]
    if error_uses:
        uses.append(f"use crate::error::{{{', '.join(error_uses + ['Result'])}}};\n")
    else:
        uses.append("use crate::error::Result;\n")
    if handle_uses:
        uses.append(f"use crate::handle::{{{', '.join(handle_uses)}}};\n")
    if enum_uses:
        uses.append(f"use crate::generated::{{{', '.join(enum_uses)}}};\n")
    if crate_uses:
        uses.append(f"use crate::types::{{{', '.join(crate_uses)}}};\n")
    values = sorted(struct_type(st) for st in description["structs"] if st.get("value"))
    values += sorted(t for t in COMPOSED.values() if t in model.uses)
    if values:
        uses.append(f"use crate::values::{{{', '.join(values)}}};\n")
    listing = "".join(f"//! * `{name}`: {why}\n" for name, why in skipped)
    text = (
        banner("//")
        + "//! The plain object layer: a safe method for each function of the header\n"
        "//! whose roles say all there is to it (scripts/regen_api/rust_objects.py).\n"
        "//! The crate's other modules extend these types by hand.\n//!\n"
        "//! Functions written elsewhere in the crate, and why:\n//!\n"
        + listing
        + "\n"
        + "".join(uses)
        + "\n"
        + (types + "\n" if types else "")
        + "\n".join(parts)
    )
    return rustfmt(text)


def composed_types(model: Model) -> str:
    """values.rs: the type of each COMPOSED getter's answer, a field per
    out-parameter (COMPOSED_FIELDS naming those named otherwise)."""
    out = []
    for fn in model.model["functions"]:
        if fn["name"] not in COMPOSED:
            continue
        rust, outs = COMPOSED[fn["name"]], [p for p in fn["params"] if p["role"] == "out"]
        owner = rust_type_name(fn["params"][0]["type"]["base"])
        getter = f"{owner}::{method_name(fn, model)}"
        fields = []
        for p in outs:
            field = COMPOSED_FIELDS.get((fn["name"], p["name"]), p["name"])
            ty = model.value_type(p["type"], fn["name"], p["name"])
            fields.append(f"    /// `{p['name']}` of `{fn['name']}`.\n    pub {field}: {ty},\n")
        out.append(
            doc(f"What [`{getter}`](crate::{getter}) answers: " + method_doc(fn["doc"]), raw=True)
            + "#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]\n"
            + f"pub struct {rust} {{\n" + "".join(fields) + "}\n"
        )
    return "\n".join(out)


# Constants of the header the crate exports, under their Rust names and
# types: a size a Rust array is made of is a `usize` (bindgen makes each
# `#define` number a `u32`). In values.rs, documented by the header.
CONSTANTS: Dict[str, Tuple[str, str]] = {
    "CUABI_VERSION_NUMBER": ("HEADER_VERSION", "u32"),
    "CUABI_IPC_HANDLE_SIZE": ("IPC_HANDLE_SIZE", "usize"),
    "CUABI_TENSOR_MAP_BYTES": ("TENSOR_MAP_BYTES", "usize"),
}


def constants(description: Dict[str, Any]) -> str:
    """values.rs: the CONSTANTS, each with the header's comment."""
    found = {c["name"]: c for c in description["constants"]}
    out = []
    for c_name, (rust, ty) in CONSTANTS.items():
        if c_name not in found:
            raise SystemExit(f"regen: rust_objects.py: CONSTANTS names {c_name}, which the header does not define")
        value = f"sys::{c_name}" + ("" if ty == "u32" else f" as {ty}")
        text = " ".join(found[c_name]["doc"].split())
        out.append(doc(method_doc(f"`{c_name}`: {text}"), raw=True) + f"pub const {rust}: {ty} = {value};\n")
    return "\n".join(out)


def values(description: Dict[str, Any]) -> str:
    """values.rs: the value types of the value structs (their impls are in
    objects.rs)."""
    model = Model(description)
    types = value_types(model, definitions=True) + "\n" + composed_types(model) + "\n" + constants(description)
    enum_uses = sorted(u for u in model.uses if u[:1].isupper() and u not in ("Error",))
    uses = "use cuabi_sys as sys;\n"
    if enum_uses:
        uses += f"\nuse crate::generated::{{{', '.join(enum_uses)}}};\n"
    text = (
        banner("//")
        + "//! The value types of the header's value structs (scripts/regen_api/rust_objects.py):\n"
        "//! their fields, below the error module, whose sticky-fault errors hold\n"
        "//! [`LaunchRecord`]s. Their `Default`, builders and conversions are in\n"
        "//! `objects.rs`. Then the header's constants the crate exports (CONSTANTS).\n\n"
        + uses
        + "\n"
        + types
    )
    return rustfmt(text)


def option_struct_field(st: Dict[str, Any], name: str) -> Dict[str, Any]:
    """Field `name` of struct `st`, which OPTIONS names."""
    for f in st["fields"]:
        if f["name"] == name:
            return f
    raise SystemExit(f"regen: rust_objects.py: OPTIONS names {st['name']}.{name}, which the header does not declare")


def option_field(model: Model, st: Dict[str, Any], f: Dict[str, Any]) -> Tuple[str, str, str, str]:
    """(Rust type, C-struct-to-Rust expression of `raw.<field>`, Rust-to-C
    expression of `self.<field>`, doc) of field `f` of an OPTIONS struct: an
    integer documented "1: ..." is a bool, an enum or flag set its
    generated type, a number itself."""
    name, t, text = f["name"], f["type"], " ".join(f["doc"].split())
    base = t["base"]
    if t["pointers"] or base not in SCALARS and not (model.enum_type(base) or model.flags_type(base)):
        raise SystemExit(f"regen: rust_objects.py: OPTIONS field {st['name']}.{name} is no number, enum or flag set")
    if base in SCALARS and text.startswith("1: "):
        text = "`true`: " + text[3:].replace("; 0: ", "; `false`: ")
        return "bool", f"raw.{name} != 0", f"{SCALARS[base]}::from(self.{name})", text
    enum, flags = model.enum_type(base), model.flags_type(base)
    if enum:
        unknown = f'crate::error::unknown("{st["init"]}", "{name}", raw.{name})'
        read = f"crate::generated::{enum}::from_raw(raw.{name}).ok_or_else(|| {unknown})?"
        return f"crate::generated::{enum}", read, f"self.{name}.raw()", text
    if flags:
        return f"crate::generated::{flags}", f"crate::generated::{flags}::from_bits(raw.{name})", f"self.{name}.bits()", text
    return SCALARS[base], f"raw.{name}", f"self.{name}", text


def option_fields(model: Model) -> str:
    """objects.rs: the `<Builder>Fields` of each OPTIONS builder."""
    out = []
    for builder, (c_name, _, fields) in OPTIONS.items():
        st, owner = model.structs[c_name], builder.split("<")[0]
        rust = owner + "Fields"
        decls, reads, writes, floats = [], [], [], False
        for name in fields:
            ty, read, write, text = option_field(model, st, option_struct_field(st, name))
            floats = floats or ty == "f32"
            decls.append(doc(method_doc(f"`{name}`: {text}"), "    ", raw=True) + f"    pub(crate) {name}: {ty},\n")
            reads.append(f"                {name}: {read},\n")
            writes.append(f"        raw.{name} = {write};\n")
        derives = "Debug, Clone, Copy, PartialEq" + ("" if floats else ", Eq, Hash")
        out.append(
            f"/// The fields of `{c_name}` that [`{owner}`](crate::{owner}) sets through its generated\n"
            f"/// setters (builders.rs); [`Default`] holds the library's defaults (`{st['init']}`).\n"
            f"#[derive({derives})]\n"
            f"pub(crate) struct {rust} {{\n" + "".join(decls) + "}\n\n"
            f"impl {rust} {{\n"
            "    /// Writes the fields into `raw`, leaving its others alone.\n"
            f"    pub(crate) fn write(&self, raw: &mut sys::{c_name}) {{\n" + "".join(writes) + "    }\n}\n\n"
            f"impl Default for {rust} {{\n"
            f"    /// The library's defaults: `{st['init']}`.\n"
            f"    fn default() -> {rust} {{\n"
            f"        let read = || -> Result<{rust}> {{\n"
            f"            let raw: sys::{c_name} = crate::error::init_struct()?;\n"
            f"            Ok({rust} {{\n" + "".join(reads) + "            })\n"
            "        };\n"
            '        read().unwrap_or_else(|err| panic!("{err}"))\n'
            "    }\n}\n"
        )
    return "\n".join(out)


BUILDERS = os.path.join("bindings", "rust", "cuabi", "src", "builders.rs")


def flag_bit(model: Model, bit: str) -> Tuple[str, str, str]:
    """(the Rust flag set, its constant, the header's comment) of flag bit
    `bit`, which FLAG_SETTERS names."""
    for flags in model.flags.values():
        for v in model.enums[flags["bits"]]["values"]:
            if v["name"] == bit:
                rust = model.flags_type(flags["name"]) or ""
                prefix = "CUABI_" + flags["name"][len("cuabi_") : -len("_flags")].upper() + "_"
                return rust, bit[len(prefix) :], " ".join(v["doc"].split())
    raise SystemExit(f"regen: rust_objects.py: FLAG_SETTERS names {bit}, which no flag set of the header holds")


def builders(description: Dict[str, Any]) -> str:
    """builders.rs: the setters of the OPTIONS builders, each setting its
    field of the builder's `fields`, and those of FLAG_SETTERS, each setting
    or clearing its bit."""
    model = Model(description)
    uses, setters = [], {}  # setters: the builder -> its setters' texts
    for owner, (c_name, module, fields) in OPTIONS.items():
        st = model.structs[c_name]
        uses.append(f"use crate::{module}::{owner.split('<')[0]};\n")
        ret = "Self" if "<" in owner else owner
        for name, setter in fields.items():
            if setter is None:
                continue
            ty, _, _, text = option_field(model, st, option_struct_field(st, name))
            ty = ty.replace("crate::generated::", "")
            if ty[:1].isupper():
                uses.append(f"use crate::generated::{ty};\n")
            arg = "on" if ty == "bool" else setter
            setters.setdefault(owner, []).append(
                doc(method_doc(f"Sets `{name}` of `{c_name}`: {text}"), "    ", raw=True)
                + f"    pub fn {setter}(mut self, {arg}: {ty}) -> {ret} {{\n"
                + f"        self.fields.{name} = {arg};\n        self\n    }}\n"
            )
    for (owner, setter), (c_name, names, array) in GROUP_SETTERS.items():
        st = model.structs[c_name]
        if OPTIONS.get(owner, ("",))[0] != c_name or any(n not in OPTIONS[owner][2] for n in names):
            raise SystemExit(f"regen: rust_objects.py: GROUP_SETTERS {owner}::{setter}: no OPTIONS fields of {owner}")
        prefix = common_prefix(list(names)) if len(names) > 1 else "_"
        params, types = [n[len(prefix) :] if prefix != "_" else n for n in names], []
        for name in names:
            ty, _, _, text = option_field(model, st, option_struct_field(st, name))
            types.append(ty.replace("crate::generated::", ""))
            if types[-1][:1].isupper():
                uses.append(f"use crate::generated::{types[-1]};\n")
        fields = ", ".join(f"`{n}`" for n in names)
        text = text.replace("(0: see above)", f"(0: see `{c_name}`)")
        args = "".join(f", {p}: {t}" for p, t in zip(params, types))
        targets, values = f"({', '.join('f.' + n for n in names)})", f"({', '.join(params)})"
        if array:
            if len(set(types)) != 1:
                raise SystemExit(f"regen: rust_objects.py: GROUP_SETTERS {owner}::{setter}: fields of several types")
            args, targets, values = f", {array}: [{types[0]}; {len(names)}]", f"[{targets[1:-1]}]", array
        setters.setdefault(owner, []).append(
            doc(method_doc(f"Sets {fields} of `{c_name}`: {text}"), "    ", raw=True)
            + f"    pub fn {setter}(mut self{args}) -> Self {{\n        let f = &mut self.fields;\n"
            + f"        {targets} = {values};\n        self\n    }}\n"
        )
    for bit, (owner, module, field, setter, switch) in FLAG_SETTERS.items():
        rust, const, text = flag_bit(model, bit)
        uses += [f"use crate::{module}::{owner};\n", f"use crate::generated::{rust};\n"]
        if switch:
            what, arg = f"Sets `{bit}` when `on`, clears it when not", ", on: bool"
            body = f"self.{field} = self.{field}.with({rust}::{const}, on);"
        else:
            what, arg, body = f"Sets `{bit}`", "", f"self.{field} |= {rust}::{const};"
        setters.setdefault(owner, []).append(
            doc(method_doc(f"{what}: {text}"), "    ", raw=True)
            + f"    pub fn {setter}(mut self{arg}) -> {owner} {{\n        {body}\n        self\n    }}\n"
        )
    for fn in description["functions"]:
        if fn["name"] in BUILT_CALLS:
            model.uses = set()
            owner, text = method(fn, model)
            module = next(m for m, t in BUILT_TYPES.values() if f"{t}<" in owner)
            uses += [f"use crate::{module}::{owner.split('<')[0]};\n", "use cuabi_sys as sys;\n"]
            uses += [f"use crate::error::{u};\n" for u in sorted(model.uses | {"Result"}) if u in ("check", "Result")]
            uses += [f"use crate::types::{u};\n" for u in sorted(model.uses) if u in ("Describes", "Stream")]
            setters.setdefault(owner, []).append(text)
    consts = []
    for enum, (newtype, module, (variant_prefix, const_prefix)) in NEWTYPE_CONSTS.items():
        values = model.enums[enum]["values"]
        prefix = common_prefix([v["name"] for v in values])
        uses += [f"use crate::{module}::{newtype};\n", "use cuabi_sys as sys;\n"]
        names, lines = [], []
        for v in values:
            if v["value"] == 0:
                continue
            # The generated variant's name (`Cxx17`) with the newtype's prefix (`Cpp17`).
            variant = camel(v["name"][len(prefix) :])
            if not variant.startswith(variant_prefix):
                raise SystemExit(f"regen: rust_objects.py: NEWTYPE_CONSTS: {v['name']} is no {variant_prefix}*")
            names.append(const_prefix + variant[len(variant_prefix) :])
            lines.append(
                doc(value_doc(v), "    ", raw=True)
                + f"    pub const {names[-1]}: {newtype} = {newtype}(sys::{v['name']} as i32);\n"
            )
        listed = ", ".join(f"{newtype}::{n}" for n in names)
        lines.append(
            "    /// The values of this crate's header, in its order.\n"
            f"    pub const ALL: [{newtype}; {len(names)}] = [{listed}];\n"
        )
        consts.append(f"#[allow(non_upper_case_globals)]\nimpl {newtype} {{\n" + "\n".join(lines) + "}\n")
    blocks = [f"impl {owner} {{\n" + "\n".join(texts) + "}\n" for owner, texts in setters.items()] + consts
    text = (
        banner("//")
        + "//! The setters of the crate's builders of built structs, one per number, enum or\n"
        "//! flag field the builder sets as it is (scripts/regen_api/rust_objects.py, OPTIONS),\n"
        "//! and one per flag bit a builder sets or clears (FLAG_SETTERS), and the calls\n"
        "//! of a built struct made methods of the type describing it (BUILT_CALLS), and\n"
        "//! the values of open enums as consts of the crate's newtypes (NEWTYPE_CONSTS);\n"
        "//! the builders themselves, and their other methods, are the idiom modules'.\n\n"
        + "".join(sorted(set(uses)))
        + "\n"
        + "\n".join(blocks)
    )
    return rustfmt(text)


def outputs(description: Dict[str, Any]) -> Dict[str, str]:
    return {OBJECTS: objects(description), VALUES: values(description), BUILDERS: builders(description)}
