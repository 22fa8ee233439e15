"""Recovery: an agreed quorum turned into a rollback, controller events, patch computes and
a new process group (with a heal when a member lacks the state).

:class:`Recovery` acts on its :class:`~spare_fast.torch.SpareGroup`'s step state (the
committed count, the step in flight and the last step's snapshot) through the group's
collaborators: the membership asks the lighthouse, the decider runs the controller, the
type sums compute the patch types, the collectives are rebuilt.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from spare_fast.torch._compute import ComputeFn
from spare_fast.torch._epochs import mark_wiped, run_epoch
from spare_fast.torch._errors import Excluded, ProtocolError, Unneeded, WipeOutError
from spare_fast.torch._healer import HealState
from spare_fast.torch._identity import of_group
from spare_fast.torch._types import Phase

__all__ = ["Recovery"]


class Recovery:
    """Failure masking, admission of replacements and the run's final agreement.

    Parameters
    ----------
    group : SpareGroup
        The group whose state it changes.
    """

    def __init__(self, group: Any) -> None:
        self.g = group

    def enter(self, checkpoint: str | None, how: str) -> None:
        """Join the run: form the epoch with every group, or rejoin it under way.

        ``how``: ``"any"`` (as found), ``"form"`` (a launcher's process: :class:`Unneeded` if
        the epoch formed without it) or ``"rejoin"`` (a launcher's replacement).
        """
        g = self.g
        if how == "rejoin":
            self.rejoin()
            return
        if how == "any":  # the user's own process: after a wipe-out, the next epoch
            g.membership.epoch = run_epoch(g.membership.store)
        if checkpoint is not None:
            g.stepper.load_checkpoint(checkpoint)
        if how == "any" and g.membership.formed():
            self.rejoin()
            return
        try:
            self.join_all()
        except Unneeded:
            if how != "any":
                raise
            self.rejoin()
            return
        if g.committed == 0 and checkpoint is None and g.membership.lead():
            g.stepper.save_checkpoint()

    def join_all(self) -> None:
        """Start of an epoch: agree a quorum of the groups' current processes (every group,
        or after the join timeout the groups present, when they hold every shard type: the
        missing then count as failed at step 0, decided before the first step)."""
        self.g._report(Phase.JOIN)
        self.g.membership.identity = of_group(self.g, full=True)
        t0 = time.perf_counter()
        quorum, valid = self.g.membership.form(self.g.decider.uncovered)
        missing = sorted(set(range(self.g.layout.n_groups)) - set(valid))
        try:
            needs = self.g.membership.adopt(quorum, valid)
            if missing:
                self.fail(missing, quorum.quorum_id, t0, None)
                self.g._write({"kind": "absent", "groups": missing, "step": self.g.committed})
            self.build_pg()
            self.heal(needs)
        except RuntimeError:
            # A member died before its rendezvous: the first all-reduce fails and the usual
            # recovery masks it.
            self.g.collectives.drop()

    def rejoin(self) -> None:
        """A replacement: wait for admission at a step boundary, then heal from a peer."""
        self.g._report(Phase.JOIN)
        self.g.has_state = False
        self.g.committed = -1
        self.g.cur = self.g.last = None
        self.g.membership.identity = of_group(self.g, full=False)
        needs = self.g.membership.wait_admission()
        self.g._report(Phase.HEAL)
        try:
            self.build_pg()
            self.heal(needs)
        except RuntimeError:
            self.g.collectives.drop()
            self.recover_until_built()

    def build_pg(self) -> None:
        m = self.g.membership

        def build(store: Any) -> None:
            self.g.collectives.build(store, m.prefix, m.rank(), len(m.members))

        if m.bounds is None:
            self.g.ranks.together(lambda: build(m.store))
        else:  # a member that died after the quorum must not hold the others for long
            bounds = m.bounds
            self.g.ranks.together(lambda: bounds.guarded(build, dict(m.replicas), m.prefix))

    def adopt(self, quorum: Any, valid: dict[int, dict[str, Any]]) -> None:
        needs = self.g.membership.adopt(quorum, valid)
        self.build_pg()
        if needs:
            self.heal(needs)

    def heal_state(self) -> HealState:
        return HealState(
            step=self.g.committed,
            model=self.g.model.state_dict(),
            optimizer=self.g.optimizer.state_dict(),
            scheduler=None if self.g.scheduler is None else self.g.scheduler.state_dict(),
            history=self.g.decider.history,
            join_seen=self.g.join_seen,
        )

    def heal(self, needs: list[int]) -> None:
        """Send the state to the members that need it (see :class:`Healer`)."""
        if not needs:
            return
        self.g._report(Phase.HEAL)
        got = self.g.ranks.together(
            lambda: self.g.healer.heal(
                self.g.members, self.g.me, needs, self.heal_state, receive=not self.g.has_state
            )
        )
        if got is None:
            return
        got.load_into(self.g.model, self.g.optimizer, self.g.scheduler)
        self.g.decider.replay(got.history)
        self.g.committed = got.step
        self.g.join_seen = got.join_seen
        self.g.has_state = True

    def recover_until_built(
        self, compute: ComputeFn | None = None, since: float | None = None
    ) -> None:
        """``since``: when this process began waiting on the collective that failed (the
        detection time of the event counts from there)."""
        self.g._report(Phase.RECOVER)
        t0 = time.perf_counter() if since is None else since
        while True:
            self.g.collectives.drop()
            try:
                self.apply(self.g.membership.quorum(shrink_only=True), t0, compute)
                return
            except RuntimeError:
                # A member died while the new group was being built or healed; or the
                # lighthouse or the store is unreachable: then retry at the guard's pace.
                if self.g.membership.bounds is not None:
                    self.g.membership.bounds.pace()

    def admit(self) -> None:
        """Step boundary: a quorum open to waiting replacements; rejoin and heal them."""
        self.g._report(Phase.JOIN)
        # The process group stays up until the quorum has formed: aborting it now could break
        # the all-reduce of a member still receiving the last chunks of this step.
        try:
            self.apply(self.g.membership.quorum(shrink_only=False), time.perf_counter(), None)
        except RuntimeError:
            self.recover_until_built()

    def apply(self, quorum: Any, t0: float, compute: ComputeFn | None) -> None:
        """Turn an agreed quorum into a rollback, controller events, a new group and a heal."""
        valid = self.g.membership.valid(quorum)
        if self.g.me not in valid:
            raise Excluded(f"quorum {sorted(valid)} does not hold group {self.g.me}")
        if self.g.has_state:
            self.apply_state(quorum, valid, t0, compute)
        self.adopt(quorum, valid)

    def apply_state(
        self, quorum: Any, valid: dict[int, dict[str, Any]], t0: float, compute: ComputeFn | None
    ) -> None:
        low = min(int(d["committed"]) for d in valid.values() if d["state"])
        if low < self.g.committed:
            last = self.g.last
            if low != self.g.committed - 1 or last is None or last.step != low:
                raise ProtocolError(
                    f"group {self.g.me} committed {self.g.committed} steps, a survivor {low}"
                )
            last.before.restore(self.g.model, self.g.optimizer, self.g.scheduler)
            self.g.committed = low
            self.g._write({"kind": "rollback", "step": low})
            self.g.cur, self.g.last = last, None
        members = self.g.membership.members
        dead = sorted(set(members) - set(valid))
        new = sorted(set(valid) - set(members))
        if new and self.g.cur is not None:
            raise ProtocolError(
                f"replacements {new} admitted with step {self.g.cur.step} in flight"
            )
        self.g.membership.members = tuple(sorted(valid))
        if dead:
            self.fail(dead, quorum.quorum_id, t0, compute)
        if new:
            event = self.g.decider.rejoin(new, quorum.quorum_id, t0, self.g.committed)
            self.g._write({"kind": "rejoin", "groups": new, "step": self.g.committed})
            if self.g.verbose and self.g.me == min(g for g in valid if valid[g]["state"]):
                print(
                    f"step {self.g.committed:3d}  groups {new} rejoined -> depth {event.depth} "
                    f"moves {event.moves}",
                    flush=True,
                )

    def fail(self, dead: list[int], quorum_id: int, t0: float, compute: ComputeFn | None) -> None:
        cur = self.g.cur
        event = self.g.decider.fail(dead, quorum_id, t0, cur, self.g.committed)
        if event.status != "OK":
            self.g._write({"kind": "wipeout", "event": asdict(event), "members": self.g.members})
            mark_wiped(self.g.membership.store, self.g.membership.epoch, self.g.members)
            raise WipeOutError(event)
        if cur is None and self.g.verbose and self.g.membership.lead_after(dead):
            print(
                f"step {self.g.committed:3d}  groups {dead} died between steps -> depth "
                f"{event.depth} moves {event.moves}",
                flush=True,
            )
        mine = [t for t, g in event.patch_computed if g == self.g.me]
        if mine and cur is not None:
            if compute is None:
                raise ProtocolError("patch types to compute but no compute callback")
            self.g._report(Phase.COMPUTE)
            cur.local = cur.local + self.g.sums.sums(cur, mine, compute)
            cur.computed.extend(mine)

    def finish(self) -> None:
        """All steps committed here: one more quorum decides whether every member has."""
        self.g._report(Phase.FINISH)
        while True:
            quorum = self.g.membership.quorum(shrink_only=True)
            valid = self.g.membership.valid(quorum)
            if all(int(d["committed"]) == self.g.committed for d in valid.values()):
                self.g.membership.finish(self.g.committed)
                return
            self.g.collectives.drop()
            try:
                self.apply(quorum, time.perf_counter(), None)
            except RuntimeError:
                self.recover_until_built()
            if self.g.cur is not None or self.g.committed < self.g.steps:
                return  # rolled back: the caller redoes the last step
