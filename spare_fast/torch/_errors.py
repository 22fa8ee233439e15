"""The exceptions a SPARe group's process can meet, and the exit code of each.

Every exception a user's loop can see from :class:`~spare_fast.torch.SpareGroup` is exported
from :mod:`spare_fast.torch`; each docstring says what to do. :func:`exit_code` maps them to
the process exit codes the examples use (:data:`EXIT_CODES`), so a supervisor (a shell script,
``torchrun``'s caller) can tell them apart.
"""

from __future__ import annotations

from spare_fast.torch._types import EventRecord

__all__ = [
    "EXIT_CODES",
    "AuthenticationError",
    "CheckpointError",
    "Excluded",
    "IdentityMismatch",
    "ProtocolError",
    "RunFinished",
    "Unneeded",
    "WipeOutError",
    "exit_code",
]


class CheckpointError(Exception):
    """A checkpoint file is unreadable: bad header, checksum mismatch, bad payload, or (with a
    run key) a MAC that does not verify.

    What to do: start from an older checkpoint (:meth:`Checkpoints.newest_valid` finds the
    newest one that verifies); a MAC that does not verify means the file was not written by
    this run's key holders.
    """


class ProtocolError(Exception):
    """The agreed quorum contradicts this process's state (a bug or a false death): fatal.

    What to do: end the process; the survivors mask it like a death, and a new process for
    the group may rejoin.
    """


class Excluded(Exception):
    """The survivors agreed a membership without this (live) process: it must stand down.

    Met by a process that was frozen or cut off long enough to be declared dead. What to do:
    end the process (exit code 3); start a new process for the group to rejoin.
    """


class Unneeded(Exception):
    """The epoch formed without this process: another process holds its group's place."""


class RunFinished(RuntimeError):
    """A replacement found the run finished before it was admitted.

    What to do: nothing; end the process normally (exit code 4: not a failure).
    """


class IdentityMismatch(Exception):
    """The groups of a run disagree on what must be equal (N, r, the layout, the seed, the
    ranks per group, the steps, the initial state), or a replacement's identity differs from
    the run's.

    Raised by :meth:`SpareGroup.start` before any step, in every group of the run (the
    message names the field and the groups that differ). What to do: fix the named setting
    so that every group starts the same run; nothing was trained.

    Attributes
    ----------
    field : str
        The first field that differs.
    """

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class AuthenticationError(Exception):
    """Data that must carry the run key's MAC does not verify (a process without the key, a
    forged or edited value), or this process was refused for want of the key.

    What to do: give every group (and any replacement) the same run key
    (``SPARE_FAST_RUN_KEY`` or ``SpareGroup(..., key_file=...)``); a refusal you did not
    cause means someone else reaches the run's ports.
    """


class WipeOutError(Exception):
    """The agreed membership leaves a shard type with no alive holder (a wipe-out).

    Raised by :meth:`SpareGroup.reduce`. No survivor can finish the step; the run restarts
    every group from a checkpoint (``SpareGroup(..., checkpoint_dir=...)`` writes them and
    :meth:`SpareGroup.start` takes one). :class:`~spare_fast.torch.SpareTrainer` does this by
    itself. What to do in an own loop: end every process (exit code 5) and start every group
    again from the newest valid checkpoint.

    Attributes
    ----------
    event : EventRecord
        The event that wiped out.
    """

    def __init__(self, event: EventRecord) -> None:
        super().__init__(
            f"groups {list(event.dead)} died at step {event.step}: a shard type has no alive "
            "holder (wipe-out); restart every group from the last checkpoint"
        )
        self.event = event


#: Exit code of each exception a user's loop can meet (checked in order: the first class that
#: matches wins). 1 stays the code of any other error.
EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (Excluded, 3),
    (RunFinished, 4),
    (Unneeded, 4),
    (WipeOutError, 5),
    (IdentityMismatch, 6),
    (AuthenticationError, 7),
    (ProtocolError, 8),
    (TimeoutError, 9),
    (CheckpointError, 10),
)


def exit_code(exc: BaseException) -> int:
    """The process exit code for ``exc`` (:data:`EXIT_CODES`; 1 for anything else).

    Examples
    --------
    >>> exit_code(Excluded("dropped")), exit_code(TimeoutError()), exit_code(KeyError())
    (3, 9, 1)
    """
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    return 1
