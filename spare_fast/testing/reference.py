"""Independent references for the controller: brute force and OR-Tools.

Neither uses spare_fast's solver: they recompute depth and moves from the definitions in
docs/model.md, "The controller" (exhaustively, or with OR-Tools' max-flow and min-cost-flow
solvers).
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
    """(status, depth, moves) from the OR-Tools peer pipeline (max flow, then min-cost flow)."""
    from spare_fast.testing.peers import ortools_decision

    d = ortools_decision(stacks, alive, move_cost)
    return d.status, d.depth, d.moves
