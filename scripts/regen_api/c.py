"""The C side: the core's status table, the header ABI test lists, and the
API description that ships beside the header."""

from __future__ import annotations

import json
from typing import Any, Dict

from common import BANNER, banner, c_string, one_line


def status_table(model: Dict[str, Any]) -> str:
    status = next(e for e in model["enums"] if e["name"] == "cuabi_status")
    out = [banner("//"), "// One {name, description} per status, in value order (capi/core/error.cpp).\n"]
    for i, v in enumerate(status["values"]):
        assert v["value"] == i, "statuses must be numbered 0, 1, 2, ... without gaps"
        out.append(f'{{"{v["name"]}", "{c_string(one_line(v["doc"]))}"}},\n')
    return "".join(out)


def header_abi(model: Dict[str, Any]) -> str:
    names = []
    for e in model["enums"]:
        names += [v["name"] for v in e["values"]]
    names += [c["name"] for c in model["constants"] if c["type"] == "int"]
    layout = []
    for s in model["structs"]:
        layout.append(f"sizeof({s['name']})")
        layout += [f"offsetof({s['name']}, {f['name']})" for f in s["fields"]]
    layout += [f"sizeof({e['name']})" for e in model["enums"]]
    layout += [f"sizeof({f['name']})" for f in model["flags"]]
    def lst(macro: str, items: Any) -> str:
        body = " \\\n".join(f"  X({i})" for i in items)
        return f"#define {macro}(X) \\\n{body}\n"
    return (
        f"/* {BANNER} */\n"
        "/* The header's constants and public layout. The C99 and C++ test sources\n"
        " * expand these lists with their own compilers and the tests compare the\n"
        " * results, so both languages agree on the ABI. */\n"
        "#ifndef CUABI_TESTS_C_HEADER_ABI_H\n#define CUABI_TESTS_C_HEADER_ABI_H\n\n"
        "/* Every function, in header order. */\n"
        + lst("CUABI_TEST_FUNCTIONS", [f["name"] for f in model["functions"]])
        + "\n/* Every enumerator and integer constant, in header order. */\n"
        + lst("CUABI_TEST_CONSTANTS", names)
        + "\n/* Every enum type. */\n"
        + lst("CUABI_TEST_ENUM_TYPES", [e["name"] for e in model["enums"]])
        + "\n/* Sizes and offsets of the public structs, enums and flag sets. */\n"
        + lst("CUABI_TEST_LAYOUT", layout)
        + "\n/* Expands one list item as an array element. */\n"
        "#define CUABI_TEST_ELEMENT(value) value,\n\n"
        "#endif /* CUABI_TESTS_C_HEADER_ABI_H */\n"
    )


def description(model: Dict[str, Any]) -> str:
    doc = dict(model)
    doc = {"generated": BANNER, **doc}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def outputs(model: Dict[str, Any]) -> Dict[str, str]:
    return {
        "capi/status_text.inc": status_table(model),
        "tests/c/header_abi.h": header_abi(model),
        "include/cuabi/cuabi.json": description(model),
    }
