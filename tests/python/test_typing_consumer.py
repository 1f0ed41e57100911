"""tests/python/typing/consumer.py imports every name of cuabi.__all__, so
that its mypy --strict check (CTest python_typing_consumer) covers each one."""

import ast
import os

import cuabi

CONSUMER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "typing", "consumer.py")


def test_the_consumer_imports_every_exported_name():
    with open(CONSUMER, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "cuabi"
        for alias in node.names
    }
    missing = sorted(set(cuabi.__all__) - imported)
    assert not missing, f"add to tests/python/typing/consumer.py: {', '.join(missing)}"
    unknown = sorted(imported - set(cuabi.__all__))
    assert not unknown, f"not in cuabi.__all__: {', '.join(unknown)}"
