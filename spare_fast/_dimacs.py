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
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np

__all__ = [
    "MAX_ARCS",
    "MAX_LINE_BYTES",
    "MAX_NODES",
    "DimacsError",
    "DimacsProblem",
    "read_dimacs",
    "write_dimacs",
]

_KINDS = ("min", "max", "asn")
_I64_MAX = 2**63 - 1
_I32_MAX = 2**31 - 1

#: Longest line accepted, in bytes (newline included); a longer one is refused unread.
MAX_LINE_BYTES = 4096
#: Most nodes a ``p`` line may declare: node ids are int32.
MAX_NODES = _I32_MAX
#: Most arcs a ``p`` line may declare: arc ids are int32.
MAX_ARCS = _I32_MAX
#: Nodes beyond those the file could name (isolated nodes) that a ``p`` line may declare.
UNNAMED_NODES = 65_536
#: Longest token quoted in an error message; longer ones are cut.
QUOTE_CHARS = 32

# Tokens per arc line of each kind; the shortest arc line is 2 * tokens - 1 bytes.
_ARC_TOKENS = {"min": 6, "max": 4, "asn": 4}
_NODE_FORMS = {"min": "n ID SUPPLY", "max": "n ID s|t", "asn": "n ID"}
_ARC_FORMS = {"min": "a U V LOW CAP COST", "max": "a U V CAP", "asn": "a U V COST"}
_DECIMAL = re.compile(rb"-?[0-9]{1,40}")


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


def _quote(token: bytes) -> str:
    """``token`` for an error message: quoted, cut to :data:`QUOTE_CHARS` characters."""
    text = token[:QUOTE_CHARS].decode("latin-1")
    return repr(text) + (f" (cut, {len(token):,} bytes)" if len(token) > QUOTE_CHARS else "")


def _int(token: bytes, what: str, where: str, lo: int, hi: int) -> int:
    # Plain ASCII decimal digits with an optional leading minus: no '+', '_', spaces or other
    # digit scripts, which Python's int() would accept.
    if _DECIMAL.fullmatch(token) is None:
        raise DimacsError(
            f"{where}: {what} = {_quote(token)} is not an integer (plain decimal digits)"
        )
    v = int(token)
    if v < lo or v > hi:
        raise DimacsError(f"{where}: {what} = {v} is not in [{lo}, {hi}]")
    return v


def _lines(f: BinaryIO, name: str) -> Iterator[tuple[int, list[bytes]]]:
    """``(line number, tokens)`` of every line, each read with a bounded ``readline``."""
    lineno = 0
    while True:
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        lineno += 1
        if len(line) > MAX_LINE_BYTES:
            raise DimacsError(
                f"{name}:{lineno}: line longer than {MAX_LINE_BYTES} bytes (starts {_quote(line)})"
            )
        yield lineno, line.split()


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

    Notes
    -----
    Memory stays proportional to the file's size, whatever its ``p`` line says. Lines longer
    than ``MAX_LINE_BYTES`` are refused without being read whole. The ``p`` line's NODES
    must be at most ``MAX_NODES`` and at most half the file's size in bytes (every named
    node takes a digit and a separator) plus ``UNNAMED_NODES`` isolated ones; its ARCS at
    most ``MAX_ARCS`` and at most the number of shortest arc lines the file could hold.
    Numbers are plain ASCII decimal digits with an optional leading ``-``. Refused as well,
    naming both lines: a second ``n`` line for a node, a second source or sink, a source that
    is also the sink. Tokens quoted in messages are cut to ``QUOTE_CHARS`` characters.

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
    n_arcs = 0
    tail = head = np.zeros(0, dtype=np.int32)
    caps = costs = np.zeros(0, dtype=np.int64)
    supply: dict[int, int] = {}
    node_line: dict[int, int] = {}  # node -> the line that named it (n lines)
    source = sink = None
    source_line = sink_line = 0
    left: list[int] = []
    p_line = 0
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        for lineno, tok in _lines(f, name):
            where = f"{name}:{lineno}"
            if not tok or tok[0] == b"c":
                continue
            tag = tok[0]
            if tag == b"p":
                if kind:
                    raise DimacsError(f"{where}: second problem line (the first is line {p_line})")
                if len(tok) != 4:
                    raise DimacsError(f"{where}: problem line needs 'p KIND NODES ARCS'")
                if tok[1].decode("latin-1") not in _KINDS:
                    raise DimacsError(
                        f"{where}: problem kind {_quote(tok[1])} is not one of {_KINDS}"
                    )
                k = tok[1].decode("ascii")
                n = _int(tok[2], "NODES", where, 0, MAX_NODES)
                m = _int(tok[3], "ARCS", where, 0, MAX_ARCS)
                named = size // 2 + UNNAMED_NODES
                if n > named:
                    raise DimacsError(
                        f"{where}: NODES = {n:,} is more than a file of {size:,} bytes can hold "
                        f"(at most {named:,}: half its bytes plus {UNNAMED_NODES:,} isolated "
                        f"nodes)"
                    )
                shortest = 2 * _ARC_TOKENS[k]  # shortest arc line, newline included
                fit = (size + 1) // shortest
                if m > fit:
                    raise DimacsError(
                        f"{where}: ARCS = {m:,} is more than a file of {size:,} bytes can hold "
                        f"(at most {fit:,} arc lines of {shortest - 1} bytes or more)"
                    )
                kind = k
                p_line = lineno
                tail = np.empty(m, dtype=np.int32)
                head = np.empty(m, dtype=np.int32)
                caps = np.empty(m if kind != "asn" else 0, dtype=np.int64)
                costs = np.empty(m if kind != "max" else 0, dtype=np.int64)
                continue
            if not kind:
                raise DimacsError(f"{where}: {_quote(tag)} line before the problem line")
            if tag == b"n":
                if len(tok) != (2 if kind == "asn" else 3):
                    raise DimacsError(f"{where}: node line needs '{_NODE_FORMS[kind]}'")
                v = _int(tok[1], "node id", where, 1, n) - 1
                if kind == "max":
                    role = tok[2]
                    if role not in (b"s", b"t"):
                        raise DimacsError(f"{where}: node role {_quote(role)} is not 's' or 't'")
                    if role == b"s":
                        if source is not None:
                            raise DimacsError(
                                f"{where}: second source (the first is node {source + 1}, "
                                f"line {source_line})"
                            )
                        source, source_line = v, lineno
                    else:
                        if sink is not None:
                            raise DimacsError(
                                f"{where}: second sink (the first is node {sink + 1}, "
                                f"line {sink_line})"
                            )
                        sink, sink_line = v, lineno
                    if source is not None and source == sink:
                        raise DimacsError(
                            f"{where}: node {v + 1} is both source and sink (lines "
                            f"{source_line} and {sink_line})"
                        )
                    continue
                if v in node_line:
                    raise DimacsError(
                        f"{where}: second node line for node {v + 1} (the first is line "
                        f"{node_line[v]})"
                    )
                node_line[v] = lineno
                if kind == "min":
                    b = _int(tok[2], "SUPPLY", where, -_I64_MAX, _I64_MAX)
                    if b:
                        supply[v] = b
                else:
                    left.append(v)
                continue
            if tag == b"a":
                if len(tok) != _ARC_TOKENS[kind]:
                    raise DimacsError(f"{where}: arc line needs '{_ARC_FORMS[kind]}'")
                if n_arcs == m:
                    raise DimacsError(f"{where}: more arcs than the {m} of the problem line")
                tail[n_arcs] = _int(tok[1], "tail", where, 1, n) - 1
                head[n_arcs] = _int(tok[2], "head", where, 1, n) - 1
                if kind == "min":
                    low = _int(tok[3], "LOW", where, -_I64_MAX, _I64_MAX)
                    if low != 0:
                        raise DimacsError(f"{where}: LOW = {low}; only lower bound 0 is supported")
                    caps[n_arcs] = _int(tok[4], "CAP", where, 0, _I64_MAX)
                    costs[n_arcs] = _int(tok[5], "COST", where, -_I64_MAX, _I64_MAX)
                elif kind == "max":
                    caps[n_arcs] = _int(tok[3], "CAP", where, 0, _I64_MAX)
                else:
                    costs[n_arcs] = _int(tok[3], "COST", where, -_I64_MAX, _I64_MAX)
                n_arcs += 1
                continue
            raise DimacsError(f"{where}: unknown line type {_quote(tag)} (expected c, p, n or a)")
    if not kind:
        raise DimacsError(f"{name}: no problem line ('p KIND NODES ARCS')")
    if n_arcs != m:
        raise DimacsError(f"{name}: {n_arcs} arc lines, the problem line (line {p_line}) says {m}")
    if kind == "max" and (source is None or sink is None):
        missing = "source ('n ID s')" if source is None else "sink ('n ID t')"
        raise DimacsError(f"{name}: max problem without a {missing}")
    sup: np.ndarray | None = None
    if kind == "min":
        sup = np.zeros(n, dtype=np.int64)
        if supply:
            sup[np.fromiter(supply.keys(), np.int64)] = np.fromiter(supply.values(), np.int64)
    return DimacsProblem(
        kind=kind,
        n_nodes=n,
        tail=tail,
        head=head,
        capacity=caps if kind != "asn" else None,
        cost=costs if kind != "max" else None,
        supply=sup,
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
