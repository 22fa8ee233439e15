"""Layouts: which shard type sits at which layer of which group's stack.

A layout is an ``(n_groups, height)`` int32 array ``stacks`` with ``stacks[g, l]`` the type at
layer ``l`` of group ``g``. SPARe layouts have ``height = redundancy``, ``n_types = n_groups``,
distinct types within each stack and every type held by exactly ``redundancy`` groups; layer 0
is a permutation, so the fault-free job computes each type exactly once at depth 1.

* :class:`Layout` and its constructors (cyclic, sidon, random, replication, from_stacks).
* :func:`make_layout`: the one table from a layout name to a layout.
* :func:`sidon_offsets` (:mod:`spare_fast.layout._sidon`): the distinct-difference search
  behind sidon layouts.
* :func:`domain_aware_layout` (:mod:`spare_fast.layout.domain`): holders spread over racks.
"""

from __future__ import annotations

from spare_fast.layout._layout import Layout
from spare_fast.layout._sidon import sidon_offsets
from spare_fast.layout.domain import domain_aware_layout

__all__ = ["LAYOUT_NAMES", "SPARE_LAYOUTS", "Layout", "domain_aware_layout", "make_layout"]
__all__ += ["sidon_offsets"]

#: The SPARe layouts by name (every type held by r groups, N types): what the simulator,
#: the theory validation and the command line offer.
SPARE_LAYOUTS = ("cyclic", "sidon", "random", "domain")
#: Every name :func:`make_layout` knows: the SPARe layouts and the replication baseline.
LAYOUT_NAMES = (*SPARE_LAYOUTS, "replication")


def make_layout(
    kind: str, groups: int, redundancy: int, *, seed: int = 0, racks: int = 1
) -> Layout:
    """Build a layout by name: cyclic, sidon, random, domain (rack-aware cyclic) or replication.

    ``seed`` seeds the sidon and random constructions; ``racks`` is the domain layout's.

    Raises
    ------
    ValueError
        An unknown name (the message lists :data:`LAYOUT_NAMES`), or the constructor's own
        ValueError (a sidon layout needs ``N >= r(r-1)+1``).

    Examples
    --------
    >>> make_layout("cyclic", 6, 2).kind
    'cyclic'
    """
    if kind == "cyclic":
        return Layout.cyclic(groups, redundancy)
    if kind == "sidon":
        return Layout.sidon(groups, redundancy, seed=seed)
    if kind == "random":
        return Layout.random(groups, redundancy, seed=seed)
    if kind == "domain":
        return domain_aware_layout(groups, redundancy, racks)
    if kind == "replication":
        return Layout.replication(groups, redundancy)
    raise ValueError(f"layout = {kind!r} is not one of {', '.join(map(repr, LAYOUT_NAMES))}")
