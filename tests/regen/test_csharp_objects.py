"""Roles of the C# object layer (scripts/regen_api/csharp_objects.py): the
flag properties (FLAG_PROPERTIES: each bit of a flag set a hand-written type
holds is a bool property of that type, from the model's bits alone) and the
hand-written struct types (HAND_STRUCTS: a LaunchConfig argument; STRUCT_FIELDS:
its fields and conversions), the option classes (FIELD_CLASSES: a run of a
struct's fields), the kept values (KEPT_VALUES: a CudaArray's shape), a
copy's two ends (SetEnd of Structs.g.cs), and arrays of numbers in.

  python3 tests/regen/test_csharp_objects.py
"""

from __future__ import annotations

import os
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts", "regen_api"))

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


if __name__ == "__main__":
    unittest.main()
