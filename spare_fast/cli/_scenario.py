"""The scenario options ``simulate`` and ``sweep`` share: one ``--field`` per Scenario field."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

from spare_fast.cli._common import (
    UsageError,
    check_memory,
    duration,
    int_at_least,
    int_list,
    number,
    usage_from_value_error,
)

__all__ = ["add_scenario_options", "parse_range", "scenario_from", "sim_bytes"]

# parse_range: the old name of the list parser (``1-20``, ``2,3,8``, ``1-4,8``).
parse_range = int_list(lo=0)

_CHOICE_FIELDS = {
    "failure_model": ["per_group", "renewal", "per_gpu"],
    "restart_policy": ["wipeout", "expected_cost"],
    "restart_renews": ["all", "failed"],
    "rep_leftover": ["idle", "set"],
}

# (type, help) per field; durations take 60s, 5min, 1h30min or plain seconds.
_D = "duration (60s, 5min, 1h30min or seconds)"
_FIELDS: dict[str, tuple[Callable[[str], Any], str]] = {
    "gpus": (int_at_least(1), "GPUs in the job (default 600000)"),
    "groups": (int_at_least(1), "data-parallel groups N (default 600)"),
    "steps": (int_at_least(1), "training steps to complete (default 10000)"),
    "compute": (duration(0, lo_open=True), f"compute time of one stack layer per step, {_D} (64s)"),
    "allreduce": (
        duration(0, optional=True),
        "all-reduce time per step (default none: 2-10 s from N)",
    ),
    "mtbf": (
        duration(0, lo_open=True, allow_inf=True),
        f"cluster-wide mean time between failures, {_D} or inf (default 5min)",
    ),
    "weibull_shape": (number(0, lo_open=True), "Weibull shape k of failure times (default 0.78)"),
    "restart": (duration(0), f"global restart time T_r, {_D} (default 1h)"),
    "save": (duration(0), f"checkpoint save time T_s, {_D} (default 60s)"),
    "period": (
        duration(0, lo_open=True, allow_inf=True, optional=True),
        "checkpoint period (default none: the optimal T_c*; inf: never)",
    ),
    "controller_time": (
        duration(0, optional=True),
        "controller time per masked failure (default 0.1s; none: measured)",
    ),
    "shrink_time": (duration(0), "communicator shrink time per masked failure (default 0.1s)"),
    "jitter": (number(0, 0.5), "relative half-width of the step-time jitter, 0-0.5 (0.05)"),
    "racks": (int_at_least(1), "failure domains, <= --groups (default 1: none)"),
    "rack_share": (number(0, 1), "share of failures that take a whole rack, 0-1 (default 0)"),
    "repair": (
        duration(0, lo_open=True, optional=True),
        "mean repair time before a group rejoins (default none: only at a restart)",
    ),
    "repair_sigma": (number(0), "log-space sigma of the lognormal repair time (default 0.5)"),
    "restart_depth": (
        int_at_least(2),
        "restart early once the stack depth reaches this (default: only on wipe-out)",
    ),
    "horizon": (
        number(1, allow_inf=True),
        "give up after this multiple of T0, the failure-free time-to-train (default 100)",
    ),
    "failure_units": (
        int_at_least(1),
        "per_group model: independently aging units U, in [groups, gpus] "
        "(default min(gpus, max(groups, 1500)))",
    ),
}


def add_scenario_options(p: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """One ``--field`` option per :class:`Scenario` field; unset options keep the default."""
    from spare_fast.sim import Scenario

    g = p.add_argument_group("scenario (defaults: the paper's N = 600 job)")
    for f in dataclasses.fields(Scenario):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(f.default, bool):
            g.add_argument(
                flag,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"(default {f.default})",
            )
        elif f.name in _CHOICE_FIELDS:
            g.add_argument(
                flag, choices=_CHOICE_FIELDS[f.name], default=None, help=f"(default {f.default})"
            )
        else:
            kind, helptext = _FIELDS[f.name]
            g.add_argument(
                flag, type=kind, default=None, metavar=kind.__name__.upper(), help=helptext
            )


def scenario_from(args: argparse.Namespace, **fixed: Any) -> Any:
    """The :class:`Scenario` of the parsed options; a bad combination is a UsageError."""
    from spare_fast.sim import Scenario

    kw: dict[str, Any] = {}
    names = [f.name for f in dataclasses.fields(Scenario)]
    for name in names:
        v = getattr(args, name, None)
        if v is not None:
            kw[name] = v
    kw.update(fixed)
    try:
        return Scenario(**kw)
    except (ValueError, TypeError) as e:
        raise usage_from_value_error(e, names) from None


def sim_bytes(groups: int, redundancy: int) -> float:
    """A generous estimate of one simulation's memory at N groups and redundancy r (bytes).

    The layout and the controller keep a few int32/int64 arrays of N x r entries, and the
    engine a few per-group float arrays.
    """
    return 64.0 * groups * max(redundancy, 1) + 256.0 * groups + 64e6


def check_sim_memory(option: str, groups: int, redundancy: int) -> None:
    check_memory(option, groups, lambda n: sim_bytes(n, redundancy), "the simulation")


def check_layout(
    layout: str | None, groups: int, redundancy: int, groups_option: str = "--groups"
) -> None:
    """Refuse a layout that cannot be built for (N, r) before the run (a Sidon set of r)."""
    if layout != "sidon":
        return
    need = redundancy * (redundancy - 1) + 1  # r(r-1) distinct nonzero differences mod N
    if groups < need:
        raise UsageError(
            f"--layout sidon with --redundancy {redundancy} needs {groups_option} >= {need}, "
            f"got {groups} (use --layout random or cyclic, or a smaller --redundancy)"
        )


__all__ += ["check_layout", "check_sim_memory", "UsageError"]
