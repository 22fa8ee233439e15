"""Checks that make a group process that cannot join fail fast, with a line naming it.

Run by the membership when it connects, before any quorum:

- :func:`check_reachable`: the lighthouse and the store answer a TCP connection (a wrong
  address fails in seconds, not after the quorum timeout);
- :func:`claim`: the run's group count is the same as this process's (the first process
  records it in the store), and no live process holds this group already (its liveness counter
  ``alive/g<group>``, see :mod:`spare_fast.torch._bounds`, does not move while this process
  watches it);
- :func:`check_ranks` and :func:`check_run_ranks`: every group runs the same number of ranks
  K (when the run forms, and for a replacement before it is admitted).

And the counter through which a waiting replacement tells the members it waits
(:class:`JoinCounter`, store key ``join/count``).
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

from spare_fast.torch._auth import RunKey, read_json

__all__ = [
    "JOIN_KEY",
    "N_GROUPS_KEY",
    "Claim",
    "JoinCounter",
    "check_ranks",
    "check_reachable",
    "check_run_ranks",
    "claim",
]

log = logging.getLogger("spare_fast.torch")

#: Store key holding the run's number of groups.
N_GROUPS_KEY = "run/n_groups"
#: Store key a waiting replacement increments; the lowest member reads it once per step.
JOIN_KEY = "join/count"


def check_reachable(
    group: int, lighthouse_addr: str, store_addr: tuple[str, int], timeout: float = 5.0
) -> None:
    """ConnectionError naming ``group`` and the address when the lighthouse or the store does
    not accept a connection within ``timeout`` seconds (retried: it may be starting)."""
    url = urlparse(lighthouse_addr)
    targets = {
        f"lighthouse {lighthouse_addr}": (url.hostname or "", int(url.port or 0)),
        f"store {store_addr[0]}:{store_addr[1]}": store_addr,
    }
    deadline = time.monotonic() + timeout
    for name, (host, port) in targets.items():
        while True:
            try:
                with socket.create_connection((host, port), timeout=1.0):
                    break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise ConnectionError(
                        f"group {group}: the {name} does not answer ({exc}); check the address"
                    ) from None
                time.sleep(0.1)


class Claim:
    """This process's claim on ``group`` in a run of ``n_groups`` groups.

    The group count is checked at once (ValueError if the run was started with another N).
    Whether a live process already holds the group is watched in a thread for ``watch``
    seconds (its liveness counter moves): the caller goes on meanwhile and calls
    :meth:`check` where the answer matters (before it becomes a member).
    """

    def __init__(self, store: Any, store_addr: tuple[str, int], group: int, n_groups: int,
                 watch: float) -> None:  # fmt: skip
        self.group = int(group)
        # compare_set answers the stored value: this process's if it was the first.
        held = store.compare_set(N_GROUPS_KEY, "", str(int(n_groups))).decode()
        if held != str(int(n_groups)):
            raise ValueError(
                f"group {group} was started with N = {n_groups} groups, the run has N = {held}"
            )
        self.key = f"alive/g{self.group}"
        self.before = int(store.add(self.key, 0))
        self.duplicate = False
        self._done = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.before == 0:  # never held by a process
            self._done.set()
            return
        self.store_addr, self.watch = store_addr, float(watch)
        self._thread = threading.Thread(target=self._watch, name="spare-claim", daemon=True)
        self._thread.start()

    def stop(self) -> threading.Thread | None:
        """End the watch early (the process leaves); returns its thread to join, if any."""
        self._stop.set()
        return self._thread

    def _watch(self) -> None:
        import torch.distributed as dist

        try:
            if self._stop.wait(self.watch):
                return
            host, port = self.store_addr
            store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=10))
            self.duplicate = int(store.add(self.key, 0)) != self.before
        except RuntimeError:  # the store is unreachable: the service guard handles that
            pass
        finally:
            self._done.set()

    def done(self) -> bool:
        """Whether the watch is over (this process may then beat the group's counter)."""
        return self._done.is_set()

    def check(
        self, block: bool = False, holder: Callable[[], str | None] = lambda: None, me: str = ""
    ) -> None:
        """Raise RuntimeError if a live process holds this group (``block``: wait for the
        answer); ``holder()`` names that process when known (its replica id), ``me`` this
        one."""
        if block:
            self._done.wait()
        if self.duplicate:
            other = holder()
            named = f" ({other})" if other else ""
            mine = f" {me}" if me else ""
            raise RuntimeError(
                f"group {self.group} is alive in another process{named}: this process{mine} "
                "stands down (start a group's process only once its previous one is dead)"
            )


def claim(store: Any, group: int, n_groups: int, watch: float) -> None:
    """:class:`Claim` through ``store`` itself, answered at once (waits ``watch`` seconds when
    the group was held before)."""
    # compare_set answers the stored value: this process's if it was the first.
    held = store.compare_set(N_GROUPS_KEY, "", str(int(n_groups))).decode()
    if held != str(int(n_groups)):
        raise ValueError(
            f"group {group} was started with N = {n_groups} groups, the run has N = {held}"
        )
    key = f"alive/g{int(group)}"
    before = int(store.add(key, 0))
    if before == 0:
        return  # never held by a process
    time.sleep(watch)
    if int(store.add(key, 0)) != before:
        raise RuntimeError(
            f"group {group} is alive in another process: this process stands down "
            "(start a group's process only once its previous one is dead)"
        )


def check_ranks(data: list[dict[str, Any]]) -> None:
    """ValueError naming the groups whose ranks per group (K) differ from the others'."""
    ranks = {int(d["group"]): int(d.get("ranks", 1)) for d in data}
    values = sorted(ranks.values())
    if values[0] == values[-1]:
        return
    common = max(set(values), key=values.count)
    odd = ", ".join(f"group {g} runs K = {k}" for g, k in sorted(ranks.items()) if k != common)
    raise ValueError(f"{odd} ranks, the other groups K = {common}: every group needs the same K")


def check_run_ranks(store: Any, auth: RunKey, epoch: int, group: int, n_ranks: int) -> None:
    """ValueError if the run's epoch ``epoch`` formed with another K than ``n_ranks``."""
    run_ranks = read_json(store, f"e{epoch}/ranks", lambda v: type(v) is int and v >= 1, auth)
    if run_ranks is not None and run_ranks != n_ranks:
        raise ValueError(
            f"group {group} runs K = {n_ranks} ranks, the run's groups run K = {run_ranks}: "
            "every group needs the same K"
        )


class JoinCounter:
    """The store counter :data:`JOIN_KEY`: a waiting replacement adds 1 per announcement, the
    lowest member reads it once per step (the count then travels in the step's sum).

    The lowest member's reads come from a thread that polls the counter every ``interval``
    seconds once :meth:`read` was first called, so a step waits on no store round trip (a
    replacement is admitted at most one poll later). While the store or the lighthouse is
    down the step's read waits for it again (the service guard ends the process once its
    bound has passed), so losing the services stops the run as before. The counter has a
    store connection of its own: the store closes the connection of an ``add`` to a value
    that is not a number, and the process groups' rendezvous must not lose theirs with it.
    """

    def __init__(self, store_addr: tuple[str, int], interval: float = 0.05) -> None:
        self.store_addr = store_addr
        self.interval = interval
        #: The count last read.
        self.last = 0
        self._conn: Any = None
        #: Set by the polling thread when a read failed while a service was down.
        self.lost = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    def _connect(self) -> Any:
        import torch.distributed as dist

        host, port = self.store_addr
        return dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=60))

    def _add(self, n: int) -> int:
        with self._lock:  # the polling thread and the step may both read
            if self._conn is None:
                self._conn = self._connect()
            try:
                return int(self._conn.add(JOIN_KEY, n))
            except Exception:
                self._conn = None  # reconnect next time
                raise

    def announce(self, group: int) -> None:
        """A replacement of ``group`` says it waits (a failure is logged: the lead repairs a
        malformed counter)."""
        try:
            self._add(1)
        except Exception as exc:  # noqa: BLE001 - a malformed counter: the lead repairs it
            log.warning("group %d: cannot count itself in %s (%s)", group, JOIN_KEY, exc)

    def read(self, bounds: Any = None) -> int:
        """The count: read now the first time (then the polling thread starts), else as last
        polled. ``bounds`` is the service guard: while the lighthouse or the store is down a
        failed read is not a malformed counter (the guard ends the process once its bound has
        passed)."""
        if self._poller is None or self.lost:
            # The first read, or the services were found down: read here, waiting while they
            # are down as every other store access of the step does.
            self.lost = False
            self._poll_once(bounds, wait=True)
        if self._poller is None:
            self._poller = threading.Thread(
                target=self._poll, args=(bounds,), name="spare-joins", daemon=True
            )
            self._poller.start()
        return self.last

    def _poll(self, bounds: Any) -> None:
        while not self._stop.wait(self.interval):
            self._poll_once(bounds)

    def _poll_once(self, bounds: Any, wait: bool = False) -> None:
        """Read the count; ``wait``: while the store is down, wait for it through the guard
        ``bounds`` (which ends the process once its bound has passed), else flag it."""
        while True:
            try:
                self.last = self._add(0)
                return
            except RuntimeError as exc:
                # The store answers an ``add`` to a value that is not a number by closing the
                # connection, as a store that went away does: tell the two apart on a fresh
                # connection before repairing anything.
                if not self._malformed():
                    if bounds is None or not wait:
                        self.lost = bounds is not None
                        if wait:
                            raise
                        return
                    time.sleep(0.1)
                    bounds.pace()
                    continue
                log.warning("store key %s: malformed (%s); reset to %d", JOIN_KEY, exc, self.last)
                try:
                    self._connect().set(JOIN_KEY, str(self.last))
                except RuntimeError:
                    pass  # repaired at the next read
                return

    def _malformed(self) -> bool:
        """Whether the store answers and holds a join counter that is not a number."""
        import torch.distributed as dist

        host, port = self.store_addr
        try:  # a plain connect first: no client's retries and logs
            with socket.create_connection((host, port), timeout=1.0):
                pass
        except OSError:
            return False
        try:
            fresh = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=2))
            raw = fresh.get(JOIN_KEY) if fresh.check([JOIN_KEY]) else b"0"
        except RuntimeError:
            return False  # unreachable: not a malformed value
        return re.fullmatch(rb"\s*-?\d+\s*", raw) is None

    def drop(self) -> None:
        """Drop the store connection (after :meth:`close`)."""
        with self._lock:
            self._conn = None

    def close(self) -> None:
        """Stop polling; the polling thread is joined (within a second) so that it is not left
        inside the store client while the interpreter finalizes."""
        self._stop.set()
        poller = self._poller
        if poller is not None and poller is not threading.current_thread():
            poller.join(1.0)
