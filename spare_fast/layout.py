"""Layouts: which shard type sits at which layer of which group's stack.

A layout is an ``(n_groups, height)`` int32 array ``stacks`` with ``stacks[g, l]`` the type at
layer ``l`` of group ``g``. SPARe layouts have ``height = redundancy``, ``n_types = n_groups``,
distinct types within each stack and every type held by exactly ``redundancy`` groups; layer 0
is a permutation, so the fault-free job computes each type exactly once at depth 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["Layout", "sidon_offsets"]


def _first_bad_cell(mask: np.ndarray) -> tuple[int, int]:
    g, l = np.argwhere(mask)[0]
    return int(g), int(l)


def sidon_offsets(n_groups: int, redundancy: int, seed: int = 0) -> np.ndarray:
    """Offsets ``0 = o_0 < o_1 < ... < o_{r-1} < N`` whose pairwise differences are distinct mod N.

    Parameters
    ----------
    n_groups : int
        The modulus N (number of groups).
    redundancy : int
        The number of offsets r.
    seed : int, optional
        Seed of the randomised search; the same seed gives the same offsets.

    Returns
    -------
    numpy.ndarray
        int64 array of r sorted offsets.

    Raises
    ------
    ValueError
        If ``n_groups < r(r-1)+1`` (counting: the r(r-1) ordered differences must be distinct
        nonzero residues), naming the smallest valid ``n_groups``, or if the bounded search finds
        no such set (possible only close to that bound).

    Notes
    -----
    A set with all differences distinct modulo N is a modular Golomb ruler (a Sidon set in Z_N).
    The search is a depth-first backtracking over candidate offsets, visited in a seeded random
    order, keeping a bitmap of used differences; each step costs O(r) and the number of nodes is
    capped at two million, far more than needed unless N is within a few percent of r(r-1)+1.

    Examples
    --------
    >>> off = sidon_offsets(13, 4)
    >>> sorted({(a - b) % 13 for a in off for b in off if a != b}) == list(range(1, 13))
    True
    """
    n, r = int(n_groups), int(redundancy)
    if r < 1:
        raise ValueError(f"redundancy = {r} must be >= 1")
    need = r * (r - 1) + 1
    if n < need:
        raise ValueError(
            f"n_groups = {n} is too small for a sidon layout with redundancy = {r}: "
            f"the smallest valid n_groups is r(r-1)+1 = {need}"
        )
    if r == 1:
        return np.zeros(1, dtype=np.int64)
    spread = _random_sidon_offsets(n, r, seed)
    if spread is not None:
        return spread
    rng = np.random.default_rng(seed)
    # Deterministic small-first order is best for small r; randomised order escapes the dense
    # corners near the bound. Try the plain order first, then seeded random orders.
    orders = [np.arange(1, n)] + [rng.permutation(np.arange(1, n)) for _ in range(2)]
    budget = 200_000
    for order in orders:
        used = np.zeros(n, dtype=bool)
        chosen = [0]
        nodes = 0
        found = False
        # Explicit stack of candidate cursors (one per depth) to avoid recursion limits.
        cursors = [0]
        while cursors:
            depth = len(chosen)
            if depth == r:
                found = True
                break
            i = cursors[-1]
            placed = False
            while i < len(order):
                x = int(order[i])
                i += 1
                nodes += 1
                if x in chosen:
                    continue
                diffs = [(x - o) % n for o in chosen] + [(o - x) % n for o in chosen]
                if any(used[d] for d in diffs) or len(set(diffs)) != len(diffs):
                    continue
                for d in diffs:
                    used[d] = True
                chosen.append(x)
                cursors[-1] = i
                cursors.append(0 if depth + 1 < r else i)
                placed = True
                break
            if found:
                break
            if not placed:
                cursors.pop()
                if len(chosen) > 1:
                    x = chosen.pop()
                    for o in chosen:
                        used[(x - o) % n] = False
                        used[(o - x) % n] = False
                if not cursors:
                    break
            if nodes > budget:
                break
        if found:
            return np.sort(np.asarray(chosen, dtype=np.int64))
    raise ValueError(
        f"no distinct-difference offsets found for n_groups = {n}, redundancy = {r} "
        f"within the search budget; use a larger n_groups (r(r-1)+1 = {need} is only a bound)"
    )


def _random_sidon_offsets(n: int, r: int, seed: int, attempts: int = 50) -> np.ndarray | None:
    """Seeded random offsets spread over ``[0, N)`` with distinct differences, or None.

    Offsets spread over the whole ring make the holder graph an expander: a type's holders
    are far apart, so a failure's displaced types find spare capacity within a few hops and
    the controller's augmenting paths stay short. Compact rulers (all offsets within a short
    window) make the graph local, and late in a trajectory the spare capacity must then be
    fetched from far along the ring (measured: 17-move augmenting paths, 5x slower
    trajectories at N = 100,000, r = 20). Each new offset is drawn uniformly and accepted
    when its differences to the chosen ones are new; this succeeds quickly while
    r^3 is well below N, and returns None (falling back to the exhaustive search) otherwise.
    """
    # Dense cases (r^3 comparable to N) rarely succeed: spend less before falling back.
    tries = 2000 if n >= 4 * r**3 // 3 else 200
    attempts = attempts if n >= 4 * r**3 // 3 else 20
    rng = np.random.default_rng(seed)
    for _ in range(attempts):
        chosen = [0]
        used = np.zeros(n, dtype=bool)
        ok = True
        for _k in range(1, r):
            for _try in range(tries):
                x = int(rng.integers(1, n))
                diffs = [(x - o) % n for o in chosen] + [(o - x) % n for o in chosen]
                if x in chosen or len(set(diffs)) != len(diffs) or used[diffs].any():
                    continue
                used[diffs] = True
                chosen.append(x)
                break
            else:
                ok = False
                break
        if ok:
            return np.sort(np.asarray(chosen, dtype=np.int64))
    return None


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
        if arr.max() >= np.iinfo(np.int32).max:
            g, l = _first_bad_cell(arr >= np.iinfo(np.int32).max)
            raise ValueError(f"stacks[{g}, {l}] = {int(arr[g, l])} does not fit int32")
        s = np.ascontiguousarray(arr, dtype=np.int32)
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
        for name, v in (("n_groups", n_groups), ("redundancy", redundancy)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name} = {v!r} must be an int")
        n, r = int(n_groups), int(redundancy)
        if n < 1:
            raise ValueError(f"n_groups = {n} must be >= 1")
        if r < 1:
            raise ValueError(f"redundancy = {r} must be >= 1")
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
        same layer for which the swap creates no clash. Expected O(N r^2).

        Examples
        --------
        >>> Layout.random(6, 3, seed=1).stacks[:, 0].tolist()
        [0, 1, 2, 3, 4, 5]
        """
        n, r = cls._check_nr(n_groups, redundancy)
        rng = np.random.default_rng(seed)
        stacks = np.empty((n, r), dtype=np.int64)
        stacks[:, 0] = np.arange(n)
        for l in range(1, r):
            for _attempt in range(1000):
                perm = rng.permutation(n)
                clash = (stacks[:, :l] == perm[:, None]).any(axis=1)
                bad = np.flatnonzero(clash)
                ok = True
                for g in bad.tolist():
                    # Swap with a random partner h such that neither stack gets a repeat.
                    fixed = False
                    for h in rng.permutation(n).tolist():
                        if h == g:
                            continue
                        if perm[h] in stacks[g, :l] or perm[g] in stacks[h, :l]:
                            continue
                        perm[g], perm[h] = perm[h], perm[g]
                        fixed = True
                        break
                    if not fixed:
                        ok = False
                        break
                if ok and not (stacks[:, :l] == perm[:, None]).any():
                    stacks[:, l] = perm
                    break
            else:  # pragma: no cover - needs r close to N and extreme bad luck
                raise ValueError(f"could not draw a random layout for n_groups={n}, redundancy={r}")
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


def _as_group_ids(groups: int | Sequence[int] | np.ndarray, n_groups: int) -> np.ndarray:
    """Normalise an int or sequence of group ids to a validated int32 array."""
    arr = np.atleast_1d(np.asarray(groups))
    if arr.ndim != 1:
        raise ValueError(f"groups must be an int or a 1-D sequence, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"group ids must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    for i, g in enumerate(arr.tolist()):
        if g < 0 or g >= n_groups:
            raise IndexError(f"groups[{i}] = {g} is not in [0, {n_groups})")
    return arr.astype(np.int32)
