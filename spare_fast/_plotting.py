"""The one look of every figure the project writes: colours, log axes, integer ticks, layout.

Every scheme keeps one colour in every plot (the sweep, a run's timeline, the theory
validation), so a reader can match lines across figures; figures use matplotlib's constrained
layout, so a plain ``savefig`` clips no label. Files are written through
:class:`matplotlib.figure.Figure` directly (no pyplot state, no GUI backend needed).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = [
    "LAYOUT_COLORS",
    "SCHEME_COLORS",
    "SCHEME_LABELS",
    "integer_ticks",
    "log_axis",
    "new_figure",
    "require_matplotlib",
    "save",
]

#: One colour per scheme, the same in every figure.
SCHEME_COLORS = {"checkpoint": "#555555", "replication": "#d95f02", "spare": "#1b9e77"}
#: The paper's names of the schemes.
SCHEME_LABELS = {"checkpoint": "CKPT-only", "replication": "Rep+CKPT", "spare": "SPARe+CKPT"}
#: One colour per layout kind (theory validation, layout comparisons).
LAYOUT_COLORS = {"cyclic": "#7570b3", "sidon": "#e7298a", "random": "#66a61e", "domain": "#e6ab02"}


def require_matplotlib(feature: str = "plotting") -> None:
    """Raise an ImportError that names the extra to install when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(f"{feature} needs matplotlib: pip install 'spare-fast[plot]'") from None


def new_figure(nrows: int = 1, ncols: int = 1, **kw: Any) -> tuple[Any, Any]:
    """A pyplot-free Figure with a grid of axes (``squeeze=False``) and constrained layout."""
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=kw.pop("figsize", (8, 4)), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def save(fig: Any, path: str | os.PathLike[str], dpi: int = 120) -> None:
    """Write ``fig`` to ``path`` (PNG by suffix)."""
    fig.savefig(os.fspath(path), dpi=dpi)


def log_axis(ax: Any, axis: str = "y") -> None:
    """Log scale with plain labels (``20``, ``5``; never ``2x10^1``); call after plotting."""
    import numpy as np
    from matplotlib import ticker

    ax.set(**{f"{axis}scale": "log"})
    target = ax.yaxis if axis == "y" else ax.xaxis

    def fmt(v: float, _pos: Any) -> str:
        return (
            f"{v:g}" if 1e-4 <= abs(v) < 1e6 else f"{v:.0e}".replace("e+0", "e").replace("e+", "e")
        )

    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    decades = np.log10(hi / lo) if lo > 0 and hi > lo else 3.0
    # Enough labelled ticks for a short range (2-22 gets 2, 3, 5, 7, 10, 20), fewer for a long one.
    subs = (
        (1.0, 2.0, 3.0, 5.0, 7.0) if decades <= 1.5 else (1.0, 2.0, 5.0) if decades <= 4 else (1.0,)
    )
    target.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    target.set_major_formatter(ticker.FuncFormatter(fmt))
    target.set_minor_locator(ticker.LogLocator(base=10, subs=tuple(range(1, 10))))
    target.set_minor_formatter(ticker.NullFormatter())


def integer_ticks(ax: Any, axis: str = "x") -> None:
    """Integer ticks only (redundancy r, depth, counts)."""
    from matplotlib import ticker

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(ticker.MaxNLocator(integer=True))
