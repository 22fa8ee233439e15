"""The result of one simulated run: time-to-train, availability, losses by cause, timeline."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

__all__ = ["TIMELINE_DTYPE", "Report", "TimelineEvent"]


class TimelineEvent(IntEnum):
    """Kinds of timeline rows."""

    MASKED_FAILURE = 0
    RESTART = 1
    CHECKPOINT = 2
    REJOIN = 3
    DONE = 4
    RESUME = 5


#: One timeline row: wall time (s), event kind, committed-or-not steps done, compute multiplier
#: (stack depth for SPARe), alive groups.
TIMELINE_DTYPE = np.dtype(
    [("time", "f8"), ("event", "i1"), ("steps_done", "i8"), ("depth", "i4"), ("alive", "i4")]
)

LOSS_KEYS = ("restart", "rework", "checkpoint", "redundancy", "recovery", "jitter")


@dataclass(frozen=True, eq=False)
class Report:
    """Outcome of :func:`spare_fast.sim.simulate`.

    Attributes
    ----------
    time_to_train : float
        Wall clock to finish all steps (s); ``inf`` if the run hit the scenario's horizon.
    t0 : float
        Failure-free time-to-train (s).
    normalized : float
        ``time_to_train / t0``.
    availability : float
        ``1 - (restart + rework + checkpoint) / wall_clock``: the share of wall clock that
        advanced training, counting redundant compute and recovery as up time.  See
        :attr:`restart_availability` for the other reading of "uptime / wall clock".
    restarts, masked_failures : int
        Global restarts (wipe-outs, CKPT-only failures and planned restarts) and failure events
        survived without one.
    mean_depth : float
        Mean compute multiplier over executed steps (SPARe stack depth, r for replication).
    progress : float
        Share of the steps finished (1.0 when completed; the committed share otherwise).
    losses : dict
        Seconds lost per cause: restart, rework, checkpoint, redundancy, recovery (decision,
        shrink, patch, all-reduce reruns), jitter (signed).  ``useful + sum(losses)`` is the
        wall clock.
    timeline : numpy.ndarray or None
        Structured rows of :data:`TIMELINE_DTYPE`, one per event.

    Examples
    --------
    >>> from spare_fast.sim import Scenario, simulate
    >>> r = simulate(Scenario(groups=200, steps=100, mtbf=float("inf"), jitter=0.0), "checkpoint")
    >>> r.normalized, r.restarts
    (1.0, 0)
    """

    scheme: str
    redundancy: int
    layout: str
    seed: int
    groups: int
    completed: bool
    time_to_train: float
    t0: float
    wall_clock: float
    useful: float
    availability: float
    restarts: int
    planned_restarts: int
    failures: int
    groups_failed: int
    masked_failures: int
    rejoins: int
    checkpoints: int
    lost_saves: int
    mean_depth: float
    progress: float
    executed_steps: int
    period: float
    endurable_failures: float
    losses: dict[str, float]
    events: int
    decision_seconds: float
    sim_seconds: float
    timeline: np.ndarray | None = field(default=None, repr=False)
    scenario: Any = field(default=None, repr=False)

    @property
    def normalized(self) -> float:
        """TTT / T0."""
        return self.time_to_train / self.t0

    @property
    def restart_availability(self) -> float:
        """``1 - restart / wall_clock``: only global-restart time counts as down time.

        The paper defines availability as the fraction of time the system is operational,
        uptime over wall clock (its section 1, after Avizienis et al. 2004), without saying
        whether rework after a restart and checkpoint saves count as up time.  The
        :attr:`availability` field counts them as down (the A(tau) that the checkpoint period
        maximises; docs/model.md, "Closed-form theory"); this property counts them as up: the
        job is running while it redoes lost steps or writes a checkpoint.  Always
        ``>= availability``.

        Notes
        -----
        O(1) from :attr:`losses`.  The README's ``## Simulator`` section compares both readings
        with the paper's table (``tools/sim_experiments.py availability``).

        References
        ----------
        .. [1] A. Avizienis, J.-C. Laprie, B. Randell, C. Landwehr, "Basic concepts and
           taxonomy of dependable and secure computing", IEEE TDSC 1(1), 2004.

        Examples
        --------
        >>> from spare_fast.sim import Scenario, simulate
        >>> r = simulate(Scenario(groups=200, steps=100, mtbf=float("inf")), "checkpoint")
        >>> r.restart_availability
        1.0
        """
        if self.wall_clock <= 0:
            return 1.0
        return 1.0 - self.losses["restart"] / self.wall_clock

    def summary(self) -> dict[str, Any]:
        """The scalar fields as a flat dict (one CSV/JSON row); excludes the timeline.

        Examples
        --------
        >>> from spare_fast.sim import Scenario, simulate
        >>> s = simulate(Scenario(groups=200, steps=50, mtbf=float("inf")), "checkpoint").summary()
        >>> s["scheme"], s["restarts"]
        ('checkpoint', 0)
        """
        out: dict[str, Any] = {
            "scheme": self.scheme,
            "groups": self.groups,
            "redundancy": self.redundancy,
            "layout": self.layout,
            "seed": self.seed,
            "completed": self.completed,
            "time_to_train": self.time_to_train,
            "t0": self.t0,
            "normalized": self.normalized,
            "availability": self.availability,
            "restart_availability": self.restart_availability,
            "restarts": self.restarts,
            "planned_restarts": self.planned_restarts,
            "failures": self.failures,
            "masked_failures": self.masked_failures,
            "rejoins": self.rejoins,
            "checkpoints": self.checkpoints,
            "mean_depth": self.mean_depth,
            "progress": self.progress,
            "period": self.period,
            "endurable_failures": self.endurable_failures,
            "events": self.events,
            "sim_seconds": self.sim_seconds,
        }
        for k in LOSS_KEYS:
            out[f"loss_{k}"] = self.losses[k]
        return out

    def conservation_error(self) -> float:
        """``|useful + sum(losses) - wall_clock| / wall_clock`` (0 up to rounding)."""
        total = self.useful + math.fsum(self.losses.values())
        return abs(total - self.wall_clock) / self.wall_clock if self.wall_clock else 0.0

    def plot(self, ax: Any = None) -> Any:
        """Plot steps done and depth against wall clock (hours) on a matplotlib axis."""
        import matplotlib.pyplot as plt

        if self.timeline is None:
            raise ValueError("this report was simulated with timeline=False")
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 3))
        tl = self.timeline
        ax.step(tl["time"] / 3600.0, tl["steps_done"], where="post", label="steps done")
        ax.set_xlabel("wall clock (h)")
        ax.set_ylabel("steps done")
        ax2 = ax.twinx()
        ax2.step(tl["time"] / 3600.0, tl["depth"], where="post", color="tab:red", alpha=0.5)
        ax2.set_ylabel("compute multiplier")
        ax.set_title(f"{self.scheme} r={self.redundancy}: TTT/T0 = {self.normalized:.2f}")
        return ax
