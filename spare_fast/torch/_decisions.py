"""Agreed membership changes turned into controller decisions, the same in every member.

Every member runs the same deterministic :class:`~spare_fast.controller.Controller` on the
same sequence of lighthouse quorums, so all reach the same decision without a coordinator.
The call history since the epoch began travels with a heal, so a replacement replays it.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable

import numpy as np

from spare_fast.controller import Controller, Status
from spare_fast.layout import Layout
from spare_fast.torch._rollback import StepState
from spare_fast.torch._types import EventRecord

__all__ = ["Decider", "format_step"]


class Decider:
    """The controller of one process, its call history and the events it decided.

    Parameters
    ----------
    layout : Layout
        The run's layout.
    group : int
        This process's group.
    """

    def __init__(self, layout: Layout, group: int) -> None:
        self.layout = layout
        self.me = group
        self.ctl = Controller(layout)
        self.history: list[tuple[str, list[int]]] = []  # controller calls since the epoch began
        self.events: list[EventRecord] = []

    @property
    def depth(self) -> int:
        """The controller's current depth."""
        return int(self.ctl.depth)

    def assignment(self) -> np.ndarray:
        """Which group computes each type under the current decision."""
        return np.asarray(self.ctl.assignment, dtype=np.int64)

    def uncovered(self, groups: Collection[int]) -> list[int]:
        """The shard types that none of ``groups`` holds at any layer (empty when the groups
        cover the layout)."""
        held = np.zeros(self.layout.n_types, dtype=bool)
        stacks = np.asarray(self.layout.stacks)
        held[stacks[np.asarray(sorted(groups), dtype=np.int64)].ravel()] = True
        return [int(t) for t in np.flatnonzero(~held)]

    def fail(
        self, dead: list[int], quorum_id: int, t0: float, cur: StepState | None, step: int
    ) -> EventRecord:
        """``dead`` died: decide, and move the step in flight's types that fell to the dead
        (``cur.comp`` is patched in place; the event's ``patch_computed`` names the moves)."""
        decision = self.ctl.fail(dead)
        self.history.append(("fail", dead))
        patch = tuple((int(t), int(g)) for t, g in np.asarray(decision.patch).reshape(-1, 2))
        wiped = decision.status != Status.OK
        done: list[tuple[int, int]] = []
        if cur is not None and not wiped:
            assignment = np.asarray(decision.assignment)
            for t in range(len(cur.comp)):
                if int(cur.comp[t]) in dead:
                    cur.comp[t] = int(assignment[t])
                    done.append((t, int(assignment[t])))
        event = EventRecord(
            quorum_id=int(quorum_id),
            dead=tuple(dead),
            status="WIPEOUT" if wiped else "OK",
            phase=int(decision.phase),
            depth=int(decision.depth),
            moves=int(decision.moves),
            patch=patch,
            patch_computed=tuple(done),
            step=step if cur is None else cur.step,
            seconds=time.perf_counter() - t0,
            decided_at=time.monotonic(),
        )
        self.events.append(event)
        if cur is not None:
            cur.events.append(event)
        return event

    def rejoin(self, new: list[int], quorum_id: int, t0: float, step: int) -> EventRecord:
        """``new`` rejoined at the boundary before ``step``: decide."""
        decision = self.ctl.rejoin(new)
        self.history.append(("rejoin", new))
        event = EventRecord(
            quorum_id=int(quorum_id),
            dead=(),
            status="OK" if decision.status == Status.OK else "WIPEOUT",
            phase=int(decision.phase),
            depth=int(decision.depth),
            moves=int(decision.moves),
            patch=(),
            patch_computed=(),
            step=step,
            seconds=time.perf_counter() - t0,
            decided_at=time.monotonic(),
        )
        self.events.append(event)
        return event

    def replay(self, history: list[tuple[str, list[int]]]) -> None:
        """Become the controller of a peer whose call history is ``history``."""
        self.ctl = Controller(self.layout)
        self.history = list(history)
        for kind, groups in self.history:
            (self.ctl.fail if kind == "fail" else self.ctl.rejoin)(groups)

    def restart(self) -> None:
        """Every group alive again (a restart from a checkpoint)."""
        self.ctl.restart()
        self.history = []


def format_step(cur: StepState, members: Iterable[int], loss: float, n_groups: int) -> str:
    """The lowest member's line for a committed step (and its events)."""
    members = tuple(members)
    line = (
        f"step {cur.step:3d}  depth {cur.depth}  alive {len(members)}/{n_groups}  loss {loss:.6f}"
    )
    for e in cur.events:
        patch = " ".join(f"{t}->g{g}" for t, g in e.patch_computed)
        line += (
            f"\n          event: groups {list(e.dead)} died -> {e.status} phase {e.phase} "
            f"depth {e.depth} moves {e.moves} patch [{patch}] ({e.seconds:.2f} s)"
        )
    return line
