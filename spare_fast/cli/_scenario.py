"""The scenario options ``simulate`` and ``sweep`` share: one ``--field`` per Scenario field."""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

__all__ = ["add_scenario_options", "parse_range", "scenario_from"]


def _parse_float(text: str) -> float:
    return math.inf if text.lower() in ("inf", "infinity") else float(text)


def _parse_optional_float(text: str) -> float | None:
    return None if text.lower() == "none" else _parse_float(text)


def parse_range(text: str) -> list[int]:
    """'1-20' or '2,3,8' or '1-4,8' -> sorted unique ints."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.update(range(int(lo), int(hi) + 1))
        elif part:
            out.add(int(part))
    if not out:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    return sorted(out)


_INT_FIELDS = ("gpus", "groups", "steps", "racks")
_OPTIONAL_INT_FIELDS = ("restart_depth", "failure_units")
_CHOICE_FIELDS = {
    "failure_model": ["per_group", "renewal", "per_gpu"],
    "restart_policy": ["wipeout", "expected_cost"],
    "restart_renews": ["all", "failed"],
    "rep_leftover": ["idle", "set"],
}


def _parse_optional_int(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def add_scenario_options(p: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """One ``--field`` option per :class:`Scenario` field; unset options keep the default."""
    from spare_fast.sim import Scenario

    g = p.add_argument_group("scenario (defaults: the paper's; times in seconds)")
    for f in dataclasses.fields(Scenario):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        helptext = f"(default {default})"
        if isinstance(default, bool):
            g.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=helptext)
        elif f.name in _CHOICE_FIELDS:
            g.add_argument(flag, choices=_CHOICE_FIELDS[f.name], default=None, help=helptext)
        elif f.name in _INT_FIELDS:
            g.add_argument(flag, type=int, default=None, help=helptext)
        elif f.name in _OPTIONAL_INT_FIELDS:
            g.add_argument(flag, type=_parse_optional_int, default=None, help=helptext)
        elif default is None:
            g.add_argument(flag, type=_parse_optional_float, default=None, help=helptext)
        else:
            g.add_argument(flag, type=_parse_float, default=None, help=helptext)


def scenario_from(args: argparse.Namespace, **fixed: Any) -> Any:
    from spare_fast.sim import Scenario

    kw: dict[str, Any] = {}
    for f in dataclasses.fields(Scenario):
        v = getattr(args, f.name, None)
        if v is not None:
            kw[f.name] = v
    kw.update(fixed)
    return Scenario(**kw)
