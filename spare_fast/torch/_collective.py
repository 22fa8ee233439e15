"""The process group of one agreed membership: built, used and torn down.

Every agreed membership gets a new process group, whose rendezvous runs through the run's
store under the membership's own prefix. The backend is gloo (CPU), or a user's factory
``backend(store, rank, size, timeout) -> ProcessGroup`` (a wrapper that injects faults, as
torchft's fault-injecting process group does, is such a factory).

**A failure reaches every member at once.** A member whose collective fails aborts its process
group, which closes its sockets; its ring neighbours then fail too, and so on around the ring,
but at 60 members on a loaded host that chain took seconds, and a member it missed sat in its
collective until the collective timeout (the lighthouse waits for every member that still
heartbeats, so the decision waited with it). Each process group therefore has a *tripwire*:
one store key, ``<prefix>/failed``, that a thread of every member waits on (one blocked store
request per member, no polling). The member that drops the group sets it, and every other
member's thread aborts its own group, so the blocked collectives fail within a store round
trip. A group left for the next membership (an admission at a step boundary) is retired the
same way: every member of the new quorum has finished its last collective on the old one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["Collectives", "Tripwire"]

#: How long a tripwire's store request waits before it is renewed (its thread ends with its
#: group, when the key is set, long before).
TRIPWIRE_WAIT = timedelta(days=1)


class Tripwire:
    """The key ``key`` of the run's store at ``(host, port)``: :meth:`pull` sets it, and
    ``on_pull`` runs in every process that armed one on the same key (once, from a thread of
    its own) unless it was :meth:`disarm` ed first."""

    def __init__(self, host: str, port: int, key: str, on_pull: Callable[[], None]) -> None:
        self.key = key
        self._on_pull = on_pull
        self._armed = True
        self._lock = threading.Lock()
        self._client = dist.TCPStore(host, port, is_master=False, timeout=TRIPWIRE_WAIT)
        self._setter: Any = None
        self._host, self._port = host, port
        self._thread = threading.Thread(target=self._wait, name="spare-tripwire", daemon=True)
        self._thread.start()

    def _wait(self) -> None:
        try:
            self._client.wait([self.key])
        except Exception:  # noqa: BLE001 - the store is gone: the service guard handles it
            return
        with self._lock:
            fire, self._armed = self._armed, False
        if fire:
            self._on_pull()

    def disarm(self) -> None:
        """``on_pull`` will not run here any more."""
        with self._lock:
            self._armed = False

    def pull(self) -> None:
        """Set the key (this process's own ``on_pull`` is not run); every waiting thread,
        here and in the other processes, wakes and ends."""
        self.disarm()
        try:
            setter = dist.TCPStore(
                self._host, self._port, is_master=False, timeout=timedelta(seconds=5)
            )
            setter.set(self.key, "1")
        except Exception:  # noqa: BLE001 - store unreachable: the peers' collectives time out
            return
        self._thread.join(5.0)


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
        self._wire: Tripwire | None = None

    def connect(self) -> None:
        """Resolve the gloo device once (the bind address's interface)."""
        self._device = (
            dist.ProcessGroupGloo.create_device(hostname=self.bind)
            if self.bind and self.backend == "gloo"
            else None
        )

    def build(self, store: Any, prefix: str, rank: int, size: int) -> None:
        """A new process group of ``size`` ranks (this one ``rank``) under ``prefix``; the
        previous one (if not dropped) is retired."""
        self.retire()
        self.pg = None
        scoped = dist.PrefixStore(prefix + self.suffix + "/pg/", store)
        if callable(self.backend):
            self.pg = self.backend(scoped, rank, size, self.timeout)
        else:
            self.pg = self._gloo(scoped, rank, size)
        host, port = getattr(store, "host", None), getattr(store, "port", None)
        if isinstance(host, str) and isinstance(port, int):
            pg = self.pg
            self._wire = Tripwire(host, port, prefix + self.suffix + "/failed", pg.abort)

    def retire(self) -> None:
        """The current group is done with (every member moves to a new one): release its
        tripwire without aborting anyone."""
        wire, self._wire = self._wire, None
        if wire is not None:
            wire.pull()

    def _gloo(self, scoped: Any, rank: int, size: int) -> Any:
        opts = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]  # stub lacks it
        opts._timeout = self.timeout
        opts._devices = [
            self._device
            if self._device is not None
            else dist.ProcessGroupGloo.create_default_device()
        ]
        return dist.ProcessGroupGloo(scoped, rank, size, opts)

    def drop(self) -> None:
        """Abort and forget the process group, and pull its tripwire.

        Abort closes this process's sockets, and the tripwire aborts every other member's
        group, so peers still blocked in a failed collective fail now instead of waiting out
        the timeout.
        """
        if self.pg is not None:
            try:
                self.pg.abort()
            except RuntimeError:
                pass
        self.pg = None
        self.retire()

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
