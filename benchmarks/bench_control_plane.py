"""The executor's control plane at hundreds of groups (pytest-benchmark, and a script).

Run the table of the documentation's "Scale" page (docs/guide/scale.md) with::

    python benchmarks/bench_control_plane.py --sizes 16,64,256,1024 --kills 20 \\
        --json docs/guide/scale.json --plot docs/guide/scale.png

As a benchmark (N = 16 and 64 unless ``SPARE_FAST_CP_SIZES`` names others)::

    python -m pytest benchmarks/bench_control_plane.py --benchmark-enable --benchmark-only -s

**What runs.** N members of the real membership code, unchanged: each is a
:class:`~spare_fast.torch._membership.Membership` built from a
:class:`~spare_fast.torch._settings.MemberSettings`, which connects (lighthouse heartbeats,
the store liveness guard, the process's shared watchdog), forms the run (``form`` with the
layout's coverage check, ``adopt``), guards each membership's rendezvous through
``Bounds.guarded`` as ``Recovery.build_pg`` does, and after each failure asks for a
shrink-only quorum, checks its participants (``valid``), runs the real controller
(:class:`~spare_fast.torch._decisions.Decider`) and publishes the view (``adopt``), as
:class:`~spare_fast.torch._recovery.Recovery` does. The quorum data carries the run identity a
group sends (:func:`~spare_fast.torch._identity.fingerprint`, static fields; ``--identity
none`` leaves it out, to tell its cost). The lighthouse and the store are the real ones,
served by ``spare-fast lighthouse`` in a process of their own so that their CPU is read from
``/proc``. For each N a fresh harness process runs the service, the kills and the
measurements; the members are threads of ``--procs`` worker processes it starts (by default
one below 128 members, else one per 64: 16 at N = 1,024), interleaved (member g in worker
g mod P, so that ring neighbours and a type's holders sit in different processes). They
connect ``--connecting`` (32) at a time over all workers and ask to form once all have
connected, as N processes launched together on N hosts would.

**What it leaves out: the data plane.** A member's step is a sleep of the step time followed
by a barrier of the current members held in the harness; there is no gradient compute, no
all-reduce, no process-group rebuild (its rendezvous is a second barrier, watched by the real
guard) and no heal. The barriers are held in the harness process for every worker
(:class:`Barriers`: each worker sends its members' arrivals and aborts through a pipe; a
barrier passes, or breaks, for every worker at once). A kill stops a
member abruptly: its :meth:`Membership.close` runs without telling anybody (its lighthouse
heartbeats and store beats stop) and its barrier breaks at once, so every survivor waiting in
it fails at the same moment, as gloo's ring does when a peer's socket closes; those still in
their sleep fail when they reach it. Kills fall uniformly over the step, never on two groups
that hold a type together (no wipe-out); the small N run a fresh run once their kills would
leave too few groups.

**What it reports, for each N.**

- formation: from the moment all N members have connected to the last of them holding the
  formed quorum (the connects are reported apart: one interpreter makes them for N hosts);
- kill to agreed decision, median and p99 over the kills: the lighthouse's creation time of
  the quorum that excludes the dead member (every survivor receives that same quorum), and
  when each survivor adopted it (pooled over survivors and kills), both from the kill; and
  the CPU one survivor spends checking and adopting the quorum (``valid``, the controller,
  ``adopt``);
- requests per second in a window of failure-free steps, counted in each worker process (and
  summed) by wrapping the real boundaries (``torch.distributed.TCPStore``, torchft's
  ``LighthouseClient`` and ``socket.create_connection``, the services' reachability probes):
  at the store, at the lighthouse, and per member;
- the service process's CPU in that window (utime + stime from ``/proc/PID/stat``), and the
  worker processes' (the members' own CPU, what N hosts would share);
- memory per member: the worker processes' RSS growth from before the members started to
  after they formed, summed, over N;
- the host's load average at the start, in the window, at each kill and at the end (the
  machine may be shared);
- the store's capacity in the same run: 16 client threads calling ``add`` for 2 s against the
  same store, before the members start and once they are gone (the better of the two); the
  request rates are also given as a share of it.

A live member left out of a quorum (its heartbeats came late to the lighthouse) stands down
as a group process does (its membership closes); the kill then counts as not agreed.

Nothing asserts a time. The benchmark asserts that every kill was agreed: every survivor
adopted one quorum, the same, which excludes the killed member and no live one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Defaults of the script and of the benchmark (seconds unless named otherwise).
HEARTBEAT_TIMEOUT = 3.0
HEARTBEAT_INTERVAL = 0.5
STEP = 1.0
KILLS = 20
WINDOW = 10.0
QUORUM_POLL = 10.0
QUORUM_TIMEOUT = 300.0
#: The lighthouse's longest wait for a heartbeating member that has not joined a quorum.
JOIN_TIMEOUT_MS = 120_000
#: Members of the harness process that connect at the same time.
CONNECTING = 32
#: The store capacity probe: client threads, seconds.
CAPACITY_THREADS, CAPACITY_SECONDS = 16, 2.0


def _missing() -> str | None:
    from spare_fast.testing.extras import torch_missing

    return torch_missing()


# ---------------------------------------------------------------------------- counting
class Counts:
    """Calls through the wrapped boundaries, by kind (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.n: dict[str, int] = {}
        #: port -> the kind of probe a connection to it counts as (the current service's).
        self.ports: dict[int, str] = {}

    def watch(self, store_port: int, lighthouse_port: int) -> None:
        """Count connections to these ports as probes of the store and of the lighthouse."""
        self.ports = {store_port: "probe_store", lighthouse_port: "probe_lighthouse"}

    def add(self, kind: str) -> None:
        with self._lock:
            self.n[kind] = self.n.get(kind, 0) + 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.n)


#: TCPStore calls that are one request each at the store.
STORE_CALLS = (
    "add", "get", "set", "check", "compare_set", "wait", "delete_key", "num_keys",
    "multi_get", "multi_set", "append", "queue_push", "queue_pop", "queue_len",
)  # fmt: skip


def install_counters(counts: Counts, store_port: int, lighthouse_port: int) -> None:
    """Count every store request, lighthouse call and service probe of this process.

    ``torch.distributed.TCPStore`` becomes a subclass that counts its requests (``store``)
    and its connections (``store_connect``); torchft's ``LighthouseClient`` a proxy that
    counts ``heartbeat`` and ``quorum`` calls (``lighthouse_heartbeat``,
    ``lighthouse_quorum``) and its connections; ``socket.create_connection`` to either
    service counts as a probe (``probe_store``, ``probe_lighthouse``). Test-side wrappers of
    real boundaries: the runtime code runs unchanged through them.
    """
    import torch.distributed as dist
    import torchft.coordination as coordination

    real_store = dist.TCPStore

    def counted(name: str) -> Callable[..., Any]:
        method = getattr(real_store, name)

        def call(self: Any, *args: Any, **kw: Any) -> Any:
            counts.add("store")
            return method(self, *args, **kw)

        call.__name__ = name
        return call

    namespace: dict[str, Any] = {n: counted(n) for n in STORE_CALLS if hasattr(real_store, n)}

    def init(self: Any, *args: Any, **kw: Any) -> None:
        counts.add("store_connect")
        real_store.__init__(self, *args, **kw)

    namespace["__init__"] = init
    dist.TCPStore = type("CountingTCPStore", (real_store,), namespace)  # type: ignore[misc]

    real_client = coordination.LighthouseClient

    class CountingLighthouseClient:
        def __init__(self, *args: Any, **kw: Any) -> None:
            counts.add("lighthouse_connect")
            self._client = real_client(*args, **kw)

        def heartbeat(self, *args: Any, **kw: Any) -> Any:
            counts.add("lighthouse_heartbeat")
            return self._client.heartbeat(*args, **kw)

        def quorum(self, *args: Any, **kw: Any) -> Any:
            counts.add("lighthouse_quorum")
            return self._client.quorum(*args, **kw)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._client, name)

    coordination.LighthouseClient = CountingLighthouseClient  # type: ignore[misc]

    real_connect = socket.create_connection
    counts.watch(store_port, lighthouse_port)

    def create_connection(address: Any, *args: Any, **kw: Any) -> socket.socket:
        kind = counts.ports.get(int(address[1]))
        if kind is not None:
            counts.add(kind)
        return real_connect(address, *args, **kw)

    socket.create_connection = create_connection  # type: ignore[assignment]


def store_requests(c: dict[str, int]) -> int:
    return c.get("store", 0) + c.get("store_connect", 0)


def lighthouse_requests(c: dict[str, int]) -> int:
    return sum(c.get(k, 0) for k in ("lighthouse_heartbeat", "lighthouse_quorum",
                                      "lighthouse_connect"))  # fmt: skip


def probes(c: dict[str, int]) -> int:
    return c.get("probe_store", 0) + c.get("probe_lighthouse", 0)


# ---------------------------------------------------------------------------- the service
def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid`` in seconds (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes() -> int:
    """This process's resident set size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


@dataclass
class Service:
    """``spare-fast lighthouse`` in a process of its own."""

    proc: subprocess.Popen[str]
    lighthouse_addr: str
    store_addr: tuple[str, int]

    @property
    def lighthouse_port(self) -> int:
        return int(self.lighthouse_addr.rsplit(":", 1)[1])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _die_with_parent() -> None:
    """In the service's process before it runs: SIGKILL when the harness process dies (a
    harness killed by its watchdog or a timeout leaves no service behind)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def service(heartbeat_timeout: float, tick_ms: int = 20) -> Iterator[Service]:
    env = dict(os.environ, RUST_LOG="warn")
    cmd = [
        sys.executable, "-m", "spare_fast", "lighthouse", "--bind", "127.0.0.1:0",
        "--store-port", "0", "--heartbeat-timeout-ms", str(int(heartbeat_timeout * 1000)),
        "--join-timeout-ms", str(JOIN_TIMEOUT_MS), "--quorum-tick-ms", str(tick_ms),
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT, preexec_fn=_die_with_parent
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()  # "lighthouse http://H:P  store H:P  (...)"
        if len(line) < 4 or line[0] != "lighthouse":
            raise RuntimeError(f"spare-fast lighthouse did not start: {' '.join(line)!r}")
        host, port = line[3].rsplit(":", 1)
        yield Service(proc, line[1], (host, int(port)))
    finally:
        Service(proc, "", ("", 0)).stop()


def store_capacity(addr: tuple[str, int], store_cls: Any, threads: int, seconds: float) -> float:
    """``add`` requests per second that ``threads`` client threads get from the store (each
    counts its own ``seconds`` from the moment all have connected)."""
    done = [0] * threads
    start = threading.Barrier(threads)

    def hammer(i: int) -> None:
        s = store_cls(addr[0], addr[1], is_master=False, timeout=timedelta(seconds=60))
        start.wait()
        n, t_end = 0, time.monotonic() + seconds
        while time.monotonic() < t_end:
            s.add(f"capacity/{i}", 1)
            n += 1
        done[i] = n

    ts = [threading.Thread(target=hammer, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(done) / seconds


# ---------------------------------------------------------------------------- barriers
#: Suffix of the name of a rendezvous's stand-in barrier (its passes are not steps).
RENDEZVOUS = "/rendezvous"


class Link:
    """One end of a pipe between the harness and a worker process: tuples, sent from any
    thread."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._lock = threading.Lock()

    def send(self, *msg: Any) -> None:
        with self._lock:
            with contextlib.suppress(OSError, EOFError, ValueError):  # the other end is gone
                self.conn.send(msg)

    def recv(self) -> tuple[Any, ...]:
        return tuple(self.conn.recv())


class Barriers:
    """Every barrier of the run by name, held in the harness process for all the worker
    processes: the steps' all-reduce stand-ins (one per membership, cyclic) and the
    rendezvous stand-ins.

    A worker sends ``arrive`` when one of its members waits in a barrier and ``abort`` when
    one breaks it; a barrier passes for every worker at once when all its parties have
    arrived, and breaks for every worker at once (and for good, as ``threading.Barrier``
    does) when one party aborts it. The messages to the workers go out under one lock, so
    every worker sees one barrier's passes and its break in the same order.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.links: list[Link] = []
        self._state: dict[str, list[int]] = {}  # name -> [parties, arrived, broken]
        self.step_passed = threading.Condition()
        self.steps_passed = 0

    def arrive(self, link: Link, name: str, parties: int) -> None:
        with self._lock:
            s = self._state.setdefault(name, [parties, 0, 0])
            if s[2]:
                link.send("broken", name)
                return
            s[1] += 1
            if s[1] < s[0]:
                return
            s[1] = 0
            for w in self.links:
                w.send("pass", name)
        if not name.endswith(RENDEZVOUS):
            with self.step_passed:
                self.steps_passed += 1
                self.step_passed.notify_all()

    def abort(self, name: str, parties: int = 0) -> None:
        with self._lock:
            s = self._state.setdefault(name, [parties, 0, 0])
            if s[2]:
                return
            s[2] = 1
            for w in self.links:
                w.send("broken", name)

    def abort_all(self) -> None:
        with self._lock:
            names = list(self._state)
        for name in names:
            self.abort(name)

    def wait_step(self, timeout: float) -> bool:
        """Wait for the next step barrier of the current members to pass."""
        with self.step_passed:
            seen = self.steps_passed
            return self.step_passed.wait_for(lambda: self.steps_passed > seen, timeout)


class LocalBarriers:
    """A worker process's side of :class:`Barriers`."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self._cond = threading.Condition()
        self._passes: dict[str, int] = {}
        self._broken: set[str] = set()
        self._names: set[str] = set()

    def wait(self, name: str, parties: int, timeout: float) -> None:
        """Wait until the barrier passes; BrokenBarrierError when it breaks (or times out:
        it then breaks for every party, as ``threading.Barrier`` does)."""
        with self._cond:
            if name in self._broken:
                raise threading.BrokenBarrierError
            self._names.add(name)
            seen = self._passes.get(name, 0)
        # Sent outside the lock: this barrier cannot pass before the harness counted it.
        self.link.send("arrive", name, parties)
        with self._cond:
            self._cond.wait_for(
                lambda: self._passes.get(name, 0) > seen or name in self._broken, timeout
            )
            if self._passes.get(name, 0) > seen:
                return
            timed_out = name not in self._broken
        if timed_out:
            self.abort(name, parties)
        raise threading.BrokenBarrierError

    def abort(self, name: str, parties: int = 0) -> None:
        """Break the barrier: at once for this process's waiters, then for every worker's."""
        self.broke(name)
        self.link.send("abort", name, parties)

    def passed(self, name: str) -> None:
        with self._cond:
            self._passes[name] = self._passes.get(name, 0) + 1
            self._cond.notify_all()

    def broke(self, name: str) -> None:
        with self._cond:
            self._broken.add(name)
            self._cond.notify_all()

    def abort_all(self) -> None:
        with self._cond:
            self._broken.update(self._names)
            self._cond.notify_all()


class Barrier:
    """The stand-in of one collective, as a member sees it (``wait`` and ``abort``)."""

    def __init__(self, local: LocalBarriers, name: str, parties: int) -> None:
        self.local, self.name, self.parties = local, name, parties

    def wait(self, timeout: float) -> None:
        self.local.wait(self.name, self.parties, timeout)

    def abort(self) -> None:
        self.local.abort(self.name, self.parties)


# ---------------------------------------------------------------------------- members
@dataclass
class Adoption:
    """One survivor's adoption of a shrink-only quorum."""

    quorum_id: int
    created: float  # the lighthouse's creation time (wall clock)
    adopted: float  # when this member had adopted it (wall clock)
    cpu: float  # this member's CPU seconds for valid(), the controller and adopt()
    dead: tuple[int, ...]


@dataclass
class Addresses:
    lighthouse_addr: str
    store_addr: tuple[str, int]


class Local:
    """The members one worker process holds (a share of the run's N), and its link to the
    harness."""

    def __init__(self, link: Link, n: int, groups: list[int], svc: Addresses, args: Any) -> None:
        from spare_fast.layout import Layout
        from spare_fast.torch._identity import fingerprint

        self.link = link
        self.svc = svc
        self.n = n
        self.args = args
        self.layout = Layout.cyclic(n, 2)
        self.identity: dict[str, Any] | None = None
        if args.identity == "full":
            self.identity = fingerprint(self.layout, seed=0, steps=1_000_000, ranks=1)
        self.barriers = LocalBarriers(link)
        self.stopping = threading.Event()
        #: The members connecting at once in this process (the harness's share of
        #: ``--connecting``): one process stands in for many hosts, whose connects would not
        #: queue for one interpreter.
        self.starting = threading.BoundedSemaphore(max(1, args.connecting // args.procs_used))
        #: Set when the harness says every member of the run has connected: then all ask to
        #: form the run, as processes started together on N hosts would.
        self.launched = threading.Event()
        self.members = {g: Member(self, g) for g in groups}

    def barrier(self, name: str, parties: int) -> Barrier:
        """The stand-in of the all-reduce (or the rendezvous) of the membership ``name``."""
        return Barrier(self.barriers, name, parties)

    def event(self, *msg: Any) -> None:
        self.link.send(*msg)

    def error(self, text: str) -> None:
        self.link.send("error", text)

    def serve(self, commands: Any, counts: Counts) -> None:
        """The harness's commands, in order (the pipe's reader hands them over)."""
        while True:
            msg = commands.get()
            kind = msg[0]
            if kind == "start":
                for m in self.members.values():
                    m.thread.start()
            elif kind == "launch":
                self.launched.set()
            elif kind == "kill":
                t = self.members[msg[2]].kill()
                self.link.send("reply", msg[1], t)
            elif kind == "counts":
                self.link.send("reply", msg[1], (counts.snapshot(), rss_bytes(), cpu_self()))
            elif kind == "stop":
                self.close()
                self.link.send("reply", msg[1], counts.snapshot())
                return

    def close(self) -> None:
        self.stopping.set()
        self.barriers.abort_all()
        alive = [m for m in self.members.values() if m.membership and not m.dead.is_set()]
        for m in alive:
            m.dead.set()
        # Each close joins its threads (up to a beat and two probes): close them side by side.
        chunks = [alive[i::32] for i in range(32)]
        workers = [
            threading.Thread(target=lambda ms: [m.membership.close() for m in ms], args=(c,))
            for c in chunks
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for m in self.members.values():
            if m.thread.is_alive():
                m.thread.join(5.0)


def _created(quorum: Any) -> float:
    """A quorum's creation time at the lighthouse (wall clock, seconds)."""
    return float(quorum.created.seconds) + float(quorum.created.nanos) / 1e9


def cpu_self() -> float:
    """This process's utime + stime in seconds."""
    t = os.times()
    return t.user + t.system


def worker_main(conn: Any, n: int, groups: list[int], svc: Addresses, args: Any) -> None:
    """A worker process: ``groups``' members as threads, until the harness says stop."""
    import queue

    _die_with_parent()
    os.environ.setdefault("RUST_LOG", "warn")
    link = Link(conn)
    counts = Counts()
    install_counters(counts, svc.store_addr[1], int(svc.lighthouse_addr.rsplit(":", 1)[1]))
    local = Local(link, n, groups, svc, args)
    link.send("ready", rss_bytes())
    commands: queue.Queue[tuple[Any, ...]] = queue.Queue()
    server = threading.Thread(target=local.serve, args=(commands, counts), daemon=True)
    server.start()
    # This thread only reads and hands over: it never sends (the harness may be sending to
    # this process while this process's own sends wait for the harness to read).
    code = 0
    while server.is_alive():
        try:
            msg = link.recv()
        except (EOFError, OSError):  # the harness is gone
            code = 1
            break
        if msg[0] == "pass":
            local.barriers.passed(msg[1])
        elif msg[0] == "broken":
            local.barriers.broke(msg[1])
        else:
            commands.put(msg)
            if msg[0] == "stop":
                server.join()
    sys.stdout.flush()
    sys.stderr.flush()
    # Straight out: a daemon thread left inside a torch or torchft client while the
    # interpreter finalizes is how a process aborts at exit.
    os._exit(code)


class Member:
    """One group's membership, stepping as a group process does, minus the data plane."""

    def __init__(self, run: Local, group: int) -> None:
        from spare_fast.torch._decisions import Decider

        self.run = run
        self.group = group
        self.committed = 0
        self.dead = threading.Event()
        self.membership: Any = None
        self.decider = Decider(run.layout, group)
        self.barrier: Barrier | None = None
        #: Whether the current membership's rendezvous succeeded.
        self.built = False
        self.thread = threading.Thread(target=self._main, name=f"member-{group}", daemon=True)

    def _main(self) -> None:
        from spare_fast.torch._membership import Membership
        from spare_fast.torch._settings import MemberSettings

        a = self.run.args
        settings = MemberSettings(
            group=self.group,
            n_groups=self.run.n,
            lighthouse_addr=self.run.svc.lighthouse_addr,
            store_addr=self.run.svc.store_addr,
            heartbeat_interval=timedelta(seconds=a.heartbeat_interval),
            quorum_timeout=timedelta(seconds=QUORUM_TIMEOUT),
            quorum_poll=timedelta(seconds=a.quorum_poll),
        )
        try:
            m = self.membership = Membership(settings, lambda: (self.committed, True))
            m.identity = self.run.identity
            with self.run.starting:  # a launch of many hosts, not one connect storm
                m.connect()
            self.run.event("connected", self.group, time.monotonic())
            self.run.launched.wait()
            c0 = time.thread_time()
            quorum, valid = m.form(self.decider.uncovered)
            m.adopt(quorum, valid)
            self.run.event(
                "formed", self.group, time.monotonic(), time.thread_time() - c0,
                _created(quorum),
            )  # fmt: skip
            self.built = self._rendezvous(m)
            self._steps(m)
        except BaseException as exc:  # noqa: BLE001 - recorded, the benchmark fails on it
            if self.dead.is_set() or self.run.stopping.is_set():
                return
            from spare_fast.torch._errors import Excluded

            if isinstance(exc, Excluded):
                # A live member left out of a quorum stands down and its process exits, as
                # a group process does: its heartbeats and store beats stop.
                self.dead.set()
                if self.membership is not None:
                    self.membership.close()
                self.run.event("excluded", self.group, time.time())
                return
            self.run.error(f"group {self.group}: {type(exc).__name__}: {exc}")

    def _steps(self, m: Any) -> None:
        while not self.run.stopping.is_set():
            self.barrier = self.run.barrier(m.prefix, len(m.members))
            if not self.built:  # no process group: the all-reduce fails for every member
                self.barrier.abort()
            if self.dead.wait(self.run.args.step):  # the gradient work
                return
            try:
                self.barrier.wait(timeout=QUORUM_TIMEOUT)  # the all-reduce
                self.committed += 1
            except threading.BrokenBarrierError:
                if self.dead.is_set() or self.run.stopping.is_set():
                    return
                self._recover(m)

    def _recover(self, m: Any) -> None:
        """As ``Recovery.recover_until_built``, minus the process group and the heal."""
        from spare_fast.torch._errors import Excluded

        while True:  # as Recovery.recover_until_built: a failed request is asked again
            try:
                quorum = m.quorum(shrink_only=True)
                break
            except RuntimeError as exc:
                if self.dead.is_set() or self.run.stopping.is_set():
                    raise
                self.run.event("quorum_failed", self.group, str(exc)[:60])
                m.bounds.pace()
        c0 = time.thread_time()
        valid = m.valid(quorum)
        if self.group not in valid:
            raise Excluded(f"quorum {sorted(valid)} does not hold group {self.group}")
        dead = tuple(sorted(set(m.members) - set(valid)))
        m.members = tuple(sorted(valid))
        if dead:
            self.decider.fail(list(dead), quorum.quorum_id, time.perf_counter(), None,
                              self.committed)  # fmt: skip
        m.adopt(quorum, valid)
        cpu = time.thread_time() - c0
        created = quorum.created
        self.run.event(
            "adopted",
            self.group,
            Adoption(
                int(quorum.quorum_id), created.seconds + created.nanos / 1e9, time.time(), cpu,
                dead,
            ),
        )  # fmt: skip
        self.built = self._rendezvous(m)

    def _rendezvous(self, m: Any) -> bool:
        """The new membership's rendezvous, guarded as ``Recovery.build_pg`` guards it (the
        ring watch of :meth:`Bounds.guarded`); the process group it would build is left out:
        its stand-in is a barrier of the new members. False when the guard gave up on it (a
        member reported silent): as in ``Recovery``, the step's all-reduce then fails and a
        new quorum is asked for."""
        meet = self.run.barrier(m.prefix + RENDEZVOUS, len(m.members))

        def build(store: Any) -> None:
            meet.wait(timeout=QUORUM_TIMEOUT)

        try:
            m.bounds.guarded(build, dict(m.replicas), m.prefix)
        except (RuntimeError, threading.BrokenBarrierError) as exc:
            self.run.event("rendezvous_failed", self.group, str(exc)[:80])
            return False
        return True

    def kill(self) -> float:
        """Stop this member abruptly; returns the kill's wall-clock time."""
        t = time.time()
        self.dead.set()
        closer = threading.Thread(target=self.membership.close, name="kill", daemon=True)
        closer.start()  # heartbeats and store beats stop at once; the joins take longer
        if self.barrier is not None:
            self.barrier.abort()  # the ring breaks for every survivor waiting in it
        closer.join()
        return t


# ---------------------------------------------------------------------------- the harness
@dataclass
class Seen:
    """What the harness knows of one member (from its worker's messages)."""

    group: int
    worker: int
    connected_at: float = 0.0
    formed_at: float = 0.0
    form_cpu: float = 0.0
    dead: bool = False
    rendezvous_failed: int = 0
    formed_created: float = 0.0
    excluded: float = 0.0  # when a live member was left out of a quorum (wall clock)
    adoptions: list[Adoption] = field(default_factory=list)


def default_procs(n: int) -> int:
    """Worker processes for N members: one below 128 members, else one per 64 (a process
    holding more starves its members' heartbeat threads behind the others' quorum checks)."""
    return 1 if n < 128 else max(1, n // 64)


class Run:
    """One run of N members, spread over worker processes, against one service."""

    def __init__(self, svc: Service, n: int, args: argparse.Namespace) -> None:
        import multiprocessing

        from spare_fast.layout import Layout

        self.svc = svc
        self.n = n
        self.args = args
        self.layout = Layout.cyclic(n, 2)
        procs = args.procs or default_procs(n)
        self.procs = min(procs, n)
        self.barriers = Barriers()
        self.errors: list[str] = []
        #: Why rendezvous and quorum requests failed, with their counts.
        self.why: dict[str, int] = {}
        self.stopping = False
        # Interleaved: neighbours on the ring (the watchers, a type's holders) sit in
        # different processes, as they sit on different hosts.
        self.parts = [list(range(w, n, self.procs)) for w in range(self.procs)]
        self.seen = [Seen(g, g % self.procs) for g in range(n)]
        self._replies: dict[int, Any] = {}
        self._reply_ready = threading.Condition()
        self._next_id = 0
        self.rss0: dict[int, int] = {}
        ctx = multiprocessing.get_context("spawn")
        wargs = argparse.Namespace(**vars(args), procs_used=self.procs)
        addrs = Addresses(svc.lighthouse_addr, svc.store_addr)
        self.procs_: list[Any] = []
        self.links: list[Link] = []
        for w, groups in enumerate(self.parts):
            mine, theirs = ctx.Pipe()
            p = ctx.Process(
                target=worker_main, args=(theirs, n, groups, addrs, wargs), daemon=True,
                name=f"cp-worker-{w}",
            )  # fmt: skip
            p.start()
            theirs.close()
            self.procs_.append(p)
            self.links.append(Link(mine))
        self.barriers.links = self.links
        self._readers = [
            threading.Thread(target=self._read, args=(w,), daemon=True) for w in range(self.procs)
        ]
        for t in self._readers:
            t.start()

    # ------------------------------------------------------------------ messages
    def _read(self, w: int) -> None:
        link = self.links[w]
        while True:
            try:
                msg = link.recv()
            except (EOFError, OSError):
                if not self.stopping:
                    p = self.procs_[w]
                    p.join(1.0)
                    self.errors.append(f"worker process {w} ended (exit code {p.exitcode})")
                return
            kind = msg[0]
            if kind == "arrive":
                self.barriers.arrive(link, msg[1], msg[2])
            elif kind == "abort":
                self.barriers.abort(msg[1], msg[2])
            elif kind == "connected":
                self.seen[msg[1]].connected_at = msg[2]
            elif kind == "formed":
                s = self.seen[msg[1]]
                s.form_cpu, s.formed_at, s.formed_created = msg[3], msg[2], msg[4]
            elif kind == "adopted":
                self.seen[msg[1]].adoptions.append(msg[2])
            elif kind == "excluded":
                s = self.seen[msg[1]]
                s.dead, s.excluded = True, msg[2]
            elif kind == "rendezvous_failed":
                self.seen[msg[1]].rendezvous_failed += 1
                why = msg[2] if "fell silent" in msg[2] else "broken or timed out"
                self.why[why] = self.why.get(why, 0) + 1
            elif kind == "quorum_failed":
                why = "quorum request failed: " + re.sub(r"\d+", "N", msg[2])
                self.why[why] = self.why.get(why, 0) + 1
            elif kind == "error":
                self.errors.append(msg[1])
            elif kind == "ready":
                self.rss0[w] = msg[1]
            elif kind == "reply":
                with self._reply_ready:
                    self._replies[msg[1]] = msg[2]
                    self._reply_ready.notify_all()

    def ask(self, w: int, kind: str, *rest: Any, timeout: float = 120.0) -> Any:
        """Send worker ``w`` a command; its answer."""
        with self._reply_ready:
            self._next_id += 1
            rid = self._next_id
        self.links[w].send(kind, rid, *rest)
        with self._reply_ready:
            if not self._reply_ready.wait_for(lambda: rid in self._replies, timeout):
                raise TimeoutError(f"worker process {w} did not answer {kind!r} in {timeout} s")
            return self._replies.pop(rid)

    def ask_all(self, kind: str, timeout: float = 120.0) -> list[Any]:
        """The same command to every worker, side by side; their answers."""
        answers: list[Any] = [None] * self.procs

        def one(w: int) -> None:
            with contextlib.suppress(TimeoutError):
                answers[w] = self.ask(w, kind, timeout=timeout)

        ts = [threading.Thread(target=one, args=(w,)) for w in range(self.procs)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return answers

    def tell_all(self, kind: str) -> None:
        for link in self.links:
            link.send(kind)

    # ------------------------------------------------------------------ the run
    def wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.errors:
            if len(self.rss0) == self.procs:
                return True
            time.sleep(0.05)
        return False

    def counts(self) -> tuple[dict[str, int], int, float]:
        """Every worker's request counts, RSS and CPU seconds, each summed."""
        total: dict[str, int] = {}
        rss, cpu = 0, 0.0
        for answer in self.ask_all("counts"):
            if answer is None:
                self.errors.append("a worker process did not send its counts")
                continue
            c, r, t = answer
            rss, cpu = rss + r, cpu + t
            for k, v in c.items():
                total[k] = total.get(k, 0) + v
        return total, rss, cpu

    def alive(self) -> list[Seen]:
        return [s for s in self.seen if not s.dead]

    def kill(self, s: Seen) -> float:
        """Kill member ``s`` in its worker; the kill's wall-clock time."""
        s.dead = True
        return float(self.ask(s.worker, "kill", s.group))

    def close(self) -> None:
        """Stop every member (none is told), then the worker processes."""
        self.stopping = True
        self.barriers.abort_all()
        self.ask_all("stop", timeout=60.0)
        for p in self.procs_:
            p.join(10.0)
            if p.is_alive():
                p.kill()
                p.join()
        for link in self.links:
            with contextlib.suppress(OSError):
                link.conn.close()


def victim(run: Run, rng: random.Random) -> Seen | None:
    """A live member whose death leaves every type it holds with a live holder."""
    alive = {s.group for s in run.alive()}
    holders: dict[int, set[int]] = {}
    for g in alive:
        for t in run.layout.stacks[g]:
            holders.setdefault(int(t), set()).add(g)
    ok = [g for g in alive if all(len(holders[int(t)]) > 1 for t in run.layout.stacks[g])]
    # Keep well over half the groups alive (the lighthouse's split-brain rule needs half).
    if not ok or len(alive) - 1 < max(2, (3 * run.n) // 4):
        return None
    return run.seen[rng.choice(sorted(ok))]


def pct(values: list[float], q: float) -> float:
    """The ``q``-quantile (nearest rank) of ``values``."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]


def loadavg() -> list[float]:
    """The host's load averages (1, 5, 15 minutes)."""
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


# ---------------------------------------------------------------------------- one N
def run_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Every figure for ``n`` members (the service and the kills in this process, the
    members in worker processes; call it once per process)."""
    import torch.distributed as dist

    rng = random.Random(n)
    out: dict[str, Any] = {"n": n, "kills": [], "formation_s": [], "errors": [],
                           "loadavg_start": loadavg()}  # fmt: skip
    rounds = 0
    while len(out["kills"]) < args.kills:
        rounds += 1
        with service(args.heartbeat_timeout) as svc:
            if rounds == 1:
                out["store_capacity_before_rps"] = store_capacity(
                    svc.store_addr, dist.TCPStore, CAPACITY_THREADS, CAPACITY_SECONDS
                )
            t_spawn = time.monotonic()
            run = Run(svc, n, args)
            out["procs"] = run.procs
            try:
                one_round(run, svc, args, rng, out, rounds, t_spawn)
            finally:
                out["errors"] += run.errors
                run.close()
            if rounds == 1:
                out["store_capacity_after_rps"] = store_capacity(
                    svc.store_addr, dist.TCPStore, CAPACITY_THREADS, CAPACITY_SECONDS
                )
        if out["errors"]:
            break
    out["rounds"] = rounds
    out["loadavg_end"] = loadavg()
    out["errors"] += out.get("disagreed", [])
    return summarise(out)


def one_round(
    run: Run, svc: Service, args: argparse.Namespace, rng: random.Random, out: dict[str, Any],
    rounds: int, t_spawn: float,
) -> None:  # fmt: skip
    """One run: start, connect, form, (the first time) the steady window, the kills."""
    n = run.n
    if not run.wait_ready(QUORUM_TIMEOUT):
        run.errors.append(f"N = {n}: the worker processes did not start")
        return
    # Starting the worker processes (each imports torch): not part of any figure.
    out.setdefault("spawn_s", []).append(time.monotonic() - t_spawn)
    stop_progress = threading.Event()
    t0 = time.monotonic()
    threading.Thread(target=progress, args=(run, out, t0, stop_progress), daemon=True).start()
    try:
        run.tell_all("start")
        deadline = t0 + QUORUM_TIMEOUT
        while time.monotonic() < deadline and not run.errors:
            if all(s.connected_at for s in run.seen):
                break
            time.sleep(0.05)
        t1, t1_wall = time.monotonic(), time.time()
        out.setdefault("connect_s", []).append(t1 - t0)
        run.tell_all("launch")
        while time.monotonic() < deadline and not run.errors:
            if all(s.formed_at for s in run.seen):
                break
            time.sleep(0.05)
        if run.errors or not all(s.formed_at for s in run.seen):
            if not run.errors:
                run.errors.append(f"N = {n}: not formed in {QUORUM_TIMEOUT} s")
            return
        out["formation_s"].append(max(s.formed_at for s in run.seen) - t1)
        # The lighthouse's side: its creation time of the formed quorum, from the launch.
        out.setdefault("formation_created_s", []).append(
            max(s.formed_created for s in run.seen) - t1_wall
        )
        out.setdefault("form_cpu_s", []).extend(s.form_cpu for s in run.seen)
        if rounds == 1:
            _, rss, _ = run.counts()
            out["rss_per_member_bytes"] = (rss - sum(run.rss0.values())) / n
            out.update(steady(run, svc, args.window))
        kill_phase(run, args, rng, out)
        out["rendezvous_failed"] = out.get("rendezvous_failed", 0) + sum(
            s.rendezvous_failed for s in run.seen
        )
        out["requorums_without_death"] = out.get("requorums_without_death", 0) + sum(
            1 for s in run.seen for a in s.adoptions if not a.dead
        )
        why = out.setdefault("failed_why", {})
        for k, v in run.why.items():
            why[k] = why.get(k, 0) + v
    finally:
        stop_progress.set()


def progress(run: Run, out: dict[str, Any], t0: float, stop: threading.Event) -> None:
    """A line on stderr every 10 s: how far the run is."""
    while not stop.wait(10.0):
        connected = sum(1 for s in run.seen if s.connected_at)
        formed = sum(1 for s in run.seen if s.formed_at)
        print(
            f"progress: N = {run.n} at {time.monotonic() - t0:.0f} s: {connected} connected, "
            f"{formed} formed, {len(out['kills'])} kills decided, {len(run.errors)} errors, "
            f"load {loadavg()[0]:.1f}",
            file=sys.stderr,
            flush=True,
        )


def steady(run: Run, svc: Service, window: float) -> dict[str, Any]:
    """Requests (summed over the worker processes) and service CPU over ``window`` seconds
    of failure-free steps."""
    run.barriers.wait_step(60.0)
    (c0, _, h0), cpu0, t0 = run.counts(), cpu_seconds(svc.proc.pid), time.monotonic()
    load0, q0 = loadavg()[0], sum(len(s.adoptions) for s in run.seen)
    time.sleep(window)
    (c1, _, h1), cpu1, t1 = run.counts(), cpu_seconds(svc.proc.pid), time.monotonic()
    q1 = sum(len(s.adoptions) for s in run.seen)
    dt = t1 - t0
    diff = {k: c1.get(k, 0) - c0.get(k, 0) for k in c1}
    n = run.n
    return {
        "window_s": dt,
        "window_loadavg": [load0, loadavg()[0]],
        "counts": diff,
        "store_rps": store_requests(diff) / dt,
        "lighthouse_rps": lighthouse_requests(diff) / dt,
        "probe_rps": probes(diff) / dt,
        "per_member_rps": (store_requests(diff) + lighthouse_requests(diff)) / dt / n,
        "per_member_rps_with_probes": (
            store_requests(diff) + lighthouse_requests(diff) + probes(diff)
        )
        / dt
        / n,
        "service_cpu": (cpu1 - cpu0) / dt,
        "service_cpu_per_member": (cpu1 - cpu0) / dt / n,
        # The members' own CPU (every worker process), as a share of one core, and
        # whether the window was failure-free (no member adopted a quorum in it).
        "harness_cpu": (h1 - h0) / dt,
        "harness_cpu_per_member": (h1 - h0) / dt / n,
        "window_adoptions": q1 - q0,
    }


def decided(member: Seen, since: int, dead: int) -> Adoption | None:
    """``member``'s first adoption from its ``since``-th on of a quorum without ``dead``."""
    return next((a for a in member.adoptions[since:] if dead in a.dead), None)


def kill_phase(run: Run, args: argparse.Namespace, rng: random.Random, out: dict[str, Any]) -> None:
    """Kills, one at a time, each at a uniform offset into a step; every survivor must adopt
    the quorum that excludes the killed member before the next."""
    while len(out["kills"]) < args.kills and not run.errors:
        v = victim(run, rng)
        if v is None:
            return
        if not run.barriers.wait_step(60.0):
            run.errors.append("no step passed within 60 s")
            return
        offset = rng.uniform(0.0, args.step)
        time.sleep(offset)
        survivors = [s for s in run.alive() if s is not v]
        before = {s.group: len(s.adoptions) for s in survivors}
        t_kill = run.kill(v)
        deadline = time.monotonic() + 4 * args.heartbeat_timeout + 120.0
        pending = list(survivors)
        while pending and time.monotonic() < deadline and not run.errors:
            pending = [
                s for s in pending if not s.excluded and not decided(s, before[s.group], v.group)
            ]
            time.sleep(0.02)
        # A live member left out (its heartbeats were late at the lighthouse) stood down.
        excluded = sorted(s.group for s in survivors if s.excluded)
        survivors = [s for s in survivors if not s.excluded]
        got = [a for s in survivors if (a := decided(s, before[s.group], v.group))]
        if len(got) < len(survivors) or not got:
            run.errors.append(f"kill of group {v.group}: {len(got)} of {len(survivors)} adopted")
            return
        ids = {a.quorum_id for a in got}
        deads = {a.dead for a in got}
        agreed = len(ids) == 1 and deads == {(v.group,)} and not excluded
        if not agreed:  # the run goes on (the benchmark fails on it at the end)
            out.setdefault("disagreed", []).append(
                f"kill of group {v.group}: quorums {ids}, dead {sorted(deads)[:4]}, live "
                f"group(s) {excluded[:20]} ({len(excluded)}) excluded"
            )
        # Each survivor is back in its steps (its rendezvous done) before the next kill.
        while time.monotonic() < deadline and any(
            s.adoptions[-1].quorum_id < max(ids) for s in survivors
        ):
            time.sleep(0.02)
        out["kills"].append(
            {
                "group": v.group,
                "offset_s": offset,
                "agreed": agreed,
                "created_s": got[0].created - t_kill,
                "adopted_s": [a.adopted - t_kill for a in got],
                "cpu_s": [a.cpu for a in got],
                "excluded_live": excluded,
                "loadavg": loadavg()[0],
            }
        )


def compact(kill: dict[str, Any]) -> None:
    """One kill's per-survivor lists replaced by their median, p99 and maximum."""
    adopted, cpu = kill.pop("adopted_s", None), kill.pop("cpu_s", None)
    if adopted:
        kill.update(
            survivors=len(adopted),
            adopted_median_s=statistics.median(adopted),
            adopted_p99_s=pct(adopted, 0.99),
            adopted_max_s=max(adopted),
        )
    if cpu:
        kill["cpu_median_s"] = statistics.median(cpu)


def summarise(out: dict[str, Any]) -> dict[str, Any]:
    kills = out["kills"]
    if kills:
        created = [k["created_s"] for k in kills]
        adopted = [a for k in kills for a in k["adopted_s"]]
        last = [max(k["adopted_s"]) for k in kills]
        cpu = [c for k in kills for c in k["cpu_s"]]
        out.update(
            n_kills=len(kills),
            created_median_s=statistics.median(created),
            created_p99_s=pct(created, 0.99),
            adopted_median_s=statistics.median(adopted),
            adopted_p99_s=pct(adopted, 0.99),
            last_adopted_median_s=statistics.median(last),
            adopt_cpu_median_s=statistics.median(cpu),
            adopt_cpu_p99_s=pct(cpu, 0.99),
        )
        for k in kills:  # per kill, its summary (the pooled figures above keep every one)
            compact(k)
    if out.get("form_cpu_s"):
        out["form_cpu_median_s"] = statistics.median(out.pop("form_cpu_s"))
    if out.get("connect_s"):
        out["connect_max_s"] = max(out["connect_s"])
    if out.get("formation_created_s"):
        out["formation_created_max_s"] = max(out["formation_created_s"])
    if out["formation_s"]:
        out["formation_median_s"] = statistics.median(out["formation_s"])
        out["formation_max_s"] = max(out["formation_s"])
    caps = [out[k] for k in ("store_capacity_before_rps", "store_capacity_after_rps") if k in out]
    if caps:
        # The machine is shared: the better of the two measurements is the store's capacity.
        out["store_capacity_rps"] = max(caps)
    cap = out.get("store_capacity_rps")
    if cap and "store_rps" in out:
        out["store_share"] = out["store_rps"] / cap
        out["lighthouse_share"] = out["lighthouse_rps"] / cap
    return out


# ---------------------------------------------------------------------------- the table
COLUMNS = (
    ("N", "n", "{:d}"),
    ("P", "procs", "{:d}"),
    ("formed (s)", "formation_max_s", "{:.2f}"),
    ("formed at LH (s)", "formation_created_max_s", "{:.2f}"),
    ("created med/p99 (s)", ("created_median_s", "created_p99_s"), "{:.2f}/{:.2f}"),
    ("adopted med/p99 (s)", ("adopted_median_s", "adopted_p99_s"), "{:.2f}/{:.2f}"),
    ("adopt CPU (ms)", "adopt_cpu_median_s", "{:.2f}", 1000.0),
    ("form CPU (ms)", "form_cpu_median_s", "{:.1f}", 1000.0),
    ("store req/s", "store_rps", "{:.0f}"),
    ("lighthouse req/s", "lighthouse_rps", "{:.0f}"),
    ("probes/s", "probe_rps", "{:.0f}"),
    ("req/s per member", "per_member_rps", "{:.2f}"),
    ("store, LH share", ("store_share", "lighthouse_share"), "{:.1%}, {:.1%}"),
    ("service CPU", "service_cpu", "{:.1%}"),
    ("member CPU", "harness_cpu_per_member", "{:.2%}"),
    ("RSS/member (KiB)", "rss_per_member_bytes", "{:.0f}", 1 / 1024),
)


def table(rows: list[dict[str, Any]], capacity: bool = True) -> str:
    """The Markdown table of ``rows`` (one per N)."""
    head = "| " + " | ".join(c[0] for c in COLUMNS) + " |"
    lines = [head, "|" + "|".join("---:" for _ in COLUMNS) + "|"]
    for r in rows:
        cells = []
        for col in COLUMNS:
            keys = col[1] if isinstance(col[1], tuple) else (col[1],)
            scale = col[3] if len(col) > 3 else 1.0
            if any(k not in r for k in keys):
                cells.append("n/a")
                continue
            vals = [r[k] * scale if scale != 1.0 else r[k] for k in keys]
            cells.append(col[2].format(*vals))
        lines.append("| " + " | ".join(cells) + " |")
    caps = ", ".join(f"N = {r['n']}: {r['store_capacity_rps']:.0f}" for r in rows
                     if "store_capacity_rps" in r)  # fmt: skip
    if capacity and caps:
        lines.append("")
        lines.append(f"Store capacity (add/s, {CAPACITY_THREADS} client threads): {caps}.")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path, args: argparse.Namespace) -> None:
    """Kill to decision and requests per member against N, on log-N axes."""
    from spare_fast._plotting import new_figure, save

    fig, axes = new_figure(1, 2, figsize=(10, 4))
    ns = [r["n"] for r in rows if "created_median_s" in r]
    ax = axes[0][0]
    for key, label, style in (
        ("created_median_s", "quorum created, median", "o-"),
        ("created_p99_s", "quorum created, p99", "o--"),
        ("adopted_median_s", "adopted by a survivor, median", "s-"),
        ("adopted_p99_s", "adopted by a survivor, p99", "s--"),
    ):
        ax.plot(ns, [r[key] for r in rows if "created_median_s" in r], style, label=label)
    t = args.heartbeat_timeout
    ax.axhline(t, color="grey", lw=0.8)
    ax.axhline(t + 0.25, color="grey", lw=0.8, ls=":", label="heartbeat timeout (+ 250 ms)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("members N")
    ax.set_ylabel("kill to agreed decision (s)")
    ax.legend(fontsize=8)
    ax = axes[0][1]
    ns = [r["n"] for r in rows if "per_member_rps" in r]
    for key, label, style in (
        ("per_member_rps", "store + lighthouse requests", "o-"),
        ("per_member_rps_with_probes", "... and reachability probes", "s--"),
    ):
        ax.plot(ns, [r[key] for r in rows if "per_member_rps" in r], style, label=label)
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("members N")
    ax.set_ylabel("requests per member per second")
    ax.legend(fontsize=8)
    save(fig, path)


# ---------------------------------------------------------------------------- entry points
def _child(n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run one N in a fresh harness process; its figures."""
    cmd = [
        sys.executable, str(Path(__file__).resolve()), "--one", str(n),
        "--kills", str(args.kills), "--step", repr(args.step),
        "--heartbeat-timeout", repr(args.heartbeat_timeout),
        "--heartbeat-interval", repr(args.heartbeat_interval), "--window", repr(args.window),
        "--identity", args.identity, "--quorum-poll", repr(args.quorum_poll),
        "--procs", str(args.procs), "--connecting", str(args.connecting),
    ]  # fmt: skip
    env = dict(os.environ, RUST_LOG="warn", PYTHONPATH=str(ROOT))
    # Its progress lines and warnings go to this process's stderr as they come.
    res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT, check=False)
    last = res.stdout.strip().splitlines()[-1:] or [""]
    try:
        return dict(json.loads(last[0]))
    except json.JSONDecodeError:
        tail = res.stdout[-2000:]
        return {"n": n, "errors": [f"harness process exited {res.returncode}: {tail}"]}


def measure(sizes: list[int], args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        row = _child(n, args)
        rows.append(row)
        brief = {k: row.get(k) for k in ("n", "formation_max_s", "created_p99_s",
                                          "adopted_p99_s", "per_member_rps")}  # fmt: skip
        print(json.dumps(brief), file=sys.stderr, flush=True)
    return rows


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="16,64,256,1024", help="member counts N, comma-separated")
    p.add_argument("--kills", type=int, default=KILLS, help="kills at each N (default 20)")
    p.add_argument("--step", type=float, default=STEP, help="step time in seconds (1.0)")
    p.add_argument("--heartbeat-timeout", type=float, default=HEARTBEAT_TIMEOUT,
                   help="the lighthouse's heartbeat timeout in seconds (3.0)")  # fmt: skip
    p.add_argument("--heartbeat-interval", type=float, default=HEARTBEAT_INTERVAL,
                   help="each member's heartbeat period in seconds (0.5)")  # fmt: skip
    p.add_argument(
        "--window",
        type=float,
        default=WINDOW,
        help="seconds of failure-free steps the request rates are counted over",
    )
    p.add_argument(
        "--quorum-poll",
        type=float,
        default=QUORUM_POLL,
        help="how long one quorum request waits before it is sent again (10.0)",
    )
    p.add_argument(
        "--identity",
        choices=("full", "none"),
        default="full",
        help="the run identity in each member's quorum data: as a group sends it (full, the "
        "default), or none (to tell its share of the quorum answers' cost)",
    )
    p.add_argument(
        "--procs",
        type=int,
        default=0,
        help="worker processes holding the members (default: 1 below 128 members, else one per 64)",
    )
    p.add_argument(
        "--connecting",
        type=int,
        default=CONNECTING,
        help=f"members connecting at the same time, over all worker processes ({CONNECTING})",
    )
    p.add_argument("--json", type=Path, help="write every figure to this JSON file")
    p.add_argument("--plot", type=Path, help="write the plot to this PNG file")
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        args.size_list = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        p.exit(2, f"--sizes = {args.sizes!r} is not a comma-separated list of integers\n")
    for s in [*args.size_list, *([args.one] if args.one is not None else [])]:
        if s < 4:
            p.exit(2, f"--sizes: N = {s} must be >= 4\n")
    for name in ("kills", "step", "heartbeat_timeout", "heartbeat_interval", "window",
                 "quorum_poll", "connecting"):  # fmt: skip
        if getattr(args, name) <= 0:
            p.exit(2, f"--{name.replace('_', '-')} = {getattr(args, name)} must be > 0\n")
    if args.procs < 0:
        p.exit(2, f"--procs = {args.procs} must be >= 1 (or 0: chosen from N)\n")
    if args.heartbeat_interval * 2 > args.heartbeat_timeout:
        p.exit(2, f"--heartbeat-interval = {args.heartbeat_interval} must be at most half "
                  f"the heartbeat timeout ({args.heartbeat_timeout})\n")  # fmt: skip
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    missing = _missing()
    if missing:
        print(f"bench_control_plane: {missing}", file=sys.stderr)
        return 2
    if args.one is not None:
        os.environ.setdefault("RUST_LOG", "warn")
        print(json.dumps(run_size(args.one, args)), flush=True)
        return 0
    rows = measure(args.size_list, args)
    print(table(rows))
    names = ("kills", "step", "heartbeat_timeout", "heartbeat_interval", "window",
             "quorum_poll", "identity", "procs", "connecting")  # fmt: skip
    settings = {k: getattr(args, k) for k in names}
    if args.json:
        args.json.write_text(json.dumps({"settings": settings, "rows": rows}, indent=1) + "\n")
    if args.plot:
        plot(rows, args.plot, args)
    bad = [e for r in rows for e in r.get("errors", [])]
    for e in bad:
        print(f"error: {e}", file=sys.stderr)
    return 1 if bad else 0


# ---------------------------------------------------------------------------- pytest
@pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
def test_control_plane(benchmark: Any) -> None:
    sizes = [int(s) for s in os.environ.get("SPARE_FAST_CP_SIZES", "16,64").split(",")]
    args = parse(["--sizes", ",".join(map(str, sizes))])
    rows = benchmark.pedantic(lambda: measure(sizes, args), rounds=1, iterations=1)
    print("\n" + table(rows))
    benchmark.extra_info["rows"] = rows
    for r in rows:
        assert not r.get("errors"), r.get("errors")
        assert r["n_kills"] >= args.kills
        assert all(k["agreed"] for k in r["kills"])


if __name__ == "__main__":
    sys.exit(main())
