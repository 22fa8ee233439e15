"""``spare-fast simulate``: one training run under failures, its summary and timeline."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from spare_fast._validation import MAX_SEED
from spare_fast.cli._common import (
    UsageError,
    check_output_file,
    int_at_least,
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

if TYPE_CHECKING:
    from spare_fast.sim import Report, Scenario

__all__ = ["add_parser", "check_figure_path", "check_output_path"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate one training run under failures",
        description="Simulate one pretraining run under failures and print its report: "
        "TTT/T0 (time-to-train over the failure-free time T0), availability (share of the "
        "wall clock that advanced training), failures, restarts and the time lost per cause.",
    )
    p.add_argument("--scheme", choices=["checkpoint", "replication", "spare"], default="spare")
    p.add_argument(
        "--redundancy",
        "-r",
        type=int_at_least(1),
        default=None,
        help="r, <= --groups (default: 3 for replication, the rule's r* for spare)",
    )
    p.add_argument("--layout", choices=SPARE_LAYOUTS, default=None, help="spare only")
    p.add_argument("--seed", type=int_at_least(0, MAX_SEED), default=0)
    p.add_argument(
        "--engine",
        choices=["native", "simgrid"],
        default="native",
        help="native: the analytic step model; simgrid: the run on a SimGrid platform, whose "
        "network model sets the all-reduce unless --allreduce is given (needs SimGrid's "
        "Python bindings, e.g. apt-get install python3-simgrid)",
    )
    p.add_argument("--json", metavar="PATH", help="write the scenario and raw report as JSON")
    p.add_argument("--timeline-png", metavar="PATH", help="plot the timeline to a PNG")
    add_scenario_options(p)
    p.set_defaults(func=run)


def check_output_path(option: str, path: str | None) -> None:
    """Refuse an output file before the work (:func:`~spare_fast.cli._common.check_output_file`)."""
    check_output_file(option, path)


def check_figure_path(option: str, path: str | None) -> None:
    """Refuse a figure file whose suffix names no format matplotlib writes, before the work."""
    if path is None:
        return
    require("matplotlib", option)
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if not suffix:
        raise UsageError(option, path, "has no suffix: name the format, e.g. run.png")
    if suffix not in formats:
        raise UsageError(
            option, path, f"has an unknown suffix .{suffix}: use one of {', '.join(formats)}"
        )
    check_output_file(option, path)


def _simulate_simgrid(sc: Scenario, args: argparse.Namespace) -> Report | None:
    """The run on SimGrid; a missing SimGrid is a one-line usage error, a worker that died
    one line on stderr (None)."""
    import sys

    from spare_fast.sim import simgrid

    try:
        where, from_system = simgrid.locate_simgrid()
    except simgrid.SimGridUnavailable as exc:
        raise UsageError(f"--engine simgrid: {exc}") from None
    if from_system:
        print(
            f"spare-fast simulate: simgrid is not importable here; using {where}", file=sys.stderr
        )
    try:
        return simgrid.simulate(
            sc, args.scheme, redundancy=args.redundancy, layout=args.layout, seed=args.seed
        )
    except simgrid.SimGridWorkerError as exc:
        print(f"spare-fast simulate: {exc}", file=sys.stderr)
        return None


def run(args: argparse.Namespace) -> int:
    from spare_fast.sim import default_redundancy, simulate

    sc = scenario_from(args)
    r = args.redundancy
    if args.scheme != "checkpoint":
        eff = r if r is not None else (3 if args.scheme == "replication" else None)
        if eff is None:
            eff = min(default_redundancy(sc.groups), sc.groups)
        if eff > sc.groups:
            raise UsageError("--redundancy", eff, f"must be <= --groups = {sc.groups}")
        if args.scheme == "spare":
            check_layout(args.layout, sc.groups, eff)
        check_sim_memory("--groups", sc.groups, eff)
    else:
        check_sim_memory("--groups", sc.groups, 1)
    check_output_file("--json", args.json)
    check_figure_path("--timeline-png", args.timeline_png)
    if args.engine == "simgrid":
        rep = _simulate_simgrid(sc, args)
        if rep is None:
            return 1
    else:
        rep = simulate(sc, args.scheme, redundancy=r, layout=args.layout, seed=args.seed)
    print(rep.format())
    if args.json:
        from spare_fast.sim.sweep import write_json

        # The scenario the run used: on SimGrid its all-reduce is the network model's.
        doc = {"engine": args.engine, "scenario": rep.scenario.to_dict(), "report": rep.summary()}
        with writing("--json", args.json):
            write_json(doc, args.json)
    if args.timeline_png:
        from spare_fast._plotting import new_figure, save

        fig, axes = new_figure(figsize=(9, 3.6))
        rep.plot(axes[0, 0])
        with writing("--timeline-png", args.timeline_png):
            save(fig, args.timeline_png)
    return 0
