"""PyTorch executor benchmarks (pytest-benchmark). Run with:

    python -m pytest benchmarks/bench_torch.py --benchmark-enable --benchmark-only

Three figures, each in the benchmark's ``extra_info`` (and printed): the median time from a
SIGKILL sent to a worker's PID to the survivors' agreed decision (default timeouts: the
lighthouse's 2 s heartbeat timeout dominates); the executor's per-step cost against plain
``torch.nn.parallel.DistributedDataParallel`` on the same model at N = 4 (a ratio); and the
restart time, from the wipe-out decision to the first step committed after the restart; and the
per-step cost of ``ordered_sum=True`` against the default sum at N = 4 (a ratio). The
timed function of each is one whole run. Every benchmark asserts its answer (the failure-free
weights); none asserts a time.
"""

from __future__ import annotations

import statistics

from spare_fast import Layout
from spare_fast.torch import SpareTrainer, TrainSpec
from spare_fast.torch.testing import (
    Kill,
    PlannedFaults,
    ddp_step_seconds,
    max_rel_diff,
    mlp,
    reference_params,
    tiny,
)

LAYOUT = Layout.cyclic(4, 2)
MLP = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 8, 2)
WARMUP, TIMED = 5, 30
TRANSFORMER = TrainSpec(
    tiny.build_transformer,
    tiny.make_adamw,
    tiny.token_loss,
    tiny.token_shard,
    WARMUP + TIMED,
    10,
    tiny.make_cosine,
    seed=3,
)


def test_kill_to_agreed_decision(benchmark) -> None:
    delays: list[float] = []
    ref = reference_params(MLP, 4)

    def once() -> None:
        tr = SpareTrainer(MLP, LAYOUT)
        with PlannedFaults(tr, [Kill(2, 3)]) as killer:
            result = tr.run()
        assert max_rel_diff(result.params, ref) <= 1e-10
        ((event,),) = [s.events for s in result.steps if s.events]
        (sent,) = killer.sent
        delays.append(event.decided_at - sent.at)

    benchmark.pedantic(once, rounds=5, iterations=1)
    median = statistics.median(delays)
    benchmark.extra_info.update(
        kill_to_decision_median_s=median, kill_to_decision_s=delays, heartbeat_timeout_s=2.0
    )
    print(f"\nkill -> agreed decision: median {median:.3f} s over {len(delays)} kills")


def test_step_cost_against_ddp(benchmark) -> None:
    ref = reference_params(TRANSFORMER, 4)
    per_step: list[float] = []

    def once() -> None:
        result = SpareTrainer(TRANSFORMER, LAYOUT).run()
        assert max_rel_diff(result.params, ref) <= 1e-10
        steps = result.steps
        per_step.append((steps[-1].committed_at - steps[WARMUP].committed_at) / (TIMED - 1))

    benchmark.pedantic(once, rounds=3, iterations=1)
    ddp = statistics.median(ddp_step_seconds(TRANSFORMER, 4, TIMED, WARMUP) for _ in range(3))
    spare = statistics.median(per_step)
    benchmark.extra_info.update(
        spare_step_s=spare, ddp_step_s=ddp, ratio=spare / ddp, model_params=5104, n=4
    )
    print(
        f"\nper step: spare_fast {spare * 1e3:.1f} ms, DDP {ddp * 1e3:.1f} ms, "
        f"ratio {spare / ddp:.2f}"
    )


def test_ordered_sum_cost(benchmark) -> None:
    ref = reference_params(TRANSFORMER, 4)
    per_step: dict[bool, list[float]] = {False: [], True: []}

    def once() -> None:
        for ordered in (False, True):
            result = SpareTrainer(TRANSFORMER, LAYOUT, ordered_sum=ordered).run()
            assert max_rel_diff(result.params, ref) <= 1e-10
            steps = result.steps
            seconds = (steps[-1].committed_at - steps[WARMUP].committed_at) / (TIMED - 1)
            per_step[ordered].append(seconds)

    benchmark.pedantic(once, rounds=3, iterations=1)
    default, ordered = (statistics.median(per_step[k]) for k in (False, True))
    benchmark.extra_info.update(
        default_step_s=default, ordered_step_s=ordered, ratio=ordered / default, n=4
    )
    print(
        f"\nN = 4, K = 1: ordered_sum step {ordered * 1e3:.1f} ms, default {default * 1e3:.1f} "
        f"ms, ratio {ordered / default:.2f}"
    )


def test_restart_time(benchmark) -> None:
    ref = reference_params(MLP, 4)
    restart: list[float] = []

    def once() -> None:
        tr = SpareTrainer(MLP, LAYOUT)
        with PlannedFaults(tr, [Kill(0, 3), Kill(1, 3)]):
            result = tr.run()
        assert result.restarts == 1
        assert max_rel_diff(result.params, ref) <= 1e-10
        (wipe,) = result.wipeouts
        first = min(s.committed_at for s in result.steps if s.epoch == 1)
        restart.append(first - wipe.decided_at)

    benchmark.pedantic(once, rounds=3, iterations=1)
    median = statistics.median(restart)
    benchmark.extra_info.update(restart_median_s=median, restart_s=restart)
    print(f"\nrestart (wipe-out decision -> first step committed after it): median {median:.3f} s")
