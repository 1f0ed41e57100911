"""Roles of the C# object layer (scripts/regen_api/csharp_objects.py): the
flag properties (FLAG_PROPERTIES: each bit of a flag set a hand-written type
holds is a bool property of that type, from the model's bits alone) and the
hand-written struct types (HAND_STRUCTS: a LaunchConfig argument).

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


if __name__ == "__main__":
    unittest.main()
