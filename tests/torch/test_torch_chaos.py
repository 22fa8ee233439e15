"""Chaos: random signals to random workers by PID at random moments; every run must finish.

N = 6 groups, r = 3, 20 seeded scenarios. A thread of the test process watches the progress the
workers report and sends SIGKILL, SIGTERM or SIGSEGV to their PIDs: at random steps and
phases (compute, inside the bucketed all-reduce, during a checkpoint write, during recovery),
several at once, and, in every third scenario, to the three holders of one type at once (a
wipe-out) followed by a strike during the restart that follows. Each run must finish with
the failure-free weights (float64, relative 1e-10) and leave no worker process behind.
"""

from __future__ import annotations

import signal
from collections import Counter

import numpy as np
import pytest
from _torch_harness import (
    Chaos,
    SignalSent,
    Trigger,
    alive_pids,
    max_rel_diff,
    reference_params,
)

from spare_fast import Layout
from spare_fast.torch import Phase, SpareTrainer, TrainSpec, mlp

N, R, STEPS, SCENARIOS = 6, 3, 8, 20
LAYOUT = Layout.cyclic(N, R)
SPEC = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS, 2)
REFERENCE = reference_params(SPEC, N)
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV)
RESTARTING = (Phase.STARTING, Phase.JOIN, Phase.RESTART)
_SENT: list[SignalSent] = []
# Per scenario: did at least one signalled process end by that very signal?
_TOOK_EFFECT: list[bool] = []


def holders(shard_type: int) -> tuple[int, ...]:
    return tuple(int(g) for g in np.flatnonzero((LAYOUT.stacks == shard_type).any(axis=1)))


def scenario(seed: int, trainer: SpareTrainer) -> Chaos:
    extra: list[Trigger] = []
    if seed % 3 == 0:
        # All holders of one type at once (a wipe-out), then a strike while it restarts.
        extra.append(
            Trigger(step=2 + seed % 4, phases=None, sig=signal.SIGKILL, victims=holders(seed % N))
        )
        extra.append(
            Trigger(
                step=0,
                phases=RESTARTING,
                sig=SIGNALS[seed % 3],
                min_epoch=1,
                delay=0.01 * (seed % 5),
            )
        )
    elif seed % 3 == 1:
        extra.append(Trigger(step=1 + seed % 5, phases=(Phase.CHECKPOINT,), sig=SIGNALS[seed % 3]))
    return Chaos(trainer, seed, n_triggers=2, steps=STEPS, signals=SIGNALS, triggers=extra)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SCENARIOS))
def test_random_signals_by_pid_every_run_finishes_with_failure_free_weights(seed: int) -> None:
    trainer = SpareTrainer(
        SPEC,
        LAYOUT,
        heartbeat_timeout=1.0,
        collective_timeout=4.0,
        quorum_timeout=30.0,
        bucket_numel=64,  # 178 parameters + 1 loss: three buckets per all-reduce
        max_restarts=6,
    )
    with scenario(seed, trainer) as chaos:
        result = trainer.run()
    _SENT.extend(chaos.sent)
    assert chaos.sent, "no signal was sent: the scenario tested nothing"
    pids = [p for group in result.pids.values() for p in group]
    assert alive_pids(pids) == []
    # Every signalled process that was still running ended by that signal, and the run
    # recorded it. A process may also have ended on its own before the signal arrived (0, or
    # EXIT_EXCLUDED / EXIT_UNNEEDED / 1 from the worker), or been ended by the launcher with
    # SIGKILL after the survivors dropped it from the agreed view (a slow machine can make a
    # process that is handling SIGTERM miss its heartbeats).
    codes = {
        p: c for g in result.pids for p, c in zip(result.pids[g], result.exit_codes[g], strict=True)
    }
    allowed = {0, 1, 3, 4, -signal.SIGKILL}
    unexpected = [
        (s.pid, s.signal, codes[s.pid])
        for s in chaos.sent
        if s.pid in codes and codes[s.pid] not in allowed | {-s.signal}
    ]
    assert unexpected == []
    # On a loaded machine every target of one scenario may have ended otherwise before its
    # signal landed; that the signals do take effect is checked over all scenarios below.
    _TOOK_EFFECT.append(any(codes[s.pid] == -s.signal for s in chaos.sent if s.pid in codes))
    assert [s.step for s in result.steps] == list(range(STEPS))
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


@pytest.mark.slow
def test_chaos_covered_restarts_and_checkpoint_writes() -> None:
    # Runs after the scenarios (same module, in order): the signals they sent must include
    # strikes during a restart and during a checkpoint write, and every kind of signal.
    if len(_SENT) == 0:
        pytest.skip("run together with the chaos scenarios")
    phases = Counter((s.state.phase, s.state.epoch >= 1) for s in _SENT)
    assert sum(n for (ph, late), n in phases.items() if ph in RESTARTING and late) >= 1
    assert phases[(Phase.CHECKPOINT, False)] + phases[(Phase.CHECKPOINT, True)] >= 1
    assert {s.signal for s in _SENT} == set(SIGNALS)
    # Most scenarios ended a process by the signal they sent (not by luck of timing).
    assert sum(_TOOK_EFFECT) >= len(_TOOK_EFFECT) // 2
