"""The :class:`Layout` class: which shard type sits at which layer of which group's stack."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spare_fast._validation import check_int
from spare_fast.layout._sidon import sidon_offsets

__all__ = ["Layout"]


def _first_bad_cell(mask: np.ndarray) -> tuple[int, int]:
    g, l = np.argwhere(mask)[0]
    return int(g), int(l)


#: Random permutations tried per layer before :func:`_matched_layer` completes it instead.
_RANDOM_ATTEMPTS = 20

_MASK64 = (1 << 64) - 1


def _permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """``rng.permutation(n)``, bit for bit and with ``rng`` advanced the same.

    Drawn by the compiled core, which reproduces numpy's PCG64 and its shuffle
    (``csrc/include/spare_fast/permutation.hpp``) in about half numpy's time;
    :meth:`Layout.random` at a million groups draws hundreds of these. Any bit generator but
    PCG64 goes to numpy.
    """
    state = rng.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        return rng.permutation(n)
    from spare_fast import _core

    s, inc = state["state"]["state"], state["state"]["inc"]
    perm, hi, lo, has_uint32, uinteger = _core._pcg64_permutation(
        s >> 64,
        s & _MASK64,
        inc >> 64,
        inc & _MASK64,
        bool(state["has_uint32"]),
        state["uinteger"],
        n,
    )
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (hi << 64) | lo, "inc": inc},
        "has_uint32": int(has_uint32),
        "uinteger": uinteger,
    }
    return perm


def _matched_layer(prev: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation ``p`` with ``p[g]`` not in ``prev[g]`` for every group, seeded from ``rng``.

    ``prev`` holds the layers so far, each a permutation, so the bipartite graph "group g may
    take type t" is ``(N - l)``-regular and has a perfect matching (Hall's theorem; Koenig,
    1916): a Latin rectangle always extends by one row. The matching starts from the valid
    part of a random permutation and augments the rest along shortest alternating paths
    (breadth first, types in one random order). O(l N^2) in the worst case; used only where
    the permutation-and-swap draw of :meth:`Layout.random` dead-ends (r close to N).
    """
    n = prev.shape[0]
    held = [set(row) for row in prev.tolist()]
    type_of = [-1] * n
    group_of = [-1] * n
    for g, t in enumerate(rng.permutation(n).tolist()):
        if t not in held[g]:
            type_of[g], group_of[t] = t, g
    order = rng.permutation(n).tolist()
    for start in range(n):
        if type_of[start] >= 0:
            continue
        reached_from: dict[int, int] = {}  # type -> the group whose path reached it
        frontier, free = [start], -1
        while free < 0:
            nxt = []
            for g in frontier:
                for t in order:
                    if t in reached_from or t in held[g]:
                        continue
                    reached_from[t] = g
                    if group_of[t] < 0:
                        free = t
                        break
                    nxt.append(group_of[t])
                if free >= 0:
                    break
            if not nxt and free < 0:  # pragma: no cover - excluded by Hall's theorem
                raise AssertionError("no augmenting path in a regular bipartite graph")
            frontier = nxt
        t = free
        while t >= 0:  # flip the path: each group on it takes the type it reached
            g = reached_from[t]
            t_prev = type_of[g]
            type_of[g], group_of[t] = t, g
            t = t_prev
    return np.asarray(type_of, dtype=np.int64)


class Layout:
    """An assignment of shard types to the layers of every group's stack.

    Use the constructors :meth:`cyclic`, :meth:`sidon`, :meth:`random`, :meth:`replication`
    and :meth:`from_stacks`; all of them check the invariants.

    Parameters
    ----------
    stacks : array_like of int, shape (n_groups, height)
        ``stacks[g, l]`` is the type at layer ``l`` of group ``g``.
    kind : str
        The name of the construction (``"cyclic"``, ``"sidon"``, ``"random"``,
        ``"replication"`` or ``"custom"``).

    Notes
    -----
    Invariants checked (O(N r)): a 2-D integer array with at least one group and one layer;
    ids in ``[0, n_types)`` with ``n_types = max + 1``; types distinct within each stack; every
    type held the same number of times (``redundancy`` for SPARe layouts, ``redundancy``
    physical groups per logical group for replication).

    Examples
    --------
    >>> Layout.cyclic(5, 2).stacks.tolist()
    [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]]
    """

    # Public as spare_fast.layout.Layout (and pickled under that name, as before the package).
    __module__ = "spare_fast.layout"
    __slots__ = ("_stacks", "_kind", "_n_types", "_redundancy")

    def __init__(self, stacks: npt.ArrayLike, kind: str = "custom") -> None:
        arr = np.asarray(stacks)
        if arr.ndim != 2:
            raise ValueError(f"stacks must be 2-D (n_groups, height), got shape {arr.shape}")
        if arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ValueError(
                f"stacks needs at least one group and one layer, got shape {arr.shape}"
            )
        if arr.dtype.kind not in "iu":
            if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                pass
            else:
                raise TypeError(f"stacks must hold integers, got dtype {arr.dtype}")
        if arr.size and (arr.min() < 0):
            g, l = _first_bad_cell(arr < 0)
            raise ValueError(f"stacks[{g}, {l}] = {int(arr[g, l])} is negative")
        # Every type needs a cell, so ids are below n_groups * height: bounding them before the
        # holder count below keeps its allocation sized by the input, not by its largest value.
        cells = int(arr.shape[0]) * int(arr.shape[1])
        if cells > np.iinfo(np.int32).max:
            raise ValueError(f"stacks has {cells} cells; n_groups * height must be < 2**31")
        if arr.max() >= cells:
            g, l = _first_bad_cell(arr >= cells)
            raise ValueError(
                f"stacks[{g}, {l}] = {int(arr[g, l])} is not in [0, {cells}): a type needs a cell"
            )
        # Always a private copy: the layout is immutable (read-only) and must neither freeze nor
        # share the caller's array.
        s = np.array(arr, dtype=np.int32, order="C")
        n_groups, height = s.shape
        # Distinct types within each stack.
        srt = np.sort(s, axis=1)
        dup = srt[:, 1:] == srt[:, :-1]
        if dup.any():
            g = int(np.argwhere(dup)[0][0])
            row = s[g]
            seen: dict[int, int] = {}
            for l, t in enumerate(row.tolist()):
                if t in seen:
                    raise ValueError(
                        f"stacks[{g}, {l}] = {t} repeats stacks[{g}, {seen[t]}]: "
                        "types must be distinct within a stack"
                    )
                seen[t] = l
        n_types = int(s.max()) + 1
        counts = np.bincount(s.ravel(), minlength=n_types)
        red = int(counts[int(s[0, 0])])
        if (counts != red).any():
            t = int(np.flatnonzero(counts != red)[0])
            if counts[t] == 0:
                raise ValueError(
                    f"type {t} is held by no group (ids must be 0..{n_types - 1}, each held "
                    f"{red} times)"
                )
            g, l = _first_bad_cell(s == t)
            raise ValueError(
                f"stacks[{g}, {l}] = {t}: type {t} is held {int(counts[t])} times, "
                f"but type {int(s[0, 0])} is held {red} times; "
                "every type must be held equally often"
            )
        s.setflags(write=False)
        self._stacks = s
        self._kind = kind
        self._n_types = n_types
        self._redundancy = red

    # -- constructors ---------------------------------------------------------------------
    @staticmethod
    def _check_nr(n_groups: int, redundancy: int) -> tuple[int, int]:
        n = check_int("n_groups", n_groups, lo=1)
        r = check_int("redundancy", redundancy, lo=1)
        if r > n:
            raise ValueError(f"redundancy = {r} must be <= n_groups = {n}")
        return n, r

    @classmethod
    def cyclic(cls, n_groups: int, redundancy: int) -> Layout:
        """Layer ``l`` of group ``g`` holds type ``(g + l) mod N`` (the paper's layout).

        Examples
        --------
        >>> Layout.cyclic(4, 3).stacks[3].tolist()
        [3, 0, 1]
        """
        n, r = cls._check_nr(n_groups, redundancy)
        g = np.arange(n, dtype=np.int64)[:, None]
        return cls((g + np.arange(r)) % n, kind="cyclic")

    @classmethod
    def sidon(cls, n_groups: int, redundancy: int, seed: int = 0) -> Layout:
        """Layer ``l`` of group ``g`` holds type ``(g + o_l) mod N`` (distinct-difference offsets).

        Any two types then share at most one holder. Needs ``N >= r(r-1)+1``; see
        :func:`sidon_offsets`.

        Examples
        --------
        >>> Layout.sidon(13, 4).stacks[0].tolist() == sorted(Layout.sidon(13, 4).stacks[0])
        True
        """
        n, r = cls._check_nr(n_groups, redundancy)
        off = sidon_offsets(n, r, seed)
        g = np.arange(n, dtype=np.int64)[:, None]
        return cls((g + off) % n, kind="sidon")

    @classmethod
    def random(cls, n_groups: int, redundancy: int, seed: int = 0) -> Layout:
        """Layer 0 the identity, every other layer a random permutation, types distinct per stack.

        Notes
        -----
        Layer ``l`` is drawn as a uniformly random permutation and then repaired: a group whose
        new type already sits in its stack swaps that type with a random other group of the
        same layer for which the swap creates no clash. Expected O(N r^2). The layout is a
        function of ``(n_groups, redundancy, seed)`` alone, identical on every run and
        platform: the permutations are numpy's ``default_rng(seed).permutation``, drawn bit
        for bit by the compiled core (about 1 s for ``Layout.random(1_000_000, 20)``). When
        the repair
        keeps failing (r close to N), the layer is completed by augmenting paths instead
        (:func:`_matched_layer`), so a random layout exists for every ``1 <= r <= N``.

        Examples
        --------
        >>> Layout.random(6, 3, seed=1).stacks[:, 0].tolist()
        [0, 1, 2, 3, 4, 5]
        """
        n, r = cls._check_nr(n_groups, redundancy)
        rng = np.random.default_rng(seed)
        # Built layer by layer as the rows of `cols` (int32: half the memory of the result): the
        # clash test compares contiguous rows, about 7x faster than the result's columns.
        cols = np.empty((r, n), dtype=np.int32)
        cols[0] = np.arange(n)
        for l in range(1, r):
            for _attempt in range(_RANDOM_ATTEMPTS):
                perm = _permutation(rng, n)
                clash = cols[0] == perm
                for k in range(1, l):
                    clash |= cols[k] == perm
                bad = np.flatnonzero(clash)
                ok = True
                touched: set[int] = set()
                for g in bad.tolist():
                    # Swap with a random partner h such that neither stack gets a repeat.
                    fixed = False
                    # A random order of the partners, read lazily (no list of all n): the first
                    # or second almost always fits.
                    for h in _permutation(rng, n):
                        h = int(h)
                        if h == g:
                            continue
                        if perm[h] in cols[:l, g] or perm[g] in cols[:l, h]:
                            continue
                        perm[g], perm[h] = perm[h], perm[g]
                        touched.update((g, h))
                        fixed = True
                        break
                    if not fixed:
                        ok = False
                        break
                # Only the swapped groups can clash now: every other group was clash-free
                # and kept its type.
                rows = np.fromiter(touched, dtype=np.int64, count=len(touched))
                if ok and not (cols[:l, rows] == perm[rows]).any():
                    cols[l] = perm
                    break
            else:
                # The swap repair dead-ends when r is close to N (every group can take only a
                # few types); a matching always finds a layer there.
                prev = np.ascontiguousarray(cols[:l].T, dtype=np.int64)
                cols[l] = _matched_layer(prev, rng)
        stacks = np.ascontiguousarray(cols.T, dtype=np.int64)
        del cols
        return cls(stacks, kind="random")

    @classmethod
    def replication(cls, n_groups: int, redundancy: int) -> Layout:
        """The baseline: ``n_groups // r`` types, each held at layer 0 by ``r`` groups.

        Group ``g`` holds type ``g // r``; stack height is 1. Groups beyond ``r * (N // r)``
        are not used, so ``n_groups`` is rounded down to a multiple of ``r``.

        Examples
        --------
        >>> Layout.replication(6, 3).stacks.ravel().tolist()
        [0, 0, 0, 1, 1, 1]
        """
        n, r = cls._check_nr(n_groups, redundancy)
        m = n // r
        return cls((np.arange(m * r, dtype=np.int64) // r)[:, None], kind="replication")

    @classmethod
    def from_stacks(cls, stacks: npt.ArrayLike) -> Layout:
        """A custom layout from an ``(n_groups, height)`` int array; the invariants are checked.

        The layout keeps its own read-only copy: ``stacks`` itself is left as it was.

        Examples
        --------
        >>> Layout.from_stacks([[0, 1], [1, 0]]).redundancy
        2
        """
        return cls(stacks, kind="custom")

    # -- properties -----------------------------------------------------------------------
    @property
    def stacks(self) -> np.ndarray:
        """Read-only int32 array ``(n_groups, height)``: the type at each layer of each group."""
        return self._stacks

    @property
    def n_groups(self) -> int:
        """Number of data-parallel groups N."""
        return int(self._stacks.shape[0])

    @property
    def n_types(self) -> int:
        """Number of shard types (N for SPARe layouts, N // r for replication)."""
        return self._n_types

    @property
    def height(self) -> int:
        """Stack height (layers per group)."""
        return int(self._stacks.shape[1])

    @property
    def redundancy(self) -> int:
        """How many groups hold each type."""
        return self._redundancy

    @property
    def kind(self) -> str:
        """Name of the construction: cyclic, sidon, random, replication or custom."""
        return self._kind

    def holders(self) -> np.ndarray:
        """The groups holding each type, as an ``(n_types, redundancy)`` int32 array.

        Row ``t`` lists the holders of type ``t`` in increasing group order.

        Examples
        --------
        >>> Layout.cyclic(4, 2).holders().tolist()
        [[0, 3], [0, 1], [1, 2], [2, 3]]
        """
        s = self._stacks
        groups = np.repeat(np.arange(s.shape[0], dtype=np.int32), s.shape[1])
        order = np.lexsort((groups, s.ravel()))
        return groups[order].reshape(self._n_types, self._redundancy)

    def __repr__(self) -> str:
        return (
            f"Layout.{self._kind}(n_groups={self.n_groups}, n_types={self.n_types}, "
            f"redundancy={self.redundancy}, height={self.height})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and np.array_equal(self._stacks, other._stacks)

    def __hash__(self) -> int:
        return hash(self._stacks.tobytes())
