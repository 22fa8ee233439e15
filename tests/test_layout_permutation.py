"""Layout.random's compiled permutations: numpy's bit for bit, and the same layouts as before."""

from __future__ import annotations

import numpy as np
import pytest

from spare_fast import Layout, _core
from spare_fast.layout._layout import _matched_layer, _permutation


def _reference_random(n: int, r: int, seed: int) -> np.ndarray:
    """Layout.random as written with numpy's own permutations (the construction it must equal)."""
    rng = np.random.default_rng(seed)
    stacks = np.empty((n, r), dtype=np.int64)
    stacks[:, 0] = np.arange(n)
    for l in range(1, r):
        for _attempt in range(20):
            perm = rng.permutation(n)
            bad = np.flatnonzero((stacks[:, :l] == perm[:, None]).any(axis=1))
            ok = True
            for g in bad.tolist():
                fixed = False
                for h in rng.permutation(n).tolist():
                    if h == g:
                        continue
                    if perm[h] in stacks[g, :l] or perm[g] in stacks[h, :l]:
                        continue
                    perm[g], perm[h] = perm[h], perm[g]
                    fixed = True
                    break
                if not fixed:
                    ok = False
                    break
            if ok and not (stacks[:, :l] == perm[:, None]).any():
                stacks[:, l] = perm
                break
        else:
            stacks[:, l] = _matched_layer(stacks[:, :l], rng)
    return stacks


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 64, 1000, 65_537])
def test_permutation_equals_numpys_and_leaves_the_same_state(n):
    for seed in range(6):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        # An odd number of 32-bit draws first: the buffered half-word must carry over.
        for rng in (ours, theirs):
            rng.integers(0, 7, size=seed, dtype=np.uint32)
        assert np.array_equal(_permutation(ours, n), theirs.permutation(n))
        assert ours.bit_generator.state == theirs.bit_generator.state
        assert ours.random() == theirs.random()


def test_other_bit_generators_go_to_numpy():
    ours, theirs = (np.random.Generator(np.random.MT19937(3)) for _ in range(2))
    assert np.array_equal(_permutation(ours, 500), theirs.permutation(500))


def test_kernel_rejects_a_bad_length():
    with pytest.raises(ValueError, match=r"n = -1 is not in \[0, 2\*\*32\)"):
        _core._pcg64_permutation(0, 1, 0, 1, False, 0, -1)


@pytest.mark.parametrize(
    ("n", "r"), [(1, 1), (5, 5), (6, 3), (10, 9), (40, 39), (300, 8), (2000, 20), (20_000, 6)]
)
def test_random_layout_is_the_numpy_construction(n, r):
    for seed in (0, 1, 7):
        assert np.array_equal(Layout.random(n, r, seed=seed).stacks, _reference_random(n, r, seed))
