"""SPARe-shaped graph instances shared by the graph tests, benchmarks and the demo.

Not public API: the controller builds its own graphs. These helpers turn a layout and a failed
set into the arrays the kernels and their peers (scipy, OR-Tools) consume, so every comparison
runs both sides on identical arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spare_fast.layout import make_layout

__all__ = [
    "SpareBipartite",
    "spare_bipartite",
    "minimal_depth",
    "move_network",
    "expand_capacity",
    "random_bipartite",
]


@dataclass(frozen=True)
class SpareBipartite:
    """Types (rows) x alive groups (columns): an edge where the alive group holds the type.

    Attributes
    ----------
    indptr, indices : numpy.ndarray
        int32 CSR adjacency, one row per type, columns are alive-group positions.
    layer : numpy.ndarray
        int32, per CSR entry, the layer at which the group holds the type.
    alive_groups : numpy.ndarray
        int32 ids of the alive groups; column ``c`` is group ``alive_groups[c]``.
    n_groups : int
        Number of groups N (alive or not).
    """

    indptr: np.ndarray
    indices: np.ndarray
    layer: np.ndarray
    alive_groups: np.ndarray
    n_groups: int

    @property
    def n_types(self) -> int:
        return int(self.indptr.size - 1)

    @property
    def n_alive(self) -> int:
        return int(self.alive_groups.size)

    def to_scipy(self):  # type: ignore[no-untyped-def]
        """The same adjacency as a ``scipy.sparse.csr_matrix`` (shares the index arrays)."""
        import scipy.sparse as sp

        data = np.ones(self.indices.size, dtype=np.int8)
        return sp.csr_matrix(
            (data, self.indices, self.indptr), shape=(self.n_types, self.n_alive), copy=False
        )


def spare_bipartite(
    n_groups: int,
    redundancy: int,
    failed_fraction: float = 0.3,
    seed: int = 0,
    layout: str = "cyclic",
) -> SpareBipartite:
    """Fail ``round(failed_fraction * N)`` random groups of a layout; return types x alive groups.

    Examples
    --------
    >>> g = spare_bipartite(10, 3, failed_fraction=0.3, seed=1)
    >>> g.n_types, g.n_alive, int(g.indptr[-1])
    (10, 7, 21)
    """
    lay = make_layout(layout, n_groups, redundancy, seed=seed)
    rng = np.random.default_rng(seed)
    n_failed = int(round(failed_fraction * n_groups))
    alive = np.ones(n_groups, dtype=bool)
    alive[rng.choice(n_groups, size=n_failed, replace=False)] = False
    alive_groups = np.flatnonzero(alive).astype(np.int32)
    stacks = lay.stacks[alive_groups]  # (n_alive, r)
    n_alive, r = stacks.shape
    types = stacks.ravel()
    cols = np.repeat(np.arange(n_alive, dtype=np.int32), r)
    layers = np.tile(np.arange(r, dtype=np.int32), n_alive)
    order = np.argsort(types, kind="stable")  # stable: columns stay increasing within a row
    counts = np.bincount(types, minlength=lay.n_types)
    indptr = np.zeros(lay.n_types + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    return SpareBipartite(
        indptr=indptr,
        indices=np.ascontiguousarray(cols[order]),
        layer=np.ascontiguousarray(layers[order]),
        alive_groups=alive_groups,
        n_groups=n_groups,
    )


def minimal_depth(g: SpareBipartite) -> int:
    """Smallest depth S such that a b-matching with capacity S per alive group covers all types.

    Starts at the counting bound ``ceil(N_types / n_alive)`` and raises S until the maximum
    b-matching (:func:`spare_fast.graph.max_b_matching`) is perfect on the types.

    Raises
    ------
    ValueError
        If some type has no alive holder (wipe-out): no depth works.
    """
    from spare_fast.graph import max_b_matching

    if g.n_alive == 0 or np.any(np.diff(g.indptr) == 0):
        raise ValueError("wipe-out: some type has no alive holder, no depth covers every type")
    depth = -(-g.n_types // g.n_alive)
    while True:
        cap = np.full(g.n_alive, depth, dtype=np.int64)
        if int(np.count_nonzero(max_b_matching(g.indptr, g.indices, cap) >= 0)) == g.n_types:
            return depth
        depth += 1


def move_network(
    g: SpareBipartite, depth: int
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The move-minimising min-cost-flow network (docs/model.md, "The controller") at ``depth``.

    Nodes: 0 the source, ``1..T`` the types, then the alive groups, last the sink. Arcs:
    source -> type (cap 1, cost 0), type -> alive holder (cap 1, cost 0 if the type sits in the
    holder's top ``depth`` layers, else 1), alive group -> sink (cap ``depth``, cost 0).
    Supply ``T`` at the source, ``-T`` at the sink.

    Returns
    -------
    tuple
        ``(n_nodes, tail, head, capacity, cost, supply)`` with int32 ids and int64 values.
    """
    n_t, n_a = g.n_types, g.n_alive
    source, sink = 0, n_t + n_a + 1
    n_nodes = n_t + n_a + 2
    rows = np.repeat(np.arange(n_t, dtype=np.int32), np.diff(g.indptr))
    tail = np.concatenate(
        [np.zeros(n_t, np.int32), rows + 1, np.arange(n_a, dtype=np.int32) + n_t + 1]
    ).astype(np.int32)
    head = np.concatenate(
        [np.arange(n_t, dtype=np.int32) + 1, g.indices + n_t + 1, np.full(n_a, sink, np.int32)]
    ).astype(np.int32)
    capacity = np.concatenate(
        [np.ones(n_t, np.int64), np.ones(g.indices.size, np.int64), np.full(n_a, depth, np.int64)]
    )
    cost = np.concatenate(
        [np.zeros(n_t, np.int64), (g.layer >= depth).astype(np.int64), np.zeros(n_a, np.int64)]
    )
    supply = np.zeros(n_nodes, dtype=np.int64)
    supply[source] = n_t
    supply[sink] = -n_t
    return n_nodes, tail, head, capacity, cost, supply


def expand_capacity(
    indptr: np.ndarray, indices: np.ndarray, capacity: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The slot-expanded graph: right vertex ``j`` becomes ``capacity[j]`` copies.

    The textbook reduction of b-matching to matching that :func:`max_b_matching` avoids; the
    benchmarks and tests run scipy on it. Returns ``(indptr, indices, slot_owner, n_slots)``
    with ``slot_owner[s]`` the right vertex that slot ``s`` copies.
    """
    capacity = np.asarray(capacity, dtype=np.int64)
    slot_start = np.zeros(capacity.size + 1, dtype=np.int64)
    np.cumsum(capacity, out=slot_start[1:])
    n_slots = int(slot_start[-1])
    reps = capacity[indices]
    new_indptr = np.zeros(indptr.size, dtype=np.int64)
    row_of = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    np.cumsum(np.bincount(row_of, weights=reps, minlength=indptr.size - 1), out=new_indptr[1:])
    base = np.repeat(slot_start[indices], reps)
    # Offset k = 0..reps-1 within each run of repeats.
    run_start = np.repeat(np.cumsum(reps) - reps, reps)
    offs = np.arange(base.size, dtype=np.int64) - run_start
    new_indices = (base + offs).astype(np.int32)
    slot_owner = np.repeat(np.arange(capacity.size, dtype=np.int32), capacity)
    return new_indptr.astype(np.int32), new_indices, slot_owner, n_slots


def random_bipartite(
    n_left: int, n_right: int, n_edges: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random bipartite graph as int32 CSR (duplicate entries possible, kept).

    Examples
    --------
    >>> indptr, indices = random_bipartite(3, 4, 5, seed=0)
    >>> indptr.tolist()[-1], indices.dtype.name
    (5, 'int32')
    """
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.integers(0, n_left, size=n_edges))
    cols = rng.integers(0, n_right, size=n_edges).astype(np.int32)
    indptr = np.zeros(n_left + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n_left), out=indptr[1:])
    return indptr, cols
