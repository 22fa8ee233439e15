"""The `spare-fast bench graph` harness (spare_fast.testing.bench_graph) on tiny sizes."""

from __future__ import annotations

import argparse
import json

import pytest

from spare_fast.cli._common import UsageError
from spare_fast.testing import bench_graph as bg


def test_harness_writes_agreeing_rows_table_and_plot(tmp_path):
    pytest.importorskip("pylmcf")
    pytest.importorskip("pynetgen")
    args = argparse.Namespace(
        families="netgen-8,goto,staircase,gridgen-pn,match-chains,match-random-d2",
        sizes="64,256",
        repeats=2,
        seed=1,
        out=str(tmp_path),
        no_networkx=False,
    )
    assert bg.run(args) == 0
    meta = json.loads((tmp_path / "graph_bench.json").read_text())
    rows = meta["rows"]
    assert {r["family"] for r in rows} == {
        "netgen-8",
        "goto",
        "staircase",
        "gridgen-pn",
        "match-chains",
        "match-random-d2",
    }
    assert all(r["agrees"] for r in rows)
    solvers = {r["solver"] for r in rows if r["family"] == "netgen-8"}
    assert solvers == {"spare_fast", "lemon", "ortools", "networkx"}
    assert (tmp_path / "graph_bench.png").stat().st_size > 10_000
    md = (tmp_path / "graph_bench.md").read_text()
    assert md.count("\n") == 2 + 6 * 2 and "| netgen-8 | 64 |" in md
    assert (tmp_path / "graph_bench.csv").read_text().startswith("family,n_nodes,")


def test_harness_stops_a_family_once_its_fastest_peer_is_too_slow(monkeypatch):
    pytest.importorskip("pylmcf")
    monkeypatch.setattr(bg, "PEER_SECONDS_LIMIT", 0.0)  # every peer is "too slow"
    rows = bg.measure(["netgen-8", "staircase"], [64, 256], 1, 0, networkx=False)
    assert {(r["family"], r["n_nodes"]) for r in rows} == {("netgen-8", 64), ("staircase", 57)}


def test_harness_rejects_unknown_family(tmp_path):
    args = argparse.Namespace(
        families="netgen-9", sizes="64", repeats=1, seed=0, out=str(tmp_path), no_networkx=True
    )
    # The one-line usage error of every command, naming the option and the bad family.
    with pytest.raises(UsageError, match="--families = netgen-9 names unknown family 'netgen-9'"):
        bg.run(args)
    assert not any(tmp_path.iterdir())  # rejected before any work


def test_matching_instance_rejects_unknown_family():
    with pytest.raises(ValueError, match="family = 'match-random-d7'"):
        bg.matching_instance("match-random-d7", 100, 0)
