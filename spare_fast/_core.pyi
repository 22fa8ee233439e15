"""Type stubs for the compiled extension ``spare_fast._core`` (hand-written, see csrc/bindings.cpp).

The public API lives in ``spare_fast.graph`` and ``spare_fast.controller``; these are the typed
kernels they call. Arrays must be 1-D; int32/int64 inputs that are already C-contiguous pass
without a copy, other layouts and value-preserving integer dtypes are converted, anything else
is a TypeError.
"""

import enum

import numpy as np
import numpy.typing as npt

# --- graph ---------------------------------------------------------------------------------

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

# --- controller ---

_DecisionTuple = tuple[int, int, int, int, int, npt.NDArray[np.int32], float, bool]

class Controller:
    def __init__(
        self, stacks: npt.NDArray[np.int32], move_cost: npt.NDArray[np.int64] | None = ...
    ) -> None: ...
    def fail(self, groups: npt.NDArray[np.int32]) -> _DecisionTuple: ...
    def rejoin(self, groups: npt.NDArray[np.int32]) -> _DecisionTuple: ...
    def restart(self) -> _DecisionTuple: ...
    def snapshot(self) -> bytes: ...
    @staticmethod
    def restore(data: bytes) -> Controller: ...
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

def solve(
    stacks: npt.NDArray[np.int32],
    alive: npt.NDArray[np.uint8],
    move_cost: npt.NDArray[np.int64] | None = ...,
) -> tuple[_DecisionTuple, npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...

# -- Monte Carlo (register_montecarlo) ------------------------------------------------------
def _survived_failures(
    stacks: npt.ArrayLike,
    n_types: int,
    seed: int,
    first_trial: int,
    n_trials: int,
    threads: int = ...,
) -> npt.NDArray[np.int64]: ...
