"""``spare-fast demo``: the main job, a tour of the decision core on SPARe-shaped instances."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the kernels and the controller on SPARe-shaped instances")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=run)


def demo_controller(seed: int = 0) -> None:
    """A failure trajectory at N = 100,000, r = 20 and one from-scratch decision vs OR-Tools."""
    from spare_fast import bench

    n, r = 100_000, 20
    print(f"\n== Controller: one failure at a time until wipe-out, N = {n:,}, r = {r}, sidon ==")
    t = bench.failure_trajectory(n, r, "sidon", seed=seed)
    print(
        f"failures survived {t['failures']:,}; mean depth {t['mean_depth']:.3f}; "
        f"{t['full_solves']} full solves (depth changes)"
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


def run(args: argparse.Namespace) -> int:
    print("spare_fast demo")
    demo_controller(args.seed)
    return 0
