"""Arguments of :class:`~spare_fast.torch.SpareGroup`: checked, and completed from the
environment (the names torchft and torchrun use)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from spare_fast.layout import Layout

__all__ = ["env", "host_port", "resolve"]


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
) -> tuple[int, str, tuple[str, int]]:
    """Check the arguments; returns ``(group, lighthouse, (store host, store port))``.

    Raises
    ------
    TypeError, ValueError
        Naming the bad argument (see :class:`~spare_fast.torch.SpareGroup`).
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model = {model!r} is not a torch.nn.Module")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer = {optimizer!r} is not a torch.optim.Optimizer")
    if not isinstance(layout, Layout):
        raise TypeError(f"layout = {layout!r} is not a spare_fast.Layout")
    if layout.n_types != layout.n_groups or layout.n_groups < 2:
        raise ValueError(
            f"layout with n_groups = {layout.n_groups}, n_types = {layout.n_types}: "
            "SpareGroup needs n_types == n_groups >= 2"
        )
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
    if bucket_numel is not None and int(bucket_numel) < 1:
        raise ValueError(f"bucket_numel = {bucket_numel} must be >= 1")
    return int(group), lighthouse, store_addr
