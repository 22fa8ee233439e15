"""Importing spare_fast from a source tree that shadows an installed wheel (spare_fast/_locate.py).

Each case builds, in a temporary folder, a source tree (the package's Python files, no
``_core``) and a site folder holding the extension with a ``spare-fast`` dist-info, then
imports from the source tree's root in a fresh interpreter, as ``python -c`` in the
repository root does after ``pip install .``.
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import spare_fast

PACKAGE = Path(spare_fast.__file__).resolve().parent


def _installed() -> bool:
    from importlib import metadata

    try:
        metadata.distribution("spare-fast")
    except metadata.PackageNotFoundError:
        return False
    return True


def _core_file() -> Path:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        f = Path(spare_fast._core.__file__)
        if f.name.endswith(suffix):
            return f
    raise AssertionError("no compiled _core")


def _layout(tmp: Path, version: str | None) -> tuple[Path, Path]:
    src = tmp / "repo"
    shutil.copytree(
        PACKAGE, src / "spare_fast", ignore=shutil.ignore_patterns("_core*.so", "__pycache__")
    )
    for f in (src / "spare_fast").glob("_core*"):
        if f.suffix != ".pyi":
            f.unlink()
    site = tmp / "site"
    if version is not None:
        pkg = site / "spare_fast"
        pkg.mkdir(parents=True)
        core = _core_file()
        shutil.copy2(core, pkg / core.name)
        info = site / f"spare_fast-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: spare-fast\nVersion: {version}\n"
        )
        (info / "RECORD").write_text(f"spare_fast/{core.name},,\n")
    else:
        site.mkdir()
    return src, site


def _run(src: Path, site: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=src, env=env, capture_output=True, text=True, timeout=120
    )


def test_source_tree_uses_the_installed_extension(tmp_path: Path) -> None:
    src, site = _layout(tmp_path, spare_fast.__version__)
    p = _run(
        src,
        site,
        "import spare_fast, spare_fast._core as c; from spare_fast import Controller, Layout\n"
        "d = Controller(Layout.cyclic(4, 2)).fail([1])\n"
        "print(d.status, spare_fast.__file__, c.__file__)",
    )
    assert p.returncode == 0, p.stderr
    status, init, core = p.stdout.split()
    assert status == "OK"
    assert Path(init).is_relative_to(src)  # the Python modules come from the source tree
    assert Path(core).is_relative_to(site)  # the extension from the installed wheel


@pytest.mark.parametrize("version", [None, "0.0.1"])
def test_source_tree_without_a_matching_install_says_what_to_do(
    tmp_path: Path, version: str | None
) -> None:
    if version is None and _installed():
        pytest.skip("a spare-fast wheel is installed here: it is the fallback, rightly")
    src, site = _layout(tmp_path, version)
    p = _run(src, site, "import spare_fast")
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: spare_fast._core (the compiled extension) is not in")
    assert "tools/dev-build.sh" in last
    if version:
        assert "installed spare-fast is 0.0.1" in last
