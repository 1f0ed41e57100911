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


class StreamPickedTwins(unittest.TestCase):
    """A call and its ``*_async`` twin are one generated method whose
    ``stream=None`` picks the call (the twin with a Stream); PY_ORDER,
    PY_TO_END and PY_NAMED_SHORT give the order, the range default and the
    short names the package has always had; the hand-written methods they
    replace are gone."""

    @classmethod
    def setUpClass(cls):
        cls.d = model.describe(HEADER)
        cls.em = python_objects.Emitter(cls.d)
        cls.functions = {fn["name"]: fn for fn in cls.d["functions"]}
        cls.objects = read(python_objects.OBJECTS)

    def method(self, name):
        return self.objects.split(f"    def {name}(self")[1].split("\n\n")[0]

    def test_every_twin_of_the_header_is_found(self):
        twins = {fn["name"] for fn in self.d["functions"] if self.em.async_twin(fn)}
        self.assertEqual(twins, {
            "cuabi_buffer_copy_from_host", "cuabi_buffer_copy_to_host", "cuabi_buffer_copy",
            "cuabi_buffer_memset", "cuabi_buffer_fill",
        })
        # cuabi_copy_3d pairs too, but cuabi.copy_3d takes a box's sides by hand.
        self.assertIn("cuabi_copy_3d", python_objects.HAND_WRITTEN)
        for name in twins:
            self.assertIn(f"#   {name}_async: one method with {name}: stream= picks this one", self.objects)

    def test_stream_none_picks_the_synchronous_call(self):
        text = self.method("memset")
        self.assertIn("value: int = 0, offset: int = 0, nbytes: Optional[int] = None, "
                      "stream: Optional[StreamBase] = None) -> None:", text)
        self.assertIn("        if stream is None:\n            status = b.fn.cuabi_buffer_memset(self._handle, "
                      "offset_c, value_c, nbytes_c)\n        else:\n"
                      "            status = b.fn.cuabi_buffer_memset_async(", text)
        self.assertIn('raise b.error(status, "cuabi_buffer_memset" if stream is None else '
                      '"cuabi_buffer_memset_async")', text)
        self.assertNotIn("def memset_async(", self.objects)
        self.assertNotIn("def copy_async(", self.objects)

    def test_arguments_are_checked_in_python_order(self):
        text = self.method("memset")
        order = [text.index(f"{n}_c = ") for n in ("value", "offset", "nbytes")]
        self.assertEqual(order, sorted(order))
        self.assertIn('value_c = _byte(value, "memset value")', text)
        self.assertIn('raise ValueError(f"{what} {v} is not a byte (0 to 255)")', self.objects)

    def test_a_range_defaults_to_the_receivers_end(self):
        for fn, (offset, length, unit) in python_objects.PY_TO_END.items():
            params = {p["name"] for p in self.functions[fn]["params"]}
            params |= {"nbytes"} if "bytes" in params else set()
            self.assertLessEqual({offset, length} | ({unit} if unit else set()), params, fn)
        self.assertIn("nbytes_c = max(self.nbytes - offset_c, 0) if nbytes is None else", self.method("memset"))
        self.assertIn("count_c = max(self.nbytes - offset_c, 0) // max(element_size_c, 1) if count is None",
                      self.method("fill"))
        self.assertIn("location: Union[DeviceBase, int, str], stream: Optional[StreamBase] = None, "
                      "offset: int = 0, nbytes: Optional[int] = None", self.method("prefetch"))
        advise = self.method("advise")
        self.assertIn("location_c = self.device_ordinal if location is None else", advise)
        self.assertIn('if m.name.lower().startswith("set_")', advise)

    def test_a_copys_host_side_is_any_host_buffer(self):
        self.assertIn("src_arg, src_n, src_keep = _bytes_in(src, b)", self.method("copy_from_host"))
        self.assertIn("dst_arg, dst_n, dst_keep = _bytes_in(dst, b, True)", self.method("copy_to_host"))

    def test_keyword_only_parameters_and_enum_defaults(self):
        # TensorMap.tiled and .im2col: the layout first, the rest by keyword.
        tiled = self.objects.split("    def tiled(cls, ")[1].split("\n")[0]
        self.assertTrue(tiled.startswith("buffer: BufferBase, data_type: int, sizes: Sequence[int], "
                                         "strides: Sequence[int], box: Sequence[int], *, offset: int = 0, "
                                         "element_strides: Sequence[int] = (), interleave: int = "
                                         "_api.TensorInterleave.NONE,"), tiled)
        self.assertIn("    def im2col(cls, buffer: BufferBase,", self.objects)
        green = read("bindings/python/cuabi/_green.py")
        self.assertNotIn("def tiled(", green)
        self.assertNotIn("def _lend(", green)

    def test_a_constructors_receiver_is_given_as_an_argument(self):
        # A buffer a tensor map keeps is lent (DeviceBuffer._arg): never back to the cache.
        self.assertIn("status = b.fn.cuabi_tensor_map_encode_tiled(buffer._arg(b), ", self.objects)

    def test_after_hooks_run_once_the_call_succeeded(self):
        for fn, hook in python_objects.PY_AFTER.items():
            self.assertTrue(self.functions[fn]["receiver"] and hook.isidentifier(), fn)
        text = self.method("begin_capture")
        self.assertIn('    def begin_capture(self, mode: Union[_api.CaptureMode, int, str] = "global") -> None:',
                      self.objects)
        self.assertTrue(text.rstrip().endswith("self._capture_begun()"), text)
        self.assertIn("    def _capture_begun(self) -> None:\n", self.objects)
        stream = read("bindings/python/cuabi/_stream.py")
        self.assertNotIn("def begin_capture(", stream)
        self.assertIn("def _capture_begun(self) -> None:", stream)

    def test_the_hand_written_methods_are_gone(self):
        memory = read("bindings/python/cuabi/_memory.py")
        for name in ("memset", "prefetch", "advise", "copy_from_host"):
            self.assertNotIn(f"    def {name}(\n        self,", memory)
        self.assertNotIn("def advice_arg(", memory)
        # What stays extends the generated method: a NumPy fill value, a new host array.
        self.assertIn("super().fill(*_fill_value(value, dtype), offset, count, stream)", memory)
        self.assertIn("super().copy_to_host(dst, offset, stream)", memory)
        self.assertNotIn('call_ordered(b, "cuabi_buffer_copy_from_host"', memory)


if __name__ == "__main__":
    unittest.main()
