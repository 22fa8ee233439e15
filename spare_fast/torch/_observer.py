"""What a :class:`~spare_fast.torch.SpareGroup` tells the outside world while it runs.

An observer is handed to the group (``SpareGroup(..., observers=[...])``) instead of
subclassing it: the launcher's workers write their progress to shared memory and their
commits to a record file through one, and tests watch the phases through another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from spare_fast.torch._types import Phase

__all__ = ["Observer", "Observers"]


class Observer:
    """Receives a group's progress and records; every method does nothing by default.

    Methods are called on the training thread and should return quickly.
    """

    def on_phase(self, group: int, epoch: int, step: int, phase: Phase, bucket: int) -> None:
        """The group entered ``phase`` of ``step`` (``bucket``: the all-reduce's bucket)."""

    def on_record(self, record: dict[str, Any]) -> None:
        """A commit, rollback, rejoin or wipe-out (``record["kind"]`` says which)."""


class Observers(Observer):
    """Several observers called in order."""

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        self.observers = list(observers)
        for obs in self.observers:
            if not isinstance(obs, Observer):
                raise TypeError(f"observer = {obs!r} is not a spare_fast.torch.Observer")

    def on_phase(self, group: int, epoch: int, step: int, phase: Phase, bucket: int) -> None:
        for obs in self.observers:
            obs.on_phase(group, epoch, step, phase, bucket)

    def on_record(self, record: dict[str, Any]) -> None:
        for obs in self.observers:
            obs.on_record(record)
