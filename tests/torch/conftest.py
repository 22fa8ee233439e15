"""The PyTorch executor's tests: every test here carries the ``torch`` marker.

The parent ``conftest.py`` does not collect this folder without the torch extra, so no module
here needs a skip preamble; ``pytest -m "not torch"`` leaves the folder out as well.
``_torch_harness.py`` (this folder is on ``sys.path`` under pytest's default import mode) holds
the harnesses the tests and ``benchmarks/`` share.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

# torchft reads RUST_LOG once, when it is first imported: keep its Rust logging to warnings.
os.environ.setdefault("RUST_LOG", "warn")

_HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def mlp_reference() -> Any:
    """The single-process failure-free weights of the MLP run of ``LOOP_STEPS`` steps on
    ``LOOP_LAYOUT`` (the loop and bounds tests compare every process with it)."""
    from _torch_harness import LOOP_LAYOUT, LOOP_STEPS

    from spare_fast.torch import TrainSpec, mlp
    from spare_fast.torch.testing import reference_params

    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, LOOP_STEPS)
    return reference_params(spec, LOOP_LAYOUT.n_types)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.torch)
