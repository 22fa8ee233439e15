"""Arguments of :class:`~spare_fast.torch.SpareGroup`: checked, and completed from the
environment (the names torchft and torchrun use)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch

from spare_fast.layout import Layout
from spare_fast.torch._types import as_timedelta

__all__ = [
    "MemberSettings",
    "check_bucket",
    "check_formation",
    "check_layout",
    "env",
    "host_port",
    "resolve",
]


@dataclass(frozen=True)
class MemberSettings:
    """Who a process is in its run and how it reaches the lighthouse: what a
    :class:`~spare_fast.torch._membership.Membership` is built from.

    Attributes
    ----------
    group : int
        This process's group.
    n_groups : int
        Groups of the run.
    lighthouse_addr : str
        ``http://HOST:PORT`` of the torchft lighthouse.
    store_addr : tuple of (str, int)
        Host and port of the run's ``TCPStore``.
    heartbeat_interval, quorum_timeout, quorum_poll : timedelta
        Heartbeat period; longest wait for one quorum; how long one quorum request waits.
    join_timeout : timedelta or None
        How long the run's formation waits for every group before the groups present form
        it without the others (None: half the quorum timeout).
    min_groups : int or None
        The fewest groups that may form the run without the others (None: a majority,
        ``n_groups // 2 + 1``).
    """

    group: int
    n_groups: int
    lighthouse_addr: str
    store_addr: tuple[str, int]
    heartbeat_interval: timedelta
    quorum_timeout: timedelta
    quorum_poll: timedelta
    join_timeout: timedelta | None = None
    min_groups: int | None = None

    @property
    def join_seconds(self) -> float:
        """:attr:`join_timeout` in seconds (its default resolved, at most the quorum
        timeout)."""
        quorum = self.quorum_timeout.total_seconds()
        if self.join_timeout is None:
            return quorum / 2
        return min(self.join_timeout.total_seconds(), quorum)

    @property
    def least_groups(self) -> int:
        """:attr:`min_groups` with its default resolved."""
        return self.n_groups // 2 + 1 if self.min_groups is None else int(self.min_groups)


def check_formation(
    n_groups: int, join_timeout: Any, min_groups: Any
) -> tuple[timedelta | None, int | None]:
    """``(join_timeout, min_groups)`` checked; ValueError naming the bad one.

    ``min_groups`` must be a majority of the groups (more than ``n_groups / 2``) and at most
    ``n_groups``: two disjoint sets of groups can then never both form the run.
    """
    join = None if join_timeout is None else as_timedelta(join_timeout, "join_timeout")
    if min_groups is None:
        return join, None
    if isinstance(min_groups, bool) or not isinstance(min_groups, int):
        raise TypeError(f"min_groups = {min_groups!r} is not an int")
    if not n_groups // 2 + 1 <= min_groups <= n_groups:
        raise ValueError(
            f"min_groups = {min_groups} is not in [{n_groups // 2 + 1}, {n_groups}]: a run "
            f"of {n_groups} groups forms with a majority of them at least"
        )
    return join, int(min_groups)


def check_layout(layout: Any, who: str) -> None:
    """TypeError or ValueError unless ``layout`` is a Layout with ``n_types == n_groups >= 2``
    (``who`` names what needs it in the message)."""
    if not isinstance(layout, Layout):
        raise TypeError(f"layout = {layout!r} is not a spare_fast.Layout")
    if layout.n_types != layout.n_groups or layout.n_groups < 2:
        raise ValueError(
            f"layout with n_groups = {layout.n_groups}, n_types = {layout.n_types}: "
            f"{who} needs n_types == n_groups >= 2"
        )


def check_bucket(bucket_numel: int | None) -> None:
    """ValueError unless ``bucket_numel`` is None or at least 1."""
    if bucket_numel is not None and int(bucket_numel) < 1:
        raise ValueError(f"bucket_numel = {bucket_numel} must be >= 1")


def env(name: str) -> str | None:
    """The environment variable ``name``, stripped; None when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def host_port(text: str, what: str) -> tuple[str, int]:
    """``HOST:PORT`` -> ``(host, port)``; ValueError naming ``what`` otherwise."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what} = {text!r} is not HOST:PORT with PORT in [1, 65535]")
    return host.strip("[]"), int(port)


def resolve(
    model: Any,
    optimizer: Any,
    layout: Any,
    steps: int,
    group: int | None,
    lighthouse: str | None,
    store: str | None,
    backend: str | Callable[..., Any],
    checkpoint_every: int,
    bucket_numel: int | None,
    timings: tuple[Any, Any, Any],
    ordered_sum: Any,
    formation: tuple[Any, Any] = (None, None),
) -> MemberSettings:
    """Check the arguments; returns the membership's settings (the group, the lighthouse, the
    store's host and port; ``timings``: the heartbeat interval, the quorum timeout and the
    quorum poll, as seconds or timedeltas; ``formation``: the join timeout and the fewest
    groups that form the run without the others).

    Raises
    ------
    TypeError, ValueError
        Naming the bad argument (see :class:`~spare_fast.torch.SpareGroup`).
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model = {model!r} is not a torch.nn.Module")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer = {optimizer!r} is not a torch.optim.Optimizer")
    check_layout(layout, "SpareGroup")
    if int(steps) < 0:
        raise ValueError(f"steps = {steps} must be >= 0")
    if group is None:
        text = env("REPLICA_GROUP_ID") or env("SPARE_FAST_GROUP")
        if text is None:
            raise ValueError("group = None and neither REPLICA_GROUP_ID nor SPARE_FAST_GROUP set")
        if not text.isdigit():
            raise ValueError(f"REPLICA_GROUP_ID = {text!r} is not a group number")
        group = int(text)
    if not 0 <= int(group) < layout.n_groups:
        raise ValueError(f"group = {group} is not in [0, {layout.n_groups})")
    lighthouse = lighthouse or env("TORCHFT_LIGHTHOUSE")
    if lighthouse is None:
        raise ValueError("lighthouse = None and TORCHFT_LIGHTHOUSE is not set")
    if store is None:
        store = env("SPARE_FAST_STORE")
        if store is None and env("MASTER_ADDR") and env("MASTER_PORT"):
            store = f"{env('MASTER_ADDR')}:{env('MASTER_PORT')}"
    if store is None:
        raise ValueError("store = None and neither SPARE_FAST_STORE nor MASTER_ADDR/PORT set")
    store_addr = host_port(store, "store")
    host_port(lighthouse.split("//", 1)[-1], "lighthouse")
    if not (backend == "gloo" or callable(backend)):
        raise TypeError(f"backend = {backend!r} is neither 'gloo' nor a callable factory")
    if int(checkpoint_every) < 1:
        raise ValueError(f"checkpoint_every = {checkpoint_every} must be >= 1")
    check_bucket(bucket_numel)
    if not isinstance(ordered_sum, bool):
        raise TypeError(f"ordered_sum = {ordered_sum!r} is not a bool")
    names = ("heartbeat_interval", "quorum_timeout", "quorum_poll")
    beat, quorum, poll = (as_timedelta(t, name) for t, name in zip(timings, names, strict=True))
    join, least = check_formation(layout.n_groups, *formation)
    return MemberSettings(
        int(group), layout.n_groups, lighthouse, store_addr, beat, quorum, poll, join, least
    )
