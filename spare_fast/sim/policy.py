"""When to checkpoint and when to restart on purpose: the checkpoint period and restart rules.

:class:`CheckpointPlan` holds the period the engine checkpoints at (T_c* from the closed forms,
re-planned after each event with ``dynamic_checkpoint``) and the expected-cost restart rule
(``restart_policy="expected_cost"``), both beyond the paper where they differ from a fixed
T_c*; see ``docs/model.md``, "The simulator" and "Beyond the paper".
"""

from __future__ import annotations

import math
from collections.abc import Callable

from spare_fast import theory
from spare_fast.sim import _formulas
from spare_fast.sim.scenario import Scenario
from spare_fast.sim.schemes import Scheme

__all__ = ["CheckpointPlan", "checkpoint_period"]

#: Expected wall time until ``rem`` more failures, from the failure model (seconds).
TimeForFailures = Callable[[float], float]


def checkpoint_period(save: float, restart: float, mean_time_between_restarts: float) -> float:
    """T_c* from :func:`spare_fast.theory.checkpoint_period`; infinite when restarts never come."""
    if math.isinf(mean_time_between_restarts):
        return math.inf
    return float(theory.checkpoint_period(save, mean_time_between_restarts, restart))


class CheckpointPlan:
    """The checkpoint period of a run and its expected-cost restart rule.

    Attributes
    ----------
    mu : float
        The scheme's mean failures between restarts (closed form).
    static_period : float
        ``Scenario.period``, or T_c* with ``T_f = mu * mtbf``.
    period : float
        The period in force (``static_period`` unless ``dynamic_checkpoint`` re-plans it).
    want_restart : bool
        The expected-cost rule asks for a checkpoint and a planned restart.
    """

    def __init__(self, sc: Scenario, scheme: Scheme) -> None:
        self.sc = sc
        self.scheme = scheme
        self.c = float(sc.compute)
        self.a = sc.allreduce_time
        self.T_s = float(sc.save)
        self.T_r = float(sc.restart)
        mtbf = float(sc.mtbf)
        self.mu = scheme.endurable_failures()
        self.static_period = (
            checkpoint_period(self.T_s, self.T_r, self.mu * mtbf)
            if sc.period is None
            else float(sc.period)
        )
        self.period = self.static_period
        # Expected-cost restart rule: wall time is valued at the long-run rate g = 1 / J of
        # the closed-form time-to-train (T0-work per wall second) that a restart returns to.
        self.policy_rate: float | None = None
        self.want_restart = False
        if sc.restart_policy == "expected_cost" and scheme.redundancy > 1 and math.isfinite(mtbf):
            kind = "replication" if scheme.name == "replication" else "spare"
            j = theory.time_to_train(
                scheme.n_groups, scheme.redundancy, mtbf, self.T_s, self.T_r, scheme=kind
            )
            self.policy_rate = 1.0 / float(j)
        self.policy_weight = self.mu * mtbf + self.T_r

    def update_period(self, dead: int, time_for_failures: TimeForFailures) -> None:
        """Re-plan T_c* for the failures still endurable with ``dead`` groups down."""
        if not self.sc.dynamic_checkpoint or self.sc.period is not None:
            return
        sch = self.scheme
        rem = (
            1.0
            if sch.redundancy == 1
            else _formulas.remaining_endurable_failures(
                sch.n_groups, sch.redundancy, sch.sets, dead
            )
        )
        self.period = checkpoint_period(self.T_s, self.T_r, time_for_failures(rem))

    def evaluate(
        self, t: float, done: int, ckpt: int, n_alive: int, time_for_failures: TimeForFailures
    ) -> None:
        """Expected-cost restart rule: should the job checkpoint and restart now?

        One-stage look-ahead at the current state, in units of T0-work (a step is worth
        ``compute + allreduce`` seconds).  Continuing for the next failure interval (expected
        length ``tau``) at depth S earns ``tau w`` with ``w = (c + a) / (S c + a)``; with
        probability ``p`` (the share of alive groups that are some type's last alive holder)
        that failure wipes out and loses the work since the last checkpoint plus the interval's
        own.  A planned restart now costs a save and a restart; continuing and then restarting
        saves the save with probability ``p``.  Valuing wall time at the long-run rate ``g =
        1 / J`` (closed-form time-to-train), the gain of continuing is
        ``tau (w - g) - p (at_risk + tau w) + g p T_s``; restart when it is negative.
        ``done`` and ``ckpt`` are the steps done and the steps the last checkpoint holds.
        """
        g0 = self.policy_rate
        if g0 is None:
            return
        c, a = self.c, self.a
        # The rate the job actually achieves so far (net progress over wall clock), with the
        # closed form as a prior worth one expected restart cycle.
        w0 = self.policy_weight
        g_rate = (done * (c + a) + g0 * w0) / (t + w0)
        p = self.scheme.critical_groups() / n_alive if n_alive else 1.0
        tau = time_for_failures(1.0)
        S = self.scheme.multiplier
        w = (c + a) / (S * c + a)
        at_risk = (done - ckpt) * (c + a)
        gain = tau * (w - g_rate) - p * (at_risk + tau * w) + g_rate * p * self.T_s
        self.want_restart = gain < 0.0
