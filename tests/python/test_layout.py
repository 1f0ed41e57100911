"""The package reads in one direction: generated declarations (_api,
_errors), then generated objects (_objects), then the hand-written idioms,
then __init__. No module imports another inside a function to dodge a
circle, and the imports made when the package loads form no circle.
Imports under ``if TYPE_CHECKING:`` are for annotations only and are left
out."""

import ast
import os

PACKAGE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "bindings",
    "python",
    "cuabi",
)


def _modules():
    for name in sorted(os.listdir(PACKAGE)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
                yield name[:-3], ast.parse(f.read())


def _target(node, module):
    """The package module an ImportFrom names, or None."""
    if node.level != 1:
        return None
    if node.module:
        return node.module.split(".")[0]
    return None


def _is_type_checking(node):
    return isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"


def _load_time_imports(tree):
    """Package modules imported when the module runs (top level, not under
    TYPE_CHECKING); `from . import x` counts as importing x."""
    found = set()
    for node in tree.body:
        if _is_type_checking(node):
            continue
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []:
            if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                if sub.module:
                    found.add(sub.module.split(".")[0])
                else:
                    found.update(a.name for a in sub.names)
    return found


def test_no_import_inside_a_function():
    offenders = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                        offenders.append(f"{name}.py:{sub.lineno} (in {node.name})")
    assert not offenders, "package imports inside functions: " + ", ".join(offenders)


def test_no_import_circle():
    graph = {name: _load_time_imports(tree) for name, tree in _modules()}
    state = {}
    path = []

    def visit(name):
        state[name] = "open"
        path.append(name)
        for dep in sorted(graph.get(name, ())):
            if dep not in graph:
                continue
            if state.get(dep) == "open":
                cycle = path[path.index(dep):] + [dep]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        path.pop()
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_generated_layers_come_first():
    graph = {name: _load_time_imports(tree) for name, tree in _modules()}
    assert graph["_api"] == set()
    assert graph["_errors"] <= {"_error_base"}
    assert graph["_objects"] <= {"_api", "_base", "_loader"}
