"""Plain data shared by the launcher and the workers (picklable, no process state)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import torch

__all__ = ["TrainSpec", "Kill", "EventRecord", "StepRecord", "RunResult", "parse_kill"]

_PHASES = ("compute", "allreduce")


@dataclass(frozen=True)
class TrainSpec:
    """What to train: model, optimizer, loss and the per-step shard source.

    Every callable must be importable by name (a module-level function), because worker
    processes are started with ``spawn`` and unpickle the spec.

    Args:
        model: ``model() -> torch.nn.Module``; must return the same initial weights each call.
        optimizer: ``optimizer(params) -> torch.optim.Optimizer``.
        loss: ``loss(output, target) -> scalar tensor``, the loss of one shard type.
        shard: ``shard(step, shard_type) -> (inputs, targets)``, deterministic in its arguments.
        steps: Number of optimizer steps.
        checkpoint_every: A checkpoint is written after every step that is a multiple of this
            (and before step 0).

    Examples:
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
    A kill applies to the first process of the group only (not to a replacement started after
    a wipe-out).

    Examples:
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


def parse_kill(text: str) -> Kill:
    """Parse ``WORKER@STEP`` or ``WORKER@STEP:PHASE`` (PHASE ``compute`` or ``allreduce``).

    Examples:
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

    Args:
        quorum_id: The torchft lighthouse quorum that agreed the new membership.
        dead: Groups that left the membership in this event.
        status: ``"OK"`` or ``"WIPEOUT"``.
        phase: Controller phase (0, 1, 2).
        depth: The decision's depth.
        moves: The decision's moves.
        patch: The decision's patch rows ``(type, group)``.
        patch_computed: The ``(type, group)`` pairs actually recomputed in the current step:
            types whose in-step computer died, with their new provider. Equal to ``patch``
            unless two events hit one step and the first moved a type between survivors.
        step: Step during which the event was agreed.
        seconds: Wall time from the collective error to the rebuilt process group.
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

    Args:
        step: Step index.
        epoch: Restart count when the step committed (0 before any wipe-out).
        depth: Depth in effect at the start of the step.
        members: Groups in the all-reduce that committed the step.
        events: Membership events agreed during the step, in order.
        computed: ``computed[g]`` lists the types group ``g`` computed in this step, patch
            types included, as that worker reported it.
        loss: The step's global loss ``(1/N) * sum of the N per-type losses`` at the weights
            before the update.
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

    Args:
        params: Final parameters by name (float tensors, CPU).
        steps: One :class:`StepRecord` per step, in order (the final commit of each step).
        wipeouts: Events that ended in a wipe-out (each caused a restart from checkpoint).
        restarts: Number of global restarts.
        pids: Per group, the process ids that ran it, in start order.
        seconds: Wall time of the run.
    """

    params: dict[str, torch.Tensor]
    steps: list[StepRecord]
    wipeouts: list[EventRecord] = field(default_factory=list)
    restarts: int = 0
    pids: dict[int, list[int]] = field(default_factory=dict)
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def as_timedelta(value: timedelta | float, name: str) -> timedelta:
    """Seconds or a timedelta -> a positive timedelta (ValueError naming ``name`` otherwise)."""
    td = value if isinstance(value, timedelta) else timedelta(seconds=float(value))
    if td.total_seconds() <= 0:
        raise ValueError(f"{name} = {value!r} must be positive")
    return td
