"""``spare-fast plan``: size a job from the closed forms (redundancy, overhead, checkpointing)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from typing import Any

from spare_fast import theory as th

_UNITS = {
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}
_TOKEN = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)")


def parse_duration(text: str) -> dt.timedelta:
    """Parse ``"60s"``, ``"5min"``, ``"1h"``, ``"1h30min"`` or a bare number of seconds.

    Parameters
    ----------
    text : str
        One or more ``<number><unit>`` tokens; units ms, s, m/min, h, d (and long forms).

    Returns
    -------
    datetime.timedelta

    Raises
    ------
    ValueError
        If the text is empty, has an unknown unit or anything left over.

    Examples
    --------
    >>> parse_duration("5min").total_seconds(), parse_duration("1h30min").total_seconds()
    (300.0, 5400.0)
    """
    s = text.strip()
    if not s:
        raise ValueError("duration is empty; use e.g. 60s, 5min or 1h")
    total, pos = 0.0, 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot parse duration {text!r} at {s[pos:]!r}; use e.g. 60s")
        number, unit = m.groups()
        unit = unit.lower() or "s"
        if unit not in _UNITS:
            raise ValueError(f"unknown unit {unit!r} in duration {text!r}; use ms, s, min, h or d")
        total += float(number) * _UNITS[unit]
        pos = m.end()
        while pos < len(s) and s[pos].isspace():
            pos += 1
    return dt.timedelta(seconds=total)


def _duration_arg(text: str) -> dt.timedelta:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _fmt_seconds(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def plan(
    groups: int,
    mtbf: dt.timedelta,
    restart: dt.timedelta,
    save: dt.timedelta,
    gpus: int | None = None,
) -> dict[str, Any]:
    """The plan as a dict: one entry per scheme plus the recommendation.

    Examples
    --------
    >>> p = plan(600, dt.timedelta(minutes=5), dt.timedelta(hours=1), dt.timedelta(seconds=60))
    >>> p["recommendation"]["scheme"], p["spare"]["redundancy"]
    ('spare', 10)
    """
    m, ts, tr = mtbf.total_seconds(), save.total_seconds(), restart.total_seconds()
    out: dict[str, Any] = {
        "inputs": {
            "gpus": gpus,
            "groups": groups,
            "gpus_per_group": (gpus / groups) if gpus else None,
            "mtbf_s": m,
            "restart_s": tr,
            "save_s": ts,
        }
    }
    for scheme in ("spare", "replication"):
        r = th.optimal_redundancy_numeric(groups, m, ts, tr, scheme=scheme)
        if scheme == "spare":
            mu = float(th.endurable_failures(groups, r))
            cost = float(th.overhead_lower_bound(groups, r))
        else:
            mu = float(th.endurable_failures_replication(groups, r))
            cost = float(r)
        tf = mu * m
        out[scheme] = {
            "redundancy": r,
            "redundancy_rule": int(th.optimal_redundancy(groups)) if scheme == "spare" else None,
            "endurable_failures": mu,
            "compute_overhead": cost,
            "mean_time_between_restarts_s": tf,
            "checkpoint_period_s": float(th.checkpoint_period(ts, tf, tr)),
            "availability": float(th.availability(tf, ts, tr)),
            "time_to_train": float(th.time_to_train(groups, r, m, ts, tr, scheme=scheme)),
        }
    out["checkpoint"] = {
        "redundancy": 1,
        "redundancy_rule": None,
        "endurable_failures": 0.0,
        "compute_overhead": 1.0,
        "mean_time_between_restarts_s": m,
        "checkpoint_period_s": float(th.checkpoint_period(ts, m, tr)),
        "availability": float(th.availability(m, ts, tr)),
        "time_to_train": float(th.time_to_train(groups, 1, m, ts, tr, scheme="checkpoint")),
    }
    best = min(("spare", "replication", "checkpoint"), key=lambda s: out[s]["time_to_train"])
    ranked = sorted(("spare", "replication", "checkpoint"), key=lambda s: out[s]["time_to_train"])
    runner_up = ranked[1]
    out["recommendation"] = {
        "scheme": best,
        "redundancy": out[best]["redundancy"],
        "time_to_train": out[best]["time_to_train"],
        "saving_vs_next": 1.0 - out[best]["time_to_train"] / out[runner_up]["time_to_train"],
        "next": runner_up,
    }
    return out


_NAMES = {"spare": "SPARe+CKPT", "replication": "Rep+CKPT", "checkpoint": "CKPT only"}


def format_plan(p: dict[str, Any]) -> str:
    """A readable table of :func:`plan`'s result."""
    inp = p["inputs"]
    head = f"N = {inp['groups']} groups"
    if inp["gpus"]:
        head = f"{inp['gpus']:,} GPUs in {inp['groups']} groups ({inp['gpus_per_group']:g} each)"
    lines = [
        f"{head}; failures every {_fmt_seconds(inp['mtbf_s'])}, restart "
        f"{_fmt_seconds(inp['restart_s'])}, checkpoint save {_fmt_seconds(inp['save_s'])}",
        "",
        f"{'':26}" + "".join(f"{_NAMES[s]:>14}" for s in ("spare", "replication", "checkpoint")),
    ]
    rows = [
        ("redundancy r*", lambda e: f"{e['redundancy']}"),
        (
            "  (rule floor(log2 N+.833))",
            lambda e: "" if e["redundancy_rule"] is None else f"{e['redundancy_rule']}",
        ),
        ("failures survived mu", lambda e: f"{e['endurable_failures']:.1f}"),
        ("compute overhead", lambda e: f"{e['compute_overhead']:.3f}x"),
        ("time between restarts", lambda e: _fmt_seconds(e["mean_time_between_restarts_s"])),
        ("checkpoint period T_c*", lambda e: _fmt_seconds(e["checkpoint_period_s"])),
        ("availability", lambda e: f"{100 * e['availability']:.2f}%"),
        ("time-to-train / T0", lambda e: f"{e['time_to_train']:.2f}"),
    ]
    for label, fmt in rows:
        lines.append(
            f"{label:26}"
            + "".join(f"{fmt(p[s]):>14}" for s in ("spare", "replication", "checkpoint"))
        )
    rec = p["recommendation"]
    lines += [
        "",
        f"Recommendation: {_NAMES[rec['scheme']]} with r = {rec['redundancy']} "
        f"(time-to-train {rec['time_to_train']:.2f} x T0, "
        f"{100 * rec['saving_vs_next']:.1f}% less than {_NAMES[rec['next']]}).",
        "Model: closed forms of SPEC.md section 4 (overhead = depth lower bound, exponential "
        "failures); simulate before committing hardware.",
    ]
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="size a job: optimal redundancy, overhead, checkpoint period, time-to-train",
        description="Predict SPARe, replication and checkpoint-only from the closed forms.",
    )
    p.add_argument("--groups", type=int, required=True, help="data-parallel groups N")
    p.add_argument("--gpus", type=int, default=None, help="total GPUs (for the report only)")
    p.add_argument(
        "--mtbf", type=_duration_arg, required=True, help="cluster-wide mean time between failures"
    )
    p.add_argument("--restart", type=_duration_arg, required=True, help="global restart time")
    p.add_argument("--save", type=_duration_arg, required=True, help="checkpoint save time")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.groups < 1:
        raise SystemExit(f"spare-fast plan: --groups = {args.groups} must be >= 1")
    if args.mtbf.total_seconds() <= 0:
        raise SystemExit("spare-fast plan: --mtbf must be > 0")
    result = plan(args.groups, args.mtbf, args.restart, args.save, gpus=args.gpus)
    print(json.dumps(result, indent=2) if args.json else format_plan(result))
    return 0
