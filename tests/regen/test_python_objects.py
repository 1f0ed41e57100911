"""The Python object layer's descriptor fillers (scripts/regen_api/python_objects.py,
DESC_FILLERS) name what the header declares, and what they make lands in
bindings/python/cuabi/_objects.py: each a function filling its struct from
keyword arguments, every value converted by its field's type.

  python3 tests/regen/test_python_objects.py
"""

from __future__ import annotations

import os
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts", "regen_api"))

import model  # noqa: E402
import python_objects  # noqa: E402

HEADER = os.path.join(REPO, "include", "cuabi", "cuabi.h")


def read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


class DescFillers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe(HEADER)
        cls.structs = {st["name"]: st for st in cls.d["structs"]}
        cls.objects = read(python_objects.OBJECTS)

    def test_the_table_names_built_structs_with_an_init_and_their_fields(self):
        for name, table in python_objects.DESC_FILLERS.items():
            st = self.structs[name]
            self.assertTrue(st.get("built") and st["init"], name)
            fields = {f["name"] for f in st["fields"]}
            renames = {v for k, v in table.items() if k in fields and v.isidentifier() and v != "bool"}
            for key, spec in table.items():
                self.assertIn(key, fields | renames, f"{name}.{key}")
                self.assertTrue(spec == "bool" or spec.startswith("enum:") or spec.isidentifier(), spec)

    def test_each_filler_starts_from_the_init_and_converts_by_type(self):
        text = self.objects
        self.assertIn("def fill_link_desc(\n    b: Backend,\n    *,\n", text)
        self.assertIn('    status = b.fn.cuabi_link_desc_init(arg, size)\n', text)
        # an enum by enum_in, naming what the table says
        self.assertIn('s.backend = enum_in(backend, _api.LinkBackend, "link backend")', text)
        # a flag set and a number range-checked
        self.assertIn('s.flags = check_int(flags, "flags", 0, UINT32_MAX)', text)
        self.assertIn('s.offset = check_int(offset, "offset", 0, UINT64_MAX)', text)
        # a string array from a sequence, its count field its length and no keyword
        self.assertIn('s.options, s.num_options = _strings(b, options, "options", keep)', text)
        self.assertIn('s.header_names, s.num_headers = _strings(b, header_names, "header_names", keep)', text)
        self.assertNotIn("num_options: ", text.split("def fill_link_desc(")[1].split(") ->")[0])
        # a renamed field the core reads as 0/1
        self.assertIn("    debug: Union[bool, int, None] = None,\n", text)
        self.assertIn('s.device_debug = flag_in(debug, "debug")', text)
        # a string, a handle and a float
        self.assertIn('s.arch = b.field(as_bytes(arch, "arch"), keep)', text)
        self.assertIn("s.array = array\n", text)
        self.assertIn("s.border_r = float(border_r)\n", text)

    def test_the_fillers_replace_the_hand_written_ones(self):
        self.assertNotIn("def compile_desc(", read("bindings/python/cuabi/_loader.py"))
        self.assertIn("fill_link_desc(b, ", read("bindings/python/cuabi/_link.py"))
        self.assertIn("fill_compile_desc(", read("bindings/python/cuabi/_device.py"))
        self.assertIn("fill_texture_desc(", read("bindings/python/cuabi/_arrays.py"))
        self.assertNotIn("cuabi_texture_desc_init", read("bindings/python/cuabi/_arrays.py"))


if __name__ == "__main__":
    unittest.main()
