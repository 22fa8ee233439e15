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

from spare_fast.cli._common import (
    ArgumentParser,
    UsageError,
    duration,
    int_at_least,
    require,
    run_main,
)


def _need_torch() -> None:
    require("torch", "examples/train_mlp.py")
    require("torchft", "examples/train_mlp.py")


def _kill(text: str) -> object:
    _need_torch()
    from spare_fast.torch.testing import parse_kill

    try:
        return parse_kill(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"= {text!r} is not WORKER@STEP or WORKER@STEP:PHASE (e.g. 2@3 or 1@2:allreduce)"
        ) from None


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="train_mlp.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--groups", type=int_at_least(4), default=4, help="N, number of groups (>= 4)"
    )
    parser.add_argument(
        "--redundancy", type=int_at_least(1), default=2, help="r, types per group (<= N)"
    )
    parser.add_argument("--layout", default="cyclic", choices=["cyclic", "random", "sidon"])
    parser.add_argument("--steps", type=int_at_least(1), default=8)
    parser.add_argument("--checkpoint-every", type=int_at_least(1), default=2)
    parser.add_argument(
        "--pause",
        type=duration(0),
        default=0.0,
        help="time each shard takes, e.g. 0.25 or 250ms (to kill by hand)",
    )
    parser.add_argument(
        "--kill",
        type=_kill,
        action="append",
        default=[],
        metavar="WORKER@STEP[:PHASE]",
        help="send SIGKILL to group WORKER's PID at step STEP; PHASE compute (default) or "
        "allreduce",
    )
    parser.add_argument(
        "--bucket-numel",
        type=int_at_least(1),
        default=64,
        help="all-reduce bucket size in numbers (the MLP has 178 parameters: several buckets, "
        "so an allreduce kill lands mid-collective; the library default is DDP's 25 MiB)",
    )
    parser.add_argument("--run-dir", help="checkpoints and records (default: a temporary folder)")
    parser.add_argument(
        "--resume", action="store_true", help="continue the run in --run-dir from its checkpoint"
    )
    return run_main(parser, argv, _run)


def _run(args: argparse.Namespace) -> int:
    _need_torch()
    if args.resume and not args.run_dir:
        raise UsageError("--resume needs --run-dir")
    if args.redundancy > args.groups:
        raise UsageError("--redundancy", args.redundancy, f"must be <= --groups = {args.groups}")
    for k in args.kill:
        if k.group >= args.groups:
            raise UsageError(
                "--kill", f"{k.group}@{k.step}", f"names no group of 0..{args.groups - 1}"
            )
        if k.step > args.steps:
            raise UsageError("--kill", f"{k.group}@{k.step}", f"is after --steps = {args.steps}")
    if args.layout == "sidon" and args.groups < args.redundancy * (args.redundancy - 1) + 1:
        raise UsageError(
            "--layout sidon",
            f"-r {args.redundancy}",
            f"needs --groups >= {args.redundancy * (args.redundancy - 1) + 1}",
        )

    from spare_fast.layout import make_layout
    from spare_fast.torch import SpareTrainer, TrainSpec
    from spare_fast.torch.testing import PlannedFaults, max_rel_diff, mlp, reference_params

    layout = make_layout(args.layout, args.groups, args.redundancy)
    kills = args.kill
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
    raise SystemExit(main())
