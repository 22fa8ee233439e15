"""Bounded time for every failure, and the own loop's restart after a wipe-out.

Own-loop runs use the LoopRun of _torch_harness.py: a lighthouse and a store in this
process, SpareGroup workers as processes on 127.0.0.2, signals by PID from here.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import torch
from _torch_harness import (
    LOOP_LAYOUT,
    LOOP_STEPS,
    LOOP_WIPED_OUT,
    REPO_ROOT,
    LoopRun,
    alive_pids,
    max_rel_diff,
)

from spare_fast import Layout
from spare_fast.torch import SpareGroup, mlp, newest_checkpoint
from spare_fast.torch._bounds import EXIT_SERVICE_LOST
from spare_fast.torch._joins import claim
from spare_fast.torch._serve import serve

STEPS, LAYOUT = LOOP_STEPS, LOOP_LAYOUT


def _final(run: LoopRun, slot: int) -> dict[str, torch.Tensor]:
    group, proc = run.procs[slot]
    path = os.path.join(run.out, f"final-g{group}-p{proc.pid}.pt")
    return torch.load(path, weights_only=True)


# ---------------------------------------------------------------------- wipe-out restart
def test_own_loop_restarts_every_group_from_the_newest_checkpoint_on_the_same_lighthouse(
    tmp_path, mlp_reference
) -> None:
    ckpts = str(tmp_path / "ckpts")
    with LoopRun(LAYOUT, STEPS, str(tmp_path), checkpoint_dir=ckpts) as run:
        first = [run.start(g) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in first) >= 5)
        # Groups 1 and 2 are the only holders of type 2 (cyclic, r = 2): a wipe-out.
        run.kill(first[1])
        run.kill(first[2])
        for slot in (first[0], first[3]):
            run.procs[slot][1].join(60)
        codes = {s: run.procs[s][1].exitcode for s in first}
        assert codes[first[0]] == codes[first[3]] == LOOP_WIPED_OUT, codes
        path = newest_checkpoint(ckpts)
        assert path is not None and int(os.path.basename(path)[5:13]) >= 4
        # Every group again, from that checkpoint, on the same lighthouse and store.
        second = [run.start(g, resume=True) for g in range(4)]
        codes = run.join(120)
        for slot in second:
            assert codes[slot] == 0, f"group {run.procs[slot][0]} ended {codes[slot]}"
            assert max_rel_diff(_final(run, slot), mlp_reference) <= 1e-10


# ---------------------------------------------------------------------- a frozen process
def _gone(pid: int) -> bool:
    return alive_pids([pid]) == []


def test_a_frozen_process_is_killed_by_its_watchdog_within_the_heartbeat_timeout(
    tmp_path, mlp_reference
) -> None:
    heartbeat = 1.0
    with LoopRun(LAYOUT, STEPS, str(tmp_path), heartbeat_timeout=heartbeat) as run:
        slots = [run.start(g) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in slots) >= 3)
        pid = run.state(slots[2])[0]
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        run.wait(lambda: _gone(pid), timeout=30)
        ended = time.monotonic() - t0
        codes = run.join(60)
        events = None
        for s in (slots[0], slots[1], slots[3]):
            assert codes[s] == 0, codes
            assert max_rel_diff(_final(run, s), mlp_reference) <= 1e-10
            with open(_events_file(run, s), encoding="utf-8") as fh:
                events = json.load(fh)["events"]
    # Killed from outside within the heartbeat timeout plus a margin (not the 5 s collective
    # timeout), and the event counts its detection from the wait on the collective.
    assert codes[slots[2]] == -signal.SIGKILL
    assert ended <= heartbeat + 1.5, f"the frozen process ended after {ended:.2f} s"
    assert events is not None
    ((event),) = events
    assert event["dead"] == [2]
    assert event["seconds"] >= 0.5 * heartbeat, event


def _events_file(run: LoopRun, slot: int) -> str:
    group, proc = run.procs[slot]
    return os.path.join(run.out, f"events-g{group}-p{proc.pid}.json")


# ---------------------------------------------------------------------- a lost lighthouse
def _serve_elsewhere(
    heartbeat_ms: int, bind: str = "127.0.0.2:0", store_port: int = 0
) -> tuple[subprocess.Popen[str], str, str]:
    """``spare-fast lighthouse`` as a process: (process, lighthouse address, store address)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "spare_fast", "lighthouse", "--bind", bind,
         "--store-port", str(store_port),
         "--heartbeat-timeout-ms", str(heartbeat_ms), "--join-timeout-ms", "30000"],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": REPO_ROOT, "RUST_LOG": "warn"},
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    words = proc.stdout.readline().split()  # type: ignore[union-attr]
    return proc, words[1], words[3]


def _stop(server: subprocess.Popen[str]) -> None:
    if server.poll() is None:
        server.kill()
    server.wait()
    if server.stdout is not None:
        server.stdout.close()


@contextlib.contextmanager
def _four_groups_past_step_two(
    tmp_path, lighthouse: str, store: str, bound: float
) -> Iterator[tuple[LoopRun, list[int]]]:
    """Four groups on the given services, each past its second step."""
    with LoopRun(
        LAYOUT,
        STEPS,
        str(tmp_path),
        services=(lighthouse, store),
        service_timeout=bound,
        logs=True,
        pause=0.2,
    ) as run:
        slots = [run.start(g) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in slots) >= 2)
        yield run, slots


def test_losing_the_lighthouse_ends_every_group_within_the_bound_with_one_line(
    tmp_path,
) -> None:
    server, lighthouse, store = _serve_elsewhere(1000)
    bound = 3.0
    try:
        with _four_groups_past_step_two(tmp_path, lighthouse, store, bound) as (run, slots):
            _stop(server)  # the lighthouse and the store with it
            t0 = time.monotonic()
            codes = run.join(bound + 20)
            took = time.monotonic() - t0
            logs = {s: _log(run, s) for s in slots}
    finally:
        _stop(server)
    assert all(codes[s] == EXIT_SERVICE_LOST for s in slots), codes
    assert took <= bound + 5.0, f"the groups ended {took:.1f} s after the lighthouse"
    for s, text in logs.items():
        assert text.count("lost the") == 1, text[-2000:]
        assert len(text) < 20_000, f"slot {s} wrote {len(text)} bytes of log"


def test_a_lighthouse_restarted_empty_at_its_address_ends_every_group_at_once(tmp_path) -> None:
    # spare-fast lighthouse serves the store too: restarted, the store is empty (the published
    # memberships are gone), so the groups end with the service exit code, without waiting out
    # the (long) bound.
    server, lighthouse, store = _serve_elsewhere(1000)
    try:
        with _four_groups_past_step_two(tmp_path, lighthouse, store, 60.0) as (run, slots):
            _stop(server)
            bind = lighthouse.removeprefix("http://")
            server, _, _ = _serve_elsewhere(1000, bind, int(store.rsplit(":", 1)[1]))
            t0 = time.monotonic()
            codes = run.join(30)
            took = time.monotonic() - t0
            logs = {s: _log(run, s) for s in slots}
    finally:
        _stop(server)
    assert all(codes[s] == EXIT_SERVICE_LOST for s in slots), codes
    assert took <= 15.0, f"the groups ended {took:.1f} s after the restart"
    for text in logs.values():
        assert text.count("came back empty") == 1, text[-2000:]


def _log(run: LoopRun, slot: int) -> str:
    group, proc = run.procs[slot]
    path = os.path.join(run.out, f"log-g{group}-p{proc.pid}.txt")
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


# ---------------------------------------------------------------------- joins that cannot work
def _group_of(n: int, **kwargs: object) -> SpareGroup:
    model = mlp.build_mlp()
    return SpareGroup(model, mlp.make_sgd(model.parameters()), Layout.cyclic(n, 2), 4, **kwargs)


def test_a_group_with_a_wrong_lighthouse_address_fails_fast_naming_itself() -> None:
    with serve("127.0.0.2") as service:
        group = _group_of(
            4, group=2, lighthouse="http://127.0.0.2:1", store=service.store_addr, bind="127.0.0.2"
        )
        t0 = time.monotonic()
        with pytest.raises(ConnectionError, match=r"group 2: the lighthouse http://127.0.0.2:1"):
            group.start()
        assert time.monotonic() - t0 < 15


def test_a_group_started_with_another_n_fails_fast_naming_both_values() -> None:
    with serve("127.0.0.2") as service:
        claim(service.store, 0, 4, 0.0)  # the run's first process: N = 4
        group = _group_of(
            5,
            group=1,
            lighthouse=service.lighthouse_addr,
            store=service.store_addr,
            bind="127.0.0.2",
        )
        with pytest.raises(ValueError, match=r"group 1 was started with N = 5 .* N = 4"):
            group.start()


def test_a_second_process_claiming_a_live_group_is_refused(tmp_path, mlp_reference) -> None:
    with LoopRun(LAYOUT, STEPS, str(tmp_path), pause=0.2, logs=True) as run:
        slots = [run.start(g) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in slots) >= 1)
        extra = run.start(1)
        run.procs[extra][1].join(30)
        assert run.procs[extra][1].exitcode == 1
        assert "group 1 is alive in another process" in _log(run, extra)
        codes = run.join(120)
        for s in slots:
            assert codes[s] == 0, codes
            assert max_rel_diff(_final(run, s), mlp_reference) <= 1e-10


# A group's worker under torchrun: the harness's own loop, its PID written to a file.
TORCHRUN_WORKER = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
from _torch_harness import LOOP_SLOTS, LoopConfig, loop_worker
cfg = LoopConfig(**json.loads(sys.argv[2]))
with open(os.path.join(cfg.out, "torchrun-worker.pid"), "w") as fh:
    fh.write(str(os.getpid()))
loop_worker(cfg, [0] * (LOOP_SLOTS * (cfg.slot + 1)))
"""


def test_a_frozen_worker_under_torchrun_ends_and_so_does_its_torchrun(
    tmp_path, mlp_reference
) -> None:
    heartbeat = 1.0
    script = tmp_path / "worker.py"
    script.write_text(TORCHRUN_WORKER)
    tests = os.path.dirname(os.path.abspath(__file__))
    root = REPO_ROOT
    with LoopRun(LAYOUT, STEPS, str(tmp_path), heartbeat_timeout=heartbeat, pause=0.1) as run:
        cfg = {
            "group": 3, "slot": 0, "stacks": LAYOUT.stacks.tolist(), "steps": STEPS,
            "lighthouse": run.lighthouse_addr, "store": f"{run.host}:{run.store.port}",
            "bind": run.host, "out": str(tmp_path), "pause": 0.1,
        }  # fmt: skip
        agent = subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--standalone",
             "--nproc-per-node", "1", "--max-restarts", "0", "--monitor-interval", "0.1",
             str(script), tests, json.dumps(cfg)],
            env={**os.environ, "PYTHONPATH": root, "RUST_LOG": "warn"},
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            # The others once torchrun's worker has imported torch: the run forms at once.
            pid_file = tmp_path / "torchrun-worker.pid"
            run.wait(lambda: pid_file.exists() and pid_file.read_text() != "", timeout=120)
            pid = int(pid_file.read_text())
            slots = [run.start(g) for g in range(3)]
            run.wait(lambda: min(run.state(s)[1] for s in slots) >= 3, timeout=120)
            os.kill(pid, signal.SIGSTOP)
            t0 = time.monotonic()
            code = agent.wait(timeout=60)
            ended = time.monotonic() - t0
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()
        codes = run.join(90)
        for s in slots:
            assert codes[s] == 0, codes
            assert max_rel_diff(_final(run, s), mlp_reference) <= 1e-10
    assert code != 0
    assert alive_pids([pid]) == []
    assert ended <= heartbeat + 3.0, f"torchrun ended {ended:.2f} s after the freeze"
