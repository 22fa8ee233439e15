"""What the commands and the library print: statuses, wipe-outs, estimates, tables, replots."""

from __future__ import annotations

import numpy as np
import pytest

from spare_fast import Controller, Layout, Status, solve
from spare_fast import montecarlo as mc


def test_status_prints_its_name() -> None:
    assert str(Status.WIPEOUT) == "WIPEOUT" and f"{Status.OK}" == "OK"
    assert Status.WIPEOUT == 1  # still an int


def test_wipeout_decision_names_the_lost_type() -> None:
    ctl = Controller(Layout.cyclic(6, 2))  # group g holds types g and g - 1 (mod 6)
    d = ctl.fail([1])
    assert d.ok and d.lost_type is None and d.lost_types.size == 0
    d = ctl.fail([2])  # type 2 lived on groups 1 and 2 only
    stacks, alive = ctl.stacks, ctl.alive
    held = set(stacks[alive].ravel().tolist())
    expected = sorted(set(range(6)) - held)
    assert d.status is Status.WIPEOUT and d.lost_types.tolist() == expected
    assert d.lost_type == expected[0] and f"lost_type={expected[0]}" in repr(d)


def test_solve_wipeout_names_the_lost_type() -> None:
    d = solve(Layout.cyclic(4, 2), np.array([True, False, False, True]))
    assert d.status is Status.WIPEOUT and d.lost_types.tolist() == [2]


def test_estimate_repr_is_short() -> None:
    est = mc.endurable_failures(Layout.cyclic(50, 4), trials=3000, seed=0)
    text = repr(est)
    assert len(text) < 120 and "samples=<3000 " in text
    assert est.samples.size == 3000


def test_library_progress_bars_are_off_by_default(capfd: pytest.CaptureFixture[str]) -> None:
    mc.endurable_failures(Layout.cyclic(50, 4), trials=200, seed=0)
    mc.overhead(Layout.cyclic(20, 4), trials=3, seed=0)
    assert capfd.readouterr().err == ""


def test_simulate_table_has_units_and_definitions() -> None:
    from spare_fast.sim import Scenario, simulate

    rep = simulate(Scenario(groups=60, steps=100, compute=8.0, mtbf=30.0), "spare", seed=0)
    text = rep.format()
    assert "TTT / T0" in text and "availability" in text and "horizon" in text
    assert " h" in text or " min" in text or " d" in text


def test_sweep_replot_from_saved_means(tmp_path) -> None:
    from spare_fast.sim import Scenario
    from spare_fast.sim.sweep import (
        best_by_scheme,
        format_table,
        mean_rows,
        replot,
        sweep,
        sweep_tasks,
        write_csv,
    )

    base = Scenario(groups=60, steps=100, compute=8.0, mtbf=60.0)
    tasks = sweep_tasks(base, [60], ["checkpoint", "replication", "spare"], [2, 3], [0, 1])
    means = mean_rows(sweep(tasks, workers=1))
    write_csv(means, tmp_path / "means.csv")
    table = replot(tmp_path)
    assert table == format_table(best_by_scheme(means))
    assert (tmp_path / "sweep.png").stat().st_size > 0
    assert (tmp_path / "table.md").read_text() == table + "\n"


def test_lost_types_are_read_before_the_next_event() -> None:
    ctl = Controller(Layout.cyclic(6, 2))
    ctl.fail([1])
    d = ctl.fail([2])
    ctl.restart()
    with pytest.raises(RuntimeError, match="stale"):
        _ = d.lost_types
    assert "WIPEOUT" in repr(d)
