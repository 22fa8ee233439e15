"""The closed forms against Monte Carlo: the validation grid, its tables and its plot.

:func:`validate` runs the grid (by default N in {200, 600, 1000, 10000, 100000}, r in
{2, 4, 8, 12, 16, 20}, layouts cyclic, sidon where it exists, random) and returns one
:class:`Row` per point; :func:`write` stores ``validation.csv``, ``validation.md`` and
``validation.png``. ``spare-fast theory --validate --out DIR`` is the command-line front end.
The model and the estimators are described in ``docs/model.md``, "Closed-form theory".

Examples
--------
>>> rows = validate([60], [3], ["cyclic"], mu_trials=200, overhead=False, progress=False)
>>> rows[0].layout, rows[0].n_groups, rows[0].redundancy
('cyclic', 60, 3)
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from spare_fast.theory import closed_forms as th

__all__ = [
    "GRID_N",
    "GRID_R",
    "LAYOUTS",
    "Row",
    "markdown",
    "plot",
    "read_csv",
    "summarise",
    "validate",
    "write",
]

GRID_N = (200, 600, 1000, 10_000, 100_000)
GRID_R = (2, 4, 8, 12, 16, 20)
LAYOUTS = ("cyclic", "sidon", "random")
#: The paper's mean absolute errors against Monte Carlo (mu, overhead lower bound).
PAPER_MU_MAPE = 1.13
PAPER_OVERHEAD_MAPE = 0.60


@dataclass
class Row:
    """One grid point of the validation."""

    layout: str
    n_groups: int
    redundancy: int
    mu_formula: float
    mu_exact: float  # cyclic only (NaN otherwise)
    mu_mc: float
    mu_se: float
    mu_err_pct: float  # 100 (formula - MC) / MC
    mu_exact_z: float  # (exact - MC) / SE, cyclic only
    overhead_lb: float
    overhead_mc: float
    overhead_se: float
    overhead_err_pct: float  # 100 (bound - MC) / MC
    overhead_raw: float  # plain mean over the trajectories (no control variate)
    overhead_raw_se: float
    # The same trajectories averaged over their W survived-failure states 0..W-1 (the bound's
    # own convention, states="survived"), also with the control variate.
    overhead_mc_survived: float
    overhead_se_survived: float
    overhead_err_survived_pct: float
    mu_trials: int
    overhead_trials: int
    seconds: float


def _mu_trials(n: int, base: int) -> int:
    # The relative spread of W shrinks with N; the cost per trial grows with it.
    return base if n <= 10_000 else max(200, base // 4)


def _overhead_trials(n: int, base: int) -> int:
    # A trajectory costs about mu controller decisions; its mean depth varies less at large N.
    if n <= 1_000:
        return base
    if n <= 10_000:
        return max(3, base // 4)
    return max(3, base // 20)


def _control_variate(
    layout: object,
    depth_means: np.ndarray,
    survived: np.ndarray,
    seed: int,
    drop_last: bool = False,
) -> tuple[float, float]:
    """Overhead estimate with the counting bound along each trajectory as control variate.

    A trajectory's mean depth ``Y`` is dominated by how many failures it survives (past
    ``k = N/2`` the bound ``c(k)`` jumps from 2 to 3), so ``Y`` varies a lot between
    trajectories at large N. ``X``, the mean of ``c(k)`` over the same trajectory's states
    ``k = 0..W``, carries that variation and has a mean that the fast coverage Monte Carlo
    estimates from thousands of independent ``W`` samples. ``mean(Y - X) + E[X]`` is unbiased
    for ``E[Y]`` with the variance of ``Y - X`` (small) plus that of the ``E[X]`` estimate.
    The trajectories' ``W`` are recomputed from the same seeded orders that
    :func:`spare_fast.montecarlo.overhead` drew.  With ``drop_last`` both ``Y`` and ``X``
    average the states ``0..max(W, 1) - 1`` instead (``states="survived"``).
    """
    n = int(layout.n_groups)  # type: ignore[attr-defined]
    holders = layout.holders()  # type: ignore[attr-defined]
    k = np.arange(n, dtype=np.int64)
    c_sum = np.concatenate([[0], np.cumsum(-(-n // (n - k)))])

    def xbar(w: np.ndarray) -> np.ndarray:
        m = np.maximum(w, 1) if drop_last else w + 1
        return c_sum[m] / m.astype(np.float64)

    w_traj = np.empty(depth_means.size, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    for t in range(depth_means.size):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t,)))
        pos[rng.permutation(n)] = k
        w_traj[t] = int(pos[holders].max(axis=1).min())
    diff = depth_means - xbar(w_traj)
    x_big = xbar(np.asarray(survived, dtype=np.int64))
    mean = float(diff.mean() + x_big.mean())
    var = (diff.var(ddof=1) / diff.size if diff.size > 1 else 0.0) + x_big.var(ddof=1) / x_big.size
    return mean, float(math.sqrt(var))


def validate(
    grid_n: Sequence[int] = GRID_N,
    grid_r: Sequence[int] = GRID_R,
    layouts: Sequence[str] = LAYOUTS,
    mu_trials: int = 4000,
    overhead_trials: int = 100,
    seed: int = 0,
    overhead: bool = True,
    progress: bool = False,
) -> list[Row]:
    """Run the grid; one :class:`Row` per existing (layout, N, r).

    Layouts are built by name (:func:`spare_fast.layout.make_layout`, seeded with ``seed``);
    a sidon layout that does not exist at some (N, r) is skipped.
    """
    from spare_fast import montecarlo as mc
    from spare_fast.layout import make_layout

    rows: list[Row] = []
    for n in grid_n:
        for r in grid_r:
            if r > n:
                continue
            for kind in layouts:
                t0 = time.perf_counter()
                try:
                    layout = make_layout(kind, n, r, seed=seed)
                except ValueError:
                    continue  # sidon needs N >= r(r-1)+1
                mt = _mu_trials(n, mu_trials)
                est = mc.endurable_failures(layout, mt, seed=seed, progress=progress)
                formula = float(th.endurable_failures(n, r))
                exact = float(th.endurable_failures_exact(n, r)) if kind == "cyclic" else math.nan
                ot = _overhead_trials(n, overhead_trials) if overhead else 0
                if overhead:
                    every, surv = mc._overhead_samples(layout, ot, seed, progress)
                    raw_mean = float(every.mean())
                    raw_se = float(every.std(ddof=1) / math.sqrt(ot)) if ot > 1 else 0.0
                    ov_mean, ov_se = _control_variate(layout, every, est.samples, seed)
                    sv_mean, sv_se = _control_variate(
                        layout, surv, est.samples, seed, drop_last=True
                    )
                else:
                    ov_mean = ov_se = raw_mean = raw_se = sv_mean = sv_se = math.nan
                lb = float(th.overhead_lower_bound(n, r))
                rows.append(
                    Row(
                        layout=kind,
                        n_groups=n,
                        redundancy=r,
                        mu_formula=formula,
                        mu_exact=exact,
                        mu_mc=est.mean,
                        mu_se=est.stderr,
                        mu_err_pct=100.0 * (formula - est.mean) / est.mean,
                        mu_exact_z=(exact - est.mean) / est.stderr if est.stderr else math.nan,
                        overhead_lb=lb,
                        overhead_mc=ov_mean,
                        overhead_se=ov_se,
                        overhead_err_pct=100.0 * (lb - ov_mean) / ov_mean,
                        overhead_raw=raw_mean,
                        overhead_raw_se=raw_se,
                        overhead_mc_survived=sv_mean,
                        overhead_se_survived=sv_se,
                        overhead_err_survived_pct=100.0 * (lb - sv_mean) / sv_mean,
                        mu_trials=mt,
                        overhead_trials=ot,
                        seconds=time.perf_counter() - t0,
                    )
                )
                if progress:
                    x = rows[-1]
                    print(
                        f"{kind:7} N={n:<6} r={r:<3} mu {formula:9.1f} vs {est.mean:9.1f}"
                        f"+-{est.stderr:.1f} ({x.mu_err_pct:+.2f}%)  overhead {lb:.4f} vs "
                        f"{ov_mean:.4f} ({x.overhead_err_pct:+.2f}%)  {x.seconds:.1f}s",
                        flush=True,
                    )
    return rows


def summarise(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    """Mean absolute percentage errors per layout, for r >= 8 and for all r."""
    out: dict[str, dict[str, float]] = {}
    for kind in sorted({x.layout for x in rows}, key=LAYOUTS.index):
        sel = [x for x in rows if x.layout == kind]
        hi = [x for x in sel if x.redundancy >= 8]
        out[kind] = {
            "mu_mape_r8": float(np.mean([abs(x.mu_err_pct) for x in hi])) if hi else math.nan,
            "mu_mape_all": float(np.mean([abs(x.mu_err_pct) for x in sel])),
            "overhead_mape_r8": float(np.nanmean([abs(x.overhead_err_pct) for x in hi]))
            if hi
            else math.nan,
            "overhead_mape_all": float(np.nanmean([abs(x.overhead_err_pct) for x in sel])),
            "overhead_survived_mape_r8": float(
                np.nanmean([abs(x.overhead_err_survived_pct) for x in hi])
            )
            if hi
            else math.nan,
            "max_exact_z": float(np.nanmax([abs(x.mu_exact_z) for x in sel]))
            if kind == "cyclic"
            else math.nan,
            "points": float(len(sel)),
        }
    return out


def _fmt(v: float, spec: str) -> str:
    return "" if isinstance(v, float) and math.isnan(v) else format(v, spec)


def markdown(rows: Sequence[Row], summary: dict[str, dict[str, float]]) -> str:
    """The validation table and its summary as Markdown."""
    lines = [
        "| layout | N | r | mu formula | mu exact | mu MC +- SE | mu err | overhead lb | "
        "overhead MC +- SE | overhead err | MC, states 0..W-1 | err |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for x in rows:
        lines.append(
            f"| {x.layout} | {x.n_groups} | {x.redundancy} | {x.mu_formula:.1f} | "
            f"{_fmt(x.mu_exact, '.1f')} | {x.mu_mc:.1f} +- {x.mu_se:.1f} | {x.mu_err_pct:+.2f}% | "
            f"{x.overhead_lb:.4f} | {_fmt(x.overhead_mc, '.4f')} +- {_fmt(x.overhead_se, '.4f')} | "
            f"{_fmt(x.overhead_err_pct, '+.2f')}% | {_fmt(x.overhead_mc_survived, '.4f')} | "
            f"{_fmt(x.overhead_err_survived_pct, '+.2f')}% |"
        )
    lines += [
        "",
        "Overhead MC: controller trajectories to wipe-out, mean depth over the states 0..W of "
        "each (the time average between restarts), with the counting bound along the same "
        "trajectory as control variate (its mean from the mu Monte Carlo); the plain means are "
        "in the CSV (overhead_raw). 'MC, states 0..W-1': the same trajectories over the W "
        "states before each survived failure, the convention of the bound's floor(mu) terms "
        "(montecarlo.overhead(states='survived')).",
        "",
        f"Mean absolute percentage error (paper: mu {PAPER_MU_MAPE}%, overhead lower bound "
        f"{PAPER_OVERHEAD_MAPE}%):",
        "",
        "| layout | points | mu, r >= 8 | mu, all r | overhead, r >= 8 | overhead, all r | "
        "overhead (states 0..W-1), r >= 8 | max abs z (exact vs MC) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, s in summary.items():
        lines.append(
            f"| {kind} | {int(s['points'])} | {s['mu_mape_r8']:.2f}% | {s['mu_mape_all']:.2f}% | "
            f"{_fmt(s['overhead_mape_r8'], '.2f')}% | {_fmt(s['overhead_mape_all'], '.2f')}% | "
            f"{_fmt(s['overhead_survived_mape_r8'], '.2f')}% | {_fmt(s['max_exact_z'], '.2f')} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: Sequence[Row], path: Path) -> None:
    """Formula error against Monte Carlo, per layout and r, one line per N, with MC error bars.

    The bars are one standard error of the Monte Carlo mean carried to the relative error
    (``100 * formula * SE / MC^2``); the shaded band is the paper's mean error.
    """
    from spare_fast._plotting import integer_ticks, new_figure, save

    kinds = [k for k in LAYOUTS if any(x.layout == k for x in rows)]
    ns = sorted({x.n_groups for x in rows})
    colors = {n: f"C{i}" for i, n in enumerate(ns)}
    fig, axes = new_figure(2, len(kinds), figsize=(4.4 * len(kinds), 7.4), sharex=True)
    panels = (
        ("mu_err_pct", "mu_formula", "mu_mc", "mu_se", "failures survived mu", PAPER_MU_MAPE),
        (
            "overhead_err_pct",
            "overhead_lb",
            "overhead_mc",
            "overhead_se",
            "overhead lower bound",
            PAPER_OVERHEAD_MAPE,
        ),
    )
    for col, kind in enumerate(kinds):
        for row_i, (attr, f_attr, mc_attr, se_attr, title, ref) in enumerate(panels):
            ax = axes[row_i][col]
            for n in ns:
                pts = [
                    x
                    for x in rows
                    if x.layout == kind and x.n_groups == n and math.isfinite(getattr(x, attr))
                ]
                if not pts:
                    continue
                err = [
                    100.0 * abs(getattr(x, f_attr)) * getattr(x, se_attr) / getattr(x, mc_attr) ** 2
                    for x in pts
                ]
                ax.errorbar(
                    [x.redundancy for x in pts],
                    [getattr(x, attr) for x in pts],
                    yerr=err,
                    marker="o",
                    ms=4,
                    capsize=2,
                    color=colors[n],
                    label=f"N = {n:,}",
                )
            ax.axhspan(-ref, ref, color="0.9", zorder=0, label="paper's mean error (+-)")
            ax.axhline(0, color="0.5", lw=0.8)
            ax.set_title(f"{kind} layout: {title}", fontsize=10)
            if row_i == 1:
                ax.set_xlabel("redundancy r")
            if col == 0:
                ax.set_ylabel("(formula - Monte Carlo) / Monte Carlo (%)")
            integer_ticks(ax, "x")
            ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=8)
    mt = sorted({x.mu_trials for x in rows})
    ot = sorted({x.overhead_trials for x in rows if x.overhead_trials})
    trials = f"{mt[0]:,}-{mt[-1]:,} mu trials" if len(mt) > 1 else f"{mt[0]:,} mu trials"
    if ot:
        trials += f", {ot[0]:,}-{ot[-1]:,} controller trajectories per point"
    fig.suptitle(
        "Closed forms vs Monte Carlo: failures of distinct groups in a uniformly random order\n"
        f"({trials}; bars: 1 standard error of the Monte Carlo mean)",
        fontsize=11,
    )
    save(fig, path)


def read_csv(path: Path) -> list[Row]:
    """The rows of a ``validation.csv`` that :func:`write` wrote (to replot or re-tabulate)."""
    types = {f.name: f.type for f in fields(Row)}
    out = []
    with open(path, newline="") as fh:
        for rec in csv.DictReader(fh):
            kw: dict[str, Any] = {}
            for k, v in rec.items():
                t = str(types[k])
                kw[k] = v if t == "str" else int(v) if t == "int" else float(v)
            out.append(Row(**kw))
    return out


def write(rows: Sequence[Row], out: Path) -> dict[str, dict[str, float]]:
    """Write validation.csv, validation.md and validation.png into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "validation.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[f.name for f in fields(Row)])
        w.writeheader()
        for x in rows:
            w.writerow(asdict(x))
    summary = summarise(rows)
    (out / "validation.md").write_text(markdown(rows, summary))
    plot(rows, out / "validation.png")
    return summary
