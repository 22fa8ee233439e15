"""Fault-tolerance schemes as the simulator sees them: what a failure costs and when to restart.

Each scheme answers three questions for the engine: how many stack layers every alive group
computes per step (``multiplier``), what a failure of some groups does (masked with a recovery
cost, or a wipe-out that forces a global restart), and what a repaired group's rejoin does.
SPARe's answers come from the real :class:`spare_fast.Controller`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from spare_fast import theory
from spare_fast._validation import check_int
from spare_fast.layout import Layout, make_layout
from spare_fast.sim.scenario import Scenario

__all__ = [
    "DEFAULT_LAYOUT",
    "SCHEMES",
    "CheckpointScheme",
    "FailureOutcome",
    "ReplicationScheme",
    "Scheme",
    "SpareScheme",
    "default_redundancy",
    "make_scheme",
]

#: The scheme names :func:`spare_fast.sim.simulate` accepts.
SCHEMES = ("checkpoint", "replication", "spare")

#: Default SPARe layout kind.  Measured (``docs/guide/simulator.md``, 5 seeds,
#: N = 200/600/1000, r = 4..12): sidon is 0.3-1.3% ahead of random and both beat cyclic by
#: 7-10% at each N's best r; random exists for every (N, r) while a sidon layout needs
#: N >= r(r-1)+1 and can fail near that bound.
DEFAULT_LAYOUT = "random"


@dataclass(frozen=True)
class FailureOutcome:
    """What one failure event did.

    Attributes
    ----------
    wipeout : bool
        Some shard type lost every holder: the job needs a global restart.
    patch_layers : int
        Extra stack layers the busiest survivor computes in the current step (patch compute).
    control : float
        Seconds of decision and communicator shrink added to the current step.
    """

    wipeout: bool
    patch_layers: int = 0
    control: float = 0.0


class Scheme(Protocol):
    """What the engine asks of a fault-tolerance scheme.

    Attributes
    ----------
    name : str
        One of :data:`SCHEMES`.
    n_groups : int
        Groups the job uses (Rep+CKPT with idle leftovers: ``r * (N // r)``).
    redundancy : int
        r (1 for CKPT-only).
    sets : int
        M, the number of holder sets whose loss is a wipe-out, as in the wipe-out model
        ``P(K > x) = exp(-M (x/N)^r)``: every group for CKPT-only, the ``N // r`` replica sets
        for Rep+CKPT, the N shard types for SPARe.
    layout_kind : str
        The layout's name for reports ("none" for CKPT-only).
    decision_seconds : float
        Controller time measured so far (0 for schemes without a controller).
    """

    name: str
    n_groups: int
    redundancy: int
    sets: int
    layout_kind: str
    decision_seconds: float

    @property
    def multiplier(self) -> int:
        """Stack layers every alive group computes per step."""
        ...

    @property
    def stack_depth(self) -> int:
        """SPARe stack depth (1 for the others): what ``restart_depth`` compares with."""
        ...

    def endurable_failures(self) -> float:
        """Mean failures survived between restarts (closed form)."""
        ...

    def critical_groups(self) -> int:
        """Alive groups whose failure alone forces a restart."""
        ...

    def begin_step(self) -> None:
        """A new step starts (patch pricing is per step)."""
        ...

    def fail(self, groups: Sequence[int]) -> FailureOutcome:
        """These alive groups failed together."""
        ...

    def rejoin(self, groups: Sequence[int]) -> None:
        """These repaired groups are back."""
        ...

    def reset(self) -> None:
        """A global restart: every group back, depth 1."""
        ...


class CheckpointScheme:
    """CKPT-only: no redundancy, every failure is a global restart."""

    name = "checkpoint"

    def __init__(self, scenario: Scenario) -> None:
        self.n_groups = scenario.groups
        self.redundancy = 1
        self.sets = scenario.groups
        self.layout_kind = "none"
        self.decision_seconds = 0.0

    @property
    def multiplier(self) -> int:
        """Stack layers computed per step by every alive group."""
        return 1

    @property
    def stack_depth(self) -> int:
        """SPARe stack depth (1: no stacks)."""
        return 1

    def endurable_failures(self) -> float:
        """Mean failures between restarts: 1."""
        return 1.0

    def critical_groups(self) -> int:
        """Alive groups whose failure alone forces a restart: all of them."""
        return self.n_groups

    def begin_step(self) -> None:
        pass

    def fail(self, groups: Sequence[int]) -> FailureOutcome:
        return FailureOutcome(wipeout=True)

    def rejoin(self, groups: Sequence[int]) -> None:  # pragma: no cover - never masked
        raise RuntimeError("checkpoint scheme never has dead groups between restarts")

    def reset(self) -> None:
        pass


class ReplicationScheme:
    """Rep+CKPT: ``N // r`` replica sets of ``r`` groups holding the same shard.

    Every group computes r shard layers per step (the same global batch on N/r logical
    groups), a failure is masked while its set has a survivor (cost: communicator shrink), and
    a set losing all r replicas forces a global restart.
    """

    name = "replication"

    def __init__(self, scenario: Scenario, redundancy: int) -> None:
        r = int(redundancy)
        self.redundancy = r
        self.sets = scenario.groups // r
        self.n_groups = self.sets * r
        # rep_leftover="set": the groups mod r leftover groups form one smaller set (its own
        # index, self.sets); they hold the remaining shards, at most r layers each.
        self._set_sizes = [r] * self.sets
        left = scenario.groups - self.n_groups
        if scenario.rep_leftover == "set" and left > 0:
            self._set_sizes.append(left)
            self.n_groups = scenario.groups
        self.layout_kind = "replication"
        self._shrink = float(scenario.shrink_time)
        self._alive_in_set = list(self._set_sizes)
        self._single = self._set_sizes.count(1)  # sets down to their last replica
        self.decision_seconds = 0.0

    @property
    def multiplier(self) -> int:
        return self.redundancy

    @property
    def stack_depth(self) -> int:
        return 1

    def endurable_failures(self) -> float:
        """mu_rep(N, r), see :func:`spare_fast.theory.endurable_failures_replication`."""
        return float(
            theory.endurable_failures_replication(self.sets * self.redundancy, self.redundancy)
        )

    def begin_step(self) -> None:
        pass

    def fail(self, groups: Sequence[int]) -> FailureOutcome:
        r = self.redundancy
        alive = self._alive_in_set
        wiped = False
        for g in groups:
            s = g // r
            alive[s] -= 1
            if alive[s] == 1:
                self._single += 1
            elif alive[s] == 0:
                self._single -= 1
                wiped = True
        return FailureOutcome(wipeout=wiped, control=0.0 if wiped else self._shrink)

    def critical_groups(self) -> int:
        """Alive groups whose failure alone forces a restart: the last replica of a set."""
        return self._single

    def rejoin(self, groups: Sequence[int]) -> None:
        alive = self._alive_in_set
        for g in groups:
            s = g // self.redundancy
            alive[s] += 1
            if alive[s] == 2:
                self._single -= 1
            elif alive[s] == 1:  # pragma: no cover - a wiped set restarts the job instead
                self._single += 1

    def reset(self) -> None:
        self._alive_in_set = list(self._set_sizes)
        self._single = self._set_sizes.count(1)


class SpareScheme:
    """SPARe+CKPT: every decision comes from the real :class:`spare_fast.Controller`.

    Notes
    -----
    Patch compute: a step computes, on every alive group, its top layers at the step's
    starting depth plus the patch types it has taken on so far in this step (a depth change
    applies from the next step).  A failure loses the types that the failed groups computed in
    this step and that no alive group computes in it; each lost type is recomputed by its new
    provider (the controller's assignment after the decision), one layer each, and the step
    lasts as long as its busiest patching survivor: ``max`` over groups of the extra layers.
    What the step loses is read from the step's own work, not from the decision's patch rows:
    the controller may have moved a type off a group earlier in the step (along an augmenting
    path) while that group still computes it in the step in progress, and a type whose new
    provider already computes it costs nothing.
    The engine calls :meth:`begin_step` when a step starts; the step's starting layers are
    copied at its first event.
    """

    name = "spare"

    def __init__(self, scenario: Scenario, layout: Layout) -> None:
        import spare_fast

        self._ctl = spare_fast.Controller(layout)
        self._wipeout = spare_fast.Status.WIPEOUT
        self.layout = layout
        self.n_groups = layout.n_groups
        self.redundancy = layout.redundancy
        self.sets = layout.n_types
        self.layout_kind = layout.kind
        self._measured = scenario.controller_time is None
        self._control = 0.0 if self._measured else float(scenario.controller_time or 0.0)
        self._shrink = float(scenario.shrink_time)
        self.decision_seconds = 0.0
        # What the step in progress computes: top layers at its starting depth (copied at its
        # first event; None before that) and, per group, the patch types taken on since.
        self._step_top: np.ndarray | None = None
        self._step_extra: dict[int, set[int]] = {}
        self._holder_lists: list[list[int]] = np.asarray(layout.holders()).tolist()
        # Coverage bookkeeping for the expected-cost restart rule: the groups holding each
        # type (a controller reorders stacks but never changes what a group holds), how many
        # of them are alive, and for each alive group the number of types it alone still holds.
        # Kept only when the rule is on: O(r^2) Python work per failure, O(N r) memory.
        self._track = scenario.restart_policy == "expected_cost"
        if not self._track:
            return
        self._types_of: list[list[int]] = np.asarray(layout.stacks).tolist()
        self._holders: list[list[int]] = layout.holders().tolist()
        self._reset_coverage()

    def _reset_coverage(self) -> None:
        self._is_alive = [True] * self.n_groups
        self._n_holders = [len(h) for h in self._holders]
        self._sole = [0] * self.n_groups
        self._critical = 0
        for h in self._holders:
            if len(h) == 1:
                self._add_sole(h[0], 1)

    def _add_sole(self, g: int, delta: int) -> None:
        before = self._sole[g]
        self._sole[g] = before + delta
        self._critical += (self._sole[g] > 0) - (before > 0)

    def _alive_holder(self, t: int) -> int:
        for h in self._holders[t]:
            if self._is_alive[h]:
                return h
        raise AssertionError(f"type {t} has no alive holder")  # pragma: no cover

    def critical_groups(self) -> int:
        """Alive groups whose failure alone forces a restart: sole alive holders of a type.

        Needs ``restart_policy="expected_cost"`` in the scenario (the only user).
        """
        if not self._track:
            raise RuntimeError("coverage is tracked only with restart_policy='expected_cost'")
        return self._critical

    @property
    def multiplier(self) -> int:
        return int(self._ctl.depth)

    @property
    def stack_depth(self) -> int:
        return int(self._ctl.depth)

    def endurable_failures(self) -> float:
        """mu(N, r) = Gamma(1 + 1/r) N^(1 - 1/r)."""
        return float(theory.endurable_failures(self.n_groups, self.redundancy))

    def begin_step(self) -> None:
        """A new step starts: it computes the current stacks at the current depth."""
        self._step_top = None

    def _step_layers(self) -> np.ndarray:
        """The step's starting layers, copied at its first event (before the event applies)."""
        if self._step_top is None:
            # A contiguous copy, then a view: 3x faster than copying the strided columns.
            self._step_top = np.array(self._ctl.stacks)[:, : int(self._ctl.depth)]
            self._step_extra = {}
        return self._step_top

    def fail(self, groups: Sequence[int]) -> FailureOutcome:
        ctl = self._ctl
        top = self._step_layers()
        d = ctl.fail(np.array(groups, dtype=np.int32))
        self.decision_seconds += float(d.seconds)
        if d.status == self._wipeout:
            return FailureOutcome(wipeout=True)
        for g in groups if self._track else ():
            self._add_sole(g, -self._sole[g])
            self._is_alive[g] = False
            for t in self._types_of[g]:
                self._n_holders[t] -= 1
                if self._n_holders[t] == 1:
                    self._add_sole(self._alive_holder(t), 1)
        lost = self._lost_types(groups, top)
        layers = 0
        if lost.size:
            extra = self._step_extra
            load: dict[int, int] = {}
            for t, p in zip(lost.tolist(), np.asarray(ctl.assignment)[lost].tolist(), strict=True):
                extra.setdefault(p, set()).add(t)
                load[p] = load.get(p, 0) + 1
            layers = max(load.values())
        control = (float(d.seconds) if self._measured else self._control) + self._shrink
        return FailureOutcome(wipeout=False, patch_layers=layers, control=control)

    def _lost_types(self, groups: Sequence[int], top: np.ndarray) -> np.ndarray:
        """Types the failed groups computed in this step that no alive group computes in it.

        Call after the controller has marked ``groups`` dead; drops their taken-on patches.
        """
        extra = self._step_extra
        done: set[int] = set()
        for g in groups:
            done.update(int(t) for t in top[g] if t >= 0)
            done.update(extra.pop(g, ()))
        if not done:
            return np.empty(0, dtype=np.int64)
        # A failure touches a few types: plain Python over their r holders costs less than
        # the dozen numpy calls a vectorised check needs.
        alive = self._ctl.alive
        holders_of = self._holder_lists
        lost = []
        for t in sorted(done):
            live = [h for h in holders_of[t] if alive[h]]
            if not any(t in top[h].tolist() for h in live) and not any(
                t in extra.get(h, ()) for h in live
            ):
                lost.append(t)
        return np.array(lost, dtype=np.int64)

    def rejoin(self, groups: Sequence[int]) -> None:
        top = self._step_layers()
        d = self._ctl.rejoin(np.array(groups, dtype=np.int32))
        self.decision_seconds += float(d.seconds)
        top[list(groups)] = -1  # back mid-step: computes nothing in the step in progress
        for g in groups:
            self._step_extra.pop(g, None)
        for g in groups if self._track else ():
            for t in self._types_of[g]:
                if self._n_holders[t] == 1:
                    self._add_sole(self._alive_holder(t), -1)
                self._n_holders[t] += 1
            self._is_alive[g] = True

    def reset(self) -> None:
        self._step_top = None
        d = self._ctl.restart()
        self.decision_seconds += float(d.seconds)
        if self._track:
            self._reset_coverage()


def default_redundancy(groups: int) -> int:
    """The paper's optimal-redundancy rule r* = floor(log2 N + 0.833), capped at N.

    :func:`spare_fast.theory.optimal_redundancy` for one N.

    Examples
    --------
    >>> default_redundancy(600)
    10
    """
    return int(theory.optimal_redundancy(groups))


def make_scheme(
    scenario: Scenario,
    scheme: str,
    redundancy: int | None,
    layout: Layout | str | None,
    seed: int = 0,
) -> Scheme:
    """The scheme :func:`spare_fast.sim.simulate` runs, its arguments checked.

    ``redundancy`` defaults to 3 for replication and :func:`default_redundancy` for SPARe;
    ``layout`` (SPARe only) is a :class:`~spare_fast.Layout` or a name for
    :func:`spare_fast.layout.make_layout` (default :data:`DEFAULT_LAYOUT`).
    """
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise ValueError(f"scheme = {scheme!r} is not one of {', '.join(map(repr, SCHEMES))}")
    if redundancy is not None:
        redundancy = check_int("redundancy", redundancy, lo=1, hi=scenario.groups)
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
