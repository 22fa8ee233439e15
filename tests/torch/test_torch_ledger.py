"""The step ledger: one line per committed step per process, and ``spare-fast ledger check``.

A run with kills (own loop, real processes) writes its ledgers; the check passes on them and
fails, naming the step and the type, once one line is edited to drop one type. The check's
rules (rollbacks void a process's lines, a dead group's commit that the others did not make
is not the run's) are also checked on small hand-written ledgers.
"""

from __future__ import annotations

import glob
import json
import os

import pytest
from _torch_harness import LoopRun

from spare_fast import Layout
from spare_fast.cli import main as cli_main
from spare_fast.torch import LedgerError, check_ledger

LAYOUT = Layout.cyclic(4, 2)


def _write(folder, name: str, lines: list[dict]) -> None:
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")


def _step(group: int, step: int, members: list[int], types: list[int], epoch: int = 0) -> dict:
    return {
        "kind": "step",
        "group": group,
        "pid": 100 + group,
        "epoch": epoch,
        "step": step,
        "depth": 1,
        "members": members,
        "n_types": 4,
        "types": types,
        "patched": [],
        "events": [],
    }


def test_ledger_of_a_run_with_kills_checks_and_an_edited_one_fails(tmp_path, capsys) -> None:
    ledger = str(tmp_path / "ledger")
    with LoopRun(LAYOUT, 14, str(tmp_path), pause=0.05) as run:
        for g in range(4):
            run.start(g, ledger=ledger)
        run.wait(lambda: run.state(3)[1] >= 2)
        run.kill(3)
        run.wait(lambda: min(run.state(s)[1] for s in range(3)) >= 4)
        run.start(3, ledger=ledger)
        run.wait(lambda: run.state(1)[1] >= 7)
        run.kill(1)  # a second death, after the rejoin
        codes = run.join()
    assert [codes[s] for s in (0, 2, 4)] == [0, 0, 0], codes
    found = check_ledger(ledger)
    assert found["steps"] == 14 and found["files"] == 5
    assert found["patched"] > 0, "a kill inside a step patches types"
    assert cli_main(["ledger", "check", ledger]) == 0
    assert "every type summed exactly once" in capsys.readouterr().out
    # The lines hold members, types, depth and the events with their times.
    (path,) = glob.glob(os.path.join(ledger, f"ledger-g0-p{run.procs[0][1].pid}.jsonl"))
    with open(path, encoding="utf-8") as fh:
        lines = [json.loads(x) for x in fh]
    steps = [x for x in lines if x["kind"] == "step"]
    events = [e for x in steps for e in x["events"]]
    assert {tuple(e["dead"]) for e in events} >= {(3,), (1,)}
    assert all(e["detected_at"] <= e["decided_at"] for e in events)
    # Drop one type from group 0's last committed line: the check names that step and type.
    last = steps[-1]
    dropped = last["types"][0]
    last["types"] = last["types"][1:]
    with open(path, "w", encoding="utf-8") as fh:
        for x in lines:
            fh.write(json.dumps(x) + "\n")
    with pytest.raises(LedgerError, match=rf"step {last['step']}: type {dropped} summed 0 times"):
        check_ledger(ledger)
    capsys.readouterr()
    assert cli_main(["ledger", "check", ledger]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"step {last['step']}: type {dropped}" in err


def test_check_rules_on_hand_written_ledgers(tmp_path) -> None:
    full = [0, 1, 2, 3]
    # Group 3 committed step 1 in the all-reduce that failed for the others, then died: the
    # others committed step 1 without it (group 0 patched type 3). Group 2 completed step 1
    # with group 3 too and rolled it back.
    _write(tmp_path, "a.jsonl", [_step(0, 0, full, [0]), _step(0, 1, [0, 1, 2], [0, 3])])
    _write(tmp_path, "b.jsonl", [_step(1, 0, full, [1]), _step(1, 1, [0, 1, 2], [1])])
    _write(
        tmp_path,
        "c.jsonl",
        [
            _step(2, 0, full, [2]),
            _step(2, 1, full, [2]),
            {"kind": "rollback", "group": 2, "epoch": 0, "step": 1},
            _step(2, 1, [0, 1, 2], [2]),
        ],
    )
    _write(tmp_path, "d.jsonl", [_step(3, 0, full, [3]), _step(3, 1, full, [3])])
    assert check_ledger(str(tmp_path))["steps"] == 2
    # A type summed by two groups (group 2 also claims the patched type 3).
    _write(tmp_path, "c.jsonl", [_step(2, 0, full, [2]), _step(2, 1, [0, 1, 2], [2, 3])])
    with pytest.raises(LedgerError, match="step 1: type 3 summed 2 times"):
        check_ledger(str(tmp_path))
    # Group 2 completed step 1 with every group, rolled it back and redid it without group 3:
    # without its rollback line, its two commits of step 1 disagree.
    _write(
        tmp_path,
        "c.jsonl",
        [_step(2, 0, full, [2]), _step(2, 1, [0, 1, 2], [2, 1]), _step(2, 1, [0, 1, 2], [2])],
    )
    with pytest.raises(LedgerError, match="step 1: group 2 recorded two different sums"):
        check_ledger(str(tmp_path))
    # A step with no line at all.
    _write(tmp_path, "c.jsonl", [_step(2, 0, full, [2])])
    os.remove(os.path.join(tmp_path, "a.jsonl"))
    with pytest.raises(LedgerError, match="step 0: 0 memberships"):
        check_ledger(str(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LedgerError, match="no .jsonl files"):
        check_ledger(str(empty))
