"""Regression tests for what fuzzing the package boundary found (one test per finding).

Each test reproduces one finding (docs/model.md, "The controller", states the invariants
restore checks) and would fail before the fix: wrong answers, wrong messages, memory blow-ups,
crashes or accepted forgeries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import spare_fast
from spare_fast import Controller, Layout, _core, solve
from spare_fast.graph import min_cost_flow

sys.path.insert(0, str(Path(__file__).resolve().parent))
import snapshot_format  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _run_capped(code: str, extra_mb: int = 600) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter whose address space may grow by `extra_mb` only."""
    prelude = textwrap.dedent(
        f"""
        import resource, numpy as np
        import spare_fast
        from spare_fast import Controller, Layout, solve, _core
        vm = int([l for l in open('/proc/self/status') if l.startswith('VmSize')][0].split()[1])
        cap = (vm + {extra_mb} * 1024) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        """
    )
    # The child imports the same spare_fast as this process (installed or in the source tree).
    where = str(Path(spare_fast.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=where + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=where,  # not the source tree, whose spare_fast/ would shadow an installed one
        timeout=300,
    )


# -- 1. an invalid type id is not taken as type 0 ---------------------------------------------
@pytest.mark.parametrize(
    ("stacks", "shown"),
    [
        (np.array([[-(2**63), 1], [1, 0]], np.int64), "-9223372036854775808"),
        (np.array([[2**63, 1], [1, 0]], np.uint64), "9223372036854775808"),
    ],
)
def test_item1_solve_rejects_ids_that_wrap(stacks, shown):
    with pytest.raises(ValueError, match=rf"stacks\[0, 0\] = {shown} is not in"):
        solve(stacks, [True, True])


# -- 2. move totals cannot overflow -----------------------------------------------------------
def test_item2_total_cost_bound_rejected_up_front():
    n = 2**24 + 2
    g = np.arange(n, dtype=np.int32)[:, None]
    stacks = np.ascontiguousarray(np.concatenate([g - g % 2, g - g % 2 + 1], axis=1))
    cost = np.full(stacks.shape, 2**40, dtype=np.int64)
    with pytest.raises(ValueError, match=r"exceeds 2\*\*56"):
        solve(stacks, np.ones(n, bool), move_cost=cost)
    with pytest.raises(ValueError, match=r"exceeds 2\*\*56"):
        Controller(Layout.cyclic(2**16 + 1, 2), move_cost=np.full((2**16 + 1, 2), 2**40))


def test_item2_costs_at_the_bound_sum_exactly():
    # n_groups * height * max cost = 2**56 exactly: accepted, and the totals are exact.
    # Pairs of groups hold the same two types (the shape of the overflow reproducer): at depth
    # 1 one group of each pair brings its second type up, at cost 2**40 each.
    n = 2**15
    g = np.arange(n, dtype=np.int32)[:, None]
    stacks = np.concatenate([g - g % 2, g - g % 2 + 1], axis=1)
    cost = np.full((n, 2), 2**40, dtype=np.int64)
    assert solve(stacks, np.ones(n, bool), move_cost=cost).moves == (n // 2) * 2**40
    ctl = Controller(stacks, move_cost=cost)
    assert ctl.restart().moves == (n // 2) * 2**40
    d = ctl.fail(list(range(0, n, 2)))
    assert d.ok and d.depth == 2 and d.moves % 2**40 == 0


# -- 3. threads: private input copies, state read under the lock ------------------------------
def test_item3_writer_threads_against_events_solve_and_views():
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import race_threads

    counts = race_threads.main(2.0)
    assert counts["decided"] > 0 and counts["read"] > 0 and counts["solved"] > 0


def test_item3_decision_carries_its_own_event():
    ctl = Controller(Layout.cyclic(12, 3))
    d = ctl.fail(0)
    assert d._event == ctl.events == 1
    ctl.fail(5)
    with pytest.raises(RuntimeError, match="stale: the controller has decided 1 more"):
        _ = d.assignment


def test_item3_views_are_copies_taken_under_the_lock():
    ctl = Controller(Layout.cyclic(12, 3))
    before = ctl.stacks
    ctl.fail(0)
    assert not before.flags.writeable
    assert np.array_equal(before, Layout.cyclic(12, 3).stacks)  # a copy: later events leave it


# -- 4. nothing is sized by an unchecked value ------------------------------------------------
def test_item4_one_cell_inputs_allocate_nothing_big():
    blob_v1 = snapshot_format.build(
        dict(
            version=1,
            n_groups=1,
            height=1,
            depth=1,
            initial_depth=1,
            wiped=0,
            events=0,
            unit=1,
            initial_moves=0,
            initial_swaps=0,
            initial_stacks=[2**28],
            stacks=[2**28],
            move_cost=[],
            alive=[1],
            assignment=[0],
            initial_assignment=[0],
        )
    )
    fields = snapshot_format.parse(Controller(Layout.from_stacks([[0]])).snapshot())
    fields.update(layout_stacks=[2**28], initial_stacks=[2**28], stacks=[2**28])
    blob_v2 = snapshot_format.build(fields)
    r = _run_capped(
        f"""
        for call in (lambda: solve([[2**28]], [True]),
                     lambda: solve(np.array([[2**31 - 2]], np.int32), [True]),
                     lambda: Controller.restore({blob_v1!r}),
                     lambda: Controller.restore({blob_v2!r})):
            try:
                call()
            except ValueError as e:
                print("ValueError", e)
            else:
                raise SystemExit("accepted")
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("ValueError") == 4


# -- 5. restore re-derives and checks every invariant; optional HMAC --------------------------
def _forged(edit):
    ctl = Controller(Layout.cyclic(8, 3))
    ctl.fail(1)
    fields = snapshot_format.parse(ctl.snapshot())
    edit(fields)
    return snapshot_format.build(fields)


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("depth raised", lambda f: f.update(depth=3)),
        ("wiped while covered", lambda f: f.update(wiped=1, depth=0, assignment=[-1] * 8)),
        ("initial depth", lambda f: f.update(initial_depth=2)),
        ("initial moves", lambda f: f.update(initial_moves=5)),
        ("initial swaps", lambda f: f.update(initial_swaps=5)),
        ("unit-cost flag", lambda f: f.update(unit=0, move_cost=[1] * 24)),
        ("negative type", lambda f: f.update(stacks=[-1] + f["stacks"][1:])),
        (
            "initial assignment",
            lambda f: f.update(initial_assignment=f["initial_assignment"][::-1]),
        ),
    ],
)
def test_item5_restore_rejects_forged_state(name, edit):
    with pytest.raises(ValueError, match="snapshot"):
        Controller.restore(_forged(edit))


def test_item5_forged_depth_would_change_decisions():
    ctl = Controller(Layout.cyclic(8, 3))
    ctl.fail(1)
    fields = snapshot_format.parse(ctl.snapshot())
    assert fields["depth"] == 2
    fields["depth"] = 3
    with pytest.raises(ValueError, match="not the minimal depth 2"):
        Controller.restore(snapshot_format.build(fields))


def test_item5_keyed_snapshot():
    ctl = Controller(Layout.cyclic(10, 3))
    ctl.fail([2, 5])
    blob = ctl.snapshot(key=b"secret")
    back = Controller.restore(blob, key=b"secret")
    assert back.snapshot() == ctl.snapshot() and back.events == 1
    with pytest.raises(ValueError, match="keyed"):
        Controller.restore(blob)
    with pytest.raises(ValueError, match="HMAC"):
        Controller.restore(blob, key=b"other")
    with pytest.raises(ValueError, match="not keyed"):
        Controller.restore(ctl.snapshot(), key=b"secret")
    # An edit restore cannot detect on its own (the event count) is caught by the MAC.
    inner = blob[40:]
    fields = snapshot_format.parse(inner)
    fields["events"] = 99
    forged = blob[:40] + snapshot_format.build(fields)
    assert Controller.restore(snapshot_format.build(fields)).events == 99
    with pytest.raises(ValueError, match="HMAC"):
        Controller.restore(forged, key=b"secret")
    with pytest.raises(TypeError):
        ctl.snapshot(key="secret")


# -- 6. the restored layout is the original ---------------------------------------------------
def test_item6_restored_layout_is_the_original():
    layout = Layout.from_stacks([[0, 1], [0, 1], [2, 3], [2, 3]])
    back = Controller.restore(Controller(layout).snapshot())
    assert back.layout == layout and back.layout.kind == "custom"
    assert np.array_equal(back.layout.stacks, layout.stacks)
    # restart() replays the initial decision on the layout: the same as a fresh solve on it.
    assert back.restart().moves == solve(back.layout, np.ones(4, bool)).moves == 2
    cyc = Controller.restore(Controller(Layout.cyclic(9, 3)).snapshot()).layout
    assert cyc.kind == "cyclic" and cyc == Layout.cyclic(9, 3)


# -- 7. messages name the value the caller passed ---------------------------------------------
@pytest.mark.parametrize(
    ("groups", "shown"),
    [
        (np.uint64(2**64 - 1), r"groups\[0\] = 18446744073709551615"),
        ([2**64 - 1], r"groups\[0\] = 18446744073709551615"),
        ([1, 2**64 - 1], r"groups\[1\] = 18446744073709551615"),
    ],
)
def test_item7_group_messages_name_the_value(groups, shown):
    ctl = Controller(Layout.cyclic(6, 2))
    with pytest.raises(IndexError, match=shown + r" is not in \[0, 6\)"):
        ctl.fail(groups)


def test_item7_supply_message_names_the_value():
    with pytest.raises(ValueError, match=r"supply\[2\] = 9223372036854775808 does not fit int64"):
        min_cost_flow(3, [0], [1], [1], [1], supply=[1, -1, 2**63])


# -- 10. the Monte Carlo kernel ---------------------------------------------------------------
def test_item10_trial_ids_cannot_overflow():
    stacks = Layout.cyclic(10, 2).stacks
    with pytest.raises(ValueError, match="first_trial"):
        _core._survived_failures(stacks, 10, 0, 2**63 - 1, 2, 1)
    last = _core._survived_failures(stacks, 10, 0, 2**63 - 3, 2, 1)
    assert last.shape == (2,)


def test_item10_failed_thread_creation_falls_back():
    r = _run_capped(
        """
        stacks = Layout.cyclic(50, 3).stacks
        one = _core._survived_failures(stacks, 50, 7, 0, 6000, 1)
        many = _core._survived_failures(stacks, 50, 7, 0, 6000, 5000)
        assert (one == many).all()
        print("same")
        """,
        extra_mb=150,
    )
    assert r.returncode == 0, r.stderr
    assert "same" in r.stdout


def test_item4_layout_from_one_big_id_allocates_nothing_big():
    r = _run_capped(
        """
        try:
            Layout.from_stacks([[2**28]])
        except ValueError as e:
            print("ValueError", e)
        else:
            raise SystemExit("accepted")
        """
    )
    assert r.returncode == 0, r.stderr
    assert "stacks[0, 0] = 268435456 is not in [0, 1)" in r.stdout
