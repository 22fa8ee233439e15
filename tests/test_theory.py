"""Closed forms and exact results of spare_fast.theory, against the paper and brute force."""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import gamma

from spare_fast import Layout
from spare_fast import theory as th
from spare_fast.theory.closed_forms import _survival_curve


# -- brute-force references ------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _all_positions(n: int) -> np.ndarray:
    """pos[o, g] = failure index of group g in order o, over all n! orders."""
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.int8)
    pos = np.empty_like(orders)
    pos[np.arange(len(orders))[:, None], orders] = np.arange(n, dtype=np.int8)
    return pos


def _all_orders_mean_survived(layout: Layout) -> Fraction:
    """E[W] over every failure order: W = min over types of max over holders of pos."""
    pos = _all_positions(layout.n_groups)
    w = pos[:, layout.holders()].max(axis=2).min(axis=1).astype(np.int64)
    return Fraction(int(w.sum()), len(pos))


def _circular_survival_by_enumeration(n: int, r: int) -> list[Fraction]:
    """P(no r cyclically consecutive dead among k random dead) from all 2**n dead sets."""
    x = np.arange(2**n, dtype=np.int64)
    mask = (1 << n) - 1
    run = x.copy()
    for s in range(1, r):
        run &= ((x << s) | (x >> (n - s))) & mask  # rotation by s
    ones = np.array([bin(v).count("1") for v in range(2**n)])
    ok = run == 0
    return [Fraction(int((ok & (ones == k)).sum()), math.comb(n, k)) for k in range(n + 1)]


# -- the paper's values ------------------------------------------------------------------------
def test_mu_600_20_matches_paper():
    assert th.endurable_failures(600, 20) == pytest.approx(424, abs=1)


def test_mu_formula_matches_gamma_expression():
    n = np.array([200, 600, 1000, 10_000, 100_000])[:, None]
    r = np.array([2, 4, 8, 12, 16, 20])[None, :]
    expected = gamma(1.0 / r) / r * n ** (1.0 - 1.0 / r)
    np.testing.assert_allclose(th.endurable_failures(n, r), expected, rtol=1e-12)


def test_mu_scalar_in_scalar_out():
    assert isinstance(th.endurable_failures(600, 20), float)
    assert isinstance(th.optimal_redundancy(600), int)


def test_optimal_redundancy_matches_paper():
    assert th.optimal_redundancy([200, 600, 1000]).tolist() == [8, 10, 10]


@given(st.integers(1, 10**7), st.integers(1, 10**7))
def test_optimal_redundancy_is_monotone_and_bounded(a, b):
    lo, hi = sorted((a, b))
    r_lo, r_hi = th.optimal_redundancy(lo), th.optimal_redundancy(hi)
    assert 1 <= r_lo <= r_hi
    assert r_lo <= lo


def test_overhead_lower_bound_matches_paper():
    assert th.overhead_lower_bound(600, 20) == pytest.approx(2.34, abs=0.01)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 30))
def test_overhead_lower_bound_equals_direct_average(n, r):
    r = min(r, n)
    states = math.floor(math.gamma(1 + 1 / r) * n ** (1 - 1 / r))
    direct = Fraction(sum(math.ceil(Fraction(n, n - k)) for k in range(states)), states)
    assert th.overhead_lower_bound(n, r) == pytest.approx(float(direct), rel=1e-12)


# -- checkpointing ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ts", "tf", "tr"),
    [(60.0, 300.0, 3600.0), (60.0, 300.0 * 424, 3600.0), (5.0, 1e6, 10.0), (600.0, 50.0, 0.0)],
)
def test_checkpoint_period_maximises_availability(ts, tf, tr):
    best = th.checkpoint_period(ts, tf, tr)
    res = minimize_scalar(
        lambda tau: -th.availability(tf, ts, tr, period=tau),
        bounds=(ts * 1.000001, 100 * best),
        method="bounded",
        options={"xatol": 1e-9 * best},
    )
    assert res.x == pytest.approx(best, rel=1e-4)
    assert th.availability(tf, ts, tr) >= -res.fun - 1e-12
    for factor in (0.9, 1.1):
        assert th.availability(tf, ts, tr, period=best * factor) < th.availability(tf, ts, tr)


def test_availability_default_period_is_checkpoint_period():
    tau = th.checkpoint_period(60, 90_000, 3600)
    assert th.availability(90_000, 60, 3600) == th.availability(90_000, 60, 3600, period=tau)


def test_availability_is_zero_when_saving_takes_the_whole_period():
    assert th.availability(1000.0, 60.0, 10.0, period=60.0) == 0.0


def test_availability_without_save_is_uptime_fraction():
    assert th.availability(900.0, 0.0, 100.0) == pytest.approx(0.9)


def test_durations_accept_timedelta():
    td = th.checkpoint_period(
        dt.timedelta(minutes=1), dt.timedelta(hours=30), dt.timedelta(hours=1)
    )
    assert td == th.checkpoint_period(60, 30 * 3600, 3600)


def test_availability_broadcasts():
    tf = np.array([300.0, 3000.0, 30000.0])
    out = th.availability(tf, 60.0, 3600.0)
    assert out.shape == (3,)
    assert [th.availability(v, 60.0, 3600.0) for v in tf] == out.tolist()


# -- time-to-train -------------------------------------------------------------------------------
def _a_star(tf: float, ts: float, tr: float) -> float:
    tau = ts + math.sqrt(ts * ts + 2 * ts * (tf + tr))
    return (1 - ts / tau) * tf / (tf + tr + tau / 2)


def test_time_to_train_spare_composes_the_closed_forms():
    n, r, m, ts, tr = 600, 10, 300.0, 60.0, 3600.0
    mu = math.gamma(1 + 1 / r) * n ** (1 - 1 / r)
    s_bar = sum(math.ceil(n / (n - k)) for k in range(math.floor(mu))) / math.floor(mu)
    assert th.time_to_train(n, r, m, ts, tr) == pytest.approx(s_bar / _a_star(mu * m, ts, tr))


def test_time_to_train_replication_and_checkpoint():
    n, r, m, ts, tr = 600, 3, 300.0, 60.0, 3600.0
    mu_rep = math.gamma(1 + 1 / r) * r * (n // r) ** (1 - 1 / r)
    rep = th.time_to_train(n, r, m, ts, tr, scheme="replication")
    assert rep == pytest.approx(r / _a_star(mu_rep * m, ts, tr))
    ckpt = th.time_to_train(n, 1, m, ts, tr, scheme="checkpoint")
    assert ckpt == pytest.approx(1 / _a_star(m, ts, tr))


def test_time_to_train_spec_scenario_orders_the_schemes():
    kw = dict(mtbf=dt.timedelta(minutes=5), save=60, restart=dt.timedelta(hours=1))
    spare = th.time_to_train(600, th.optimal_redundancy(600), **kw)
    rep = th.time_to_train(600, 3, scheme="replication", **kw)
    ckpt = th.time_to_train(600, 1, scheme="checkpoint", **kw)
    assert 1 < spare < rep < ckpt


@pytest.mark.parametrize("scheme", ["spare", "replication"])
@pytest.mark.parametrize("n", [200, 600, 1000])
def test_optimal_redundancy_numeric_is_the_argmin(n, scheme):
    kw = dict(mtbf=300.0, save=60.0, restart=3600.0)
    best = th.optimal_redundancy_numeric(n, scheme=scheme, **kw)
    values = {r: th.time_to_train(n, r, scheme=scheme, **kw) for r in range(1, 65)}
    assert values[best] == min(values.values())


def test_optimal_redundancy_numeric_near_the_rule():
    # The rule is derived from mu ~ N/2; the model's optimum sits within one of it here.
    for n in (200, 600, 1000):
        r_num = th.optimal_redundancy_numeric(n, mtbf=300.0, save=60.0, restart=3600.0)
        assert abs(r_num - th.optimal_redundancy(n)) <= 1


# -- replication mu ------------------------------------------------------------------------------
def test_mu_replication_formula():
    assert th.endurable_failures_replication(600, 3) == pytest.approx(
        math.gamma(4 / 3) * 3 * 200 ** (2 / 3)
    )


# -- exact mu: brute force ----------------------------------------------------------------------
@pytest.mark.parametrize("n", range(1, 10))
def test_exact_cyclic_mu_equals_all_failure_orders(n):
    for r in range(1, n + 1):
        expected = _all_orders_mean_survived(Layout.cyclic(n, r))
        assert th.endurable_failures_exact(n, r) == pytest.approx(float(expected), rel=1e-14)


@pytest.mark.parametrize("n", range(1, 10))
def test_exact_replication_mu_equals_all_failure_orders(n):
    for r in range(1, n + 1):
        expected = _all_orders_mean_survived(Layout.replication(n, r))
        got = th.endurable_failures_exact(n, r, layout="replication")
        assert got == pytest.approx(float(expected), rel=1e-14)


@pytest.mark.parametrize(("n", "r"), [(12, 2), (16, 3), (18, 5), (20, 4), (20, 7)])
def test_exact_survival_curve_equals_subset_enumeration(n, r):
    expected = _circular_survival_by_enumeration(n, r)
    got = _survival_curve("cyclic", n, r, rtol=0.0)
    # With rtol = 0 the curve stops at its first exact zero; the rest must be zero too.
    assert got[-1] == 0.0 and all(p == 0 for p in expected[len(got) :])
    np.testing.assert_allclose(got, [float(p) for p in expected[: len(got)]], rtol=1e-14)


def test_exact_cyclic_extremes():
    assert th.endurable_failures_exact(50, 1) == 0.0
    assert th.endurable_failures_exact(50, 50) == 49.0


def test_exact_cyclic_is_monotone_in_redundancy():
    mu = [th.endurable_failures_exact(300, r) for r in range(1, 21)]
    assert all(a < b for a, b in itertools.pairwise(mu))


def test_exact_cyclic_large_n_is_finite_and_above_formula():
    # N = 20,000 runs in about a second; the cyclic layout survives more than the formula says
    # (neighbouring types share r - 1 holders), by about 5% at r = 20.
    exact = th.endurable_failures_exact(20_000, 20)
    formula = th.endurable_failures(20_000, 20)
    assert math.isfinite(exact)
    assert 1.02 * formula < exact < 1.10 * formula


def test_exact_cyclic_tail_cut_is_negligible():
    # The k loop stops once the remaining tail is below 2**-60 of the sum; running it to the
    # end must not change the value beyond rounding.
    full = math.fsum(_survival_curve("cyclic", 400, 6, rtol=0.0)[1:].tolist())
    assert th.endurable_failures_exact(400, 6) == pytest.approx(full, rel=1e-14)


def test_exact_broadcasts():
    out = th.endurable_failures_exact([8, 9], 3)
    assert out.tolist() == [th.endurable_failures_exact(8, 3), th.endurable_failures_exact(9, 3)]


# -- invalid arguments ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: th.endurable_failures(0, 1), "n_groups"),
        (lambda: th.endurable_failures(10, 0), "redundancy"),
        (lambda: th.endurable_failures(10, 11), "redundancy"),
        (lambda: th.endurable_failures(float("nan"), 2), "n_groups"),
        (lambda: th.endurable_failures_exact(10, 11), "redundancy"),
        (lambda: th.endurable_failures_exact(10, 2, layout="sidon"), "layout"),
        (lambda: th.endurable_failures_replication(3, 4), "redundancy"),
        (lambda: th.overhead_lower_bound(-5, 2), "n_groups"),
        (lambda: th.optimal_redundancy(0), "n_groups"),
        (lambda: th.checkpoint_period(-1, 100, 10), "save"),
        (lambda: th.checkpoint_period(1, float("nan"), 10), "mean_time_between_restarts"),
        (lambda: th.checkpoint_period(1, 100, -dt.timedelta(seconds=1)), "restart"),
        (lambda: th.availability(0, 1, 1), "mean_time_between_restarts"),
        (lambda: th.availability(100, 1, 1, period=0), "period"),
        (lambda: th.availability(100, 1, float("inf")), "restart"),
        (lambda: th.time_to_train(600, 8, -300, 60, 3600), "mtbf"),
        (lambda: th.time_to_train(600, 8, 300, 60, 3600, scheme="raid"), "scheme"),
        (lambda: th.time_to_train(600, 601, 300, 60, 3600), "redundancy"),
        (lambda: th.optimal_redundancy_numeric(600, 300, 60, 3600, scheme="checkpoint"), "scheme"),
        (lambda: th.optimal_redundancy_numeric(600, 300, 60, 3600, max_redundancy=0), "max_red"),
    ],
)
def test_invalid_arguments_raise_value_error_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: th.endurable_failures("600", 20),
        lambda: th.endurable_failures(600, True),
        lambda: th.checkpoint_period("60s", 100, 10),
        lambda: th.endurable_failures(dt.timedelta(seconds=5), 2),
    ],
)
def test_wrong_kinds_raise_type_error(call):
    with pytest.raises(TypeError):
        call()
