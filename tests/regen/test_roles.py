"""The API model's roles (scripts/regen_api/model.py): what it says of a few
known functions, and that a function its rules cannot decide stops it.

  python3 tests/regen/test_roles.py
"""

from __future__ import annotations

import os
import tempfile
import unittest

from regen_paths import HEADER, read  # also puts the generators on sys.path

import model  # noqa: E402


def _fn(description, name):
    return next(f for f in description["functions"] if f["name"] == name)


def _roles(fn):
    return {p["name"]: p["role"] for p in fn["params"]}


def _param(fn, name):
    return next(p for p in fn["params"] if p["name"] == name)


class Roles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = model.describe()

    def test_value_structs_hold_numbers_alone(self):
        by = {s["name"]: s for s in self.d["structs"]}
        self.assertTrue(by["cuabi_access_policy_window"]["value"])
        self.assertTrue(by["cuabi_array_desc"]["value"])
        # A pointer or a handle in it: a struct the languages write by hand.
        self.assertFalse(by["cuabi_launch_config"]["value"])  # cuabi_event
        self.assertFalse(by["cuabi_compile_desc"]["value"])  # strings
        self.assertFalse(by["cuabi_param_info"]["value"])  # not versioned

    def test_built_structs_name_objects_or_host_memory_and_say_how_long(self):
        by = {s["name"]: s for s in self.d["structs"]}
        self.assertTrue(by["cuabi_copy_3d_desc"]["built"])  # buffers, arrays, host memory
        self.assertFalse(by["cuabi_access_policy_window"]["built"])  # a value struct
        self.assertFalse(by["cuabi_param_info"]["built"])  # not versioned
        # What the library uses after the call: for a graph's life, until a
        # stream reaches it, or only during the call.
        self.assertEqual(_param(_fn(self.d, "cuabi_graph_add_copy_3d_node"), "desc")["lasting"], "receiver")
        self.assertEqual(_param(_fn(self.d, "cuabi_copy_3d_async"), "desc")["lasting"], "queued")
        self.assertEqual(_param(_fn(self.d, "cuabi_stream_copy_3d_batch"), "copies")["lasting"], "queued")
        self.assertNotIn("lasting", _param(_fn(self.d, "cuabi_copy_3d"), "desc"))

    def test_every_binding_generates_a_function_taking_a_built_struct(self):
        import csharp_objects
        import python_objects
        import rust_objects

        self.assertEqual(python_objects.BUILT_TYPES["cuabi_copy_3d_desc"], ("_batch", "Copy3dOp"))
        self.assertEqual(rust_objects.BUILT_TYPES["cuabi_copy_3d_desc"][1], "Copy3d")
        self.assertEqual(csharp_objects.BUILT_TYPES["Copy3DDescNative"][1], "Copy3D")
        self.assertIn('def add_copy_3d_node(self, after: Optional[GraphNodeBase], desc: "Copy3dOp")',
                      read("bindings/python/cuabi/_objects.py"))
        self.assertIn("desc: &impl Describes<sys::cuabi_copy_3d_desc>", read("bindings/rust/cuabi/src/objects.rs"))
        self.assertIn("public GraphNode AddCopy3DNode(GraphNode after, Copy3D desc)",
                      read("bindings/csharp/src/Objects.g.cs"))

    def test_flags_are_bools_in_every_language(self):
        flags = {
            (f["name"], p["name"]) for f in self.d["functions"] for p in f["params"] if p.get("flag")
        }
        self.assertEqual(
            flags, {("cuabi_module_get_from_cache", "hit"), ("cuabi_device_can_access_peer", "can_access")}
        )
        # "1 or 0 in `enabled`" does not read as the rule: an int32_t out.
        self.assertNotIn("flag", _param(_fn(self.d, "cuabi_graph_exec_get_node_enabled"), "enabled"))

        self.assertIn("def from_cache(self) -> bool:", read("bindings/python/cuabi/_objects.py"))
        self.assertIn("pub fn from_cache(&self) -> Result<bool>", read("bindings/rust/cuabi/src/objects.rs"))
        self.assertIn("public bool FromCache", read("bindings/csharp/src/Objects.g.cs"))
        self.assertIn("bool can_access_peer(cuabi_device peer) const;", read("include/cuabi/cuabi_objects.hpp"))

    def test_calls_that_release_their_receiver_consume_it(self):
        consumes = {f["name"] for f in self.d["functions"] if f["consumes"]}
        self.assertEqual(consumes, {"cuabi_buffer_free_async", "cuabi_physical_memory_free"})
        self.assertFalse(_fn(self.d, "cuabi_buffer_release")["consumes"])

    def test_every_function_and_parameter_has_a_known_role(self):
        for fn in self.d["functions"]:
            self.assertIn(fn["call"], model.CALLS, fn["name"])
            self.assertIn("CUABI_SUCCESS" if fn["returns"]["base"] == "cuabi_status" else None,
                          fn["statuses"] + [None], fn["name"])
            for p in fn["params"]:
                self.assertIn(p["role"], model.ROLES, f"{fn['name']}.{p['name']}")
            if fn["receiver"] is not None:
                self.assertEqual(_roles(fn)[fn["receiver"]], "receiver", fn["name"])

    def test_getter(self):
        fn = _fn(self.d, "cuabi_device_get_ordinal")
        self.assertEqual((fn["call"], fn["receiver"], fn["property"]), ("getter", "device", "ordinal"))
        self.assertEqual(_roles(fn), {"device": "receiver", "ordinal": "out"})
        self.assertEqual(fn["statuses"], ["CUABI_SUCCESS", "CUABI_ERROR_INVALID_ARGUMENT", "CUABI_ERROR_INVALID_HANDLE"])
        self.assertIsNone(fn["idiom"])

    def test_constructor_from_another_object(self):
        fn = _fn(self.d, "cuabi_buffer_alloc")
        self.assertEqual((fn["call"], fn["object"], fn["receiver"], fn["method"]), ("constructor", "buffer", "device", "alloc"))
        self.assertEqual(_roles(fn), {"device": "receiver", "bytes": "in", "out": "out_handle"})
        self.assertEqual(_param(fn, "out")["handle_type"], "cuabi_buffer")
        fn = _fn(self.d, "cuabi_device_get")
        self.assertEqual((fn["call"], fn["receiver"]), ("constructor", None))
        # A new handle of another kind is a method of the receiver's object.
        fn = _fn(self.d, "cuabi_module_get_function")
        self.assertEqual((fn["call"], fn["receiver"], fn["method"]), ("getter", "module", "get_function"))
        self.assertEqual(_param(fn, "out")["role"], "out_handle")

    def test_two_call_and_library(self):
        fn = _fn(self.d, "cuabi_device_get_name")
        self.assertEqual((fn["call"], fn["property"]), ("string", "name"))
        self.assertEqual(_param(fn, "buf")["size"], "size")
        self.assertEqual(_param(fn, "size")["role"], "two_call_size")
        self.assertIn("CUABI_ERROR_INSUFFICIENT_BUFFER", fn["statuses"])
        self.assertEqual(_fn(self.d, "cuabi_program_get_cubin")["call"], "blob")
        fn = _fn(self.d, "cuabi_driver_get_version")
        self.assertEqual((fn["call"], fn["receiver"], fn["method"]), ("library", None, "driver_version"))
        self.assertEqual(_fn(self.d, "cuabi_device_get_count")["method"], "device_count")
        self.assertEqual(_fn(self.d, "cuabi_device_get_compute_capability")["property"], "compute_capability")
        self.assertIsNone(_fn(self.d, "cuabi_device_get_attribute")["property"])

    def test_arrays_bytes_structs_and_nullables(self):
        fn = _fn(self.d, "cuabi_program_create")  # annotated: two arrays share one count
        self.assertEqual(_param(fn, "header_sources")["count"], "num_headers")
        self.assertEqual(_param(fn, "header_names")["count"], "num_headers")
        self.assertEqual(_param(fn, "num_headers")["role"], "count")
        self.assertTrue(_param(fn, "name")["nullable"])
        self.assertNotIn("@param", fn["doc"])
        fn = _fn(self.d, "cuabi_program_compile")
        self.assertEqual(_param(fn, "options")["count"], "num_options")
        fn = _fn(self.d, "cuabi_module_load_data")
        self.assertEqual((_param(fn, "image")["role"], _param(fn, "image")["size"]), ("bytes_in", "size"))
        fn = _fn(self.d, "cuabi_linker_create")
        desc = _param(fn, "desc")
        self.assertEqual((desc["role"], desc["struct"], desc["init"], desc["nullable"]),
                         ("struct_in", "cuabi_link_desc", "cuabi_link_desc_init", True))
        fn = _fn(self.d, "cuabi_event_record")
        stream = _param(fn, "stream")
        self.assertEqual((stream["role"], stream["handle_type"], stream["nullable"], stream["null_means"]),
                         ("handle", "cuabi_stream", True, "the default stream"))
        fn = _fn(self.d, "cuabi_launch_config_init")
        self.assertEqual(fn["call"], "struct_init")
        self.assertEqual(_fn(self.d, "cuabi_memory_pool_set_release_threshold")["call"], "setter")

    def test_statuses_and_idioms(self):
        self.assertIn("CUABI_ERROR_NOT_READY", _fn(self.d, "cuabi_stream_query")["statuses"])
        self.assertIn("CUABI_ERROR_COMPILE", _fn(self.d, "cuabi_program_compile")["statuses"])
        self.assertEqual(_fn(self.d, "cuabi_function_launch")["idiom"], "launch")
        self.assertEqual(_fn(self.d, "cuabi_launch_plan_create")["idiom"], "launch")
        self.assertEqual(_fn(self.d, "cuabi_buffer_get_ipc_handle")["idiom"], "ipc")
        self.assertEqual(_fn(self.d, "cuabi_stream_launch_host_func")["idiom"], "host_callback")
        self.assertEqual(_fn(self.d, "cuabi_buffer_copy_to_host_async")["idiom"], "host_view")
        self.assertIsNone(_fn(self.d, "cuabi_buffer_copy_to_host")["idiom"])

    def test_scopes(self):
        self.assertEqual(_fn(self.d, "cuabi_nvtx_range_push")["scope"],
                         {"name": "nvtx_range", "closer": "cuabi_nvtx_range_pop", "thread": True,
                          "keeps": ["domain"]})
        self.assertIsNone(_fn(self.d, "cuabi_nvtx_mark")["scope"])


class Undecided(unittest.TestCase):
    def _describe(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cuabi.h")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return model.describe(path)

    def _header(self):
        with open(HEADER, encoding="utf-8") as f:
            return f.read()

    def test_an_unannotated_ambiguous_function_names_itself(self):
        text = self._header().replace(
            "#ifdef __cplusplus\n}",
            "CUABI_API cuabi_status CUABI_CALL cuabi_device_get_scratch_table(cuabi_device device,\n"
            "    const int32_t* values, size_t n);\n#ifdef __cplusplus\n}",
        )
        self.assertIn("cuabi_device_get_scratch_table", text)
        with self.assertRaises(SystemExit) as caught:
            self._describe(text)
        message = str(caught.exception)
        self.assertIn("cuabi_device_get_scratch_table", message)
        self.assertIn("`values`", message)

    def test_the_annotation_decides_it(self):
        text = self._header().replace(
            "#ifdef __cplusplus\n}",
            "/* @param values array_in count=n */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_device_get_scratch_table(cuabi_device device,\n"
            "    const int32_t* values, size_t n);\n#ifdef __cplusplus\n}",
        )
        fn = _fn(self._describe(text), "cuabi_device_get_scratch_table")
        self.assertEqual(_roles(fn), {"device": "receiver", "values": "array_in", "n": "count"})
        self.assertEqual(fn["doc"], "")

    def test_removing_an_annotation_fails(self):
        text = self._header().replace(" * @param header_sources array_in count=num_headers\n", "")
        with self.assertRaises(SystemExit) as caught:
            self._describe(text)
        self.assertIn("cuabi_program_create, parameter `header_sources`", str(caught.exception))

    def test_an_unknown_role_is_refused(self):
        text = self._header().replace("@param header_names array_in", "@param header_names listing")
        with self.assertRaises(SystemExit) as caught:
            self._describe(text)
        self.assertIn("unknown role `listing`", str(caught.exception))

    def test_a_scope_whose_closer_takes_what_the_opener_lacks_is_refused(self):
        text = self._header().replace("@scope nvtx_range cuabi_nvtx_range_pop thread",
                                      "@scope nvtx_range cuabi_nvtx_range_end thread")
        with self.assertRaises(SystemExit) as caught:
            self._describe(text)
        self.assertIn("cuabi_nvtx_range_end's parameter `id` is none of this call's inputs",
                      str(caught.exception))

    def test_a_scope_needs_a_declared_closer(self):
        text = self._header().replace("@scope nvtx_range cuabi_nvtx_range_pop thread",
                                      "@scope nvtx_range cuabi_nvtx_range_close thread")
        with self.assertRaises(SystemExit) as caught:
            self._describe(text)
        self.assertIn("cuabi_nvtx_range_close, which the header does not declare", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
