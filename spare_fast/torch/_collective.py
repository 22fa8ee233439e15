"""The process group of one agreed membership: built, used and torn down.

Every agreed membership gets a new process group, whose rendezvous runs through the run's
store under the membership's own prefix. The backend is gloo (CPU), or a user's factory
``backend(store, rank, size, timeout) -> ProcessGroup`` (a wrapper that injects faults, as
torchft's fault-injecting process group does, is such a factory).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["Collectives"]


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
        if self.pg is not None:
            try:
                self.pg.abort()
            except RuntimeError:
                pass
        self.pg = None

    def allreduce(self, tensor: torch.Tensor, on_bucket: Callable[[int], None]) -> bool:
        """Sum ``tensor`` over the members in place, bucket by bucket; False on failure.

        ``on_bucket(i)`` is called before bucket ``i`` is reduced.
        """
        if self.pg is None:
            return False
        try:
            for i, bucket in enumerate(torch.split(tensor, self.bucket_numel)):
                on_bucket(i)
                self.pg.allreduce([bucket]).wait()
        except RuntimeError:
            return False
        return True

    def broadcast(self, tensor: torch.Tensor, root: int) -> None:
        """Broadcast ``tensor`` from rank ``root`` (RuntimeError when a member dies)."""
        self.pg.broadcast(tensor, root).wait()
