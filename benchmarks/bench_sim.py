"""Simulator speed: one paper-sized scenario, and the full paper sweep on two processes.

Run: ``PYTHONPATH=. python -m pytest benchmarks/bench_sim.py --benchmark-only --benchmark-enable``
Targets: one 10,000-step scenario at N = 1000 <= 2 s; the paper sweep
(3 N x r in 1..20 x 3 schemes x 5 seeds) <= 10 minutes on 2 cores.
"""

from __future__ import annotations

import math

import pytest

from spare_fast.sim import Scenario, simulate
from spare_fast.sim.sweep import best_by_scheme, mean_rows, sweep, sweep_tasks


@pytest.mark.parametrize(
    ("scheme", "r"), [("spare", 9), ("spare", 2), ("replication", 3), ("checkpoint", None)]
)
def test_one_scenario_n1000(benchmark, scheme, r):
    sc = Scenario(groups=1000)
    ref = simulate(sc, scheme, redundancy=r, seed=0, timeline=False)
    rep = benchmark(simulate, sc, scheme, redundancy=r, seed=0, timeline=False)
    # Events double as a determinism check (simpy's habit): every round repeats exactly.
    assert rep.events == ref.events
    assert rep.time_to_train == ref.time_to_train
    assert rep.failures > 1000


def test_paper_sweep_two_processes(benchmark):
    tasks = sweep_tasks(
        Scenario(), [200, 600, 1000], ["checkpoint", "replication", "spare"], range(1, 21), range(5)
    )
    rows = benchmark.pedantic(sweep, args=(tasks,), kwargs={"workers": 2}, rounds=1, iterations=1)
    assert len(rows) == len(tasks) == 615
    best = best_by_scheme(mean_rows(rows))
    for n in (200, 600, 1000):
        assert best[(n, "spare")]["normalized"] < best[(n, "replication")]["normalized"]
        assert math.isinf(best[(n, "checkpoint")]["normalized"])
