"""The exceptions of a SPARe group's protocol."""

from __future__ import annotations

from spare_fast.torch._types import EventRecord

__all__ = ["Excluded", "ProtocolError", "RunFinished", "Unneeded", "WipeOutError"]


class ProtocolError(Exception):
    """The agreed quorum contradicts this process's state (a bug or a false death): fatal."""


class Excluded(Exception):
    """The survivors agreed a membership without this (live) process: it must stand down."""


class Unneeded(Exception):
    """The epoch formed without this process: another process holds its group's place."""


class RunFinished(RuntimeError):
    """A replacement found the run finished before it was admitted."""


class WipeOutError(Exception):
    """The agreed membership leaves a shard type with no alive holder (a wipe-out).

    Raised by :meth:`SpareGroup.reduce`. No survivor can finish the step; the run restarts
    every group from a checkpoint (``SpareGroup(..., checkpoint_dir=...)`` writes them and
    :meth:`SpareGroup.start` takes one). :class:`~spare_fast.torch.SpareTrainer` does this by
    itself.

    Attributes
    ----------
    event : EventRecord
        The event that wiped out.
    """

    def __init__(self, event: EventRecord) -> None:
        super().__init__(
            f"groups {list(event.dead)} died at step {event.step}: a shard type has no alive "
            "holder (wipe-out); restart every group from the last checkpoint"
        )
        self.event = event
