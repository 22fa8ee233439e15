"""Sweeps: local processes, Dask and the command line give the same numbers."""

from __future__ import annotations

import csv
import json
import math

import pytest

from spare_fast.cli import main
from spare_fast.sim import Scenario
from spare_fast.sim.sweep import (
    best_by_scheme,
    format_table,
    mean_rows,
    sweep,
    sweep_tasks,
)

BASE = Scenario(
    groups=60,
    steps=300,
    compute=8.0,
    allreduce=1.0,
    mtbf=30.0,
    restart=100.0,
    save=5.0,
    horizon=20.0,
)


def _tasks():
    return sweep_tasks(BASE, [60, 80], ["checkpoint", "replication", "spare"], [2, 4], [0, 1])


def _small_tasks():
    """Every scheme once per seed: what the schedulers must reproduce, at a sixth of the cost."""
    return sweep_tasks(BASE, [60], ["checkpoint", "replication", "spare"], [2], [0, 1])


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "sim_seconds"} for r in rows]


def test_tasks_cover_the_grid_once():
    tasks = _tasks()
    # per N: checkpoint x 2 seeds + (replication + spare) x 2 r x 2 seeds
    assert len(tasks) == 2 * (2 + 2 * 2 * 2)
    assert len({(t[0].groups, t[1], t[2], t[4]) for t in tasks}) == len(tasks)


def test_process_pool_equals_in_process():
    tasks = _small_tasks()
    assert _strip(sweep(tasks, workers=2)) == _strip(sweep(tasks, workers=1))


def test_dask_local_cluster_equals_local_run():
    distributed = pytest.importorskip("dask.distributed")
    tasks = _small_tasks()
    local = sweep(tasks, workers=1)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster) as client:
            remote = sweep(tasks, scheduler=client)
        # An address string (the CLI's --scheduler) opens and closes its own client.
        by_address = sweep(tasks, scheduler=cluster.scheduler_address)
    assert _strip(remote) == _strip(local)
    assert _strip(by_address) == _strip(local)


def test_mean_and_best_pick_lowest_mean():
    rows = [
        {
            "groups": 10,
            "scheme": "spare",
            "redundancy": 2,
            "layout": "cyclic",
            "normalized": 3.0,
            "availability": 0.5,
            "restarts": 2,
            "masked_failures": 1,
            "mean_depth": 2.0,
        },
        {
            "groups": 10,
            "scheme": "spare",
            "redundancy": 2,
            "layout": "cyclic",
            "normalized": 5.0,
            "availability": 0.7,
            "restarts": 4,
            "masked_failures": 3,
            "mean_depth": 2.0,
        },
        {
            "groups": 10,
            "scheme": "spare",
            "redundancy": 3,
            "layout": "cyclic",
            "normalized": 3.5,
            "availability": 0.9,
            "restarts": 1,
            "masked_failures": 1,
            "mean_depth": 2.0,
        },
    ]
    means = mean_rows(rows)
    by_r = {m["redundancy"]: m for m in means}
    assert by_r[2]["normalized"] == 4.0 and by_r[2]["seeds"] == 2
    assert by_r[2]["normalized_std"] == pytest.approx(math.sqrt(2.0))
    assert best_by_scheme(means)[(10, "spare")]["redundancy"] == 3
    assert "| 10 |" in format_table(best_by_scheme(means), paper=False)


def test_cli_simulate_prints_and_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "simulate",
                "--scheme",
                "spare",
                "-r",
                "4",
                "--groups",
                "60",
                "--steps",
                "200",
                "--compute",
                "8",
                "--mtbf",
                "30",
                "--json",
                str(out),
                "--timeline-png",
                str(tmp_path / "t.png"),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "TTT / T0" in text and "global restarts" in text and "availability" in text
    data = json.loads(out.read_text())
    assert data["report"]["redundancy"] == 4 and data["scenario"]["groups"] == 60
    assert (tmp_path / "t.png").stat().st_size > 0


def test_cli_sweep_writes_csv_json_png(tmp_path, capsys):
    out = tmp_path / "sw"
    assert (
        main(
            [
                "sweep",
                "--n",
                "60",
                "-r",
                "2-3",
                "--seeds",
                "2",
                "--steps",
                "200",
                "--compute",
                "8",
                "--mtbf",
                "30",
                "--restart",
                "100",
                "--horizon",
                "20",
                "--workers",
                "1",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with open(out / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 + 2 * 2 * 2
    assert json.loads((out / "sweep.json").read_text())["scenario"]["steps"] == 200
    assert (out / "sweep.png").stat().st_size > 0
    assert "| 60 |" in capsys.readouterr().out


def test_cli_rejects_bad_scenario(run_cli):
    # The scenario's own check, reached through an option pair argparse cannot judge alone.
    code, _, err = run_cli("simulate", "--groups", "60", "--gpus", "30")
    assert code == 2
    assert "--gpus = 30 must be >= --groups = 60" in err


def test_cli_simulate_passes_every_kind_of_scenario_option(tmp_path):
    out = tmp_path / "r.json"
    argv = ["simulate", "-r", "3", "--groups", "60", "--steps", "100", "--compute", "8"]
    argv += ["--failure-units", "120", "--restart-renews", "failed", "--restart-aging"]
    argv += ["--restart-policy", "expected_cost", "--restart-depth", "3", "--sync-jitter"]
    argv += ["--json", str(out)]
    assert main(argv) == 0
    scenario = json.loads(out.read_text())["scenario"]
    assert scenario["failure_units"] == 120
    assert scenario["restart_renews"] == "failed"
    assert scenario["restart_aging"] is True
    assert scenario["restart_policy"] == "expected_cost"
    assert scenario["restart_depth"] == 3


def test_cli_rejects_unknown_choice(run_cli):
    code, _, err = run_cli("simulate", "--rep-leftover", "spread")
    assert code == 2
    assert "invalid choice: 'spread'" in err
