"""The discrete-event engine: one pretraining run under failures.

Model (every choice below is a documented modelling decision; SPARe's decisions themselves come
from the real :class:`spare_fast.Controller`):

* **Failure process** (``Scenario.failure_model``; the default is the per-group model of the
  next item).  With ``"renewal"``, failures form a renewal process whose Weibull
  inter-arrivals (shape ``weibull_shape``, mean ``mtbf``) are measured on an *operational
  clock* that runs at rate ``alive groups / groups`` (the share of the job's GPUs still
  alive).  Masked failures therefore slow the live failure rate, as the paper observes.  The
  clock stops during a global restart: the job is being re-provisioned on healthy hardware, and
  failures of idle hardware are absorbed into the restart time.  Each failure hits a uniformly
  random alive GPU, i.e. (equal groups) a uniformly random alive group; with ``rack_share > 0``
  that share of failure events instead kills every alive group in that GPU's rack.
* **Per-group failure models** (the default, ``"per_group"``; also ``"per_gpu"``): the cluster
  is U independently aging hardware units (``Scenario.failure_unit_count``, by default the
  calibrated U = 1750); every group has its own Weibull lifetime, the first failure among its
  U / N units; dead groups do not fail; a restart renews every group (or only the dead ones,
  ``restart_renews="failed"``) and ages are frozen during it unless ``restart_aging``.
* **Step time.**  ``multiplier * compute * (1 + jitter * u) + allreduce`` with ``u`` uniform
  in [-1, 1] per executed step (with ``sync_jitter``, the maximum of one such draw per
  alive group: the synchronous step waits for the slowest); the multiplier is 1
  (CKPT-only), r (replication) or the SPARe stack depth.  A depth change decided during a
  step applies from the next step.
* **A masked failure mid-step** adds the decision and communicator-shrink time plus the patch
  compute to the compute phase: a patch row costs a layer on its new provider unless that
  group already computes the type in this step (its layers at the step's starting depth, or a
  patch it took on earlier in the step), and the busiest provider sets the wait; during the
  all-reduce phase the partial all-reduce is lost and rerun after the patch.  A masked
  failure during a checkpoint save does not disturb the save.
* **A wipe-out** (and every CKPT-only failure) loses the step in progress and every step since
  the last committed checkpoint (rework), then costs ``restart`` seconds; afterwards all
  groups are back, the layout is reset and the depth is 1.
* **Checkpoints** are synchronous saves of ``save`` seconds, taken at the first step boundary
  at least ``period - save`` seconds after the previous save (or restart) ended; a save
  interrupted by a restart is lost.  ``period=None`` uses T_c* with T_f = mu * mtbf.
* **Restart policies** (beyond the paper).  ``restart_depth=d`` checkpoints and restarts once
  the depth reaches d; ``restart_policy="expected_cost"`` does so when a one-stage look-ahead
  (:meth:`_Run._evaluate_policy`) says the expected net work of continuing to the next failure
  is negative.  A planned restart saves first, so nothing is reworked.
* **Time accounting.**  Every second of wall clock is in exactly one bucket: useful work
  (``compute + allreduce`` per committed step), redundancy (extra layers of committed steps),
  jitter, recovery (decision, shrink, patch, all-reduce reruns of committed steps), rework,
  checkpoint and restart.  Availability is ``1 - (restart + rework + checkpoint) / wall``, the
  quantity the closed-form A(tau) models.

Failure-free stretches are advanced arithmetically: the time of n steps at depth S is
``n (S c + a) + S c j (P[k+n] - P[k])`` with P the prefix sums of the jitter draws, so the
number of whole steps that fit before the next event is one ``searchsorted``.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from typing import Any

import numpy as np

from spare_fast import theory
from spare_fast.layout import Layout
from spare_fast.sim import _formulas
from spare_fast.sim.report import TIMELINE_DTYPE, Report, TimelineEvent
from spare_fast.sim.scenario import Scenario
from spare_fast.sim.schemes import SCHEMES, CheckpointScheme, ReplicationScheme, SpareScheme

__all__ = ["EventQueue", "default_redundancy", "make_layout", "simulate"]

_RUN, _SAVE, _RESTART, _DONE = 0, 1, 2, 3
# Event kinds, listed in tie-break priority: at equal times a restart or save ends before a
# repair, and a repair before a failure.
_EV_RESTART_END, _EV_SAVE_END, _EV_REPAIR, _EV_FAILURE = 0, 1, 2, 3

#: Safety stop: a run that needs more events than this (a failure storm far beyond any
#: realistic scenario, e.g. per-GPU lifetimes of microseconds) ends as incomplete.
MAX_EVENTS = 20_000_000

#: Default SPARe layout kind.  Measured (README, 5 seeds, N = 200/600/1000, r = 4..12): sidon
#: is 0.3-1.3% ahead of random and both beat cyclic by 7-10% at each N's best r; random exists
#: for every (N, r) while a sidon layout needs N >= r(r-1)+1 and can fail near that bound.
DEFAULT_LAYOUT = "random"


def _checkpoint_period(save: float, restart: float, mean_time_between_restarts: float) -> float:
    """T_c* from :func:`spare_fast.theory.checkpoint_period`; infinite when restarts never come."""
    if math.isinf(mean_time_between_restarts):
        return math.inf
    return float(theory.checkpoint_period(save, mean_time_between_restarts, restart))


class EventQueue:
    """A heap of ``(time, priority, sequence, payload)``: ties resolve by priority, then FIFO.

    Examples
    --------
    >>> q = EventQueue()
    >>> q.push(1.0, 1, "b"); q.push(1.0, 0, "a"); q.push(1.0, 1, "c")
    >>> [q.pop()[3] for _ in range(3)]
    ['a', 'b', 'c']
    """

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Any]] = []
        self._seq = 0

    def push(self, time: float, priority: int, payload: Any) -> None:
        """Schedule ``payload`` at ``time``; a NaN time is rejected."""
        if time != time:
            raise ValueError("event time is NaN")
        heapq.heappush(self._heap, (time, priority, self._seq, payload))
        self._seq += 1

    def pop(self) -> tuple[float, int, int, Any]:
        """Remove and return the earliest event."""
        return heapq.heappop(self._heap)

    def peek_time(self) -> float:
        """Time of the earliest event, ``inf`` when empty."""
        return self._heap[0][0] if self._heap else math.inf

    def __len__(self) -> int:
        return len(self._heap)


class _Draws:
    """Batched draws from one generator stream (numpy calls cost ~1 us each; batches don't)."""

    __slots__ = ("_fn", "_buf", "_i")

    def __init__(self, fn: Any) -> None:
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


def default_redundancy(groups: int) -> int:
    """The paper's optimal-redundancy rule r* = floor(log2 N + 0.833), capped at N.

    Examples
    --------
    >>> default_redundancy(600)
    10
    """
    return max(1, min(int(groups), int(math.floor(math.log2(groups) + 0.833))))


def domain_aware_layout(groups: int, redundancy: int, racks: int) -> Layout:
    """A cyclic layout whose holders of any one type sit in ``min(r, racks)`` distinct racks.

    Racks are contiguous blocks of groups (``g * racks // groups``).  The cyclic layout is laid
    over the groups visited rack by rack round-robin, so the r cyclically consecutive holders
    of a type come from r consecutive racks.  Layer 0 stays a permutation.

    Examples
    --------
    >>> st = domain_aware_layout(8, 2, 4).stacks
    >>> sorted(st[:, 0].tolist()) == list(range(8))
    True
    """
    n, r, R = int(groups), int(redundancy), int(racks)
    rack = (np.arange(n) * R) // n
    # Round-robin order over racks: position p takes the next unused group of rack p mod R.
    members = [np.flatnonzero(rack == q).tolist() for q in range(R)]
    order: list[int] = []
    cursor = [0] * R
    q = 0
    while len(order) < n:
        if cursor[q] < len(members[q]):
            order.append(members[q][cursor[q]])
            cursor[q] += 1
        q = (q + 1) % R
    perm = np.asarray(order)  # position -> group
    cyc = Layout.cyclic(n, r).stacks
    stacks = np.empty_like(cyc)
    # Group perm[p] plays the cyclic role of position p, holding types (p + l) mod N.
    stacks[perm] = cyc
    return Layout(stacks, kind="domain")


def make_layout(
    kind: str, groups: int, redundancy: int, *, seed: int = 0, racks: int = 1
) -> Layout:
    """Build a SPARe layout by name: cyclic, sidon, random or domain (rack-aware cyclic).

    Examples
    --------
    >>> make_layout("cyclic", 6, 2).kind
    'cyclic'
    """
    if kind == "cyclic":
        return Layout.cyclic(groups, redundancy)
    if kind == "sidon":
        return Layout.sidon(groups, redundancy, seed=seed)
    if kind == "random":
        return Layout.random(groups, redundancy, seed=seed)
    if kind == "domain":
        return domain_aware_layout(groups, redundancy, racks)
    raise ValueError(f"layout = {kind!r} is not one of 'cyclic', 'sidon', 'random', 'domain'")


def _resolve_scheme(
    scenario: Scenario,
    scheme: str,
    redundancy: int | None,
    layout: Layout | str | None,
    seed: int = 0,
) -> CheckpointScheme | ReplicationScheme | SpareScheme:
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise ValueError(f"scheme = {scheme!r} is not one of {', '.join(map(repr, SCHEMES))}")
    if redundancy is not None:
        if isinstance(redundancy, bool) or not isinstance(redundancy, (int, np.integer)):
            raise TypeError(f"redundancy = {redundancy!r} must be an int")
        if not 1 <= int(redundancy) <= scenario.groups:
            raise ValueError(f"redundancy = {redundancy} is not in [1, groups = {scenario.groups}]")
    if scheme == "checkpoint":
        if redundancy not in (None, 1):
            raise ValueError(f"redundancy = {redundancy} makes no sense for 'checkpoint' (use 1)")
        if layout is not None:
            raise ValueError("layout must be None for the 'checkpoint' scheme")
        return CheckpointScheme(scenario)
    if scheme == "replication":
        if layout is not None:
            raise ValueError("layout must be None for 'replication' (replica sets are fixed)")
        return ReplicationScheme(scenario, 3 if redundancy is None else int(redundancy))
    if isinstance(layout, Layout):
        if layout.n_groups != scenario.groups or layout.n_types != scenario.groups:
            raise ValueError(
                f"layout has {layout.n_groups} groups and {layout.n_types} types; the scenario "
                f"needs groups = types = {scenario.groups}"
            )
        if redundancy is not None and int(redundancy) != layout.redundancy:
            raise ValueError(
                f"redundancy = {redundancy} disagrees with layout.redundancy = {layout.redundancy}"
            )
        lay = layout
    else:
        r = default_redundancy(scenario.groups) if redundancy is None else int(redundancy)
        kind = DEFAULT_LAYOUT if layout is None else layout
        if not isinstance(kind, str):
            raise TypeError(f"layout = {layout!r} must be a Layout, a layout name or None")
        lay = make_layout(kind, scenario.groups, r, seed=seed, racks=scenario.racks)
    return SpareScheme(scenario, lay)


class _Run:
    """State of one simulation; see the module docstring for the model."""

    #: Advance failure-free stretches arithmetically (tests turn this off to compare against
    #: the one-step-at-a-time path).
    batching = True

    def __init__(self, sc: Scenario, scheme: Any, seed: int, record: bool) -> None:
        self.sc = sc
        self.scheme = scheme
        self.record = record
        ss = np.random.SeedSequence(int(seed))
        fail_ss, victim_ss, jitter_ss, repair_ss = ss.spawn(4)
        k, lam = float(sc.weibull_shape), sc.weibull_scale
        g_fail = np.random.default_rng(fail_ss)
        g_vic = np.random.default_rng(victim_ss)
        g_rep = np.random.default_rng(repair_ss)
        self.g_jit = np.random.default_rng(jitter_ss)
        self.interarrival = _Draws(lambda n: g_fail.weibull(k, n) * lam)
        # A group fails at the first failure of its U/N hardware units, each Weibull with mean
        # U * mtbf: the minimum is Weibull with scale U lam (U/N)^(-1/k).  U = N (per_group),
        # the scenario's failure_units, or every GPU (per_gpu).
        units = sc.failure_unit_count
        glam = units * lam * (units / sc.groups) ** (-1.0 / k)
        self.g_fail = g_fail
        self.glam = glam
        self.k_shape = k
        self.group_life = _Draws(lambda n: g_fail.weibull(k, n) * glam)
        self.uniform = _Draws(g_vic.random)
        if sc.repair is not None:
            sig = float(sc.repair_sigma)
            mu_log = math.log(float(sc.repair)) - 0.5 * sig * sig  # lognormal with that mean
            self.repair_time = _Draws(lambda n: g_rep.lognormal(mu_log, sig, n))
        # Jitter prefix sums over executed steps: P[i] = sum of u[0..i-1].
        self.jitter = float(sc.jitter)
        self.P = np.zeros(1)
        self.u: list[float] = []
        self.U = np.zeros(0)
        self.c = float(sc.compute)
        self.a = sc.allreduce_time
        self.steps = int(sc.steps)
        self.T_r = float(sc.restart)
        self.T_s = float(sc.save)
        self.mtbf = float(sc.mtbf)
        # Groups of the job and their alive set (swap-remove list for O(1) uniform choice).
        n = scheme.n_groups
        self.n_used = n
        self.alive_list = list(range(n))
        self.pos = list(range(n))
        self.is_alive = [True] * n
        self.rack = [sc.rack_of(g) for g in range(n)]
        self.rack_members: list[list[int]] = [[] for _ in range(sc.racks)]
        for g in range(n):
            self.rack_members[self.rack[g]].append(g)
        self.q = EventQueue()
        # Operational failure clock.
        self.rate = n / sc.groups
        self.op_at = 0.0
        self.t_at = 0.0
        self.op_next = self.interarrival.next() if math.isfinite(self.mtbf) else math.inf
        self.op_last_fail = 0.0
        self.fail_version = 0
        # Per-group failure model: each group's own Weibull lifetime (mean groups * mtbf), all
        # fresh after a restart; a repaired group is fresh too.
        self.per_group = sc.failure_model in ("per_group", "per_gpu")
        # Without repairs every alive group has the same age (time since the last restart),
        # so the next failure among n of them is exact in O(1): the cluster's cumulative
        # hazard from age a is n ((a + x) / lam)^k - n (a / lam)^k, equal to an Exp(1) draw.
        self.common_age = (
            self.per_group
            and sc.repair is None
            and sc.restart_renews == "all"
            and not sc.restart_aging
        )
        self.renew_all = sc.restart_renews == "all"
        self.restart_aging = bool(sc.restart_aging)
        self.sync_jitter = bool(sc.sync_jitter)
        self.exp1 = _Draws(g_fail.standard_exponential)
        if self.per_group:
            self.group_scale = sc.groups * sc.weibull_scale
            self.life = np.full(n, math.inf)
            self.t = 0.0
            self._fresh_lives(range(n))
        self.epoch = 0  # restart epoch: repairs scheduled before a restart are void after it
        # Checkpoint period.
        mu = scheme.endurable_failures()
        self.mu = mu
        self.static_period = (
            _checkpoint_period(self.T_s, self.T_r, mu * self.mtbf)
            if sc.period is None
            else float(sc.period)
        )
        self.period = self.static_period
        # Expected-cost restart rule: wall time is valued at the long-run rate g = 1 / J of
        # the closed-form time-to-train (T0-work per wall second) that a restart returns to.
        self.policy_rate: float | None = None
        self.want_restart = False
        if (
            sc.restart_policy == "expected_cost"
            and scheme.redundancy > 1
            and math.isfinite(self.mtbf)
        ):
            kind = "replication" if scheme.name == "replication" else "spare"
            j = theory.time_to_train(
                scheme.n_groups, scheme.redundancy, self.mtbf, self.T_s, self.T_r, scheme=kind
            )
            self.policy_rate = 1.0 / float(j)
        self.policy_weight = mu * self.mtbf + self.T_r
        # Training state.
        self.t = 0.0
        self.phase = _RUN
        self.done = 0
        self.ckpt = 0
        self.ckpt_ref = 0.0
        self.k_exec = 0
        self.restart_after_save = False
        self.save_start = 0.0
        self.resume_time = 0.0
        # Accounting (committed + pending since the last checkpoint).
        self.useful = self.redund = self.jit = self.recov = 0.0
        self.p_useful = self.p_redund = self.p_jit = self.p_recov = 0.0
        self.rework = self.ckpt_loss = self.restart_loss = 0.0
        self.depth_steps = 0
        self.exec_steps = 0
        self.restarts = self.planned_restarts = self.failures = self.masked = 0
        self.groups_failed = self.rejoins = self.checkpoints = self.lost_saves = 0
        self.events = 0
        self.truncated = False
        self.timeline: list[tuple[float, int, int, int, int]] = []
        # Current step.
        self.step_start = self.compute_end = self.step_end = 0.0
        self.step_S = 1
        self.step_u = 0.0
        self.step_rec = 0.0
        self.at_boundary = True  # no step in progress: training resumes at self.t
        self._schedule_failure()

    # -- jitter ----------------------------------------------------------------------------
    def _ensure_jitter(self, upto: int) -> None:
        """Make sure u[0..upto-1] and P[0..upto] exist."""
        have = len(self.u)
        if upto <= have:
            return
        n = max(upto - have, have, 1024)
        if self.jitter > 0:
            new = self.g_jit.uniform(-1.0, 1.0, n)
        else:
            new = np.zeros(n)
        self.u.extend(new.tolist())
        if self.sync_jitter:  # the draws as an array, for the vectorised slowest-group batch
            self.U = np.concatenate([self.U, new])
        self.P = np.concatenate([self.P, self.P[-1] + np.cumsum(new)])

    def _sync_u(self, u: Any) -> Any:
        """The slowest of n_alive groups: u = 2 w^(1/n) - 1 with w = (u + 1) / 2 is the maximum
        of n independent uniforms on [-1, 1] (its CDF is ((x + 1) / 2)^n)."""
        n = max(len(self.alive_list), 1)
        return 2.0 * ((u + 1.0) * 0.5) ** (1.0 / n) - 1.0

    # -- failure clock ---------------------------------------------------------------------
    def _set_rate(self, rate: float) -> None:
        self.op_at += (self.t - self.t_at) * self.rate
        self.t_at = self.t
        self.rate = rate
        self._schedule_failure()

    def _fresh_lives(self, groups: Any) -> None:
        if not math.isfinite(self.mtbf) or self.common_age:
            return
        if isinstance(groups, range) and len(groups) == self.n_used:
            self.life[:] = self.t + self.g_fail.weibull(self.k_shape, self.n_used) * self.glam
            return
        for g in groups:
            self.life[g] = self.t + self.group_life.next()

    def _restart_lives(self) -> None:
        """At a restart's start: which hardware is replaced, and whether its age runs on.

        Dead groups (and the wipe-out's victims) have an infinite lifetime here."""
        if self.common_age:
            return
        life, t = self.life, self.t
        if self.restart_aging:
            # Replacement hardware is installed now and ages during the restart.
            new = ~np.isfinite(life) if not self.renew_all else np.ones(self.n_used, bool)
            life[new] = t + self.g_fail.weibull(self.k_shape, int(new.sum())) * self.glam
            return
        if self.renew_all:
            life[:] = math.inf
            return
        # Frozen ages: keep each survivor's residual life, to resume at the restart's end.
        self.residual = life - t
        life[:] = math.inf

    def _resume_lives(self) -> None:
        """At a restart's end: the lifetimes the job resumes with."""
        if self.common_age:
            return
        life, t = self.life, self.t
        if self.restart_aging:
            # Groups that died during the restart were replaced on the spot (renewal).
            while True:
                due = np.flatnonzero(life <= t)
                if due.size == 0:
                    break
                life[due] += self.g_fail.weibull(self.k_shape, due.size) * self.glam
            return
        if self.renew_all:
            self._fresh_lives(range(self.n_used))
            return
        res = self.residual
        keep = np.isfinite(res)
        life[keep] = t + res[keep]
        dead = ~keep
        life[dead] = t + self.g_fail.weibull(self.k_shape, int(dead.sum())) * self.glam

    def _schedule_failure(self) -> None:
        self.fail_version += 1
        if self.common_age:
            if self.rate > 0 and math.isfinite(self.mtbf):
                lam, k = self.glam, self.k_shape
                a = self.t - self.resume_time
                x = (a / lam) ** k + self.exp1.next() / len(self.alive_list)
                when = self.resume_time + lam * x ** (1.0 / k)
                self.q.push(when, _EV_FAILURE, (self.fail_version, -1))
            return
        if self.per_group:
            if self.rate > 0:
                g = int(np.argmin(self.life))
                if math.isfinite(self.life[g]):
                    self.q.push(float(self.life[g]), _EV_FAILURE, (self.fail_version, g))
            return
        if self.rate > 0 and math.isfinite(self.op_next):
            when = self.t_at + (self.op_next - self.op_at) / self.rate
            self.q.push(when, _EV_FAILURE, (self.fail_version, 0))

    # -- steps -----------------------------------------------------------------------------
    def _start_step(self) -> None:
        k = self.k_exec
        self._ensure_jitter(k + 1)
        S = self.scheme.multiplier
        u = self.u[k]
        if self.sync_jitter:
            u = self._sync_u(u)
        self.step_S = S
        self.step_u = u
        self.step_start = self.t
        self.compute_end = self.t + S * self.c * (1.0 + self.jitter * u)
        self.step_end = self.compute_end + self.a
        self.step_rec = 0.0
        self.at_boundary = False
        self.scheme.begin_step()

    def _finish_step(self) -> None:
        S = self.step_S
        total = self.step_end - self.step_start
        base = S * self.c + self.a
        self.p_useful += self.c + self.a
        self.p_redund += (S - 1) * self.c
        self.p_recov += self.step_rec
        self.p_jit += total - self.step_rec - base
        self.t = self.step_end
        self.at_boundary = True
        self.done += 1
        self.k_exec += 1
        self.exec_steps += 1
        self.depth_steps += S

    def _batch(self, t_limit: float) -> int:
        """Complete, arithmetically, the whole steps after ``self.t`` that end by ``t_limit``,
        stopping at the first milestone (last step or checkpoint due).  Returns the count."""
        n_done = self.steps - self.done
        if n_done <= 0:
            return 0
        S = self.scheme.multiplier
        c, a, j = self.c, self.a, self.jitter
        d = S * c + a
        span = t_limit - self.t
        gap = self.ckpt_ref + self.period - self.T_s - self.t  # time until a checkpoint is due
        d_min = S * c * (1.0 - j) + a
        n_hi = n_done
        if math.isfinite(span):
            n_hi = min(n_hi, int(span / d_min) + 1)
        if math.isfinite(gap):
            n_hi = min(n_hi, max(int(gap / d_min) + 1, 1))
        if n_hi <= 0:
            return 0
        k = self.k_exec
        self._ensure_jitter(k + n_hi)
        if n_hi <= 16 and not self.sync_jitter:
            return self._batch_scalar(n_hi, S, span, gap)
        ns = np.arange(1, n_hi + 1, dtype=np.float64)
        if j > 0 and self.sync_jitter:
            T = ns * d + (S * c * j) * np.cumsum(self._sync_u(self.U[k : k + n_hi]))
        elif j > 0:
            T = ns * d + (S * c * j) * (self.P[k + 1 : k + n_hi + 1] - self.P[k])
        else:
            T = ns * d
        n_fit = int(np.searchsorted(T, span, side="right"))
        n = n_fit
        if math.isfinite(gap):
            n_ck = int(np.searchsorted(T, gap, side="left")) + 1  # first n with T(n) >= gap
            n = min(n, n_ck)
        n = min(n, n_done)
        if n <= 0:
            return 0
        return self._advance(n, float(T[n - 1]), S)

    def _batch_scalar(self, n_hi: int, S: int, span: float, gap: float) -> int:
        """:meth:`_batch` for a few steps: the same sums, without numpy call overhead."""
        c, a, j = self.c, self.a, self.jitter
        d = S * c + a
        scj = S * c * j
        P = self.P
        k = self.k_exec
        pk = P[k]
        n = 0
        tot = 0.0
        for i in range(1, n_hi + 1):
            T = i * d + scj * (P[k + i] - pk) if j > 0 else i * d
            if T > span:
                break
            n, tot = i, T
            if T >= gap:
                break
        if n == 0:
            return 0
        return self._advance(n, float(tot), S)

    def _advance(self, n: int, tot: float, S: int) -> int:
        """Book ``n`` failure-free steps at depth ``S`` that took ``tot`` seconds in all."""
        c, a = self.c, self.a
        d = S * c + a
        self.p_useful += n * (c + a)
        self.p_redund += n * (S - 1) * c
        self.p_jit += tot - n * d
        self.t = self.t + tot
        self.done += n
        self.k_exec += n
        self.exec_steps += n
        self.depth_steps += n * S
        return n

    def _checkpoint_due(self) -> bool:
        # At least one new step: with save = 0 the optimal period is 0 and would otherwise
        # checkpoint the same step forever.
        return self.done > self.ckpt and self.t - self.ckpt_ref >= self.period - self.T_s

    def _boundary(self, t_limit: float) -> None:
        """At a step boundary (``self.t``), run whole steps until ``t_limit`` or a milestone."""
        while True:
            if self.done >= self.steps:
                self._finish()
                return
            if self._checkpoint_due():
                self._start_save(restart_after=False)
                return
            rd = self.sc.restart_depth
            if self.want_restart or (rd is not None and self.scheme.stack_depth >= rd):
                self._start_save(restart_after=True)
                return
            if self.batching and self._batch(t_limit) > 0:
                continue
            self._start_step()
            if self.step_end > t_limit:
                return
            self._finish_step()

    def advance(self, t_limit: float) -> None:
        """Run training (phase RUN) up to ``t_limit``."""
        if self.phase != _RUN:
            return
        if not self.at_boundary:
            if self.step_end > t_limit:
                return
            self._finish_step()
        self._boundary(t_limit)

    # -- checkpoints, restarts, end ---------------------------------------------------------
    def _commit(self) -> None:
        self.useful += self.p_useful
        self.redund += self.p_redund
        self.jit += self.p_jit
        self.recov += self.p_recov
        self.p_useful = self.p_redund = self.p_jit = self.p_recov = 0.0

    def _start_save(self, restart_after: bool) -> None:
        self.phase = _SAVE
        self.save_start = self.t
        self.restart_after_save = restart_after
        self.q.push(self.t + self.T_s, _EV_SAVE_END, self.epoch)

    def _finish(self) -> None:
        self._commit()
        self.phase = _DONE
        self._log(4)

    def _restart(self, planned: bool) -> None:
        if self.phase == _RUN and not self.at_boundary:
            self.rework += self.t - self.step_start
        elif self.phase == _SAVE:
            self.ckpt_loss += self.t - self.save_start
            self.lost_saves += 1
            self.restart_after_save = False  # a wipe-out pre-empted the planned restart
        self.rework += self.p_useful + self.p_redund + self.p_jit + self.p_recov
        self.p_useful = self.p_redund = self.p_jit = self.p_recov = 0.0
        self.done = self.ckpt
        self.restarts += 1
        self.planned_restarts += int(planned)
        self.want_restart = False
        self.epoch += 1
        self.scheme.reset()
        if len(self.alive_list) != self.n_used:
            n = self.n_used
            self.alive_list = list(range(n))
            self.pos = list(range(n))
            self.is_alive = [True] * n
        self.phase = _RESTART
        if self.per_group and math.isfinite(self.mtbf):
            self._restart_lives()
        self._set_rate(0.0)
        self.q.push(self.t + self.T_r, _EV_RESTART_END, self.epoch)
        self._log(1)

    def _log(self, code: int) -> None:
        if self.record:
            self.timeline.append(
                (self.t, code, self.done, self.scheme.multiplier, len(self.alive_list))
            )

    def _time_for_failures(self, rem: float) -> float:
        """Expected wall time, from now, until ``rem`` more failures (seconds)."""
        if self.per_group:
            # Groups age together since the restart: the cluster's cumulative hazard is
            # n_alive (a / lam_g)^k, so the time for ``rem`` more failures is closed-form.
            k, lam = self.k_shape, self.glam
            a = max(self.t - self.resume_time, 0.0)
            n_alive = max(len(self.alive_list), 1)
            return float(lam * ((a / lam) ** k + rem / n_alive) ** (1.0 / k) - a)
        rate = (
            max(self.rate, 1e-12)
            if self.phase != _RESTART
            else len(self.alive_list) / self.sc.groups
        )
        op_now = self.op_at + (self.t - self.t_at) * self.rate
        age = max(op_now - self.op_last_fail, 0.0)
        mrl = _formulas.weibull_mean_residual_life(
            age, self.sc.weibull_shape, self.sc.weibull_scale
        )
        return float((mrl + (rem - 1.0) * self.mtbf) / rate)

    def _update_period(self) -> None:
        if not self.sc.dynamic_checkpoint or self.sc.period is not None:
            return
        sch = self.scheme
        dead = self.n_used - len(self.alive_list)
        rem = (
            1.0
            if sch.redundancy == 1
            else _formulas.remaining_endurable_failures(self.n_used, sch.redundancy, sch.sets, dead)
        )
        self.period = _checkpoint_period(self.T_s, self.T_r, self._time_for_failures(rem))

    def _evaluate_policy(self) -> None:
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
        """
        g0 = self.policy_rate
        if g0 is None:
            return
        # The rate the job actually achieves so far (net progress over wall clock), with the
        # closed form as a prior worth one expected restart cycle.
        w0 = self.policy_weight
        g_rate = (self.done * (self.c + self.a) + g0 * w0) / (self.t + w0)
        n_alive = len(self.alive_list)
        p = self.scheme.critical_groups() / n_alive if n_alive else 1.0
        tau = self._time_for_failures(1.0)
        S = self.scheme.multiplier
        w = (self.c + self.a) / (S * self.c + self.a)
        at_risk = (self.done - self.ckpt) * (self.c + self.a)
        gain = tau * (w - g_rate) - p * (at_risk + tau * w) + g_rate * p * self.T_s
        self.want_restart = gain < 0.0

    # -- events ----------------------------------------------------------------------------
    def _kill(self, g: int) -> None:
        self.is_alive[g] = False
        i = self.pos[g]
        last = self.alive_list.pop()
        if last != g:
            self.alive_list[i] = last
            self.pos[last] = i

    def on_failure(self) -> None:
        self.failures += 1
        self.op_at += (self.t - self.t_at) * self.rate
        self.t_at = self.t
        self.op_last_fail = self.op_next
        self.op_next += self.interarrival.next()
        n_alive = len(self.alive_list)
        if self.per_group and not self.common_age:
            victim = self._pending_victim
            self.life[victim] = math.inf
        else:
            victim = self.alive_list[min(int(self.uniform.next() * n_alive), n_alive - 1)]
        if self.sc.rack_share > 0 and self.uniform.next() < self.sc.rack_share:
            victims = [g for g in self.rack_members[self.rack[victim]] if self.is_alive[g]]
            if self.per_group and not self.common_age:
                for g in victims:
                    self.life[g] = math.inf
        else:
            victims = [victim]
        out = self.scheme.fail(victims)
        self.groups_failed += len(victims)
        if out.wipeout:
            self._restart(planned=False)
            return
        self.masked += 1
        for g in victims:
            self._kill(g)
        if self.sc.repair is not None:
            for g in victims:
                self.q.push(self.t + self.repair_time.next(), _EV_REPAIR, (self.epoch, g))
        if self.phase == _RUN and not self.at_boundary:
            extra = out.control + out.patch_layers * self.c * (1.0 + self.jitter * self.step_u)
            if self.t < self.compute_end:
                self.compute_end += extra
                self.step_end += extra
                self.step_rec += extra
            else:  # the all-reduce in flight is lost: patch, then rerun it
                new_end = self.t + extra + self.a
                self.step_rec += new_end - self.step_end
                self.compute_end = self.t + extra
                self.step_end = new_end
        self._set_rate(len(self.alive_list) / self.sc.groups)
        self._update_period()
        self._evaluate_policy()
        self._log(0)

    def on_repair(self, g: int) -> None:
        if self.is_alive[g]:  # pragma: no cover - a dead group is repaired once per epoch
            return
        self.scheme.rejoin([g])
        self.is_alive[g] = True
        self.pos[g] = len(self.alive_list)
        self.alive_list.append(g)
        self.rejoins += 1
        if self.per_group:
            self._fresh_lives([g])
        self._set_rate(len(self.alive_list) / self.sc.groups)
        self._update_period()
        self._evaluate_policy()
        self._log(3)

    def on_save_end(self) -> None:
        self._commit()
        self.ckpt = self.done
        self.checkpoints += 1
        self.ckpt_loss += self.T_s
        self.ckpt_ref = self.t
        self._log(2)
        if self.restart_after_save:
            self.phase = _RUN  # restart from a clean boundary: nothing to rework
            self.step_start = self.t
            self.restart_after_save = False
            self._restart(planned=True)
            return
        self._update_period()
        self.phase = _RUN
        self._evaluate_policy()
        self._boundary(self.q.peek_time())

    def on_restart_end(self) -> None:
        self.restart_loss += self.T_r
        self.phase = _RUN
        self.ckpt_ref = self.t
        self.resume_time = self.t
        if self.per_group and math.isfinite(self.mtbf):
            self._resume_lives()
        self._set_rate(self.n_used / self.sc.groups)
        self._update_period()
        self._log(5)
        self.at_boundary = True

    def run(self, horizon: float) -> None:
        q = self.q
        while self.phase != _DONE:
            t_next = q.peek_time()
            if self.phase == _RUN:
                self.advance(min(t_next, horizon))
                if self.phase == _DONE:
                    return
                if q.peek_time() < t_next:
                    continue
            if t_next > horizon:
                return
            time_, kind, _seq, payload = q.pop()
            if kind == _EV_FAILURE:
                if payload[0] != self.fail_version:
                    continue
                self._pending_victim = payload[1]
            elif kind == _EV_REPAIR:
                if payload[0] != self.epoch:
                    continue
            elif payload != self.epoch:  # a save cut short by a restart
                continue
            self.t = time_
            self.events += 1
            if self.events > MAX_EVENTS:
                self.truncated = True
                return
            if kind == _EV_FAILURE:
                self.on_failure()
            elif kind == _EV_REPAIR:
                self.on_repair(payload[1])
            elif kind == _EV_SAVE_END:
                self.on_save_end()
            else:
                self.on_restart_end()


def simulate(
    scenario: Scenario,
    scheme: str,
    *,
    redundancy: int | None = None,
    layout: Layout | str | None = None,
    seed: int = 0,
    timeline: bool = True,
) -> Report:
    """Simulate one pretraining run under failures and return its :class:`Report`.

    Parameters
    ----------
    scenario : Scenario
        The job, the failure process and the recovery costs.
    scheme : {"checkpoint", "replication", "spare"}
        CKPT-only, Rep+CKPT or SPARe+CKPT.
    redundancy : int, optional
        r.  Default: 3 for replication (the paper's best), r* = floor(log2 N + 0.833) for
        SPARe, or the layout's redundancy when a :class:`~spare_fast.Layout` is given.
    layout : Layout or str, optional
        SPARe only: a layout, or one of ``"cyclic"``, ``"sidon"``, ``"random"``, ``"domain"``
        (cyclic over rack-interleaved groups).  Default :data:`DEFAULT_LAYOUT`.
    seed : int
        Seed of the failure, victim, jitter and repair streams and of a named random or sidon
        layout; the same seed gives the same event count and the same report, bit for bit.
    timeline : bool
        Record the per-event timeline (default True).

    Returns
    -------
    Report

    Raises
    ------
    ValueError
        Unknown scheme, redundancy out of range, or a layout that does not fit the scenario.
    TypeError
        A scenario that is not a :class:`Scenario`, or a non-integer redundancy or seed.

    Notes
    -----
    See the module docstring for the model.  The event loop costs O(log E) per event (heap)
    plus one controller decision per SPARe failure; failure-free stretches cost one
    ``searchsorted`` over the steps they contain, never one event per step.

    References
    ----------
    .. [1] J. Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for
       Fault-Tolerant LLM Pretraining Systems with 100k+ GPUs", ICML 2026, arXiv:2603.00357.
    .. [2] J. W. Young, "A first order approximation to the optimum checkpoint interval",
       CACM 17(9), 1974; J. T. Daly, "A higher order estimate of the optimum checkpoint
       interval for restart dumps", FGCS 22(3), 2006 (the T_c* family).

    Examples
    --------
    >>> rep = simulate(Scenario(groups=200, steps=200), "replication", redundancy=3, seed=1)
    >>> rep.time_to_train >= rep.t0 * 2.5
    True
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise TypeError(f"seed = {seed!r} must be a non-negative int")
    sch = _resolve_scheme(scenario, scheme, redundancy, layout, int(seed))
    wall0 = _time.perf_counter()
    run = _Run(scenario, sch, int(seed), timeline)
    horizon = scenario.horizon * scenario.t0
    run.run(horizon)
    completed = run.phase == _DONE
    if not completed and not run.truncated:
        run.t = horizon
    tl = np.array(run.timeline, dtype=TIMELINE_DTYPE) if timeline else None
    wall = run.t
    losses = {
        "restart": run.restart_loss,
        "rework": run.rework,
        "checkpoint": run.ckpt_loss,
        "redundancy": run.redund,
        "recovery": run.recov,
        "jitter": run.jit,
    }
    down = losses["restart"] + losses["rework"] + losses["checkpoint"]
    return Report(
        scheme=sch.name,
        redundancy=sch.redundancy,
        layout=sch.layout_kind,
        seed=int(seed),
        groups=scenario.groups,
        completed=completed,
        time_to_train=wall if completed else math.inf,
        t0=scenario.t0,
        wall_clock=wall,
        useful=run.useful,
        availability=(1.0 - down / wall) if wall > 0 else 1.0,
        restarts=run.restarts,
        planned_restarts=run.planned_restarts,
        failures=run.failures,
        groups_failed=run.groups_failed,
        masked_failures=run.masked,
        rejoins=run.rejoins,
        checkpoints=run.checkpoints,
        lost_saves=run.lost_saves,
        mean_depth=run.depth_steps / max(run.exec_steps, 1),
        progress=(run.steps if completed else run.ckpt) / run.steps,
        executed_steps=run.exec_steps,
        period=run.static_period,
        endurable_failures=run.mu,
        losses=losses,
        events=run.events,
        decision_seconds=getattr(sch, "decision_seconds", 0.0),
        sim_seconds=_time.perf_counter() - wall0,
        timeline=tl,
        scenario=scenario,
    )


__all__ += ["DEFAULT_LAYOUT", "TimelineEvent", "domain_aware_layout"]
