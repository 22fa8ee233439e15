"""The launcher: starts the membership service and one worker process per group.

The launcher owns what must outlive any worker: the torch.distributed ``TCPStore`` (the
key-value store every gloo group rendezvous through, under a fresh prefix per agreed quorum),
the torchft ``LighthouseServer`` (which agrees the membership from worker heartbeats and quorum
requests) and the worker processes themselves. It takes no part in training decisions. It
watches its processes: a process that ends before its epoch has formed is replaced at once;
after that, a death is the survivors' to mask, and the launcher acts only when they report a
wipe-out (or when no process is left), by naming the checkpoint of the next epoch and starting
new processes for the groups that have none.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import torch
import torch.distributed as dist

from spare_fast.layout import Layout
from spare_fast.torch._checkpoint import Checkpoints
from spare_fast.torch._types import (
    EventRecord,
    Fault,
    Kill,
    Phase,
    RunResult,
    Stall,
    StepRecord,
    TrainSpec,
    WorkerState,
    as_timedelta,
)
from spare_fast.torch._worker import (
    EXIT_EXCLUDED,
    EXIT_UNNEEDED,
    FINAL,
    PROGRESS_SLOTS,
    WorkerConfig,
    main,
)

__all__ = ["SpareTrainer"]

# Imported once in the fork server; every worker then starts as a fork of it in milliseconds
# instead of a fresh interpreter importing torch for seconds. torch._dynamo is what the first
# torch.optim.Optimizer() imports lazily (seconds, most of sympy).
_PRELOAD = [
    "torch",
    "torch._dynamo",
    "torch.distributed",
    "numpy",
    "torchft.coordination",
    "spare_fast.torch._worker",
]


def _context() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)
    return ctx


def _describe(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return {
        EXIT_EXCLUDED: "stood down (dropped by the others)",
        EXIT_UNNEEDED: "not needed",
    }.get(code, f"exit code {code}")


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM into ``SystemExit(143)`` while the run is on, so its cleanup runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class SpareTrainer:
    """Data-parallel training over SPARe groups in real worker processes.

    Each of the layout's ``n_groups`` groups is one worker process holding its stack's shard
    types. Every step each alive worker computes the gradient sums of the types the current
    controller decision assigns to it, the alive workers all-reduce (gloo), and every worker
    applies ``(1/N) * sum`` over all N types, each type counted exactly once. Any end of a
    worker process is a failure: an exit by any signal (SIGKILL, SIGTERM, SIGSEGV, the OOM
    killer), a nonzero exit code, or a hang past the heartbeat timeout. It is detected through
    the collective's error or its timeout and the lighthouse heartbeats; the survivors agree the
    new membership through the torchft lighthouse, each applies the same controller decision,
    computes its patch types for the current step, rebuilds the gloo group and finishes the
    step. A wipe-out, or the loss of every process, restarts all groups from the last valid
    checkpoint: survivors reload it in place, new processes replace the dead; a process that
    dies while the restart is forming is replaced again (at most ``max_start_failures`` times
    in a row per group).

    Parameters
    ----------
    spec : TrainSpec
        Model, optimizer, loss, shard source, number of steps, checkpoint period.
    layout : spare_fast.Layout
        Which shard types each group holds; ``n_types`` must equal ``n_groups``.
    collective_timeout : float or datetime.timedelta, optional
        Gloo timeout of one collective; a peer that neither answers nor closes its sockets is
        detected after this long.
    heartbeat_timeout : float or datetime.timedelta, optional
        The lighthouse drops a worker whose heartbeats stop for this long.
    heartbeat_interval : float or datetime.timedelta, optional
        Period of each worker's heartbeat.
    quorum_timeout : float or datetime.timedelta, optional
        Longest wait for one quorum (and for an epoch to form).
    run_timeout : float or datetime.timedelta, optional
        When given, the run is stopped and :class:`TimeoutError` raised after this long; by
        default there is no limit.
    bucket_numel : int, optional
        The step's all-reduce runs in buckets of this many numbers, one after the other (as
        DDP's buckets do). By default a bucket holds 25 MiB, DDP's ``bucket_cap_mb``.
    max_restarts : int, optional
        Most global restarts (wipe-outs and losses of every process) before the run gives up.
    max_start_failures : int, optional
        Most processes in a row of one group that may end before their epoch forms.
    keep_checkpoints : int, optional
        How many of the newest checkpoints to keep (at least 2).
    rejoin_after : float or datetime.timedelta, optional
        When given, a group whose process dies once the epoch has formed gets a new process
        this long after the death (a repair delay); it rejoins at a step boundary, takes the
        state from a live peer and the depth falls back as the controller decides (see
        :class:`~spare_fast.torch.SpareGroup`). By default a dead group stays out until a
        wipe-out restart.
    injector : object, optional
        Test-only fault hook (:class:`spare_fast.torch.testing.Injector`) handed to each
        group's first process; None, the default, in production.
    verbose : bool, optional
        The launcher prints one line per process start and end; the lowest alive group prints
        one line per step (depth, loss, events).

    Raises
    ------
    TypeError
        If ``spec`` is not a :class:`TrainSpec` or ``layout`` not a ``Layout``.
    ValueError
        If the layout has ``n_types != n_groups`` or fewer than 2 groups, a timeout is not
        positive, or a count is below its minimum.

    Notes
    -----
    Why the controller runs in every worker rather than in a coordinator: the controller is
    deterministic, and every survivor receives the same sequence of lighthouse quorums, so the
    same ``fail`` calls give the same decision everywhere with no extra round trip and no
    coordinator whose own failure would need handling. The lighthouse is the only agreement
    point, and it is the existing torchft service built for exactly that.

    Cost per step: one all-reduce of ``P + B + 1`` numbers (P parameters, B buffer numbers,
    plus the loss); each worker keeps a copy of the parameters and optimizer state from before
    the last update, so that a step that completed on some ranks and failed on others can be
    redone by all.

    Workers are forks of a fork server (``multiprocessing`` "forkserver" context) that has
    imported torch once, so a replacement starts in milliseconds. The four callables of the
    spec are pickled by reference, so they must be importable (a module-level function, or one
    in the ``__main__`` of a script whose training code sits under ``if __name__ ==
    "__main__":``).

    References
    ----------
    .. [1] Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant
       LLM Pretraining Systems with 100k+ GPUs", arXiv 2603.00357, ICML 2026.
    .. [2] torchft, fault-tolerant training for PyTorch (lighthouse quorum service).

    Examples
    --------
    >>> from spare_fast import Layout
    >>> from spare_fast.torch import SpareTrainer, TrainSpec, mlp
    >>> spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 3)
    >>> trainer = SpareTrainer(spec, Layout.cyclic(4, 2))
    >>> result = trainer.run()  # doctest: +SKIP
    >>> [s.depth for s in result.steps]  # doctest: +SKIP
    [1, 1, 1]
    """

    def __init__(
        self,
        spec: TrainSpec,
        layout: Layout,
        *,
        collective_timeout: timedelta | float = 10.0,
        heartbeat_timeout: timedelta | float = 2.0,
        heartbeat_interval: timedelta | float = 0.1,
        quorum_timeout: timedelta | float = 60.0,
        run_timeout: timedelta | float | None = None,
        bucket_numel: int | None = None,
        max_restarts: int = 10,
        max_start_failures: int = 5,
        keep_checkpoints: int = 3,
        rejoin_after: timedelta | float | None = None,
        injector: Any = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(spec, TrainSpec):
            raise TypeError(f"spec = {spec!r} is not a TrainSpec")
        if not isinstance(layout, Layout):
            raise TypeError(f"layout = {layout!r} is not a spare_fast.Layout")
        if layout.n_types != layout.n_groups or layout.n_groups < 2:
            raise ValueError(
                f"layout with n_groups = {layout.n_groups}, n_types = {layout.n_types}: the "
                "executor needs n_types == n_groups >= 2"
            )
        self.spec = spec
        self.layout = layout
        self.collective_timeout = as_timedelta(collective_timeout, "collective_timeout")
        self.heartbeat_timeout = as_timedelta(heartbeat_timeout, "heartbeat_timeout")
        self.heartbeat_interval = as_timedelta(heartbeat_interval, "heartbeat_interval")
        self.quorum_timeout = as_timedelta(quorum_timeout, "quorum_timeout")
        self.run_timeout = None if run_timeout is None else as_timedelta(run_timeout, "run_timeout")
        self.rejoin_after = (
            None if rejoin_after is None else as_timedelta(rejoin_after, "rejoin_after")
        )
        if bucket_numel is not None and int(bucket_numel) < 1:
            raise ValueError(f"bucket_numel = {bucket_numel} must be >= 1")
        self.bucket_numel = None if bucket_numel is None else int(bucket_numel)
        for name, value, low in (
            ("max_restarts", max_restarts, 0),
            ("max_start_failures", max_start_failures, 1),
            ("keep_checkpoints", keep_checkpoints, 2),
        ):
            if int(value) < low:
                raise ValueError(f"{name} = {value} must be >= {low}")
        self.max_restarts = int(max_restarts)
        self.max_start_failures = int(max_start_failures)
        self.keep_checkpoints = int(keep_checkpoints)
        self.injector = injector
        self.verbose = bool(verbose)
        self._progress: Any = None

    def workers(self) -> dict[int, WorkerState]:
        """What each group's current worker last reported, while :meth:`run` is on.

        Safe to call from any thread; it reads the shared progress array the workers write.

        Returns
        -------
        dict of int to WorkerState
            By group; empty before a run's first worker has started and after the run.
        """
        progress = self._progress
        if progress is None:
            return {}
        out: dict[int, WorkerState] = {}
        for g in range(self.layout.n_groups):
            pid, epoch, step, phase, bucket = progress[
                g * PROGRESS_SLOTS : (g + 1) * PROGRESS_SLOTS
            ]
            if pid:
                out[g] = WorkerState(g, int(pid), int(epoch), int(step), Phase(phase), int(bucket))
        return out

    def run(
        self,
        kills: Sequence[Kill] = (),
        run_dir: str | None = None,
        *,
        faults: Sequence[Fault | Stall] = (),
        resume: bool = False,
    ) -> RunResult:
        """Train ``spec.steps`` steps, masking whatever happens to the worker processes.

        Parameters
        ----------
        kills : sequence of Kill, optional
            Deprecated test fixture: planned SIGKILLs, sent by PID from a thread of this
            process (:class:`spare_fast.torch.testing.PlannedFaults`); the workers never see
            them. Use that class directly.
        run_dir : str, optional
            Folder for checkpoints (``run_dir/checkpoints``), per-worker records and the final
            parameters; a temporary folder (removed at the end) when omitted.
        faults : sequence of Fault or Stall, optional
            Deprecated test fixtures: :class:`Stall` is sent from outside like a kill,
            :class:`Fault` reaches the workers as a test :class:`~spare_fast.torch.testing.
            Injector`.
        resume : bool, optional
            Continue the run recorded in ``run_dir`` (whose launcher died) from its newest
            valid checkpoint. A checkpoint that fails verification is skipped with a logged
            message naming it and why; the next older one is used.

        Returns
        -------
        RunResult
            Final parameters, one record per step, wipe-outs, restarts, process ids and exit
            codes.

        Raises
        ------
        ValueError
            If a kill or fault names a group outside the layout or a step outside the run,
            ``resume`` is asked without ``run_dir``, or a fresh run is asked in a ``run_dir``
            that already holds one.
        FileNotFoundError
            If ``resume`` finds no valid checkpoint in ``run_dir``.
        RuntimeError
            If the run gives up: more than ``max_restarts`` restarts, or a group whose
            processes keep ending before their epoch forms. The message names what kept
            failing.
        TimeoutError
            If the run exceeds ``run_timeout``.
        """
        kills = tuple(kills)
        faults = tuple(faults)
        for name, kind, items in (("kill", Kill, kills), ("fault", (Fault, Stall), faults)):
            for item in items:
                if not isinstance(item, kind):
                    raise TypeError(f"{name} = {item!r} is not a {name.capitalize()}")
                if not 0 <= item.group < self.layout.n_groups:
                    raise ValueError(
                        f"{name} group = {item.group} is not in [0, {self.layout.n_groups})"
                    )
                if not 0 <= item.step < self.spec.steps:
                    raise ValueError(f"{name} step = {item.step} is not in [0, {self.spec.steps})")
        if resume and run_dir is None:
            raise ValueError("resume=True needs the run_dir of the run to continue")
        if run_dir is not None and not resume and _holds_run(str(run_dir)):
            raise ValueError(
                f"run_dir = {run_dir!r} already holds a run (checkpoints or records): pass "
                "resume=True to continue it, or give an empty folder"
            )
        if kills or faults:
            warnings.warn(
                "SpareTrainer.run(kills=..., faults=...) is deprecated: use "
                "spare_fast.torch.testing.PlannedFaults (kills by PID from outside) and "
                "spare_fast.torch.testing.Injector",
                DeprecationWarning,
                stacklevel=2,
            )
        from spare_fast.torch import testing

        injector = self.injector
        spurious = tuple(f for f in faults if isinstance(f, Fault))
        if spurious:
            injector = testing.Injector(spurious)
        stalls = tuple(f for f in faults if isinstance(f, Stall))
        own_dir = run_dir is None
        folder = tempfile.mkdtemp(prefix="spare_fast_run_") if own_dir else str(run_dir)
        try:
            os.makedirs(folder, exist_ok=True)
            with _sigterm_as_exit():
                if kills or stalls:
                    with testing.PlannedFaults(self, kills, stalls):
                        return self._run(folder, resume, injector)
                return self._run(folder, resume, injector)
        finally:
            if own_dir:
                shutil.rmtree(folder, ignore_errors=True)

    # ------------------------------------------------------------------ internals
    def _say(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def _run(self, folder: str, resume: bool, injector: Any) -> RunResult:
        # torchft's Rust side logs every quorum round at INFO level to stderr; keep warnings
        # only unless the caller asked for more (read once, when torchft is first imported).
        os.environ.setdefault("RUST_LOG", "warn")
        from torchft.coordination import LighthouseServer

        log = logging.getLogger("spare_fast.torch")
        t_start = time.monotonic()
        n = self.layout.n_groups
        ckpts = Checkpoints(os.path.join(folder, "checkpoints"), self.keep_checkpoints)
        ckpts.remove_partial()
        for g in range(n):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, FINAL.format(group=g)))
        rejected: list[tuple[str, str]] = []

        def pick_checkpoint() -> str | None:
            path, bad = ckpts.newest_valid()
            for p, reason in bad:
                log.warning("rejected %s (%s); falling back to an older checkpoint", p, reason)
                if self.verbose:
                    print(f"rejected checkpoint: {reason}", file=sys.stderr, flush=True)
            rejected.extend(bad)
            return path

        epoch = 0
        resumed_from: int | None = None
        checkpoint: str | None = None
        if resume:
            epoch = _last_epoch(folder) + 1
            checkpoint = pick_checkpoint()
            if checkpoint is None:
                raise FileNotFoundError(
                    f"resume=True: no valid checkpoint in {ckpts.folder}"
                    + "".join(f"\n  {reason}" for _, reason in rejected)
                )
            resumed_from = int(Checkpoints.load(checkpoint)["step"])
            self._say(f"resuming from {checkpoint} (step {resumed_from})")

        ctx = _context()
        store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
        lighthouse = LighthouseServer(
            bind="127.0.0.1:0",
            min_replicas=1,
            # Never form a quorum without a worker that still heartbeats: a slow survivor must
            # not be mistaken for a dead one.
            join_timeout_ms=int(self.quorum_timeout.total_seconds() * 1000),
            quorum_tick_ms=20,
            heartbeat_timeout_ms=int(self.heartbeat_timeout.total_seconds() * 1000),
        )
        # The server reports its host name; the workers all run here, so use the loopback.
        address = f"http://127.0.0.1:{urlsplit(lighthouse.address()).port}"
        progress = ctx.Array("q", n * PROGRESS_SLOTS, lock=False)
        procs: dict[int, Any] = {}
        every: list[tuple[int, Any]] = []
        handled: set[int] = set()
        pids: dict[int, list[int]] = {g: [] for g in range(n)}
        early: dict[int, list[int]] = {g: [] for g in range(n)}  # exits before the epoch formed
        restarts = 0
        started_first: set[int] = set()
        waiting: dict[int, int] = {}  # group -> pid of its replacement not yet admitted
        repair_at: dict[int, float] = {}  # group -> when its replacement starts
        rejoin_failures: dict[int, int] = {g: 0 for g in range(n)}

        def start(group: int, rejoin: bool = False) -> None:
            cfg = WorkerConfig(
                group=group,
                epoch=epoch,
                checkpoint=checkpoint,
                spec=self.spec,
                stacks=self.layout.stacks.tolist(),
                store_port=store.port,
                lighthouse_addr=address,
                run_dir=folder,
                checkpoint_dir=ckpts.folder,
                collective_timeout=self.collective_timeout.total_seconds(),
                bucket_numel=self.bucket_numel,
                heartbeat_interval=self.heartbeat_interval.total_seconds(),
                quorum_timeout=self.quorum_timeout.total_seconds(),
                quorum_poll=1.0,
                verbose=self.verbose,
                rejoin=rejoin,
                # A planned test fault fires once, in the group's first process.
                injector=injector if group not in started_first else None,
            )
            started_first.add(group)
            proc = ctx.Process(target=main, args=(cfg, progress), name=f"spare-g{group}")
            proc.start()
            procs[group] = proc
            every.append((group, proc))
            pids[group].append(int(proc.pid))
            if rejoin:
                waiting[group] = int(proc.pid)
            self._say(
                f"group {group}: worker pid {proc.pid} started (epoch {epoch}"
                + (", rejoining)" if rejoin else ")")
            )

        def new_epoch(survivors: set[int], why: str) -> None:
            nonlocal epoch, checkpoint, restarts
            restarts += 1
            if restarts > self.max_restarts:
                raise RuntimeError(
                    f"gave up after {self.max_restarts} restarts ({why}); last process ends: "
                    + _last_ends(folder, every)
                )
            epoch += 1
            waiting.clear()
            repair_at.clear()
            ckpts.remove_partial()
            checkpoint = pick_checkpoint()
            store.set(f"e{epoch}/checkpoint", checkpoint or "")
            for g in range(n):
                if g in survivors:
                    continue
                old = procs[g]
                if old.exitcode is None:  # dropped by the others but still running
                    old.kill()
                    old.join()
                early[g].clear()
                start(g)

        def formed() -> bool:
            return bool(store.check([f"e{epoch}/formed"]))

        self._progress = progress
        try:
            for g in range(n):
                start(g)
            deadline = (
                None if self.run_timeout is None else t_start + self.run_timeout.total_seconds()
            )
            while True:
                is_formed = formed()
                if is_formed:
                    for g in range(n):
                        early[g].clear()
                for g, proc in list(procs.items()):
                    code = proc.exitcode
                    if code is None or proc.pid in handled:
                        continue
                    handled.add(proc.pid)
                    if code != 0:
                        self._say(f"group {g}: worker pid {proc.pid} {_describe(code)}")
                    if code == EXIT_UNNEEDED:
                        continue
                    if is_formed or formed():
                        if waiting.pop(g, None) == proc.pid and code != 0:
                            rejoin_failures[g] += 1
                            if rejoin_failures[g] >= self.max_start_failures:
                                raise RuntimeError(
                                    f"group {g}: {rejoin_failures[g]} replacements in a row "
                                    f"ended before they rejoined ({_describe(code)})"
                                    + _last_error(folder, g, proc.pid)
                                )
                        if self.rejoin_after is not None and code != 0:
                            repair_at[g] = time.monotonic() + self.rejoin_after.total_seconds()
                        continue
                    # Before the epoch forms nobody else masks this group: replace it.
                    early[g].append(code)
                    if len(early[g]) >= self.max_start_failures:
                        raise RuntimeError(
                            f"group {g}: {len(early[g])} worker processes in a row ended before "
                            f"epoch {epoch} formed ({', '.join(map(_describe, early[g]))})"
                            + _last_error(folder, g, proc.pid)
                        )
                    start(g)
                if is_formed and store.check([f"e{epoch}/view"]):
                    # A process the survivors dropped but that still runs (suspended, or its
                    # main thread hung while its heartbeat thread beats) would make every later
                    # quorum wait for it: end it.
                    agreed = json.loads(store.get(f"e{epoch}/view").decode())
                    view = set(agreed["members"])
                    for g, pid in list(waiting.items()):
                        if agreed["replicas"].get(str(g)) == f"g{g}:{pid}":
                            del waiting[g]  # admitted: from now on a member like the others
                            rejoin_failures[g] = 0
                    for g, proc in procs.items():
                        if g not in view and proc.exitcode is None and g not in waiting:
                            self._say(f"group {g}: worker pid {proc.pid} was dropped: killing it")
                            proc.kill()
                for g, when in list(repair_at.items()):
                    if time.monotonic() >= when and procs[g].exitcode is not None:
                        del repair_at[g]
                        if not store.check([f"e{epoch}/finished"]):
                            start(g, rejoin=True)
                if store.check([f"wipeout/{epoch}"]):
                    reported = set(json.loads(store.get(f"wipeout/{epoch}").decode()))
                    alive = {g for g in reported if procs[g].exitcode is None}
                    self._say(f"wipe-out in epoch {epoch}: restart with survivors {sorted(alive)}")
                    new_epoch(alive, "wipe-out")
                elif all(p.exitcode is not None for p in procs.values()):
                    if any(
                        os.path.exists(os.path.join(folder, FINAL.format(group=g)))
                        for g in range(n)
                    ):
                        break
                    self._say(f"every worker of epoch {epoch} ended: restart all groups")
                    new_epoch(set(), "every worker ended")
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"run exceeded run_timeout = {self.run_timeout}")
                time.sleep(0.02)
            final = next(
                os.path.join(folder, FINAL.format(group=g))
                for g in range(n)
                if os.path.exists(os.path.join(folder, FINAL.format(group=g)))
            )
            blob = torch.load(final, weights_only=True)
            steps, wiped, rollbacks, rejoins = _collect(folder, self.spec.steps)
            exit_codes: dict[int, list[int]] = {g: [] for g in range(n)}
            for g, proc in every:
                proc.join()
                exit_codes[g].append(int(proc.exitcode))
            return RunResult(
                params={k: v.clone() for k, v in blob["model"].items()},
                steps=steps,
                wipeouts=wiped,
                restarts=restarts,
                rollbacks=rollbacks,
                pids=pids,
                seconds=time.monotonic() - t_start,
                exit_codes=exit_codes,
                resumed_from=resumed_from,
                rejected_checkpoints=rejected,
                rejoins=rejoins,
            )
        finally:
            self._progress = None
            for _, proc in every:
                if proc.exitcode is None:
                    proc.kill()
            for _, proc in every:
                proc.join()
                proc.close()
            lighthouse.shutdown()
            ckpts.remove_partial()
            for g in range(n):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(folder, FINAL.format(group=g)) + ".tmp")


def _holds_run(folder: str) -> bool:
    if not os.path.isdir(folder):
        return False
    if Checkpoints(os.path.join(folder, "checkpoints")).steps():
        return True
    return any(name.endswith(".jsonl") for name in os.listdir(folder))


def _records(folder: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                for line in fh:
                    # A process killed mid-write leaves at most its last line torn.
                    with contextlib.suppress(json.JSONDecodeError):
                        if line.strip():
                            lines.append(json.loads(line))
    return lines


def _last_epoch(folder: str) -> int:
    return max((int(r.get("epoch", -1)) for r in _records(folder)), default=-1)


def _last_error(folder: str, group: int, pid: int | None) -> str:
    path = os.path.join(folder, f"g{group}-p{pid}.jsonl")
    if not os.path.exists(path):
        return ""
    errors = [r for r in _records_of(path) if r.get("kind") == "error"]
    return f"; last error: {errors[-1]['error']}" if errors else ""


def _records_of(path: str) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            with contextlib.suppress(json.JSONDecodeError):
                if line.strip():
                    out.append(json.loads(line))
    return out


def _last_ends(folder: str, every: list[tuple[int, Any]]) -> str:
    ends = [
        f"group {g} pid {p.pid} {_describe(p.exitcode)}{_last_error(folder, g, p.pid)}"
        for g, p in every[-2 * len({g for g, _ in every}) :]
        if p.exitcode not in (None, 0, EXIT_UNNEEDED)
    ]
    return "; ".join(ends) or "none"


def _event(d: dict[str, Any]) -> EventRecord:
    return EventRecord(
        quorum_id=int(d["quorum_id"]),
        dead=tuple(int(g) for g in d["dead"]),
        status=str(d["status"]),
        phase=int(d["phase"]),
        depth=int(d["depth"]),
        moves=int(d["moves"]),
        patch=tuple((int(t), int(g)) for t, g in d["patch"]),
        patch_computed=tuple((int(t), int(g)) for t, g in d["patch_computed"]),
        step=int(d["step"]),
        seconds=float(d["seconds"]),
        decided_at=float(d.get("decided_at", 0.0)),
    )


def _collect(
    folder: str, n_steps: int
) -> tuple[list[StepRecord], list[EventRecord], list[tuple[int, int]], list[tuple[int, int]]]:
    """Merge the per-worker record files: for each step the last commit of its last epoch."""
    lines = _records(folder)
    wiped: dict[tuple[int, int], EventRecord] = {}
    latest: dict[int, dict[int, dict[str, Any]]] = {}
    rollbacks: list[tuple[int, int]] = []
    rejoins: set[tuple[int, int, int]] = set()
    for rec in lines:  # files are per process, and a process only appends
        if rec["kind"] == "rollback":
            rollbacks.append((int(rec["group"]), int(rec["step"])))
            continue
        if rec["kind"] == "rejoin":
            for g in rec["groups"]:
                rejoins.add((int(rec["epoch"]), int(g), int(rec["step"])))
            continue
        if rec["kind"] == "error":
            continue
        if rec["kind"] == "wipeout":
            ev = _event(rec["event"])
            wiped[(int(rec["epoch"]), ev.quorum_id)] = ev
            continue
        step, epoch, group = int(rec["step"]), int(rec["epoch"]), int(rec["group"])
        by_group = latest.setdefault(step, {})
        old = by_group.get(group)
        if old is None or int(old["epoch"]) <= epoch:
            by_group[group] = rec
    steps: list[StepRecord] = []
    for step in range(n_steps):
        if step not in latest:
            raise RuntimeError(f"no worker recorded step {step}")
        epoch = max(int(r["epoch"]) for r in latest[step].values())
        recs = {g: r for g, r in latest[step].items() if int(r["epoch"]) == epoch}
        # Membership only shrinks within an epoch, so the smallest member list is the one of
        # the final commit (a member that committed and then died left an older record).
        head = min(recs.values(), key=lambda r: (len(r["members"]), int(r["group"])))
        members = tuple(int(g) for g in head["members"])
        steps.append(
            StepRecord(
                step=step,
                epoch=epoch,
                depth=int(head["depth"]),
                members=members,
                events=tuple(_event(e) for e in head["events"]),
                computed={
                    g: tuple(int(t) for t in recs[g]["computed"])
                    if g in recs
                    # A member that delivered its sums and died before it could write its
                    # record: what it computed is the step's agreed assignment.
                    else tuple(t for t, a in enumerate(head["assigned"]) if int(a) == g)
                    for g in members
                },
                loss=float(head["loss"]),
                committed_at=float(head.get("committed_at", 0.0)),
            )
        )
    joined = [(g, step) for _, g, step in sorted(rejoins)]
    return steps, [wiped[k] for k in sorted(wiped)], sorted(rollbacks), joined
