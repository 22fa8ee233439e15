"""Runs of consecutive integers written short: ``[1, 2, 3, 7]`` as ``'1-3, 7'``."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["spans"]


def spans(values: Sequence[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    out: list[str] = []
    vs = sorted(values)
    start = prev = vs[0]
    for v in vs[1:] + [None]:  # type: ignore[list-item]
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(out)
