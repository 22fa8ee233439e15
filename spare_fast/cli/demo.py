"""``spare-fast demo``: the main job, a tour of the decision core on SPARe-shaped instances."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="tour: graph kernels, controller trajectory, the paper's N = 600 simulation"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=run)


def demo_controller(seed: int = 0) -> None:
    """A failure trajectory at N = 100,000, r = 20 and one from-scratch decision vs OR-Tools."""
    from spare_fast.testing import bench

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
    demo_kernels(args.seed)
    demo_controller(args.seed)
    from spare_fast.sim import demo_simulation

    print("\n== Simulator: the paper's N = 600 scenario (600k GPUs, MTBF 5 min, Weibull 0.78) ==")
    demo_simulation(seeds=(args.seed, args.seed + 1))
    return 0


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float]:
    """``fn()`` and its best wall time over ``repeat`` calls (a few ms are noise-prone)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def demo_kernels(seed: int, n_groups: int = 100_000, redundancy: int = 20) -> None:
    """The three graph kernels on one SPARe-shaped instance, next to scipy and OR-Tools.

    Fails 30% of ``n_groups`` groups of a cyclic layout at random (``seed``), then prints each
    kernel's answer and wall time (best of 3 for the millisecond matchings) next to the
    peer's on identical arrays: Hopcroft-Karp
    (types x alive groups) against scipy's ``maximum_bipartite_matching``; the b-matching at
    the minimal depth S against scipy on the slot-expanded graph; the move-minimising
    min-cost flow (docs/model.md, "The controller") against OR-Tools' ``SimpleMinCostFlow``
    when installed.
    """
    import numpy as np

    from spare_fast.graph import hopcroft_karp, max_b_matching, min_cost_flow
    from spare_fast.testing.graph_instances import (
        expand_capacity,
        minimal_depth,
        move_network,
        spare_bipartite,
    )

    g = spare_bipartite(n_groups, redundancy, failed_fraction=0.3, seed=seed)
    print(
        f"\n== graph kernels: N = {n_groups:,} groups, r = {redundancy}, cyclic layout, "
        f"30% failed (seed {seed}) =="
    )
    print(
        f"types {g.n_types:,} x alive groups {g.n_alive:,}, "
        f"{int(g.indptr[-1]):,} (type, holder) edges"
    )
    try:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import maximum_bipartite_matching
    except ImportError:  # the peers extra is optional for the kernels themselves
        maximum_bipartite_matching = None
        print("(scipy not installed: peer timings skipped; pip install 'spare-fast[peers]')")

    def size(mate: Any) -> int:
        return int(np.count_nonzero(np.asarray(mate) >= 0))

    def row(what: str, answer: str, seconds: float) -> None:
        print(f"  {what:<48} {answer:<26} {seconds * 1e3:9.1f} ms")

    print("hopcroft_karp (maximum matching, types -> alive groups):")
    mate, t = _timed(lambda: hopcroft_karp(g.indptr, g.indices, g.n_alive), 3)
    row("spare_fast.graph.hopcroft_karp", f"matched {size(mate):,}", t)
    if maximum_bipartite_matching is not None:
        a = g.to_scipy()
        ref, t = _timed(lambda: maximum_bipartite_matching(a, perm_type="column"), 3)
        row("scipy maximum_bipartite_matching", f"matched {size(ref):,}", t)

    depth = minimal_depth(g)
    cap = np.full(g.n_alive, depth, dtype=np.int64)
    print(f"max_b_matching (capacity S = {depth} per alive group, the minimal depth):")
    mate, t = _timed(lambda: max_b_matching(g.indptr, g.indices, cap), 3)
    row("spare_fast.graph.max_b_matching", f"assigned {size(mate):,}", t)
    if maximum_bipartite_matching is not None:
        (ip, ix, _, n_slots), t_exp = _timed(lambda: expand_capacity(g.indptr, g.indices, cap))
        e = sp.csr_matrix((np.ones(ix.size, np.int8), ix, ip), shape=(g.n_types, n_slots))
        ref, t = _timed(lambda: maximum_bipartite_matching(e, perm_type="column"), 3)
        row(f"scipy on the expanded graph ({ix.size:,} edges)", f"assigned {size(ref):,}", t)
        row("  + building the expanded graph", "", t_exp)

    net = move_network(g, depth)
    print(f"min_cost_flow (fewest moves at depth S = {depth}, {net[1].size:,} arcs):")
    res, t = _timed(lambda: min_cost_flow(*net))
    row("spare_fast.graph.min_cost_flow", f"{res.status.name}, moves {res.total_cost:,}", t)
    try:
        from ortools.graph.python import min_cost_flow as ortools_mcf
    except ImportError:
        print("  (OR-Tools not installed: peer skipped; pip install 'spare-fast[peers]')")
        return
    n_nodes, tail, head, capacity, cost, supply = net

    def ortools() -> tuple[str, int]:
        s = ortools_mcf.SimpleMinCostFlow()
        s.add_arcs_with_capacity_and_unit_cost(tail, head, capacity, cost)
        s.set_nodes_supplies(np.arange(n_nodes), supply)
        return s.solve().name, int(s.optimal_cost())

    (status, moves), t = _timed(ortools)
    row("OR-Tools SimpleMinCostFlow (load + solve)", f"{status}, moves {moves:,}", t)
