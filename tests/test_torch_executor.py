"""The PyTorch executor: real worker processes on CPU, gloo collectives, SIGKILLed workers.

Every run is checked against an independent single-process reference that sums the N per-type
gradients of each step directly (no executor code involved), and the reported decisions are
replayed on a separate Controller.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if importlib.util.find_spec("torchft") is None:  # not imported here: see SpareTrainer (RUST_LOG)
    pytest.skip("torchft is not installed", allow_module_level=True)

from spare_fast import Controller, Layout, Status  # noqa: E402
from spare_fast.torch import (  # noqa: E402
    Fault,
    Kill,
    RunResult,
    SpareTrainer,
    Stall,
    TrainSpec,
    mlp,
    parse_kill,
)

N_GROUPS, REDUNDANCY, STEPS = 4, 2, 6
LAYOUT = Layout.cyclic(N_GROUPS, REDUNDANCY)
SPEC = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS, 2)


def reference_params(steps: int = STEPS, n_types: int = N_GROUPS) -> dict[str, torch.Tensor]:
    """Failure-free data-parallel SGD in one process: (1/N) * sum of the N type gradients."""
    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())
    params = list(model.parameters())
    for step in range(steps):
        total = [torch.zeros_like(p) for p in params]
        for t in range(n_types):
            model.zero_grad()
            x, y = mlp.synthetic_shard(step, t)
            mlp.mse_loss(model(x), y).backward()
            for acc, p in zip(total, params, strict=True):
                acc += p.grad
        for acc, p in zip(total, params, strict=True):
            p.grad = acc / n_types
        optim.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def max_rel_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max(float(((a[k] - b[k]).abs() / b[k].abs()).max()) for k in b)


def run(*kills: str) -> RunResult:
    return SpareTrainer(SPEC, LAYOUT).run([parse_kill(k) for k in kills])


def test_kill_one_worker_mid_run_survivors_finish_with_failure_free_params() -> None:
    result = run("2@3")
    assert result.restarts == 0
    # Nobody was restarted or replaced: one process per group for the whole run.
    assert all(len(pids) == 1 for pids in result.pids.values())
    assert [s.members for s in result.steps] == [(0, 1, 2, 3)] * 3 + [(0, 1, 3)] * 3
    assert [len(s.events) for s in result.steps] == [0, 0, 0, 1, 0, 0]
    assert result.params["0.weight"].dtype == torch.float64
    assert max_rel_diff(result.params, reference_params()) <= 1e-10


def test_wipeout_restarts_from_checkpoint_with_failure_free_params() -> None:
    # Under cyclic(4, 2), groups 0 and 1 are the only holders of type 1.
    assert set(np.flatnonzero((LAYOUT.stacks == 1).any(axis=1))) == {0, 1}
    result = run("0@3", "1@3")
    assert result.restarts == 1
    # The lighthouse may report both deaths in one quorum or one after the other; the last
    # event of the step is the wipe-out either way.
    (wipe,) = result.wipeouts
    assert wipe.status == "WIPEOUT" and wipe.step == 3
    assert set(wipe.dead) <= {0, 1} and wipe.dead
    # New processes for the dead groups only; the survivors went through the restart alive.
    assert [len(result.pids[g]) for g in range(N_GROUPS)] == [2, 2, 1, 1]
    # checkpoint_every = 2: the last checkpoint before step 3 is after step 1, so steps 2..5
    # are redone by all four groups at depth 1 after the restart.
    assert [s.epoch for s in result.steps] == [0, 0, 1, 1, 1, 1]
    assert all(s.members == (0, 1, 2, 3) and s.depth == 1 for s in result.steps[2:])
    assert max_rel_diff(result.params, reference_params()) <= 1e-10


def test_kill_during_allreduce_is_masked() -> None:
    result = run("1@2:allreduce")
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values())
    events = [e for s in result.steps for e in s.events]
    assert [(e.dead, e.step, e.status) for e in events] == [((1,), 2, "OK")]
    assert result.steps[2].members == (0, 2, 3)
    assert max_rel_diff(result.params, reference_params()) <= 1e-10


def test_spurious_collective_error_rolls_members_back_one_step() -> None:
    # Group 1 sees step 2's completed all-reduce as failed, group 3 the last step's: the other
    # members have committed the step and must undo it so that all redo it together.
    result = SpareTrainer(SPEC, LAYOUT).run(faults=[Fault(1, 2), Fault(3, STEPS - 1)])
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values())
    assert {g for g, step in result.rollbacks if step == 2} == {0, 2, 3}
    assert {g for g, step in result.rollbacks if step == STEPS - 1} == {0, 1, 2}
    assert all(s.members == (0, 1, 2, 3) and not s.events for s in result.steps)
    assert max_rel_diff(result.params, reference_params()) <= 1e-10


def test_stalled_worker_is_dropped_and_stands_down() -> None:
    # SIGSTOP for longer than the heartbeat (2 s) and collective (3 s) timeouts: alive, but the
    # others agree a membership without it; on waking it finds itself dropped and exits.
    trainer = SpareTrainer(SPEC, LAYOUT, collective_timeout=3.0)
    result = trainer.run(faults=[Stall(2, 2, 6.0)])
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values())
    events = [e for s in result.steps for e in s.events]
    assert [(e.dead, e.step, e.status) for e in events] == [((2,), 2, "OK")]
    assert result.steps[-1].members == (0, 1, 3)
    assert max_rel_diff(result.params, reference_params()) <= 1e-10


def test_reported_depth_and_patch_equal_controller_decisions() -> None:
    # Two failures at different steps, no wipe-out (0 and 2 share no type under cyclic(4, 2)).
    result = run("2@1", "0@3")
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
    assert [s.depth for s in result.steps] == [1, 1, 2, 2, 2, 2]
    assert max_rel_diff(result.params, reference_params()) <= 1e-10


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


def test_trainer_rejects_bad_layout_and_kills() -> None:
    with pytest.raises(TypeError, match="layout"):
        SpareTrainer(SPEC, LAYOUT.stacks)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="collective_timeout"):
        SpareTrainer(SPEC, LAYOUT, collective_timeout=0)
    trainer = SpareTrainer(SPEC, LAYOUT)
    with pytest.raises(ValueError, match="kill group = 4"):
        trainer.run([Kill(4, 1)])
    with pytest.raises(ValueError, match="kill step = 6"):
        trainer.run([Kill(1, 6)])
    with pytest.raises(ValueError, match="fault group = 4"):
        trainer.run(faults=[Fault(4, 0)])
    with pytest.raises(TypeError, match="is not a Fault"):
        trainer.run(faults=[Kill(1, 1)])  # type: ignore[list-item]


def test_reference_is_not_trivially_equal() -> None:
    # The comparison can fail: dropping one type's gradient for a step changes the parameters.
    ref = reference_params()
    short = reference_params(n_types=N_GROUPS - 1)
    assert max_rel_diff(short, ref) > 1e-3
