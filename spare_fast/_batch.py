"""Batch controller calls: a whole failure sequence in one C++ call.

:meth:`spare_fast.Controller.fail_each` is the public entry point; this module holds its result
type and the conversion around the compiled ``Controller._fail_each``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["FailEach"]


class FailEach(NamedTuple):
    """Decisions of :meth:`spare_fast.Controller.fail_each`, column-wise.

    Entry ``i`` of every per-event array belongs to event ``i`` (the failure of ``groups[i]``).

    Attributes
    ----------
    status : numpy.ndarray
        int32 per event: ``Status.OK`` (0) or ``Status.WIPEOUT`` (1).
    depth : numpy.ndarray
        int32 per event: the minimal depth S* (0 on wipe-out).
    moves : numpy.ndarray
        int64 per event: minimal total move cost at S*.
    swaps : numpy.ndarray
        int64 per event: (type, group) pairs swapped into a top layer.
    full_solve : numpy.ndarray
        bool per event: whether the full optimisation ran.
    seconds : numpy.ndarray
        float64 per event: wall time of the event in the C++ loop, from the end of the one
        before it (or the call's start) to its own end.
    patch : numpy.ndarray
        int32 ``(k, 2)``: the patch rows ``(type, group)`` of all events, in event order.
    patch_event : numpy.ndarray
        int64 ``(k,)``: the event index of each patch row.
    """

    status: np.ndarray
    depth: np.ndarray
    moves: np.ndarray
    swaps: np.ndarray
    full_solve: np.ndarray
    seconds: np.ndarray
    patch: np.ndarray
    patch_event: np.ndarray

    @property
    def events(self) -> int:
        """Number of events decided."""
        return int(self.status.size)

    @property
    def wiped_out(self) -> bool:
        """True when the last event decided was a wipe-out."""
        return bool(self.status.size) and int(self.status[-1]) == 1


def fail_each_core(core: Any, groups: np.ndarray, stop_at_wipeout: Any) -> FailEach:
    """Runs ``core._fail_each`` on validated int32 ids (see :meth:`Controller.fail_each`)."""
    if not isinstance(stop_at_wipeout, (bool, np.bool_)):
        raise TypeError(f"stop_at_wipeout = {stop_at_wipeout!r} must be a bool")
    return FailEach(*core._fail_each(groups, bool(stop_at_wipeout)))
