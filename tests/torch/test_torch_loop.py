"""SpareGroup in the user's own loop: rejoin and heal from a peer, deaths around a heal.

Every run is real processes (forks of a fork server), a torchft lighthouse and a TCPStore in
this process, all on 127.0.0.2; kills are SIGKILL by PID from this process. Every finished
process's weights are compared with the failure-free single-process reference.
"""

from __future__ import annotations

import functools
import os

import pytest
import torch
from _torch_harness import (
    LOOP_LAYOUT,
    LOOP_STEPS,
    REPO_ROOT,
    LoopRun,
    gloo_backend,
    max_rel_diff,
    reference_params,
)

from spare_fast import Controller, Layout
from spare_fast.torch import Phase, ShardSampler, SpareGroup, TrainSpec, mlp

STEPS, LAYOUT = LOOP_STEPS, LOOP_LAYOUT


def _kill_and_replace(run: LoopRun, **slow: float) -> int:
    """Kill group 3 once it has committed step 2; start its replacement once the survivors
    have masked it (committed step 4). Returns the replacement's slot once it is admitted.
    ``slow``: the replacement's ``slow_heal`` or ``slow_first_compute`` (``LoopRun.start``).

    Admission comes a few steps after the replacement announces itself; at the run's own
    pace (50 ms steps) a slow start on a loaded machine could leave it none, so the steps
    last 0.5 s until then.
    """
    run.wait(lambda: run.state(3)[1] >= 2)
    run.kill(3)
    run.wait(lambda: min(run.state(s)[1] for s in range(3)) >= 4)
    with run.paced(0.5):
        new = run.start(3, **slow)
        run.wait(lambda: run.state(new)[2] not in (Phase.STARTING, Phase.JOIN))
    admitted = max(run.state(s)[1] for s in range(3))
    assert admitted < STEPS - 1, f"admitted after step {admitted}: no steps left to test"
    return new


def _check(run: LoopRun, finished: list[int], reference: dict[str, torch.Tensor]) -> list[dict]:
    codes = run.join()
    for slot in finished:
        assert codes[slot] == 0, f"slot {slot} (group {run.procs[slot][0]}) ended {codes[slot]}"
    events = None
    depths = set()
    for slot in finished:
        params, rec = run.result(slot)
        assert max_rel_diff(params, reference) <= 1e-10, f"slot {slot} differs from the reference"
        events = rec["events"] if events is None else events
        depths.add(rec["depth"])
    assert events is not None
    assert len(depths) == 1, f"the finished processes disagree on the depth: {depths}"
    return events


def _expected(calls: list[tuple[str, list[int]]]) -> list[int]:
    ctl = Controller(LAYOUT)
    return [int((ctl.fail if k == "fail" else ctl.rejoin)(g).depth) for k, g in calls]


def test_replacement_rejoins_heals_from_a_peer_and_the_depth_falls(tmp_path, mlp_reference) -> None:
    with LoopRun(LAYOUT, STEPS, str(tmp_path)) as run:
        for g in range(4):
            run.start(g)
        new = _kill_and_replace(run)
        events = _check(run, [0, 1, 2, new], mlp_reference)
    # The survivors saw the death (depth up) and the rejoin (depth back down), as a separate
    # controller replaying the two calls decides; the rejoin came mid-run, at a step boundary.
    assert [tuple(e["dead"]) for e in events] == [(3,), ()]
    assert [e["depth"] for e in events] == _expected([("fail", [3]), ("rejoin", [3])]) == [2, 1]
    assert 4 <= events[1]["step"] < STEPS


def test_death_of_the_heal_source_during_the_heal(tmp_path, mlp_reference) -> None:
    with LoopRun(LAYOUT, STEPS, str(tmp_path)) as run:
        for g in range(4):
            run.start(g, slow_heal=1.5)
        new = _kill_and_replace(run, slow_heal=1.5)
        # Group 0, the lowest member with the state, is the source: kill it while it sends.
        run.wait(lambda: run.state(0)[2] == Phase.HEAL)
        run.kill(0)
        events = _check(run, [1, 2, new], mlp_reference)
    assert [tuple(e["dead"]) for e in events] == [(3,), (), (0,)]
    calls = [("fail", [3]), ("rejoin", [3]), ("fail", [0])]
    assert [e["depth"] for e in events] == _expected(calls)


def test_second_failure_right_after_a_rejoin(tmp_path, mlp_reference) -> None:
    # Also the pluggable backend: every process group comes from a user factory.
    backend = functools.partial(gloo_backend, host="127.0.0.2")
    with LoopRun(LAYOUT, STEPS, str(tmp_path), backend=backend) as run:
        for g in range(4):
            run.start(g)
        # The replacement's first step of computing, held 2 s (the survivors wait for it in the
        # all-reduce) so that the poll sees it on a loaded machine: kill a survivor there.
        new = _kill_and_replace(run, slow_first_compute=2.0)
        run.wait(lambda: run.state(new)[2] == Phase.COMPUTE)
        run.kill(1)
        events = _check(run, [0, 2, new], mlp_reference)
    assert [tuple(e["dead"]) for e in events] == [(3,), (), (1,)]
    calls = [("fail", [3]), ("rejoin", [3]), ("fail", [1])]
    assert [e["depth"] for e in events] == _expected(calls) == [2, 1, 2]
    assert events[2]["patch_computed"], "the killed group's types were recomputed in-step"
    _, rec = run.result(new)
    assert rec["groups_built"] and {size for _, size in rec["groups_built"]} <= {3, 4}


def test_shard_sampler_maps_step_and_type_to_the_stream_of_shuffled_passes() -> None:
    n_types, batch, length = 3, 4, 10
    sampler = ShardSampler(length, n_types, batch, seed=5)
    # Independent form: the concatenation of one seeded permutation per pass, cut in slices.
    stream = torch.cat(
        [torch.randperm(length, generator=torch.Generator().manual_seed(5 + k)) for k in range(8)]
    ).tolist()
    for step in range(5):
        for t in range(n_types):
            q = (step * n_types + t) * batch
            assert sampler.indices(step, t) == stream[q : q + batch]
    # Every pass visits each index once; the same (step, type) gives the same indices always.
    assert sorted(stream[:length]) == list(range(length))
    assert ShardSampler(length, n_types, batch, seed=5).indices(3, 2) == sampler.indices(3, 2)
    assert ShardSampler(length, n_types, batch, seed=6).indices(3, 2) != sampler.indices(3, 2)


def test_shard_sampler_drives_an_unchanged_dataloader() -> None:
    data = torch.utils.data.TensorDataset(torch.arange(20) * 10)
    sampler = ShardSampler(data, n_types=2, batch_size=3, shuffle=False)
    loader = torch.utils.data.DataLoader(data, batch_size=3, sampler=sampler)
    sampler.select(4, 1)
    (batch,) = next(iter(loader))
    assert batch.tolist() == [10 * i for i in sampler.indices(4, 1)] == [70, 80, 90]
    assert len(sampler) == 3
    with pytest.raises(ValueError, match="shard_type = 2"):
        sampler.select(0, 2)
    (again,) = next(iter(loader))  # the rejected select left the selection unchanged
    assert again.tolist() == [70, 80, 90]
    with pytest.raises(ValueError, match="empty"):
        ShardSampler([], 2, 3)
    with pytest.raises(RuntimeError, match="select"):
        iter(ShardSampler(5, 1, 1))


def test_spare_group_rejects_bad_arguments(monkeypatch) -> None:
    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())
    ok = dict(group=0, lighthouse="http://127.0.0.2:1", store="127.0.0.2:2")
    for env in ("REPLICA_GROUP_ID", "SPARE_FAST_GROUP", "TORCHFT_LIGHTHOUSE", "SPARE_FAST_STORE"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(ValueError, match="group = 4"):
        SpareGroup(model, optim, LAYOUT, 3, **{**ok, "group": 4})
    with pytest.raises(ValueError, match="REPLICA_GROUP_ID"):
        SpareGroup(model, optim, LAYOUT, 3, **{**ok, "group": None})
    monkeypatch.setenv("REPLICA_GROUP_ID", "2")
    assert SpareGroup(model, optim, LAYOUT, 3, **{**ok, "group": None}).group == 2
    with pytest.raises(ValueError, match="store = '127.0.0.2'"):
        SpareGroup(model, optim, LAYOUT, 3, **{**ok, "store": "127.0.0.2"})
    with pytest.raises(ValueError, match="SPARE_FAST_STORE"):
        SpareGroup(model, optim, LAYOUT, 3, **{**ok, "store": None})
    with pytest.raises(TypeError, match="backend = 'nccl'"):
        SpareGroup(model, optim, LAYOUT, 3, **ok, backend="nccl")
    with pytest.raises(TypeError, match="optimizer"):
        SpareGroup(model, "sgd", LAYOUT, 3, **ok)  # type: ignore[arg-type]
    group = SpareGroup(model, optim, LAYOUT, 3, **ok)
    with pytest.raises(RuntimeError, match="start"):
        group.reduce(lambda s, t: torch.zeros(()))
    with pytest.raises(RuntimeError, match="reduce"):
        group.step_end()
    assert group.types_for_step() == [0] and group.depth == 1 and group.step == 0


@pytest.mark.parametrize(
    ("bind", "message"),
    [
        ("127.0.0.2", "is not HOST:PORT"),
        ("127.0.0.2:70000", "is not HOST:PORT"),
        ("somehost:29510", "host 'somehost' is not an IP address"),
    ],
)
def test_lighthouse_command_rejects_a_bad_bind_in_one_line(bind, message, capsys) -> None:
    from spare_fast.cli import main

    with pytest.raises(SystemExit) as stop:  # argparse refuses it while parsing
        main(["lighthouse", "--bind", bind])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and repr(bind) in err


def test_lighthouse_command_serves_lighthouse_and_store_on_its_address(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    from datetime import timedelta

    from torchft.coordination import LighthouseClient

    root = REPO_ROOT
    env = {**os.environ, "PYTHONPATH": root, "RUST_LOG": "warn"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "spare_fast", "lighthouse", "--bind", "127.0.0.2:0"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        words = line.split()
        assert words[0] == "lighthouse" and words[2] == "store", line
        lighthouse, store = words[1], words[3]
        assert lighthouse.startswith("http://127.0.0.2:") and store.startswith("127.0.0.2:")
        client = torch.distributed.TCPStore("127.0.0.2", int(store.rsplit(":", 1)[1]))
        client.set("k", "v")
        assert client.get("k") == b"v"
        lh = LighthouseClient(addr=lighthouse, connect_timeout=timedelta(seconds=10))
        lh.heartbeat("probe", timeout=timedelta(seconds=5))
        quorum = lh.quorum(
            replica_id="probe", timeout=timedelta(seconds=10), step=0, data={"group": 0}
        )
        assert [m.replica_id for m in quorum.participants] == ["probe"]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        proc.stdout.close()  # type: ignore[union-attr]


def test_trainer_replaces_a_dead_group_after_a_repair_delay_and_it_rejoins() -> None:
    from spare_fast.torch import Kill, SpareTrainer
    from spare_fast.torch.testing import PlannedFaults, alive_pids

    steps = 16
    shard = functools.partial(mlp.paused_shard, 0.02)
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, shard, steps, 10)
    trainer = SpareTrainer(
        spec, LAYOUT, heartbeat_timeout=1.0, collective_timeout=5.0, rejoin_after=0.2
    )
    with PlannedFaults(trainer, [Kill(3, 2)]):
        result = trainer.run()
    assert not alive_pids(p for pids in result.pids.values() for p in pids)
    ref = reference_params(
        TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, steps), 4
    )
    assert max_rel_diff(result.params, ref) <= 1e-10
    assert result.restarts == 0 and result.exit_codes[3] == [-9, 0]
    assert len(result.rejoins) == 1 and result.rejoins[0][0] == 3
    back = result.rejoins[0][1]
    (death,) = [e for s in result.steps for e in s.events]
    # The death raised the depth to 2 in its step; the rejoin (after that step at the
    # earliest) brought it back to 1, and the rejoined group computes its type again.
    assert death.dead == (3,) and death.depth == 2 and back > death.step
    assert {s.depth for s in result.steps[back:]} == {1}
    assert all(s.members == (0, 1, 2, 3) for s in result.steps[back:])
    assert result.steps[-1].computed[3] == (3,)


def test_the_users_script_is_the_worker_main_defined_classes_included(tmp_path) -> None:
    """examples/train_transformer.py defines its model and loss in __main__ and imports its
    Dataset from its neighbour examples/noisy_counting.py."""
    import subprocess
    import sys

    root = REPO_ROOT
    script = os.path.join(root, "examples", "train_transformer.py")
    args = ["--groups", "2", "--redundancy", "2", "--steps", "3", "--dataset", "16"]
    with LoopRun(Layout.cyclic(2, 2), 3, str(tmp_path)) as run:
        env = {
            **os.environ,
            "PYTHONPATH": root,
            "TORCHFT_LIGHTHOUSE": run.lighthouse_addr,
            "SPARE_FAST_STORE": f"{run.host}:{run.store.port}",
            "SPARE_FAST_BIND": run.host,
        }
        procs = [
            subprocess.Popen(
                [sys.executable, script, *args, "--out", str(tmp_path / f"g{g}.pt")],
                env={**env, "REPLICA_GROUP_ID": str(g)},
                cwd=str(tmp_path),
                stdout=subprocess.DEVNULL,
            )
            for g in range(2)
        ]
        ref = subprocess.run(
            [sys.executable, script, *args, "--reference", "--out", str(tmp_path / "ref.pt")],
            env=env,
            cwd=str(tmp_path),
            stdout=subprocess.DEVNULL,
        )
        assert [p.wait(timeout=120) for p in procs] == [0, 0] and ref.returncode == 0
    expected = torch.load(tmp_path / "ref.pt", weights_only=True)
    for g in range(2):
        got = torch.load(tmp_path / f"g{g}.pt", weights_only=True)
        assert max_rel_diff(got, expected) <= 1e-10
