"""Train a decoder-only transformer with SPARe across groups of K ranks (FSDP2 or TP inside).

One ``torchrun --nproc-per-node K`` per SPARe group starts this script K times. Inside the
group the model is parallelized as usual over the group's own ranks (the default process
group that torchrun's environment initializes): FSDP2 ``fully_shard`` (default; rank ``k``
computes piece ``k`` of each shard type's batch and FSDP2 averages the pieces), or tensor
parallelism with ``--tp`` (``parallelize_module``: attention and MLP split by columns and
rows; every rank reads the whole batch). SPARe runs across the groups: rank ``i`` of every
group reduces with rank ``i`` of the others. Float64, a map-style Dataset through
:class:`~spare_fast.torch.ShardSampler`, AdamW and a warm-up LR schedule.

Environment of each group (as for ``examples/train_transformer.py``): ``REPLICA_GROUP_ID``,
``TORCHFT_LIGHTHOUSE``, ``SPARE_FAST_STORE`` and ``SPARE_FAST_BIND``. Kill any rank of a
group (``kill -9 PID``): torchrun ends its siblings, the other groups mask the group in the
same step, and a new torchrun of K ranks for that group rejoins and heals shard by shard.
Every rank saves the full (gathered) final weights to ``--out`` (``{group}`` and ``{rank}``
are filled in); they equal the single-process failure-free run (``--reference``).

Examples
--------
    spare-fast lighthouse --bind 127.0.0.2:29510 &
    REPLICA_GROUP_ID=0 TORCHFT_LIGHTHOUSE=http://127.0.0.2:29510 \\
      SPARE_FAST_STORE=127.0.0.2:29511 SPARE_FAST_BIND=127.0.0.2 \\
      torchrun --standalone --nproc-per-node 2 examples/train_fsdp.py --out f-g{group}-r{rank}.pt
    python examples/train_fsdp.py --reference --out reference.pt
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import torch
import torch.distributed as dist
from noisy_counting import NoisyCounting  # examples/noisy_counting.py, this script's neighbour
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader

VOCAB, SEQ, DIM, HEADS, LAYERS = 16, 8, 16, 4, 2


class Block(nn.Module):
    """Pre-norm causal self-attention and MLP; heads are read from the local width, so a
    column-split (tensor-parallel) block runs its share of the heads."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM, bias=False)
        self.q = nn.Linear(DIM, DIM, bias=False)
        self.k = nn.Linear(DIM, DIM, bias=False)
        self.v = nn.Linear(DIM, DIM, bias=False)
        self.o = nn.Linear(DIM, DIM, bias=False)
        self.norm2 = nn.LayerNorm(DIM, bias=False)
        self.up = nn.Linear(DIM, 4 * DIM, bias=False)
        self.down = nn.Linear(4 * DIM, DIM, bias=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        b, n, _ = h.shape
        x = self.norm1(h)
        q, k, v = (
            lin(x).view(b, n, -1, DIM // HEADS).transpose(1, 2) for lin in (self.q, self.k, self.v)
        )
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + self.o(a.transpose(1, 2).reshape(b, n, -1))
        return h + self.down(F.gelu(self.up(self.norm2(h))))


class Decoder(nn.Module):
    """Token and position embeddings, LAYERS blocks, a final norm and a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.1)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))


def build(args: argparse.Namespace) -> tuple[nn.Module, torch.optim.Optimizer, object]:
    torch.manual_seed(args.seed)  # every group (and the reference) builds the same weights
    model = Decoder().to(torch.float64)
    if args.k > 1:
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cpu", (args.k,))
        if args.tp:
            from torch.distributed.tensor.parallel import (
                ColwiseParallel,
                RowwiseParallel,
                parallelize_module,
            )

            plan = {"q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel()}
            plan |= {"o": RowwiseParallel(), "up": ColwiseParallel(), "down": RowwiseParallel()}
            for block in model.blocks:
                parallelize_module(block, mesh, plan)  # type: ignore[arg-type]
        else:
            from torch.distributed.fsdp import fully_shard

            for block in model.blocks:
                fully_shard(block, mesh=mesh)
            fully_shard(model, mesh=mesh)
    # foreach=False: under tensor parallelism DTensor and plain parameters are mixed.
    optim = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, foreach=False)
    warmup = max(args.steps // 5, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda s: min((s + 1) / warmup, 1.0))
    return model, optim, sched


def full_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The model's full weights on every rank (DTensors gathered inside the group)."""
    from torch.distributed.tensor import DTensor

    return {
        k: (v.full_tensor() if isinstance(v, DTensor) else v).detach().clone()
        for k, v in model.state_dict().items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=3, help="N, number of groups")
    parser.add_argument("--redundancy", type=int, default=2, help="r, types per group")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4, help="samples per shard type")
    parser.add_argument("--dataset", type=int, default=256, help="dataset size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tp", action="store_true", help="tensor parallelism instead of FSDP2")
    parser.add_argument("--out", required=True, help="final weights ({group}, {rank} filled in)")
    parser.add_argument("--reference", action="store_true", help="the failure-free run, here")
    parser.add_argument("--quiet", action="store_true", help="no line per step")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds of extra work per step")
    parser.add_argument(
        "--hold", metavar="FILE", help="before each commit, wait while FILE exists (demos)"
    )
    args = parser.parse_args(argv)

    from spare_fast.layout import Layout
    from spare_fast.torch import ShardSampler, SpareGroup, type_seed

    torch.set_num_threads(1)
    # FSDP2 warns that the root returns a view (the head's output); nothing edits it in place.
    warnings.filterwarnings("ignore", message="FSDP2-wrapped module")
    args.k, rank = 1, 0
    if not args.reference and "WORLD_SIZE" in os.environ:
        dist.init_process_group("gloo")  # the group's own K ranks (torchrun's environment)
        args.k, rank = dist.get_world_size(), dist.get_rank()
    n = args.groups
    group_id = os.environ.get("REPLICA_GROUP_ID", "?")
    split = 1 if args.tp else args.k
    if args.batch % split:
        print(
            f"group {group_id}: --batch {args.batch} is not divisible by the group's "
            f"K = {args.k} ranks",
            file=sys.stderr,
        )
        return 2
    if args.tp and HEADS % args.k:
        print(f"group {group_id}: {HEADS} heads do not split over K = {args.k}", file=sys.stderr)
        return 2
    data = NoisyCounting(args.dataset, SEQ, VOCAB, seed=args.seed)
    sampler = ShardSampler(data, n_types=n, batch_size=args.batch, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch, sampler=sampler)
    model, optim, sched = build(args)
    piece = args.batch // split

    def compute(step: int, shard_type: int) -> torch.Tensor:
        """The loss of this rank's piece of shard type ``shard_type`` of step ``step``."""
        sampler.select(step, shard_type)
        x, y = next(iter(loader))
        if split > 1:  # FSDP2: rank k reads piece k; FSDP2 averages the K pieces' gradients
            x, y = x[rank * piece : (rank + 1) * piece], y[rank * piece : (rank + 1) * piece]
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))

    if args.reference:
        params = list(model.parameters())
        for step in range(args.steps):
            grads = [torch.zeros_like(p) for p in params]
            for t in range(n):
                torch.manual_seed(type_seed(args.seed, step, t))
                model.zero_grad()
                compute(step, t).backward()
                for g, p in zip(grads, params, strict=True):
                    g += p.grad
            for g, p in zip(grads, params, strict=True):
                p.grad = g / n
            optim.step()
            sched.step()  # type: ignore[attr-defined]
        torch.save(model.state_dict(), args.out)
        print(f"reference: {args.steps} steps, saved {args.out}")
        return 0

    with SpareGroup(
        model, optim, Layout.cyclic(n, args.redundancy), args.steps, scheduler=sched,
        seed=args.seed, verbose=not args.quiet,
    ) as group:  # fmt: skip
        me = f"group {group.group} rank {rank}/{args.k}"
        print(f"{me}: pid {os.getpid()} starting", flush=True)
        group.start()
        if group.step > 0:
            print(f"{me}: rejoined at step {group.step}", flush=True)
        while group.step < args.steps:
            group.reduce(compute)
            optim.step()
            sched.step()  # type: ignore[attr-defined]
            if args.pause:
                time.sleep(args.pause)
            while args.hold and os.path.exists(args.hold):
                time.sleep(0.05)
            group.step_end()
    out = args.out.format(group=group.group, rank=rank)
    torch.save(full_state(model), out)
    print(f"{me}: done, {group.step} steps, depth {group.depth}, saved {out}", flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
