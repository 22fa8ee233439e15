"""Controller benchmarks: trajectory latency, from-scratch solve against the peer, 1M groups.

Used by ``spare-fast bench``, ``spare-fast demo`` and ``benchmarks/bench_controller.py``. Every
figure is measured in the current process (the 1M-group case in a child process, so that its
peak memory is its own) and peers run on identical arrays in the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

import spare_fast
from spare_fast.controller import Controller, Status, solve
from spare_fast.layout import make_layout

__all__ = ["failure_trajectory", "from_scratch_vs_peer", "million_groups"]


def failure_trajectory(
    n_groups: int = 100_000, redundancy: int = 20, layout: str = "sidon", seed: int = 0
) -> dict[str, Any]:
    """Fail one uniformly random group at a time until wipe-out; time every decision.

    Latencies include the Python call (``time.perf_counter`` around ``Controller.fail``).

    Returns
    -------
    dict
        failures, median_us, p99_us, max_us, total_s (the decision loop), mean_depth,
        final_depth, full_solves, total_moves.

    Examples
    --------
    >>> r = failure_trajectory(500, 4, "cyclic")
    >>> r["failures"] > 0 and r["median_us"] > 0
    True
    """
    ctl = Controller(make_layout(layout, n_groups, redundancy, seed=seed))
    order = np.random.default_rng(seed).permutation(n_groups).tolist()
    lat = np.empty(n_groups)
    depth_sum = moves = full = 0
    count = 0
    clock = time.perf_counter
    fail = ctl.fail
    t_start = clock()
    for g in order:
        t0 = clock()
        d = fail(g)
        lat[count] = clock() - t0
        count += 1
        if d.status is Status.WIPEOUT:
            break
        depth_sum += d.depth
        moves += d.moves
        full += d.full_solve
    total = clock() - t_start
    lat = lat[:count]
    survived = count - 1
    return {
        "layout": layout,
        "n_groups": n_groups,
        "redundancy": redundancy,
        "failures": survived,
        "median_us": float(np.median(lat) * 1e6),
        "p99_us": float(np.percentile(lat, 99) * 1e6),
        "max_us": float(lat.max() * 1e6),
        "total_s": total,
        "mean_depth": depth_sum / max(survived, 1),
        "full_solves": int(full),
        "total_moves": int(moves),
    }


def from_scratch_vs_peer(
    n_groups: int = 100_000,
    redundancy: int = 20,
    failed: float = 0.3,
    layout: str = "sidon",
    seed: int = 0,
    repeat: int = 3,
    peer: bool = True,
) -> dict[str, Any]:
    """:func:`spare_fast.solve` against the OR-Tools peer pipeline on the same instance.

    The best of ``repeat`` runs of ``solve`` is compared with one run of the peer (max-flow
    binary search for the depth, then min-cost flow;
    :func:`spare_fast.testing.peers.ortools_decision`), and the answers must agree.

    Returns
    -------
    dict
        depth, moves, solve_s, peer_s, ratio (peer_s / solve_s), agree.
    """
    lay = make_layout(layout, n_groups, redundancy, seed=seed)
    rng = np.random.default_rng(seed)
    alive = np.ones(n_groups, dtype=bool)
    alive[rng.choice(n_groups, int(round(failed * n_groups)), replace=False)] = False
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        d = solve(lay, alive)
        times.append(time.perf_counter() - t0)
    out: dict[str, Any] = {
        "layout": layout,
        "n_groups": n_groups,
        "redundancy": redundancy,
        "failed": failed,
        "status": d.status.name,
        "depth": d.depth,
        "moves": d.moves,
        "solve_s": min(times),
    }
    if peer:
        from spare_fast.testing.peers import ortools_decision

        p = ortools_decision(lay.stacks, alive)
        out.update(
            peer_s=p.seconds,
            ratio=p.seconds / min(times),
            agree=(p.status, p.depth, p.moves) == (d.status.name, d.depth, d.moves),
        )
    return out


_MILLION_CHILD = """
import json, resource, sys, time
import numpy as np
from spare_fast import Controller, Layout
n, r, k = (int(a) for a in sys.argv[1:4])
layout = Layout.cyclic(n, r)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter(); ctl = Controller(layout); build = time.perf_counter() - t0
order = np.random.default_rng(0).permutation(n)[:k].tolist()
t0 = time.perf_counter()
for g in order:
    d = ctl.fail(g)
fails = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"build_s": build, "failures": k, "failures_s": fails, "depth": d.depth,
                  "status": d.status.name, "peak_rss_mb": peak / 1024,
                  "baseline_rss_mb": rss0 / 1024}))
"""


def million_groups(
    n_groups: int = 1_000_000, redundancy: int = 20, failures: int = 10_000
) -> dict[str, Any]:
    """Build a controller for ``n_groups`` and decide ``failures`` failures, in a child process.

    Returns
    -------
    dict
        build_s (Controller construction, layout excluded), failures_s, peak_rss_mb (whole
        child process, interpreter and layout included), status, depth.
    """
    # Run the child next to the package this process imported, so that it imports the same
    # spare_fast (with `-c` the working directory comes first on sys.path).
    here = os.path.dirname(os.path.dirname(os.path.abspath(spare_fast.__file__)))
    out = subprocess.run(
        [sys.executable, "-c", _MILLION_CHILD, str(n_groups), str(redundancy), str(failures)],
        check=True,
        capture_output=True,
        text=True,
        cwd=here,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update(n_groups=n_groups, redundancy=redundancy)
    return res
