"""Size a job from the closed forms: redundancy, overhead, checkpoint period, time-to-train.

:func:`plan` evaluates SPARe+CKPT, Rep+CKPT and CKPT-only for one cluster and recommends the
fastest; :func:`parse_duration` reads the durations the command line takes (``"5min"``).
``spare-fast plan`` is the command-line front end.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from spare_fast.theory import closed_forms as th

__all__ = ["parse_duration", "plan"]

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
# A number (1, 1.5, .5, 1e9, 2.5E+3) and an optional unit; the exponent is matched first so
# that "1e9" is 10^9 seconds, not 1 and a unit "e".
_TOKEN = re.compile(r"\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)")


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
    >>> parse_duration("1e9").total_seconds(), parse_duration("90").total_seconds()
    (1000000000.0, 90.0)
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
