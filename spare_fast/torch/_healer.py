"""Healing: the state a replacement needs, sent by a live member over the new process group.

The state is the model's, the optimizer's and the scheduler's ``state_dict``, the step count,
the controller's call history since the epoch began (a replacement replays it on a fresh
controller, so its controller is the survivors') and the join count already seen. The lowest
member that has the state broadcasts it, size first, to every member in one round. With a run
key the payload carries its HMAC (:meth:`~spare_fast.torch._auth.RunKey.seal`), checked before
anything is unpickled.

In a group of K ranks, rank ``i`` of the source sends its own shards to rank ``i`` of each
member that needs the state (over rank ``i``'s process group): a ``DTensor`` travels as its
local shard and is wrapped again like the receiver's own parameter.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from spare_fast.torch._auth import RunKey
from spare_fast.torch._collective import Collectives
from spare_fast.torch._shards import load_model, load_optimizer, shards

__all__ = ["HealState", "Healer"]


@dataclass
class HealState:
    """What travels to a replacement."""

    step: int
    model: dict[str, Any]
    optimizer: dict[str, Any]
    scheduler: dict[str, Any] | None
    history: list[tuple[str, list[int]]]
    join_seen: int

    def pack(self) -> bytes:
        """The state as bytes (``torch.save`` of plain containers; local shards of DTensors)."""
        buf = io.BytesIO()
        torch.save(
            {
                "step": self.step,
                "model": shards(self.model),
                "optimizer": shards(self.optimizer),
                "scheduler": self.scheduler,
                "history": self.history,
                "join_seen": self.join_seen,
            },
            buf,
        )
        return buf.getvalue()

    @classmethod
    def unpack(cls, data: bytes) -> HealState:
        """The inverse of :meth:`pack` (``weights_only`` loading)."""
        blob = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
        return cls(
            step=int(blob["step"]),
            model=blob["model"],
            optimizer=blob["optimizer"],
            scheduler=blob["scheduler"],
            history=[(str(k), [int(g) for g in gs]) for k, gs in blob["history"]],
            join_seen=int(blob["join_seen"]),
        )

    def load_into(self, model: torch.nn.Module, optimizer: Any, scheduler: Any) -> None:
        """Load the received model, optimizer and scheduler state (shards wrapped again)."""
        load_model(model, self.model)
        load_optimizer(optimizer, self.optimizer)
        if scheduler is not None:
            scheduler.load_state_dict(self.scheduler)


class Healer:
    """Sends the state from the lowest member that has it to the members that need it.

    Parameters
    ----------
    collectives : Collectives
        The process group of the current membership.
    auth : RunKey, optional
        The run key sealing the payload.
    """

    def __init__(self, collectives: Collectives, auth: RunKey | None = None) -> None:
        self.collectives = collectives
        self.auth = auth or RunKey(None)

    @staticmethod
    def source(members: tuple[int, ...], needs: list[int]) -> int:
        """The group that sends: the lowest member that has the state."""
        return min(g for g in members if g not in needs)

    def heal(
        self,
        members: tuple[int, ...],
        me: int,
        needs: list[int],
        state: Callable[[], HealState],
        receive: bool,
    ) -> HealState | None:
        """One round of state transfer; returns the received state where ``receive`` (this
        process lacks the state), None elsewhere.

        ``state()`` is called in the source only. Raises RuntimeError when a member dies during
        it; the caller then recovers, and the next process group heals again if a member
        still lacks the state.
        """
        source = self.source(members, needs)
        root = members.index(source)
        payload = self.auth.seal(state().pack()) if me == source else b""
        size = torch.tensor([len(payload)], dtype=torch.int64)
        self.collectives.broadcast(size, root)
        data = (
            torch.frombuffer(bytearray(payload), dtype=torch.uint8)
            if me == source
            else torch.empty(int(size), dtype=torch.uint8)
        )
        self.collectives.broadcast(data, root)
        if not receive:
            return None
        return HealState.unpack(self.auth.unseal(data.numpy().tobytes(), "heal payload"))
