"""Worker processes watched by PID, not through their fork server.

A worker of :class:`~spare_fast.torch.SpareTrainer` is a child of ``multiprocessing``'s fork
server, not of the launcher. The launcher's ``Process`` object learns the worker's end through
a pipe the fork server writes the exit status to; when the fork server itself dies (the OOM
killer may pick any process), that pipe closes and ``Process.exitcode`` reads 255 for every
worker although they all still run. :class:`WorkerProcess` therefore asks the kernel: a Linux
``pidfd`` (``os.pidfd_open``) names the process itself, becomes readable when it ends, and
cannot be confused with a later process that reuses the PID; signals go through it too. Where
``pidfd`` is missing, ``os.kill(pid, 0)`` is the check.

The exit status still comes from the fork server while it lives. A worker also appends its
exit status to its record file just before it exits (:func:`record_exit`), which is what the
launcher reads once the fork server is gone; a worker killed by a signal after its fork server
died leaves none, and is reported as :data:`EXIT_LOST`.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import select
import signal
import time
import warnings
from typing import Any

__all__ = [
    "EXIT_LOST",
    "PRELOAD",
    "WorkerProcess",
    "forkserver_context",
    "record_exit",
    "recorded_exit",
    "start_child",
]

#: The exit status of a worker that ended after its fork server died without recording one
#: (killed by a signal): ``multiprocessing``'s own code for "status unknown".
EXIT_LOST = 255


#: Imported once in the fork server; every worker then starts as a fork of it in milliseconds
#: instead of a fresh interpreter importing torch for seconds. torch._dynamo is what the first
#: torch.optim.Optimizer() imports lazily (seconds, most of sympy).
PRELOAD = [
    "torch",
    "torch._dynamo",
    "torch.distributed",
    "numpy",
    "torchft.coordination",
    "spare_fast.torch._worker",
]


def forkserver_context() -> Any:
    """The ``multiprocessing`` "forkserver" context the workers start from, with :data:`PRELOAD`."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def record_file(run_dir: str, group: int, pid: int) -> str:
    """The record file of worker ``pid`` of ``group``."""
    return os.path.join(run_dir, f"g{group}-p{pid}.jsonl")


def record_exit(run_dir: str, group: int, code: int) -> None:
    """Append this process's exit status to its record file (called just before it exits)."""
    line = json.dumps({"kind": "exit", "code": int(code), "group": group, "pid": os.getpid()})
    with (
        contextlib.suppress(OSError),
        open(record_file(run_dir, group, os.getpid()), "a", encoding="utf-8") as fh,
    ):
        fh.write(line + "\n")


def recorded_exit(run_dir: str, group: int, pid: int) -> int | None:
    """The exit status worker ``pid`` recorded, or None."""
    try:
        with open(record_file(run_dir, group, pid), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        with contextlib.suppress(ValueError, KeyError, TypeError):
            rec = json.loads(line)
            if rec.get("kind") == "exit":
                return int(rec["code"])
    return None


def start_child(child: Any) -> None:
    """Start ``child``; a fork server or resource tracker that died is started again.

    ``multiprocessing`` restarts both helpers on the next start and warns that the dead
    tracker's resources may leak; the launcher registers none there, so the warning is noise.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="resource_tracker: process died unexpectedly")
        child.start()


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except ProcessLookupError:
        return -1  # already gone (and reaped)
    except OSError:  # kernel without pidfd
        return None


class WorkerProcess:
    """One started worker process, alive until the kernel says it is gone.

    Args:
        proc: The started ``multiprocessing`` process.
        group: Its group.
        run_dir: The run folder holding its record file.
    """

    def __init__(self, proc: Any, group: int, run_dir: str) -> None:
        self.proc = proc
        self.group = int(group)
        self.run_dir = run_dir
        self.pid = int(proc.pid)
        self._fd = _pidfd(self.pid)
        self._code: int | None = None

    def alive(self) -> bool:
        """Whether the process still exists (a zombie counts as gone)."""
        if self._code is not None or self._fd == -1:
            return False
        if self._fd is not None:
            return not select.select([self._fd], [], [], 0)[0]
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        with contextlib.suppress(OSError), open(f"/proc/{self.pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        return True

    @property
    def exitcode(self) -> int | None:
        """None while the process runs; then its exit status (``-signal`` if killed)."""
        if self._code is not None:
            return self._code
        if self.alive():
            return None
        # The fork server reaps the process and reports within milliseconds; a dead fork
        # server reports EXIT_LOST at once (its pipe is closed).
        self.proc.join(2.0)
        code = self.proc.exitcode
        if code is None or code == EXIT_LOST:
            recorded = recorded_exit(self.run_dir, self.group, self.pid)
            code = EXIT_LOST if recorded is None else recorded
        self._code = int(code)
        self._close_fd()
        return self._code

    def kill(self) -> None:
        """SIGKILL the process if it still runs."""
        if not self.alive():
            return
        sender = getattr(signal, "pidfd_send_signal", None)
        with contextlib.suppress(ProcessLookupError):
            if self._fd is not None and self._fd >= 0 and sender is not None:
                sender(self._fd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the process is gone; whether it is."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.alive():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            if self._fd is not None and self._fd >= 0:
                select.select([self._fd], [], [], left)
            else:
                time.sleep(0.01 if left is None else min(0.01, left))
        return True

    def end(self, timeout: float = 30.0) -> None:
        """Kill the process and wait until it is gone (it must not outlive its epoch)."""
        self.kill()
        if not self.wait(timeout):
            raise RuntimeError(f"group {self.group}: worker pid {self.pid} survived SIGKILL")

    def _close_fd(self) -> None:
        if self._fd is not None and self._fd >= 0:
            os.close(self._fd)
        self._fd = -1 if self._fd is not None else None

    def close(self) -> None:
        """Release the process object and its pidfd (the process must be gone)."""
        _ = self.exitcode
        self._close_fd()
        with contextlib.suppress(ValueError):
            self.proc.close()
