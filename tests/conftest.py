"""What several test files share: the ``torch`` marker and the fixtures below.

* ``@pytest.mark.torch`` marks a test that needs the torch extra (torch and torchft); without
  it such a test is skipped, with the missing package as the reason.  The executor's tests sit
  in ``torch/`` (every one marked there); without the extra that folder is not collected at
  all, and the session header says why, so no module needs a skip preamble of its own.
* ``requires_torch``: a fixture for a test that imports torch itself; it skips the test
  without the extra and returns the ``torch`` module.
* ``run_cli``: runs ``spare-fast`` in this process and returns the exit status with what it
  printed on stdout and stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from spare_fast.testing.extras import torch_missing

TORCH_MISSING = torch_missing()

# Modules that import torch at their top cannot even be collected without it.
collect_ignore_glob = ["torch/*"] if TORCH_MISSING else []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "torch: needs the torch extra (torch and torchft); skipped without it"
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    return f"torch tests: not run, {TORCH_MISSING}" if TORCH_MISSING else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if TORCH_MISSING is None:
        return
    skip = pytest.mark.skip(reason=TORCH_MISSING)
    for item in items:
        if item.get_closest_marker("torch") is not None:
            item.add_marker(skip)


@pytest.fixture
def requires_torch() -> ModuleType:
    """The ``torch`` module; the test is skipped without the torch extra."""
    if TORCH_MISSING:
        pytest.skip(TORCH_MISSING)
    import torch

    return torch


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``run_cli("simulate", "--groups", "0")``: ``spare-fast`` in this process.

    Returns the exit status (argparse's own exits included) and what it printed on stdout and
    on stderr.
    """
    from spare_fast.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse's own errors
            code = e.code if isinstance(e.code, int) else 1
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
