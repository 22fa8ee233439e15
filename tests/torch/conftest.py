"""The PyTorch executor's tests: every test here carries the ``torch`` marker.

The parent ``conftest.py`` does not collect this folder without the torch extra, so no module
here needs a skip preamble; ``pytest -m "not torch"`` leaves the folder out as well.
``_torch_harness.py`` (this folder is on ``sys.path`` under pytest's default import mode) holds
the harnesses the tests and ``benchmarks/`` share.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# torchft reads RUST_LOG once, when it is first imported: keep its Rust logging to warnings.
os.environ.setdefault("RUST_LOG", "warn")

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.torch)
