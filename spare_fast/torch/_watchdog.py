"""A per-process watchdog: a frozen group process is killed from outside within a bound.

A process that is alive but silent (``kill -STOP``, a hang in a call that holds the
interpreter) keeps its sockets open: the survivors' collective would wait for it until the
collective timeout, and under ``torchrun`` its agent would wait for ever. Each group process
therefore starts a watchdog: a tiny separate Python process (standard library only, no torch)
that the group process beats through a pipe from a thread of its own every
``heartbeat_interval``. When no beat arrives for ``timeout`` seconds (the lighthouse's heartbeat
timeout: the same silence after which the lighthouse counts the process dead) the watchdog
prints one line and sends ``SIGKILL``. The frozen process then fails like a killed one: its
sockets close, the survivors' collective fails at once, and its ``torchrun`` sees the worker
end. The watchdog ends with its process (the pipe closes) and dies with it
(``PR_SET_PDEATHSIG``).

The heartbeat timeout reaches the group processes through the run's store (key
:data:`HEARTBEAT_KEY`, written by whoever serves the lighthouse: ``spare-fast lighthouse``,
:class:`~spare_fast.torch.SpareTrainer`); without it the lighthouse command's default applies.

Run as a script (``python -I _watchdog.py FD PID TIMEOUT GROUP``) it is the watchdog itself.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

__all__ = ["HEARTBEAT_KEY", "Watchdog", "heartbeat_timeout", "publish_heartbeat_timeout"]

#: Store key holding the lighthouse's heartbeat timeout in milliseconds.
HEARTBEAT_KEY = "run/heartbeat_timeout_ms"
#: The heartbeat timeout assumed when the store does not say (``spare-fast lighthouse``'s).
DEFAULT_TIMEOUT = 2.0


def publish_heartbeat_timeout(store: Any, seconds: float) -> None:
    """Tell the run's processes the lighthouse's heartbeat timeout (through its store)."""
    store.set(HEARTBEAT_KEY, str(int(round(float(seconds) * 1000))))


def heartbeat_timeout(store: Any) -> float:
    """The lighthouse's heartbeat timeout in seconds, as published in ``store``."""
    try:
        if store.check([HEARTBEAT_KEY]):
            return max(int(store.get(HEARTBEAT_KEY).decode()) / 1000.0, 0.05)
    except (RuntimeError, ValueError):  # an unreadable value: the default, not a crash
        pass
    return DEFAULT_TIMEOUT


class Watchdog:
    """The watchdog process of this process, and the thread that beats it.

    Parameters
    ----------
    group : int
        This process's group (named in the watchdog's line).
    timeout : float
        Seconds of silence after which the watchdog kills this process.
    interval : float
        Seconds between beats (well under ``timeout``).
    """

    def __init__(self, group: int, timeout: float, interval: float) -> None:
        self.group = int(group)
        self.timeout = float(timeout)
        self.interval = min(float(interval), self.timeout / 4)
        self._stop = threading.Event()
        read, self._write = os.pipe()
        try:
            self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and file
                [
                    sys.executable,
                    "-I",
                    os.path.abspath(__file__),
                    str(read),
                    str(os.getpid()),
                    repr(self.timeout),
                    str(self.group),
                ],  # fmt: skip
                pass_fds=(read,),
                stdin=subprocess.DEVNULL,
            )
        finally:
            os.close(read)
        os.set_blocking(self._write, False)
        self._thread = threading.Thread(target=self._beat, name="spare-watchdog", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.is_set():
            try:
                os.write(self._write, b".")
            except BlockingIOError:  # the watchdog is behind on reading: it saw beats anyway
                pass
            except OSError:  # the watchdog is gone: nothing to beat
                return
            self._stop.wait(self.interval)

    def close(self) -> None:
        """Stop beating and end the watchdog (this process is about to leave by itself)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(1.0)
        os.close(self._write)  # end of file: the watchdog exits
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl
        sys.exit(0)


def _watch(fd: int, pid: int, timeout: float, group: int) -> int:
    """The watchdog's loop: exit when ``pid`` closes the pipe, kill it after silence."""
    _die_with_parent(pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is for the worker, not for us
    last = time.monotonic()
    while True:
        left = last + timeout - time.monotonic()
        if left > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                if not os.read(fd, 4096):
                    return 0  # the process ended or closed the pipe: nothing to watch
                last = time.monotonic()
            continue
        print(
            f"spare_fast watchdog: group {group} process {pid} silent for {timeout:.2f} s "
            "(stopped or hung): killing it",
            file=sys.stderr,
            flush=True,
        )
        try:
            os.kill(pid, signal.SIGKILL)  # ends a stopped process too
        except ProcessLookupError:
            pass
        return 0


if __name__ == "__main__":
    sys.exit(_watch(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])))
