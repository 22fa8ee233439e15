"""``spare-fast plan`` and ``spare-fast theory``: durations, plan numbers, validation output."""

from __future__ import annotations

import csv
import datetime as dt
import json

import pytest

from spare_fast import theory as th
from spare_fast.cli import main
from spare_fast.theory.plan import parse_duration, plan
from spare_fast.theory.validation import summarise, validate


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("60s", 60),
        ("5min", 300),
        ("1h", 3600),
        ("60min", 3600),
        ("1h30min", 5400),
        ("90", 90),
        ("0.5 h", 1800),
        ("250ms", 0.25),
        ("2d", 172800),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == dt.timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "5 parsecs", "min", "5min!", "-5s"])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def _plan_args(*extra):
    return [
        "plan",
        "--gpus",
        "600000",
        "--groups",
        "600",
        "--mtbf",
        "5min",
        "--restart",
        "60min",
        "--save",
        "60s",
        *extra,
    ]


def test_plan_table(capsys):
    assert main(_plan_args()) == 0
    out = capsys.readouterr().out
    assert "SPARe+CKPT" in out and "Rep+CKPT" in out and "CKPT only" in out
    assert "Recommendation: SPARe+CKPT with r = 10" in out


def test_plan_json_matches_the_closed_forms(capsys):
    assert main(_plan_args("--json")) == 0
    p = json.loads(capsys.readouterr().out)
    s = p["spare"]
    r = s["redundancy"]
    assert r == th.optimal_redundancy_numeric(600, 300, 60, 3600)
    assert s["endurable_failures"] == pytest.approx(th.endurable_failures(600, r))
    assert s["checkpoint_period_s"] == pytest.approx(
        th.checkpoint_period(60, th.endurable_failures(600, r) * 300, 3600)
    )
    assert s["time_to_train"] == pytest.approx(th.time_to_train(600, r, 300, 60, 3600))
    rep = p["replication"]
    assert rep["time_to_train"] == pytest.approx(
        th.time_to_train(600, rep["redundancy"], 300, 60, 3600, scheme="replication")
    )
    assert p["recommendation"]["scheme"] == min(
        ("spare", "replication", "checkpoint"), key=lambda k: p[k]["time_to_train"]
    )


def test_plan_rejects_bad_duration(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--groups", "600", "--mtbf", "five", "--restart", "1h", "--save", "1s"])
    capsys.readouterr()


def test_plan_no_redundancy_when_restarts_are_free():
    # A restart that costs nothing makes redundancy pure overhead: r* = 1 and SPARe is CKPT-only.
    p = plan(600, dt.timedelta(days=30), dt.timedelta(0), dt.timedelta(seconds=1))
    assert p["spare"]["redundancy"] == 1
    assert p["spare"]["time_to_train"] == pytest.approx(p["checkpoint"]["time_to_train"])


def test_theory_printout(capsys):
    assert main(["theory", "--groups", "600", "--redundancy", "20"]) == 0
    out = capsys.readouterr().out
    assert "424.21" in out and "455.34" in out and "2.3420" in out


def test_validate_writes_table_and_plot(tmp_path, capsys):
    args = [
        "theory",
        "--validate",
        "--out",
        str(tmp_path),
        "--groups-grid",
        "200",
        "--redundancy-grid",
        "4",
        "8",
        "--trials",
        "300",
        "--overhead-trials",
        "4",
        "--quiet",
    ]
    assert main(args) == 0
    with open(tmp_path / "validation.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(x["layout"], x["redundancy"]) for x in rows] == [
        (k, r) for r in ("4", "8") for k in ("cyclic", "sidon", "random")
    ]
    assert "Mean absolute percentage error" in (tmp_path / "validation.md").read_text()
    assert (tmp_path / "validation.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()


def test_validation_exact_cyclic_agrees_with_monte_carlo():
    rows = validate(
        [200, 600], [2, 8, 20], ["cyclic"], mu_trials=1000, overhead=False, progress=False
    )
    assert all(abs(x.mu_exact_z) <= 3 for x in rows)


@pytest.mark.slow
def test_reduced_acceptance_grid():
    # The validation's targets on a reduced grid (the full grid runs in `spare-fast theory
    # --validate`, results in the README): for r >= 8 the mu formula is within 1.13% and the
    # overhead lower bound within 0.60% of Monte Carlo (mean absolute error) for the sidon and
    # random layouts.
    rows = validate(
        [1000, 10_000],
        [12, 20],
        ["sidon", "random"],
        mu_trials=2000,
        overhead_trials=12,
        progress=False,
    )
    assert len(rows) == 8
    summary = summarise(rows)
    for kind in ("sidon", "random"):
        assert summary[kind]["mu_mape_r8"] <= 1.13
        assert summary[kind]["overhead_mape_r8"] <= 0.60
        assert summary[kind]["overhead_survived_mape_r8"] <= 0.60
    assert all(x.overhead_se < 0.002 * x.overhead_mc for x in rows)  # noise does not dominate
    # Dropping each trajectory's last (deepest) state can only lower the mean depth.
    assert all(x.overhead_mc_survived <= x.overhead_mc + 3 * x.overhead_se for x in rows)
