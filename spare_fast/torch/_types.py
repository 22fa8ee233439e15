"""Plain data shared by the launcher and the workers (picklable, no process state)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta

import torch

__all__ = [
    "TrainSpec",
    "Kill",
    "Fault",
    "Stall",
    "EventRecord",
    "StepRecord",
    "RunResult",
    "parse_kill",
]

_PHASES = ("compute", "allreduce")


@dataclass(frozen=True)
class TrainSpec:
    """What to train: model, optimizer, loss and the per-step shard source.

    Every callable must be importable by name (a module-level function): each worker is a
    fresh interpreter that unpickles the spec.

    Parameters
    ----------
    model : callable
        ``model() -> torch.nn.Module``; must return the same initial weights on every call.
    optimizer : callable
        ``optimizer(params) -> torch.optim.Optimizer``.
    loss : callable
        ``loss(output, target) -> scalar tensor``, the loss of one shard type.
    shard : callable
        ``shard(step, shard_type) -> (inputs, targets)``, deterministic in its arguments.
    steps : int
        Number of optimizer steps.
    checkpoint_every : int, optional
        A checkpoint is written before step 0 and whenever the number of committed steps is a
        multiple of this.

    Raises
    ------
    TypeError
        If one of the four callables is not callable.
    ValueError
        If ``steps < 1`` or ``checkpoint_every < 1``.

    Examples
    --------
    >>> from spare_fast.torch import mlp
    >>> spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 4)
    >>> spec.steps
    4
    """

    model: Callable[[], torch.nn.Module]
    optimizer: Callable[[Iterable[torch.nn.Parameter]], torch.optim.Optimizer]
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    shard: Callable[[int, int], tuple[torch.Tensor, torch.Tensor]]
    steps: int
    checkpoint_every: int = 2

    def __post_init__(self) -> None:
        for name in ("model", "optimizer", "loss", "shard"):
            if not callable(getattr(self, name)):
                raise TypeError(f"TrainSpec.{name} = {getattr(self, name)!r} is not callable")
        if int(self.steps) < 1:
            raise ValueError(f"steps = {self.steps} must be >= 1")
        if int(self.checkpoint_every) < 1:
            raise ValueError(f"checkpoint_every = {self.checkpoint_every} must be >= 1")


@dataclass(frozen=True)
class Kill:
    """Kill group ``group``'s worker with SIGKILL at step ``step``.

    The victim sends SIGKILL to itself, so the point is exact: ``phase="compute"`` kills it at
    the start of the step before it computes its types; ``phase="allreduce"`` kills it inside
    the step's bucketed all-reduce, once the first bucket has been reduced and before the next,
    so its peers are mid-collective with part of the step's sums already exchanged.
    A kill fires once, in the group's first process (never in a replacement started after a
    wipe-out).

    Parameters
    ----------
    group : int
        The victim group.
    step : int
        The step at which it dies.
    phase : {"compute", "allreduce"}, optional
        Where in the step it dies.

    Raises
    ------
    ValueError
        If ``phase`` is unknown or ``group``/``step`` is negative.

    Examples
    --------
    >>> Kill(2, 5, "allreduce")
    Kill(group=2, step=5, phase='allreduce')
    """

    group: int
    step: int
    phase: str = "compute"

    def __post_init__(self) -> None:
        if self.phase not in _PHASES:
            raise ValueError(f"phase = {self.phase!r} is not one of {_PHASES}")
        if int(self.group) < 0 or int(self.step) < 0:
            raise ValueError(f"Kill(group={self.group}, step={self.step}) needs both >= 0")


@dataclass(frozen=True)
class Fault:
    """Group ``group``'s all-reduce of step ``step`` reports a failure after it has completed.

    Nobody dies: this is a spurious collective error on one rank (a timeout that fired late, a
    transient network error). The other members have completed the step and moved on, so the
    quorum that follows finds them one step ahead of ``group``; they roll back one step and all
    redo it. Fires once, in the group's first process.

    Parameters
    ----------
    group : int
        The group whose collective reports the error.
    step : int
        The step whose all-reduce it hits.

    Raises
    ------
    ValueError
        If ``group`` or ``step`` is negative.

    Examples
    --------
    >>> Fault(1, 3)
    Fault(group=1, step=3)
    """

    group: int
    step: int

    def __post_init__(self) -> None:
        if int(self.group) < 0 or int(self.step) < 0:
            raise ValueError(f"Fault(group={self.group}, step={self.step}) needs both >= 0")


@dataclass(frozen=True)
class Stall:
    """Group ``group``'s worker is suspended (SIGSTOP) for ``seconds`` at the start of ``step``.

    A suspended process neither heartbeats nor answers collectives, but it is not dead: if
    the pause outlasts the heartbeat timeout and the collective timeout, the others agree a
    membership without it and carry on. When it resumes it finds itself dropped and stands
    down (exit code 3), which the launcher treats as a failure of that group. Fires once, in
    the group's first process.

    Parameters
    ----------
    group : int
        The group to suspend.
    step : int
        The step at whose start it is suspended.
    seconds : float
        Length of the pause.

    Raises
    ------
    ValueError
        If ``group`` or ``step`` is negative or ``seconds`` is not positive.

    Examples
    --------
    >>> Stall(2, 3, 6.0)
    Stall(group=2, step=3, seconds=6.0)
    """

    group: int
    step: int
    seconds: float

    def __post_init__(self) -> None:
        if int(self.group) < 0 or int(self.step) < 0 or not float(self.seconds) > 0:
            raise ValueError(
                f"Stall(group={self.group}, step={self.step}, seconds={self.seconds}) needs "
                "group, step >= 0 and seconds > 0"
            )


def parse_kill(text: str) -> Kill:
    """Parse ``WORKER@STEP`` or ``WORKER@STEP:PHASE`` (PHASE ``compute`` or ``allreduce``).

    Parameters
    ----------
    text : str
        The command-line form of a kill.

    Returns
    -------
    Kill

    Raises
    ------
    ValueError
        If ``text`` does not have that form, naming it.

    Examples
    --------
    >>> parse_kill("2@5:allreduce")
    Kill(group=2, step=5, phase='allreduce')
    >>> parse_kill("1@3").phase
    'compute'
    """
    head, _, phase = text.partition(":")
    worker, at, step = head.partition("@")
    if not at or not worker.strip().isdigit() or not step.strip().isdigit():
        raise ValueError(f"kill = {text!r} is not WORKER@STEP or WORKER@STEP:PHASE")
    return Kill(int(worker), int(step), phase.strip() or "compute")


@dataclass(frozen=True)
class EventRecord:
    """One agreed membership change and the controller's decision for it.

    Attributes
    ----------
    quorum_id : int
        The torchft lighthouse quorum that agreed the new membership.
    dead : tuple of int
        Groups that left the membership in this event.
    status : str
        ``"OK"`` or ``"WIPEOUT"``.
    phase, depth, moves : int
        The controller decision's phase, depth and moves.
    patch : tuple of (int, int)
        The decision's patch rows ``(type, group)``.
    patch_computed : tuple of (int, int)
        The ``(type, group)`` pairs recomputed in the current step: types whose in-step
        computer died, with their new provider. Equal to ``patch`` unless two events hit one
        step and the first moved a type from one survivor to another.
    step : int
        Step during which the event was agreed.
    seconds : float
        Wall time from the failed collective to the agreed quorum and the decision.
    """

    quorum_id: int
    dead: tuple[int, ...]
    status: str
    phase: int
    depth: int
    moves: int
    patch: tuple[tuple[int, int], ...]
    patch_computed: tuple[tuple[int, int], ...]
    step: int
    seconds: float


@dataclass(frozen=True)
class StepRecord:
    """What happened in one committed step.

    Attributes
    ----------
    step : int
        Step index.
    epoch : int
        Restart count when the step committed (0 before any wipe-out).
    depth : int
        Depth in effect at the start of the step.
    members : tuple of int
        Groups in the all-reduce that committed the step.
    events : tuple of EventRecord
        Membership events agreed during the step, in order.
    computed : dict of int to tuple of int
        ``computed[g]``: the types group ``g`` computed in this step, patch types included, as
        that worker reported it.
    loss : float
        The step's global loss ``(1/N) * sum of the N per-type losses`` at the weights before
        the update.
    """

    step: int
    epoch: int
    depth: int
    members: tuple[int, ...]
    events: tuple[EventRecord, ...]
    computed: dict[int, tuple[int, ...]]
    loss: float


@dataclass
class RunResult:
    """Outcome of :meth:`SpareTrainer.run`.

    Attributes
    ----------
    params : dict of str to torch.Tensor
        Final parameters by name (CPU).
    steps : list of StepRecord
        One record per step, in order (the final commit of each step).
    wipeouts : list of EventRecord
        Events that ended in a wipe-out (each caused a restart from checkpoint).
    restarts : int
        Number of global restarts.
    rollbacks : list of (int, int)
        ``(group, step)`` for each time a worker that had committed ``step`` undid it to redo
        it with members that had not (see :class:`Fault`).
    pids : dict of int to list of int
        Per group, the process ids that ran it, in start order.
    seconds : float
        Wall time of the run.
    """

    params: dict[str, torch.Tensor]
    steps: list[StepRecord]
    wipeouts: list[EventRecord] = field(default_factory=list)
    restarts: int = 0
    rollbacks: list[tuple[int, int]] = field(default_factory=list)
    pids: dict[int, list[int]] = field(default_factory=dict)
    seconds: float = 0.0


def as_timedelta(value: timedelta | float, name: str) -> timedelta:
    """Seconds or a timedelta -> a positive timedelta.

    Raises
    ------
    ValueError
        If the duration is not positive, naming ``name``.

    Examples
    --------
    >>> as_timedelta(1.5, "t").total_seconds()
    1.5
    """
    td = value if isinstance(value, timedelta) else timedelta(seconds=float(value))
    if td.total_seconds() <= 0:
        raise ValueError(f"{name} = {value!r} must be positive")
    return td
