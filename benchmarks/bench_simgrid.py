"""SimGrid engine speed: a 10,000-step SPARe+CKPT cell beside the native engine, over N.

Run: ``flock /tmp/bench.lock env PYTHONPATH=. python -m pytest benchmarks/bench_simgrid.py
--benchmark-only --benchmark-enable -s``.
Target: the N = 600 cell (r = 8, the paper's scenario) <= 120 s on 2 cores.  Each case
prints one line: both engines' host seconds, their ratio, the failures and the events.
Skipped without SimGrid.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402

from spare_fast.sim import Scenario, simulate  # noqa: E402
from spare_fast.sim import simgrid as sgengine  # noqa: E402

try:
    sgengine.locate_simgrid()
    _MISSING = ""
except sgengine.SimGridUnavailable as exc:
    _MISSING = str(exc)

pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"SimGrid absent: {_MISSING}")


@pytest.mark.parametrize(("groups", "r"), [(200, 11), (600, 8), (1000, 9)])
def test_spare_cell_10000_steps(benchmark, groups: int, r: int) -> None:
    sc = Scenario(groups=groups)
    t = time.perf_counter()
    native = simulate(sc, "spare", redundancy=r, seed=0, timeline=False)
    t_native = time.perf_counter() - t
    rep = benchmark.pedantic(
        sgengine.simulate,
        args=(sc, "spare"),
        kwargs={"redundancy": r, "seed": 0, "timeline": False},
        rounds=1,
        iterations=1,
    )
    t_sg = benchmark.stats.stats.max
    # The answer: the whole cell.  The failure draws are the native engine's; the network
    # model's all-reduce (6-7% above the analytic one) makes the run a little longer, so it
    # sees a few more of them.
    assert rep.completed and rep.executed_steps >= sc.steps
    assert abs(rep.failures / native.failures - 1) < 0.05
    assert abs(rep.normalized / native.normalized - 1) < 0.02
    print(
        f"\nN = {groups}, r = {r}: SimGrid {t_sg:.1f} s, native {t_native:.2f} s, "
        f"ratio {t_sg / t_native:.1f}x; {rep.failures} failures, {rep.events} events"
    )
    if groups == 600:  # reported, never asserted: timings vary with the machine's load
        print(f"N = 600 target: <= 120 s; measured {t_sg:.1f} s")
