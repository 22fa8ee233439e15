"""``spare-fast simulate`` (one scenario) and ``spare-fast sweep`` (a grid, in parallel)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
from typing import Any

__all__ = ["add_parser"]


def _parse_float(text: str) -> float:
    return math.inf if text.lower() in ("inf", "infinity") else float(text)


def _parse_optional_float(text: str) -> float | None:
    return None if text.lower() == "none" else _parse_float(text)


def _parse_range(text: str) -> list[int]:
    """'1-20' or '2,3,8' or '1-4,8' -> sorted unique ints."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.update(range(int(lo), int(hi) + 1))
        elif part:
            out.add(int(part))
    if not out:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    return sorted(out)


_INT_FIELDS = ("gpus", "groups", "steps", "racks")
_OPTIONAL_INT_FIELDS = ("restart_depth", "failure_units")
_CHOICE_FIELDS = {
    "failure_model": ["per_group", "renewal", "per_gpu"],
    "restart_policy": ["wipeout", "expected_cost"],
    "restart_renews": ["all", "failed"],
    "rep_leftover": ["idle", "set"],
}


def _parse_optional_int(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def _add_scenario_options(p: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """One ``--field`` option per :class:`Scenario` field; unset options keep the default."""
    from spare_fast.sim import Scenario

    g = p.add_argument_group("scenario (defaults: the paper's; times in seconds)")
    for f in dataclasses.fields(Scenario):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        helptext = f"(default {default})"
        if isinstance(default, bool):
            g.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=helptext)
        elif f.name in _CHOICE_FIELDS:
            g.add_argument(flag, choices=_CHOICE_FIELDS[f.name], default=None, help=helptext)
        elif f.name in _INT_FIELDS:
            g.add_argument(flag, type=int, default=None, help=helptext)
        elif f.name in _OPTIONAL_INT_FIELDS:
            g.add_argument(flag, type=_parse_optional_int, default=None, help=helptext)
        elif default is None:
            g.add_argument(flag, type=_parse_optional_float, default=None, help=helptext)
        else:
            g.add_argument(flag, type=_parse_float, default=None, help=helptext)


def _scenario_from(args: argparse.Namespace, **fixed: Any) -> Any:
    from spare_fast.sim import Scenario

    kw: dict[str, Any] = {}
    for f in dataclasses.fields(Scenario):
        v = getattr(args, f.name, None)
        if v is not None:
            kw[f.name] = v
    kw.update(fixed)
    return Scenario(**kw)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate one training run under failures")
    p.add_argument("--scheme", choices=["checkpoint", "replication", "spare"], default="spare")
    p.add_argument("--redundancy", "-r", type=int, default=None, help="r (default per scheme)")
    p.add_argument("--layout", choices=["cyclic", "sidon", "random", "domain"], default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="PATH", help="write the report summary as JSON")
    p.add_argument("--timeline-png", metavar="PATH", help="plot the timeline to a PNG")
    _add_scenario_options(p)
    p.set_defaults(func=run_simulate)

    q = sub.add_parser("sweep", help="sweep schemes x N x r x seeds; CSV, JSON and PNG")
    q.add_argument(
        "--n",
        dest="n_list",
        type=_parse_range,
        default=[200, 600, 1000],
        metavar="LIST",
        help="numbers of groups, e.g. 200,600,1000 (default)",
    )
    q.add_argument(
        "--schemes",
        default="checkpoint,replication,spare",
        help="comma-separated schemes (default all three)",
    )
    q.add_argument(
        "--redundancy",
        "-r",
        type=_parse_range,
        default=list(range(1, 21)),
        metavar="RANGE",
        help="redundancies, e.g. 1-20 (default)",
    )
    q.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1 (default 5)")
    q.add_argument("--layout", choices=["cyclic", "sidon", "random", "domain"], default=None)
    q.add_argument("--workers", type=int, default=None, help="local processes (default all)")
    q.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run on this Dask scheduler instead of local processes",
    )
    q.add_argument("--out", default="sweep-out", help="output folder (default sweep-out)")
    q.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    _add_scenario_options(q, skip=("groups",))
    q.set_defaults(func=run_sweep)


def run_simulate(args: argparse.Namespace) -> int:
    from spare_fast.sim import simulate

    sc = _scenario_from(args)
    rep = simulate(sc, args.scheme, redundancy=args.redundancy, layout=args.layout, seed=args.seed)
    s = rep.summary()
    width = max(len(k) for k in s)
    for k, v in s.items():
        print(f"{k:<{width}}  {v:.6g}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    if args.json:
        from spare_fast.sim.sweep import write_json

        write_json({"scenario": sc.to_dict(), "report": s}, args.json)
    if args.timeline_png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = rep.plot()
        ax.figure.tight_layout()
        ax.figure.savefig(args.timeline_png, dpi=120)
        plt.close(ax.figure)
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    from spare_fast.sim.sweep import (
        best_by_scheme,
        format_table,
        mean_rows,
        plot_sweep,
        sweep,
        sweep_tasks,
        write_csv,
        write_json,
    )

    base = _scenario_from(args, groups=args.n_list[0])
    schemes = [s.strip() for s in args.schemes.split(",") if s.strip()]
    tasks = sweep_tasks(
        base, args.n_list, schemes, args.redundancy, range(args.seeds), layout=args.layout
    )
    rows = sweep(
        tasks, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress
    )
    os.makedirs(args.out, exist_ok=True)
    means = mean_rows(rows)
    best = best_by_scheme(means)
    table = format_table(best)
    write_csv(rows, os.path.join(args.out, "runs.csv"))
    write_csv(means, os.path.join(args.out, "means.csv"))
    write_json(
        {
            "scenario": base.to_dict(),
            "runs": rows,
            "means": means,
            "best": [best[k] for k in sorted(best)],
        },
        os.path.join(args.out, "sweep.json"),
    )
    plot_sweep(means, os.path.join(args.out, "sweep.png"))
    with open(os.path.join(args.out, "table.md"), "w") as fh:
        fh.write(table + "\n")
    print(table)
    print(
        f"{len(rows)} runs; wrote {args.out}/runs.csv, means.csv, sweep.json, sweep.png, table.md",
        file=sys.stderr,
    )
    return 0
