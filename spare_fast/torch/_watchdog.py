"""A per-process watchdog: a frozen group process is killed from outside within a bound.

A process that is alive but silent (``kill -STOP``, a hang in a call that holds the
interpreter) keeps its sockets open: the survivors' collective would wait for it until the
collective timeout, and under ``torchrun`` its agent would wait for ever. Each group process
therefore starts a watchdog: a tiny separate Python process (standard library only, no torch)
that the group process beats through a pipe from a thread of its own every
``heartbeat_interval``. The frozen process then fails like a killed one: its sockets close,
the survivors' collective fails at once, and its ``torchrun`` sees the worker end. The
watchdog ends with its process (the pipe closes) and dies with it (``PR_SET_PDEATHSIG``).

**Starvation is not a hang.** On a host with more runnable threads than CPUs (a hundred
processes importing torch on two cores) a healthy process's beat can come late. The watchdog
therefore counts silence only while it is unexplained (:class:`Silence`), as the Linux
soft-lockup and hung-task detectors do:

- a period in which the watched process made CPU progress or had a runnable thread while the
  host's run queue was longer than its CPUs counts nothing: the process is starved, not hung;
- the same on a host with CPUs to spare counts (a spin that holds the interpreter is a hang),
  but only for the time the watchdog was awake to see: when its own sleep overshot, the
  watchdog was not scheduled either, and blames nobody for that;
- a stopped process (``SIGSTOP``, a tracer) and a process that neither ran nor waited for a
  CPU (a deadlock) count in full: no scheduler delay explains their silence.

The process is killed once the unexplained silence reaches ``timeout`` (a stopped or
deadlocked process within the timeout plus one check period, :func:`check_period`), or once
the whole silence reaches :data:`STARVED_LIMIT` times ``timeout`` whatever explains it. It
prints one line and sends ``SIGKILL``.

The heartbeat timeout reaches the group processes through the run's store (key
:data:`HEARTBEAT_KEY`, written by whoever serves the lighthouse: ``spare-fast lighthouse``,
:class:`~spare_fast.torch.SpareTrainer`); without it the lighthouse command's default applies.
A process that holds several memberships (the control-plane benchmark) has one watchdog
(:func:`process_watchdog`).

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

__all__ = [
    "HEARTBEAT_KEY",
    "STARVED_LIMIT",
    "Silence",
    "Watchdog",
    "check_period",
    "heartbeat_timeout",
    "process_watchdog",
    "publish_heartbeat_timeout",
]

#: Store key holding the lighthouse's heartbeat timeout in milliseconds.
HEARTBEAT_KEY = "run/heartbeat_timeout_ms"
#: The heartbeat timeout assumed when the store does not say (``spare-fast lighthouse``'s).
DEFAULT_TIMEOUT = 2.0
#: A silent process that the host keeps starving is killed after this many timeouts anyway.
STARVED_LIMIT = 10.0


def check_period(timeout: float) -> float:
    """Seconds between two checks of a silent process: an eighth of the timeout, within
    [0.01, 0.25] s."""
    return min(max(float(timeout) / 8.0, 0.01), 0.25)


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


class _Lease:
    """One membership's hold on its process's watchdog (:func:`process_watchdog`)."""

    def __init__(self, dog: Watchdog) -> None:
        self.dog = dog
        self.timeout = dog.timeout
        self._held = True

    def close(self) -> None:
        """Let go; the last holder of the process's watchdog ends it."""
        with _shared_lock:
            if not self._held:
                return
            self._held = False
            entry = _shared.get(os.getpid())
            if entry is None or entry[0] is not self.dog:
                return
            if entry[1] > 1:
                _shared[os.getpid()] = (entry[0], entry[1] - 1)
                return
            del _shared[os.getpid()]
        self.dog.close()


_shared: dict[int, tuple[Watchdog, int]] = {}
_shared_lock = threading.Lock()


def process_watchdog(group: int, timeout: float, interval: float) -> _Lease:
    """This process's watchdog, started by the first caller and ended by the last
    :meth:`~_Lease.close`: one watchdog per process, however many memberships it holds (a
    watchdog kills the whole process, so one is all a process can use)."""
    with _shared_lock:
        entry = _shared.get(os.getpid())
        if entry is None:
            entry = (Watchdog(group, timeout, interval), 0)
        _shared[os.getpid()] = (entry[0], entry[1] + 1)
        return _Lease(entry[0])


class Silence:
    """How much of a process's silence is unexplained (see the module's notes).

    Parameters
    ----------
    timeout : float
        Unexplained seconds after which the process is to be killed.
    period : float
        Seconds the watchdog means to sleep between two checks.
    limit : float
        Seconds of silence, explained or not, after which it is killed anyway.
    """

    def __init__(self, timeout: float, period: float, limit: float) -> None:
        self.timeout, self.period, self.limit = float(timeout), float(period), float(limit)
        self.unexplained = 0.0
        self.total = 0.0

    def beat(self) -> None:
        """A beat arrived: no silence."""
        self.unexplained = self.total = 0.0

    def check(self, slept: float, stopped: bool, ran: bool, host_busy: bool) -> bool:
        """Account one check; returns whether the process is to be killed.

        Args:
            slept: Seconds since the previous check (more than :attr:`period` when the
                watchdog itself was not scheduled in time).
            stopped: The process is stopped (``SIGSTOP``, a tracer).
            ran: The process used CPU since the previous check, or has a runnable thread.
            host_busy: The host has more runnable threads than CPUs.
        """
        self.total += slept
        if stopped or not ran:
            # Stopped, or neither ran nor waited for a CPU: no scheduler delay explains it,
            # however late this check came.
            self.unexplained += slept
        elif not host_busy:
            # Running on a host with CPUs to spare; a late watchdog saw only its own period.
            self.unexplained += min(slept, self.period)
        return self.unexplained >= self.timeout or self.total >= self.limit


def _stat(path: str) -> list[bytes] | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _sample(pid: int) -> tuple[bool, int, bool]:
    """(stopped, CPU ticks used by all its threads, its main thread runnable) of ``pid``
    from ``/proc/PID/stat`` (False, 0, False where /proc cannot tell): one small read, however
    many threads the process has."""
    fields = _stat(f"/proc/{pid}/stat")
    if fields is None:
        return False, 0, False
    state = fields[0]
    return state in (b"T", b"t"), int(fields[11]) + int(fields[12]), state == b"R"


def _any_runnable(pid: int) -> bool:
    """Whether any thread of ``pid`` is runnable (read only when the cheap sample left it in
    doubt)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return any(
        (f := _stat(f"/proc/{pid}/task/{tid}/stat")) is not None and f[0] == b"R" for tid in tasks
    )


def _host_busy() -> bool:
    """Whether more threads are runnable than the host has CPUs (/proc/loadavg)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return running > (os.cpu_count() or 1)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl
        sys.exit(0)


def _watch(fd: int, pid: int, timeout: float, group: int) -> int:
    """The watchdog's loop: exit when ``pid`` closes the pipe, kill it after a silence that
    starvation does not explain (:class:`Silence`)."""
    _die_with_parent(pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is for the worker, not for us
    period = check_period(timeout)
    silence = Silence(timeout, period, STARVED_LIMIT * timeout)
    checked = time.monotonic()
    ticks = _sample(pid)[1]
    while True:
        ready, _, _ = select.select([fd], [], [], period)
        now = time.monotonic()
        if ready:
            if not os.read(fd, 4096):
                return 0  # the process ended or closed the pipe: nothing to watch
            silence.beat()
            checked, ticks = now, _sample(pid)[1]
            continue
        stopped, now_ticks, runnable = _sample(pid)
        ran = runnable or now_ticks > ticks or (not stopped and _any_runnable(pid))
        slept, checked, ticks = now - checked, now, now_ticks
        if not silence.check(slept, stopped, ran, _host_busy()):
            continue
        why = "stopped" if stopped else "hung" if silence.unexplained >= timeout else "starved"
        print(
            f"spare_fast watchdog: group {group} process {pid} silent for "
            f"{silence.total:.2f} s ({why}): killing it",
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
