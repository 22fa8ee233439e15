"""The named layout of the buffer a step all-reduces.

One flat tensor per step carries, in this order: the gradient sums of every parameter, the
summed changes of every module buffer, the summed loss, and the join slot (how many times a
waiting replacement announced itself; only the lowest member writes it, so every member reads
the same count after the sum). :class:`ReduceLayout` names those fields; nothing else indexes
the tensor.

With the ordered sum (``slots = N``) each shard type has a slot of its own (gradients, buffer
changes, loss): slot 0 where the one-slot buffer has its fields, the join slot after it, then
slots 1 to N - 1. A type's values go to its slot only, so after the all-reduce every slot
holds one type's values plus exact zeros, and :meth:`ReduceLayout.fold` adds the slots in type
order: the sum does not depend on which group computed which type.

A parameter or buffer sharded inside a group of K ranks (a ``DTensor`` of FSDP2 or tensor
parallelism) takes its local shard's place: rank ``i`` of every group reduces the shards of
rank ``i``. The buffer lives on the parameters' device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.distributed.tensor import DTensor

__all__ = ["ReduceLayout", "local"]


def local(x: torch.Tensor) -> torch.Tensor:
    """The local shard of a ``DTensor`` (detached), else ``x`` itself. Call it under
    ``torch.no_grad()`` on a hot path: ``to_local`` then returns the shard without an autograd
    node (several times cheaper)."""
    return x.to_local().detach() if isinstance(x, DTensor) else x


def _like(value: torch.Tensor, param: torch.Tensor, grad: Any) -> torch.Tensor:
    """``value`` (a local shard) as a gradient of ``param`` (a DTensor like its gradient)."""
    if not isinstance(param, DTensor):
        return value
    spec = grad if isinstance(grad, DTensor) else param
    return DTensor.from_local(
        value, spec.device_mesh, spec.placements, run_check=False, shape=spec.shape,
        stride=spec.stride(),
    )  # fmt: skip


class ReduceLayout:
    """Where each field lives in the reduced buffer of a model's parameters and buffers.

    Parameters
    ----------
    params : sequence of Tensor
        The model's parameters, in ``model.parameters()`` order.
    buffers : sequence of Tensor
        Its module buffers, in ``model.buffers()`` order.
    dtype : torch.dtype
        The buffer's dtype (the parameters').
    slots : int, optional
        1 (default): every type adds into the same fields. N (the number of shard types): a
        slot per type, added in type order by :meth:`fold` (the buffer is then N times as
        long, less one join slot).

    Examples
    --------
    >>> w = torch.zeros(2, 3)
    >>> lay = ReduceLayout([w], [], torch.float32)
    >>> (lay.numel, lay.grads, lay.loss, lay.join)
    (8, slice(0, 6, None), 6, 7)
    >>> ReduceLayout([w], [], torch.float32, slots=3).numel  # 3 slots of 7, one join slot
    22
    """

    def __init__(
        self,
        params: Sequence[torch.Tensor],
        buffers: Sequence[torch.Tensor],
        dtype: torch.dtype,
        slots: int = 1,
    ) -> None:
        if type(slots) is not int or slots < 1:
            raise ValueError(f"slots = {slots!r} is not a whole number >= 1")
        self.params = list(params)
        self.buffers = list(buffers)
        self.dtype = dtype
        self.device = self.params[0].device if self.params else torch.device("cpu")
        #: The local shard shape of each parameter.
        self.param_shapes = [local(p).shape for p in self.params]
        self.n_params = sum(shape.numel() for shape in self.param_shapes)
        #: Where :meth:`apply` puts the mean gradients, and a view of it per parameter.
        self._mean = torch.zeros(self.n_params, dtype=dtype, device=self.device)
        self._mean_views = [
            piece.view(shape)
            for piece, shape in zip(
                self._mean.split([shape.numel() for shape in self.param_shapes]),
                self.param_shapes,
                strict=True,
            )
        ]
        self.n_buffers = sum(local(b).numel() for b in self.buffers)
        #: The gradient sums, parameter after parameter.
        self.grads = slice(0, self.n_params)
        #: The summed changes of the module buffers, buffer after buffer.
        self.buffer_deltas = slice(self.n_params, self.n_params + self.n_buffers)
        #: Index of the summed loss.
        self.loss = self.n_params + self.n_buffers
        #: Numbers of one type's slot (gradients, buffer changes, loss).
        self.width = self.loss + 1
        #: Index of the join slot.
        self.join = self.width
        #: Slots: 1, or one per shard type (the ordered sum).
        self.slots = slots
        #: Length of the buffer.
        self.numel = self.join + 1 + (slots - 1) * self.width

    def offset(self, shard_type: int) -> int:
        """Where the slot of ``shard_type`` begins (0 with one slot)."""
        if self.slots == 1 or shard_type == 0:
            return 0
        return self.join + 1 + (shard_type - 1) * self.width

    def fold(self, reduced: torch.Tensor) -> torch.Tensor:
        """The one-slot buffer of ``reduced``: its slots added in type order (slot 0, then 1,
        ...), and its join slot; ``reduced`` itself with one slot."""
        if self.slots == 1:
            return reduced
        out = reduced[: self.join + 1].clone()
        for t in range(1, self.slots):
            begin = self.offset(t)
            out[: self.width] += reduced[begin : begin + self.width]
        return out

    def zeros(self) -> torch.Tensor:
        """An empty (all-zero) buffer."""
        return torch.zeros(self.numel, dtype=self.dtype, device=self.device)

    @torch.no_grad()
    def flat_grads(self) -> torch.Tensor:
        """The parameters' current gradients, flattened (zeros where a gradient is None)."""
        return torch.cat(
            [
                torch.zeros_like(local(p)).reshape(-1)
                if p.grad is None
                else local(p.grad).reshape(-1)
                for p in self.params
            ]
        )

    @torch.no_grad()
    def flat_buffers(self, values: Sequence[torch.Tensor] | None = None) -> torch.Tensor | None:
        """``values`` (the module buffers by default) flattened in the buffer dtype; None if
        the model has no buffers."""
        if not self.buffers:
            return None
        src = self.buffers if values is None else values
        return torch.cat([local(x).detach().reshape(-1).to(self.dtype) for x in src])

    @torch.no_grad()
    def add_type(
        self,
        total: torch.Tensor,
        start: torch.Tensor | None,
        loss: torch.Tensor,
        shard_type: int = 0,
    ) -> None:
        """Add one computed type to ``total`` (in the slot of ``shard_type``): the current
        gradients, the module buffers' change since ``start`` (equal values change by exactly
        0), and ``loss``."""
        at = self.offset(shard_type)
        total[at + self.grads.start : at + self.grads.stop] += self.flat_grads()
        if start is not None:
            now = self.flat_buffers()
            assert now is not None
            deltas = slice(at + self.buffer_deltas.start, at + self.buffer_deltas.stop)
            total[deltas] += torch.where(now == start, torch.zeros_like(now), now - start)
        total[at + self.loss] += local(loss).detach()

    @torch.no_grad()
    def apply(self, reduced: torch.Tensor, start: Sequence[torch.Tensor], n: int) -> None:
        """Set every ``grad`` to its ``sum / n`` and every buffer to ``start + sum / n``
        (rounded for integer buffers); ``reduced`` has one slot (see :meth:`fold`)."""
        torch.div(reduced[self.grads], n, out=self._mean)
        for param, value in zip(self.params, self._mean_views, strict=True):
            grad = param.grad
            now = None if grad is None else local(grad)
            if now is not None and now.shape == value.shape and now.dtype == value.dtype:
                now.copy_(value)  # in place: cheaper than a new tensor or DTensor
            else:
                param.grad = _like(value.clone(), param, grad)
        offset = self.n_params
        for buf, begin in zip(self.buffers, start, strict=True):
            shard = local(buf)
            k = shard.numel()
            delta = (reduced[offset : offset + k] / n).reshape(shard.shape)
            value = local(begin).to(self.dtype) + delta
            if not buf.is_floating_point():
                value = value.round()
            shard.copy_(value.to(buf.dtype))
            offset += k

    def mean_loss(self, reduced: torch.Tensor, n: int) -> float:
        """The step's global loss ``sum / n``."""
        return float(reduced[self.loss]) / n

    def waiting(self, reduced: torch.Tensor) -> int:
        """The join count the lowest member put in the join slot."""
        return int(reduced[self.join])
