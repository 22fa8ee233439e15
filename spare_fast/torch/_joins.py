"""Checks that make a group process that cannot join fail fast, with a line naming it.

Run by the membership when it connects, before any quorum:

- :func:`check_reachable`: the lighthouse and the store answer a TCP connection (a wrong
  address fails in seconds, not after the quorum timeout);
- :func:`claim`: the run's group count is the same as this process's (the first process
  records it in the store), and no live process holds this group already (its liveness counter
  ``alive/g<group>``, see :mod:`spare_fast.torch._bounds`, does not move while this process
  watches it).
"""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

__all__ = ["N_GROUPS_KEY", "Claim", "check_reachable", "claim"]

#: Store key holding the run's number of groups.
N_GROUPS_KEY = "run/n_groups"


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
        if self.before == 0:  # never held by a process
            self._done.set()
            return
        self.store_addr, self.watch = store_addr, float(watch)
        threading.Thread(target=self._watch, name="spare-claim", daemon=True).start()

    def _watch(self) -> None:
        import torch.distributed as dist

        try:
            time.sleep(self.watch)
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

    def check(self, block: bool = False) -> None:
        """Raise RuntimeError if a live process holds this group (``block``: wait for the
        answer)."""
        if block:
            self._done.wait()
        if self.duplicate:
            raise RuntimeError(
                f"group {self.group} is alive in another process: this process stands down "
                "(start a group's process only once its previous one is dead)"
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
