"""Which optional extras of the package are installed (for test and benchmark collection)."""

from __future__ import annotations

import importlib.util

__all__ = ["torch_missing"]


def torch_missing() -> str | None:
    """Why the executor (the ``torch`` extra: torch and torchft) cannot run here, or None.

    Looks the packages up without importing them: torchft's Rust side reads ``RUST_LOG`` once,
    at its first import.
    """
    for module in ("torch", "torchft"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install 'spare-fast[torch]')"
    return None
