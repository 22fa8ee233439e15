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
optimizer state and their step-``s`` partial gradient sum) so that all redo step ``s``.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from spare_fast.controller import Controller, Status
from spare_fast.layout import Layout
from spare_fast.torch._types import EventRecord, Fault, Kill, Stall, TrainSpec

_CKPT = "checkpoint.pt"
_FINAL = "final.pt"


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker process needs (pickled to it by the launcher)."""

    group: int
    epoch: int
    restore: bool
    spec: TrainSpec
    stacks: list[list[int]]
    store_port: int
    lighthouse_addr: str
    run_dir: str
    kills: tuple[Kill, ...]
    faults: tuple[Fault | Stall, ...]
    collective_timeout: float
    bucket_numel: int
    heartbeat_interval: float
    quorum_timeout: float
    quorum_poll: float
    verbose: bool


@dataclass
class _StepState:
    """One step in flight: what this worker computed and what it needs to redo it."""

    step: int
    depth: int
    comp: np.ndarray  # comp[t]: the group whose partial sum holds type t this step
    local: torch.Tensor  # this worker's gradient sum (flattened) followed by its loss sum
    computed: list[int]
    pre_model: dict[str, Any]
    pre_optim: dict[str, Any]
    events: list[EventRecord] = field(default_factory=list)


class ProtocolError(Exception):
    """The agreed quorum contradicts this worker's state (a bug or a false death): fatal."""


class Excluded(Exception):
    """The survivors agreed a membership without this (live) worker: it must stand down."""


#: Exit code of a worker that found itself dropped from the membership (a false death).
EXIT_EXCLUDED = 3


class WipeOut(Exception):
    """Raised inside a worker when the agreed membership leaves a type without holders."""


def main(config_path: str) -> None:
    """Entry point of a worker process: load the pickled :class:`WorkerConfig` and train."""
    with open(config_path, "rb") as fh:
        cfg = pickle.load(fh)
    if not isinstance(cfg, WorkerConfig):
        raise TypeError(f"{config_path} does not hold a WorkerConfig")
    # One thread per worker: the workers share the cores, and the sums stay deterministic.
    torch.set_num_threads(1)
    code = 0
    try:
        _Worker(cfg).run()
    except Excluded as exc:
        print(f"group {cfg.group} stands down: {exc}", file=sys.stderr, flush=True)
        code = EXIT_EXCLUDED
    except BaseException:  # noqa: BLE001 - reported here, then the process ends with code 1
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without interpreter teardown: the lighthouse client's runtime and gloo's threads
    # abort the process (SIGABRT) when destroyed during shutdown. Everything this worker must
    # leave behind (records, checkpoints) is closed and renamed by now.
    os._exit(code)


class _Worker:
    def __init__(self, cfg: WorkerConfig) -> None:
        # torchft is imported only once a worker runs: its Rust logger reads RUST_LOG at import,
        # which the launcher sets first (see SpareTrainer._run).
        from torchft.coordination import LighthouseClient

        self.cfg = cfg
        self.me = cfg.group
        self.spec = cfg.spec
        self.layout = Layout.from_stacks(np.asarray(cfg.stacks, dtype=np.int32))
        self.n_types = self.layout.n_types
        self.held = frozenset(int(t) for t in self.layout.stacks[self.me])
        self.status_ok = Status.OK
        self.ctl = Controller(self.layout)
        self.epoch = cfg.epoch
        self.store = dist.TCPStore(
            "127.0.0.1", cfg.store_port, is_master=False, timeout=timedelta(seconds=60)
        )
        self.replica_id = f"g{self.me}"
        self.lighthouse = LighthouseClient(
            addr=cfg.lighthouse_addr, connect_timeout=timedelta(seconds=10)
        )
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)
        self._beat.start()
        self.model = self.spec.model()
        self.params = [p for p in self.model.parameters()]
        self.optim = self.spec.optimizer(self.params)
        self.committed = 0
        self.cur: _StepState | None = None
        self.last: _StepState | None = None
        self.members: tuple[int, ...] = ()
        self.pg: dist.ProcessGroupGloo | None = None
        self.prefix = ""
        self.fired: set[Kill | Fault | Stall] = set()
        self.log = open(  # noqa: SIM115 - one line per commit for the whole life of the worker
            os.path.join(cfg.run_dir, f"g{self.me}-p{os.getpid()}.jsonl"), "a", encoding="utf-8"
        )

    # ------------------------------------------------------------------ membership
    def _heartbeat(self) -> None:
        from torchft.coordination import LighthouseClient

        client = LighthouseClient(
            addr=self.cfg.lighthouse_addr, connect_timeout=timedelta(seconds=10)
        )
        launcher = os.getppid()
        while not self._stop.is_set():
            if os.getppid() != launcher:
                # The launcher is gone (killed, or its run timed out): nobody will collect this
                # run, so do not linger in collectives and quorums until their timeouts.
                os._exit(1)
            try:
                client.heartbeat(self.replica_id, timeout=timedelta(seconds=5))
            except Exception:  # noqa: BLE001 - a missed beat is retried; the lighthouse decides
                pass
            self._stop.wait(self.cfg.heartbeat_interval)

    def _quorum(self, shrink_only: bool) -> Any:
        """Ask the lighthouse for the next quorum.

        While waiting, check the membership the others last agreed on (published in the store
        with every new gloo group): a worker that was stalled past the heartbeat timeout is
        alive but no longer a member, and a shrink-only quorum will never take it back.
        """
        deadline = time.monotonic() + self.cfg.quorum_timeout
        while True:
            if shrink_only:
                self._check_view()
            wait = min(self.cfg.quorum_poll, max(deadline - time.monotonic(), 0.001))
            try:
                return self.lighthouse.quorum(
                    replica_id=self.replica_id,
                    timeout=timedelta(seconds=wait),
                    step=self.committed,
                    shrink_only=shrink_only,
                    data={"epoch": self.epoch, "committed": self.committed, "pid": os.getpid()},
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

    @staticmethod
    def _groups_of(quorum: Any) -> tuple[int, ...]:
        return tuple(sorted(int(m.replica_id[1:]) for m in quorum.participants))

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
        """Start of an epoch: wait until every group is up, agree the full membership."""
        n = self.layout.n_groups
        key = f"e{self.epoch}/arrived"
        self.store.add(key, 1)
        deadline = time.monotonic() + self.cfg.quorum_timeout
        while int(self.store.add(key, 0)) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"epoch {self.epoch}: not all {n} workers arrived")
            time.sleep(0.02)
        everyone = tuple(range(n))
        while True:
            quorum = self._quorum(shrink_only=False)
            if self._groups_of(quorum) == everyone:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"epoch {self.epoch}: no quorum of all {n} groups")
            time.sleep(0.05)
        self.members = everyone
        self._build_pg(quorum)
        self._publish_view()

    # ------------------------------------------------------------------ compute
    def _flat(self) -> torch.Tensor:
        # A parameter the loss does not reach has no gradient: it contributes zeros.
        return torch.cat(
            [
                torch.zeros_like(p).reshape(-1) if p.grad is None else p.grad.reshape(-1)
                for p in self.params
            ]
        )

    def _grad_sum(self, step: int, types: list[int]) -> torch.Tensor:
        """Sum over ``types`` of the per-type gradient, then the sum of their losses."""
        size = sum(p.numel() for p in self.params)
        dtype = self.params[0].dtype
        total = torch.zeros(size + 1, dtype=dtype)
        for t in types:
            if t not in self.held:
                raise ProtocolError(f"group {self.me} was assigned type {t} it does not hold")
            inputs, targets = self.spec.shard(step, t)
            self.model.zero_grad(set_to_none=False)
            loss = self.spec.loss(self.model(inputs), targets)
            loss.backward()
            total[:size] += self._flat()
            total[size] += loss.detach()
        return total

    def _maybe_kill(self, step: int, phase: str) -> None:
        for kill in self.cfg.kills:
            if kill.group == self.me and kill.step == step and kill.phase == phase:
                if kill not in self.fired:
                    self.fired.add(kill)
                    self.log.flush()
                    os.kill(os.getpid(), signal.SIGKILL)

    def _maybe_stall(self, step: int) -> None:
        for stall in self.cfg.faults:
            if isinstance(stall, Stall) and (stall.group, stall.step) == (self.me, step):
                if stall not in self.fired:
                    self.fired.add(stall)
                    # A stopped process cannot wake itself: a helper sends SIGCONT later.
                    subprocess.Popen(
                        ["sh", "-c", f"sleep {float(stall.seconds)}; kill -CONT {os.getpid()}"]
                    )
                    os.kill(os.getpid(), signal.SIGSTOP)

    def _begin(self, step: int) -> _StepState:
        comp = np.asarray(self.ctl.assignment, dtype=np.int64).copy()
        mine = [int(t) for t in np.flatnonzero(comp == self.me)]
        state = _StepState(
            step=step,
            depth=int(self.ctl.depth),
            comp=comp,
            local=torch.zeros(0),
            computed=list(mine),
            pre_model=copy.deepcopy(self.model.state_dict()),
            pre_optim=copy.deepcopy(self.optim.state_dict()),
        )
        self._maybe_kill(step, "compute")
        self._maybe_stall(step)
        state.local = self._grad_sum(step, mine)
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
            self.committed = low
            self._write({"kind": "rollback", "step": low})
            self.cur, self.last = last, None
        if self.cur is None:
            raise ProtocolError(f"group {self.me}: recovery with no step in flight")
        dead = sorted(set(self.members) - set(new))
        self.members = new
        if dead:
            self._fail(self.cur, dead, quorum.quorum_id, t0)
        self._build_pg(quorum)
        self._publish_view()

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
        wiped = decision.status != self.status_ok
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
            cur.local = cur.local + self._grad_sum(cur.step, mine)
            cur.computed.extend(mine)

    # ------------------------------------------------------------------ records, checkpoints
    def _write(self, record: dict[str, Any]) -> None:
        record.update(group=self.me, pid=os.getpid(), epoch=self.epoch)
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()

    def _save(self, name: str) -> None:
        path = os.path.join(self.cfg.run_dir, name)
        tmp = f"{path}.tmp{os.getpid()}"
        torch.save(
            {
                "step": self.committed,
                "model": self.model.state_dict(),
                "optimizer": self.optim.state_dict(),
            },
            tmp,
        )
        os.replace(tmp, path)  # atomic: a worker killed mid-write leaves the old file intact

    def _load_checkpoint(self) -> None:
        blob = torch.load(os.path.join(self.cfg.run_dir, _CKPT), weights_only=True)
        self.model.load_state_dict(blob["model"])
        self.optim.load_state_dict(blob["optimizer"])
        self.committed = int(blob["step"])

    # ------------------------------------------------------------------ main loop
    def run(self) -> None:
        try:
            if self.cfg.restore:
                self._load_checkpoint()
            self._join_all()
            if self.committed == 0 and self.me == self.members[0] and not self.cfg.restore:
                self._save(_CKPT)
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

    def _restart(self) -> None:
        self.store.set(f"wipeout/{self.epoch}", json.dumps(list(self.members)))
        self.pg = None
        self.cur = self.last = None
        self.ctl.restart()
        self.epoch += 1
        self._load_checkpoint()
        if self.cfg.verbose and self.me == self.members[0]:
            print(
                f"restart {self.epoch}: all groups resume from the checkpoint at step "
                f"{self.committed}",
                flush=True,
            )
        self._join_all()

    def _train(self) -> None:
        n = self.n_types
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
            for p in self.params:
                k = p.numel()
                p.grad = (reduced[offset : offset + k] / n).reshape(p.shape).clone()
                offset += k
            self.optim.step()
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
            }
        )
        lead = self.me == self.members[0]
        if lead and self.committed % self.spec.checkpoint_every == 0:
            self._save(_CKPT)
        if lead and self.cfg.verbose:
            print(_format_step(cur, self.members, loss, self.layout.n_groups), flush=True)

    def _allreduce(self, tensor: torch.Tensor, step: int) -> bool:
        """Sum ``tensor`` over the members in place, bucket by bucket; False on failure.

        Buckets go one after the other, as in DDP's bucketed all-reduce; a ``Kill`` with
        phase ``"allreduce"`` fires once the first bucket has been reduced, so the survivors
        are inside this step's all-reduce (part of it done, the rest impossible) when the
        victim dies. The work handles and the exception stay local: once this returns False
        only ``self.pg`` refers to the failed group, and dropping it closes its sockets.
        """
        assert self.pg is not None
        try:
            for i, bucket in enumerate(torch.split(tensor, self.cfg.bucket_numel)):
                self.pg.allreduce([bucket]).wait()  # type: ignore[attr-defined]  # stub lacks it
                if i == 0:
                    self._maybe_kill(step, "allreduce")
        except RuntimeError:
            return False
        fault = Fault(self.me, step)
        if fault in self.cfg.faults and fault not in self.fired:
            self.fired.add(fault)
            # Report the error a moment late, as a timeout would: by then the other members
            # have certainly received everything and committed the step.
            time.sleep(0.5)
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
        quorum = self._quorum(shrink_only=True)
        if all(self._committed_of(m) == self.committed for m in quorum.participants):
            if self.me == self._groups_of(quorum)[0]:
                self._save(_FINAL)
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
