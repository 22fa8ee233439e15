"""What the benchmarks share.

The executor's benchmarks (``bench_torch*.py``, ``bench_trust.py``, ``bench_bounds.py``) need
the torch extra; without it they are not collected, and the session header says why. They use
the test harnesses of ``tests/torch/_torch_harness.py``, whose folder is put on ``sys.path``
here (the fork server that starts their workers inherits it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from spare_fast.testing.extras import torch_missing

_TORCH_BENCHES = [
    "bench_torch.py",
    "bench_torch_ranks.py",
    "bench_trust.py",
    "bench_bounds.py",
    "bench_own_loop_scale.py",
]


TORCH_MISSING = torch_missing()
collect_ignore = _TORCH_BENCHES if TORCH_MISSING else []

# torchft reads RUST_LOG once, when it is first imported: keep its Rust logging to warnings.
os.environ.setdefault("RUST_LOG", "warn")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "torch"))


def pytest_report_header(config: pytest.Config) -> str | None:
    return f"executor benchmarks: not run, {TORCH_MISSING}" if TORCH_MISSING else None
