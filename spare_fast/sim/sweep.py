"""Parameter sweeps (local process pool or Dask), their tables, files and plots, and the demo."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

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


def plot_sweep(means: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """PNG: TTT/T0 (top) and availability (bottom) against r, one line per (scheme, N)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
    keys = sorted({(m["scheme"], m["groups"]) for m in means})
    for scheme, n in keys:
        ms = sorted(
            (m for m in means if (m["scheme"], m["groups"]) == (scheme, n)),
            key=lambda m: m["redundancy"],
        )
        rs = [m["redundancy"] for m in ms]
        if scheme == "checkpoint" and len(rs) == 1:
            if math.isfinite(ms[0]["normalized"]):  # CKPT-only usually never finishes
                ax1.axhline(ms[0]["normalized"], ls=":", lw=1, label=f"checkpoint N={n}")
            continue
        ax1.plot(rs, [m["normalized"] for m in ms], marker="o", ms=3, label=f"{scheme} N={n}")
        ax2.plot(rs, [m["availability"] for m in ms], marker="o", ms=3, label=f"{scheme} N={n}")
    ax1.set_yscale("log")
    ax1.set_ylabel("TTT / T0")
    ax2.set_ylabel("availability")
    ax2.set_xlabel("redundancy r")
    ax1.legend(fontsize=7, ncol=2)
    ax2.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
    return table
