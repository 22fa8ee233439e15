"""Distinct-difference offsets (modular Golomb rulers, Sidon sets in Z_N) for sidon layouts.

:func:`sidon_offsets` finds ``r`` offsets whose pairwise differences are distinct mod N, so
that in the layout ``(g + o_l) mod N`` any two types share at most one holder. The search
combines finite-field constructions (Singer, Bose-Chowla, Ruzsa sets over GF(p^k)), rulers cut
from their affine images, and bounded bitmask depth-first searches; see
:func:`sidon_offsets` for the routes and their cost.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from spare_fast._validation import check_int

__all__ = ["sidon_offsets"]


def _prime_power(q: int) -> tuple[int, int] | None:
    """``(p, e)`` with ``q = p**e`` for a prime ``p``, or ``None``."""
    if q < 2:
        return None
    p = next(d for d in range(2, q + 1) if q % d == 0)
    e, rest = 0, q
    while rest % p == 0:
        rest //= p
        e += 1
    return (p, e) if rest == 1 else None


@functools.lru_cache(maxsize=64)
def _field_logs(p: int, n: int) -> tuple[list[int], dict[int, int]]:
    """Antilog list and log table of GF(p**n) under a primitive element.

    Elements are integers whose base-p digits are the coefficients of a polynomial in x modulo a
    primitive polynomial of degree n; ``antilog[i]`` encodes ``x**i``. The primitive polynomial
    is the first monic one (in lexicographic order of coefficients) under which x has order
    ``p**n - 1``; found by running the multiply-by-x recurrence, O(p**n n) per candidate.
    """
    size = p**n
    top = p ** (n - 1)
    for code in range(1, size):
        low = [(code // p**i) % p for i in range(n)]  # f = x**n + sum low[i] x**i
        if low[0] == 0:
            continue
        # x**n = -sum low[i] x**i, encoded once.
        reduce_by = sum(((-c) % p) * p**i for i, c in enumerate(low))
        antilog = [1]
        elem = 1
        ok = True
        for _ in range(1, size - 1):
            lead = elem // top
            shifted = (elem % top) * p
            if lead:
                elem = _add_digits(shifted, _scale_digits(reduce_by, lead, p, n), p, n)
            else:
                elem = shifted
            if elem == 1:
                ok = False
                break
            antilog.append(elem)
        if ok:
            return antilog, {v: i for i, v in enumerate(antilog)}
    raise ValueError(f"no primitive polynomial of degree {n} over GF({p})")  # pragma: no cover


def _add_digits(a: int, b: int, p: int, n: int) -> int:
    if p == 2:
        return a ^ b
    out, scale = 0, 1
    for _ in range(n):
        out += ((a % p + b % p) % p) * scale
        a //= p
        b //= p
        scale *= p
    return out


def _scale_digits(a: int, c: int, p: int, n: int) -> int:
    out, scale = 0, 1
    for _ in range(n):
        out += ((a % p) * c % p) * scale
        a //= p
        scale *= p
    return out


def _singer_set(q: int) -> tuple[int, list[int]]:
    """Singer perfect difference set: ``q + 1`` residues mod ``q**2 + q + 1`` (q a prime power)."""
    p, e = _prime_power(q)  # type: ignore[misc]
    antilog, log = _field_logs(p, 3 * e)
    m = q * q + q + 1
    # GF(q) inside GF(q**3): 0 and the powers of x**m.
    sub = [0] + [antilog[(j * m) % (q**3 - 1)] for j in range(q - 1)]
    residues = set()
    for a in sub:
        for b in sub:
            if b == 0:
                if a == 0:
                    continue
                v = a
            else:
                v = _add_digits(a, antilog[(log[b] + 1) % (q**3 - 1)], p, 3 * e)
            residues.add(log[v] % m)
    return m, sorted(residues)


def _bose_set(q: int) -> tuple[int, list[int]]:
    """Bose-Chowla set: ``q`` residues mod ``q**2 - 1`` (q a prime power)."""
    p, e = _prime_power(q)  # type: ignore[misc]
    antilog, log = _field_logs(p, 2 * e)
    sub = [0] + [antilog[(j * (q + 1)) % (q * q - 1)] for j in range(q - 1)]
    theta = antilog[1]
    return q * q - 1, sorted(log[_add_digits(theta, a, p, 2 * e)] for a in sub)


def _ruzsa_set(p: int) -> tuple[int, list[int]]:
    """Ruzsa set: ``p - 1`` residues mod ``p (p - 1)`` (p prime)."""
    m = p * (p - 1)
    g = 1  # the primitive root of Z_2
    if p > 2:
        g = next(
            g
            for g in range(2, p)
            if all(pow(g, (p - 1) // f, p) != 1 for f in _prime_factors(p - 1))
        )
    return m, sorted((p * i + (p - 1) * pow(g, i, p)) % m for i in range(1, p))


def _prime_factors(n: int) -> list[int]:
    out, d = [], 2
    while d * d <= n:
        if n % d == 0:
            out.append(d)
            while n % d == 0:
                n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out


def _constructions(r: int, max_modulus: int, max_extra: int) -> list[tuple[int, list[int]]]:
    """Modular Sidon sets with at least ``r`` and at most ``r + max_extra`` elements."""
    out = []
    for q in range(max(2, r - 1), r + max_extra + 1):
        if _prime_power(q) is None:
            continue
        if q + 1 >= r and q * q + q + 1 <= max_modulus:
            out.append(_singer_set(q))
        if q >= r and q * q - 1 <= max_modulus:
            out.append(_bose_set(q))
        if _prime_power(q) == (q, 1) and q - 1 >= r and q * (q - 1) <= max_modulus:
            out.append(_ruzsa_set(q))
    return out


@functools.lru_cache(maxsize=64)
def _ruler_candidates(r: int) -> np.ndarray:
    """Distinct r-mark Golomb rulers from affine images of modular Sidon sets, shortest first.

    For each Singer, Bose and Ruzsa set with ``r .. r + 6`` elements and every unit ``u`` of its
    modulus ``M``, ``u * A mod M`` is again Sidon mod M, hence (as integers in ``[0, M)``) a
    Golomb ruler; every window of ``r`` cyclically consecutive elements, shifted to start at 0,
    is a ruler whose length is the window's arc. Returns an ``(K, r)`` int64 array sorted by
    length (last column). O(sum over the sets of phi(M) s log s), cached per r.
    """
    rows = []
    for m, elems in _constructions(r, max_modulus=10**6, max_extra=6):
        a = np.asarray(elems, dtype=np.int64)
        s = a.size
        units = np.asarray([u for u in range(1, m) if math.gcd(u, m) == 1], dtype=np.int64)
        # Bound the (units, s, r) window array to a few million entries for large r; r <= 20
        # keeps every unit.
        units = units[: max(1, 4_000_000 // (s * r))]
        images = np.sort((units[:, None] * a[None, :]) % m, axis=1)
        wrapped = np.concatenate([images, images[:, : r - 1] + m], axis=1)
        starts = np.arange(s)
        windows = wrapped[:, starts[:, None] + np.arange(r)[None, :]]  # (units, s, r)
        windows = (windows - windows[:, :, :1]).reshape(-1, r)
        rows.append(windows)
    if not rows:  # pragma: no cover - every r >= 2 has a prime power q in [r - 1, r + 6]
        return np.empty((0, r), dtype=np.int64)
    rulers = np.unique(np.concatenate(rows), axis=0)
    # Shortest first, ties in lexicographic order (np.lexsort's last key is the primary one).
    keys = tuple(rulers[:, c] for c in range(r - 1, -1, -1)) + (rulers[:, -1],)
    return rulers[np.lexsort(keys)]


def _shortest_ruler(r: int) -> tuple[int, ...]:
    """The shortest ruler among :func:`_ruler_candidates` (Sidon mod every N >= 2 L + 1)."""
    return tuple(int(v) for v in _ruler_candidates(r)[0])


def _ruler_mod(n: int, r: int) -> list[int] | None:
    """The shortest candidate ruler whose differences stay distinct mod n, or None.

    A ruler of length L is Sidon mod n when ``n >= 2L + 1``; below that, differences d1, d2
    with ``d1 - d2 = n`` may collide, so each candidate shorter than n is checked directly
    (sorting its r(r-1) residues), in vectorised batches.
    """
    rulers = _ruler_candidates(r)
    # The shortest 20,000 fitting candidates: plenty for r <= 20 (about 10,000 exist at r = 20),
    # and a bound on the work for larger r.
    rulers = rulers[rulers[:, -1] < n][:20_000]
    i, j = np.nonzero(~np.eye(r, dtype=bool))
    for lo in range(0, rulers.shape[0], 4096):
        batch = rulers[lo : lo + 4096]
        diffs = np.sort((batch[:, i] - batch[:, j]) % n, axis=1)
        ok = ~(diffs[:, 1:] == diffs[:, :-1]).any(axis=1)
        if ok.any():
            return [int(v) for v in batch[int(np.argmax(ok))]]
    return None


def _direct_modular(n: int, r: int) -> list[int] | None:
    """r residues of a construction whose modulus divides n (then it is Sidon mod n), or None."""
    for m, elems in _constructions(r, max_modulus=n, max_extra=n):
        if n % m == 0:
            return sorted(elems[:r])
    return None


def _search(
    n: int, r: int, rng: np.random.Generator | None, node_budget: int
) -> tuple[list[int] | None, bool]:
    """Depth-first search for r offsets containing 0 with distinct differences mod n.

    Candidates at each depth are the residues not yet excluded, tried in increasing order
    (``rng is None``; the first hit is then the lexicographically smallest set) or in one seeded
    random order. Exclusions are Python-int bitmasks: ``x`` is excluded if ``x - o`` is a used
    difference for a chosen ``o``, or if ``2x = o_i + o_j (mod n)`` (the new differences would
    repeat among themselves). A node costs O(r) operations on n-bit integers, and a depth whose
    remaining candidates are fewer than the marks still missing is cut at once (popcount). The
    search gives up after ``node_budget`` nodes. Returns ``(offsets or None, exhausted)``, where
    ``exhausted`` means the whole tree was searched (so no set exists).
    """
    full = (1 << n) - 1
    order = None if rng is None else [int(v) for v in rng.permutation(np.arange(1, n))]
    rank = None if order is None else {x: i for i, x in enumerate(order)}

    def rot(mask: int, k: int) -> int:
        k %= n
        return ((mask << k) | (mask >> (n - k))) & full if k else mask

    def halves(s: int) -> int:
        # Bits x with 2x = s (mod n).
        s %= n
        if n % 2:
            return 1 << ((s * (n + 1) // 2) % n)
        if s % 2:
            return 0
        return (1 << (s // 2)) | (1 << (s // 2 + n // 2))

    def next_candidate(banned: int, after: int) -> int:
        """The first allowed candidate after ``after`` in the search order, or -1."""
        free = ~banned & full
        if order is None:
            free &= ~((1 << (after + 1)) - 1)
            return (free & -free).bit_length() - 1 if free else -1
        assert order is not None and rank is not None
        for x in order[rank[after] + 1 if after in rank else 0 :]:
            if (free >> x) & 1:
                return x
        return -1

    def enough(banned: int, after: int, needed: int) -> bool:
        free = ~banned & full
        if order is None:
            free &= ~((1 << (after + 1)) - 1)
        return free.bit_count() >= needed

    chosen = [0]
    used = 0
    banned = 1 | halves(0)
    # One frame per depth: (used, banned) before the depth's element, and the last tried one.
    frames: list[tuple[int, int, int]] = []
    cursor = 0  # last candidate tried at the current depth
    nodes = 0
    while True:
        if len(chosen) == r:
            return sorted(chosen), False
        if nodes > node_budget:
            return None, False
        x = next_candidate(banned, cursor)
        if x < 0 or not enough(banned, cursor, r - len(chosen)):
            if not frames:
                return None, True
            used, banned, cursor = frames.pop()
            chosen.pop()
            continue
        nodes += 1
        cursor = x
        new = 0
        for o in chosen:
            d = (x - o) % n
            new |= (1 << d) | (1 << (n - d))
        if new & used:
            continue
        frames.append((used, banned, x))
        nb = banned | (1 << x) | halves(2 * x)
        used |= new
        chosen.append(x)
        for o in chosen:
            nb |= rot(used, o) | halves(o + x)
        banned = nb


def sidon_offsets(n_groups: int, redundancy: int, seed: int = 0) -> np.ndarray:
    """Offsets ``0 = o_0 < o_1 < ... < o_{r-1} < N`` whose pairwise differences are distinct mod N.

    Parameters
    ----------
    n_groups : int
        The modulus N (number of groups).
    redundancy : int
        The number of offsets r.
    seed : int, optional
        Seed of the randomised fallback search; the same seed gives the same offsets.

    Returns
    -------
    numpy.ndarray
        int64 array of r sorted offsets.

    Raises
    ------
    TypeError
        ``n_groups`` or ``redundancy`` is not an int.
    ValueError
        If ``n_groups < r(r-1)+1`` (counting: the r(r-1) ordered differences must be distinct
        nonzero residues), naming the smallest valid ``n_groups``, or if neither a construction
        nor the bounded search finds such a set (possible only close to that bound, where for
        many N none exists).

    Notes
    -----
    A set with all differences distinct modulo N is a modular Golomb ruler (a Sidon set in Z_N).
    Routes, in order:

    0. Sparse case (``N >= 4 r^3 / 3``): seeded random offsets spread over the ring
       (:func:`_random_sidon_offsets`), which the controller prefers (expander holder graph).
    1. A depth-first search in increasing order with a small node budget (2,000 nodes); it
       finishes almost at once unless N is near the bound, and if it covers the whole tree it
       proves that no set exists.
    2. Algebraic constructions: Singer perfect difference sets (``q + 1`` residues mod
       ``q^2 + q + 1``), Bose-Chowla (``q`` mod ``q^2 - 1``; q a prime power) and Ruzsa
       (``p - 1`` mod ``p(p - 1)``; p prime). A set Sidon mod M is an integer Golomb ruler, so
       after multiplying by a unit of Z_M, the ``r`` elements in a window of length ``L`` are
       Sidon mod N whenever ``N >= 2L + 1`` (two differences in ``[-L, L]`` cannot be
       congruent mod N); below that, each window shorter than N is checked directly. For
       r = 20 the shortest window has L = 283 (an optimal ruler), so every N >= 567 is served.
    3. A construction whose modulus M divides N (differences distinct mod M stay distinct mod N),
       e.g. Singer sets at N = r(r-1)+1 when r - 1 is a prime power.
    4. A seeded random-order search (20,000 nodes), then ValueError, which says whether a
       search proved that no set exists (small N) or only gave up.

    Routes 1-4 end with a multiplication by a seeded unit of Z_N (:func:`_spread`), which keeps
    the differences distinct and spreads a compact ruler over the ring. Each route costs well
    under a second for N <= 100,000 and r <= 20 (the searches are bounded by node counts, not
    time, so results do not depend on the machine). Larger r works the same way but builds
    bigger finite fields and searches longer: near the bound, r = 40-60 can take a minute.
    Field arithmetic is done on log tables of GF(p^k) built once per (p, k) and cached.

    References
    ----------
    J. Singer, "A theorem in finite projective geometry and some applications to number
    theory", Trans. AMS 43, 1938. R. C. Bose, "An affine analogue of Singer's theorem",
    J. Indian Math. Soc. 6, 1942. I. Z. Ruzsa, "Solving a linear equation in a set of
    integers I", Acta Arith. 65, 1993. J. B. Shearer, "Some new optimum Golomb rulers",
    IEEE Trans. Inf. Theory 36(1), 1990 (rulers from affine images of these sets).

    Examples
    --------
    >>> off = sidon_offsets(13, 4)
    >>> sorted({(a - b) % 13 for a in off for b in off if a != b}) == list(range(1, 13))
    True
    """
    n = check_int("n_groups", n_groups, lo=1)
    r = check_int("redundancy", redundancy, lo=1)
    need = r * (r - 1) + 1
    if n < need:
        raise ValueError(
            f"n_groups = {n} is too small for a sidon layout with redundancy = {r}: "
            f"the smallest valid n_groups is r(r-1)+1 = {need}"
        )
    if r == 1:
        return np.zeros(1, dtype=np.int64)
    if n >= 4 * r**3 // 3:
        # Sparse case: random offsets spread over the ring succeed within a few draws.
        spread = _random_sidon_offsets(n, r, seed)
        if spread is not None:
            return spread
    found, exhausted = _search(n, r, None, node_budget=2_000)
    if found is None and not exhausted:
        found = _ruler_mod(n, r)
    if found is None and not exhausted:
        direct = _direct_modular(n, r)
        if direct is not None:
            found = direct
    if found is None and not exhausted:
        found, exhausted = _search(n, r, np.random.default_rng(seed), node_budget=20_000)
    if found is None:
        reason = (
            "none exists (the search covered every candidate)"
            if exhausted
            else "the constructions do not fit and the bounded search gave up"
        )
        raise ValueError(
            f"no distinct-difference offsets found for n_groups = {n}, redundancy = {r}: "
            f"{reason}; use a larger n_groups (r(r-1)+1 = {need} is only a bound; "
            f"n_groups >= {2 * _shortest_ruler(r)[-1] + 1} always works)"
        )
    return _spread(found, n, seed)


def _spread(offsets: Sequence[int], n: int, seed: int) -> np.ndarray:
    """``u * offsets mod n`` for a seeded unit ``u``, shifted to contain 0 and sorted.

    Multiplying by a unit of Z_n permutes the differences, so the set stays Sidon mod n, while
    a compact ruler becomes spread over the ring (see :func:`_random_sidon_offsets` for why the
    controller prefers that).
    """
    rng = np.random.default_rng(seed)
    while True:
        u = int(rng.integers(1, n)) if n > 2 else 1
        if math.gcd(u, n) == 1:
            break
    out = [(u * (v - offsets[0])) % n for v in offsets]
    return np.sort(np.asarray(out, dtype=np.int64))


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
