"""Run epochs in the store, and the checkpoint a restart after a wipe-out starts from.

A run's processes train in epochs: epoch 0 is the first start, and every restart after a
wipe-out begins the next. A wipe-out ends its epoch for good: the survivors mark it in the
store (``e{epoch}/wiped``) before :class:`~spare_fast.torch.WipeOutError` reaches the user's
loop. A process that starts on the run's lighthouse and store (:meth:`SpareGroup.start`) joins
the first epoch that is not wiped out: while that epoch is under way it is a replacement and
waits for admission; when nobody has formed it yet, every group's process forms it together.
So a user's own loop restarts after a wipe-out by starting every group again from
:func:`newest_checkpoint` on the same lighthouse and store, exactly as at the first start.
"""

from __future__ import annotations

import json
from typing import Any

from spare_fast.torch._checkpoint import Checkpoints

__all__ = ["mark_wiped", "newest_checkpoint", "run_epoch"]

#: At most this many epochs are looked at (a run restarts a handful of times).
MAX_EPOCHS = 100_000


def _wiped_key(epoch: int) -> str:
    return f"e{int(epoch)}/wiped"


def mark_wiped(store: Any, epoch: int, members: tuple[int, ...]) -> None:
    """Record that ``epoch`` ended in a wipe-out (``members``: its survivors)."""
    store.set(_wiped_key(epoch), json.dumps(sorted(int(g) for g in members)))


def run_epoch(store: Any) -> int:
    """The epoch a process starting now belongs to: the first one not wiped out."""
    epoch = 0
    while epoch < MAX_EPOCHS and store.check([_wiped_key(epoch)]):
        epoch += 1
    return epoch


def newest_checkpoint(folder: str) -> str | None:
    """The newest checkpoint in ``folder`` that verifies, or None (none there, or none valid).

    The file a restart after a wipe-out starts every group from: pass it to
    :meth:`SpareGroup.start` in every group's new process. Damaged files are skipped
    (:meth:`Checkpoints.newest_valid` lists them with the reason).

    Parameters
    ----------
    folder : str
        The ``checkpoint_dir`` the run's groups write to.

    Returns
    -------
    str or None

    Examples
    --------
    >>> newest_checkpoint("/nonexistent/folder") is None
    True
    """
    path, _ = Checkpoints(folder).newest_valid()
    return path
