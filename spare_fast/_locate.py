"""Find the compiled extension when the source tree shadows the installed package.

Running ``python`` in the repository root after ``pip install .`` puts the source folder
``spare_fast/`` first on ``sys.path``, ahead of site-packages; the source folder has no
``_core`` extension unless it was built in place (``tools/dev-build.sh``). Then the installed
distribution's folder is appended to the package's ``__path__``, so that ``spare_fast._core``
(and the wheel's headers and CMake files) come from the installed wheel while the Python
modules come from the source tree. That is sound only for the same version; for another, or
with nothing installed, the import fails with one line saying what to do.
"""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

__all__ = ["extend_path", "package_folders"]

_DIST = "spare-fast"
# The package's __path__, as extend_path received it (the same list: appended to in place).
_package_path: list[str] = []


def _has_core(folder: Path) -> bool:
    return any(
        (folder / f"_core{suffix}").is_file() for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def extend_path(package_path: list[str], version: str) -> None:
    """Append the installed wheel's package folder to ``package_path`` if ``_core`` is missing.

    Raises
    ------
    ImportError
        No ``_core`` anywhere, or an installed one of another version (one-line hint).
    """
    global _package_path
    _package_path = package_path
    here = Path(package_path[0])
    if _has_core(here):
        return
    from importlib import metadata

    hint = (
        f"spare_fast._core (the compiled extension) is not in {here}, the source tree: build it "
        "in place with tools/dev-build.sh, or pip install . and run from another folder"
    )
    try:
        dist = metadata.distribution(_DIST)
    except metadata.PackageNotFoundError:
        raise ImportError(hint) from None
    if dist.version != version:
        raise ImportError(
            f"{hint} (the installed spare-fast is {dist.version}, this source tree {version})"
        )
    for f in dist.files or ():
        if f.parts[:1] == ("spare_fast",) and f.name.startswith("_core") and len(f.parts) == 2:
            folder = Path(str(dist.locate_file(f))).parent
            if _has_core(folder) and folder.resolve() != here.resolve():
                package_path.append(str(folder))
                return
    raise ImportError(hint)


def package_folders() -> list[str]:
    """The package's folders: its own, then the installed wheel's if :func:`extend_path` added it.

    What ``spare_fast.__path__`` holds, read without importing the package from one of its own
    modules (:mod:`spare_fast._install_info` is imported by the package's ``__init__``).
    """
    return list(_package_path) or [str(Path(__file__).resolve().parent)]
