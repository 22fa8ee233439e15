"""The step of a :class:`~spare_fast.torch.SpareGroup`: its all-reduce until one succeeds,
then its commit at the step boundary.

:class:`Stepper` acts on its group's step state (the committed count, the step in flight, the
last step and the reduced buffer awaiting its commit) through the group's collaborators: the
type sums compute, the collectives all-reduce, the group's ranks agree on the outcome, the
recovery masks a failure and admits waiting replacements, the observers hear of each commit,
and the checkpoints are written by the lowest member.
"""

from __future__ import annotations

import time
from typing import Any

from spare_fast.torch._checkpoint import load_training, save_training
from spare_fast.torch._compute import ComputeFn
from spare_fast.torch._decisions import format_step
from spare_fast.torch._rollback import StepState
from spare_fast.torch._types import Phase

__all__ = ["Stepper"]


class Stepper:
    """One step's all-reduce, its commit, and the checkpoints.

    Parameters
    ----------
    group : SpareGroup
        The group whose step state it changes.
    """

    def __init__(self, group: Any) -> None:
        self.g = group

    def reduce(self, compute: ComputeFn) -> float:
        """Compute, all-reduce (recovering until an all-reduce succeeds on every rank of the
        group), set the gradients; the step's global loss. See :meth:`SpareGroup.reduce`."""
        g = self.g
        lay = g.reduce_layout
        while True:
            if g.cur is None:
                g._report(Phase.COMPUTE)
                g.cur = g.sums.begin(
                    g.committed,
                    g.decider.assignment(),
                    g.decider.depth,
                    g.optimizer,
                    g.scheduler,
                    compute,
                )
            cur = g.cur
            reduced = cur.local.clone()
            if g.membership.lead() and g.ranks.rank == 0:
                # How many times a replacement said it waits: the same number reaches every
                # member through the sum (and every rank through agree_step), so all admit it
                # after the same step.
                reduced[lay.join] = float(g.membership.join_count())
            since = time.perf_counter()
            ok = g.collectives.allreduce(reduced, lambda i: g._report(Phase.ALLREDUCE, i))
            # A failure on any rank of the group sends all its ranks into recovery.
            ok, waiting = g.ranks.agree_step(ok, lay.waiting(reduced) if ok else 0)
            if ok:
                reduced = lay.fold(reduced)
                reduced[lay.join] = float(waiting)
                break
            g.collectives.drop()
            g.recovery.recover_until_built(compute, since)
        lay.apply(reduced, cur.buffers, g.n_types)
        g._pending = (cur, reduced)
        return lay.mean_loss(reduced, g.n_types)

    def end(self) -> None:
        """Commit the reduced step; admit waiting replacements; after the last step, agree
        that every member committed it. See :meth:`SpareGroup.step_end`."""
        g = self.g
        cur, reduced = g._pending
        g._pending = None
        g.committed = cur.step + 1
        self.commit(cur, g.reduce_layout.mean_loss(reduced, g.n_types))
        # The step before the last can no longer be rolled back to: its snapshot is reused.
        g.sums.spare = None if g.last is None else g.last.before
        g.last, g.cur = cur, None
        waiting = g.reduce_layout.waiting(reduced)
        if waiting > g.join_seen:
            g.join_seen = waiting
            g.recovery.admit()
        if g.committed >= g.steps and g.cur is None:
            g.recovery.finish()

    def commit(self, cur: StepState, loss: float) -> None:
        """Record the commit; the lowest member prints it and checkpoints when due."""
        g = self.g
        g._write(cur.record(g.members, loss))
        lead = g.membership.lead()
        if lead and g.verbose:
            print(format_step(cur, g.members, loss, g.layout.n_groups), flush=True)
        if lead and (g.committed % g.checkpoint_every == 0 or g.committed == g.steps):
            self.save_checkpoint()

    def save_checkpoint(self) -> None:
        """Write a checkpoint of the committed state (when the group has a folder for them)."""
        g = self.g
        if g.ckpts is not None:
            g._report(Phase.CHECKPOINT)
            save_training(g.ckpts, g.committed, g.model, g.optimizer, g.scheduler, g.seed)

    def load_checkpoint(self, path: str) -> None:
        """Load the training state of checkpoint ``path``; the committed count is its step."""
        g = self.g
        g.committed = load_training(path, g.model, g.optimizer, g.scheduler, g.auth.secret)
