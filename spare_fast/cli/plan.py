"""``spare-fast plan``: size a job from the closed forms (redundancy, overhead, checkpointing)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from spare_fast.cli._common import UsageError, check_memory, int_at_least, timedelta_arg
from spare_fast.theory.plan import plan


def plan_bytes(groups: int) -> float:
    """Memory of :func:`plan` at N groups (the closed forms keep a few float arrays of N)."""
    return 32.0 * groups + 64e6


def _fmt_seconds(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


_NAMES = {"spare": "SPARe+CKPT", "replication": "Rep+CKPT", "checkpoint": "CKPT only"}


def format_plan(p: dict[str, Any]) -> str:
    """A readable table of :func:`plan`'s result."""
    inp = p["inputs"]
    head = f"N = {inp['groups']} groups"
    if inp["gpus"]:
        head = f"{inp['gpus']:,} GPUs in {inp['groups']} groups ({inp['gpus_per_group']:g} each)"
    lines = [
        f"{head}; failures every {_fmt_seconds(inp['mtbf_s'])}, restart "
        f"{_fmt_seconds(inp['restart_s'])}, checkpoint save {_fmt_seconds(inp['save_s'])}",
        "",
        f"{'':26}" + "".join(f"{_NAMES[s]:>14}" for s in ("spare", "replication", "checkpoint")),
    ]
    rows = [
        ("redundancy r*", lambda e: f"{e['redundancy']}"),
        (
            "  (rule floor(log2 N+.833))",
            lambda e: "" if e["redundancy_rule"] is None else f"{e['redundancy_rule']}",
        ),
        ("failures survived mu", lambda e: f"{e['endurable_failures']:.1f}"),
        ("compute overhead", lambda e: f"{e['compute_overhead']:.3f}x"),
        ("time between restarts", lambda e: _fmt_seconds(e["mean_time_between_restarts_s"])),
        ("checkpoint period T_c*", lambda e: _fmt_seconds(e["checkpoint_period_s"])),
        ("availability", lambda e: f"{100 * e['availability']:.2f}%"),
        ("time-to-train / T0", lambda e: f"{e['time_to_train']:.2f}"),
    ]
    for label, fmt in rows:
        lines.append(
            f"{label:26}"
            + "".join(f"{fmt(p[s]):>14}" for s in ("spare", "replication", "checkpoint"))
        )
    rec = p["recommendation"]
    if rec["saving_vs_next"] < 5e-4:  # shows as 0.0%: no scheme is better than the next
        tied = [
            s
            for s in _NAMES
            if abs(p[s]["time_to_train"] - rec["time_to_train"]) < 5e-4 * rec["time_to_train"]
        ]
        verdict = (
            f"Recommendation: none; {', '.join(_NAMES[s] for s in tied)} tie at time-to-train "
            f"{rec['time_to_train']:.2f} x T0 (failures too rare to matter)."
        )
    else:
        verdict = (
            f"Recommendation: {_NAMES[rec['scheme']]} with r = {rec['redundancy']} "
            f"(time-to-train {rec['time_to_train']:.2f} x T0, "
            f"{100 * rec['saving_vs_next']:.1f}% less than {_NAMES[rec['next']]})."
        )
    lines += [
        "",
        verdict,
        'Model: the closed forms of docs/model.md, "Closed-form theory" (overhead = depth lower '
        "bound, exponential failures); simulate before committing hardware.",
    ]
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="size a job: optimal redundancy, overhead, checkpoint period, time-to-train",
        description="Predict SPARe, replication and checkpoint-only from the closed forms.",
    )
    d = "a duration: 60s, 5min, 1h30min or seconds"
    p.add_argument("--groups", type=int_at_least(1), required=True, help="data-parallel groups N")
    p.add_argument(
        "--gpus", type=int_at_least(1), default=None, help="total GPUs (for the report only)"
    )
    p.add_argument(
        "--mtbf",
        type=timedelta_arg(0, lo_open=True),
        required=True,
        help=f"cluster-wide mean time between failures, {d}",
    )
    p.add_argument("--restart", type=timedelta_arg(0), required=True, help=f"global restart, {d}")
    p.add_argument(
        "--save", type=timedelta_arg(0, lo_open=True), required=True, help=f"checkpoint save, {d}"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.gpus is not None and args.gpus < args.groups:
        raise UsageError("--gpus", args.gpus, f"must be >= --groups = {args.groups}")
    check_memory("--groups", args.groups, plan_bytes, "the closed forms")
    result = plan(args.groups, args.mtbf, args.restart, args.save, gpus=args.gpus)
    print(json.dumps(result, indent=2) if args.json else format_plan(result))
    return 0
