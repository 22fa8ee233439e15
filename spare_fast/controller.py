"""ReCtlr, the SPARe controller: who computes which shard type, at what depth, with what moves.

The decisions are made by the C++ core (``spare_fast._core``); this module validates input,
holds the core object and presents decisions as :class:`Decision` values.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from spare_fast import _core
from spare_fast._batch import FailEach, fail_each_core
from spare_fast._core import Decision as _CoreDecision
from spare_fast._validation import bool_array, index_array, int_array, stacks_array
from spare_fast.layout import Layout

__all__ = ["Controller", "Decision", "Status", "solve"]

GroupIds = int | Sequence[int] | npt.NDArray[np.integer]

#: Largest move cost per cell; also n_groups * height * max(move_cost) <= MAX_TOTAL_COST.
MAX_MOVE_COST = 2**40
MAX_TOTAL_COST = 2**56

# A keyed snapshot is _MAC_MAGIC + HMAC-SHA256(key, _MAC_MAGIC + core snapshot) + core snapshot.
_MAC_MAGIC = b"SPFMAC01"
_MAC_SIZE = hashlib.sha256().digest_size


class Status(enum.IntEnum):
    """Outcome of a decision: the job continues (``OK``) or needs a global restart (``WIPEOUT``)."""

    OK = 0
    WIPEOUT = 1

    def __str__(self) -> str:
        # print(d.status) reads WIPEOUT, not IntEnum's 1; comparisons with ints still work.
        return self.name


class Decision:
    """One controller decision (docs/model.md, "The controller").

    Made by :class:`Controller` events and by :func:`solve`; not constructed directly.

    Attributes
    ----------
    status : Status
        ``Status.OK``, or ``Status.WIPEOUT`` when some type has no alive holder.
    phase : int
        The last ReCtlr phase that ran: 0 = the stacks before the event already held every
        assigned type in the top ``depth`` layers (nothing moves); 1 = the depth search found a
        wipe-out; 2 = a reorder was computed.
    depth : int
        The minimal depth S* (0 on wipe-out).
    moves : int
        Minimal total move cost at depth S* (with unit costs: the number of swaps).
    swaps : int
        Number of (type, group) pairs swapped into a top layer.
    patch : numpy.ndarray
        Read-only int32 ``(k, 2)`` rows ``(type, group)``: types whose provider died in this
        event and the survivor that now provides them (the current step's patch compute).
    seconds : float
        Time the C++ core spent deciding.
    full_solve : bool
        Whether the decision ran the full optimisation (a rejoin that may lower the depth, a
        restart); a failure, depth raise included, never does.
    lost_types : numpy.ndarray
        int32 ids of the types left without an alive holder (empty unless ``WIPEOUT``);
        ``lost_type`` is the first of them, or None.
    assignment : numpy.ndarray
        Read-only int32 provider group per type (-1 on wipe-out). For a controller decision it
        is read from the controller when asked, under its lock, and only while no later event
        has been decided: after one, reading it raises ``RuntimeError`` (copy it right after
        the call to keep it).
    """

    # The fields live in the C++ decision and are read on access: an event builds no Python
    # object per field (most callers read two or three of them).
    __slots__ = ("_core", "_assignment", "_owner", "_lost")

    _core: _CoreDecision
    _assignment: np.ndarray | None
    _owner: Controller | None
    _lost: np.ndarray | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Decision objects are made by Controller events and solve()")

    @classmethod
    def _make(
        cls,
        core: _CoreDecision,
        assignment: np.ndarray | None = None,
        owner: Controller | None = None,
    ) -> Any:
        self = object.__new__(cls)
        self._core = core
        self._assignment = assignment
        self._owner = owner
        self._lost = None
        return self

    def _set_lost(self, stacks: np.ndarray, alive: np.ndarray, n_types: int) -> None:
        # Only on a wipe-out (rare): the types no alive group holds in any layer, from the
        # state the decision was made on. O(N * height).
        if self._core.status == Status.WIPEOUT:
            held = np.zeros(n_types, dtype=bool)
            ids = stacks[np.asarray(alive, dtype=bool)].ravel()
            held[ids[(ids >= 0) & (ids < n_types)]] = True
            self._lost = np.flatnonzero(~held).astype(np.int32)

    @property
    def status(self) -> Status:
        return Status(self._core.status)

    @property
    def phase(self) -> int:
        return self._core.phase

    @property
    def depth(self) -> int:
        return self._core.depth

    @property
    def moves(self) -> int:
        return self._core.moves

    @property
    def swaps(self) -> int:
        return self._core.swaps

    @property
    def patch(self) -> np.ndarray:
        return self._core.patch

    @property
    def seconds(self) -> float:
        return self._core.seconds

    @property
    def full_solve(self) -> bool:
        return self._core.full_solve

    @property
    def _event(self) -> int:
        # Read by the core under the controller's lock, together with the decision.
        return self._core.event

    @property
    def assignment(self) -> np.ndarray:
        if self._assignment is not None:
            return self._assignment
        owner = self._owner
        assert owner is not None
        return owner._core._assignment_at(self._core.event)

    @property
    def ok(self) -> bool:
        """True when the status is ``Status.OK``."""
        return self.status is Status.OK

    @property
    def lost_types(self) -> np.ndarray:
        """The types without an alive holder after this decision (empty unless WIPEOUT).

        Computed on first access, from the controller's state (nothing is added to an event's
        cost); like :attr:`assignment`, read it before the controller's next event.

        Raises
        ------
        RuntimeError
            A WIPEOUT decision first asked after a later event (a restart) of its controller.
        """
        if self._lost is None:
            if self._core.status != Status.WIPEOUT:
                return np.empty(0, dtype=np.int32)
            owner = self._owner
            assert owner is not None  # solve() fills _lost itself
            core = owner._core
            if core.events != self._core.event:
                raise RuntimeError(
                    "this decision's lost types are stale: the controller has decided "
                    f"{core.events - self._core.event} more event(s) since; read "
                    "decision.lost_types right after the call"
                )
            self._set_lost(core.stacks, core.alive, core.n_types)
            assert self._lost is not None
        return self._lost

    @property
    def lost_type(self) -> int | None:
        """The first type that lost all its holders (a WIPEOUT decision), else None."""
        lost = self.lost_types
        return int(lost[0]) if lost.size else None

    def __repr__(self) -> str:
        lost = ""
        try:
            types = self.lost_types
        except RuntimeError:  # asked too late: the repr leaves it out
            types = np.empty(0, dtype=np.int32)
        if types.size:
            more = f" and {types.size - 1} more" if types.size > 1 else ""
            lost = f", lost_type={int(types[0])}{more}"
        return (
            f"Decision(status={self.status.name}{lost}, phase={self.phase}, depth={self.depth}, "
            f"moves={self.moves}, patch={len(self.patch)} rows, seconds={self.seconds:.3g})"
        )


def _stacks_array(stacks: npt.ArrayLike | Layout) -> np.ndarray:
    if isinstance(stacks, Layout):
        return stacks.stacks
    return stacks_array("stacks", stacks)


def _move_cost_array(move_cost: npt.ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if move_cost is None:
        return None
    if np.shape(move_cost) != shape:
        raise ValueError(
            f"move_cost has shape {np.shape(move_cost)}, expected the stacks' shape {shape}"
        )
    return int_array("move_cost", move_cost, np.int64, ndim=2, lo=0, hi=MAX_MOVE_COST)


def _key_bytes(key: Any) -> bytes:
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"key must be bytes, got {type(key).__name__}")
    key = bytes(key)
    if not key:
        raise ValueError("key must not be empty")
    return key


def _layout_meta(layout: Layout) -> bytes:
    seed = getattr(layout, "seed", getattr(layout, "_seed", None))
    return json.dumps({"kind": layout.kind, "seed": seed}, sort_keys=True).encode()


def _layout_from_meta(stacks: np.ndarray, meta: bytes) -> Layout:
    try:
        info = json.loads(meta.decode()) if meta else {"kind": "custom", "seed": None}
        kind, seed = info["kind"], info["seed"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise ValueError("snapshot: the layout description (meta) is not valid") from None
    if not isinstance(kind, str) or not (seed is None or isinstance(seed, int)):
        raise ValueError("snapshot: the layout description (meta) is not valid")
    layout = Layout(stacks, kind=kind)
    if seed is not None and "_seed" in getattr(Layout, "__slots__", ()):
        layout._seed = seed  # type: ignore[attr-defined]
    return layout


class Controller:
    """The incremental SPARe controller (ReCtlr) over a layout.

    Parameters
    ----------
    layout : Layout or array_like
        The layout (or an ``(n_groups, height)`` stacks array satisfying the layout invariants).
    move_cost : array_like of int, optional
        Nonnegative costs shaped like ``layout.stacks``: ``move_cost[g, l]`` is the cost of
        pulling the type at layer ``l`` of group ``g``'s current order into its top layers.
        Default: 1 everywhere (count swaps).

    Notes
    -----
    After every decision each assigned type sits in its provider's top ``depth`` layers, so the
    assignment costs 0 against the new stacks and is a min-cost flow for its value. A failure
    displaces only the failed groups' assigned types: each goes at cost 0 to an alive holder
    that already computes it, or is routed along a shortest augmenting path (Dijkstra with
    Johnson potentials); successive shortest paths from a min-cost flow keep it min-cost.
    When no path exists the depth rises and augmenting resumes from the surviving zero-cost
    assignment (an incremental raise). Only a rejoin that can lower the depth, or a restart,
    run the full solve (greedy zero-cost assignment plus successive shortest paths, depth
    searched upward from ``ceil(n_types / n_alive)``). Every decision equals :func:`solve` on
    the same state in status, depth and moves.

    Thread safety: one controller may be shared by threads. Each call (events, snapshots and
    every state property) runs under the controller's lock in the C++ core, without the GIL,
    so it sees the state between two events, never during one; concurrent events are
    serialised in an unspecified order. Inputs are copied before the lock is taken, so a
    caller may even mutate its array meanwhile. The state properties (``stacks``,
    ``assignment``, ``alive``, ``load``) return read-only copies taken under the lock, each
    consistent on its own; read ``events`` before and after to detect an event in between.
    A decision's ``assignment`` is returned only while no later event has been decided.

    Limits: ``n_groups * height < 2**31``; move costs in ``[0, 2**40]`` with
    ``n_groups * height * max(move_cost) <= 2**56``, so no total overflows int64.

    References
    ----------
    Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
    Pretraining Systems with 100k+ GPUs", ICML 2026, arXiv:2603.00357.

    Examples
    --------
    >>> from spare_fast import Controller, Layout
    >>> ctl = Controller(Layout.cyclic(6, 3))
    >>> d = ctl.fail(2)
    >>> d.status.name, d.depth, d.moves, d.patch.tolist()
    ('OK', 2, 0, [[2, 1]])
    >>> ctl.fail([]).phase
    0
    """

    __slots__ = ("_core", "_layout", "__weakref__")

    def __init__(
        self, layout: Layout | npt.ArrayLike, *, move_cost: npt.ArrayLike | None = None
    ) -> None:
        if not isinstance(layout, Layout):
            layout = Layout.from_stacks(layout)
        cost = _move_cost_array(move_cost, layout.stacks.shape)
        self._core = _core.Controller(layout.stacks, cost)
        self._layout = layout

    # -- events -------------------------------------------------------------------------------
    def _groups(self, groups: GroupIds) -> np.ndarray:
        return index_array("groups", groups, self._core.n_groups)

    def fail(self, groups: GroupIds) -> Decision:
        """Mark ``groups`` failed and decide.

        Raises
        ------
        IndexError
            A group id out of range.
        ValueError
            A group that is already dead, or a repeated id. The state is unchanged.
        """
        return Decision._make(self._core.fail(self._groups(groups)), owner=self)

    def rejoin(self, groups: GroupIds) -> Decision:
        """Bring repaired ``groups`` back (no global restart) and decide; the depth may fall.

        Raises
        ------
        IndexError
            A group id out of range.
        ValueError
            A group that is alive, or a repeated id. The state is unchanged.
        """
        return Decision._make(self._core.rejoin(self._groups(groups)), owner=self)

    def restart(self) -> Decision:
        """Global restart: every group alive, the layout's original stacks, the initial depth."""
        return Decision._make(self._core.restart(), owner=self)

    # -- state --------------------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        """The layout the controller was built on."""
        return self._layout

    @property
    def n_groups(self) -> int:
        """Number of groups N."""
        return int(self._core.n_groups)

    @property
    def n_types(self) -> int:
        """Number of shard types."""
        return int(self._core.n_types)

    @property
    def n_alive(self) -> int:
        """Number of alive groups."""
        return int(self._core.n_alive)

    @property
    def depth(self) -> int:
        """Current depth (0 while wiped out)."""
        return int(self._core.depth)

    @property
    def wiped_out(self) -> bool:
        """True between a wipe-out and the next restart (or a curing rejoin)."""
        return bool(self._core.wiped_out)

    @property
    def events(self) -> int:
        """Number of events decided so far."""
        return int(self._core.events)

    @property
    def alive(self) -> np.ndarray:
        """Read-only bool copy: ``alive[g]``."""
        return self._core.alive

    @property
    def stacks(self) -> np.ndarray:
        """Read-only int32 copy ``(n_groups, height)``: each group's current order."""
        return self._core.stacks

    @property
    def assignment(self) -> np.ndarray:
        """Read-only int32 copy: provider group per type, -1 while wiped out."""
        return self._core.assignment

    @property
    def load(self) -> np.ndarray:
        """Read-only int32 copy: number of types each group provides."""
        return self._core.load

    # -- persistence --------------------------------------------------------------------------
    def snapshot(self, *, key: bytes | None = None) -> bytes:
        """The exact state as bytes, with the layout (kind and seed included); see :meth:`restore`.

        Parameters
        ----------
        key : bytes, optional
            A secret key: the snapshot then carries an HMAC-SHA256 tag over all of its bytes,
            and :meth:`restore` accepts it only with the same key.

        Notes
        -----
        Without a key the snapshot is checksummed against accidental corruption, and
        :meth:`restore` re-derives and checks every invariant, so no blob yields a state the
        controller could not reach. The MAC also protects what no check can derive (the event
        count, the layout's kind and seed, a reachable but different state) against anyone
        who can write the stored bytes but does not know the key. It does not hide the
        contents, and it does not stop the replay of an older snapshot made with the same key.
        """
        blob = self._core.snapshot(meta=_layout_meta(self._layout))
        if key is None:
            return blob
        body = _MAC_MAGIC + blob
        return _MAC_MAGIC + hmac.new(_key_bytes(key), body, hashlib.sha256).digest() + blob

    @classmethod
    def restore(cls, data: bytes, *, key: bytes | None = None) -> Controller:
        """Rebuild a controller from :meth:`snapshot` bytes.

        Parameters
        ----------
        data : bytes
            The snapshot.
        key : bytes, optional
            The key the snapshot was made with; required for a keyed snapshot, refused for an
            unkeyed one.

        Raises
        ------
        TypeError
            ``data`` or ``key`` is not bytes.
        ValueError
            Corrupted, truncated or inconsistent data, a wrong key or a missing one (never a
            crash; the check re-derives the initial decision, the holder counts, the loads,
            the wiped-out flag and the minimal depth).
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        data = bytes(data)
        signed = data.startswith(_MAC_MAGIC)
        if key is not None:
            k = _key_bytes(key)
            if not signed or len(data) < len(_MAC_MAGIC) + _MAC_SIZE:
                raise ValueError("snapshot: a key was given but the snapshot is not keyed")
            tag = data[len(_MAC_MAGIC) : len(_MAC_MAGIC) + _MAC_SIZE]
            blob = data[len(_MAC_MAGIC) + _MAC_SIZE :]
            expected = hmac.new(k, _MAC_MAGIC + blob, hashlib.sha256).digest()
            if not hmac.compare_digest(tag, expected):
                raise ValueError("snapshot: HMAC-SHA256 mismatch (wrong key or modified data)")
            data = blob
        elif signed:
            raise ValueError("snapshot: the snapshot is keyed (HMAC-SHA256); pass its key")
        core, meta = _core.Controller.restore(data)
        self = cls.__new__(cls)
        self._core = core
        self._layout = _layout_from_meta(core.layout_stacks, meta)
        return self

    def __repr__(self) -> str:
        return (
            f"Controller(n_groups={self.n_groups}, n_types={self.n_types}, "
            f"n_alive={self.n_alive}, depth={self.depth}, wiped_out={self.wiped_out})"
        )

    # -- batch --------------------------------------------------------------------------------
    def fail_each(self, groups: GroupIds, stop_at_wipeout: bool = True) -> FailEach:
        """Fail ``groups`` one at a time, in order, in one C++ call.

        Parameters
        ----------
        groups : int or sequence of int
            Alive group ids, each at most once; event ``i`` is ``fail(groups[i])``.
        stop_at_wipeout : bool, optional
            Stop after the first wipe-out (that event included; later groups stay alive).
            With False every group is failed and the events after a wipe-out report it.

        Returns
        -------
        FailEach
            Per-event arrays ``status``, ``depth``, ``moves``, ``swaps``, ``full_solve``,
            ``seconds``, plus all patch rows ``patch`` ``(k, 2)`` with their ``patch_event``.

        Raises
        ------
        IndexError
            A group id out of range.
        ValueError
            A dead or repeated group id. Checked for the whole sequence first: the state is
            then unchanged.

        Notes
        -----
        Each event equals the single :meth:`fail` call, bit for bit (its ``seconds`` aside:
        each event is timed from the end of the one before it); what is saved is the Python
        call and the :class:`Decision` per event (one crossing, no per-event Python object),
        and the GIL is released for the whole sequence.

        Examples
        --------
        >>> from spare_fast import Controller, Layout
        >>> ctl = Controller(Layout.cyclic(6, 3))
        >>> out = ctl.fail_each([2, 3, 4])
        >>> out.depth.tolist(), out.status.tolist(), out.patch_event.tolist()
        ([2, 2, 0], [0, 0, 1], [0, 1])
        """
        # A private copy: the kernel reads the ids without the GIL, so no other thread holds them.
        ids = np.array(self._groups(groups), dtype=np.int32, copy=True)
        return fail_each_core(self._core, ids, stop_at_wipeout)


class SolveResult(Decision):
    """A :class:`Decision` from :func:`solve`, which also carries the reordered ``stacks``."""

    __slots__ = ("stacks",)
    stacks: np.ndarray


def solve(
    stacks: npt.ArrayLike | Layout, alive: npt.ArrayLike, *, move_cost: npt.ArrayLike | None = None
) -> SolveResult:
    """The stateless from-scratch ReCtlr decision.

    Parameters
    ----------
    stacks : array_like of int or Layout
        ``(n_groups, height)`` current per-group orders (the layout invariants must hold).
    alive : array_like of bool
        ``alive[g]`` for every group.
    move_cost : array_like of int, optional
        Per (group, layer) costs as in :class:`Controller` (default 1).

    Returns
    -------
    SolveResult
        The decision: status, phase, depth (minimal S*), assignment, moves (minimal at S*),
        patch (empty: no event), seconds, and the reordered ``stacks``.

    Notes
    -----
    Depth search from ``ceil(n_types / n_alive)`` upward; at each depth a greedy zero-cost
    assignment followed by successive shortest augmenting paths with Johnson potentials, which
    yields a min-cost flow when every type is covered and proves infeasibility otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_fast import Layout, solve
    >>> d = solve(Layout.cyclic(4, 2), np.array([True, False, True, True]))
    >>> d.depth, d.moves, d.assignment.tolist()
    (2, 0, [0, 0, 2, 2])
    >>> solve(Layout.cyclic(4, 2), np.array([True, False, False, True])).status.name
    'WIPEOUT'
    """
    arr = _stacks_array(stacks)
    alive_u8 = bool_array("alive", alive, length=arr.shape[0])
    cost = _move_cost_array(move_cost, arr.shape)
    core, assignment, new_stacks = _core.solve(arr, alive_u8, cost)
    result: SolveResult = SolveResult._make(core, assignment=assignment)
    result.stacks = new_stacks
    result._set_lost(arr, alive_u8, int(arr.max(initial=-1)) + 1)
    return result
