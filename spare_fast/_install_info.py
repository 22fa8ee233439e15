"""Where the installed package keeps the C++ headers, the static library and the CMake files.

The wheel ships the decision core for C, C++ and Cython projects: the headers under
``spare_fast/include``, the static library under ``spare_fast/lib`` and the CMake package
(``spare_fastConfig.cmake``, target ``spare_fast::core``) under
``spare_fast/share/cmake/spare_fast``, as pybind11 does. A CMake project then builds with::

    cmake -DCMAKE_PREFIX_PATH="$(python -m spare_fast --cmakedir)" ...
"""

from __future__ import annotations

from pathlib import Path

from spare_fast._locate import package_folders

__all__ = ["get_cmake_dir", "get_include"]

_PACKAGE = Path(__file__).resolve().parent


def get_include() -> str:
    """The directory holding ``spare_fast/controller.hpp`` and ``spare_fast/c_api.h``.

    Returns
    -------
    str
        ``<site-packages>/spare_fast/include`` for an installed wheel.

    Raises
    ------
    FileNotFoundError
        When the package was not installed from a wheel (a source tree or a developer build
        ships no headers there; use ``csrc/include`` or ``cmake --install`` instead).

    Examples
    --------
    >>> import spare_fast
    >>> spare_fast.get_include().endswith("include")  # doctest: +SKIP
    True
    """
    return _existing("include", "headers")


def get_cmake_dir() -> str:
    """The directory holding ``spare_fastConfig.cmake``, for ``CMAKE_PREFIX_PATH``.

    Returns
    -------
    str
        ``<site-packages>/spare_fast/share/cmake/spare_fast`` for an installed wheel.

    Raises
    ------
    FileNotFoundError
        As :func:`get_include`.
    """
    return _existing("share/cmake/spare_fast", "CMake package")


def _existing(sub: str, what: str) -> str:
    # The package's folders: this one, then the installed wheel's when a source tree shadows
    # it (spare_fast/_locate.py).
    for folder in package_folders():
        if (Path(folder) / sub).is_dir():
            return str(Path(folder) / sub)
    path = _PACKAGE / sub
    if not path.is_dir():
        raise FileNotFoundError(
            f"{path} does not exist: this spare_fast was not installed from a wheel, so it has "
            f"no {what} (pip install the package, or cmake --install a build of the source tree)"
        )
    return str(path)


def main(argv: list[str]) -> int | None:
    """Handles ``python -m spare_fast --includedir | --cmakedir``; None for anything else."""
    flags = {"--includedir": get_include, "--cmakedir": get_cmake_dir}
    if len(argv) != 1 or argv[0] not in flags:
        return None
    try:
        print(flags[argv[0]]())
    except FileNotFoundError as e:
        import sys

        print(f"spare_fast: {e}", file=sys.stderr)
        return 1
    return 0
