"""The supervisor of one :meth:`SpareTrainer.run`: the worker processes and their epochs.

It owns what must outlive any worker: the lighthouse and the store (:func:`serve`) and the
worker processes. It takes no part in training decisions. It watches its processes: a
process that ends before its epoch has formed is replaced at once; after that, a death is the
survivors' to mask, and the supervisor acts only when they report a wipe-out (or when no
process is left), by naming the checkpoint of the next epoch and starting new processes for
the groups that have none. With a repair delay it starts a replacement for a dead group, which
rejoins at a step boundary.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from typing import Any

import torch

from spare_fast.torch._auth import RunKey, read_json
from spare_fast.torch._checkpoint import Checkpoints
from spare_fast.torch._membership import valid_view
from spare_fast.torch._procs import WorkerProcess, start_child
from spare_fast.torch._records import collect, describe, last_ends, last_epoch, last_error
from spare_fast.torch._serve import serve
from spare_fast.torch._types import RunResult
from spare_fast.torch._watchdog import publish_heartbeat_timeout
from spare_fast.torch._worker import EXIT_UNNEEDED, FINAL, PROGRESS_SLOTS, WorkerConfig, main

__all__ = ["Supervisor"]

log = logging.getLogger("spare_fast.torch")


class Supervisor:
    """One run's processes, with the run's state as attributes.

    Parameters
    ----------
    trainer : SpareTrainer
        The settings (timeouts, counts, backend, observers, verbosity).
    folder : str
        The run folder.
    resume : bool
        Continue the run recorded in ``folder``.
    legacy : SpuriousErrors or None
        Deprecated planned spurious errors for each group's first process.
    ctx : multiprocessing context
        The fork-server context the workers start in.
    """

    def __init__(self, trainer: Any, folder: str, resume: bool, legacy: Any, ctx: Any) -> None:
        self.t = trainer
        self.folder = folder
        self.legacy = legacy
        self.ctx = ctx
        self.n = trainer.layout.n_groups
        self.t_start = time.monotonic()
        self.ckpts = Checkpoints(os.path.join(folder, "checkpoints"), trainer.keep_checkpoints)
        self.ckpts.remove_partial()
        for g in range(self.n):
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._final(g))
        self.rejected: list[tuple[str, str]] = []
        self.epoch = 0
        self.resumed_from: int | None = None
        self.checkpoint: str | None = None
        if resume:
            self.epoch = last_epoch(folder) + 1
            self.checkpoint = self.pick_checkpoint()
            if self.checkpoint is None:
                raise FileNotFoundError(
                    f"resume=True: no valid checkpoint in {self.ckpts.folder}"
                    + "".join(f"\n  {reason}" for _, reason in self.rejected)
                )
            self.resumed_from = int(Checkpoints.load(self.checkpoint)["step"])
            trainer._say(f"resuming from {self.checkpoint} (step {self.resumed_from})")
        n = self.n
        self.procs: dict[int, WorkerProcess] = {}  # group -> its current process
        self.every: list[tuple[int, WorkerProcess]] = []  # every process started, in order
        self.handled: set[int] = set()  # pids whose end was acted on
        self.pids: dict[int, list[int]] = {g: [] for g in range(n)}
        self.early: dict[int, list[int]] = {g: [] for g in range(n)}  # exits before formation
        self.restarts = 0
        self.started_first: set[int] = set()
        self.waiting: dict[int, int] = {}  # group -> pid of its replacement not yet admitted
        self.repair_at: dict[int, float] = {}  # group -> when its replacement starts
        self.rejoin_failures: dict[int, int] = {g: 0 for g in range(n)}
        self.service: Any = None
        self.progress: Any = None
        # The workers' run key (SPARE_FAST_RUN_KEY): store values are read verified and
        # checked, a malformed one is logged and ignored.
        self.auth = RunKey.resolve()

    def _final(self, g: int) -> str:
        return os.path.join(self.folder, FINAL.format(group=g))

    def pick_checkpoint(self) -> str | None:
        """The newest valid checkpoint (rejected ones logged and kept in :attr:`rejected`)."""
        path, bad = self.ckpts.newest_valid()
        for p, reason in bad:
            log.warning("rejected %s (%s); falling back to an older checkpoint", p, reason)
            if self.t.verbose:
                print(f"rejected checkpoint: {reason}", file=sys.stderr, flush=True)
        self.rejected.extend(bad)
        return path

    # ------------------------------------------------------------------ processes
    def start(self, group: int, rejoin: bool = False) -> None:
        """Start a worker process for ``group`` in the current epoch."""
        t = self.t
        # A legacy planned fault fires once, in the group's first process.
        legacy = None if self.legacy is None or group in self.started_first else self.legacy
        cfg = WorkerConfig(
            group=group,
            epoch=self.epoch,
            checkpoint=self.checkpoint,
            spec=t.spec,
            stacks=t.layout.stacks.tolist(),
            store_port=self.service.store_port,
            lighthouse_addr=self.service.lighthouse_addr,
            run_dir=self.folder,
            checkpoint_dir=self.ckpts.folder,
            collective_timeout=t.collective_timeout.total_seconds(),
            bucket_numel=t.bucket_numel,
            heartbeat_interval=t.heartbeat_interval.total_seconds(),
            quorum_timeout=t.quorum_timeout.total_seconds(),
            quorum_poll=1.0,
            verbose=t.verbose,
            rejoin=rejoin,
            backend=t.backend if legacy is None else legacy,
            observers=tuple(t.observers) + (() if legacy is None else (legacy,)),
            ordered_sum=t.ordered_sum,
        )
        self.started_first.add(group)
        child = self.ctx.Process(target=main, args=(cfg, self.progress), name=f"spare-g{group}")
        start_child(child)
        proc = WorkerProcess(child, group, self.folder)
        self.procs[group] = proc
        self.every.append((group, proc))
        self.pids[group].append(int(proc.pid))
        if rejoin:
            self.waiting[group] = int(proc.pid)
        t._say(
            f"group {group}: worker pid {proc.pid} started (epoch {self.epoch}"
            + (", rejoining)" if rejoin else ")")
        )

    def new_epoch(self, survivors: set[int], why: str) -> None:
        """Restart every group from the newest valid checkpoint; ``survivors`` reload it in
        place, the other groups get new processes.

        The new processes start only once every other process of the run is gone, checked by
        PID: two generations of workers never train at once."""
        self.restarts += 1
        if self.restarts > self.t.max_restarts:
            raise RuntimeError(
                f"gave up after {self.t.max_restarts} restarts ({why}); last process ends: "
                + last_ends(self.folder, self.every)
            )
        self.epoch += 1
        self.waiting.clear()
        self.repair_at.clear()
        self.ckpts.remove_partial()
        self.checkpoint = self.pick_checkpoint()
        keep = {self.procs[g].pid for g in survivors}
        for _, old in self.every:  # dropped by the others but still running, or unseen
            if old.pid not in keep:
                old.end()
        key = f"e{self.epoch}/checkpoint"
        self.service.store.set(key, self.auth.wrap(key, self.checkpoint or ""))
        for g in range(self.n):
            if g in survivors:
                continue
            self.early[g].clear()
            self.start(g)

    def _key(self, key: str) -> bool:
        return bool(self.service.store.check([key]))

    def formed(self) -> bool:
        """Whether the current epoch has formed."""
        return self._key(f"e{self.epoch}/formed")

    # ------------------------------------------------------------------ one poll
    def reap(self, is_formed: bool) -> None:
        """Act on the processes that ended since the last poll."""
        t = self.t
        for g, proc in list(self.procs.items()):
            code = proc.exitcode
            if code is None or proc.pid in self.handled:
                continue
            self.handled.add(proc.pid)
            if code != 0:
                t._say(f"group {g}: worker pid {proc.pid} {describe(code)}")
            if code == EXIT_UNNEEDED:
                continue
            if is_formed or self.formed():
                if self.waiting.pop(g, None) == proc.pid and code != 0:
                    self.rejoin_failures[g] += 1
                    if self.rejoin_failures[g] >= t.max_start_failures:
                        raise RuntimeError(
                            f"group {g}: {self.rejoin_failures[g]} replacements in a row "
                            f"ended before they rejoined ({describe(code)})"
                            + last_error(self.folder, g, proc.pid)
                        )
                if t.rejoin_after is not None and code != 0:
                    self.repair_at[g] = time.monotonic() + t.rejoin_after.total_seconds()
                continue
            # Before the epoch forms nobody else masks this group: replace it.
            self.early[g].append(code)
            if len(self.early[g]) >= t.max_start_failures:
                raise RuntimeError(
                    f"group {g}: {len(self.early[g])} worker processes in a row ended before "
                    f"epoch {self.epoch} formed ({', '.join(map(describe, self.early[g]))})"
                    + last_error(self.folder, g, proc.pid)
                )
            self.start(g)

    def end_dropped(self) -> None:
        """End processes the survivors dropped but that still run; note admitted replacements.

        A dropped process that still runs (suspended, or its main thread hung while its
        heartbeat thread beats) would make every later quorum wait for it.
        """
        agreed = read_json(self.service.store, f"e{self.epoch}/view", valid_view, self.auth)
        if agreed is None:
            return
        view = set(agreed["members"])
        for g, pid in list(self.waiting.items()):
            if agreed["replicas"].get(str(g)) == f"g{g}:{pid}":
                del self.waiting[g]  # admitted: from now on a member like the others
                self.rejoin_failures[g] = 0
        for g, proc in self.procs.items():
            if g not in view and proc.exitcode is None and g not in self.waiting:
                self.t._say(f"group {g}: worker pid {proc.pid} was dropped: killing it")
                proc.kill()

    def poll(self) -> bool:
        """One round of watching; True once the run finished."""
        is_formed = self.formed()
        if is_formed:
            for g in range(self.n):
                self.early[g].clear()
        self.reap(is_formed)
        if is_formed and self._key(f"e{self.epoch}/view"):
            self.end_dropped()
        for g, when in list(self.repair_at.items()):
            if time.monotonic() >= when and self.procs[g].exitcode is not None:
                del self.repair_at[g]
                if not self._key(f"e{self.epoch}/finished"):
                    self.start(g, rejoin=True)
        reported = read_json(
            self.service.store,
            f"wipeout/{self.epoch}",
            lambda v: (
                isinstance(v, list) and all(isinstance(g, int) and g in self.procs for g in v)
            ),
            self.auth,
        )
        if reported is not None:
            alive = {g for g in reported if self.procs[g].exitcode is None}
            self.t._say(f"wipe-out in epoch {self.epoch}: restart with survivors {sorted(alive)}")
            self.new_epoch(alive, "wipe-out")
        elif all(p.exitcode is not None for p in self.procs.values()):
            if any(os.path.exists(self._final(g)) for g in range(self.n)):
                return True
            self.t._say(f"every worker of epoch {self.epoch} ended: restart all groups")
            self.new_epoch(set(), "every worker ended")
        return False

    # ------------------------------------------------------------------ the run
    def run(self) -> RunResult:
        """Serve, start every group, watch until the run finishes; the run's result."""
        t = self.t
        self.service = serve(
            "127.0.0.1",
            min_replicas=1,
            # Never form a quorum without a worker that still heartbeats: a slow survivor must
            # not be mistaken for a dead one.
            join_timeout_ms=int(t.quorum_timeout.total_seconds() * 1000),
            quorum_tick_ms=20,
            heartbeat_timeout_ms=int(t.heartbeat_timeout.total_seconds() * 1000),
        )
        publish_heartbeat_timeout(self.service.store, t.heartbeat_timeout.total_seconds())
        self.progress = self.ctx.Array("q", self.n * PROGRESS_SLOTS, lock=False)
        t._progress = self.progress
        try:
            for g in range(self.n):
                self.start(g)
            deadline = (
                None if t.run_timeout is None else self.t_start + t.run_timeout.total_seconds()
            )
            while not self.poll():
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"run exceeded run_timeout = {t.run_timeout}")
                time.sleep(0.02)
            return self.result()
        finally:
            t._progress = None
            self.close()

    def result(self) -> RunResult:
        """The finished run's result (final parameters, merged records, processes)."""
        final = next(self._final(g) for g in range(self.n) if os.path.exists(self._final(g)))
        blob = torch.load(final, weights_only=True)
        steps, wiped, rollbacks, rejoins = collect(self.folder, self.t.spec.steps)
        exit_codes: dict[int, list[int]] = {g: [] for g in range(self.n)}
        for g, proc in self.every:
            proc.wait()
            exit_codes[g].append(int(proc.exitcode or 0))
        return RunResult(
            params={k: v.clone() for k, v in blob["model"].items()},
            steps=steps,
            wipeouts=wiped,
            restarts=self.restarts,
            rollbacks=rollbacks,
            pids=self.pids,
            seconds=time.monotonic() - self.t_start,
            exit_codes=exit_codes,
            resumed_from=self.resumed_from,
            rejected_checkpoints=self.rejected,
            rejoins=rejoins,
        )

    def close(self) -> None:
        """Kill what still runs, stop the service, remove partial files."""
        for _, proc in self.every:
            proc.kill()
        for _, proc in self.every:
            proc.wait()
            proc.close()
        if self.service is not None:
            self.service.shutdown()
        self.ckpts.remove_partial()
        for g in range(self.n):
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._final(g) + ".tmp")
