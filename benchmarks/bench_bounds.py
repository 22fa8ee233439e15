"""How long failures take to decide, against the heartbeat timeout (pytest-benchmark). Run with:

    python -m pytest benchmarks/bench_bounds.py --benchmark-enable --benchmark-only -s

Own-loop runs (tests/torch/_torch_harness.py's LoopRun: a lighthouse and a store in this process,
SpareGroup workers as processes on 127.0.0.2, signals by PID from here), heartbeat timeout
T = 1 s. Each figure is a ratio to T, in the benchmark's ``extra_info`` (and printed):

- kill to agreed decision, median and p99 over 10 kills (two runs of N = 10, r = 2, groups 1,
  3, 5, 7, 9 killed one after the other): the time from the SIGKILL to the survivors' decision
  (``EventRecord.decided_at``, the same monotonic clock);
- a frozen process (SIGSTOP) to the decision;
- two kills 0.4 s apart (N = 6): the second decision, from its kill, against the first.

Every run asserts the failure-free weights; none asserts a time.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import statistics
import tempfile
import time

import torch
from _torch_harness import LoopRun, max_rel_diff, reference_params

from spare_fast import Layout
from spare_fast.torch import TrainSpec
from spare_fast.torch.testing import mlp

T = 1.0  # heartbeat timeout, seconds
STEPS = 60


def _reference(n: int) -> dict[str, torch.Tensor]:
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS)
    return reference_params(spec, n)


def _events(out: str) -> list[dict]:
    files = sorted(glob.glob(os.path.join(out, "events-*.json")))
    assert files, "no process finished"
    with open(files[0], encoding="utf-8") as fh:
        return list(json.load(fh)["events"])


def _check(run: LoopRun, reference: dict[str, torch.Tensor]) -> None:
    codes = run.join(300)
    for slot, (group, proc) in enumerate(run.procs):
        if codes[slot] == 0:
            path = os.path.join(run.out, f"final-g{group}-p{proc.pid}.pt")
            assert max_rel_diff(torch.load(path, weights_only=True), reference) <= 1e-10


def _kills(n: int, victims: list[int], gap: float | None) -> list[tuple[list[int], float]]:
    """One run; ``victims`` killed one after the other: each once the previous decision is
    agreed (``gap`` None) or ``gap`` seconds after the previous kill. Returns ``(dead, seconds
    from its kill to its decision)`` per event."""
    out = tempfile.mkdtemp(prefix="bench_bounds_")
    sent: dict[int, float] = {}
    with LoopRun(Layout.cyclic(n, 2), STEPS, out, heartbeat_timeout=T, pause=0.05) as run:
        slots = [run.start(g) for g in range(n)]
        run.wait(lambda: min(run.state(s)[1] for s in slots) >= 3, timeout=300)
        for i, g in enumerate(victims):
            if i and gap is None:
                # The next kill once the survivors have moved past the previous decision.
                step = max(run.state(s)[1] for s in slots if s not in victims[:i])
                run.wait(lambda step=step: max(run.state(s)[1] for s in slots) >= step + 2)
            sent[g] = time.monotonic()
            run.kill(slots[g])
            if gap is not None:
                time.sleep(gap)
        _check(run, _reference(n))
    return [(e["dead"], e["decided_at"] - sent[e["dead"][-1]]) for e in _events(out)]


def _frozen() -> float:
    out = tempfile.mkdtemp(prefix="bench_bounds_")
    with LoopRun(Layout.cyclic(4, 2), STEPS, out, heartbeat_timeout=T, pause=0.05) as run:
        slots = [run.start(g) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in slots) >= 3, timeout=300)
        at = time.monotonic()
        os.kill(run.state(slots[2])[0], signal.SIGSTOP)
        _check(run, _reference(4))
    ((event),) = _events(out)
    return float(event["decided_at"] - at)


def test_failure_decisions_against_the_heartbeat_timeout(benchmark) -> None:
    figures: dict[str, float] = {}

    def once() -> None:
        single = [s for _ in range(2) for _, s in _kills(10, [1, 3, 5, 7, 9], None)]
        assert len(single) == 10
        qs = statistics.quantiles(single, n=100, method="inclusive")
        figures["kill_median_over_T"] = statistics.median(single) / T
        figures["kill_p99_over_T"] = qs[98] / T
        figures["frozen_over_T"] = _frozen() / T
        (first, a), (second, b) = _kills(6, [1, 4], 0.4)
        assert first == [1] and second == [4]
        figures["second_over_first"] = b / a

    benchmark.pedantic(once, rounds=1, iterations=1)
    benchmark.extra_info.update(figures)
    print(" ".join(f"{k}={v:.2f}" for k, v in figures.items()))
