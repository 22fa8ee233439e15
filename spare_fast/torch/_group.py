"""SpareGroup: SPARe inside the user's own training loop (one process = one SPARe group, or
one torchrun of K ranks running FSDP2 or tensor parallelism inside; see the documentation's
guide "Groups of many ranks", docs/guide/executor-many-ranks.md).

Each step the user calls :meth:`SpareGroup.reduce` (compute this group's types, all-reduce,
mask any failure inside the step, set ``grad = (1/N) * sum``), steps the optimizer and the
scheduler, and calls :meth:`SpareGroup.step_end` (commit; admit and heal waiting replacements
at the boundary). The group composes collaborators, each in its own module:

- :class:`~spare_fast.torch._membership.Membership`: heartbeat, quorums, the published view,
  admission of replacements;
- :class:`~spare_fast.torch._recovery.Recovery`: an agreed quorum turned into a rollback,
  controller events, patch computes, a new process group and a heal;
- :class:`~spare_fast.torch._healer.Healer`: the state transfer to a replacement;
- :class:`~spare_fast.torch._rollback.StepState`: the step in flight and its snapshot;
- :class:`~spare_fast.torch._step.Stepper`: a step's all-reduce until one succeeds, its commit
  and the checkpoints;
- :class:`~spare_fast.torch._compute.TypeSums` and
  :class:`~spare_fast.torch._buffer.ReduceLayout`: the partial sums and the reduced buffer's
  named fields;
- :class:`~spare_fast.torch._collective.Collectives`: the process group of each membership;
- :class:`~spare_fast.torch._decisions.Decider`: the controller and its history;
- :class:`~spare_fast.torch._observer.Observer`: what the group tells the outside.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

import numpy as np
import torch

from spare_fast.layout import Layout
from spare_fast.torch._auth import RunKey
from spare_fast.torch._buffer import ReduceLayout
from spare_fast.torch._checkpoint import Checkpoints
from spare_fast.torch._collective import Collectives
from spare_fast.torch._compute import ComputeFn, TypeSums
from spare_fast.torch._decisions import Decider
from spare_fast.torch._errors import WipeOutError
from spare_fast.torch._healer import Healer
from spare_fast.torch._ledger import Ledger
from spare_fast.torch._observer import Observer, Observers
from spare_fast.torch._ranks import GroupMembership, Ranks
from spare_fast.torch._recovery import Recovery
from spare_fast.torch._release import on_exit, release_group
from spare_fast.torch._rollback import StepState
from spare_fast.torch._settings import env, resolve
from spare_fast.torch._step import Stepper
from spare_fast.torch._types import EventRecord, Phase, as_timedelta

__all__ = ["SpareGroup", "WipeOutError", "ComputeFn"]

#: DDP's default all-reduce bucket, ``bucket_cap_mb=25``.
DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024


class SpareGroup:
    """One SPARe group inside the user's training loop (the torchft ``Manager`` role).

    Parameters
    ----------
    model : torch.nn.Module
        This process's model; every group's initial weights must be equal (same seed), or the
        run starts from a checkpoint (:meth:`start`).
    optimizer : torch.optim.Optimizer
        Its optimizer. The user steps it after :meth:`reduce`.
    layout : spare_fast.Layout
        Which shard types each group holds (``n_types == n_groups >= 2``); the same in every
        group.
    steps : int
        Number of optimizer steps of the run.
    group : int, optional
        This process's group; by default the ``REPLICA_GROUP_ID`` environment variable (the
        name torchft uses), else ``SPARE_FAST_GROUP``.
    scheduler : LRScheduler, optional
        Its LR scheduler, stepped by the user; its state is rolled back and healed with the
        optimizer's.
    seed : int, optional
        Before the forward of type ``t`` in step ``s`` the torch generator is seeded with
        :func:`~spare_fast.torch.type_seed` ``(seed, s, t)``, so dropout depends only on
        ``(seed, s, t)``.
    lighthouse : str, optional
        The torchft lighthouse (``http://HOST:PORT``); by default ``TORCHFT_LIGHTHOUSE``.
    store : str, optional
        ``HOST:PORT`` of the run's ``TCPStore`` (``spare-fast lighthouse`` serves one); by
        default ``SPARE_FAST_STORE``, else ``MASTER_ADDR:MASTER_PORT``. Under ``torchrun`` the
        latter point at torchrun's own per-group store, so set ``SPARE_FAST_STORE`` there.
    bind : str, optional
        Local address the collectives bind to (``127.0.0.2``); by default
        ``SPARE_FAST_BIND``, else the host name's address (gloo's default).
    backend : {"gloo"} or callable, optional
        The collective backend of each agreed membership: ``"gloo"`` (CPU), or a factory
        ``backend(store, rank, size, timeout) -> ProcessGroup`` whose ``allreduce`` and
        ``broadcast`` take the CPU tensors SPARe reduces. NCCL is not offered: it is untested
        here (no GPU).
    checkpoint_dir : str, optional
        Where the lowest member writes checkpoints (atomic, checksummed); none by default.
    checkpoint_every : int, optional
        Checkpoint period in committed steps (also before step 0 and after the last step).
    collective_timeout, heartbeat_interval, quorum_timeout : float or timedelta, optional
        Gloo timeout of one collective; heartbeat period; longest wait for one quorum (and for
        the run to form, or a replacement to be admitted).
    bucket_numel : int, optional
        All-reduce bucket size in numbers (DDP's 25 MiB by default).
    observers : iterable of Observer, optional
        Told each phase this process enters and each commit, rollback, rejoin and wipe-out
        (:class:`~spare_fast.torch.Observer`); the way to watch or record a group from outside.
    verbose : bool, optional
        The lowest member prints one line per committed step.
    run_key : str or bytes, optional
        The run's shared secret (by default ``SPARE_FAST_RUN_KEY``); ``key_file`` names a file
        holding it instead. With it, membership data, heal payloads and checkpoints carry an
        HMAC-SHA256 and a process without it is never admitted; without it a warning is
        logged once (see the trust model in the docs).
    ledger : str, optional
        A folder (or a ``.jsonl`` file) for this process's step ledger: one JSON line per
        committed step (``spare-fast ledger check DIR`` verifies a run's ledgers).
    ordered_sum : bool, optional
        Add the N types' gradients in type order (0, 1, ..., N - 1) on every member, so that
        the result is the same to the last bit whichever group computed which type (before and
        after a failure, whatever the ring's order). Costs an all-reduce N times as long: each
        type travels in a slot of its own. Off by default: the groups' partial sums are then
        added in the all-reduce's own order, equal to the ordered sum within rounding. Every
        group of a run must set the same value (it is part of the run identity).
    join_timeout : float or timedelta, optional
        How long the run's formation waits for every group (half of ``quorum_timeout`` by
        default). Past it, the groups present form the run without the others when they are
        at least ``min_groups`` and hold every shard type between them; the missing groups
        count as failed at step 0 (the controller decides before the first step) and rejoin
        through admission when their processes arrive. Every group should set the same
        value.
    min_groups : int, optional
        The fewest groups that form the run without the others (the role of torchft's
        ``min_replicas``): a majority, ``N // 2 + 1``, by default, and never fewer, so that
        two disjoint sets of groups can never both form it.

    Raises
    ------
    TypeError
        If ``model``, ``optimizer`` or ``layout`` is of the wrong type, or ``backend`` is
        neither ``"gloo"`` nor callable.
    ValueError
        If the group, an address, a count or a timeout is invalid (the message names it).

    Notes
    -----
    One decision point per step, as in torchft: failures are recorded as values
    (:attr:`events`), not thrown through the training loop; only a wipe-out raises
    (:class:`WipeOutError`). Cost per step: one all-reduce of ``P + B + 2`` numbers
    (parameters, buffer numbers, the loss, and a join slot through which the lowest member
    tells the others that a replacement waits, so that all admit it at the same step
    boundary; ``N * (P + B + 1) + 1`` numbers with ``ordered_sum``), a copy of the state
    before the update (for the one-step rollback), and, off the step's path, a ``TCPStore``
    read every 50 ms by a thread of the lowest member.

    Examples
    --------
    The loop of a worker started by ``torchrun`` (see ``examples/train_transformer.py``):

    >>> group = SpareGroup(model, optim, layout, steps, scheduler=sched)  # doctest: +SKIP
    >>> group.start()  # doctest: +SKIP
    >>> while group.step < steps:  # doctest: +SKIP
    ...     loss = group.reduce(compute)  # compute(step, t) -> loss of type t
    ...     torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    ...     optim.step()
    ...     sched.step()
    ...     group.step_end()
    """

    def __init__(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        layout: Layout,
        steps: int,
        *,
        group: int | None = None,
        scheduler: Any = None,
        seed: int = 0,
        lighthouse: str | None = None,
        store: str | None = None,
        bind: str | None = None,
        backend: str | Callable[..., Any] = "gloo",
        checkpoint_dir: str | None = None,
        checkpoint_every: int = 10,
        keep_checkpoints: int = 3,
        collective_timeout: timedelta | float = 10.0,
        heartbeat_interval: timedelta | float = 0.1,
        quorum_timeout: timedelta | float = 60.0,
        quorum_poll: timedelta | float = 1.0,
        bucket_numel: int | None = None,
        observers: Iterable[Observer] = (),
        verbose: bool = False,
        run_key: str | bytes | None = None,
        key_file: str | None = None,
        ledger: str | None = None,
        ordered_sum: bool = False,
        join_timeout: timedelta | float | None = None,
        min_groups: int | None = None,
    ) -> None:
        settings = resolve(
            model, optimizer, layout, steps, group, lighthouse, store, backend,
            checkpoint_every, bucket_numel, (heartbeat_interval, quorum_timeout, quorum_poll),
            ordered_sum, (join_timeout, min_groups),
        )  # fmt: skip
        me = settings.group
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.layout = layout
        self.steps = int(steps)
        self.me = me
        self.seed = int(seed)
        self.auth = RunKey.resolve(run_key, key_file)
        self.auth.warn_if_unauthenticated()
        self.ledger = None if ledger is None else Ledger(ledger, me, layout.n_types)
        self.observer = Observers([*observers, *([self.ledger] if self.ledger else [])])
        self.checkpoint_every = int(checkpoint_every)
        self.ckpts = (
            None
            if checkpoint_dir is None
            else Checkpoints(checkpoint_dir, keep_checkpoints, self.auth.secret)
        )
        self.quorum_timeout = settings.quorum_timeout
        self.verbose = bool(verbose)
        self.n_types = layout.n_types
        self.params = list(model.parameters())
        self.ordered_sum = ordered_sum
        self.reduce_layout = ReduceLayout(
            self.params,
            list(model.buffers()),
            self.params[0].dtype,
            slots=layout.n_types if ordered_sum else 1,
        )
        itemsize = torch.empty(0, dtype=self.reduce_layout.dtype).element_size()
        self.ranks = Ranks(me)
        self.verbose = self.verbose and self.ranks.rank == 0
        self.ranks.refuse_checkpoints(checkpoint_dir)
        self.decider = Decider(layout, me)
        held = frozenset(int(t) for t in layout.stacks[me])
        self.sums = TypeSums(model, self.reduce_layout, me, held, self.seed)
        me_ref = weakref.ref(self)  # the membership must not keep the group alive

        def progress() -> tuple[int, bool]:
            group = me_ref()
            return (0, True) if group is None else (group.committed, group.has_state)

        self.membership = GroupMembership(self.ranks, settings, progress, self.auth)
        self.collectives = Collectives(
            backend,
            as_timedelta(collective_timeout, "collective_timeout"),
            bind or env("SPARE_FAST_BIND"),
            int(bucket_numel or max(DEFAULT_BUCKET_BYTES // itemsize, 1)),
            self.ranks.suffix,
        )
        # Whatever this group starts is released by close(), or when it is collected, or at
        # interpreter exit at the latest (see _release).
        self._release = on_exit(
            self,
            functools.partial(
                release_group, self.membership, self.collectives, self.ranks, self.ledger
            ),
        )
        self.healer = Healer(self.collectives, self.auth)
        self.recovery = Recovery(self)
        self.stepper = Stepper(self)
        self.committed = 0
        self.has_state = True
        self.join_seen = 0
        self.cur: StepState | None = None
        self.last: StepState | None = None
        self._pending: tuple[StepState, torch.Tensor] | None = None
        self._started = False
        self._closed = False

    # ------------------------------------------------------------------ public state
    @property
    def step(self) -> int:
        """The step the caller is working on: the number of steps committed so far."""
        return self.committed

    @property
    def depth(self) -> int:
        """The controller's current depth (0 while wiped out)."""
        return self.decider.depth

    @property
    def group(self) -> int:
        """This process's group."""
        return self.me

    @property
    def events(self) -> list[EventRecord]:
        """Membership events this process took part in, in order (failures and rejoins)."""
        return list(self.decider.events)

    @property
    def epoch(self) -> int:
        """The run's epoch (a restart from a checkpoint begins the next)."""
        return self.membership.epoch

    @property
    def members(self) -> tuple[int, ...]:
        """The groups of the current membership."""
        return self.membership.members

    def types_for_step(self) -> list[int]:
        """The shard types this group computes in the current step (before any patch).

        After :meth:`reduce` returned it names what this group computed, patch types included.

        Returns
        -------
        list of int
        """
        if self._pending is not None:
            return sorted(self._pending[0].computed)
        if self.cur is not None:
            return sorted(self.cur.computed)
        return [int(t) for t in np.flatnonzero(self.decider.assignment() == self.me)]

    def _report(self, phase: Phase, bucket: int = 0) -> None:
        self.observer.on_phase(self.me, self.epoch, max(self.committed, 0), phase, bucket)

    def _write(self, record: dict[str, Any]) -> None:
        self.observer.on_record(record)

    # ------------------------------------------------------------------ start
    def start(self, checkpoint: str | None = None) -> SpareGroup:
        """Connect, then join the run: form it with every group, or rejoin it under way.

        A process whose run is already under way (its group died and this process replaces
        it) waits until the survivors admit it at a step boundary and receives the current
        state from a live peer; :attr:`step` then says where the run is.

        Parameters
        ----------
        checkpoint : str, optional
            A checkpoint file to start from (every group of a fresh start gives the same one).

        Returns
        -------
        SpareGroup
            ``self``.

        Raises
        ------
        RuntimeError
            If called twice, or this group is alive in another process.
        TimeoutError
            If the run does not form (or admit this process) within ``quorum_timeout``.
        """
        return self._start(checkpoint, "any")

    def _start(self, checkpoint: str | None, how: str) -> SpareGroup:
        """``how``: ``"any"`` (form or rejoin, as found), ``"form"`` or ``"rejoin"``."""
        if self._started:
            raise RuntimeError("SpareGroup.start() was already called")
        self._started = True
        try:
            self.membership.connect()
            self.collectives.connect()
            self.recovery.enter(checkpoint, how)
        except BaseException:
            # A refusal, a timeout, Ctrl-C: nothing of it may outlive the failed start.
            self.close()
            raise
        return self

    def close(self) -> None:
        """Release everything this group started: stop heartbeating, join its threads, end its
        watchdog, drop its process groups and its store and lighthouse clients.

        Idempotent. Also run by ``with SpareGroup(...) as group:`` on leaving the block (after
        an exception too), by :meth:`start` when it fails, and, for a script that never calls
        it, when the group is collected or at interpreter exit; so every path out of a
        script ends with the exit code the script chose.
        """
        self._closed = True
        self._release()

    def __enter__(self) -> SpareGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the step
    def reduce(self, compute: ComputeFn) -> float:
        """Compute this group's types, all-reduce, mask failures; set ``grad = (1/N) * sum``.

        Parameters
        ----------
        compute : callable
            ``compute(step, shard_type) -> loss``: the forward pass of one shard type of step
            ``step`` (its own batch, e.g. from :class:`~spare_fast.torch.ShardSampler`).
            SPARe seeds the torch generator, resets the module buffers and calls ``backward``
            on the returned loss; it is called for this group's types and for any patch type
            that falls to it after a failure.

        Returns
        -------
        float
            The step's global loss ``(1/N) * sum`` of the N per-type losses.

        Raises
        ------
        RuntimeError
            If :meth:`start` was not called, or the previous ``reduce`` was not followed by
            :meth:`step_end`.
        WipeOutError
            If a failure leaves a shard type with no alive holder.
        """
        if not self._started or self._closed:
            raise RuntimeError("call SpareGroup.start() first (and not after close())")
        if self._pending is not None:
            raise RuntimeError("reduce() called twice: call step_end() after each reduce()")
        if not callable(compute):
            raise TypeError(f"compute = {compute!r} is not callable")
        if self.committed >= self.steps and self.cur is None:
            raise RuntimeError(f"all {self.steps} steps are committed")
        return self.stepper.reduce(compute)

    def step_end(self) -> None:
        """Commit the step the last :meth:`reduce` completed (after the optimizer step).

        At this boundary waiting replacements are admitted and healed; after the last step the
        members agree that every one of them has committed it (a member that has not makes
        the others roll back that step, and :attr:`step` falls back to it).

        Raises
        ------
        RuntimeError
            If no :meth:`reduce` precedes it.
        WipeOutError
            If deaths found at this boundary leave a shard type with no alive holder.
        """
        if self._pending is None:
            raise RuntimeError("step_end() without a reduce(): call reduce(compute) first")
        self.stepper.end()
