"""The run identity: what must be equal in every group of a run, compared before step 0.

Each group derives a fingerprint of the run it is about to train: the number of groups N, the
redundancy r, a SHA-256 of the layout's stacks, the seed, the ranks per group K, the steps,
whether the gradients are added in type order (the reduced buffer's length depends on it), and
a SHA-256 of its initial state (parameters, buffers and optimizer state). The groups compare their
fingerprints when the run forms (each carries its own in its quorum data) and stop before any
step if one differs, naming the field and the groups. The stacks travel as their digest: the
identity is then a few hundred bytes whatever N is, and a quorum answer, which holds every
participant's identity, grows as O(N) rather than O(N^2) (at N = 1,024 the stacks themselves
would be 12 kB per participant). A layout that differs is still found; the message names the
stacks, not the layer. A replacement's state is not comparable
(it has none until it is healed): only its static fields are compared before it is admitted.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import torch

from spare_fast._spans import spans
from spare_fast.torch._errors import IdentityMismatch

__all__ = [
    "STATIC_FIELDS",
    "compare",
    "fingerprint",
    "of_group",
    "ranks_per_group",
    "stacks_digest",
    "state_digest",
]

#: Fields compared for a replacement (everything but the state digest), in reporting order.
STATIC_FIELDS = ("keyed", "n", "r", "stacks", "seed", "ranks", "steps", "ordered")


def _feed(h: Any, value: Any) -> None:
    """Hash ``value`` (nested containers of tensors and plain values) in a fixed order."""
    if isinstance(value, torch.Tensor):
        # A DTensor (FSDP2, tensor parallelism) is hashed by this rank's local shard: rank 0 of
        # every group holds the same shard, and rank 0 sends the group's identity.
        local = value.to_local() if hasattr(value, "to_local") else value
        t = local.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, dict):
        h.update(b"{")
        for k in sorted(value, key=str):
            h.update(repr(k).encode())
            _feed(h, value[k])
        h.update(b"}")
    elif isinstance(value, (list, tuple)):
        h.update(b"[")
        for v in value:
            _feed(h, v)
        h.update(b"]")
    else:
        h.update(repr(value).encode())


def stacks_digest(stacks: Any) -> str:
    """SHA-256 (hex, 32 digits) of a layout's stacks: the group count, the stack depth and
    every entry, in group order."""
    arr = np.ascontiguousarray(np.asarray(stacks, dtype=np.int64))
    h = hashlib.sha256(f"stacks{arr.shape}".encode())
    h.update(arr.tobytes())
    return h.hexdigest()[:32]


def state_digest(model: torch.nn.Module, optimizer: Any) -> str:
    """SHA-256 (hex) of the model's parameters and buffers and the optimizer's state."""
    h = hashlib.sha256()
    _feed(h, model.state_dict())
    _feed(h, optimizer.state_dict())
    return h.hexdigest()


def fingerprint(
    layout: Any,
    seed: int,
    steps: int,
    ranks: int,
    keyed: bool = False,
    model: Any = None,
    optimizer: Any = None,
    ordered: bool = False,
) -> dict[str, Any]:
    """The identity of the run a group is about to train.

    ``keyed``: whether the group has a run key. ``model`` and ``optimizer`` None: the static
    fields only (a replacement's). ``ordered``: whether it sums the types in type order.
    """
    out: dict[str, Any] = {
        "keyed": bool(keyed),
        "n": int(layout.n_groups),
        "r": int(layout.redundancy),
        "stacks": stacks_digest(layout.stacks),
        "seed": int(seed),
        "ranks": int(ranks),
        "steps": int(steps),
        "ordered": bool(ordered),
    }
    if model is not None:
        out["state"] = state_digest(model, optimizer)
    return out


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:16] + "..."


def _groups(gs: list[int]) -> str:
    """``gs`` as written in a mismatch: the list, or past 8 groups its runs (``[0-4, 6-1023]``,
    so that a thousand groups do not fill the line)."""
    if len(gs) <= 8:
        return str(gs)
    return f"[{spans(gs)}] ({len(gs)} groups)"


def compare(identities: dict[int, Any], fields: tuple[str, ...] | None = None) -> None:
    """Raise :class:`IdentityMismatch` naming the first field that differs among the groups'
    identities (and the groups holding each value); return if they agree.

    ``fields``: the fields to compare (by default every field any identity has).
    """
    if fields is None:
        fields = STATIC_FIELDS + ("state",)
    values = list(identities.values())
    if isinstance(values[0] if values else None, dict) and all(
        isinstance(v, dict) and all(v.get(k) == values[0].get(k) for k in fields) for v in values
    ):
        return  # all equal (the usual case): one pass, nothing to report
    for name in fields:
        by_value: dict[str, list[int]] = {}
        for g in sorted(identities):
            ident = identities[g]
            if not isinstance(ident, dict):
                by_value.setdefault("<none>", []).append(g)
                continue
            if name not in ident and name == "state":
                continue
            by_value.setdefault(repr(ident.get(name)), []).append(g)
        if len(by_value) > 1:
            parts = "; ".join(
                f"groups {_groups(gs)} have {_short(v)}"
                for v, gs in sorted(by_value.items(), key=lambda kv: (-len(kv[1]), kv[1]))
            )
            raise IdentityMismatch(
                f"run identity mismatch before step 0: {name} differs ({parts})", field=name
            )


def ranks_per_group() -> int:
    """K, the ranks of one group: ``WORLD_SIZE`` under ``torchrun`` (each group's own), else 1."""
    text = os.environ.get("WORLD_SIZE", "").strip()
    return int(text) if text.isdigit() and int(text) >= 1 else 1


def of_group(group: Any, full: bool) -> dict[str, Any]:
    """The identity of a :class:`~spare_fast.torch.SpareGroup`'s run; ``full``: with the digest
    of its current state (a group forming the run), else the static fields (a replacement)."""
    # The group's Ranks (its K ranks under torchrun), else WORLD_SIZE.
    size = getattr(getattr(group, "ranks", None), "size", None)
    ranks = int(size or ranks_per_group())
    keyed = bool(group.auth.enabled)
    ordered = bool(getattr(group, "ordered_sum", False))
    if not full:
        return fingerprint(group.layout, group.seed, group.steps, ranks, keyed, ordered=ordered)
    return fingerprint(
        group.layout, group.seed, group.steps, ranks, keyed, group.model, group.optimizer, ordered
    )
