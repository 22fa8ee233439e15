"""Independent references for the controller: brute force and OR-Tools.

Kept free of spare_fast's solver code on purpose: they recompute depth and moves from the
definitions in SPEC.md section 3.
"""

from __future__ import annotations

import itertools

import numpy as np


def edge_costs(stacks: np.ndarray, depth: int, move_cost: np.ndarray | None):
    """Per (group, layer) cost of giving the type there to that group at ``depth``."""
    n, h = stacks.shape
    cost = np.ones((n, h), dtype=np.int64) if move_cost is None else np.asarray(move_cost, np.int64)
    cost = cost.copy()
    cost[:, :depth] = 0
    return cost


def brute_force(stacks, alive, move_cost=None):
    """(status, depth, moves) by enumerating every assignment of types to alive holders."""
    stacks = np.asarray(stacks)
    alive = np.asarray(alive, dtype=bool)
    n, h = stacks.shape
    n_types = int(stacks.max()) + 1
    options = [[] for _ in range(n_types)]
    for g in range(n):
        if alive[g]:
            for l in range(h):
                options[int(stacks[g, l])].append((g, l))
    if any(not o for o in options):
        return "WIPEOUT", 0, 0
    best = None
    for combo in itertools.product(*options):
        load = np.bincount([g for g, _ in combo], minlength=n)
        s = int(load.max())
        best_s = best[0] if best else None
        if best_s is not None and s > best_s:
            continue
        if best is None or s < best_s:
            best = (s, None)
    depth = best[0]
    cost = edge_costs(stacks, depth, move_cost)
    moves = None
    for combo in itertools.product(*options):
        load = np.bincount([g for g, _ in combo], minlength=n)
        if load.max() > depth:
            continue
        c = sum(int(cost[g, l]) for g, l in combo)
        moves = c if moves is None else min(moves, c)
    return "OK", depth, moves


def ortools_reference(stacks, alive, move_cost=None):
    """(status, depth, moves): OR-Tools max flow per depth, then OR-Tools min-cost flow."""
    from ortools.graph.python import max_flow, min_cost_flow

    stacks = np.asarray(stacks)
    alive = np.asarray(alive, dtype=bool)
    n, h = stacks.shape
    n_types = int(stacks.max()) + 1
    held = np.zeros(n_types, dtype=bool)
    held[stacks[alive].ravel()] = True
    if not held.all():
        return "WIPEOUT", 0, 0
    g_idx, l_idx = np.nonzero(np.broadcast_to(alive[:, None], stacks.shape))
    types = stacks[g_idx, l_idx]
    src, sink = n_types + n, n_types + n + 1
    n_alive = int(alive.sum())
    depth = None
    for s in range(max(1, -(-n_types // n_alive)), h + 1):
        mf = max_flow.SimpleMaxFlow()
        mf.add_arcs_with_capacity(np.full(n_types, src), np.arange(n_types), np.ones(n_types))
        mf.add_arcs_with_capacity(types, n_types + g_idx, np.ones(len(types)))
        alive_groups = np.flatnonzero(alive)
        mf.add_arcs_with_capacity(n_types + alive_groups, np.full(len(alive_groups), sink),
                                  np.full(len(alive_groups), s))
        mf.solve(src, sink)
        if mf.optimal_flow() == n_types:
            depth = s
            break
    assert depth is not None
    cost = edge_costs(stacks, depth, move_cost)
    mcf = min_cost_flow.SimpleMinCostFlow()
    alive_groups = np.flatnonzero(alive)
    mcf.add_arcs_with_capacity_and_unit_cost(np.full(n_types, src), np.arange(n_types),
                                             np.ones(n_types), np.zeros(n_types))
    mcf.add_arcs_with_capacity_and_unit_cost(types, n_types + g_idx, np.ones(len(types)),
                                             cost[g_idx, l_idx])
    mcf.add_arcs_with_capacity_and_unit_cost(n_types + alive_groups,
                                             np.full(len(alive_groups), sink),
                                             np.full(len(alive_groups), depth),
                                             np.zeros(len(alive_groups)))
    supplies = np.zeros(n_types + n + 2, dtype=np.int64)
    supplies[src] = n_types
    supplies[sink] = -n_types
    mcf.set_nodes_supplies(np.arange(n_types + n + 2), supplies)
    status = mcf.solve()
    assert status == mcf.OPTIMAL, status
    return "OK", depth, int(mcf.optimal_cost())
