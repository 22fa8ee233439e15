"""Failure-domain-aware layouts: the holders of every type spread over distinct racks."""

from __future__ import annotations

import numpy as np

from spare_fast._validation import check_int
from spare_fast.layout._layout import Layout

__all__ = ["domain_aware_layout"]


def domain_aware_layout(groups: int, redundancy: int, racks: int) -> Layout:
    """A cyclic layout whose holders of any one type sit in ``min(r, racks)`` distinct racks.

    Racks are contiguous blocks of groups (``g * racks // groups``).  The cyclic layout is laid
    over the groups visited rack by rack round-robin, so the r cyclically consecutive holders
    of a type come from r consecutive racks.  Layer 0 stays a permutation.

    Examples
    --------
    >>> st = domain_aware_layout(8, 2, 4).stacks
    >>> sorted(st[:, 0].tolist()) == list(range(8))
    True
    """
    n = check_int("groups", groups, lo=1)
    r = check_int("redundancy", redundancy, lo=1)
    R = check_int("racks", racks, lo=1)
    rack = (np.arange(n) * R) // n
    # Round-robin order over racks: position p takes the next unused group of rack p mod R.
    members = [np.flatnonzero(rack == q).tolist() for q in range(R)]
    order: list[int] = []
    cursor = [0] * R
    q = 0
    while len(order) < n:
        if cursor[q] < len(members[q]):
            order.append(members[q][cursor[q]])
            cursor[q] += 1
        q = (q + 1) % R
    perm = np.asarray(order)  # position -> group
    cyc = Layout.cyclic(n, r).stacks
    stacks = np.empty_like(cyc)
    # Group perm[p] plays the cyclic role of position p, holding types (p + l) mod N.
    stacks[perm] = cyc
    return Layout(stacks, kind="domain")
