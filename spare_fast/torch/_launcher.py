"""The launcher: starts the membership service and one worker process per group.

The launcher owns the two services that must outlive any worker: the torch.distributed
``TCPStore`` (the key-value store every gloo group rendezvous through, under a fresh prefix per
agreed quorum) and the torchft ``LighthouseServer`` (which agrees the membership from worker
heartbeats and quorum requests). It does not take part in training decisions; it only starts
replacement processes after the survivors report a wipe-out, and collects the records.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import torch
import torch.distributed as dist

from spare_fast.layout import Layout
from spare_fast.torch._types import (
    EventRecord,
    Fault,
    Kill,
    RunResult,
    Stall,
    StepRecord,
    TrainSpec,
    as_timedelta,
)
from spare_fast.torch._worker import EXIT_EXCLUDED, WorkerConfig

__all__ = ["SpareTrainer"]

# Workers import spare_fast from the same place as the launcher, installed or not.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ENTRY = "from spare_fast.torch._worker import main; main"


class SpareTrainer:
    """Data-parallel training over SPARe groups in real worker processes.

    Each of the layout's ``n_groups`` groups is one worker process holding its stack's shard
    types. Every step each alive worker computes the gradient sums of the types the current
    controller decision assigns to it, the alive workers all-reduce (gloo), and every worker
    applies ``(1/N) * sum`` over all N types, each type counted exactly once. A worker killed
    with SIGKILL is detected through the collective's error or its timeout; the survivors agree
    the new membership through the torchft lighthouse, each applies the same controller
    decision, computes its patch types for the current step, rebuilds the gloo group and
    finishes the step. A wipe-out restarts every group from the last checkpoint: survivors
    reload it in place, new processes replace the dead.

    Parameters
    ----------
    spec : TrainSpec
        Model, optimizer, loss, shard source, number of steps, checkpoint period.
    layout : spare_fast.Layout
        Which shard types each group holds; ``n_types`` must equal ``n_groups``.
    collective_timeout : float or datetime.timedelta, optional
        Gloo timeout of one collective; a peer that neither answers nor closes its sockets is
        detected after this long.
    heartbeat_timeout : float or datetime.timedelta, optional
        The lighthouse drops a worker whose heartbeats stop for this long.
    heartbeat_interval : float or datetime.timedelta, optional
        Period of each worker's heartbeat.
    quorum_timeout : float or datetime.timedelta, optional
        Longest wait for one quorum (and for all workers to start).
    run_timeout : float or datetime.timedelta, optional
        The whole run is killed and :class:`TimeoutError` raised after this long.
    bucket_numel : int, optional
        The step's all-reduce runs in buckets of this many numbers, one after the other (as
        DDP's buckets do).
    verbose : bool, optional
        The lowest alive group prints one line per step (depth, loss, events).

    Raises
    ------
    TypeError
        If ``spec`` is not a :class:`TrainSpec` or ``layout`` not a ``Layout``.
    ValueError
        If the layout has ``n_types != n_groups`` or fewer than 2 groups, a timeout is not
        positive, or ``bucket_numel < 1``.

    Notes
    -----
    Why the controller runs in every worker rather than in a coordinator: the controller is
    deterministic, and every survivor receives the same sequence of lighthouse quorums, so the
    same ``fail`` calls give the same decision everywhere with no extra round trip and no
    coordinator whose own failure would need handling. The lighthouse is the only agreement
    point, and it is the existing torchft service built for exactly that.

    Cost per step: one all-reduce of ``P + 1`` numbers (P parameters, plus the loss); each
    worker keeps a copy of the parameters and optimizer state from before the last update, so
    that a step that completed on some ranks and failed on others can be redone by all.

    References
    ----------
    .. [1] Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant
       LLM Pretraining Systems with 100k+ GPUs", arXiv 2603.00357, ICML 2026.
    .. [2] torchft, fault-tolerant training for PyTorch (lighthouse quorum service).

    Examples
    --------
    >>> from spare_fast import Layout
    >>> from spare_fast.torch import SpareTrainer, TrainSpec, mlp
    >>> spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, 3)
    >>> trainer = SpareTrainer(spec, Layout.cyclic(4, 2))
    >>> result = trainer.run()  # doctest: +SKIP
    >>> [s.depth for s in result.steps]  # doctest: +SKIP
    [1, 1, 1]
    """

    def __init__(
        self,
        spec: TrainSpec,
        layout: Layout,
        *,
        collective_timeout: timedelta | float = 10.0,
        heartbeat_timeout: timedelta | float = 2.0,
        heartbeat_interval: timedelta | float = 0.1,
        quorum_timeout: timedelta | float = 60.0,
        run_timeout: timedelta | float = 170.0,
        bucket_numel: int = 64,
        verbose: bool = False,
    ) -> None:
        if not isinstance(spec, TrainSpec):
            raise TypeError(f"spec = {spec!r} is not a TrainSpec")
        if not isinstance(layout, Layout):
            raise TypeError(f"layout = {layout!r} is not a spare_fast.Layout")
        if layout.n_types != layout.n_groups or layout.n_groups < 2:
            raise ValueError(
                f"layout with n_groups = {layout.n_groups}, n_types = {layout.n_types}: the "
                "executor needs n_types == n_groups >= 2"
            )
        self.spec = spec
        self.layout = layout
        self.collective_timeout = as_timedelta(collective_timeout, "collective_timeout")
        self.heartbeat_timeout = as_timedelta(heartbeat_timeout, "heartbeat_timeout")
        self.heartbeat_interval = as_timedelta(heartbeat_interval, "heartbeat_interval")
        self.quorum_timeout = as_timedelta(quorum_timeout, "quorum_timeout")
        self.run_timeout = as_timedelta(run_timeout, "run_timeout")
        if int(bucket_numel) < 1:
            raise ValueError(f"bucket_numel = {bucket_numel} must be >= 1")
        self.bucket_numel = int(bucket_numel)
        self.verbose = bool(verbose)

    def run(
        self,
        kills: Sequence[Kill] = (),
        run_dir: str | None = None,
        *,
        faults: Sequence[Fault | Stall] = (),
    ) -> RunResult:
        """Train ``spec.steps`` steps, killing workers as ``kills`` says.

        Parameters
        ----------
        kills : sequence of Kill, optional
            Workers that SIGKILL themselves at a given step and phase.
        faults : sequence of Fault or Stall, optional
            Faults short of a kill: spurious collective errors (:class:`Fault`, which exercise
            the one-step rollback) and suspended workers (:class:`Stall`).
        run_dir : str, optional
            Folder for checkpoints and per-worker records; a temporary folder (removed at the
            end) when omitted.

        Returns
        -------
        RunResult
            Final parameters, one record per step, wipe-outs, restarts, process ids.

        Raises
        ------
        ValueError
            If a kill or fault names a group outside the layout or a step outside the run.
        RuntimeError
            If a worker exits with an error (not a planned kill).
        TimeoutError
            If the run exceeds ``run_timeout``.
        """
        kills = tuple(kills)
        faults = tuple(faults)
        for name, kind, items in (("kill", Kill, kills), ("fault", (Fault, Stall), faults)):
            for item in items:
                if not isinstance(item, kind):
                    raise TypeError(f"{name} = {item!r} is not a {name.capitalize()}")
                if not 0 <= item.group < self.layout.n_groups:
                    raise ValueError(
                        f"{name} group = {item.group} is not in [0, {self.layout.n_groups})"
                    )
                if not 0 <= item.step < self.spec.steps:
                    raise ValueError(f"{name} step = {item.step} is not in [0, {self.spec.steps})")
        own_dir = run_dir is None
        folder = tempfile.mkdtemp(prefix="spare_fast_run_") if own_dir else str(run_dir)
        os.makedirs(folder, exist_ok=True)
        try:
            return self._run(kills, faults, folder)
        finally:
            if own_dir:
                shutil.rmtree(folder, ignore_errors=True)

    # ------------------------------------------------------------------ internals
    def _run(
        self, kills: tuple[Kill, ...], faults: tuple[Fault | Stall, ...], folder: str
    ) -> RunResult:
        # torchft's Rust side logs every quorum round at INFO level to stderr; keep warnings
        # only unless the caller asked for more (read once, when torchft is first imported).
        os.environ.setdefault("RUST_LOG", "warn")
        from torchft.coordination import LighthouseServer

        t_start = time.monotonic()
        store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
        lighthouse = LighthouseServer(
            bind="127.0.0.1:0",
            min_replicas=1,
            # Never form a quorum without a worker that still heartbeats: a slow survivor must
            # not be mistaken for a dead one.
            join_timeout_ms=int(self.quorum_timeout.total_seconds() * 1000),
            quorum_tick_ms=20,
            heartbeat_timeout_ms=int(self.heartbeat_timeout.total_seconds() * 1000),
        )
        # The server reports its host name; the workers all run here, so use the loopback.
        port = urlsplit(lighthouse.address()).port
        address = f"http://127.0.0.1:{port}"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        procs: dict[int, subprocess.Popen[bytes]] = {}
        pids: dict[int, list[int]] = {g: [] for g in range(self.layout.n_groups)}
        planned = {k.group for k in kills}
        epoch = 0
        wipeouts = 0

        def start(group: int, restore: bool) -> None:
            cfg = WorkerConfig(
                group=group,
                epoch=epoch,
                restore=restore,
                spec=self.spec,
                stacks=self.layout.stacks.tolist(),
                store_port=store.port,
                lighthouse_addr=address,
                run_dir=folder,
                kills=kills if not restore else (),
                faults=faults if not restore else (),
                collective_timeout=self.collective_timeout.total_seconds(),
                bucket_numel=self.bucket_numel,
                heartbeat_interval=self.heartbeat_interval.total_seconds(),
                quorum_timeout=self.quorum_timeout.total_seconds(),
                quorum_poll=1.0,
                verbose=self.verbose,
            )
            path = os.path.join(folder, f"config-e{epoch}-g{group}.pkl")
            with open(path, "wb") as fh:
                pickle.dump(cfg, fh)
            # A fresh interpreter per worker (not multiprocessing): the caller's __main__ is
            # never re-imported, and a SIGKILL shows as return code -9.
            proc = subprocess.Popen(
                [sys.executable, "-c", f"{_ENTRY}({path!r})"], env=env, cwd=folder
            )
            procs[group] = proc
            pids[group].append(int(proc.pid))

        try:
            for g in range(self.layout.n_groups):
                start(g, restore=False)
            deadline = t_start + self.run_timeout.total_seconds()
            while True:
                exited = {g: p.poll() for g, p in procs.items() if p.poll() is not None}
                for g, code in exited.items():
                    # 0: finished; -9: a planned kill; EXIT_EXCLUDED: dropped by the others.
                    if code not in (0, EXIT_EXCLUDED) and not (
                        code == -signal.SIGKILL and g in planned
                    ):
                        raise RuntimeError(f"worker of group {g} exited with code {code}")
                if len(exited) == len(procs):
                    break
                if store.check([f"wipeout/{epoch}"]):
                    survivors = set(json.loads(store.get(f"wipeout/{epoch}").decode()))
                    epoch += 1
                    wipeouts += 1
                    for g, p in list(procs.items()):
                        if g in survivors:
                            continue
                        if p.poll() is None:  # dropped by the lighthouse but still running
                            p.kill()
                            p.wait()
                        start(g, restore=True)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"run exceeded run_timeout = {self.run_timeout}")
                time.sleep(0.02)
            final = os.path.join(folder, "final.pt")
            if not os.path.exists(final):
                raise RuntimeError("all workers exited but none wrote the final parameters")
            blob = torch.load(final, weights_only=True)
            steps, wiped, rollbacks = _collect(folder, self.spec.steps)
            return RunResult(
                params={k: v.clone() for k, v in blob["model"].items()},
                steps=steps,
                wipeouts=wiped,
                restarts=wipeouts,
                rollbacks=rollbacks,
                pids=pids,
                seconds=time.monotonic() - t_start,
            )
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                p.wait()
            lighthouse.shutdown()


def _event(d: dict[str, Any]) -> EventRecord:
    return EventRecord(
        quorum_id=int(d["quorum_id"]),
        dead=tuple(int(g) for g in d["dead"]),
        status=str(d["status"]),
        phase=int(d["phase"]),
        depth=int(d["depth"]),
        moves=int(d["moves"]),
        patch=tuple((int(t), int(g)) for t, g in d["patch"]),
        patch_computed=tuple((int(t), int(g)) for t, g in d["patch_computed"]),
        step=int(d["step"]),
        seconds=float(d["seconds"]),
    )


def _collect(
    folder: str, n_steps: int
) -> tuple[list[StepRecord], list[EventRecord], list[tuple[int, int]]]:
    """Merge the per-worker record files: for each step the last commit of its last epoch."""
    lines: list[dict[str, Any]] = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                lines.extend(json.loads(line) for line in fh if line.strip())
    wiped: dict[tuple[int, int], EventRecord] = {}
    latest: dict[int, dict[int, dict[str, Any]]] = {}
    rollbacks: list[tuple[int, int]] = []
    for rec in lines:  # files are per process, and a process only appends
        if rec["kind"] == "rollback":
            rollbacks.append((int(rec["group"]), int(rec["step"])))
            continue
        if rec["kind"] == "wipeout":
            ev = _event(rec["event"])
            wiped[(int(rec["epoch"]), ev.quorum_id)] = ev
            continue
        step, epoch, group = int(rec["step"]), int(rec["epoch"]), int(rec["group"])
        by_group = latest.setdefault(step, {})
        old = by_group.get(group)
        if old is None or int(old["epoch"]) <= epoch:
            by_group[group] = rec
    steps: list[StepRecord] = []
    for step in range(n_steps):
        if step not in latest:
            raise RuntimeError(f"no worker recorded step {step}")
        epoch = max(int(r["epoch"]) for r in latest[step].values())
        recs = {g: r for g, r in latest[step].items() if int(r["epoch"]) == epoch}
        # Membership only shrinks within an epoch, so the smallest member list is the one of
        # the final commit (a member that committed and then died left an older record).
        head = min(recs.values(), key=lambda r: (len(r["members"]), int(r["group"])))
        members = tuple(int(g) for g in head["members"])
        steps.append(
            StepRecord(
                step=step,
                epoch=epoch,
                depth=int(head["depth"]),
                members=members,
                events=tuple(_event(e) for e in head["events"]),
                computed={
                    g: tuple(int(t) for t in recs[g]["computed"])
                    if g in recs
                    # A member that delivered its sums and died before it could write its
                    # record: what it computed is the step's agreed assignment.
                    else tuple(t for t, a in enumerate(head["assigned"]) if int(a) == g)
                    for g in members
                },
                loss=float(head["loss"]),
            )
        )
    return steps, [wiped[k] for k in sorted(wiped)], sorted(rollbacks)
