"""Monte Carlo of failures survived: exact references, reproducibility, argument checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spare_fast import Layout
from spare_fast import theory as th
from spare_fast.montecarlo import Estimate, endurable_failures


def _survived_distribution(layout: Layout) -> np.ndarray:
    """P(W = w) for w = 0..N-1 over all failure orders (brute force, small N only)."""
    n = layout.n_groups
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    pos = np.empty_like(orders)
    pos[np.arange(len(orders))[:, None], orders] = np.arange(n)
    w = pos[:, layout.holders()].max(axis=2).min(axis=1)
    return np.bincount(w, minlength=n) / len(orders)


def test_returns_estimate_with_samples():
    est = endurable_failures(Layout.cyclic(30, 3), trials=50, seed=3, progress=False)
    assert isinstance(est, Estimate)
    assert est.trials == 50 and est.samples.shape == (50,) and est.samples.dtype == np.int64
    assert est.mean == pytest.approx(est.samples.mean())
    assert est.stderr == pytest.approx(est.samples.std(ddof=1) / np.sqrt(50))


def test_full_redundancy_survives_all_but_the_last_failure():
    est = endurable_failures(Layout.cyclic(9, 9), trials=20, seed=0, progress=False)
    assert est.samples.tolist() == [8] * 20
    assert est.stderr == 0.0


def test_no_redundancy_survives_nothing():
    est = endurable_failures(Layout.random(40, 1, seed=2), trials=20, seed=0, progress=False)
    assert est.samples.tolist() == [0] * 20


def test_same_seed_same_samples_and_prefix_property():
    lay = Layout.sidon(57, 5)
    a = endurable_failures(lay, trials=300, seed=11, progress=False)
    b = endurable_failures(lay, trials=300, seed=11, progress=False)
    head = endurable_failures(lay, trials=40, seed=11, progress=False)
    other = endurable_failures(lay, trials=300, seed=12, progress=False)
    assert np.array_equal(a.samples, b.samples)
    assert np.array_equal(head.samples, a.samples[:40])  # trial t depends only on (seed, t)
    assert not np.array_equal(a.samples, other.samples)


def test_progress_bar_does_not_change_results(capsys):
    lay = Layout.cyclic(100, 4)
    quiet = endurable_failures(lay, trials=30, seed=5, progress=False)
    loud = endurable_failures(lay, trials=30, seed=5, progress=True)
    assert np.array_equal(quiet.samples, loud.samples)
    capsys.readouterr()


@pytest.mark.parametrize(
    "layout",
    [
        Layout.random(7, 3, seed=4),
        Layout.sidon(7, 3),
        Layout.from_stacks([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3]]),
        Layout.replication(8, 2),
    ],
    ids=["random", "sidon", "two-triangles", "replication"],
)
def test_distribution_matches_all_failure_orders(layout):
    # Compare the whole distribution of W with brute force: every probability within 4 sigma.
    trials = 20_000
    exact = _survived_distribution(layout)
    est = endurable_failures(layout, trials=trials, seed=1, progress=False)
    freq = np.bincount(est.samples, minlength=layout.n_groups) / trials
    sigma = np.sqrt(exact * (1 - exact) / trials) + 1e-12
    assert np.all(np.abs(freq - exact) <= 4 * sigma + 1e-12)
    assert np.all(freq[exact == 0] == 0)


@pytest.mark.parametrize("n", [200, 600, 1000])
@pytest.mark.parametrize("r", [2, 4, 8, 12, 16, 20])
def test_exact_cyclic_within_three_standard_errors(n, r):
    est = endurable_failures(Layout.cyclic(n, r), trials=2000, seed=n * 100 + r, progress=False)
    exact = th.endurable_failures_exact(n, r)
    assert abs(est.mean - exact) <= 3 * est.stderr


@pytest.mark.parametrize(("n", "r"), [(200, 2), (600, 3), (1000, 8), (10_000, 4)])
def test_exact_replication_within_three_standard_errors(n, r):
    est = endurable_failures(Layout.replication(n, r), trials=2000, seed=n + r, progress=False)
    exact = th.endurable_failures_exact(n, r, layout="replication")
    assert abs(est.mean - exact) <= 3 * est.stderr


def test_replication_formula_close_to_monte_carlo():
    # Disjoint replica sets are nearly independent: the closed form is within 1.5% at r >= 3.
    for n, r in ((600, 3), (1000, 4), (10_000, 8)):
        est = endurable_failures(Layout.replication(n, r), trials=2000, seed=r, progress=False)
        assert th.endurable_failures_replication(n, r) == pytest.approx(est.mean, rel=0.015)


def test_sidon_formula_close_to_monte_carlo_at_paper_point():
    est = endurable_failures(Layout.sidon(600, 20), trials=2000, seed=7, progress=False)
    assert th.endurable_failures(600, 20) == pytest.approx(est.mean, rel=0.0113)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(layout="cyclic", trials=10), TypeError, "layout"),
        (dict(layout=Layout.cyclic(5, 2), trials=0), ValueError, "trials"),
        (dict(layout=Layout.cyclic(5, 2), trials=2.5), TypeError, "trials"),
        (dict(layout=Layout.cyclic(5, 2), trials=3, seed=-1), ValueError, "seed"),
        (dict(layout=Layout.cyclic(5, 2), trials=3, seed=2**64), ValueError, "seed"),
    ],
)
def test_invalid_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        endurable_failures(progress=False, **kwargs)
