"""sidon_offsets: distinct differences mod N checked by brute force, constructions, limits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_fast import Layout
from spare_fast.layout._sidon import (
    _bose_set,
    _ruler_candidates,
    _ruzsa_set,
    _singer_set,
    sidon_offsets,
)


def _distinct_differences(offsets, n: int) -> bool:
    """Brute force: all r(r-1) ordered differences are distinct nonzero residues mod n."""
    diffs = [(a - b) % n for a, b in itertools.permutations(offsets, 2)]
    return 0 not in diffs and len(diffs) == len(set(diffs))


def _check(offsets: np.ndarray, n: int, r: int) -> None:
    assert offsets.dtype == np.int64 and offsets.shape == (r,)
    assert offsets[0] == 0 and (np.diff(offsets) > 0).all() and offsets[-1] < n
    assert _distinct_differences(offsets.tolist(), n)


@pytest.mark.parametrize(("n", "r"), [(600, 20), (381, 20), (566, 20), (1000, 20), (273, 17)])
def test_near_the_bound_for_large_r(n, r):
    # (600, 20) took ~100 s and failed with the old randomised backtracking.
    _check(sidon_offsets(n, r), n, r)


@pytest.mark.parametrize(("n", "r"), [(100_000, 20), (99_991, 17), (20_000, 12), (10_007, 20)])
def test_large_n(n, r):
    _check(sidon_offsets(n, r), n, r)


def test_spread_over_the_ring():
    # Compact rulers are multiplied by a seeded unit of Z_N: the offsets leave the first window.
    offsets = sidon_offsets(1000, 20)
    assert offsets[-1] > 2 * int(_ruler_candidates(20)[0, -1])


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 20), st.integers(0, 3000), st.integers(0, 3))
def test_any_answer_has_distinct_differences(r, extra, seed):
    n = r * (r - 1) + 1 + extra
    try:
        offsets = sidon_offsets(n, r, seed=seed)
    except ValueError as exc:
        # Only allowed below twice the shortest known ruler (where sets may not exist).
        assert n < 2 * int(_ruler_candidates(r)[0, -1]) + 1
        assert "no distinct-difference offsets" in str(exc)
        return
    _check(offsets, n, r)


def test_same_seed_same_answer():
    assert sidon_offsets(450, 19, seed=3).tolist() == sidon_offsets(450, 19, seed=3).tolist()


@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25])
def test_singer_sets_are_perfect_difference_sets(q):
    m, elems = _singer_set(q)
    assert m == q * q + q + 1 and len(elems) == q + 1
    # Perfect: every nonzero residue is a difference exactly once.
    diffs = sorted((a - b) % m for a, b in itertools.permutations(elems, 2))
    assert diffs == list(range(1, m))


@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9, 11, 16, 19, 23, 25])
def test_bose_sets(q):
    m, elems = _bose_set(q)
    assert m == q * q - 1 and len(elems) == q
    assert _distinct_differences(elems, m)


@pytest.mark.parametrize("p", [3, 5, 7, 11, 13, 23, 29])
def test_ruzsa_sets(p):
    m, elems = _ruzsa_set(p)
    assert m == p * (p - 1) and len(elems) == p - 1
    assert _distinct_differences(elems, m)


@pytest.mark.parametrize("r", [5, 10, 14, 20])
def test_ruler_candidates_are_golomb_rulers(r):
    rulers = _ruler_candidates(r)
    assert (rulers[:, 0] == 0).all() and (np.diff(rulers, axis=1) > 0).all()
    assert (np.diff(rulers[:, -1]) >= 0).all()  # shortest first
    for ruler in rulers[:50].tolist():
        diffs = [a - b for a, b in itertools.combinations(ruler, 2)]
        assert len(set(diffs)) == len(diffs)
    # A ruler of length L is Sidon mod every N >= 2L + 1.
    length = int(rulers[0, -1])
    assert _distinct_differences(rulers[0].tolist(), 2 * length + 1)


def test_shortest_rulers_are_near_optimal():
    # Optimal Golomb ruler lengths (OEIS A003022) for 10, 14 and 20 marks are 55, 127, 283.
    assert [int(_ruler_candidates(r)[0, -1]) for r in (10, 14, 20)] == [55, 127, 283]


def test_modulus_dividing_n_is_used():
    # 2 * 273: the Singer set of q = 16 (17 marks mod 273) stays Sidon mod 546, while a window
    # needs N >= 2 * 199 + 1 = 399 for 17 marks: both work, and the answer must be valid.
    _check(sidon_offsets(546, 17), 546, 17)


def test_too_small_names_smallest_valid_n():
    with pytest.raises(ValueError, match=r"smallest valid n_groups is r\(r-1\)\+1 = 381"):
        sidon_offsets(380, 20)


@pytest.mark.parametrize(("n", "r"), [(22, 5), (33, 6)])
def test_proved_nonexistence_agrees_with_enumeration(n, r):
    with pytest.raises(ValueError, match="none exists"):
        sidon_offsets(n, r)
    assert not any(
        _distinct_differences((0, *rest), n) for rest in itertools.combinations(range(1, n), r - 1)
    )


def test_no_set_raises_clear_error_quickly():
    # N = 200, r = 14: no construction fits and the bounded search gives up.
    with pytest.raises(ValueError, match="no distinct-difference offsets found"):
        sidon_offsets(200, 14)


def test_layout_sidon_uses_offsets():
    layout = Layout.sidon(600, 20)
    offsets = sidon_offsets(600, 20)
    g = np.arange(600)[:, None]
    assert np.array_equal(layout.stacks, (g + offsets) % 600)
