"""``spare-fast sweep``: schemes x N x r x seeds in parallel; CSV, JSON, a table and a PNG."""

from __future__ import annotations

import argparse
import os
import sys

from spare_fast.cli._scenario import add_scenario_options, parse_range, scenario_from
from spare_fast.layout import SPARE_LAYOUTS

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser("sweep", help="sweep schemes x N x r x seeds; CSV, JSON and PNG")
    q.add_argument(
        "--n",
        dest="n_list",
        type=parse_range,
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
        type=parse_range,
        default=list(range(1, 21)),
        metavar="RANGE",
        help="redundancies, e.g. 1-20 (default)",
    )
    q.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1 (default 5)")
    q.add_argument("--layout", choices=SPARE_LAYOUTS, default=None)
    q.add_argument("--workers", type=int, default=None, help="local processes (default all)")
    q.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run on this Dask scheduler instead of local processes",
    )
    q.add_argument("--out", default="sweep-out", help="output folder (default sweep-out)")
    q.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_scenario_options(q, skip=("groups",))
    q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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

    base = scenario_from(args, groups=args.n_list[0])
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
