"""The process group of one agreed membership: built, used and torn down.

Every agreed membership gets a new process group, whose rendezvous runs through the run's
store under the membership's own prefix. The backend is gloo (CPU), or a user's factory
``backend(store, rank, size, timeout) -> ProcessGroup`` (a wrapper that injects faults, as
torchft's fault-injecting process group does, is such a factory).

A collective that fails in one member must end in every member at once, not at the collective
timeout. A member killed mid-collective closes its sockets, and its direct peers see it at
once; the others may wait on a live peer that is itself blocked, and gloo offers no way to end
a wait from another thread (neither ``abort()`` nor closing the store does). So a member whose
collective fails writes one key under the process group's prefix, and every member waits on
its collective in slices of :data:`SLICE` seconds, looking for that key between slices: no
request while collectives complete within a slice, and one per member per slice while one is
held up. A collective given up on this way is still in flight in gloo; its process group is
kept aside until it ends (at gloo's own timeout at the latest) and released then, since
releasing it earlier blocks until it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["SLICE", "Collectives"]

#: Seconds one wait on a collective blocks before this process looks for a member's failure
#: report (:class:`Collectives`).
SLICE = 0.1


class Collectives:
    """This process's process group over the current members, rebuilt per membership.

    Parameters
    ----------
    backend : "gloo" or callable
        ``"gloo"``, or a factory ``backend(store, rank, size, timeout) -> ProcessGroup``.
    timeout : timedelta
        Timeout of one collective.
    bind : str or None
        Local address gloo binds to (ignored by a factory).
    bucket_numel : int
        The all-reduce runs in buckets of this many numbers, one after the other.
    suffix : str, optional
        Added to each membership's prefix: ``/r{i}`` for rank ``i`` of a group of K > 1
        ranks (rank ``i`` of every group reduces with the other groups' rank ``i``).
    """

    def __init__(
        self,
        backend: str | Callable[..., Any],
        timeout: timedelta,
        bind: str | None,
        bucket_numel: int,
        suffix: str = "",
    ) -> None:
        self.backend = backend
        self.timeout = timeout
        self.bind = bind
        self.bucket_numel = bucket_numel
        self.suffix = suffix
        self.pg: Any = None
        self._device: Any = None
        #: Where a member reports that a collective of the current process group failed: the
        #: store client the group was built through, and the key.
        self._report: tuple[Any, str] | None = None
        #: Process groups with a collective given up on, kept until it ends: (pg, work).
        self._parked: list[tuple[Any, Any]] = []

    def connect(self) -> None:
        """Resolve the gloo device once (the bind address's interface)."""
        self._device = (
            dist.ProcessGroupGloo.create_device(hostname=self.bind)
            if self.bind and self.backend == "gloo"
            else None
        )

    def build(self, store: Any, prefix: str, rank: int, size: int) -> None:
        """A new process group of ``size`` ranks (this one ``rank``) under ``prefix``."""
        self.pg = None
        self._release_parked()
        # One key for the membership: the K rank-wise process groups of a group share it.
        self._report = (store, f"{prefix}/failed")
        scoped = dist.PrefixStore(prefix + self.suffix + "/pg/", store)
        if callable(self.backend):
            self.pg = self.backend(scoped, rank, size, self.timeout)
            return
        opts = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]  # stub lacks it
        opts._timeout = self.timeout
        opts._devices = [
            self._device
            if self._device is not None
            else dist.ProcessGroupGloo.create_default_device()
        ]
        self.pg = dist.ProcessGroupGloo(scoped, rank, size, opts)

    def drop(self) -> None:
        """Abort and forget the process group.

        Abort closes this process's sockets, so peers still blocked in a failed collective
        see "connection closed" now instead of waiting out the timeout.
        """
        if self.pg is not None and not any(pg is self.pg for pg, _ in self._parked):
            try:
                self.pg.abort()
            except RuntimeError:
                pass
        self.pg = None
        self._report = None
        self._release_parked()

    def _release_parked(self, wait: float = 0.0) -> None:
        """Release the kept-aside process groups whose collective has ended (waiting up to
        ``wait`` seconds for the others)."""
        deadline = time.monotonic() + wait
        while self._parked:
            self._parked = [(pg, w) for pg, w in self._parked if not _ended(w)]
            if not self._parked or time.monotonic() >= deadline:
                return
            time.sleep(SLICE)

    def release(self) -> None:
        """Drop the process group and wait for every collective given up on to end (at most
        the collective timeout): what :meth:`SpareGroup.close` calls before the process exits."""
        self.drop()
        self._release_parked(self.timeout.total_seconds() + 5.0)

    def report_failure(self) -> None:
        """Tell the other members that a collective of this process group failed."""
        if self._report is None:
            return
        store, key = self._report
        try:
            store.set(key, "1")
        except RuntimeError:  # the store is gone: the members find that out by themselves
            pass

    def _reported(self) -> bool:
        if self._report is None:
            return False
        store, key = self._report
        try:
            return bool(store.check([key]))
        except RuntimeError:  # the store is gone: give up on the collective
            return True

    def wait(self, work: Any) -> None:
        """Wait for ``work`` to end; RuntimeError when it fails, or when another member
        reported a failed collective of this process group while it was held up."""
        if not hasattr(work, "is_completed"):  # a factory's own kind of work
            work.wait()
            return
        step = timedelta(seconds=SLICE)
        while True:
            try:
                work.wait(step)
                return
            except RuntimeError:
                if work.is_completed():  # it ended with an error of its own
                    raise
            if self._reported():
                self._parked.append((self.pg, work))
                raise RuntimeError("another member's collective failed")

    def allreduce(self, tensor: torch.Tensor, on_bucket: Callable[[int], None]) -> bool:
        """Sum ``tensor`` over the members in place, bucket by bucket; False on failure.

        ``on_bucket(i)`` is called before bucket ``i`` is reduced.
        """
        if self.pg is None:
            return False
        try:
            for i, bucket in enumerate(torch.split(tensor, self.bucket_numel)):
                on_bucket(i)
                self.wait(self.pg.allreduce([bucket]))
        except RuntimeError:
            self.report_failure()
            return False
        return True

    def broadcast(self, tensor: torch.Tensor, root: int) -> None:
        """Broadcast ``tensor`` from rank ``root`` (RuntimeError when a member dies)."""
        try:
            self.wait(self.pg.broadcast(tensor, root))
        except RuntimeError:
            self.report_failure()
            raise


def _ended(work: Any) -> bool:
    try:
        return bool(work.is_completed())
    except RuntimeError:
        return True
