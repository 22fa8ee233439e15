"""The run folder's records: what each worker process wrote, merged into the run's result.

Each worker appends one JSON line per commit, rollback, rejoin, wipe-out or fatal error to its
own file ``g<group>-p<pid>.jsonl`` in the run folder; a process killed mid-write leaves at most
its last line torn.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from typing import Any

from spare_fast.torch._bounds import EXIT_SERVICE_LOST
from spare_fast.torch._checkpoint import Checkpoints
from spare_fast.torch._procs import EXIT_LOST
from spare_fast.torch._types import EventRecord, StepRecord
from spare_fast.torch._worker import EXIT_EXCLUDED, EXIT_UNNEEDED

__all__ = ["collect", "describe", "holds_run", "last_ends", "last_epoch", "last_error", "records"]


def describe(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return {
        EXIT_EXCLUDED: "stood down (dropped by the others)",
        EXIT_UNNEEDED: "not needed",
        EXIT_SERVICE_LOST: "ended: it lost the lighthouse or the store",
        EXIT_LOST: "ended (its status was lost with the fork server: killed by a signal)",
    }.get(code, f"exit code {code}")


def holds_run(folder: str) -> bool:
    if not os.path.isdir(folder):
        return False
    if Checkpoints(os.path.join(folder, "checkpoints")).steps():
        return True
    return any(name.endswith(".jsonl") for name in os.listdir(folder))


def records(folder: str) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                for line in fh:
                    # A process killed mid-write leaves at most its last line torn.
                    with contextlib.suppress(json.JSONDecodeError):
                        if line.strip():
                            lines.append(json.loads(line))
    return lines


def last_epoch(folder: str) -> int:
    return max((int(r.get("epoch", -1)) for r in records(folder)), default=-1)


def last_error(folder: str, group: int, pid: int | None) -> str:
    path = os.path.join(folder, f"g{group}-p{pid}.jsonl")
    if not os.path.exists(path):
        return ""
    errors = [r for r in records_of(path) if r.get("kind") == "error"]
    return f"; last error: {errors[-1]['error']}" if errors else ""


def records_of(path: str) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            with contextlib.suppress(json.JSONDecodeError):
                if line.strip():
                    out.append(json.loads(line))
    return out


def last_ends(folder: str, every: list[tuple[int, Any]]) -> str:
    ends = [
        f"group {g} pid {p.pid} {describe(p.exitcode)}{last_error(folder, g, p.pid)}"
        for g, p in every[-2 * len({g for g, _ in every}) :]
        if p.exitcode not in (None, 0, EXIT_UNNEEDED)
    ]
    return "; ".join(ends) or "none"


def event(d: dict[str, Any]) -> EventRecord:
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
        decided_at=float(d.get("decided_at", 0.0)),
    )


def collect(
    folder: str, n_steps: int
) -> tuple[list[StepRecord], list[EventRecord], list[tuple[int, int]], list[tuple[int, int]]]:
    """Merge the per-worker record files: for each step the last commit of its last epoch."""
    lines = records(folder)
    wiped: dict[tuple[int, int], EventRecord] = {}
    latest: dict[int, dict[int, dict[str, Any]]] = {}
    rollbacks: list[tuple[int, int]] = []
    rejoins: set[tuple[int, int, int]] = set()
    for rec in lines:  # files are per process, and a process only appends
        if rec["kind"] == "rollback":
            rollbacks.append((int(rec["group"]), int(rec["step"])))
            continue
        if rec["kind"] == "rejoin":
            for g in rec["groups"]:
                rejoins.add((int(rec["epoch"]), int(g), int(rec["step"])))
            continue
        if rec["kind"] in ("error", "exit"):
            continue
        if rec["kind"] == "wipeout":
            ev = event(rec["event"])
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
                events=tuple(event(e) for e in head["events"]),
                computed={
                    g: tuple(int(t) for t in recs[g]["computed"])
                    if g in recs
                    # A member that delivered its sums and died before it could write its
                    # record: what it computed is the step's agreed assignment.
                    else tuple(t for t, a in enumerate(head["assigned"]) if int(a) == g)
                    for g in members
                },
                loss=float(head["loss"]),
                committed_at=float(head.get("committed_at", 0.0)),
            )
        )
    joined = [(g, step) for _, g, step in sorted(rejoins)]
    return steps, [wiped[k] for k in sorted(wiped)], sorted(rollbacks), joined
