"""spare_fast.graph.read_dimacs / write_dimacs: round trips, peers, malformed files."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ortools.graph.python import min_cost_flow as ortools_mcf

from spare_fast._dimacs import MAX_LINE_BYTES, UNNAMED_NODES
from spare_fast.graph import (
    DimacsError,
    DimacsProblem,
    MinCostFlowStatus,
    min_cost_flow,
    read_dimacs,
    write_dimacs,
)
from spare_fast.testing.graph_families import generate


def _same(a: DimacsProblem, b: DimacsProblem) -> None:
    assert (a.kind, a.n_nodes, a.source, a.sink) == (b.kind, b.n_nodes, b.source, b.sink)
    for attr in ("tail", "head", "capacity", "cost", "supply", "left"):
        x, y = getattr(a, attr), getattr(b, attr)
        assert (x is None) == (y is None), attr
        if x is not None:
            assert np.array_equal(np.asarray(x), np.asarray(y)), attr


def test_min_round_trip(tmp_path):
    inst = generate("netgen-8", 200, seed=5)
    n, t, h, c, w, b = inst.arrays()
    p = DimacsProblem("min", n, t, h, capacity=c, cost=w, supply=b)
    write_dimacs(tmp_path / "a.min", p, comment="netgen-8 n=200\nseed 5")
    q = read_dimacs(tmp_path / "a.min")
    _same(p, q)
    assert q.tail.dtype == np.int32 and q.cost.dtype == np.int64
    r = min_cost_flow(*q.min_cost_flow_arrays())
    assert r.status == MinCostFlowStatus.OPTIMAL


@pytest.mark.parametrize("seed", range(5))
def test_random_round_trips_of_every_kind(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    m = int(rng.integers(0, 80))
    t = rng.integers(0, n, size=m).astype(np.int32)
    h = rng.integers(0, n, size=m).astype(np.int32)
    big = rng.integers(0, 2**62, size=m, dtype=np.int64)
    problems = [
        DimacsProblem(
            "min",
            n,
            t,
            h,
            capacity=big,
            cost=rng.integers(-5, 2**40, size=m),
            supply=np.concatenate(([7], np.zeros(n - 2, np.int64), [-7])),
        ),
        DimacsProblem("max", n, t, h, capacity=big, source=n - 1, sink=0),
        DimacsProblem(
            "asn",
            n,
            t,
            h,
            cost=rng.integers(0, 100, size=m),
            left=np.arange(n // 2, dtype=np.int32),
        ),
    ]
    for p in problems:
        write_dimacs(tmp_path / p.kind, p)
        _same(p, read_dimacs(tmp_path / p.kind))


def test_empty_min_problem(tmp_path):
    (tmp_path / "e").write_text("c nothing\np min 0 0\n")
    p = read_dimacs(tmp_path / "e")
    assert p.n_nodes == 0 and p.tail.size == 0 and p.supply.size == 0


def test_pynetgen_file_solves_like_ortools(tmp_path):
    pynetgen = pytest.importorskip("pynetgen")
    path = tmp_path / "netgen.min"
    pynetgen.netgen_generate(
        seed=7,
        nodes=300,
        sources=17,
        sinks=17,
        density=2400,
        mincost=1,
        maxcost=10_000,
        supply=17_000,
        mincap=1,
        maxcap=1_000,
        fname=str(path),
    )
    n, t, h, c, w, b = read_dimacs(path).min_cost_flow_arrays()
    s = ortools_mcf.SimpleMinCostFlow()
    s.add_arcs_with_capacity_and_unit_cost(t, h, c, w)
    s.set_nodes_supplies(np.arange(n), b)
    assert s.solve() == s.OPTIMAL
    for method in ("network_simplex", "ssp"):
        r = min_cost_flow(n, t, h, c, w, b, method=method)
        assert (r.status, r.total_cost) == (MinCostFlowStatus.OPTIMAL, s.optimal_cost())


MALFORMED = [
    ("n 1 3\np min 2 0\n", "1: 'n' line before the problem line"),
    ("p min 2\n", "1: problem line needs"),
    ("p mincost 2 1\n", "1: problem kind 'mincost'"),
    ("p min 2 1\np min 2 1\n", "2: second problem line"),
    ("p min x 1\n", "1: NODES = 'x' is not an integer"),
    # Numbers are plain ASCII decimal digits: no Python int literal forms.
    ("p min 20 1\nn 1_0 1\n", "2: node id = '1_0' is not an integer"),
    ("p min 2 0\nn 1 +5\n", "2: SUPPLY = '+5' is not an integer"),
    ("p min 2 0\nn 1 \uff15\n", "2: SUPPLY = "),
    ("p min 2 0\nn 1 0x10\n", "2: SUPPLY = '0x10' is not an integer"),
    ("p min 2 0\nn 1 5.\n", "2: SUPPLY = '5.' is not an integer"),
    # Duplicates and inconsistent designators name both lines.
    ("p min 2 0\nn 1 5\nn 1 -5\n", "3: second node line for node 1 (the first is line 2)"),
    ("p min 2 0\nn 1 0\nc\nn 1 0\n", "4: second node line for node 1 (the first is line 2)"),
    ("p max 2 0\nn 1 s\nn 1 t\n", "3: node 1 is both source and sink (lines 2 and 3)"),
    ("p max 3 0\nn 1 s\nn 2 s\n", "3: second source (the first is node 1, line 2)"),
    ("p max 3 0\nn 1 t\nn 3 s\nn 2 t\n", "4: second sink (the first is node 1, line 2)"),
    ("p asn 4 0\nn 1\nn 2\nn 1\n", "4: second node line for node 1 (the first is line 2)"),
    # The p line's counts against what the file can hold.
    ("p min 2147483647 1\n", "1: NODES = 2,147,483,647 is more than a file of 19 bytes"),
    ("p min 100000000 1\n", "1: NODES = 100,000,000 is more than a file of 18 bytes"),
    ("p min 2147483648 1\n", "1: NODES = 2147483648 is not in [0, 2147483647]"),
    ("p max 2 100\na 1 2 3\n", "1: ARCS = 100 is more than a file of 20 bytes can hold"),
    ("p min 2 1\na 1 3 0 5 1\n", "2: head = 3 is not in [1, 2]"),
    ("p min 2 1\na 0 2 0 5 1\n", "2: tail = 0 is not in [1, 2]"),
    ("p min 2 1\na 1 2 0 5\n", "2: arc line needs 'a U V LOW CAP COST'"),
    ("p min 2 1\na 1 2 1 5 1\n", "2: LOW = 1"),
    ("p min 2 1\na 1 2 0 -5 1\n", "2: CAP = -5"),
    ("p min 2 1\nc\na 1 2 0 5 1.5\n", "3: COST = '1.5' is not an integer"),
    ("p min 2 1\nn 1 99999999999999999999\n", "2: SUPPLY = 99999999999999999999"),
    (
        "p min 2 2\nc room for two arcs\na 1 2 0 5 1\n",
        "1 arc lines, the problem line (line 1) says 2",
    ),
    ("p min 2 0\na 1 2 0 5 1\n", "2: more arcs than the 0"),
    ("p max 2 1\nn 1 s\nn 2 x\n", "3: node role 'x'"),
    ("p max 2 1\nn 1 s\na 1 2 3\n", "max problem without a sink"),
    ("p asn 2 1\nn 1 5\n", "2: node line needs 'n ID'"),
    ("p min 2 0\nx 1\n", "2: unknown line type 'x'"),
    ("c only a comment\n", "no problem line"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_file_names_the_line(tmp_path, text, message):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(DimacsError, match=f"^{re.escape(str(path))}") as info:
        read_dimacs(path)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_pynetgen_file_still_reads_at_the_size_bound(tmp_path):
    # The tightest legal file: every arc line as short as it can be, no trailing newline.
    path = tmp_path / "tight.max"
    path.write_bytes(b"p max 2 2\nn 1 s\nn 2 t\na 1 2 3\na 2 1 4")
    p = read_dimacs(path)
    assert p.capacity.tolist() == [3, 4] and (p.source, p.sink) == (0, 1)


def test_isolated_nodes_within_the_stated_allowance(tmp_path):
    path = tmp_path / "iso.min"
    path.write_text(f"p min {UNNAMED_NODES} 0\n")
    p = read_dimacs(path)
    assert p.n_nodes == UNNAMED_NODES and not p.supply.any()


def test_long_line_refused_unread(tmp_path):
    # A 1 GiB sparse file without a newline: refused after one bounded read.
    path = tmp_path / "sparse"
    with open(path, "wb") as f:
        f.write(b"p min 2 1\na 1 2 0 5 ")
        f.truncate(2**30)
    with pytest.raises(DimacsError, match=f"{MAX_LINE_BYTES} bytes") as info:
        read_dimacs(path)
    assert len(str(info.value)) < len(str(path)) + 200


def test_long_token_cut_in_the_message(tmp_path):
    path = tmp_path / "long"
    path.write_text("p min 2 1\na 1 2 0 5 " + "9" * 3000 + "\n")
    with pytest.raises(DimacsError, match="COST = '9999") as info:
        read_dimacs(path)
    assert len(str(info.value)) < len(str(path)) + 120
    tag = tmp_path / "tag"
    tag.write_text("p min 2 1\n" + "x" * 4000 + "\n")
    with pytest.raises(DimacsError, match="unknown line type") as info:
        read_dimacs(tag)
    assert len(str(info.value)) < len(str(tag)) + 120


# The peak is this process's own (VmHWM, reset by exec): ru_maxrss would carry over the peak of
# the forked test runner, which Linux keeps across execve.
_PEAK_SCRIPT = """
import sys
from spare_fast.graph import DimacsError, min_cost_flow, read_dimacs
try:
    min_cost_flow(*read_dimacs(sys.argv[1]).min_cost_flow_arrays())
except DimacsError as e:
    print("refused:", e)
status = open("/proc/self/status").read().split("VmHWM:")[1]
print(int(status.split()[0]))
"""


def test_45_byte_file_refused_within_100_mb(tmp_path):
    path = tmp_path / "huge.min"
    path.write_bytes(b"c a small file, big claim\np min 2147483647 1\n")
    assert path.stat().st_size == 45
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout.splitlines()
    assert out[0].startswith("refused:") and "NODES = 2,147,483,647" in out[0]
    peak_kib = int(out[-1])  # Linux: KiB
    assert peak_kib < 100 * 1024


def test_write_rejects_missing_fields(tmp_path):
    t = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="needs cost"):
        write_dimacs(tmp_path / "x", DimacsProblem("min", 1, t, t, capacity=[1], supply=[0]))
    with pytest.raises(ValueError, match="needs source and sink"):
        write_dimacs(tmp_path / "x", DimacsProblem("max", 1, t, t, capacity=[1]))


def test_min_cost_flow_arrays_only_for_min():
    p = DimacsProblem("asn", 0, np.zeros(0, np.int32), np.zeros(0, np.int32), cost=np.zeros(0))
    with pytest.raises(ValueError, match="'asn' problem"):
        p.min_cost_flow_arrays()
