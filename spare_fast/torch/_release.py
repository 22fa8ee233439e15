"""Releasing what a group process started, on every path out of it.

A :class:`~spare_fast.torch.SpareGroup` starts threads (the heartbeat, the service guard, the
join counter's poller, the claim watch, one per watched rendezvous), a watchdog process, store
and lighthouse clients and process groups. A daemon thread still inside a native call (a
store request, a lighthouse call, a gloo rendezvous) when the interpreter finalizes is ended
by ``pthread_exit`` as it tries to take the interpreter back; the forced unwind through C++
frames then aborts the process (``terminate called without an active exception``, ``FATAL:
exception not rethrown``, SIGABRT) instead of letting it exit with the code its script chose.

So whatever a group started is released before finalization, on every path:

- :meth:`SpareGroup.close` (and ``with SpareGroup(...) as group:``, after an exception too);
- :meth:`SpareGroup.start` when it raises (a refusal, a formation timeout);
- a script that never calls ``close()``: :func:`on_exit` registers the release with
  :class:`weakref.finalize`, which runs it when the group is collected or, at the latest, from
  :mod:`atexit`, which the interpreter runs after the main thread's exception (``SystemExit``,
  ``KeyboardInterrupt``, any other) and before it finalizes.

The release stops every thread and joins it within the bound of the call it may be in (a
heartbeat call, a store request, a rendezvous's collective timeout), then drops the clients
and process groups from the calling thread, never at interpreter teardown.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["join_threads", "on_exit"]


def on_exit(owner: object, release: Callable[[], None]) -> Callable[[], None]:
    """Run ``release`` once: when called, when ``owner`` is collected, or at interpreter exit.

    Parameters
    ----------
    owner : object
        The object whose resources ``release`` frees; it must not be reachable from
        ``release`` (else it lives until exit, still released then).
    release : callable
        Frees the resources; exceptions are its own to handle.

    Returns
    -------
    callable
        Calling it runs ``release`` now (later calls do nothing).

    Examples
    --------
    >>> class Owner: ...
    >>> done = []
    >>> release = on_exit(Owner(), lambda: done.append(1))  # collected at once: released
    >>> release(); done
    [1]
    """
    return weakref.finalize(owner, release)


def join_threads(threads: Iterable[threading.Thread | None], timeout: float) -> list[str]:
    """Join ``threads`` (the calling thread and None skipped) within ``timeout`` seconds in all.

    Returns
    -------
    list of str
        The names of those still alive after it.
    """
    deadline = time.monotonic() + float(timeout)
    left: list[str] = []
    me = threading.current_thread()
    for thread in threads:
        if thread is None or thread is me:
            continue
        thread.join(max(deadline - time.monotonic(), 0.0))
        if thread.is_alive():
            left.append(thread.name)
    return left


def release_group(membership: Any, collectives: Any, ranks: Any, ledger: Any) -> None:
    """Release a group's collaborators in a safe order.

    The threads first (they use the clients): the membership's heartbeat, guard, watchdog,
    poller, claim watch and rendezvous threads are stopped and joined; then the process group
    is aborted, the ledger closed, the store and lighthouse clients dropped, and the group's
    own process groups destroyed.
    """
    try:
        membership.close()
        membership.release()
    finally:
        # Waits (at most the collective timeout) for a collective given up on to end: its
        # process group is released only then.
        collectives.release()
        if ledger is not None:
            ledger.close()
        ranks.close()
