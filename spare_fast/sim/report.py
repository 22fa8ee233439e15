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

    #: A failure the scheme survived without a restart.
    MASKED_FAILURE = 0
    #: A global restart began (wipe-out, CKPT-only failure or planned restart).
    RESTART = 1
    #: A checkpoint save completed.
    CHECKPOINT = 2
    #: A repaired group came back.
    REJOIN = 3
    #: The last step finished.
    DONE = 4
    #: Training resumed after a restart.
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
    scheme : str
        ``"checkpoint"``, ``"replication"`` or ``"spare"``.
    redundancy : int
        Shard types per group (SPARe) or replicas per set (Rep); 1 for CKPT-only.
    layout : str
        The SPARe layout kind (``"cyclic"``, ``"sidon"``, ``"random"``, ``"domain"``), or the
        scheme's own for the others.
    seed : int
        The seed of the run; the same seed gives the same report, bit for bit.
    groups : int
        Data-parallel groups N.
    completed : bool
        Whether every step finished before the horizon.
    time_to_train : float
        Wall clock to finish all steps (s); ``inf`` if the run hit the scenario's horizon.
    t0 : float
        Failure-free time-to-train (s).
    normalized : float
        ``time_to_train / t0``.
    wall_clock : float
        Simulated seconds the run took (the horizon when it did not finish).
    useful : float
        Seconds of failure-free compute at depth 1 in ``wall_clock``.
    availability : float
        ``1 - (restart + rework + checkpoint) / wall_clock``: the share of wall clock that
        advanced training, counting redundant compute and recovery as up time.  See
        :attr:`restart_availability` for the other reading of "uptime / wall clock".
    restarts : int
        Global restarts: wipe-outs, CKPT-only failures and planned restarts.
    planned_restarts : int
        The restarts a restart policy chose (``Scenario.restart_depth`` or
        ``restart_policy="expected_cost"``), included in ``restarts``.
    failures : int
        Failure events.
    groups_failed : int
        Groups lost to failure events (a rack failure takes several).
    masked_failures : int
        Failure events survived without a restart.
    rejoins : int
        Repaired groups that came back (``Scenario.repair``).
    checkpoints : int
        Checkpoint saves completed.
    lost_saves : int
        Checkpoint saves that a restart interrupted.
    mean_depth : float
        Mean compute multiplier over executed steps (SPARe stack depth, r for replication).
    progress : float
        Share of the steps finished (1.0 when completed; the committed share otherwise).
    executed_steps : int
        Steps computed, reworked ones included.
    period : float
        The checkpoint period T_c* the run started with (s).
    endurable_failures : float
        The mu the checkpoint period was computed from.
    losses : dict
        Seconds lost per cause: restart, rework, checkpoint, redundancy, recovery (decision,
        shrink, patch, all-reduce reruns), jitter (signed).  ``useful + sum(losses)`` is the
        wall clock.
    events : int
        Events the engine processed.
    decision_seconds : float
        Real seconds spent in the controller's decisions.
    sim_seconds : float
        Real seconds the whole simulation took.
    timeline : numpy.ndarray or None
        Structured rows of :data:`TIMELINE_DTYPE`, one per event.
    scenario : Scenario
        The scenario that was run.

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
        O(1) from :attr:`losses`.  The simulator guide (``docs/guide/simulator.md``) compares
        both readings with the paper's table (``tools/sim_experiments.py availability``).

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

    def format(self) -> str:
        """A readable table of the run, with units and what TTT/T0, availability mean.

        Examples
        --------
        >>> from spare_fast.sim import Scenario, simulate
        >>> r = simulate(Scenario(groups=200, steps=100, mtbf=float("inf")), "checkpoint")
        >>> print(r.format().splitlines()[0])
        CKPT-only, N = 200 groups, seed 0: finished
        """
        from spare_fast._plotting import SCHEME_LABELS

        name = SCHEME_LABELS.get(self.scheme, self.scheme)
        if self.scheme == "spare":
            name += f" r = {self.redundancy} ({self.layout} layout)"
        elif self.scheme == "replication":
            name += f" r = {self.redundancy}"
        horizon = getattr(self.scenario, "horizon", None)
        state = (
            "finished"
            if self.completed
            else (
                f"unfinished: stopped at the horizon ({horizon:g} x T0) with "
                f"{100 * self.progress:.2f}% of the steps committed"
            )
        )
        ttt = "inf (unfinished)" if math.isinf(self.time_to_train) else _dur(self.time_to_train)
        rows = [
            ("time-to-train TTT", ttt),
            ("failure-free time T0", f"{_dur(self.t0)} (steps x (compute + all-reduce))"),
            ("TTT / T0", f"{self.normalized:.3f}" + ("" if self.completed else " (unfinished)")),
            ("availability", f"{100 * self.availability:.2f}% of the wall clock advanced training"),
            (
                "  restart-only reading",
                f"{100 * self.restart_availability:.2f}% (only restarts down)",
            ),
            (
                "failures",
                f"{self.failures:,} ({self.masked_failures:,} masked, {self.rejoins:,} rejoins)",
            ),
            ("global restarts", f"{self.restarts:,} ({self.planned_restarts:,} planned)"),
            ("checkpoints", f"{self.checkpoints:,} every {_dur(self.period)}"),
            ("mean depth", f"{self.mean_depth:.3f} (compute multiplier per step)"),
        ]
        rows += [(f"lost to {k}", _dur(self.losses[k])) for k in LOSS_KEYS]
        rows.append(("simulated in", f"{self.sim_seconds:.2f} s ({self.events:,} events)"))
        width = max(len(k) for k, _ in rows)
        lines = [f"{name}, N = {self.groups} groups, seed {self.seed}: {state}"]
        lines += [f"  {k:<{width}}  {v}" for k, v in rows]
        if horizon is not None:
            lines.append(
                f"TTT/T0: time-to-train over the failure-free time (1 = no failure cost); runs "
                f"give up at the horizon, {horizon:g} x T0."
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Plot steps done and stack depth against wall clock (hours) on a matplotlib axis.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure with constrained layout, so a plain
            ``savefig`` clips nothing).

        Returns
        -------
        matplotlib.axes.Axes
            The steps axis; the depth axis is its twin (right).

        Raises
        ------
        ImportError
            Without matplotlib, naming the extra (``spare-fast[plot]``).
        ValueError
            A report simulated with ``timeline=False``.
        """
        from spare_fast._plotting import SCHEME_COLORS, SCHEME_LABELS, require_matplotlib

        require_matplotlib("Report.plot")
        if self.timeline is None:
            raise ValueError("this report was simulated with timeline=False")
        from matplotlib import ticker

        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(9, 3.6), layout="constrained")
        tl = self.timeline
        hours = tl["time"] / 3600.0
        color = SCHEME_COLORS.get(self.scheme, "C0")
        (l1,) = ax.step(hours, tl["steps_done"], where="post", color=color, label="steps done")
        ax.set_xlabel("wall clock (h)")
        ax.set_ylabel("steps done (committed or not)")
        ax.set_ylim(0, max(int(tl["steps_done"].max()), 1) * 1.05)
        ax2 = ax.twinx()
        (l2,) = ax2.step(
            hours,
            tl["depth"],
            where="post",
            color="#7570b3",
            alpha=0.6,
            lw=1,
            label="stack depth (compute multiplier)",
        )
        ax2.set_ylabel("stack depth")
        ax2.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax2.set_ylim(0, max(int(tl["depth"].max()), 1) + 1)
        restarts = hours[tl["event"] == TimelineEvent.RESTART]
        handles = [l1, l2]
        if restarts.size:
            ax.plot(
                restarts,
                np.zeros(restarts.size),
                "|",
                color="#e41a1c",
                ms=10,
                label="global restart",
            )
            handles.append(ax.lines[-1])
        ax.legend(handles=handles, loc="upper left", fontsize=8)
        name = SCHEME_LABELS.get(self.scheme, self.scheme)
        r = "" if self.scheme == "checkpoint" else f" r = {self.redundancy}"
        result = f"TTT/T0 = {self.normalized:.2f}" if self.completed else "unfinished"
        ax.set_title(
            f"{name}{r}, N = {self.groups}{_scenario_words(self.scenario)}, seed {self.seed}: "
            f"{result}",
            fontsize=10,
        )
        return ax


def _dur(seconds: float) -> str:
    """Seconds as a readable duration with its unit."""
    if math.isinf(seconds):
        return "inf"
    if seconds >= 86400:
        return f"{seconds / 86400:.2f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def _scenario_words(sc: Any) -> str:
    """``, MTBF 5.0 min, Weibull 0.78, restart 1.00 h`` for a title (empty without a scenario)."""
    if sc is None:
        return ""
    return f", MTBF {_dur(sc.mtbf)}, Weibull k {sc.weibull_shape:g}, restart {_dur(sc.restart)}"
