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
import time
from typing import Any
from urllib.parse import urlparse

__all__ = ["N_GROUPS_KEY", "check_reachable", "claim"]

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


def claim(store: Any, group: int, n_groups: int, watch: float) -> None:
    """Check this process may hold ``group`` in a run of ``n_groups`` groups.

    Raises
    ------
    ValueError
        If the run was started with another number of groups.
    RuntimeError
        If a live process already holds ``group`` (its liveness counter moved during
        ``watch`` seconds).
    """
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
