"""The Rust object layer's tables (scripts/regen_api/rust_objects.py) name
what the header declares, and what they make lands in the generated files.

  python3 tests/regen/test_rust_objects.py
"""

from __future__ import annotations

import unittest

from regen_paths import HEADER, read  # also puts the generators on sys.path

import model  # noqa: E402
import rust_objects  # noqa: E402


class RustTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe(HEADER)

    def test_options_name_fields_of_built_structs(self):
        structs = {st["name"]: st for st in self.d["structs"]}
        for c_name, _, fields in rust_objects.OPTIONS.values():
            self.assertTrue(structs[c_name].get("built"), c_name)
            names = {f["name"] for f in structs[c_name]["fields"]}
            self.assertLessEqual(set(fields), names, c_name)

    def test_builders_set_their_fields_under_the_builders_names(self):
        text = read("bindings/rust/cuabi/src/builders.rs")
        self.assertIn("pub fn dlto(mut self, on: bool) -> CompileOptions {\n        self.fields.lto = on;", text)
        self.assertIn("pub fn backend(mut self, backend: LinkBackend) -> LinkOptions {", text)
        self.assertNotIn("fn address_x(", text)  # set by TextureOptions::address_modes
        objects = read("bindings/rust/cuabi/src/objects.rs")
        self.assertIn("raw.relocatable = i32::from(self.relocatable);", objects)

    def test_flag_setters_name_bits_of_the_headers_flag_sets(self):
        bits = {v["name"] for e in self.d["enums"] if e["is_flag_bits"] for v in e["values"]}
        self.assertLessEqual(set(rust_objects.FLAG_SETTERS), bits)
        text = read("bindings/rust/cuabi/src/builders.rs")
        self.assertIn(
            "pub fn cooperative(mut self, on: bool) -> LaunchConfig {\n"
            "        self.flags = self.flags.with(LaunchFlags::COOPERATIVE, on);",
            text,
        )
        self.assertIn(
            "pub fn no_cache(mut self) -> CompileOptions {\n        self.flags |= CompileFlags::NO_CACHE;", text
        )
        self.assertIn("self.fields.flags = self.fields.flags.with(LinkFlags::LTO, on);", text)

    def test_group_setters_set_options_fields_of_one_group(self):
        for (owner, setter), (c_name, names, _) in rust_objects.GROUP_SETTERS.items():
            struct, _, fields = rust_objects.OPTIONS[owner]
            self.assertEqual(struct, c_name, setter)
            self.assertLessEqual(set(names), set(fields), setter)
        text = read("bindings/rust/cuabi/src/builders.rs")
        self.assertIn(
            "pub fn src_offset(mut self, x_bytes: usize, y: usize, z: usize) -> Self {\n"
            "        let f = &mut self.fields;\n"
            "        (f.src_x_bytes, f.src_y, f.src_z) = (x_bytes, y, z);",
            text,
        )
        self.assertIn("[f.border_r, f.border_g, f.border_b, f.border_a] = rgba;", text)

    def test_answers_and_constants_come_from_the_header(self):
        functions = {f["name"]: f for f in self.d["functions"]}
        for name in rust_objects.ANSWERS:
            self.assertNotEqual(functions[name]["returns"]["c"], "cuabi_status", name)
        constants = {c["name"] for c in self.d["constants"]}
        self.assertLessEqual(set(rust_objects.CONSTANTS), constants)
        objects = read("bindings/rust/cuabi/src/objects.rs")
        self.assertIn("pub fn status_name(status: sys::cuabi_status) -> &'static str {", objects)
        self.assertIn("pub fn version() -> u32 {", objects)
        values = read("bindings/rust/cuabi/src/values.rs")
        self.assertIn("pub const HEADER_VERSION: u32 = sys::CUABI_VERSION_NUMBER;", values)
        self.assertIn("pub const IPC_HANDLE_SIZE: usize = sys::CUABI_IPC_HANDLE_SIZE as usize;", values)

    def test_made_by_and_composed_name_constructors_and_getters(self):
        functions = {f["name"]: f for f in self.d["functions"]}
        for name in rust_objects.MADE_BY:
            self.assertEqual(functions[name]["call"], "constructor", name)
        for name in rust_objects.COMPOSED:
            self.assertEqual(functions[name]["call"], "getter", name)
        objects = read("bindings/rust/cuabi/src/objects.rs")
        self.assertIn("pub fn create_stream_with(&self, flags: StreamFlags, priority: i32) -> Result<Stream> {", objects)
        self.assertIn("size_bytes: bytes,", objects)
        self.assertIn("pub struct Global {", read("bindings/rust/cuabi/src/values.rs"))

    def test_ipc_handles_are_the_crates_ipc_handle(self):
        objects = read("bindings/rust/cuabi/src/objects.rs")
        # Answered by the buffer's and the event's getter, given to an open.
        self.assertEqual(objects.count("pub fn ipc_handle(&self) -> Result<IpcHandle> {"), 2)
        self.assertIn("pub fn open_ipc(device: &Device, handle: &IpcHandle) -> Result<Event> {", objects)
        self.assertIn("pub fn open_ipc_event(&self, handle: &IpcHandle) -> Result<Event> {", objects)
        # A DeviceBuffer holds more than its handle: its open stays the crate's.
        self.assertIn("`cuabi_buffer_open_ipc`: DeviceBuffer holds more than its handle", objects)

    def test_element_ranges_are_typed_buffer_methods_over_elements(self):
        functions = {f["name"]: f for f in self.d["functions"]}
        for name in rust_objects.ELEMENT_RANGES:
            self.assertEqual(functions[name]["object"], "buffer", name)
        objects = read("bindings/rust/cuabi/src/objects.rs")
        self.assertIn("pub fn copy_from_at(&mut self, offset: usize, src: &[T]) -> Result<()> {", objects)
        self.assertIn('let (offset, bytes) = self.range("source", offset, dst.len())?;', objects)
        self.assertIn("pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {", objects)
        self.assertIn("pub fn fill_range(&mut self, offset: usize, len: usize, value: T) -> Result<()> {", objects)
        self.assertIn("let (value, element_size) = fill_value(&value);", objects)
        self.assertIn("impl<T: DeviceRepr> ManagedBuffer<T> {", objects)
        self.assertIn("pub fn prefetch(&self, location: Location, stream: Option<&Stream>) -> Result<()> {", objects)
        self.assertIn("self.advise_range(0, self.len(), advice, location)", objects)

    def test_whole_buffer_calls_are_typed_buffer_methods_over_all_of_it(self):
        functions = {f["name"]: f for f in self.d["functions"]}
        for name in rust_objects.WHOLE_BUFFER:
            self.assertEqual(functions[name]["object"], "buffer", name)
        objects = read("bindings/rust/cuabi/src/objects.rs")
        self.assertIn("pub fn fill_bytes(&mut self, value: u8) -> Result<()> {", objects)
        self.assertIn("pub unsafe fn fill_async(&mut self, value: T, stream: &Stream) -> Result<()> {", objects)
        self.assertIn("pub unsafe fn copy_to_async(&self, dst: &mut [T], stream: &Stream) -> Result<()> {", objects)
        self.assertIn('let (_, bytes) = self.range("destination", 0, src.len())?;', objects)
        self.assertIn("sys::cuabi_buffer_copy(self.as_raw(), 0, src.as_raw(), 0, src.size_bytes())", objects)
        for name in rust_objects.WHOLE_BUFFER:  # none left to the listing of hand-written calls
            self.assertNotIn(f"//! * `{name}`:", objects)

    def test_built_calls_are_methods_of_the_describing_type(self):
        functions = {f["name"]: f for f in self.d["functions"]}
        for name in rust_objects.BUILT_CALLS:
            self.assertEqual(functions[name]["call"], "library", name)
            built = [p for p in functions[name]["params"] if p.get("struct") in rust_objects.BUILT_TYPES]
            self.assertEqual(len(built), 1, name)
        builders = read("bindings/rust/cuabi/src/builders.rs")
        self.assertIn("impl Copy3d<'_> {", builders)
        self.assertIn("pub fn run(&self) -> Result<()> {\n        let desc = self.describe()?;", builders)
        self.assertIn("pub unsafe fn run_async(&self, stream: Option<&Stream>) -> Result<()> {", builders)

    def test_newtype_consts_are_the_open_enums_values(self):
        enums = {e["name"]: e for e in self.d["enums"]}
        builders = read("bindings/rust/cuabi/src/builders.rs")
        for enum, (newtype, _, _) in rust_objects.NEWTYPE_CONSTS.items():
            for v in enums[enum]["values"]:
                if v["value"] != 0:
                    self.assertIn(f"= {newtype}(sys::{v['name']} as i32);", builders)
        self.assertIn("pub const Cpp17: CppStd = CppStd(sys::CUABI_STD_CXX17 as i32);", builders)
        self.assertIn("pub const ALL: [CppStd; 5] = [", builders)
        self.assertNotIn("CUABI_STD_DEFAULT", builders)

    def test_managed_writes_forward_to_the_buffer(self):
        functions = {f["name"] for f in self.d["functions"]}
        self.assertLessEqual(rust_objects.MANAGED_WRITES, functions)
        self.assertLessEqual(rust_objects.MANAGED_WRITES, set(rust_objects.ELEMENT_RANGES) | set(rust_objects.WHOLE_BUFFER))
        objects = read("bindings/rust/cuabi/src/objects.rs")
        self.assertIn("pub fn fill(&mut self, value: T) -> Result<()> {\n        self.buffer.fill(value)", objects)
        self.assertIn("pub fn fill_bytes(&mut self, value: u8) -> Result<()> {\n        self.buffer.fill_bytes(value)", objects)
        self.assertIn("self.buffer.copy_from_buffer(src)", objects)


if __name__ == "__main__":
    unittest.main()
