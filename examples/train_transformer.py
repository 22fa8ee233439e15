"""Train a small decoder-only transformer with SPARe inside an ordinary PyTorch loop.

This script is the worker: ``torchrun`` (or any launcher) starts one copy per SPARe group; the
model and the loss are defined in this ``__main__``, the map-style Dataset in its neighbour
``examples/noisy_counting.py`` (shared with ``train_fsdp.py``). The loop is the usual one (the
Dataset through a DataLoader, AdamW, a warm-up + cosine LR schedule, gradient clipping,
dropout); SPARe's part is ``group.reduce(compute)`` and ``group.step_end()``. The membership
service is ``spare-fast lighthouse``; each process reads its group and the addresses from the
environment:

    REPLICA_GROUP_ID    the SPARe group of this process (0 .. N-1)
    TORCHFT_LIGHTHOUSE  http://HOST:PORT of the lighthouse
    SPARE_FAST_STORE    HOST:PORT of the run's TCPStore (served by the lighthouse command)
    SPARE_FAST_BIND     local address the collectives bind to (one per "host")
    SPARE_FAST_RUN_KEY  the run's shared secret (every group the same; optional, see
                        docs/guide/executor-trust.md)

The exit code says how the process ended (``spare_fast.torch.EXIT_CODES``): 0 done, 3 dropped
by the others (start a new process for the group), 4 not needed (the run finished first),
5 wipe-out (restart every group with ``--resume`` and the newest valid checkpoint), 6 another
run's settings (fix the named field), 7 refused for want of the run key, 8 a protocol error,
9 a timeout, 10 an unreadable checkpoint, 1 anything else.

Kill a group's process (``kill -9 PID``) and the survivors mask it in the same step; start a
new process for that group (same command) and it rejoins at a step boundary with the
parameters and optimizer state of a live peer, and the depth falls back. The final weights
equal the failure-free run's (``--reference`` computes that run in one process).
``examples/run_two_hosts.sh`` does the whole demo on two loopback "hosts".

Examples
--------
    spare-fast lighthouse --bind 127.0.0.2:29510 &
    REPLICA_GROUP_ID=0 TORCHFT_LIGHTHOUSE=http://127.0.0.2:29510 SPARE_FAST_STORE=127.0.0.2:29511 \\
      SPARE_FAST_BIND=127.0.0.2 torchrun --nnodes 1 --nproc-per-node 1 --rdzv-backend static \\
      --master-addr 127.0.0.2 --master-port 29600 examples/train_transformer.py --out final-g0.pt
    python examples/train_transformer.py --reference --out reference.pt
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

import torch
from noisy_counting import NoisyCounting  # examples/noisy_counting.py, this script's neighbour
from torch import nn
from torch.utils.data import DataLoader

VOCAB, SEQ, DIM, HEADS, LAYERS = 16, 12, 16, 2, 2


class Decoder(nn.Module):
    """Token + position embeddings, causal self-attention blocks with dropout, a linear head."""

    def __init__(self, dropout: float = 0.1) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.1)
        # No biases in the blocks: the key bias's gradient is exactly zero in exact arithmetic
        # (softmax ignores a shift), so what is computed is rounding noise AdamW would amplify.
        block = nn.TransformerEncoderLayer(
            DIM, HEADS, dim_feedforward=2 * DIM, dropout=dropout, batch_first=True, bias=False
        )
        self.blocks = nn.TransformerEncoder(block, LAYERS, enable_nested_tensor=False)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[1]
        h = self.drop(self.embed(tokens) + self.pos[:n])
        mask = nn.Transformer.generate_square_subsequent_mask(n, dtype=h.dtype)
        return self.head(self.blocks(h, mask=mask, is_causal=True))


def build(steps: int, seed: int) -> tuple[nn.Module, torch.optim.Optimizer, object]:
    torch.manual_seed(seed)  # every group builds the same initial weights
    model = Decoder().to(torch.float64)
    optim = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    warmup = max(steps // 10, 1)

    def lr_at(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(steps - warmup, 1)))

    sched = torch.optim.lr_scheduler.LambdaLR(optim, lr_at)
    return model, optim, sched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=4, help="N, number of groups")
    parser.add_argument("--redundancy", type=int, default=2, help="r, types per group")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch", type=int, default=4, help="samples per shard type")
    parser.add_argument("--dataset", type=int, default=256, help="dataset size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds of extra work per step")
    parser.add_argument("--out", required=True, help="where to save the final state_dict")
    parser.add_argument(
        "--checkpoint-dir", help="where the lowest group writes checkpoints (this host's disk)"
    )
    parser.add_argument(
        "--ledger", metavar="DIR", help="write this group's step ledger to DIR (see docs)"
    )
    parser.add_argument(
        "--resume", metavar="CHECKPOINT", help="start every group from this checkpoint file"
    )
    parser.add_argument(
        "--reference", action="store_true", help="the failure-free run, in this one process"
    )
    args = parser.parse_args(argv)

    from spare_fast.layout import Layout
    from spare_fast.torch import ShardSampler, SpareGroup, exit_code, type_seed

    torch.set_num_threads(1)
    n = args.groups
    data = NoisyCounting(args.dataset, SEQ, VOCAB, seed=args.seed)
    sampler = ShardSampler(data, n_types=n, batch_size=args.batch, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch, sampler=sampler)
    model, optim, sched = build(args.steps, args.seed)

    def compute(step: int, shard_type: int) -> torch.Tensor:
        """The loss of shard type ``shard_type`` of step ``step`` (SPARe calls backward)."""
        sampler.select(step, shard_type)
        x, y = next(iter(loader))
        logits = model(x)
        return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))

    if args.reference:
        # One process, no SPARe: each step sums the N types' gradients with the same seeds.
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
            nn.utils.clip_grad_norm_(params, 1.0)
            optim.step()
            sched.step()  # type: ignore[attr-defined]
        torch.save(model.state_dict(), args.out)
        print(f"reference: {args.steps} steps, saved {args.out}")
        return 0

    layout = Layout.cyclic(n, args.redundancy)
    try:
        with SpareGroup(
            model,
            optim,
            layout,
            args.steps,
            scheduler=sched,
            seed=args.seed,
            checkpoint_dir=args.checkpoint_dir,
            checkpoint_every=20,
            verbose=True,
            ledger=args.ledger,
        ) as group:
            train(group, args, model, optim, sched, compute)
    except Exception as exc:  # noqa: BLE001 - one line and the exception's exit code
        print(f"pid {os.getpid()}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return exit_code(exc)
    torch.save(model.state_dict(), args.out)
    print(f"group {group.group}: done, {group.step} steps, saved {args.out}", flush=True)
    return 0


def train(
    group: Any,
    args: argparse.Namespace,
    model: nn.Module,
    optim: torch.optim.Optimizer,
    sched: Any,
    compute: Any,
) -> None:
    """The ordinary loop around SPARe's reduce and step_end."""
    pid = os.getpid()
    print(f"group {group.group}: pid {pid} starting", flush=True)
    group.start(checkpoint=args.resume)
    if group.step > 0:
        print(f"group {group.group}: pid {pid} rejoined at step {group.step}", flush=True)
    while group.step < args.steps:
        loss = group.reduce(compute)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        sched.step()
        if args.pause:
            time.sleep(args.pause)
        print(
            f"group {group.group}: step {group.step:3d} depth {group.depth} loss {loss:.6f} "
            f"types {group.types_for_step()}",
            flush=True,
        )
        group.step_end()


if __name__ == "__main__":
    sys.exit(main())
