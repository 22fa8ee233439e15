"""``spare-fast sweep``: schemes x N x r x seeds in parallel; CSV, JSON, a table and a PNG.

``spare-fast sweep --replot DIR`` redraws ``DIR/sweep.png`` and ``DIR/table.md`` from the
``DIR/means.csv`` a sweep saved, without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import Any

from spare_fast.cli._common import (
    UsageError,
    check_output_folder,
    choice_list,
    int_at_least,
    int_list,
    require,
    writing,
)
from spare_fast.cli._scenario import (
    add_scenario_options,
    check_layout,
    check_sim_memory,
    scenario_from,
)
from spare_fast.layout import SPARE_LAYOUTS

__all__ = ["add_parser"]

_SCHEMES = ("checkpoint", "replication", "spare")

# The most runs one sweep lists (its task list is built before the first run starts).
MAX_RUNS = 10_000_000


def add_parser(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser(
        "sweep",
        help="sweep schemes x N x r x seeds; CSV, JSON and PNG",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument(
        "--n",
        dest="n_list",
        type=int_list(lo=1),
        default=[200, 600, 1000],
        metavar="LIST",
        help="numbers of groups, e.g. 200,600,1000 (default)",
    )
    q.add_argument(
        "--schemes",
        type=choice_list(_SCHEMES),
        default=list(_SCHEMES),
        help="comma-separated schemes (default all three: checkpoint,replication,spare)",
    )
    q.add_argument(
        "--redundancy",
        "-r",
        type=int_list(lo=1),
        default=list(range(1, 21)),
        metavar="RANGE",
        help="redundancies, e.g. 1-20 (default); each <= the largest N",
    )
    q.add_argument("--seeds", type=int_at_least(1), default=5, help="seeds 0..K-1 (default 5)")
    q.add_argument("--layout", choices=SPARE_LAYOUTS, default=None)
    q.add_argument(
        "--workers", type=int_at_least(1), default=None, help="local processes (default all)"
    )
    q.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run on this Dask scheduler (tcp://host:port) instead of local processes",
    )
    q.add_argument("--out", default="sweep-out", help="output folder (default sweep-out)")
    q.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    q.add_argument(
        "--replot",
        metavar="DIR",
        default=None,
        help="only redraw DIR/sweep.png and DIR/table.md from DIR/means.csv",
    )
    add_scenario_options(q, skip=("groups",))
    q.set_defaults(func=run)


def _check_scheduler(address: str) -> None:
    """Reach the Dask scheduler within 5 s, before any work (Dask itself waits 30 s)."""
    require("distributed", "--scheduler")
    text = address.split("://", 1)[-1]
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError("--scheduler", address, "is not an address like tcp://host:8786")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise UsageError("--scheduler", address, f"cannot be reached ({e.strerror or e})") from None


def run(args: argparse.Namespace) -> int:
    from spare_fast.sim.sweep import (
        best_by_scheme,
        format_table,
        mean_rows,
        replot,
        sweep,
        sweep_tasks,
    )

    require("matplotlib", "spare-fast sweep (its sweep.png)")
    if args.replot is not None:
        if not os.path.isfile(os.path.join(args.replot, "means.csv")):
            raise UsageError("--replot", args.replot, "has no means.csv (a sweep's --out folder)")
        with writing("--replot", args.replot):
            table = replot(args.replot)
        print(table)
        print(f"wrote {args.replot}/sweep.png, table.md", file=sys.stderr)
        return 0
    base = scenario_from(args, groups=args.n_list[0])
    for n in args.n_list:
        scenario_from(args, groups=n)  # every N must make a valid scenario (gpus >= N, ...)
    schemes = args.schemes
    big_n = max(args.n_list)
    uses_r = [s for s in schemes if s != "checkpoint"]
    if uses_r:
        too_big = [r for r in args.redundancy if r > big_n]
        if too_big:
            raise UsageError(
                "--redundancy", too_big[0], f"must be <= the largest --n ({big_n}): no run has it"
            )
        skipped = [(n, r) for n in args.n_list for r in args.redundancy if r > n]
        if skipped:
            print(
                f"spare-fast sweep: note: {len(skipped)} (N, r) pairs with r > N are skipped",
                file=sys.stderr,
            )
        if "spare" in schemes:
            for n in args.n_list:
                for r in args.redundancy:
                    if r <= n:
                        check_layout(args.layout, n, r, "--n")
    check_sim_memory("--n", big_n, max(args.redundancy) if uses_r else 1)
    runs = len(args.n_list) * (len(args.redundancy) * len(uses_r) + (len(schemes) - len(uses_r)))
    if runs * args.seeds > MAX_RUNS:
        raise UsageError(
            "--seeds", args.seeds, f"makes {runs * args.seeds:,} runs; at most {MAX_RUNS:,}"
        )
    check_output_folder("--out", args.out)
    if args.scheduler is not None:
        _check_scheduler(args.scheduler)
    tasks = sweep_tasks(
        base, args.n_list, schemes, args.redundancy, range(args.seeds), layout=args.layout
    )
    rows = sweep(
        tasks, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress
    )
    means = mean_rows(rows)
    best = best_by_scheme(means)
    table = format_table(best)
    with writing("--out", args.out):
        _write_outputs(args.out, base, rows, means, best, table)
    print(table)
    print(
        f"{len(rows)} runs; wrote {args.out}/runs.csv, means.csv, sweep.json, scenario.json, "
        "sweep.png, table.md",
        file=sys.stderr,
    )
    return 0


def _write_outputs(
    out: str, base: Any, rows: list[dict], means: list[dict], best: dict, table: str
) -> None:
    from spare_fast.sim.sweep import plot_sweep, write_csv, write_json

    os.makedirs(out, exist_ok=True)
    write_csv(rows, os.path.join(out, "runs.csv"))
    write_csv(means, os.path.join(out, "means.csv"))
    write_json(
        {
            "scenario": base.to_dict(),
            "runs": rows,
            "means": means,
            "best": [best[k] for k in sorted(best)],
        },
        os.path.join(out, "sweep.json"),
    )
    # The base scenario on its own, so that --replot can title the plot from means.csv.
    with open(os.path.join(out, "scenario.json"), "w") as fh:
        json.dump({k: ("inf" if v == float("inf") else v) for k, v in base.to_dict().items()}, fh)
    plot_sweep(means, os.path.join(out, "sweep.png"), base)
    with open(os.path.join(out, "table.md"), "w") as fh:
        fh.write(table + "\n")
