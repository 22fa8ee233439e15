"""The SimGrid engine against the native one: the tables and the plot of ``docs/guide/simgrid.md``.

Usage: ``PYTHONPATH=. python tools/sim_simgrid.py [--workers W] [--out docs/sim] [PART]...``
with PART in ``cross`` (a), ``network`` (b: the all-reduce per alive count), ``table`` (b and
c: the paper's cells on SimGrid's own network model) and ``plot`` (no argument: all).  Every
cell is the paper's scenario at N = 200, 600, 1,000, 5 seeds (0..4), each scheme's
availability-optimal checkpoint period.  The runs write ``OUT/simgrid-runs.csv`` (one row per
run, with its engine and network), the tables ``OUT/simgrid.md`` and the plot
``OUT/simgrid.png``; ``plot`` alone rebuilds the tables and plot from the CSV.

* (a) ``cross``: SimGrid with its platform calibrated so that the failure-free all-reduce is
  the native engine's analytic T_a, against the native engine, on common failure traces (the
  same seeds), at each scheme's best r of the native grid of ``table``.
* (b) ``network``: the ring all-reduce SimGrid gives over the alive groups, against the
  analytic T_a, for N = 200..1,000 and the fewest alive groups at each stack depth 1..r.
* (c) ``table``: the paper's table from the SimGrid engine on its own network model, beside
  the native engine's and the paper's, on the r grid below (SPARe r = 8..11 holds the native
  best r of every N; Rep+CKPT r = 2..4).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from spare_fast.sim import Scenario, default_allreduce, simgrid, simulate
from spare_fast.sim.sweep import PAPER_TABLE

GROUPS = (200, 600, 1000)
SEEDS = range(5)
R_GRID = {"spare": (8, 9, 10, 11), "replication": (2, 3, 4)}
LABEL = {"spare": "SPARe+CKPT", "replication": "Rep+CKPT"}
FIELDS = (
    "engine",
    "network",
    "groups",
    "scheme",
    "redundancy",
    "seed",
    "completed",
    "normalized",
    "availability",
    "failures",
    "restarts",
    "allreduce",
    "t0",
    "sim_seconds",
)


def _one(task: tuple[str, str, int, str, int, int]) -> dict[str, object]:
    engine, network, n, scheme, r, seed = task
    sc = Scenario(groups=n)
    if network == "analytic":
        sc = sc.replace(allreduce=default_allreduce(n))
    run = simulate if engine == "native" else simgrid.simulate
    rep = run(sc, scheme, redundancy=r, seed=seed, timeline=False)
    return {
        "engine": engine,
        "network": network,
        "groups": n,
        "scheme": scheme,
        "redundancy": r,
        "seed": seed,
        "completed": rep.completed,
        "normalized": rep.normalized,
        "availability": rep.availability,
        "failures": rep.failures,
        "restarts": rep.restarts,
        "allreduce": rep.scenario.allreduce_time,
        "t0": rep.t0,
        "sim_seconds": rep.sim_seconds,
    }


def _run_all(tasks: list[tuple[str, str, int, str, int, int]], workers: int) -> list[dict]:
    t = time.perf_counter()
    # Threads suffice: every SimGrid run is its own worker process.
    with ThreadPoolExecutor(max_workers=workers) as pool:
        rows = list(pool.map(_one, tasks))
    print(f"{len(tasks)} runs in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return rows


def _read(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        for k in ("groups", "redundancy", "seed", "failures", "restarts"):
            row[k] = int(row[k])
        for k in ("normalized", "availability", "allreduce", "t0", "sim_seconds"):
            row[k] = float(row[k])
        row["completed"] = row["completed"] == "True"
    return rows


def _write(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def _merge(old: list[dict], new: list[dict]) -> list[dict]:
    key = ("engine", "network", "groups", "scheme", "redundancy", "seed")
    seen = {tuple(r[k] for k in key): r for r in old}
    seen.update({tuple(r[k] for k in key): r for r in new})
    return list(seen.values())


def _cell(rows: list[dict], engine: str, network: str, n: int, scheme: str, r: int) -> list[dict]:
    return [
        x
        for x in rows
        if (x["engine"], x["network"], x["groups"], x["scheme"], x["redundancy"])
        == (engine, network, n, scheme, r)
    ]


def _header(*cols: str) -> list[str]:
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def _mean_se(xs: list[float]) -> tuple[float, float]:
    m = statistics.fmean(xs)
    se = statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else math.nan
    return m, se


def _best(rows: list[dict], engine: str, network: str, n: int, scheme: str) -> int | None:
    best, best_v = None, math.inf
    for r in R_GRID[scheme]:
        cell = _cell(rows, engine, network, n, scheme, r)
        if len(cell) < len(SEEDS):
            continue
        v = statistics.fmean(x["normalized"] for x in cell)
        if v < best_v:
            best, best_v = r, v
    return best


# -- the parts -------------------------------------------------------------------------------
def table_tasks() -> list[tuple[str, str, int, str, int, int]]:
    return [
        (engine, network, n, scheme, r, s)
        for engine, network in (("native", "analytic"), ("simgrid", "network"))
        for n in GROUPS
        for scheme, rs in R_GRID.items()
        for r in rs
        for s in SEEDS
    ]


def cross_tasks(rows: list[dict]) -> list[tuple[str, str, int, str, int, int]]:
    tasks = []
    for n in GROUPS:
        for scheme in R_GRID:
            r = _best(rows, "native", "analytic", n, scheme)
            if r is None:
                raise SystemExit("cross needs the native grid first: run the 'table' part")
            tasks += [("simgrid", "analytic", n, scheme, r, s) for s in SEEDS]
    return tasks


def network_table(out: str) -> str:
    lines = _header(
        "N",
        "analytic T_a",
        "SimGrid, every group alive",
        "SimGrid at the fewest alive of depth S = 2, 4, 8, r",
        "largest step-time change, depth 1..r",
    )
    data = []
    for n in (200, 400, 600, 800, 1000):
        r = simgridless_r(n)
        alive = sorted({math.ceil(n / s) for s in range(1, r + 1)}, reverse=True)
        got = simgrid.network_allreduce(Scenario(groups=n), alive)
        ta = default_allreduce(n)
        compute = float(Scenario().compute)
        # A step at depth S computes S layers then all-reduces over at least ceil(N / S) groups.
        moves = [abs(got[math.ceil(n / s)] - ta) / (s * compute + ta) for s in range(1, r + 1)]
        shown = [s for s in (2, 4, 8, r) if s <= r]
        cells = ", ".join(f"{got[math.ceil(n / s)]:.3f} s" for s in dict.fromkeys(shown))
        lines.append(
            f"| {n} | {ta:.2f} s | {got[n]:.3f} s ({(got[n] / ta - 1) * 100:+.1f}%) | "
            f"{cells} | {max(moves) * 100:.2f}% |"
        )
        data.append((n, ta, got[n]))
    with open(os.path.join(out, "simgrid-network.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["groups", "analytic", "simgrid"])
        w.writerows(data)
    return "\n".join(lines)


def simgridless_r(n: int) -> int:
    """The SPARe r of the network table: the native engine's best r at the paper's N."""
    return {200: 11, 400: 9, 600: 8, 800: 9, 1000: 9}[n]


def cross_table(rows: list[dict]) -> str:
    lines = _header(
        "N",
        "scheme (r)",
        "native TTT/T0",
        "SimGrid, T_a calibrated",
        "difference",
        "combined SE",
        "difference / SE",
        "holds (<= 2 SE)",
    )
    for n in GROUPS:
        for scheme in R_GRID:
            r = _best(rows, "native", "analytic", n, scheme)
            nat = _cell(rows, "native", "analytic", n, scheme, r or 0)
            sg = _cell(rows, "simgrid", "analytic", n, scheme, r or 0)
            if r is None or not sg:
                continue
            mn, sn = _mean_se([x["normalized"] for x in nat])
            ms, ss = _mean_se([x["normalized"] for x in sg])
            d, se = ms - mn, math.hypot(sn, ss)
            lines.append(
                f"| {n} | {LABEL[scheme]} ({r}) | {mn:.3f} ± {sn:.3f} | {ms:.3f} ± {ss:.3f} | "
                f"{d:+.4f} | {se:.3f} | {abs(d) / se:.3f} | {'yes' if abs(d) <= 2 * se else 'NO'} |"
            )
    return "\n".join(lines)


def paper_table(rows: list[dict]) -> str:
    lines = _header(
        "N",
        "SimGrid Rep+CKPT (avail., r)",
        "SimGrid SPARe+CKPT (avail., r)",
        "SimGrid reduction",
        "native Rep / SPARe (r)",
        "TTT/T0 move, SimGrid vs native at the native best r (Rep / SPARe)",
        "paper Rep / SPARe (r)",
    )
    for n in GROUPS:
        cells, nat_cells, moves = [], [], []
        best = {}
        for scheme in ("replication", "spare"):
            r = _best(rows, "simgrid", "network", n, scheme)
            rn = _best(rows, "native", "analytic", n, scheme)
            if r is None or rn is None:
                return "(run the 'table' part first)"
            sg = _cell(rows, "simgrid", "network", n, scheme, r)
            m = statistics.fmean(x["normalized"] for x in sg)
            a = statistics.fmean(x["availability"] for x in sg)
            best[scheme] = m
            cells.append(f"{m:.2f} ({a * 100:.2f}%, r={r})")
            nat = _cell(rows, "native", "analytic", n, scheme, rn)
            mn = statistics.fmean(x["normalized"] for x in nat)
            nat_cells.append((mn, rn))
            sg_at = _cell(rows, "simgrid", "network", n, scheme, rn)
            ms = statistics.fmean(x["normalized"] for x in sg_at)
            moves.append(f"{(ms / mn - 1) * 100:+.2f}%")
        red = 1 - best["spare"] / best["replication"]
        pr, _, ps, _, prr = PAPER_TABLE[n]
        lines.append(
            f"| {n} | {cells[0]} | {cells[1]} | {red * 100:.1f}% | "
            f"{nat_cells[0][0]:.2f} (r={nat_cells[0][1]}) / {nat_cells[1][0]:.2f} "
            f"(r={nat_cells[1][1]}) | {moves[0]} / {moves[1]} | "
            f"{pr:.2f} (r=3) / {ps:.2f} (r={prr}) |"
        )
    return "\n".join(lines)


def plot(rows: list[dict], out: str) -> None:
    from spare_fast._plotting import new_figure, save

    fig, axes = new_figure(ncols=2, figsize=(10, 3.8))
    ax = axes[0, 0]
    path = os.path.join(out, "simgrid-network.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            net = [(int(a), float(b), float(c)) for a, b, c in list(csv.reader(f))[1:]]
        ns = [x[0] for x in net]
        ax.plot(ns, [x[1] for x in net], "o-", label="analytic T_a (native engine)")
        ax.plot(ns, [x[2] for x in net], "s--", label="SimGrid ring all-reduce")
        ax.set_xlabel("groups N")
        ax.set_ylabel("failure-free all-reduce (s)")
        ax.set_title("(b) all-reduce: network model vs analytic")
        ax.legend()
    ax = axes[0, 1]
    width = 0.2
    for k, (engine, network, label) in enumerate(
        (
            ("native", "analytic", "native"),
            ("simgrid", "analytic", "SimGrid, T_a calibrated"),
            ("simgrid", "network", "SimGrid network"),
        )
    ):
        xs, ys, es = [], [], []
        for i, n in enumerate(GROUPS):
            for j, scheme in enumerate(("replication", "spare")):
                r = _best(rows, "native", "analytic", n, scheme)
                cell = _cell(rows, engine, network, n, scheme, r or 0)
                if not cell:
                    continue
                m, se = _mean_se([x["normalized"] for x in cell])
                xs.append(i * 2.5 + j + (k - 1) * width)
                ys.append(m)
                es.append(se)
        ax.errorbar(xs, ys, yerr=es, fmt="o", capsize=3, label=label)
    for i, n in enumerate(GROUPS):
        pr, _, ps, _, _ = PAPER_TABLE[n]
        ax.plot([i * 2.5, i * 2.5 + 1], [pr, ps], "kx", label="paper" if i == 0 else None)
    ax.set_xticks([i * 2.5 + j for i in range(3) for j in range(2)])
    ax.set_xticklabels([f"{n}\n{s}" for n in GROUPS for s in ("Rep", "SPARe")])
    ax.set_ylabel("TTT / T0 (mean ± SE, 5 seeds)")
    ax.set_title("(a, c) cells at the native best r")
    ax.legend(fontsize=8)
    save(fig, os.path.join(out, "simgrid.png"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("parts", nargs="*", help="cross, network, table, plot (default: all)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default="docs/sim")
    args = p.parse_args(argv)
    parts = args.parts or ["table", "cross", "network", "plot"]
    for part in parts:
        if part not in ("cross", "network", "table", "plot"):
            p.error(f"part = {part!r} is not cross, network, table or plot")
    csv_path = os.path.join(args.out, "simgrid-runs.csv")
    rows = _read(csv_path)
    if "table" in parts:
        rows = _merge(rows, _run_all(table_tasks(), args.workers))
        _write(csv_path, rows)
    if "cross" in parts:
        rows = _merge(rows, _run_all(cross_tasks(rows), args.workers))
        _write(csv_path, rows)
    net_path = os.path.join(args.out, "simgrid-network.md")
    if "network" in parts:
        with open(net_path, "w") as f:
            f.write(network_table(args.out) + "\n")
    sections = [
        ("(a) Native engine and SimGrid with T_a calibrated, common failure traces", cross_table),
        ("(c) The paper's table on SimGrid's network model", paper_table),
    ]
    text = []
    for title, fn in sections:
        text += [f"### {title}", "", fn(rows), ""]
    if os.path.exists(net_path):
        with open(net_path) as f:
            text += ["### (b) The all-reduce: SimGrid's network model and the analytic T_a", ""]
            text += [f.read()]
    with open(os.path.join(args.out, "simgrid.md"), "w") as f:
        f.write("\n".join(text).rstrip() + "\n")
    print("\n".join(text))
    if "plot" in parts:
        plot(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
