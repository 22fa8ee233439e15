"""The local half of a step: the partial sums of the shard types this process computes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from spare_fast.torch._buffer import ReduceLayout
from spare_fast.torch._errors import ProtocolError
from spare_fast.torch._rollback import Snapshot, StepState
from spare_fast.torch._types import type_seed

__all__ = ["ComputeFn", "TypeSums"]

#: ``compute(step, shard_type) -> loss``: the forward pass of one shard type (SPARe calls
#: ``backward`` on the returned scalar).
ComputeFn = Callable[[int, int], torch.Tensor]


class TypeSums:
    """Computes shard types into a step's partial sum (laid out by :class:`ReduceLayout`).

    Every type starts from the step's buffers and a generator keyed by ``(seed, step, type)``:
    what it contributes does not depend on who computes it or in what order.

    Parameters
    ----------
    model : torch.nn.Module
        The model.
    layout : ReduceLayout
        The reduced buffer's layout over the model's parameters and buffers.
    group : int
        This process's group.
    held : frozenset of int
        The types this group holds (a type outside them is a protocol error).
    seed : int
        The run's seed.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        layout: ReduceLayout,
        group: int,
        held: frozenset[int],
        seed: int,
    ) -> None:
        self.model = model
        self.layout = layout
        self.me = group
        self.held = held
        self.seed = seed
        #: A snapshot no longer needed (two steps old), whose tensors the next one reuses.
        self.spare: Snapshot | None = None

    def begin(
        self,
        step: int,
        assignment: np.ndarray,
        depth: int,
        optimizer: Any,
        scheduler: Any,
        compute: ComputeFn,
    ) -> StepState:
        """Start ``step``: keep what a rollback needs, compute this group's assigned types."""
        comp = np.asarray(assignment, dtype=np.int64).copy()
        mine = [int(t) for t in np.flatnonzero(comp == self.me)]
        state = StepState(
            step=step,
            depth=int(depth),
            comp=comp,
            local=torch.zeros(0),
            computed=list(mine),
            buffers=[x.detach().clone() for x in self.layout.buffers],
            before=Snapshot.take(self.model, optimizer, scheduler, self.spare),
        )
        self.spare = None
        state.local = self.sums(state, mine, compute)
        return state

    def _set_buffers(self, values: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for b, v in zip(self.layout.buffers, values, strict=True):
                b.copy_(v)

    def sums(self, state: StepState, types: list[int], compute: ComputeFn) -> torch.Tensor:
        """Sum over ``types`` of the gradient, the buffer change and the loss of each type."""
        total = self.layout.zeros()
        start = self.layout.flat_buffers(state.buffers)
        for t in types:
            if t not in self.held:
                raise ProtocolError(f"group {self.me} was assigned type {t} it does not hold")
            self._set_buffers(state.buffers)
            torch.manual_seed(type_seed(self.seed, state.step, t))
            self.model.zero_grad(set_to_none=False)
            loss = compute(state.step, t)
            loss.backward()
            self.layout.add_type(total, start, loss, t)
        self._set_buffers(state.buffers)
        return total
