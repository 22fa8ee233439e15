"""Patch pricing: a step computes its starting depth's layers plus the patches it took on.

A failure loses what the failed groups computed in the step in progress and no alive group
computes in it; each lost type costs one layer on its new provider.  A controlled failure
sequence on a cyclic layout N = 6, r = 3 (group g holds types g, g+1, g+2, layer 0 first).
After a restart the depth is 1.  Group 2 fails: the depth rises to 2 (from the next step) and
type 2 is patched onto group 1, which holds it in its second layer: one layer.  Group 0 then
fails in the same step: its type 0 is patched onto group 5, which holds it in its second
layer, which a depth-1 step does not compute: one more layer.  Priced at the controller's
depth 2 instead, the second failure would cost nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from spare_fast import Controller, Layout
from spare_fast.sim import Scenario, simulate
from spare_fast.sim import engine as sim_engine
from spare_fast.sim.schemes import SpareScheme

C, A, T_R = 10.0, 1.0, 100.0  # layer compute, all-reduce, restart (binary-exact sums below)
CONTROL = 0.25 + 0.5  # controller_time + shrink_time per masked failure
SC = Scenario(
    groups=6,
    steps=3,
    compute=C,
    allreduce=A,
    jitter=0.0,
    controller_time=0.25,
    shrink_time=0.5,
    restart=T_R,
    mtbf=math.inf,  # no random failures: the test schedules them
    restart_renews="failed",  # per-group lives without the shared-age shortcut: named victims
    period=math.inf,
)


def test_controller_gives_the_patch_rows_the_test_prices():
    ctl = Controller(Layout.cyclic(6, 3))
    for g in (3, 4):
        assert ctl.fail(g).ok
    assert not ctl.fail(5).ok  # type 5 lost all three holders: wipe-out
    ctl.restart()
    d1 = ctl.fail(2)
    assert d1.depth == 2 and d1.patch.tolist() == [[2, 1]]
    assert ctl.stacks[1].tolist() == [1, 2, 3]
    d2 = ctl.fail(0)
    assert d2.depth == 2 and d2.patch.tolist() == [[0, 5]]
    assert ctl.stacks[5].tolist() == [5, 0, 1]  # type 0 in group 5's second layer


def test_scheme_prices_patches_at_the_steps_depth():
    scheme = SpareScheme(SC, Layout.cyclic(6, 3))
    scheme.begin_step()
    assert scheme.fail([2]).patch_layers == 1  # type 2 onto group 1's second layer
    assert scheme.fail([0]).patch_layers == 1  # type 0 onto group 5's second layer


def test_a_patch_taken_on_earlier_in_the_step_is_not_charged_twice():
    # Cyclic N = 10, r = 4, six failures in one depth-1 step.  Types 5, 3, 7 and 9 go to
    # groups 4, 2, 6 and 8 (second layers: one layer each).  When group 8 fails it loses its
    # type 8 and the type 9 it took on; both go to group 6: two layers.  The same decision's
    # augmenting paths move types 4 and 5 off group 4 (to groups 1 and 2) and types 6 and 7
    # onto it, effective from the next step.  When group 4 fails the decision's rows are
    # (7 -> 6), taken on at the third failure, and (6 -> 6), a first layer: neither costs.
    # What the step loses is what group 4 computed in it, types 4 and 5, which groups 1 and
    # 2 do not compute in this step: one layer on each.  Priced by the rows it would be 0.
    seq = (5, 3, 7, 9, 8, 4)
    ctl = Controller(Layout.cyclic(10, 4))
    rows = [ctl.fail(g).patch.tolist() for g in seq]
    assert rows == [[[5, 4]], [[3, 2]], [[7, 6]], [[9, 8]], [[8, 6], [9, 6]], [[7, 6], [6, 6]]]
    assert ctl.assignment[[4, 5, 6, 7]].tolist() == [1, 2, 6, 6]
    scheme = SpareScheme(SC.replace(groups=10), Layout.cyclic(10, 4))
    scheme.begin_step()
    layers = [scheme.fail([g]).patch_layers for g in seq]
    assert layers == [1, 1, 1, 1, 2, 1]


def _reference_layers(layout: Layout, seq: list[list[int]]) -> list[int]:
    """The rule of docs/model.md on plain sets, driving its own controller: one step."""
    ctl = Controller(layout)
    depth = ctl.depth
    computes = [set(row[:depth]) for row in ctl.stacks.tolist()]
    alive = [True] * layout.n_groups
    out = []
    for groups in seq:
        d = ctl.fail(groups)
        assert d.ok
        lost: set[int] = set()
        for g in groups:
            alive[g] = False
            lost |= computes[g]
            computes[g] = set()
        lost = {
            t for t in lost if not any(alive[h] and t in computes[h] for h in range(len(alive)))
        }
        load: dict[int, int] = {}
        for t in lost:
            p = int(ctl.assignment[t])
            computes[p].add(t)
            load[p] = load.get(p, 0) + 1
        out.append(max(load.values(), default=0))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_patch_layers_match_a_set_reference(seed):
    rng = np.random.default_rng(seed)
    layout = [Layout.cyclic(12, 3), Layout.sidon(30, 4, seed=seed), Layout.cyclic(20, 5)][seed % 3]
    n = layout.n_groups
    order = rng.permutation(n).tolist()
    seq: list[list[int]] = []
    probe = Controller(layout)
    while order:
        k = int(rng.integers(1, 3))
        groups, order = order[:k], order[k:]
        if not probe.fail(groups).ok:
            break
        seq.append(groups)
    assert len(seq) >= 3
    scheme = SpareScheme(SC.replace(groups=n), layout)
    scheme.begin_step()
    got = [scheme.fail(g).patch_layers for g in seq]
    assert got == _reference_layers(layout, seq)


def test_a_group_back_mid_step_computes_nothing_in_that_step():
    # Group 0 fails; the next step runs at depth 2 without it.  It rejoins mid-step, then
    # group 1 fails and type 1 goes to group 0 (its second layer, inside the step's depth 2),
    # but group 0 was not computing in this step: one layer.
    ctl = Controller(Layout.cyclic(6, 3))
    ctl.fail(0)
    ctl.rejoin(0)
    assert ctl.fail(1).patch.tolist() == [[1, 0]]
    scheme = SpareScheme(SC, Layout.cyclic(6, 3))
    scheme.begin_step()
    scheme.fail([0])
    scheme.begin_step()
    scheme.rejoin([0])
    assert scheme.fail([1]).patch_layers == 1


def _scripted(monkeypatch, script: list[tuple[float, int]]) -> None:
    """Failures of named groups at given times, in order (none is drawn at random)."""
    pending = list(script)

    def schedule(self) -> None:
        self.failure_version += 1
        self.stamps[sim_engine.EventKind.FAILURE] = self.failure_version
        if self.rate > 0 and pending:  # the rate is 0 during a restart
            t, g = pending[0]
            self.queue.push(t, sim_engine.EventKind.FAILURE, (self.failure_version, g))

    on_failure = sim_engine._Run.on_failure

    def fail(self, victim: int) -> None:
        pending.pop(0)
        on_failure(self, victim)

    monkeypatch.setattr(sim_engine._Run, "_schedule_failure", schedule)
    monkeypatch.setattr(sim_engine._Run, "on_failure", fail)


@pytest.mark.parametrize("batching", [True, False])
def test_two_failures_in_the_step_after_a_restart(monkeypatch, batching):
    monkeypatch.setattr(sim_engine._Run, "batching", batching)
    # Step 0: groups 3, 4, 5 fail at t = 2, 3, 4; the third is a wipe-out.  The restart ends
    # at 104 and step 0 is run again at depth 1; groups 2 and 0 fail inside it at 106 and 108.
    _scripted(monkeypatch, [(2.0, 3), (3.0, 4), (4.0, 5), (106.0, 2), (108.0, 0)])
    rep = simulate(SC, "spare", layout=Layout.cyclic(6, 3))
    assert (rep.failures, rep.restarts, rep.masked_failures) == (5, 1, 4)
    # By hand: the step after the restart computes 1 layer, plus 1 patch layer and the control
    # time per failure; the two steps after it run at depth 2.
    resume = 4.0 + T_R
    step = C + 2 * (CONTROL + 1 * C) + A
    assert step == 32.5
    expected = resume + step + 2 * (2 * C + A)
    assert expected == 178.5
    assert rep.time_to_train == expected  # priced at the controller's depth: 168.5
    tl = rep.timeline
    assert tl["depth"][tl["event"] == 0].tolist() == [2, 2, 2, 2]
    assert rep.losses == {
        "restart": T_R,
        "rework": 4.0,  # step 0 up to the wipe-out
        "checkpoint": 0.0,
        "redundancy": 2 * C,  # the two depth-2 steps' second layers
        "recovery": 2 * (CONTROL + C),
        "jitter": 0.0,
    }
    assert rep.useful == 3 * (C + A)
    assert np.isclose(rep.useful + sum(rep.losses.values()), rep.wall_clock, rtol=0, atol=0)
