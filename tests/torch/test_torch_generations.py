"""SpareTrainer never runs two generations of workers at once, and survives its helpers.

The workers are children of multiprocessing's fork server, not of the launcher. These tests
kill that fork server (and the resource tracker) by PID mid-run, as the OOM killer might, and
check that the launcher still watches its workers by PID: the run finishes with the
failure-free weights, no group ever has two live processes, and nothing is left running.
"""

from __future__ import annotations

import functools
import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import signal
import threading
import time

from _torch_harness import Watcher, alive_pids, max_rel_diff, reference_params

from spare_fast import Layout
from spare_fast.torch import SpareTrainer, TrainSpec, WorkerState, mlp
from spare_fast.torch._procs import WorkerProcess, record_exit, recorded_exit

LAYOUT = Layout.cyclic(4, 2)
STEPS = 14
# About 14 * 2 * 20 ms of shard pauses per group; a checkpoint every 4 steps.
SLOW = TrainSpec(
    mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, functools.partial(mlp.paused_shard, 0.02), STEPS, 4
)
FAST = {"heartbeat_timeout": 1.0, "collective_timeout": 5.0}


def _helper_pids() -> dict[str, int]:
    out = {}
    server = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    if server._forkserver_pid is not None:
        out["forkserver"] = int(server._forkserver_pid)
    tracker = multiprocessing.resource_tracker._resource_tracker  # type: ignore[attr-defined]
    if getattr(tracker, "_pid", None) is not None:
        out["resource_tracker"] = int(tracker._pid)
    return out


class HelperKiller(Watcher):
    """Kills the fork server and the resource tracker by PID once a worker reports ``step``,
    then SIGKILLs the worker of ``victim`` at ``victim_step``. Samples every poll which of the
    run's processes are alive, to catch two live processes of one group."""

    def __init__(self, trainer: SpareTrainer, step: int, victim: int, victim_step: int) -> None:
        super().__init__(trainer)
        self.step, self.victim, self.victim_step = step, victim, victim_step
        self.killed: dict[str, int] = {}
        self.seen: dict[int, set[int]] = {}
        self.overlap: list[tuple[int, list[int]]] = []
        self.lock = threading.Lock()

    def tick(self, states: dict[int, WorkerState]) -> None:
        with self.lock:
            for g, s in states.items():
                if s.pid > 0:
                    self.seen.setdefault(g, set()).add(s.pid)
            for g, pids in self.seen.items():
                alive = alive_pids(pids)
                if len(alive) > 1:
                    self.overlap.append((g, alive))
        if not self.killed and any(s.step >= self.step for s in states.values()):
            for name, pid in _helper_pids().items():
                os.kill(pid, signal.SIGKILL)
                self.killed[name] = pid
        if self.killed and not self.sent:
            s = states.get(self.victim)
            if s is not None and s.step >= self.victim_step:
                self.send(s, signal.SIGKILL)


def test_fork_server_killed_mid_run_the_run_finishes_with_one_generation() -> None:
    reference = reference_params(SLOW, LAYOUT.n_types)
    trainer = SpareTrainer(SLOW, LAYOUT, **FAST)
    with HelperKiller(trainer, step=3, victim=2, victim_step=7) as killer:
        result = trainer.run()
    assert "forkserver" in killer.killed, "the test did not find the fork server"
    assert killer.sent, "the worker of group 2 was not killed"
    assert alive_pids(killer.killed.values()) == []
    # The launcher saw through the fork server's death: no restart, one process per group.
    assert result.restarts == 0
    assert all(len(pids) == 1 for pids in result.pids.values()), result.pids
    assert killer.overlap == []
    assert max_rel_diff(result.params, reference) <= 1e-10
    # Group 2's worker died after its fork server, by a signal: its status is lost, not 0.
    assert result.exit_codes[2] != [0]
    assert all(result.exit_codes[g] == [0] for g in (0, 1, 3)), result.exit_codes
    assert result.steps[-1].members == (0, 1, 3)
    every = [p for pids in result.pids.values() for p in pids]
    assert alive_pids(every) == []


def test_a_new_epoch_starts_only_once_every_old_process_is_gone() -> None:
    # Every group killed at once: a restart of all groups; the old processes are gone (by PID)
    # before any new one starts.
    reference = reference_params(SLOW, LAYOUT.n_types)
    trainer = SpareTrainer(SLOW, LAYOUT, **FAST)

    class KillAll(Watcher):
        def __init__(self) -> None:
            super().__init__(trainer)
            self.overlap: list[list[int]] = []
            self.seen: set[int] = set()

        def tick(self, states: dict[int, WorkerState]) -> None:
            self.seen |= {s.pid for s in states.values() if s.pid > 0}
            if len(alive_pids(self.seen)) > LAYOUT.n_groups:
                self.overlap.append(alive_pids(self.seen))
            if not self.sent and all(s.step >= 5 for s in states.values()):
                for s in states.values():
                    self.send(s, signal.SIGKILL)

    with KillAll() as killer:
        result = trainer.run()
    assert len(killer.sent) == LAYOUT.n_groups
    assert result.restarts == 1
    assert killer.overlap == []
    assert max_rel_diff(result.params, reference) <= 1e-10
    assert alive_pids(p for pids in result.pids.values() for p in pids) == []


def test_worker_process_watches_by_pid_and_reads_a_recorded_status(tmp_path) -> None:
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=time.sleep, args=(30,))
    proc.start()
    w = WorkerProcess(proc, 1, str(tmp_path))
    assert w.alive() and w.exitcode is None
    w.end(timeout=10)
    assert not w.alive() and w.exitcode == -signal.SIGKILL
    w.close()
    assert recorded_exit(str(tmp_path), 1, os.getpid()) is None
    record_exit(str(tmp_path), 1, 3)
    assert recorded_exit(str(tmp_path), 1, os.getpid()) == 3
