"""spare_fast.graph.read_dimacs / write_dimacs: round trips, peers, malformed files."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ortools.graph.python import min_cost_flow as ortools_mcf

from spare_fast.graph import (
    DimacsError,
    DimacsProblem,
    MinCostFlowStatus,
    min_cost_flow,
    read_dimacs,
    write_dimacs,
)
from spare_fast.testing.graph_families import generate


def _same(a: DimacsProblem, b: DimacsProblem) -> None:
    assert (a.kind, a.n_nodes, a.source, a.sink) == (b.kind, b.n_nodes, b.source, b.sink)
    for attr in ("tail", "head", "capacity", "cost", "supply", "left"):
        x, y = getattr(a, attr), getattr(b, attr)
        assert (x is None) == (y is None), attr
        if x is not None:
            assert np.array_equal(np.asarray(x), np.asarray(y)), attr


def test_min_round_trip(tmp_path):
    inst = generate("netgen-8", 200, seed=5)
    n, t, h, c, w, b = inst.arrays()
    p = DimacsProblem("min", n, t, h, capacity=c, cost=w, supply=b)
    write_dimacs(tmp_path / "a.min", p, comment="netgen-8 n=200\nseed 5")
    q = read_dimacs(tmp_path / "a.min")
    _same(p, q)
    assert q.tail.dtype == np.int32 and q.cost.dtype == np.int64
    r = min_cost_flow(*q.min_cost_flow_arrays())
    assert r.status == MinCostFlowStatus.OPTIMAL


@pytest.mark.parametrize("seed", range(5))
def test_random_round_trips_of_every_kind(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    m = int(rng.integers(0, 80))
    t = rng.integers(0, n, size=m).astype(np.int32)
    h = rng.integers(0, n, size=m).astype(np.int32)
    big = rng.integers(0, 2**62, size=m, dtype=np.int64)
    problems = [
        DimacsProblem(
            "min",
            n,
            t,
            h,
            capacity=big,
            cost=rng.integers(-5, 2**40, size=m),
            supply=np.concatenate(([7], np.zeros(n - 2, np.int64), [-7])),
        ),
        DimacsProblem("max", n, t, h, capacity=big, source=n - 1, sink=0),
        DimacsProblem(
            "asn",
            n,
            t,
            h,
            cost=rng.integers(0, 100, size=m),
            left=np.arange(n // 2, dtype=np.int32),
        ),
    ]
    for p in problems:
        write_dimacs(tmp_path / p.kind, p)
        _same(p, read_dimacs(tmp_path / p.kind))


def test_empty_min_problem(tmp_path):
    (tmp_path / "e").write_text("c nothing\np min 0 0\n")
    p = read_dimacs(tmp_path / "e")
    assert p.n_nodes == 0 and p.tail.size == 0 and p.supply.size == 0


def test_pynetgen_file_solves_like_ortools(tmp_path):
    pynetgen = pytest.importorskip("pynetgen")
    path = tmp_path / "netgen.min"
    pynetgen.netgen_generate(
        seed=7,
        nodes=300,
        sources=17,
        sinks=17,
        density=2400,
        mincost=1,
        maxcost=10_000,
        supply=17_000,
        mincap=1,
        maxcap=1_000,
        fname=str(path),
    )
    n, t, h, c, w, b = read_dimacs(path).min_cost_flow_arrays()
    s = ortools_mcf.SimpleMinCostFlow()
    s.add_arcs_with_capacity_and_unit_cost(t, h, c, w)
    s.set_nodes_supplies(np.arange(n), b)
    assert s.solve() == s.OPTIMAL
    for method in ("network_simplex", "ssp"):
        r = min_cost_flow(n, t, h, c, w, b, method=method)
        assert (r.status, r.total_cost) == (MinCostFlowStatus.OPTIMAL, s.optimal_cost())


MALFORMED = [
    ("n 1 3\np min 2 0\n", "1: 'n' line before the problem line"),
    ("p min 2\n", "1: problem line needs"),
    ("p mincost 2 1\n", "1: problem kind 'mincost'"),
    ("p min 2 1\np min 2 1\n", "2: second problem line"),
    ("p min x 1\n", "1: NODES = 'x' is not an integer"),
    ("p min 2 1\na 1 3 0 5 1\n", "2: head = 3 is not in [1, 2]"),
    ("p min 2 1\na 0 2 0 5 1\n", "2: tail = 0 is not in [1, 2]"),
    ("p min 2 1\na 1 2 0 5\n", "2: arc line needs 'a U V LOW CAP COST'"),
    ("p min 2 1\na 1 2 1 5 1\n", "2: LOW = 1"),
    ("p min 2 1\na 1 2 0 -5 1\n", "2: CAP = -5"),
    ("p min 2 1\nc\na 1 2 0 5 1.5\n", "3: COST = '1.5' is not an integer"),
    ("p min 2 1\nn 1 99999999999999999999\n", "2: SUPPLY = 99999999999999999999"),
    ("p min 2 2\na 1 2 0 5 1\n", "1 arc lines, the problem line (line 1) says 2"),
    ("p min 2 0\na 1 2 0 5 1\n", "2: more arcs than the 0"),
    ("p max 2 1\nn 1 s\nn 2 x\n", "3: node role 'x'"),
    ("p max 2 1\nn 1 s\na 1 2 3\n", "max problem without a sink"),
    ("p asn 2 1\nn 1 5\n", "2: node line needs 'n ID'"),
    ("p min 2 0\nx 1\n", "2: unknown line type 'x'"),
    ("c only a comment\n", "no problem line"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_file_names_the_line(tmp_path, text, message):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(DimacsError, match=f"^{re.escape(str(path))}") as info:
        read_dimacs(path)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_write_rejects_missing_fields(tmp_path):
    t = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="needs cost"):
        write_dimacs(tmp_path / "x", DimacsProblem("min", 1, t, t, capacity=[1], supply=[0]))
    with pytest.raises(ValueError, match="needs source and sink"):
        write_dimacs(tmp_path / "x", DimacsProblem("max", 1, t, t, capacity=[1]))


def test_min_cost_flow_arrays_only_for_min():
    p = DimacsProblem("asn", 0, np.zeros(0, np.int32), np.zeros(0, np.int32), cost=np.zeros(0))
    with pytest.raises(ValueError, match="'asn' problem"):
        p.min_cost_flow_arrays()
