"""spare_fast.graph.min_cost_flow against OR-Tools' SimpleMinCostFlow."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.graph.python import min_cost_flow as ortools_mcf

from spare_fast.graph import MinCostFlowResult, MinCostFlowStatus, min_cost_flow
from spare_fast.testing.graph_instances import minimal_depth, move_network, spare_bipartite

N_RANDOM = 600  # at least 500 random instances against the peer

ORTOOLS_STATUS = {
    ortools_mcf.SimpleMinCostFlow.OPTIMAL: MinCostFlowStatus.OPTIMAL,
    ortools_mcf.SimpleMinCostFlow.INFEASIBLE: MinCostFlowStatus.INFEASIBLE,
    ortools_mcf.SimpleMinCostFlow.UNBALANCED: MinCostFlowStatus.UNBALANCED,
}


def ortools_solve(n, tail, head, capacity, cost, supply, max_flow=False):
    """(status, cost, flow value) by OR-Tools on the same arrays."""
    s = ortools_mcf.SimpleMinCostFlow()
    if len(tail):
        s.add_arcs_with_capacity_and_unit_cost(
            np.asarray(tail), np.asarray(head), np.asarray(capacity), np.asarray(cost)
        )
    if n:
        s.set_nodes_supplies(np.arange(n), np.asarray(supply))
    status = s.solve_max_flow_with_min_cost() if max_flow else s.solve()
    return ORTOOLS_STATUS[status], s.optimal_cost(), s.maximum_flow()


def check_feasible(n, tail, head, capacity, cost, supply, r: MinCostFlowResult) -> None:
    """Capacities, conservation (exact if OPTIMAL, within supplies otherwise), the cost."""
    tail, head = np.asarray(tail, np.int64), np.asarray(head, np.int64)
    capacity, cost, supply = (np.asarray(x, np.int64) for x in (capacity, cost, supply))
    assert r.flow.dtype == np.int64 and r.flow.shape == tail.shape
    assert np.all(r.flow >= 0) and np.all(r.flow <= capacity)
    net = np.bincount(tail, weights=r.flow, minlength=n) - np.bincount(
        head, weights=r.flow, minlength=n
    )
    net = net.astype(np.int64)
    if r.status == MinCostFlowStatus.OPTIMAL:
        assert np.array_equal(net, supply)
    else:
        assert np.all(
            np.where(supply >= 0, (net >= 0) & (net <= supply), (net <= 0) & (net >= supply))
        )
    assert r.total_cost == int(np.dot(r.flow, cost))
    assert r.flow_value == int(net[net > 0].sum())


def random_network(rng: np.random.Generator, unbalanced: bool = False):
    n = int(rng.integers(0, 10))
    m = 0 if n == 0 else int(rng.integers(0, 30))
    tail = rng.integers(0, max(n, 1), size=m).astype(np.int32)
    head = rng.integers(0, max(n, 1), size=m).astype(np.int32)
    capacity = rng.integers(0, 6, size=m)
    cost = rng.integers(0, 2, size=m) if rng.random() < 0.5 else rng.integers(0, 20, size=m)
    supply = np.zeros(n, dtype=np.int64)
    for _ in range(int(rng.integers(0, 4)) if n >= 2 else 0):
        u, v = rng.integers(0, n, size=2)
        b = int(rng.integers(1, 6))
        supply[u] += b
        supply[v] -= b
    if unbalanced and n:
        supply[int(rng.integers(0, n))] += int(rng.integers(1, 3))
    return n, tail, head, capacity, cost, supply


def test_random_networks_match_ortools_status_and_cost():
    rng = np.random.default_rng(20260104)
    seen = set()
    for k in range(N_RANDOM):
        net = random_network(rng, unbalanced=k % 10 == 0)
        r = min_cost_flow(*net)
        status, cost, _ = ortools_solve(*net)
        assert r.status == status
        seen.add(status)
        if status == MinCostFlowStatus.OPTIMAL:
            assert r.total_cost == cost
        if status != MinCostFlowStatus.UNBALANCED:
            check_feasible(*net, r)
    assert seen == {
        MinCostFlowStatus.OPTIMAL,
        MinCostFlowStatus.INFEASIBLE,
        MinCostFlowStatus.UNBALANCED,
    }


def test_infeasible_flow_is_min_cost_maximum_flow():
    # OR-Tools' solve_max_flow_with_min_cost is the peer for the INFEASIBLE flow returned.
    rng = np.random.default_rng(20260105)
    checked = 0
    for _ in range(300):
        net = random_network(rng)
        r = min_cost_flow(*net)
        if r.status != MinCostFlowStatus.INFEASIBLE:
            continue
        _, cost, value = ortools_solve(*net, max_flow=True)
        assert (r.flow_value, r.total_cost) == (value, cost)
        checked += 1
    assert checked > 20


def test_spare_move_networks_match_ortools():
    for seed, layout in ((0, "cyclic"), (1, "random"), (2, "cyclic"), (3, "random")):
        g = spare_bipartite(1500, 10, failed_fraction=0.3, seed=seed, layout=layout)
        depth = minimal_depth(g)
        net = move_network(g, depth)
        r = min_cost_flow(*net)
        status, cost, _ = ortools_solve(*net)
        assert (r.status, r.total_cost) == (status, cost) == (MinCostFlowStatus.OPTIMAL, cost)
        check_feasible(*net, r)


def test_spare_move_network_below_minimal_depth_is_infeasible():
    g = spare_bipartite(800, 10, failed_fraction=0.4, seed=4)
    depth = minimal_depth(g)
    net = move_network(g, depth - 1)
    r = min_cost_flow(*net)
    assert r.status == ortools_solve(*net)[0] == MinCostFlowStatus.INFEASIBLE
    check_feasible(*net, r)


def test_larger_random_networks_match_ortools():
    # Deeper Dijkstra phases: several hundred nodes, costs up to 1000, parallel arcs.
    rng = np.random.default_rng(6)
    for _ in range(5):
        n, m = 300, 3000
        tail = rng.integers(0, n, size=m).astype(np.int32)
        head = rng.integers(0, n, size=m).astype(np.int32)
        capacity = rng.integers(1, 20, size=m)
        cost = rng.integers(0, 1000, size=m)
        supply = np.zeros(n, dtype=np.int64)
        src = rng.choice(n, size=40, replace=False)
        supply[src[:20]] = 15
        supply[src[20:]] = -15
        net = (n, tail, head, capacity, cost, supply)
        r = min_cost_flow(*net)
        status, ref, _ = ortools_solve(*net)
        assert r.status == status
        if status == MinCostFlowStatus.OPTIMAL:
            assert r.total_cost == ref
        check_feasible(*net, r)


def test_empty_network_is_optimal():
    r = min_cost_flow(0, [], [], [], [], [])
    assert (r.status, r.total_cost, r.flow_value, r.flow.size) == (
        MinCostFlowStatus.OPTIMAL,
        0,
        0,
        0,
    )


def test_nodes_without_arcs_and_zero_supply_are_optimal():
    r = min_cost_flow(5, [], [], [], [], [0] * 5)
    assert r.status == MinCostFlowStatus.OPTIMAL and r.total_cost == 0


def test_supply_without_arcs_is_infeasible():
    r = min_cost_flow(2, [], [], [], [], [1, -1])
    assert r.status == MinCostFlowStatus.INFEASIBLE and r.flow_value == 0


def test_unbalanced_supplies_solve_nothing():
    r = min_cost_flow(2, [0], [1], [5], [1], [3, -2])
    assert r.status == MinCostFlowStatus.UNBALANCED and r.flow.tolist() == [0]


def test_self_loops_and_parallel_arcs():
    # Cheapest of three parallel arcs first, then the next; the self-loop carries nothing.
    r = min_cost_flow(2, [0, 0, 0, 1], [1, 1, 1, 1], [2, 2, 2, 9], [5, 1, 3, 0], [3, -3])
    assert r.status == MinCostFlowStatus.OPTIMAL
    assert r.flow.tolist() == [0, 2, 1, 0] and r.total_cost == 5


def test_overflow_in_total_cost():
    r = min_cost_flow(2, [0], [1], [4], [2**62], [4, -4])
    assert r.status == MinCostFlowStatus.OVERFLOW and r.flow.tolist() == [0]


def test_overflow_in_supply_sum():
    big = 2**62
    r = min_cost_flow(4, [0, 1], [2, 3], [big, big], [0, 0], [big, big, -big, -big])
    assert r.status == MinCostFlowStatus.OVERFLOW


def test_overflow_in_potentials():
    r = min_cost_flow(3, [0, 1], [1, 2], [1, 1], [2**60, 0], [0, 0, 0])
    assert r.status == MinCostFlowStatus.OVERFLOW


def test_status_enum_is_an_int_enum_with_ortools_like_names():
    assert [s.name for s in MinCostFlowStatus] == [
        "OPTIMAL",
        "INFEASIBLE",
        "UNBALANCED",
        "OVERFLOW",
    ]
    assert MinCostFlowStatus.OPTIMAL == 0


def test_result_is_deterministic():
    g = spare_bipartite(600, 6, failed_fraction=0.3, seed=8, layout="random")
    net = move_network(g, minimal_depth(g))
    assert np.array_equal(min_cost_flow(*net).flow, min_cost_flow(*net).flow)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 7),
    arcs=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 5), st.integers(0, 9)),
        max_size=20,
    ),
    moves=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 5)), max_size=3),
)
def test_property_feasible_and_cost_matches_ortools(n, arcs, moves):
    arcs = [a for a in arcs if a[0] < n and a[1] < n]
    tail = np.array([a[0] for a in arcs], dtype=np.int32)
    head = np.array([a[1] for a in arcs], dtype=np.int32)
    capacity = np.array([a[2] for a in arcs], dtype=np.int64)
    cost = np.array([a[3] for a in arcs], dtype=np.int64)
    supply = np.zeros(n, dtype=np.int64)
    for u, v, b in moves:
        supply[u % n] += b
        supply[v % n] -= b
    net = (n, tail, head, capacity, cost, supply)
    r = min_cost_flow(*net)
    status, ref, _ = ortools_solve(*net)
    assert r.status == status
    check_feasible(*net, r)
    if status == MinCostFlowStatus.OPTIMAL:
        assert r.total_cost == ref
        # Scaling every cost by 3 scales the optimum by 3.
        assert min_cost_flow(n, tail, head, capacity, 3 * cost, supply).total_cost == 3 * ref


# -- malformed input ----------------------------------------------------------------------------

GOOD = dict(n_nodes=3, tail=[0, 1], head=[1, 2], capacity=[1, 1], cost=[0, 1], supply=[1, 0, -1])


def call(**changes):
    return min_cost_flow(**{**GOOD, **changes})


def test_good_reference_call_is_optimal():
    assert call().status == MinCostFlowStatus.OPTIMAL


def test_negative_cost_names_the_arc():
    with pytest.raises(ValueError, match=r"cost\[1\] = -4 on arc 1 \(1 -> 2\) is negative"):
        call(cost=[0, -4])


def test_negative_capacity_names_the_arc():
    with pytest.raises(ValueError, match=r"capacity\[0\] = -1 must be >= 0"):
        call(capacity=[-1, 1])


def test_head_out_of_range():
    with pytest.raises(IndexError, match=r"head\[1\] = 3 is not in \[0, 3\)"):
        call(head=[1, 3])


def test_negative_tail():
    with pytest.raises(IndexError, match=r"tail\[0\] = -1 is not in \[0, 3\)"):
        call(tail=[-1, 1])


@pytest.mark.parametrize("name", ["head", "capacity", "cost"])
def test_arc_array_length_mismatch(name):
    with pytest.raises(ValueError, match=rf"{name} has length 1, expected 2"):
        call(**{name: [1]})


def test_supply_length_mismatch():
    with pytest.raises(ValueError, match="supply has length 3, expected 4"):
        call(n_nodes=4)


def test_negative_n_nodes():
    with pytest.raises(ValueError, match="n_nodes = -1"):
        call(n_nodes=-1)


def test_n_nodes_not_an_int():
    with pytest.raises(TypeError, match=r"n_nodes = '3' must be an int"):
        call(n_nodes="3")


def test_tail_overflows_int32():
    with pytest.raises(ValueError, match=r"tail\[1\] = 2147483648 does not fit int32"):
        call(tail=np.array([0, 2**31], dtype=np.int64))


def test_cost_overflows_int64():
    with pytest.raises(ValueError, match=r"cost\[0\] = 9223372036854775808 does not fit int64"):
        call(cost=np.array([2**63, 0], dtype=np.uint64))


def test_float_capacity_is_type_error():
    with pytest.raises(TypeError, match="capacity must hold integers, got dtype float64"):
        call(capacity=[1.0, 2.5])


def test_two_dimensional_supply():
    with pytest.raises(ValueError, match=r"supply must be 1-D, got shape \(1, 3\)"):
        call(supply=[[1, 0, -1]])


def test_rejected_call_leaves_inputs_unchanged():
    cost = np.array([0, -4], dtype=np.int64)
    with pytest.raises(ValueError):
        call(cost=cost)
    assert cost.tolist() == [0, -4]


def test_concurrent_solves_from_threads_agree():
    # The solve runs without the GIL and keeps no global state: threads may share inputs.
    from concurrent.futures import ThreadPoolExecutor

    g = spare_bipartite(3000, 10, failed_fraction=0.3, seed=12)
    net = move_network(g, minimal_depth(g))
    expected = min_cost_flow(*net)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: min_cost_flow(*net), range(8)))
    for r in results:
        assert r.total_cost == expected.total_cost
        assert np.array_equal(r.flow, expected.flow)
