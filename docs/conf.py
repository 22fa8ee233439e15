"""Sphinx configuration of the spare_fast site.

Build from the repository root with ``python -m sphinx -W --keep-going -b html docs build/docs``
after ``pip install ".[docs]"``. Every warning is an error, and the site's own checks
(``docs/_ext/spare_docs.py``) warn on a public name without a docstring and on a
cross-reference to a name that does not exist.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The package from this source tree (its compiled _core comes from the installed wheel of the
# same version when there is no in-place build: spare_fast/_locate.py).
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

import spare_fast  # noqa: E402

project = "spare_fast"
author = "spare_fast contributors"
copyright = f"{date.today().year}, {author}"
release = spare_fast.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinxarg.ext",
    "spare_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# The measured tables under sim/, theory/ and graph/ are written by the tools that measure
# them; the pages include them ({include}) rather than being built from them one by one.
exclude_patterns = ["_build", "sim/**", "theory/**", "graph/**", "_ext/**"]

# -- Strictness: a broken reference is an error ------------------------------------------------
nitpicky = True
# An ambiguous short name in a docstring links to the first match; that is not a broken link.
suppress_warnings = ["ref.python"]
# Names outside this project: the site links no other project's inventory (the build needs no
# network), so references to the standard library, numpy, torch and the like stay plain text.
_EXTERNAL = (
    r"(builtins|typing|collections|datetime|pathlib|os|io|enum|dataclasses|numbers|threading"
    r"|multiprocessing|concurrent|subprocess|signal|types|abc|numpy|np|npt|scipy|torch|torchft"
    r"|networkx|matplotlib|dask|tqdm|_io|_thread|argparse|contextlib|logging|random)(\..*)?"
)
_BUILTIN = (
    r"(None|True|False|int|float|bool|str|bytes|bytearray|object|type|list|tuple|dict|set"
    r"|frozenset|complex|slice|range|memoryview|callable|Ellipsis|NotImplemented|Any|Callable"
    r"|Sequence|Iterable|Iterator|Mapping|Literal|Optional|Union|ClassVar|Self|TypeAlias"
    r"|Exception|BaseException|ValueError|TypeError|IndexError|KeyError|RuntimeError"
    r"|OverflowError|MemoryError|OSError|FileNotFoundError|ImportError|TimeoutError"
    r"|KeyboardInterrupt|SystemExit|NotImplementedError|ArithmeticError|ZeroDivisionError"
    r"|StopIteration|AttributeError|AssertionError|PermissionError|ConnectionError"
    r"|DeprecationWarning|UserWarning|Warning|EOFError|LookupError|ndarray|ArrayLike|NDArray"
    r"|DTypeLike|PathLike|timedelta|Path|Tensor|Generator)"
)
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL),
    (r"py:.*", _BUILTIN),
]

# -- Autodoc ------------------------------------------------------------------------------------
autodoc_default_options = {
    "members": True,
    # Members without a docstring stay out; spare_docs checks that the class docstring names them.
    "show-inheritance": True,
    "member-order": "bysource",
}
# The numpydoc Parameters and Returns sections give the types, in words; the annotations
# (numpy's ArrayLike is a union of a dozen private protocols) would only repeat them, unreadably.
autodoc_typehints = "none"
autodoc_preserve_defaults = True
autoclass_content = "class"
# spare_fast.torch needs torch and torchft. They come with the test and torch extras (what CI
# installs); a docs-only environment documents the same source against stand-ins.
autodoc_mock_imports = []
if os.environ.get("SPARE_FAST_DOCS_MOCK_TORCH") or importlib.util.find_spec("torch") is None:
    autodoc_mock_imports = ["torch", "torchft"]

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_param = False
napoleon_use_rtype = False
napoleon_use_ivar = True
napoleon_preprocess_types = False

# -- Public modules: each gets a reference page and the docstring check --------------------------
spare_docs_public_modules = [
    "spare_fast",
    "spare_fast.layout",
    "spare_fast.graph",
    "spare_fast.sim",
    "spare_fast.theory",
    "spare_fast.theory.plan",
    "spare_fast.montecarlo",
    "spare_fast.torch",
    "spare_fast.torch.testing",
]

# -- MyST ---------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

# -- HTML ---------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"spare_fast {release}"
html_static_path: list[str] = []
