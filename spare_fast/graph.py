"""Graph kernels of the decision core: matching, b-matching and min-cost flow.

Thin public functions in the manner of ``scipy.sparse.csgraph``: each normalises its input to
C-contiguous int32 ids and int64 values (copying only when the dtype or layout is wrong,
raising when a value does not fit; the checks live in ``spare_fast._validation``) and calls
a typed C++ kernel in ``spare_fast._core``, which validates everything again before any work
and runs without the GIL on a private copy of the arrays.

These kernels are general-purpose solvers of the controller's two phases (depth feasibility
as a b-matching, fewest moves as a min-cost flow). :class:`spare_fast.Controller` does not
call them: it runs its own incremental search, and the kernels serve as its independent
cross-check in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from spare_fast import _core
from spare_fast._core import MinCostFlowStatus
from spare_fast._dimacs import DimacsError, DimacsProblem, read_dimacs, write_dimacs
from spare_fast._validation import check_int, fits_array

__all__ = [
    "DimacsError",
    "DimacsProblem",
    "MinCostFlowResult",
    "MinCostFlowStatus",
    "hopcroft_karp",
    "max_b_matching",
    "min_cost_flow",
    "read_dimacs",
    "write_dimacs",
]

_I32 = np.iinfo(np.int32)


def _is_scipy_sparse(obj: Any) -> bool:
    if not type(obj).__module__.startswith("scipy.sparse"):
        return False
    import scipy.sparse as sp

    return bool(sp.issparse(obj))


def hopcroft_karp(
    indptr: Any,
    indices: npt.ArrayLike | None = None,
    n_right: int | None = None,
) -> np.ndarray:
    """Maximum cardinality matching of a bipartite graph given as a CSR adjacency.

    Parameters
    ----------
    indptr : array_like of int or scipy.sparse matrix
        CSR row pointer of the left vertices (length ``n_left + 1``, starting at 0,
        nondecreasing), or a scipy.sparse matrix/array of shape ``(n_left, n_right)`` whose
        stored entries are the edges (like scipy's ``maximum_bipartite_matching``; explicit
        zeros count as edges).
    indices : array_like of int, optional
        Right vertex of every CSR entry, each in ``[0, n_right)``. Duplicates are allowed.
        Required unless ``indptr`` is a sparse matrix.
    n_right : int, optional
        Number of right vertices. Required unless ``indptr`` is a sparse matrix.

    Returns
    -------
    numpy.ndarray
        int32 array of length ``n_left``: the right vertex matched to each left vertex, or -1.
        The number of entries ``>= 0`` is maximum.

    Raises
    ------
    TypeError
        Non-integer arrays, or a missing ``indices``/``n_right``.
    ValueError
        Malformed CSR (``indptr`` not starting at 0, decreasing, or not ending at
        ``len(indices)``), ``n_right`` negative, or a value that does not fit int32.
    IndexError
        An entry of ``indices`` outside ``[0, n_right)``.

    Notes
    -----
    A greedy first-fit pass, replaced by a Karp-Sipser start when first fit leaves a large gap
    to the trivial bound (a vertex of either side with one unmatched neighbour takes it; when
    none is left, the next left vertex takes its neighbour of least remaining degree). After
    Karp-Sipser, one BFS backwards from the free right vertices finds the left vertices with
    an alternating path to one; the other free left vertices can never be matched and are
    dropped, and no search descends through the others. After first fit instead, the free
    vertices get one depth-first search each with lookahead (a failed search marks what it
    reached dead for good) on a budget of 2 (V + E) scans. Hopcroft-Karp phases finish the
    rest: a BFS from the free left vertices layers the graph by shortest augmenting-path
    length and an iterative DFS augments a maximal set of vertex-disjoint shortest paths.
    O(E sqrt(V)) time, O(V + E) extra memory (the transposed adjacency of the Karp-Sipser
    start); the DFS stack is bounded by the number of left vertices, never by a degree (scipy
    gh-26160).
    Same result as ``scipy.sparse.csgraph.maximum_bipartite_matching(graph,
    perm_type="column")`` in matching size (the matched pairs may differ).

    References
    ----------
    .. [1] J. E. Hopcroft and R. M. Karp, "An n^{5/2} algorithm for maximum matchings in
       bipartite graphs", SIAM J. Comput. 2(4), 225-231, 1973. doi:10.1137/0202019
    .. [2] R. M. Karp and M. Sipser, "Maximum matchings in sparse random graphs", Proc. 22nd
       FOCS, 364-375, 1981. doi:10.1109/SFCS.1981.21
    .. [3] I. S. Duff, K. Kaya and B. Ucar, "Design, implementation, and analysis of maximum
       transversal algorithms", ACM Trans. Math. Softw. 38(2), 13:1-13:31, 2011.
       doi:10.1145/2049673.2049677

    Examples
    --------
    Left vertex 0 sees right vertices 0 and 1, left vertex 1 only right vertex 0:

    >>> hopcroft_karp([0, 2, 3], [0, 1, 0], n_right=2).tolist()
    [1, 0]
    >>> hopcroft_karp([0], [], n_right=0).tolist()
    []
    """
    if _is_scipy_sparse(indptr):
        if indices is not None or n_right is not None:
            raise TypeError("pass either a scipy.sparse matrix or (indptr, indices, n_right)")
        csr = indptr.tocsr()
        n_right = int(csr.shape[1])
        indptr, indices = csr.indptr, csr.indices
    elif indices is None or n_right is None:
        raise TypeError("hopcroft_karp needs (indptr, indices, n_right) or a scipy.sparse matrix")
    n = check_int("n_right", n_right, lo=0, hi=int(_I32.max))
    return _core._hopcroft_karp(
        fits_array("indptr", indptr, np.int32), fits_array("indices", indices, np.int32), n
    )


def max_b_matching(
    indptr: npt.ArrayLike, indices: npt.ArrayLike, capacity: npt.ArrayLike
) -> np.ndarray:
    """Maximum bipartite b-matching: right vertex ``j`` takes up to ``capacity[j]`` left vertices.

    Parameters
    ----------
    indptr : array_like of int
        CSR row pointer of the left vertices (length ``n_left + 1``).
    indices : array_like of int
        Right vertex of every CSR entry, in ``[0, len(capacity))``; duplicates allowed.
    capacity : array_like of int
        Nonnegative capacity of every right vertex (int64); ``n_right = len(capacity)``.

    Returns
    -------
    numpy.ndarray
        int32 array of length ``n_left``: the right vertex each left vertex is assigned to, or
        -1. No right vertex exceeds its capacity and the number of assigned left vertices is
        maximum.

    Raises
    ------
    TypeError
        Non-integer arrays.
    ValueError
        Malformed CSR, a negative capacity (named with its position), or an id that does not
        fit int32.
    IndexError
        An entry of ``indices`` outside ``[0, len(capacity))``.

    Notes
    -----
    In SPARe's phase 1 the left vertices are the types, the right vertices the alive groups and
    every capacity is the stack depth S. Right vertices are not expanded into capacity copies: a
    full right vertex is a single search node whose assigned left vertices are its successors
    (the slot-expanded graph would have ``sum_j capacity[j] * degree(j)`` edges). Greedy
    first-fit start, each left vertex reading its entries from a position that moves one entry
    further per vertex (SPARe rows list their holders in group order, so plain first fit would
    crowd every row onto the low-numbered groups); where it leaves a large gap (random sparse
    graphs) a pressure greedy replaces it: left vertices in increasing degree order, each to the
    neighbour with the most room per left vertex still waiting for it. After a close first fit,
    each free left vertex first tries an augmenting path of length 3 through the left vertex
    that last took a place at one of its neighbours (on SPARe graphs this places the few free
    vertices without building the slot layout the searches need). Then one augmenting
    search per free left vertex: a BFS over alternating paths that stops at the first vertex
    with an entry at a right vertex with room. A failed search marks everything it reached dead
    for good (that set has no room and no later augmenting path enters it), so failures cost
    O(V + E) in all and after one pass the b-matching is maximum. The pass has a work budget of
    O(V + E); past it, capacity-aware Hopcroft-Karp phases finish, so the worst case stays
    O((V + E) sqrt(V)) time, with O(V + E) memory. Inputs of up to 2**22 entries are read in
    place with the GIL held (no copy); larger ones are copied and solved without the GIL.

    References
    ----------
    .. [1] J. E. Hopcroft and R. M. Karp, "An n^{5/2} algorithm for maximum matchings in
       bipartite graphs", SIAM J. Comput. 2(4), 225-231, 1973. doi:10.1137/0202019
    .. [2] A. Schrijver, "Combinatorial Optimization", Springer, 2003, ch. 21 (b-matchings).
    .. [3] I. S. Duff, K. Kaya and B. Ucar, "Design, implementation, and analysis of maximum
       transversal algorithms", ACM Trans. Math. Softw. 38(2), 13:1-13:31, 2011.
       doi:10.1145/2049673.2049677

    Examples
    --------
    >>> max_b_matching([0, 1, 2, 3], [0, 0, 0], capacity=[2]).tolist()
    [0, 0, -1]
    >>> max_b_matching([0], [], capacity=[]).tolist()
    []
    """
    cap = fits_array("capacity", capacity, np.int64)
    return _core._max_b_matching(
        fits_array("indptr", indptr, np.int32), fits_array("indices", indices, np.int32), cap
    )


# min_cost_flow's method names -> spare_fast::MinCostFlowMethod values.
_MCF_METHODS = {"auto": 0, "ssp": 1, "network_simplex": 2, "cost_scaling": 3}


@dataclass(frozen=True)
class MinCostFlowResult:
    """Outcome of :func:`min_cost_flow`.

    Attributes
    ----------
    status : MinCostFlowStatus
        OPTIMAL, INFEASIBLE, UNBALANCED or OVERFLOW.
    total_cost : int
        ``sum(flow * cost)``; the minimum cost when ``status`` is OPTIMAL.
    flow_value : int
        Supply routed from the supply nodes to the demand nodes.
    flow : numpy.ndarray
        int64 flow per arc in input order (all zero for UNBALANCED and OVERFLOW).
    """

    status: MinCostFlowStatus
    total_cost: int
    flow_value: int
    flow: np.ndarray


def min_cost_flow(
    n_nodes: int,
    tail: npt.ArrayLike,
    head: npt.ArrayLike,
    capacity: npt.ArrayLike,
    cost: npt.ArrayLike,
    supply: npt.ArrayLike,
    method: str = "auto",
) -> MinCostFlowResult:
    """Minimum-cost flow meeting node supplies, like OR-Tools' ``SimpleMinCostFlow.solve``.

    Parameters
    ----------
    n_nodes : int
        Number of nodes; node ids are ``0 .. n_nodes - 1``.
    tail, head : array_like of int
        Arc ``a`` goes from ``tail[a]`` to ``head[a]``. Parallel arcs and self-loops allowed.
    capacity : array_like of int
        Nonnegative int64 capacity per arc.
    cost : array_like of int
        Nonnegative int64 cost per unit of flow per arc.
    supply : array_like of int
        int64 per node, length ``n_nodes``: positive for supply, negative for demand.
    method : {"auto", "network_simplex", "cost_scaling", "ssp"}
        ``"network_simplex"``: primal network simplex with block-search pricing;
        ``"cost_scaling"``: Goldberg's cost scaling (push-relabel with eps-refinement);
        ``"ssp"``: primal-dual successive shortest paths; ``"auto"`` (default) chooses from
        measured features of the instance, in this order. With costs beyond 0/1, when cost-0
        arcs leave a supply node and enter a demand node, it first routes a maximum flow over
        the cost-0 arcs alone; if that meets every supply it costs 0 and is the answer
        (pynetgen's GRIDGEN grids, whose master source and sink meet at one node, are such
        networks). Networks of ``2**16`` nodes or more whose supply and demand sit on at most 4
        nodes send their flow across the network; they go to cost scaling when every node lies
        within ``sqrt(n_nodes) / 2`` arcs of the supply (GOTO-style tori, where the simplex's
        pivots walk long cycles and fall behind), and straight to the network simplex when some
        node lies farther (grids fed through one side, the staircase: there cost scaling moves
        the flow a hop per push and loses). Cost scaling also takes networks of ``2**17`` nodes
        or more with costs beyond 0/1 whose supply sits on more nodes, when every node the
        supply reaches lies within ``2 log2(n_nodes)`` arcs of a supply node (a breadth-first
        search, one pass over the arcs): on such small-world networks (NETGEN, GRIDGEN with
        random arcs) cost scaling's time grows about linearly and overtakes the simplex, while
        on planar road grids the simplex stays ahead. Otherwise the primal-dual method when
        every cost is 0 or 1 (assignment-shaped networks such as SPARe's moves, where it needs a
        handful of phases) and it finishes within 16 phases, the network simplex for the rest.
        The phase bound matters where paths are long: k disjoint paths of lengths 1..k take k
        phases, each a Dijkstra over the network. With supply and demand on at most 4 nodes the
        simplex prices smaller blocks (0.7 sqrt(m) arcs instead of 1.5 sqrt(m)), as each of its
        pivots then walks a long cycle.

    Returns
    -------
    MinCostFlowResult
        ``status`` OPTIMAL (all supply routed at minimum cost), INFEASIBLE (supplies sum to 0
        but cannot all be routed: the flow returned is a minimum-cost flow of maximum value),
        UNBALANCED (supplies do not sum to 0) or OVERFLOW (totals could overflow int64); the
        last two solve nothing and return zero flow.

    Raises
    ------
    TypeError
        Non-integer arrays or ``n_nodes``.
    ValueError
        Arrays of mismatched lengths, a negative capacity, a negative cost (naming the arc
        and its ends), ``n_nodes`` negative, or a value that does not fit int32/int64.
    IndexError
        A ``tail`` or ``head`` outside ``[0, n_nodes)``.

    Notes
    -----
    Network simplex: a spanning-tree basis over the nodes and an artificial root whose arcs
    (cost ``(n_nodes + 1) max(cost) + 1``) carry the supplies at the start. Each pivot prices
    the arcs in blocks of about ``1.5 sqrt(len(tail))`` (``sqrt(len(tail))`` from 2^17 nodes
    on) from where the last one stopped and lets
    the most violating arc of the first block holding one enter; the leaving arc is chosen
    so that the tree stays strongly feasible (no cycling); the tree is kept as parents,
    a preorder thread, subtree sizes and subtree ends, so that a pivot costs the length of
    its cycle plus the size of the subtree that moves. If artificial flow remains at the
    optimum the supplies cannot be met, and the primal-dual method below computes the
    INFEASIBLE answer. Besides the bounds below, ``8 (n_nodes + 2) (max(cost) + 1)`` and
    ``sum(min(capacity, total supply))`` must fit int64 (``"auto"`` falls back to the
    primal-dual method when they do not).

    Cost scaling (Goldberg, reference 5) multiplies the costs by ``n_nodes + 1``, so that a
    1-optimal flow is optimal; each refine divides eps by 16, saturates the arcs of negative
    reduced cost and routes the excesses by partial augment-relabel (paths of up to 32
    admissible arcs), with a global price update (a bucket Dijkstra from the deficit nodes) at
    its start and every ``4 n_nodes`` relabels. Once eps is below one unit of the input
    costs, each refine is followed by a price refinement (as in Goldberg's CS2 and LEMON): a
    search, given at most two scans' worth of arcs, for prices under which the flow is
    1-optimal without moving any flow (cancelling one negative cycle if it meets one); when it
    succeeds the flow is optimal and the solve ends there (on NETGEN-8 at 2^17 and 2^18 nodes
    after the fifth of eight refines).
    ``16 (n_nodes + 2)**2 (max(cost) + 1)`` must fit int64, else OVERFLOW (``"auto"`` then
    uses the simplex). Infeasible supplies are detected by a price update (an excess that
    reaches no deficit) or by a price below what a feasible problem
    allows; the primal-dual method then computes the INFEASIBLE answer.

    Primal-dual successive shortest paths. A super source feeds the supply nodes and the
    demand nodes drain into a super sink; Johnson potentials keep reduced costs nonnegative.
    Each phase runs one Dijkstra (O(E log V)), lifts the potentials so that every shortest
    path has zero reduced cost, then pushes a maximum flow through the zero-reduced-cost
    residual subgraph with Dinic's blocking flows, so a phase augments along all shortest
    paths of its length at once. Zero potentials are feasible for nonnegative costs, so the
    first phase needs no Dijkstra: it is a greedy warm start along cost-0 arcs. The number of
    phases is at most the number of distinct shortest-path lengths: a handful for SPARe's 0/1
    move costs, where one Dijkstra per unit of flow would be far too slow. Overflow is checked
    before any work: the positive supplies, ``sum(min(capacity, total supply) * cost)`` and
    ``4 (n_nodes + 3) max(cost)`` (a bound on potentials) must fit int64.

    References
    ----------
    .. [1] R. K. Ahuja, T. L. Magnanti and J. B. Orlin, "Network Flows: Theory, Algorithms,
       and Applications", Prentice Hall, 1993, sections 9.7 (primal-dual) and 7.4 (Dinic).
    .. [2] J. Edmonds and R. M. Karp, "Theoretical improvements in algorithmic efficiency for
       network flow problems", J. ACM 19(2), 248-264, 1972. doi:10.1145/321694.321699
    .. [3] Z. Kiraly and P. Kovacs, "Efficient implementations of minimum-cost flow
       algorithms", Acta Univ. Sapientiae, Informatica 4(1), 67-118, 2012. arXiv:1207.6381
    .. [4] W. H. Cunningham, "A network simplex method", Math. Programming 11, 105-116,
       1976. doi:10.1007/BF01580379
    .. [5] A. V. Goldberg, "An efficient implementation of a scaling minimum-cost flow
       algorithm", J. Algorithms 22(1), 1-29, 1997. doi:10.1006/jagm.1995.0805

    Examples
    --------
    Two units from node 0 to node 2, the direct arc holds one:

    >>> r = min_cost_flow(3, tail=[0, 0, 1], head=[2, 1, 2], capacity=[1, 5, 5],
    ...                   cost=[3, 1, 1], supply=[2, 0, -2])
    >>> r.status.name, r.total_cost, r.flow.tolist()
    ('OPTIMAL', 4, [0, 2, 2])
    >>> min_cost_flow(3, [0, 0, 1], [2, 1, 2], [1, 5, 5], [3, 1, 1], [2, 0, -2],
    ...               method="network_simplex").total_cost
    4
    >>> min_cost_flow(3, [0, 0, 1], [2, 1, 2], [1, 5, 5], [3, 1, 1], [2, 0, -2],
    ...               method="cost_scaling").total_cost
    4

    The empty network is trivially optimal:

    >>> r = min_cost_flow(0, [], [], [], [], [])
    >>> r.status.name, r.total_cost, r.flow.size
    ('OPTIMAL', 0, 0)
    """
    if method not in _MCF_METHODS:
        raise ValueError(f"method = {method!r} is not one of {sorted(_MCF_METHODS)}")
    n = check_int("n_nodes", n_nodes, lo=0, hi=int(_I32.max))
    status, total, value, flow = _core._min_cost_flow(
        n,
        fits_array("tail", tail, np.int32),
        fits_array("head", head, np.int32),
        fits_array("capacity", capacity, np.int64),
        fits_array("cost", cost, np.int64),
        fits_array("supply", supply, np.int64),
        _MCF_METHODS[method],
    )
    return MinCostFlowResult(
        status=MinCostFlowStatus(status), total_cost=int(total), flow_value=int(value), flow=flow
    )
