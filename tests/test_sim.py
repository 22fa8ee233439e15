"""The training simulator: determinism, exactness, conservation, validation, cross-checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_fast import Layout
from spare_fast.sim import (
    EventQueue,
    Scenario,
    domain_aware_layout,
    simulate,
)
from spare_fast.sim import engine as sim_engine

SMALL = Scenario(
    groups=60, steps=400, compute=8.0, allreduce=1.0, mtbf=20.0, restart=120.0, save=5.0
)


def _same(a, b) -> None:
    sa, sb = a.summary(), b.summary()
    sa.pop("sim_seconds")
    sb.pop("sim_seconds")
    assert sa == sb
    assert a.events == b.events
    assert np.array_equal(a.timeline, b.timeline)


@pytest.mark.parametrize(("scheme", "r"), [("checkpoint", None), ("replication", 3), ("spare", 4)])
def test_same_seed_same_result_bit_for_bit(scheme, r):
    sc = SMALL.replace(mtbf=60.0)
    _same(simulate(sc, scheme, redundancy=r, seed=7), simulate(sc, scheme, redundancy=r, seed=7))


def test_different_seeds_differ():
    a = simulate(SMALL, "spare", redundancy=4, seed=1)
    b = simulate(SMALL, "spare", redundancy=4, seed=2)
    assert a.time_to_train != b.time_to_train


@pytest.mark.parametrize("scheme", ["checkpoint", "spare"])
def test_failure_free_without_jitter_is_exactly_t0(scheme):
    for sc in (
        Scenario(mtbf=math.inf, jitter=0.0),
        Scenario(groups=37, steps=1234, compute=63.7, allreduce=3.3, mtbf=math.inf, jitter=0.0),
    ):
        rep = simulate(sc, scheme, redundancy=None if scheme == "checkpoint" else 3)
        assert rep.time_to_train == sc.t0
        assert rep.normalized == 1.0
        assert rep.availability == 1.0
        assert rep.restarts == rep.failures == rep.checkpoints == 0


def test_failure_free_replication_costs_exactly_r_layers():
    sc = Scenario(groups=200, steps=777, mtbf=math.inf, jitter=0.0)
    rep = simulate(sc, "replication", redundancy=3)
    assert rep.time_to_train == sc.steps * (3 * sc.compute + sc.allreduce_time)
    assert rep.losses["redundancy"] == pytest.approx(sc.steps * 2 * sc.compute)


def test_failure_free_jitter_averages_out():
    sc = Scenario(mtbf=math.inf, jitter=0.05)
    rep = simulate(sc, "checkpoint", seed=3)
    # Sum of 10,000 uniform(-1, 1) * 3.2 s: standard deviation 3.2 * sqrt(1e4 / 3) = 185 s.
    assert abs(rep.time_to_train - sc.t0) < 5 * 185.0
    assert rep.losses["jitter"] == pytest.approx(rep.time_to_train - sc.t0)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scheme=st.sampled_from(["checkpoint", "replication", "spare"]),
    model=st.sampled_from(["per_group", "renewal"]),
    extras=st.sampled_from(
        [
            "none",
            "repair",
            "racks",
            "dynamic",
            "policy",
            "expected_cost",
            "fixed_period",
            "units",
            "renew_failed",
            "aging",
            "renew_failed_aging",
            "sync_jitter",
            "leftover",
        ]
    ),
)
def test_conservation_wall_clock_is_useful_plus_losses(seed, scheme, model, extras):
    kw: dict = {"failure_model": model, "mtbf": 40.0}
    per_group_only = {
        "units": {"failure_units": 300},
        "renew_failed": {"restart_renews": "failed"},
        "aging": {"restart_aging": True},
        "renew_failed_aging": {"restart_renews": "failed", "restart_aging": True},
    }
    if extras in per_group_only:
        kw.update(per_group_only[extras], failure_model="per_group")
    elif extras == "sync_jitter":
        kw["sync_jitter"] = True
    elif extras == "leftover":
        kw.update(groups=61, rep_leftover="set")
    if extras == "repair":
        kw["repair"] = 300.0
    elif extras == "racks":
        kw.update(racks=6, rack_share=0.2)
    elif extras == "dynamic":
        kw["dynamic_checkpoint"] = True
    elif extras == "policy":
        kw["restart_depth"] = 3
    elif extras == "expected_cost":
        kw.update(restart_policy="expected_cost", repair=300.0)
    elif extras == "fixed_period":
        kw["period"] = 150.0
    sc = SMALL.replace(**kw)
    r = {"checkpoint": None, "replication": 3, "spare": 5}[scheme]
    rep = simulate(sc, scheme, redundancy=r, seed=seed)
    if not rep.completed:
        return
    total = rep.useful + math.fsum(rep.losses.values())
    assert total == pytest.approx(rep.wall_clock, rel=1e-9)
    assert rep.useful == pytest.approx(sc.t0, rel=1e-9)
    assert rep.restarts - rep.planned_restarts + rep.masked_failures == rep.failures


@pytest.mark.parametrize(("scheme", "r"), [("checkpoint", None), ("replication", 2), ("spare", 3)])
def test_arithmetic_stretches_match_one_step_at_a_time(monkeypatch, scheme, r):
    sc = SMALL.replace(mtbf=200.0, repair=400.0)
    fast = simulate(sc, scheme, redundancy=r, seed=5)
    monkeypatch.setattr(sim_engine._Run, "batching", False)
    slow = simulate(sc, scheme, redundancy=r, seed=5)
    assert slow.events == fast.events
    assert slow.restarts == fast.restarts and slow.checkpoints == fast.checkpoints
    assert slow.time_to_train == pytest.approx(fast.time_to_train, rel=1e-12)


@pytest.mark.parametrize("model", ["per_group", "renewal"])
def test_redundancy_one_is_checkpoint_only(model):
    sc = SMALL.replace(failure_model=model, mtbf=150.0)
    ck = simulate(sc, "checkpoint", seed=11)
    for scheme in ("replication", "spare"):
        other = simulate(sc, scheme, redundancy=1, seed=11)
        assert other.time_to_train == ck.time_to_train
        assert other.restarts == ck.restarts == ck.failures
        assert other.masked_failures == 0


@pytest.mark.parametrize(
    ("model", "units", "expected_units"),
    [
        ("per_group", None, 1500),
        ("per_group", 50, 50),
        ("per_group", 400, 400),
        ("renewal", None, 0),
    ],
)
def test_first_failure_time_matches_weibull_minimum(model, units, expected_units):
    # per_group: the first failure is the minimum of U Weibull(k, U * lam) unit lifetimes,
    # itself Weibull with scale U * lam * U^(-1/k), whatever N (U = the calibrated default, one
    # unit per group, or 8 units per group here); renewal: one Weibull(k, lam) interval.
    k, n = 0.78, 50
    # The restart outlasts the horizon, so each run ends at its first failure.
    sc = Scenario(
        groups=n,
        steps=5,
        compute=1e4,
        allreduce=0.0,
        weibull_shape=k,
        mtbf=100.0 * math.gamma(1 + 1 / k),
        failure_model=model,
        failure_units=units,
        period=math.inf,
        restart=1e6,
        horizon=1.0,
    )
    if model == "per_group":
        u = sc.failure_unit_count
        assert u == expected_units
        scale = u * 100.0 * u ** (-1.0 / k)
    else:
        scale = 100.0
    firsts = []
    for seed in range(400):
        rep = simulate(sc, "checkpoint", seed=seed)
        tl = rep.timeline
        firsts.append(tl["time"][tl["event"] == 1][0] if rep.restarts else math.inf)
    expected = scale * math.gamma(1 + 1 / k)
    assert np.mean(firsts) == pytest.approx(expected, rel=0.12)


def test_replication_wipeout_count_matches_monte_carlo():
    # Rep: the failures masked before a restart are the wipe-out time of the replica sets;
    # compare with a direct Monte Carlo of uniform failures without replacement.
    n, r = 60, 3
    sc = SMALL.replace(failure_model="renewal", steps=3000, mtbf=30.0)
    rep = simulate(sc, "replication", redundancy=r, seed=2)
    sim_mean = rep.failures / rep.restarts
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(4000):
        order = rng.permutation(n)
        dead = np.zeros(n // r, dtype=int)
        for i, g in enumerate(order):
            dead[g // r] += 1
            if dead[g // r] == r:
                counts.append(i + 1)
                break
    # Censoring by the job's end shortens the last cycle a little; 10% is ample.
    assert sim_mean == pytest.approx(np.mean(counts), rel=0.1)


def test_spare_depth_and_masking_come_from_the_controller():
    sc = SMALL.replace(mtbf=40.0)
    rep = simulate(sc, "spare", redundancy=5, seed=3, layout="cyclic")
    tl = rep.timeline
    masked = tl[tl["event"] == 0]
    dead = sc.groups - masked["alive"]
    # Counting bound: depth >= ceil(N / alive) after every masked failure.
    assert np.all(masked["depth"] >= np.ceil(sc.groups / masked["alive"]))
    assert np.all(masked["depth"] <= 5)
    assert rep.masked_failures > 0 and dead.max() > 0
    assert rep.mean_depth > 1.0


def test_rejoin_brings_groups_back_without_restart():
    sc = SMALL.replace(mtbf=40.0, repair=200.0)
    rep = simulate(sc, "spare", redundancy=5, seed=4)
    assert rep.rejoins > 0
    tl = rep.timeline
    rejoins = tl[tl["event"] == 3]
    assert np.all(rejoins["alive"] <= sc.groups)


def test_restart_policy_restarts_after_a_checkpoint():
    sc = SMALL.replace(mtbf=40.0, restart_depth=3)
    rep = simulate(sc, "spare", redundancy=6, seed=4, layout="cyclic")
    assert rep.planned_restarts > 0
    tl = rep.timeline
    idx = np.flatnonzero(tl["event"] == 1)
    after_save = [
        i for i in idx if i > 0 and tl["event"][i - 1] == 2 and tl["time"][i] == tl["time"][i - 1]
    ]
    # Each planned restart sits at the same instant as the checkpoint that preceded it.
    assert len(after_save) >= rep.planned_restarts
    assert np.all(tl["depth"][np.asarray(after_save) - 1] >= 3)


def _critical_by_recount(layout: Layout, alive: np.ndarray) -> int:
    """Alive groups that are the last alive holder of some type, counted from scratch."""
    holders = layout.holders()  # (types, r)
    n_alive_holders = alive[holders].sum(axis=1)
    sole = holders[n_alive_holders == 1]
    return len({int(g) for row in sole for g in row if alive[g]})


@pytest.mark.parametrize("kind", ["cyclic", "random"])
def test_spare_critical_groups_match_a_recount(kind):
    from spare_fast.sim.schemes import SpareScheme

    n, r = 40, 3
    lay = Layout.cyclic(n, r) if kind == "cyclic" else Layout.random(n, r, seed=3)
    scheme = SpareScheme(SMALL.replace(groups=n, restart_policy="expected_cost"), lay)
    with pytest.raises(RuntimeError, match="expected_cost"):
        SpareScheme(SMALL.replace(groups=n), lay).critical_groups()
    rng = np.random.default_rng(0)
    alive = np.ones(n, dtype=bool)
    checked = 0
    for _ in range(400):
        dead = np.flatnonzero(~alive)
        if dead.size and rng.random() < 0.3:
            g = [int(rng.choice(dead))]
            scheme.rejoin(g)
            alive[g] = True
        else:
            k = 1 + int(rng.random() < 0.2)
            g = [int(x) for x in rng.choice(np.flatnonzero(alive), size=k, replace=False)]
            if scheme.fail(g).wipeout:
                scheme.reset()
                alive[:] = True
                assert scheme.critical_groups() == 0
                continue
            alive[g] = False
        assert scheme.critical_groups() == _critical_by_recount(lay, alive)
        checked += 1
    assert checked > 100


def test_replication_critical_groups_are_last_replicas():
    from spare_fast.sim.schemes import ReplicationScheme

    scheme = ReplicationScheme(SMALL.replace(groups=12), 3)
    assert scheme.critical_groups() == 0
    scheme.fail([0, 1])  # set 0 down to group 2
    scheme.fail([3])  # set 1 down to 2 replicas
    assert scheme.critical_groups() == 1
    scheme.rejoin([1])
    assert scheme.critical_groups() == 0
    assert scheme.fail([4, 5]).wipeout  # set 1 loses its last two replicas
    scheme.reset()
    assert scheme.critical_groups() == 0
    assert ReplicationScheme(SMALL.replace(groups=12), 1).critical_groups() == 12


def test_expected_cost_rule_restarts_early_at_high_redundancy():
    # N = 600, r = 20: waiting for a wipe-out runs long stretches at depth 3+; the rule
    # checkpoints and restarts instead (README, "Beyond the paper").
    sc = Scenario(groups=600, steps=3000)
    base = simulate(sc, "spare", redundancy=20, seed=0)
    ruled = simulate(sc.replace(restart_policy="expected_cost"), "spare", redundancy=20, seed=0)
    assert ruled.planned_restarts > 0
    assert ruled.mean_depth < base.mean_depth
    assert ruled.normalized < base.normalized
    again = simulate(sc.replace(restart_policy="expected_cost"), "spare", redundancy=20, seed=0)
    _same(ruled, again)


def test_expected_cost_rule_is_inert_without_redundancy():
    sc = SMALL.replace(restart_policy="expected_cost")
    _same(simulate(sc, "checkpoint", seed=1), simulate(SMALL, "checkpoint", seed=1))


def test_domain_aware_layout_spreads_holders_over_racks():
    n, r, racks = 60, 4, 10
    lay = domain_aware_layout(n, r, racks)
    rack = (np.arange(n) * racks) // n
    holders = lay.holders()
    assert all(len(set(rack[h].tolist())) == r for h in holders)
    assert sorted(lay.stacks[:, 0].tolist()) == list(range(n))
    cyc = Layout.cyclic(n, r).holders()
    assert any(len(set(rack[h].tolist())) < r for h in cyc)


def test_rack_failure_kills_whole_rack():
    sc = SMALL.replace(racks=6, rack_share=1.0, mtbf=50.0)
    rep = simulate(sc, "spare", redundancy=4, seed=1, layout="domain")
    assert rep.groups_failed >= 10 * rep.failures * 0.5


def test_timeline_is_ordered():
    rep = simulate(SMALL, "spare", redundancy=4, seed=9)
    assert np.all(np.diff(rep.timeline["time"]) >= 0)
    assert rep.timeline["event"][-1] == 4


@pytest.mark.parametrize(("scheme", "r"), [("checkpoint", None), ("replication", 3), ("spare", 4)])
def test_restart_availability_is_restart_time_from_the_timeline(scheme, r):
    # Independent of the loss bookkeeping: sum the (RESTART, RESUME) intervals of the timeline.
    sc = SMALL.replace(mtbf=1000.0) if scheme == "checkpoint" else SMALL
    rep = simulate(sc, scheme, redundancy=r, seed=3)
    assert rep.completed
    tl = rep.timeline
    starts = tl["time"][tl["event"] == 1]
    ends = tl["time"][tl["event"] == 5]
    assert rep.restarts > 0 and len(starts) == len(ends) == rep.restarts
    down = float(np.sum(ends - starts))
    assert rep.restart_availability == pytest.approx(1.0 - down / rep.wall_clock, rel=1e-12)
    assert rep.restart_availability > rep.availability


def test_horizon_marks_incomplete_runs():
    sc = SMALL.replace(mtbf=5.0, horizon=3.0)
    rep = simulate(sc, "checkpoint", seed=0)
    assert not rep.completed
    assert rep.time_to_train == math.inf and rep.normalized == math.inf
    assert 0.0 <= rep.progress < 1.0


def test_event_queue_breaks_ties_by_priority_then_insertion():
    q = EventQueue()
    q.push(2.0, 0, "late")
    q.push(1.0, 3, "b")
    q.push(1.0, 1, "a")
    q.push(1.0, 3, "c")
    assert [q.pop()[3] for _ in range(4)] == ["a", "b", "c", "late"]
    with pytest.raises(ValueError, match="NaN"):
        q.push(float("nan"), 0, "x")


@pytest.mark.parametrize(
    ("field", "value", "exc", "match"),
    [
        ("failure_units", 100, ValueError, "failure_units = 100"),
        ("failure_units", 10**6, ValueError, "failure_units = 1000000"),
        ("failure_units", 2.5, TypeError, "failure_units = 2.5"),
        ("restart_renews", "none", ValueError, "restart_renews = 'none'"),
        ("restart_aging", 1, TypeError, "restart_aging = 1"),
        ("sync_jitter", "yes", TypeError, "sync_jitter = 'yes'"),
        ("rep_leftover", "spread", ValueError, "rep_leftover = 'spread'"),
        ("groups", 0, ValueError, "groups = 0"),
        ("groups", 2.5, TypeError, "groups = 2.5"),
        ("gpus", 10, ValueError, "gpus = 10"),
        ("steps", -1, ValueError, "steps = -1"),
        ("compute", 0.0, ValueError, "compute = 0.0"),
        ("compute", "64", TypeError, "compute = '64'"),
        ("allreduce", -1.0, ValueError, "allreduce = -1.0"),
        ("mtbf", 0.0, ValueError, "mtbf = 0.0"),
        ("mtbf", float("nan"), ValueError, "mtbf = nan"),
        ("weibull_shape", -0.5, ValueError, "weibull_shape = -0.5"),
        ("restart", math.inf, ValueError, "restart = inf"),
        ("save", -1.0, ValueError, "save = -1.0"),
        ("period", 30.0, ValueError, "period = 30.0 must exceed save"),
        ("jitter", 0.9, ValueError, "jitter = 0.9"),
        ("racks", 0, ValueError, "racks = 0"),
        ("racks", 700, ValueError, "racks = 700"),
        ("rack_share", 0.5, ValueError, "rack_share = 0.5 needs racks"),
        ("repair", 0.0, ValueError, "repair = 0.0"),
        ("restart_depth", 1, ValueError, "restart_depth = 1"),
        ("restart_policy", "eager", ValueError, "restart_policy = 'eager'"),
        ("dynamic_checkpoint", 1, TypeError, "dynamic_checkpoint = 1"),
        ("failure_model", "poisson", ValueError, "failure_model = 'poisson'"),
        ("horizon", 0.5, ValueError, "horizon = 0.5"),
    ],
)
def test_invalid_scenario_rejected(field, value, exc, match):
    with pytest.raises(exc, match=match):
        Scenario(**{field: value})


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"failure_model": "renewal", "failure_units": 1000}, "failure_units = 1000 needs"),
        ({"failure_model": "per_gpu", "failure_units": 1000}, "failure_units = 1000 needs"),
        ({"failure_model": "renewal", "restart_renews": "failed"}, "restart_renews = 'failed'"),
        ({"failure_model": "renewal", "restart_aging": True}, "restart_aging = True"),
    ],
)
def test_per_group_options_need_a_per_group_model(kw, match):
    with pytest.raises(ValueError, match=match):
        Scenario(**kw)


OPTIONS = [
    {"failure_units": 240},
    {"restart_renews": "failed"},
    {"restart_aging": True},
    {"restart_renews": "failed", "restart_aging": True},
    {"sync_jitter": True},
    {"groups": 61, "rep_leftover": "set"},
]


@pytest.mark.parametrize("kw", OPTIONS)
@pytest.mark.parametrize(("scheme", "r"), [("replication", 3), ("spare", 4)])
def test_model_options_same_seed_same_result(kw, scheme, r):
    sc = SMALL.replace(mtbf=60.0, **kw)
    a = simulate(sc, scheme, redundancy=r, seed=7)
    _same(a, simulate(sc, scheme, redundancy=r, seed=7))
    assert a.completed and a.failures > 0
    assert a.time_to_train != simulate(sc, scheme, redundancy=r, seed=8).time_to_train


@pytest.mark.parametrize("kw", OPTIONS)
def test_model_options_stepwise_matches_batched(monkeypatch, kw):
    sc = SMALL.replace(mtbf=200.0, **kw)
    fast = simulate(sc, "spare", redundancy=3, seed=5)
    monkeypatch.setattr(sim_engine._Run, "batching", False)
    slow = simulate(sc, "spare", redundancy=3, seed=5)
    assert slow.events == fast.events and slow.restarts == fast.restarts
    assert slow.time_to_train == pytest.approx(fast.time_to_train, rel=1e-12)


def test_failure_units_generalise_per_group_and_per_gpu():
    sc = Scenario(groups=200, steps=300)
    base = simulate(sc, "replication", redundancy=3, seed=4)
    _same(base, simulate(sc.replace(failure_units=1500), "replication", redundancy=3, seed=4))
    # Above the calibrated U the default is one unit per group.
    big = Scenario(groups=2000, steps=300, gpus=1_000_000)
    _same(
        simulate(big, "spare", redundancy=8, seed=4),
        simulate(big.replace(failure_units=2000), "spare", redundancy=8, seed=4),
    )
    small = sc.replace(gpus=5000)
    _same(
        simulate(small.replace(failure_model="per_gpu"), "spare", redundancy=6, seed=4),
        simulate(small.replace(failure_units=5000), "spare", redundancy=6, seed=4),
    )


def test_sync_jitter_waits_for_the_slowest_group():
    sc = Scenario(groups=100, mtbf=math.inf, jitter=0.05, sync_jitter=True)
    rep = simulate(sc, "checkpoint", seed=3)
    # E[max of 100 uniforms on [-1, 1]] = 99/101: the step's compute is 1 + 0.05 * 0.98 long.
    expected = sc.t0 + sc.steps * sc.compute * 0.05 * 99 / 101
    assert rep.time_to_train == pytest.approx(expected, rel=1e-3)
    assert rep.losses["jitter"] == pytest.approx(rep.time_to_train - sc.t0)
    exact = simulate(sc.replace(jitter=0.0), "checkpoint", seed=3)
    assert exact.time_to_train == sc.t0


def test_replication_leftover_groups_form_a_smaller_set():
    sc = Scenario(groups=200, steps=500, mtbf=math.inf, jitter=0.0, rep_leftover="set")
    rep = simulate(sc, "replication", redundancy=3)
    assert rep.time_to_train == sc.steps * (3 * sc.compute + sc.allreduce_time)
    from spare_fast.sim.schemes import ReplicationScheme

    sch = ReplicationScheme(sc, 3)
    assert sch.n_groups == 200 and sch.sets == 66
    assert not sch.fail([198]).wipeout and sch.fail([199]).wipeout


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"scheme": "raid"}, ValueError, "scheme = 'raid'"),
        ({"scheme": "spare", "redundancy": 0}, ValueError, "redundancy = 0"),
        ({"scheme": "spare", "redundancy": 2.0}, TypeError, "redundancy = 2.0"),
        ({"scheme": "checkpoint", "redundancy": 3}, ValueError, "redundancy = 3"),
        ({"scheme": "replication", "layout": "cyclic"}, ValueError, "layout must be None"),
        ({"scheme": "spare", "layout": "zigzag"}, ValueError, "layout = 'zigzag'"),
        ({"scheme": "spare", "layout": Layout.cyclic(10, 2)}, ValueError, "10 groups"),
        (
            {"scheme": "spare", "redundancy": 3, "layout": Layout.cyclic(60, 2)},
            ValueError,
            "disagrees",
        ),
        ({"scheme": "spare", "seed": -1}, TypeError, "seed = -1"),
    ],
)
def test_invalid_simulate_arguments_rejected(kwargs, exc, match):
    kwargs = dict(kwargs)
    scheme = kwargs.pop("scheme")
    with pytest.raises(exc, match=match):
        simulate(SMALL, scheme, **kwargs)


def test_scenario_must_be_a_scenario():
    with pytest.raises(TypeError, match="Scenario"):
        simulate({"groups": 10}, "checkpoint")  # type: ignore[arg-type]


def test_measured_controller_time_is_charged():
    sc = SMALL.replace(mtbf=60.0, controller_time=None, shrink_time=0.0, jitter=0.0)
    rep = simulate(sc, "spare", redundancy=4, seed=2)
    assert rep.decision_seconds > 0.0
    # Recovery = measured decisions + patch layers + all-reduce reruns, all >= 0 here.
    assert rep.losses["recovery"] >= 0.0
    fixed = simulate(sc.replace(controller_time=0.0), "spare", redundancy=4, seed=2)
    assert rep.time_to_train > fixed.time_to_train or rep.restarts != fixed.restarts


def test_zero_save_time_checkpoints_at_most_once_per_step():
    # save = 0 makes T_c* = 0: a checkpoint after every step, never twice for the same step.
    sc = SMALL.replace(save=0.0, steps=100)
    rep = simulate(sc, "spare", redundancy=4, seed=1)
    assert rep.completed
    assert 0 < rep.checkpoints <= rep.executed_steps
    assert rep.losses["checkpoint"] == 0.0
