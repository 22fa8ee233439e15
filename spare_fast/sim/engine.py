"""The discrete-event engine: one pretraining run under failures.

This module is the event loop (:class:`EventQueue`, ``_Run``, :func:`simulate`); when failures
come is :mod:`spare_fast.sim.failures`, what they cost each scheme :mod:`spare_fast.sim.schemes`,
when to checkpoint or restart on purpose :mod:`spare_fast.sim.policy`, and where the time goes
:mod:`spare_fast.sim.ledger`.  The model is described in
``docs/model.md``, "The simulator".

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
  calibrated U = 1500); every group has its own Weibull lifetime, the first failure among its
  U / N units; dead groups do not fail; a restart renews every group (or only the dead ones,
  ``restart_renews="failed"``) and ages are frozen during it unless ``restart_aging``.
* **Step time.**  ``multiplier * compute * (1 + jitter * u) + allreduce`` with ``u`` uniform
  in [-1, 1] per executed step (with ``sync_jitter``, the maximum of one such draw per
  alive group: the synchronous step waits for the slowest); the multiplier is 1
  (CKPT-only), r (replication) or the SPARe stack depth.  A depth change decided during a
  step applies from the next step.
* **A masked failure mid-step** adds the decision and communicator-shrink time plus the patch
  compute to the compute phase: every type the failed groups computed in this step (their
  layers at the step's starting depth and the patches they took on) that no alive group
  computes in it costs a layer on its new provider, and the busiest provider sets the wait;
  during the all-reduce phase the partial all-reduce is lost and rerun after the patch.  A
  masked failure during a checkpoint save does not disturb the save.
* **Rep+CKPT** runs ``M = N // r`` replica sets of r groups; the ``N mod r`` leftover groups
  are idle and never fail (``rep_leftover="idle"``, the default; ``"set"`` makes them one
  smaller set).  A masked failure costs only the communicator shrink (no controller
  decision); a set losing its last replica is a wipe-out.
* **A wipe-out** (and every CKPT-only failure) loses the step in progress and every step since
  the last committed checkpoint (rework), then costs ``restart`` seconds; afterwards all
  groups are back, the layout is reset and the depth is 1.
* **Checkpoints** are synchronous saves of ``save`` seconds, taken at the first step boundary
  at least ``period - save`` seconds after the previous save (or restart) ended; a save
  interrupted by a restart is lost.  ``period=None`` uses T_c* with T_f = mu * mtbf, where mu
  is ``Gamma(1 + 1/r) N^(1 - 1/r)`` for SPARe, ``r M^(1 - 1/r) Gamma(1 + 1/r)`` with
  ``M = N // r`` for Rep+CKPT and 1 for CKPT-only.
* **Restart policies** (beyond the paper).  ``restart_depth=d`` checkpoints and restarts once
  the depth reaches d; ``restart_policy="expected_cost"`` does so when a one-stage look-ahead
  (:meth:`spare_fast.sim.policy.CheckpointPlan.evaluate`) says the expected net work of
  continuing to the next failure is negative.  A planned restart saves first, so nothing is
  reworked.
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

from spare_fast._validation import check_seed
from spare_fast.layout import Layout, domain_aware_layout, make_layout
from spare_fast.sim.failures import Draws, FailureModel, failure_model
from spare_fast.sim.ledger import Ledger
from spare_fast.sim.policy import CheckpointPlan
from spare_fast.sim.report import TIMELINE_DTYPE, Report, TimelineEvent
from spare_fast.sim.scenario import Scenario
from spare_fast.sim.schemes import DEFAULT_LAYOUT, Scheme, default_redundancy, make_scheme

# Re-exported from here as before the split: the layouts and the scheme defaults.
__all__ = [
    "DEFAULT_LAYOUT",
    "EventQueue",
    "TimelineEvent",
    "default_redundancy",
    "domain_aware_layout",
    "make_layout",
    "simulate",
]

_RUN, _SAVE, _RESTART, _DONE = 0, 1, 2, 3
# Event kinds, listed in tie-break priority: at equal times a restart or save ends before a
# repair, and a repair before a failure.
_EV_RESTART_END, _EV_SAVE_END, _EV_REPAIR, _EV_FAILURE = 0, 1, 2, 3

#: Safety stop: a run that needs more events than this (a failure storm far beyond any
#: realistic scenario, e.g. per-GPU lifetimes of microseconds) ends as incomplete.
MAX_EVENTS = 20_000_000


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


class _Run:
    """State of one simulation; see the module docstring for the model."""

    #: Advance failure-free stretches arithmetically (tests turn this off to compare against
    #: the one-step-at-a-time path).
    batching = True

    def __init__(self, sc: Scenario, scheme: Scheme, seed: int, record: bool) -> None:
        self.sc = sc
        self.scheme = scheme
        self.record = record
        ss = np.random.SeedSequence(int(seed))
        fail_ss, victim_ss, jitter_ss, repair_ss = ss.spawn(4)
        g_fail = np.random.default_rng(fail_ss)
        g_vic = np.random.default_rng(victim_ss)
        g_rep = np.random.default_rng(repair_ss)
        self.g_jit = np.random.default_rng(jitter_ss)
        self.uniform = Draws(g_vic.random)
        self.repair_time: Draws | None = None
        if sc.repair is not None:
            sig = float(sc.repair_sigma)
            mu_log = math.log(float(sc.repair)) - 0.5 * sig * sig  # lognormal with that mean
            self.repair_time = Draws(lambda n: g_rep.lognormal(mu_log, sig, n))
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
        self.t = 0.0
        # When failures come and whom they hit (sim/failures.py): the operational clock of the
        # renewal model or the groups' lifetimes.
        self.failures_model: FailureModel = failure_model(sc, g_fail, n)
        self.fail_version = 0  # failure events of older versions are stale
        # The victim the failure event being handled names (-1: none, draw a uniform one).
        self.event_victim = -1
        self.sync_jitter = bool(sc.sync_jitter)
        self.epoch = 0  # restart epoch: repairs scheduled before a restart are void after it
        # Checkpoint period and restart rules (sim/policy.py).
        self.plan = CheckpointPlan(sc, scheme)
        # Training state.
        self.phase = _RUN
        self.done = 0
        self.ckpt = 0
        self.ckpt_ref = 0.0
        self.k_exec = 0
        self.restart_after_save = False
        self.save_start = 0.0
        # Accounting (committed + pending since the last checkpoint).
        self.ledger = Ledger()
        self.depth_steps = 0
        self.exec_steps = 0
        self.restarts = self.planned_restarts = self.failures = self.masked = 0
        self.groups_failed = self.rejoins = self.checkpoints = self.lost_saves = 0
        self.events = 0
        self.truncated = False
        self.timeline: list[tuple[float, TimelineEvent, int, int, int]] = []
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
    @property
    def rate(self) -> float:
        """The share of the job's groups alive (0 during a restart): the failure clock's rate."""
        return self.failures_model.rate

    def _set_rate(self, rate: float) -> None:
        self.failures_model.set_rate(self.t, rate)
        self._schedule_failure()

    def _schedule_failure(self) -> None:
        self.fail_version += 1
        if self.rate > 0:
            when, victim = self.failures_model.next_failure(self.t, len(self.alive_list))
            if math.isfinite(when):
                self.q.push(when, _EV_FAILURE, (self.fail_version, victim))

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
        self.ledger.book(
            self.c + self.a, (S - 1) * self.c, total - self.step_rec - base, self.step_rec
        )
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
        gap = self.ckpt_ref + self.plan.period - self.T_s - self.t  # time until a checkpoint is due
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
        self.ledger.book(n * (c + a), n * (S - 1) * c, tot - n * d)
        self.t = self.t + tot
        self.done += n
        self.k_exec += n
        self.exec_steps += n
        self.depth_steps += n * S
        return n

    def _checkpoint_due(self) -> bool:
        # At least one new step: with save = 0 the optimal period is 0 and would otherwise
        # checkpoint the same step forever.
        return self.done > self.ckpt and self.t - self.ckpt_ref >= self.plan.period - self.T_s

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
            if self.plan.want_restart or (rd is not None and self.scheme.stack_depth >= rd):
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
    def _start_save(self, restart_after: bool) -> None:
        self.phase = _SAVE
        self.save_start = self.t
        self.restart_after_save = restart_after
        self.q.push(self.t + self.T_s, _EV_SAVE_END, self.epoch)

    def _finish(self) -> None:
        self.ledger.commit()
        self.phase = _DONE
        self._log(TimelineEvent.DONE)

    def _restart(self, planned: bool) -> None:
        led = self.ledger
        if self.phase == _RUN and not self.at_boundary:
            led.rework += self.t - self.step_start
        elif self.phase == _SAVE:
            led.checkpoint += self.t - self.save_start
            self.lost_saves += 1
            self.restart_after_save = False  # a wipe-out pre-empted the planned restart
        led.lose_pending()
        self.done = self.ckpt
        self.restarts += 1
        self.planned_restarts += int(planned)
        self.plan.want_restart = False
        self.epoch += 1
        self.scheme.reset()
        if len(self.alive_list) != self.n_used:
            n = self.n_used
            self.alive_list = list(range(n))
            self.pos = list(range(n))
            self.is_alive = [True] * n
        self.phase = _RESTART
        self.failures_model.restart_begins(self.t)
        self._set_rate(0.0)
        self.q.push(self.t + self.T_r, _EV_RESTART_END, self.epoch)
        self._log(TimelineEvent.RESTART)

    def _log(self, event: TimelineEvent) -> None:
        if self.record:
            self.timeline.append(
                (self.t, event, self.done, self.scheme.multiplier, len(self.alive_list))
            )

    def _time_for_failures(self, rem: float) -> float:
        """Expected wall time, from now, until ``rem`` more failures (seconds)."""
        return self.failures_model.time_for_failures(
            self.t, rem, len(self.alive_list), self.phase == _RESTART
        )

    def _update_period(self) -> None:
        self.plan.update_period(self.n_used - len(self.alive_list), self._time_for_failures)

    def _evaluate_policy(self) -> None:
        """The expected-cost restart rule (:meth:`CheckpointPlan.evaluate`) at this state."""
        self.plan.evaluate(
            self.t, self.done, self.ckpt, len(self.alive_list), self._time_for_failures
        )

    # -- events ----------------------------------------------------------------------------
    def _kill(self, g: int) -> None:
        self.is_alive[g] = False
        i = self.pos[g]
        last = self.alive_list.pop()
        if last != g:
            self.alive_list[i] = last
            self.pos[last] = i

    def on_failure(self) -> None:
        """The failure event at ``self.t`` (its victim, if it names one, in ``event_victim``)."""
        self.failures += 1
        model = self.failures_model
        model.record_failure(self.t)
        n_alive = len(self.alive_list)
        if model.names_victims:
            victim = self.event_victim
        else:
            victim = self.alive_list[min(int(self.uniform.next() * n_alive), n_alive - 1)]
        if self.sc.rack_share > 0 and self.uniform.next() < self.sc.rack_share:
            victims = [g for g in self.rack_members[self.rack[victim]] if self.is_alive[g]]
        else:
            victims = [victim]
        model.kill(victims)
        out = self.scheme.fail(victims)
        self.groups_failed += len(victims)
        if out.wipeout:
            self._restart(planned=False)
            return
        self.masked += 1
        for g in victims:
            self._kill(g)
        if self.repair_time is not None:
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
        self._log(TimelineEvent.MASKED_FAILURE)

    def on_repair(self, g: int) -> None:
        if self.is_alive[g]:  # pragma: no cover - a dead group is repaired once per epoch
            return
        self.scheme.rejoin([g])
        self.is_alive[g] = True
        self.pos[g] = len(self.alive_list)
        self.alive_list.append(g)
        self.rejoins += 1
        self.failures_model.revive(g, self.t)
        self._set_rate(len(self.alive_list) / self.sc.groups)
        self._update_period()
        self._evaluate_policy()
        self._log(TimelineEvent.REJOIN)

    def on_save_end(self) -> None:
        self.ledger.commit()
        self.ckpt = self.done
        self.checkpoints += 1
        self.ledger.checkpoint += self.T_s
        self.ckpt_ref = self.t
        self._log(TimelineEvent.CHECKPOINT)
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
        self.ledger.restart += self.T_r
        self.phase = _RUN
        self.ckpt_ref = self.t
        self.failures_model.restart_ends(self.t)
        self._set_rate(self.n_used / self.sc.groups)
        self._update_period()
        self._log(TimelineEvent.RESUME)
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
                self.event_victim = payload[1]
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
    try:
        seed = check_seed("seed", seed)
    except ValueError as exc:  # a negative seed is the wrong kind of value, as documented
        raise TypeError(str(exc)) from None
    sch = make_scheme(scenario, scheme, redundancy, layout, seed)
    wall0 = _time.perf_counter()
    run = _Run(scenario, sch, int(seed), timeline)
    horizon = scenario.horizon * scenario.t0
    run.run(horizon)
    completed = run.phase == _DONE
    if not completed and not run.truncated:
        run.t = horizon
    tl = np.array(run.timeline, dtype=TIMELINE_DTYPE) if timeline else None
    wall = run.t
    losses = run.ledger.losses()
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
        useful=run.ledger.useful,
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
        period=run.plan.static_period,
        endurable_failures=run.plan.mu,
        losses=losses,
        events=run.events,
        decision_seconds=sch.decision_seconds,
        sim_seconds=_time.perf_counter() - wall0,
        timeline=tl,
        scenario=scenario,
    )
