"""Overhead Monte Carlo driven by the real Controller."""

from __future__ import annotations

import numpy as np
import pytest

from spare_fast import Controller, Layout, Status
from spare_fast import theory as th
from spare_fast.montecarlo import Estimate, endurable_failures, overhead


def _trajectory_depths(layout: Layout, order: np.ndarray) -> list[int]:
    """Reference: a fresh controller per trajectory; the depths of the states 0..W."""
    ctl = Controller(layout)
    depths = [ctl.depth]
    for g in order.tolist():
        d = ctl.fail(g)
        if d.status == Status.WIPEOUT:
            break
        depths.append(d.depth)
    return depths


def _trajectory_mean_depth(layout: Layout, order: np.ndarray) -> tuple[float, int]:
    """Mean depth over states 0..W, and W."""
    depths = _trajectory_depths(layout, order)
    return float(np.mean(depths)), len(depths) - 1


def test_full_redundancy_depth_is_the_counting_bound():
    # r = N: every group holds every type, so the depth after k failures is ceil(N / (N - k)).
    n = 7
    est = overhead(Layout.cyclic(n, n), trials=4, seed=0, progress=False)
    expected = np.mean([-(-n // (n - k)) for k in range(n)])
    assert isinstance(est, Estimate)
    assert np.allclose(est.samples, expected) and est.stderr == 0.0


def test_matches_fresh_controller_reference():
    layout = Layout.random(40, 4, seed=2)
    est = overhead(layout, trials=6, seed=9, progress=False)
    for t in range(6):
        rng = np.random.default_rng(np.random.SeedSequence(9, spawn_key=(t,)))
        mean, _ = _trajectory_mean_depth(layout, rng.permutation(40))
        assert est.samples[t] == pytest.approx(mean)


@pytest.mark.parametrize("kind", ["cyclic", "random"])
def test_survived_states_drop_the_last_state(kind):
    n, r = 30, 3
    layout = Layout.cyclic(n, r) if kind == "cyclic" else Layout.random(n, r, seed=5)
    est = overhead(layout, trials=20, seed=2, progress=False, states="survived")
    full = overhead(layout, trials=20, seed=2, progress=False)
    for t in range(20):
        rng = np.random.default_rng(np.random.SeedSequence(2, spawn_key=(t,)))
        depths = _trajectory_depths(layout, rng.permutation(n))
        kept = depths[:-1] if len(depths) > 1 else depths
        assert est.samples[t] == pytest.approx(np.mean(kept))
        assert full.samples[t] == pytest.approx(np.mean(depths))
    # The last state is the deepest one, so dropping it never raises the mean.
    assert np.all(est.samples <= full.samples + 1e-12)


def test_reproducible_by_seed():
    layout = Layout.sidon(57, 5)
    a = overhead(layout, trials=5, seed=4, progress=False)
    b = overhead(layout, trials=5, seed=4, progress=False)
    head = overhead(layout, trials=2, seed=4, progress=False)
    assert np.array_equal(a.samples, b.samples)
    assert np.array_equal(head.samples, a.samples[:2])


def test_depth_at_least_the_counting_bound_along_each_trajectory():
    layout = Layout.random(60, 5, seed=1)
    ctl = Controller(layout)
    order = np.random.default_rng(0).permutation(60)
    for k, g in enumerate(order.tolist(), start=1):
        d = ctl.fail(g)
        if d.status == Status.WIPEOUT:
            break
        assert d.depth >= -(-60 // (60 - k))


def test_lower_bound_close_to_monte_carlo_at_paper_point():
    # The paper reports 0.60% mean error; at N = 600, r = 20 the bound is within 2%.
    est = overhead(Layout.sidon(600, 20), trials=60, seed=1, progress=False)
    lb = th.overhead_lower_bound(600, 20)
    assert lb <= est.mean + 3 * est.stderr
    assert lb == pytest.approx(est.mean, rel=0.02)


def test_survived_counts_agree_with_coverage_monte_carlo():
    # The controller's wipe-out is exactly "some type lost all holders": the number of states
    # per trajectory must follow the same law as the coverage-only Monte Carlo.
    layout = Layout.sidon(31, 5)
    w = []
    for t in range(300):
        rng = np.random.default_rng(np.random.SeedSequence(3, spawn_key=(t,)))
        w.append(_trajectory_mean_depth(layout, rng.permutation(31))[1])
    cover = endurable_failures(layout, trials=4000, seed=3, progress=False)
    se = np.hypot(np.std(w, ddof=1) / np.sqrt(len(w)), cover.stderr)
    assert abs(np.mean(w) - cover.mean) <= 4 * se


def test_invalid_arguments():
    with pytest.raises(ValueError, match="states = 'all'"):
        overhead(Layout.cyclic(5, 2), trials=1, progress=False, states="all")
    with pytest.raises(ValueError, match="trials"):
        overhead(Layout.cyclic(5, 2), trials=0, progress=False)
    with pytest.raises(TypeError, match="layout"):
        overhead(None, trials=1, progress=False)
