"""The package's structure, read from the source: no import circle, and no test code on the
executor's production path.

Both checks read every module's import statements with ``ast`` (``tests/_imports.py``),
function-level (lazy) imports included, and import nothing, so they run without the torch
extra.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _imports import Import, find_cycle, imports, modules

ROOT = Path(__file__).resolve().parents[1]
MODULES = modules(ROOT)
EDGES = imports(MODULES)

TESTING = "spare_fast.torch.testing"
#: The old addresses of the toy tasks, now aliases of the testing package's modules.
ALIASES = ("spare_fast.torch.mlp", "spare_fast.torch.tiny")
#: Where a runtime module may import the testing package, inside a function only: the
#: package's ``__getattr__`` (the old addresses ``spare_fast.torch.Kill``, ...) and the
#: launcher's hook for the deprecated ``kills=`` / ``faults=`` / ``injector=`` arguments.
LAZY_DOORS = {("spare_fast.torch", "__getattr__"), ("spare_fast.torch._launcher", "_testing")}


def _shown(cycle: list[Import]) -> str:
    return "\n".join(
        f"  {e.source} -> {e.target}  ({e.path.relative_to(ROOT)}:{e.line}"
        f"{', in ' + e.scope if e.scope else ''})"
        for e in cycle
    )


def test_the_reader_sees_lazy_and_dynamic_imports():
    # The graph is only as good as the reader: a lazy import inside a function, a relative-free
    # `from package import submodule`, and importlib.import_module over an f-string.
    lazy = [e for e in EDGES if e.source == "spare_fast.montecarlo" and e.lazy]
    assert any(e.target == "spare_fast._core" for e in lazy)
    cli = {e.target for e in EDGES if e.source == "spare_fast.cli" and e.scope == "build_parser"}
    assert {"spare_fast.cli.demo", "spare_fast.cli.ledger"} <= cli
    assert len(MODULES) > 80 and len(EDGES) > 300


def test_the_cycle_finder_finds_a_lazy_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from pkg.high import g\n    return g\n")
    (pkg / "mid.py").write_text("from pkg import low\n")
    (pkg / "high.py").write_text("from pkg.mid import low\n\ndef g():\n    pass\n")
    cycle = find_cycle(imports(modules(tmp_path, "pkg")))
    assert {e.source for e in cycle} == {"pkg.low", "pkg.mid", "pkg.high"}
    assert any(e.lazy and e.scope == "f" for e in cycle)
    (pkg / "low.py").write_text("def f():\n    return 1\n")
    assert find_cycle(imports(modules(tmp_path, "pkg"))) == []


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(EDGES)
    assert not cycle, "import cycle (lazy imports included):\n" + _shown(cycle)


@pytest.mark.parametrize("module", ["spare_fast._validation", "spare_fast._durations"])
def test_validation_is_the_bottom_floor(module):
    # The argument checks and the duration syntax import nothing of the package but each other.
    above = {e.target for e in EDGES if e.source == module}
    assert above <= {"spare_fast._validation", "spare_fast._durations"}, above


def _runtime() -> list[str]:
    """The executor's runtime modules: spare_fast.torch and its modules outside testing."""
    return [
        m
        for m in MODULES
        if (m == "spare_fast.torch" or m.startswith("spare_fast.torch."))
        and not (m == TESTING or m.startswith(TESTING + "."))
        and m not in ALIASES
    ]


def test_the_runtime_lists_the_executor():
    core = {"spare_fast.torch._types", "spare_fast.torch._launcher", "spare_fast.torch._group"}
    assert core <= set(_runtime())
    assert f"{TESTING}.faults" in MODULES and f"{TESTING}.plans" in MODULES


def test_no_runtime_module_imports_the_testing_package_at_import():
    # What a module imports at its top, and what those import at theirs, down to the bottom:
    # none of it may be the testing package (or an alias of it) for any runtime module, _types
    # (the plain data every runtime module shares) included.
    eager: dict[str, set[str]] = {}
    for e in EDGES:
        if not e.lazy:
            eager.setdefault(e.source, set()).add(e.target)
    for module in _runtime():
        seen, todo, via = {module}, [module], {module: module}
        while todo:
            here = todo.pop()
            for target in eager.get(here, ()):
                if target not in seen:
                    seen.add(target)
                    via[target] = here
                    todo.append(target)
        bad = sorted(t for t in seen if t.startswith(TESTING) or t in ALIASES)
        chain = [bad[0]] if bad else []
        while chain and chain[-1] != module:
            chain.append(via[chain[-1]])
        assert not bad, f"{module} imports {bad[0]} at import time: " + " <- ".join(chain)


def test_runtime_modules_import_the_testing_package_only_through_the_named_doors():
    lazy = {
        (e.source, e.scope, e.line)
        for e in EDGES
        if e.source in _runtime() and (e.target.startswith(TESTING) or e.target in ALIASES)
    }
    assert {(source, scope) for source, scope, _ in lazy} <= LAZY_DOORS, sorted(lazy)
    # _types itself imports nothing of the package at all.
    assert not [e for e in EDGES if e.source == "spare_fast.torch._types"]
