"""spare_fast.graph.hopcroft_karp and max_b_matching against scipy, networkx and brute force."""

from __future__ import annotations

import doctest

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

import spare_fast.graph
from spare_fast.graph import hopcroft_karp, max_b_matching
from spare_fast.testing.bench_graph import MATCHING_FAMILIES, matching_instance
from spare_fast.testing.graph_instances import (
    expand_capacity,
    minimal_depth,
    random_bipartite,
    spare_bipartite,
)

N_RANDOM = 600  # instances per kernel (at least 500 random instances per kernel)


def random_csr(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """A small random bipartite graph; duplicates and isolated vertices are common."""
    n_left = int(rng.integers(0, 25))
    n_right = int(rng.integers(0, 25))
    n_edges = 0 if n_right == 0 or n_left == 0 else int(rng.integers(0, 3 * max(n_left, n_right)))
    rows = np.sort(rng.integers(0, max(n_left, 1), size=n_edges))
    cols = rng.integers(0, max(n_right, 1), size=n_edges).astype(np.int32)
    indptr = np.zeros(n_left + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n_left), out=indptr[1:])
    return indptr, cols, n_right


def scipy_size(indptr: np.ndarray, indices: np.ndarray, n_right: int) -> int:
    """Matching size by scipy, on a canonical copy (duplicates summed: scipy gh-26160)."""
    n_left = indptr.size - 1
    if n_left == 0 or n_right == 0:
        return 0
    a = sp.csr_matrix(
        (np.ones(indices.size), indices, indptr), shape=(n_left, n_right), dtype=np.float64
    ).copy()
    a.sum_duplicates()
    return int(np.count_nonzero(maximum_bipartite_matching(a, perm_type="column") >= 0))


def check_valid(indptr: np.ndarray, indices: np.ndarray, mate: np.ndarray, capacity) -> int:
    """Asserts every assignment is an edge within capacity; returns the matching size."""
    assert mate.dtype == np.int32 and mate.shape == (indptr.size - 1,)
    assert np.all(mate >= -1)
    for u in np.flatnonzero(mate >= 0):
        assert mate[u] in indices[indptr[u] : indptr[u + 1]]
    load = np.bincount(mate[mate >= 0], minlength=len(capacity))
    assert np.all(load <= np.asarray(capacity))
    return int(np.count_nonzero(mate >= 0))


def networkx_b_size(indptr: np.ndarray, indices: np.ndarray, capacity: np.ndarray) -> int:
    """Maximum b-matching size as a max flow: s -> left (1) -> right (1) -> t (capacity)."""
    g = nx.DiGraph()
    g.add_node("s")
    g.add_node("t")
    for u in range(indptr.size - 1):
        g.add_edge("s", ("L", u), capacity=1)
        for j in indices[indptr[u] : indptr[u + 1]].tolist():
            g.add_edge(("L", u), ("R", j), capacity=1)
    for j, c in enumerate(capacity.tolist()):
        g.add_edge(("R", j), "t", capacity=c)
    return int(nx.maximum_flow_value(g, "s", "t"))


# -- hopcroft_karp ------------------------------------------------------------------------------


def test_hopcroft_karp_random_instances_match_scipy_size():
    rng = np.random.default_rng(20260101)
    for _ in range(N_RANDOM):
        indptr, indices, n_right = random_csr(rng)
        mate = hopcroft_karp(indptr, indices, n_right)
        assert check_valid(indptr, indices, mate, np.ones(n_right)) == scipy_size(
            indptr, indices, n_right
        )


def test_hopcroft_karp_medium_random_graphs_match_scipy_size():
    # Large enough that greedy leaves work for several Hopcroft-Karp phases.
    rng = np.random.default_rng(17)
    for n_left, n_right, n_edges in ((400, 300, 900), (300, 400, 700), (1000, 1000, 2000)):
        indptr, indices = random_bipartite(n_left, n_right, n_edges, seed=int(rng.integers(99)))
        mate = hopcroft_karp(indptr, indices, n_right)
        size = check_valid(indptr, indices, mate, np.ones(n_right))
        assert size == scipy_size(indptr, indices, n_right)


def test_max_b_matching_medium_random_graphs_match_scipy_on_expanded_graph():
    rng = np.random.default_rng(18)
    for n_left, n_right, n_edges in ((600, 200, 1200), (1000, 500, 1800)):
        indptr, indices = random_bipartite(n_left, n_right, n_edges, seed=int(rng.integers(99)))
        capacity = rng.integers(0, 4, size=n_right)
        e_indptr, e_indices, _, n_slots = expand_capacity(indptr, indices, capacity)
        mate = max_b_matching(indptr, indices, capacity)
        assert check_valid(indptr, indices, mate, capacity) == scipy_size(
            e_indptr, e_indices, n_slots
        )


def test_max_b_matching_high_degree_rows_on_sparse_graph():
    # Sparse enough that first fit leaves many free vertices (the pressure-greedy start runs),
    # with rows of 300+ entries (more than its degree buckets tell apart).
    rng = np.random.default_rng(19)
    indptr, indices = random_bipartite(3000, 1000, 4000, seed=5)
    heavy = rng.integers(0, 1000, size=(3, 300)).astype(np.int32)
    indices = np.concatenate([indices, heavy.ravel()])
    indptr = np.concatenate([indptr, indptr[-1] + 300 * np.arange(1, 4, dtype=np.int32)])
    capacity = rng.integers(0, 3, size=1000)
    e_indptr, e_indices, _, n_slots = expand_capacity(indptr, indices, capacity)
    mate = max_b_matching(indptr, indices, capacity)
    assert check_valid(indptr, indices, mate, capacity) == scipy_size(e_indptr, e_indices, n_slots)


def test_hopcroft_karp_spare_instance_matches_scipy():
    g = spare_bipartite(2000, 8, failed_fraction=0.3, seed=5, layout="random")
    mate = hopcroft_karp(g.indptr, g.indices, g.n_alive)
    ref = maximum_bipartite_matching(g.to_scipy(), perm_type="column")
    assert check_valid(g.indptr, g.indices, mate, np.ones(g.n_alive)) == np.count_nonzero(ref >= 0)


def test_hopcroft_karp_empty_graph():
    assert hopcroft_karp([0], [], 0).shape == (0,)
    assert hopcroft_karp(np.array([0]), np.array([], dtype=np.int32), 7).dtype == np.int32


def test_hopcroft_karp_no_edges_all_unmatched():
    assert hopcroft_karp([0, 0, 0, 0], [], 3).tolist() == [-1, -1, -1]


def test_hopcroft_karp_isolated_vertices_stay_unmatched():
    mate = hopcroft_karp([0, 0, 1, 1, 2], [2, 0], 4)
    assert mate.tolist() == [-1, 2, -1, 0]


def test_hopcroft_karp_many_duplicates_in_one_row():
    # scipy gh-26160: duplicate entries overflowed a degree-sized stack.
    indptr = np.array([0, 200_000, 200_001, 200_003], dtype=np.int32)
    indices = np.zeros(200_003, dtype=np.int32)
    indices[-1] = 1
    mate = hopcroft_karp(indptr, indices, 2)
    assert check_valid(indptr, indices, mate, [1, 1]) == 2


def test_hopcroft_karp_rectangular_both_ways():
    # 3 x 5 and 5 x 3 complete graphs: the smaller side is saturated.
    for n_left, n_right in ((3, 5), (5, 3)):
        indptr = np.arange(n_left + 1, dtype=np.int32) * n_right
        indices = np.tile(np.arange(n_right, dtype=np.int32), n_left)
        mate = hopcroft_karp(indptr, indices, n_right)
        assert check_valid(indptr, indices, mate, np.ones(n_right)) == min(n_left, n_right)


def test_hopcroft_karp_needs_long_augmenting_path():
    # Greedy takes the "wrong" edge at every step; only one long path fixes it all.
    n = 50
    rows = [[i, i + 1] if i + 1 < n else [i] for i in range(n)]
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int32)
    indices = np.array([j for r in rows for j in r], dtype=np.int32)
    mate = hopcroft_karp(indptr, indices, n)
    assert check_valid(indptr, indices, mate, np.ones(n)) == n


@pytest.mark.parametrize("family", MATCHING_FAMILIES)
def test_hopcroft_karp_hard_families_match_scipy(family):
    # The benchmark's hard families (sparse random near the threshold, long-path chains,
    # unbalanced sides) at sizes that take each start and search strategy.
    for n, seed in ((300, 0), (3_000, 1), (20_000, 2)):
        indptr, indices, n_right = matching_instance(family, n, seed)
        mate = hopcroft_karp(indptr, indices, n_right)
        size = check_valid(indptr, indices, mate, np.ones(n_right))
        assert size == scipy_size(indptr, indices, n_right)


def test_hopcroft_karp_sparse_random_graphs_after_karp_sipser_start():
    # Random sparse graphs (Poisson degrees 1.5 to 5, some duplicate entries) start with
    # Karp-Sipser; the free vertices left either have no augmenting path (dropped) or are
    # matched by single searches: many shapes, matchings from perfect to far from it.
    rng = np.random.default_rng(15)
    for trial in range(60):
        n_left = int(rng.integers(500, 4_000))
        n_right = int(n_left * rng.uniform(0.7, 1.3))
        deg = rng.poisson(rng.uniform(1.5, 5.0), size=n_left)
        rows = np.repeat(np.arange(n_left), deg)
        cols = rng.integers(0, n_right, size=rows.size)
        dup = rng.random(rows.size) < 0.05
        rows = np.concatenate((rows, rows[dup]))
        cols = np.concatenate((cols, cols[dup]))
        order = np.argsort(rows, kind="stable")
        indptr = np.zeros(n_left + 1, dtype=np.int32)
        np.cumsum(np.bincount(rows, minlength=n_left), out=indptr[1:])
        indices = cols[order].astype(np.int32)
        mate = hopcroft_karp(indptr, indices, n_right)
        size = check_valid(indptr, indices, mate, np.ones(n_right))
        assert size == scipy_size(indptr, indices, n_right), trial
        assert np.unique(mate[mate >= 0]).size == size


def test_hopcroft_karp_karp_sipser_with_high_degree_vertices():
    # A sparse graph (the Karp-Sipser start runs) with a right vertex in 300 rows and, last,
    # three left rows of 300 entries: degrees past the start's one-byte counters. The last
    # row's neighbours are 40 right vertices that 40 degree-1 rows take first.
    rng = np.random.default_rng(21)
    n_right = 3040
    indptr, indices = random_bipartite(3000, 3000, 4000, seed=6)
    indices = indices + 40
    indices[rng.choice(indices.size, size=300, replace=False)] = 47
    heavy = np.concatenate([rng.integers(40, n_right, size=600), np.arange(300) % 40])
    indices = np.concatenate([indices, np.arange(40), heavy]).astype(np.int32)
    tail = np.concatenate([np.arange(1, 41), 40 + 300 * np.arange(1, 4)]).astype(np.int32)
    indptr = np.concatenate([indptr, indptr[-1] + tail])
    mate = hopcroft_karp(indptr, indices, n_right)
    size = check_valid(indptr, indices, mate, np.ones(n_right))
    assert size == scipy_size(indptr, indices, n_right)


@pytest.mark.parametrize("family", ["match-random-d3", "match-random-d4"])
def test_hopcroft_karp_large_sparse_random_graphs_match_scipy(family):
    # A quarter-million vertices: the Karp-Sipser start, the pass that drops dead free
    # vertices and the single searches at the scale they were tuned for.
    indptr, indices, n_right = matching_instance(family, 1 << 18, 3)
    mate = hopcroft_karp(indptr, indices, n_right)
    size = check_valid(indptr, indices, mate, np.ones(n_right))
    assert size == scipy_size(indptr, indices, n_right)


def test_hopcroft_karp_single_searches_past_their_budget_hand_over_to_phases():
    # First fit leaves k = 10 left vertices free (few: single searches run). Each search from
    # f_i first descends a matched chain of length M that leads nowhere, then finds its
    # augmenting path f_i - h_i - x_i - g_i; k searches of ~4M scans exceed the budget of
    # 2 (V + E), and the Hopcroft-Karp phases must finish the rest.
    m_chain, k = 2_000, 10
    rows: list[list[int]] = []
    rows += [[j, j + 1] if j + 1 < m_chain else [j] for j in range(m_chain)]  # t_j: s_j, s_j+1
    h0, g0 = m_chain, m_chain + k
    rows += [[h0 + i, g0 + i] for i in range(k)]  # x_i: h_i first, then its free g_i
    rows += [[0, h0 + i] for i in range(k)]  # f_i: the chain's entrance s_0, then h_i
    n_right = m_chain + 2 * k
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int32)
    indices = np.array([j for r in rows for j in r], dtype=np.int32)
    mate = hopcroft_karp(indptr, indices, n_right)
    size = check_valid(indptr, indices, mate, np.ones(n_right))
    assert size == m_chain + 2 * k == scipy_size(indptr, indices, n_right)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "csr_array"])
def test_hopcroft_karp_accepts_scipy_sparse(fmt):
    rng = np.random.default_rng(7)
    a = sp.random(30, 20, density=0.1, format="csr", random_state=rng)
    a.data[:] = 1.0
    ref = maximum_bipartite_matching(a, perm_type="column")
    b = sp.csr_array(a) if fmt == "csr_array" else a.asformat(fmt)
    mate = hopcroft_karp(b)
    assert check_valid(a.indptr, a.indices, mate, np.ones(20)) == np.count_nonzero(ref >= 0)


def test_hopcroft_karp_sparse_with_extra_arguments_is_type_error():
    with pytest.raises(TypeError, match="either"):
        hopcroft_karp(sp.eye(3, format="csr"), [0], 3)


def test_hopcroft_karp_result_is_deterministic():
    g = spare_bipartite(500, 6, failed_fraction=0.4, seed=3, layout="random")
    first = hopcroft_karp(g.indptr, g.indices, g.n_alive)
    assert np.array_equal(first, hopcroft_karp(g.indptr, g.indices, g.n_alive))


def test_hopcroft_karp_does_not_copy_or_modify_input():
    indptr = np.array([0, 1, 2], dtype=np.int32)
    indices = np.array([1, 0], dtype=np.int32)
    indptr.setflags(write=False)
    indices.setflags(write=False)
    assert hopcroft_karp(indptr, indices, 2).tolist() == [1, 0]
    assert indices.tolist() == [1, 0]


@settings(max_examples=150, deadline=None)
@given(
    n_right=st.integers(0, 12),
    rows=st.lists(st.lists(st.integers(0, 11), max_size=6), max_size=12),
)
def test_hopcroft_karp_property_valid_and_maximum(n_right, rows):
    rows = [[j for j in r if j < n_right] for r in rows]
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int32)
    indices = np.array([j for r in rows for j in r], dtype=np.int32)
    mate = hopcroft_karp(indptr, indices, n_right)
    size = check_valid(indptr, indices, mate, np.ones(n_right))
    assert size == scipy_size(indptr, indices, n_right)
    # Reversing the row order relabels the left side: the size is unchanged.
    rev = rows[::-1]
    indptr_r = np.cumsum([0] + [len(r) for r in rev]).astype(np.int32)
    indices_r = np.array([j for r in rev for j in r], dtype=np.int32)
    assert np.count_nonzero(hopcroft_karp(indptr_r, indices_r, n_right) >= 0) == size


# -- max_b_matching -----------------------------------------------------------------------------


def test_max_b_matching_random_instances_match_networkx_max_flow():
    rng = np.random.default_rng(20260102)
    for _ in range(N_RANDOM):
        indptr, indices, n_right = random_csr(rng)
        capacity = rng.integers(0, 4, size=n_right)
        mate = max_b_matching(indptr, indices, capacity)
        size = check_valid(indptr, indices, mate, capacity)
        assert size == networkx_b_size(indptr, indices, capacity)


def test_max_b_matching_random_instances_match_scipy_on_expanded_graph():
    rng = np.random.default_rng(20260103)
    for _ in range(200):
        indptr, indices, n_right = random_csr(rng)
        capacity = rng.integers(0, 5, size=n_right)
        e_indptr, e_indices, _, n_slots = expand_capacity(indptr, indices, capacity)
        mate = max_b_matching(indptr, indices, capacity)
        assert check_valid(indptr, indices, mate, capacity) == scipy_size(
            e_indptr, e_indices, n_slots
        )


def check_valid_vectorised(indptr, indices, mate, capacity) -> int:
    """check_valid without a Python loop over the rows (for graphs of thousands of rows)."""
    assert mate.dtype == np.int32 and mate.shape == (indptr.size - 1,)
    assert np.all(mate >= -1)
    row_of = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    hit = np.bincount(row_of[indices == mate[row_of]], minlength=indptr.size - 1)
    assert np.all(hit[mate >= 0] > 0)  # every assignment is one of the row's entries
    load = np.bincount(mate[mate >= 0], minlength=len(capacity))
    assert np.all(load <= np.asarray(capacity))
    return int(np.count_nonzero(mate >= 0))


def sorted_rows_csr(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """A random graph of a few hundred to 1,200 left vertices whose rows list their columns in
    increasing order, as SPARe rows do (several of first fit's blocks of rows, empty rows and
    rows of one entry among them)."""
    n_left = int(rng.integers(200, 1200))
    n_right = int(rng.integers(1, 400))
    deg = rng.integers(0, 9, size=n_left)
    deg[rng.random(n_left) < 0.1] = 1
    row_of = np.repeat(np.arange(n_left), deg)
    cols = rng.integers(0, n_right, size=row_of.size)
    cols = cols[np.lexsort((cols, row_of))].astype(np.int32)
    indptr = np.zeros(n_left + 1, dtype=np.int32)
    np.cumsum(deg, out=indptr[1:])
    return indptr, cols, n_right


def test_max_b_matching_multi_block_sorted_rows_match_scipy_on_expanded_graph():
    # Capacities around the load so that first fit leaves some vertices free (the slot
    # layout and the searches run) on many of them, and none on others.
    rng = np.random.default_rng(20261203)
    free_after = 0
    for _ in range(300):
        indptr, indices, n_right = sorted_rows_csr(rng)
        capacity = rng.integers(0, 4, size=n_right)
        e_indptr, e_indices, _, n_slots = expand_capacity(indptr, indices, capacity)
        mate = max_b_matching(indptr, indices, capacity)
        size = check_valid_vectorised(indptr, indices, mate, capacity)
        assert size == scipy_size(e_indptr, e_indices, n_slots)
        free_after += size < min(int(np.count_nonzero(np.diff(indptr))), int(capacity.sum()))
    assert free_after > 0  # some instances are not perfect: the searches had work to do


@pytest.mark.parametrize("layout", ["random", "cyclic", "sidon"])
def test_max_b_matching_spare_layouts_match_scipy_on_expanded_graph(layout):
    for seed in range(6):
        g = spare_bipartite(1500 + 500 * seed, 8, failed_fraction=0.3, seed=seed, layout=layout)
        depth = minimal_depth(g)
        for d in {depth, max(depth - 1, 1)}:
            cap = np.full(g.n_alive, d)
            e_indptr, e_indices, _, n_slots = expand_capacity(g.indptr, g.indices, cap)
            mate = max_b_matching(g.indptr, g.indices, cap)
            assert check_valid_vectorised(g.indptr, g.indices, mate, cap) == scipy_size(
                e_indptr, e_indices, n_slots
            )


def test_max_b_matching_does_not_modify_input():
    rng = np.random.default_rng(5)
    indptr, indices, n_right = sorted_rows_csr(rng)
    capacity = np.full(n_right, 2, dtype=np.int64)
    for a in (indptr, indices, capacity):
        a.setflags(write=False)
    inputs = (indptr, indices, capacity)
    before = tuple(a.copy() for a in inputs)
    first = max_b_matching(indptr, indices, capacity)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, before, strict=True))
    assert np.array_equal(first, max_b_matching(indptr.copy(), indices.copy(), capacity.copy()))


def test_max_b_matching_input_past_the_in_place_limit_is_copied_and_solved():
    # More than 2^22 entries: the binding copies the input and releases the GIL. Row u lists
    # u mod 1024 four times and 1024 + u mod 1024 once, capacity 2048 each: all assigned.
    n_left = (1 << 20) + 1
    u = np.arange(n_left, dtype=np.int32)
    indices = np.repeat(u % 1024, 5)
    indices[4::5] += 1024
    indptr = np.arange(0, 5 * n_left + 1, 5, dtype=np.int32)
    capacity = np.full(2048, 2048, dtype=np.int64)
    mate = max_b_matching(indptr, indices, capacity)
    assert indices.size > 1 << 22
    assert np.all((mate == u % 1024) | (mate == 1024 + u % 1024))
    assert np.all(np.bincount(mate, minlength=2048) <= 2048)
    assert np.count_nonzero(mate >= 0) == min(n_left, 2048 * 2048)


def test_max_b_matching_spare_instance_is_perfect_at_minimal_depth():
    g = spare_bipartite(3000, 10, failed_fraction=0.3, seed=11)
    depth = minimal_depth(g)
    cap = np.full(g.n_alive, depth)
    assert check_valid(g.indptr, g.indices, max_b_matching(g.indptr, g.indices, cap), cap) == 3000
    if depth > 1:
        low = np.full(g.n_alive, depth - 1)
        assert np.count_nonzero(max_b_matching(g.indptr, g.indices, low) >= 0) < 3000


def test_max_b_matching_unit_capacity_equals_matching():
    rng = np.random.default_rng(9)
    for _ in range(50):
        indptr, indices, n_right = random_csr(rng)
        ones = np.ones(n_right, dtype=np.int64)
        assert np.count_nonzero(max_b_matching(indptr, indices, ones) >= 0) == np.count_nonzero(
            hopcroft_karp(indptr, indices, n_right) >= 0
        )


def test_max_b_matching_empty_graph():
    assert max_b_matching([0], [], []).shape == (0,)


def test_max_b_matching_no_edges():
    assert max_b_matching([0, 0, 0], [], [3, 3]).tolist() == [-1, -1]


def test_max_b_matching_zero_capacity_takes_nothing():
    assert max_b_matching([0, 1, 2], [0, 0], [0]).tolist() == [-1, -1]


def test_max_b_matching_huge_capacity_is_not_expanded():
    # Expanding 2**62 slots would never finish; capacity-aware augmentation does not care.
    indptr = np.arange(1001, dtype=np.int32)
    indices = np.zeros(1000, dtype=np.int32)
    mate = max_b_matching(indptr, indices, np.array([2**62], dtype=np.int64))
    assert np.all(mate == 0)


def test_max_b_matching_duplicates_do_not_double_assign():
    indptr = np.array([0, 4, 5], dtype=np.int32)
    indices = np.array([0, 0, 0, 0, 0], dtype=np.int32)
    assert max_b_matching(indptr, indices, [1]).tolist().count(0) == 1


def test_max_b_matching_n_left_larger_than_total_capacity():
    indptr = np.arange(11, dtype=np.int32) * 2
    indices = np.tile(np.array([0, 1], dtype=np.int32), 10)
    mate = max_b_matching(indptr, indices, [3, 4])
    assert check_valid(indptr, indices, mate, [3, 4]) == 7


@settings(max_examples=150, deadline=None)
@given(
    capacity=st.lists(st.integers(0, 4), max_size=8),
    rows=st.lists(st.lists(st.integers(0, 7), max_size=5), max_size=14),
)
def test_max_b_matching_property_valid_and_maximum(capacity, rows):
    n_right = len(capacity)
    rows = [[j for j in r if j < n_right] for r in rows]
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int32)
    indices = np.array([j for r in rows for j in r], dtype=np.int32)
    cap = np.array(capacity, dtype=np.int64)
    mate = max_b_matching(indptr, indices, cap)
    size = check_valid(indptr, indices, mate, cap)
    assert size == networkx_b_size(indptr, indices, cap)
    # More capacity never hurts: +1 everywhere gives at least as large a matching.
    assert np.count_nonzero(max_b_matching(indptr, indices, cap + 1) >= 0) >= size


# -- malformed input ----------------------------------------------------------------------------

MATCHERS = [
    pytest.param(lambda p, i, n: hopcroft_karp(p, i, n), id="hopcroft_karp"),
    pytest.param(lambda p, i, n: max_b_matching(p, i, np.ones(n, np.int64)), id="max_b_matching"),
]
# Capacities 2: the b-matching's own first fit (all-ones capacities go to hopcroft_karp).
MATCHERS_B2 = [
    pytest.param(lambda p, i, n: max_b_matching(p, i, np.full(n, 2, np.int64)), id="b-cap2"),
]


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_indptr_not_starting_at_zero(solve):
    with pytest.raises(ValueError, match=r"indptr\[0\] = 1 must be 0"):
        solve([1, 2], [0, 1], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_indptr_decreasing(solve):
    with pytest.raises(ValueError, match=r"indptr\[2\] = 1 is smaller than indptr\[1\] = 2"):
        solve([0, 2, 1, 2], [0, 1], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_indptr_end_does_not_match_indices(solve):
    with pytest.raises(ValueError, match=r"indptr\[1\] = 3 does not match len\(indices\) = 2"):
        solve([0, 3], [0, 1], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_empty_indptr(solve):
    with pytest.raises(ValueError, match="indptr is empty"):
        solve([], [], 2)


@pytest.mark.parametrize("solve", MATCHERS + MATCHERS_B2)
@pytest.mark.parametrize("bad", [7, -1, 2**31 - 1])
def test_malformed_index_in_a_later_block_of_rows_names_its_position(solve, bad):
    # first fit checks the entries a block of rows at a time; a bad entry far from the start
    # is still named with its own position, and nothing is returned.
    indptr = np.arange(0, 2 * 1000 + 1, 2, dtype=np.int32)
    indices = np.tile(np.array([0, 1], dtype=np.int32), 1000)
    indices[1377] = bad
    with pytest.raises(IndexError, match=rf"indices\[1377\] = {bad} is not in \[0, 2\)"):
        solve(indptr, indices, 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_index_out_of_range(solve):
    with pytest.raises(IndexError, match=r"indices\[1\] = 5 is not in \[0, 2\)"):
        solve([0, 2], [0, 5], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_negative_index(solve):
    with pytest.raises(IndexError, match=r"indices\[0\] = -1 is not in \[0, 2\)"):
        solve([0, 2], [-1, 0], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_index_overflows_int32(solve):
    with pytest.raises(ValueError, match=r"indices\[1\] = 4294967296 does not fit int32"):
        solve([0, 2], np.array([0, 2**32], dtype=np.int64), 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_indptr_overflows_int32(solve):
    with pytest.raises(ValueError, match=r"indptr\[1\] = 3000000000 does not fit int32"):
        solve(np.array([0, 3_000_000_000], dtype=np.int64), [0], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_float_indices_are_type_error(solve):
    with pytest.raises(TypeError, match="indices must hold integers, got dtype float64"):
        solve([0, 1], [0.5], 2)


@pytest.mark.parametrize("solve", MATCHERS)
def test_malformed_two_dimensional_indices(solve):
    with pytest.raises(ValueError, match=r"indices must be 1-D, got shape \(1, 2\)"):
        solve([0, 2], [[0, 1]], 2)


def test_malformed_n_right_negative():
    with pytest.raises(ValueError, match="n_right = -1"):
        hopcroft_karp([0], [], -1)


def test_malformed_n_right_too_large():
    with pytest.raises(ValueError, match="n_right = 4294967296"):
        hopcroft_karp([0], [], 2**32)


def test_malformed_n_right_not_an_int():
    with pytest.raises(TypeError, match=r"n_right = 2\.5 must be an int"):
        hopcroft_karp([0], [], 2.5)


def test_malformed_missing_indices_is_type_error():
    with pytest.raises(TypeError, match="needs"):
        hopcroft_karp([0, 1])


def test_malformed_none_array_is_type_error():
    with pytest.raises(TypeError, match="indices must be an array of integers, got None"):
        max_b_matching([0], None, [])


def test_malformed_negative_capacity_names_position():
    with pytest.raises(ValueError, match=r"capacity\[1\] = -3 must be >= 0"):
        max_b_matching([0, 1], [0], [1, -3])


def test_malformed_capacity_overflows_int64():
    with pytest.raises(ValueError, match=r"capacity\[0\] = 18446744073709551615 does not fit"):
        max_b_matching([0, 1], [0], np.array([2**64 - 1], dtype=np.uint64))


def test_malformed_indices_out_of_capacity_range():
    with pytest.raises(IndexError, match=r"indices\[0\] = 1 is not in \[0, 1\)"):
        max_b_matching([0, 1], [1], [1])


def test_core_rejects_unsafe_dtype_without_python_layer():
    from spare_fast import _core

    with pytest.raises(TypeError):
        _core._hopcroft_karp(np.array([0.0, 1.0]), np.array([0], dtype=np.int32), 1)


def test_docstring_examples_run():
    result = doctest.testmod(spare_fast.graph)
    assert result.attempted > 0 and result.failed == 0
