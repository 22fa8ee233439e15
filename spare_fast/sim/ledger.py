"""Time accounting of a simulated run: every second of wall clock in exactly one bucket.

Steps are booked as *pending* (useful work, redundancy, recovery, jitter) until a checkpoint
commits them; a restart turns everything pending into rework.  Saves and restarts are booked
directly.  ``useful + sum(losses())`` is the wall clock (see ``Report.conservation_error``).
"""

from __future__ import annotations

__all__ = ["Ledger"]


class Ledger:
    """The time buckets of one run (seconds).

    Attributes
    ----------
    useful, redundancy, jitter, recovery : float
        Committed: ``compute + allreduce`` per committed step; the extra stack layers of
        committed steps; their jitter (signed); their recovery (decision, shrink, patch,
        all-reduce reruns).
    pending_useful, pending_redundancy, pending_jitter, pending_recovery : float
        The same for the steps since the last committed checkpoint.
    rework, checkpoint, restart : float
        Work lost to restarts, checkpoint saves (lost ones included), restart time.

    Examples
    --------
    >>> led = Ledger()
    >>> led.book(useful=10.0, redundancy=5.0, jitter=0.5, recovery=1.0)
    >>> led.commit(); led.useful, led.losses()["redundancy"]
    (10.0, 5.0)
    """

    __slots__ = (
        "useful",
        "redundancy",
        "jitter",
        "recovery",
        "pending_useful",
        "pending_redundancy",
        "pending_jitter",
        "pending_recovery",
        "rework",
        "checkpoint",
        "restart",
    )

    def __init__(self) -> None:
        self.useful = self.redundancy = self.jitter = self.recovery = 0.0
        self.pending_useful = self.pending_redundancy = 0.0
        self.pending_jitter = self.pending_recovery = 0.0
        self.rework = self.checkpoint = self.restart = 0.0

    def book(self, useful: float, redundancy: float, jitter: float, recovery: float = 0.0) -> None:
        """Steps done since the last checkpoint (pending until :meth:`commit`)."""
        self.pending_useful += useful
        self.pending_redundancy += redundancy
        self.pending_recovery += recovery
        self.pending_jitter += jitter

    def commit(self) -> None:
        """A checkpoint (or the run's end) commits the pending steps."""
        self.useful += self.pending_useful
        self.redundancy += self.pending_redundancy
        self.jitter += self.pending_jitter
        self.recovery += self.pending_recovery
        self.pending_useful = self.pending_redundancy = 0.0
        self.pending_jitter = self.pending_recovery = 0.0

    def lose_pending(self) -> None:
        """A restart: the pending steps become rework."""
        self.rework += (
            self.pending_useful
            + self.pending_redundancy
            + self.pending_jitter
            + self.pending_recovery
        )
        self.pending_useful = self.pending_redundancy = 0.0
        self.pending_jitter = self.pending_recovery = 0.0

    def losses(self) -> dict[str, float]:
        """The loss buckets of :attr:`spare_fast.sim.Report.losses`."""
        return {
            "restart": self.restart,
            "rework": self.rework,
            "checkpoint": self.checkpoint,
            "redundancy": self.redundancy,
            "recovery": self.recovery,
            "jitter": self.jitter,
        }
