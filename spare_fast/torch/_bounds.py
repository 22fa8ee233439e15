"""Bounded time for the failures a group process cannot mask: a frozen self, a lost service.

:class:`Bounds` is started by the group's membership when it connects and gathers:

- the :class:`~spare_fast.torch._watchdog.Watchdog` that kills this process from outside when
  it falls silent (stopped or hung) for the lighthouse's heartbeat timeout, one per process
  (:func:`~spare_fast.torch._watchdog.process_watchdog`);
- liveness in the store: the guard thread adds one to ``alive/<replica id>`` (and to
  ``alive/g<group>``) every :func:`liveness_period`: two requests per member per period,
  whatever the number of members;
- a neighbour watch while a new process group is built (:meth:`Bounds.guarded`): each member
  reads the liveness counters of the :data:`WATCHED` members after it on the ring of the new
  membership and one shared counter of reports. A member whose counter stands still for the
  heartbeat timeout, while its watcher demonstrably ran, is reported under
  ``<prefix>/silent`` (its replica id appended, the counter ``<prefix>/silent/n`` advanced);
  every member gives up on that rendezvous as soon as the counter moves, instead of waiting
  out the collective timeout. The store sees ``2 + WATCHED + 1`` requests per member per
  period during a rendezvous, O(N) in all; the lighthouse alone keeps every member's
  heartbeat (it decides deaths and quorums);
- a service guard: the same thread opens a TCP connection to the lighthouse and to the store
  every :data:`PROBE_SECONDS`. An operation on them that fails while either is unreachable
  waits until both answer again, then is retried (no loop of failing calls, no flood of
  connection warnings); when both answer again within the bound the run goes on. Unreachable
  for the whole bound (``run/service_timeout_ms`` in the store, else
  ``SPARE_FAST_SERVICE_TIMEOUT`` seconds, else :data:`DEFAULT_SERVICE_TIMEOUT`), the process
  prints one line and exits with :data:`EXIT_SERVICE_LOST`; so it does at once when the store
  comes back empty (restarted in place: the run's memberships are gone with the old one).

Why a ring of watchers and not every member reading every counter: N members reading N
counters each period is N² requests a period on the one store (a TCPStore serves some tens of
thousands of requests a second, so that saturates near a hundred members). With
:data:`WATCHED` watchers per member a death is still seen by every member within one heartbeat
timeout and a store round trip, unless all of a member's watchers die with it in the same
rendezvous; the rendezvous then ends at the collective timeout, as it did before any watch.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar
from urllib.parse import urlparse

from spare_fast.torch._joins import N_GROUPS_KEY
from spare_fast.torch._watchdog import heartbeat_timeout, process_watchdog

__all__ = [
    "DEFAULT_SERVICE_TIMEOUT",
    "EXIT_SERVICE_LOST",
    "SERVICE_KEY",
    "WATCHED",
    "Bounds",
    "liveness_period",
    "publish_service_timeout",
    "ring_watch",
]

#: Exit code of a group process that lost the lighthouse or the store for the whole bound.
EXIT_SERVICE_LOST = 75
#: Seconds a lost lighthouse or store is waited for before the process exits.
DEFAULT_SERVICE_TIMEOUT = 30.0
#: Store key holding that bound in milliseconds (written by whoever serves the run).
SERVICE_KEY = "run/service_timeout_ms"
#: Seconds between two probes of the services (and between retries while they are down).
PROBE_SECONDS = 0.5
#: Timeout of a store connection made off the critical path (the guard's own client, the
#: rendezvous client): above the seconds a connect stalls when many processes connect at once.
CONNECT_SECONDS = 10.0
#: Members after this one on the ring whose liveness it watches during a rendezvous.
WATCHED = 2

T = TypeVar("T")


def liveness_period(heartbeat_timeout: float) -> float:
    """Seconds between two beats of a process's liveness counters: an eighth of the
    heartbeat timeout, within [0.01, 1] s (a counter moves about eight times per timeout)."""
    return min(max(float(heartbeat_timeout) / 8.0, 0.01), 1.0)


def ring_watch(members: list[int], me: int, k: int = WATCHED) -> list[int]:
    """The ``k`` members after ``me`` on the ring of the sorted ``members`` (fewer when there
    are not that many others)."""
    ring = sorted(set(members))
    if me not in ring:
        return []
    i = ring.index(me)
    return [ring[(i + j) % len(ring)] for j in range(1, min(k, len(ring) - 1) + 1)]


def publish_service_timeout(store: Any, seconds: float) -> None:
    """Tell the run's processes how long a lost lighthouse or store is waited for."""
    store.set(SERVICE_KEY, str(int(round(float(seconds) * 1000))))


def _service_timeout(store: Any) -> float:
    with contextlib.suppress(RuntimeError, ValueError):
        if store.check([SERVICE_KEY]):
            return max(int(store.get(SERVICE_KEY).decode()) / 1000.0, PROBE_SECONDS)
    with contextlib.suppress(KeyError, ValueError):
        return max(float(os.environ["SPARE_FAST_SERVICE_TIMEOUT"]), PROBE_SECONDS)
    return DEFAULT_SERVICE_TIMEOUT


def reachable(host: str, port: int) -> bool:
    """Whether a TCP connection to ``host:port`` opens within the probe period."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS):
            return True
    except OSError:
        return False


class Bounds:
    """The watchdog and the service guard of one group process.

    Parameters
    ----------
    group : int
        This process's group.
    lighthouse_addr : str
        ``http://HOST:PORT`` of the lighthouse.
    store_addr : tuple of (str, int)
        The run's store.
    store : TCPStore
        A connected client of that store (read once, for the published timeouts).
    heartbeat_interval : float
        Seconds between the watchdog's beats.
    """

    def __init__(
        self,
        group: int,
        lighthouse_addr: str,
        store_addr: tuple[str, int],
        store: Any,
        heartbeat_interval: float,
        replica_id: str,
        replicas: Callable[[], dict[int, str]],
        claimed: Callable[[], bool] = lambda: True,
    ) -> None:
        self.group = int(group)
        self.replica_id = replica_id
        self.replicas = replicas
        self.claimed = claimed
        self.store_addr = store_addr
        url = urlparse(lighthouse_addr)
        self.services = {
            f"lighthouse {lighthouse_addr}": (url.hostname or "127.0.0.1", int(url.port or 0)),
            f"store {store_addr[0]}:{store_addr[1]}": (store_addr[0], int(store_addr[1])),
        }
        #: The process's own store client: the counters move through it while the guard's
        #: own client is not connected.
        self._shared = store
        self.heartbeat_timeout = heartbeat_timeout(store)
        self.service_timeout = _service_timeout(store)
        self.interval = liveness_period(self.heartbeat_timeout)
        self.watchdog = process_watchdog(self.group, self.heartbeat_timeout, heartbeat_interval)
        # The rendezvous being watched: its report key, the watched members (replica id ->
        # (its counter, when it last moved or the watch began)) and the reports seen.
        self._lock = threading.Lock()
        self._watch_key: str | None = None
        self._watched: dict[str, tuple[int, float]] = {}
        self._reports = 0
        self._reported: set[str] = set()
        self._silent: set[str] = set()
        #: A store client for rendezvous, free for the next one (see :meth:`guarded`).
        self._rendezvous_store: Any = None
        self.lost: str | None = None  # the first service found unreachable, while it is
        self.lost_since = 0.0
        self.started = time.monotonic()
        self._stop = threading.Event()
        # The rendezvous client is connected ahead, off the path of the first rendezvous.
        self._spare: list[Any] = []
        self._connects = [self._connect(self._spare, CONNECT_SECONDS)]
        self._rendezvous: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._guard, name="spare-guard", daemon=True)
        self._thread.start()

    def _probe(self) -> str | None:
        for name, (host, port) in self.services.items():
            if not reachable(host, port):
                return name
        return None

    def _beat(self, store: Any, late: float) -> bool:
        """One period: this process's counters, then, during a rendezvous, its watched
        members' counters and the rendezvous's report counter. ``late``: how far the guard's
        own wake-up overshot (a watcher that was not scheduled blames nobody for it)."""
        now = time.monotonic()
        try:
            if self.claimed():  # the group's: a second process sees it
                store.add(f"alive/g{self.group}", 1)
            store.add(f"alive/{self.replica_id}", 1)
            with self._lock:
                key, watched = self._watch_key, dict(self._watched)
            if key is None:
                return True
            for replica, (count, since) in watched.items():
                now_count = int(store.add(f"alive/{replica}", 0))
                if now_count != count or late > 0.5 * self.interval:
                    watched[replica] = (now_count, now)
                elif now - since > self.heartbeat_timeout and replica not in self._reported:
                    self._reported.add(replica)
                    store.append(f"{key}/silent", f"{replica}\n")
                    store.add(f"{key}/silent/n", 1)
            reports = int(store.add(f"{key}/silent/n", 0))
            silent: set[str] = set()
            if reports:
                silent = {r for r in store.get(f"{key}/silent").decode().split() if r}
            with self._lock:
                if self._watch_key == key:
                    self._watched.update(watched)
                    self._reports, self._silent = reports, silent
        except RuntimeError:  # the store is unreachable: the probe says for how long
            return False
        return True

    def silent(self, replicas: dict[int, str]) -> list[int]:
        """The groups of ``replicas`` (group -> replica id) reported silent in the rendezvous
        being watched: a watcher saw its liveness counter stand still for the heartbeat
        timeout."""
        with self._lock:
            silent = set(self._silent)
        return [g for g, r in sorted(replicas.items()) if g != self.group and r in silent]

    def guarded(self, op: Callable[[Any], T], members: dict[int, str], key: str = "") -> T:
        """``op(store)`` (a rendezvous of ``members``, group -> replica id, through ``store``,
        a client of the run's store of its own) in a thread of its own; RuntimeError as soon
        as a member is reported silent for the heartbeat timeout (``op`` then ends by itself
        at its own timeout, its result unused, without holding the process's own store client
        meanwhile). ``key``: a name unique to this rendezvous (the new process group's
        prefix), under which the watchers report; by default one made of the members."""
        import torch.distributed as dist

        done = threading.Event()
        out: list[Any] = []
        # The rendezvous client is made once and kept: a TCPStore connect can stall for
        # seconds when many processes connect at once, as every member does after an event.
        # Only a rendezvous given up on while its op still runs leaves its client to it.
        with self._lock:
            store, self._rendezvous_store = self._rendezvous_store, None
            if store is None and self._spare:
                store = self._spare.pop()
        if store is None:
            host, port = self.store_addr
            store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=60))
        if not key:
            key = "rdzv/" + ",".join(f"{g}={r}" for g, r in sorted(members.items()))
        now = time.monotonic()
        with self._lock:
            self._watch_key = f"{key}/watch"
            self._watched = {members[g]: (-1, now) for g in ring_watch(list(members), self.group)}
            self._reports, self._silent = 0, set()
            self._reported = set()

        def run() -> None:
            try:
                out.append((True, op(store)))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                out.append((False, exc))
            done.set()
            with self._lock:
                if self._rendezvous_store is None:
                    self._rendezvous_store = store

        thread = threading.Thread(target=run, name="spare-rendezvous", daemon=True)
        self._rendezvous.append(thread)
        thread.start()
        try:
            while not done.wait(self.interval):
                silent = self.silent(members)
                if silent:
                    raise RuntimeError(f"groups {silent} fell silent during the rendezvous")
        finally:
            with self._lock:
                self._watch_key, self._watched = None, {}
                self._reports, self._silent = 0, set()
        ok, value = out[0]
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _connect(self, out: list[Any], seconds: float) -> threading.Thread:
        """A thread that connects a store client and appends it to ``out``."""
        import torch.distributed as dist

        def run() -> None:
            try:
                host, port = self.store_addr
                wait = timedelta(seconds=seconds)
                out.append(dist.TCPStore(host, port, is_master=False, timeout=wait))
            except RuntimeError:  # unreachable or stalled: the guard tries again later
                pass

        t = threading.Thread(target=run, name="spare-connect", daemon=True)
        t.start()
        return t

    def _guard(self) -> None:
        store: Any = None
        connecting: list[threading.Thread] = []
        made: list[Any] = []
        next_probe = woke = time.monotonic()
        while not self._stop.wait(self.interval):
            late, woke = time.monotonic() - woke - self.interval, time.monotonic()
            if store is None and made:
                store = made.pop()
            beat_via = store
            if store is None and self.lost is None and self._probe() is None:
                # The guard's own client connects in a thread of its own, with a timeout above
                # the seconds a TCPStore connect can stall when many processes connect at once;
                # meanwhile the counters move through the process's own client, so that a
                # member never stands still for want of a connection. Nothing is tried while a
                # service is down (no failing calls, no flood of their warnings).
                if not any(t.is_alive() for t in connecting):
                    connecting[:] = [self._connect(made, CONNECT_SECONDS)]
                    self._connects = [t for t in self._connects if t.is_alive()] + connecting
                beat_via = self._shared
            if beat_via is not None and not self._beat(beat_via, late) and beat_via is store:
                store = None
            now = time.monotonic()
            if now < next_probe:
                continue
            next_probe = now + PROBE_SECONDS
            lost = self._probe()
            if lost is None:
                if self.lost is not None and not self._store_kept():
                    self._end(
                        f"the store {self.store_addr[0]}:{self.store_addr[1]} came back empty"
                    )
                self.lost = None
                continue
            if self.lost is None:
                self.lost, self.lost_since = lost, now
            elif now - self.lost_since >= self.service_timeout:
                self._end(f"lost the {self.lost} for {self.service_timeout:.0f} s")

    def _end(self, why: str) -> None:
        print(
            f"group {self.group}: {why}: ending this process (exit code {EXIT_SERVICE_LOST})",
            file=sys.stderr,
            flush=True,
        )
        os._exit(EXIT_SERVICE_LOST)

    def _store_kept(self) -> bool:
        """After an outage: whether the store still holds the run (a store restarted in its
        place is empty: the memberships published there are gone, and the run cannot go on)."""
        import torch.distributed as dist

        try:
            host, port = self.store_addr
            fresh = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=2))
            return bool(fresh.check([N_GROUPS_KEY]))
        except RuntimeError:
            return True  # unreachable again: the next probes decide

    def down(self) -> bool:
        """Whether a service is unreachable now (probed on the spot)."""
        if self.lost is None:
            self.lost = self._probe()
            if self.lost is not None:
                self.lost_since = time.monotonic()
        return self.lost is not None

    def retry(self, op: Callable[[], T]) -> T:
        """``op()``; when it fails while a service is down, wait until the service answers
        again (the guard ends the process once the bound has passed), then retry it; other
        errors propagate."""
        while True:
            try:
                return op()
            except RuntimeError:
                if not self.down():
                    raise
            self.pace()

    def pace(self) -> None:
        """After a failed operation: while a service is down, wait until it answers again
        (nothing is retried meanwhile: no loop of failing calls, no flood of warnings)."""
        while self.down():
            time.sleep(PROBE_SECONDS)

    def rendezvous(self) -> list[threading.Thread]:
        """The rendezvous threads of :meth:`guarded` still running (one given up on ends at
        its own timeout)."""
        self._rendezvous = [t for t in self._rendezvous if t.is_alive()]
        return list(self._rendezvous)

    def close(self) -> None:
        """Stop the guard and the watchdog (this process leaves by itself).

        The guard thread is joined (within a probe's time): a daemon thread left inside the
        store client while the interpreter finalizes is how a process aborts at exit.
        """
        self._stop.set()
        self.watchdog.close()
        if self._thread is not threading.current_thread():
            self._thread.join(self.interval + 2 * PROBE_SECONDS)
        for t in self._connects:  # none is left inside a connect as the interpreter ends
            t.join(CONNECT_SECONDS + 1.0)
