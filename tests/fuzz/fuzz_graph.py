"""atheris harness: the graph kernels on fuzzed CSR arrays and networks.

Malformed input must raise a documented exception. On valid input the matching must be a
matching of the graph whose size equals scipy's maximum_bipartite_matching; the b-matching
must respect the capacities; a min-cost flow must respect capacities and conservation, and
match OR-Tools' optimum when OPTIMAL.
"""

from __future__ import annotations

import sys

import _common
import atheris
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

# Coverage feedback from the package only (instrumenting numpy and scipy costs minutes).
with atheris.instrument_imports(include=["spare_fast"]):
    from spare_fast.graph import MinCostFlowStatus, hopcroft_karp, max_b_matching, min_cost_flow


def _csr(fdp):
    n_left = fdp.ConsumeIntInRange(0, 8)
    n_right = fdp.ConsumeIntInRange(0, 8)
    degrees = [fdp.ConsumeIntInRange(0, 4) for _ in range(n_left)]
    indptr = [0, *np.cumsum(degrees, dtype=np.int64).tolist()]
    indices = [fdp.ConsumeIntInRange(0, max(n_right - 1, 0)) for _ in range(int(indptr[-1]))]
    if fdp.ConsumeProbability() < 0.1:  # malformed on purpose
        k = fdp.ConsumeIntInRange(0, len(indptr) + len(indices))
        v = _common.pick_int(fdp, -3, 12)
        if k < len(indptr):
            indptr[k] = v
        elif indices:
            indices[(k - len(indptr)) % len(indices)] = v
    return indptr, indices, n_right


def _matching(fdp) -> None:
    indptr, indices, n_right = _csr(fdp)
    try:
        mate = hopcroft_karp(indptr, indices, n_right)
    except _common.EXPECTED:
        return
    rows = [set(indices[indptr[i] : indptr[i + 1]]) for i in range(len(indptr) - 1)]
    used = [int(m) for m in mate if m >= 0]
    assert len(used) == len(set(used))
    assert all(m < 0 or m in rows[i] for i, m in enumerate(mate.tolist()))
    if len(indptr) > 1 and n_right > 0:
        g = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(rows), n_right))
        ref = maximum_bipartite_matching(g, perm_type="column")
        assert (ref >= 0).sum() == len(used)


def _b_matching(fdp) -> None:
    indptr, indices, n_right = _csr(fdp)
    capacity = _common.int_list(fdp, n_right, 0, 3)
    try:
        mate = max_b_matching(indptr, indices, capacity)
    except _common.EXPECTED:
        return
    counts = np.bincount(mate[mate >= 0], minlength=n_right)
    assert (counts <= np.asarray(capacity, dtype=np.int64)).all()


def _flow(fdp) -> None:
    n = fdp.ConsumeIntInRange(0, 6)
    m = fdp.ConsumeIntInRange(0, 10)
    tail = _common.int_list(fdp, m, 0, max(n - 1, 0))
    head = _common.int_list(fdp, m, 0, max(n - 1, 0))
    cap = _common.int_list(fdp, m, 0, 5)
    cost = _common.int_list(fdp, m, 0, 9)
    supply = _common.int_list(fdp, n, -3, 3)
    if n and fdp.ConsumeBool():
        supply[-1] = -sum(supply[:-1]) if abs(sum(supply[:-1])) < 2**62 else 0
    try:
        r = min_cost_flow(n, tail, head, cap, cost, supply)
    except _common.EXPECTED:
        return
    flow = r.flow
    assert ((flow >= 0) & (flow <= np.asarray(cap, dtype=np.int64))).all()
    if r.status == MinCostFlowStatus.OPTIMAL:
        net = np.zeros(n, dtype=object)
        for a, f in enumerate(flow.tolist()):
            net[tail[a]] += f
            net[head[a]] -= f
        assert net.tolist() == list(supply)
        assert r.total_cost == sum(int(f) * c for f, c in zip(flow.tolist(), cost, strict=True))


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    (_matching, _b_matching, _flow)[fdp.ConsumeIntInRange(0, 2)](fdp)


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
