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
import os
import shutil
import signal
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any

from spare_fast.layout import Layout
from spare_fast.torch._observer import Observer, Observers
from spare_fast.torch._procs import forkserver_context
from spare_fast.torch._records import holds_run
from spare_fast.torch._settings import check_bucket, check_layout
from spare_fast.torch._supervisor import Supervisor
from spare_fast.torch._types import Phase, RunResult, TrainSpec, WorkerState, as_timedelta
from spare_fast.torch._worker import PROGRESS_SLOTS

__all__ = ["SpareTrainer"]


def _testing() -> Any:
    """:mod:`spare_fast.torch.testing`, imported for the deprecated fault arguments only.

    Nothing of a run without them imports it: the fault plans and injectors are test code.
    """
    from spare_fast.torch import testing

    return testing


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
    backend : {"gloo"} or callable, optional
        Each worker's collective backend (see :class:`~spare_fast.torch.SpareGroup`); a
        factory must be picklable (a module-level callable).
    observers : sequence of Observer, optional
        Picklable :class:`~spare_fast.torch.Observer` objects handed to every worker's group.
    injector : spare_fast.torch.testing.Injector, optional
        Deprecated: planned spurious collective errors for each group's first process; give
        the fault-injecting backend as ``backend`` and ``observers`` instead.
    verbose : bool, optional
        The launcher prints one line per process start and end; the lowest alive group prints
        one line per step (depth, loss, events).
    ordered_sum : bool, optional
        Add the types' gradients in type order on every worker, the same to the last bit
        whichever group computed which type, for an all-reduce N times as long (see
        :class:`~spare_fast.torch.SpareGroup`).

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
    >>> from spare_fast.torch import SpareTrainer, TrainSpec
    >>> from spare_fast.torch.testing import mlp
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
        backend: str | Callable[..., Any] = "gloo",
        observers: Sequence[Observer] = (),
        injector: Any = None,
        verbose: bool = False,
        ordered_sum: bool = False,
    ) -> None:
        if not isinstance(spec, TrainSpec):
            raise TypeError(f"spec = {spec!r} is not a TrainSpec")
        check_layout(layout, "the executor")
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
        check_bucket(bucket_numel)
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
        if not (backend == "gloo" or callable(backend)):
            raise TypeError(f"backend = {backend!r} is neither 'gloo' nor a callable factory")
        self.backend = backend
        if not isinstance(ordered_sum, bool):
            raise TypeError(f"ordered_sum = {ordered_sum!r} is not a bool")
        self.ordered_sum = ordered_sum
        self.observers = tuple(Observers(observers).observers)
        if injector is not None:
            if not isinstance(injector, _testing().Injector):
                raise TypeError(
                    f"injector = {injector!r} is not a spare_fast.torch.testing.Injector"
                )
            warnings.warn(
                "SpareTrainer(injector=...) is deprecated: pass the fault-injecting backend as "
                "backend= and observers=",
                DeprecationWarning,
                stacklevel=2,
            )
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
        kills: Sequence[Any] = (),
        run_dir: str | None = None,
        *,
        faults: Sequence[Any] = (),
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
            Deprecated test fixtures: a :class:`~spare_fast.torch.testing.Stall` is sent from
            outside like a kill, a :class:`~spare_fast.torch.testing.Fault` reaches the workers
            through the fault-injecting backend :class:`~spare_fast.torch.testing.Injector`.
            Both arguments run through :class:`spare_fast.torch.testing.LegacyPlan`.
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
        kills, faults = tuple(kills), tuple(faults)
        plan = _testing().LegacyPlan(self, kills, faults) if kills or faults else None
        if resume and run_dir is None:
            raise ValueError("resume=True needs the run_dir of the run to continue")
        if run_dir is not None and not resume and holds_run(str(run_dir)):
            raise ValueError(
                f"run_dir = {run_dir!r} already holds a run (checkpoints or records): pass "
                "resume=True to continue it, or give an empty folder"
            )
        if plan is not None:
            warnings.warn(
                "SpareTrainer.run(kills=..., faults=...) is deprecated: use "
                "spare_fast.torch.testing.PlannedFaults (kills by PID from outside) and a "
                "fault-injecting backend (spare_fast.torch.testing.Injector)",
                DeprecationWarning,
                stacklevel=2,
            )
        legacy = self.injector if plan is None or plan.injector is None else plan.injector
        own_dir = run_dir is None
        folder = tempfile.mkdtemp(prefix="spare_fast_run_") if own_dir else str(run_dir)
        try:
            os.makedirs(folder, exist_ok=True)
            with _sigterm_as_exit(), contextlib.nullcontext() if plan is None else plan.sent():
                return self._run(folder, resume, legacy)
        finally:
            if own_dir:
                shutil.rmtree(folder, ignore_errors=True)

    # ------------------------------------------------------------------ internals
    def _say(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def _run(self, folder: str, resume: bool, legacy: Any) -> RunResult:
        return Supervisor(self, folder, resume, legacy, forkserver_context()).run()
