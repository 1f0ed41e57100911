"""The C# binding's generated object layer: bindings/csharp/src/Objects.g.cs.

For every function of the model with known roles and no `idiom` that has a
receiver, a member of a `partial` part of the binding's class for its object
(CLASSES below), over the SafeHandles of Interop/Handles.g.cs:

* the receiver is the object's own `Handle` (which throws
  ObjectDisposedException once the object is disposed);
* a borrowed handle is the binding's class for it (CLASSES), refused with
  ArgumentNullException naming the parameter when null, unless the model
  marks it nullable (a null stream is the default stream: HandleOf) or the
  library refuses the NULL itself (LIBRARY_NULLS);
* a NUL-terminated string is refused with ArgumentNullException naming the
  parameter when null, unless nullable;
* scalars are C# numbers (size_t is long, refused with
  ArgumentOutOfRangeException naming the parameter when negative), enums and
  flag sets the generated enums of Enums.g.cs, a NUL-terminated string a
  `string` (refused naming the parameter when it holds a NUL);
* out-parameters are the result: a getter `get_x` with one out value and no
  input is the read-only property `X`, otherwise a method returning the value,
  or C# out-parameters where there are several;
* a two-call string is a `string`, a two-call blob a `byte[]`; a flag
  out-parameter (the model's `flag`: 1 or 0) a `bool`, a value of AS_INT an `int`;
  the out-values of a getter of COMPOSED one value of the type made from them;
* a value struct (the model's `value`: versioned, an init, numbers, enums
  and flag sets alone) is a public struct of its own, generated here
  (cuabi_access_policy_window -> AccessPolicyWindow): one read-write
  property per field after struct_size, in .NET names and the types above
  (size_t a long, refused with ArgumentOutOfRangeException naming
  `<parameter>.<Field>` when negative), value equality, and the static
  `Default()`, which reads the fields from the struct's C init (the one
  source of defaults; `new T()` is all zeros). A `struct_in` parameter takes
  one: the native struct passed is the init's, then every field set over
  it (a nullable one whose NULL means the defaults is a `T?`, null passing
  the init's struct). A `struct_out` parameter is filled from the init's
  struct and returned as one, every field read back (an enum value the
  binding does not name stays the number, as the enum getters return it);
* a struct of HAND_STRUCTS (one that names objects, so no value struct:
  cuabi_launch_config) is the binding's hand-written type for it
  (LaunchConfig): the call gets its ToNative(), and its KeepAlive() runs
  after the call, so that what the struct names lives until then (a
  struct_out of one is filled from the init's struct and returned through
  its FromNative: kernel.SuggestConfig(n)); its
  fields, as properties, and those conversions are generated too
  (STRUCT_FIELDS), in a partial part of the type;
* a hand-written option class that carries a run of a struct's numbers and
  enums (TextureOptions, CompileOptions's switches: FIELD_CLASSES) gets one
  property per field and WriteTo(ref native) in a partial part of its own;
* a class that keeps a value read once, when made (a CudaArray's shape:
  KEPT_VALUES), reads it in its generated constructor and gets a read-only
  property per field of it;
* a call of a buffer on a byte range (WHOLE_RANGES) also gets members over
  the whole buffer: DeviceBuffer<T>'s over `count` elements of T from
  element `index` and over all its elements (PrefetchAsync, Advise), or
  DeviceMemory's over all its bytes (Memset(value));
* a hand-written member over a range of a host array or pinned buffer and
  of the buffer (WHOLE_FORMS) gets its member over all of them: the indexes
  0 and the count the array's or pinned buffer's length, else the buffer's
  Count (buffer.CopyFrom(values), buffer.CopyToAsync(pinned, stream),
  buffer.Fill(value));
* a constructor of a buffer whose sizes count elements of T (TYPED_BUFFERS)
  is a generic member of its receiver's class returning a DeviceBuffer<T>
  (device.AllocateManaged<float>(n), device.Allocate<float>(n) with the
  address from the same call) or a PinnedBuffer<T>
  (device.AllocatePinned<float>(n)), or a static member of DeviceBuffer<T>
  (DeviceBuffer<float>.OpenIpc(device, handle, pool));
* a second public form of a generated member (ALIASES) calls it: another
  name, the object made from as `this` (device.CreateStream(flags)),
  parameters renamed, reordered, defaulted or always passed
  (TensorMap.EncodeIm2col's short form), a property over a query
  (stream.IsComplete) or over out-values made one value (pool.Usage,
  module.GetGlobal(name));
* the value types of COMPOSED and of those aliases (COMPOSED_TYPES:
  ComputeCapability, MemoryPoolUsage, ModuleGlobal, BlockSizeSuggestion) are
  generated from the out-values;
* a blocking call of TASKS also gets a Task form on the thread pool
  (linker.LinkAsync());
* a getter and its setter of one 64-bit value (LONG_PROPERTIES) are one
  read-write long property (pool.ReleaseThreshold); a parameter of
  PARAM_NAMES is named otherwise (device.GetMemoryInfo(out free, out total)),
  a size of NOT_NEGATIVE refused with the binding's own message;
* a constructor taking a value struct of FIELD_PARAMS also takes its fields
  as parameters (device.CreateArray(format, channels, width));
* each class a kernel takes as an argument has its LaunchPlan.Set(index,
  object) (PLAN_SETTERS);
* a copy between two buffers of WHOLE_COPIES also copies all of another
  DeviceBuffer<T> to the start of one (buffer.CopyFrom(source));
* a stream's call on an array of structs naming objects or host memory
  (BATCHES) takes the class describing each element (BATCH_TYPES:
  IDescribesEach, stream.CopyBatch(batch)), or a list of a built struct's
  class (stream.Copy3DBatch(copies));
* a library call of a built struct of BUILT_CALLS is a member of the class
  describing it (copy.Copy(), copy.CopyAsync(stream));
* a pinned host buffer argument (PinnedBuffer<T>, a generic class) makes the
  method generic in T (`where T : struct`); offsets stay in bytes;
* a query that answers CUABI_ERROR_NOT_READY without failing returns bool;
* a call on a kernel's packed argument block (the model's idiom `launch`
  with the kernel a borrowed handle, packed_kernel: graph.AddKernelNode)
  takes the arguments as a trailing `params object[]`, packed at the
  kernel's parameter offsets and checked as a launch checks them
  (KernelNodes.WithPacked, GraphNodes.cs);
* a host-callback call (the model's idiom `host_callback`, HOST_TRAMPOLINES)
  takes an `Action` (`stream.LaunchHostFunc(callback)`,
  `graph.AddHostNode(after, callback)`), handed over with its trampoline;
* an IPC call (the model's idiom `ipc`, ipc_shape) exports the object's
  handle bytes as a `byte[]` (`GetIpcHandle()`) or, as a constructor, opens
  the object from them (`CudaEvent.OpenIpc(device, handle)`), through the
  binding's Ipc helpers (DeviceBuffer.cs);
* a library-level call is a static member of the static class Cuda (or, when
  its name names an object, of that object's class: Device.Count), which
  loads the library first and keeps the native call in a separate,
  non-inlined method (Mono binds a method's native calls when it compiles it);
* a getter whose property would be `Handle` (the raw driver handle) is
  `NativeHandle`: `Handle` is the SafeHandle;
* a getter of CACHED (a value fixed while the handle lives) asks the library
  on its first read only and keeps the value;
* a constructor is a static factory of the class it makes, taking the object
  it is made from first (FACTORIES: the classes made from their handle alone);
  another call that makes a handle of such a class returns its object;
* a call the model says consumes its receiver (it releases the handle itself)
  closes the object's SafeHandle without a release once it succeeded, so
  that neither Dispose() nor the finalizer releases the handle again (the
  object is disposed);
* a failing status throws through Errors.Check, the core's message unchanged.

A scope (the model's `scope` of an opening call, the header's `@scope <name>
<closer>`) is a sealed IDisposable class of its own, named in PascalCase
(nvtx_range -> NvtxRange), for `using (new NvtxRange(null, "step", 0)) {...}`:
its constructor takes the opening call's arguments as the opener's generated
member does (a method's object first, refused when null) and calls that
member, keeping the arguments the closing call takes; Close() calls the
closing call's generated member once and throws its failure; Dispose() calls
it once unless Close() did, and never throws: a CudaException of the closing
call (or an ObjectDisposedException of a kept object) is ignored, because
Dispose runs while a using block is left, where an exception would replace
the one already leaving it. After the first Close or Dispose both do nothing.
No finalizer (a scope never disposed stays open). Both calls must have a
generated member here; otherwise regen stops naming the call.

Every class of CLASSES also gets its handle plumbing here: the field `handle`
(its SafeHandle), the property `Handle` (ObjectDisposedException once
disposed), Dispose() (the release function, through the SafeHandle, with
that function's documentation; IDisposable), and for a class made from its
handle alone (FACTORIES) the constructor `internal X(SafeXHandle handle)`,
each unless CORE_BY_HAND leaves it to the class (a class of KEPT_VALUES
also reads its kept value there, and gets a property per field of it), and
the static HandleOf(x): x's handle, or for null the SafeHandle class's
shared NULL handle (Handles.g.cs: Null), which a nullable handle parameter
passes (a null stream is the default stream, a null pool the default pool); a
class a kernel takes as an argument (ARGUMENT_OBJECTS) also gets its
IArgumentObject part (the value a launch passes, its SafeHandle as the
lifetime launch plans check, and what it is, for messages).

A hand-written type that holds a flag set (FLAG_PROPERTIES: LaunchConfig,
MemoryPoolOptions) gets, in a partial part of its own, one bool property
per bit of the set, named and documented as the bit (LaunchConfig.Cooperative),
reading it and setting or clearing it alone.

Names: the function's name without `cuabi_<object>_`, in PascalCase.

What this layer does not write stays hand-written in the binding's classes:
functions with an `idiom`, the Dispose() of CORE_BY_HAND, constructors of classes
that hold more than their handle (a device's ordinal, a buffer's element type), library
calls (the static class Cuda binds its native calls only after
CuabiLibrary.Load), the roles with no plain C# form here (versioned structs
that are no value structs, callbacks, arrays, host byte ranges, in-out
values), and the functions listed
in HAND_WRITTEN, each with the reason its C# form differs. The generated file
lists them, so that a reader sees where each function went (a function
in HAND_WRITTEN is listed with its reason there, also one with an idiom),
and then the scope classes.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Dict, List, Optional, Tuple

from common import banner, built_types
from csharp import Types, doc, enum_name, handle_class, ident, pascal, stem, struct_name, value_names, xml

OUT = "bindings/csharp/src/Objects.g.cs"

# The binding's class for each handle type, and its C# declaration (a generic
# class is extended with its type parameters and constraint).
CLASSES: Dict[str, Tuple[str, str]] = {
    "cuabi_device": ("Device", "public sealed partial class Device"),
    "cuabi_program": ("Program", "public sealed partial class Program"),
    "cuabi_module": ("CudaModule", "public sealed partial class CudaModule"),
    "cuabi_function": ("Kernel", "public sealed partial class Kernel"),
    "cuabi_buffer": ("DeviceMemory", "public abstract partial class DeviceMemory"),
    "cuabi_host_buffer": (
        "PinnedBuffer",
        "public sealed partial class PinnedBuffer<T> where T : struct",
    ),
    "cuabi_stream": ("CudaStream", "public sealed partial class CudaStream"),
    "cuabi_event": ("CudaEvent", "public sealed partial class CudaEvent"),
    "cuabi_graph": ("CudaGraph", "public sealed partial class CudaGraph"),
    "cuabi_graph_exec": ("CudaGraphExec", "public sealed partial class CudaGraphExec"),
    "cuabi_launch_plan": ("LaunchPlan", "public sealed partial class LaunchPlan"),
    "cuabi_memory_pool": ("MemoryPool", "public sealed partial class MemoryPool"),
    "cuabi_array": ("CudaArray", "public sealed partial class CudaArray"),
    "cuabi_texture": ("Texture", "public sealed partial class Texture"),
    "cuabi_surface": ("Surface", "public sealed partial class Surface"),
    "cuabi_linker": ("Linker", "public sealed partial class Linker"),
    "cuabi_library": ("CudaLibrary", "public sealed partial class CudaLibrary"),
    "cuabi_sm_resource": ("SmResource", "public sealed partial class SmResource"),
    "cuabi_green_context": ("GreenContext", "public sealed partial class GreenContext"),
    "cuabi_tensor_map": ("TensorMap", "public sealed partial class TensorMap"),
    "cuabi_graph_node": ("GraphNode", "public sealed partial class GraphNode"),
    "cuabi_physical_memory": ("PhysicalMemory", "public sealed partial class PhysicalMemory"),
    "cuabi_address_range": ("AddressRange", "public sealed partial class AddressRange"),
}

# The classes a constructor's static factory makes from the new handle alone
# (a CudaArray reads its shape from it, a Device its ordinal; the others hold
# more than their handle: a buffer its element type, a surface its array).
FACTORIES: Dict[str, str] = {
    "cuabi_device": "new Device({})",
    "cuabi_stream": "new CudaStream({})",
    "cuabi_event": "new CudaEvent({})",
    "cuabi_memory_pool": "new MemoryPool({})",
    "cuabi_module": "new CudaModule({})",
    "cuabi_library": "new CudaLibrary({})",
    "cuabi_function": "new Kernel({})",
    "cuabi_graph": "new CudaGraph({})",
    "cuabi_graph_exec": "new CudaGraphExec({})",
    "cuabi_array": "new CudaArray({})",
    "cuabi_sm_resource": "new SmResource({})",
    "cuabi_green_context": "new GreenContext({})",
    "cuabi_tensor_map": "new TensorMap({})",
    "cuabi_graph_node": "new GraphNode({})",
    "cuabi_physical_memory": "new PhysicalMemory({})",
    "cuabi_address_range": "new AddressRange({})",
    "cuabi_surface": "new Surface({}, array)",  # and the array it keeps
}

# Each class's handle plumbing is generated too: the field `handle` (its
# SafeHandle), the property `Handle` (ObjectDisposedException once disposed)
# and Dispose(), the release call through the SafeHandle (the release
# function's documentation), except the parts a class writes by hand:
CORE_BY_HAND: Dict[str, Dict[str, str]] = {
    "cuabi_function": {
        "Handle": "Kernel.Handle checks the kernel's own disposed flag, which its launch plans also read",
        "Dispose": "Kernel.Dispose() also drops the launch plans it prepared for itself",
    },
    "cuabi_launch_plan": {"Dispose": "LaunchPlan.Dispose() also forgets the argument block and its arguments"},
}

# The classes a kernel takes as an argument (IArgumentObject, Arrays.cs): the
# 8-byte value a launch passes (a member of the class) and what the object is,
# for messages. Their IArgumentObject part is generated with the handle
# plumbing: LaunchValue, Lifetime (the SafeHandle, closed once disposed) and
# What.
ARGUMENT_OBJECTS: Dict[str, Tuple[str, str]] = {
    "cuabi_buffer": ("LaunchPointer", "device memory"),
    "cuabi_texture": ("NativeHandle", "texture object"),
    "cuabi_surface": ("NativeHandle", "surface object"),
}

# A launch plan's setter of each class of ARGUMENT_OBJECTS, generated in a
# partial part of LaunchPlan: plan.Set(index, texture) writes the object's
# 8-byte value as argument `index`, in place, and the plan references the
# object from then on (LaunchPlan.SetObject: refused when null, naming the
# parameter, with what the message adds here, and when the parameter is no
# 8-byte one). The C type a kernel parameter of it has (in the documentation)
# and what a null's message adds. Device memory also gets the overload of
# DeviceBuffer<T> (which Set<T>(index, T value) of numbers would not take).
PLAN_SETTERS: Dict[str, Tuple[str, str]] = {
    "cuabi_buffer": ("a pointer", "; set IntPtr.Zero for a NULL pointer parameter"),
    "cuabi_texture": ("a <c>cudaTextureObject_t</c>", ""),
    "cuabi_surface": ("a <c>cudaSurfaceObject_t</c>", ""),
}


def plan_setters() -> str:
    """The partial part of LaunchPlan with the setters of PLAN_SETTERS (see there)."""
    i2, i3 = "        ", "            "
    members = []
    for handle, (ctype, hint) in PLAN_SETTERS.items():
        cls, what = CLASSES[handle][0], ARGUMENT_OBJECTS[handle][1]
        arg = stem(handle)
        hint_arg = f', "{hint}"' if hint else ""
        members.append(
            f"{i2}/// <summary>\n"
            f'{i2}/// Sets argument <paramref name="index"/> ({ctype} parameter) to the 8-byte value of\n'
            f"{i2}/// the {what} <paramref name=\"{arg}\"/>, in place. The plan references it from then on.\n"
            f"{i2}/// </summary>\n"
            f'{i2}/// <param name="index">The parameter\'s position in the kernel\'s signature, from 0.</param>\n'
            f'{i2}/// <param name="{arg}">The {what}.</param>\n'
            f'{i2}/// <exception cref="ArgumentNullException"><paramref name="{arg}"/> is null.</exception>\n'
            f'{i2}/// <exception cref="ArgumentException">The parameter is not 8 bytes; the message names it.</exception>\n'
            f'{i2}/// <exception cref="ObjectDisposedException">The plan or the {what} was disposed.</exception>\n'
            f"{i2}public void Set(int index, {cls} {arg})\n{i2}{{\n"
            f'{i3}SetObject(index, {arg}, "{arg}"{hint_arg});\n{i2}}}\n'
        )
        if handle == "cuabi_buffer":  # a typed buffer, which the overload of values would otherwise be tried for
            members.append(
                f"{i2}/// <summary>As <see cref=\"Set(int, {cls})\"/>, for a buffer of elements of T.</summary>\n"
                f'{i2}/// <typeparam name="T">The buffer\'s element type.</typeparam>\n'
                f'{i2}/// <param name="index">The parameter\'s position in the kernel\'s signature, from 0.</param>\n'
                f'{i2}/// <param name="{arg}">The buffer.</param>\n'
                f"{i2}public void Set<T>(int index, DeviceBuffer<T> {arg}) where T : struct\n{i2}{{\n"
                f"{i3}Set(index, ({cls}){arg});\n{i2}}}\n"
            )
    return "    public sealed partial class LaunchPlan\n    {\n" + "\n".join(members) + "    }\n"


# The classes made from their handle alone (FACTORIES) get the constructor
# `internal X(SafeXHandle handle)` that keeps it. These also keep a value
# read once, when made (an array's shape, a device's ordinal never change):
# handle type -> (the getter, of a value struct's struct_out or one scalar
# out value, the fields given as another C# type). The constructor reads it
# into the field `kept` (disposing the handle when that fails); a struct's
# fields are each a read-only property of the class, in the header's order
# (a field of the last item cast to its type), a scalar is the getter's
# property (which HAND_WRITTEN then names).
KEPT_VALUES: Dict[str, Tuple[str, Dict[str, str]]] = {
    "cuabi_array": ("cuabi_array_get_desc", {"channels": "int"}),
    "cuabi_device": ("cuabi_device_get_ordinal", {}),
}

# The hand-written C# types of header structs that are no value structs (they
# name objects: a launch configuration's events), C struct -> C# type: a
# struct_in parameter of one takes the type, passes the struct its
# ToNative() gives, and keeps what that names alive through its KeepAlive()
# until the call returned (Kernel.GetMaxClusterSize(config)).
HAND_STRUCTS: Dict[str, str] = {"cuabi_launch_config": "LaunchConfig"}

# The fields of a struct of HAND_STRUCTS, written here in a partial part of
# its type (the hand-written part keeps its constructors, ToString and what
# reads several fields at once): one read-write property per field after
# struct_size in the header's order, an x/y/z group of uint32_t fields
# (grid_x, grid_y, grid_z) one Dim3 property (Grid), a handle the binding's
# class for it (null: NULL), named as value structs name theirs unless
# `names` says otherwise; and ToNative() (the init's struct with every field
# set over it, a handle as its raw value), KeepAlive() (the handles, after
# the call that took the struct), FromNative() (every field but the handles
# and the held ones) and SameAs() (the same values, the same objects). The
# fields from `held` on live in a holder class of the given name, null while
# none is set, so that a configuration using none of them stays small (a
# setter copies the holder first, keeping the struct's value semantics):
# each is a nullable property (null: not set, the init's value goes to the
# library) unless `plain` lists it (then its zero is the init's value too);
# `types` gives a field the enum its documentation names; IsExtended says
# whether any field from `extended` on is set (not zero, not null).
STRUCT_FIELDS: Dict[str, Dict[str, Any]] = {
    "cuabi_launch_config": {
        "names": {"shared_mem_bytes": "SharedMemoryBytes", "cluster_scheduling_policy": "ClusterScheduling"},
        "held": ("access_policy_window", "LaunchAttributes"),
        "plain": {"cluster_scheduling_policy"},
        "types": {"mem_sync_domain": "cuabi_mem_sync_domain"},
        "extended": "flags",
    },
}


# What the documentation of an object a STRUCT_FIELDS value names adds.
HELD_OBJECT = "\nThe value references the object (null: none): keep it undisposed while calls use it."


def struct_fields(model: Dict[str, Any], types: Types) -> List[str]:
    """The partial parts of STRUCT_FIELDS (see there), and their holder classes."""
    i1, i2, i3, i4 = "    ", "        ", "            ", "                "
    structs = {s["name"]: s for s in model["structs"]}
    parts = []
    for name, spec in STRUCT_FIELDS.items():
        cls, native = HAND_STRUCTS[name], struct_name(name)
        fields = structs[name]["fields"][1:]  # after struct_size
        items: List[Tuple[str, str, str, List[Dict[str, Any]]]] = []  # (property, C# type, kind, fields)
        i = 0
        while i < len(fields):
            f = fields[i]
            group = [g["name"] for g in fields[i : i + 3]]
            stem_ = f["name"][:-2]
            if f["name"].endswith("_x") and group == [stem_ + "_x", stem_ + "_y", stem_ + "_z"]:
                items.append((pascal(stem_.split("_")), "Dim3", "dim3", fields[i : i + 3]))
                i += 3
                continue
            prop = spec["names"].get(f["name"], pascal(f["name"].split("_")))
            t = f["type"]
            if f["name"] in spec["types"]:
                items.append((prop, types.enums[spec["types"][f["name"]]], "retyped", [f]))
            elif t["kind"] == "handle":
                items.append((prop, CLASSES[t["base"]][0], "handle", [f]))
            elif t["kind"] == "struct":
                items.append((prop, value_class(t["base"]), "value", [f]))
            elif t["kind"] == "flags":
                items.append((prop, types.value(t), "flags", [f]))
            else:
                items.append((prop, types.value(t), "plain", [f]))
            i += 1
        first_held, holder = spec["held"]
        at = next(k for k, it in enumerate(items) if it[3][0]["name"] == first_held)
        own, held = items[:at], items[at:]

        def nullable(it: Tuple[str, str, str, List[Dict[str, Any]]]) -> bool:
            return it[2] != "handle" and it[3][0]["name"] not in spec["plain"]

        def held_type(it: Tuple[str, str, str, List[Dict[str, Any]]]) -> str:
            return it[1] + ("?" if nullable(it) else "")

        lines = [f"{i1}public partial struct {cls}", f"{i1}{{"]
        for prop, ctype, kind, fs in own:
            if kind == "flags":  # the field FLAG_PROPERTIES's bool properties read and write
                lines += [f"{i2}private {ctype} {ident(fs[0]['name'])};", ""]
        for prop, ctype, kind, fs in own:
            text = fs[0]["doc"] or f"{fs[0]['name']}."
            if kind == "flags":
                text += ": every flag at once (each flag's bool property sets and clears it alone)."
            if kind == "handle":
                text += HELD_OBJECT
            lines.append(doc(text, i2).rstrip("\n"))
            if kind == "flags":
                lines += [
                    f"{i2}public {ctype} {prop}",
                    f"{i2}{{",
                    f"{i3}get {{ return {ident(fs[0]['name'])}; }}",
                    f"{i3}set {{ {ident(fs[0]['name'])} = value; }}",
                    f"{i2}}}",
                ]
            else:
                lines.append(f"{i2}public {ctype} {prop} {{ get; set; }}")
            lines.append("")
        lines += [
            f"{i2}// The fields from {first_held} on (null: none set).",
            f"{i2}private {holder} attributes;",
            "",
            f"{i2}private {holder} Writable()",
            f"{i2}{{",
            f"{i3}attributes = attributes == null ? new {holder}() : attributes.Copy();",
            f"{i3}return attributes;",
            f"{i2}}}",
            "",
        ]
        for it in held:
            prop, ctype, kind, fs = it
            text = fs[0]["doc"] or f"{fs[0]['name']}."
            if nullable(it):
                text += "\nNull (the default here): not set, the library's default applies."
            if kind == "handle":
                text += HELD_OBJECT
            empty = "null" if nullable(it) or kind == "handle" else f"default({ctype})"
            lines.append(doc(text, i2).rstrip("\n"))
            lines += [
                f"{i2}public {held_type(it)} {prop}",
                f"{i2}{{",
                f"{i3}get {{ return attributes == null ? {empty} : attributes.{prop}; }}",
                f"{i3}set {{ Writable().{prop} = value; }}",
                f"{i2}}}",
                "",
            ]
        handles = [prop for prop, _, kind, _ in items if kind == "handle"]
        lines += [
            f"{i2}/// <summary>The native struct. The objects' raw handles are in it: <see cref=\"KeepAlive\"/> "
            "after the call that takes the struct.</summary>",
            f"{i2}internal {native} ToNative()",
            f"{i2}{{",
            f"{i3}var c = {native}.Create();",
        ]
        for prop, ctype, kind, fs in own:
            if kind == "dim3":
                lines += [f"{i3}c.{ident(f['name'])} = {prop}.{f['name'][-1].upper()};" for f in fs]
            elif kind == "handle":
                lines.append(
                    f"{i3}c.{ident(fs[0]['name'])} = {prop} == null ? IntPtr.Zero : {prop}.Handle.DangerousGetHandle();"
                )
            else:
                lines.append(f"{i3}c.{ident(fs[0]['name'])} = {ident(fs[0]['name']) if kind == 'flags' else prop};")
        lines += [
            f"{i3}if (attributes != null)",
            f"{i4}attributes.ToNative(ref c);",
            f"{i3}return c;",
            f"{i2}}}",
            "",
            f"{i2}/// <summary>Keeps the objects <see cref=\"ToNative\"/> names alive until here: call it after "
            "the call that took the struct.</summary>",
            f"{i2}internal void KeepAlive()",
            f"{i2}{{",
        ]
        lines += [f"{i3}GC.KeepAlive({prop});" for prop in handles]
        lines += [
            f"{i2}}}",
            "",
            f"{i2}/// <summary>A value from the native struct (the objects it names, which have no owner here, "
            "and the held fields are left out).</summary>",
            f"{i2}internal static {cls} FromNative(ref {native} c)",
            f"{i2}{{",
            f"{i3}var made = new {cls}();",
        ]
        for prop, ctype, kind, fs in own:
            if kind == "dim3":
                lines.append(f"{i3}made.{prop} = new Dim3({', '.join('c.' + ident(f['name']) for f in fs)});")
            elif kind != "handle":
                lines.append(f"{i3}made.{prop} = c.{ident(fs[0]['name'])};")
        lines += [f"{i3}return made;", f"{i2}}}", ""]
        dims = [prop for prop, _, kind, _ in own if kind == "dim3"]
        compare = []
        for prop, ctype, kind, fs in own:
            if kind == "dim3":
                v = dims.index(prop)
                compare += [f"d{v}.{a} == o{v}.{a}" for a in "XYZ"]
            elif kind == "handle":
                compare.append(f"ReferenceEquals({prop}, other.{prop})")
            elif kind == "flags":
                compare.append(f"{ident(fs[0]['name'])} == other.{ident(fs[0]['name'])}")
            else:
                compare.append(f"{prop} == other.{prop}")
        compare.append(f"{holder}.Same(attributes, other.attributes)")
        lines += [
            f"{i2}/// <summary>Whether <paramref name=\"other\"/> holds the same values (the same objects).</summary>",
            f"{i2}internal bool SameAs(ref {cls} other)",
            f"{i2}{{",
            f"{i3}Dim3 "
            + ", ".join([f"d{v} = {d}" for v, d in enumerate(dims)] + [f"o{v} = other.{d}" for v, d in enumerate(dims)])
            + ";",
            f"{i3}return " + (" &&\n" + i4).join(compare) + ";",
            f"{i2}}}",
            "",
        ]
        at = next(k for k, it in enumerate(own) if it[3][0]["name"] == spec["extended"])
        tested = []
        for prop, ctype, kind, fs in own[at:]:
            if kind == "dim3":
                tested += [f"{prop}.{a} != 0" for a in "XYZ"]
            elif kind == "handle":
                tested.append(f"{prop} != null")
            elif kind == "flags":
                tested.append(f"{ident(fs[0]['name'])} != 0")
            else:
                tested.append(f"{prop} != 0")
        tested.append("attributes != null")
        lines += [
            f"{i2}/// <summary>Whether any field from {spec['extended']} on is set.</summary>",
            f"{i2}internal bool IsExtended",
            f"{i2}{{",
            f"{i3}get",
            f"{i3}{{",
            f"{i4}return " + (" ||\n" + i4 + "       ").join(tested) + ";",
            f"{i3}}}",
            f"{i2}}}",
            f"{i1}}}",
            "",
            f"{i1}/// <summary>The fields of a <see cref=\"{cls}\"/> from {first_held} on "
            "(its holder; null there: none set).</summary>",
            f"{i1}internal sealed class {holder}",
            f"{i1}{{",
        ]
        lines += [f"{i2}public {held_type(it)} {it[0]};" for it in held]
        lines += [
            "",
            f"{i2}public {holder} Copy()",
            f"{i2}{{",
            f"{i3}return ({holder})MemberwiseClone();",
            f"{i2}}}",
            "",
            f"{i2}/// <summary>Writes the fields that are set into <paramref name=\"c\"/> "
            "(which holds the library's defaults).</summary>",
            f"{i2}public void ToNative(ref {native} c)",
            f"{i2}{{",
        ]
        for it in held:
            prop, ctype, kind, fs = it
            member = "c." + ident(fs[0]["name"])
            if kind == "handle":
                lines += [f"{i3}if ({prop} != null)", f"{i4}{member} = {prop}.Handle.DangerousGetHandle();"]
            elif not nullable(it):
                lines.append(f"{i3}{member} = {prop};")
            else:
                value = {"value": f'{prop}.Value.ToNative("{prop}")', "retyped": f"(int){prop}.Value"}.get(
                    kind, f"{prop}.Value"
                )
                lines += [f"{i3}if ({prop}.HasValue)", f"{i4}{member} = {value};"]
        same = []
        for it in held:
            prop, ctype, kind, fs = it
            if kind == "handle":
                same.append(f"ReferenceEquals(a.{prop}, b.{prop})")
            elif kind == "value":
                same.append(f"Nullable.Equals(a.{prop}, b.{prop})")
            else:
                same.append(f"a.{prop} == b.{prop}")
        lines += [
            f"{i2}}}",
            "",
            f"{i2}public static bool Same({holder} a, {holder} b)",
            f"{i2}{{",
            f"{i3}if (ReferenceEquals(a, b))",
            f"{i4}return true;",
            f"{i3}if (a == null || b == null)",
            f"{i4}return false;",
            f"{i3}return " + (" &&\n" + i4).join(same) + ";",
            f"{i2}}}",
            f"{i1}}}",
        ]
        parts.append("\n".join(lines) + "\n")
    return parts


# Values the binding gives as an `int` (they always fit one; a count past
# int.MaxValue throws OverflowException): (function, out-parameter), or
# (function, "") for the value it returns; or takes as one: (function,
# in-parameter), refused when negative (NOT_NEGATIVE).
AS_INT = {
    ("cuabi_module_get_kernel_count", "count"),
    ("cuabi_graph_exec_set_kernel_node_args", "index"),
    ("cuabi_version", ""),
    ("cuabi_function_get_max_cluster_size", "cluster_size"),
    ("cuabi_function_get_max_active_clusters", "clusters"),
    ("cuabi_array_get_element_size", "bytes"),
}

# Parameters named otherwise in C#: (function, parameter) -> the C name to
# form the C# name from (device.GetMemoryInfo(out free, out total)).
PARAM_NAMES = {
    ("cuabi_stream_mem_op_batch", "ops"): "batch",
    ("cuabi_stream_copy_batch", "ops"): "batch",
    ("cuabi_device_get_memory_info", "free_bytes"): "free",
    ("cuabi_device_get_memory_info", "total_bytes"): "total",
    ("cuabi_graph_add_kernel_node", "function"): "kernel",
    ("cuabi_graph_exec_set_kernel_node", "function"): "kernel",
    ("cuabi_graph_exec_set_kernel_node_args", "function"): "kernel",
}

# Borrowed handles the library refuses itself when NULL, which these
# members gave it when written by hand: a null object goes to the library as
# NULL (HandleOf) instead of being refused here: (function, parameter).
LIBRARY_NULLS = {
    ("cuabi_graph_exec_set_host_node", "node"),
    ("cuabi_graph_exec_set_kernel_node", "node"),
}

# Sizes and 64-bit counts (a long in C#) refused when negative with the
# message of the binding's own checks (Ranges.NotNegative: "cannot be
# negative"), which these members had when written by hand: (function,
# parameter).
NOT_NEGATIVE = {
    ("cuabi_memory_pool_trim", "keep_bytes"),
    ("cuabi_function_suggest_config", "elements"),  # a uint64_t, a long here
    ("cuabi_function_suggest_config", "shared_bytes_per_block"),
    ("cuabi_function_suggest_config", "shared_bytes_per_thread"),
    ("cuabi_graph_exec_set_kernel_node_args", "index"),
}

# The C# default values of trailing arguments: (function, parameter) -> value.
DEFAULTS = {
    ("cuabi_stream_copy_batch", "flags"): "0",
    ("cuabi_stream_copy_3d_batch", "flags"): "0",
    ("cuabi_function_suggest_config", "shared_bytes_per_block"): "0",
    ("cuabi_function_suggest_config", "shared_bytes_per_thread"): "0",
    ("cuabi_memory_pool_trim", "keep_bytes"): "0",
    ("cuabi_stream_begin_capture", "mode"): "CaptureMode.Global",
    ("cuabi_tensor_map_encode_tiled", "element_strides"): "null",
    ("cuabi_tensor_map_encode_tiled", "interleave"): "TensorInterleave.None",
    ("cuabi_tensor_map_encode_tiled", "swizzle"): "TensorSwizzle.None",
    ("cuabi_tensor_map_encode_tiled", "l2_promotion"): "TensorL2Promotion.None",
    ("cuabi_tensor_map_encode_tiled", "oob_fill"): "TensorOobFill.Zero",
}

# Getters whose several out-values are one value of a C# type made from
# them in order (`new ComputeCapability(major, minor)`): function -> type.
COMPOSED = {"cuabi_device_get_compute_capability": "ComputeCapability", "cuabi_nvrtc_get_version": "Version"}

# The types of COMPOSED (and of ALIASES's composed members) generated here,
# from a function's out-values: type -> (the function, what ToString
# answers, as C# over the properties (None: no ToString), and as its
# documentation says it, the fields whose C# type or name differs: C name ->
# "type Name"). A public struct documented as the function, with a
# constructor taking the values in order (named as the properties, in
# camelCase) and a read-only property each, named as the out-parameter; a
# 64-bit unsigned value is a long there (checked), as a size is.
COMPOSED_TYPES: Dict[str, Tuple[str, Optional[str], str, Dict[str, str]]] = {
    "ComputeCapability": ("cuabi_device_get_compute_capability", 'Major + "." + Minor', '"major.minor"', {}),
    "MemoryPoolUsage": (
        "cuabi_memory_pool_get_usage",
        'UsedBytes + " of " + ReservedBytes + " reserved bytes used"',
        '"used of reserved bytes used"',
        {},
    ),
    "BlockSizeSuggestion": (
        "cuabi_function_suggest_block_size",
        '"block size " + BlockSize + ", at least " + MinGridSize + " blocks"',
        '"block size N, at least M blocks"',
        {"block_size": "int BlockSize", "min_grid_size": "int MinGridSize"},
    ),
    "ModuleGlobal": (
        "cuabi_module_get_global", None, "", {"device_ptr": "ulong DevicePointer", "bytes": "long SizeInBytes"}
    ),
}


def composed_fields(name: str, fn: Dict[str, Any], em: "Emitter") -> List[Tuple[str, str, str, Dict[str, Any]]]:
    """The fields of COMPOSED_TYPES `name`: (C# type, property, parameter, the out-parameter)."""
    made = []
    for p in fn["params"]:
        if p["role"] != "out":
            continue
        t = "long" if p["type"]["base"] == "uint64_t" else em.public_type(p["type"])
        t, prop = COMPOSED_TYPES[name][3].get(p["name"], f"{t} {pascal(p['name'].split('_'))}").split(" ")
        made.append((t, prop, ident(prop[0].lower() + prop[1:]), p))
    return made


def composed_type(name: str, fn: Dict[str, Any], em: "Emitter") -> str:
    """The struct of COMPOSED_TYPES `name` (see there)."""
    i1, i2, i3 = "    ", "        ", "            "
    _, text, said, _ = COMPOSED_TYPES[name]
    fields = composed_fields(name, fn, em)
    lines = [doc(f"{fn['doc'] or fn['name']} ({fn['name']})", i1).rstrip("\n"), f"{i1}public struct {name}", f"{i1}{{"]
    lines.append(f"{i2}/// <summary>Creates the value.</summary>")
    lines += [f'{i2}/// <param name="{arg}">Its {p["name"]}.</param>' for _, _, arg, p in fields]
    lines += [f"{i2}public {name}({', '.join(f'{t} {arg}' for t, _, arg, _ in fields)})", f"{i2}{{"]
    lines += [f"{i3}{prop} = {arg};" for _, prop, arg, _ in fields] + [f"{i2}}}"]
    for t, prop, _, p in fields:
        lines += ["", f"{i2}/// <summary>Its {p['name']}.</summary>", f"{i2}public {t} {prop} {{ get; private set; }}"]
    if text:
        lines += ["", f"{i2}/// <summary>{said}.</summary>", f"{i2}public override string ToString()", f"{i2}{{"]
        lines += [f"{i3}return {text};", f"{i2}}}"]
    return "\n".join(lines + [f"{i1}}}"]) + "\n"


def composed_value(p: Dict[str, Any], value: str, field: str) -> str:
    """`value` of out-parameter `p` as its field, of C# type `field`, of a type of COMPOSED_TYPES."""
    if p["type"]["base"] == "uint64_t" and field == "long" or p["type"]["base"] == "uint32_t" and field == "int":
        return f"checked(({field}){value})"
    return value


# Getters whose value never changes while the handle lives (the raw driver
# handle of a texture or surface object, an argument of every launch that
# takes one; a kernel's name): the property asks the library on its first read and keeps the
# value; a later read only checks that the object was not disposed.
CACHED = {"cuabi_texture_get_handle", "cuabi_surface_get_handle", "cuabi_function_get_name"}

# The trampoline of each host-callback call (the model's idiom
# `host_callback` with a cuabi_host_fn): a stream's host function runs once
# (HostFunctions.Trampoline frees the delegate's handle after the run); a
# graph's host node may run at every launch (HostFunctions.KeptTrampoline
# keeps it for the process).
HOST_TRAMPOLINES = {
    "cuabi_stream_launch_host_func": "HostFunctions.Trampoline",
    "cuabi_graph_add_host_node": "HostFunctions.KeptTrampoline",
    "cuabi_graph_exec_set_host_node": "HostFunctions.KeptTrampoline",
}

# The hand-written types that hold a flag set (the C# declaration of their
# partial part -> the flag bits' enum, the member holding the set): each bit
# of the set is a bool property of the type, named and documented as the
# bit, that reads it and sets or clears it alone; a bit the header adds
# reaches them through scripts/regen alone.
FLAG_PROPERTIES: Dict[str, Tuple[str, str]] = {
    "public partial struct LaunchConfig": ("cuabi_launch_flag_bits", "flags"),
    "public sealed partial class MemoryPoolOptions": ("cuabi_memory_pool_flag_bits", "Flags"),
}


def flag_properties(model: Dict[str, Any]) -> List[str]:
    """The partial parts of FLAG_PROPERTIES: one bool property per bit of the set."""
    enums = {e["name"]: e for e in model["enums"] if e["is_flag_bits"]}
    parts = []
    for decl, (bits, member) in FLAG_PROPERTIES.items():
        if bits not in enums:
            raise SystemExit(f"regen: csharp: FLAG_PROPERTIES names {bits}, which is no flag set of the header")
        e, cs = enums[bits], enum_name(bits)
        props = []
        for v, name in zip(e["values"], value_names(model, e)):
            bit = f"{cs}.{name}"
            props.append(
                doc(v["doc"] or f"{v['name']}.", "        ")
                + f"        public bool {name}\n        {{\n"
                + f"            get {{ return ({member} & {bit}) != 0; }}\n"
                + f"            set {{ {member} = value ? {member} | {bit} : {member} & ~{bit}; }}\n"
                + "        }\n"
            )
        parts.append(f"    {decl}\n    {{\n" + "\n".join(props) + "    }\n")
    return parts


# Hand-written option classes that carry a run of a built struct's numbers
# and enums (a texture's addressing, filtering and border colour), C struct
# -> (the class's C# declaration, the first and last field of the run,
# property names where the .NET name differs, the 32-bit integer fields that
# are bools): one read-write property per field in the header's order and
# WriteTo(ref native), which sets those fields of the struct (a bool as 1 or
# 0), are generated in a partial part of the class; its constructor (the
# defaults) and what sets several fields at once stay hand-written.
FIELD_CLASSES: Dict[str, Tuple[str, str, str, Dict[str, str], Tuple[str, ...]]] = {
    "cuabi_texture_desc": (
        "public sealed partial class TextureOptions",
        "address_x",
        "border_a",
        {
            "normalized_coords": "NormalizedCoordinates",
            "border_r": "BorderRed",
            "border_g": "BorderGreen",
            "border_b": "BorderBlue",
            "border_a": "BorderAlpha",
        },
        ("normalized_coords",),
    ),
    "cuabi_compile_desc": (
        "public sealed partial class CompileOptions",
        "fast_math",
        "relocatable",
        {"device_debug": "Debug", "lto": "Dlto", "relocatable": "Rdc"},
        ("fast_math", "line_info", "device_debug", "lto", "relocatable"),
    ),
}


def field_classes(model: Dict[str, Any], types: Types) -> List[str]:
    """The partial parts of FIELD_CLASSES (see there)."""
    i2, i3 = "        ", "            "
    structs = {s["name"]: s for s in model["structs"]}
    parts = []
    for name, (decl, first, last, names, bools) in FIELD_CLASSES.items():
        fields = [f["name"] for f in structs[name]["fields"]]
        run = structs[name]["fields"][fields.index(first) : fields.index(last) + 1]
        props, writes = [], []
        for f in run:
            prop = names.get(f["name"], pascal(f["name"].split("_")))
            ctype = "bool" if f["name"] in bools else types.value(f["type"])
            text = f"{f['name']}: {f['doc']}" if f["doc"] else f"{f['name']}."
            props.append(doc(text, i2) + f"{i2}public {ctype} {prop} {{ get; set; }}\n")
            one = "1u : 0u" if f["type"]["base"] == "uint32_t" else "1 : 0"
            value = f"{prop} ? {one}" if f["name"] in bools else prop
            writes.append(f"{i3}d.{ident(f['name'])} = {value};\n")
        props.append(
            f"{i2}/// <summary>Sets the fields from {first} to {last} of <paramref name=\"d\"/>.</summary>\n"
            f"{i2}internal void WriteTo(ref {struct_name(name)} d)\n{i2}{{\n" + "".join(writes) + f"{i2}}}\n"
        )
        parts.append(f"    {decl}\n    {{\n" + "\n".join(props) + "    }\n")
    return parts


# Calls of a buffer on a byte range that also get members over the whole
# buffer: function -> (where, its offset and size parameters, parameters
# given as another C# type: name -> (the type, the expression passing it)).
# "elements": DeviceBuffer<T> makes the call over elements of T, in a
# partial part of its own: the member over `count` elements from element
# `index` (both refused when negative or past a 64-bit size, and T refused
# when it cannot be copied as raw bytes) and the member over all of the
# buffer's elements (buffer.PrefetchAsync(index, count, location, stream),
# buffer.PrefetchAsync(location, stream)). "bytes": DeviceMemory gets the
# member over all of its bytes beside the generated one (Memset(value)).
LOCATION = {"location": ("MemoryLocation", "location.Value")}
WHOLE_RANGES: Dict[str, Tuple[str, Tuple[str, str], Dict[str, Tuple[str, str]]]] = {
    "cuabi_buffer_prefetch_async": ("elements", ("offset", "bytes"), LOCATION),
    "cuabi_buffer_advise": ("elements", ("offset", "bytes"), LOCATION),
    "cuabi_buffer_memset": ("bytes", ("offset", "bytes"), {}),
    "cuabi_buffer_memset_async": ("bytes", ("offset", "bytes"), {}),
}


def whole_ranges(model: Dict[str, Any], types: Types) -> Tuple[List[str], List[List[str]]]:
    """The members of WHOLE_RANGES (see there): the partial part of DeviceBuffer<T>,
    and DeviceMemory's members."""
    i2, i3 = "        ", "            "
    fns = {f["name"]: f for f in model["functions"]}
    elements: List[str] = []
    memory: List[List[str]] = []
    for name, (where, (offset, size), given) in WHOLE_RANGES.items():
        fn = fns[name]
        method = member_name(fn)
        # the other parameters; the native call's arguments; the whole member's call,
        # and the byte-range member's parameter types, both in the C order
        sig, args, whole, ctypes, docs = [], ["Handle"], [], [], []
        for p in fn["params"]:
            n, arg, t = p["name"], camel(p["name"]), p["type"]
            null = f" (null: {xml(p['null_means'])})" if p.get("null_means") else ""
            if p["role"] == "receiver":
                continue
            if n in (offset, size):
                index = "index" if n == offset else "count"
                args.append(f'Ranges.Bytes({index}, size, "{index}")')
                whole.append("0" if n == offset else "SizeInBytes")
                ctypes.append("long")
                continue
            if n in given:
                sig.append(f"{given[n][0]} {arg}")
                args.append(given[n][1])
            elif p["role"] == "handle" and p.get("handle_type") == "cuabi_stream":
                sig.append(f"CudaStream {arg}")
                args.append(f"CudaStream.HandleOf({arg})")
            elif p["role"] == "in" and not t["pointers"] and t["kind"] in ("enum", "int", "uint"):
                sig.append(f"{types.value(t)} {arg}")
                args.append(arg)
            else:
                raise SystemExit(f"regen: csharp: WHOLE_RANGES: {name}.{n} has no C# form here")
            whole.append(arg)
            ctypes.append(sig[-1].split(" ")[0])
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument{null}.</param>')
        if where == "elements":
            whole = ["0", "Count"] + [a for a in whole if a not in ("0", "SizeInBytes")]
            ctypes = ["long", "long"] + [c.split(" ")[0] for c in sig]
            here = f"Here over elements of T: `{offset}` and `{size}` are `count` elements from element `index`."
            elements.append(
                doc(f"{fn['doc'] or name}\n{here} ({name})", i2)
                + f'{i2}/// <param name="index">The first element.</param>\n'
                + f'{i2}/// <param name="count">How many elements.</param>\n'
                + "".join(d + "\n" for d in docs)
                + f"{i2}public void {method}({', '.join(['long index', 'long count'] + sig)})\n{i2}{{\n"
                + f"{i3}int size = Element<T>.Require();\n"
                + f"{i3}Errors.Check(NativeMethods.{name}({', '.join(args)}));\n{i2}}}\n"
            )
        member = (
            f'{i2}/// <summary>As <see cref="{method}({", ".join(ctypes)})"/>, over all of the {where}.</summary>\n'
            + "".join(d + "\n" for d in docs)
            + f"{i2}public void {method}({', '.join(sig)})\n{i2}{{\n{i3}{method}({', '.join(whole)});\n{i2}}}\n"
        )
        if where == "elements":
            elements.append(member)
        else:
            memory.append(member.rstrip("\n").split("\n"))
    part = "    public sealed partial class DeviceBuffer<T> where T : struct\n    {\n" + "\n".join(elements) + "    }\n"
    return [part], memory


# Hand-written members over a range that also get a member over all of it,
# generated beside them: class -> [(method, the ranged member's parameters,
# the whole member's summary)]. The whole member takes the ranged one's
# parameters less its indexes (`index`, `*Index`: 0) and `count`: the length
# of its host array (a `T[]`: .Length) or pinned buffer (a `PinnedBuffer<T>`:
# .Count), else the buffer's own Count; that array or pinned buffer is refused
# when null, naming it (buffer.CopyFrom(values) is buffer.CopyFrom(values, 0,
# 0, values.Length)). Its parameters are documented from WHOLE_FORM_PARAMS.
WHOLE_FORMS: Dict[str, List[Tuple[str, str, str]]] = {
    "DeviceBuffer<T>": [
        ("CopyFrom", "T[] source, int sourceIndex, long destinationIndex, int count",
         'Copies all of <paramref name="source"/> to the start of the buffer.'),
        ("CopyTo", "long sourceIndex, T[] destination, int destinationIndex, int count",
         'Copies the start of the buffer into all of <paramref name="destination"/>.'),
        ("CopyFromAsync", "PinnedBuffer<T> source, long sourceIndex, long destinationIndex, long count, CudaStream stream",
         'Copies pinned host memory into the buffer, ordered on <paramref name="stream"/> (asynchronous).'),
        ("CopyToAsync", "long sourceIndex, PinnedBuffer<T> destination, long destinationIndex, long count, CudaStream stream",
         'Copies the buffer into pinned host memory, ordered on <paramref name="stream"/> (asynchronous).'),
        ("ReadHost", "long sourceIndex, T[] destination, int destinationIndex, int count",
         'Copies the start of managed memory into all of <paramref name="destination"/> through the host view (no driver copy).'),
        ("WriteHost", "T[] source, int sourceIndex, long destinationIndex, int count",
         'Copies all of <paramref name="source"/> to the start of managed memory through the host view (no driver copy).'),
        ("Fill", "T value, long index, long count",
         "Sets every element to <paramref name=\"value\"/>. Elements of 1, 2 or\n"
         "4 bytes (byte, ushort, short, int, uint, float, ...): the value's\n"
         "bytes are repeated. For bytes of other element types see\n"
         '<see cref="DeviceMemory.Memset(byte)"/>.'),
        ("FillAsync", "T value, long index, long count, CudaStream stream",
         'Sets every element to <paramref name="value"/>, in order on <paramref name="stream"/>; see <see cref="Fill(T)"/>.'),
    ],
}
WHOLE_FORM_PARAMS: Dict[str, str] = {
    "T[] source": "The host values.",
    "T[] destination": "The host array to fill.",
    "PinnedBuffer<T> source": "Pinned host memory; it must stay alive until the stream reaches the copy.",
    "PinnedBuffer<T> destination": "Pinned host memory; read it after the stream reached the copy.",
    "CudaStream stream": "The stream, or null for the default stream.",
    "T value": "The value.",
}
# What a whole member throws beyond its ranged member: method -> (exception, when).
WHOLE_FORM_THROWS: Dict[str, Tuple[str, str]] = {
    "Fill": ("ArgumentException", '<typeparamref name="T"/> is not 1, 2 or 4 bytes.'),
}


# Constructors taking a value struct that also get a member taking its fields
# as parameters, on the class of the object they are made from: function ->
# (the member's name, that object's parameter, the fields in C# order:
# "field", "field:C# type" (a 32-bit int for a uint32_t count) or either with
# "=C# default"). The struct is the init's (Default()) with each field set; a
# number is refused when negative, naming its parameter
# (device.CreateArray(format, channels, width, height, depth, flags)).
FIELD_PARAMS: Dict[str, Tuple[str, str, Tuple[str, ...]]] = {
    "cuabi_array_create": (
        "CreateArray",
        "device",
        ("format", "channels:int", "width", "height=0", "depth=0", "flags=ArrayFlags.None"),
    ),
}


def field_params(fn: Dict[str, Any], em: "Emitter") -> Tuple[str, List[str]]:
    """The member of FIELD_PARAMS for `fn` (see there): (the handle type whose class gets it, its lines)."""
    i2, i3 = "        ", "            "
    name, on, order = FIELD_PARAMS[fn["name"]]
    value = next(p for p in fn["params"] if p["role"] == "struct_in")
    made = next(p for p in fn["params"] if p["role"] == "out_handle")
    fields = {f["name"]: f for f in em.values[value["struct"]]["fields"]}
    vcls, cls = value_class(value["struct"]), CLASSES[made.get("handle_type", made["type"]["base"])][0]
    sig, docs, body = [], [], [f"{i3}var {camel(value['name'])} = {vcls}.Default();"]
    for spec in order:
        spec, _, default = spec.partition("=")
        field, _, given = spec.partition(":")
        f, arg = fields[field], camel(field)
        t = em.public_type(f["type"])
        sig.append(f"{given or t} {arg}" + (f" = {default}" if default else ""))
        text = xml(f["doc"] or field)
        docs.append(f'{i2}/// <param name="{arg}">{text[0].upper() + text[1:]}.</param>')
        v = arg
        if f["type"]["kind"] in ("int", "uint", "size"):
            v = f'Ranges.NotNegative({arg}, "{arg}")'
            v = f"({t}){v}" if t != "long" else v
        body.append(f"{i3}{camel(value['name'])}.{pascal(field.split('_'))} = {v};")
    args = ", ".join("this" if p["name"] == on else camel(p["name"]) for p in fn["params"] if p["role"] != "out_handle")
    body.append(f"{i3}return {cls}.{member_name(fn)}({args});")
    lines = [doc(f"{fn['doc'] or fn['name']} ({fn['name']})", i2).rstrip("\n")] + docs
    lines += [f"{i2}public {cls} {name}({', '.join(sig)})", f"{i2}{{"] + body + [f"{i2}}}"]
    recv = next(p for p in fn["params"] if p["name"] == on)
    return recv["type"]["base"], lines


# Library calls whose only struct is a built struct: a member of the class
# describing it (BUILT_TYPES; a partial class), which runs the call on
# itself (copy.Copy(), copy.CopyAsync(stream)): function -> (the member's
# name, why memory pinned only for the call is refused, for a call whose
# library goes on using it, else None). Its other parameters are objects
# that may be null (HandleOf). What the struct names is held while the call
# runs (the class's Describe(what, why, out lease), what "" for itself).
BUILT_CALLS: Dict[str, Tuple[str, Optional[str]]] = {
    "cuabi_copy_3d": ("Copy", None),
    "cuabi_copy_3d_async": (
        "CopyAsync",
        "an asynchronous copy needs host memory that stays put (CopyEnd.Host(PinnedBuffer<T>)), or use Copy()",
    ),
}


def built_calls(model: Dict[str, Any]) -> List[str]:
    """The partial parts of the classes BUILT_CALLS names (see there)."""
    i2, i3 = "        ", "            "
    by_class: Dict[str, List[str]] = {}
    for fn in model["functions"]:
        if fn["name"] not in BUILT_CALLS:
            continue
        name, why = BUILT_CALLS[fn["name"]]
        built, *rest = fn["params"]
        cls = built_class(built)
        if cls is None or any(p["role"] != "handle" or not p.get("nullable") for p in rest):
            raise SystemExit(f"regen: csharp: BUILT_CALLS: {fn['name']} is no call of a built struct and objects")
        native = struct_name(built["struct"])
        others = [(CLASSES[p.get("handle_type", p["type"]["base"])][0], camel(p["name"]), p) for p in rest]
        lines = [doc(f"{fn['doc'] or fn['name']} ({fn['name']})", i2).rstrip("\n")]
        for _, n, p in others:
            null = xml(p.get("null_means") or "none")
            lines.append(f'{i2}/// <param name="{n}">The {p["name"]} argument (null: {null}).</param>')
        args = ["ref desc"] + [f"{c}.HandleOf({n})" for c, n, _ in others]
        lines += [
            f"{i2}public void {name}({', '.join(f'{c} {n}' for c, n, _ in others)})",
            f"{i2}{{",
            f"{i3}IDisposable lease;",
            f'{i3}{native} desc = Describe("", {chr(34) + why + chr(34) if why else "null"}, out lease);',
            f"{i3}using (lease)",
            f"{i3}    Errors.Check(NativeMethods.{fn['name']}({', '.join(args)}));",
            f"{i2}}}",
        ]
        by_class.setdefault(cls, []).append("\n".join(lines) + "\n")
    return [f"    public sealed partial class {c}\n    {{\n" + "\n".join(m) + "    }\n" for c, m in by_class.items()]


# Read-write properties of a getter and its setter of one 64-bit unsigned
# value, a long in C# (a read past long.MaxValue throws OverflowException; a
# negative value set is refused naming `value`): getter -> setter. The
# getter is the property (HAND_WRITTEN says so), documented as the setter
# (pool.ReleaseThreshold).
LONG_PROPERTIES: Dict[str, str] = {
    "cuabi_memory_pool_get_release_threshold": "cuabi_memory_pool_set_release_threshold",
}


def long_property(getter: Dict[str, Any], setter: Dict[str, Any]) -> List[str]:
    """The property of LONG_PROPERTIES over `getter` and `setter` (see there)."""
    i2, i3, i4 = "        ", "            ", "                "
    roles = ([p["role"] for p in getter["params"]], [p["role"] for p in setter["params"]])
    types = {p["type"]["base"] for p in getter["params"][1:] + setter["params"][1:]}
    if roles != (["receiver", "out"], ["receiver", "in"]) or types != {"uint64_t"}:
        raise SystemExit(f"regen: csharp: LONG_PROPERTIES: {getter['name']} and {setter['name']} are no 64-bit pair")
    return [
        doc(f"{setter['doc'] or setter['name']} ({getter['name']}, {setter['name']})", i2).rstrip("\n"),
        f"{i2}public long {pascal(getter['property'].split('_'))}",
        f"{i2}{{",
        f"{i3}get",
        f"{i3}{{",
        f"{i4}ulong value;",
        f"{i4}Errors.Check(NativeMethods.{getter['name']}(Handle, out value));",
        f"{i4}return checked((long)value);",
        f"{i3}}}",
        f"{i3}set",
        f"{i3}{{",
        f'{i4}Ranges.NotNegative(value, "value");',
        f"{i4}Errors.Check(NativeMethods.{setter['name']}(Handle, (ulong)value));",
        f"{i3}}}",
        f"{i2}}}",
    ]


# Calls that block (a link) and also get a Task form: function -> its name.
# A call of its receiver alone making a handle of FACTORIES: the Task runs the
# call on the thread pool (Background.Run: the receiver's handle is held until
# the call returned, so the object may be disposed meanwhile) and carries its
# failure (linker.LinkAsync()).
TASKS: Dict[str, str] = {"cuabi_linker_link": "LinkAsync"}


def task_member(fn: Dict[str, Any]) -> List[str]:
    """The Task form of TASKS for `fn` (see there)."""
    i2, i3 = "        ", "            "
    if [p["role"] for p in fn["params"]] != ["receiver", "out_handle"]:
        raise SystemExit(f"regen: csharp: TASKS: {fn['name']} is no call of its receiver alone making a handle")
    recv, out = fn["params"]
    made = out.get("handle_type", out["type"]["base"])
    cls = CLASSES[made][0]
    return [
        doc(f"{fn['doc'] or fn['name']}\nOn the thread pool: the task carries the failure; the object may be "
            f"disposed before the task ends. ({fn['name']})", i2).rstrip("\n"),
        f"{i2}public System.Threading.Tasks.Task<{cls}> {TASKS[fn['name']]}()",
        f"{i2}{{",
        f"{i3}return Background.Run(Handle, raw =>",
        f"{i3}{{",
        f"{i3}    {handle_class(made)} made;",
        f"{i3}    Errors.Check(NativeMethods.{fn['name']}(new {handle_class(recv['type']['base'])}(raw, false),"
        " out made));",
        f"{i3}    return {FACTORIES[made].format('made')};",
        f"{i3}}}, null);",
        f"{i2}}}",
    ]


# Copies between two buffers on byte ranges that also get a member of
# DeviceBuffer<T> copying all of another DeviceBuffer<T> to the start of this
# one (buffer.CopyFrom(source), buffer.CopyFromAsync(source, stream)):
# function -> the member's name. The source is refused when null, naming it;
# further parameters are objects that may be null (HandleOf).
WHOLE_COPIES: Dict[str, str] = {"cuabi_buffer_copy": "CopyFrom", "cuabi_buffer_copy_async": "CopyFromAsync"}


def whole_copies(model: Dict[str, Any]) -> str:
    """The partial part of DeviceBuffer<T> with the members of WHOLE_COPIES (see there)."""
    i2, i3 = "        ", "            "
    members = []
    for fn in model["functions"]:
        if fn["name"] not in WHOLE_COPIES:
            continue
        roles = [p["role"] for p in fn["params"]]
        rest = fn["params"][5:]
        if roles[:5] != ["receiver", "in", "handle", "in", "in"] or any(not p.get("nullable") for p in rest):
            raise SystemExit(f"regen: csharp: WHOLE_COPIES: {fn['name']} is no copy between two buffers")
        src = fn["params"][2]["name"]
        others = [(CLASSES[p.get("handle_type", p["type"]["base"])][0], camel(p["name"]), p) for p in rest]
        lines = [doc(f"{fn['doc'] or fn['name']}\nHere all of `{src}` (source) to the start of this buffer. "
                     f"({fn['name']})", i2).rstrip("\n"),
                 f'{i2}/// <param name="source">The buffer copied from.</param>']
        for _, n, p in others:
            null = xml(p.get("null_means") or "none")
            lines.append(f'{i2}/// <param name="{n}">The {p["name"]} argument (null: {null}).</param>')
        args = ["Handle", "UIntPtr.Zero", "source.Handle", "UIntPtr.Zero", "(UIntPtr)(ulong)source.SizeInBytes"]
        args += [f"{c}.HandleOf({n})" for c, n, _ in others]
        sig = ["DeviceBuffer<T> source"] + [f"{c} {n}" for c, n, _ in others]
        lines += [
            f"{i2}public void {WHOLE_COPIES[fn['name']]}({', '.join(sig)})",
            f"{i2}{{",
            f"{i3}if (source == null)",
            f'{i3}    throw new ArgumentNullException("source");',
            f"{i3}Errors.Check(NativeMethods.{fn['name']}({', '.join(args)}));",
            f"{i2}}}",
        ]
        members.append("\n".join(lines) + "\n")
    return "    public sealed partial class DeviceBuffer<T> where T : struct\n    {\n" + "\n".join(members) + "    }\n"


def summary_doc(text: str, indent: str) -> str:
    """A <summary> of `text`, which is XML already (it names parameters)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return f"{indent}/// <summary>{text}</summary>\n"
    return f"{indent}/// <summary>\n" + "".join(f"{indent}/// {line}\n" for line in lines) + f"{indent}/// </summary>\n"


def whole_forms() -> List[str]:
    """The members of WHOLE_FORMS (see there), a partial part of each class."""
    i2, i3 = "        ", "            "
    parts = []
    for cls, forms in WHOLE_FORMS.items():
        members = []
        for method, ranged, summary in forms:
            params = [p.strip().rsplit(" ", 1) for p in ranged.split(",")]
            length = {"T[]": "Length", "PinnedBuffer<T>": "Count"}
            host = [f"{n}.{length[t]}" for t, n in params if t in length]
            args, sig, docs = [], [], []
            for t, n in params:
                if n == "index" or n.endswith("Index"):
                    args.append("0")
                elif n == "count":
                    args.append(host[0] if host else "Count")
                else:
                    args.append(n)
                    sig.append(f"{t} {n}")
                    docs.append(f'{i2}/// <param name="{n}">{WHOLE_FORM_PARAMS[f"{t} {n}"]}</param>\n')
            check = "".join(
                f'{i3}if ({n} == null)\n{i3}    throw new ArgumentNullException("{n}");\n' for t, n in params if t in length
            )
            throws = WHOLE_FORM_THROWS.get(method)
            members.append(
                summary_doc(summary, i2) + "".join(docs)
                + (f'{i2}/// <exception cref="{throws[0]}">{throws[1]}</exception>\n' if throws else "")
                + f"{i2}public void {method}({', '.join(sig)})\n{i2}{{\n{check}"
                + f"{i3}{method}({', '.join(args)});\n{i2}}}\n"
            )
        parts.append(f"    public sealed partial class {cls} where T : struct\n    {{\n" + "\n".join(members) + "    }\n")
    return parts


# Constructors of buffers whose sizes are counts of elements of T: function
# -> (the member's name, its byte sizes as counts: parameter -> name, default
# values: parameter -> C#). Each is a generic member of its receiver's class,
# `where T : struct` (device.AllocateManaged<float>(n)), returning a
# DeviceBuffer<T> (a PinnedBuffer<T> for pinned host memory, made from its
# handle and count: device.AllocatePinned<float>(n)): T is refused when it cannot be copied as raw bytes, each
# count when negative or past a 64-bit size in bytes, another size (an
# offset, in bytes) when negative, a null object naming its parameter (a
# nullable one passes null: HandleOf). A `ptr` out-value beside the handle is
# the buffer's address, answered by the same call (one call per buffer:
# device.Allocate<float>(n)). The parameters are in the C order, or in the
# order of a fourth item, their C names (device.AllocateAsync<float>(n,
# stream, pool)). A fifth item "static" makes the member a static one of
# the buffer's class, its receiver a parameter (DeviceBuffer<float>.OpenIpc(
# device, handle, pool)); bytes in are a byte[], pinned for the call (Ipc.Open:
# null refused naming it); a `device_ptr` in is the buffer's address
# (DeviceBuffer<float>.Wrap(device, devicePointer, count)).
TYPED_BUFFERS: Dict[str, Tuple[Any, ...]] = {
    "cuabi_buffer_alloc_with_pointer": ("Allocate", {"bytes": "count"}, {}),
    "cuabi_host_buffer_alloc": ("AllocatePinned", {"bytes": "count"}, {}),
    "cuabi_buffer_alloc_async_with_pointer": (
        "AllocateAsync", {"bytes": "count"}, {"pool": "null"}, ("bytes", "stream", "pool")
    ),
    "cuabi_buffer_open_ipc": ("OpenIpc", {}, {"pool": "null"}, ("device", "handle", "pool"), "static"),
    "cuabi_buffer_wrap": ("Wrap", {"bytes": "count"}, {}, ("device", "device_ptr", "bytes"), "static"),
    "cuabi_buffer_alloc_managed": ("AllocateManaged", {"bytes": "count"}, {"flags": "ManagedFlags.None"}),
    "cuabi_buffer_alloc_growable": ("AllocateGrowable", {"bytes": "count", "reserve_bytes": "reserveCount"}, {}),
    "cuabi_buffer_from_range": ("Buffer", {"bytes": "count"}, {}),
}


def typed_buffer(fn: Dict[str, Any], types: Types) -> List[str]:
    """The member of TYPED_BUFFERS for `fn` (see there)."""
    i2, i3 = "        ", "            "
    method, counts, defaults = TYPED_BUFFERS[fn["name"]][:3]
    static = TYPED_BUFFERS[fn["name"]][4:] == ("static",)
    sig, docs, checks, args = [], [], [], []
    address, pinned = "", None
    hoisted = any(q["role"] == "bytes_in" for q in fn["params"])  # handles read before the bytes are pinned
    for p in fn["params"]:
        n, t, arg = p["name"], p["type"], camel(p["name"])
        if p["role"] == "receiver" and static:  # a parameter, its handle read before the call
            sig.append(f"{CLASSES[t['base']][0]} {arg}")
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument.</param>')
            checks.append(f'{i3}if ({arg} == null)\n{i3}    throw new ArgumentNullException("{arg}");')
            args.append(f"{arg}Handle" if hoisted else f"{arg}.Handle")
        elif p["role"] == "receiver":
            args.append("Handle")
        elif p["role"] == "bytes_in":
            sig.append(f"byte[] {arg}")
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument.</param>')
            args.append("bytes")
            pinned = arg
        elif p["role"] == "size" and pinned:
            args.append("size")
        elif p["role"] == "in" and n == "device_ptr" and t["base"] == "uint64_t":  # the buffer's address
            sig.append("ulong devicePointer")
            docs.append(f'{i2}/// <param name="devicePointer">The {n} argument.</param>')
            args.append("devicePointer")
            address = "devicePointer"
        elif p["role"] == "out_handle":
            args.append("out h")
        elif p["role"] == "out" and n == "ptr" and t["base"] == "uint64_t":
            address = "ptr"
            args.append("out ptr")
        elif p["role"] == "handle" and p.get("nullable") and p.get("handle_type") in CLASSES:
            cls = CLASSES[p["handle_type"]][0]
            sig.append(f"{cls} {arg}" + (f" = {defaults[n]}" if n in defaults else ""))
            null = xml(p.get("null_means") or "none")
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument (null: {null}).</param>')
            args.append(f"{arg}Handle" if hoisted else f"{cls}.HandleOf({arg})")
        elif n in counts:
            sig.append(f"long {counts[n]}")
            docs.append(f'{i2}/// <param name="{counts[n]}">Its {n}, in elements of T.</param>')
            args.append(counts[n] + "Bytes")
        elif p["role"] == "handle" and not p.get("nullable") and p.get("handle_type") in CLASSES:
            sig.append(f"{CLASSES[p['handle_type']][0]} {arg}")
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument.</param>')
            checks.append(f'{i3}if ({arg} == null)\n{i3}    throw new ArgumentNullException("{arg}");')
            args.append(f"{arg}.Handle")
        elif p["role"] == "in" and t["kind"] == "size" and not t["pointers"]:
            sig.append(f"long {arg}")
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument.</param>')
            checks.append(f'{i3}Ranges.NotNegative({arg}, "{arg}");')
            args.append(f"(UIntPtr)(ulong){arg}")
        elif p["role"] == "in" and t["kind"] in ("enum", "flags") and not t["pointers"]:
            sig.append(f"{types.value(t)} {arg}" + (f" = {defaults[n]}" if n in defaults else ""))
            docs.append(f'{i2}/// <param name="{arg}">The {n} argument.</param>')
            args.append(arg)
        else:
            raise SystemExit(f"regen: csharp: TYPED_BUFFERS: {fn['name']}.{n} has no C# form here")
    if len(TYPED_BUFFERS[fn["name"]]) > 3:  # another order: by the C names
        roles = ("in", "handle", "bytes_in") + (("receiver",) if static else ())
        inputs = [q["name"] for q in fn["params"] if q["role"] in roles]
        order = [inputs.index(n) for n in TYPED_BUFFERS[fn["name"]][3]]
        sig, docs = [sig[k] for k in order], [docs[k] for k in order]
    sizes = " and ".join(f"`{n}`" for n in counts)
    here = f"\nHere {sizes} count elements of T." if counts else ""
    lines = [doc(f"{fn['doc'] or fn['name']}{here} ({fn['name']})", i2).rstrip("\n")]
    if not static:
        lines.append(f'{i2}/// <typeparam name="T">A value type of numbers, enums, pointers and such structs.</typeparam>')
    lines += docs
    out = next(p for p in fn["params"] if p["role"] == "out_handle")
    made_type = out.get("handle_type", out["type"]["base"])
    buffer = "PinnedBuffer<T>" if made_type == "cuabi_host_buffer" else "DeviceBuffer<T>"
    if static:
        lines.append(f"{i2}public static {buffer} {method}({', '.join(sig)})\n{i2}{{")
    else:
        lines.append(f"{i2}public {buffer} {method}<T>({', '.join(sig)}) where T : struct\n{i2}{{")
    lines += checks
    lines.append(f"{i3}{'int size = ' if counts else ''}Element<T>.Require();")
    lines += [f'{i3}UIntPtr {c}Bytes = Ranges.Bytes({c}, size, "{c}");' for c in counts.values()]
    call = f"NativeMethods.{fn['name']}({', '.join(args)})"
    if pinned:  # the handles first, then the bytes, pinned for the call
        for p in fn["params"]:
            if p["role"] in ("receiver", "handle"):
                cls = CLASSES[p.get("handle_type", p["type"]["base"])][0]
                value = f"{cls}.HandleOf({camel(p['name'])})" if p.get("nullable") else f"{camel(p['name'])}.Handle"
                lines.append(f"{i3}var {camel(p['name'])}Handle = {value};")
        call = f'Ipc.Open({pinned}, delegate(IntPtr bytes, UIntPtr size) {{ return {call}; }}, "{pinned}")'
    lines.append(f"{i3}{handle_class(made_type)} h{' = null' if pinned else ''};")
    if address == "ptr":
        lines.append(f"{i3}ulong ptr;")
    lines.append(f"{i3}Errors.Check({call});")
    count = next(iter(counts.values()), "")
    made = f"h, {address}, {count}" if address else f"h, {count}" if buffer == "PinnedBuffer<T>" else "h"
    lines.append(f"{i3}return new {buffer}({made});\n{i2}}}")
    return lines


# Second public forms of a generated member (another name, its object as
# `this`, its parameters in another order, trailing defaults): function ->
# [(the C# name, where it lives, its parameters in C# order: "name",
# "name:C# name" or either with "=C# default" (an array's null: no
# elements), and "name=>C#" for an argument the member always passes)]. Where it lives: the C
# parameter that is `this` (its class gets the member: device.CreateStream(
# flags) is CudaStream.Create(device, flags, priority)), or "static", a
# static member of the receiver's class (a constructor's: of the class it
# makes; a library call's: of its class, CudaLibrary.Load(image)). A
# receiver that is a parameter, and bytes, a renamed parameter and a library
# call's parameter of a reference type (an array, an object) without a
# default are refused here when null, naming them, first; the generated
# member checks the rest. Each is documented as the generated
# member (cuabi.h's text), and calls it: a property is read. Parameters
# None: a read-only property of the member's value (stream.IsComplete is
# stream.Query()); of a member with out-values, of the type of
# COMPOSED_TYPES made from them, the fourth item (pool.Usage), which may
# also give the value as another type ("int", checked). A parameter marked
# "name!" is refused here when negative (Ranges.NotNegative), naming it, and
# "name!int" is an int in C# (kernel.GetActiveBlocksPerMultiprocessor).
ALIASES: Dict[str, List[Tuple[Any, ...]]] = {
    "cuabi_memory_pool_get_usage": [("Usage", "pool", None, "MemoryPoolUsage")],
    "cuabi_device_get_context": [("NativeContext", "device", None)],
    "cuabi_function_get_active_blocks_per_sm": [
        ("GetActiveBlocksPerMultiprocessor", "function", ("block_size!int", "dynamic_shared_bytes!=0"), "int")
    ],
    "cuabi_function_get_available_dynamic_shared": [
        (
            "GetAvailableDynamicSharedMemory",
            "function",
            ("blocks_per_sm:blocksPerMultiprocessor!int", "block_size!int"),
        )
    ],
    "cuabi_function_suggest_block_size": [
        (
            "SuggestBlockSize",
            "function",
            ("shared_bytes_per_block!=0", "shared_bytes_per_thread!=0", "block_size_limit!int=0"),
            "BlockSizeSuggestion",
        )
    ],
    "cuabi_module_get_kernel_name": [("GetKernelName", "module", ("index!int", "form=NameForm.Demangled"))],
    "cuabi_module_get_global": [("GetGlobal", "module", ("name",), "ModuleGlobal")],
    "cuabi_stream_create": [("CreateStream", "device", ("flags=StreamFlags.None", "priority=0"))],
    "cuabi_event_create": [("CreateEvent", "device", ("flags=EventFlags.None",))],
    "cuabi_module_load_file": [("LoadModuleFile", "device", ("path",))],
    "cuabi_device_get_default_memory_pool": [("GetDefaultMemoryPool", "device", ())],
    "cuabi_module_get_function": [("GetKernel", "module", ("name",))],
    "cuabi_linker_add_program": [("Add", "linker", ("program",))],
    "cuabi_linker_add_file": [("AddFile", "linker", ("path", "kind=LinkInput.Auto"))],
    "cuabi_linker_add_data": [("AddData", "linker", ("data", "kind=LinkInput.Auto", "name=null"))],
    "cuabi_surface_create": [("CreateSurface", "array", ())],
    "cuabi_stream_query": [("IsComplete", "stream", None)],
    "cuabi_event_query": [("IsComplete", "event", None)],
    "cuabi_buffer_get_copy_path": [("GetCopyPathFrom", "dst", ("src:source",))],
    "cuabi_library_load_data": [("Load", "static", ("image",))],
    "cuabi_tensor_map_encode_im2col": [
        (
            "EncodeIm2col",
            "static",
            ("buffer", "offset", "data_type", "sizes", "strides", "lower_corner", "upper_corner", "channels_per_pixel",
             "pixels_per_column", "element_strides=null", "swizzle=TensorSwizzle.None",
             "interleave=>TensorInterleave.None", "l2_promotion=>TensorL2Promotion.None", "oob_fill=>TensorOobFill.Zero"),
        )
    ],
    "cuabi_event_get_elapsed_ms": [
        ("ElapsedSince", "end", ("start",)),
        ("ElapsedMilliseconds", "static", ("start", "end")),
    ],
}


def aliases(fn: Dict[str, Any], member: List[str], em: "Emitter") -> List[Tuple[str, List[str]]]:
    """The members of ALIASES for `fn` (see there) over its generated
    `member`: (the handle type whose class gets it, its lines)."""
    i2, i3 = "        ", "            "
    at = next(i for i, line in enumerate(member) if line.startswith(i2 + "public "))
    m = re.match(r"\s+public (static )?(\S+) (\w+)(?:\((.*)\))?$", member[at])
    if not m or "<" in m.group(3):
        raise SystemExit(f"regen: csharp: ALIASES: {fn['name']}'s member has no plain signature: {member[at].strip()}")
    static, ret, target, params = bool(m.group(1)), m.group(2), m.group(3), m.group(4)
    types = {}  # C# parameter -> its type
    for q in params.split(", ") if params else []:
        t, n = q.split(" = ")[0].rsplit(" ", 1)
        types[n] = t
    recv = fn.get("receiver")
    handles = {
        p["name"]: p.get("handle_type", p["type"]["base"]) for p in fn["params"] if p["role"] in ("receiver", "handle")
    }
    if recv:
        types.setdefault(camel(recv), CLASSES[handles[recv]][0])
    docs = [line for line in member[:at] if line.startswith(i2 + "///")]
    summary = [line for line in docs if "<param name=" not in line]
    param_doc = {line.split('name="')[1].split('"')[0]: line for line in docs if "<param name=" in line}
    roles = ("receiver", "in", "handle", "string_in", "struct_in", "array_in", "bytes_in")
    ins = [camel(p["name"]) for p in fn["params"] if p["role"] in roles and (static or p["role"] != "receiver")]
    classes = {c for c, _ in CLASSES.values()}
    made: List[Tuple[str, List[str]]] = []
    for name, on, order, *composed in ALIASES[fn["name"]]:
        sig, body, pdocs, renamed = [], [], [], {}
        for spec in order or ():
            if "=>" in spec:  # a constant argument
                c, value = spec.split("=>")
                renamed[camel(c)] = value
                continue
            spec, _, default = spec.partition("=")
            spec, checked, given = spec.partition("!")
            c, _, cs = spec.partition(":")
            n = camel(c)
            renamed[n] = cs or n
            t = types[n]
            if t.endswith("[]") and default == "null":  # null: no elements
                renamed[n] = f"{cs or n} ?? new {t[:-2]}[0]"
            if checked:  # refused here when negative, and converted
                renamed[n] = f'Ranges.NotNegative({cs or n}, "{cs or n}")'
                renamed[n] = renamed[n] if t == "long" else f"({t}){renamed[n]}"
            sig.append(f"{given or t} {cs or n}" + (f" = {default}" if default else ""))
            text = param_doc.get(n, f'{i2}/// <param name="{n}">The {c} argument.</param>')
            pdocs.append(text.replace(f'"{n}"', f'"{cs or n}"'))
            if (cs or not recv or t == "byte[]") and not default and (t.endswith("[]") or t in classes):
                body.append(f'{i3}if ({cs or n} == null) throw new ArgumentNullException("{cs or n}");')
        this = None if on == "static" else camel(on)
        given_args = ["this" if a == this else renamed.get(a, a) for a in ins]
        if composed and composed[0] in COMPOSED_TYPES:  # the out-values too
            outs = [p for p in fn["params"] if p["role"] == "out"]
            body += [f"{i3}{types[camel(p['name'])][len('out '):]} {camel(p['name'])};" for p in outs]
            given_args += ["out " + camel(p["name"]) for p in outs]
        args = ", ".join(given_args)
        if static and recv:  # a constructor: the static factory of the class it makes
            out = next(p for p in fn["params"] if p["role"] == "out_handle")
            call = f"{CLASSES[out.get('handle_type', out['type']['base'])][0]}.{target}({args})"
        elif static:  # a library call
            call = f"{target}({args})"
        else:
            subject = "this" if camel(recv or "") == this else camel(recv or "")
            if subject != "this":
                body.append(f'{i3}if ({subject} == null) throw new ArgumentNullException("{subject}");')
            call = ("" if subject == "this" else subject + ".") + target + ("" if params is None else f"({args})")
        if composed and composed[0] in COMPOSED_TYPES:  # the out-values, made one value
            body.append(f"{i3}{call};")
            fields = [f[0] for f in composed_fields(composed[0], fn, em)]
            values = ", ".join(composed_value(p, camel(p["name"]), fields[k]) for k, p in enumerate(outs))
            ret, call = composed[0], f"new {composed[0]}({values})"
        elif composed:  # another type for the value: "int" (checked)
            ret, call = composed[0], f"checked(({composed[0]}){call})"
        body.append(f"{i3}{'' if ret == 'void' else 'return '}{call};")
        lines = summary + pdocs
        if order is None:
            lines += [f"{i2}public {ret} {name}", f"{i2}{{", f"{i3}get", f"{i3}{{"] + ["    " + b for b in body]
            lines += [f"{i3}}}", f"{i2}}}"]
        else:
            lines += [f"{i2}public {'static ' if on == 'static' else ''}{ret} {name}({', '.join(sig)})", f"{i2}{{"]
            lines += body + [f"{i2}}}"]
        made_by = [p.get("handle_type", p["type"]["base"]) for p in fn["params"] if p["role"] == "out_handle"]
        where = handles[on] if on != "static" else (made_by or [handles.get(recv) or static_owner(fn)])[0]
        made.append((where, lines))
    return made


# Functions whose C# form differs from the plain one, and why.
HAND_WRITTEN: Dict[str, str] = {
    "cuabi_copy_3d": "Copy3D.Copy(): the object describing the box runs it (BUILT_CALLS)",
    "cuabi_copy_3d_async": "Copy3D.CopyAsync(stream): the object describing the box queues it (BUILT_CALLS)",
    "cuabi_device_get_ordinal": "Device.Ordinal is read once, when the Device is made (KEPT_VALUES)",
    "cuabi_host_buffer_get_pointer": "Pointer is read once, when the buffer is made",
    "cuabi_memory_pool_get_release_threshold": "ReleaseThreshold is a long, with a setter (LONG_PROPERTIES)",
    "cuabi_last_error_message": "read by the exception mapping (CudaException.cs), not exposed",
    "cuabi_last_error_status": "read by the exception mapping (CudaException.cs), not exposed",
    "cuabi_last_error_code": "read by the exception mapping (CudaException.cs), not exposed",
    "cuabi_last_error_log": "read by the exception mapping (CudaException.cs), not exposed",
    "cuabi_last_error_get_launch_count": "read by the exception mapping: CudaException.Launches",
    "cuabi_last_error_get_launch": "read by the exception mapping: CudaException.Launches",
    "cuabi_last_error_get_launch_kernel": "read by the exception mapping: CudaException.Launches",
    "cuabi_last_error_clear": "read by the exception mapping (CudaException.cs), not exposed",
    "cuabi_buffer_alloc": "Device.Allocate<T> makes a typed buffer through cuabi_buffer_alloc_with_pointer",
    "cuabi_buffer_alloc_async": "Device.AllocateAsync<T> makes a typed buffer through cuabi_buffer_alloc_async_with_pointer",
    "cuabi_buffer_grow": "DeviceBuffer<T>.Grow takes a count of elements and keeps Count",
    "cuabi_function_check_arg_sizes": "ArgumentLayout checks a launch's argument sizes through it (ArgumentPacking.cs)",
    "cuabi_set_context_lost_callback": (
        "the static event Cuda.ContextLost (Cuda.cs): one native callback, kept for the process, "
        "registered when the first handler is added; a handler's exception never reaches native code"
    ),
}

# The class describing each built struct (the model's `built`: it names
# cuabi objects or host memory), as the binding's own sources declare it:
# `public sealed class Copy3D : IDescribes<Copy3dDescNative>`. A member
# taking one is generated over that class; the struct it describes lives
# while the call runs, with what it names held by its lease.
BUILT_TYPES = built_types(
    "bindings/csharp/src", (".cs",), r"class (?P<type>\w+)\s*:[^{]*\bIDescribes<(?P<struct>\w+Native)>"
)


# The class describing each array of a struct naming objects or host memory
# (a batch's elements), as the binding's own sources declare it:
# `public sealed class MemOpBatch : IDescribesEach<MemOpNative>` (Describes.cs).
BATCH_TYPES = built_types(
    "bindings/csharp/src", (".cs",), r"class (?P<type>\w+)\s*:[^{]*\bIDescribesEach<(?P<struct>\w+Native)>"
)

# Calls of a stream on such an array (BATCH_TYPES) with its count: a member
# taking the batch, which lays out its elements, holds what they name and
# queues them in one call (CudaStream.Queue; an empty batch passes its
# count, for the library to refuse): function -> (parameters given as
# another C# type: name -> (the type, the expression passing it), whether the
# call returns the lease holding what the batch names, for the caller to
# dispose once the stream reached the batch, else it is released after the
# call). The batch is refused when null, naming it (PARAM_NAMES names it).
# An array of a built struct (BUILT_TYPES) is a list of its class
# (IList<Copy3D>), each element refused here when null and laid out by its
# IDescribes.DescribeIn.
BATCHES: Dict[str, Tuple[Dict[str, Tuple[str, str]], bool]] = {
    "cuabi_stream_mem_op_batch": ({}, False),
    "cuabi_stream_copy_3d_batch": ({}, False),
    "cuabi_stream_copy_batch": ({}, True),
    "cuabi_stream_prefetch_batch": (LOCATION, False),
    "cuabi_stream_discard_batch": ({}, False),
    "cuabi_stream_discard_and_prefetch_batch": (LOCATION, False),
}


def batch_member(fn: Dict[str, Any], em: "Emitter") -> List[str]:
    """The member of BATCHES for `fn` (see there)."""
    i2, i3 = "        ", "            "
    given, keep = BATCHES[fn["name"]]
    params = [dict(p, name=PARAM_NAMES.get((fn["name"], p["name"]), p["name"])) for p in fn["params"]]
    roles = [p["role"] for p in params]
    native = struct_name(params[1]["type"]["base"])
    if roles[:3] != ["receiver", "array_in", "count"] or native not in BATCH_TYPES and native not in BUILT_TYPES:
        raise SystemExit(f"regen: csharp: BATCHES: {fn['name']} is no call of a stream on a batch")
    batch = camel(params[1]["name"])
    describe = f"((IDescribesEach<{native}>){batch}).Describe"
    cls = BATCH_TYPES[native][1] if native in BATCH_TYPES else f"IList<{BUILT_TYPES[native][1]}>"
    if native not in BATCH_TYPES:  # a list of a built struct's class
        describe = (
            f"(lease, i) => ((IDescribes<{native}>)({batch}[i] ?? "
            f'throw new ArgumentNullException("{batch}", "{batch}[" + i + "] is null"))).DescribeIn("{batch}", i, lease)'
        )
    sig, docs, args = [f"{cls} {batch}"], [f'{i2}/// <param name="{batch}">The batch.</param>'], ["Handle", "ref first", "n"]
    for p in params[3:]:
        n, arg = p["name"], camel(p["name"])
        if n in given:
            sig.append(f"{given[n][0]} {arg}")
            args.append(given[n][1])
        elif p["role"] == "in" and p["type"]["kind"] in ("enum", "flags") and not p["type"]["pointers"]:
            default = DEFAULTS.get((fn["name"], n))
            sig.append(f"{em.types.value(p['type'])} {arg}" + (f" = {default}" if default else ""))
            args.append(arg)
        else:
            raise SystemExit(f"regen: csharp: BATCHES: {fn['name']}.{n} has no C# form here")
        docs.append(f'{i2}/// <param name="{arg}">The {n} argument.</param>')
    kept = "\nReturns the lease holding what the batch names: dispose of it once the stream reached the batch." if keep else ""
    lines = [doc(f"{fn['doc'] or fn['name']}{kept} ({fn['name']})", i2).rstrip("\n")] + docs
    lines += [
        f"{i2}public {'BatchLease' if keep else 'void'} {member_name(fn)}({', '.join(sig)})",
        f"{i2}{{",
        f'{i3}if ({batch} == null) throw new ArgumentNullException("{batch}");',
        f"{i3}{'return ' if keep else ''}Queue({batch}.Count, {describe},",
        f"{i3}    (ref {native} first, UIntPtr n) => NativeMethods.{fn['name']}({', '.join(args)}), {'true' if keep else 'false'});",
        f"{i2}}}",
    ]
    return lines


def built_class(p: Dict[str, Any]) -> Optional[str]:
    """The class describing a struct_in parameter's built struct, if any."""
    if p.get("role") != "struct_in" or p.get("nullable"):
        return None
    found = BUILT_TYPES.get(struct_name(p.get("struct") or ""))
    return found[1] if found else None


PLAIN_CALLS = {"getter", "setter", "action", "string", "blob", "library", "constructor"}
PLAIN_ROLES = {"receiver", "in", "out", "handle", "string_in", "two_call_buf", "two_call_size", "out_handle"}
VALUE_ROLES = {"struct_in", "struct_out"}

# What every value type already has, which no field's property may be named.
VALUE_MEMBERS = {"Default", "DefaultCore", "ToNative", "FromNative", "Equals", "GetHashCode", "ToString", "GetType"}


def numeric_array(p: Dict[str, Any]) -> bool:
    """An array of numbers in (the model's `array_in` of size_t or 32-bit
    integers, with its count): a C# array, size_t elements a long[] refused
    naming the element when one is negative, its length the count."""
    return p.get("role") == "array_in" and p["type"]["base"] in ("size_t", "int32_t", "uint32_t")


def bytes_in_before(fn: Dict[str, Any], p: Dict[str, Any]) -> bool:
    """Whether `p` (a size) counts the bytes of the `bytes_in` just before it:
    bytes in are a byte[] (null refused naming it), pinned for the call
    through Ipc.Open (an empty array passes a real address, so that the
    library's refusal names the size), its length the size."""
    i = fn["params"].index(p)
    return i > 0 and fn["params"][i - 1].get("role") == "bytes_in"


def static_owner(fn: Dict[str, Any]) -> Optional[str]:
    """The handle type whose class a library call is a static member of: its
    object's (cuabi_device_get_count is Device.Count); None for Cuda's."""
    if fn.get("receiver") or fn.get("call") != "library" or not fn.get("object"):
        return None
    owner = "cuabi_" + fn["object"]
    return owner if owner in CLASSES else None


def member_name(fn: Dict[str, Any]) -> str:
    words = fn["method"].split("_")
    if static_owner(fn) and fn["method"].startswith(fn["object"] + "_"):
        words = words[len(fn["object"].split("_")) :]  # Device.Count, not Device.DeviceCount
    return pascal(words)


def camel(name: str) -> str:
    words = name.split("_")
    text = words[0] + pascal(words[1:])
    return ident(text)


def tagged_doc(text: str, indent: str, tag: str = "summary") -> List[str]:
    """A documentation comment whose text holds XML tags (<see>, <c>,
    <paramref>) and no other markup characters, wrapped."""
    lines = textwrap.wrap(text, 96 - len(indent))
    if len(lines) == 1:
        return [f"{indent}/// <{tag}>{lines[0]}</{tag}>"]
    return [f"{indent}/// <{tag}>"] + [f"{indent}/// {line}" for line in lines] + [f"{indent}/// </{tag}>"]


def value_class(struct: str) -> str:
    """The C# value type of a value struct: cuabi_access_policy_window -> AccessPolicyWindow."""
    return pascal(stem(struct).split("_"))


def value_structs(model: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The model's value structs by name."""
    return {s["name"]: s for s in model["structs"] if s.get("value")}


def ipc_shape(fn: Dict[str, Any]) -> Optional[str]:
    """Which IPC call `fn` is (the model's idiom `ipc`), when its C# form is
    generated: "export", an object's handle bytes out (a byte[]), or "open",
    a constructor of a FACTORIES class from handle bytes in; None otherwise
    (a buffer is made with its element type: TYPED_BUFFERS, DeviceBuffer<T>.OpenIpc)."""
    roles = [p["role"] for p in fn["params"]]
    recv = fn["params"][0]["type"]["base"]
    if roles == ["receiver", "bytes_out", "size"] and recv in CLASSES:
        return "export"
    if fn["call"] == "constructor" and roles == ["receiver", "bytes_in", "size", "out_handle"]:
        made = fn["params"][3]
        if recv in CLASSES and made.get("handle_type", made["type"]["base"]) in FACTORIES:
            return "open"
    return None


def packed_kernel(fn: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The kernel whose packed argument block a call of the model's idiom
    `launch` takes, when its C# form is generated: a borrowed handle of a
    cuabi_function (not the receiver: a kernel's own launches are
    hand-written) followed by its arguments, bytes in and their size, the
    last of the inputs; None otherwise."""
    params = fn["params"]
    roles = [p["role"] for p in params]
    if fn.get("idiom") != "launch" or "bytes_in" not in roles:
        return None
    at = roles.index("bytes_in")
    kernel = [p for p in params if p["role"] == "handle" and p["type"]["base"] == "cuabi_function"]
    if len(kernel) != 1 or roles[at + 1 : at + 2] != ["size"] or set(roles[at + 2 :]) - {"out_handle"}:
        return None
    return kernel[0]


def skip_reason(fn: Dict[str, Any], values: Dict[str, Dict[str, Any]]) -> Optional[str]:
    if fn["name"] in HAND_WRITTEN:
        return HAND_WRITTEN[fn["name"]]
    if packed_kernel(fn) is not None:
        return None
    if fn.get("idiom") == "ipc" and ipc_shape(fn) is not None:
        return None
    if fn.get("idiom") == "host_callback" and fn["name"] in HOST_TRAMPOLINES:
        return None
    if fn.get("idiom"):
        return f"idiom {fn['idiom']}"
    call = fn.get("call")
    if call is None:
        return "no call kind in the model"
    if call == "struct_init":
        struct = fn["params"][0].get("struct")
        return f"{value_class(struct)}.Default()" if struct in values else call
    if call not in PLAIN_CALLS:
        return call
    made = [p for p in fn["params"] if p.get("role") == "out_handle"]
    if made and (len(made) != 1 or made[0].get("handle_type", made[0]["type"]["base"]) not in FACTORIES):
        return "makes a handle whose class is not made from the handle alone (FACTORIES)"
    if call == "library" or not fn.get("receiver"):
        if call not in ("library", "string", "constructor"):
            return f"{call} without a receiver"
    else:
        recv = next(p for p in fn["params"] if p["name"] == fn["receiver"])
        if recv["type"]["base"] not in CLASSES or recv["type"]["base"] == "cuabi_host_buffer":
            return "no class for its object"
    for p in fn["params"]:
        role = p.get("role")
        if built_class(p) or (role in VALUE_ROLES and p.get("struct") in HAND_STRUCTS and not p.get("nullable")):
            continue
        if role in VALUE_ROLES and p.get("struct") in values:
            if p.get("nullable") and (role == "struct_out" or "default" not in p.get("null_means", "")):
                return f"parameter {p['name']}: a value struct whose NULL means {p.get('null_means')!r}"
            continue
        if role == "bytes_in" and not p.get("nullable") or role == "size" and bytes_in_before(fn, p):
            continue
        if role == "array_in" and numeric_array(p) or role == "count" and numeric_array(
            next(q for q in fn["params"] if q["name"] == p.get("of"))
        ):
            continue
        if role not in PLAIN_ROLES:
            return f"parameter {p['name']}: role {role}"
        if role == "handle" and p.get("handle_type", p["type"]["base"]) not in CLASSES:
            return f"parameter {p['name']}: no class for {p['type']['base']}"
        if role == "out" and p["type"]["kind"] == "handle":
            return f"parameter {p['name']}: a borrowed handle written back"
    return None


class Emitter:
    def __init__(self, model: Dict[str, Any]) -> None:
        self.types = Types(model)
        self.values = value_structs(model)
        self.functions = {f["name"]: f for f in model["functions"]}

    def public_type(self, t: Dict[str, Any]) -> str:
        """The C# type a caller sees for a scalar, enum or flags value."""
        if t["base"] in ("size_t", "uintptr_t"):
            return "long"
        if t["base"] == "char":
            return "string"
        return self.native_type(t)

    def native_type(self, t: Dict[str, Any]) -> str:
        """The C# type of the value behind an out-parameter (void** is an address)."""
        if t["kind"] == "void":
            return "IntPtr"
        return self.types.value(dict(t, pointers=[]))

    def out_type(self, p: Dict[str, Any]) -> str:
        """The C# type a caller gets for an out-parameter."""
        if p["role"] == "struct_out":
            return value_class(p["struct"])
        if p.get("boolean"):
            return "bool"
        if p.get("as_int"):
            return "int"
        return self.public_type(p["type"])

    # -- value structs -------------------------------------------------------
    def value_type(self, s: Dict[str, Any]) -> List[str]:
        """The public C# struct of a value struct, with its conversions."""
        i1, i2, i3, i4 = "    ", "        ", "            ", "                "
        name, init = s["name"], s["init"]
        cls, native = value_class(name), struct_name(name)
        fields = s["fields"][1:]  # after struct_size
        props = [(f, pascal(f["name"].split("_")), self.public_type(f["type"])) for f in fields]
        for f, prop, _ in props:
            if prop in VALUE_MEMBERS or prop == cls:
                raise SystemExit(f"regen: csharp: {name}.{f['name']}: its property {prop} is taken")
        sizes = [(f, prop) for f, prop, _ in props if f["type"]["base"] in ("size_t", "uintptr_t")]
        summary = f"{name}: {s['doc']}" if s["doc"] else f"{name}."
        lines = [doc(summary, i1).rstrip("\n")]
        remarks = (
            f"A value: <see cref=\"Default\"/> gives every field as {init} sets it (the C init is "
            f"the one source of defaults; <c>new {cls}()</c> has every field zero). The library "
            f"gets the struct {init} fills, with every field set over it"
            + (", a negative size refused naming the field" if sizes else "")
            + "."
        )
        lines += tagged_doc(remarks, i1, "remarks")
        lines.append(f"{i1}public struct {cls} : IEquatable<{cls}>")
        lines.append(f"{i1}{{")
        for f, prop, ptype in props:
            text = f"{f['name']} ({f['type']['c']})" + (f": {f['doc']}" if f["doc"] else ".")
            if f["type"]["base"] in ("size_t", "uintptr_t"):
                text += " Not negative."
            lines.append(doc(text, i2).rstrip("\n"))
            lines.append(f"{i2}public {ptype} {prop} {{ get; set; }}")
            lines.append("")
        lines += [
            doc(f"Every field as {init} sets it, read from the library (once).", i2).rstrip("\n"),
            f"{i2}public static {cls} Default()",
            f"{i2}{{",
            f"{i3}CuabiLibrary.Load();",
            f"{i3}return DefaultCore();",
            f"{i2}}}",
            "",
            f"{i2}[MethodImpl(MethodImplOptions.NoInlining)]",
            f"{i2}private static {cls} DefaultCore()",
            f"{i2}{{",
            f"{i3}{native} n = {native}.Create();",
            f"{i3}return FromNative(ref n);",
            f"{i2}}}",
            "",
        ]
        lines += tagged_doc(
            f"The {name} the library gets: {init}'s, with every field set over it; "
            "<paramref name=\"name\"/> names the argument in a refusal.",
            i2,
        )
        lines += [
            f'{i2}/// <param name="name">The parameter the value is passed as.</param>',
            f"{i2}internal {native} ToNative(string name)",
            f"{i2}{{",
        ]
        for f, prop in sizes:
            lines.append(
                f'{i3}if ({prop} < 0) throw new ArgumentOutOfRangeException(name + ".{prop}", {prop}, '
                f'"must not be negative");'
            )
        lines.append(f"{i3}{native} n = {native}.Create();")
        for f, prop, _ in props:
            member = ident(f["name"])
            if f["type"]["base"] in ("size_t", "uintptr_t"):
                lines.append(f"{i3}n.{member} = (UIntPtr)(ulong){prop};")
            else:
                lines.append(f"{i3}n.{member} = {prop};")
        lines += [
            f"{i3}return n;",
            f"{i2}}}",
            "",
            doc(f"Every field of a {name}.", i2).rstrip("\n"),
            f'{i2}/// <param name="n">The struct.</param>',
            f"{i2}internal static {cls} FromNative(ref {native} n)",
            f"{i2}{{",
            f"{i3}var made = new {cls}();",
        ]
        for f, prop, _ in props:
            member = ident(f["name"])
            if f["type"]["base"] in ("size_t", "uintptr_t"):
                lines.append(f"{i3}made.{prop} = (long)n.{member}.ToUInt64();")
            else:
                lines.append(f"{i3}made.{prop} = n.{member};")
        lines += [f"{i3}return made;", f"{i2}}}", ""]

        def same(f: Dict[str, Any], prop: str) -> str:
            if f["type"]["kind"] == "float":
                return f"{prop}.Equals(other.{prop})"  # NaN equals itself, as in GetHashCode
            return f"{prop} == other.{prop}"

        compare = " &&\n".join(f"{i4}" + same(f, prop) for f, prop, _ in props).lstrip()
        lines += [
            doc("Whether every field is the same.", i2).rstrip("\n"),
            f'{i2}/// <param name="other">The other value.</param>',
            f"{i2}public bool Equals({cls} other)",
            f"{i2}{{",
            f"{i3}return {compare};",
            f"{i2}}}",
            "",
        ]
        lines += tagged_doc(f"Whether <paramref name=\"obj\"/> holds a {cls} with every field the same.", i2)
        lines += [
            f'{i2}/// <param name="obj">The other object.</param>',
            f"{i2}public override bool Equals(object obj)",
            f"{i2}{{",
            f"{i3}return obj is {cls} && Equals(({cls})obj);",
            f"{i2}}}",
            "",
            doc("A hash of every field.", i2).rstrip("\n"),
            f"{i2}public override int GetHashCode()",
            f"{i2}{{",
            f"{i3}unchecked",
            f"{i3}{{",
            f"{i4}int h = 17;",
        ]
        lines += [f"{i4}h = h * 31 + {prop}.GetHashCode();" for _, prop, _ in props]
        lines += [
            f"{i4}return h;",
            f"{i3}}}",
            f"{i2}}}",
            "",
            doc("Whether every field is the same.", i2).rstrip("\n"),
            f'{i2}/// <param name="a">A value.</param>',
            f'{i2}/// <param name="b">Another value.</param>',
            f"{i2}public static bool operator ==({cls} a, {cls} b)",
            f"{i2}{{",
            f"{i3}return a.Equals(b);",
            f"{i2}}}",
            "",
            doc("Whether a field differs.", i2).rstrip("\n"),
            f'{i2}/// <param name="a">A value.</param>',
            f'{i2}/// <param name="b">Another value.</param>',
            f"{i2}public static bool operator !=({cls} a, {cls} b)",
            f"{i2}{{",
            f"{i3}return !a.Equals(b);",
            f"{i2}}}",
            "",
        ]
        shown = ", ".join(f"{prop} = {{{i}}}" for i, (_, prop, _) in enumerate(props))
        args = ", ".join(prop for _, prop, _ in props)
        lines += [
            doc(f'"{cls} {{ Field = value, ... }}", numbers in the invariant culture.', i2).rstrip("\n"),
            f"{i2}public override string ToString()",
            f"{i2}{{",
            f'{i3}return string.Format(CultureInfo.InvariantCulture, "{cls} {{{{ {shown} }}}}",',
            f"{i4}{args});",
            f"{i2}}}",
            f"{i1}}}",
        ]
        return lines

    def in_signature(self, ins: List[Dict[str, Any]], outs: List[Dict[str, Any]]) -> Tuple[List[str], str]:
        """The C# parameters of a member's inputs (with their DEFAULTS), and
        "<T>" where a PinnedBuffer<T> is one of them (else "")."""
        sig: List[str] = []
        generic = ""

        def optional(p: Dict[str, Any]) -> bool:
            """A nullable handle with only nullable handles after it takes null by default."""
            after = ins[ins.index(p) :]
            return not outs and all(q["role"] in ("handle", "struct_in") and q.get("nullable") for q in after)

        for p in ins:
            if p["role"] == "handle":
                cls = CLASSES[p.get("handle_type", p["type"]["base"])][0]
                if cls == "PinnedBuffer":
                    cls, generic = "PinnedBuffer<T>", "<T>"
                sig.append(f"{cls} {camel(p['name'])}" + (" = null" if p.get("nullable") and optional(p) else ""))
            elif built_class(p):
                sig.append(f"{built_class(p)} {camel(p['name'])}")
            elif p["role"] == "struct_in" and p.get("struct") in HAND_STRUCTS:
                sig.append(f"{HAND_STRUCTS[p['struct']]} {camel(p['name'])}")
            elif p["role"] == "bytes_in" and p.get("packed"):
                sig.append(f"params object[] {camel(p['name'])}")
            elif p["role"] == "bytes_in":
                sig.append(f"byte[] {camel(p['name'])}")
            elif p["role"] == "array_in":
                default = p.get("default")
                sig.append(f"{self.public_type(p['type'])}[] {camel(p['name'])}" + (f" = {default}" if default else ""))
            elif p["role"] == "struct_in" and p.get("nullable"):
                sig.append(f"{value_class(p['struct'])}? {camel(p['name'])}" + (" = null" if optional(p) else ""))
            elif p["role"] == "struct_in":
                sig.append(f"{value_class(p['struct'])} {camel(p['name'])}")
            else:
                default = p.get("default")
                t = "int" if p.get("as_int") else "long" if p.get("not_negative") else self.public_type(p["type"])
                sig.append(f"{t} {camel(p['name'])}" + (f" = {default}" if default else ""))
        defaulted = [bool(p.get("default")) for p in ins]
        if (True in defaulted and not all(defaulted[defaulted.index(True) :])) or (len(outs) > 1 and any(defaulted)):
            raise SystemExit("regen: csharp: a default value (DEFAULTS) is not on the last arguments")
        return sig, generic

    @staticmethod
    def in_docs(ins: List[Dict[str, Any]], indent: str) -> List[str]:
        """The <param> documentation of a member's inputs."""
        lines = []
        for p in ins:
            null = p.get("null_means")
            text = f"The {p['name']} argument" + (f" (null: {xml(null)})" if null else "") + "."
            if p.get("packed"):
                text = "One argument per kernel parameter, packed and checked as Kernel.Launch packs and checks them."
            lines.append(f'{indent}/// <param name="{camel(p["name"]).lstrip("@")}">{text}</param>')
        return lines

    def ipc_member(self, fn: Dict[str, Any]) -> List[str]:
        """An IPC call (ipc_shape): the handle's bytes out through Ipc.Handle
        (CUABI_IPC_HANDLE_SIZE bytes), or the object opened from them through
        Ipc.Open (null refused; an empty array passes a real address, so that
        the library's refusal names the size)."""
        i2, i3 = "        ", "            "
        name, call = member_name(fn), f"NativeMethods.{fn['name']}"
        lines = [doc(f"{fn['doc']} ({fn['name']})", i2).rstrip("\n")]
        if ipc_shape(fn) == "export":
            return lines + [
                f"{i2}public byte[] {name}()",
                f"{i2}{{",
                f"{i3}return Ipc.Handle(delegate(IntPtr p, UIntPtr size) {{ return {call}(Handle, p, size); }});",
                f"{i2}}}",
            ]
        recv, data, _, made = fn["params"]
        ht = made.get("handle_type", made["type"]["base"])
        a, b = camel(recv["name"]), camel(data["name"])
        return lines + self.in_docs([recv, data], i2) + [
            f"{i2}public static {CLASSES[ht][0]} {name}({CLASSES[recv['type']['base']][0]} {a}, byte[] {b})",
            f"{i2}{{",
            f'{i3}if ({a} == null) throw new ArgumentNullException("{a}");',
            f"{i3}var {a}Handle = {a}.Handle;",
            f"{i3}{handle_class(ht)} made = null;",
            f"{i3}Errors.Check(Ipc.Open({b}, delegate(IntPtr bytes, UIntPtr size)",
            f"{i3}{{",
            f"{i3}    return {call}({a}Handle, bytes, size, out made);",
            f"{i3}}}));",
            f"{i3}return {FACTORIES[ht].format('made')};",
            f"{i2}}}",
        ]

    def host_member(self, fn: Dict[str, Any]) -> List[str]:
        """A host-callback call (HOST_TRAMPOLINES): the callback is an Action,
        handed to the library with its trampoline through
        HostFunctions.Install (a null one goes to the library as NULL, for it
        to refuse); an exception it throws becomes the failure the library
        reports. Handle arguments as in member(); a new handle is the result."""
        i2, i3 = "        ", "            "
        params = fn["params"]
        handles = [p for p in params if p["role"] == "handle"]
        made = next((p for p in params if p["role"] == "out_handle"), None)
        if any(p["role"] not in ("receiver", "handle", "callback", "user_data", "out_handle") for p in params):
            raise SystemExit(f"regen: csharp: {fn['name']} in HOST_TRAMPOLINES has a parameter it cannot pass")
        lines = [doc(f"{fn['doc']} ({fn['name']})", i2).rstrip("\n")]
        lines += self.in_docs(handles, i2)
        lines += [
            f'{i2}/// <param name="callback">What to run (on a driver thread); null is refused by the library.</param>',
            f"{i2}/// <remarks>An exception the callback throws is caught (it never reaches the driver's thread) "
            "and becomes the failure the library reports: the next Synchronize of the stream it ran on throws "
            "a HostFunctionException with the message \"ExceptionType: message\".</remarks>",
        ]
        ret = CLASSES[made.get("handle_type", made["type"]["base"])][0] if made else "void"
        sig = [f"{CLASSES[p.get('handle_type', p['type']['base'])][0]} {camel(p['name'])}" for p in handles]
        body = [f"{i3}var h = Handle;"]
        args = []
        for p in params:
            n = camel(p["name"])
            if p["role"] == "receiver":
                args.append("h")
            elif p["role"] == "handle":
                if p.get("nullable"):
                    body.append(f"{i3}var {n}Handle = {CLASSES[p.get('handle_type', p['type']['base'])][0]}.HandleOf({n});")
                else:
                    body.append(f'{i3}if ({n} == null) throw new ArgumentNullException("{n}");')
                    body.append(f"{i3}var {n}Handle = {n}.Handle;")
                args.append(f"{n}Handle")
            elif p["role"] == "callback":
                args.append("fn")
            elif p["role"] == "user_data":
                args.append("userData")
            else:
                body.append(f"{i3}{handle_class(p.get('handle_type', p['type']['base']))} made = null;")
                args.append("out made")
        body.append(f"{i3}HostFunctions.Install(callback, {HOST_TRAMPOLINES[fn['name']]}, (fn, userData) =>")
        body.append(f"{i3}    NativeMethods.{fn['name']}({', '.join(args)}));")
        if made:
            body.append(f"{i3}return {FACTORIES[made.get('handle_type', made['type']['base'])].format('made')};")
        sig.append("Action callback")
        return lines + [f"{i2}public {ret} {member_name(fn)}({', '.join(sig)})", f"{i2}{{"] + body + [f"{i2}}}"]

    def member(self, fn: Dict[str, Any]) -> List[str]:
        i2, i3 = "        ", "            "
        if any(f == fn["name"] for f, _ in [*PARAM_NAMES, *LIBRARY_NULLS]):  # PARAM_NAMES's names, LIBRARY_NULLS's nulls
            params = [
                dict(p, name=PARAM_NAMES.get((fn["name"], p["name"]), p["name"]))
                | ({"nullable": True} if (fn["name"], p["name"]) in LIBRARY_NULLS else {})
                for p in fn["params"]
            ]
            fn = dict(fn, params=params)
        if fn.get("idiom") == "ipc":
            return self.ipc_member(fn)
        if fn.get("idiom") == "host_callback":
            return self.host_member(fn)
        name = member_name(fn)
        params = [dict(p, boolean=True) if p.get("flag") else p for p in fn["params"]]
        params = [dict(p, as_int=True) if (fn["name"], p["name"]) in AS_INT else p for p in params]
        params = [
            dict(p, default=DEFAULTS[fn["name"], p["name"]]) if (fn["name"], p["name"]) in DEFAULTS else p
            for p in params
        ]
        params = [dict(p, not_negative=True) if (fn["name"], p["name"]) in NOT_NEGATIVE else p for p in params]
        kernel = packed_kernel(fn)
        params = [dict(p, packed=True) if kernel and p["role"] == "bytes_in" else p for p in params]
        for p in params:
            if p.get("boolean") and (p["role"] != "out" or p["type"]["kind"] != "int"):
                raise SystemExit(f"regen: csharp: {fn['name']}.{p['name']} is a flag but no integer out-parameter")
        if fn["call"] == "constructor":
            # the object a constructor is made from is its first argument
            params = [dict(p, role="handle") if p["role"] == "receiver" else p for p in params]
        ins = [p for p in params if p["role"] in ("in", "handle", "string_in", "struct_in", "array_in", "bytes_in")]
        outs = [p for p in params if p["role"] in ("out", "struct_out")]
        call = fn["call"]
        lines: List[str] = []
        summary = fn["doc"] or f"{fn['name']}; see the conventions of cuabi.h."
        lines.append(doc(summary + f" ({fn['name']})", i2).rstrip("\n"))
        sig, generic = self.in_signature(ins, outs)
        if generic:
            lines.append(f'{i2}/// <typeparam name="T">The element type of the pinned buffer.</typeparam>')
        lines += self.in_docs(ins, i2)
        body: List[str] = []
        args: List[str] = []
        leases: List[str] = []  # what built structs hold while the call runs
        kept: List[str] = []  # what the structs of HAND_STRUCTS name, kept alive past the call
        consumes = fn.get("consumes", False)
        if consumes:
            if call != "action" or outs or fn["returns"]["base"] != "cuabi_status":
                raise SystemExit(f"regen: csharp: {fn['name']} consumes its receiver but is no action answering a status")
            body.append(f"{i3}var h = Handle;")
            lines.append(
                f"{i2}/// <remarks>The library releases the handle: once this succeeded the object is "
                "disposed (its members throw ObjectDisposedException), and neither Dispose nor the "
                "finalizer releases the handle again.</remarks>"
            )
        for p in params:
            role, n = p["role"], camel(p["name"])
            if role == "receiver":
                args.append("h" if consumes else "Handle")
            elif role == "handle":
                cls = CLASSES[p.get("handle_type", p["type"]["base"])][0]
                if p.get("nullable"):
                    body.append(f"{i3}var {n.lstrip('@')}Handle = {cls}.HandleOf({n});")
                else:
                    body.append(f'{i3}if ({n} == null) throw new ArgumentNullException("{n.lstrip("@")}");')
                    body.append(f"{i3}var {n.lstrip('@')}Handle = {n}.Handle;")
                args.append(f"{n.lstrip('@')}Handle")
            elif role == "in":
                t = p["type"]
                if p.get("not_negative"):
                    body.append(f'{i3}Ranges.NotNegative({n}, "{n.lstrip("@")}");')
                    args.append(f"(UIntPtr)(ulong){n}" if t["base"] == "size_t" else f"(ulong){n}")
                elif t["base"] in ("size_t", "uintptr_t"):
                    body.append(
                        f'{i3}if ({n} < 0) throw new ArgumentOutOfRangeException("{n.lstrip("@")}", '
                        f'{n}, "must not be negative");'
                    )
                    args.append(f"(UIntPtr)(ulong){n}")
                else:
                    args.append(n)
            elif role == "array_in":
                bare = n.lstrip("@")
                if p.get("default") == "null":  # null by default: no elements
                    body.append(f"{i3}{n} = {n} ?? new {self.public_type(p['type'])}[0];")
                else:
                    body.append(f'{i3}if ({n} == null) throw new ArgumentNullException("{bare}");')
                if p["type"]["base"] == "size_t":
                    body += [
                        f"{i3}var {bare}Values = new UIntPtr[{n}.Length];",
                        f"{i3}for (int i = 0; i < {n}.Length; i++)",
                        f"{i3}    {bare}Values[i] = {n}[i] < 0 ? throw new ArgumentOutOfRangeException("
                        f'"{bare}[" + i + "]", {n}[i], "must not be negative") : (UIntPtr)(ulong){n}[i];',
                    ]
                    args.append(f"{bare}Values")
                else:
                    args.append(n)
            elif role == "count":
                args.append(f"(UIntPtr)(uint){camel(p['of'])}.Length")
            elif role == "bytes_in":
                args.append(f"{n.lstrip('@')}Pointer")
            elif role == "size":  # of the bytes in before it (bytes_in_before)
                args.append(f"{camel(params[params.index(p) - 1]['name']).lstrip('@')}Size")
            elif role == "string_in":
                bare = n.lstrip("@")
                if not p.get("nullable"):
                    body.append(f'{i3}if ({n} == null) throw new ArgumentNullException("{bare}");')
                body.append(f'{i3}byte[] {bare}Bytes = Utf8.Encode({n}, "{bare}");')
                args.append(f"{bare}Bytes")
            elif built_class(p):
                bare = n.lstrip("@")
                native = struct_name(p["struct"])
                lasting = "true" if p.get("lasting") else "false"
                body.append(f'{i3}if ({n} == null) throw new ArgumentNullException("{bare}");')
                body.append(f"{i3}IDisposable {bare}Lease;")
                body.append(
                    f"{i3}{native} {bare}Native = ((IDescribes<{native}>){n})"
                    f'.Describe("{bare}", {lasting}, out {bare}Lease);'
                )
                leases.append(f"{bare}Lease")
                args.append(f"ref {bare}Native")
            elif role == "struct_in" and p.get("struct") in HAND_STRUCTS:
                bare = n.lstrip("@")
                body.append(f"{i3}{struct_name(p['struct'])} {bare}Native = {n}.ToNative();")
                args.append(f"ref {bare}Native")
                kept.append(f"{i3}{n}.KeepAlive();")
            elif role == "struct_in":
                bare = n.lstrip("@")
                native = struct_name(p["struct"])
                if p.get("nullable"):  # NULL means the defaults: the init's struct
                    made = f'{n} == null ? {native}.Create() : {n}.Value.ToNative("{bare}")'
                else:
                    made = f'{n}.ToNative("{bare}")'
                body.append(f"{i3}{native} {bare}Native = {made};")
                args.append(f"ref {bare}Native")
            elif role == "struct_out":
                bare = n.lstrip("@")
                native = struct_name(p["struct"])
                body.append(f"{i3}{native} {bare}Value = {native}.Create();")
                args.append(f"ref {bare}Value")
            elif role == "out":
                t = p["type"]
                native = self.native_type(t)
                body.append(f"{i3}{native} {n.lstrip('@')}Value;")
                args.append(f"out {n.lstrip('@')}Value")
            elif role == "out_handle":
                pinned = any(q["role"] == "bytes_in" for q in params)  # written in a delegate
                body.append(f"{i3}{self.types.value(p['type'])} made" + (" = null;" if pinned else ";"))
                args.append("out made")
            elif role in ("two_call_buf", "two_call_size"):
                args.append("b" if role == "two_call_buf" else "ref s")
        native_call = f"NativeMethods.{fn['name']}({', '.join(args)})"
        for p in params:
            if p["role"] == "bytes_in" and p.get("packed"):  # the arguments packed (packed_kernel)
                b = camel(p["name"]).lstrip("@")
                native_call = (
                    f"KernelNodes.WithPacked({camel(kernel['name'])}, {camel(p['name'])}, "
                    f"delegate(IntPtr {b}Pointer, UIntPtr {b}Size) {{ return {native_call}; }})"
                )
            elif p["role"] == "bytes_in":  # pinned for the call (bytes_in_before)
                b = camel(p["name"]).lstrip("@")
                native_call = (
                    f"Ipc.Open({camel(p['name'])}, delegate(IntPtr {b}Pointer, UIntPtr {b}Size) "
                    f'{{ return {native_call}; }}, "{b}")'
                )

        def result(p: Dict[str, Any]) -> str:
            v = camel(p["name"]).lstrip("@") + "Value"
            if p["role"] == "struct_out":
                return f"{value_class(p['struct'])}.FromNative(ref {v})"
            if p.get("as_int"):
                wide = p["type"]["base"] in ("size_t", "uintptr_t")
                return f"checked((int){v}.ToUInt64())" if wide else f"checked((int){v})"
            if p["type"]["base"] in ("size_t", "uintptr_t"):
                return f"(long){v}.ToUInt64()"
            if p.get("boolean"):
                return f"{v} != 0"
            return v

        if call in ("string", "blob"):
            reader = "ReadString" if call == "string" else "ReadBlob"
            ret = "string" if call == "string" else "byte[]"
            pre = [f"{i3}var h = Handle;"] if fn.get("receiver") else []
            args2 = [a if a != "Handle" else "h" for a in args]
            native_call = f"NativeMethods.{fn['name']}({', '.join(args2)})"
            body = pre + body
            body.append(
                f"{i3}return Errors.{reader}(delegate(byte[] b, ref UIntPtr s) {{ return {native_call}; }});"
            )
        elif any(p["role"] == "out_handle" for p in params):
            made = next(p for p in params if p["role"] == "out_handle")
            handle_type = made.get("handle_type", made["type"]["base"])
            ret = CLASSES[handle_type][0]
            body.append(f"{i3}Errors.Check({native_call});")
            body.append(f"{i3}return {FACTORIES[handle_type].format('made')};")
        elif fn["returns"]["base"] != "cuabi_status":
            t = fn["returns"]
            if t["base"] == "void" and not t["pointers"]:
                ret = "void"
                body.append(f"{i3}{native_call};")
            elif t["kind"] == "char":
                ret = "string"
                body.append(f"{i3}return Utf8.FromNative({native_call});")
            elif (fn["name"], "") in AS_INT:
                ret = "int"
                body.append(f"{i3}return checked((int){native_call});")
            else:
                ret = self.types.returns(t)
                body.append(f"{i3}return {native_call};")
        elif fn.get("ready_query") and not outs:
            ret = "bool"
            body.append(f"{i3}CudaStatus status = {native_call};")
            body.append(f"{i3}if (status == CudaStatus.NotReady) return false;")
            body.append(f"{i3}Errors.Check(status);")
            body.append(f"{i3}return true;")
        elif fn["name"] in COMPOSED:
            ret = COMPOSED[fn["name"]]
            body.append(f"{i3}Errors.Check({native_call});")
            fields = [f[0] for f in composed_fields(ret, fn, self)] if ret in COMPOSED_TYPES else []
            values = [composed_value(p, result(p), fields[k]) if fields else result(p) for k, p in enumerate(outs)]
            body.append(f"{i3}return new {ret}({', '.join(values)});")
        elif len(outs) == 1:
            ret = self.out_type(outs[0])
            body.append(f"{i3}Errors.Check({native_call});")
            body.append(f"{i3}return {result(outs[0])};")
        elif not outs:
            ret = "void"
            body.append(f"{i3}Errors.Check({native_call});")
            if consumes:
                body.append(f"{i3}h.SetHandleAsInvalid(); // released by the library: closed without a release")
        else:
            ret = "void"
            for p in outs:
                sig.append(f"out {self.out_type(p)} {camel(p['name'])}")
                lines.append(f'{i2}/// <param name="{camel(p["name"]).lstrip("@")}">Its {p["name"]}.</param>')
            body.append(f"{i3}Errors.Check({native_call});")
            for p in outs:
                body.append(f"{i3}{camel(p['name'])} = {result(p)};")
        if kept:
            at = next(i for i, line in enumerate(body) if "NativeMethods." in line)
            body[at + 1 : at + 1] = kept
        if leases:
            # The call runs while the built structs' leases hold what they name.
            at = next(i for i, line in enumerate(body) if "NativeMethods." in line)
            body[at : at + 1] = (
                [f"{i3}try", f"{i3}{{", "    " + body[at], f"{i3}}}", f"{i3}finally", f"{i3}{{"]
                + [f"{i3}    {lease}.Dispose();" for lease in leases]
                + [f"{i3}}}"]
            )
        where = " where T : struct" if generic else ""
        if call == "constructor" and fn.get("receiver"):
            lines.append(f"{i2}public static {ret} {name}{generic}({', '.join(sig)}){where}")
            lines.append(f"{i2}{{")
            lines += body
            lines.append(f"{i2}}}")
            return lines
        if not fn.get("receiver"):
            return lines + self.library_member(fn, ins, ret, name, sig, body, generic)
        prop = fn.get("property") and not ins and ret != "void" and call in ("getter", "string", "blob")
        if prop:
            pname = pascal(fn["property"].split("_"))
            if pname == "Handle":
                pname = "NativeHandle"  # Handle is the SafeHandle
            if fn["name"] in CACHED:
                body = self.cached(body, ret, "cached" + pname, lines)
            lines.append(f"{i2}public {ret} {pname}")
            lines.append(f"{i2}{{")
            lines.append(f"{i3}get")
            lines.append(f"{i3}{{")
            lines += ["    " + b for b in body]
            lines.append(f"{i3}}}")
            lines.append(f"{i2}}}")
        else:
            lines.append(f"{i2}public {ret} {name}{generic}({', '.join(sig)}){where}")
            lines.append(f"{i2}{{")
            lines += body
            lines.append(f"{i2}}}")
        return lines

    def cached(self, body: List[str], ret: str, field: str, lines: List[str]) -> List[str]:
        """A getter of CACHED: its fields (declared into `lines`) and the body
        that calls the library on the first read only. The flag is written
        after the value (Volatile), so a thread that sees it set sees the value."""
        i2, i3 = "        ", "            "
        *call, last = body
        if not last.strip().startswith("return "):
            raise SystemExit(f"regen: csharp: a CACHED getter must end in a return: {last.strip()}")
        value = last.strip()[len("return ") : -1]
        lines[0:0] = [f"{i2}private {ret} {field};", f"{i2}private bool {field}Read;", ""]
        return (
            [f"{i3}handle.ThrowIfClosed(this);", f"{i3}if (!System.Threading.Volatile.Read(ref {field}Read))", f"{i3}{{"]
            + ["    " + b for b in call]
            + [f"{i3}    {field} = {value};", f"{i3}    System.Threading.Volatile.Write(ref {field}Read, true);", f"{i3}}}"]
            + [f"{i3}return {field};"]
        )

    # -- handle plumbing -----------------------------------------------------
    def core(self, handle: str, release: Optional[Dict[str, Any]]) -> List[str]:
        """A class's field `handle`, its constructor from the handle alone
        (FACTORIES; with KEPT_VALUES its kept value), the property `Handle` and
        Dispose() (the release), each unless CORE_BY_HAND writes it."""
        i2, i3 = "        ", "            "
        (cls, decl), safe = CLASSES[handle], handle_class(handle)
        by_hand = CORE_BY_HAND.get(handle, {})
        lines = [f"{i2}private readonly {safe} handle;"]
        if FACTORIES.get(handle) == f"new {cls}({{}})" and handle not in KEPT_VALUES:
            lines += [
                "",
                f"{i2}internal {cls}({safe} handle)",
                f"{i2}{{",
                f"{i3}this.handle = handle;",
                f"{i2}}}",
            ]
        if handle in KEPT_VALUES:
            lines += self.kept_value(handle)
        if "Handle" not in by_hand:
            lines += [
                "",
                doc("The raw handle, for the <see cref=\"NativeMethods\"/> layer.", i2).rstrip("\n"),
                f'{i2}/// <exception cref="ObjectDisposedException">The object was disposed.</exception>',
                f"{i2}public {safe} Handle",
                f"{i2}{{",
                f"{i3}get {{ handle.ThrowIfClosed(this); return handle; }}",
                f"{i2}}}",
            ]
        lines += [
            "",
            doc("The object's handle, or the NULL handle for null (where the library takes NULL).", i2).rstrip("\n"),
            f"{i2}internal static {safe} HandleOf({cls}{'<T>' if '<T>' in decl else ''} value)",
            f"{i2}{{",
            f"{i3}return value == null ? {safe}.Null : value.Handle;",
            f"{i2}}}",
        ]
        if handle in ARGUMENT_OBJECTS:
            value, what = ARGUMENT_OBJECTS[handle]
            for ret, member, result in (
                ("ulong", "LaunchValue", value),
                ("System.Runtime.InteropServices.SafeHandle", "Lifetime", "handle"),
                ("string", "What", f'"{what}"'),
            ):
                lines += ["", f"{i2}{ret} IArgumentObject.{member}", f"{i2}{{", f"{i3}get {{ return {result}; }}", f"{i2}}}"]
        if "Dispose" not in by_hand:
            if release is None:
                raise SystemExit(f"regen: csharp: {handle} has no release function for Dispose()")
            summary = f"{release['doc']} ({release['name']})" if release["doc"] else release["name"]
            lines += [
                "",
                doc(summary, i2).rstrip("\n"),
                f"{i2}/// <remarks>Once disposed, or once the library released the handle, "
                "Dispose does nothing.</remarks>",
                f"{i2}public void Dispose()",
                f"{i2}{{",
                f"{i3}handle.Dispose();",
                f"{i2}}}",
            ]
        return lines

    def kept_value(self, handle: str) -> List[str]:
        """The constructor of a class of KEPT_VALUES, the field it fills and a property per field."""
        i2, i3, i4 = "        ", "            ", "                "
        cls, safe = CLASSES[handle][0], handle_class(handle)
        getter, types = KEPT_VALUES[handle]
        fn = self.functions[getter]
        prop = pascal(fn["property"].split("_"))
        out = next(p for p in fn["params"] if p.get("role") in ("out", "struct_out"))
        struct = out.get("struct") if out["role"] == "struct_out" else None
        value = value_class(struct) if struct else self.out_type(out)
        # A value struct through its generated property; a scalar, whose
        # property is this kept value, from the library here.
        read = [f"{i4}kept = {prop};"] if struct else [
            f"{i4}{value} value;",
            f"{i4}Errors.Check(NativeMethods.{getter}(handle, out value));",
            f"{i4}kept = value;",
        ]
        lines = [
            "",
            f"{i2}private readonly {value} kept; // read once: {getter}",
            "",
            f"{i2}internal {cls}({safe} handle)",
            f"{i2}{{",
            f"{i3}this.handle = handle;",
            f"{i3}try",
            f"{i3}{{",
            *read,
            f"{i3}}}",
            f"{i3}catch",
            f"{i3}{{",
            f"{i4}handle.Dispose();",
            f"{i4}throw;",
            f"{i3}}}",
            f"{i2}}}",
        ]
        if not struct:
            text = f"{fn['doc']} Read once, when made. ({getter})" if fn["doc"] else getter
            return lines + ["", doc(text, i2).rstrip("\n"), f"{i2}public {value} {prop}", f"{i2}{{",
                            f"{i3}get {{ return kept; }}", f"{i2}}}"]
        for f in self.values[struct]["fields"][1:]:
            name = pascal(f["name"].split("_"))  # as the value struct names it
            cast = f"({types[f['name']]})" if f["name"] in types else ""
            ctype = types.get(f["name"]) or self.public_type(f["type"])
            lines += [
                "",
                doc(f"{f['name']}: {f['doc']}" if f["doc"] else f["name"], i2).rstrip("\n"),
                f"{i2}public {ctype} {name}",
                f"{i2}{{",
                f"{i3}get {{ return {cast}kept.{name}; }}",
                f"{i2}}}",
            ]
        return lines

    # -- scopes --------------------------------------------------------------
    def scope_class(self, fn: Dict[str, Any], closer: Dict[str, Any]) -> List[str]:
        """The IDisposable class of a scope (the model's `scope` of `fn`): its
        constructor takes the opening call's arguments and calls the opening
        call's generated member, keeping the arguments the closing call takes;
        Close() calls the closing call's generated member once and throws its
        failure; Dispose() does the same, once, and ignores a failure."""
        i1, i2, i3 = "    ", "        ", "            "
        scope = fn["scope"]
        cls = pascal(scope["name"].split("_"))
        where = f"regen: csharp: the scope {scope['name']} of {fn['name']}"
        for f in (fn, closer):
            reason = skip_reason(f, self.values)
            if reason is not None:
                raise SystemExit(f"{where}: {f['name']} has no generated member ({reason})")
            if f["call"] == "constructor":
                raise SystemExit(f"{where}: {f['name']} is a constructor")
        # The receiver of a method is one more argument: the object, first.
        params = [dict(p, role="handle") if p["role"] == "receiver" else p for p in fn["params"]]
        ins = [p for p in params if p["role"] in ("in", "handle", "string_in", "struct_in", "array_in", "bytes_in")]
        if len(ins) != len(params):
            raise SystemExit(f"{where}: an opening call with outputs")
        sig, generic = self.in_signature(ins, [])
        if generic:
            raise SystemExit(f"{where}: a PinnedBuffer<T> argument (a generic scope class)")
        types = {}
        for p, text in zip(ins, sig):
            types[p["name"]] = text.split(" = ")[0].rsplit(" ", 1)[0]

        def call(f: Dict[str, Any], names: List[str]) -> str:
            """The generated member of `f` called with the C# arguments `names`."""
            if not f.get("receiver"):
                return f"Cuda.{member_name(f)}({', '.join(camel(n) for n in names)})"
            rest = [camel(n) for n in names if n != f["receiver"]]
            return f"{camel(f['receiver'])}.{member_name(f)}({', '.join(rest)})"

        opening = call(fn, [p["name"] for p in fn["params"]])
        keeps = [p["name"] for p in closer["params"]]
        closing = call(closer, keeps)
        kept_objects = [n for n in keeps if next(p for p in ins if p["name"] == n)["role"] == "handle"]
        opener_ref = f"Cuda.{member_name(fn)}" if not fn.get("receiver") else None
        if fn.get("receiver"):
            recv = next(p for p in params if p["name"] == fn["receiver"])
            opener_ref = f"{CLASSES[recv.get('handle_type', recv['type']['base'])][0]}.{member_name(fn)}"
        if closer.get("receiver"):
            recv = next(p for p in closer["params"] if p["name"] == closer["receiver"])
            closer_ref = f"{CLASSES[recv.get('handle_type', recv['type']['base'])][0]}.{member_name(closer)}"
        else:
            closer_ref = f"Cuda.{member_name(closer)}"
        kept_text = ", ".join(f"<c>{camel(n).lstrip('@')}</c>" for n in keeps) or "nothing"
        lines: List[str] = []
        summary = "\n".join(
            textwrap.wrap(
                f"A scope of {fn['name']}: made, it opens with {fn['name']}; disposed, it closes "
                f"with {closer['name']}, once.",
                76,
            )
        )
        if fn["doc"]:
            summary += "\n" + fn["doc"]
        lines.append(doc(summary, i1).rstrip("\n"))
        remarks = (
            f"For a using block: <c>using (new {cls}(...)) {{ ... }}</c>. The constructor calls "
            f'<see cref="{opener_ref}"/> and keeps {kept_text} for <see cref="{closer_ref}"/>. '
            f'<see cref="Close"/> closes the scope early and throws the <see cref="CudaException"/> '
            f'of a failing {closer["name"]}. <see cref="Dispose"/> closes it if it is still open '
            f"and never throws: a failure of {closer['name']} there is ignored (Dispose runs while "
            f"the using block is left, where an exception would replace the one leaving it; call "
            f"Close to see the failure). After the first Close or Dispose, both do nothing, also "
            f"when the closing call failed. There is no finalizer: a scope never closed stays open."
        )
        lines += tagged_doc(remarks, i1, "remarks")
        lines.append(f"{i1}public sealed class {cls} : IDisposable")
        lines.append(f"{i1}{{")
        for n in keeps:
            lines.append(f"{i2}private readonly {types[n]} {camel(n)};")
        lines.append(f"{i2}private int closed;")
        lines.append("")
        lines += tagged_doc(
            f'Opens the scope: <see cref="{opener_ref}"/> ({fn["name"]}) with these arguments.', i2
        )
        lines += self.in_docs(ins, i2)
        lines.append(
            f'{i2}/// <exception cref="CudaException">{fn["name"]} failed: no scope is open.</exception>'
        )
        lines.append(f"{i2}public {cls}({', '.join(sig)})")
        lines.append(f"{i2}{{")
        if fn.get("receiver"):
            n = camel(fn["receiver"])
            lines.append(f'{i3}if ({n} == null) throw new ArgumentNullException("{n.lstrip("@")}");')
        lines.append(f"{i3}{opening};")
        for n in keeps:
            lines.append(f"{i3}this.{camel(n)} = {camel(n)};")
        lines.append(f"{i2}}}")
        lines.append("")
        lines += tagged_doc(
            f"Closes the scope now ({closer['name']}) unless it is closed already; a failure "
            "throws, and the scope counts as closed all the same.",
            i2,
        )
        lines.append(
            f'{i2}/// <exception cref="CudaException">{closer["name"]} failed, with the library\'s message.</exception>'
        )
        lines.append(f"{i2}public void Close()")
        lines.append(f"{i2}{{")
        lines.append(f"{i3}if (System.Threading.Interlocked.Exchange(ref closed, 1) != 0) return;")
        lines.append(f"{i3}{closing};")
        lines.append(f"{i2}}}")
        lines.append("")
        lines += tagged_doc(
            f"Closes the scope ({closer['name']}) unless it is closed already; never throws: a "
            "failure is ignored (Close reports it).",
            i2,
        )
        lines.append(f"{i2}public void Dispose()")
        lines.append(f"{i2}{{")
        lines.append(f"{i3}if (System.Threading.Interlocked.Exchange(ref closed, 1) != 0) return;")
        lines.append(f"{i3}try")
        lines.append(f"{i3}{{")
        lines.append(f"{i3}    {closing};")
        lines.append(f"{i3}}}")
        lines.append(f"{i3}catch (CudaException)")
        lines.append(f"{i3}{{")
        lines.append(f"{i3}    // Ignored: Close() reports it.")
        lines.append(f"{i3}}}")
        if kept_objects:
            lines.append(f"{i3}catch (ObjectDisposedException)")
            lines.append(f"{i3}{{")
            lines.append(f"{i3}    // A kept object disposed before the scope: nothing left to close.")
            lines.append(f"{i3}}}")
        lines.append(f"{i2}}}")
        lines.append(f"{i1}}}")
        return lines

    def library_member(
        self,
        fn: Dict[str, Any],
        ins: List[Dict[str, Any]],
        ret: str,
        name: str,
        sig: List[str],
        body: List[str],
        generic: str = "",
    ) -> List[str]:
        """A static member of Cuda: it loads the library, then calls a separate,
        non-inlined method holding the native call (Mono binds a method's native
        calls when it compiles the method)."""
        i2, i3 = "        ", "            "
        # Each parameter's name, passed on (a default value left out).
        args = ", ".join(("out " if a.startswith("out ") else "") + a.split("=")[0].split()[-1] for a in sig)
        call = f"{name}Core{generic}({args})"
        where = " where T : struct" if generic else ""
        lines: List[str] = []
        prop = not generic and not ins and ret != "void"
        prop = prop and ("_get_" in fn["name"] or fn["returns"]["base"] != "cuabi_status")
        if prop:
            lines.append(f"{i2}public static {ret} {name}")
            lines.append(f"{i2}{{")
            lines.append(f"{i3}get {{ CuabiLibrary.Load(); return {call}; }}")
            lines.append(f"{i2}}}")
        else:
            lines.append(f"{i2}public static {ret} {name}{generic}({', '.join(sig)}){where}")
            lines.append(f"{i2}{{")
            lines.append(f"{i3}CuabiLibrary.Load();")
            lines.append(f"{i3}{'return ' if ret != 'void' else ''}{call};")
            lines.append(f"{i2}}}")
        lines.append("")
        lines.append(f"{i2}[MethodImpl(MethodImplOptions.NoInlining)]")
        lines.append(f"{i2}private static {ret} {name}Core{generic}({', '.join(sig)}){where}")
        lines.append(f"{i2}{{")
        lines += body
        lines.append(f"{i2}}}")
        return lines


def objects(model: Dict[str, Any]) -> str:
    em = Emitter(model)
    by_class: Dict[str, List[List[str]]] = {h: [] for h in CLASSES}
    skipped: List[Tuple[str, str]] = []
    library: List[List[str]] = []
    taken = {c[0] for c in CLASSES.values()} | set(em.types.enums.values()) | {"Cuda"}
    for s in em.values.values():
        if value_class(s["name"]) in taken:
            raise SystemExit(f"regen: csharp: the value type of {s['name']} would be named like another type")
    by_name = {fn["name"]: fn for fn in model["functions"]}
    scopes: List[Tuple[str, Dict[str, Any], List[str]]] = []  # (class, opener, its lines)
    for fn in model["functions"]:
        if not fn.get("scope"):
            continue
        cls = pascal(fn["scope"]["name"].split("_"))
        if cls in taken or cls in {value_class(s) for s in em.values}:
            raise SystemExit(f"regen: csharp: the scope {fn['scope']['name']} would be named like another type")
        taken.add(cls)
        scopes.append((cls, fn, em.scope_class(fn, by_name[fn["scope"]["closer"]])))
    typed_statics: List[List[str]] = []  # the static members of TYPED_BUFFERS
    releases: Dict[str, Dict[str, Any]] = {}  # each handle type's release function
    for fn in model["functions"]:
        if fn.get("releases") and fn.get("receiver"):
            recv = next(p for p in fn["params"] if p["name"] == fn["receiver"])
            releases[recv["type"]["base"]] = fn
    for fn in model["functions"]:
        released = next((h for h, r in releases.items() if r is fn), None)
        if released in CLASSES:
            if "Dispose" in CORE_BY_HAND.get(released, {}):
                skipped.append((fn["name"], CORE_BY_HAND[released]["Dispose"]))
            continue  # otherwise the class's generated Dispose()
        if fn["name"] in BATCHES:
            by_class[fn["params"][0]["type"]["base"]].append(batch_member(fn, em))
            continue
        if fn["name"] in TYPED_BUFFERS and TYPED_BUFFERS[fn["name"]][4:] == ("static",):
            typed_statics.append(typed_buffer(fn, em.types))
            continue
        if fn["name"] in TYPED_BUFFERS:
            by_class[fn["params"][0]["type"]["base"]].append(typed_buffer(fn, em.types))
            continue
        reason = skip_reason(fn, em.values)
        member: List[str] = []
        if reason is None:
            member = em.member(fn)
            if not member:
                reason = "a handle argument of a generic class"
        if reason is not None:
            skipped.append((fn["name"], reason))
            continue
        for where, lines in aliases(fn, member, em) if fn["name"] in ALIASES else []:
            by_class[where].append(lines)
        if fn["name"] in LONG_PROPERTIES.values():
            getter = next(g for g, s in LONG_PROPERTIES.items() if s == fn["name"])
            by_class[fn["params"][0]["type"]["base"]].append(long_property(by_name[getter], fn))
        if fn["name"] in FIELD_PARAMS:
            where, lines = field_params(fn, em)
            by_class[where].append(lines)
        if fn["name"] in TASKS:
            by_class[fn["params"][0]["type"]["base"]].append(task_member(fn))
        if fn["call"] == "constructor":
            made = next(p for p in fn["params"] if p["role"] == "out_handle")
            by_class[made.get("handle_type", made["type"]["base"])].append(member)
            continue
        if not fn.get("receiver"):
            owner = static_owner(fn)
            (by_class[owner] if owner else library).append(member)
            continue
        recv = next(p for p in fn["params"] if p["name"] == fn["receiver"])
        by_class[recv["type"]["base"]].append(member)
    out = banner("//")
    out += (
        "// The plain object layer of the C# binding: for each function of cuabi.h\n"
        "// with known roles, a member of a partial part of its object's class\n"
        "// (scripts/regen_api/csharp_objects.py says how they are formed).\n"
        "//\n"
        "// Written by hand elsewhere in the binding:\n"
    )
    for name, reason in skipped:
        out += f"//   {name}: {reason}\n"
    if scopes:
        out += "//\n// Scopes (IDisposable classes: made, they open; disposed, they close):\n"
        for cls, fn, _ in scopes:
            out += f"//   {cls}: {fn['name']}, closed by {fn['scope']['closer']}\n"
    out += (
        "\nusing System;\nusing System.Collections.Generic;\nusing System.Globalization;\nusing System.Runtime.CompilerServices;\n"
        "using Cuabi.Interop;\n\nnamespace Cuabi\n{\n"
    )
    parts = ["\n".join(em.value_type(s)) + "\n" for s in em.values.values()]
    parts += ["\n".join(lines) + "\n" for _, _, lines in scopes]
    parts += [composed_type(name, by_name[spec[0]], em) for name, spec in COMPOSED_TYPES.items()]
    parts += flag_properties(model)
    parts += struct_fields(model, em.types)
    parts += field_classes(model, em.types)
    ranges, memory = whole_ranges(model, em.types)
    parts += ranges
    parts += whole_forms()
    parts.append(plan_setters())
    parts.append(whole_copies(model))
    parts += built_calls(model)
    if typed_statics:
        text = "\n\n".join("\n".join(m) for m in typed_statics)
        parts.append(f"    public sealed partial class DeviceBuffer<T> where T : struct\n    {{\n{text}\n    }}\n")
    by_class["cuabi_buffer"] += memory
    if library:
        text = "    public static partial class Cuda\n    {\n"
        text += "\n\n".join("\n".join(m) for m in library) + "\n"
        text += "    }\n"
        parts.append(text)
    for handle, members in by_class.items():
        members.insert(0, em.core(handle, releases.get(handle)))
        bases = "IDisposable, IArgumentObject" if handle in ARGUMENT_OBJECTS else "IDisposable"
        decl = CLASSES[handle][1] + " : " + bases
        if " where " in decl:  # a generic class: its interfaces before its constraint
            head, where = CLASSES[handle][1].split(" where ", 1)
            decl = f"{head} : {bases} where {where}"
        text = f"    {decl}\n    {{\n"
        text += "\n\n".join("\n".join(m) for m in members) + "\n"
        text += "    }\n"
        parts.append(text)
    out += "\n".join(parts)
    out += "}\n"
    return out


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    return {OUT: objects(model)}
