"""The discrete-event engine: one pretraining run under failures.

This module is the event loop (:class:`EventQueue`, :class:`Phase`, :class:`EventKind`,
``_Run``, :func:`simulate`); the run's state is in named parts (:mod:`spare_fast.sim.state`:
the step costs, the jitter draws, the alive groups, the step clock, the step in progress, the
counts); when failures come is :mod:`spare_fast.sim.failures`, what they cost each scheme
:mod:`spare_fast.sim.schemes`, when to checkpoint or restart on purpose
:mod:`spare_fast.sim.policy`, and where the time goes :mod:`spare_fast.sim.ledger`.  The model
is described in ``docs/model.md``, "The simulator".

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
from collections.abc import Callable
from enum import IntEnum
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
from spare_fast.sim.state import AliveGroups, Counts, CurrentStep, JitterDraws, StepClock, StepCosts

# Re-exported from here as before the split: the layouts and the scheme defaults.
__all__ = [
    "DEFAULT_LAYOUT",
    "EventKind",
    "EventQueue",
    "Phase",
    "TimelineEvent",
    "new_run",
    "run_report",
    "default_redundancy",
    "domain_aware_layout",
    "make_layout",
    "simulate",
]


class Phase(IntEnum):
    """What the job is doing between two events."""

    RUN = 0  #: training steps
    SAVE = 1  #: a checkpoint save is in progress
    RESTART = 2  #: a global restart is in progress
    DONE = 3  #: every step is done


class EventKind(IntEnum):
    """The kinds of queue event, in tie-break priority: at equal times a restart or a save ends
    before a repair, and a repair before a failure."""

    RESTART_END = 0
    SAVE_END = 1
    REPAIR = 2
    FAILURE = 3


# Module constants for the event loop (a global lookup, not an enum attribute, per use).
_RUN, _SAVE, _RESTART, _DONE = Phase.RUN, Phase.SAVE, Phase.RESTART, Phase.DONE
_RESTART_END, _SAVE_END = EventKind.RESTART_END, EventKind.SAVE_END
_REPAIR, _FAILURE = EventKind.REPAIR, EventKind.FAILURE

#: Prices one step's all-reduce over the alive groups, in seconds (another engine's network
#: model; the native engine uses the scenario's constant).
AllreducePricer = Callable[[AliveGroups], float]

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
    """One simulation: the event loop over the run's state; see the module docstring.

    The state is in named parts (:mod:`spare_fast.sim.state`): ``costs`` (what a step, a save
    and a restart cost), ``jitter`` (the per-step draws), ``alive`` (the alive groups),
    ``clock`` (the time and the steps done), ``step`` (the step in progress), ``ledger`` (where
    the time went) and ``counts``; the failure process is ``failure_model``, the checkpoint
    period and restart rules ``plan``, and the scheme's own state is in ``scheme``.

    Every queue event carries a stamp: a failure the version of the failure schedule it was
    drawn for, the others the restart epoch they belong to.  An event whose stamp is no longer
    current (the schedule was redrawn, or a restart voided it) is dropped unseen.  The handler
    of each kind is ``_handlers[kind]``, called with the event's argument.
    """

    #: Advance failure-free stretches arithmetically (tests turn this off to compare against
    #: the one-step-at-a-time path).
    batching = True

    def __init__(
        self,
        sc: Scenario,
        scheme: Scheme,
        seed: int,
        record: bool,
        allreduce_of: AllreducePricer | None = None,
        wait_until: Callable[[float], None] | None = None,
    ) -> None:
        self.sc = sc
        self.scheme = scheme
        self.seed = int(seed)
        self.record = record
        ss = np.random.SeedSequence(int(seed))
        fail_ss, victim_ss, jitter_ss, repair_ss = ss.spawn(4)
        g_fail = np.random.default_rng(fail_ss)
        g_vic = np.random.default_rng(victim_ss)
        g_rep = np.random.default_rng(repair_ss)
        # Uniforms on [0, 1): the victim of a failure that names none, and whether it is a
        # rack failure.
        self.victim_draws = Draws(g_vic.random)
        self.repair_times: Draws | None = None
        if sc.repair is not None:
            sig = float(sc.repair_sigma)
            mu_log = math.log(float(sc.repair)) - 0.5 * sig * sig  # lognormal with that mean
            self.repair_times = Draws(lambda n: g_rep.lognormal(mu_log, sig, n))
        self.costs = StepCosts.of(sc)
        self.jitter = JitterDraws(
            np.random.default_rng(jitter_ss), self.costs.jitter, bool(sc.sync_jitter)
        )
        self.alive = AliveGroups(sc, scheme.n_groups)
        # The all-reduce of the next step over the alive groups: the scenario's constant, or
        # what ``allreduce_of`` says for the alive set (re-priced when the set changes).
        self.allreduce_of = allreduce_of
        self.allreduce_now = self.costs.allreduce
        # Called with each event's time before it is handled: another engine's clock (the
        # SimGrid engine's controller actor sleeps until then).
        self.wait_until = wait_until
        self._reprice()
        self.clock = StepClock(steps=int(sc.steps))
        self.step = CurrentStep()
        self.ledger = Ledger()
        self.counts = Counts()
        self.queue = EventQueue()
        # When failures come and whom they hit (sim/failures.py): the operational clock of the
        # renewal model or the groups' lifetimes.
        self.failure_model: FailureModel = failure_model(sc, g_fail, self.alive.size)
        # Checkpoint period and restart rules (sim/policy.py).
        self.plan = CheckpointPlan(sc, scheme)
        self.phase = _RUN
        self.save_start = 0.0
        self.restart_after_save = False  # the save in progress ends in a planned restart
        # The current stamp per event kind: the restart epoch, and for failures the version of
        # the failure schedule.
        self.epoch = 0
        self.failure_version = 0
        self.stamps = [0, 0, 0, 0]
        self._handlers: tuple[Callable[[Any], None], ...] = (
            self.on_restart_end,  # EventKind.RESTART_END
            self.on_save_end,  # EventKind.SAVE_END
            self.on_repair,  # EventKind.REPAIR
            self.on_failure,  # EventKind.FAILURE
        )
        self.truncated = False
        self.timeline: list[tuple[float, TimelineEvent, int, int, int]] = []
        self._schedule_failure()

    def _reprice(self) -> None:
        """The alive set changed: price the next steps' all-reduce over it."""
        if self.allreduce_of is not None:
            self.allreduce_now = float(self.allreduce_of(self.alive))

    # -- failure clock ---------------------------------------------------------------------
    @property
    def rate(self) -> float:
        """The share of the job's groups alive (0 during a restart): the failure clock's rate."""
        return self.failure_model.rate

    def _set_rate(self, rate: float) -> None:
        self.failure_model.set_rate(self.clock.now, rate)
        self._schedule_failure()

    def _schedule_failure(self) -> None:
        """Draw the next failure afresh; any failure scheduled before is stale from now on."""
        self.failure_version += 1
        self.stamps[_FAILURE] = self.failure_version
        if self.failure_model.rate > 0:
            when, victim = self.failure_model.next_failure(self.clock.now, len(self.alive.members))
            if math.isfinite(when):
                self.queue.push(when, _FAILURE, (self.failure_version, victim))

    def _new_epoch(self) -> None:
        """A restart: the repairs, saves and restart ends scheduled before it are stale."""
        self.epoch += 1
        stamps = self.stamps
        stamps[_RESTART_END] = stamps[_SAVE_END] = stamps[_REPAIR] = self.epoch

    # -- steps -----------------------------------------------------------------------------
    def _start_step(self) -> None:
        clock, costs, step = self.clock, self.costs, self.step
        k = clock.executed
        self.jitter.ensure(k + 1)
        S = self.scheme.multiplier
        u = self.jitter.u[k]
        if self.jitter.slowest_of_alive:
            u = JitterDraws.slowest(u, len(self.alive.members))
        step.depth = S
        step.draw = u
        step.start = clock.now
        step.compute_end = clock.now + S * costs.compute * (1.0 + costs.jitter * u)
        step.end = step.compute_end + self.allreduce_now
        step.allreduce = self.allreduce_now
        step.recovery = 0.0
        step.running = True
        self.scheme.begin_step()

    def _finish_step(self) -> None:
        clock, c, a, step = self.clock, self.costs.compute, self.costs.allreduce, self.step
        S = step.depth
        total = step.end - step.start
        base = S * c + a
        self.ledger.book(c + a, (S - 1) * c, total - step.recovery - base, step.recovery)
        clock.now = step.end
        step.running = False
        clock.done += 1
        clock.executed += 1
        clock.layers += S

    def _batch(self, t_limit: float) -> int:
        """Complete, arithmetically, the whole steps after the clock's time that end by
        ``t_limit``, stopping at the first milestone (last step or checkpoint due).  Returns
        the count."""
        clock, costs = self.clock, self.costs
        n_done = clock.steps - clock.done
        if n_done <= 0:
            return 0
        S = self.scheme.multiplier
        c, a, j = costs.compute, self.allreduce_now, costs.jitter
        d = S * c + a
        span = t_limit - clock.now
        # The time until a checkpoint is due.
        gap = clock.last_save_end + self.plan.period - costs.save - clock.now
        d_min = S * c * (1.0 - j) + a
        n_hi = n_done
        if math.isfinite(span):
            n_hi = min(n_hi, int(span / d_min) + 1)
        if math.isfinite(gap):
            n_hi = min(n_hi, max(int(gap / d_min) + 1, 1))
        if n_hi <= 0:
            return 0
        k = clock.executed
        jitter = self.jitter
        jitter.ensure(k + n_hi)
        if n_hi <= 16 and not jitter.slowest_of_alive:
            return self._batch_scalar(n_hi, S, span, gap)
        ns = np.arange(1, n_hi + 1, dtype=np.float64)
        if j > 0 and jitter.slowest_of_alive:
            slowest = JitterDraws.slowest(jitter.array[k : k + n_hi], len(self.alive.members))
            T = ns * d + (S * c * j) * np.cumsum(slowest)
        elif j > 0:
            T = ns * d + (S * c * j) * (jitter.prefix[k + 1 : k + n_hi + 1] - jitter.prefix[k])
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
        c, a, j = self.costs.compute, self.allreduce_now, self.costs.jitter
        d = S * c + a
        scj = S * c * j
        P = self.jitter.prefix
        k = self.clock.executed
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
        """Book ``n`` failure-free steps at depth ``S`` that took ``tot`` seconds in all.

        Useful work is priced at the failure-free all-reduce (``costs.allreduce``); where the
        alive set's all-reduce differs, the difference is in the jitter bucket.
        """
        clock, c, a = self.clock, self.costs.compute, self.costs.allreduce
        d = S * c + a
        self.ledger.book(n * (c + a), n * (S - 1) * c, tot - n * d)
        clock.now = clock.now + tot
        clock.done += n
        clock.executed += n
        clock.layers += n * S
        return n

    def _checkpoint_due(self) -> bool:
        # At least one new step: with save = 0 the optimal period is 0 and would otherwise
        # checkpoint the same step forever.
        clock = self.clock
        return (
            clock.done > clock.checkpointed
            and clock.now - clock.last_save_end >= self.plan.period - self.costs.save
        )

    def _boundary(self, t_limit: float) -> None:
        """At a step boundary (the clock's time), run whole steps until ``t_limit`` or a
        milestone."""
        clock, step = self.clock, self.step
        while True:
            if clock.done >= clock.steps:
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
            if step.end > t_limit:
                return
            self._finish_step()

    def advance(self, t_limit: float) -> None:
        """Run training (phase RUN) up to ``t_limit``."""
        if self.phase != _RUN:
            return
        if self.step.running:
            if self.step.end > t_limit:
                return
            self._finish_step()
        self._boundary(t_limit)

    # -- checkpoints, restarts, end ---------------------------------------------------------
    def _start_save(self, restart_after: bool) -> None:
        now = self.clock.now
        self.phase = _SAVE
        self.save_start = now
        self.restart_after_save = restart_after
        self.queue.push(now + self.costs.save, _SAVE_END, (self.epoch, None))

    def _finish(self) -> None:
        self.ledger.commit()
        self.phase = _DONE
        self._log(TimelineEvent.DONE)

    def _restart(self, planned: bool) -> None:
        led, clock, counts = self.ledger, self.clock, self.counts
        if self.phase == _RUN and self.step.running:
            led.rework += clock.now - self.step.start
        elif self.phase == _SAVE:
            led.checkpoint += clock.now - self.save_start
            counts.lost_saves += 1
            self.restart_after_save = False  # a wipe-out pre-empted the planned restart
        led.lose_pending()
        clock.done = clock.checkpointed
        counts.restarts += 1
        counts.planned_restarts += int(planned)
        self.plan.want_restart = False
        self._new_epoch()
        self.scheme.reset()
        self.alive.revive_all()
        self._reprice()
        self.phase = _RESTART
        self.failure_model.restart_begins(clock.now)
        self._set_rate(0.0)
        self.queue.push(clock.now + self.costs.restart, _RESTART_END, (self.epoch, None))
        self._log(TimelineEvent.RESTART)

    def _log(self, event: TimelineEvent) -> None:
        if self.record:
            self.timeline.append(
                (
                    self.clock.now,
                    event,
                    self.clock.done,
                    self.scheme.multiplier,
                    len(self.alive.members),
                )
            )

    def _time_for_failures(self, rem: float) -> float:
        """Expected wall time, from now, until ``rem`` more failures (seconds)."""
        return self.failure_model.time_for_failures(
            self.clock.now, rem, len(self.alive.members), self.phase == _RESTART
        )

    def _update_period(self) -> None:
        self.plan.update_period(self.alive.size - len(self.alive.members), self._time_for_failures)

    def _evaluate_policy(self) -> None:
        """The expected-cost restart rule (:meth:`CheckpointPlan.evaluate`) at this state."""
        clock = self.clock
        self.plan.evaluate(
            clock.now,
            clock.done,
            clock.checkpointed,
            len(self.alive.members),
            self._time_for_failures,
        )

    # -- event handlers (one per EventKind) ---------------------------------------------------
    def on_failure(self, named: int) -> None:
        """A failure at the clock's time; ``named`` is its victim when the model names one."""
        counts, alive, now = self.counts, self.alive, self.clock.now
        counts.failures += 1
        model = self.failure_model
        model.record_failure(now)
        n_alive = len(alive.members)
        if model.names_victims:
            victim = named
        else:
            victim = alive.members[min(int(self.victim_draws.next() * n_alive), n_alive - 1)]
        if self.sc.rack_share > 0 and self.victim_draws.next() < self.sc.rack_share:
            victims = alive.alive_rack_mates(victim)
        else:
            victims = [victim]
        model.kill(victims)
        out = self.scheme.fail(victims)
        counts.groups_failed += len(victims)
        if out.wipeout:
            self._restart(planned=False)
            return
        counts.masked += 1
        for g in victims:
            alive.kill(g)
        self._reprice()
        if self.repair_times is not None:
            for g in victims:
                self.queue.push(now + self.repair_times.next(), _REPAIR, (self.epoch, g))
        step = self.step
        if self.phase == _RUN and step.running:
            c, j = self.costs.compute, self.costs.jitter
            extra = out.control + out.patch_layers * c * (1.0 + j * step.draw)
            if now < step.compute_end:
                step.compute_end += extra
                step.end += extra
                step.recovery += extra
                if self.allreduce_now != step.allreduce:  # the all-reduce runs without them
                    step.end += self.allreduce_now - step.allreduce
                    step.allreduce = self.allreduce_now
            else:  # the all-reduce in flight is lost: patch, then rerun it
                new_end = now + extra + self.allreduce_now
                step.recovery += new_end - step.end
                step.compute_end = now + extra
                step.end = new_end
        self._set_rate(len(alive.members) / self.sc.groups)
        self._update_period()
        self._evaluate_policy()
        self._log(TimelineEvent.MASKED_FAILURE)

    def on_repair(self, g: int) -> None:
        """Group ``g`` is back from repair and rejoins the job."""
        if self.alive.alive[g]:  # pragma: no cover - a dead group is repaired once per epoch
            return
        self.scheme.rejoin([g])
        self.alive.revive(g)
        self._reprice()
        self.counts.rejoins += 1
        self.failure_model.revive(g, self.clock.now)
        self._set_rate(len(self.alive.members) / self.sc.groups)
        self._update_period()
        self._evaluate_policy()
        self._log(TimelineEvent.REJOIN)

    def on_save_end(self, _arg: None = None) -> None:
        """A checkpoint save ends: the steps since the last one are committed."""
        clock = self.clock
        self.ledger.commit()
        clock.checkpointed = clock.done
        self.counts.checkpoints += 1
        self.ledger.checkpoint += self.costs.save
        clock.last_save_end = clock.now
        self._log(TimelineEvent.CHECKPOINT)
        if self.restart_after_save:
            self.phase = _RUN  # restart from a clean boundary: nothing to rework
            self.step.start = clock.now
            self.restart_after_save = False
            self._restart(planned=True)
            return
        self._update_period()
        self.phase = _RUN
        self._evaluate_policy()
        self._boundary(self.queue.peek_time())

    def on_restart_end(self, _arg: None = None) -> None:
        """A global restart ends: every group is back and training resumes."""
        clock = self.clock
        self.ledger.restart += self.costs.restart
        self.phase = _RUN
        clock.last_save_end = clock.now
        self.failure_model.restart_ends(clock.now)
        self._set_rate(self.alive.size / self.sc.groups)
        self._update_period()
        self._log(TimelineEvent.RESUME)
        self.step.running = False

    def run(self, horizon: float) -> None:
        """Train and handle events in time order until the last step or ``horizon``."""
        q, clock, counts = self.queue, self.clock, self.counts
        stamps, handlers = self.stamps, self._handlers
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
            time_, kind, _seq, (stamp, arg) = q.pop()
            if stamp != stamps[kind]:  # stale: a redrawn failure, or voided by a restart
                continue
            if self.wait_until is not None:
                self.wait_until(time_)
            clock.now = time_
            counts.events += 1
            if counts.events > MAX_EVENTS:
                self.truncated = True
                return
            handlers[kind](arg)


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
    run = new_run(
        scenario, scheme, redundancy=redundancy, layout=layout, seed=seed, timeline=timeline
    )
    wall0 = _time.perf_counter()
    run.run(scenario.horizon * scenario.t0)
    return run_report(run, _time.perf_counter() - wall0)


def new_run(
    scenario: Scenario,
    scheme: str,
    *,
    redundancy: int | None = None,
    layout: Layout | str | None = None,
    seed: int = 0,
    timeline: bool = True,
    allreduce_of: AllreducePricer | None = None,
    wait_until: Callable[[float], None] | None = None,
) -> _Run:
    """The run :func:`simulate` plays, before its first event: the arguments checked, the
    scheme built and the failure, victim, jitter and repair streams seeded.

    Another engine that plays the same run on its own clock (:mod:`spare_fast.sim.simgrid`)
    gets its decision rules from here: ``allreduce_of`` prices a step's all-reduce over the
    alive groups (called whenever they change), and ``wait_until`` is called with each event's
    time before the event is handled.  Call ``run.run(horizon)``, then :func:`run_report`.
    Arguments and errors as :func:`simulate`.
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    try:
        seed = check_seed("seed", seed)
    except ValueError as exc:  # a negative seed is the wrong kind of value, as documented
        raise TypeError(str(exc)) from None
    sch = make_scheme(scenario, scheme, redundancy, layout, seed)
    return _Run(scenario, sch, int(seed), timeline, allreduce_of, wait_until)


def run_report(run: _Run, sim_seconds: float) -> Report:
    """The :class:`Report` of a run that :meth:`_Run.run` has played to its end or horizon.

    ``sim_seconds`` is the host time the run took (the report's ``sim_seconds``).
    """
    scenario, sch = run.sc, run.scheme
    horizon = scenario.horizon * scenario.t0
    completed = run.phase == _DONE
    clock, counts = run.clock, run.counts
    if not completed and not run.truncated:
        clock.now = horizon
    tl = np.array(run.timeline, dtype=TIMELINE_DTYPE) if run.record else None
    wall = clock.now
    losses = run.ledger.losses()
    down = losses["restart"] + losses["rework"] + losses["checkpoint"]
    return Report(
        scheme=sch.name,
        redundancy=sch.redundancy,
        layout=sch.layout_kind,
        seed=run.seed,
        groups=scenario.groups,
        completed=completed,
        time_to_train=wall if completed else math.inf,
        t0=scenario.t0,
        wall_clock=wall,
        useful=run.ledger.useful,
        availability=(1.0 - down / wall) if wall > 0 else 1.0,
        restarts=counts.restarts,
        planned_restarts=counts.planned_restarts,
        failures=counts.failures,
        groups_failed=counts.groups_failed,
        masked_failures=counts.masked,
        rejoins=counts.rejoins,
        checkpoints=counts.checkpoints,
        lost_saves=counts.lost_saves,
        mean_depth=clock.layers / max(clock.executed, 1),
        progress=(clock.steps if completed else clock.checkpointed) / clock.steps,
        executed_steps=clock.executed,
        period=run.plan.static_period,
        endurable_failures=run.plan.mu,
        losses=losses,
        events=counts.events,
        decision_seconds=sch.decision_seconds,
        sim_seconds=sim_seconds,
        timeline=tl,
        scenario=scenario,
    )
