"""Train a small MLP with SPARe over real worker processes, killing workers on request.

Each of the N groups is one worker process (gloo on CPU); with redundancy r every group holds
r shard types. Kills are real SIGKILLs; the survivors mask them (the printed depth rises and
the patch types are recomputed in the same step) unless a type loses all its holders, which
restarts every group from the last checkpoint.

Examples
--------
    python examples/train_mlp.py --groups 4 --redundancy 2 --steps 8 --kill 2@3
    python examples/train_mlp.py --kill 1@2:allreduce --kill 3@5
    python examples/train_mlp.py --kill 0@3 --kill 1@3     # wipe-out: restart from checkpoint
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=4, help="N, number of groups (>= 4)")
    parser.add_argument("--redundancy", type=int, default=2, help="r, types per group")
    parser.add_argument("--layout", default="cyclic", choices=["cyclic", "random", "sidon"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--checkpoint-every", type=int, default=2)
    parser.add_argument(
        "--kill",
        action="append",
        default=[],
        metavar="WORKER@STEP[:PHASE]",
        help="SIGKILL group WORKER at step STEP; PHASE compute (default) or allreduce",
    )
    args = parser.parse_args(argv)

    import torch

    from spare_fast.layout import make_layout
    from spare_fast.torch import SpareTrainer, TrainSpec, mlp, parse_kill

    if args.groups < 4:
        parser.error(f"--groups = {args.groups}: use at least 4")
    layout = make_layout(args.layout, args.groups, args.redundancy)
    kills = [parse_kill(k) for k in args.kill]
    spec = TrainSpec(
        mlp.build_mlp,
        mlp.make_sgd,
        mlp.mse_loss,
        mlp.synthetic_shard,
        args.steps,
        args.checkpoint_every,
    )
    print(f"layout {layout.kind}: N = {layout.n_groups}, r = {layout.redundancy}")
    for g, stack in enumerate(layout.stacks.tolist()):
        print(f"  group {g} holds types {stack}")
    for k in kills:
        print(f"  kill group {k.group} at step {k.step} ({k.phase})")
    result = SpareTrainer(spec, layout, verbose=True).run(kills)

    # The same training in one process, no failures: the executor must land on it.
    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())
    for step in range(args.steps):
        grads = [torch.zeros_like(p) for p in model.parameters()]
        for t in range(layout.n_types):
            model.zero_grad()
            x, y = mlp.synthetic_shard(step, t)
            mlp.mse_loss(model(x), y).backward()
            for acc, p in zip(grads, model.parameters(), strict=True):
                acc += p.grad
        for acc, p in zip(grads, model.parameters(), strict=True):
            p.grad = acc / layout.n_types
        optim.step()
    ref = model.state_dict()
    rel = max(float(((result.params[k] - ref[k]).abs() / ref[k].abs()).max()) for k in ref)
    replaced = [g for g, pids in result.pids.items() if len(pids) > 1]
    last = result.steps[-1]
    depth = last.events[-1].depth if last.events else last.depth
    print(
        f"done in {result.seconds:.1f} s: {result.restarts} restart(s), "
        f"final depth {depth}, alive {list(last.members)}, "
        f"groups given a new process {replaced}"
    )
    print(f"max relative difference to the failure-free run: {rel:.2e}")
    return 0 if np.isfinite(rel) and rel <= 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
