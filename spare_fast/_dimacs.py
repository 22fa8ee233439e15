"""DIMACS network files: minimum-cost flow (``p min``), maximum flow (``p max``), assignment
(``p asn``), as in the First DIMACS Implementation Challenge (1990-91).

Lines: ``c`` comment; ``p KIND NODES ARCS`` once, before any node or arc line; node lines
``n ID SUPPLY`` (min), ``n ID s|t`` (max), ``n ID`` (asn: a left-side node); arc lines
``a U V LOW CAP COST`` (min), ``a U V CAP`` (max), ``a U V COST`` (asn). Node ids in files
are 1-based; in memory they are 0-based int32, values int64. Any malformed line raises
:class:`DimacsError` (a ``ValueError``) naming the file, the line number and what is wrong.

Lower bounds other than 0 (``LOW``) are rejected: :func:`spare_fast.graph.min_cost_flow`
has none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DimacsError", "DimacsProblem", "read_dimacs", "write_dimacs"]

_KINDS = ("min", "max", "asn")
_I64_MAX = 2**63 - 1
_I32_MAX = 2**31 - 1


class DimacsError(ValueError):
    """A malformed DIMACS file; the message names the line."""


@dataclass(frozen=True)
class DimacsProblem:
    """A network read from (or to be written to) a DIMACS file; ids 0-based.

    Attributes
    ----------
    kind : str
        ``"min"``, ``"max"`` or ``"asn"``.
    n_nodes : int
        Number of nodes.
    tail, head : numpy.ndarray
        int32 arc ends.
    capacity : numpy.ndarray or None
        int64 capacities (``min``, ``max``); None for ``asn``.
    cost : numpy.ndarray or None
        int64 costs (``min``, ``asn``); None for ``max``.
    supply : numpy.ndarray or None
        int64 node supplies (``min``); None otherwise.
    source, sink : int or None
        The terminals of a ``max`` problem.
    left : numpy.ndarray or None
        int32 left-side nodes of an ``asn`` problem.
    """

    kind: str
    n_nodes: int
    tail: np.ndarray
    head: np.ndarray
    capacity: np.ndarray | None = None
    cost: np.ndarray | None = None
    supply: np.ndarray | None = None
    source: int | None = None
    sink: int | None = None
    left: np.ndarray | None = field(default=None)

    def min_cost_flow_arrays(
        self,
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(n_nodes, tail, head, capacity, cost, supply)`` of a ``min`` problem."""
        if self.kind != "min":
            raise ValueError(f"a {self.kind!r} problem has no min-cost-flow arrays")
        assert self.capacity is not None and self.cost is not None and self.supply is not None
        return self.n_nodes, self.tail, self.head, self.capacity, self.cost, self.supply


def _int(text: str, what: str, where: str, lo: int, hi: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise DimacsError(f"{where}: {what} = {text!r} is not an integer") from None
    if v < lo or v > hi:
        raise DimacsError(f"{where}: {what} = {v} is not in [{lo}, {hi}]")
    return v


def read_dimacs(path: str | os.PathLike[str]) -> DimacsProblem:
    """Reads a DIMACS ``min``, ``max`` or ``asn`` file.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    DimacsProblem
        The network with 0-based ids.

    Raises
    ------
    DimacsError
        A malformed file: the message reads ``"PATH:LINE: what is wrong"``.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "tiny.min")
    ...     with open(p, "w") as f:
    ...         _ = f.write("p min 2 1\\nn 1 3\\nn 2 -3\\na 1 2 0 5 7\\n")
    ...     read_dimacs(p).cost.tolist()
    [7]
    """
    name = os.fspath(path)
    kind = ""
    n = m = 0
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    supply: np.ndarray | None = None
    source = sink = None
    left: list[int] = []
    p_where = ""
    with open(name, encoding="ascii", errors="replace") as f:
        for lineno, line in enumerate(f, start=1):
            where = f"{name}:{lineno}"
            tok = line.split()
            if not tok or tok[0] == "c":
                continue
            tag = tok[0]
            if tag == "p":
                if kind:
                    raise DimacsError(f"{where}: second problem line (the first is {p_where})")
                if len(tok) != 4:
                    raise DimacsError(f"{where}: problem line needs 'p KIND NODES ARCS'")
                if tok[1] not in _KINDS:
                    raise DimacsError(f"{where}: problem kind {tok[1]!r} is not one of {_KINDS}")
                kind = tok[1]
                n = _int(tok[2], "NODES", where, 0, _I32_MAX)
                m = _int(tok[3], "ARCS", where, 0, _I32_MAX)
                p_where = f"line {lineno}"
                if kind == "min":
                    supply = np.zeros(n, dtype=np.int64)
                continue
            if not kind:
                raise DimacsError(f"{where}: {tag!r} line before the problem line")
            if tag == "n":
                want = {"min": 3, "max": 3, "asn": 2}[kind]
                if len(tok) != want:
                    form = {"min": "n ID SUPPLY", "max": "n ID s|t", "asn": "n ID"}[kind]
                    raise DimacsError(f"{where}: node line needs '{form}'")
                v = _int(tok[1], "node id", where, 1, n) - 1
                if kind == "min":
                    assert supply is not None
                    supply[v] = _int(tok[2], "SUPPLY", where, -_I64_MAX, _I64_MAX)
                elif kind == "max":
                    if tok[2] == "s":
                        source = v
                    elif tok[2] == "t":
                        sink = v
                    else:
                        raise DimacsError(f"{where}: node role {tok[2]!r} is not 's' or 't'")
                else:
                    left.append(v)
                continue
            if tag == "a":
                want = {"min": 6, "max": 4, "asn": 4}[kind]
                if len(tok) != want:
                    arc_form = {
                        "min": "a U V LOW CAP COST",
                        "max": "a U V CAP",
                        "asn": "a U V COST",
                    }
                    raise DimacsError(f"{where}: arc line needs '{arc_form[kind]}'")
                if len(tails) == m:
                    raise DimacsError(f"{where}: more arcs than the {m} of the problem line")
                tails.append(_int(tok[1], "tail", where, 1, n) - 1)
                heads.append(_int(tok[2], "head", where, 1, n) - 1)
                if kind == "min":
                    low = _int(tok[3], "LOW", where, -_I64_MAX, _I64_MAX)
                    if low != 0:
                        raise DimacsError(f"{where}: LOW = {low}; only lower bound 0 is supported")
                    caps.append(_int(tok[4], "CAP", where, 0, _I64_MAX))
                    costs.append(_int(tok[5], "COST", where, -_I64_MAX, _I64_MAX))
                elif kind == "max":
                    caps.append(_int(tok[3], "CAP", where, 0, _I64_MAX))
                else:
                    costs.append(_int(tok[3], "COST", where, -_I64_MAX, _I64_MAX))
                continue
            raise DimacsError(f"{where}: unknown line type {tag!r} (expected c, p, n or a)")
    if not kind:
        raise DimacsError(f"{name}: no problem line ('p KIND NODES ARCS')")
    if len(tails) != m:
        raise DimacsError(f"{name}: {len(tails)} arc lines, the problem line ({p_where}) says {m}")
    if kind == "max" and (source is None or sink is None):
        missing = "source ('n ID s')" if source is None else "sink ('n ID t')"
        raise DimacsError(f"{name}: max problem without a {missing}")
    tail = np.asarray(tails, dtype=np.int32)
    head = np.asarray(heads, dtype=np.int32)
    return DimacsProblem(
        kind=kind,
        n_nodes=n,
        tail=tail,
        head=head,
        capacity=np.asarray(caps, dtype=np.int64) if kind != "asn" else None,
        cost=np.asarray(costs, dtype=np.int64) if kind != "max" else None,
        supply=supply,
        source=source,
        sink=sink,
        left=np.asarray(left, dtype=np.int32) if kind == "asn" else None,
    )


def write_dimacs(
    path: str | os.PathLike[str], problem: DimacsProblem, comment: str | None = None
) -> None:
    """Writes ``problem`` as a DIMACS file (1-based ids; ``min`` arcs with lower bound 0).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (overwritten).
    problem : DimacsProblem
        The network; the fields its ``kind`` needs must be set.
    comment : str, optional
        Written as ``c`` lines at the top.

    Raises
    ------
    ValueError
        A field the kind needs is missing, or arrays of different lengths.

    Examples
    --------
    >>> import tempfile, os, numpy as np
    >>> p = DimacsProblem("max", 2, np.array([0], np.int32), np.array([1], np.int32),
    ...                   capacity=np.array([4]), source=0, sink=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_dimacs(os.path.join(d, "f.max"), p)
    ...     read_dimacs(os.path.join(d, "f.max")).capacity.tolist()
    [4]
    """
    if problem.kind not in _KINDS:
        raise ValueError(f"kind = {problem.kind!r} is not one of {_KINDS}")
    m = len(problem.tail)
    if len(problem.head) != m:
        raise ValueError(f"head has length {len(problem.head)}, expected {m}")
    need = {"min": ("capacity", "cost", "supply"), "max": ("capacity",), "asn": ("cost",)}
    for attr in need[problem.kind]:
        value = getattr(problem, attr)
        if value is None:
            raise ValueError(f"a {problem.kind!r} problem needs {attr}")
        if attr != "supply" and len(value) != m:
            raise ValueError(f"{attr} has length {len(value)}, expected {m}")
    if problem.kind == "max" and (problem.source is None or problem.sink is None):
        raise ValueError("a 'max' problem needs source and sink")
    t = (np.asarray(problem.tail, dtype=np.int64) + 1).astype(str)
    h = (np.asarray(problem.head, dtype=np.int64) + 1).astype(str)
    lines = [f"c {c}" for c in (comment.splitlines() if comment else [])]
    lines.append(f"p {problem.kind} {problem.n_nodes} {m}")
    if problem.kind == "min":
        assert problem.supply is not None and problem.capacity is not None
        assert problem.cost is not None
        sup = np.asarray(problem.supply, dtype=np.int64)
        lines += [f"n {v + 1} {int(sup[v])}" for v in np.flatnonzero(sup)]
        cap = np.asarray(problem.capacity, dtype=np.int64).astype(str)
        cost = np.asarray(problem.cost, dtype=np.int64).astype(str)
        lines += [f"a {a} {b} 0 {c} {w}" for a, b, c, w in zip(t, h, cap, cost, strict=True)]
    elif problem.kind == "max":
        assert problem.capacity is not None
        lines += [f"n {problem.source + 1} s", f"n {problem.sink + 1} t"]  # type: ignore[operator]
        cap = np.asarray(problem.capacity, dtype=np.int64).astype(str)
        lines += [f"a {a} {b} {c}" for a, b, c in zip(t, h, cap, strict=True)]
    else:
        assert problem.cost is not None
        left = [] if problem.left is None else np.asarray(problem.left).tolist()
        lines += [f"n {v + 1}" for v in left]
        cost = np.asarray(problem.cost, dtype=np.int64).astype(str)
        lines += [f"a {a} {b} {w}" for a, b, w in zip(t, h, cost, strict=True)]
    with open(os.fspath(path), "w", encoding="ascii") as f:
        f.write("\n".join(lines))
        f.write("\n")
