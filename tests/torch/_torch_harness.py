"""Test harnesses of the PyTorch executor (imported by the tests beside it and by benchmarks/).

- :class:`LoopRun` and :func:`loop_worker`: a lighthouse and a store in the test process and
  own-loop :class:`~spare_fast.torch.SpareGroup` workers as processes;
- :class:`Chaos` and :class:`Trigger`: seeded random signals by PID;
- :func:`gloo_backend`: a user-style backend factory; :class:`FailingIn`: a model builder that
  crashes in one group; :func:`slow_shard`: a shard that takes 20 ms.

Faults inside a worker come from a fault-injecting collective backend
(:class:`~spare_fast.torch.testing.Injector`); no production object carries a test hook.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from spare_fast import Layout
from spare_fast.torch import Phase
from spare_fast.torch._observer import Observer
from spare_fast.torch._types import WorkerState
from spare_fast.torch.testing import (
    Injector,
    PlannedFaults,
    SignalSent,
    Watcher,
    alive_pids,
    ddp_step_seconds,
    max_rel_diff,
    reference_params,
)

#: The repository root (a PYTHONPATH and working folder for child processes).
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

__all__ = [
    "REPO_ROOT",
    "Chaos",
    "FailingIn",
    "GLOO_BUILT",
    "Injector",
    "LoopConfig",
    "LOOP_WIPED_OUT",
    "LoopRun",
    "PlannedFaults",
    "SignalSent",
    "Trigger",
    "Watcher",
    "alive_pids",
    "ddp_step_seconds",
    "gloo_backend",
    "loop_worker",
    "max_rel_diff",
    "reference_params",
    "slow_shard",
]


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
        slow_first_compute: Seconds the process's first :attr:`Phase.COMPUTE` lasts (a large
            model's first step): a computing phase otherwise lasts a millisecond or two, too
            short for a poll from a loaded machine to see it reliably.
        options: More keyword arguments of :class:`~spare_fast.torch.SpareGroup` (``seed``,
            ``run_key``, ``ledger``, ...).
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
    options: dict[str, Any] = field(default_factory=dict)
    checkpoint_dir: str | None = None  # checkpoints every 2 steps there
    resume: bool = False  # start from the newest valid checkpoint in checkpoint_dir
    logs: bool = False  # stdout and stderr to out/log-g<group>-p<pid>.txt
    slow_first_compute: float = 0.0


def gloo_backend(store: Any, rank: int, size: int, timeout: Any, host: str = "127.0.0.2") -> Any:
    """A backend factory for :class:`~spare_fast.torch.SpareGroup`: gloo bound to ``host``.

    The shape of a user's own backend (``functools.partial(gloo_backend, host="...")``
    pickles by reference). Every process group it builds is counted in ``GLOO_BUILT``.
    """
    import torch.distributed as dist

    opts = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]  # stub lacks it
    opts._timeout = timeout
    opts._devices = [dist.ProcessGroupGloo.create_device(hostname=host)]
    t0 = time.perf_counter()
    pg = dist.ProcessGroupGloo(store, rank, size, opts)
    GLOO_BUILT.append((rank, size))
    GLOO_SECONDS.append((rank, size, time.perf_counter() - t0))
    return pg


#: ``(rank, size)`` of each process group :func:`gloo_backend` built in this process.
GLOO_BUILT: list[tuple[int, int]] = []
#: ``(rank, size, seconds)``: how long each of those took to build (its rendezvous and the
#: connections to every peer).
GLOO_SECONDS: list[tuple[int, int, float]] = []


#: Slots per process in :class:`LoopRun`'s progress array: pid, step, phase.
LOOP_SLOTS = 3
#: Exit code of a :func:`loop_worker` whose group met a wipe-out.
LOOP_WIPED_OUT = 5
#: Steps and layout of the MLP runs the loop and bounds tests share (see ``mlp_reference``).
LOOP_STEPS = 12
LOOP_LAYOUT = Layout.cyclic(4, 2)


def loop_worker(cfg: LoopConfig, progress: Any, pace: Any = None) -> None:
    """A user's own loop on :class:`~spare_fast.torch.SpareGroup` (the MLP task, SGD).

    Each step pauses ``cfg.pause`` seconds, or ``pace.value`` when that shared value is larger
    (:meth:`LoopRun.paced`). Reports ``(pid, step, phase)`` in its slot of ``progress`` (a
    test-only subclass hook) and writes ``final-g<group>-p<pid>.pt`` and
    ``events-g<group>-p<pid>.json`` to ``cfg.out`` (``error-g<group>-p<pid>.txt``, the error's
    type and message, when it fails). Its exit code is :func:`spare_fast.torch.exit_code` of
    the error (0 when none).
    """
    import json

    import numpy as np

    from spare_fast.layout import Layout
    from spare_fast.torch import WipeOutError, mlp, newest_checkpoint
    from spare_fast.torch._group import SpareGroup

    torch.set_num_threads(1)
    base = cfg.slot * LOOP_SLOTS
    if cfg.logs:
        log = os.open(
            os.path.join(cfg.out, f"log-g{cfg.group}-p{os.getpid()}.txt"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND,
        )
        os.dup2(log, 1)
        os.dup2(log, 2)

    class Reporting(Observer):
        computed = False

        def on_phase(self, group: int, epoch: int, step: int, phase: Phase, bucket: int) -> None:
            progress[base], progress[base + 1], progress[base + 2] = os.getpid(), step, int(phase)
            if phase is Phase.HEAL:
                time.sleep(cfg.slow_heal)  # a large model's transfer
            elif phase is Phase.COMPUTE and not self.computed:
                self.computed = True
                time.sleep(cfg.slow_first_compute)  # a large model's first step

    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())

    def compute(step: int, shard_type: int) -> torch.Tensor:
        x, y = mlp.synthetic_shard(step, shard_type)
        return mlp.mse_loss(model(x), y)

    reporting = Reporting()
    group = SpareGroup(
        model,
        optim,
        Layout.from_stacks(np.asarray(cfg.stacks, dtype=np.int32)),
        cfg.steps,
        group=cfg.group,
        lighthouse=cfg.lighthouse,
        store=cfg.store,
        bind=cfg.bind,
        backend=cfg.backend,
        observers=[reporting],
        checkpoint_dir=cfg.checkpoint_dir,
        checkpoint_every=2,
        **{"collective_timeout": 5.0, "quorum_timeout": 30.0, "quorum_poll": 0.5, **cfg.options},
    )
    reporting.on_phase(cfg.group, 0, 0, Phase.STARTING, 0)
    code = 0
    try:
        assert cfg.checkpoint_dir is not None or not cfg.resume
        group.start(newest_checkpoint(cfg.checkpoint_dir) if cfg.resume else None)
        while group.step < cfg.steps:
            group.reduce(compute)
            optim.step()
            time.sleep(max(cfg.pause, 0.0 if pace is None else pace.value))
            group.step_end()
        tag = f"g{cfg.group}-p{os.getpid()}"
        torch.save(model.state_dict(), os.path.join(cfg.out, f"final-{tag}.pt"))
        with open(os.path.join(cfg.out, f"events-{tag}.json"), "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "events": [e.__dict__ for e in group.events],
                    "groups_built": GLOO_BUILT,
                    "build_seconds": GLOO_SECONDS,
                    "depth": group.depth,
                },
                fh,
            )
        reporting.on_phase(cfg.group, 0, cfg.steps, Phase.FINISH, 0)
    except WipeOutError as exc:
        print(f"group {cfg.group}: {exc}", flush=True)
        code = LOOP_WIPED_OUT
    except BaseException as exc:  # noqa: BLE001 - reported, then the process ends
        import traceback

        from spare_fast.torch import exit_code

        traceback.print_exc()
        code = exit_code(exc)
        tag = f"g{cfg.group}-p{os.getpid()}"
        with open(os.path.join(cfg.out, f"error-{tag}.txt"), "w", encoding="utf-8") as fh:
            fh.write(f"{type(exc).__name__}: {exc}\n")
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
        checkpoint_dir: Where the workers write checkpoints (every 2 steps); none by default.
        service_timeout: How long the workers wait for a lost lighthouse or store, seconds.
        services: ``(lighthouse address, store HOST:PORT)`` served elsewhere; by default a
            lighthouse and a store are served in this process.
        logs: Each worker's stdout and stderr go to ``out/log-g<group>-p<pid>.txt``.
        slots: How many processes the run may start in all (first ones and replacements).
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
        checkpoint_dir: str | None = None,
        service_timeout: float | None = None,
        services: tuple[str, str] | None = None,
        logs: bool = False,
        slots: int = 16,
    ) -> None:
        import multiprocessing

        from spare_fast.torch._serve import serve

        self.layout, self.steps, self.out, self.host, self.pause = layout, steps, out, host, pause
        self.backend = backend
        self.checkpoint_dir = checkpoint_dir
        self.logs = logs
        from spare_fast.torch._bounds import publish_service_timeout
        from spare_fast.torch._watchdog import publish_heartbeat_timeout

        self.service: Any = None
        if services is None:
            self.service = serve(
                host, join_timeout_ms=30_000, heartbeat_timeout_ms=int(heartbeat_timeout * 1000)
            )
            self.lighthouse_addr = self.service.lighthouse_addr
            self.store = self.service.store
            publish_heartbeat_timeout(self.store, heartbeat_timeout)
        else:  # served elsewhere (``spare-fast lighthouse`` in a process of its own)
            import torch.distributed as dist

            self.lighthouse_addr, store_addr = services
            store_host, _, store_port = store_addr.rpartition(":")
            self.store = dist.TCPStore(store_host, int(store_port), is_master=False)
        if service_timeout is not None:
            publish_service_timeout(self.store, service_timeout)
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
        self.progress = self.ctx.Array("q", int(slots) * LOOP_SLOTS, lock=False)
        self.pace = self.ctx.Value("d", 0.0, lock=False)  # see paced()
        self.procs: list[tuple[int, Any]] = []

    def start(
        self,
        group: int,
        slow_heal: float = 0.0,
        resume: bool = False,
        stacks: Any = None,
        slow_first_compute: float = 0.0,
        **options: Any,
    ) -> int:
        """Start a process for ``group`` (from the newest checkpoint if ``resume``); returns
        its slot. ``stacks``: another layout for this process; ``slow_heal`` and
        ``slow_first_compute``: see :class:`LoopConfig`; ``options``: more keyword arguments
        of its :class:`~spare_fast.torch.SpareGroup`."""
        slot = len(self.procs)
        cfg = LoopConfig(
            group,
            slot,
            self.layout.stacks.tolist() if stacks is None else [list(r) for r in stacks],
            self.steps,
            self.lighthouse_addr,
            f"{self.host}:{self.store.port}",
            self.host,
            self.out,
            self.pause,
            slow_heal,
            self.backend,
            dict(options),
            self.checkpoint_dir,
            resume,
            self.logs,
            slow_first_compute,
        )
        proc = self.ctx.Process(target=loop_worker, args=(cfg, self.progress, self.pace))
        proc.start()
        self.procs.append((group, proc))
        return slot

    @contextlib.contextmanager
    def paced(self, seconds: float) -> Iterator[None]:
        """Inside the block every worker's step lasts at least ``seconds`` (read at each step's
        end). A replacement is admitted a few steps after it announces itself; slow steps
        leave it that room before the run ends, also on a loaded machine."""
        self.pace.value = seconds
        try:
            yield
        finally:
            self.pace.value = 0.0

    def state(self, slot: int) -> tuple[int, int, Phase]:
        """``(pid, step, phase)`` the process in ``slot`` last reported."""
        b = slot * LOOP_SLOTS
        return int(self.progress[b]), int(self.progress[b + 1]), Phase(self.progress[b + 2])

    def wait(self, until: Any, timeout: float = 60.0) -> None:
        """Poll ``until()`` every millisecond; TimeoutError after ``timeout`` seconds, naming
        what every slot last reported and how its process ended."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                seen = "; ".join(
                    f"slot {i} (group {g}): step {self.state(i)[1]}, "
                    f"{self.state(i)[2].name}, exit {proc.exitcode}"
                    for i, (g, proc) in enumerate(self.procs)
                )
                raise TimeoutError(f"condition not met within {timeout} s: {seen}")
            time.sleep(0.001)

    def result(self, slot: int) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """The final parameters and the events file the finished process in ``slot`` wrote."""
        import json

        group, proc = self.procs[slot]
        tag = f"g{group}-p{proc.pid}"
        params = torch.load(os.path.join(self.out, f"final-{tag}.pt"), weights_only=True)
        with open(os.path.join(self.out, f"events-{tag}.json"), encoding="utf-8") as fh:
            return params, json.load(fh)

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
        if self.service is not None:
            self.service.shutdown()

    def __enter__(self) -> LoopRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
