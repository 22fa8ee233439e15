"""Speed figures: controller trajectories, solve() and the graph kernels against their peers.

Used by ``spare-fast bench``, ``spare-fast demo`` and ``benchmarks/bench_controller.py``. Every
figure is measured in the current process (the 1M-group case in a child process, so that its
peak memory is its own) and peers run on identical arrays in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import spare_fast
from spare_fast.controller import Controller, Status, solve
from spare_fast.layout import make_layout

__all__ = [
    "failure_trajectory",
    "from_scratch_vs_peer",
    "graph_kernels_vs_peers",
    "million_groups",
]


def failure_trajectory(
    n_groups: int = 100_000, redundancy: int = 20, layout: str = "sidon", seed: int = 0
) -> dict[str, Any]:
    """Fail one uniformly random group at a time until wipe-out; time every decision.

    Latencies include the Python call (``time.perf_counter`` around ``Controller.fail``).

    Returns
    -------
    dict
        failures, median_us, p99_us, max_us, total_s (the decision loop), mean_depth,
        final_depth, full_solves, total_moves.

    Examples
    --------
    >>> r = failure_trajectory(500, 4, "cyclic")
    >>> r["failures"] > 0 and r["median_us"] > 0
    True
    """
    ctl = Controller(make_layout(layout, n_groups, redundancy, seed=seed))
    order = np.random.default_rng(seed).permutation(n_groups).tolist()
    lat = np.empty(n_groups)
    depth_sum = moves = full = raises = 0
    depth = ctl.depth
    count = 0
    clock = time.perf_counter
    fail = ctl.fail
    t_start = clock()
    for g in order:
        t0 = clock()
        d = fail(g)
        lat[count] = clock() - t0
        count += 1
        if d.status is Status.WIPEOUT:
            break
        depth_sum += d.depth
        raises += d.depth > depth
        depth = d.depth
        moves += d.moves
        full += d.full_solve
    total = clock() - t_start
    lat = lat[:count]
    survived = count - 1
    return {
        "layout": layout,
        "n_groups": n_groups,
        "redundancy": redundancy,
        "failures": survived,
        "median_us": float(np.median(lat) * 1e6),
        "p99_us": float(np.percentile(lat, 99) * 1e6),
        "max_us": float(lat.max() * 1e6),
        "total_s": total,
        "mean_depth": depth_sum / max(survived, 1),
        "full_solves": int(full),
        "depth_raises": int(raises),
        "total_moves": int(moves),
    }


def from_scratch_vs_peer(
    n_groups: int = 100_000,
    redundancy: int = 20,
    failed: float = 0.3,
    layout: str = "sidon",
    seed: int = 0,
    repeat: int = 3,
    peer: bool = True,
) -> dict[str, Any]:
    """:func:`spare_fast.solve` against the OR-Tools peer pipeline on the same instance.

    The best of ``repeat`` runs of ``solve`` is compared with one run of the peer (max-flow
    binary search for the depth, then min-cost flow;
    :func:`spare_fast.testing.peers.ortools_decision`), and the answers must agree.

    Returns
    -------
    dict
        depth, moves, solve_s, peer_s, ratio (peer_s / solve_s), agree.
    """
    lay = make_layout(layout, n_groups, redundancy, seed=seed)
    rng = np.random.default_rng(seed)
    alive = np.ones(n_groups, dtype=bool)
    alive[rng.choice(n_groups, int(round(failed * n_groups)), replace=False)] = False
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        d = solve(lay, alive)
        times.append(time.perf_counter() - t0)
    out: dict[str, Any] = {
        "layout": layout,
        "n_groups": n_groups,
        "redundancy": redundancy,
        "failed": failed,
        "status": d.status.name,
        "depth": d.depth,
        "moves": d.moves,
        "solve_s": min(times),
    }
    if peer:
        from spare_fast.testing.peers import ortools_decision

        p = ortools_decision(lay.stacks, alive)
        out.update(
            peer_s=p.seconds,
            ratio=p.seconds / min(times),
            agree=(p.status, p.depth, p.moves) == (d.status.name, d.depth, d.moves),
        )
    return out


_MILLION_CHILD = """
import json, resource, sys, time
import numpy as np
from spare_fast import Controller, Layout
n, r, k = (int(a) for a in sys.argv[1:4])
layout = Layout.cyclic(n, r)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter(); ctl = Controller(layout); build = time.perf_counter() - t0
order = np.random.default_rng(0).permutation(n)[:k].tolist()
t0 = time.perf_counter()
for g in order:
    d = ctl.fail(g)
fails = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"build_s": build, "failures": k, "failures_s": fails, "depth": d.depth,
                  "status": d.status.name, "peak_rss_mb": peak / 1024,
                  "baseline_rss_mb": rss0 / 1024}))
"""


def million_groups(
    n_groups: int = 1_000_000, redundancy: int = 20, failures: int = 10_000
) -> dict[str, Any]:
    """Build a controller for ``n_groups`` and decide ``failures`` failures, in a child process.

    Returns
    -------
    dict
        build_s (Controller construction, layout excluded), failures_s, peak_rss_mb (whole
        child process, interpreter and layout included), status, depth.
    """
    # Run the child next to the package this process imported, so that it imports the same
    # spare_fast (with `-c` the working directory comes first on sys.path).
    here = os.path.dirname(os.path.dirname(os.path.abspath(spare_fast.__file__)))
    out = subprocess.run(
        [sys.executable, "-c", _MILLION_CHILD, str(n_groups), str(redundancy), str(failures)],
        check=True,
        capture_output=True,
        text=True,
        cwd=here,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update(n_groups=n_groups, redundancy=redundancy)
    return res


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float]:
    """``fn()`` and its best wall time over ``repeat`` calls (a few ms are noise-prone)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def graph_kernels_vs_peers(
    n_groups: int = 100_000, redundancy: int = 20, seed: int = 0
) -> dict[str, Any]:
    """The three graph kernels on one SPARe-shaped instance, timed next to scipy and OR-Tools.

    Fails 30% of ``n_groups`` groups of a cyclic layout at random (``seed``), then measures each
    kernel's answer and wall time (best of 3 for the millisecond matchings) next to the
    peer's on identical arrays: Hopcroft-Karp
    (types x alive groups) against scipy's ``maximum_bipartite_matching``; the b-matching at
    the minimal depth S against scipy on the slot-expanded graph; the move-minimising
    min-cost flow (docs/model.md, "The controller") against OR-Tools' ``SimpleMinCostFlow``
    when installed (``spare-fast demo`` prints the result).

    Returns
    -------
    dict
        n_types, n_alive, edges of the instance, and ``lines``: in order, ``("section", text)``
        headers and notes, and ``("row", what, answer, seconds)`` measurements.
    """
    from spare_fast.graph import hopcroft_karp, max_b_matching, min_cost_flow
    from spare_fast.testing.graph_instances import (
        expand_capacity,
        minimal_depth,
        move_network,
        spare_bipartite,
    )

    g = spare_bipartite(n_groups, redundancy, failed_fraction=0.3, seed=seed)
    lines: list[tuple[Any, ...]] = []
    out: dict[str, Any] = {
        "n_types": g.n_types,
        "n_alive": g.n_alive,
        "edges": int(g.indptr[-1]),
        "lines": lines,
    }

    def note(text: str) -> None:
        lines.append(("section", text))

    def row(what: str, answer: str, seconds: float) -> None:
        lines.append(("row", what, answer, seconds))

    try:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import maximum_bipartite_matching
    except ImportError:  # the peers extra is optional for the kernels themselves
        maximum_bipartite_matching = None
        note("(scipy not installed: peer timings skipped; pip install 'spare-fast[peers]')")

    def size(mate: Any) -> int:
        return int(np.count_nonzero(np.asarray(mate) >= 0))

    note("hopcroft_karp (maximum matching, types -> alive groups):")
    mate, t = _timed(lambda: hopcroft_karp(g.indptr, g.indices, g.n_alive), 3)
    row("spare_fast.graph.hopcroft_karp", f"matched {size(mate):,}", t)
    if maximum_bipartite_matching is not None:
        a = g.to_scipy()
        ref, t = _timed(lambda: maximum_bipartite_matching(a, perm_type="column"), 3)
        row("scipy maximum_bipartite_matching", f"matched {size(ref):,}", t)

    depth = minimal_depth(g)
    cap = np.full(g.n_alive, depth, dtype=np.int64)
    note(f"max_b_matching (capacity S = {depth} per alive group, the minimal depth):")
    mate, t = _timed(lambda: max_b_matching(g.indptr, g.indices, cap), 3)
    row("spare_fast.graph.max_b_matching", f"assigned {size(mate):,}", t)
    if maximum_bipartite_matching is not None:
        (ip, ix, _, n_slots), t_exp = _timed(lambda: expand_capacity(g.indptr, g.indices, cap))
        e = sp.csr_matrix((np.ones(ix.size, np.int8), ix, ip), shape=(g.n_types, n_slots))
        ref, t = _timed(lambda: maximum_bipartite_matching(e, perm_type="column"), 3)
        row(f"scipy on the expanded graph ({ix.size:,} edges)", f"assigned {size(ref):,}", t)
        row("  + building the expanded graph", "", t_exp)

    net = move_network(g, depth)
    note(f"min_cost_flow (fewest moves at depth S = {depth}, {net[1].size:,} arcs):")
    res, t = _timed(lambda: min_cost_flow(*net))
    row("spare_fast.graph.min_cost_flow", f"{res.status.name}, moves {res.total_cost:,}", t)
    try:
        from ortools.graph.python import min_cost_flow as ortools_mcf
    except ImportError:
        note("  (OR-Tools not installed: peer skipped; pip install 'spare-fast[peers]')")
        return out
    n_nodes, tail, head, capacity, cost, supply = net

    def ortools() -> tuple[str, int]:
        s = ortools_mcf.SimpleMinCostFlow()
        s.add_arcs_with_capacity_and_unit_cost(tail, head, capacity, cost)
        s.set_nodes_supplies(np.arange(n_nodes), supply)
        return s.solve().name, int(s.optimal_cost())

    (status, moves), t = _timed(ortools)
    row("OR-Tools SimpleMinCostFlow (load + solve)", f"{status}, moves {moves:,}", t)
    return out
