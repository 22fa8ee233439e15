"""``spare-fast simulate``: one training run under failures, its summary and timeline."""

from __future__ import annotations

import argparse

from spare_fast.cli._scenario import add_scenario_options, scenario_from
from spare_fast.layout import SPARE_LAYOUTS

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate one training run under failures")
    p.add_argument("--scheme", choices=["checkpoint", "replication", "spare"], default="spare")
    p.add_argument("--redundancy", "-r", type=int, default=None, help="r (default per scheme)")
    p.add_argument("--layout", choices=SPARE_LAYOUTS, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="PATH", help="write the report summary as JSON")
    p.add_argument("--timeline-png", metavar="PATH", help="plot the timeline to a PNG")
    add_scenario_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spare_fast.sim import simulate

    sc = scenario_from(args)
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
