"""The failure processes of the simulator: when the next failure comes, and which group it hits.

One class per failure model (``Scenario.failure_model``):

* :class:`RenewalFailures` (``"renewal"``): a renewal process whose Weibull inter-arrivals
  (mean ``mtbf``) run on an *operational clock* at rate ``alive groups / groups``; the victim
  is a uniformly random alive group, drawn by the engine.
* :class:`GroupLifetimes` (``"per_group"``, ``"per_gpu"``): every group has its own Weibull
  lifetime, the first failure among its ``U / N`` hardware units; the event names its victim.
* :class:`SharedAgeLifetimes`: the same model when every alive group has the same age (no
  repairs, a restart renews every group, ages frozen during restarts), where the next failure
  among ``n`` groups is exact in O(1) and the victim is uniform.

Every model keeps the operational clock of :class:`FailureModel` and draws its inter-arrivals
from the same stream as the lifetimes, so that one seed gives one run whatever the model (the
draws interleave exactly as they always have).  See ``docs/model.md``, "The simulator".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from spare_fast.sim import _formulas
from spare_fast.sim.scenario import Scenario

__all__ = [
    "Draws",
    "FailureModel",
    "GroupLifetimes",
    "RenewalFailures",
    "SharedAgeLifetimes",
    "failure_model",
]


class Draws:
    """Batched draws from one generator stream (numpy calls cost ~1 us each; batches don't)."""

    __slots__ = ("_fn", "_buf", "_i")

    def __init__(self, fn: Callable[[int], np.ndarray]) -> None:
        self._fn = fn
        self._buf: list[float] = []
        self._i = 0

    def next(self) -> float:
        if self._i >= len(self._buf):
            self._buf = self._fn(1024).tolist()
            self._i = 0
        v = self._buf[self._i]
        self._i += 1
        return v


class FailureModel:
    """Base of the failure models: the operational failure clock and the hooks the engine calls.

    The clock runs at ``rate`` (the share of the job's groups alive; 0 during a restart) and
    holds the next renewal arrival ``op_next`` on that clock.

    Parameters
    ----------
    sc : Scenario
        The scenario (mtbf, Weibull shape, groups).
    rng : numpy.random.Generator
        The failure stream.
    n_used : int
        Groups of the job (``N // r * r`` for Rep+CKPT with idle leftovers).
    """

    #: Whether a failure event names its victim (else the engine draws a uniform alive group).
    names_victims = False

    def __init__(self, sc: Scenario, rng: np.random.Generator, n_used: int) -> None:
        k, lam = float(sc.weibull_shape), sc.weibull_scale
        self.sc = sc
        self.rng = rng
        self.mtbf = float(sc.mtbf)
        self.interarrival = Draws(lambda n: rng.weibull(k, n) * lam)
        self.rate = n_used / sc.groups
        self.op_at = 0.0  # operational time at wall time t_at
        self.t_at = 0.0
        self.op_next = self.interarrival.next() if math.isfinite(self.mtbf) else math.inf
        self.op_last_fail = 0.0
        self.resume_time = 0.0  # wall time the job last (re)started

    def set_rate(self, t: float, rate: float) -> None:
        """The alive share changed at wall time ``t``."""
        self.op_at += (t - self.t_at) * self.rate
        self.t_at = t
        self.rate = rate

    def record_failure(self, t: float) -> None:
        """A failure happened at ``t``: advance the clock to the next renewal arrival."""
        self.op_at += (t - self.t_at) * self.rate
        self.t_at = t
        self.op_last_fail = self.op_next
        self.op_next += self.interarrival.next()

    def next_failure(self, t: float, n_alive: int) -> tuple[float, int]:
        """``(time, victim)`` of the next failure (victim -1: uniform), ``(inf, -1)`` if none.

        Called only while ``rate > 0``.
        """
        raise NotImplementedError

    def kill(self, groups: Iterable[int]) -> None:
        """These groups died (they fail no more)."""

    def revive(self, group: int, t: float) -> None:
        """A repaired group rejoined at ``t`` with fresh hardware."""

    def restart_begins(self, t: float) -> None:
        """A global restart starts at ``t``."""

    def restart_ends(self, t: float) -> None:
        """The job resumes at ``t`` with every group back."""
        self.resume_time = t

    def time_for_failures(self, t: float, rem: float, n_alive: int, restarting: bool) -> float:
        """Expected wall time, from ``t``, until ``rem`` more failures (seconds)."""
        raise NotImplementedError


class RenewalFailures(FailureModel):
    """``failure_model="renewal"``: Weibull inter-arrivals on the operational clock."""

    def next_failure(self, t: float, n_alive: int) -> tuple[float, int]:
        if not math.isfinite(self.op_next):
            return math.inf, -1
        return self.t_at + (self.op_next - self.op_at) / self.rate, -1

    def time_for_failures(self, t: float, rem: float, n_alive: int, restarting: bool) -> float:
        # The mean residual life of the current inter-arrival, then whole mean ones, at the
        # current rate (during a restart, at the rate the job will resume with).
        rate = max(self.rate, 1e-12) if not restarting else n_alive / self.sc.groups
        op_now = self.op_at + (t - self.t_at) * self.rate
        age = max(op_now - self.op_last_fail, 0.0)
        mrl = _formulas.weibull_mean_residual_life(
            age, self.sc.weibull_shape, self.sc.weibull_scale
        )
        return float((mrl + (rem - 1.0) * self.mtbf) / rate)


class _Lifetimes(FailureModel):
    """Shared part of the per-group models: the group lifetime distribution.

    A group fails at the first failure of its U/N hardware units, each Weibull with mean
    U * mtbf: the minimum is Weibull with scale ``U lam (U/N)^(-1/k)``.  U = N (per_group
    without ``failure_units``), the scenario's failure_units, or every GPU (per_gpu).
    """

    def __init__(self, sc: Scenario, rng: np.random.Generator, n_used: int) -> None:
        super().__init__(sc, rng, n_used)
        k = float(sc.weibull_shape)
        units = sc.failure_unit_count
        self.k_shape = k
        self.glam = units * sc.weibull_scale * (units / sc.groups) ** (-1.0 / k)

    def time_for_failures(self, t: float, rem: float, n_alive: int, restarting: bool) -> float:
        # Groups age together since the restart: the cluster's cumulative hazard is
        # n_alive (a / lam_g)^k, so the time for ``rem`` more failures is closed-form.
        k, lam = self.k_shape, self.glam
        a = max(t - self.resume_time, 0.0)
        n = max(n_alive, 1)
        return float(lam * ((a / lam) ** k + rem / n) ** (1.0 / k) - a)


class SharedAgeLifetimes(_Lifetimes):
    """Per-group lifetimes when every alive group has the same age (time since the restart).

    The next failure among ``n`` of them is exact in O(1): the cluster's cumulative hazard
    from age ``a`` is ``n ((a + x) / lam)^k - n (a / lam)^k``, equal to an Exp(1) draw.
    """

    def __init__(self, sc: Scenario, rng: np.random.Generator, n_used: int) -> None:
        super().__init__(sc, rng, n_used)
        self.exp1 = Draws(rng.standard_exponential)

    def next_failure(self, t: float, n_alive: int) -> tuple[float, int]:
        if not math.isfinite(self.mtbf):
            return math.inf, -1
        lam, k = self.glam, self.k_shape
        a = t - self.resume_time
        x = (a / lam) ** k + self.exp1.next() / n_alive
        return self.resume_time + lam * x ** (1.0 / k), -1


class GroupLifetimes(_Lifetimes):
    """Per-group lifetimes, one per group: the next failure is the earliest alive one.

    A restart renews every group (``restart_renews="all"``) or only the dead ones
    (``"failed"``, the survivors keep their residual lives); ages are frozen during a restart
    unless ``restart_aging``, when replacement hardware ages from the restart's start.  A
    repaired group is fresh.
    """

    names_victims = True

    def __init__(self, sc: Scenario, rng: np.random.Generator, n_used: int) -> None:
        super().__init__(sc, rng, n_used)
        self.n_used = n_used
        self.renew_all = sc.restart_renews == "all"
        self.restart_aging = bool(sc.restart_aging)
        self.group_life = Draws(lambda n: rng.weibull(self.k_shape, n) * self.glam)
        self.life = np.full(n_used, math.inf)  # wall time each group fails (inf: dead)
        # Frozen ages: each survivor's residual life during a restart (inf: dead).
        self.residual = np.full(n_used, math.inf)
        self._fresh_lives(range(n_used), 0.0)

    def _fresh_lives(self, groups: Iterable[int], t: float) -> None:
        if not math.isfinite(self.mtbf):
            return
        if isinstance(groups, range) and len(groups) == self.n_used:
            self.life[:] = t + self.rng.weibull(self.k_shape, self.n_used) * self.glam
            return
        for g in groups:
            self.life[g] = t + self.group_life.next()

    def next_failure(self, t: float, n_alive: int) -> tuple[float, int]:
        g = int(np.argmin(self.life))
        if not math.isfinite(self.life[g]):
            return math.inf, -1
        return float(self.life[g]), g

    def kill(self, groups: Iterable[int]) -> None:
        for g in groups:
            self.life[g] = math.inf

    def revive(self, group: int, t: float) -> None:
        self._fresh_lives([group], t)

    def restart_begins(self, t: float) -> None:
        """Which hardware is replaced, and whether its age runs on.

        Dead groups (and the wipe-out's victims) have an infinite lifetime here."""
        if not math.isfinite(self.mtbf):
            return
        life = self.life
        if self.restart_aging:
            # Replacement hardware is installed now and ages during the restart.
            new = ~np.isfinite(life) if not self.renew_all else np.ones(self.n_used, bool)
            life[new] = t + self.rng.weibull(self.k_shape, int(new.sum())) * self.glam
            return
        if self.renew_all:
            life[:] = math.inf
            return
        # Frozen ages: keep each survivor's residual life, to resume at the restart's end.
        self.residual = life - t
        life[:] = math.inf

    def restart_ends(self, t: float) -> None:
        """The lifetimes the job resumes with."""
        super().restart_ends(t)
        if not math.isfinite(self.mtbf):
            return
        life = self.life
        if self.restart_aging:
            # Groups that died during the restart were replaced on the spot (renewal).
            while True:
                due = np.flatnonzero(life <= t)
                if due.size == 0:
                    break
                life[due] += self.rng.weibull(self.k_shape, due.size) * self.glam
            return
        if self.renew_all:
            self._fresh_lives(range(self.n_used), t)
            return
        res = self.residual
        keep = np.isfinite(res)
        life[keep] = t + res[keep]
        dead = ~keep
        life[dead] = t + self.rng.weibull(self.k_shape, int(dead.sum())) * self.glam


def failure_model(sc: Scenario, rng: np.random.Generator, n_used: int) -> FailureModel:
    """The failure model of a scenario, drawing from ``rng``."""
    if sc.failure_model == "renewal":
        return RenewalFailures(sc, rng, n_used)
    shared_age = sc.repair is None and sc.restart_renews == "all" and not sc.restart_aging
    return (SharedAgeLifetimes if shared_age else GroupLifetimes)(sc, rng, n_used)
