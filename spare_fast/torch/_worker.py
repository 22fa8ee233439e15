"""One worker process of :class:`~spare_fast.torch.SpareTrainer` = one SPARe group.

The worker is a user of the own-loop API: it builds the model, optimizer and scheduler from the
:class:`~spare_fast.torch.TrainSpec`, wraps them in a :class:`~spare_fast.torch.SpareGroup`
(with an observer that writes the launcher's progress reports and records; the worker
restarts it after a wipe-out) and runs the ordinary loop ``reduce -> optimizer.step ->
scheduler.step -> step_end``. What follows describes the protocol the group runs.

The loop of a worker, in the paper's words: at the start of a step it computes the gradient
sums of the types the current decision assigns to it (its top-``depth`` layers), then joins the
all-reduce of the alive groups. When the collective fails (a peer's socket closed, or the gloo
timeout ran out), it asks the torchft lighthouse for a new quorum, turns the agreed membership
change into a controller event, recomputes only the patch types that fell to it, rebuilds the
gloo process group over the survivors and retries the same step's all-reduce. Every survivor
runs the same deterministic controller on the same sequence of quorums, so all reach the same
decision without a coordinator.

Why a step can need a one-step rollback: a gloo all-reduce can complete on some ranks and
fail on others when a peer dies inside it. A survivor that completed step ``s`` then fails in
step ``s + 1``; the quorum carries each member's committed step count, and members that are
one step ahead restore the state they kept from before step ``s``'s update (parameters,
buffers, optimizer and scheduler state and their step-``s`` partial sum) so that all redo
step ``s``.

An epoch (the first start, or the restart after a wipe-out) begins with a join: every group's
current process asks the lighthouse for quorums until one holds all N groups; that quorum's
members are published in the store as the epoch's formation. A process that dies before it is
replaced by the launcher; a death after it is a failure like any other, handled by the
survivors. A replacement that finds the epoch formed without it is not needed and leaves.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for
from typing import Any

import numpy as np
import torch

from spare_fast.layout import Layout
from spare_fast.torch._errors import Excluded, RunFinished, Unneeded, WipeOutError
from spare_fast.torch._group import SpareGroup
from spare_fast.torch._observer import Observer
from spare_fast.torch._procs import record_exit
from spare_fast.torch._types import Phase, TrainSpec

#: Exit code of a worker that found itself dropped from the membership (a false death).
EXIT_EXCLUDED = 3
#: Exit code of a replacement that found its epoch formed without it: not a failure.
EXIT_UNNEEDED = 4
#: Slots per group in the shared progress array: pid, epoch, step, phase, bucket.
PROGRESS_SLOTS = 5

FINAL = "final-g{group}.pt"


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker process needs (pickled to it by the launcher)."""

    group: int
    epoch: int
    checkpoint: str | None  # the file to start from; None: fresh weights from spec.model()
    spec: TrainSpec
    stacks: list[list[int]]
    store_port: int
    lighthouse_addr: str
    run_dir: str
    checkpoint_dir: str
    collective_timeout: float
    bucket_numel: int | None
    heartbeat_interval: float
    quorum_timeout: float
    quorum_poll: float
    verbose: bool
    rejoin: bool = False  # a replacement for a group that died in a formed epoch
    backend: Any = "gloo"  # the collective backend (SpareGroup's ``backend``)
    observers: tuple[Any, ...] = ()  # more observers of the worker's group (picklable)
    ordered_sum: bool = False  # SpareGroup's ``ordered_sum``


def main(cfg: WorkerConfig, progress: Any) -> None:
    """Entry point of a worker process (started by the launcher's forkserver context).

    Args:
        cfg: The worker's configuration.
        progress: The launcher's shared ``int64`` array; this worker writes its group's
            :data:`PROGRESS_SLOTS` slots (pid, epoch, step, phase, bucket).
    """
    # One thread per worker: the workers share the cores, and the sums stay deterministic.
    torch.set_num_threads(1)
    code = 0
    try:
        _run(cfg, progress)
    except Excluded as exc:
        print(f"group {cfg.group} stands down: {exc}", file=sys.stderr, flush=True)
        code = EXIT_EXCLUDED
    except (Unneeded, RunFinished):
        code = EXIT_UNNEEDED
    except BaseException as exc:  # noqa: BLE001 - reported here, then the process ends with code 1
        traceback.print_exc()
        _record_error(cfg, exc)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # The launcher reads the status from here when the fork server that reaps this process is
    # gone (see spare_fast.torch._procs).
    record_exit(cfg.run_dir, cfg.group, code)
    # Leave without interpreter teardown: the lighthouse client's runtime and gloo's threads
    # abort the process (SIGABRT) when destroyed during shutdown. Everything this worker must
    # leave behind (records, checkpoints) is closed and renamed by now.
    os._exit(code)


def _record_error(cfg: WorkerConfig, exc: BaseException) -> None:
    """Leave the error that ends this process in its record file, for the launcher's message."""
    record = {
        "kind": "error",
        "error": f"{type(exc).__name__}: {exc}",
        "group": cfg.group,
        "pid": os.getpid(),
    }
    try:
        path = os.path.join(cfg.run_dir, f"g{cfg.group}-p{os.getpid()}.jsonl")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    except OSError:  # the record is a courtesy; the exit code is the report
        pass


class _Progress(Observer):
    """The launcher's view of this worker: progress in shared memory, commits in a file."""

    def __init__(self, cfg: WorkerConfig, progress: Any) -> None:
        self.cfg = cfg
        self.progress = progress
        self.slot = cfg.group * PROGRESS_SLOTS
        self.epoch = cfg.epoch
        self.log = open(  # noqa: SIM115 - one line per commit for the whole life of the worker
            os.path.join(cfg.run_dir, f"g{cfg.group}-p{os.getpid()}.jsonl"), "a", encoding="utf-8"
        )

    def on_phase(self, group: int, epoch: int, step: int, phase: Phase, bucket: int) -> None:
        # Plain stores into shared memory: free, and readable by the launcher at any moment.
        self.epoch = epoch
        p, s = self.progress, self.slot
        p[s], p[s + 1], p[s + 2], p[s + 3], p[s + 4] = os.getpid(), epoch, step, int(phase), bucket

    def on_record(self, record: dict[str, Any]) -> None:
        record.update(group=self.cfg.group, pid=os.getpid(), epoch=self.epoch)
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()


def _die_with_parent() -> None:
    """End this process when the launcher is gone (killed, or its run ended): nobody will
    collect this run, so do not linger in collectives and quorums until their timeouts.

    The parent of a worker is the fork server, not the launcher, so a parent-death signal
    (``PR_SET_PDEATHSIG``) would end every worker with the fork server, a helper the run must
    survive. The sentinel watched here is the launcher's own end of the pipe it sent this
    process's arguments through: the kernel closes it when the launcher dies, however it dies,
    and not when the fork server does."""
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait_for([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _make_group(cfg: WorkerConfig, observer: _Progress) -> SpareGroup:
    spec = cfg.spec
    model = spec.model()
    optim = spec.optimizer(list(model.parameters()))
    sched = None if spec.scheduler is None else spec.scheduler(optim)
    group = SpareGroup(
        model,
        optim,
        Layout.from_stacks(np.asarray(cfg.stacks, dtype=np.int32)),
        spec.steps,
        group=cfg.group,
        scheduler=sched,
        seed=spec.seed,
        lighthouse=cfg.lighthouse_addr,
        store=f"127.0.0.1:{cfg.store_port}",
        bind="127.0.0.1",
        backend=cfg.backend,
        checkpoint_dir=cfg.checkpoint_dir,
        checkpoint_every=spec.checkpoint_every,
        collective_timeout=cfg.collective_timeout,
        heartbeat_interval=cfg.heartbeat_interval,
        quorum_timeout=cfg.quorum_timeout,
        quorum_poll=cfg.quorum_poll,
        bucket_numel=cfg.bucket_numel,
        observers=[observer, *cfg.observers],
        verbose=cfg.verbose,
        ordered_sum=cfg.ordered_sum,
    )
    group.membership.epoch = cfg.epoch
    return group


def _restart(group: SpareGroup, cfg: WorkerConfig) -> None:
    """After a wipe-out: reload the checkpoint the launcher names, join the next epoch."""
    m = group.membership
    group._report(Phase.RESTART)
    m.write(f"wipeout/{m.epoch}", list(m.members))
    group.collectives.drop()
    lead = m.lead()
    group.cur = group.last = None
    group._pending = None
    m.reset()
    group.decider.restart()
    m.epoch += 1
    key = f"e{m.epoch}/checkpoint"
    deadline = time.monotonic() + group.quorum_timeout.total_seconds()
    path = None
    while path is None:  # a value that does not verify with the run key is ignored
        if time.monotonic() > deadline:
            raise TimeoutError(f"epoch {m.epoch}: the launcher named no checkpoint")
        time.sleep(0.02)
        if m.store.check([key]):
            path = m.auth.unwrap(key, m.store.get(key))
    if path:
        group.stepper.load_checkpoint(path)
    else:  # no checkpoint survived: start over from the initial weights
        spec = cfg.spec
        group.model.load_state_dict(spec.model().state_dict())
        group.optimizer = spec.optimizer(group.params)
        group.scheduler = None if spec.scheduler is None else spec.scheduler(group.optimizer)
        group.committed = 0
    group._report(Phase.RESTART)
    if cfg.verbose and lead:
        print(
            f"restart {m.epoch}: all groups resume from the checkpoint at step {group.committed}",
            flush=True,
        )
    group.recovery.join_all()


def _write_final(group: SpareGroup, cfg: WorkerConfig) -> None:
    # Every member writes the final parameters (the same values): the run's result must not
    # depend on one particular member surviving the next milliseconds.
    path = os.path.join(cfg.run_dir, FINAL.format(group=cfg.group))
    tmp = f"{path}.tmp"
    torch.save({"step": group.committed, "model": group.model.state_dict()}, tmp)
    os.replace(tmp, path)


def _run(cfg: WorkerConfig, progress: Any) -> None:
    _die_with_parent()
    observer = _Progress(cfg, progress)
    observer.on_phase(cfg.group, cfg.epoch, 0, Phase.STARTING, 0)
    spec = cfg.spec
    group = _make_group(cfg, observer)
    group._report(Phase.STARTING)

    def compute(step: int, shard_type: int) -> torch.Tensor:
        inputs, targets = spec.shard(step, shard_type)
        return spec.loss(group.model(inputs), targets)

    try:
        # A launcher's replacement never rejoins a formed epoch: it is not needed there.
        group._start(cfg.checkpoint, "rejoin" if cfg.rejoin else "form")
        while True:
            try:
                # The ordinary own loop: SPARe's reduction, then the optimizer and scheduler.
                while group.step < group.steps:
                    group.reduce(compute)
                    group.optimizer.step()
                    if group.scheduler is not None:
                        group.scheduler.step()
                    group.step_end()
                break
            except WipeOutError:
                _restart(group, cfg)
        _write_final(group, cfg)
    finally:
        group.close()
        observer.log.close()
