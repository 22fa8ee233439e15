"""Type stubs for the compiled extension ``spare_fast._core`` (hand-written, see csrc/bindings.cpp).

The public API lives in ``spare_fast.graph`` and ``spare_fast.controller``; these are the typed
kernels they call. Arrays must be 1-D; int32/int64 inputs that are already C-contiguous pass
without a copy, other layouts and value-preserving integer dtypes are converted, anything else
is a TypeError.
"""

import enum
from typing import Any

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
) -> tuple[MinCostFlowStatus, int, int, npt.NDArray[np.int64]]: ...

# --- controller ----------------------------------------------------------------------------
# Not stubbed yet: names not declared above type as Any (an incomplete stub, PEP 484).

def __getattr__(name: str) -> Any: ...
