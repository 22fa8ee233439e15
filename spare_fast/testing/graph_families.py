"""Seeded generators of the standard min-cost-flow benchmark families (numpy only).

Every generator returns a :class:`FlowInstance`: C-contiguous arrays ready for
:func:`spare_fast.graph.min_cost_flow`, for OR-Tools and for LEMON (through ``pylmcf``), and
always feasible. They follow the published generators in shape, not bit for bit:

* ``netgen`` (NETGEN, Klingman, Napier and Stutz 1974): about sqrt(n) sources and sinks, the
  supply split at random among them, an uncapacitated skeleton that makes every sink reachable
  from every source, then random arcs up to the density with costs and capacities drawn
  uniformly. NETGEN-8 has 8 arcs per node, NETGEN-SR sqrt(n), NETGEN-LO-8 capacities 1..10.
* ``gridgen`` (GRIDGEN, Lee and Orlin): a square grid, arcs both ways between neighbours and
  random extra arcs up to 8 per node.
* ``goto`` (GOTO, Goldberg's grid on a torus): a square torus, arcs right and down plus arcs
  to nodes a short random distance away, one source and one sink, wide cost range.
* ``road``: a jittered planar grid with arcs both ways between neighbours and Euclidean costs,
  like a road map.

Grids get an uncapacitated snake through every node, both ways, so they stay feasible.

Besides these rewrites: ``staircase`` (k disjoint paths of lengths 1..k, unit costs: the case
where successive shortest paths needs k phases), and ``gridgen-pn``, ``netgen-sr-pn`` and
``netgen-lo-pn``, made by the public generators themselves (PyPI ``pynetgen``, a Python port of
NETGEN and of a grid generator; pure Python, so they take seconds to minutes to generate).
``gridgen-col-pn`` is ``gridgen-pn`` with the master source's arcs moved from the grid's first
row to its first column, where GRIDGEN's documentation puts them.

References: D. Klingman, A. Napier and J. Stutz, "NETGEN: a program for generating large scale
capacitated assignment, transportation, and minimum cost flow network problems", Management
Science 20(5), 814-821, 1974, doi:10.1287/mnsc.20.5.814; Z. Kiraly and P. Kovacs, "Efficient
implementations of minimum-cost flow algorithms", Acta Univ. Sapientiae, Informatica 4(1),
67-118, 2012 (the families and their parameters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FAMILIES",
    "FlowInstance",
    "generate",
    "goto",
    "gridgen",
    "netgen",
    "road",
    "staircase",
]


@dataclass(frozen=True)
class FlowInstance:
    """A min-cost-flow instance as int32 ids and int64 values."""

    family: str
    n_nodes: int
    tail: np.ndarray
    head: np.ndarray
    capacity: np.ndarray
    cost: np.ndarray
    supply: np.ndarray

    @property
    def n_arcs(self) -> int:
        return int(self.tail.size)

    def arrays(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(n_nodes, tail, head, capacity, cost, supply)``."""
        return self.n_nodes, self.tail, self.head, self.capacity, self.cost, self.supply


def _split(rng: np.random.Generator, total: int, parts: int) -> np.ndarray:
    """``total`` as ``parts`` nonnegative int64 summing to it, split at random."""
    cuts = np.sort(rng.integers(0, total + 1, size=parts - 1))
    return np.diff(np.concatenate(([0], cuts, [total]))).astype(np.int64)


def _finish(
    family: str,
    n: int,
    tail: np.ndarray,
    head: np.ndarray,
    capacity: np.ndarray,
    cost: np.ndarray,
    supply: np.ndarray,
    rng: np.random.Generator,
) -> FlowInstance:
    # Arcs sorted by tail, then head, as DIMACS files usually list them (and pylmcf wants).
    del rng
    order = np.lexsort((head, tail))
    return FlowInstance(
        family,
        n,
        np.ascontiguousarray(tail[order], dtype=np.int32),
        np.ascontiguousarray(head[order], dtype=np.int32),
        np.ascontiguousarray(capacity[order], dtype=np.int64),
        np.ascontiguousarray(cost[order], dtype=np.int64),
        np.ascontiguousarray(supply, dtype=np.int64),
    )


def netgen(
    n: int,
    arcs_per_node: float = 8,
    *,
    seed: int = 0,
    max_cost: int = 10_000,
    max_capacity: int = 1_000,
    family: str = "netgen-8",
) -> FlowInstance:
    """NETGEN-style network: ``n`` nodes, ``arcs_per_node * n`` arcs, sqrt(n) sources/sinks."""
    rng = np.random.default_rng(seed)
    k = max(1, round(math.sqrt(n)))
    n_src, n_snk = k, k
    total = 1_000 * k
    m = int(arcs_per_node * n)
    supply = np.zeros(n, dtype=np.int64)
    supply[:n_src] = _split(rng, total, n_src)
    supply[n - n_snk :] -= _split(rng, total, n_snk)
    # Skeleton: each source heads a chain through random transshipment nodes; the chains are
    # linked in a ring and every sink hangs from a random chain node, all uncapacitated.
    trans = rng.permutation(np.arange(n_src, n - n_snk))
    chains = np.array_split(trans, n_src)
    st: list[np.ndarray] = []
    sh: list[np.ndarray] = []
    starts, ends, members = [], [], []
    for i, chain in enumerate(chains):
        path = np.concatenate(([i], chain)).astype(np.int64)
        st.append(path[:-1])
        sh.append(path[1:])
        starts.append(path[0])
        ends.append(path[-1])
        members.append(path)
    st.append(np.asarray(ends, dtype=np.int64))
    sh.append(np.roll(np.asarray(starts, dtype=np.int64), -1))
    all_members = np.concatenate(members)
    st.append(all_members[rng.integers(0, all_members.size, size=n_snk)])
    sh.append(np.arange(n - n_snk, n, dtype=np.int64))
    sk_tail = np.concatenate(st)
    sk_head = np.concatenate(sh)
    keep = sk_tail != sk_head
    sk_tail, sk_head = sk_tail[keep], sk_head[keep]
    n_sk = sk_tail.size
    n_rand = max(0, m - n_sk)
    r_tail = rng.integers(0, n, size=n_rand)
    r_head = rng.integers(0, n - 1, size=n_rand)
    r_head = r_head + (r_head >= r_tail)  # no self-loops
    tail = np.concatenate((sk_tail, r_tail))
    head = np.concatenate((sk_head, r_head))
    cost = rng.integers(1, max_cost + 1, size=tail.size)
    capacity = rng.integers(1, max_capacity + 1, size=tail.size)
    capacity[:n_sk] = total
    return _finish(family, n, tail, head, capacity, cost, supply, rng)


def _snake(rows: int, cols: int) -> np.ndarray:
    """Node ids of a grid in boustrophedon order (a Hamiltonian path of the grid)."""
    ids = np.arange(rows * cols).reshape(rows, cols)
    ids[1::2] = ids[1::2, ::-1]
    return ids.ravel()


def _grid_arcs(rows: int, cols: int, torus: bool = False) -> tuple[np.ndarray, np.ndarray]:
    ids = np.arange(rows * cols).reshape(rows, cols)
    if torus:
        right = (ids, np.roll(ids, -1, axis=1))
        down = (ids, np.roll(ids, -1, axis=0))
        return (
            np.concatenate((right[0].ravel(), down[0].ravel())),
            np.concatenate((right[1].ravel(), down[1].ravel())),
        )
    tails = [ids[:, :-1].ravel(), ids[:-1, :].ravel()]
    heads = [ids[:, 1:].ravel(), ids[1:, :].ravel()]
    t = np.concatenate(tails)
    h = np.concatenate(heads)
    return np.concatenate((t, h)), np.concatenate((h, t))


def _terminals(rng: np.random.Generator, n: int, n_src: int, n_snk: int, total: int) -> np.ndarray:
    nodes = rng.choice(n, size=n_src + n_snk, replace=False)
    supply = np.zeros(n, dtype=np.int64)
    supply[nodes[:n_src]] = _split(rng, total, n_src)
    supply[nodes[n_src:]] -= _split(rng, total, n_snk)
    return supply


def gridgen(n: int, *, seed: int = 0, max_cost: int = 10_000, max_capacity: int = 1_000):
    """GRIDGEN-style grid: 4-neighbour arcs both ways plus random arcs up to 8 per node."""
    rng = np.random.default_rng(seed)
    side = max(2, round(math.sqrt(n)))
    n = side * side
    k = max(1, round(math.sqrt(n)))
    total = 1_000 * k
    supply = _terminals(rng, n, k, k, total)
    g_tail, g_head = _grid_arcs(side, side)
    snake = _snake(side, side)
    s_tail = np.concatenate((snake[:-1], snake[1:]))
    s_head = np.concatenate((snake[1:], snake[:-1]))
    n_rand = max(0, 8 * n - g_tail.size - s_tail.size)
    r_tail = rng.integers(0, n, size=n_rand)
    r_head = rng.integers(0, n - 1, size=n_rand)
    r_head = r_head + (r_head >= r_tail)
    tail = np.concatenate((s_tail, g_tail, r_tail))
    head = np.concatenate((s_head, g_head, r_head))
    cost = rng.integers(1, max_cost + 1, size=tail.size)
    capacity = rng.integers(1, max_capacity + 1, size=tail.size)
    capacity[: s_tail.size] = total
    cost[: s_tail.size] = max_cost
    return _finish("gridgen", n, tail, head, capacity, cost, supply, rng)


def goto(n: int, *, seed: int = 0, max_cost: int = 1_000_000, max_capacity: int = 10_000):
    """GOTO-style grid on a torus: 8 arcs per node, one source and one sink, wide ranges."""
    rng = np.random.default_rng(seed)
    side = max(2, round(math.sqrt(n)))
    n = side * side
    t_tail, t_head = _grid_arcs(side, side, torus=True)  # right and down: strongly connected
    # Six more arcs per node to nodes a short random offset away on the torus.
    base = np.repeat(np.arange(n), 6)
    r, c = np.divmod(base, side)
    dr = rng.integers(-3, 4, size=base.size)
    dc = rng.integers(1, 4, size=base.size) * rng.choice([-1, 1], size=base.size)
    r_head = ((r + dr) % side) * side + (c + dc) % side
    tail = np.concatenate((t_tail, base))
    head = np.concatenate((t_head, r_head))
    keep = tail != head
    tail, head = tail[keep], head[keep]
    total = max_capacity * side
    supply = np.zeros(n, dtype=np.int64)
    src, snk = rng.choice(n, size=2, replace=False)
    supply[src], supply[snk] = total, -total
    cost = rng.integers(1, max_cost + 1, size=tail.size)
    capacity = rng.integers(1, max_capacity + 1, size=tail.size)
    capacity[: t_tail.size] = total
    cost[: t_tail.size] = max_cost
    return _finish("goto", n, tail, head, capacity, cost, supply, rng)


def road(n: int, *, seed: int = 0, max_capacity: int = 1_000):
    """Road-like planar grid: jittered points, neighbour arcs both ways, Euclidean costs."""
    rng = np.random.default_rng(seed)
    side = max(2, round(math.sqrt(n)))
    n = side * side
    xy = np.stack(np.divmod(np.arange(n), side), axis=1).astype(np.float64)
    xy += rng.uniform(-0.35, 0.35, size=xy.shape)
    g_tail, g_head = _grid_arcs(side, side)
    # Some diagonals, like the shortcuts of a street map.
    ids = np.arange(n).reshape(side, side)
    d_t = ids[:-1, :-1].ravel()
    d_h = ids[1:, 1:].ravel()
    pick = rng.random(d_t.size) < 0.3
    d_t, d_h = d_t[pick], d_h[pick]
    tail = np.concatenate((g_tail, d_t, d_h))
    head = np.concatenate((g_head, d_h, d_t))
    length = np.linalg.norm(xy[tail] - xy[head], axis=1)
    cost = np.maximum(1, np.rint(length * 1_000)).astype(np.int64)
    capacity = rng.integers(max_capacity // 2, max_capacity + 1, size=tail.size)
    # Highways: the snake carries everything (at twice the local length), so it is feasible.
    snake = _snake(side, side)
    s_tail = np.concatenate((snake[:-1], snake[1:]))
    s_head = np.concatenate((snake[1:], snake[:-1]))
    k = max(1, round(math.sqrt(n)))
    total = 1_000 * k
    s_len = np.linalg.norm(xy[s_tail] - xy[s_head], axis=1)
    tail = np.concatenate((tail, s_tail))
    head = np.concatenate((head, s_head))
    cost = np.concatenate((cost, np.maximum(1, np.rint(s_len * 2_000)).astype(np.int64)))
    capacity = np.concatenate((capacity, np.full(s_tail.size, total)))
    supply = _terminals(rng, n, k, k, total)
    return _finish("road", n, tail, head, capacity, cost, supply, rng)


def staircase(n: int, *, seed: int = 0) -> FlowInstance:
    """k disjoint source-sink paths of lengths 1, 2, .., k (about ``n`` nodes), unit costs.

    Every path carries one unit (capacity 1, supply k), so a minimum-cost flow uses them all;
    a successive-shortest-path method needs one phase per path length, k in all.
    """
    del seed  # deterministic
    k = max(1, int((math.isqrt(8 * max(n - 2, 0) + 1) + 1) // 2))  # 2 + k (k - 1) / 2 ~ n
    lengths = np.arange(1, k + 1)
    n_nodes = 2 + int((lengths - 1).sum())
    # Path L: 0 -> its L - 1 inner nodes (consecutive ids) -> 1.
    first_inner = 2 + np.concatenate(([0], np.cumsum(lengths - 1)[:-1]))
    path = np.repeat(np.arange(k), lengths)
    step = np.arange(path.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    last = step == lengths[path] - 1
    tail = np.where(step == 0, 0, first_inner[path] + step - 1)
    head = np.where(last, 1, first_inner[path] + step)
    supply = np.zeros(n_nodes, dtype=np.int64)
    supply[0], supply[1] = k, -k
    ones = np.ones(tail.size, dtype=np.int64)
    return _finish("staircase", n_nodes, tail, head, ones, ones, supply, np.random.default_rng())


def _pynetgen(family: str, n: int, seed: int) -> FlowInstance:
    """An instance of the public NETGEN / GRIDGEN generator (PyPI ``pynetgen``), read back
    from its DIMACS file. Parameters after Kiraly and Kovacs (2012): costs 1..10,000,
    capacities 1..1,000 (1..10 for NETGEN-LO), sqrt(n) sources and sinks sharing
    1,000 sqrt(n) units of supply; GRIDGEN is a square grid with arcs to the North, East,
    South, Northeast and Southeast, a master source and a master sink. As generated: pynetgen
    1.0.0 hangs the master source on the first row (its documentation says the first column),
    so on a square grid the row's last node touches both masters and carries the flow."""
    import os
    import tempfile

    import pynetgen

    from spare_fast._dimacs import read_dimacs

    k = max(1, round(math.sqrt(n)))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "net.min")
        common = {"seed": seed + 1, "mincost": 1, "maxcost": 10_000, "fname": path}
        if family in ("gridgen-pn", "gridgen-col-pn"):
            pynetgen.grid_generate(
                rows=k, columns=k, supply=1_000 * k, mincap=1, maxcap=1_000, **common
            )
        else:
            pynetgen.netgen_generate(
                nodes=n,
                sources=k,
                sinks=k,
                density=n * (k if family == "netgen-sr-pn" else 8),
                supply=1_000 * k,
                mincap=1,
                maxcap=10 if family == "netgen-lo-pn" else 1_000,
                **common,
            )
        p = read_dimacs(path)
    n_nodes, tail, head, capacity, cost, supply = p.min_cost_flow_arrays()
    if family == "gridgen-col-pn":
        head = _feed_first_column(k, tail, head, supply)
    return _finish(family, n_nodes, tail, head, capacity, cost, supply, np.random.default_rng())


def _feed_first_column(
    k: int, tail: np.ndarray, head: np.ndarray, supply: np.ndarray
) -> np.ndarray:
    """Moves the arcs of pynetgen's master source from the grid's first row to its first
    column, as GRIDGEN's documentation places them: the flow then crosses the whole grid to the
    master sink on the last column. The grid is node 1 + (row k + column), row-major."""
    source = int(np.flatnonzero(supply > 0)[0])
    out = np.flatnonzero(tail == source)
    row = np.sort(head[out])
    if not np.array_equal(row, np.arange(1, k + 1)):
        raise ValueError(f"the master source's arcs do not enter the first row: {row[:4]}...")
    head = head.copy()
    head[out] = 1 + k * (head[out] - 1)
    return head


FAMILIES = {
    "netgen-8": lambda n, seed: netgen(n, 8, seed=seed),
    "netgen-sr": lambda n, seed: netgen(n, math.sqrt(n), seed=seed, family="netgen-sr"),
    "netgen-lo-8": lambda n, seed: netgen(n, 8, seed=seed, max_capacity=10, family="netgen-lo-8"),
    "gridgen": lambda n, seed: gridgen(n, seed=seed),
    "goto": lambda n, seed: goto(n, seed=seed),
    "road": lambda n, seed: road(n, seed=seed),
    "staircase": lambda n, seed: staircase(n, seed=seed),
    # The public generators themselves (PyPI pynetgen, needed only for these).
    "gridgen-pn": lambda n, seed: _pynetgen("gridgen-pn", n, seed),
    "gridgen-col-pn": lambda n, seed: _pynetgen("gridgen-col-pn", n, seed),
    "netgen-sr-pn": lambda n, seed: _pynetgen("netgen-sr-pn", n, seed),
    "netgen-lo-pn": lambda n, seed: _pynetgen("netgen-lo-pn", n, seed),
}


def generate(family: str, n: int, seed: int = 0) -> FlowInstance:
    """The instance of ``family`` (a key of :data:`FAMILIES`) with about ``n`` nodes."""
    try:
        make = FAMILIES[family]
    except KeyError:
        raise ValueError(f"family = {family!r} is not one of {sorted(FAMILIES)}") from None
    return make(n, seed)
