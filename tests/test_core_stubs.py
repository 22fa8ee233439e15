"""The hand-written stubs spare_fast/_core.pyi match the compiled bindings exactly.

For every function, method and constructor: the same parameter names in the same order and
the same defaults; for every class: the same properties; for the module: the same names.
pybind11 writes each binding's signature on the first line of its docstring.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from spare_fast import _core

STUB = Path(_core.__file__).with_name("_core.pyi")
if not STUB.exists():  # an installed extension next to the source stub
    STUB = Path(__file__).resolve().parents[1] / "spare_fast" / "_core.pyi"


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def _binding_params(func: object) -> list[tuple[str, object]]:
    """(name, default or inspect.Parameter.empty) from a pybind11 docstring's first line."""
    line = (func.__doc__ or "").strip().splitlines()[0]
    inner = line[line.index("(") + 1 : line.rindex(") ->")]
    out: list[tuple[str, object]] = []
    for part in _split_top(inner):
        name, _, rest = part.partition(":")
        default: object = inspect.Parameter.empty
        if "=" in rest:
            default = ast.literal_eval(rest.rsplit("=", 1)[1].strip())
        out.append((name.strip(), default))
    return [p for p in out if p[0] != "self"]


def _stub_params(node: ast.FunctionDef) -> list[tuple[str, object]]:
    args = node.args.args
    defaults = [inspect.Parameter.empty] * (len(args) - len(node.args.defaults)) + [
        ast.literal_eval(d) for d in node.args.defaults
    ]
    return [(a.arg, d) for a, d in zip(args, defaults, strict=True) if a.arg != "self"]


def _stub() -> tuple[dict[str, ast.FunctionDef], dict[str, ast.ClassDef]]:
    tree = ast.parse(STUB.read_text())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    return funcs, classes


def _is_property(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def test_module_names_match():
    funcs, classes = _stub()
    compiled = {n for n in dir(_core) if not n.startswith("__")}
    assert compiled == set(funcs) | set(classes)


@pytest.mark.parametrize("name", sorted(_stub()[0]))
def test_function_signature_matches(name):
    assert _binding_params(getattr(_core, name)) == _stub_params(_stub()[0][name])


@pytest.mark.parametrize("name", ["Controller", "Decision"])
def test_class_matches(name):
    cls = getattr(_core, name)
    node = _stub()[1][name]
    methods = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    props = {n for n, f in methods.items() if _is_property(f)}
    compiled_props = {n for n, v in vars(cls).items() if isinstance(v, property)}
    assert compiled_props == props
    # pybind11's own cross-module hook is no part of the API.
    compiled_methods = {
        n
        for n, v in vars(cls).items()
        if (callable(v) or isinstance(v, staticmethod))
        and not n.startswith("__")
        and n != "_pybind11_conduit_v1_"
    }
    stub_methods = set(methods) - props - {"__init__"}
    assert compiled_methods == stub_methods
    for m in stub_methods | ({"__init__"} & set(methods)):
        assert _binding_params(getattr(cls, m)) == _stub_params(methods[m]), m


def test_decision_cannot_be_built_from_python():
    with pytest.raises(TypeError):
        _core.Decision()


def test_every_argument_is_named():
    ctl = _core.Controller(stacks=np.array([[0, 1], [1, 2], [2, 0]], np.int32), move_cost=None)
    d = ctl.fail(groups=np.array([1], np.int32))
    assert d.status == 0 and d.event == 1
    assert ctl.rejoin(groups=np.array([1], np.int32)).event == 2
    core, meta = _core.Controller.restore(data=ctl.snapshot(meta=b"m"))
    assert meta == b"m" and core.events == 2


def test_python_decision_has_no_public_constructor():
    from spare_fast import Decision

    with pytest.raises(TypeError, match="made by Controller"):
        Decision((0, 0, 1, 0, 0, np.zeros((0, 2), np.int32), 0.0, False))
