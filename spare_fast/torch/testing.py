"""Fault injection for tests and benchmarks: signals sent by PID from outside the workers.

Nothing here is used by a production run. The workers only report where they are (see
:meth:`spare_fast.torch.SpareTrainer.workers`); the classes below read those reports from a
thread of the launcher's process and send real signals to the workers' PIDs, exactly as an
operator's ``kill -9 PID``, the OOM killer or a preemption would. The only hook inside a
worker is :class:`Injector` (torchft's ``EventInjector`` plays the same part there), which
turns one completed all-reduce into a reported failure; it is None unless a test passes one.

Examples
--------
>>> from spare_fast.torch.testing import Injector
>>> from spare_fast.torch import Fault
>>> Injector([Fault(1, 3)]).collective_error(1, 3)
True
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from spare_fast.torch._types import Fault, Kill, Phase, Stall, TrainSpec, WorkerState, type_seed

__all__ = [
    "Chaos",
    "Trigger",
    "Injector",
    "GLOO_BUILT",
    "gloo_backend",
    "LoopConfig",
    "LoopRun",
    "loop_worker",
    "PlannedFaults",
    "SignalSent",
    "Watcher",
    "FailingIn",
    "alive_pids",
    "ddp_step_seconds",
    "slow_shard",
    "max_rel_diff",
    "reference_params",
]


class Injector:
    """Test-only hook: report chosen completed all-reduces as failed (a spurious error).

    The launcher hands it to each group's first process only; the worker asks it after every
    completed all-reduce. Each fault fires once per process.

    Args:
        faults: The :class:`~spare_fast.torch.Fault` list.
        delay: Seconds to wait before reporting the error, as a late timeout would: by then the
            other members have received everything and committed the step.
    """

    def __init__(self, faults: Iterable[Fault], delay: float = 0.5) -> None:
        self.faults = frozenset(faults)
        self.delay = float(delay)
        self._fired: set[Fault] = set()

    def collective_error(self, group: int, step: int) -> bool:
        """True if group ``group``'s completed all-reduce of ``step`` is to be reported failed."""
        fault = Fault(group, step)
        if fault not in self.faults or fault in self._fired:
            return False
        self._fired.add(fault)
        time.sleep(self.delay)
        return True


@dataclass(frozen=True)
class SignalSent:
    """One signal a test thread sent.

    Attributes:
        seconds: Time since the thread started.
        at: ``time.monotonic()`` when it was sent.
        group: The victim's group.
        pid: The victim's PID.
        signal: The signal.
        state: What the victim last reported when the signal left.
    """

    seconds: float
    at: float
    group: int
    pid: int
    signal: signal.Signals
    state: WorkerState


class Watcher:
    """A daemon thread that polls ``trainer.workers()`` and acts on it; a context manager.

    Subclasses implement :meth:`tick`, called with the current states at every poll, and send
    signals with :meth:`send`. :attr:`first_pid` maps each group to its first process.

    Args:
        trainer: The :class:`~spare_fast.torch.SpareTrainer` whose run is watched.
    """

    poll = 0.0005

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.sent: list[SignalSent] = []
        self.first_pid: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._t0 = time.monotonic()

    def __enter__(self) -> Watcher:
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def send(self, state: WorkerState, sig: signal.Signals) -> None:
        """Send ``sig`` to the worker of ``state`` by PID and record it in :attr:`sent`."""
        try:
            os.kill(state.pid, sig)
        except ProcessLookupError:  # it ended by itself in the meantime
            return
        now = time.monotonic()
        self.sent.append(SignalSent(now - self._t0, now, state.group, state.pid, sig, state))

    def _loop(self) -> None:
        while not self._stop.is_set():
            states = self.trainer.workers()
            for g, s in states.items():
                self.first_pid.setdefault(g, s.pid)
            if states:
                self.tick(states)
            time.sleep(self.poll)

    def tick(self, states: dict[int, WorkerState]) -> None:
        """React to the states of one poll (by group)."""
        raise NotImplementedError


class PlannedFaults(Watcher):
    """Send planned SIGKILLs and SIGSTOP/SIGCONT pauses by PID when a worker reaches them.

    A :class:`~spare_fast.torch.Kill` with phase ``"compute"`` fires once the group's first
    process reports that step (or a later one); with phase ``"allreduce"`` once it reports the
    step's all-reduce at its second bucket or later (the first bucket is reduced, the peers are
    mid-collective), or any later step. A :class:`~spare_fast.torch.Stall` sends SIGSTOP when
    the step begins and SIGCONT ``seconds`` later.

    Args:
        trainer: The :class:`~spare_fast.torch.SpareTrainer` whose run is watched.
        kills: Planned kills.
        stalls: Planned pauses.

    Examples:
        >>> from spare_fast import Layout
        >>> from spare_fast.torch import Kill, SpareTrainer, TrainSpec, mlp
        >>> spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 6)
        >>> trainer = SpareTrainer(spec, Layout.cyclic(4, 2))
        >>> with PlannedFaults(trainer, [Kill(2, 3)]):  # doctest: +SKIP
        ...     result = trainer.run()
    """

    def __init__(
        self, trainer: Any, kills: Sequence[Kill] = (), stalls: Sequence[Stall] = ()
    ) -> None:
        super().__init__(trainer)
        self.pending: list[Kill | Stall] = [*kills, *stalls]
        self._timers: list[threading.Timer] = []

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for t in self._timers:
            t.cancel()

    @staticmethod
    def _reached(item: Kill | Stall, s: WorkerState) -> bool:
        if s.step > item.step:
            return True
        if s.step < item.step or s.phase in (Phase.STARTING, Phase.JOIN):
            return False
        if isinstance(item, Kill) and item.phase == "allreduce":
            return s.phase is Phase.ALLREDUCE and s.bucket >= 1
        return True

    def tick(self, states: dict[int, WorkerState]) -> None:
        for item in list(self.pending):
            s = states.get(item.group)
            if s is None or s.pid != self.first_pid.get(item.group) or not self._reached(item, s):
                continue
            self.pending.remove(item)
            if isinstance(item, Kill):
                self.send(s, signal.SIGKILL)
                continue
            self.send(s, signal.SIGSTOP)
            timer = threading.Timer(item.seconds, _resume, args=(s.pid,))
            timer.daemon = True
            timer.start()
            self._timers.append(timer)


def _resume(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


#: Phases a random :class:`Chaos` trigger can wait for; None: any moment.
_TARGETS: tuple[tuple[Phase, ...] | None, ...] = (
    None,
    None,
    (Phase.COMPUTE,),
    (Phase.ALLREDUCE,),
    (Phase.CHECKPOINT,),
    (Phase.RECOVER,),
    (Phase.STARTING, Phase.JOIN, Phase.RESTART),
)


@dataclass
class Trigger:
    """One :class:`Chaos` event: when to strike, with what, at whom.

    It fires once, ``delay`` seconds after it first sees a worker that reports step ``step``
    or later, epoch ``min_epoch`` or later, in one of ``phases`` (any phase when None).

    Attributes:
        step: Earliest step.
        phases: Phases to wait for.
        sig: Signal to send.
        victims: How many workers to hit at once (the one seen first plus random others), or
            the exact groups to hit.
        min_epoch: Earliest epoch (1: only during or after the first restart).
        delay: Seconds between seeing the moment and sending.
        fired: Whether it has fired.
        groups: The groups it hit.
    """

    step: int
    phases: tuple[Phase, ...] | None
    sig: signal.Signals
    victims: int | tuple[int, ...] = 1
    min_epoch: int = 0
    delay: float = 0.0
    fired: bool = False
    groups: list[int] = field(default_factory=list)
    _seen_at: float | None = None


class Chaos(Watcher):
    """Random signals to random workers by PID at random moments, seeded.

    Each of ``n_triggers`` random triggers picks a step in ``[0, steps)``, a phase to wait for
    (any, compute, all-reduce, checkpoint write, recovery, or an epoch's start or restart), a
    delay in ``[0, max_delay)`` seconds and one of ``signals``, and hits one worker or (with
    probability ``p_multi``) several at once. ``triggers`` adds chosen ones. A trigger that
    never sees its moment never fires; :attr:`sent` records what was sent, each with the state
    its victim reported at that moment.

    Args:
        trainer: The trainer whose run is watched.
        seed: Seed of all the random choices.
        n_triggers: How many random triggers.
        steps: Steps of the run (the range of trigger steps).
        signals: The signals to choose from.
        p_multi: Chance that a random trigger hits several workers at once.
        max_delay: Upper end of the random delays.
        triggers: Extra triggers, used as given.

    Examples:
        >>> with Chaos(trainer, seed=3, steps=8) as chaos:  # doctest: +SKIP
        ...     result = trainer.run()
    """

    def __init__(
        self,
        trainer: Any,
        seed: int,
        *,
        n_triggers: int = 2,
        steps: int = 8,
        signals: Sequence[signal.Signals] = (signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV),
        p_multi: float = 0.3,
        max_delay: float = 0.05,
        triggers: Sequence[Trigger] = (),
    ) -> None:
        super().__init__(trainer)
        rng = random.Random(seed)
        n = trainer.layout.n_groups
        self.rng = rng
        self.triggers = [
            Trigger(
                step=rng.randrange(steps),
                phases=rng.choice(_TARGETS),
                sig=rng.choice(list(signals)),
                victims=rng.randint(2, n) if rng.random() < p_multi else 1,
                delay=rng.uniform(0.0, max_delay),
            )
            for _ in range(n_triggers)
        ]
        self.triggers.extend(triggers)

    def tick(self, states: dict[int, WorkerState]) -> None:
        now = time.monotonic()
        # A process already signalled is dead or dying (its group's state shows it until a
        # replacement reports): a second signal to it would only race the first one.
        signalled = {x.pid for x in self.sent}
        states = {g: s for g, s in states.items() if s.pid not in signalled}
        if not states:
            return
        for trig in self.triggers:
            if trig.fired:
                continue
            ready = [
                s
                for s in states.values()
                if s.step >= trig.step
                and s.epoch >= trig.min_epoch
                and (trig.phases is None or s.phase in trig.phases)
            ]
            if trig._seen_at is None:
                if not ready:
                    continue
                trig._seen_at = now
            if now - trig._seen_at < trig.delay:
                continue
            if isinstance(trig.victims, tuple):
                victims = [states[g] for g in trig.victims if g in states]
            else:
                pool = ready or list(states.values())
                first = self.rng.choice(pool)
                others = [s for s in states.values() if s.group != first.group]
                victims = [first, *self.rng.sample(others, min(trig.victims - 1, len(others)))]
            trig.fired = True
            for s in victims:
                trig.groups.append(s.group)
                self.send(s, trig.sig)
            return  # one trigger per poll: the next sees the states after this one


class FailingIn:
    """A model builder that raises in the worker of one group (a deterministic crash).

    Workers are named ``spare-g<group>`` (``multiprocessing.current_process().name``); this
    builder raises :class:`RuntimeError` there and builds ``builder()`` everywhere else,
    including in the test process.

    Args:
        group: The group whose worker crashes.
        builder: The model builder to call otherwise.
    """

    def __init__(self, group: int, builder: Any) -> None:
        self.group = int(group)
        self.builder = builder

    def __call__(self) -> torch.nn.Module:
        import multiprocessing

        if multiprocessing.current_process().name == f"spare-g{self.group}":
            raise RuntimeError(f"model builder fails in group {self.group} (test crash)")
        return self.builder()


def slow_shard(step: int, shard_type: int) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`spare_fast.torch.mlp.synthetic_shard` after a 20 ms pause: a run that lasts."""
    from spare_fast.torch import mlp

    return mlp.paused_shard(0.02, step, shard_type)


def alive_pids(pids: Iterable[int]) -> list[int]:
    """The PIDs in ``pids`` that still name a live (not zombie) process.

    Examples:
        >>> alive_pids([os.getpid()]) == [os.getpid()]
        True
    """
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{int(pid)}/stat", encoding="ascii") as fh:
                state = fh.read().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state not in ("Z", "X"):
            out.append(int(pid))
    return out


def reference_params(spec: TrainSpec, n_types: int) -> dict[str, torch.Tensor]:
    """The failure-free run of ``spec`` in one process, written independently of the executor.

    Each step sums the N per-type gradients (each type's forward seeded with
    :func:`~spare_fast.torch.type_seed` and started from the step's buffers), applies
    ``(1/N) * sum``, steps the optimizer and the scheduler, and sets each buffer to its start
    value plus the mean of the N per-type changes (rounded for integer buffers).

    Args:
        spec: What to train.
        n_types: N, the number of shard types per step.

    Returns:
        The final ``state_dict`` (parameters and buffers), detached copies.
    """
    model = spec.model()
    params = list(model.parameters())
    optim = spec.optimizer(params)
    sched = None if spec.scheduler is None else spec.scheduler(optim)
    for step in range(spec.steps):
        start = [b.detach().clone() for b in model.buffers()]
        grads = [torch.zeros_like(p) for p in params]
        deltas = [torch.zeros_like(b, dtype=torch.float64) for b in start]
        for t in range(n_types):
            with torch.no_grad():
                for b, s0 in zip(model.buffers(), start, strict=True):
                    b.copy_(s0)
            torch.manual_seed(type_seed(spec.seed, step, t))
            model.zero_grad()
            x, y = spec.shard(step, t)
            spec.loss(model(x), y).backward()
            for acc, p in zip(grads, params, strict=True):
                if p.grad is not None:
                    acc += p.grad
            for d, b, s0 in zip(deltas, model.buffers(), start, strict=True):
                now, was = b.detach().to(torch.float64), s0.to(torch.float64)
                # Equal values (constant buffers, -inf masks included) change by exactly 0.
                d += torch.where(now == was, torch.zeros_like(d), now - was)
        for acc, p in zip(grads, params, strict=True):
            p.grad = acc / n_types
        optim.step()
        if sched is not None:
            sched.step()
        with torch.no_grad():
            for b, s0, d in zip(model.buffers(), start, deltas, strict=True):
                value = s0.to(torch.float64) + d / n_types
                b.copy_(value if b.is_floating_point() else value.round())
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def max_rel_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    """Largest per-tensor relative difference ``max|a - b| / max|b|`` over two state dicts.

    Per tensor rather than per element: a weight that is 1e-17 in one run and 0 in the other
    is equal for every purpose, yet its elementwise ratio is unbounded. Equal entries
    (including matching infinities, as in attention masks) count as no difference.

    Examples:
        >>> t = {"w": torch.tensor([2.0, 0.0], dtype=torch.float64)}
        >>> max_rel_diff(t, t), max_rel_diff({"w": t["w"] + 0.5}, t)
        (0.0, 0.25)
    """
    if a.keys() != b.keys():
        raise ValueError(f"state dicts differ in keys: {sorted(set(a) ^ set(b))}")
    worst = 0.0
    for k in b:
        x, y = a[k].to(torch.float64), b[k].to(torch.float64)
        if x.shape != y.shape:
            raise ValueError(f"{k}: shapes {tuple(x.shape)} and {tuple(y.shape)} differ")
        same = x == y
        diff = torch.where(same, torch.zeros_like(x), (x - y).abs())
        if not diff.numel() or float(diff.max()) == 0.0:
            continue
        finite = y[torch.isfinite(y)]
        scale = float(finite.abs().max()) if finite.numel() else 0.0
        worst = max(worst, float("inf") if scale == 0.0 else float(diff.max()) / scale)
    return worst


def _ddp_worker(
    rank: int, n: int, port: int, spec: TrainSpec, steps: int, warmup: int, out: Any
) -> None:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)  # as the executor's workers
    store = dist.TCPStore("127.0.0.1", port, n, is_master=False)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=n)
    model = DistributedDataParallel(spec.model())  # DDP's default 25 MiB buckets
    optim = spec.optimizer(model.parameters())
    sched = None if spec.scheduler is None else spec.scheduler(optim)
    start = 0.0
    for step in range(warmup + steps):
        if step == warmup:
            dist.barrier()
            start = time.monotonic()
        torch.manual_seed(type_seed(spec.seed, step, rank))
        x, y = spec.shard(step, rank)
        optim.zero_grad()
        spec.loss(model(x), y).backward()
        optim.step()
        if sched is not None:
            sched.step()
    out[rank] = (time.monotonic() - start) / steps
    dist.destroy_process_group()
    os._exit(0)  # as the executor's workers: no teardown of gloo's threads


def ddp_step_seconds(spec: TrainSpec, n: int, steps: int = 30, warmup: int = 5) -> float:
    """Seconds per step of plain ``DistributedDataParallel`` on ``spec`` with ``n`` ranks (gloo).

    The baseline of the executor's per-step cost: the same model, optimizer and shards (rank
    ``k`` trains shard type ``k``), processes started the same way (forks of the fork server),
    one thread each. Timed inside the ranks after ``warmup`` steps; the median over ranks.

    Args:
        spec: What to train (``spec.steps`` is ignored).
        n: Number of ranks.
        steps: Timed steps.
        warmup: Untimed steps first.

    Returns:
        The median over ranks of the mean step time.
    """
    import statistics

    import torch.distributed as dist

    from spare_fast.torch._launcher import _context

    ctx = _context()
    master = dist.TCPStore("127.0.0.1", 0, n, is_master=True, wait_for_workers=False)
    out = ctx.Array("d", n, lock=False)
    procs = [
        ctx.Process(target=_ddp_worker, args=(r, n, master.port, spec, steps, warmup, out))
        for r in range(n)
    ]
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        codes = [p.exitcode for p in procs]
        if any(c != 0 for c in codes):
            raise RuntimeError(f"DDP ranks exited with {codes}")
    finally:
        for p in procs:
            if p.exitcode is None:
                p.kill()
                p.join()
    return statistics.median(out[:])


# ---------------------------------------------------------------------- own-loop harness
@dataclass(frozen=True)
class LoopConfig:
    """What one own-loop test process runs (pickled to it): the MLP task of :mod:`.mlp`.

    Attributes:
        group: The SPARe group of the process.
        slot: Its slot in the harness's progress array.
        stacks: The layout's stacks.
        steps: Steps of the run.
        lighthouse: Lighthouse address.
        store: ``HOST:PORT`` of the run's store.
        bind: Address the collectives bind to.
        out: Folder for the final parameters and the events.
        pause: Seconds of extra work per step (so a test can act between steps).
        slow_heal: Seconds a heal source takes to pack the state (a large model's transfer):
            long enough for a signal sent when it reports :attr:`Phase.HEAL` to land inside.
    """

    group: int
    slot: int
    stacks: list[list[int]]
    steps: int
    lighthouse: str
    store: str
    bind: str
    out: str
    pause: float = 0.0
    slow_heal: float = 0.0
    backend: Any = "gloo"


def gloo_backend(store: Any, rank: int, size: int, timeout: Any, host: str = "127.0.0.2") -> Any:
    """A backend factory for :class:`~spare_fast.torch.SpareGroup`: gloo bound to ``host``.

    The shape of a user's own backend (``functools.partial(gloo_backend, host="...")``
    pickles by reference). Every process group it builds is counted in ``GLOO_BUILT``.
    """
    import torch.distributed as dist

    opts = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]  # stub lacks it
    opts._timeout = timeout
    opts._devices = [dist.ProcessGroupGloo.create_device(hostname=host)]
    GLOO_BUILT.append((rank, size))
    return dist.ProcessGroupGloo(store, rank, size, opts)


#: ``(rank, size)`` of each process group :func:`gloo_backend` built in this process.
GLOO_BUILT: list[tuple[int, int]] = []


#: Slots per process in :class:`LoopRun`'s progress array: pid, step, phase.
LOOP_SLOTS = 3


def loop_worker(cfg: LoopConfig, progress: Any) -> None:
    """A user's own loop on :class:`~spare_fast.torch.SpareGroup` (the MLP task, SGD).

    Reports ``(pid, step, phase)`` in its slot of ``progress`` (a test-only subclass hook) and
    writes ``final-g<group>-p<pid>.pt`` and ``events-g<group>-p<pid>.json`` to ``cfg.out``.
    """
    import json

    import numpy as np

    from spare_fast.layout import Layout
    from spare_fast.torch import mlp
    from spare_fast.torch._group import SpareGroup

    torch.set_num_threads(1)
    base = cfg.slot * LOOP_SLOTS

    class Reporting(SpareGroup):
        def _report(self, phase: Phase, bucket: int = 0) -> None:
            progress[base], progress[base + 1], progress[base + 2] = (
                os.getpid(),
                max(getattr(self, "committed", 0), 0),
                int(phase),
            )

        def _state_blob(self) -> bytes:
            time.sleep(cfg.slow_heal)
            return super()._state_blob()

    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())

    def compute(step: int, shard_type: int) -> torch.Tensor:
        x, y = mlp.synthetic_shard(step, shard_type)
        return mlp.mse_loss(model(x), y)

    group = Reporting(
        model,
        optim,
        Layout.from_stacks(np.asarray(cfg.stacks, dtype=np.int32)),
        cfg.steps,
        group=cfg.group,
        lighthouse=cfg.lighthouse,
        store=cfg.store,
        bind=cfg.bind,
        backend=cfg.backend,
        collective_timeout=5.0,
        quorum_timeout=30.0,
        quorum_poll=0.5,
    )
    group._report(Phase.STARTING)
    code = 0
    try:
        group.start()
        while group.step < cfg.steps:
            group.reduce(compute)
            optim.step()
            time.sleep(cfg.pause)
            group.step_end()
        tag = f"g{cfg.group}-p{os.getpid()}"
        torch.save(model.state_dict(), os.path.join(cfg.out, f"final-{tag}.pt"))
        with open(os.path.join(cfg.out, f"events-{tag}.json"), "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "events": [e.__dict__ for e in group.events],
                    "groups_built": GLOO_BUILT,
                    "depth": group.depth,
                },
                fh,
            )
        group._report(Phase.FINISH)
    except BaseException:  # noqa: BLE001 - reported, then the process ends with code 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        group.close()
    # As the launcher's workers: no interpreter teardown (torchft's runtime aborts in it).
    os._exit(code)


class LoopRun:
    """Test harness: a lighthouse and a store in this process, own-loop workers as processes.

    Processes are forks of a fork server that imported torch once. :meth:`start` starts a
    process for a group (a first one or a replacement) and returns its slot; :meth:`state`
    reads ``(pid, step, phase)`` of a slot; :meth:`kill` sends SIGKILL by PID, from outside.

    Args:
        layout: The run's layout.
        steps: Steps of the run.
        out: Folder for the workers' results.
        host: Loopback address everything binds to.
        pause: Extra seconds per step in every worker.
        heartbeat_timeout: The lighthouse's heartbeat timeout, seconds.
        backend: The workers' collective backend (``"gloo"`` or a picklable factory).
    """

    def __init__(
        self,
        layout: Any,
        steps: int,
        out: str,
        host: str = "127.0.0.2",
        pause: float = 0.05,
        heartbeat_timeout: float = 1.0,
        backend: Any = "gloo",
    ) -> None:
        import multiprocessing
        import socket

        import torch.distributed as dist

        os.environ.setdefault("RUST_LOG", "warn")  # read once, when torchft is first imported
        from torchft.coordination import LighthouseServer

        self.layout, self.steps, self.out, self.host, self.pause = layout, steps, out, host, pause
        self.backend = backend
        self.lighthouse = LighthouseServer(
            bind=f"{host}:0",
            min_replicas=1,
            join_timeout_ms=30_000,
            quorum_tick_ms=20,
            heartbeat_timeout_ms=int(heartbeat_timeout * 1000),
        )
        self.lighthouse_addr = f"http://{host}:{self.lighthouse.address().rsplit(':', 1)[1]}"
        sock = socket.socket()
        sock.bind((host, 0))
        sock.listen(256)
        self.store = dist.TCPStore(
            host,
            sock.getsockname()[1],
            is_master=True,
            wait_for_workers=False,
            master_listen_fd=sock.fileno(),
        )
        sock.detach()
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload(
            [
                "torch",
                "torch._dynamo",
                "torch.distributed",
                "numpy",
                "torchft.coordination",
                "spare_fast.torch",
            ]
        )
        self.progress = self.ctx.Array("q", 16 * LOOP_SLOTS, lock=False)
        self.procs: list[tuple[int, Any]] = []

    def start(self, group: int, slow_heal: float = 0.0) -> int:
        """Start a process for ``group``; returns its slot."""
        slot = len(self.procs)
        cfg = LoopConfig(
            group,
            slot,
            self.layout.stacks.tolist(),
            self.steps,
            self.lighthouse_addr,
            f"{self.host}:{self.store.port}",
            self.host,
            self.out,
            self.pause,
            slow_heal,
            self.backend,
        )
        proc = self.ctx.Process(target=loop_worker, args=(cfg, self.progress))
        proc.start()
        self.procs.append((group, proc))
        return slot

    def state(self, slot: int) -> tuple[int, int, Phase]:
        """``(pid, step, phase)`` the process in ``slot`` last reported."""
        b = slot * LOOP_SLOTS
        return int(self.progress[b]), int(self.progress[b + 1]), Phase(self.progress[b + 2])

    def wait(self, until: Any, timeout: float = 60.0) -> None:
        """Poll ``until()`` every millisecond; TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise TimeoutError(f"condition not met within {timeout} s")
            time.sleep(0.001)

    def kill(self, slot: int) -> int:
        """SIGKILL the process in ``slot`` by its PID; returns the PID."""
        pid = self.state(slot)[0]
        os.kill(pid, signal.SIGKILL)
        return pid

    def join(self, timeout: float = 90.0) -> dict[int, int | None]:
        """Wait for every process; exit codes by slot."""
        deadline = time.monotonic() + timeout
        for _, proc in self.procs:
            proc.join(max(deadline - time.monotonic(), 0.1))
        return {i: proc.exitcode for i, (_, proc) in enumerate(self.procs)}

    def close(self) -> None:
        """Kill what still runs and stop the lighthouse."""
        for _, proc in self.procs:
            if proc.exitcode is None:
                proc.kill()
            proc.join()
        self.lighthouse.shutdown()

    def __enter__(self) -> LoopRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
