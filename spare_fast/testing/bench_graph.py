"""``spare-fast bench graph``: the graph kernels against their peers on the standard families.

Families x sizes x solvers. Min-cost flow: spare_fast (``method="auto"``), LEMON's network
simplex (PyPI ``pylmcf``), OR-Tools' SimpleMinCostFlow and, on small sizes, networkx.
Matching: :func:`spare_fast.graph.hopcroft_karp` against scipy's
``maximum_bipartite_matching``. Every answer (status and cost; matching size) is checked
against every peer; a disagreement is reported and makes the command exit with status 1.

Families (see :mod:`spare_fast.testing.graph_families`): numpy rewrites of NETGEN-8,
NETGEN-SR, NETGEN-LO-8, GRIDGEN, GOTO and a road grid; the staircase (k disjoint paths of
lengths 1..k, unit costs); and the public generators themselves through PyPI ``pynetgen``
(``gridgen-pn``, ``gridgen-col-pn``, ``netgen-sr-pn``, ``netgen-lo-pn``; generation time is
not measured). A
family's larger sizes are skipped once its fastest peer took over a minute per solve.

Times are process CPU seconds (``time.process_time``; every solver here is single-threaded),
median over the repeats, taken round-robin across the solvers, and include for every solver
the Python call and the conversion of the same numpy arrays into the solver's graph. CPU time
rather than wall time, because wall time on a shared machine mostly measures the neighbours.
Writes CSV, JSON and a log-log PNG
(time against nodes, one panel per family).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from spare_fast.testing.graph_families import FAMILIES, FlowInstance, generate

MCF_FAMILIES = (
    "netgen-8",
    "netgen-sr",
    "netgen-lo-8",
    "gridgen",
    "goto",
    "road",
    "staircase",
    "gridgen-pn",
    "gridgen-col-pn",
    "netgen-sr-pn",
    "netgen-lo-pn",
)
MATCHING_FAMILIES = (
    "match-random-d2",
    "match-random-d3",
    "match-random-d4",
    "match-chains",
    "match-unbalanced",
)
# NETGEN-SR has sqrt(n) arcs per node: n = 2^16 would be 16.8M arcs. The public generator
# (pynetgen, pure Python) takes 17 s for NETGEN-SR at 2^13 nodes (745k arcs) and 12 minutes
# and 3.2 GB at 2^16, so its NETGEN families stop earlier.
MAX_NODES = {"netgen-sr": 2**14, "netgen-sr-pn": 2**16, "netgen-lo-pn": 2**17}
# Larger sizes of a family are skipped once its fastest peer took longer than this per solve.
PEER_SECONDS_LIMIT = 60.0
# Families that need pynetgen (the public NETGEN and GRIDGEN generators).
PYNETGEN_FAMILIES = ("gridgen-pn", "gridgen-col-pn", "netgen-sr-pn", "netgen-lo-pn")
NETWORKX_MAX_NODES = 2**10


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "graph", help="min-cost flow and matching against LEMON, OR-Tools, networkx, scipy"
    )
    p.add_argument(
        "--families",
        default=",".join(MCF_FAMILIES + MATCHING_FAMILIES),
        help="comma-separated families (default: all)",
    )
    p.add_argument(
        "--sizes",
        default="1024,4096,16384",
        help="comma-separated node counts (default 1024,4096,16384)",
    )
    from spare_fast._validation import int_at_least

    p.add_argument(
        "--repeats", type=int_at_least(1), default=3, help="timed runs per solver (median)"
    )
    p.add_argument("--seed", type=int_at_least(0), default=0, help="instance seed")
    p.add_argument("--out", default="bench-graph", help="output directory for CSV, JSON, PNG")
    p.add_argument("--no-networkx", action="store_true", help="skip the networkx peer")
    p.set_defaults(func=run)


# ---------------------------------------------------------------------------------------------
# Min-cost flow solvers: each returns (status name, total cost).
# ---------------------------------------------------------------------------------------------
def _ours(inst: FlowInstance) -> tuple[str, int]:
    from spare_fast.graph import min_cost_flow

    r = min_cost_flow(*inst.arrays())
    return r.status.name, r.total_cost


def _ortools(inst: FlowInstance) -> tuple[str, int]:
    from ortools.graph.python import min_cost_flow as ortools_mcf

    n, t, h, c, w, b = inst.arrays()
    s = ortools_mcf.SimpleMinCostFlow()
    s.add_arcs_with_capacity_and_unit_cost(t, h, c, w)
    s.set_nodes_supplies(np.arange(n), b)
    status = s.solve()
    name = "OPTIMAL" if status == s.OPTIMAL else f"ortools-{int(status)}"
    return name, int(s.optimal_cost())


def _lemon(inst: FlowInstance) -> tuple[str, int]:
    import pylmcf

    n, t, h, c, w, b = inst.arrays()
    g = pylmcf.Graph(n, t, h)  # wants arcs sorted by (tail, head): the families are
    g.set_node_supply(b)
    g.set_edge_capacities(c)
    g.set_edge_costs(w)
    g.solve()
    return "OPTIMAL", int(g.total_cost())


def _networkx(inst: FlowInstance) -> tuple[str, int]:
    import networkx as nx

    n, t, h, c, w, b = inst.arrays()
    g = nx.MultiDiGraph()
    g.add_nodes_from((v, {"demand": -int(b[v])}) for v in range(n))
    g.add_edges_from(
        (int(u), int(v), {"capacity": int(cap), "weight": int(cost)})
        for u, v, cap, cost in zip(t, h, c, w, strict=True)
    )
    cost, _ = nx.network_simplex(g)
    return "OPTIMAL", int(cost)


# ---------------------------------------------------------------------------------------------
# Matching families and solvers: each solver returns the matching size.
# ---------------------------------------------------------------------------------------------
def matching_instance(family: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """CSR ``(indptr, indices, n_right)`` of a hard bipartite family with about n vertices.

    * ``match-random-d2``, ``-d3``, ``-d4``: n/2 x n/2, each left vertex with 2, 3 or 4
      random right neighbours on average (Poisson): sparse graphs around the degrees where
      the maximum matching goes from far from perfect to nearly perfect, so the last
      augmenting paths are long.
    * ``match-chains``: Hopcroft and Karp's bad case: disjoint paths l0-r0-l1-r1-... whose
      greedy start matches every l_i to r_i but the last, leaving one long augmenting path
      per chain (chains of length sqrt(n)).
    * ``match-unbalanced``: n/10 left vertices, 9n/10 right, degree 4: most of the right
      side stays unmatched.
    """
    rng = np.random.default_rng(seed)
    if family.startswith("match-random-d") and family in MATCHING_FAMILIES:
        n_left = n_right = max(1, n // 2)
        deg = rng.poisson(float(family[-1]), size=n_left)
        rows = np.repeat(np.arange(n_left), deg)
        cols = rng.integers(0, n_right, size=rows.size)
    elif family == "match-chains":
        length = max(2, math.isqrt(n // 2))
        n_chains = max(1, n // (2 * length))
        n_left = n_right = n_chains * length
        i = np.arange(n_left)
        pos = i % length
        # l_i sees r_{i+1} first, then r_i: first fit matches l_i to r_{i+1} and leaves l_last
        # and r_0 of every chain free, joined by one alternating path through the chain.
        nxt = pos < length - 1
        rows = np.concatenate((i[nxt], i))
        cols = np.concatenate((i[nxt] + 1, i))
        rank = np.concatenate((np.zeros(int(nxt.sum())), np.ones(n_left)))
        order = np.lexsort((rank, rows))
        rows, cols = rows[order], cols[order]
        pl, pr = rng.permutation(n_left), rng.permutation(n_right)  # no memory-order layout
        rows, cols = pl[rows], pr[cols]
    elif family == "match-unbalanced":
        n_left = max(1, n // 10)
        n_right = max(1, n - n_left)
        rows = np.repeat(np.arange(n_left), 4)
        cols = rng.integers(0, n_right, size=rows.size)
    else:
        raise ValueError(f"family = {family!r} is not one of {MATCHING_FAMILIES}")
    order = np.argsort(rows, kind="stable")  # keeps each row's listed order
    rows, cols = rows[order], cols[order]
    indptr = np.zeros(n_left + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n_left), out=indptr[1:])
    return indptr, cols.astype(np.int32), int(n_right)


def _match_ours(inst: tuple[np.ndarray, np.ndarray, int]) -> int:
    from spare_fast.graph import hopcroft_karp

    return int(np.count_nonzero(hopcroft_karp(*inst) >= 0))


def _match_scipy(inst: tuple[np.ndarray, np.ndarray, int]) -> int:
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    indptr, indices, n_right = inst
    data = np.ones(indices.size, dtype=np.int8)
    g = sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, n_right))
    return int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))


def _time_interleaved(
    solvers: list[tuple[str, Callable[[Any], Any]]], inst: Any, repeats: int
) -> dict[str, tuple[float, Any]]:
    """Median CPU seconds and answer per solver, the repeats taken round-robin (each round
    runs every solver once), so that a change of load on a shared machine hits all alike.
    networkx, much slower, runs once."""
    times: dict[str, list[float]] = {name: [] for name, _ in solvers}
    answers: dict[str, Any] = {}
    if repeats > 1:  # warm-up: imports, first-touch allocations
        for name, fn in solvers:
            if name != "networkx":
                fn(inst)
    for r in range(repeats):
        for name, fn in solvers:
            if name == "networkx" and r > 0:
                continue
            t0 = time.process_time()
            answers[name] = fn(inst)
            times[name].append(time.process_time() - t0)
    return {name: (statistics.median(times[name]), answers[name]) for name, _ in solvers}


def _peers_available() -> dict[str, bool]:
    out = {}
    for name, module in (("lemon", "pylmcf"), ("ortools", "ortools"), ("networkx", "networkx")):
        try:
            __import__(module)
            out[name] = True
        except ImportError:
            out[name] = False
    return out


def measure(
    families: list[str], sizes: list[int], repeats: int, seed: int, networkx: bool
) -> list[dict[str, Any]]:
    """One row per (family, size, solver): seconds, answer, ratio peer/ours, agreement."""
    have = _peers_available()
    rows: list[dict[str, Any]] = []
    for family in families:
        peer_too_slow = False
        for n in sizes:
            if n > MAX_NODES.get(family, n) or peer_too_slow:
                continue
            if family in MATCHING_FAMILIES:
                inst: Any = matching_instance(family, n, seed)
                n_nodes = int(inst[0].size - 1 + inst[2])
                n_arcs = int(inst[1].size)
                solvers: list[tuple[str, Callable[[Any], Any]]] = [
                    ("spare_fast", _match_ours),
                    ("scipy", _match_scipy),
                ]
            else:
                inst = generate(family, n, seed)
                n_nodes, n_arcs = inst.n_nodes, inst.n_arcs
                solvers = [("spare_fast", _ours)]
                solvers += [
                    (p, f) for p, f in (("lemon", _lemon), ("ortools", _ortools)) if have[p]
                ]
                if networkx and have["networkx"] and n <= NETWORKX_MAX_NODES:
                    solvers.append(("networkx", _networkx))
            results = _time_interleaved(solvers, inst, repeats)
            peer_times = [secs for name, (secs, _) in results.items() if name != "spare_fast"]
            peer_too_slow = bool(peer_times) and min(peer_times) > PEER_SECONDS_LIMIT
            ours_s, ours_answer = results["spare_fast"]
            for name, (secs, answer) in results.items():
                rows.append(
                    {
                        "family": family,
                        "n_nodes": n_nodes,
                        "n_arcs": n_arcs,
                        "solver": name,
                        "seconds": secs,
                        "answer": str(answer),
                        "peer_over_ours": secs / ours_s if ours_s > 0 else math.inf,
                        "agrees": answer == ours_answer,
                    }
                )
            line = "  ".join(
                f"{name} {1e3 * secs:9.1f} ms" + ("" if ans == ours_answer else " DISAGREES")
                for name, (secs, ans) in results.items()
            )
            print(f"{family:17s} n={n_nodes:7d} m={n_arcs:8d}  {line}", flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: one line per (family, size), ms per solver and ratios."""
    by_key: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_key.setdefault((r["family"], r["n_nodes"]), {})[r["solver"]] = r
    lines = [
        "| family | nodes | arcs | spare_fast ms | LEMON ms | OR-Tools ms | scipy ms "
        "| LEMON / ours | OR-Tools / ours | scipy / ours | answers agree |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]

    def ms(d: dict[str, Any], k: str) -> str:
        return f"{1e3 * d[k]['seconds']:,.1f}" if k in d else ""

    def ratio(d: dict[str, Any], k: str) -> str:
        return f"{d[k]['peer_over_ours']:.2f}x" if k in d else ""

    for (family, n), d in by_key.items():
        agree = all(r["agrees"] for r in d.values())
        lines.append(
            f"| {family} | {n:,} | {d['spare_fast']['n_arcs']:,} | {ms(d, 'spare_fast')} "
            f"| {ms(d, 'lemon')} | {ms(d, 'ortools')} | {ms(d, 'scipy')} | {ratio(d, 'lemon')} "
            f"| {ratio(d, 'ortools')} | {ratio(d, 'scipy')} | {'yes' if agree else 'NO'} |"
        )
    return "\n".join(lines)


#: One colour per solver, the same in every panel.
SOLVER_COLORS = {
    "spare_fast": "#1b9e77",
    "lemon": "#d95f02",
    "ortools": "#7570b3",
    "networkx": "#e7298a",
    "scipy": "#66a61e",
}


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Log-log CPU time against nodes, one panel per family, one colour per solver."""
    from spare_fast._plotting import log_axis, new_figure, save

    families = list(dict.fromkeys(r["family"] for r in rows))
    cols = min(3, max(len(families), 1))
    nrows = max(math.ceil(len(families) / cols), 1)
    fig, axes = new_figure(nrows, cols, figsize=(4.4 * cols, 3.6 * nrows + 0.6))
    for ax, family in zip(axes.ravel(), families, strict=False):
        fam_rows = [r for r in rows if r["family"] == family]
        for solver in dict.fromkeys(r["solver"] for r in fam_rows):
            pts = sorted((r["n_nodes"], r["seconds"]) for r in fam_rows if r["solver"] == solver)
            ax.plot(
                [p[0] for p in pts],
                [max(p[1], 1e-5) for p in pts],
                marker="o",
                label=solver,
                color=SOLVER_COLORS.get(solver),
                linewidth=2.2 if solver == "spare_fast" else 1.2,
            )
        ax.set_xscale("log", base=2)  # its own formatter labels the ticks 2^k
        log_axis(ax, "y")
        ax.set_title(family, fontsize=10)
        ax.set_xlabel("nodes")
        ax.set_ylabel("CPU time per solve (s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(families) :]:
        ax.axis("off")
    fig.suptitle(
        "Graph kernels against their peers: median process CPU time "
        "(array -> solver conversion included)",
        fontsize=10,
    )
    save(fig, path, dpi=110)


def run(args: argparse.Namespace) -> int:
    from spare_fast._validation import UsageError, require

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    for f in families:
        if f not in FAMILIES and f not in MATCHING_FAMILIES:
            known = sorted(FAMILIES) + list(MATCHING_FAMILIES)
            raise UsageError(
                "--families",
                args.families,
                f"names unknown family {f!r}; known: {', '.join(known)}",
            )
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise UsageError("--sizes", args.sizes, "is not a list of node counts") from None
    if not sizes or min(sizes) < 16 or max(sizes) > 2**22:
        raise UsageError("--sizes", args.sizes, f"must be node counts in [16, {2**22}]")
    needs_pynetgen = ("pynetgen",) if set(families) & set(PYNETGEN_FAMILIES) else ()
    for module in (
        ("pylmcf", "ortools", "scipy", "matplotlib")
        + needs_pynetgen
        + (() if args.no_networkx else ("networkx",))
    ):
        require(module, "spare-fast bench graph")
    out = Path(args.out)
    if not out.resolve().parent.is_dir():
        raise UsageError("--out", args.out, "is in a folder that does not exist")
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"spare-fast bench graph: {len(families)} families x sizes {sizes}, median of "
        f"{args.repeats} CPU times (array -> solver conversion included for every solver)"
    )
    rows = measure(families, sizes, args.repeats, args.seed, not args.no_networkx)
    with open(out / "graph_bench.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["family"])
        w.writeheader()
        w.writerows(rows)
    meta = {
        "machine": platform.platform(),
        "command": "spare-fast bench graph "
        + f"--families {','.join(families)} --sizes {args.sizes} --repeats {args.repeats} "
        + f"--seed {args.seed}",
        "timing": "median process CPU seconds, array -> solver graph conversion included",
        "rows": rows,
    }
    (out / "graph_bench.json").write_text(json.dumps(meta, indent=1))
    plot(rows, out / "graph_bench.png")
    md = table(rows)
    (out / "graph_bench.md").write_text(md + "\n")
    print()
    print(md)
    print(f"\nwrote {out}/graph_bench.csv, .json, .md, .png")
    return 0 if all(r["agrees"] for r in rows) else 1
