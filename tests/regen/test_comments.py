"""The header's comments as the API model reads them (scripts/regen_api/model.py):
every function has one, a comment over a group of functions is each
member's, and Doxygen's comment forms read as the plain ones do.

  python3 tests/regen/test_comments.py
"""

from __future__ import annotations

import os
import re
import tempfile
import unittest

from regen_paths import HEADER  # also puts the generators on sys.path

import model  # noqa: E402

END = "#ifdef __cplusplus\n}"


def _header():
    with open(HEADER, encoding="utf-8") as f:
        return f.read()


def _describe(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cuabi.h")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return model.describe(path)


def _docs(description):
    return {f["name"]: f["doc"] for f in description["functions"]}


def _with(declarations):
    """The header with `declarations` added at its end."""
    text = _header()
    assert END in text
    return text.replace(END, declarations + "\n" + END)


class EveryFunction(unittest.TestCase):
    def test_every_function_has_a_comment(self):
        empty = [f["name"] for f in model.describe()["functions"] if not f["doc"].strip()]
        self.assertEqual(empty, [], "functions without a comment in include/cuabi/cuabi.h "
                         "(write one above each, or above its group)")

    def test_every_group_is_a_doxygen_member_group(self):
        """A function that takes the comment of the group above it lies between
        /**@{*/ and /**@}*/, so that Doxygen gives it that comment too."""
        lines = _header().split("\n")
        starts = {}
        for f in model.describe()["functions"]:
            at = next(i for i, l in enumerate(lines, 1) if re.search(rf"\b{f['name']}\(", l))
            starts[f["name"]] = at
        order = sorted(starts, key=starts.get)
        outside = []
        for prev, name in zip(order, order[1:]):
            if model._end_line(lines, starts[prev]) != starts[name] - 1:
                continue
            marks = [l.strip() for l in lines[: starts[name] - 1] if l.strip() in ("/**@{*/", "/**@}*/")]
            if not marks or marks[-1] != "/**@{*/":
                outside.append(name)
        self.assertEqual(outside, [], "members of a group outside /**@{*/ ... /**@}*/")


class Groups(unittest.TestCase):
    def test_a_group_comment_reaches_every_member(self):
        docs = _docs(_describe(_with(
            "/** Reads a scratch value. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_a(int32_t* value);\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_b(int32_t* value);\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_c(int32_t* value);\n")))
        for name in ("cuabi_scratch_a", "cuabi_scratch_b", "cuabi_scratch_c"):
            self.assertEqual(docs[name], "Reads a scratch value.", name)

    def test_a_blank_line_or_a_comment_ends_a_group(self):
        docs = _docs(_describe(_with(
            "/** The first. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_a(int32_t* value);\n"
            "\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_b(int32_t* value);\n"
            "/** The third. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_c(int32_t* value);\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_d(int32_t* value);\n"
            "/**@}*/\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_e(int32_t* value);\n")))
        self.assertEqual(docs["cuabi_scratch_a"], "The first.")
        self.assertEqual(docs["cuabi_scratch_b"], "")
        self.assertEqual(docs["cuabi_scratch_c"], "The third.")
        self.assertEqual(docs["cuabi_scratch_d"], "The third.")
        self.assertEqual(docs["cuabi_scratch_e"], "")

    def test_a_multi_line_declaration_stays_in_its_group(self):
        docs = _docs(_describe(_with(
            "/** Copies scratch values. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_a(int32_t* value,\n"
            "                                                  size_t count);\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_b(int32_t* value);\n")))
        self.assertEqual(docs["cuabi_scratch_b"], "Copies scratch values.")

    def test_a_group_comment_carries_its_statuses(self):
        d = _describe(_with(
            "/** Reads a scratch value; CUABI_ERROR_NOT_FOUND without one. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_a(int32_t* value);\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_b(int32_t* value);\n"))
        fn = next(f for f in d["functions"] if f["name"] == "cuabi_scratch_b")
        self.assertIn("CUABI_ERROR_NOT_FOUND", fn["statuses"])


class CommentForms(unittest.TestCase):
    def test_doxygen_and_plain_comments_read_alike(self):
        docs = _docs(_describe(_with(
            "/** One line. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_a(int32_t* value);\n"
            "/* One line. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_b(int32_t* value);\n"
            "/**\n * Two\n * lines.\n */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_c(int32_t* value);\n"
            "/**@{*/\n"
            "/** *value, marked. */\n"
            "CUABI_API cuabi_status CUABI_CALL cuabi_scratch_d(int32_t* value);\n"
            "/**@}*/\n")))
        self.assertEqual(docs["cuabi_scratch_a"], "One line.")
        self.assertEqual(docs["cuabi_scratch_b"], "One line.")
        self.assertEqual(docs["cuabi_scratch_c"], "Two\nlines.")
        self.assertEqual(docs["cuabi_scratch_d"], "*value, marked.")

    def test_a_trailing_doxygen_comment_documents_its_line(self):
        d = model.describe()
        record = next(s for s in d["structs"] if s["name"] == "cuabi_launch_record")
        fields = {f["name"]: f["doc"] for f in record["fields"]}
        self.assertEqual(fields["struct_size"], "sizeof(cuabi_launch_record)")
        self.assertEqual(fields["grid_y"], fields["grid_x"])
        self.assertTrue(fields["grid_x"])
        handles = {h["name"]: h["doc"] for h in d["handles"]}
        self.assertEqual(handles["cuabi_device"], "a GPU and its primary context")


if __name__ == "__main__":
    unittest.main()
