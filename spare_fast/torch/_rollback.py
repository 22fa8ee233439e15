"""The step in flight and what it takes to redo it (the one-step rollback).

A gloo all-reduce can complete on some ranks and fail on others when a peer dies inside it.
A member that committed step ``s`` while a survivor did not restores the :class:`Snapshot` it
took before step ``s``'s update, and every member redoes step ``s`` together.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch.distributed.tensor import DTensor

from spare_fast.torch._buffer import local
from spare_fast.torch._shards import SHARD, load_optimizer
from spare_fast.torch._types import EventRecord

__all__ = ["Snapshot", "StepState"]


class _Copies:
    """The tensor copies of one snapshot, in the order they are made: each copy reuses the
    tensor at its position in an old snapshot's list when shape, dtype and device match (no
    allocation in a steady run), and all copies are made by one ``copy_`` pass at the end."""

    def __init__(self, old: list[torch.Tensor]) -> None:
        self.old = old
        self.src: list[torch.Tensor] = []
        self.dst: list[torch.Tensor] = []

    def keep(self, src: torch.Tensor) -> torch.Tensor:
        """The copy of ``src`` (filled in by :meth:`fill`)."""
        i = len(self.dst)
        dst = self.old[i] if i < len(self.old) else None
        if (
            dst is None
            or dst.shape != src.shape
            or dst.dtype != src.dtype
            or dst.device != src.device
        ):
            dst = torch.empty_like(src, memory_format=torch.preserve_format)
        self.src.append(src)
        self.dst.append(dst)
        return dst

    def value(self, obj: Any) -> Any:
        """A copy of one optimizer state value: a DTensor as ``{SHARD: local copy}``."""
        if isinstance(obj, DTensor):
            return {SHARD: self.keep(obj.to_local())}
        if isinstance(obj, torch.Tensor):
            return self.keep(obj)
        return copy.deepcopy(obj)

    def fill(self) -> list[torch.Tensor]:
        """Copy every source into its copy; the copies."""
        for dst, src in zip(self.dst, self.src, strict=True):
            dst.copy_(src)
        return self.dst


@dataclass
class Snapshot:
    """The model, optimizer and scheduler state from before a step's update (copies; a
    sharded tensor is copied as its local shard).

    It is taken every step, so it reads the live tensors directly instead of building state
    dicts: the model's parameters and buffers by name, the optimizer's per-parameter state by
    the parameter's index (the numbering of ``optimizer.state_dict()``) and its groups'
    hyperparameters. A restore is rare and takes the general path (``load_state_dict``).
    """

    #: Local shard copy of each parameter and buffer, by name.
    model: dict[str, torch.Tensor]
    #: Per-parameter optimizer state (``shards`` form), by the parameter's index.
    optimizer: dict[int, dict[str, Any]]
    #: Each parameter group's hyperparameters (everything but ``params``) and its size.
    groups: list[tuple[dict[str, Any], int]]
    scheduler: dict[str, Any] | None
    #: Every tensor copy above, in the order they were made (what the next snapshot reuses).
    tensors: list[torch.Tensor] = field(default_factory=list, repr=False)

    @classmethod
    @torch.no_grad()
    def take(
        cls, model: torch.nn.Module, optimizer: Any, scheduler: Any, reuse: Snapshot | None = None
    ) -> Snapshot:
        """Copy the current state of ``model``, ``optimizer`` and ``scheduler`` (or None).
        ``reuse``: a snapshot no longer needed, whose tensors are overwritten where they fit
        (no allocation in a steady run).
        """
        copies = _Copies([] if reuse is None else reuse.tensors)
        live = [*model.named_parameters(), *model.named_buffers()]
        kept = {name: copies.keep(local(t)) for name, t in live}
        state: dict[int, dict[str, Any]] = {}
        params = [p for group in optimizer.param_groups for p in group["params"]]
        for i, p in enumerate(params):
            per_param = optimizer.state.get(p)
            if per_param:
                state[i] = {k: copies.value(v) for k, v in per_param.items()}
        groups = [
            ({k: copy.deepcopy(v) for k, v in g.items() if k != "params"}, len(g["params"]))
            for g in optimizer.param_groups
        ]
        sched = None if scheduler is None else copy.deepcopy(scheduler.state_dict())
        tensors = copies.fill()
        return cls(model=kept, optimizer=state, groups=groups, scheduler=sched, tensors=tensors)

    def restore(self, model: torch.nn.Module, optimizer: Any, scheduler: Any) -> None:
        """Load the copied state back: the model's tensors in place, the optimizer and the
        scheduler through their ``load_state_dict`` (given copies: the optimizer keeps the
        tensors it is given, and this snapshot may be restored again or reused)."""
        live = dict([*model.named_parameters(), *model.named_buffers()])
        changed = sorted(set(live) ^ set(self.model))
        if changed:
            raise ValueError(f"the model's tensors changed since the snapshot: {changed[:4]}")
        with torch.no_grad():
            for name, t in live.items():
                local(t).copy_(self.model[name])
        ids, param_groups = 0, []
        for hyper, size in self.groups:
            param_groups.append({**copy.deepcopy(hyper), "params": list(range(ids, ids + size))})
            ids += size
        state = copy.deepcopy(self.optimizer)
        load_optimizer(optimizer, {"state": state, "param_groups": param_groups})
        if scheduler is not None and self.scheduler is not None:
            scheduler.load_state_dict(copy.deepcopy(self.scheduler))


@dataclass
class StepState:
    """One step in flight: what this process computed and what it needs to redo it.

    Attributes
    ----------
    step : int
        The step.
    depth : int
        The controller's depth when it began.
    comp : numpy.ndarray
        ``comp[t]``: the group whose partial sum holds type ``t`` this step (patched in place
        when a failure moves a type).
    local : Tensor
        This process's partial sum, laid out by :class:`~spare_fast.torch._buffer.ReduceLayout`.
    computed : list of int
        The types this process summed into ``local``.
    buffers : list of Tensor
        The module buffers at the start of the step.
    before : Snapshot
        The state before the step's update.
    events : list of EventRecord
        Membership events decided while the step was in flight.
    """

    step: int
    depth: int
    comp: np.ndarray
    local: torch.Tensor
    computed: list[int]
    buffers: list[torch.Tensor]
    before: Snapshot
    events: list[EventRecord] = field(default_factory=list)

    def record(self, members: tuple[int, ...], loss: float) -> dict[str, Any]:
        """The commit record of this step (one line of a worker's record file)."""
        return {
            "kind": "step",
            "step": self.step,
            "depth": self.depth,
            "members": list(members),
            "events": [asdict(e) for e in self.events],
            "computed": sorted(self.computed),
            "assigned": [int(g) for g in self.comp],
            "loss": loss,
            "committed_at": time.monotonic(),
        }
