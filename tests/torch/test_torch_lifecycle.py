"""Checkpoints, resume after the launcher dies, restarts that fail, and what a run leaves behind.

Launchers that must die are separate Python processes started here; the test then looks at
their worker PIDs (from the per-process record files) and at the folders they used.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch
from _torch_harness import (
    FailingIn,
    PlannedFaults,
    Watcher,
    alive_pids,
    max_rel_diff,
    reference_params,
    slow_shard,
)

import spare_fast
from spare_fast import Layout
from spare_fast.torch import (
    CheckpointError,
    Kill,
    Phase,
    SpareTrainer,
    TrainSpec,
    WorkerState,
    mlp,
)
from spare_fast.torch._checkpoint import Checkpoints

# The folder that holds the spare_fast this process imports (site-packages when installed, the
# source tree with an in-place build in development): the launcher subprocess imports the same.
PACKAGE_HOME = Path(spare_fast.__file__).resolve().parents[1]
LAYOUT = Layout.cyclic(4, 2)
SPEC = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 6, 2)
SLOW = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, slow_shard, 14, 2)
FAST = {"heartbeat_timeout": 1.0, "collective_timeout": 5.0}

# A launcher in its own process: trains SLOW (about 14 * 2 * 20 ms of shard pauses; argv[2]
# steps instead of 14 when given), with run_dir given as argv[1] or a temporary folder when
# argv[1] is "-".
LAUNCHER = """
import functools
import signal
import sys
from spare_fast import Layout
# Ctrl-C raises KeyboardInterrupt, as in a foreground terminal. A test run started in the
# background (`cmd &`) starts its children with SIGINT ignored, and Python keeps it so.
signal.signal(signal.SIGINT, signal.default_int_handler)
from spare_fast.torch import SpareTrainer, TrainSpec, mlp
slow_shard = functools.partial(mlp.paused_shard, 0.02)
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 14
spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, slow_shard, steps, 2)
run_dir = None if sys.argv[1] == "-" else sys.argv[1]
SpareTrainer(spec, Layout.cyclic(4, 2), heartbeat_timeout=1.0).run(run_dir=run_dir)
print("finished")
"""


def start_launcher(run_dir: str, tmp: Path, steps: int = 14) -> subprocess.Popen[bytes]:
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(PACKAGE_HOME))
    cmd = [sys.executable, "-c", LAUNCHER, run_dir, str(steps)]
    return subprocess.Popen(cmd, env=env, cwd=str(tmp))


def worker_pids(folder: Path) -> list[int]:
    return [int(p.stem.partition("-p")[2]) for p in folder.glob("g*-p*.jsonl")]


def wait_for(predicate: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.05)


def descendants(pid: int) -> list[int]:
    """All live descendants of ``pid`` (fork server, resource tracker, workers)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                    parents[int(entry)] = int(fh.read().rpartition(")")[2].split()[1])
            except (FileNotFoundError, ProcessLookupError, ValueError):
                continue
    out, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out.extend(kids)
        frontier.extend(kids)
    return out


# ---------------------------------------------------------------------- checkpoint files
def test_checkpoint_round_trip_keeps_the_newest_and_rejects_a_corrupt_file(tmp_path: Path) -> None:
    ck = Checkpoints(str(tmp_path / "c"), keep=2)
    for step in (0, 2, 4):
        ck.save(step, {"step": step, "w": torch.full((3,), float(step))})
    assert ck.steps() == [4, 2]  # keep=2: the oldest was removed
    assert torch.equal(Checkpoints.load(ck.path(4))["w"], torch.full((3,), 4.0))
    raw = bytearray(Path(ck.path(4)).read_bytes())
    raw[-5] ^= 0xFF
    Path(ck.path(4)).write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=r"ckpt-00000004.pt is corrupt: SHA-256"):
        Checkpoints.load(ck.path(4))
    path, rejected = ck.newest_valid()
    assert path == ck.path(2)
    assert [p for p, _ in rejected] == [ck.path(4)]
    Path(ck.path(2)).write_bytes(b"not a checkpoint")
    assert ck.newest_valid()[0] is None


def test_checkpoint_write_is_atomic_and_partial_files_are_removed(tmp_path: Path) -> None:
    ck = Checkpoints(str(tmp_path))
    ck.save(2, {"step": 2})
    # A writer killed mid-write leaves only its temporary file, never a torn ckpt-*.pt.
    partial = tmp_path / ".ckpt-00000004.pt.tmp-12345"
    partial.write_bytes(b"SPARE-FAST-CHECKPOINT-1\nhalf")
    assert ck.steps() == [2]
    ck.remove_partial()
    assert not partial.exists()
    assert sorted(os.listdir(tmp_path)) == ["ckpt-00000002.pt"]


# ---------------------------------------------------------------------- resume
def test_resume_after_the_launcher_is_killed_uses_the_previous_checkpoint_if_the_newest_is_corrupt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run_dir = tmp_path / "run"
    proc = start_launcher(str(run_dir), tmp_path)
    ck = Checkpoints(str(run_dir / "checkpoints"))
    try:
        wait_for(lambda: len(ck.steps()) >= 3, 120, "three checkpoints")
    finally:
        proc.kill()
        proc.wait()
    pids = worker_pids(run_dir)
    assert len(pids) == 4
    # Orphaned workers notice their launcher is gone and leave (within a heartbeat period).
    wait_for(lambda: not alive_pids(pids), 20, "the orphaned workers to exit")
    newest, previous = ck.steps()[:2]
    raw = bytearray(Path(ck.path(newest)).read_bytes())
    raw[len(raw) // 2] ^= 0x55
    Path(ck.path(newest)).write_bytes(bytes(raw))

    with pytest.raises(ValueError, match="already holds a run"):
        SpareTrainer(SLOW, LAYOUT, **FAST).run(run_dir=str(run_dir))
    with caplog.at_level(logging.WARNING, logger="spare_fast.torch"):
        result = SpareTrainer(SLOW, LAYOUT, **FAST).run(run_dir=str(run_dir), resume=True)
    assert result.resumed_from == previous
    assert [p for p, _ in result.rejected_checkpoints] == [ck.path(newest)]
    assert "is corrupt" in result.rejected_checkpoints[0][1]
    assert f"ckpt-{newest:08d}.pt" in caplog.text and "falling back" in caplog.text
    # The records of both launchers together cover every step once.
    assert [s.step for s in result.steps] == list(range(SLOW.steps))
    assert max_rel_diff(result.params, reference_params(SLOW, 4)) <= 1e-10
    assert not alive_pids(p for ps in result.pids.values() for p in ps)


def test_resume_without_a_valid_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "ckpt-00000002.pt").write_bytes(b"garbage")
    with pytest.raises(FileNotFoundError, match="(?s)no valid checkpoint.*no spare_fast header"):
        SpareTrainer(SPEC, LAYOUT).run(run_dir=str(tmp_path), resume=True)


# ---------------------------------------------------------------------- restarts that fail
def test_death_during_a_restart_is_replaced_again() -> None:
    class DuringRestart(Watcher):
        """Kill group 0's replacement as soon as it reports epoch 1 (it is forming)."""

        def tick(self, states: dict[int, WorkerState]) -> None:
            s = states.get(0)
            if (
                not self.sent
                and s is not None
                and s.epoch == 1
                and s.pid != self.first_pid[0]
                and s.phase in (Phase.STARTING, Phase.JOIN)
            ):
                self.send(s, signal.SIGKILL)

    tr = SpareTrainer(SPEC, LAYOUT, **FAST)
    with PlannedFaults(tr, [Kill(0, 3), Kill(1, 3)]), DuringRestart(tr) as again:
        result = tr.run()
    assert len(again.sent) == 1
    assert result.restarts >= 1
    # Either it died before epoch 1 formed (the launcher replaced it: a third process) or just
    # after (the survivors masked it): the run finishes with the failure-free weights anyway.
    masked = any(0 in e.dead for s in result.steps if s.epoch >= 1 for e in s.events)
    assert len(result.pids[0]) == 3 or masked
    assert max_rel_diff(result.params, reference_params(SPEC, 4)) <= 1e-10


def test_a_group_that_keeps_crashing_at_start_gives_up_naming_it(tmp_path: Path) -> None:
    tempfile.tempdir = str(tmp_path)  # restored below; the run's temporary folder lands here
    try:
        spec = TrainSpec(
            FailingIn(1, mlp.build_mlp), mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 4, 2
        )
        tr = SpareTrainer(spec, LAYOUT, max_start_failures=3, **FAST)
        with pytest.raises(
            RuntimeError,
            match=r"group 1: 3 worker processes in a row ended "
            r"before epoch 0 formed \(exit code 1.*model builder fails in group 1",
        ):
            tr.run()
    finally:
        tempfile.tempdir = None
    assert run_folders(tmp_path) == []  # the failed run removed its temporary folder
    # What stays under this process is multiprocessing's machinery, no worker.
    assert [p for p in alive_pids(descendants(os.getpid())) if not helper(p)] == []


def run_folders(tmp: Path, own_fork_server: bool = True) -> list[str]:
    """Entries in ``tmp`` that a run left, ignoring torch's compile cache ``torchinductor_<user>``
    (which any ``torch.optim`` optimizer creates, with or without spare_fast) and, when this
    test process holds the fork server, multiprocessing's ``pymp-*`` folder (it belongs to the
    fork server, kept for the session; a launcher process removes it when it exits)."""
    keep = ("torchinductor_", "pymp-") if own_fork_server else ("torchinductor_",)
    return [name for name in os.listdir(tmp) if not name.startswith(keep)]


def helper(pid: int) -> bool:
    """The fork server or the resource tracker (kept for the session by multiprocessing)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read()
    except FileNotFoundError:
        return True
    return b"forkserver" in cmd or b"resource_tracker" in cmd


# ---------------------------------------------------------------------- nothing left behind
def test_successful_run_leaves_no_process_and_no_temporary_folder(tmp_path: Path) -> None:
    tempfile.tempdir = str(tmp_path)
    try:
        result = SpareTrainer(SPEC, LAYOUT, **FAST).run()
    finally:
        tempfile.tempdir = None
    assert run_folders(tmp_path) == []
    assert alive_pids(p for ps in result.pids.values() for p in ps) == []
    assert [p for p in alive_pids(descendants(os.getpid())) if not helper(p)] == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_launcher_stopped_by_signal_leaves_nothing_behind(
    sig: signal.Signals, tmp_path: Path
) -> None:
    # Steps enough that the run is still on when the signal comes, however fast the steps and
    # however slowly this process, on a loaded machine, gets from the first step to the signal
    # (80 steps once finished first there). The signal ends the run, so they cost no time.
    proc = start_launcher("-", tmp_path, steps=2_000)
    try:

        def training() -> bool:
            runs = [p for p in tmp_path.iterdir() if p.name.startswith("spare_fast_run_")]
            return bool(runs) and any(f.stat().st_size > 0 for f in runs[0].glob("g*-p*.jsonl"))

        wait_for(training, 120, "the launcher to start training")
        (run,) = [p for p in tmp_path.iterdir() if p.name.startswith("spare_fast_run_")]
        pids = worker_pids(run)
        family = descendants(proc.pid)
        assert set(pids) <= set(family)
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code != 0
    if sig == signal.SIGTERM:
        assert code == 128 + signal.SIGTERM  # the run's cleanup ran, then it exited as SIGTERM asks
    assert alive_pids(pids) == []  # the launcher killed and reaped its workers
    # The fork server and multiprocessing's resource tracker follow their parent out.
    wait_for(lambda: not alive_pids(family), 20, "the launcher's helper processes to exit")
    assert run_folders(tmp_path, own_fork_server=False) == []
