"""Where the package keeps its C/C++ parts: get_include, get_cmake_dir, --includedir/--cmakedir.

A wheel install ships the headers, the static library and the CMake package; a source tree
(the developer build) has none of them, and the functions then say so.
"""

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import spare_fast

PACKAGE = Path(spare_fast.__file__).resolve().parent
# The wheel's folder: the package itself, or, when a source tree shadows the installed package
# (spare_fast/_locate.py), the installed folder appended to its __path__.
WHEEL = next(
    (
        Path(folder).resolve()
        for folder in spare_fast.__path__
        if (Path(folder) / "share" / "cmake" / "spare_fast").is_dir()
    ),
    None,
)
INSTALLED = WHEEL is not None
needs_wheel = pytest.mark.skipif(not INSTALLED, reason="needs spare_fast installed from a wheel")


def run_module(*args):
    return subprocess.run(
        [sys.executable, "-m", "spare_fast", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=PACKAGE.parent,  # not the source tree, whose spare_fast/ would shadow the installed one
    )


def test_the_pxd_ships_in_the_package():
    pxd = resources.files("spare_fast").joinpath("libspare.pxd").read_text()
    assert "cdef cppclass Controller" in pxd and "cdef cppclass Decision" in pxd


@needs_wheel
def test_get_include_holds_the_headers():
    include = Path(spare_fast.get_include())
    for header in ("controller.hpp", "c_api.h", "batch.hpp", "validate.hpp"):
        assert (include / "spare_fast" / header).is_file()


@needs_wheel
def test_get_cmake_dir_holds_the_package_and_the_library():
    cmake_dir = Path(spare_fast.get_cmake_dir())
    assert (cmake_dir / "spare_fastConfig.cmake").is_file()
    assert (cmake_dir / "spare_fastConfigVersion.cmake").is_file()
    assert "spare_fast::core" in (cmake_dir / "spare_fastTargets.cmake").read_text()
    assert WHEEL is not None and list((WHEEL / "lib").glob("libspare_fast_core.*"))


@needs_wheel
@pytest.mark.parametrize(
    ("flag", "func"), [("--cmakedir", "get_cmake_dir"), ("--includedir", "get_include")]
)
def test_module_flags_print_the_directories(flag, func):
    out = run_module(flag)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == getattr(spare_fast, func)()


@pytest.mark.skipif(INSTALLED, reason="only a source tree lacks the C++ package")
def test_a_source_tree_says_it_has_no_cmake_package():
    with pytest.raises(FileNotFoundError, match="not installed from a wheel"):
        spare_fast.get_cmake_dir()
    out = run_module("--cmakedir")
    assert out.returncode == 1 and "not installed from a wheel" in out.stderr


def test_other_arguments_reach_the_command_line():
    out = run_module("--help")
    assert out.returncode == 0 and "COMMAND" in out.stdout
