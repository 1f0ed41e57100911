"""The Python object layer's descriptor fillers (scripts/regen_api/python_objects.py,
DESC_FILLERS) name what the header declares, and what they make lands in
bindings/python/cuabi/_objects.py: each a function filling its struct from
keyword arguments, every value converted by its field's type.

  python3 tests/regen/test_python_objects.py
"""

from __future__ import annotations

import unittest

from regen_paths import HEADER, read  # also puts the generators on sys.path

import model  # noqa: E402
import python_objects  # noqa: E402


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
        self.assertIn("LinkerBase.create(dev, backend=", read("bindings/python/cuabi/_link.py"))
        self.assertIn("fill_compile_desc(", read("bindings/python/cuabi/_device.py"))
        self.assertIn("TextureBase.create(", read("bindings/python/cuabi/_arrays.py"))
        self.assertNotIn("cuabi_texture_desc_init", read("bindings/python/cuabi/_arrays.py"))

    def test_a_call_taking_a_descriptor_takes_its_fields_as_keywords(self):
        text = self.objects
        self.assertIn('    def create(cls, device: DeviceBase, **fields: Any) -> "Linker":', text)
        self.assertIn("        desc_arg, desc_keep = fill_link_desc(b, **fields)\n", text)
        self.assertIn('    def create(cls, *, backend: BackendArg = None, **fields: Any) -> "Texture":', text)
        self.assertIn("    def compile_with(self, **fields: Any) -> None:", text)
        self.assertIn("self.compile_with(**desc_fields(", read("bindings/python/cuabi/_program.py"))
        for name, call in (("_link.py", "cuabi_linker_create"), ("_arrays.py", "cuabi_texture_create"),
                           ("_program.py", "cuabi_program_compile_with")):
            self.assertFalse(call in read("bindings/python/cuabi/" + name), f"{name} calls {call}")


class RowTables(unittest.TestCase):
    """PY_CHAIN, PY_DEFAULTS, PY_PARAMS, PY_NAMED, PY_CACHED, PY_SETTERS, BOOL_FLAGS, PY_KEYED, PY_MADE_BY and PY_LOGGED name what the header declares,
    and each row's shape lands in the generated layer."""

    @classmethod
    def setUpClass(cls):
        cls.d = model.describe(HEADER)
        cls.functions = {fn["name"]: fn for fn in cls.d["functions"]}
        cls.flags = {f["name"] for f in cls.d["flags"]}
        cls.objects = read(python_objects.OBJECTS)

    def params(self, fn):
        return {p["name"]: p for p in self.functions[fn]["params"]}

    def test_chaining_methods_answer_their_receiver(self):
        for fn in python_objects.PY_CHAIN:
            self.assertTrue(self.functions[fn]["receiver"], fn)
            self.assertNotIn(fn, python_objects.HAND_WRITTEN)
        text = self.objects
        self.assertIn('_Self = TypeVar("_Self", bound=Resource)', text)
        self.assertIn("def record(self: _Self, stream: Optional[StreamBase] = None) -> _Self:", text)
        self.assertIn("def add_program(self: _Self, program: ProgramBase) -> _Self:", text)
        body = text.split("def add_program(self: _Self")[1].split("\n\n")[0]
        self.assertTrue(body.rstrip().endswith("return self"), body)

    def test_defaults_name_trailing_parameters(self):
        for fn, defaults in python_objects.PY_DEFAULTS.items():
            params = self.params(fn)
            params.update({py: params[c] for c, py in python_objects.PY_PARAMS.get(fn, {}).items()})
            for name in defaults:
                self.assertIn(name, params, f"{fn}.{name}")
        self.assertIn("def split(self, group_count: int, min_sm_count: int = 0, index: int = 0)", self.objects)
        self.assertIn("def instantiate_with_flags(self, flags: int = 0, upload_stream:", self.objects)

    def test_bool_flags_choose_one_flag_of_a_flag_set(self):
        for fn, table in python_objects.BOOL_FLAGS.items():
            params = self.params(fn)
            for name, (py, member) in table.items():
                self.assertIn(params[name]["type"]["base"], self.flags, f"{fn}.{name}")
                self.assertTrue(py.isidentifier() and member.isupper(), (py, member))
        text = self.objects
        self.assertIn("def copy_batch(self, ops: Sequence[\"CopyOp\"], prefer_overlap: bool = False)", text)
        self.assertIn("int(_api.CopyBatchFlag.PREFER_OVERLAP) if prefer_overlap else 0", text)
        self.assertIn("def alloc_managed(cls, device: DeviceBase, nbytes: int, attach_host: bool = False)", text)
        self.assertIn("def create(cls, device: DeviceBase, nbytes: int, exportable: bool = False)", text)

    def test_python_parameter_names_rename_parameters_of_the_header(self):
        for fn, renames in python_objects.PY_PARAMS.items():
            params = self.params(fn)
            for c_name, py in renames.items():
                self.assertIn(c_name, params, f"{fn}.{c_name}")
                self.assertTrue(py.isidentifier(), py)
        self.assertIn(
            "def suggest_block_size(self, shared_per_block: int = 0, shared_per_thread: int = 0, "
            "limit: int = 0) -> Tuple[int, int]:", self.objects)
        self.assertIn('check_int(limit, "limit", 0, UINT32_MAX)', self.objects)
        self.assertNotIn("def suggest_block_size(", read("bindings/python/cuabi/_program.py"))
        self.assertIn("def get_active_blocks_per_sm(self, block_size: int, dynamic_shared: int = 0) -> int:",
                      self.objects)
        self.assertIn("    active_blocks_per_sm = get_active_blocks_per_sm\n", self.objects)
        self.assertNotIn("def active_blocks_per_sm(", read("bindings/python/cuabi/_program.py"))

    def test_a_parameter_named_bytes_is_nbytes(self):
        text = self.objects
        self.assertIn('    def alloc(cls, device: DeviceBase, nbytes: int) -> "DeviceBuffer":', text)
        self.assertIn('check_int(nbytes, "nbytes", 0, UINT64_MAX)', text)
        self.assertNotIn(", bytes: int", text)
        self.assertIn('def import_fd(cls, device: DeviceBase, fd: int, nbytes: int) -> "PhysicalMemory":', text)
        self.assertNotIn("def import_fd(", read("bindings/python/cuabi/_vmm.py"))
        self.assertNotIn('check_size(nbytes, "nbytes")', read("bindings/python/cuabi/_vmm.py"))

    def test_cached_getters_are_read_once(self):
        for fn in python_objects.PY_CACHED:
            self.assertIn(self.functions[fn]["call"], ("getter", "string"), fn)
        text = self.objects
        self.assertIn("    _kind: Optional[_api.BufferKind] = None\n", text)
        body = text.split("    def kind(self) -> _api.BufferKind:")[1].split("\n\n")[0]
        self.assertIn("        if self._kind is None:\n", body)
        self.assertIn("            self._kind = _api.BufferKind(b.value(kind_box))\n        return self._kind", body)
        self.assertIn("    _name: Optional[str] = None\n", text)
        self.assertNotIn("def kind(", read("bindings/python/cuabi/_memory.py"))

    def test_setters_make_a_getter_property_settable(self):
        for getter, setter in python_objects.PY_SETTERS.items():
            self.assertTrue(self.functions[getter]["property"], getter)
            self.assertEqual(self.functions[setter]["object"], self.functions[getter]["object"])
        body = self.objects.split("    @release_threshold.setter\n")[1].split("\n\n")[0]
        self.assertIn("    def release_threshold(self, release_threshold: int) -> None:", body)
        self.assertIn('check_int(release_threshold, "release_threshold", 0, UINT64_MAX)', body)
        self.assertNotIn("release_threshold.setter", read("bindings/python/cuabi/_memory.py"))

    def test_named_enum_parameters_take_a_members_name(self):
        enums = {e["name"] for e in self.d["enums"]}
        for fn, table in python_objects.PY_NAMED.items():
            params = self.params(fn)
            for name, (what, hint) in table.items():
                self.assertIn(params[name]["type"]["base"], enums, f"{fn}.{name}")
                self.assertTrue(what and not what.startswith(" "), what)
        text = self.objects
        self.assertIn("def get_attribute(self, attribute: Union[_api.FunctionAttribute, int, str]) -> int:", text)
        self.assertIn('named(attribute, {m.name.lower(): m for m in _api.FunctionAttribute}, "kernel attribute", '
                      '"attribute", " (or any CUfunction_attribute value)")', text)
        self.assertIn("form: Union[_api.NameForm, int, str] = _api.NameForm.DEMANGLED) -> str:", text)
        self.assertNotIn("def kernel_name(", read("bindings/python/cuabi/_program.py"))

    def test_keyed_properties_name_members_of_the_getters_key(self):
        enums = {e["name"]: e for e in self.d["enums"]}
        for fn, table in python_objects.PY_KEYED.items():
            f = self.functions[fn]
            self.assertEqual(f["call"], "getter", fn)
            self.assertIn("set_" + f["method"][len("get_"):], {g["method"] for g in self.d["functions"]})
            key = next(p for p in f["params"] if p["role"] == "in")
            members = {v["name"].split("_", 2)[-1] for v in enums[key["type"]["base"]]["values"]}
            for name, row in table.items():
                self.assertTrue(name.isidentifier(), name)
                for member in row if isinstance(row, tuple) else (row,):
                    self.assertTrue(any(m.endswith(member) for m in members), f"{fn}: {member}")
        text = self.objects.split("class FunctionBase(")[1].split("\nclass ")[0]
        self.assertIn("    def num_regs(self) -> int:\n        \"\"\"Registers per thread.\"\"\"", text)
        self.assertIn("    @max_dynamic_shared_size_bytes.setter\n", text)
        self.assertIn("    def cluster_size_must_be_set(self) -> bool:", text)
        self.assertNotIn("@cluster_size_must_be_set.setter", text)
        self.assertIn("int(bool(value))", text.split("@non_portable_cluster_size_allowed.setter")[1])
        self.assertIn("def required_cluster_dims(self) -> Tuple[int, int, int]:", text)
        self.assertNotIn("def num_regs(", read("bindings/python/cuabi/_program.py"))

    def test_made_by_methods_forward_to_a_constructor(self):
        for fn, method in python_objects.PY_MADE_BY.items():
            f = self.functions[fn]
            self.assertEqual(f["call"], "constructor", fn)
            self.assertTrue(f["receiver"] and method.isidentifier(), fn)
        text = self.objects.split("class DeviceBase(")[1].split("\nclass ")[0]
        self.assertIn('    def create_stream(self, non_blocking: bool = False, priority: int = 0) -> "Stream":', text)
        self.assertIn("        return StreamBase.create(self, non_blocking, priority)\n", text)
        self.assertIn('    def host_alloc(self, nbytes: int) -> "PinnedBuffer":', text)
        device = read("bindings/python/cuabi/_device.py")
        self.assertNotIn("def create_stream(", device)
        self.assertNotIn("def host_alloc(", device)

    def test_logged_calls_fill_a_compile_errors_log_from_the_receiver(self):
        for fn, log in python_objects.PY_LOGGED.items():
            self.assertEqual(self.functions[log]["call"], "string", log)
            self.assertEqual(self.functions[log]["object"], self.functions[fn]["object"], fn)
        text = self.objects
        self.assertIn("    if exc.status == _api.CUABI_ERROR_COMPILE and not exc.log:\n", text)
        self.assertIn('            raise _logged(b.error(status, "cuabi_linker_link"), self, "log")\n', text)
        self.assertIn('            raise _logged(b.error(status, "cuabi_program_compile_with"), self, "log")\n', text)
        self.assertNotIn("def link(", read("bindings/python/cuabi/_link.py"))
        self.assertNotIn("exc.log = self.log", read("bindings/python/cuabi/_program.py"))

    def test_a_made_object_belongs_to_the_device_the_call_names(self):
        # cuabi_library_get_module(library, device): the module is the device's.
        text = self.objects.split("def get_module(self, device: DeviceBase)")[1].split("module = get_module")[0]
        self.assertIn('_OWNERS["cuabi_module"]._made_by(b, b.value(out_box), device)', text)

    def test_a_constructor_checks_its_receiver(self):
        self.assertIn('b = _of(device, "cuabi_device", DeviceBase, "device")._b', self.objects)

    def test_a_copy_of_a_holding_receiver_keeps_what_it_keeps(self):
        text = self.objects.split("    def clone(self)")[1].split("\n\n")[0]
        self.assertIn('for keep in self.__dict__.get("_held", ()):\n            made._hold(keep)', text)

    def test_ipc_openings_read_the_handle_as_one(self):
        self.assertIn('_bytes_in(_READERS["ipc"](handle), b)', self.objects)
        self.assertIn('register_reader("ipc", ipc_handle_arg)', read("bindings/python/cuabi/_hostmem.py"))


if __name__ == "__main__":
    unittest.main()
