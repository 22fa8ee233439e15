"""The step in flight and what it takes to redo it (the one-step rollback).

A gloo all-reduce can complete on some ranks and fail on others when a peer dies inside it.
A member that committed step ``s`` while a survivor did not restores the :class:`Snapshot` it
took before step ``s``'s update, and every member redoes step ``s`` together.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from spare_fast.torch._shards import load_model, load_optimizer, shards
from spare_fast.torch._types import EventRecord

__all__ = ["Snapshot", "StepState"]


def _copy(obj: Any, pool: Iterator[torch.Tensor], pairs: list[tuple[Any, Any]]) -> Any:
    """A copy of ``obj`` (nested dicts, lists and tuples of tensors and plain values): each
    tensor taken from ``pool`` when the next one there has its shape, dtype and device (the
    pair to copy is added to ``pairs``), else cloned; each other leaf deep-copied. Much faster
    than ``copy.deepcopy`` of a state dict, which the one-step rollback would take every step.
    """
    if isinstance(obj, torch.Tensor):
        src = obj.detach()
        dst = next(pool, None)
        if dst is None or (dst.shape, dst.dtype, dst.device) != (src.shape, src.dtype, src.device):
            return src.clone()
        pairs.append((dst, src))
        return dst
    if isinstance(obj, dict):
        return {k: _copy(v, pool, pairs) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_copy(v, pool, pairs) for v in obj)
    return copy.deepcopy(obj)


def _tensors(obj: Any) -> Iterator[torch.Tensor]:
    """The tensors of ``obj`` in the order :func:`_copy` meets them."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _tensors(v)


@dataclass
class Snapshot:
    """The model, optimizer and scheduler state from before a step's update (copies; a
    sharded tensor is copied as its local shard)."""

    model: dict[str, Any]
    optimizer: dict[str, Any]
    scheduler: dict[str, Any] | None

    @classmethod
    def take(
        cls, model: torch.nn.Module, optimizer: Any, scheduler: Any, reuse: Snapshot | None = None
    ) -> Snapshot:
        """Copy the current state of ``model``, ``optimizer`` and ``scheduler`` (or None).

        ``reuse``: a snapshot no longer needed, whose tensors are overwritten where they fit
        (no allocation in a steady run).
        """
        pool = iter(()) if reuse is None else _tensors([reuse.model, reuse.optimizer])
        pairs: list[tuple[Any, Any]] = []
        state = cls(
            model=_copy(shards(model.state_dict()), pool, pairs),
            optimizer=_copy(shards(optimizer.state_dict()), pool, pairs),
            scheduler=None,
        )
        if scheduler is not None:
            state.scheduler = _copy(scheduler.state_dict(), iter(()), pairs)
        with torch.no_grad():
            for dst, src in pairs:
                dst.copy_(src)
        return state

    def restore(self, model: torch.nn.Module, optimizer: Any, scheduler: Any) -> None:
        """Load the copied state back (copies of it: ``optimizer.load_state_dict`` keeps the
        tensors it is given, and this snapshot may be restored again or reused)."""
        load_model(model, self.model)
        load_optimizer(optimizer, _copy(self.optimizer, iter(()), []))
        if scheduler is not None and self.scheduler is not None:
            scheduler.load_state_dict(self.scheduler)


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
