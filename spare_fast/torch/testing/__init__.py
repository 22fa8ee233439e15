"""Everything that injects faults, plans kills or builds toy tasks, for tests, benchmarks
and the examples.

No runtime module of :mod:`spare_fast.torch` imports this package (a test reads their
imports to hold that); a run reaches it only through the deprecated ``kills=`` and
``faults=`` of :meth:`~spare_fast.torch.SpareTrainer.run` (:class:`LegacyPlan`).

* Plans (:mod:`spare_fast.torch.testing.plans`): :class:`Kill`, :class:`Fault`,
  :class:`Stall` and :func:`parse_kill`, plain frozen data.
* Faults (:mod:`spare_fast.torch.testing.faults`): :class:`PlannedFaults` (and its base
  :class:`Watcher`) read the progress the workers report
  (:meth:`~spare_fast.torch.SpareTrainer.workers`) from a thread of the launcher's process
  and send real signals to their PIDs; :data:`Injector` is
  :class:`~spare_fast.torch.testing.faults.SpuriousErrors`, a fault-injecting collective
  backend.
* Toy tasks: :mod:`spare_fast.torch.testing.mlp` (a two-layer MLP) and
  :mod:`spare_fast.torch.testing.tiny` (a small transformer, a BatchNorm MLP), whose
  module-level callables show the shape of a :class:`~spare_fast.torch.TrainSpec`.
* Around a run: :func:`reference_params` is the failure-free run in one process, written
  independently of the executor; :func:`max_rel_diff` compares two state dicts;
  :func:`ddp_step_seconds` times plain ``DistributedDataParallel`` on the same task.

Their old addresses (``spare_fast.torch.Kill``, ``spare_fast.torch.mlp``, ...) still import
them. The repository's test harnesses (own-loop runs, seeded chaos) live in its ``tests``
folder.

Examples
--------
>>> import torch
>>> t = {"w": torch.tensor([2.0, 0.0], dtype=torch.float64)}
>>> max_rel_diff(t, t)
0.0
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Any

import torch

from spare_fast.torch._types import TrainSpec, type_seed
from spare_fast.torch.testing import mlp, tiny
from spare_fast.torch.testing.faults import (
    LegacyPlan,
    PlannedFaults,
    SignalSent,
    SpuriousErrors,
    Watcher,
)
from spare_fast.torch.testing.plans import Fault, Kill, Stall, parse_kill

#: The fault-injecting collective backend, :class:`~spare_fast.torch.testing.faults.SpuriousErrors`:
#: given as ``backend=`` and in ``observers=``, it reports chosen completed all-reduces as failed.
Injector = SpuriousErrors

__all__ = [
    "Fault",
    "Injector",
    "Kill",
    "LegacyPlan",
    "PlannedFaults",
    "SignalSent",
    "Stall",
    "Watcher",
    "alive_pids",
    "ddp_step_seconds",
    "max_rel_diff",
    "mlp",
    "parse_kill",
    "reference_params",
    "tiny",
]


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

    from spare_fast.torch._procs import forkserver_context

    ctx = forkserver_context()
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
