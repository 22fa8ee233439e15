"""The PyTorch executor: real worker processes on CPU, gloo collectives, workers killed by PID.

Every run is checked against an independent single-process reference
(:func:`spare_fast.torch.testing.reference_params`, no executor code involved), and the
reported decisions are replayed on a separate Controller. Failures are real signals sent to
the workers' PIDs from a thread of the test process.
"""

from __future__ import annotations

import signal

import numpy as np
import pytest
import torch
from _torch_harness import slow_shard

from spare_fast import Controller, Layout, Status
from spare_fast.torch import (
    Fault,
    Kill,
    Phase,
    RunResult,
    SpareTrainer,
    Stall,
    TrainSpec,
    WorkerState,
    mlp,
    parse_kill,
    tiny,
)
from spare_fast.torch.testing import (
    Injector,
    PlannedFaults,
    Watcher,
    alive_pids,
    max_rel_diff,
    reference_params,
)

N_GROUPS, REDUNDANCY, STEPS = 4, 2, 6
LAYOUT = Layout.cyclic(N_GROUPS, REDUNDANCY)
SPEC = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS, 2)
REFERENCE = reference_params(SPEC, N_GROUPS)
# 178 parameters + 1 loss in buckets of 64: three buckets, so a kill "inside the all-reduce"
# lands between buckets, with part of the step's sums exchanged.
FAST = {"heartbeat_timeout": 1.0, "collective_timeout": 5.0, "bucket_numel": 64}


def trainer(spec: TrainSpec = SPEC, **kw: object) -> SpareTrainer:
    return SpareTrainer(spec, LAYOUT, **{**FAST, **kw})  # type: ignore[arg-type]


def run_with(*kills: str, **kw: object) -> RunResult:
    tr = trainer(**kw)
    with PlannedFaults(tr, [parse_kill(k) for k in kills]):
        result = tr.run()
    assert not alive_pids(p for pids in result.pids.values() for p in pids)
    return result


def events(result: RunResult) -> list[tuple[tuple[int, ...], int, str]]:
    return [(e.dead, e.step, e.status) for s in result.steps for e in s.events]


def test_kill_one_worker_mid_run_survivors_finish_with_failure_free_params() -> None:
    result = run_with("2@3")
    assert result.restarts == 0
    # Nobody was restarted or replaced: one process per group for the whole run.
    assert all(len(pids) == 1 for pids in result.pids.values())
    assert result.exit_codes[2] == [-signal.SIGKILL]
    # The signal leaves once group 2 reports step 3; it may still deliver that step's sums.
    ((dead, step, status),) = events(result)
    assert dead == (2,) and step in (3, 4) and status == "OK"
    assert [s.members for s in result.steps[:3]] == [(0, 1, 2, 3)] * 3
    assert result.steps[-1].members == (0, 1, 3)
    assert result.params["0.weight"].dtype == torch.float64
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_wipeout_restarts_from_checkpoint_with_failure_free_params() -> None:
    # Under cyclic(4, 2), groups 0 and 1 are the only holders of type 1.
    assert set(np.flatnonzero((LAYOUT.stacks == 1).any(axis=1))) == {0, 1}
    result = run_with("0@3", "1@3")
    assert result.restarts == 1
    # The lighthouse may report both deaths in one quorum or one after the other; the last
    # event is the wipe-out either way.
    (wipe,) = result.wipeouts
    assert wipe.status == "WIPEOUT" and wipe.step in (3, 4)
    assert set(wipe.dead) <= {0, 1} and wipe.dead
    # New processes for the dead groups only; the survivors went through the restart alive.
    assert [len(result.pids[g]) for g in range(N_GROUPS)] == [2, 2, 1, 1]
    # The steps after the restart's checkpoint were redone by all four groups at depth 1.
    assert result.steps[-1].epoch == 1
    redone = [s for s in result.steps if s.epoch == 1]
    assert redone and all(s.members == (0, 1, 2, 3) and s.depth == 1 for s in redone)
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_every_group_killed_at_once_restarts_from_checkpoint_with_new_processes() -> None:
    result = run_with("0@3", "1@3", "2@3", "3@3")
    assert result.restarts >= 1
    assert all(len(result.pids[g]) == 2 for g in range(N_GROUPS))
    assert all(codes[0] == -signal.SIGKILL for codes in result.exit_codes.values())
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_kill_during_allreduce_is_masked() -> None:
    result = run_with("1@2:allreduce")
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values())
    ((dead, step, status),) = events(result)
    assert dead == (1,) and step in (2, 3) and status == "OK"
    assert result.steps[-1].members == (0, 2, 3)
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGSEGV])
def test_any_signal_is_a_failure_like_sigkill(sig: signal.Signals) -> None:
    class Once(Watcher):
        def tick(self, states: dict[int, WorkerState]) -> None:
            s = states.get(3)
            if not self.sent and s is not None and s.step >= 2 and s.phase is Phase.COMPUTE:
                self.send(s, sig)

    # The harness's 20 ms shards: a computing phase long enough for the watcher's poll to see
    # it on a loaded machine (the data, and so the reference, are those of SPEC).
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, slow_shard, STEPS, 2)
    tr = trainer(spec=spec)
    with Once(tr) as once:
        result = tr.run()
    assert [x.signal for x in once.sent] == [sig]
    assert result.exit_codes[3] == [-sig]
    assert result.restarts == 0 and result.steps[-1].members == (0, 1, 2)
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_spurious_collective_error_rolls_members_back_one_step() -> None:
    # Group 1 sees step 2's completed all-reduce as failed, group 3 the last step's: the other
    # members have committed the step and must undo it so that all redo it together.
    # The faults come from a fault-injecting backend, as torchft's fault-injecting process group.
    plan = Injector([Fault(1, 2), Fault(3, STEPS - 1)])
    result = trainer(backend=plan, observers=[plan]).run()
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values())
    assert {g for g, step in result.rollbacks if step == 2} == {0, 2, 3}
    assert {g for g, step in result.rollbacks if step == STEPS - 1} == {0, 1, 2}
    assert all(s.members == (0, 1, 2, 3) and not s.events for s in result.steps)
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_stalled_worker_is_dropped_and_stands_down() -> None:
    # SIGSTOP for longer than the heartbeat (1 s) and collective (3 s) timeouts: alive, but the
    # others agree a membership without it; on waking it finds itself dropped and exits.
    tr = trainer(collective_timeout=3.0)
    with PlannedFaults(tr, stalls=[Stall(2, 2, 6.0)]):
        result = tr.run()
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values())
    ((dead, step, status),) = events(result)
    assert dead == (2,) and step in (2, 3) and status == "OK"
    assert result.steps[-1].members == (0, 1, 3)
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_reported_depth_and_patch_equal_controller_decisions() -> None:
    # Two failures at different steps, no wipe-out (0 and 2 share no type under cyclic(4, 2)).
    result = run_with("2@1", "0@3")
    assert result.restarts == 0
    ctl = Controller(LAYOUT)
    seen = []
    for s in result.steps:
        assert s.depth == ctl.depth
        for e in s.events:
            d = ctl.fail(list(e.dead))
            seen.append(e.dead)
            assert d.status is Status.OK and e.status == "OK"
            assert (e.depth, e.phase, e.moves) == (d.depth, d.phase, d.moves)
            assert sorted(e.patch) == sorted(map(tuple, d.patch.tolist()))
            assert sorted(e.patch_computed) == sorted(e.patch)
        assert s.members == tuple(np.flatnonzero(ctl.alive))
        # Every type counted exactly once, each by a group that holds it.
        types = sorted(t for g in s.members for t in s.computed[g])
        assert types == list(range(N_GROUPS))
        for g in s.members:
            assert set(s.computed[g]) <= set(LAYOUT.stacks[g].tolist())
        if not s.events:  # a step without events computes exactly the decision's assignment
            for g in s.members:
                assert sorted(s.computed[g]) == np.flatnonzero(ctl.assignment == g).tolist()
                assert len(s.computed[g]) <= ctl.depth
    assert seen == [(2,), (0,)]
    assert result.steps[-1].depth == 2
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_deprecated_kills_and_faults_arguments_run_through_the_testing_package() -> None:
    # kills= is sent from outside (PlannedFaults), faults= becomes the fault-injecting backend
    # of each group's first process: group 3 sees step 4's completed all-reduce as failed, so
    # the other members (group 1 died in step 2) undo that step and all redo it.
    tr = trainer()
    with pytest.warns(DeprecationWarning, match="PlannedFaults"):
        result = tr.run([Kill(1, 2)], faults=[Fault(3, 4)])
    assert result.exit_codes[1] == [-signal.SIGKILL]
    assert {g for g, step in result.rollbacks if step == 4} == {0, 2}
    assert max_rel_diff(result.params, REFERENCE) <= 1e-10


def test_transformer_with_dropout_adamw_and_schedule_equals_failure_free_run() -> None:
    spec = TrainSpec(
        tiny.build_transformer,
        tiny.make_adamw,
        tiny.token_loss,
        tiny.token_shard,
        steps=5,
        checkpoint_every=2,
        scheduler=tiny.make_cosine,
        seed=17,
    )
    layout = Layout.cyclic(4, 2)
    ref = reference_params(spec, 4)
    # Without the (seed, step, type) keying the reference itself would differ from a plain
    # run with one global generator: the masks are what this test is about.
    assert max_rel_diff(ref, reference_params(TrainSpec(**{**spec.__dict__, "seed": 18}), 4)) > 1e-6
    tr = SpareTrainer(spec, layout, heartbeat_timeout=1.0, bucket_numel=2048)
    # 5104 parameters in buckets of 2048; group 1 dies in step 1, group 3 (its types moved to
    # other groups, who draw the same masks) in step 3's all-reduce.
    with PlannedFaults(tr, [Kill(1, 1), Kill(3, 3, "allreduce")]):
        result = tr.run()
    assert result.restarts == 0 and result.steps[-1].members == (0, 2)
    assert max_rel_diff(result.params, ref) <= 1e-10


def test_batchnorm_running_statistics_are_reduced_over_the_types() -> None:
    spec = TrainSpec(tiny.build_bn_mlp, mlp.make_sgd, mlp.mse_loss, tiny.bn_shard, 5, 2)
    ref = reference_params(spec, N_GROUPS)
    # The policy: running stats = start + mean over the N types of each type's change, and
    # num_batches_tracked grows by one per step (not by N, not by the types a group computed).
    assert int(ref["1.num_batches_tracked"]) == spec.steps
    lowest_only = reference_params(spec, 1)  # what keeping one type's statistics would give
    assert max_rel_diff(lowest_only, ref) > 1e-3
    tr = SpareTrainer(spec, LAYOUT, heartbeat_timeout=1.0)
    with PlannedFaults(tr, [Kill(0, 2)]):
        result = tr.run()
    assert result.steps[-1].members == (1, 2, 3)
    assert max_rel_diff(result.params, ref) <= 1e-10
    assert torch.equal(result.params["1.num_batches_tracked"], ref["1.num_batches_tracked"])


def test_parse_kill_and_validation() -> None:
    assert parse_kill("3@7") == Kill(3, 7, "compute")
    assert parse_kill("0@2:allreduce") == Kill(0, 2, "allreduce")
    for bad in ("3", "a@1", "1@", "1@2:later"):
        with pytest.raises(ValueError, match="kill|phase"):
            parse_kill(bad)
    with pytest.raises(ValueError, match="steps = 0"):
        TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 0)
    with pytest.raises(TypeError, match="shard"):
        TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, None, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scheduler"):
        TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 3, 2, 5)  # type: ignore[arg-type]


def test_trainer_defaults_and_rejects_bad_arguments() -> None:
    # A real job's defaults: no wall-clock limit, DDP's 25 MiB bucket (chosen in the worker
    # from the parameter dtype when bucket_numel is None).
    plain = SpareTrainer(SPEC, LAYOUT)
    assert plain.run_timeout is None and plain.bucket_numel is None
    with pytest.raises(TypeError, match="layout"):
        SpareTrainer(SPEC, LAYOUT.stacks)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="collective_timeout"):
        SpareTrainer(SPEC, LAYOUT, collective_timeout=0)
    with pytest.raises(ValueError, match="max_start_failures"):
        SpareTrainer(SPEC, LAYOUT, max_start_failures=0)
    with pytest.raises(ValueError, match="kill group = 4"):
        plain.run([Kill(4, 1)])
    with pytest.raises(ValueError, match="kill step = 6"):
        plain.run([Kill(1, 6)])
    with pytest.raises(ValueError, match="fault group = 4"):
        plain.run(faults=[Fault(4, 0)])
    with pytest.raises(TypeError, match="is not a Fault"):
        plain.run(faults=[Kill(1, 1)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="resume=True needs the run_dir"):
        plain.run(resume=True)


def test_reference_is_not_trivially_equal() -> None:
    # The comparison can fail: dropping one type's gradient for a step changes the parameters.
    short = reference_params(SPEC, N_GROUPS - 1)
    assert max_rel_diff(short, REFERENCE) > 1e-3
    # And the reference is the plain data-parallel update: (1/N) * sum of the type gradients.
    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())
    for step in range(STEPS):
        model.zero_grad()
        loss = sum(
            mlp.mse_loss(model(x), y)
            for x, y in map(lambda t: mlp.synthetic_shard(step, t), range(N_GROUPS))
        )
        (loss / N_GROUPS).backward()
        optim.step()
    assert max_rel_diff(dict(model.state_dict()), REFERENCE) <= 1e-12
