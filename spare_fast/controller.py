"""ReCtlr, the SPARe controller: who computes which shard type, at what depth, with what moves.

The decisions are made by the C++ core (``spare_fast._core``); this module validates input,
holds the core object and presents decisions as :class:`Decision` values.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from spare_fast import _core
from spare_fast._batch import FailEach, fail_each_core
from spare_fast.layout import Layout

__all__ = ["Controller", "Decision", "Status", "solve"]

GroupIds = int | Sequence[int] | npt.NDArray[np.integer]


class Status(enum.IntEnum):
    """Outcome of a decision: the job continues (``OK``) or needs a global restart (``WIPEOUT``)."""

    OK = 0
    WIPEOUT = 1


class Decision:
    """One controller decision (SPEC section 3).

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
        int32 ``(k, 2)`` rows ``(type, group)``: types whose provider died in this event and the
        survivor that now provides them (the current step's patch compute).
    seconds : float
        Time the C++ core spent deciding.
    full_solve : bool
        Whether the decision needed a full optimisation (depth change, rejoin, restart).
    assignment : numpy.ndarray
        int32 provider group per type (-1 on wipe-out). For a controller decision this is a
        read-only view of the controller's live state, valid until its next event (no O(N)
        copy per event); reading it later raises ``RuntimeError``.
    """

    __slots__ = (
        "status",
        "phase",
        "depth",
        "moves",
        "swaps",
        "patch",
        "seconds",
        "full_solve",
        "_assignment",
        "_owner",
        "_event",
    )

    def __init__(
        self,
        raw: tuple,
        assignment: np.ndarray | None = None,
        owner: Controller | None = None,
        event: int = 0,
    ) -> None:
        status, phase, depth, moves, swaps, patch, seconds, full = raw
        self.status = Status(status)
        self.phase = int(phase)
        self.depth = int(depth)
        self.moves = int(moves)
        self.swaps = int(swaps)
        patch.setflags(write=False)
        self.patch = patch
        self.seconds = float(seconds)
        self.full_solve = bool(full)
        self._assignment = assignment
        self._owner = owner
        self._event = event

    @property
    def assignment(self) -> np.ndarray:
        if self._assignment is not None:
            return self._assignment
        owner = self._owner
        assert owner is not None
        if owner._core.events != self._event:
            raise RuntimeError(
                "this decision's assignment is stale: the controller has decided "
                f"{owner._core.events - self._event} more event(s) since; copy "
                "decision.assignment right after the call if you need to keep it"
            )
        return owner.assignment

    @property
    def ok(self) -> bool:
        """True when the status is ``Status.OK``."""
        return self.status is Status.OK

    def __repr__(self) -> str:
        return (
            f"Decision(status={self.status.name}, phase={self.phase}, depth={self.depth}, "
            f"moves={self.moves}, patch={len(self.patch)} rows, seconds={self.seconds:.3g})"
        )


def _stacks_array(stacks: npt.ArrayLike | Layout) -> np.ndarray:
    if isinstance(stacks, Layout):
        return stacks.stacks
    arr = np.asarray(stacks)
    if arr.ndim != 2:
        raise ValueError(f"stacks must be 2-D (n_groups, height), got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"stacks must hold integers, got dtype {arr.dtype}")
    big = np.abs(arr.astype(np.int64, copy=False)) > np.iinfo(np.int32).max if arr.size else arr
    if arr.size and big.any():
        g, l = np.argwhere(big)[0]
        raise ValueError(f"stacks[{g}, {l}] = {int(arr[g, l])} does not fit int32")
    return np.ascontiguousarray(arr, dtype=np.int32)


def _move_cost_array(move_cost: npt.ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if move_cost is None:
        return None
    arr = np.asarray(move_cost)
    if arr.shape != shape:
        raise ValueError(f"move_cost has shape {arr.shape}, expected the stacks' shape {shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"move_cost must hold integers, got dtype {arr.dtype}")
    if arr.size and arr.dtype.kind == "u" and arr.max() > np.iinfo(np.int64).max:
        g, l = np.argwhere(arr > np.iinfo(np.int64).max)[0]
        raise ValueError(f"move_cost[{g}, {l}] = {int(arr[g, l])} does not fit int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _group_ids(groups: GroupIds) -> np.ndarray:
    if isinstance(groups, (bool, np.bool_)):
        raise TypeError(f"groups = {groups!r} must be an int or a sequence of ints")
    arr = np.asarray(groups)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"groups must be an int or a 1-D sequence, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int32)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"group ids must be integers, got {groups!r} (dtype {arr.dtype})")
    if arr.dtype != np.int32:
        wide = arr.astype(np.int64)
        bad = (wide < np.iinfo(np.int32).min) | (wide > np.iinfo(np.int32).max)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise IndexError(f"groups[{i}] = {int(arr[i])} is out of range")
        arr = wide.astype(np.int32)
    return np.ascontiguousarray(arr)


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
    Only a depth change, a rejoin that can lower the depth, or a restart run the full solve
    (greedy zero-cost assignment plus successive shortest paths, depth searched upward from
    ``ceil(n_types / n_alive)``). Every decision equals :func:`solve` on the same state in
    status, depth and moves.

    One controller may be driven from several threads (calls are serialised); the C++ core
    runs without the GIL.

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

    __slots__ = ("_core", "_layout", "_lock", "__weakref__")

    def __init__(
        self, layout: Layout | npt.ArrayLike, *, move_cost: npt.ArrayLike | None = None
    ) -> None:
        if not isinstance(layout, Layout):
            layout = Layout.from_stacks(layout)
        cost = _move_cost_array(move_cost, layout.stacks.shape)
        self._core = _core.Controller(layout.stacks, cost)
        self._layout = layout
        self._lock = threading.Lock()

    @classmethod
    def _wrap(cls, core: _core.Controller, layout: Layout) -> Controller:
        self = cls.__new__(cls)
        self._core = core
        self._layout = layout
        self._lock = threading.Lock()
        return self

    # -- events -------------------------------------------------------------------------------
    def _decision(self, raw: tuple) -> Decision:
        return Decision(raw, owner=self, event=self._core.events)

    def fail(self, groups: GroupIds) -> Decision:
        """Mark ``groups`` failed and decide.

        Raises
        ------
        IndexError
            A group id out of range.
        ValueError
            A group that is already dead, or a repeated id. The state is unchanged.
        """
        return self._decision(self._core.fail(_group_ids(groups)))

    def rejoin(self, groups: GroupIds) -> Decision:
        """Bring repaired ``groups`` back (no global restart) and decide; the depth may fall.

        Raises
        ------
        IndexError
            A group id out of range.
        ValueError
            A group that is alive, or a repeated id. The state is unchanged.
        """
        return self._decision(self._core.rejoin(_group_ids(groups)))

    def restart(self) -> Decision:
        """Global restart: every group alive, the layout's original stacks, the initial depth."""
        return self._decision(self._core.restart())

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
        """Read-only live bool view: ``alive[g]``."""
        return self._core.alive

    @property
    def stacks(self) -> np.ndarray:
        """Read-only live int32 view ``(n_groups, height)``: each group's current order."""
        return self._core.stacks

    @property
    def assignment(self) -> np.ndarray:
        """Read-only live int32 view: provider group per type, -1 while wiped out."""
        return self._core.assignment

    @property
    def load(self) -> np.ndarray:
        """Read-only live int32 view: number of types each group provides."""
        return self._core.load

    # -- persistence --------------------------------------------------------------------------
    def snapshot(self) -> bytes:
        """The exact state as bytes (checksummed); see :meth:`restore`."""
        return self._core.snapshot()

    @classmethod
    def restore(cls, data: bytes) -> Controller:
        """Rebuild a controller from :meth:`snapshot` bytes.

        Raises
        ------
        TypeError
            ``data`` is not bytes.
        ValueError
            Corrupted, truncated or inconsistent data (never a crash).
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        core = _core.Controller.restore(bytes(data))
        return cls._wrap(core, Layout(np.array(core.initial_stacks), kind="custom"))

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
        Each event equals the single :meth:`fail` call, bit for bit; what is saved is the
        Python call and the :class:`Decision` per event (one crossing, no per-event Python
        object), and the GIL is released for the whole sequence.

        Examples
        --------
        >>> from spare_fast import Controller, Layout
        >>> ctl = Controller(Layout.cyclic(6, 3))
        >>> out = ctl.fail_each([2, 3, 4])
        >>> out.depth.tolist(), out.status.tolist(), out.patch_event.tolist()
        ([2, 2, 0], [0, 0, 1], [0, 1])
        """
        return fail_each_core(self._core, _group_ids(groups), stop_at_wipeout)


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
    alive_arr = np.asarray(alive)
    if alive_arr.ndim != 1:
        raise ValueError(f"alive must be 1-D, got shape {alive_arr.shape}")
    if alive_arr.shape[0] != arr.shape[0]:
        raise ValueError(
            f"alive has length {alive_arr.shape[0]}, expected n_groups = {arr.shape[0]}"
        )
    if alive_arr.dtype != np.bool_:
        if alive_arr.size and alive_arr.dtype.kind not in "iub":
            raise TypeError(f"alive must be booleans, got dtype {alive_arr.dtype}")
        bad = (alive_arr != 0) & (alive_arr != 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"alive[{i}] = {alive_arr[i]} is not a boolean")
    alive_u8 = np.ascontiguousarray(alive_arr, dtype=np.uint8)
    cost = _move_cost_array(move_cost, arr.shape)
    raw, assignment, new_stacks = _core.solve(arr, alive_u8, cost)
    assignment.setflags(write=False)
    new_stacks.setflags(write=False)
    result = SolveResult(raw, assignment=assignment)
    result.stacks = new_stacks
    return result
