"""Peer solvers (OR-Tools) for the same decisions, used by benchmarks, the demo and tests.

Nothing in the decision core depends on this module; it imports OR-Tools lazily.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["PeerDecision", "ortools_decision"]


@dataclass(frozen=True)
class PeerDecision:
    """Outcome of the peer pipeline: status name, depth, moves and the seconds it took."""

    status: str
    depth: int
    moves: int
    seconds: float


def ortools_decision(
    stacks: np.ndarray, alive: np.ndarray, move_cost: np.ndarray | None = None
) -> PeerDecision:
    """The from-scratch decision with OR-Tools: max-flow binary search, then min-cost flow.

    Parameters
    ----------
    stacks : numpy.ndarray
        ``(n_groups, height)`` current per-group orders.
    alive : numpy.ndarray
        Boolean alive mask.
    move_cost : numpy.ndarray, optional
        Per (group, layer) move costs (default 1).

    Returns
    -------
    PeerDecision

    Notes
    -----
    The depth is the smallest S in ``[ceil(T / alive), height]`` for which OR-Tools'
    ``SimpleMaxFlow`` on source -> type (1) -> alive holder (1) -> sink (S) saturates every
    type, found by binary search (feasibility is monotone in S). The moves are then the optimal
    cost of OR-Tools' ``SimpleMinCostFlow`` at that depth with cost 0 for types already in the
    group's top S layers and ``move_cost`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_fast import Layout
    >>> d = ortools_decision(Layout.cyclic(4, 2).stacks, np.array([1, 0, 1, 1], bool))
    >>> d.status, d.depth, d.moves
    ('OK', 2, 0)
    """
    from ortools.graph.python import max_flow, min_cost_flow

    t0 = time.perf_counter()
    stacks = np.asarray(stacks)
    alive = np.asarray(alive, dtype=bool)
    n, h = stacks.shape
    n_types = int(stacks.max()) + 1
    held = np.zeros(n_types, dtype=bool)
    held[stacks[alive].ravel()] = True
    if not held.all():
        return PeerDecision("WIPEOUT", 0, 0, time.perf_counter() - t0)
    g_idx, l_idx = np.nonzero(np.broadcast_to(alive[:, None], stacks.shape))
    types = stacks[g_idx, l_idx].astype(np.int64)
    src, sink = n_types + n, n_types + n + 1
    alive_groups = np.flatnonzero(alive)
    ones_t = np.ones(n_types, dtype=np.int64)

    def feasible(s: int) -> bool:
        mf = max_flow.SimpleMaxFlow()
        mf.add_arcs_with_capacity(np.full(n_types, src), np.arange(n_types), ones_t)
        mf.add_arcs_with_capacity(types, n_types + g_idx, np.ones(len(types), dtype=np.int64))
        mf.add_arcs_with_capacity(
            n_types + alive_groups, np.full(len(alive_groups), sink), np.full(len(alive_groups), s)
        )
        mf.solve(src, sink)
        return mf.optimal_flow() == n_types

    lo, hi = max(1, -(-n_types // len(alive_groups))), h
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid + 1
    depth = lo
    cost = np.ones((n, h), dtype=np.int64) if move_cost is None else np.array(move_cost, np.int64)
    cost[:, :depth] = 0
    mcf = min_cost_flow.SimpleMinCostFlow()
    mcf.add_arcs_with_capacity_and_unit_cost(
        np.full(n_types, src), np.arange(n_types), ones_t, np.zeros(n_types, dtype=np.int64)
    )
    mcf.add_arcs_with_capacity_and_unit_cost(
        types, n_types + g_idx, np.ones(len(types), dtype=np.int64), cost[g_idx, l_idx]
    )
    mcf.add_arcs_with_capacity_and_unit_cost(
        n_types + alive_groups,
        np.full(len(alive_groups), sink),
        np.full(len(alive_groups), depth),
        np.zeros(len(alive_groups), dtype=np.int64),
    )
    supplies = np.zeros(n_types + n + 2, dtype=np.int64)
    supplies[src], supplies[sink] = n_types, -n_types
    mcf.set_nodes_supplies(np.arange(n_types + n + 2), supplies)
    status = mcf.solve()
    if status != mcf.OPTIMAL:
        raise RuntimeError(f"OR-Tools min-cost flow returned status {status}")
    return PeerDecision("OK", depth, int(mcf.optimal_cost()), time.perf_counter() - t0)
