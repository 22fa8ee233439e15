"""Planned faults: signals sent by PID from outside the workers, spurious collective errors.

What tests, benchmarks and the examples use directly, and what
:meth:`~spare_fast.torch.SpareTrainer.run`'s deprecated ``kills=`` and ``faults=`` arguments
execute (:class:`LegacyPlan`). Nothing here is part of a production run: the workers only
report where they are (see :meth:`~spare_fast.torch.SpareTrainer.workers`), and the classes
below read those reports from a thread of the launcher's process and send real signals to the
workers' PIDs, exactly as an operator's ``kill -9 PID``, the OOM killer or a preemption
would. :class:`SpuriousErrors` wraps the collective backend instead (as torchft's
fault-injecting process group does): given as ``backend=`` and ``observers=`` it reports
chosen completed all-reduces as failed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from spare_fast.torch._observer import Observer
from spare_fast.torch._types import Phase, WorkerState
from spare_fast.torch.testing.plans import Fault, Kill, Stall

__all__ = ["LegacyPlan", "PlannedFaults", "SignalSent", "SpuriousErrors", "Watcher"]


class SpuriousErrors(Observer):
    """A gloo backend that reports chosen completed all-reduces as failed (a spurious error).

    Give the same object as ``backend=`` and in ``observers=`` (of
    :class:`~spare_fast.torch.SpareGroup` or :class:`~spare_fast.torch.SpareTrainer`): as an
    observer it learns the group and the step; as the backend it builds gloo process groups
    whose all-reduce of the last bucket of a planned ``(group, step)`` completes, waits
    ``delay`` seconds (as a late timeout would: by then the other members have received
    everything and committed the step) and raises. Each fault fires once per process.

    Args:
        faults: The :class:`~spare_fast.torch.testing.Fault` list.
        delay: Seconds between the completed all-reduce and the error.
        host: The address gloo binds to.

    Examples:
        >>> plan = SpuriousErrors([Fault(1, 3)])
        >>> plan.on_phase(1, 0, 3, Phase.ALLREDUCE, 0)
        >>> plan.due()
        True
    """

    def __init__(
        self, faults: Iterable[Fault], delay: float = 0.5, host: str = "127.0.0.1"
    ) -> None:
        self.faults = frozenset(faults)
        self.delay = float(delay)
        self.host = host
        self.where: Fault | None = None
        self._fired: set[Fault] = set()

    def on_phase(self, group: int, epoch: int, step: int, phase: Phase, bucket: int) -> None:
        self.where = Fault(group, step) if phase is Phase.ALLREDUCE else None

    def due(self) -> bool:
        """Whether the all-reduce in progress is a planned fault that has not fired."""
        return self.where in self.faults and self.where not in self._fired

    def __call__(self, store: Any, rank: int, size: int, timeout: timedelta) -> Any:
        import torch.distributed as dist

        opts = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]  # stub lacks it
        opts._timeout = timeout
        opts._devices = [dist.ProcessGroupGloo.create_device(hostname=self.host)]
        return _Faulty(dist.ProcessGroupGloo(store, rank, size, opts), self)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "where": None, "_fired": set()}


class _Faulty:
    """A process group whose planned all-reduce fails after it completed."""

    def __init__(self, pg: Any, plan: SpuriousErrors) -> None:
        self.pg = pg
        self.plan = plan

    def allreduce(self, tensors: list[Any]) -> Any:
        work = self.pg.allreduce(tensors)
        t = tensors[0]
        # SPARe reduces one fresh tensor in bucket views: the last bucket ends the storage.
        last = (t.storage_offset() + t.numel()) * t.element_size() == t.untyped_storage().nbytes()
        if last and self.plan.due():
            work.wait()
            assert self.plan.where is not None
            self.plan._fired.add(self.plan.where)
            time.sleep(self.plan.delay)
            raise RuntimeError(f"planned spurious error: {self.plan.where}")
        return work

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pg, name)


@dataclass(frozen=True)
class SignalSent:
    """One signal a test thread sent.

    Attributes:
        seconds: Time since the thread started.
        at: ``time.monotonic()`` when it was sent.
        group: The victim's group.
        pid: The victim's PID.
        signal: The signal.
        state: What the victim last reported when the signal left.
    """

    seconds: float
    at: float
    group: int
    pid: int
    signal: signal.Signals
    state: WorkerState


class Watcher:
    """A daemon thread that polls ``trainer.workers()`` and acts on it; a context manager.

    Subclasses implement :meth:`tick`, called with the current states at every poll, and send
    signals with :meth:`send`. :attr:`first_pid` maps each group to its first process.

    Args:
        trainer: The :class:`~spare_fast.torch.SpareTrainer` whose run is watched.
    """

    poll = 0.0005

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.sent: list[SignalSent] = []
        self.first_pid: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._t0 = time.monotonic()

    def __enter__(self) -> Watcher:
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def send(self, state: WorkerState, sig: signal.Signals) -> None:
        """Send ``sig`` to the worker of ``state`` by PID and record it in :attr:`sent`."""
        try:
            os.kill(state.pid, sig)
        except ProcessLookupError:  # it ended by itself in the meantime
            return
        now = time.monotonic()
        self.sent.append(SignalSent(now - self._t0, now, state.group, state.pid, sig, state))

    def _loop(self) -> None:
        while not self._stop.is_set():
            states = self.trainer.workers()
            for g, s in states.items():
                self.first_pid.setdefault(g, s.pid)
            if states:
                self.tick(states)
            time.sleep(self.poll)

    def tick(self, states: dict[int, WorkerState]) -> None:
        """React to the states of one poll (by group)."""
        raise NotImplementedError


class PlannedFaults(Watcher):
    """Send planned SIGKILLs and SIGSTOP/SIGCONT pauses by PID when a worker reaches them.

    A :class:`~spare_fast.torch.testing.Kill` with phase ``"compute"`` fires once the group's first
    process reports that step (or a later one); with phase ``"allreduce"`` once it reports the
    step's all-reduce at its second bucket or later (the first bucket is reduced, the peers are
    mid-collective), or any later step. A :class:`~spare_fast.torch.testing.Stall` sends
    SIGSTOP when the step begins and SIGCONT ``seconds`` later.

    Args:
        trainer: The :class:`~spare_fast.torch.SpareTrainer` whose run is watched.
        kills: Planned kills.
        stalls: Planned pauses.

    Examples:
        >>> from spare_fast import Layout
        >>> from spare_fast.torch import SpareTrainer, TrainSpec
        >>> from spare_fast.torch.testing import Kill, mlp
        >>> spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 6)
        >>> trainer = SpareTrainer(spec, Layout.cyclic(4, 2))
        >>> with PlannedFaults(trainer, [Kill(2, 3)]):  # doctest: +SKIP
        ...     result = trainer.run()
    """

    def __init__(
        self, trainer: Any, kills: Sequence[Kill] = (), stalls: Sequence[Stall] = ()
    ) -> None:
        super().__init__(trainer)
        self.pending: list[Kill | Stall] = [*kills, *stalls]
        self._timers: list[threading.Timer] = []

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for t in self._timers:
            t.cancel()

    @staticmethod
    def _reached(item: Kill | Stall, s: WorkerState) -> bool:
        if s.step > item.step:
            return True
        if s.step < item.step or s.phase in (Phase.STARTING, Phase.JOIN):
            return False
        if isinstance(item, Kill) and item.phase == "allreduce":
            return s.phase is Phase.ALLREDUCE and s.bucket >= 1
        return True

    def tick(self, states: dict[int, WorkerState]) -> None:
        for item in list(self.pending):
            s = states.get(item.group)
            if s is None or s.pid != self.first_pid.get(item.group) or not self._reached(item, s):
                continue
            self.pending.remove(item)
            if isinstance(item, Kill):
                self.send(s, signal.SIGKILL)
                continue
            self.send(s, signal.SIGSTOP)
            timer = threading.Timer(item.seconds, _resume, args=(s.pid,))
            timer.daemon = True
            timer.start()
            self._timers.append(timer)


def _resume(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


class LegacyPlan:
    """The deprecated ``kills=`` and ``faults=`` of :meth:`~spare_fast.torch.SpareTrainer.run`.

    The launcher hands them here (importing this package for them only), and runs what this
    makes of them: the kills and stalls are sent by :class:`PlannedFaults` while the run is on
    (:meth:`sent`); the faults become :attr:`injector`, the fault-injecting backend of each
    group's first process.

    Parameters
    ----------
    trainer : spare_fast.torch.SpareTrainer
        The trainer that will run them.
    kills : sequence of Kill, optional
        Planned kills.
    faults : sequence of Fault or Stall, optional
        Planned spurious errors and pauses.

    Raises
    ------
    TypeError
        If a kill is not a :class:`~spare_fast.torch.testing.Kill`, or a fault neither a
        :class:`~spare_fast.torch.testing.Fault` nor a :class:`~spare_fast.torch.testing.Stall`.
    ValueError
        If one names a group outside the trainer's layout or a step outside its run.

    Examples
    --------
    >>> from spare_fast import Layout
    >>> from spare_fast.torch import SpareTrainer, TrainSpec
    >>> from spare_fast.torch.testing import mlp
    >>> spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 6)
    >>> plan = LegacyPlan(SpareTrainer(spec, Layout.cyclic(4, 2)), [Kill(1, 2)], [Fault(2, 3)])
    >>> plan.injector.faults == {Fault(2, 3)}
    True
    """

    def __init__(self, trainer: Any, kills: Sequence[Any] = (), faults: Sequence[Any] = ()) -> None:
        n_groups, steps = trainer.layout.n_groups, trainer.spec.steps
        for name, kind, items in (("kill", Kill, kills), ("fault", (Fault, Stall), faults)):
            for item in items:
                if not isinstance(item, kind):
                    raise TypeError(f"{name} = {item!r} is not a {name.capitalize()}")
                if not 0 <= item.group < n_groups:
                    raise ValueError(f"{name} group = {item.group} is not in [0, {n_groups})")
                if not 0 <= item.step < steps:
                    raise ValueError(f"{name} step = {item.step} is not in [0, {steps})")
        self.trainer = trainer
        self.kills: tuple[Kill, ...] = tuple(kills)
        self.stalls: tuple[Stall, ...] = tuple(f for f in faults if isinstance(f, Stall))
        spurious = tuple(f for f in faults if isinstance(f, Fault))
        #: The fault-injecting backend of the planned faults; None without any.
        self.injector: SpuriousErrors | None = SpuriousErrors(spurious) if spurious else None

    @contextlib.contextmanager
    def sent(self) -> Iterator[None]:
        """While inside: the kills and stalls are sent by :class:`PlannedFaults`."""
        if not (self.kills or self.stalls):
            yield
            return
        with PlannedFaults(self.trainer, self.kills, self.stalls):
            yield
