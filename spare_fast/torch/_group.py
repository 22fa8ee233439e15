"""SpareGroup: SPARe inside the user's own training loop (one process = one SPARe group).

The user's script is the worker. It builds its model, optimizer, LR scheduler and data, makes
a :class:`SpareGroup`, and each step calls :meth:`SpareGroup.reduce` with a callback that
computes one shard type's loss, then clips, steps the optimizer and the scheduler as usual, and
calls :meth:`SpareGroup.step_end`. Everything SPARe needs happens inside those two calls:

- ``reduce(compute)``: computes the types the current decision assigns to this group (its
  top ``depth`` layers), all-reduces the sums of the alive groups and sets every parameter's
  ``grad`` to ``(1/N) * sum`` over the N types. When the collective fails it asks the torchft
  lighthouse for a quorum, turns the membership change into a controller event (every survivor
  runs the same deterministic controller on the same quorums), recomputes the patch types that
  fell to it with the same callback, rebuilds the process group and retries the same step. A
  member that had completed the previous step while a peer had not restores the state it kept
  from before that step (the one-step rollback), and ``reduce`` then returns that step's
  gradients again: :attr:`SpareGroup.step` says which step the caller is completing.
- ``step_end()``: commits the step; at a step boundary it admits replacement processes that
  are waiting to rejoin (the survivors call ``Controller.rejoin``, the depth may fall) and
  heals them with the current parameters, optimizer and scheduler state, broadcast from a live
  peer over the new process group.

A replacement is a new process started for a dead group anywhere (another shell, another host,
a launcher after a repair delay): its :meth:`SpareGroup.start` finds the run under way, waits
for the survivors to admit it at a step boundary, and receives the state from a peer. The
controller's event history travels with the state, so the replacement's controller is the
survivors' controller.
"""

from __future__ import annotations

import copy
import io
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from spare_fast.controller import Controller, Status
from spare_fast.layout import Layout
from spare_fast.torch._checkpoint import Checkpoints
from spare_fast.torch._types import EventRecord, Phase, as_timedelta, type_seed

__all__ = ["SpareGroup", "WipeOutError", "ComputeFn"]

#: ``compute(step, shard_type) -> loss``: the forward pass of one shard type (SPARe calls
#: ``backward`` on the returned scalar).
ComputeFn = Callable[[int, int], torch.Tensor]

#: DDP's default all-reduce bucket, ``bucket_cap_mb=25``.
DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024
#: Store key a waiting replacement increments; the lowest member reads it once per step.
JOIN_KEY = "join/count"


class ProtocolError(Exception):
    """The agreed quorum contradicts this process's state (a bug or a false death): fatal."""


class Excluded(Exception):
    """The survivors agreed a membership without this (live) process: it must stand down."""


class Unneeded(Exception):
    """The epoch formed without this process: another process holds its group's place."""


class RunFinished(RuntimeError):
    """A replacement found the run finished before it was admitted."""


class WipeOutError(Exception):
    """The agreed membership leaves a shard type with no alive holder (a wipe-out).

    Raised by :meth:`SpareGroup.reduce`. No survivor can finish the step; the run restarts
    every group from a checkpoint (``SpareGroup(..., checkpoint_dir=...)`` writes them and
    :meth:`SpareGroup.start` takes one). :class:`~spare_fast.torch.SpareTrainer` does this by
    itself.

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


@dataclass
class _StepState:
    """One step in flight: what this process computed and what it needs to redo it."""

    step: int
    depth: int
    comp: np.ndarray  # comp[t]: the group whose partial sum holds type t this step
    local: torch.Tensor  # gradient sums, buffer deltas, loss sum, join slot (flattened)
    computed: list[int]
    buffers: list[torch.Tensor]  # module buffers at the start of the step
    pre_model: dict[str, Any]
    pre_optim: dict[str, Any]
    pre_sched: dict[str, Any] | None
    events: list[EventRecord] = field(default_factory=list)


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _host_port(text: str, what: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what} = {text!r} is not HOST:PORT with PORT in [1, 65535]")
    return host.strip("[]"), int(port)


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
    verbose : bool, optional
        The lowest member prints one line per committed step.

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
    boundary), a copy of the state before the update (for the one-step rollback), and one
    ``TCPStore`` read by the lowest member.

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
        verbose: bool = False,
    ) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model = {model!r} is not a torch.nn.Module")
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"optimizer = {optimizer!r} is not a torch.optim.Optimizer")
        if not isinstance(layout, Layout):
            raise TypeError(f"layout = {layout!r} is not a spare_fast.Layout")
        if layout.n_types != layout.n_groups or layout.n_groups < 2:
            raise ValueError(
                f"layout with n_groups = {layout.n_groups}, n_types = {layout.n_types}: "
                "SpareGroup needs n_types == n_groups >= 2"
            )
        if int(steps) < 0:
            raise ValueError(f"steps = {steps} must be >= 0")
        if group is None:
            text = _env("REPLICA_GROUP_ID") or _env("SPARE_FAST_GROUP")
            if text is None:
                raise ValueError(
                    "group = None and neither REPLICA_GROUP_ID nor SPARE_FAST_GROUP set"
                )
            if not text.isdigit():
                raise ValueError(f"REPLICA_GROUP_ID = {text!r} is not a group number")
            group = int(text)
        if not 0 <= int(group) < layout.n_groups:
            raise ValueError(f"group = {group} is not in [0, {layout.n_groups})")
        lighthouse = lighthouse or _env("TORCHFT_LIGHTHOUSE")
        if lighthouse is None:
            raise ValueError("lighthouse = None and TORCHFT_LIGHTHOUSE is not set")
        if store is None:
            store = _env("SPARE_FAST_STORE")
            if store is None and _env("MASTER_ADDR") and _env("MASTER_PORT"):
                store = f"{_env('MASTER_ADDR')}:{_env('MASTER_PORT')}"
        if store is None:
            raise ValueError("store = None and neither SPARE_FAST_STORE nor MASTER_ADDR/PORT set")
        self.store_addr = _host_port(store, "store")
        _host_port(lighthouse.split("//", 1)[-1], "lighthouse")
        if not (backend == "gloo" or callable(backend)):
            raise TypeError(f"backend = {backend!r} is neither 'gloo' nor a callable factory")
        if int(checkpoint_every) < 1:
            raise ValueError(f"checkpoint_every = {checkpoint_every} must be >= 1")
        if bucket_numel is not None and int(bucket_numel) < 1:
            raise ValueError(f"bucket_numel = {bucket_numel} must be >= 1")
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.layout = layout
        self.steps = int(steps)
        self.me = int(group)
        self.seed = int(seed)
        self.lighthouse_addr = lighthouse
        self.bind = bind or _env("SPARE_FAST_BIND")
        self.backend = backend
        self.checkpoint_every = int(checkpoint_every)
        self.ckpts = (
            None if checkpoint_dir is None else Checkpoints(checkpoint_dir, keep_checkpoints)
        )
        self.collective_timeout = as_timedelta(collective_timeout, "collective_timeout")
        self.heartbeat_interval = as_timedelta(heartbeat_interval, "heartbeat_interval")
        self.quorum_timeout = as_timedelta(quorum_timeout, "quorum_timeout")
        self.quorum_poll = as_timedelta(quorum_poll, "quorum_poll")
        self.verbose = bool(verbose)
        self.n_types = layout.n_types
        self.held = frozenset(int(t) for t in layout.stacks[self.me])
        self.ctl = Controller(layout)
        self.history: list[tuple[str, list[int]]] = []  # controller calls since the last restart
        self.params = list(model.parameters())
        self.buffers = list(model.buffers())
        self.n_params = sum(p.numel() for p in self.params)
        self.n_buffers = sum(b.numel() for b in self.buffers)
        self.dtype = self.params[0].dtype
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        self.bucket_numel = int(bucket_numel or max(DEFAULT_BUCKET_BYTES // itemsize, 1))
        self.epoch = 0
        self.committed = 0
        self.has_state = True
        self.join_seen = 0
        self.cur: _StepState | None = None
        self.last: _StepState | None = None
        self._pending: tuple[_StepState, torch.Tensor] | None = None
        self.members: tuple[int, ...] = ()
        self.replicas: dict[int, str] = {}
        self.pg: Any = None
        self.prefix = ""
        self.replica_id = f"g{self.me}:{os.getpid()}"
        self._events: list[EventRecord] = []
        self._started = False
        self._closed = False
        self.store: Any = None
        self.lighthouse: Any = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    # ------------------------------------------------------------------ public state
    @property
    def step(self) -> int:
        """The step the caller is working on: the number of steps committed so far."""
        return self.committed

    @property
    def depth(self) -> int:
        """The controller's current depth (0 while wiped out)."""
        return int(self.ctl.depth)

    @property
    def group(self) -> int:
        """This process's group."""
        return self.me

    @property
    def events(self) -> list[EventRecord]:
        """Membership events this process took part in, in order (failures and rejoins)."""
        return list(self._events)

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
        return [int(t) for t in np.flatnonzero(np.asarray(self.ctl.assignment) == self.me)]

    # ------------------------------------------------------------------ hooks (launcher)
    def _report(self, phase: Phase, bucket: int = 0) -> None:
        """Progress report; the launcher's subclass writes it to shared memory."""

    def _write(self, record: dict[str, Any]) -> None:
        """Record of a commit, rollback or wipe-out; the launcher's subclass writes a file."""

    def _collective_error(self, step: int) -> bool:
        """Test hook: report a completed all-reduce as failed (the launcher's injector)."""
        return False

    def _parent_gone(self) -> bool:
        return False

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
        if self._started:
            raise RuntimeError("SpareGroup.start() was already called")
        self._started = True
        self._connect()
        if checkpoint is not None:
            self._load_checkpoint(checkpoint)
        if self.store.check([f"e{self.epoch}/formed"]):
            self._rejoin()
            return self
        try:
            self._join_all()
        except Unneeded:
            self._rejoin()
            return self
        if self.committed == 0 and checkpoint is None and self._lead():
            self._save_checkpoint()
        return self

    def _connect(self) -> None:
        from torchft.coordination import LighthouseClient

        host, port = self.store_addr
        self.store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=60))
        self.lighthouse = LighthouseClient(
            addr=self.lighthouse_addr, connect_timeout=timedelta(seconds=10)
        )
        self._device = (
            dist.ProcessGroupGloo.create_device(hostname=self.bind)
            if self.bind and self.backend == "gloo"
            else None
        )
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()

    def close(self) -> None:
        """Stop heartbeating and drop the process group (the process may then exit)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._drop_pg()

    def __enter__(self) -> SpareGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ membership
    def _heartbeat(self) -> None:
        from torchft.coordination import LighthouseClient

        client = LighthouseClient(addr=self.lighthouse_addr, connect_timeout=timedelta(seconds=10))
        while not self._stop.is_set():
            if self._parent_gone():
                os._exit(1)
            try:
                client.heartbeat(self.replica_id, timeout=timedelta(seconds=5))
            except Exception:  # noqa: BLE001 - a missed beat is retried; the lighthouse decides
                pass
            self._stop.wait(self.heartbeat_interval.total_seconds())

    def _data(self) -> dict[str, Any]:
        return {
            "group": self.me,
            "epoch": self.epoch,
            "committed": self.committed if self.has_state else -1,
            "state": self.has_state,
            "pid": os.getpid(),
        }

    def _quorum(self, shrink_only: bool, poll: float | None = None) -> Any:
        """Ask the lighthouse for the next quorum (see the module notes on what is checked)."""
        deadline = time.monotonic() + self.quorum_timeout.total_seconds()
        step = poll or self.quorum_poll.total_seconds()
        while True:
            if shrink_only:
                self._check_view()
            else:
                self._check_formed()
            wait = min(step, max(deadline - time.monotonic(), 0.001))
            try:
                return self.lighthouse.quorum(
                    replica_id=self.replica_id,
                    timeout=timedelta(seconds=wait),
                    step=max(self.committed, 0),
                    shrink_only=shrink_only,
                    data=self._data(),
                )
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise

    def _view(self) -> dict[str, Any] | None:
        key = f"e{self.epoch}/view"
        if not self.store.check([key]):
            return None
        return dict(json.loads(self.store.get(key).decode()))

    def _check_view(self) -> None:
        view = self._view()
        if view is not None and view["replicas"].get(str(self.me)) != self.replica_id:
            raise Excluded(f"epoch {self.epoch} members are now {view['members']}")

    def _check_formed(self) -> None:
        key = f"e{self.epoch}/formed"
        if self.members:  # admission quorums of a formed run: nothing to check
            return
        if self.store.check([key]):
            if self.replica_id not in json.loads(self.store.get(key).decode()):
                raise Unneeded()

    @staticmethod
    def _data_of(member: Any) -> dict[str, Any]:
        data = member.data
        return dict(json.loads(data) if isinstance(data, str) else data)

    def _valid(self, quorum: Any) -> dict[int, dict[str, Any]]:
        """Participants by group: current members under their own identity, and for each
        group outside the membership its waiting replacement (the lowest identity)."""
        out: dict[int, dict[str, Any]] = {}
        for m in sorted(quorum.participants, key=lambda m: str(m.replica_id)):
            d = self._data_of(m)
            d["replica_id"] = str(m.replica_id)
            g = int(d["group"])
            if int(d["epoch"]) != self.epoch:
                continue
            if g in self.members:
                if self.replicas.get(g) == d["replica_id"]:
                    out[g] = d
            elif g not in out:
                out[g] = d
        return out

    def _publish_view(self, needs: list[int]) -> None:
        view = {
            "members": list(self.members),
            "replicas": {str(g): r for g, r in self.replicas.items()},
            "prefix": self.prefix,
            "needs": needs,
        }
        self.store.set(f"e{self.epoch}/view", json.dumps(view))

    def _make_pg(self) -> None:
        self.pg = None
        rank = self.members.index(self.me)
        store = dist.PrefixStore(self.prefix + "/pg/", self.store)
        if callable(self.backend):
            self.pg = self.backend(store, rank, len(self.members), self.collective_timeout)
            return
        opts = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]  # stub lacks it
        opts._timeout = self.collective_timeout
        opts._devices = [
            self._device
            if self._device is not None
            else dist.ProcessGroupGloo.create_default_device()
        ]
        self.pg = dist.ProcessGroupGloo(store, rank, len(self.members), opts)

    def _adopt(self, quorum: Any, valid: dict[int, dict[str, Any]]) -> list[int]:
        """Take ``valid`` as the membership: prefix, view, new process group; returns the
        members that need the state."""
        self.members = tuple(sorted(valid))
        self.replicas = {g: str(valid[g]["replica_id"]) for g in self.members}
        created = quorum.created
        self.prefix = f"e{self.epoch}/q{quorum.quorum_id}-{created.seconds}.{created.nanos}"
        needs = [g for g in self.members if not valid[g]["state"]]
        self._publish_view(needs)
        self._make_pg()
        return needs

    def _join_all(self) -> None:
        """Start of an epoch: agree a quorum of every group's current process."""
        self._report(Phase.JOIN)
        n = self.layout.n_groups
        everyone = tuple(range(n))
        deadline = time.monotonic() + self.quorum_timeout.total_seconds()
        while True:
            quorum = self._quorum(shrink_only=False)
            data = [self._data_of(m) for m in quorum.participants]
            groups = tuple(sorted(int(d["group"]) for d in data))
            if groups == everyone and {int(d["epoch"]) for d in data} == {self.epoch}:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"epoch {self.epoch}: no quorum of all {n} groups within "
                    f"{self.quorum_timeout.total_seconds()} s (last: groups {groups})"
                )
            # The lighthouse answers a partial quorum at once while the others start up: do
            # not spin on it.
            time.sleep(0.01)
        ids = sorted(str(m.replica_id) for m in quorum.participants)
        self.store.set(f"e{self.epoch}/formed", json.dumps(ids))
        valid = {}
        for m in quorum.participants:
            d = self._data_of(m)
            d["replica_id"] = str(m.replica_id)
            valid[int(d["group"])] = d
        try:
            needs = self._adopt(quorum, valid)
            if needs:
                self._heal(needs)
        except RuntimeError:
            # A member died before its rendezvous: the first all-reduce fails and the usual
            # recovery masks it.
            self._drop_pg()

    def _rejoin(self) -> None:
        """A replacement: wait for admission at a step boundary, then heal from a peer."""
        self._report(Phase.JOIN)
        self.has_state = False
        self.committed = -1
        self.cur = self.last = None
        deadline = time.monotonic() + self.quorum_timeout.total_seconds()
        while True:
            view = self._view()
            # The view may still name this group's dead process: the survivors have not found
            # it dead yet (they do at their next collective). Admission comes after that.
            if view is not None and view["replicas"].get(str(self.me)) == self.replica_id:
                break
            if self.store.check([f"e{self.epoch}/finished"]):
                raise RunFinished(
                    f"group {self.me}: the run finished before this process was admitted"
                )
            try:
                self.lighthouse.quorum(
                    replica_id=self.replica_id,
                    timeout=timedelta(seconds=0.25),
                    step=0,
                    shrink_only=False,
                    data=self._data(),
                )
            except TimeoutError:
                pass
            # The request stays registered at the lighthouse after it timed out; tell the
            # survivors it waits, so that their next step boundary admits it.
            self.store.add(JOIN_KEY, 1)
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"group {self.me}: not admitted within {self.quorum_timeout.total_seconds()} s"
                )
        self.members = tuple(int(g) for g in view["members"])
        self.replicas = {int(g): str(r) for g, r in view["replicas"].items()}
        self.prefix = str(view["prefix"])
        self._report(Phase.HEAL)
        try:
            self._make_pg()
            self._heal(needs=[int(g) for g in view["needs"]])
        except RuntimeError:
            self._drop_pg()
            self._recover_until_built()

    # ------------------------------------------------------------------ heal
    def _state_blob(self) -> bytes:
        buf = io.BytesIO()
        torch.save(
            {
                "step": self.committed,
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": None if self.scheduler is None else self.scheduler.state_dict(),
                "history": self.history,
                "join_seen": self.join_seen,
            },
            buf,
        )
        return buf.getvalue()

    def _heal(self, needs: list[int]) -> None:
        """Broadcast the state from the lowest member that has it to every member (one round).

        Raises RuntimeError when a member dies during it; the caller then recovers, and the
        next process group heals again if a member still lacks the state.
        """
        if not needs:
            return
        self._report(Phase.HEAL)
        source = min(g for g in self.members if g not in needs)
        root = self.members.index(source)
        payload = self._state_blob() if self.me == source else b""
        size = torch.tensor([len(payload)], dtype=torch.int64)
        self.pg.broadcast(size, root).wait()
        data = (
            torch.frombuffer(bytearray(payload), dtype=torch.uint8)
            if self.me == source
            else torch.empty(int(size), dtype=torch.uint8)
        )
        self.pg.broadcast(data, root).wait()
        if self.has_state:
            return
        blob = torch.load(io.BytesIO(data.numpy().tobytes()), weights_only=True)
        self.model.load_state_dict(blob["model"])
        self.optimizer.load_state_dict(blob["optimizer"])
        if self.scheduler is not None:
            self.scheduler.load_state_dict(blob["scheduler"])
        self.ctl = Controller(self.layout)
        self.history = [(str(k), [int(g) for g in gs]) for k, gs in blob["history"]]
        for kind, groups in self.history:
            (self.ctl.fail if kind == "fail" else self.ctl.rejoin)(groups)
        self.committed = int(blob["step"])
        self.join_seen = int(blob["join_seen"])
        self.has_state = True

    # ------------------------------------------------------------------ compute
    def _flat_grads(self) -> torch.Tensor:
        return torch.cat(
            [
                torch.zeros_like(p).reshape(-1) if p.grad is None else p.grad.reshape(-1)
                for p in self.params
            ]
        )

    def _set_buffers(self, values: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for b, v in zip(self.buffers, values, strict=True):
                b.copy_(v)

    def _type_sums(self, state: _StepState, types: list[int], compute: ComputeFn) -> torch.Tensor:
        """Sum over ``types`` of the gradient, the buffer change and the loss of each type."""
        total = torch.zeros(self.n_params + self.n_buffers + 2, dtype=self.dtype)
        p, b = self.n_params, self.n_buffers
        start = (
            torch.cat([x.reshape(-1).to(self.dtype) for x in state.buffers])
            if self.buffers
            else None
        )
        for t in types:
            if t not in self.held:
                raise ProtocolError(f"group {self.me} was assigned type {t} it does not hold")
            # Every type starts from the step's buffers and a generator keyed by (seed, step,
            # type): what it contributes does not depend on who computes it or in what order.
            self._set_buffers(state.buffers)
            torch.manual_seed(type_seed(self.seed, state.step, t))
            self.model.zero_grad(set_to_none=False)
            loss = compute(state.step, t)
            loss.backward()
            total[:p] += self._flat_grads()
            if start is not None:
                now = torch.cat([x.detach().reshape(-1).to(self.dtype) for x in self.buffers])
                total[p : p + b] += torch.where(now == start, torch.zeros_like(now), now - start)
            total[-2] += loss.detach()
        self._set_buffers(state.buffers)
        return total

    def _begin(self, step: int, compute: ComputeFn) -> _StepState:
        self._report(Phase.COMPUTE)
        comp = np.asarray(self.ctl.assignment, dtype=np.int64).copy()
        mine = [int(t) for t in np.flatnonzero(comp == self.me)]
        state = _StepState(
            step=step,
            depth=int(self.ctl.depth),
            comp=comp,
            local=torch.zeros(0),
            computed=list(mine),
            buffers=[x.detach().clone() for x in self.buffers],
            pre_model=copy.deepcopy(self.model.state_dict()),
            pre_optim=copy.deepcopy(self.optimizer.state_dict()),
            pre_sched=None
            if self.scheduler is None
            else copy.deepcopy(self.scheduler.state_dict()),
        )
        state.local = self._type_sums(state, mine, compute)
        return state

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
        while True:
            if self.cur is None:
                self.cur = self._begin(self.committed, compute)
            cur = self.cur
            reduced = cur.local.clone()
            if self._lead():
                # How many times a replacement said it waits: the same number reaches every
                # member through the sum, so all admit it after the same step.
                reduced[-1] = float(self.store.add(JOIN_KEY, 0))
            if self._allreduce(reduced, cur.step):
                break
            self._drop_pg()
            self._recover_until_built(compute)
        n = self.n_types
        offset = 0
        for param in self.params:
            k = param.numel()
            param.grad = (reduced[offset : offset + k] / n).reshape(param.shape).clone()
            offset += k
        with torch.no_grad():
            for buf, start in zip(self.buffers, cur.buffers, strict=True):
                k = buf.numel()
                value = start.to(self.dtype) + (reduced[offset : offset + k] / n).reshape(buf.shape)
                if not buf.is_floating_point():
                    value = value.round()
                buf.copy_(value.to(buf.dtype))
                offset += k
        self._pending = (cur, reduced)
        return float(reduced[-2]) / n

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
        cur, reduced = self._pending
        self._pending = None
        self.committed = cur.step + 1
        self._commit(cur, float(reduced[-2]) / self.n_types)
        self.last, self.cur = cur, None
        waiting = int(reduced[-1])
        if waiting > self.join_seen:
            self.join_seen = waiting
            self._admit()
        if self.committed >= self.steps and self.cur is None:
            self._finish()

    def _commit(self, cur: _StepState, loss: float) -> None:
        self._write(
            {
                "kind": "step",
                "step": cur.step,
                "depth": cur.depth,
                "members": list(self.members),
                "events": [asdict(e) for e in cur.events],
                "computed": sorted(cur.computed),
                "assigned": [int(g) for g in cur.comp],
                "loss": loss,
                "committed_at": time.monotonic(),
            }
        )
        if self._lead() and self.verbose:
            print(_format_step(cur, self.members, loss, self.layout.n_groups), flush=True)
        if self._lead() and (
            self.committed % self.checkpoint_every == 0 or self.committed == self.steps
        ):
            self._save_checkpoint()

    def _allreduce(self, tensor: torch.Tensor, step: int) -> bool:
        """Sum ``tensor`` over the members in place, bucket by bucket; False on failure."""
        if self.pg is None:
            return False
        try:
            for i, bucket in enumerate(torch.split(tensor, self.bucket_numel)):
                self._report(Phase.ALLREDUCE, i)
                self.pg.allreduce([bucket]).wait()
        except RuntimeError:
            return False
        return not self._collective_error(step)

    def _drop_pg(self) -> None:
        # Abort closes this process's sockets, so peers still blocked in the failed collective
        # see "connection closed" now instead of waiting out the gloo timeout.
        if self.pg is not None:
            try:
                self.pg.abort()
            except RuntimeError:
                pass
        self.pg = None

    def _lead(self) -> bool:
        return bool(self.members) and self.me == self.members[0]

    # ------------------------------------------------------------------ failures, rejoins
    def _recover_until_built(self, compute: ComputeFn | None = None) -> None:
        self._report(Phase.RECOVER)
        t0 = time.perf_counter()
        while True:
            self._drop_pg()
            try:
                self._apply(self._quorum(shrink_only=True), t0, compute)
                return
            except RuntimeError:
                continue  # a member died while the new group was being built or healed

    def _admit(self) -> None:
        """Step boundary: a quorum open to waiting replacements; rejoin and heal them."""
        self._report(Phase.JOIN)
        # The process group stays up until the quorum has formed: aborting it now could break
        # the all-reduce of a member still receiving the last chunks of this step.
        try:
            self._apply(self._quorum(shrink_only=False), time.perf_counter(), None)
        except RuntimeError:
            self._recover_until_built()

    def _apply(self, quorum: Any, t0: float, compute: ComputeFn | None) -> None:
        """Turn an agreed quorum into a rollback, controller events, a new group and a heal."""
        valid = self._valid(quorum)
        if self.me not in valid:
            raise Excluded(f"quorum {sorted(valid)} does not hold group {self.me}")
        if self.has_state:
            self._apply_state(quorum, valid, t0, compute)
        needs = self._adopt(quorum, valid)
        if needs:
            self._heal(needs)

    def _apply_state(
        self, quorum: Any, valid: dict[int, dict[str, Any]], t0: float, compute: ComputeFn | None
    ) -> None:
        stated = [int(d["committed"]) for d in valid.values() if d["state"]]
        low = min(stated)
        if low < self.committed:
            last = self.last
            if low != self.committed - 1 or last is None or last.step != low:
                raise ProtocolError(
                    f"group {self.me} committed {self.committed} steps, a survivor {low}"
                )
            self.model.load_state_dict(last.pre_model)
            self.optimizer.load_state_dict(last.pre_optim)
            if self.scheduler is not None and last.pre_sched is not None:
                self.scheduler.load_state_dict(last.pre_sched)
            self.committed = low
            self._write({"kind": "rollback", "step": low})
            self.cur, self.last = last, None
        dead = sorted(set(self.members) - set(valid))
        new = sorted(set(valid) - set(self.members))
        if new and self.cur is not None:
            raise ProtocolError(f"replacements {new} admitted with step {self.cur.step} in flight")
        self.members = tuple(sorted(valid))
        if dead:
            self._fail(dead, quorum.quorum_id, t0, compute)
        if new:
            decision = self.ctl.rejoin(new)
            self.history.append(("rejoin", new))
            self._events.append(
                EventRecord(
                    quorum_id=int(quorum.quorum_id),
                    dead=(),
                    status="OK" if decision.status == Status.OK else "WIPEOUT",
                    phase=int(decision.phase),
                    depth=int(decision.depth),
                    moves=int(decision.moves),
                    patch=(),
                    patch_computed=(),
                    step=self.committed,
                    seconds=time.perf_counter() - t0,
                    decided_at=time.monotonic(),
                )
            )
            self._write({"kind": "rejoin", "groups": new, "step": self.committed})
            if self.verbose and self.me == min(g for g in valid if valid[g]["state"]):
                print(
                    f"step {self.committed:3d}  groups {new} rejoined -> depth {decision.depth} "
                    f"moves {decision.moves}",
                    flush=True,
                )

    def _fail(self, dead: list[int], quorum_id: int, t0: float, compute: ComputeFn | None) -> None:
        decision = self.ctl.fail(dead)
        self.history.append(("fail", dead))
        patch = tuple((int(t), int(g)) for t, g in np.asarray(decision.patch).reshape(-1, 2))
        wiped = decision.status != Status.OK
        cur = self.cur
        done: list[tuple[int, int]] = []
        if cur is not None and not wiped:
            assignment = np.asarray(decision.assignment)
            for t in range(self.n_types):
                if int(cur.comp[t]) in dead:
                    cur.comp[t] = int(assignment[t])
                    done.append((t, int(assignment[t])))
        event = EventRecord(
            quorum_id=int(quorum_id),
            dead=tuple(dead),
            status="WIPEOUT" if wiped else "OK",
            phase=int(decision.phase),
            depth=int(decision.depth),
            moves=int(decision.moves),
            patch=patch,
            patch_computed=tuple(done),
            step=self.committed if cur is None else cur.step,
            seconds=time.perf_counter() - t0,
            decided_at=time.monotonic(),
        )
        self._events.append(event)
        if cur is not None:
            cur.events.append(event)
        if wiped:
            self._write({"kind": "wipeout", "event": asdict(event), "members": self.members})
            raise WipeOutError(event)
        if cur is None and self.verbose and self._lead_after(dead):
            print(
                f"step {self.committed:3d}  groups {dead} died between steps -> depth "
                f"{decision.depth} moves {decision.moves}",
                flush=True,
            )
        mine = [t for t, g in done if g == self.me]
        if mine and cur is not None:
            if compute is None:
                raise ProtocolError("patch types to compute but no compute callback")
            self._report(Phase.COMPUTE)
            cur.local = cur.local + self._type_sums(cur, mine, compute)
            cur.computed.extend(mine)

    def _lead_after(self, dead: list[int]) -> bool:
        return self.me == min(g for g in self.members if g not in dead and g in self.replicas)

    def _finish(self) -> None:
        """All steps committed here: one more quorum decides whether every member has."""
        self._report(Phase.FINISH)
        while True:
            quorum = self._quorum(shrink_only=True)
            valid = self._valid(quorum)
            if all(int(d["committed"]) == self.committed for d in valid.values()):
                self.store.set(f"e{self.epoch}/finished", str(self.committed))
                return
            self._drop_pg()
            try:
                self._apply(quorum, time.perf_counter(), None)
            except RuntimeError:
                self._recover_until_built()
            if self.cur is not None or self.committed < self.steps:
                return  # rolled back: the caller redoes the last step

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self) -> None:
        if self.ckpts is None:
            return
        self._report(Phase.CHECKPOINT)
        self.ckpts.save(
            self.committed,
            {
                "step": self.committed,
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": None if self.scheduler is None else self.scheduler.state_dict(),
                "rng": torch.get_rng_state(),
                "seed": self.seed,
            },
        )

    def _load_checkpoint(self, path: str) -> None:
        blob = Checkpoints.load(path)
        self.model.load_state_dict(blob["model"])
        self.optimizer.load_state_dict(blob["optimizer"])
        if self.scheduler is not None:
            if blob.get("scheduler") is None:
                raise ProtocolError(f"checkpoint {path} has no LR scheduler state")
            self.scheduler.load_state_dict(blob["scheduler"])
        torch.set_rng_state(blob["rng"])
        self.committed = int(blob["step"])


def _format_step(cur: _StepState, members: Iterable[int], loss: float, n_groups: int) -> str:
    members = tuple(members)
    line = (
        f"step {cur.step:3d}  depth {cur.depth}  alive {len(members)}/{n_groups}  loss {loss:.6f}"
    )
    for e in cur.events:
        patch = " ".join(f"{t}->g{g}" for t, g in e.patch_computed)
        line += (
            f"\n          event: groups {list(e.dead)} died -> {e.status} phase {e.phase} "
            f"depth {e.depth} moves {e.moves} patch [{patch}] ({e.seconds:.2f} s)"
        )
    return line
