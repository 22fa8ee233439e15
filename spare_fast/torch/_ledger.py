"""The step ledger: one JSON line per committed step per process, and its check.

``SpareGroup(..., ledger=DIR)`` writes ``DIR/ledger-g<group>-p<pid>.jsonl`` (or the one file
given when the path ends in ``.jsonl``). Each committed step is one line::

    {"kind": "step", "group": 2, "pid": 4711, "epoch": 0, "step": 5, "depth": 2,
     "members": [0, 1, 2], "n_types": 4, "types": [2, 3], "patched": [3],
     "events": [{"dead": [3], "status": "OK", "detected_at": ..., "decided_at": ...}]}

``types`` are the shard types whose gradient this process summed into the step's all-reduce
(``patched``: those among them it took over from a dead group in that step); ``members`` the
groups whose sums made the step's result. A rollback (a step that completed here but not
everywhere) is a line ``{"kind": "rollback", "step": s}``: that process's lines from step
``s`` on are void. Rejoins and wipe-outs are lines of their own.

:func:`check` verifies from the files alone that every type of every committed step was
summed exactly once: for each step (in the last epoch that ran it) exactly one membership
has a line from each of its groups, and among those lines every type appears once. This is
what SPARe promises and a dropped-batch scheme does not: no sample is lost, none counted
twice.
"""

from __future__ import annotations

import glob
import json
import os
from collections import defaultdict
from typing import Any

from spare_fast.torch._observer import Observer
from spare_fast.torch._types import Phase

__all__ = ["Ledger", "LedgerError", "check"]


class LedgerError(Exception):
    """A ledger shows a committed step whose types were not each summed exactly once (or
    cannot be read); the message is one line naming the step and the type."""


class Ledger(Observer):
    """Writes a group's ledger lines (an :class:`~spare_fast.torch.Observer`).

    Parameters
    ----------
    path : str
        A directory (created if missing), or a file name ending in ``.jsonl``.
    group : int
        The group of this process.
    n_types : int
        Shard types per step.
    """

    def __init__(self, path: str, group: int, n_types: int) -> None:
        path = os.fspath(path)
        if not path.endswith(".jsonl"):
            os.makedirs(path, exist_ok=True)
            path = os.path.join(path, f"ledger-g{int(group)}-p{os.getpid()}.jsonl")
        else:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.path = path
        self.group = int(group)
        self.n_types = int(n_types)
        self.epoch = 0
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the run

    def on_phase(self, group: int, epoch: int, step: int, phase: Phase, bucket: int) -> None:
        self.epoch = int(epoch)

    def on_record(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        line: dict[str, Any] = {
            "kind": kind,
            "group": self.group,
            "pid": os.getpid(),
            "epoch": self.epoch,
        }
        if kind == "step":
            events = record.get("events", [])
            line.update(
                step=int(record["step"]),
                depth=int(record["depth"]),
                members=[int(g) for g in record["members"]],
                n_types=self.n_types,
                types=sorted(int(t) for t in record["computed"]),
                patched=sorted(
                    int(t)
                    for e in events
                    for t, g in e.get("patch_computed", ())
                    if int(g) == self.group
                ),
                events=[_event(e) for e in events],
                committed_at=record.get("committed_at"),
            )
        elif kind == "rollback":
            line["step"] = int(record["step"])
        elif kind == "wipeout":
            line["event"] = _event(record.get("event", {}))
        else:
            line.update({k: v for k, v in record.items() if k not in line})
        self._fh.write(json.dumps(line) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        if not self._fh.closed:
            self._fh.close()


def _event(e: dict[str, Any]) -> dict[str, Any]:
    """An event's decision with its detection time (the failed collective) and decision time
    (both ``time.monotonic()``, comparable across the processes of one host)."""
    decided = float(e.get("decided_at", 0.0))
    return {
        "dead": list(e.get("dead", ())),
        "status": e.get("status"),
        "step": e.get("step"),
        "depth": e.get("depth"),
        "quorum_id": e.get("quorum_id"),
        "detected_at": decided - float(e.get("seconds", 0.0)),
        "decided_at": decided,
        "seconds": e.get("seconds"),
    }


def _read(folder: str) -> list[list[dict[str, Any]]]:
    """The lines of every ledger file in ``folder``, one list per file."""
    files = sorted(glob.glob(os.path.join(folder, "*.jsonl")))
    if not files:
        raise LedgerError(f"ledger {folder}: no .jsonl files")
    out = []
    for path in files:
        lines = []
        with open(path, encoding="utf-8") as fh:
            for no, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                    if line.get("kind") == "step":
                        _ = (int(line["group"]), int(line["step"]), int(line["n_types"]))
                        _ = ([int(g) for g in line["members"]], [int(t) for t in line["types"]])
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    raise LedgerError(f"{path}:{no}: not a ledger line ({exc})") from None
                lines.append(line)
        out.append(lines)
    return out


def check(folder: str) -> dict[str, int]:
    """Verify that every type of every committed step was summed exactly once.

    Returns
    -------
    dict
        ``{"steps": ..., "files": ..., "epochs": ..., "patched": ...}``: what was checked.

    Raises
    ------
    LedgerError
        One line naming the first step (and type) that fails.
    """
    files = _read(folder)
    # (epoch, step) -> members -> group -> types (a process's rolled-back lines removed)
    versions: dict[tuple[int, int], dict[tuple[int, ...], dict[int, list[int]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    n_types = 0
    patched = 0
    for lines in files:
        kept: list[dict[str, Any]] = []
        for line in lines:
            if line.get("kind") == "rollback":
                s, e = int(line["step"]), int(line.get("epoch", 0))
                kept = [x for x in kept if not (x["epoch"] == e and x["step"] >= s)]
            elif line.get("kind") == "step":
                kept.append(line)
        for x in kept:
            n_types = max(n_types, int(x["n_types"]))
            patched += len(x.get("patched", []))
            by_group = versions[(int(x["epoch"]), int(x["step"]))][tuple(sorted(x["members"]))]
            g = int(x["group"])
            if g in by_group and sorted(by_group[g]) != sorted(x["types"]):
                raise LedgerError(
                    f"step {x['step']}: group {g} recorded two different sums "
                    f"({by_group[g]} and {x['types']})"
                )
            by_group[g] = [int(t) for t in x["types"]]
    last_epoch: dict[int, int] = {}
    for e, s in versions:
        last_epoch[s] = max(last_epoch.get(s, e), e)
    if not last_epoch:
        raise LedgerError(f"ledger {folder}: no committed step")
    steps = sorted(last_epoch)
    missing = sorted(set(range(steps[0], steps[-1] + 1)) - set(steps))
    if steps[0] != 0 or missing:
        first = 0 if steps[0] != 0 else missing[0]
        raise LedgerError(f"step {first}: no line in any group's ledger")
    for s in steps:
        by_members = versions[(last_epoch[s], s)]
        complete = [m for m, by in by_members.items() if set(by) == set(m)]
        if len(complete) != 1:
            have = {m: sorted(by) for m, by in by_members.items()}
            raise LedgerError(
                f"step {s}: {len(complete)} memberships with a line from each member "
                f"(lines by membership: {have})"
            )
        members = complete[0]
        count = [0] * n_types
        for types in by_members[members].values():
            for t in types:
                if not 0 <= t < n_types:
                    raise LedgerError(f"step {s}: type {t} is not in [0, {n_types})")
                count[t] += 1
        for t, c in enumerate(count):
            if c != 1:
                who = sorted(g for g, ty in by_members[members].items() if t in ty)
                raise LedgerError(
                    f"step {s}: type {t} summed {c} times (members {list(members)}, "
                    f"computed by groups {who})"
                )
    return {
        "steps": len(steps),
        "files": len(files),
        "epochs": len({e for e, _ in versions}),
        "patched": patched,
    }
