"""The SimGrid engine (spare_fast.sim.simgrid): its platform, its clock, its report, and the
same decisions as the native engine when the network model is calibrated to it."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
import textwrap

import pytest

from spare_fast.sim import Scenario, simulate
from spare_fast.sim import simgrid as sgengine

try:
    sgengine.locate_simgrid()
    _MISSING = ""
except sgengine.SimGridUnavailable as exc:
    _MISSING = str(exc)

needs_simgrid = pytest.mark.skipif(bool(_MISSING), reason=f"SimGrid absent: {_MISSING}")

# A short job: 60 groups at r = 4 see failures, masked ones and restarts in 200 steps.
SMALL = Scenario(groups=60, steps=200, mtbf=300.0)


def _hide_simgrid(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "simgrid" else real(name, *a)
    )
    monkeypatch.setattr(sgengine, "SYSTEM_FOLDERS", ())
    monkeypatch.delenv("SPARE_FAST_SIMGRID", raising=False)


def test_absent_simgrid_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_simgrid(monkeypatch)
    with pytest.raises(sgengine.SimGridUnavailable, match="apt-get install python3-simgrid"):
        sgengine.simulate(SMALL, "spare", redundancy=4)


def test_cli_absent_simgrid_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from spare_fast.cli import main

    _hide_simgrid(monkeypatch)
    code = main(["simulate", "--engine", "simgrid", "--groups", "60", "--steps", "20"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "python3-simgrid" in err and "Traceback" not in err


def test_platform_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="link_bandwidth = 0"):
        sgengine.Platform(link_bandwidth=0)
    with pytest.raises(ValueError, match="link_latency = -1"):
        sgengine.Platform(link_latency=-1)


@needs_simgrid
def test_found_module_loads_in_a_worker() -> None:
    path, from_system = sgengine.locate_simgrid()
    code = "from spare_fast.sim import simgrid; print(simgrid._import_simgrid().__name__)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "simgrid"
    assert from_system == (importlib.util.find_spec("simgrid") is None)


@needs_simgrid
def test_ring_depends_on_the_alive_count_only_and_phases_add_up(tmp_path) -> None:
    # The memo's premise, checked on SimGrid itself: rings over different alive sets of one
    # size take the same time, and 2 (n - 1) phases run one after another take 2 (n - 1)
    # times one phase.
    script = textwrap.dedent(
        """
        import json, sys
        from spare_fast.sim import Scenario, simgrid
        sg = simgrid._import_simgrid()
        sc = Scenario(groups=40)
        e = simgrid._engine(sg, simgrid.Platform(), sc.groups + 1, sys.argv[1])
        out = {}
        def actor():
            p = simgrid.StepPricer(sg, e, simgrid.Platform(), sc)
            out["sets"] = [p.ring_phase(m) for m in
                           (range(10), range(30, 40), [0, 3, 7, 11, 19, 23, 31, 33, 38, 39])]
            t = e.clock
            for _ in range(2 * 9):
                p.ring_phase(range(10))
            out["ring"] = e.clock - t
            out["layer"] = p.layer()
        sg.Actor.create("a", e.host_by_name("g40"), actor)
        e.run()
        print(json.dumps(out))
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    out = json.loads(res.stdout)
    first = out["sets"][0]
    assert first > 0
    assert out["sets"] == pytest.approx([first] * 3, rel=1e-12)
    assert out["ring"] == pytest.approx(18 * first, rel=1e-12)
    assert out["layer"] == pytest.approx(sc_compute(), rel=1e-12)


def sc_compute() -> float:
    return float(Scenario().compute)


@needs_simgrid
def test_calibration_sets_the_failure_free_allreduce() -> None:
    got = sgengine.network_allreduce(SMALL.replace(allreduce=3.0), [60, 30])
    assert got[60] == pytest.approx(3.0, rel=1e-9)
    assert 0 < got[30] < 3.0  # a shorter ring: fewer latency hops


@needs_simgrid
def test_network_model_spans_the_papers_range() -> None:
    got = {n: sgengine.network_allreduce(Scenario(groups=n), [n])[n] for n in (200, 1000)}
    assert 1.5 < got[200] < 3.0 and 8.0 < got[1000] < 12.0


@needs_simgrid
@pytest.mark.parametrize("scheme,r", [("spare", 4), ("replication", 3), ("checkpoint", None)])
def test_calibrated_engine_makes_the_native_decisions(scheme: str, r: int | None) -> None:
    sc = SMALL.replace(allreduce=SMALL.allreduce_time)
    nat = simulate(sc, scheme, redundancy=r, seed=3)
    sg = sgengine.simulate(sc, scheme, redundancy=r, seed=3)
    # The same failure trace and the same rules: the same events; the all-reduce differs
    # from the constant only by the ring's latency hops once groups have died.
    for name in ("failures", "masked_failures", "restarts", "checkpoints", "completed"):
        assert getattr(sg, name) == getattr(nat, name), name
    assert sg.normalized == pytest.approx(nat.normalized, rel=2e-3)
    assert sg.t0 == pytest.approx(nat.t0, rel=1e-9)


@needs_simgrid
def test_rejoins_go_through_the_controller_actor_as_natively() -> None:
    sc = SMALL.replace(allreduce=SMALL.allreduce_time, repair=600.0)
    nat = simulate(sc, "spare", redundancy=4, seed=2)
    sg = sgengine.simulate(sc, "spare", redundancy=4, seed=2)
    assert nat.rejoins > 0
    assert (sg.rejoins, sg.failures, sg.restarts) == (nat.rejoins, nat.failures, nat.restarts)


@needs_simgrid
def test_zero_allreduce_is_no_network() -> None:
    assert sgengine.network_allreduce(SMALL.replace(allreduce=0.0), [60, 10]) == {60: 0.0, 10: 0.0}
    rep = sgengine.simulate(SMALL.replace(allreduce=0.0, steps=20), "spare", redundancy=4)
    assert rep.scenario.allreduce == 0.0 and rep.t0 == 20 * SMALL.compute


@needs_simgrid
def test_same_seed_same_report() -> None:
    a = sgengine.simulate(SMALL, "spare", redundancy=4, seed=5, timeline=False)
    b = sgengine.simulate(SMALL, "spare", redundancy=4, seed=5, timeline=False)
    assert a.summary() == b.summary() | {"sim_seconds": a.sim_seconds}


@needs_simgrid
def test_bad_arguments_raise_the_native_errors() -> None:
    with pytest.raises(ValueError, match="scheme = 'bogus'"):
        sgengine.simulate(SMALL, "bogus")
    with pytest.raises(ValueError, match="alive count 0"):
        sgengine.network_allreduce(SMALL, [0])


@needs_simgrid
def test_cli_simgrid_report_and_json_have_the_native_fields(tmp_path) -> None:
    paths = {}
    for engine in ("native", "simgrid"):
        paths[engine] = tmp_path / f"{engine}.json"
        res = subprocess.run(
            [sys.executable, "-m", "spare_fast", "simulate", "--engine", engine, "--groups",
             "60", "--steps", "50", "-r", "4", "--json", str(paths[engine])],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        assert "TTT / T0" in res.stdout and "availability" in res.stdout
        assert "Traceback" not in res.stderr
    nat, sg = (json.loads(paths[e].read_text()) for e in ("native", "simgrid"))
    assert sg["engine"] == "simgrid"
    assert set(sg["report"]) == set(nat["report"])
    assert set(sg["scenario"]) == set(nat["scenario"])
    assert nat["scenario"]["allreduce"] is None
    assert math.isfinite(sg["scenario"]["allreduce"])  # the network model's all-reduce
