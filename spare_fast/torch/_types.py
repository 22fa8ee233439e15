"""Plain data shared by the launcher and the workers (picklable, no process state)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch

__all__ = [
    "Phase",
    "WorkerState",
    "type_seed",
    "TrainSpec",
    "EventRecord",
    "StepRecord",
    "RunResult",
]

_MASK64 = (1 << 64) - 1


def type_seed(seed: int, step: int, shard_type: int) -> int:
    """The torch seed of shard type ``shard_type``'s forward pass in step ``step``.

    A SplitMix64 mix of the three numbers, so nearby ``(step, type)`` pairs get unrelated
    streams. Every group that computes the type seeds the generator with the same value.

    Parameters
    ----------
    seed : int
        The run's seed (:attr:`TrainSpec.seed`).
    step, shard_type : int
        Which step and which of the N shard types.

    Returns
    -------
    int
        A seed in ``[0, 2**63)``.

    Examples
    --------
    >>> type_seed(0, 3, 1) == type_seed(0, 3, 1) != type_seed(0, 3, 2)
    True
    """
    z = 0
    for part in (int(seed), int(step), int(shard_type)):
        z = (z + part + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        z ^= z >> 31
    return z >> 1


class Phase(enum.IntEnum):
    """Where a worker is, as it reports it (:meth:`SpareTrainer.workers`)."""

    #: Process started, building the model and connecting.
    STARTING = 0
    #: Waiting for the full membership at the start of an epoch (first start or restart).
    JOIN = 1
    #: Computing its types' gradient sums (patch types included).
    COMPUTE = 2
    #: Inside the step's bucketed all-reduce; :attr:`WorkerState.bucket` says which bucket.
    ALLREDUCE = 3
    #: A collective failed: agreeing the new membership, rebuilding the process group.
    RECOVER = 4
    #: Writing a checkpoint.
    CHECKPOINT = 5
    #: A wipe-out: reloading the checkpoint before the next epoch's join.
    RESTART = 6
    #: All steps committed: agreeing that every member has, writing the final parameters.
    FINISH = 7
    #: Sending or receiving the state that brings a rejoining process up to date.
    HEAL = 8


@dataclass(frozen=True)
class WorkerState:
    """What one group's current worker process last reported.

    Attributes
    ----------
    group : int
        The group.
    pid : int
        Process id of the worker that runs it now.
    epoch : int
        Restart count it is in.
    step : int
        Step it is working on (the number of steps it has committed).
    phase : Phase
        Where in the step it is.
    bucket : int
        In :attr:`Phase.ALLREDUCE`, the index of the bucket being reduced (buckets before it
        are done); 0 otherwise.
    """

    group: int
    pid: int
    epoch: int
    step: int
    phase: Phase
    bucket: int = 0


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
        A checkpoint is written before step 0, whenever the number of committed steps is a
        multiple of this, and after the last step.
    scheduler : callable, optional
        ``scheduler(optimizer) -> torch.optim.lr_scheduler.LRScheduler``, stepped once after
        every optimizer step; its state is checkpointed and rolled back with the optimizer's.
    seed : int, optional
        Seed of all randomness in the forward pass. Before the forward of shard type ``t`` in
        step ``s`` the torch generator is seeded with :func:`type_seed` ``(seed, s, t)``, so a
        dropout mask depends only on ``(seed, s, t)``, never on which group computes the type.

    Notes
    -----
    Module buffers (BatchNorm running statistics) are reduced over the N types like the
    gradients: every type's forward starts from the buffers at the start of the step, and the
    step ends with ``buffer + (1/N) * sum over types of (buffer after that type - buffer)``
    (rounded for integer buffers such as ``num_batches_tracked``, which thus grows by one per
    step). The result is the same whichever group computed which type.

    Raises
    ------
    TypeError
        If one of the four callables is not callable.
    ValueError
        If ``steps < 1`` or ``checkpoint_every < 1``.

    Examples
    --------
    >>> from spare_fast.torch.testing import mlp
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
    scheduler: Callable[[torch.optim.Optimizer], Any] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("model", "optimizer", "loss", "shard"):
            if not callable(getattr(self, name)):
                raise TypeError(f"TrainSpec.{name} = {getattr(self, name)!r} is not callable")
        if self.scheduler is not None and not callable(self.scheduler):
            raise TypeError(f"TrainSpec.scheduler = {self.scheduler!r} is not callable")
        if int(self.steps) < 1:
            raise ValueError(f"steps = {self.steps} must be >= 1")
        if int(self.checkpoint_every) < 1:
            raise ValueError(f"checkpoint_every = {self.checkpoint_every} must be >= 1")


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
    decided_at : float
        ``time.monotonic()`` when the decision was taken (the clock is system-wide, so it
        compares with the time a signal was sent from another process).
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
    decided_at: float = 0.0


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
    committed_at : float
        ``time.monotonic()`` when the reporting member committed the step.
    """

    step: int
    epoch: int
    depth: int
    members: tuple[int, ...]
    events: tuple[EventRecord, ...]
    computed: dict[int, tuple[int, ...]]
    loss: float
    committed_at: float = 0.0


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
        it with members that had not (see :class:`~spare_fast.torch.testing.Fault`).
    pids : dict of int to list of int
        Per group, the process ids that ran it, in start order.
    seconds : float
        Wall time of the run.
    exit_codes : dict of int to list of int
        Per group, the exit code of each process in ``pids`` (negative: killed by that
        signal; 3: dropped by the others and stood down; 4: a replacement that was not
        needed because the epoch had formed without it).
    resumed_from : int or None
        The step of the checkpoint a ``resume=True`` run continued from.
    rejected_checkpoints : list of (str, str)
        ``(path, reason)`` of each checkpoint that failed verification and was skipped.
    rejoins : list of (int, int)
        ``(group, step)``: a replacement of ``group`` was admitted after ``step`` committed
        steps (``SpareTrainer(rejoin_after=...)``).
    """

    params: dict[str, torch.Tensor]
    steps: list[StepRecord]
    wipeouts: list[EventRecord] = field(default_factory=list)
    restarts: int = 0
    rollbacks: list[tuple[int, int]] = field(default_factory=list)
    pids: dict[int, list[int]] = field(default_factory=dict)
    seconds: float = 0.0
    exit_codes: dict[int, list[int]] = field(default_factory=dict)
    resumed_from: int | None = None
    rejected_checkpoints: list[tuple[str, str]] = field(default_factory=list)
    rejoins: list[tuple[int, int]] = field(default_factory=list)


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
