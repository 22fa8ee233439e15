"""Type stubs for the compiled extension ``spare_fast._core`` (hand-written, see csrc/python/).

The public API lives in ``spare_fast.graph`` and ``spare_fast.controller``; these are the typed
kernels they call. Arrays are C-contiguous int32/int64 (uint8 flags); other layouts and
value-preserving dtypes are converted, anything else is a TypeError. The core copies every
input before it releases the GIL. tests/test_core_stubs.py checks these signatures against the
compiled module.
"""

import enum

import numpy as np
import numpy.typing as npt

# --- graph (register_graph) --------------------------------------------------------------

class MinCostFlowStatus(enum.IntEnum):
    """Outcome of min_cost_flow."""

    OPTIMAL = 0
    INFEASIBLE = 1
    UNBALANCED = 2
    OVERFLOW = 3

def _hopcroft_karp(
    indptr: npt.NDArray[np.int32], indices: npt.NDArray[np.int32], n_right: int
) -> npt.NDArray[np.int32]: ...
def _max_b_matching(
    indptr: npt.NDArray[np.int32],
    indices: npt.NDArray[np.int32],
    capacity: npt.NDArray[np.int64],
) -> npt.NDArray[np.int32]: ...
def _min_cost_flow(
    n_nodes: int,
    tail: npt.NDArray[np.int32],
    head: npt.NDArray[np.int32],
    capacity: npt.NDArray[np.int64],
    cost: npt.NDArray[np.int64],
    supply: npt.NDArray[np.int64],
    method: int = 1,
) -> tuple[MinCostFlowStatus, int, int, npt.NDArray[np.int64]]: ...

# --- controller (register_controller) ---------------------------------------------------

class Decision:
    """One decision of the C++ core (read-only; made by Controller and solve)."""

    @property
    def status(self) -> int: ...
    @property
    def phase(self) -> int: ...
    @property
    def depth(self) -> int: ...
    @property
    def moves(self) -> int: ...
    @property
    def swaps(self) -> int: ...
    @property
    def patch(self) -> npt.NDArray[np.int32]: ...
    @property
    def seconds(self) -> float: ...
    @property
    def full_solve(self) -> bool: ...
    @property
    def event(self) -> int: ...

class Controller:
    def __init__(
        self, stacks: npt.NDArray[np.int32], move_cost: npt.NDArray[np.int64] | None = None
    ) -> None: ...
    def fail(self, groups: npt.NDArray[np.int32]) -> Decision: ...
    def rejoin(self, groups: npt.NDArray[np.int32]) -> Decision: ...
    def restart(self) -> Decision: ...
    def snapshot(self, meta: bytes = b"") -> bytes: ...
    @staticmethod
    def restore(data: bytes) -> tuple[Controller, bytes]: ...
    def _assignment_at(self, event: int) -> npt.NDArray[np.int32]: ...
    def _fail_each(
        self, groups: npt.NDArray[np.int32], stop_at_wipeout: bool = True
    ) -> tuple[
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.bool_],
        npt.NDArray[np.float64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int64],
    ]: ...
    @property
    def n_groups(self) -> int: ...
    @property
    def n_types(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def redundancy(self) -> int: ...
    @property
    def depth(self) -> int: ...
    @property
    def n_alive(self) -> int: ...
    @property
    def wiped_out(self) -> bool: ...
    @property
    def events(self) -> int: ...
    @property
    def alive(self) -> npt.NDArray[np.bool_]: ...
    @property
    def assignment(self) -> npt.NDArray[np.int32]: ...
    @property
    def load(self) -> npt.NDArray[np.int32]: ...
    @property
    def stacks(self) -> npt.NDArray[np.int32]: ...
    @property
    def initial_stacks(self) -> npt.NDArray[np.int32]: ...
    @property
    def layout_stacks(self) -> npt.NDArray[np.int32]: ...

def solve(
    stacks: npt.NDArray[np.int32],
    alive: npt.NDArray[np.uint8],
    move_cost: npt.NDArray[np.int64] | None = None,
) -> tuple[Decision, npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...

# --- Monte Carlo (register_montecarlo) ---------------------------------------------------
def _survived_failures(
    stacks: npt.NDArray[np.int32],
    n_types: int,
    seed: int,
    first_trial: int,
    n_trials: int,
    threads: int = 1,
) -> npt.NDArray[np.int64]: ...

# --- Layouts (register_layout) ---------------------------------------------------------------
def _pcg64_permutation(
    state_hi: int,
    state_lo: int,
    inc_hi: int,
    inc_lo: int,
    has_uint32: bool,
    uinteger: int,
    n: int,
) -> tuple[npt.NDArray[np.int64], int, int, bool, int]: ...
