"""Min-cost flow and matching on the standard families, side by side with the peers
(pytest-benchmark). Every benchmark asserts that its answer equals the peers'.

Run (skipped in the normal test run):

    PYTHONPATH=. python -m pytest benchmarks/bench_graph_families.py --benchmark-only \
        --benchmark-enable --benchmark-group-by=param:case

The full sweep (sizes, CSV, JSON, PNG) is ``spare-fast bench graph``.
"""

from __future__ import annotations

import functools

import pytest

from spare_fast.testing import bench_graph as bg
from spare_fast.testing.graph_families import generate

N = 4_096
MCF_SOLVERS = {"spare_fast": bg._ours, "lemon": bg._lemon, "ortools": bg._ortools}
MATCH_SOLVERS = {"spare_fast": bg._match_ours, "scipy": bg._match_scipy}


@functools.cache
def flow_case(family: str):
    inst = generate(family, N, seed=0)
    return inst, bg._ortools(inst)


@functools.cache
def matching_case(family: str):
    inst = bg.matching_instance(family, N, seed=0)
    return inst, bg._match_scipy(inst)


@pytest.mark.parametrize("solver", sorted(MCF_SOLVERS))
@pytest.mark.parametrize("case", bg.MCF_FAMILIES)
def test_min_cost_flow_family(benchmark, case, solver):
    if solver == "lemon":
        pytest.importorskip("pylmcf")
    if case in bg.PYNETGEN_FAMILIES:
        pytest.importorskip("pynetgen")
    inst, expected = flow_case(case)
    fn = MCF_SOLVERS[solver]
    result = benchmark.pedantic(fn, args=(inst,), rounds=3, iterations=1, warmup_rounds=1)
    assert result == expected


@pytest.mark.parametrize("solver", sorted(MATCH_SOLVERS))
@pytest.mark.parametrize("case", bg.MATCHING_FAMILIES)
def test_matching_family(benchmark, case, solver):
    inst, expected = matching_case(case)
    fn = MATCH_SOLVERS[solver]
    result = benchmark.pedantic(fn, args=(inst,), rounds=5, iterations=1, warmup_rounds=1)
    assert result == expected


@functools.cache
def staircase_case():
    # k = 800 disjoint paths of lengths 1..800 (about 320,000 nodes), unit costs.
    inst = generate("staircase", 2 + 800 * 799 // 2)
    assert int(inst.supply[0]) == 800
    return inst, bg._ortools(inst)


@pytest.mark.parametrize("solver", ["spare_fast", "ortools"])
def test_staircase_800_auto(benchmark, solver):
    inst, expected = staircase_case()
    fn = MCF_SOLVERS[solver]  # spare_fast: method="auto"
    result = benchmark.pedantic(fn, args=(inst,), rounds=3, iterations=1, warmup_rounds=1)
    assert result == expected
