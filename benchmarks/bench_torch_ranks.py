"""SPARe across groups of K ranks against plain HSDP, per step, failure-free (pytest-benchmark).

    python -m pytest benchmarks/bench_torch_ranks.py --benchmark-enable --benchmark-only

N = 3 groups of K = 2 ranks (one ``torchrun --nproc-per-node 2`` per group), FSDP2 inside
each group on the decoder of ``examples/train_fsdp.py`` (widened). In one run every rank
alternates blocks of steps: SPARe steps (``reduce``, optimizer, ``step_end``; r = 2, depth 1:
one shard type per group) and plain HSDP steps on the same model (the group's one batch,
FSDP2's reduce-scatter, then one all-reduce of the local gradient shards across groups over
the same rank-index process group SPARe uses). The figure is the ratio of the median step
times, in ``extra_info`` and printed; nothing asserts a time.

This file is also the worker that each torchrun starts (``python bench_torch_ranks.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROUNDS, BLOCK = 4, 5


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("train_fsdp", ROOT / "examples" / "train_fsdp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.DIM, module.SEQ, module.HEADS = 64, 16, 4  # a wider model than the example's
    return module


def worker(out: str) -> None:
    """One rank: alternate blocks of SPARe and plain HSDP steps; write the step times."""
    import torch
    import torch.distributed as dist
    from torch.distributed.tensor import DTensor
    from torch.nn import functional as F

    from spare_fast.layout import Layout
    from spare_fast.torch import ShardSampler, SpareGroup

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="FSDP2-wrapped module")
    ex = _example()
    dist.init_process_group("gloo")
    k, rank = dist.get_world_size(), dist.get_rank()
    steps = ROUNDS * BLOCK
    model, optim, sched = ex.build(argparse.Namespace(seed=0, k=k, tp=False, steps=steps))
    data = ex.NoisyCounting(512)
    batch, n = 8, 3
    sampler = ShardSampler(data, n_types=n, batch_size=batch)
    piece = batch // k

    def compute(step: int, shard_type: int) -> torch.Tensor:
        idx = sampler.indices(step, shard_type)[rank * piece : (rank + 1) * piece]
        x = torch.stack([data[i][0] for i in idx])
        y = torch.stack([data[i][1] for i in idx])
        return F.cross_entropy(model(x).reshape(-1, ex.VOCAB), y.reshape(-1))

    group = SpareGroup(model, optim, Layout.cyclic(n, 2), steps, scheduler=sched).start()
    params = list(model.parameters())

    def hsdp_step(step: int) -> None:
        model.zero_grad(set_to_none=False)
        compute(step, group.group).backward()
        shards = [p.grad.to_local() if isinstance(p.grad, DTensor) else p.grad for p in params]
        flat = torch.cat([s.reshape(-1) for s in shards])
        group.collectives.pg.allreduce([flat]).wait()
        flat /= n
        offset = 0
        for s in shards:
            s.copy_(flat[offset : offset + s.numel()].view_as(s))
            offset += s.numel()
        optim.step()
        sched.step()

    spare, hsdp = [], []
    for r in range(ROUNDS):
        for _ in range(BLOCK):
            t0 = time.perf_counter()
            group.reduce(compute)
            optim.step()
            sched.step()
            group.step_end()
            spare.append(time.perf_counter() - t0)
        for i in range(BLOCK):
            t0 = time.perf_counter()
            hsdp_step(steps + r * BLOCK + i)
            hsdp.append(time.perf_counter() - t0)
    group.close()
    # The first block of each kind warms up.
    Path(out.format(group=group.group, rank=rank)).write_text(
        json.dumps({"spare": spare[BLOCK:], "hsdp": hsdp[BLOCK:]})
    )
    dist.destroy_process_group()


def run_groups(folder: Path) -> dict[str, dict[str, list[float]]]:
    """One torchrun of 2 ranks per group running :func:`worker`; the step times by rank."""
    from spare_fast.torch._serve import serve

    with serve("127.0.0.2") as service:
        procs = []
        for g in range(3):
            env = dict(
                os.environ,
                REPLICA_GROUP_ID=str(g),
                TORCHFT_LIGHTHOUSE=service.lighthouse_addr,
                SPARE_FAST_STORE=service.store_addr,
                SPARE_FAST_BIND="127.0.0.2" if g == 0 else "127.0.0.3",
                PYTHONPATH=str(ROOT),
                RUST_LOG="warn",
            )
            cmd = [
                sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", "2", __file__, str(folder / "times-g{group}-r{rank}.json"),
            ]  # fmt: skip
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL))
        for proc in procs:
            assert proc.wait(timeout=600) == 0
    return {p.name: json.loads(p.read_text()) for p in sorted(folder.glob("times-*.json"))}


def test_step_cost_against_hsdp(benchmark: Any, tmp_path: Path) -> None:
    ratios: list[float] = []
    medians: dict[str, float] = {}

    def once() -> None:
        times = run_groups(tmp_path)
        assert len(times) == 6
        spare = statistics.median(t for r in times.values() for t in r["spare"])
        hsdp = statistics.median(t for r in times.values() for t in r["hsdp"])
        medians.update(spare_step_s=spare, hsdp_step_s=hsdp)
        ratios.append(spare / hsdp)

    benchmark.pedantic(once, rounds=1, iterations=1)
    benchmark.extra_info.update(ratio_to_hsdp=ratios[0], **medians)
    print(
        f"\nN = 3, K = 2, FSDP2: SPARe step {medians['spare_step_s'] * 1e3:.1f} ms, plain "
        f"HSDP {medians['hsdp_step_s'] * 1e3:.1f} ms: ratio {ratios[0]:.2f}"
    )


if __name__ == "__main__":
    worker(sys.argv[1])
