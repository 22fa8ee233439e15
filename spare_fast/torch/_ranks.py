"""A SPARe group of K ranks: one membership decision per group, shared by its ranks.

Under ``torchrun --nproc-per-node K`` a SPARe group is K processes (FSDP2 or tensor
parallelism inside the group). Rank 0 of the group alone talks to the lighthouse (heartbeat,
quorum requests, admission) and broadcasts each answer to the group's other ranks over the
group's own process group, so the K ranks never disagree on a membership, a depth or a
patch. Rank ``i`` of every group reduces with rank ``i`` of the other groups, over that rank
index's process group (prefix ``.../r{i}/pg/``).

Outcomes that differ between ranks (a cross-group all-reduce or a rebuilt process group that
failed on one rank only) are agreed inside the group before anything changes: if one rank
failed, all K ranks recover together. With K = 1 every method here is the plain call.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from spare_fast.torch._auth import RunKey
from spare_fast.torch._membership import Membership
from spare_fast.torch._settings import MemberSettings

__all__ = ["GroupMembership", "RankLost", "Ranks"]

T = TypeVar("T")


#: Seconds the ranks of a group wait for each other when SPARe initializes their process group.
INIT_TIMEOUT_S = 60.0


def init_default(group: int) -> bool:
    """Under ``torchrun`` with ``WORLD_SIZE > 1`` and no default process group yet, initialize
    a gloo one from torchrun's environment (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``,
    ``WORLD_SIZE``); whether it did.

    Without it each of the K ranks would take itself for the whole group: K processes claiming
    one group, and the run's check that every group runs the same K could not see them.

    Raises
    ------
    RuntimeError
        One line naming the variable that is missing or the failure, and what to call.
    """
    world = os.environ.get("WORLD_SIZE", "1")
    if not dist.is_available() or dist.is_initialized():
        return False
    try:
        if int(world) <= 1:
            return False
    except ValueError:
        raise ValueError(f"WORLD_SIZE = {world!r} is not an integer") from None
    missing = [v for v in ("MASTER_ADDR", "MASTER_PORT", "RANK") if v not in os.environ]
    if missing:
        raise RuntimeError(
            f"group {group}: WORLD_SIZE = {world} but {', '.join(missing)} not set and no "
            "default process group: start the group with torchrun, or call "
            "torch.distributed.init_process_group() before SpareGroup"
        )
    try:
        dist.init_process_group("gloo", timeout=timedelta(seconds=INIT_TIMEOUT_S))
    except (RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuntimeError(
            f"group {group}: WORLD_SIZE = {world}: cannot initialize the group's process group "
            f"from torchrun's environment ({first}); call "
            "torch.distributed.init_process_group() before SpareGroup"
        ) from None
    return True


class RankLost(Exception):
    """A sibling rank of this group died: the group is over (its launcher ends the others)."""


class Ranks:
    """The ranks of this process's SPARe group and their coordination.

    Under ``torchrun`` with ``WORLD_SIZE = K > 1`` (the default process group initialized by
    the user over the group's K ranks, or else by :func:`init_default`), SPARe takes a gloo
    process group over the same ranks for its own messages; otherwise the group is this one
    process (K = 1).

    Parameters
    ----------
    group : int
        The SPARe group (for messages).
    """

    def __init__(self, group: int) -> None:
        self.group = group
        self.size = 1
        self.rank = 0
        self.pg: Any = None
        #: Whether this object initialized the default process group (and so destroys it).
        self.owns_default = init_default(group)
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            self.size = dist.get_world_size()
            self.rank = dist.get_rank()
            self.pg = dist.new_group(backend="gloo")

    def close(self) -> None:
        """Destroy this group's own process group, and the default one if it made it."""
        if self.pg is not None:
            with contextlib.suppress(RuntimeError, ValueError):
                dist.destroy_process_group(self.pg)
            self.pg = None
        if self.owns_default and dist.is_initialized():
            with contextlib.suppress(RuntimeError, ValueError):
                dist.destroy_process_group()
        self.owns_default = False

    @property
    def suffix(self) -> str:
        """Process-group prefix suffix of this rank index ("" for K = 1)."""
        return "" if self.size == 1 else f"/r{self.rank}"

    def refuse_checkpoints(self, checkpoint_dir: str | None) -> None:
        """ValueError if checkpoints are asked of a group of K > 1 ranks (not supported)."""
        if self.size > 1 and checkpoint_dir is not None:
            raise ValueError(
                f"checkpoint_dir = {checkpoint_dir!r}: checkpoints of a group of "
                f"K = {self.size} ranks are not supported (K = 1 only)"
            )

    def _lost(self, err: BaseException) -> RankLost:
        return RankLost(
            f"group {self.group} rank {self.rank}: a sibling rank is gone ({err}); "
            f"the group ends and a new torchrun of {self.size} ranks replaces it"
        )

    def share(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on rank 0 and give its result (or its exception) to every rank."""
        if self.size == 1:
            return fn()
        box: list[Any] = [None]
        if self.rank == 0:
            try:
                box[0] = ("ok", fn())
            except Exception as err:  # noqa: BLE001 - re-raised on every rank below
                box[0] = ("err", err)
        try:
            dist.broadcast_object_list(box, src=0, group=self.pg)
        except RuntimeError as err:
            raise self._lost(err) from err
        kind, value = box[0]
        if kind == "err":
            raise value
        return value  # type: ignore[no-any-return]

    def agree(self, ok: bool) -> bool:
        """True on every rank when ``ok`` is true on every rank of the group."""
        if self.size == 1:
            return ok
        flag = torch.tensor([1 if ok else 0], dtype=torch.int64)
        try:
            dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=self.pg)
        except RuntimeError as err:
            raise self._lost(err) from err
        return bool(flag.item())

    def agree_step(self, ok: bool, waiting: int) -> tuple[bool, int]:
        """After a step's all-reduce: whether it succeeded on every rank, and the join count
        (only rank 0's buffer carries it). One small all-reduce inside the group."""
        if self.size == 1:
            return ok, waiting
        both = torch.tensor([1 if ok else 0, -waiting], dtype=torch.int64)
        try:
            dist.all_reduce(both, op=dist.ReduceOp.MIN, group=self.pg)
        except RuntimeError as err:
            raise self._lost(err) from err
        return bool(both[0].item()), -int(both[1].item())

    def together(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on every rank; if it raised RuntimeError on any rank, raise it on all."""
        try:
            value, error = fn(), None
        except RuntimeError as err:
            value, error = None, err
        if not self.agree(error is None):
            raise error or RuntimeError(f"group {self.group}: a sibling rank's collective failed")
        return value  # type: ignore[return-value]


@dataclass
class _Created:
    seconds: int
    nanos: int


@dataclass
class _Participant:
    replica_id: str
    data: Any


@dataclass
class _Quorum:
    """A lighthouse quorum as plain data (what rank 0 broadcasts to its siblings)."""

    quorum_id: int
    created: _Created
    participants: list[_Participant]


def plain(quorum: Any) -> _Quorum:
    """``quorum`` (torchft's) as plain, picklable data."""
    return _Quorum(
        int(quorum.quorum_id),
        _Created(int(quorum.created.seconds), int(quorum.created.nanos)),
        [_Participant(str(m.replica_id), m.data) for m in quorum.participants],
    )


class GroupMembership(Membership):
    """:class:`Membership` whose lighthouse traffic runs on the group's rank 0 only.

    Every decision (the formed quorum, each quorum, an admission) is taken once by rank 0 and
    broadcast to the group's ranks; every rank then acts on the same one. The join count is
    read by rank 0 alone and reaches its siblings through :meth:`Ranks.agree_step`.
    """

    def __init__(
        self,
        ranks: Ranks,
        settings: MemberSettings,
        progress: Callable[[], tuple[int, bool]],
        auth: RunKey | None = None,
    ) -> None:
        super().__init__(settings, progress, auth)
        self.ranks = ranks
        self.n_ranks = ranks.size
        self._inside = False

    def _shared(self, fn: Callable[[], T]) -> T:
        """``fn`` on rank 0, its outcome on every rank; calls made inside ``fn`` (a form's
        quorums) stay on rank 0."""
        if self._inside or self.ranks.size == 1:
            return fn()

        def outer() -> T:
            self._inside = True
            try:
                return fn()
            finally:
                self._inside = False

        return self.ranks.share(outer)

    def connect(self) -> None:
        if self.ranks.rank == 0:
            super().connect()
        else:
            host, port = self.store_addr
            self.store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=60))
        self.replica_id = self.ranks.share(lambda: self.replica_id)
        self.gate.replica_id = self.replica_id  # the group's one identity, rank 0's

    def quorum(self, shrink_only: bool) -> Any:
        if self._inside or self.ranks.size == 1:
            return super().quorum(shrink_only)
        return self._shared(lambda: plain(super(GroupMembership, self).quorum(shrink_only)))

    def form(
        self, uncovered: Callable[[Collection[int]], list[int]] | None = None
    ) -> tuple[Any, dict[int, dict[str, Any]]]:
        if self.ranks.size == 1:
            return super().form(uncovered)

        def formed() -> tuple[Any, dict[int, dict[str, Any]]]:
            quorum, valid = super(GroupMembership, self).form(uncovered)
            return plain(quorum), valid

        return self._shared(formed)

    def wait_admission(self) -> list[int]:
        def admitted() -> tuple[list[int], Any, Any, str]:
            needs = super(GroupMembership, self).wait_admission()
            return needs, self.members, self.replicas, self.prefix

        needs, self.members, self.replicas, self.prefix = self._shared(admitted)
        return needs

    def formed(self) -> bool:
        return self._shared(super().formed)

    def finish(self, committed: int) -> None:
        if self.ranks.rank == 0:
            super().finish(committed)
