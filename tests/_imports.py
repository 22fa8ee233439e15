"""The package's module import graph, read from the source (``ast``), nothing imported.

Every ``import`` and ``from ... import`` statement counts, wherever it stands: at module level,
inside a function (a lazy import), under ``if TYPE_CHECKING:``. So does
``importlib.import_module`` (or ``__import__``) with a constant name, or with an f-string
whose constant head names a package (then every module under that package is a target, as
``spare_fast.cli`` imports its subcommands by name). An edge goes to the module a statement
names: ``from a.b import c`` targets ``a.b.c`` when that is a module and ``a.b`` otherwise.
The implicit import of a module's parent packages is no edge (every submodule has it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Import", "find_cycle", "imports", "modules"]


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target`` at ``path:line``.

    ``scope`` is the dotted name of the function or class around the statement (``""`` at
    module level); ``lazy`` is whether the statement runs only when that function is called.
    """

    source: str
    target: str
    path: Path
    line: int
    scope: str
    lazy: bool


def modules(root: Path, package: str = "spare_fast") -> dict[str, Path]:
    """Every module of ``package`` under ``root``: dotted name -> file.

    ``.pyi`` files stand for compiled extensions (``spare_fast._core``) that have no ``.py``.
    """
    out: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if path.suffix == ".py" or name not in out:
            out[name] = path
    return out


def _nearest(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _dynamic_targets(call: ast.Call, known: dict[str, Path]) -> list[str]:
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if called not in ("import_module", "__import__") or not call.args:
        return []
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.JoinedStr) and arg.values:
        head = arg.values[0]
        if isinstance(head, ast.Constant) and str(head.value).endswith("."):
            return [m for m in known if m.startswith(str(head.value))]
    return []


class _Walker(ast.NodeVisitor):
    def __init__(self, module: str, path: Path, known: dict[str, Path]) -> None:
        self.module, self.path, self.known = module, path, known
        self.is_package = path.stem == "__init__"
        self.scope: list[str] = []
        self.lazy = 0
        self.found: list[Import] = []

    def _add(self, target: str, node: ast.AST) -> None:
        hit = _nearest(target, self.known)
        if hit is not None and hit != self.module:
            self.found.append(
                Import(
                    self.module,
                    hit,
                    self.path,
                    getattr(node, "lineno", 0),
                    ".".join(self.scope),
                    self.lazy > 0,
                )
            )

    def _enter(self, node: ast.AST, name: str, lazy: bool) -> None:
        self.scope.append(name)
        self.lazy += lazy
        self.generic_visit(node)
        self.lazy -= lazy
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._enter(node, node.name, True)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._enter(node, node.name, True)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._enter(node, "<lambda>", True)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._enter(node, node.name, False)  # a class body runs at import

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = _base(node, self.module, self.is_package)
        for alias in node.names:
            full = f"{base}.{alias.name}"
            self._add(full if full in self.known else base, node)

    def visit_Call(self, node: ast.Call) -> None:
        for target in _dynamic_targets(node, self.known):
            self._add(target, node)
        self.generic_visit(node)


def imports(known: dict[str, Path]) -> list[Import]:
    """Every edge of the graph over the modules ``known`` (from :func:`modules`)."""
    out: list[Import] = []
    for name, path in known.items():
        if path.suffix != ".py":
            continue
        walker = _Walker(name, path, known)
        walker.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out.extend(walker.found)
    return out


def find_cycle(edges: list[Import]) -> list[Import]:
    """One cycle of the graph, as the edges that close it in order; empty if there is none."""
    graph: dict[str, list[Import]] = {}
    for e in edges:
        graph.setdefault(e.source, []).append(e)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []  # the nodes of the current path
    path: list[Import] = []  # the edges between them

    def visit(node: str) -> list[Import]:
        state[node] = 1
        stack.append(node)
        for e in graph.get(node, []):
            if state.get(e.target) == 1:
                return [*path[stack.index(e.target) :], e]
            if e.target not in state:
                path.append(e)
                found = visit(e.target)
                if found:
                    return found
                path.pop()
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []
