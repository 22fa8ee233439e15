"""Theory and Monte Carlo benchmarks (pytest-benchmark). Run with:

    PYTHONPATH=. python -m pytest benchmarks/bench_theory.py --benchmark-enable --benchmark-only

Targets (reported, never asserted): Monte Carlo mu at N = 100,000, r = 20 with
1,000 trials <= 10 s; the overhead Monte Carlo at N = 10,000, r = 12 with 100 trajectories
<= 60 s. Each benchmark asserts its answer against the closed forms or the exact value.
"""

import pytest

from spare_fast import Layout
from spare_fast import montecarlo as mc
from spare_fast import theory as th


@pytest.mark.parametrize("kind", ["random", "sidon", "cyclic"])
def test_mu_monte_carlo_100k_r20(benchmark, kind):
    layout = getattr(Layout, kind)(100_000, 20)
    est = benchmark.pedantic(
        mc.endurable_failures,
        args=(layout, 1000),
        kwargs=dict(seed=0, progress=False),
        rounds=3,
        iterations=1,
    )
    benchmark.extra_info.update(layout=kind, mean=est.mean, stderr=est.stderr)
    reference = th.endurable_failures_exact(100_000, 20) if kind == "cyclic" else None
    if reference is None:
        # Independence approximation, within 1.13% (the paper's error) for spread layouts.
        assert est.mean == pytest.approx(th.endurable_failures(100_000, 20), rel=0.0113)
    else:
        assert abs(est.mean - reference) <= 4 * est.stderr


def test_overhead_monte_carlo_10k_r12(benchmark):
    layout = Layout.random(10_000, 12, seed=0)
    est = benchmark.pedantic(
        mc.overhead,
        args=(layout, 100),
        kwargs=dict(seed=0, progress=False),
        rounds=1,
        iterations=1,
    )
    benchmark.extra_info.update(mean=est.mean, stderr=est.stderr)
    lb = th.overhead_lower_bound(10_000, 12)
    assert lb <= est.mean + 3 * est.stderr
    assert est.mean == pytest.approx(lb, rel=0.006)


@pytest.mark.parametrize("n", [1_000, 20_000, 100_000])
def test_exact_cyclic_mu(benchmark, n):
    mu = benchmark.pedantic(th.endurable_failures_exact, args=(n, 20), rounds=1, iterations=1)
    benchmark.extra_info.update(mu=mu)
    assert 1.0 < mu / th.endurable_failures(n, 20) < 1.1


@pytest.mark.parametrize(("n", "r"), [(600, 20), (381, 20), (566, 20), (273, 17), (100_000, 20)])
def test_sidon_offsets(benchmark, n, r):
    from spare_fast.layout import sidon_offsets

    off = benchmark.pedantic(sidon_offsets, args=(n, r), rounds=1, iterations=1).tolist()
    diffs = [(a - b) % n for a in off for b in off if a != b]
    assert len(diffs) == len(set(diffs)) == r * (r - 1)
