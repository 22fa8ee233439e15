"""Sharded state as plain data: a ``DTensor`` (FSDP2's or tensor parallelism's) travels and is
kept as its local shard, and is wrapped again like the receiver's own tensor when loaded.

Used by the heal (rank ``i`` of a live group sends its shards to rank ``i`` of a replacement)
and the one-step rollback's snapshot (copying local shards is much cheaper than copying
``DTensor`` objects).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.distributed.tensor import DTensor

__all__ = ["SHARD", "load_model", "load_optimizer", "shards"]

#: Key of the dict a DTensor's local shard travels in.
SHARD = "__local_shard__"


def shards(obj: Any) -> Any:
    """``obj`` with every DTensor replaced by ``{SHARD: its local shard}`` (not a copy)."""
    if isinstance(obj, DTensor):
        return {SHARD: obj.to_local().detach()}
    if isinstance(obj, dict):
        return {k: shards(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(shards(v) for v in obj)
    return obj


def _unpack(value: Any, like: Any) -> Any:
    """A received shard wrapped as a DTensor like ``like``; anything else as it came."""
    if isinstance(value, dict) and set(value) == {SHARD}:
        shard = value[SHARD]
        if not isinstance(like, DTensor):
            raise ValueError(f"a sharded tensor was sent for a plain one ({type(like).__name__})")
        return DTensor.from_local(
            shard.to(like.device), like.device_mesh, like.placements, run_check=False,
            shape=like.shape, stride=like.stride(),
        )  # fmt: skip
    return value


def load_model(model: torch.nn.Module, state: dict[str, Any]) -> None:
    """``model.load_state_dict`` of ``state`` whose shards are wrapped like the model's own."""
    own = model.state_dict()
    model.load_state_dict({k: _unpack(v, own.get(k)) for k, v in state.items()})


def load_optimizer(optimizer: Any, state: dict[str, Any]) -> None:
    """``optimizer.load_state_dict`` of ``state`` whose shards are wrapped like their
    parameters."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    per_param = {
        i: {k: _unpack(v, params[int(i)]) for k, v in st.items()}
        for i, st in state["state"].items()
    }
    optimizer.load_state_dict({**state, "state": per_param})
