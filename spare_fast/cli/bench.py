"""``spare-fast bench``: the controller's speed figures, side by side with the peer."""

from __future__ import annotations

import argparse
import json
import platform

from spare_fast.cli._common import (
    UsageError,
    check_memory,
    check_output_file,
    choice_list,
    int_at_least,
    require,
    writing,
)
from spare_fast.testing import bench

_LAYOUTS = ("cyclic", "sidon", "random")


def bench_bytes(groups: int, redundancy: int) -> float:
    """Memory of one trajectory or solve at N x r (layout, controller, peer graph)."""
    return 96.0 * groups * redundancy + 64e6


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure controller latency and solve() against OR-Tools")
    p.add_argument(
        "--groups",
        type=int_at_least(4),
        default=100_000,
        help="N for trajectories and solve (default 100000)",
    )
    p.add_argument("--redundancy", type=int_at_least(1), default=20, help="r, <= N (default 20)")
    p.add_argument(
        "--layouts",
        type=choice_list(_LAYOUTS),
        default=["sidon", "random"],
        help="comma-separated layout kinds: cyclic, sidon, random (default sidon,random)",
    )
    p.add_argument("--no-peer", action="store_true", help="skip the OR-Tools peer pipeline")
    p.add_argument("--no-million", action="store_true", help="skip the 1M-group case")
    p.add_argument("--json", metavar="PATH", help="write all figures to this JSON file")
    p.set_defaults(func=run)
    # `spare-fast bench graph`: the graph-kernel harness (its own module).
    from spare_fast.testing import bench_graph as _bench_graph

    _bench_graph.add_parser(p.add_subparsers(dest="what", metavar="{graph}"))
    p.set_defaults(what=None)


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(
        c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
    )


def run(args: argparse.Namespace) -> int:
    from spare_fast.cli._scenario import check_layout

    layouts = args.layouts
    if args.redundancy > args.groups:
        raise UsageError("--redundancy", args.redundancy, f"must be <= --groups = {args.groups}")
    if "sidon" in layouts:
        check_layout("sidon", args.groups, args.redundancy)
    check_memory("--groups", args.groups, lambda n: bench_bytes(n, args.redundancy), "the bench")
    check_output_file("--json", args.json)
    if not args.no_peer:
        require("ortools", "the OR-Tools peer (or pass --no-peer)")
    results: dict = {"machine": platform.platform(), "trajectories": [], "solve": []}
    print(
        f"Failure trajectories to wipe-out, N = {args.groups}, r = {args.redundancy} "
        "(latency per decision, Python call included)"
    )
    head = ["layout", "failures", "median us", "p99 us", "max us", "total s", "mean depth"]
    w = [8, 9, 10, 9, 9, 8, 10]
    print(_row(head, w))
    for kind in layouts:
        r = bench.failure_trajectory(args.groups, args.redundancy, kind)
        results["trajectories"].append(r)
        print(
            _row(
                [
                    kind,
                    str(r["failures"]),
                    f"{r['median_us']:.1f}",
                    f"{r['p99_us']:.0f}",
                    f"{r['max_us']:.0f}",
                    f"{r['total_s']:.2f}",
                    f"{r['mean_depth']:.3f}",
                ],
                w,
            )
        )
    print(
        f"\nsolve() from scratch, N = {args.groups}, r = {args.redundancy}, 30% failed, "
        "against OR-Tools (max-flow binary search + min-cost flow)"
    )
    head = ["layout", "depth", "moves", "solve ms", "peer ms", "ratio", "agree"]
    w = [8, 5, 7, 9, 9, 7, 5]
    print(_row(head, w))
    for kind in layouts:
        r = bench.from_scratch_vs_peer(
            args.groups, args.redundancy, 0.3, kind, peer=not args.no_peer
        )
        results["solve"].append(r)
        peer = f"{r['peer_s'] * 1e3:.0f}" if "peer_s" in r else "-"
        ratio = f"{r['ratio']:.1f}x" if "ratio" in r else "-"
        print(
            _row(
                [
                    kind,
                    str(r["depth"]),
                    str(r["moves"]),
                    f"{r['solve_s'] * 1e3:.1f}",
                    peer,
                    ratio,
                    str(r.get("agree", "-")),
                ],
                w,
            )
        )
    if not args.no_million:
        r = bench.million_groups()
        results["million"] = r
        print(
            f"\nN = {r['n_groups']:,}, r = {r['redundancy']}: build {r['build_s']:.2f} s, "
            f"{r['failures']:,} failures {r['failures_s']:.2f} s, "
            f"peak RSS {r['peak_rss_mb']:.0f} MB (process total)"
        )
    if args.json:
        with writing("--json", args.json), open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"\nwrote {args.json}")
    return 0
