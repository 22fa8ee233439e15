"""Controller.fail_each against a loop of Controller.fail."""

import numpy as np
import pytest

from spare_fast import Controller, Layout, Status
from spare_fast._batch import FailEach


def loop_of_fail(ctl, groups, stop_at_wipeout=True):
    rows = []
    for g in groups:
        d = ctl.fail(int(g))
        rows.append((int(d.status), d.depth, d.moves, d.swaps, d.full_solve, d.patch.copy()))
        if stop_at_wipeout and d.status == Status.WIPEOUT:
            break
    return rows


def assert_same(out, rows):
    assert isinstance(out, FailEach)
    assert out.events == len(rows)
    assert out.status.tolist() == [r[0] for r in rows]
    assert out.depth.tolist() == [r[1] for r in rows]
    assert out.moves.tolist() == [r[2] for r in rows]
    assert out.swaps.tolist() == [r[3] for r in rows]
    assert out.full_solve.tolist() == [r[4] for r in rows]
    patch = np.concatenate([r[5] for r in rows]) if rows else np.empty((0, 2), np.int32)
    assert np.array_equal(out.patch, patch.reshape(-1, 2))
    events = np.repeat(np.arange(len(rows)), [len(r[5]) for r in rows])
    assert out.patch_event.tolist() == events.tolist()


@pytest.mark.parametrize(
    "layout",
    [
        Layout.cyclic(300, 5),
        Layout.sidon(500, 6, seed=3),
        Layout.random(400, 4, seed=1),
        Layout.replication(60, 3),
    ],
    ids=["cyclic", "sidon", "random", "replication"],
)
def test_equals_a_loop_of_fail(layout):
    order = np.random.default_rng(5).permutation(layout.n_groups)
    a, b = Controller(layout), Controller(layout)
    out = a.fail_each(order)
    assert_same(out, loop_of_fail(b, order))
    assert out.wiped_out
    assert np.array_equal(a.stacks, b.stacks)
    assert np.array_equal(a.assignment, b.assignment)
    assert a.snapshot() == b.snapshot()


def test_equals_a_loop_of_fail_with_move_costs():
    layout = Layout.random(200, 5, seed=2)
    cost = np.random.default_rng(0).integers(0, 5, size=layout.stacks.shape)
    order = np.random.default_rng(1).permutation(200)
    a, b = Controller(layout, move_cost=cost), Controller(layout, move_cost=cost)
    assert_same(a.fail_each(order), loop_of_fail(b, order))
    assert a.snapshot() == b.snapshot()


def test_dtypes_and_shapes():
    out = Controller(Layout.cyclic(50, 4)).fail_each(np.arange(10))
    assert out.status.dtype == np.int32 and out.depth.dtype == np.int32
    assert out.moves.dtype == np.int64 and out.swaps.dtype == np.int64
    assert out.full_solve.dtype == np.bool_ and out.seconds.dtype == np.float64
    assert out.patch.dtype == np.int32 and out.patch.shape[1] == 2
    assert out.patch_event.dtype == np.int64
    assert (out.seconds > 0).all()


def test_stop_at_wipeout_leaves_later_groups_alive():
    ctl = Controller(Layout.cyclic(6, 3))
    out = ctl.fail_each([2, 3, 4, 0, 1])
    assert out.status.tolist() == [0, 0, 1]
    assert ctl.alive.tolist() == [True, True, False, False, False, True]


def test_without_stop_every_group_fails():
    ctl, ref = Controller(Layout.cyclic(6, 3)), Controller(Layout.cyclic(6, 3))
    out = ctl.fail_each([2, 3, 4, 0, 1], stop_at_wipeout=False)
    assert out.status.tolist() == [0, 0, 1, 1, 1]
    assert_same(out, loop_of_fail(ref, [2, 3, 4, 0, 1], stop_at_wipeout=False))
    assert ctl.n_alive == 1


def test_empty_sequence():
    ctl = Controller(Layout.cyclic(6, 3))
    out = ctl.fail_each([])
    assert out.events == 0 and out.patch.shape == (0, 2) and not out.wiped_out
    assert ctl.events == 0


@pytest.mark.parametrize(
    ("groups", "error", "message"),
    [
        ([1, 6], IndexError, r"groups\[1\] = 6 is not in \[0, 6\)"),
        ([1, -1], IndexError, r"groups\[1\] = -1"),
        ([1, 2, 1], ValueError, r"groups\[2\] = 1 repeats groups\[0\]"),
        ([0, 5], ValueError, r"groups\[1\] = 5 is already dead"),
    ],
)
def test_rejected_sequence_changes_nothing(groups, error, message):
    ctl = Controller(Layout.cyclic(6, 3))
    ctl.fail(5)
    before = ctl.snapshot()
    with pytest.raises(error, match=message):
        ctl.fail_each(groups)
    assert ctl.snapshot() == before


def test_stop_at_wipeout_must_be_a_bool():
    with pytest.raises(TypeError, match="stop_at_wipeout"):
        Controller(Layout.cyclic(6, 3)).fail_each([1], stop_at_wipeout=1)


@pytest.mark.parametrize("cost", [False, True], ids=["unit", "move_cost"])
def test_near_saturation_decisions_equal_solve(cost):
    # Just before the counting bound forces a depth raise the spare capacity is a handful of
    # slots and the controller searches augmenting paths from both ends: check those events.
    from spare_fast import solve

    layout = Layout.sidon(4_000, 8, seed=2)
    move_cost = np.random.default_rng(3).integers(1, 4, layout.stacks.shape) if cost else None
    order = np.random.default_rng(4).permutation(layout.n_groups)
    dry = Controller(layout, move_cost=move_cost).fail_each(order)
    raises = np.flatnonzero(np.diff(dry.depth[dry.status == 0]) > 0) + 1
    last_raise = int(raises[-1]) if raises.size else dry.events - 1
    start = max(0, last_raise - 120)
    ctl = Controller(layout, move_cost=move_cost)
    ctl.fail_each(order[:start])
    for g in order[start : last_raise + 5].tolist():
        before = ctl.stacks.copy()
        d = ctl.fail(g)
        ref = solve(before, ctl.alive, move_cost=move_cost)
        assert (d.status, d.depth, d.moves) == (ref.status, ref.depth, ref.moves)
        if d.status == Status.WIPEOUT:
            break
