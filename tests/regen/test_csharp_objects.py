"""Roles of the C# object layer (scripts/regen_api/csharp_objects.py): the
flag properties (FLAG_PROPERTIES: each bit of a flag set a hand-written type
holds is a bool property of that type, from the model's bits alone) and the
hand-written struct types (HAND_STRUCTS: a LaunchConfig argument; STRUCT_FIELDS:
its fields and conversions), the option classes (FIELD_CLASSES: a run of a
struct's fields), the kept values (KEPT_VALUES: a CudaArray's shape), a
copy's two ends (SetEnd of Structs.g.cs), arrays of numbers in, the second
public forms of generated members (ALIASES), typed buffers (TYPED_BUFFERS),
the value types made of a getter's out-values (COMPOSED_TYPES), a launch
plan's setters (PLAN_SETTERS), Task forms (TASKS), long
properties (LONG_PROPERTIES), parameter names (PARAM_NAMES), sizes checked
as the binding checks them (NOT_NEGATIVE), calls of a built struct
(BUILT_CALLS), whole-buffer copies (WHOLE_COPIES), a value struct's fields as
parameters (FIELD_PARAMS), batches (BATCHES), kernels' packed arguments
(packed_kernel) and NULLs the library refuses (LIBRARY_NULLS).

  python3 tests/regen/test_csharp_objects.py
"""

from __future__ import annotations

import unittest

import regen_paths  # noqa: F401 (puts the generators on sys.path)

import csharp_objects  # noqa: E402
import model  # noqa: E402


class FlagProperties(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe()
        cls.text = "".join(csharp_objects.flag_properties(cls.d))

    def test_every_bit_is_a_bool_property(self):
        self.assertIn("    public partial struct LaunchConfig\n", self.text)
        for name in ("Cooperative", "ProgrammaticSerialization", "ProgrammaticEventAtBlockStart",
                     "DeviceUpdatableKernelNode"):
            self.assertIn(f"        public bool {name}\n", self.text)
        self.assertIn("get { return (flags & LaunchFlags.Cooperative) != 0; }", self.text)
        self.assertIn("set { Flags = value ? Flags | MemoryPoolFlags.Ipc : Flags & ~MemoryPoolFlags.Ipc; }", self.text)

    def test_a_bit_the_header_adds_becomes_a_property(self):
        d = dict(self.d, enums=[dict(e) for e in self.d["enums"]])
        bits = next(e for e in d["enums"] if e["name"] == "cuabi_memory_pool_flag_bits")
        bits["values"] = bits["values"] + [{"name": "CUABI_MEMORY_POOL_SHARED", "value": 2, "doc": "Shared."}]
        text = "".join(csharp_objects.flag_properties(d))
        self.assertIn("        /// <summary>Shared.</summary>\n        public bool Shared\n", text)

    def test_an_unknown_flag_set_stops_regen(self):
        d = dict(self.d, enums=[e for e in self.d["enums"] if e["name"] != "cuabi_launch_flag_bits"])
        with self.assertRaises(SystemExit) as caught:
            csharp_objects.flag_properties(d)
        self.assertIn("cuabi_launch_flag_bits", str(caught.exception))


class HandStructs(unittest.TestCase):
    def test_a_launch_config_argument_is_converted_and_kept_alive(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_function_get_max_cluster_size")
        text = "\n".join(csharp_objects.Emitter(d).member(fn))
        self.assertIn("public int GetMaxClusterSize(LaunchConfig config)", text)
        call = text.index("NativeMethods.cuabi_function_get_max_cluster_size(Handle, ref configNative")
        self.assertLess(text.index("LaunchConfigNative configNative = config.ToNative();"), call)
        self.assertGreater(text.index("config.KeepAlive();"), call)
        self.assertIsNone(csharp_objects.skip_reason(fn, csharp_objects.value_structs(d)))


class StructFields(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe()
        cls.text = "".join(csharp_objects.struct_fields(cls.d, csharp_objects.Emitter(cls.d).types))

    def test_fields_are_properties_with_their_conversions(self):
        self.assertIn("    public partial struct LaunchConfig\n", self.text)
        self.assertIn("        public Dim3 Grid { get; set; }\n", self.text)  # grid_x, grid_y, grid_z
        self.assertIn("        public uint SharedMemoryBytes { get; set; }\n", self.text)  # renamed
        self.assertIn("        public CudaEvent ProgrammaticEvent { get; set; }\n", self.text)
        self.assertIn("        private LaunchFlags flags;\n", self.text)  # FLAG_PROPERTIES's member
        self.assertIn("            c.grid_y = Grid.Y;\n", self.text)
        self.assertIn("            made.Cluster = new Dim3(c.cluster_x, c.cluster_y, c.cluster_z);\n", self.text)
        self.assertIn("            GC.KeepAlive(CompletionEvent);\n", self.text)
        self.assertIn("LaunchAttributes.Same(attributes, other.attributes);", self.text)

    def test_held_fields_live_in_the_holder(self):
        self.assertIn("    internal sealed class LaunchAttributes\n", self.text)
        self.assertIn("        public AccessPolicyWindow? AccessPolicyWindow;\n", self.text)
        self.assertIn("        public ClusterSchedulingPolicy ClusterScheduling;\n", self.text)  # plain
        self.assertIn("                c.mem_sync_domain = (int)MemSyncDomain.Value;\n", self.text)  # retyped
        self.assertIn("            set { Writable().SharedCarveout = value; }\n", self.text)

    def test_a_field_the_header_adds_becomes_a_property(self):
        d = dict(self.d, structs=[dict(s) for s in self.d["structs"]])
        s = next(s for s in d["structs"] if s["name"] == "cuabi_launch_config")
        int32 = {"c": "int32_t", "base": "int32_t", "kind": "int", "const": False, "pointers": []}
        s["fields"] = s["fields"] + [{"name": "spin_count", "type": int32, "doc": "Spins."}]
        text = "".join(csharp_objects.struct_fields(d, csharp_objects.Emitter(d).types))
        self.assertIn("        public int? SpinCount\n", text)
        self.assertIn("                c.spin_count = SpinCount.Value;\n", text)
        self.assertIn("a.SpinCount == b.SpinCount", text)
        self.assertNotIn("SpinCount != 0", text)  # held: IsExtended tests the holder

    def test_is_extended_tests_every_field_from_flags_on(self):
        self.assertIn("        internal bool IsExtended\n", self.text)
        tests = ("flags != 0", "Cluster.Z != 0", "Priority != 0", "ProgrammaticEvent != null", "attributes != null")
        for test in tests:
            self.assertIn(test, self.text)
        self.assertNotIn("SharedMemoryBytes != 0", self.text)  # before flags


class FieldClasses(unittest.TestCase):
    def test_a_run_of_fields_is_properties_and_write_to(self):
        d = model.describe()
        text = "".join(csharp_objects.field_classes(d, csharp_objects.Emitter(d).types))
        self.assertIn("    public sealed partial class TextureOptions\n", text)
        self.assertIn("        public AddressMode AddressZ { get; set; }\n", text)
        self.assertIn("        public float BorderRed { get; set; }\n", text)  # renamed
        self.assertIn("            d.normalized_coords = NormalizedCoordinates ? 1u : 0u;\n", text)  # uint32_t bool
        self.assertIn("            d.relocatable = Rdc ? 1 : 0;\n", text)  # int32_t bool
        self.assertNotIn("d.channels", text)  # before the run
        self.assertIn("internal void WriteTo(ref CompileDescNative d)", text)


class KeptValues(unittest.TestCase):
    def test_a_kept_value_is_read_once_and_its_fields_are_properties(self):
        d = model.describe()
        text = "\n".join(csharp_objects.Emitter(d).core("cuabi_array", {"name": "cuabi_array_release", "doc": ""}))
        self.assertIn("private readonly ArrayDesc kept; // read once: cuabi_array_get_desc", text)
        self.assertIn("                kept = Desc;\n", text)
        self.assertIn("                handle.Dispose();\n", text)
        self.assertIn("        public int Channels\n", text)
        self.assertIn("get { return (int)kept.Channels; }", text)
        self.assertIn("        public long Depth\n", text)


class EndSetter(unittest.TestCase):
    def test_paired_src_and_dst_fields_get_set_end(self):
        import csharp  # noqa: E402

        d = model.describe()
        types = csharp.Types(d)
        structs = {s["name"]: s for s in d["structs"]}
        text = csharp.end_setter(structs["cuabi_copy_3d_desc"], types)
        self.assertIn("public void SetEnd(bool destination, IntPtr host, IntPtr buffer, IntPtr array, UIntPtr xBytes,",
                      text)
        self.assertIn("                dst_x_bytes = xBytes;\n", text)
        self.assertIn("                src_height = height;\n", text)
        self.assertEqual(csharp.end_setter(structs["cuabi_launch_config"], types), "")


class NumericArrays(unittest.TestCase):
    def test_an_array_of_sizes_is_a_long_array(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_tensor_map_encode_tiled")
        self.assertIsNone(csharp_objects.skip_reason(fn, csharp_objects.value_structs(d)))
        text = "\n".join(csharp_objects.Emitter(d).member(fn))
        self.assertIn("long[] sizes, long[] strides, long[] box, long[] elementStrides = null,", text)
        self.assertIn('if (sizes == null) throw new ArgumentNullException("sizes");', text)
        self.assertIn('throw new ArgumentOutOfRangeException("box[" + i + "]"', text)
        self.assertIn("elementStrides = elementStrides ?? new long[0];", text)
        self.assertIn("sizesValues, (UIntPtr)(uint)sizes.Length,", text)

    def test_an_array_of_ints_is_passed_as_it_is(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_tensor_map_encode_im2col")
        text = "\n".join(csharp_objects.Emitter(d).member(fn))
        self.assertIn("int[] lowerCorner", text)
        self.assertIn("lowerCorner, (UIntPtr)(uint)lowerCorner.Length,", text)


class Aliases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe()
        cls.em = csharp_objects.Emitter(cls.d)
        cls.fns = {f["name"]: f for f in cls.d["functions"]}

    def made(self, name):
        fn = self.fns[name]
        made = {}
        for where, lines in csharp_objects.aliases(fn, self.em.member(fn), self.em):
            made[where] = made.get(where, "") + "\n".join(lines)
        return made

    def test_a_constructor_is_a_member_of_the_object_it_is_made_from(self):
        text = self.made("cuabi_stream_create")["cuabi_device"]
        self.assertIn("public CudaStream CreateStream(StreamFlags flags = StreamFlags.None, int priority = 0)", text)
        self.assertIn("return CudaStream.Create(this, flags, priority);", text)
        self.assertIn("(cuabi_stream_create)", text)  # the header's documentation

    def test_parameters_in_another_order_with_defaults(self):
        text = self.made("cuabi_linker_add_data")["cuabi_linker"]
        self.assertIn("public void AddData(byte[] data, LinkInput kind = LinkInput.Auto, string name = null)", text)
        self.assertIn("            AddData(kind, data, name);", text)

    def test_another_receiver_is_refused_when_null(self):
        text = self.made("cuabi_event_get_elapsed_ms")["cuabi_event"]
        self.assertIn("public float ElapsedSince(CudaEvent start)", text)
        self.assertIn('if (start == null) throw new ArgumentNullException("start");', text)
        self.assertIn("return start.GetElapsedMs(this);", text)
        self.assertIn("public static float ElapsedMilliseconds(CudaEvent start, CudaEvent end)", text)
        self.assertIn('/// <param name="start">The start argument.</param>', text)

    def test_a_renamed_parameter_and_a_library_calls_are_refused_here_when_null(self):
        text = self.made("cuabi_buffer_get_copy_path")["cuabi_buffer"]
        self.assertIn("public CopyPath GetCopyPathFrom(DeviceMemory source)", text)
        self.assertIn('if (source == null) throw new ArgumentNullException("source");', text)
        self.assertIn("return GetCopyPath(source);", text)
        self.assertIn('<param name="source">', text)
        text = self.made("cuabi_library_load_data")["cuabi_library"]
        self.assertIn("public static CudaLibrary Load(byte[] image)", text)
        self.assertIn('if (image == null) throw new ArgumentNullException("image");', text)

    def test_constant_arguments_and_an_array_defaulting_to_no_elements(self):
        text = self.made("cuabi_tensor_map_encode_im2col")["cuabi_tensor_map"]
        self.assertIn("uint pixelsPerColumn, long[] elementStrides = null, TensorSwizzle swizzle = TensorSwizzle.None)", text)
        self.assertIn("strides, elementStrides ?? new long[0], lowerCorner,", text)
        self.assertIn("TensorInterleave.None, swizzle, TensorL2Promotion.None, TensorOobFill.Zero);", text)
        self.assertNotIn('name="interleave"', text)

    def test_parameters_refused_here_when_negative_and_ints(self):
        text = self.made("cuabi_function_get_active_blocks_per_sm")["cuabi_function"]
        self.assertIn("public int GetActiveBlocksPerMultiprocessor(int blockSize, long dynamicSharedBytes = 0)", text)
        self.assertIn('return checked((int)GetActiveBlocksPerSm((uint)Ranges.NotNegative(blockSize, "blockSize"), '
                      'Ranges.NotNegative(dynamicSharedBytes, "dynamicSharedBytes")));', text)
        text = self.made("cuabi_function_suggest_block_size")["cuabi_function"]
        self.assertIn("public BlockSizeSuggestion SuggestBlockSize(long sharedBytesPerBlock = 0, "
                      "long sharedBytesPerThread = 0, int blockSizeLimit = 0)", text)
        self.assertIn('(uint)Ranges.NotNegative(blockSizeLimit, "blockSizeLimit"), out blockSize, out minGridSize);', text)
        self.assertIn("return new BlockSizeSuggestion(checked((int)blockSize), checked((int)minGridSize));", text)

    def test_a_property_is_read_and_a_property_alias_reads(self):
        self.assertIn("return DefaultMemoryPool;", self.made("cuabi_device_get_default_memory_pool")["cuabi_device"])
        text = self.made("cuabi_stream_query")["cuabi_stream"]
        self.assertIn("public bool IsComplete\n        {\n            get\n", text)
        self.assertIn("return Query();", text)


class TypedBuffers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe()
        cls.types = csharp_objects.Emitter(cls.d).types
        cls.fns = {f["name"]: f for f in cls.d["functions"]}

    def text(self, name):
        return "\n".join(csharp_objects.typed_buffer(self.fns[name], self.types))

    def test_the_address_comes_from_the_same_call(self):
        text = self.text("cuabi_buffer_alloc_with_pointer")
        self.assertIn("public DeviceBuffer<T> Allocate<T>(long count) where T : struct", text)
        self.assertIn("cuabi_buffer_alloc_with_pointer(Handle, countBytes, out h, out ptr));", text)
        self.assertIn("return new DeviceBuffer<T>(h, ptr, count);", text)

    def test_parameters_in_another_order_and_nullable_handles(self):
        text = self.text("cuabi_buffer_alloc_async_with_pointer")
        self.assertIn("AllocateAsync<T>(long count, CudaStream stream, MemoryPool pool = null)", text)
        self.assertIn("MemoryPool.HandleOf(pool), CudaStream.HandleOf(stream), out h, out ptr)", text)
        self.assertLess(text.index('<param name="stream">'), text.index('<param name="pool">'))

    def test_a_static_member_of_the_buffer_pins_the_bytes_after_reading_the_handles(self):
        text = self.text("cuabi_buffer_open_ipc")
        self.assertIn("public static DeviceBuffer<T> OpenIpc(Device device, byte[] handle, MemoryPool pool = null)", text)
        self.assertNotIn("typeparam", text)
        self.assertLess(text.index("var poolHandle = MemoryPool.HandleOf(pool);"), text.index("Ipc.Open(handle,"))
        self.assertIn("cuabi_buffer_open_ipc(deviceHandle, poolHandle, bytes, size, out h); }, \"handle\"));", text)

    def test_an_address_in_is_the_buffers_address(self):
        text = self.text("cuabi_buffer_wrap")
        self.assertIn("public static DeviceBuffer<T> Wrap(Device device, ulong devicePointer, long count)", text)
        self.assertIn("cuabi_buffer_wrap(device.Handle, devicePointer, countBytes, out h));", text)
        self.assertIn("return new DeviceBuffer<T>(h, devicePointer, count);", text)

    def test_pinned_host_memory_is_a_pinned_buffer(self):
        text = self.text("cuabi_host_buffer_alloc")
        self.assertIn("public PinnedBuffer<T> AllocatePinned<T>(long count) where T : struct", text)
        self.assertIn("SafeHostBufferHandle h;", text)
        self.assertIn("return new PinnedBuffer<T>(h, count);", text)


class ComposedTypes(unittest.TestCase):
    def test_the_type_is_made_from_the_getters_out_values(self):
        d = model.describe()
        fns = {f["name"]: f for f in d["functions"]}
        em = csharp_objects.Emitter(d)
        text = csharp_objects.composed_type("MemoryPoolUsage", fns["cuabi_memory_pool_get_usage"], em)
        self.assertIn("    public struct MemoryPoolUsage\n", text)
        self.assertIn("public MemoryPoolUsage(long reservedBytes, long usedBytes)", text)
        self.assertIn("public long UsedBytes { get; private set; }", text)
        self.assertIn('return UsedBytes + " of " + ReservedBytes + " reserved bytes used";', text)
        member = "\n".join(em.member(fns["cuabi_device_get_compute_capability"]))
        self.assertIn("return new ComputeCapability(majorValue, minorValue);", member)

    def test_fields_of_another_type_or_name_and_no_to_string(self):
        d = model.describe()
        fns = {f["name"]: f for f in d["functions"]}
        em = csharp_objects.Emitter(d)
        text = csharp_objects.composed_type("ModuleGlobal", fns["cuabi_module_get_global"], em)
        self.assertIn("public ModuleGlobal(ulong devicePointer, long sizeInBytes)", text)
        self.assertIn("public long SizeInBytes { get; private set; }", text)
        self.assertNotIn("ToString", text)
        text = csharp_objects.composed_type("BlockSizeSuggestion", fns["cuabi_function_suggest_block_size"], em)
        self.assertIn("public BlockSizeSuggestion(int blockSize, int minGridSize)", text)

    def test_a_composed_method_over_a_members_out_values(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_module_get_global")
        em = csharp_objects.Emitter(d)
        [(where, lines)] = csharp_objects.aliases(fn, em.member(fn), em)
        text = "\n".join(lines)
        self.assertIn("public ModuleGlobal GetGlobal(string name)", text)
        self.assertIn("GetGlobal(name, out devicePtr, out bytes);", text)
        self.assertIn("return new ModuleGlobal(devicePtr, bytes);", text)

    def test_a_composed_property_over_a_members_out_values(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_memory_pool_get_usage")
        em = csharp_objects.Emitter(d)
        [(where, lines)] = csharp_objects.aliases(fn, em.member(fn), em)
        text = "\n".join(lines)
        self.assertEqual(where, "cuabi_memory_pool")
        self.assertIn("public MemoryPoolUsage Usage", text)
        self.assertIn("GetUsage(out reservedBytes, out usedBytes);", text)
        self.assertIn("return new MemoryPoolUsage(checked((long)reservedBytes), checked((long)usedBytes));", text)


class PlanSetters(unittest.TestCase):
    def test_each_argument_object_has_a_setter(self):
        text = csharp_objects.plan_setters()
        self.assertIn("    public sealed partial class LaunchPlan\n", text)
        self.assertIn("public void Set(int index, DeviceMemory buffer)", text)
        self.assertIn('SetObject(index, buffer, "buffer", "; set IntPtr.Zero for a NULL pointer parameter");', text)
        self.assertIn('SetObject(index, surface, "surface");', text)
        self.assertEqual(set(csharp_objects.PLAN_SETTERS), set(csharp_objects.ARGUMENT_OBJECTS))
        self.assertIn("public void Set<T>(int index, DeviceBuffer<T> buffer) where T : struct", text)
        self.assertIn("Set(index, (DeviceMemory)buffer);", text)

    def test_a_whole_copy_from_another_buffer(self):
        text = csharp_objects.whole_copies(model.describe())
        self.assertIn("public void CopyFrom(DeviceBuffer<T> source)", text)
        self.assertIn("public void CopyFromAsync(DeviceBuffer<T> source, CudaStream stream)", text)
        self.assertIn("cuabi_buffer_copy_async(Handle, UIntPtr.Zero, source.Handle, UIntPtr.Zero, "
                      "(UIntPtr)(ulong)source.SizeInBytes, CudaStream.HandleOf(stream)));", text)


class Tasks(unittest.TestCase):
    def test_a_blocking_call_runs_on_the_thread_pool(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_linker_link")
        text = "\n".join(csharp_objects.task_member(fn))
        self.assertIn("public System.Threading.Tasks.Task<CudaModule> LinkAsync()", text)
        self.assertIn("return Background.Run(Handle, raw =>", text)
        self.assertIn("cuabi_linker_link(new SafeLinkerHandle(raw, false), out made));", text)

    def test_another_shape_stops_regen(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_module_get_function")
        with self.assertRaises(SystemExit):
            csharp_objects.task_member(fn)


class LongProperties(unittest.TestCase):
    def test_a_getter_and_its_setter_are_one_long_property(self):
        d = model.describe()
        fns = {f["name"]: f for f in d["functions"]}
        text = "\n".join(csharp_objects.long_property(fns["cuabi_memory_pool_get_release_threshold"],
                                                      fns["cuabi_memory_pool_set_release_threshold"]))
        self.assertIn("public long ReleaseThreshold", text)
        self.assertIn("return checked((long)value);", text)
        self.assertIn('Ranges.NotNegative(value, "value");', text)
        with self.assertRaises(SystemExit):
            csharp_objects.long_property(fns["cuabi_memory_pool_get_usage"], fns["cuabi_memory_pool_set_release_threshold"])


class NotNegative(unittest.TestCase):
    def test_a_size_checked_with_the_bindings_message_and_defaulted(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_memory_pool_trim")
        self.assertIsNone(csharp_objects.skip_reason(fn, csharp_objects.value_structs(d)))
        text = "\n".join(csharp_objects.Emitter(d).member(fn))
        self.assertIn("public void Trim(long keepBytes = 0)", text)
        self.assertIn('Ranges.NotNegative(keepBytes, "keepBytes");', text)
        self.assertNotIn("must not be negative", text)

    def test_a_64_bit_count_is_a_long_and_a_launch_config_is_returned(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_function_suggest_config")
        self.assertIsNone(csharp_objects.skip_reason(fn, csharp_objects.value_structs(d)))
        text = "\n".join(csharp_objects.Emitter(d).member(fn))
        self.assertIn("public LaunchConfig SuggestConfig(long elements, long sharedBytesPerBlock = 0, "
                      "long sharedBytesPerThread = 0)", text)
        self.assertIn("(Handle, (ulong)elements, (UIntPtr)(ulong)sharedBytesPerBlock,", text)
        self.assertIn("return LaunchConfig.FromNative(ref configValue);", text)


class ParamNames(unittest.TestCase):
    def test_a_parameter_named_otherwise(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_device_get_memory_info")
        self.assertIsNone(csharp_objects.skip_reason(fn, csharp_objects.value_structs(d)))
        text = "\n".join(csharp_objects.Emitter(d).member(fn))
        self.assertIn("public void GetMemoryInfo(out long free, out long total)", text)
        self.assertIn("free = (long)freeValue.ToUInt64();", text)


class FieldParams(unittest.TestCase):
    def test_a_value_structs_fields_are_parameters(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_array_create")
        where, lines = csharp_objects.field_params(fn, csharp_objects.Emitter(d))
        text = "\n".join(lines)
        self.assertEqual(where, "cuabi_device")
        self.assertIn("public CudaArray CreateArray(ArrayFormat format, int channels, long width, long height = 0,", text)
        self.assertIn("var desc = ArrayDesc.Default();", text)
        self.assertIn('desc.Channels = (uint)Ranges.NotNegative(channels, "channels");', text)
        self.assertIn('desc.Width = Ranges.NotNegative(width, "width");', text)
        self.assertIn("return CudaArray.Create(this, desc);", text)


class BuiltCalls(unittest.TestCase):
    def test_a_call_of_a_built_struct_is_a_member_of_its_class(self):
        text = "".join(csharp_objects.built_calls(model.describe()))
        self.assertIn("    public sealed partial class Copy3D\n", text)
        self.assertIn("        public void Copy()\n", text)
        self.assertIn('Copy3DDescNative desc = Describe("", null, out lease);', text)
        self.assertIn("        public void CopyAsync(CudaStream stream)\n", text)
        self.assertIn('Describe("", "an asynchronous copy needs host memory that stays put', text)
        self.assertIn("cuabi_copy_3d_async(ref desc, CudaStream.HandleOf(stream))", text)


class Batches(unittest.TestCase):
    def test_a_batch_is_laid_out_by_its_class_and_queued_in_one_call(self):
        d = model.describe()
        fns = {f["name"]: f for f in d["functions"]}
        em = csharp_objects.Emitter(d)
        text = "\n".join(csharp_objects.batch_member(fns["cuabi_stream_copy_batch"], em))
        self.assertIn("public BatchLease CopyBatch(CopyBatch batch, CopyBatchFlags flags = 0)", text)
        self.assertIn('if (batch == null) throw new ArgumentNullException("batch");', text)
        self.assertIn("return Queue(batch.Count, ((IDescribesEach<CopyOpNative>)batch).Describe,", text)
        self.assertIn("cuabi_stream_copy_batch(Handle, ref first, n, flags), true);", text)
        text = "\n".join(csharp_objects.batch_member(fns["cuabi_stream_prefetch_batch"], em))
        self.assertIn("public void PrefetchBatch(ManagedRanges ranges, MemoryLocation location)", text)
        self.assertIn("(Handle, ref first, n, location.Value), false);", text)
        self.assertEqual(csharp_objects.BATCH_TYPES["MemOpNative"][1], "MemOpBatch")

    def test_a_list_of_a_built_structs_class_is_laid_out_element_by_element(self):
        d = model.describe()
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_stream_copy_3d_batch")
        text = "\n".join(csharp_objects.batch_member(fn, csharp_objects.Emitter(d)))
        self.assertIn("public void Copy3DBatch(IList<Copy3D> copies, CopyBatchFlags flags = 0)", text)
        self.assertIn('Queue(copies.Count, (lease, i) => ((IDescribes<Copy3DDescNative>)(copies[i] ?? '
                      'throw new ArgumentNullException("copies", "copies[" + i + "] is null"))).DescribeIn("copies", i, lease),',
                      text)
        self.assertIn("cuabi_stream_copy_3d_batch(Handle, ref first, n, flags), false);", text)


class PackedArguments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe()
        cls.em = csharp_objects.Emitter(cls.d)
        cls.fns = {f["name"]: f for f in cls.d["functions"]}

    def text(self, name):
        fn = self.fns[name]
        self.assertIsNone(csharp_objects.skip_reason(fn, csharp_objects.value_structs(self.d)))
        return "\n".join(self.em.member(fn))

    def test_a_kernels_arguments_are_packed_at_its_offsets(self):
        text = self.text("cuabi_graph_add_kernel_node")
        self.assertIn("public GraphNode AddKernelNode(GraphNode after, Kernel kernel, LaunchConfig config, "
                      "params object[] args)", text)
        self.assertIn('if (kernel == null) throw new ArgumentNullException("kernel");', text)
        self.assertIn("Errors.Check(KernelNodes.WithPacked(kernel, args, delegate(IntPtr argsPointer, UIntPtr argsSize) "
                      "{ return NativeMethods.cuabi_graph_add_kernel_node(Handle, afterHandle, kernelHandle, "
                      "ref configNative, argsPointer, argsSize, out made); }));", text)
        self.assertIn("SafeGraphNodeHandle made = null;", text)
        self.assertIn('<param name="args">One argument per kernel parameter', text)

    def test_an_int_index_and_a_null_the_library_refuses(self):
        text = self.text("cuabi_graph_exec_set_kernel_node_args")
        self.assertIn("public void SetKernelNodeArgs(int index, Kernel kernel, params object[] args)", text)
        self.assertIn('Ranges.NotNegative(index, "index");', text)
        text = self.text("cuabi_graph_exec_set_kernel_node")
        self.assertIn("var nodeHandle = GraphNode.HandleOf(node);", text)
        self.assertIn("var nodeHandle = GraphNode.HandleOf(node);", self.text("cuabi_graph_exec_set_host_node"))

    def test_a_kernels_own_launch_is_no_packed_call(self):
        self.assertIsNone(csharp_objects.packed_kernel(self.fns["cuabi_function_launch_packed"]))
        self.assertIsNotNone(csharp_objects.skip_reason(self.fns["cuabi_function_launch_packed"], {}))


if __name__ == "__main__":
    unittest.main()
