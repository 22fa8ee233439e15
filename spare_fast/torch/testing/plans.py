"""Planned faults: the plans tests, benchmarks and the examples hand to
:class:`~spare_fast.torch.testing.PlannedFaults` (kills and pauses sent by PID from outside)
and to a fault-injecting backend (spurious collective errors). Plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Fault", "Kill", "Stall", "parse_kill"]

_PHASES = ("compute", "allreduce")


@dataclass(frozen=True)
class Kill:
    """A planned SIGKILL of group ``group``'s worker at step ``step`` (a test fixture).

    Workers know nothing of planned kills: :class:`spare_fast.torch.testing.PlannedFaults`
    watches the progress the workers report (:meth:`~spare_fast.torch.SpareTrainer.workers`)
    from a thread of the launcher's process and sends SIGKILL to the worker's PID once it
    reports ``step`` and ``phase``: ``"compute"`` as soon as it has begun the step,
    ``"allreduce"`` once it reports its second bucket (the first one is reduced, so its peers
    are mid-collective). The signal travels from outside, so it lands at that point or a
    little after it. A kill fires once, at the group's first process.

    Parameters
    ----------
    group : int
        The victim group.
    step : int
        The step at which it dies.
    phase : {"compute", "allreduce"}, optional
        Where in the step it dies.

    Raises
    ------
    ValueError
        If ``phase`` is unknown or ``group``/``step`` is negative.

    Examples
    --------
    >>> Kill(2, 5, "allreduce")
    Kill(group=2, step=5, phase='allreduce')
    """

    group: int
    step: int
    phase: str = "compute"

    def __post_init__(self) -> None:
        if self.phase not in _PHASES:
            raise ValueError(f"phase = {self.phase!r} is not one of {_PHASES}")
        if int(self.group) < 0 or int(self.step) < 0:
            raise ValueError(f"Kill(group={self.group}, step={self.step}) needs both >= 0")


@dataclass(frozen=True)
class Fault:
    """Group ``group``'s all-reduce of step ``step`` reports a failure after it has completed.

    A test fixture: it reaches the workers only as :class:`spare_fast.torch.testing.Injector`,
    the test-only hook a worker consults after each completed all-reduce.

    Nobody dies: this is a spurious collective error on one rank (a timeout that fired late, a
    transient network error). The other members have completed the step and moved on, so the
    quorum that follows finds them one step ahead of ``group``; they roll back one step and all
    redo it. Fires once, in the group's first process.

    Parameters
    ----------
    group : int
        The group whose collective reports the error.
    step : int
        The step whose all-reduce it hits.

    Raises
    ------
    ValueError
        If ``group`` or ``step`` is negative.

    Examples
    --------
    >>> Fault(1, 3)
    Fault(group=1, step=3)
    """

    group: int
    step: int

    def __post_init__(self) -> None:
        if int(self.group) < 0 or int(self.step) < 0:
            raise ValueError(f"Fault(group={self.group}, step={self.step}) needs both >= 0")


@dataclass(frozen=True)
class Stall:
    """Group ``group``'s worker is suspended (SIGSTOP) for ``seconds`` at the start of ``step``.

    A test fixture: :class:`spare_fast.torch.testing.PlannedFaults` sends SIGSTOP by PID from
    outside and SIGCONT ``seconds`` later.

    A suspended process neither heartbeats nor answers collectives, but it is not dead: if
    the pause outlasts the heartbeat timeout, its watchdog kills it (SIGKILL) and the others
    agree a membership without it and carry on; a shorter pause is only a slow step. Fires
    once, in the group's first process.

    Parameters
    ----------
    group : int
        The group to suspend.
    step : int
        The step at whose start it is suspended.
    seconds : float
        Length of the pause.

    Raises
    ------
    ValueError
        If ``group`` or ``step`` is negative or ``seconds`` is not positive.

    Examples
    --------
    >>> Stall(2, 3, 6.0)
    Stall(group=2, step=3, seconds=6.0)
    """

    group: int
    step: int
    seconds: float

    def __post_init__(self) -> None:
        if int(self.group) < 0 or int(self.step) < 0 or not float(self.seconds) > 0:
            raise ValueError(
                f"Stall(group={self.group}, step={self.step}, seconds={self.seconds}) needs "
                "group, step >= 0 and seconds > 0"
            )


def parse_kill(text: str) -> Kill:
    """Parse ``WORKER@STEP`` or ``WORKER@STEP:PHASE`` (PHASE ``compute`` or ``allreduce``).

    Parameters
    ----------
    text : str
        The command-line form of a kill.

    Returns
    -------
    Kill

    Raises
    ------
    ValueError
        If ``text`` does not have that form, naming it.

    Examples
    --------
    >>> parse_kill("2@5:allreduce")
    Kill(group=2, step=5, phase='allreduce')
    >>> parse_kill("1@3").phase
    'compute'
    """
    head, _, phase = text.partition(":")
    worker, at, step = head.partition("@")
    if not at or not worker.strip().isdigit() or not step.strip().isdigit():
        raise ValueError(f"kill = {text!r} is not WORKER@STEP or WORKER@STEP:PHASE")
    return Kill(int(worker), int(step), phase.strip() or "compute")
