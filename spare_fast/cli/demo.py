"""``spare-fast demo``: the main job, a tour of the decision core on SPARe-shaped instances."""

from __future__ import annotations

import argparse

from spare_fast._validation import MAX_SEED
from spare_fast.cli._common import int_at_least, require


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="tour: graph kernels, controller trajectory, the paper's N = 600 simulation"
    )
    # The simulation runs seeds SEED and SEED + 1: both must be 64-bit seeds.
    p.add_argument(
        "--seed",
        type=int_at_least(0, MAX_SEED - 1),
        default=0,
        help=f"random seed, 0..{MAX_SEED - 1} (default 0)",
    )
    p.set_defaults(func=run)


def demo_controller(seed: int = 0) -> None:
    """A failure trajectory at N = 100,000, r = 20 and one from-scratch decision vs OR-Tools."""
    from spare_fast.testing import bench

    n, r = 100_000, 20
    print(f"\n== Controller: one failure at a time until wipe-out, N = {n:,}, r = {r}, sidon ==")
    t = bench.failure_trajectory(n, r, "sidon", seed=seed)
    print(
        f"failures survived {t['failures']:,}; mean depth {t['mean_depth']:.3f}; "
        f"{t['depth_raises']} depth raises, {t['full_solves']} full solves"
    )
    print(
        f"decision latency (Python call included): median {t['median_us']:.1f} us, "
        f"p99 {t['p99_us']:.0f} us, max {t['max_us'] / 1e3:.1f} ms; "
        f"whole trajectory {t['total_s']:.2f} s"
    )
    try:
        import ortools  # noqa: F401

        peer = True
    except ImportError:
        peer = False
    s = bench.from_scratch_vs_peer(n, r, 0.3, "sidon", seed=seed, repeat=1, peer=peer)
    line = (
        f"from scratch, 30% failed: spare_fast.solve {s['solve_s'] * 1e3:.0f} ms "
        f"(depth {s['depth']}, moves {s['moves']:,})"
    )
    if peer:
        line += (
            f"; OR-Tools max-flow search + min-cost flow {s['peer_s']:.2f} s "
            f"(agree: {s['agree']}), {s['ratio']:.0f}x"
        )
    else:
        line += "; OR-Tools not installed, peer skipped"
    print(line)


def demo_kernels(seed: int, n_groups: int = 100_000, redundancy: int = 20) -> None:
    """The three graph kernels on one SPARe-shaped instance, next to scipy and OR-Tools.

    The measurements are :func:`spare_fast.testing.bench.graph_kernels_vs_peers`'s.
    """
    from spare_fast.testing import bench

    res = bench.graph_kernels_vs_peers(n_groups, redundancy, seed=seed)
    print(
        f"\n== graph kernels: N = {n_groups:,} groups, r = {redundancy}, cyclic layout, "
        f"30% failed (seed {seed}) =="
    )
    print(
        f"types {res['n_types']:,} x alive groups {res['n_alive']:,}, "
        f"{res['edges']:,} (type, holder) edges"
    )
    for kind, *cells in res["lines"]:
        if kind == "row":
            what, answer, seconds = cells
            print(f"  {what:<48} {answer:<26} {seconds * 1e3:9.1f} ms")
        else:
            print(cells[0])


def run(args: argparse.Namespace) -> int:
    require("scipy", "spare-fast demo (its scipy peer)")
    print("spare_fast demo")
    demo_kernels(args.seed)
    demo_controller(args.seed)
    from spare_fast.sim import demo_simulation

    print("\n== Simulator: the paper's N = 600 scenario (600k GPUs, MTBF 5 min, Weibull 0.78) ==")
    demo_simulation(seeds=(args.seed, args.seed + 1))
    return 0
