"""min_cost_flow's methods (auto, ssp, network_simplex, cost_scaling) against OR-Tools on
random networks.

Costs and capacities reach 2^40; supplies are random, balanced or not, feasible or not; zero
capacities, parallel arcs and self-loops occur. Each method solves 2,000 instances small enough
that the whole file runs in seconds; an optimal flow must also leave no negative-cost cycle in
its residual network (the optimality condition, checked by Bellman-Ford).
"""

from __future__ import annotations

import numpy as np
import pytest
from ortools.graph.python import min_cost_flow as ortools_mcf

from spare_fast.graph import MinCostFlowStatus, min_cost_flow
from spare_fast.testing.graph_families import FAMILIES, generate

N_PER_METHOD = 2_000
METHODS = ("auto", "ssp", "network_simplex", "cost_scaling")
I64_MAX = 2**63 - 1

_OR = ortools_mcf.SimpleMinCostFlow
ORTOOLS_STATUS = {
    _OR.OPTIMAL: MinCostFlowStatus.OPTIMAL,
    _OR.INFEASIBLE: MinCostFlowStatus.INFEASIBLE,
    _OR.UNBALANCED: MinCostFlowStatus.UNBALANCED,
}


def ortools_solve(n, tail, head, capacity, cost, supply, max_flow=False):
    """(status or None if OR-Tools gives up, cost, flow value)."""
    s = ortools_mcf.SimpleMinCostFlow()
    if len(tail):
        s.add_arcs_with_capacity_and_unit_cost(tail, head, capacity, cost)
    if n:
        s.set_nodes_supplies(np.arange(n), supply)
    status = s.solve_max_flow_with_min_cost() if max_flow else s.solve()
    return ORTOOLS_STATUS.get(status), s.optimal_cost(), s.maximum_flow()


def random_network(rng: np.random.Generator):
    n = int(rng.integers(0, 12))
    m = 0 if n == 0 else int(rng.integers(0, 40))
    tail = rng.integers(0, max(n, 1), size=m).astype(np.int32)
    head = rng.integers(0, max(n, 1), size=m).astype(np.int32)
    cost_hi = int(rng.choice([2, 20, 10_000, 2**40]))
    cap_hi = int(rng.choice([6, 1_000, 2**40]))
    if cost_hi == 2**40 and cap_hi == 2**40 and rng.random() < 0.8:
        cap_hi = 1_000  # mostly keep the totals within int64, sometimes test OVERFLOW
    capacity = rng.integers(0, cap_hi + 1, size=m, dtype=np.int64)
    cost = rng.integers(0, cost_hi + 1, size=m, dtype=np.int64)
    supply = np.zeros(n, dtype=np.int64)
    for _ in range(int(rng.integers(0, 5)) if n >= 2 else 0):
        u, v = rng.integers(0, n, size=2)
        b = int(rng.integers(1, min(cap_hi, 2**40) + 1))
        supply[u] += b
        supply[v] -= b
    if n and rng.random() < 0.08:  # unbalanced
        supply[int(rng.integers(0, n))] += int(rng.integers(1, 3))
    return n, tail, head, capacity, cost, supply


def might_overflow(n, capacity, cost, supply, method="auto") -> bool:
    """The up-front bounds of the methods, in Python integers."""
    total = int(supply[supply > 0].sum()) if len(supply) else 0
    carried = [min(int(c), total) for c in capacity]
    cost_bound = sum(c * int(w) for c, w in zip(carried, cost, strict=True))
    max_cost = int(cost.max()) if len(cost) else 0
    if method == "cost_scaling" and 16 * (n + 2) ** 2 * (max_cost + 1) > I64_MAX:
        return True
    return (
        cost_bound > I64_MAX
        or 8 * (n + 3) * (max_cost + 1) > I64_MAX
        or total + sum(carried) > I64_MAX // 2
    )


def has_negative_residual_cycle(n, tail, head, capacity, cost, flow) -> bool:
    """Bellman-Ford on the residual network of ``flow`` (from a virtual source to every node):
    a flow that meets the supplies is optimal exactly when no residual cycle costs < 0."""
    arcs = []
    for t, h, c, w, f in zip(tail.tolist(), head.tolist(), capacity, cost, flow, strict=True):
        if f < c:
            arcs.append((t, h, int(w)))
        if f > 0:
            arcs.append((h, t, -int(w)))
    dist = [0] * n
    for _ in range(n + 1):  # settles within n - 1 passes unless a cycle costs < 0
        changed = False
        for u, v, w in arcs:
            if dist[u] + w < dist[v]:
                dist[v] = dist[u] + w
                changed = True
        if not changed:
            return False
    return True


def check_flow(n, tail, head, capacity, cost, supply, r) -> None:
    assert r.flow.dtype == np.int64 and r.flow.shape == tail.shape
    assert np.all(r.flow >= 0) and np.all(r.flow <= capacity)
    net = np.zeros(n, dtype=object)
    for t, h, f in zip(tail.tolist(), head.tolist(), r.flow.tolist(), strict=True):
        net[t] += f
        net[h] -= f
    if r.status == MinCostFlowStatus.OPTIMAL:
        assert net.tolist() == supply.tolist()
    else:
        for x, b in zip(net.tolist(), supply.tolist(), strict=True):
            assert (0 <= x <= b) if b >= 0 else (b <= x <= 0)
    assert r.total_cost == sum(int(f) * int(c) for f, c in zip(r.flow, cost, strict=True))


@pytest.mark.parametrize("method", METHODS)
def test_random_networks_match_ortools(method):
    rng = np.random.default_rng(20261201)
    seen = set()
    for _ in range(N_PER_METHOD):
        net = random_network(rng)
        r = min_cost_flow(*net, method=method)
        seen.add(r.status)
        if r.status == MinCostFlowStatus.OVERFLOW:
            assert might_overflow(net[0], net[3], net[4], net[5], method)
            assert not r.flow.any()
            continue
        status, cost, _ = ortools_solve(*net)
        if status is None:  # OR-Tools declined (its own cost-range checks)
            continue
        assert r.status == status
        if status == MinCostFlowStatus.OPTIMAL:
            assert r.total_cost == cost
            assert not has_negative_residual_cycle(*net[:5], r.flow)
        elif status == MinCostFlowStatus.INFEASIBLE:
            _, cost, value = ortools_solve(*net, max_flow=True)
            assert (r.flow_value, r.total_cost) == (value, cost)
        if status != MinCostFlowStatus.UNBALANCED:
            check_flow(*net, r)
    assert seen >= {
        MinCostFlowStatus.OPTIMAL,
        MinCostFlowStatus.INFEASIBLE,
        MinCostFlowStatus.UNBALANCED,
        MinCostFlowStatus.OVERFLOW,
    }


def test_auto_zero_cost_routing_matches_ortools():
    # Wide cost ranges with many cost-0 arcs: auto first tries a maximum flow over the cost-0
    # arcs alone, which is optimal when it meets every supply and is dropped otherwise.
    rng = np.random.default_rng(20261203)
    taken = 0
    for _ in range(N_PER_METHOD):
        n, tail, head, capacity, cost, supply = random_network(rng)
        cost = np.where(rng.random(cost.size) < 0.5, 0, cost + 2)  # never all 0/1
        net = (n, tail, head, capacity, cost, supply)
        r = min_cost_flow(*net, method="auto")
        if r.status == MinCostFlowStatus.OVERFLOW:
            assert might_overflow(n, capacity, cost, supply)
            continue
        status, want, _ = ortools_solve(*net)
        if status is None:
            continue
        assert r.status == status
        if status == MinCostFlowStatus.OPTIMAL:
            assert r.total_cost == want
            taken += want == 0 and bool(supply.any())
        elif status == MinCostFlowStatus.INFEASIBLE:
            _, want, value = ortools_solve(*net, max_flow=True)
            assert (r.flow_value, r.total_cost) == (value, want)
        if status != MinCostFlowStatus.UNBALANCED:
            check_flow(*net, r)
    assert taken > 100  # the cost-0 routing answered many of them


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_benchmark_families_agree_across_methods_and_ortools(family):
    if family.endswith("-pn"):
        pytest.importorskip("pynetgen")
    inst = generate(family, 256, seed=3)
    status, cost, _ = ortools_solve(*inst.arrays())
    assert status == MinCostFlowStatus.OPTIMAL
    for method in METHODS:
        r = min_cost_flow(*inst.arrays(), method=method)
        assert (r.status, r.total_cost) == (status, cost)
        check_flow(*inst.arrays(), r)


def test_column_fed_gridgen_enters_through_the_first_column():
    pytest.importorskip("pynetgen")
    row_fed = generate("gridgen-pn", 256, seed=3)
    inst = generate("gridgen-col-pn", 256, seed=3)
    k = 16
    out = inst.tail == 0  # the master source
    assert inst.supply[0] > 0 and out.sum() == k
    assert sorted(inst.head[out]) == [1 + k * r for r in range(k)]
    # Everything else is the row-fed grid.
    keep = row_fed.tail != 0
    assert np.array_equal(inst.tail[~out], row_fed.tail[keep])
    assert np.array_equal(inst.head[~out], row_fed.head[keep])
    assert np.array_equal(inst.supply, row_fed.supply)


@pytest.mark.parametrize(
    "net",
    [
        (3, [0, 1], [1, 2], [5, 5], [2, 3], [0, 0, 0]),  # zero supplies: zero flow
        (2, [0, 0, 0], [1, 1, 1], [0, 2, 3], [0, 5, 1], [3, -3]),  # parallel, one empty
        (2, [0, 0, 1], [0, 1, 1], [9, 4, 9], [0, 2, 0], [4, -4]),  # self-loops carry nothing
        (4, [0, 2], [1, 3], [3, 3], [1, 1], [3, -3, 2, -2]),  # two components
        (3, [0, 1], [1, 2], [2, 1], [1, 1], [2, 0, -2]),  # infeasible: 1 of 2 units
        (3, [0, 0], [1, 2], [0, 0], [1, 1], [2, -1, -1]),  # infeasible: no capacity at all
        (4, [0, 0, 1, 2], [1, 2, 3, 3], [2, 2, 2, 2], [0, 0, 0, 0], [2, 0, 0, -2]),  # all 0
        (1, [], [], [], [], [0]),
    ],
    ids=[
        "no-supply",
        "parallel",
        "self-loops",
        "components",
        "bottleneck",
        "no-capacity",
        "zero-costs",
        "one-node",
    ],
)
def test_cost_scaling_degenerate_networks_match_ortools(net):
    n, *arrays = net
    net = (n, *(np.asarray(a, dtype=np.int32 if i < 2 else np.int64) for i, a in enumerate(arrays)))
    r = min_cost_flow(*net, method="cost_scaling")
    status, cost, _ = ortools_solve(*net)
    assert r.status == status
    if status == MinCostFlowStatus.INFEASIBLE:
        _, cost, value = ortools_solve(*net, max_flow=True)
        assert r.flow_value == value
    assert r.total_cost == cost
    check_flow(*net, r)


def test_cost_scaling_rejects_negative_costs_like_the_others():
    with pytest.raises(ValueError, match=r"cost\[1\] = -1"):
        min_cost_flow(2, [0, 1], [1, 0], [1, 1], [0, -1], [0, 0], method="cost_scaling")


def test_cost_scaling_overflow_of_its_own_bound():
    # 16 (n + 2)^2 (max cost + 1) passes 2^63 at n = 2^12 with costs of 2^36, which the other
    # methods' bounds (linear in n) accept: cost_scaling reports OVERFLOW, auto solves it.
    n = 4_096
    tail = np.arange(n - 1, dtype=np.int32)
    cost = np.full(n - 1, 2**36, dtype=np.int64)
    supply = np.zeros(n, dtype=np.int64)
    supply[0], supply[-1] = 1, -1
    net = (n, tail, tail + 1, np.ones(n - 1, dtype=np.int64), cost, supply)
    assert min_cost_flow(*net, method="cost_scaling").status == MinCostFlowStatus.OVERFLOW
    r = min_cost_flow(*net, method="auto")
    assert r.status == MinCostFlowStatus.OPTIMAL and r.total_cost == (n - 1) * 2**36


@pytest.mark.parametrize("family", ["netgen-8", "netgen-lo-8", "gridgen", "goto", "road"])
def test_cost_scaling_long_runs_match_ortools(family):
    # Many refines, relabels and price updates on networks of a few thousand nodes.
    inst = generate(family, 2_048, seed=7)
    status, cost, _ = ortools_solve(*inst.arrays())
    r = min_cost_flow(*inst.arrays(), method="cost_scaling")
    assert (r.status, r.total_cost) == (status, cost) == (MinCostFlowStatus.OPTIMAL, cost)
    check_flow(*inst.arrays(), r)


@pytest.mark.parametrize("family", ["netgen-8", "netgen-lo-8", "gridgen", "goto"])
def test_network_simplex_long_runs_match_ortools(family):
    # Thousands of pivots: the simplex renumbers its nodes several times along the way, and on
    # NETGEN-LO-8 (capacities 1..10) many arcs leave the tree at their upper bound, where the
    # pricing reads them reversed.
    inst = generate(family, 2_048, seed=5)
    status, cost, _ = ortools_solve(*inst.arrays())
    r = min_cost_flow(*inst.arrays(), method="network_simplex")
    assert (r.status, r.total_cost) == (status, cost) == (MinCostFlowStatus.OPTIMAL, cost)
    check_flow(*inst.arrays(), r)


@pytest.mark.parametrize("extra_pairs", [0, 3])
def test_network_simplex_large_blocks_match_ortools(extra_pairs):
    # From 2^17 nodes the simplex prices in blocks of sqrt(m) instead of 1.5 sqrt(m), and with
    # supply and demand on at most 4 nodes in blocks of 0.7 sqrt(m). The staircase has two
    # terminals; three more supply-demand pairs, each a cheap arc and a dear detour through
    # the staircase's source, put it past 4 and onto the sqrt(m) blocks.
    n, t, h, c, w, b = generate("staircase", 2**18).arrays()
    assert n >= 2**17
    if extra_pairs:
        pairs = np.arange(n, n + 2 * extra_pairs).reshape(-1, 2)
        t = np.concatenate((t, pairs[:, 0], pairs[:, 0], np.zeros(extra_pairs, t.dtype)))
        h = np.concatenate((h, pairs[:, 1], np.zeros(extra_pairs, h.dtype), pairs[:, 1]))
        c = np.concatenate((c, np.full(3 * extra_pairs, 2, c.dtype)))
        w = np.concatenate((w, np.ones(extra_pairs, w.dtype), np.full(2 * extra_pairs, 5, w.dtype)))
        b = np.concatenate((b, np.tile(np.array([3, -3], b.dtype), extra_pairs)))
        n += 2 * extra_pairs
    status, cost, _ = ortools_solve(n, t, h, c, w, b)
    r = min_cost_flow(n, t, h, c, w, b, method="network_simplex")
    assert (r.status, r.total_cost) == (status, cost) == (MinCostFlowStatus.OPTIMAL, cost)
    check_flow(n, t, h, c, w, b, r)


@pytest.mark.parametrize("extra", [0, 1])
def test_auto_hands_long_unit_cost_paths_to_the_simplex(extra):
    # k disjoint paths of lengths 1..k: one primal-dual phase per length, more than auto
    # allows, so the simplex takes over (and, when the supply exceeds the k paths, hands the
    # INFEASIBLE answer back to the primal-dual method). Same answers as OR-Tools either way.
    inst = generate("staircase", 2_000)
    n, t, h, c, w, b = inst.arrays()
    k = int(b[0])
    assert k > 32
    b = b.copy()
    b[0] += extra
    b[1] -= extra
    for method in METHODS:
        r = min_cost_flow(n, t, h, c, w, b, method=method)
        if extra:
            _, cost, value = ortools_solve(n, t, h, c, w, b, max_flow=True)
            assert (r.status, r.flow_value, r.total_cost) == (
                MinCostFlowStatus.INFEASIBLE,
                value,
                cost,
            )
        else:
            assert (r.status, r.total_cost) == (MinCostFlowStatus.OPTIMAL, k * (k + 1) // 2)
        check_flow(n, t, h, c, w, b, r)


def _check_large_flow(n, tail, head, capacity, cost, supply, r) -> None:
    """check_flow for an optimal flow on a large network, with numpy sums."""
    assert np.all(r.flow >= 0) and np.all(r.flow <= capacity)
    net = np.bincount(tail, r.flow, minlength=n) - np.bincount(head, r.flow, minlength=n)
    assert np.array_equal(net.astype(np.int64), supply)
    assert r.total_cost == int(np.dot(r.flow, cost))


def test_auto_small_world_network_of_2_17_nodes_matches_ortools():
    # From 2^17 nodes auto gives cost scaling the networks whose nodes all lie within
    # 2 log2(n) arcs of a supply node (NETGEN-8: 5); there its price refinement ends the
    # solve before the last refines. Same answer as OR-Tools.
    inst = generate("netgen-8", 2**17, seed=2)
    status, cost, _ = ortools_solve(*inst.arrays())
    r = min_cost_flow(*inst.arrays(), method="auto")
    assert (r.status, r.total_cost) == (status, cost) == (MinCostFlowStatus.OPTIMAL, cost)
    _check_large_flow(*inst.arrays(), r)


def test_auto_long_hop_network_of_2_17_nodes_matches_ortools():
    # A star of 2^17 nodes with a path of 100 arcs hanging from one leaf, demand at its far
    # end: some node lies beyond 2 log2(n) = 34 arcs from the supply, so the breadth-first
    # search is abandoned and the simplex solves it. Same answer as OR-Tools.
    n = 2**17
    rng = np.random.default_rng(4)
    leaves = np.arange(1, n - 100, dtype=np.int32)
    path = np.arange(n - 101, n, dtype=np.int32)  # starts at the last leaf
    tail = np.concatenate((leaves, np.zeros_like(leaves), path[:-1], path[1:]))
    head = np.concatenate((np.zeros_like(leaves), leaves, path[1:], path[:-1]))
    capacity = rng.integers(20, 100, size=tail.size).astype(np.int64)
    cost = rng.integers(1, 1_000, size=tail.size).astype(np.int64)
    supply = np.zeros(n, dtype=np.int64)
    supply[[5, 17, 1_000, 90_000]] = 10
    supply[[300, 70_000]] = -10
    supply[[n - 1, n - 50]] = -10
    status, expected, _ = ortools_solve(n, tail, head, capacity, cost, supply)
    r = min_cost_flow(n, tail, head, capacity, cost, supply, method="auto")
    assert (r.status, r.total_cost) == (status, expected) == (MinCostFlowStatus.OPTIMAL, expected)
    _check_large_flow(n, tail, head, capacity, cost, supply, r)


@pytest.mark.parametrize("tail_arcs", [0, 300])
def test_auto_two_terminals_on_2_16_nodes_matches_lemon(tail_arcs):
    # One source and one sink on 2^16 nodes with random arcs (every node a few arcs from the
    # source): auto runs cost scaling. With the sink at the end of a path of 300 arcs the
    # breadth-first search passes sqrt(n) / 2 = 128 arcs and the simplex solves it, without
    # the primal-dual phases. Same answer as LEMON either way (OR-Tools' cost scaling takes
    # 10-17 s on the long path).
    pylmcf = pytest.importorskip("pylmcf")
    n = 2**16
    rng = np.random.default_rng(11)
    body = n - tail_arcs
    tail = rng.integers(0, body, size=8 * body).astype(np.int32)
    head = rng.integers(0, body, size=8 * body).astype(np.int32)
    path = np.arange(body - 1, n, dtype=np.int32)
    tail = np.concatenate((tail, path[:-1], path[1:]))
    head = np.concatenate((head, path[1:], path[:-1]))
    capacity = rng.integers(1, 1_000, size=tail.size).astype(np.int64)
    capacity[8 * body :] = 5_000
    cost = rng.integers(1, 10_000, size=tail.size).astype(np.int64)
    supply = np.zeros(n, dtype=np.int64)
    supply[0], supply[n - 1] = 1_000, -1_000
    order = np.lexsort((head, tail))  # LEMON wants the arcs sorted by (tail, head)
    lemon = pylmcf.Graph(n, tail[order], head[order])
    lemon.set_node_supply(supply)
    lemon.set_edge_capacities(capacity[order])
    lemon.set_edge_costs(cost[order])
    lemon.solve()
    r = min_cost_flow(n, tail, head, capacity, cost, supply, method="auto")
    assert r.status == MinCostFlowStatus.OPTIMAL and r.total_cost == int(lemon.total_cost())
    _check_large_flow(n, tail, head, capacity, cost, supply, r)


def test_auto_picks_ssp_for_unit_costs_and_simplex_otherwise():
    # Same answers either way; this pins only that both paths run through "auto".
    n, tail, head = 3, [0, 0, 1], [2, 1, 2]
    for cost in ([1, 0, 0], [3, 1, 1]):
        a = min_cost_flow(n, tail, head, [1, 5, 5], cost, [2, 0, -2], method="auto")
        assert a.status == MinCostFlowStatus.OPTIMAL


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("net", "expected"),
    [
        ((2, [0], [1], [5], [1], [3, -2]), MinCostFlowStatus.UNBALANCED),
        ((2, [0], [1], [4], [2**62], [4, -4]), MinCostFlowStatus.OVERFLOW),  # total cost
        ((4, [0, 1], [2, 3], [2**62] * 2, [1, 1], [2**62, 2**62, -(2**62), -(2**62)]), None),
        ((3, [0, 1], [1, 2], [1, 1], [2**60, 1], [0, 0, 0]), MinCostFlowStatus.OVERFLOW),
    ],
    ids=["unbalanced", "cost-bound", "supply-sum", "potentials"],
)
def test_methods_share_the_opening_checks(method, net, expected):
    # All methods open alike (validation, supply balance, int64 bounds): same status, no flow.
    r = min_cost_flow(*net, method=method)
    assert r.status == (expected or MinCostFlowStatus.OVERFLOW)
    assert r.flow.tolist() == [0] * len(net[1]) and r.total_cost == 0 and r.flow_value == 0


def test_network_simplex_overflow_of_its_own_bound_falls_back_in_auto():
    # Capacities near 2^62 fit the primal-dual method's bounds but not the simplex's (twice the
    # flow an artificial arc may carry): network_simplex reports OVERFLOW, auto solves it.
    # Here 2^60 of supply plus three arcs that could each carry it: 2^62, doubled past int64.
    net = (3, [0, 1, 0], [1, 2, 2], [2**61] * 3, [1, 1, 3], [2**60, 0, -(2**60)])
    assert min_cost_flow(*net, method="network_simplex").status == MinCostFlowStatus.OVERFLOW
    r = min_cost_flow(*net, method="auto")
    assert r.status == MinCostFlowStatus.OPTIMAL and r.total_cost == 2**61
    assert r.flow.tolist() == [2**60, 2**60, 0]


def test_unknown_method_is_value_error():
    with pytest.raises(ValueError, match="method = 'simplex'"):
        min_cost_flow(0, [], [], [], [], [], method="simplex")


def test_network_simplex_validates_like_ssp():
    with pytest.raises(ValueError, match=r"cost\[1\] = -1"):
        min_cost_flow(2, [0, 1], [1, 0], [1, 1], [0, -1], [0, 0], method="network_simplex")
    with pytest.raises(IndexError, match=r"head\[0\] = 5"):
        min_cost_flow(2, [0], [5], [1], [0], [0, 0], method="network_simplex")


def test_network_simplex_is_deterministic():
    inst = generate("netgen-8", 512, seed=1)
    a = min_cost_flow(*inst.arrays(), method="network_simplex")
    b = min_cost_flow(*inst.arrays(), method="network_simplex")
    assert np.array_equal(a.flow, b.flow) and a.total_cost == b.total_cost
