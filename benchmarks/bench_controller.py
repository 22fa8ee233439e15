"""Controller benchmarks (pytest-benchmark). Run with:

    python -m pytest benchmarks/bench_controller.py --benchmark-enable --benchmark-only

Each benchmark asserts its answer (status, depth, moves against a peer or a known count);
the timing targets of the controller issue are reported by ``spare-fast bench`` and in the
README, never asserted.
"""

import numpy as np
import pytest

from spare_fast import Controller, Layout, Status, solve
from spare_fast.testing.bench import failure_trajectory, million_groups
from spare_fast.testing.peers import ortools_decision

N, R = 100_000, 20


@pytest.fixture(scope="module", params=["sidon", "random"])
def instance(request):
    layout = getattr(Layout, request.param)(N, R, seed=0)
    rng = np.random.default_rng(0)
    alive = np.ones(N, dtype=bool)
    alive[rng.choice(N, int(0.3 * N), replace=False)] = False
    return request.param, layout, alive


@pytest.mark.parametrize("kind", ["sidon", "random"])
def test_trajectory_to_wipeout(benchmark, kind):
    res = benchmark.pedantic(failure_trajectory, args=(N, R, kind), rounds=1, iterations=1)
    benchmark.extra_info.update(res)
    # Wipe-out after roughly mu(N, r) = Gamma(1 + 1/r) N^(1 - 1/r) ~ 54,500 failures.
    assert 40_000 < res["failures"] < 70_000
    assert res["mean_depth"] >= 2.0


def test_solve_from_scratch(benchmark, instance):
    kind, layout, alive = instance
    d = benchmark.pedantic(solve, args=(layout, alive), rounds=3, iterations=1)
    peer = ortools_decision(layout.stacks, alive)
    benchmark.extra_info.update(layout=kind, peer_seconds=peer.seconds)
    assert (d.status.name, d.depth, d.moves) == (peer.status, peer.depth, peer.moves)


def test_peer_pipeline_from_scratch(benchmark, instance):
    kind, layout, alive = instance
    p = benchmark.pedantic(ortools_decision, args=(layout.stacks, alive), rounds=1, iterations=1)
    benchmark.extra_info.update(layout=kind)
    assert p.status == "OK" and p.depth == 2


def test_single_failure_decision(benchmark):
    layout = Layout.sidon(N, R)
    ctl = Controller(layout)
    order = iter(np.random.default_rng(1).permutation(N).tolist())

    def one():
        return ctl.fail(next(order))

    d = benchmark.pedantic(one, rounds=2000, iterations=1)
    assert d.status == Status.OK


def test_million_groups(benchmark):
    res = benchmark.pedantic(million_groups, rounds=1, iterations=1)
    benchmark.extra_info.update(res)
    assert res["status"] == "OK" and res["depth"] == 2
