"""Size a job from the closed forms: redundancy, overhead, checkpoint period, time-to-train.

:func:`plan` evaluates SPARe+CKPT, Rep+CKPT and CKPT-only for one cluster and recommends the
fastest; :func:`parse_duration` reads the durations the command line takes (``"5min"``).
``spare-fast plan`` is the command-line front end.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from spare_fast._durations import parse_duration
from spare_fast.theory import closed_forms as th

__all__ = ["parse_duration", "plan"]


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
