"""Train a small MLP with SPARe over real worker processes, surviving whatever kills them.

Each of the N groups is one worker process (gloo on CPU); with redundancy r every group holds
r shard types. The launcher prints every worker's PID: kill any of them from another shell
(``kill -9 PID``, ``kill PID``, ``kill -SEGV PID``) and the survivors mask it (the printed
depth rises and the patch types are recomputed in the same step) unless a type loses all its
holders, which restarts every group from the last checkpoint. ``--kill G@STEP`` does the same
from a thread of this process, which sends SIGKILL to group G's PID once it reaches STEP.

Examples
--------
    python examples/train_mlp.py --groups 4 --redundancy 2 --steps 8 --kill 2@3
    python examples/train_mlp.py --kill 1@2:allreduce --kill 3@5
    python examples/train_mlp.py --kill 0@3 --kill 1@3     # wipe-out: restart from checkpoint
    python examples/train_mlp.py --steps 40 --pause 0.25 --run-dir run1   # slow: kill -9 by hand
    python examples/train_mlp.py --steps 40 --pause 0.25 --run-dir run1 --resume
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=4, help="N, number of groups (>= 4)")
    parser.add_argument("--redundancy", type=int, default=2, help="r, types per group")
    parser.add_argument("--layout", default="cyclic", choices=["cyclic", "random", "sidon"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--checkpoint-every", type=int, default=2)
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds each shard takes (to kill by hand)"
    )
    parser.add_argument(
        "--kill",
        action="append",
        default=[],
        metavar="WORKER@STEP[:PHASE]",
        help="send SIGKILL to group WORKER's PID at step STEP; PHASE compute (default) or "
        "allreduce",
    )
    parser.add_argument(
        "--bucket-numel",
        type=int,
        default=64,
        help="all-reduce bucket size in numbers (the MLP has 178 parameters: several buckets, "
        "so an allreduce kill lands mid-collective; the library default is DDP's 25 MiB)",
    )
    parser.add_argument("--run-dir", help="checkpoints and records (default: a temporary folder)")
    parser.add_argument(
        "--resume", action="store_true", help="continue the run in --run-dir from its checkpoint"
    )
    args = parser.parse_args(argv)
    if args.groups < 4:
        parser.error(f"--groups = {args.groups}: use at least 4")
    if args.resume and not args.run_dir:
        parser.error("--resume needs --run-dir")

    from spare_fast.layout import make_layout
    from spare_fast.torch import SpareTrainer, TrainSpec, mlp, parse_kill
    from spare_fast.torch.testing import PlannedFaults, max_rel_diff, reference_params

    layout = make_layout(args.layout, args.groups, args.redundancy)
    kills = [parse_kill(k) for k in args.kill]
    shard = functools.partial(mlp.paused_shard, args.pause) if args.pause else mlp.synthetic_shard
    spec = TrainSpec(
        mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, shard, args.steps, args.checkpoint_every
    )
    print(f"layout {layout.kind}: N = {layout.n_groups}, r = {layout.redundancy}")
    for g, stack in enumerate(layout.stacks.tolist()):
        print(f"  group {g} holds types {stack}")
    for k in kills:
        print(f"  kill group {k.group} at step {k.step} ({k.phase})")
    trainer = SpareTrainer(spec, layout, bucket_numel=args.bucket_numel, verbose=True)
    # The planned kills come from outside the workers: a thread here watches their reported
    # progress and signals their PIDs, as `kill -9 PID` from another shell would.
    killer = PlannedFaults(trainer, kills) if kills else contextlib.nullcontext()
    with killer:
        result = trainer.run(run_dir=args.run_dir, resume=args.resume)

    # The same training in one process, no failures: the executor must land on it.
    rel = max_rel_diff(result.params, reference_params(spec, layout.n_types))
    replaced = [g for g, pids in result.pids.items() if len(pids) > 1]
    last = result.steps[-1]
    depth = last.events[-1].depth if last.events else last.depth
    print(
        f"done in {result.seconds:.1f} s: {result.restarts} restart(s), "
        f"final depth {depth}, alive {list(last.members)}, "
        f"groups given a new process {replaced}"
    )
    print(f"max relative difference to the failure-free run: {rel:.2e}")
    return 0 if rel <= 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
