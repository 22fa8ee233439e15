"""Graph kernels side by side with their peers on identical arrays (pytest-benchmark).

Run (skipped in the normal test run):

    PYTHONPATH=. python -m pytest benchmarks/bench_graph.py --benchmark-only \
        --benchmark-enable --benchmark-group-by=param:case

and for the ratios alone, interleaved and printed as a table:

    PYTHONPATH=. python benchmarks/bench_graph.py [WORD]

(WORD: only the cases whose kernel/instance/peer id contains it, e.g. ``max_b_matching``).

Instances: SPARe-shaped bipartite graphs (types x alive groups, an edge where the group holds
the type; N = 10,000 and 100,000 groups, r = 20, cyclic layout, and for the b-matching also
the random layout at N = 100,000, 30% of the groups failed, seed 0), random bipartite graphs
with 1M+ edges, and the move-minimising network (docs/model.md, "The controller") at the
minimal depth S. The b-matching also runs on the
matching instance with every capacity 1: near-perfect, with long augmenting paths, its hard
regime. Every benchmark asserts that its answer (matching size, b-matching size, min-cost-flow
status and cost) equals the peer's.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_fast.graph import hopcroft_karp, max_b_matching, min_cost_flow
from spare_fast.testing.graph_instances import (
    expand_capacity,
    minimal_depth,
    move_network,
    random_bipartite,
    spare_bipartite,
)

R = 20
FAILED = 0.3


@functools.cache
def spare(n_groups: int, layout: str = "cyclic"):
    return spare_bipartite(n_groups, R, failed_fraction=FAILED, seed=0, layout=layout)


@functools.cache
def spare_depth(n_groups: int, layout: str = "cyclic") -> int:
    return minimal_depth(spare(n_groups, layout))


@functools.cache
def random_graph(kind: str):
    if kind == "matching":  # 1.25M edges, 250k x 250k, mean degree 5
        indptr, indices = random_bipartite(250_000, 250_000, 1_250_000, seed=1)
        return indptr, indices, 250_000
    if kind == "b-unit":  # the matching instance as a b-matching, every capacity 1
        indptr, indices, n_right = random_graph("matching")
        return indptr, indices, np.ones(n_right, dtype=np.int64)
    # b-matching: 400k left, 200k right with capacity 1..3, 1.2M edges
    indptr, indices = random_bipartite(400_000, 200_000, 1_200_000, seed=2)
    capacity = np.random.default_rng(3).integers(1, 4, size=200_000).astype(np.int64)
    return indptr, indices, capacity


def _csr(indptr, indices, n_cols):
    data = np.ones(indices.size, dtype=np.int8)
    return sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, n_cols), copy=False)


def _size(mate) -> int:
    return int(np.count_nonzero(np.asarray(mate) >= 0))


@dataclass
class Case:
    """One kernel on one instance: our call, the peer's call, and how to compare answers."""

    kernel: str
    instance: str
    peer_name: str
    setup: Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]
    answer: Callable[[Any], Any]
    rounds: int = 15  # millisecond calls are noise-prone on a shared machine: best of many

    @property
    def id(self) -> str:
        return f"{self.kernel}/{self.instance}/{self.peer_name}"


def hk_spare(n: int):
    def setup():
        g = spare(n)
        a = g.to_scipy()
        return (
            lambda: hopcroft_karp(g.indptr, g.indices, g.n_alive),
            lambda: maximum_bipartite_matching(a, perm_type="column"),
        )

    return setup


def hk_random():
    indptr, indices, n_right = random_graph("matching")
    a = _csr(indptr, indices, n_right)
    return (
        lambda: hopcroft_karp(indptr, indices, n_right),
        lambda: maximum_bipartite_matching(a, perm_type="column"),
    )


def b_setup(get, include_expansion: bool):
    def setup():
        indptr, indices, capacity = get()
        e_indptr, e_indices, _, n_slots = expand_capacity(indptr, indices, capacity)
        expanded = _csr(e_indptr, e_indices, n_slots)

        def peer_expand_and_match():
            ip, ix, _, ns = expand_capacity(indptr, indices, capacity)
            return maximum_bipartite_matching(_csr(ip, ix, ns), perm_type="column")

        peer = (
            peer_expand_and_match
            if include_expansion
            else lambda: maximum_bipartite_matching(expanded, perm_type="column")
        )
        return lambda: max_b_matching(indptr, indices, capacity), peer

    return setup


def b_spare(n: int, layout: str = "cyclic"):
    def get():
        g = spare(n, layout)
        return g.indptr, g.indices, np.full(g.n_alive, spare_depth(n, layout), dtype=np.int64)

    return get


def mcf_spare(n: int):
    def setup():
        from ortools.graph.python import min_cost_flow as ortools_mcf

        net = move_network(spare(n), spare_depth(n))
        n_nodes, tail, head, capacity, cost, supply = net
        nodes = np.arange(n_nodes)

        def peer():
            s = ortools_mcf.SimpleMinCostFlow()
            s.add_arcs_with_capacity_and_unit_cost(tail, head, capacity, cost)
            s.set_nodes_supplies(nodes, supply)
            status = s.solve()
            return status.name, s.optimal_cost()

        return lambda: min_cost_flow(*net), peer

    return setup


def _mcf_answer(result) -> tuple[str, int]:
    if isinstance(result, tuple):
        return result
    return result.status.name, result.total_cost


CASES = [
    Case("hopcroft_karp", "spare-N10000", "scipy", hk_spare(10_000), _size),
    Case("hopcroft_karp", "spare-N100000", "scipy", hk_spare(100_000), _size),
    Case("hopcroft_karp", "random-1.25M-edges", "scipy", hk_random, _size, rounds=3),
    Case(
        "max_b_matching", "spare-N10000", "scipy-expanded", b_setup(b_spare(10_000), False), _size
    ),
    Case(
        "max_b_matching", "spare-N100000", "scipy-expanded", b_setup(b_spare(100_000), False), _size
    ),
    Case(
        "max_b_matching",
        "spare-random-N100000",
        "scipy-expanded",
        b_setup(b_spare(100_000, "random"), False),
        _size,
    ),
    Case(
        "max_b_matching",
        "spare-N100000",
        "expand+scipy",
        b_setup(b_spare(100_000), True),
        _size,
        rounds=5,
    ),
    Case(
        "max_b_matching",
        "random-1.2M-edges",
        "scipy-expanded",
        b_setup(lambda: random_graph("b"), False),
        _size,
        rounds=3,
    ),
    Case(
        "max_b_matching",
        "random-1.2M-edges",
        "expand+scipy",
        b_setup(lambda: random_graph("b"), True),
        _size,
        rounds=3,
    ),
    Case(
        "max_b_matching",
        "random-1.25M-edges-cap1",
        "scipy-expanded",
        b_setup(lambda: random_graph("b-unit"), False),
        _size,
        rounds=3,
    ),
    Case("min_cost_flow", "spare-N10000", "ortools", mcf_spare(10_000), _mcf_answer, rounds=5),
    Case("min_cost_flow", "spare-N100000", "ortools", mcf_spare(100_000), _mcf_answer, rounds=3),
]


@functools.cache
def prepared(case_id: str):
    case = next(c for c in CASES if c.id == case_id)
    ours, peer = case.setup()
    expected = case.answer(peer())
    return case, ours, peer, expected


@pytest.mark.parametrize("side", ["spare_fast", "peer"])
@pytest.mark.parametrize("case", [c.id for c in CASES])
def test_graph_kernel(benchmark, case, side):
    c, ours, peer, expected = prepared(case)
    fn = ours if side == "spare_fast" else peer
    result = benchmark.pedantic(fn, rounds=c.rounds, iterations=1, warmup_rounds=1)
    assert c.answer(result) == expected


def measure_ratios(rounds_scale: int = 1, only: str = "") -> list[tuple[Case, float, float]]:
    """Interleaves ours and the peer's call, best of ``rounds``; returns (case, ours, peer) for
    the cases whose id contains ``only``."""
    rows = []
    for case in CASES:
        if only not in case.id:
            continue
        c, ours, peer, expected = prepared(case.id)
        best = {"ours": float("inf"), "peer": float("inf")}
        for _ in range(c.rounds * rounds_scale):
            for side, fn in (("ours", ours), ("peer", peer)):
                t = time.perf_counter()
                result = fn()
                best[side] = min(best[side], time.perf_counter() - t)
                assert c.answer(result) == expected, (case.id, side)
        rows.append((c, best["ours"], best["peer"]))
    return rows


def main() -> int:
    print(f"python {sys.version.split()[0]}, best of interleaved rounds, ratio = peer / spare_fast")
    print("| kernel | instance | peer | spare_fast (ms) | peer (ms) | ratio |")
    print("|---|---|---|---:|---:|---:|")
    for c, ours, peer in measure_ratios(only=sys.argv[1] if len(sys.argv) > 1 else ""):
        print(
            f"| {c.kernel} | {c.instance} | {c.peer_name} | {ours * 1e3:.1f} | {peer * 1e3:.1f} "
            f"| {peer / ours:.1f}x |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
