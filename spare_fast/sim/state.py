"""The state of one simulated run, in the parts the engine (:mod:`spare_fast.sim.engine`) hands
around: what a step costs, the jitter draws, the groups still alive, the step clock, the step in
progress and the run's counts.  The time buckets are :class:`~spare_fast.sim.ledger.Ledger`.

Each part is a plain record (a slotted dataclass) with the few operations that keep it
consistent; the engine decides when they happen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_fast.sim.scenario import Scenario

__all__ = ["AliveGroups", "Counts", "CurrentStep", "JitterDraws", "StepClock", "StepCosts"]


@dataclass(slots=True, frozen=True)
class StepCosts:
    """What one step and the recovery steps cost, in seconds (fixed for the run).

    A step at stack depth ``S`` computes ``S * compute * (1 + jitter * u)`` (``u`` its jitter
    draw in [-1, 1]) and then all-reduces for ``allreduce``.
    """

    compute: float  #: one stack layer's compute per step
    allreduce: float  #: the all-reduce per step
    jitter: float  #: the relative half-width of the compute jitter
    restart: float  #: one global restart (T_r)
    save: float  #: one checkpoint save (T_s)

    @classmethod
    def of(cls, sc: Scenario) -> StepCosts:
        return cls(
            compute=float(sc.compute),
            allreduce=sc.allreduce_time,
            jitter=float(sc.jitter),
            restart=float(sc.restart),
            save=float(sc.save),
        )


class JitterDraws:
    """The jitter draw ``u`` of every executed step, with prefix sums for whole stretches.

    ``u[k]`` is the draw of the k-th executed step; ``prefix[i]`` is ``u[0] + ... + u[i-1]``,
    so the jitter of steps ``k .. k+n-1`` is ``prefix[k+n] - prefix[k]`` (one subtraction for a
    failure-free stretch).  With ``slowest_of_alive`` a step waits for the slowest alive group:
    its draw is the maximum of one uniform per alive group (:meth:`slowest`), and the draws are
    also kept as an array for the vectorised stretch.
    """

    __slots__ = ("_rng", "amplitude", "slowest_of_alive", "u", "prefix", "array")

    def __init__(self, rng: np.random.Generator, amplitude: float, slowest_of_alive: bool) -> None:
        self._rng = rng
        self.amplitude = amplitude
        self.slowest_of_alive = slowest_of_alive
        self.u: list[float] = []
        self.prefix = np.zeros(1)
        self.array = np.zeros(0)

    def ensure(self, upto: int) -> None:
        """Make sure ``u[0 .. upto-1]`` and ``prefix[0 .. upto]`` exist (drawn in blocks)."""
        have = len(self.u)
        if upto <= have:
            return
        n = max(upto - have, have, 1024)
        if self.amplitude > 0:
            new = self._rng.uniform(-1.0, 1.0, n)
        else:
            new = np.zeros(n)
        self.u.extend(new.tolist())
        if self.slowest_of_alive:
            self.array = np.concatenate([self.array, new])
        self.prefix = np.concatenate([self.prefix, self.prefix[-1] + np.cumsum(new)])

    @staticmethod
    def slowest(u: Any, n_alive: int) -> Any:
        """The slowest of ``n_alive`` groups from one draw ``u`` (a float or an array):
        ``2 w^(1/n) - 1`` with ``w = (u + 1) / 2`` is the maximum of n independent uniforms on
        [-1, 1] (its CDF is ``((x + 1) / 2)^n``)."""
        n = max(n_alive, 1)
        return 2.0 * ((u + 1.0) * 0.5) ** (1.0 / n) - 1.0


class AliveGroups:
    """The job's groups that are alive, for O(1) kills, rejoins and uniform picks.

    ``members`` lists the alive groups in no particular order and ``position[g]`` is g's index
    in it, so a kill swaps the last member into g's place.  ``alive[g]`` is the membership test.
    ``rack_of[g]`` and ``rack_members[k]`` are the failure domains (fixed).

    Examples
    --------
    >>> from spare_fast.sim import Scenario
    >>> groups = AliveGroups(Scenario(groups=4, racks=2), 4)
    >>> groups.kill(1); groups.members, len(groups)
    ([0, 3, 2], 3)
    >>> groups.alive_rack_mates(0), groups.alive_rack_mates(3)
    ([0], [2, 3])
    >>> groups.revive(1); groups.members
    [0, 3, 2, 1]
    """

    __slots__ = ("size", "members", "position", "alive", "rack_of", "rack_members")

    def __init__(self, sc: Scenario, size: int) -> None:
        self.size = size  #: the groups the scheme uses (Rep+CKPT may leave some idle)
        self.members = list(range(size))
        self.position = list(range(size))
        self.alive = [True] * size
        self.rack_of = [sc.rack_of(g) for g in range(size)]
        self.rack_members: list[list[int]] = [[] for _ in range(sc.racks)]
        for g in range(size):
            self.rack_members[self.rack_of[g]].append(g)

    def __len__(self) -> int:
        return len(self.members)

    def kill(self, g: int) -> None:
        self.alive[g] = False
        i = self.position[g]
        last = self.members.pop()
        if last != g:
            self.members[i] = last
            self.position[last] = i

    def revive(self, g: int) -> None:
        self.alive[g] = True
        self.position[g] = len(self.members)
        self.members.append(g)

    def revive_all(self) -> None:
        """A restart brings every group back (in the starting order)."""
        if len(self.members) != self.size:
            n = self.size
            self.members = list(range(n))
            self.position = list(range(n))
            self.alive = [True] * n

    def alive_rack_mates(self, g: int) -> list[int]:
        """The alive groups in g's rack, g included when alive."""
        alive = self.alive
        return [h for h in self.rack_members[self.rack_of[g]] if alive[h]]


@dataclass(slots=True)
class StepClock:
    """The simulated time and how far training has got.

    ``done`` counts the steps since the start of training that are done (a restart sets it back
    to ``checkpointed``); ``executed`` counts every step ever run, reworked ones included (it
    indexes the jitter draws); ``layers`` sums their stack depths.
    """

    steps: int  #: the steps training needs
    now: float = 0.0  #: the simulated time, seconds
    done: int = 0
    checkpointed: int = 0  #: the steps the last committed checkpoint holds
    last_save_end: float = 0.0  #: when the last save (or restart) ended: the period runs from it
    executed: int = 0
    layers: int = 0


@dataclass(slots=True)
class CurrentStep:
    """The step in progress (``running``), or the boundary training resumes from."""

    running: bool = False
    start: float = 0.0
    compute_end: float = 0.0  #: its all-reduce starts here
    end: float = 0.0
    depth: int = 1  #: the stack depth it runs at, fixed at its start
    draw: float = 0.0  #: its jitter draw u (the slowest group's with sync jitter)
    allreduce: float = 0.0  #: its all-reduce time, over the groups alive at its start
    recovery: float = 0.0  #: seconds masked failures added to it (decision, shrink, patch)


@dataclass(slots=True)
class Counts:
    """What happened in the run (the :class:`~spare_fast.sim.Report` counts)."""

    events: int = 0  #: queue events handled (stale ones not counted)
    failures: int = 0  #: failure events
    groups_failed: int = 0  #: groups they took down (a rack failure takes several)
    masked: int = 0  #: failures the scheme absorbed without a restart
    restarts: int = 0  #: global restarts, planned ones included
    planned_restarts: int = 0
    rejoins: int = 0
    checkpoints: int = 0
    lost_saves: int = 0  #: saves a restart cut short
