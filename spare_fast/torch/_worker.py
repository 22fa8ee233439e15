"""One worker process = one SPARe group.

The loop of a worker, in the paper's words: at the start of a step it computes the gradient
sums of the types the current decision assigns to it (its top-``depth`` layers), then joins the
all-reduce of the alive groups. When the collective fails (a peer's socket closed, or the gloo
timeout ran out), it asks the torchft lighthouse for a new quorum, turns the agreed membership
change into a controller event, recomputes only the patch types that fell to it, rebuilds the
gloo process group over the survivors and retries the same step's all-reduce. Every survivor
runs the same deterministic controller on the same sequence of quorums, so all reach the same
decision without a coordinator.

Why a step can need a one-step rollback: a gloo all-reduce can complete on some ranks and
fail on others when a peer dies inside it. A survivor that completed step ``s`` then fails in
step ``s + 1``; the quorum carries each member's committed step count, and members that are
one step ahead restore the state they kept from before step ``s``'s update (parameters,
buffers, optimizer and scheduler state and their step-``s`` partial sum) so that all redo
step ``s``.

An epoch (the first start, or the restart after a wipe-out) begins with a join: every group's
current process asks the lighthouse for quorums until one holds all N groups; that quorum's
members are published in the store as the epoch's formation. A process that dies before it is
replaced by the launcher; a death after it is a failure like any other, handled by the
survivors. A replacement that finds the epoch formed without it is not needed and leaves.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from multiprocessing.connection import wait as wait_for
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from spare_fast.controller import Controller, Status
from spare_fast.layout import Layout
from spare_fast.torch._checkpoint import Checkpoints
from spare_fast.torch._types import EventRecord, Phase, TrainSpec, type_seed

#: Exit code of a worker that found itself dropped from the membership (a false death).
EXIT_EXCLUDED = 3
#: Exit code of a replacement that found its epoch formed without it: not a failure.
EXIT_UNNEEDED = 4
#: Slots per group in the shared progress array: pid, epoch, step, phase, bucket.
PROGRESS_SLOTS = 5
#: DDP's default all-reduce bucket, ``bucket_cap_mb=25``.
DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024

FINAL = "final-g{group}.pt"


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker process needs (pickled to it by the launcher)."""

    group: int
    epoch: int
    checkpoint: str | None  # the file to start from; None: fresh weights from spec.model()
    spec: TrainSpec
    stacks: list[list[int]]
    store_port: int
    lighthouse_addr: str
    run_dir: str
    checkpoint_dir: str
    collective_timeout: float
    bucket_numel: int | None
    heartbeat_interval: float
    quorum_timeout: float
    quorum_poll: float
    verbose: bool
    injector: Any = None  # test-only hook (spare_fast.torch.testing.Injector); None in production


@dataclass
class _StepState:
    """One step in flight: what this worker computed and what it needs to redo it."""

    step: int
    depth: int
    comp: np.ndarray  # comp[t]: the group whose partial sum holds type t this step
    local: torch.Tensor  # gradient sums, buffer deltas, loss sum (flattened)
    computed: list[int]
    buffers: list[torch.Tensor]  # module buffers at the start of the step
    pre_model: dict[str, Any]
    pre_optim: dict[str, Any]
    pre_sched: dict[str, Any] | None
    events: list[EventRecord] = field(default_factory=list)


class ProtocolError(Exception):
    """The agreed quorum contradicts this worker's state (a bug or a false death): fatal."""


class Excluded(Exception):
    """The survivors agreed a membership without this (live) worker: it must stand down."""


class Unneeded(Exception):
    """This replacement's epoch formed without it: another process holds its group's place."""


class WipeOut(Exception):
    """Raised inside a worker when the agreed membership leaves a type without holders."""


def main(cfg: WorkerConfig, progress: Any) -> None:
    """Entry point of a worker process (started by the launcher's forkserver context).

    Args:
        cfg: The worker's configuration.
        progress: The launcher's shared ``int64`` array; this worker writes its group's
            :data:`PROGRESS_SLOTS` slots (pid, epoch, step, phase, bucket).
    """
    # One thread per worker: the workers share the cores, and the sums stay deterministic.
    torch.set_num_threads(1)
    code = 0
    try:
        _Worker(cfg, progress).run()
    except Excluded as exc:
        print(f"group {cfg.group} stands down: {exc}", file=sys.stderr, flush=True)
        code = EXIT_EXCLUDED
    except Unneeded:
        code = EXIT_UNNEEDED
    except BaseException as exc:  # noqa: BLE001 - reported here, then the process ends with code 1
        traceback.print_exc()
        _record_error(cfg, exc)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without interpreter teardown: the lighthouse client's runtime and gloo's threads
    # abort the process (SIGABRT) when destroyed during shutdown. Everything this worker must
    # leave behind (records, checkpoints) is closed and renamed by now.
    os._exit(code)


def _record_error(cfg: WorkerConfig, exc: BaseException) -> None:
    """Leave the error that ends this process in its record file, for the launcher's message."""
    record = {
        "kind": "error",
        "error": f"{type(exc).__name__}: {exc}",
        "group": cfg.group,
        "pid": os.getpid(),
    }
    try:
        path = os.path.join(cfg.run_dir, f"g{cfg.group}-p{os.getpid()}.jsonl")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    except OSError:  # the record is a courtesy; the exit code is the report
        pass


class _Worker:
    def __init__(self, cfg: WorkerConfig, progress: Any) -> None:
        # torchft is imported only once a worker runs: its Rust logger reads RUST_LOG at import,
        # which the launcher sets first (see SpareTrainer._run).
        import multiprocessing

        from torchft.coordination import LighthouseClient

        self.cfg = cfg
        self.me = cfg.group
        self.spec = cfg.spec
        self.progress = progress
        self.slot = self.me * PROGRESS_SLOTS
        self.epoch = cfg.epoch
        self.committed = 0
        self._report(Phase.STARTING)
        self.log = open(  # noqa: SIM115 - one line per commit for the whole life of the worker
            os.path.join(cfg.run_dir, f"g{self.me}-p{os.getpid()}.jsonl"), "a", encoding="utf-8"
        )
        self.layout = Layout.from_stacks(np.asarray(cfg.stacks, dtype=np.int32))
        self.n_types = self.layout.n_types
        self.held = frozenset(int(t) for t in self.layout.stacks[self.me])
        self.ctl = Controller(self.layout)
        self.ckpts = Checkpoints(cfg.checkpoint_dir)
        parent = multiprocessing.parent_process()
        self.parent_sentinel = None if parent is None else parent.sentinel
        self.store = dist.TCPStore(
            "127.0.0.1", cfg.store_port, is_master=False, timeout=timedelta(seconds=60)
        )
        # One lighthouse identity per process, not per group: a replacement must never be
        # taken for the process it replaces (a shrink-only quorum admits only old members).
        self.replica_id = f"g{self.me}:{os.getpid()}"
        self.lighthouse = LighthouseClient(
            addr=cfg.lighthouse_addr, connect_timeout=timedelta(seconds=10)
        )
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()
        self.model = self.spec.model()
        self.params = list(self.model.parameters())
        self.buffers = list(self.model.buffers())
        self.optim = self.spec.optimizer(self.params)
        self.sched = None if self.spec.scheduler is None else self.spec.scheduler(self.optim)
        self.n_params = sum(p.numel() for p in self.params)
        self.n_buffers = sum(b.numel() for b in self.buffers)
        self.dtype = self.params[0].dtype
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        self.bucket_numel = int(cfg.bucket_numel or max(DEFAULT_BUCKET_BYTES // itemsize, 1))
        self.cur: _StepState | None = None
        self.last: _StepState | None = None
        self.members: tuple[int, ...] = ()
        self.pg: dist.ProcessGroupGloo | None = None
        self.prefix = ""

    # ------------------------------------------------------------------ progress, records
    def _report(self, phase: Phase, bucket: int = 0) -> None:
        # Plain stores into shared memory: free, and readable by the launcher at any moment.
        p, s = self.progress, self.slot
        p[s], p[s + 1], p[s + 2], p[s + 3], p[s + 4] = (
            os.getpid(),
            self.epoch,
            self.committed,
            int(phase),
            bucket,
        )

    def _write(self, record: dict[str, Any]) -> None:
        record.update(group=self.me, pid=os.getpid(), epoch=self.epoch)
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()

    # ------------------------------------------------------------------ membership
    def _heartbeat(self) -> None:
        from torchft.coordination import LighthouseClient

        client = LighthouseClient(
            addr=self.cfg.lighthouse_addr, connect_timeout=timedelta(seconds=10)
        )
        while not self._stop.is_set():
            if self.parent_sentinel is not None and wait_for([self.parent_sentinel], 0):
                # The launcher is gone (killed, or its run ended): nobody will collect this
                # run, so do not linger in collectives and quorums until their timeouts.
                os._exit(1)
            try:
                client.heartbeat(self.replica_id, timeout=timedelta(seconds=5))
            except Exception:  # noqa: BLE001 - a missed beat is retried; the lighthouse decides
                pass
            self._stop.wait(self.cfg.heartbeat_interval)

    def _quorum(self, shrink_only: bool) -> Any:
        """Ask the lighthouse for the next quorum.

        While waiting, a shrink-only request checks the membership the others last agreed on
        (published with every new gloo group): a worker that was stalled past the heartbeat
        timeout is alive but no longer a member, and a shrink-only quorum will never take it
        back. A join request checks whether the epoch formed without this process.
        """
        deadline = time.monotonic() + self.cfg.quorum_timeout
        while True:
            if shrink_only:
                self._check_view()
            else:
                self._check_formed()
            wait = min(self.cfg.quorum_poll, max(deadline - time.monotonic(), 0.001))
            try:
                return self.lighthouse.quorum(
                    replica_id=self.replica_id,
                    timeout=timedelta(seconds=wait),
                    step=self.committed,
                    shrink_only=shrink_only,
                    data={
                        "group": self.me,
                        "epoch": self.epoch,
                        "committed": self.committed,
                        "pid": os.getpid(),
                    },
                )
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise

    def _publish_view(self) -> None:
        self.store.set(f"e{self.epoch}/view", json.dumps(list(self.members)))

    def _check_view(self) -> None:
        key = f"e{self.epoch}/view"
        if self.store.check([key]):
            members = json.loads(self.store.get(key).decode())
            if self.me not in members:
                raise Excluded(f"epoch {self.epoch} members are now {members}")

    def _check_formed(self) -> None:
        key = f"e{self.epoch}/formed"
        if self.store.check([key]):
            if self.replica_id not in json.loads(self.store.get(key).decode()):
                raise Unneeded()

    @classmethod
    def _groups_of(cls, quorum: Any) -> tuple[int, ...]:
        return tuple(sorted(int(cls._data_of(m)["group"]) for m in quorum.participants))

    def _build_pg(self, quorum: Any) -> None:
        # A fresh gloo group per agreed quorum: the quorum id and creation time are the same in
        # every member, so they name a store prefix no earlier group used.
        created = quorum.created
        self.prefix = f"e{self.epoch}/q{quorum.quorum_id}-{created.seconds}.{created.nanos}"
        self.pg = None
        rank = self.members.index(self.me)
        self.pg = dist.ProcessGroupGloo(
            dist.PrefixStore(self.prefix + "/pg/", self.store),
            rank,
            len(self.members),
            timedelta(seconds=self.cfg.collective_timeout),
        )

    def _join_all(self) -> None:
        """Start of an epoch: agree a quorum of every group's current process."""
        self._report(Phase.JOIN)
        n = self.layout.n_groups
        everyone = tuple(range(n))
        deadline = time.monotonic() + self.cfg.quorum_timeout
        while True:
            quorum = self._quorum(shrink_only=False)
            epochs = {int(self._data_of(m)["epoch"]) for m in quorum.participants}
            if self._groups_of(quorum) == everyone and epochs == {self.epoch}:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"epoch {self.epoch}: no quorum of all {n} groups within "
                    f"{self.cfg.quorum_timeout} s (last: groups {self._groups_of(quorum)})"
                )
        ids = sorted(str(m.replica_id) for m in quorum.participants)
        self.store.set(f"e{self.epoch}/formed", json.dumps(ids))
        self.members = everyone
        self._publish_view()
        try:
            self._build_pg(quorum)
        except RuntimeError:
            # A member of the quorum died before its rendezvous: the first all-reduce fails
            # and the usual recovery masks it.
            self.pg = None

    # ------------------------------------------------------------------ compute
    def _flat_grads(self) -> torch.Tensor:
        # A parameter the loss does not reach has no gradient: it contributes zeros.
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

    def _type_sums(self, state: _StepState, types: list[int]) -> torch.Tensor:
        """Sum over ``types`` of the gradient, the buffer change and the loss of each type."""
        total = torch.zeros(self.n_params + self.n_buffers + 1, dtype=self.dtype)
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
            torch.manual_seed(type_seed(self.spec.seed, state.step, t))
            inputs, targets = self.spec.shard(state.step, t)
            self.model.zero_grad(set_to_none=False)
            loss = self.spec.loss(self.model(inputs), targets)
            loss.backward()
            total[:p] += self._flat_grads()
            if start is not None:
                now = torch.cat([x.detach().reshape(-1).to(self.dtype) for x in self.buffers])
                # Equal values (constant buffers, -inf masks included) change by exactly 0.
                total[p : p + b] += torch.where(now == start, torch.zeros_like(now), now - start)
            total[-1] += loss.detach()
        self._set_buffers(state.buffers)
        return total

    def _begin(self, step: int) -> _StepState:
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
            pre_optim=copy.deepcopy(self.optim.state_dict()),
            pre_sched=None if self.sched is None else copy.deepcopy(self.sched.state_dict()),
        )
        state.local = self._type_sums(state, mine)
        return state

    # ------------------------------------------------------------------ failures
    def _apply(self, quorum: Any, t0: float) -> None:
        """Turn an agreed quorum into a rollback, a controller event and a new gloo group."""
        new = self._groups_of(quorum)
        if not set(new) <= set(self.members) or self.me not in new:
            raise ProtocolError(f"quorum {new} is not a subset of members {self.members}")
        epochs = {int(self._data_of(m)["epoch"]) for m in quorum.participants}
        if epochs != {self.epoch}:
            raise ProtocolError(f"quorum mixes epochs {sorted(epochs)} (here {self.epoch})")
        low = min(self._committed_of(m) for m in quorum.participants)
        if low < self.committed:
            last = self.last
            if low != self.committed - 1 or last is None or last.step != low:
                raise ProtocolError(
                    f"group {self.me} committed {self.committed} steps, a survivor {low}"
                )
            self.model.load_state_dict(last.pre_model)
            self.optim.load_state_dict(last.pre_optim)
            if self.sched is not None and last.pre_sched is not None:
                self.sched.load_state_dict(last.pre_sched)
            self.committed = low
            self._write({"kind": "rollback", "step": low})
            self.cur, self.last = last, None
        if self.cur is None:
            raise ProtocolError(f"group {self.me}: recovery with no step in flight")
        dead = sorted(set(self.members) - set(new))
        self.members = new
        if dead:
            self._fail(self.cur, dead, quorum.quorum_id, t0)
        self._publish_view()
        self._build_pg(quorum)

    @staticmethod
    def _data_of(member: Any) -> dict[str, Any]:
        data = member.data
        return dict(json.loads(data) if isinstance(data, str) else data)

    @classmethod
    def _committed_of(cls, member: Any) -> int:
        return int(cls._data_of(member)["committed"])

    def _fail(self, cur: _StepState, dead: list[int], quorum_id: int, t0: float) -> None:
        decision = self.ctl.fail(dead)
        patch = tuple((int(t), int(g)) for t, g in np.asarray(decision.patch).reshape(-1, 2))
        wiped = decision.status != Status.OK
        lost = [t for t in range(self.n_types) if int(cur.comp[t]) in dead]
        done: list[tuple[int, int]] = []
        if not wiped:
            assignment = np.asarray(decision.assignment)
            for t in lost:
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
            step=cur.step,
            seconds=time.perf_counter() - t0,
            decided_at=time.monotonic(),
        )
        cur.events.append(event)
        if wiped:
            self._write({"kind": "wipeout", "event": asdict(event), "members": self.members})
            if self.cfg.verbose and self.me == self.members[0]:
                print(
                    f"step {cur.step:3d}  groups {dead} died -> WIPEOUT: every group restarts "
                    "from the last checkpoint",
                    flush=True,
                )
            raise WipeOut()
        mine = [t for t, g in done if g == self.me]
        if mine:
            self._report(Phase.COMPUTE)
            cur.local = cur.local + self._type_sums(cur, mine)
            cur.computed.extend(mine)

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self) -> None:
        self._report(Phase.CHECKPOINT)
        self.ckpts.save(
            self.committed,
            {
                "step": self.committed,
                "model": self.model.state_dict(),
                "optimizer": self.optim.state_dict(),
                "scheduler": None if self.sched is None else self.sched.state_dict(),
                "rng": torch.get_rng_state(),
                "seed": int(self.spec.seed),
            },
        )

    def _load_checkpoint(self, path: str) -> None:
        blob = Checkpoints.load(path)
        self.model.load_state_dict(blob["model"])
        self.optim.load_state_dict(blob["optimizer"])
        if self.sched is not None:
            if blob.get("scheduler") is None:
                raise ProtocolError(f"checkpoint {path} has no LR scheduler state")
            self.sched.load_state_dict(blob["scheduler"])
        torch.set_rng_state(blob["rng"])
        self.committed = int(blob["step"])

    # ------------------------------------------------------------------ main loop
    def run(self) -> None:
        try:
            if self.cfg.checkpoint is not None:
                self._load_checkpoint(self.cfg.checkpoint)
            self._join_all()
            if self.committed == 0 and self.cfg.checkpoint is None and self._lead():
                self._save_checkpoint()
            while True:
                try:
                    self._train()
                    if self._finish():
                        break
                except WipeOut:
                    self._restart()
        finally:
            self._stop.set()
            self.log.close()

    def _lead(self) -> bool:
        return self.me == self.members[0]

    def _restart(self) -> None:
        self._report(Phase.RESTART)
        self.store.set(f"wipeout/{self.epoch}", json.dumps(list(self.members)))
        self._drop_pg()
        self.cur = self.last = None
        self.ctl.restart()
        self.epoch += 1
        # The launcher names the epoch's checkpoint, so survivors and replacements load the
        # same file even if a newer one appeared or one was found corrupt.
        key = f"e{self.epoch}/checkpoint"
        deadline = time.monotonic() + self.cfg.quorum_timeout
        while not self.store.check([key]):
            if time.monotonic() > deadline:
                raise TimeoutError(f"epoch {self.epoch}: the launcher named no checkpoint")
            time.sleep(0.02)
        path = self.store.get(key).decode()
        if path:
            self._load_checkpoint(path)
        else:  # no checkpoint survived: start over from the initial weights
            self._fresh_state()
        self._report(Phase.RESTART)
        if self.cfg.verbose and self.me == self.members[0]:
            print(
                f"restart {self.epoch}: all groups resume from the checkpoint at step "
                f"{self.committed}",
                flush=True,
            )
        self._join_all()

    def _fresh_state(self) -> None:
        fresh = self.spec.model()
        self.model.load_state_dict(fresh.state_dict())
        self.optim = self.spec.optimizer(self.params)
        self.sched = None if self.spec.scheduler is None else self.spec.scheduler(self.optim)
        self.committed = 0

    def _train(self) -> None:
        n = self.n_types
        p, b = self.n_params, self.n_buffers
        while self.committed < self.spec.steps or self.cur is not None:
            if self.cur is None:
                self.cur = self._begin(self.committed)
            cur = self.cur
            reduced = cur.local.clone()
            if not self._allreduce(reduced, cur.step):
                self._drop_pg()
                self._recover_until_built()
                continue
            offset = 0
            for param in self.params:
                k = param.numel()
                param.grad = (reduced[offset : offset + k] / n).reshape(param.shape).clone()
                offset += k
            self.optim.step()
            if self.sched is not None:
                self.sched.step()
            with torch.no_grad():
                for buf, start in zip(self.buffers, cur.buffers, strict=True):
                    k = buf.numel()
                    delta = (reduced[offset : offset + k] / n).reshape(buf.shape)
                    value = start.to(self.dtype) + delta
                    if not buf.is_floating_point():
                        value = value.round()
                    buf.copy_(value.to(buf.dtype))
                    offset += k
            assert offset == p + b
            self.committed = cur.step + 1
            self._commit(cur, float(reduced[-1]) / n)
            self.last, self.cur = cur, None

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
        if self._lead() and self.cfg.verbose:
            print(_format_step(cur, self.members, loss, self.layout.n_groups), flush=True)
        if self._lead() and (
            self.committed % self.spec.checkpoint_every == 0 or self.committed == self.spec.steps
        ):
            self._save_checkpoint()

    def _allreduce(self, tensor: torch.Tensor, step: int) -> bool:
        """Sum ``tensor`` over the members in place, bucket by bucket; False on failure.

        Buckets go one after the other, as in DDP's bucketed all-reduce, and each is reported
        in the progress array before it starts. The work handles and the exception stay local:
        once this returns False only ``self.pg`` refers to the failed group, and dropping it
        closes its sockets.
        """
        if self.pg is None:
            return False
        try:
            for i, bucket in enumerate(torch.split(tensor, self.bucket_numel)):
                self._report(Phase.ALLREDUCE, i)
                self.pg.allreduce([bucket]).wait()  # type: ignore[attr-defined]  # stub lacks it
        except RuntimeError:
            return False
        injector = self.cfg.injector
        if injector is not None and injector.collective_error(self.me, step):
            return False
        return True

    def _drop_pg(self) -> None:
        # Abort closes this worker's sockets, so peers still blocked in the failed collective
        # (those not wired to the dead worker) see "connection closed" now instead of waiting
        # out the gloo timeout.
        if self.pg is not None:
            try:
                self.pg.abort()
            except RuntimeError:
                pass
        self.pg = None

    def _recover_until_built(self) -> None:
        self._report(Phase.RECOVER)
        t0 = time.perf_counter()
        while True:
            self._drop_pg()
            try:
                self._apply(self._quorum(shrink_only=True), t0)
                return
            except RuntimeError:
                continue  # a member died while the new gloo group was being built

    def _finish(self) -> bool:
        """All steps committed here: one more quorum decides whether every alive member has.

        A member whose last all-reduce failed asks for a quorum too, so it meets the finished
        members in the same quorum; they then roll back and redo the step with it.
        """
        self._report(Phase.FINISH)
        quorum = self._quorum(shrink_only=True)
        if all(self._committed_of(m) == self.committed for m in quorum.participants):
            # Every member writes the final parameters (the same values): the run's result
            # must not depend on one particular member surviving the next milliseconds.
            path = os.path.join(self.cfg.run_dir, FINAL.format(group=self.me))
            tmp = f"{path}.tmp"
            torch.save({"step": self.committed, "model": self.model.state_dict()}, tmp)
            os.replace(tmp, path)
            return True
        self._drop_pg()
        try:
            self._apply(quorum, time.perf_counter())
        except RuntimeError:
            self._recover_until_built()
        return False


def _format_step(cur: _StepState, members: tuple[int, ...], loss: float, n_groups: int) -> str:
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
