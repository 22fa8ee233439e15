"""Membership of one SPARe group's process: heartbeat, quorums, the published view, admission.

The torchft lighthouse agrees each membership from the members' heartbeats and quorum
requests; the run's store carries what every process of an epoch must read the same way:

- ``e{epoch}/formed``: the replica ids of the quorum that formed the epoch (all N groups);
- ``e{epoch}/view``: the current members, their replica ids, the process-group prefix of the
  current membership and the members that still need the state;
- ``e{epoch}/quorum`` and ``e{epoch}/quorum/at``: the last quorum the lowest member adopted
  (its id, creation time and every participant's signed data) and its creation time. A
  lighthouse answers a quorum only to the requests waiting when it forms: a process whose
  request had just timed out (it asks again every ``quorum_poll``) is in that quorum but never
  hears of it, and would hold every member's next rendezvous until its timeout. Between two
  requests a process therefore reads ``quorum/at``, and takes a newer recorded quorum that
  lists it as the lighthouse's answer;
- ``e{epoch}/finished``: set once every member committed the last step;
- ``join/count``: incremented by a waiting replacement; the lowest member reads it once per
  step and the count travels to every member in the step's sum;
- ``refused/{replica id}``: why a process was not admitted (its identity differs, or its
  quorum data does not verify with the run key); it reads that and stops.

With a run key every value but the counter carries a MAC (:mod:`~spare_fast.torch._auth`),
and a quorum participant whose data does not verify is never counted. A malformed or
unverified value is logged and ignored. Each process's quorum data carries its run identity
(:mod:`~spare_fast.torch._identity`): compared by every group when the run forms, and, static
fields only, for a replacement before it is admitted.

A quorum's participants are checked against this process's own view: a member is counted
under its own identity only, and a group outside the membership is represented by its lowest
waiting replacement.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Collection
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import torch.distributed as dist

from spare_fast.torch._auth import RunKey, read_json
from spare_fast.torch._bounds import Bounds, liveness_period
from spare_fast.torch._errors import AuthenticationError, Excluded, RunFinished, Unneeded
from spare_fast.torch._gate import Gate, data_of, valid_ids, valid_view
from spare_fast.torch._identity import compare
from spare_fast.torch._joins import (
    JOIN_KEY,
    Claim,
    JoinCounter,
    check_ranks,
    check_reachable,
    check_run_ranks,
)
from spare_fast.torch._settings import MemberSettings
from spare_fast.torch._watchdog import heartbeat_timeout

__all__ = ["JOIN_KEY", "Membership", "check_ranks", "data_of", "valid_view"]

#: Timeout of one heartbeat call to the lighthouse, seconds.
HEARTBEAT_CALL_S = 5.0
#: How long a release waits for the claim watch and a rendezvous left running, seconds.
RELEASE_JOIN_S = 15.0

log = logging.getLogger("spare_fast.torch")


class Membership:
    """This process's view of its run's membership and its link to the lighthouse.

    Parameters
    ----------
    settings : MemberSettings
        The process's group, the run's group count, the lighthouse and store addresses and
        the heartbeat and quorum timings.
    progress : callable
        ``progress() -> (committed, has_state)``: what this process reports in its quorum
        requests.
    auth : RunKey, optional
        The run key (none by default).
    """

    def __init__(
        self,
        settings: MemberSettings,
        progress: Callable[[], tuple[int, bool]],
        auth: RunKey | None = None,
    ) -> None:
        self.settings = settings
        group = self.me = settings.group
        self.n_groups = settings.n_groups
        self.lighthouse_addr = settings.lighthouse_addr
        self.store_addr = settings.store_addr
        self.heartbeat_interval = settings.heartbeat_interval
        self.quorum_timeout = settings.quorum_timeout
        self.quorum_poll = settings.quorum_poll
        self.progress = progress
        self.epoch = 0
        self.members: tuple[int, ...] = ()
        self.replicas: dict[int, str] = {}
        self.prefix = ""
        self.replica_id = f"g{group}:{os.getpid()}"
        #: Ranks per group (K): sent with each quorum request, the same in every group.
        self.n_ranks = 1
        self.store: Any = None
        self.lighthouse: Any = None
        self.bounds: Bounds | None = None
        self.claim: Claim | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.auth = auth or RunKey(None)
        #: This process's run identity, sent in its quorum data (set before it forms/rejoins).
        self.identity: dict[str, Any] | None = None
        #: Creation time (lighthouse seconds) of the last quorum this process adopted.
        self.taken_at = -1.0
        self.gate = Gate(settings, self.replica_id, self.auth)
        self.joins = JoinCounter(settings.store_addr)

    # ------------------------------------------------------------------ connection
    def connect(self) -> None:
        """Connect to the store and the lighthouse; start heartbeating."""
        from torchft.coordination import LighthouseClient

        check_reachable(self.me, self.lighthouse_addr, self.store_addr)
        host, port = self.store_addr
        self.store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=60))
        # Three beats of a live process (see Bounds), watched while this process goes on.
        timeout = heartbeat_timeout(self.store)
        watch = min(timeout, 3 * liveness_period(timeout))
        self.claim = Claim(self.store, self.store_addr, self.me, self.n_groups, watch)
        self.lighthouse = LighthouseClient(
            addr=self.lighthouse_addr, connect_timeout=timedelta(seconds=10)
        )
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()
        # A watchdog against freezing, a guard against losing the lighthouse or the store.
        self.bounds = Bounds(
            self.me,
            self.lighthouse_addr,
            self.store_addr,
            self.store,
            self.heartbeat_interval.total_seconds(),
            self.replica_id,
            lambda: self.replicas,
            self.claim.done,
        )

    def close(self) -> None:
        """Stop heartbeating; the heartbeat thread is joined (within one beat's timeout) so
        that no daemon thread is left inside the lighthouse client at interpreter exit."""
        self._stop.set()
        self.joins.close()
        if self.bounds is not None:
            self.bounds.close()
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join(HEARTBEAT_CALL_S + 1.0)

    def release(self) -> None:
        """After :meth:`close`: join the claim watch and any rendezvous left running, then
        drop the store and lighthouse clients here rather than at interpreter teardown (see
        :mod:`~spare_fast.torch._release`)."""
        from spare_fast.torch._release import join_threads

        threads: list[threading.Thread | None] = []
        if self.bounds is not None:
            threads += self.bounds.rendezvous()
        if self.claim is not None:
            threads.append(self.claim.stop())
        left = join_threads(threads, RELEASE_JOIN_S)
        if left:
            log.warning("group %d: threads %s still run after %s s", self.me, left, RELEASE_JOIN_S)
        self.joins.drop()
        self.lighthouse = self.store = None

    def _heartbeat(self) -> None:
        from torchft.coordination import LighthouseClient

        client = LighthouseClient(addr=self.lighthouse_addr, connect_timeout=timedelta(seconds=10))
        while not self._stop.is_set():
            try:
                client.heartbeat(self.replica_id, timeout=timedelta(seconds=HEARTBEAT_CALL_S))
            except Exception:  # noqa: BLE001 - a missed beat is retried; the lighthouse decides
                pass
            self._stop.wait(self.heartbeat_interval.total_seconds())

    # ------------------------------------------------------------------ who leads
    def lead(self) -> bool:
        """Whether this process is the lowest member."""
        return bool(self.members) and self.me == self.members[0]

    def lead_after(self, dead: list[int]) -> bool:
        """Whether this process is the lowest member once ``dead`` are gone."""
        return self.me == min(g for g in self.members if g not in dead and g in self.replicas)

    # ------------------------------------------------------------------ quorums
    def _data(self) -> dict[str, Any]:
        committed, has_state = self.progress()
        return {
            "group": self.me,
            "epoch": self.epoch,
            "committed": committed if has_state else -1,
            "state": has_state,
            "pid": os.getpid(),
            "replica": self.replica_id,
            # The identity is compared when the run forms and when a replacement is admitted:
            # a member of the formed run sends none (its quorums are then O(N) bytes smaller).
            "identity": None if self.members else self.identity,
            "ranks": self.n_ranks,
        }

    def quorum(self, shrink_only: bool) -> Any:
        """Ask the lighthouse for the next quorum.

        Before each request the published view is checked (a shrink-only quorum: this process
        must still be a member, else :class:`Excluded`) or the epoch's formation (an open
        quorum before this process is a member: :class:`Unneeded` if the epoch formed without
        it).
        """
        deadline = time.monotonic() + self.quorum_timeout.total_seconds()
        step = self.quorum_poll.total_seconds()
        while True:
            if shrink_only:
                self.check_view()
            else:
                self.check_formed()
            wait = min(step, max(deadline - time.monotonic(), 0.001))
            try:
                return self.lighthouse.quorum(
                    replica_id=self.replica_id,
                    timeout=timedelta(seconds=wait),
                    step=max(self.progress()[0], 0),
                    shrink_only=shrink_only,
                    data=self.auth.sign_data(self._data()),
                )
            except (TimeoutError, RuntimeError) as exc:
                # "channel lagged": the lighthouse's answers overflowed while this request
                # waited (many quorums in a burst); it is asked again like a timed-out one.
                if not isinstance(exc, TimeoutError) and "lagged" not in str(exc):
                    raise
                missed = self.missed()
                if missed is not None:
                    return missed
                if time.monotonic() >= deadline:
                    raise

    def missed(self) -> Any:
        """The recorded quorum (see the module's notes) if it is newer than the last this
        process took and lists it; None otherwise."""
        at = read_json(self.store, f"e{self.epoch}/quorum/at", _is_number, self.auth)
        if at is None or at <= self.taken_at:
            return None
        rec = read_json(self.store, f"e{self.epoch}/quorum", _valid_record, self.auth)
        if rec is None or rec["at"] <= self.taken_at:
            return None
        mine = [d for rid, d in rec["participants"] if rid == self.replica_id]
        try:
            sent = json.loads(mine[0]) if mine else None
        except ValueError:
            sent = None
        # This process's own entry must be what it asks with now: a quorum it was in but that
        # answered an earlier request (the progress differs) is not the one it waits for.
        now = self._data()
        if not isinstance(sent, dict) or any(sent.get(k) != now[k] for k in ("epoch", "committed")):
            return None
        seconds, nanos = rec["created"]
        return SimpleNamespace(
            quorum_id=rec["id"],
            created=SimpleNamespace(seconds=seconds, nanos=nanos),
            participants=[SimpleNamespace(replica_id=r, data=d) for r, d in rec["participants"]],
        )

    def valid(self, quorum: Any) -> dict[int, dict[str, Any]]:
        """Participants by group: current members under their own identity, and for each
        group outside the membership its waiting replacement (the lowest identity)."""
        out: dict[int, dict[str, Any]] = {}
        for m in sorted(quorum.participants, key=lambda m: str(m.replica_id)):
            d = self.gate.participant(m, self.store)
            if d is None or d["epoch"] != self.epoch or int(d.get("ranks", 1)) != self.n_ranks:
                continue
            g = d["group"]
            if g in self.members:
                if self.replicas.get(g) == d["replica_id"]:
                    out[g] = d
            elif g not in out and self.gate.admissible(d, self.identity, self.store):
                out[g] = d
        return out

    # ------------------------------------------------------------------ the published view
    def view(self) -> dict[str, Any] | None:
        """The epoch's published view, or None before the first."""
        view = read_json(self.store, f"e{self.epoch}/view", valid_view, self.auth)
        return None if view is None else dict(view)

    def check_view(self) -> None:
        """Raise :class:`Excluded` if the published view no longer names this process."""
        view = self.view()
        if view is not None and view["replicas"].get(str(self.me)) != self.replica_id:
            raise Excluded(f"epoch {self.epoch} members are now {view['members']}")

    def check_formed(self) -> None:
        """Raise :class:`Unneeded` if the epoch formed without this (non-member) process."""
        if self.members:  # admission quorums of a formed run: nothing to check
            return
        self.gate.check_refused(self.store)
        self.check_claims([])
        ids = read_json(self.store, f"e{self.epoch}/formed", valid_ids, self.auth)
        if ids is not None and self.replica_id not in ids:
            raise Unneeded()

    def adopt(self, quorum: Any, valid: dict[int, dict[str, Any]]) -> list[int]:
        """Take ``valid`` as the membership and publish it; returns the members that need
        the state. The caller builds the new process group under :attr:`prefix`."""
        self.gate.retired.update(
            set(self.replicas.values()) - {valid[g]["replica_id"] for g in valid}
        )
        self.members = tuple(sorted(valid))
        self.replicas = {g: str(valid[g]["replica_id"]) for g in self.members}
        created = quorum.created
        self.prefix = f"e{self.epoch}/q{quorum.quorum_id}-{created.seconds}.{created.nanos}"
        needs = [g for g in self.members if not valid[g]["state"]]
        view = {
            "members": list(self.members),
            "replicas": {str(g): r for g, r in self.replicas.items()},
            "prefix": self.prefix,
            "needs": needs,
            "at": _created(quorum),
        }
        self.taken_at = _created(quorum)
        # Every member that adopts computes the same view; the lowest of them (a member with
        # the state: a replacement takes the view instead of adopting) writes it, as N writes
        # of O(N) bytes each would be O(N^2) at the store; then the record of the quorum,
        # which is what a process that missed it takes.
        writer = min((g for g in self.members if valid[g]["state"]), default=self.members[0])
        if self.me == writer:
            self.write(f"e{self.epoch}/view", view)
            parts = [
                [str(p.replica_id), p.data if isinstance(p.data, str) else json.dumps(p.data)]
                for p in quorum.participants
            ]
            rec = {
                "id": int(quorum.quorum_id),
                "at": self.taken_at,
                "created": [int(created.seconds), int(created.nanos)],
                "participants": parts,
            }
            self.write(f"e{self.epoch}/quorum", rec)
            self.write(f"e{self.epoch}/quorum/at", self.taken_at)
        return needs

    def write(self, key: str, value: Any) -> None:
        """Write ``value`` (JSON) under store ``key``, with the run key's MAC if set."""
        self.store.set(key, self.auth.wrap(key, json.dumps(value)))

    def rank(self) -> int:
        """This process's rank in the current membership."""
        return self.members.index(self.me)

    # ------------------------------------------------------------------ forming, admission
    def formed(self) -> bool:
        """Whether the current epoch has formed."""
        key = f"e{self.epoch}/formed"
        if (
            not self.auth.enabled
            and self.store.check([key])
            and self.auth.keyed(self.store.get(key))
        ):
            # Before it takes part: a process without the key cannot join a keyed run.
            raise AuthenticationError(
                f"group {self.me} ({self.replica_id}) refused: the run's membership carries "
                "a run key's MAC and this process has no run key"
            )
        # Existence only: a value that does not verify still says someone formed the epoch
        # (this process then asks to be admitted, and the members judge its data).
        return bool(self.store.check([key]))

    def form(
        self, uncovered: Callable[[Collection[int]], list[int]] | None = None
    ) -> tuple[Any, dict[int, dict[str, Any]]]:
        """Start of an epoch: agree a quorum of the groups' current processes.

        The run forms with every group, or, once the join timeout has passed, with the
        groups present when they are at least the settings' ``least_groups`` and
        ``uncovered(groups)`` (the shard types no group of ``groups`` holds) is empty. The
        missing groups then count as failed at step 0 and rejoin through admission.

        Every participant of one lighthouse quorum takes the same decision on it: the
        quorum's groups, its creation time at the lighthouse and the formation's start
        (the creation time of the first quorum any process of the epoch received, recorded
        once in the store) are the same for all of them. So either all of them form the run
        with that quorum, or none does.

        Returns the quorum and its participants by group; publishes the formation.
        """
        n = self.n_groups
        everyone = tuple(range(n))
        deadline = time.monotonic() + self.quorum_timeout.total_seconds()
        join_after = self.settings.join_seconds
        least = self.settings.least_groups
        start: float | None = None
        while True:
            quorum = self.quorum(shrink_only=False)
            checked = (self.gate.participant(m, self.store) for m in quorum.participants)
            data = [d for d in checked if d is not None]
            self.check_claims(data)
            groups = tuple(sorted(int(d["group"]) for d in data))
            same_epoch = {int(d["epoch"]) for d in data} == {self.epoch}
            if start is None:
                start = self._form_start(quorum)
            if groups == everyone and same_epoch:
                break
            distinct = len(set(groups)) == len(groups)
            late = _created(quorum) - start >= join_after
            enough = same_epoch and distinct and len(groups) >= least
            if late and enough and not (uncovered and uncovered(groups)):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(self._formation_failed(groups, uncovered, least))
            # The lighthouse answers a partial quorum at once while the others start up: do
            # not spin on it.
            time.sleep(0.01)
        if self.claim is not None:
            self.claim.check(True, self._holder, self.replica_id)
        check_ranks(data)
        valid = {int(d["group"]): d for d in data}
        # Every group got this same quorum: all stop here, before any step, if they differ.
        compare({g: d.get("identity") for g, d in valid.items()})
        self.write(f"e{self.epoch}/ranks", self.n_ranks)
        self.write(f"e{self.epoch}/formed", sorted(d["replica_id"] for d in data))
        return quorum, valid

    def check_claims(self, data: list[dict[str, Any]]) -> None:
        """Refuse the epoch's formation when two live processes claim one group.

        ``data``: a quorum's checked participants. A group listed under two replica ids whose
        liveness counters (beaten by each process's guard) both move is claimed twice: the
        line naming both is recorded once under ``e{epoch}/claimed_twice`` and every process
        of the epoch raises it, those of this quorum at once, the others at their next
        quorum request. A claimant whose counter stands still is a dead process the
        lighthouse still lists, not a second claim. No process forms an epoch while one of
        its quorums lists a group twice, so the refusal reaches them all before step 0.

        Raises
        ------
        RuntimeError
            Naming the group and both processes.
        """
        key = f"e{self.epoch}/claimed_twice"
        ids: dict[int, list[str]] = {}
        for d in data:
            if int(d["epoch"]) == self.epoch:
                ids.setdefault(int(d["group"]), []).append(str(d["replica_id"]))
        twice = {g: sorted(set(r)) for g, r in sorted(ids.items()) if len(set(r)) > 1}
        if twice and not self.store.check([key]):
            both = {g: r for g, r in twice.items() if self._both_alive(r)}
            if both:
                named = "; ".join(f"group {g} by {' and '.join(r)}" for g, r in both.items())
                line = (
                    f"epoch {self.epoch}: one group claimed by two processes ({named}): "
                    "start each group once (one process, or one torchrun of K ranks, per group)"
                )
                self.store.compare_set(key, "", self.auth.wrap(key, json.dumps(line)))
        if self.store.check([key]):
            line = read_json(self.store, key, lambda v: isinstance(v, str), self.auth)
            raise RuntimeError(line or f"epoch {self.epoch}: one group claimed by two processes")

    def _both_alive(self, replicas: list[str]) -> bool:
        """Whether every one of ``replicas`` beats its liveness counter (watched for three
        liveness periods)."""
        keys = [f"alive/{r}" for r in replicas]
        before = [int(self.store.add(k, 0)) for k in keys]
        time.sleep(3 * liveness_period(heartbeat_timeout(self.store)))
        return all(int(self.store.add(k, 0)) != b for k, b in zip(keys, before, strict=True))

    def _holder(self) -> str | None:
        """The replica id the published view names for this group, if any."""
        view = self.view()
        held = None if view is None else view["replicas"].get(str(self.me))
        return None if held in (None, self.replica_id) else str(held)

    def _form_start(self, quorum: Any) -> float:
        """The epoch's formation start (lighthouse time, seconds): the first quorum's
        creation time recorded by whichever process got one first. A recorded value that
        does not verify with the run key means no start: the run then forms with every group
        only (so every process still decides alike)."""
        key = f"e{self.epoch}/form_start"
        mine = self.auth.wrap(key, json.dumps(_created(quorum)))
        held = self.store.compare_set(key, "", mine)
        value = self.auth.unwrap(key, held)
        try:
            return float(json.loads(value or ""))
        except (TypeError, ValueError):
            return float("inf")

    def _formation_failed(
        self,
        groups: tuple[int, ...],
        uncovered: Callable[[Collection[int]], list[int]] | None,
        least: int,
    ) -> str:
        n = self.n_groups
        missing = sorted(set(range(n)) - set(groups))
        twice = sorted({g for g in groups if groups.count(g) > 1})
        why = f"group(s) {missing} never joined" if missing else "no group was missing"
        if twice:
            why += f"; group(s) {twice} joined from two processes each"
        lacking = uncovered(sorted(set(groups))) if uncovered else []
        if lacking:
            why += f"; without them shard type(s) {lacking[:20]} have no holder"
        elif len(set(groups)) < least:
            why += f"; {len(set(groups))} present, the run needs at least {least}"
        return (
            f"epoch {self.epoch}: no quorum of the {n} groups within "
            f"{self.quorum_timeout.total_seconds()} s: {why} (last quorum: groups {groups})"
        )

    def wait_admission(self) -> list[int]:
        """A replacement: announce itself until the survivors admit it at a step boundary.

        Takes the admitting view (members, replicas, prefix); returns the members that need
        the state.
        """
        check_run_ranks(self.store, self.auth, self.epoch, self.me, self.n_ranks)
        deadline = time.monotonic() + self.quorum_timeout.total_seconds()
        while True:
            if self.claim is not None:
                self.claim.check(False, self._holder, self.replica_id)
            view = self.view()
            # The view may still name this group's dead process: the survivors have not found
            # it dead yet (they do at their next collective). Admission comes after that.
            if view is not None and view["replicas"].get(str(self.me)) == self.replica_id:
                break
            self.gate.check_refused(self.store)
            if self.finished():
                raise RunFinished(
                    f"group {self.me}: the run finished before this process was admitted"
                )
            try:
                self.lighthouse.quorum(
                    replica_id=self.replica_id,
                    timeout=timedelta(seconds=0.25),
                    step=0,
                    shrink_only=False,
                    data=self.auth.sign_data(self._data()),
                )
            except TimeoutError:
                pass
            # The request stays registered at the lighthouse after it timed out; tell the
            # survivors it waits, so that their next step boundary admits it.
            self.joins.announce(self.me)
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"group {self.me}: not admitted within {self.quorum_timeout.total_seconds()} s"
                )
        if self.claim is not None:
            self.claim.check(True, self._holder, self.replica_id)
        self.members = tuple(int(g) for g in view["members"])
        self.replicas = {int(g): str(r) for g, r in view["replicas"].items()}
        self.prefix = str(view["prefix"])
        # The admitting quorum, taken through the view: a recorded quorum is newer than it.
        at = view.get("at")
        self.taken_at = float(at) if isinstance(at, (int, float)) else self.taken_at
        return [int(g) for g in view["needs"]]

    def join_count(self) -> int:
        """How many times a replacement announced it waits (read by the lowest member)."""
        return self.joins.read(self.bounds)

    def finish(self, committed: int) -> None:
        """Publish that every member committed ``committed`` steps."""
        self.write(f"e{self.epoch}/finished", committed)

    def finished(self) -> bool:
        """Whether the current epoch's members published that they finished."""
        key = f"e{self.epoch}/finished"
        return read_json(self.store, key, lambda v: isinstance(v, int), self.auth) is not None

    def reset(self) -> None:
        """Leave the membership (before a restart's next epoch)."""
        self.members = ()
        self.replicas = {}
        self.taken_at = -1.0


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _valid_record(v: Any) -> bool:
    """Whether ``v`` has the shape of a recorded quorum."""
    return (
        isinstance(v, dict)
        and isinstance(v.get("id"), int)
        and _is_number(v.get("at"))
        and isinstance(v.get("created"), list)
        and len(v["created"]) == 2
        and all(isinstance(x, int) for x in v["created"])
        and isinstance(v.get("participants"), list)
        and all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], str)
            for p in v["participants"]
        )
    )


def _created(quorum: Any) -> float:
    """A quorum's creation time at the lighthouse, in seconds."""
    created = quorum.created
    return float(created.seconds) + float(created.nanos) * 1e-9
