"""Parameter sweeps (local process pool or Dask), their tables, files and plots, and the demo."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from spare_fast._spans import spans
from spare_fast.sim.engine import simulate
from spare_fast.sim.scenario import Scenario
from spare_fast.sim.schemes import SCHEMES

__all__ = [
    "PAPER_TABLE",
    "best_by_scheme",
    "demo_simulation",
    "format_table",
    "mean_rows",
    "plot_sweep",
    "read_means",
    "replot",
    "sweep",
    "sweep_tasks",
    "write_csv",
    "write_json",
]

#: The paper's table (Lee et al., ICML 2026, arXiv:2603.00357; docs/model.md, "The simulator"):
#: N -> (Rep+CKPT TTT/T0, availability, SPARe+CKPT TTT/T0, availability, r).
PAPER_TABLE: dict[int, tuple[float, float, float, float, int]] = {
    200: (6.07, 0.6174, 2.92, 0.8700, 9),
    600: (4.27, 0.7989, 2.49, 0.9390, 8),
    1000: (3.88, 0.8441, 2.34, 0.9654, 9),
}

Task = tuple[Scenario, str, int | None, str | None, int]


def sweep_tasks(
    base: Scenario,
    groups: Iterable[int],
    schemes: Iterable[str],
    redundancies: Iterable[int],
    seeds: Iterable[int],
    layout: str | None = None,
) -> list[Task]:
    """The grid as a task list: CKPT-only once per (N, seed), the others once per r.

    Examples
    --------
    >>> len(sweep_tasks(Scenario(), [200, 600], ["checkpoint", "spare"], [2, 3], [0, 1]))
    12
    """
    tasks: list[Task] = []
    rs = list(redundancies)
    seeds = list(seeds)
    for n in groups:
        sc = base.replace(groups=int(n))
        for scheme in schemes:
            if scheme not in SCHEMES:
                raise ValueError(f"scheme = {scheme!r} is not one of {SCHEMES}")
            for r in [1] if scheme == "checkpoint" else rs:
                if r > n:
                    continue
                lay = layout if scheme == "spare" else None
                for s in seeds:
                    tasks.append((sc, scheme, None if scheme == "checkpoint" else r, lay, s))
    return tasks


def _run_task(task: Task) -> dict[str, Any]:
    sc, scheme, r, layout, seed = task
    return simulate(sc, scheme, redundancy=r, layout=layout, seed=seed, timeline=False).summary()


def sweep(
    tasks: Sequence[Task],
    *,
    workers: int | None = None,
    scheduler: Any = None,
    progress: bool = False,
    runner: Callable[[Task], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Run every task and return one summary row per task, in task order.

    Parameters
    ----------
    tasks : sequence of (Scenario, scheme, redundancy, layout, seed)
        See :func:`sweep_tasks`.
    workers : int, optional
        Local processes (default ``os.cpu_count()``); 1 runs in this process.
    scheduler : str or dask.distributed.Client, optional
        A Dask scheduler address (or a client): run on that cluster instead.
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    list of dict
        :meth:`Report.summary` rows; identical for every way of running (each run depends only
        on its task).

    Examples
    --------
    >>> rows = sweep(sweep_tasks(Scenario(steps=20), [200], ["replication"], [2], [0]), workers=1)
    >>> rows[0]["scheme"], rows[0]["redundancy"]
    ('replication', 2)
    """
    fn = runner or _run_task
    tasks = list(tasks)
    bar: Any = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), unit="run")
    try:
        if scheduler is not None:
            rows = _sweep_dask(tasks, scheduler, fn, bar)
        elif (workers or os.cpu_count() or 1) <= 1:
            rows = []
            for t in tasks:
                rows.append(fn(t))
                if bar is not None:
                    bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=workers or os.cpu_count()) as ex:
                rows = []
                # Longest-first would balance better, but order must stay stable: map keeps it.
                for row in ex.map(fn, tasks, chunksize=1):
                    rows.append(row)
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return rows


def _sweep_dask(tasks: list[Task], scheduler: Any, fn: Callable, bar: Any) -> list[dict]:
    from dask.distributed import Client, as_completed

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        futures = client.map(fn, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        rows: list[dict | None] = [None] * len(tasks)
        for fut in as_completed(futures):
            rows[index[fut.key]] = fut.result()
            if bar is not None:
                bar.update(1)
        return [r for r in rows if r is not None]
    finally:
        if own:
            client.close()


def mean_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Average TTT/T0, availability, restarts and depth over seeds per (N, scheme, r, layout).

    A configuration with any incomplete run gets ``normalized = inf``.
    """
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["groups"], r["scheme"], r["redundancy"], r["layout"]), []).append(r)
    out = []
    for (n, scheme, red, lay), rs in groups.items():
        k = len(rs)
        out.append(
            {
                "groups": n,
                "scheme": scheme,
                "redundancy": red,
                "layout": lay,
                "seeds": k,
                "normalized": sum(x["normalized"] for x in rs) / k,
                "normalized_std": _std([x["normalized"] for x in rs]),
                "availability": sum(x["availability"] for x in rs) / k,
                "restarts": sum(x["restarts"] for x in rs) / k,
                "masked_failures": sum(x["masked_failures"] for x in rs) / k,
                "mean_depth": sum(x["mean_depth"] for x in rs) / k,
                "progress": sum(x.get("progress", 1.0) for x in rs) / k,
            }
        )
    return out


def _std(xs: list[float]) -> float:
    if len(xs) < 2 or any(math.isinf(x) for x in xs):
        return 0.0 if len(xs) < 2 else math.inf
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def best_by_scheme(means: Iterable[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    """The configuration with the lowest mean TTT/T0 per (N, scheme)."""
    best: dict[tuple[int, str], dict[str, Any]] = {}
    for m in means:
        key = (m["groups"], m["scheme"])
        if key not in best or m["normalized"] < best[key]["normalized"]:
            best[key] = m
    return best


def format_table(best: dict[tuple[int, str], dict[str, Any]], paper: bool = True) -> str:
    """A Markdown table: per N, best CKPT-only, Rep+CKPT and SPARe+CKPT, reduction, paper's."""
    lines = [
        "| N | CKPT-only TTT/T0 | Rep+CKPT best TTT/T0 (avail., r) | SPARe+CKPT best TTT/T0 "
        "(avail., r) | reduction | paper Rep / SPARe / reduction |",
        "|---|---|---|---|---|---|",
    ]
    for n in sorted({k[0] for k in best}):
        ck, rp, sp = (best.get((n, s)) for s in SCHEMES)

        def cell(m: dict[str, Any] | None, with_r: bool) -> str:
            if m is None:
                return "-"
            r = f", r={m['redundancy']}" if with_r else ""
            if math.isinf(m["normalized"]):
                return f"unfinished ({100 * m.get('progress', 0.0):.2f}% done at the horizon)"
            return f"{m['normalized']:.2f} ({100 * m['availability']:.2f}%{r})"

        red = "-"
        if rp and sp and math.isfinite(rp["normalized"]):
            red = f"{100 * (1 - sp['normalized'] / rp['normalized']):.1f}%"
        pp = "-"
        if paper and n in PAPER_TABLE:
            pr, _, ps, _, _ = PAPER_TABLE[n]
            pp = f"{pr:.2f} / {ps:.2f} / {100 * (1 - ps / pr):.1f}%"
        lines.append(
            f"| {n} | {cell(ck, False)} | {cell(rp, True)} | {cell(sp, True)} | {red} | {pp} |"
        )
    return "\n".join(lines)


def write_csv(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write summary rows as CSV (header from the first row)."""
    if not rows:
        raise ValueError("no rows to write")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def write_json(obj: Any, path: str | os.PathLike[str]) -> None:
    """Write rows (or any JSON-able object) with ``inf`` spelled as the string "inf"."""

    def fix(x: Any) -> Any:
        if isinstance(x, float) and math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if isinstance(x, dict):
            return {k: fix(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [fix(v) for v in x]
        return x

    with open(path, "w") as fh:
        json.dump(fix(obj), fh, indent=1)


def plot_sweep(
    means: Sequence[dict[str, Any]],
    path: str | os.PathLike[str],
    scenario: Scenario | dict[str, Any] | None = None,
) -> None:
    """PNG: TTT/T0 (top, log) and availability (bottom) against r, per scheme and N.

    One colour per scheme (the same in every figure of the project), one marker and line style
    per N; bars are one standard error over the seeds. CKPT-only has no r: it is a dotted
    line at its TTT/T0, or a note when it never finished within the horizon.

    Parameters
    ----------
    means : sequence of dict
        :func:`mean_rows` rows (or :func:`read_means` of a ``means.csv``).
    path : path-like
        The PNG to write.
    scenario : Scenario or dict, optional
        The sweep's base scenario, for the title (default: the paper's, ``Scenario()``).
    """
    from spare_fast._plotting import (
        SCHEME_COLORS,
        SCHEME_LABELS,
        integer_ticks,
        log_axis,
        new_figure,
        save,
    )
    from spare_fast.sim.report import _scenario_words

    if isinstance(scenario, dict):
        known = {f for f in Scenario.__dataclass_fields__}
        scenario = Scenario(**{k: v for k, v in scenario.items() if k in known})
    sc = scenario if scenario is not None else Scenario()
    fig, axes = new_figure(2, 1, figsize=(9, 8.5), sharex=True)
    ax1, ax2 = axes[0, 0], axes[1, 0]
    ns = sorted({int(m["groups"]) for m in means})
    markers = dict(zip(ns, "osD^v<>p*h", strict=False))
    styles = dict(zip(ns, ["-", "--", "-.", ":"] * 3, strict=False))
    notes: dict[str, list[tuple[int, str]]] = {}  # scheme -> (N, what) never finished
    seeds = sorted({int(m["seeds"]) for m in means})
    for scheme in SCHEMES:
        for n in ns:
            ms = sorted(
                (m for m in means if m["scheme"] == scheme and int(m["groups"]) == n),
                key=lambda m: m["redundancy"],
            )
            if not ms:
                continue
            label = f"{SCHEME_LABELS[scheme]}, N = {n}"
            color = SCHEME_COLORS[scheme]
            if scheme == "checkpoint":
                m = ms[0]
                if math.isfinite(m["normalized"]):
                    ax1.axhline(
                        m["normalized"], ls=":", lw=1.2, color=color, label=label + " (no r)"
                    )
                else:
                    done = f"{100 * m.get('progress', 0.0):.2f}% done"
                    notes.setdefault(scheme, []).append((n, done))
                continue
            fin = [m for m in ms if math.isfinite(m["normalized"])]
            se = [
                m["normalized_std"] / math.sqrt(m["seeds"])
                if math.isfinite(m.get("normalized_std", 0.0))
                else 0.0
                for m in fin
            ]
            kw = dict(color=color, marker=markers[n], ls=styles[n], ms=4, lw=1.2, label=label)
            if fin:
                ax1.errorbar(
                    [m["redundancy"] for m in fin],
                    [m["normalized"] for m in fin],
                    yerr=se,
                    capsize=2,
                    **kw,
                )
            ax2.plot([m["redundancy"] for m in ms], [100 * m["availability"] for m in ms], **kw)
            unfinished = [m["redundancy"] for m in ms if not math.isfinite(m["normalized"])]
            if unfinished:
                notes.setdefault(scheme, []).append((n, f"r = {_spans(unfinished)}"))
    log_axis(ax1, "y")
    ax1.set_ylabel("time-to-train / failure-free time (TTT / T0)")
    ax1.grid(alpha=0.3, which="both")
    ax2.set_ylabel("availability (% of wall clock)")
    ax2.set_xlabel("redundancy r (stack height; replica count for Rep+CKPT)")
    ax2.grid(alpha=0.3)
    integer_ticks(ax2, "x")
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend(fontsize=7, ncol=2, loc="center right")
    else:  # every run unfinished: nothing on the TTT axis, the note below says why
        ax1.text(0.5, 0.5, "no run finished", transform=ax1.transAxes, ha="center")
    if notes:
        lines = [f"Unfinished within the horizon ({sc.horizon:g} x T0), not on the TTT axis:"]
        for scheme, items in notes.items():
            whats = sorted({w for _, w in items})
            where = "; ".join(
                f"{w} at N = {', '.join(str(n) for n, x in items if x == w)}" for w in whats
            )
            lines.append(f"{SCHEME_LABELS[scheme]}: {where}")
        ax2.text(
            0.98,
            0.04,
            "\n".join(lines),
            transform=ax2.transAxes,
            fontsize=8,
            ha="right",
            va="bottom",
            color="0.2",
            bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "0.7"},
        )
    seed_words = f"{seeds[0]} seeds" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]} seeds"
    fig.suptitle(
        f"Simulated time-to-train and availability vs r (mean of {seed_words}; bars: 1 SE)\n"
        f"{sc.steps:,} steps, {sc.gpus:,} GPUs{_scenario_words(sc)}, save {sc.save:g} s",
        fontsize=10,
    )
    save(fig, path)


_spans = spans


_MEAN_INTS = ("groups", "redundancy", "seeds")


def read_means(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a ``means.csv`` written by :func:`write_csv` of :func:`mean_rows`."""
    out = []
    with open(path, newline="") as fh:
        for rec in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for k, v in rec.items():
                if k in ("scheme", "layout"):
                    row[k] = v
                elif k in _MEAN_INTS:
                    row[k] = int(v)
                else:
                    row[k] = float(v)
            out.append(row)
    return out


def replot(folder: str | os.PathLike[str]) -> str:
    """Rewrite ``sweep.png`` and ``table.md`` in ``folder`` from its saved ``means.csv``.

    The base scenario for the title comes from ``sweep.json`` or ``scenario.json`` there when
    present (the paper's default otherwise). Returns the table.
    """
    folder = os.fspath(folder)
    means = read_means(os.path.join(folder, "means.csv"))
    scenario: dict[str, Any] | None = None
    for name in ("scenario.json", "sweep.json"):
        f = os.path.join(folder, name)
        if os.path.exists(f):
            with open(f) as fh:
                data = json.load(fh)
            scenario = data.get("scenario", data)
            scenario = {k: (math.inf if v == "inf" else v) for k, v in scenario.items()}
            break
    table = format_table(best_by_scheme(means))
    plot_sweep(means, os.path.join(folder, "sweep.png"), scenario)
    with open(os.path.join(folder, "table.md"), "w") as fh:
        fh.write(table + "\n")
    return table


def demo_simulation(seeds: Sequence[int] = (0, 1), workers: int | None = None) -> str:
    """Run the paper's N = 600 scenario for the three schemes, print and return the table.

    CKPT-only, Rep+CKPT at r = 2..4 and SPARe+CKPT at r = 7..10 (around both optima), each
    averaged over ``seeds``; well under two minutes on two cores.
    """
    base = Scenario(groups=600)
    tasks = sweep_tasks(base, [600], ["checkpoint"], [1], seeds)
    tasks += sweep_tasks(base, [600], ["replication"], [2, 3, 4], seeds)
    tasks += sweep_tasks(base, [600], ["spare"], [7, 8, 9, 10], seeds)
    rows = sweep(tasks, workers=workers)
    table = format_table(best_by_scheme(mean_rows(rows)))
    print(f"Paper's N = 600 scenario, mean of {len(seeds)} seeds (best r per scheme):")
    print(table)
    print(
        "TTT/T0: time-to-train over the failure-free time T0 = steps x (compute + all-reduce) "
        "(1 = failures cost nothing).\navail.: the share of the wall clock that advanced "
        f"training (restarts, rework and saves are down time).\nA run that is not done within "
        f"the horizon, {base.horizon:g} x T0, is unfinished (its % of the steps committed)."
    )
    return table
