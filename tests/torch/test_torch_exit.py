"""Every process of a user's own loop exits with the code its script chose, on every path.

Each path of ``_exit_worker.py`` (a loop written from the README) runs as its own process,
several times (``SPARE_FAST_EXIT_REPEATS``, 2 by default), and leaves through the
interpreter's own exit: no ``terminate called``, no SIGABRT, no hang. The processes are forked
by one zygote that imported torch once (a fresh interpreter per process would cost seconds of
CPU each) and all run at the same time, each run on a lighthouse of its own. The same round
holds the refusals before step 0: two processes claiming one group (at the start and after
the run formed), a group of K = 2 ranks among groups of K = 1 (its two ranks with the
variables torchrun sets), and ``spare-fast lighthouse`` ending on SIGINT and SIGTERM.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).with_name("_exit_worker.py")
REPO = Path(__file__).resolve().parents[2]
REPEATS = int(os.environ.get("SPARE_FAST_EXIT_REPEATS", "2"))
HOST = "127.0.0.2"
ABORTS = ("terminate called", "SIGABRT", "FATAL: exception not rethrown", "Aborted")

#: Each path's run: (worker path, exit code) per group of a run of two groups, r = 1 (the
#: second group meets the wipe-out that the first one's end causes).
RUNS: dict[str, list[tuple[str, int]]] = {
    "with": [("with", 0), ("with", 0)],
    "noclose": [("noclose", 0), ("noclose", 0)],
    "start-timeout": [("timeout", 1)],
    "start-raise": [("start-raise", 1)],
    "reduce-raise": [("reduce-raise", 1), ("wipeout", 2)],
    "step-end-raise": [("step-end-raise", 1), ("wipeout", 2)],
    "sigint": [("sigint", -signal.SIGINT), ("wipeout", 2)],
    "sysexit": [("sysexit", 7), ("wipeout", 2)],
}


@dataclass
class Proc:
    """One forked process: its output file, the exit code it must end with, its outcome."""

    out: Path
    want: int
    pid: int = 0
    rc: int | None = None
    text: str = field(default="", repr=False)

    @property
    def last(self) -> str:
        lines = [ln for ln in self.text.splitlines() if "no run key" not in ln]
        return lines[-1] if lines else ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _service() -> Any:
    from spare_fast.torch._serve import serve
    from spare_fast.torch._watchdog import publish_heartbeat_timeout

    service = serve(HOST, join_timeout_ms=30_000, heartbeat_timeout_ms=1000)
    publish_heartbeat_timeout(service.store, 1.0)
    return service


class Round:
    """The zygote, the services and every process of the round."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.services: list[Any] = []
        self.procs: dict[str, list[Proc]] = {}
        env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        self.env = env
        self.zygote = subprocess.Popen(  # noqa: S603 - our own interpreter and file
            [sys.executable, str(WORKER), "--zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.order: list[Proc] = []

    def start(self, name: str, args: str, want: int) -> Proc:
        """Fork a process (``args``: its worker arguments)."""
        assert self.zygote.stdin is not None
        proc = Proc(self.out / f"{name}-{len(self.order)}.txt", want)
        self.procs.setdefault(name, []).append(proc)
        self.order.append(proc)
        self.zygote.stdin.write(f"{proc.out} {args}\n")
        self.zygote.stdin.flush()
        return proc

    def run(self, name: str, paths: list[tuple[str, int]], pause: float = 0.0) -> Any:
        service = _service()
        self.services.append(service)
        for g, (path, want) in enumerate(paths):
            where = f"{service.lighthouse_addr} {service.store_addr}"
            self.start(name, f"{path} {g} {len(paths)} {where} 0 {pause}", want)
        return service

    def finish(self, timeout: float) -> None:
        out, _ = self.zygote.communicate(timeout=timeout)  # closes stdin: no more forks
        started = [int(w.split()[1]) for w in out.splitlines() if w.startswith("started")]
        codes = {
            int(w.split()[1]): int(w.split()[2]) for w in out.splitlines() if w.startswith("exit")
        }
        for proc, pid in zip(self.order, started, strict=True):
            proc.pid, proc.rc = pid, codes.get(pid)
            proc.text = proc.out.read_text(errors="replace")

    def close(self) -> None:
        if self.zygote.poll() is None:
            self.zygote.kill()
            self.zygote.wait()
        for service in self.services:
            service.shutdown()


def _lighthouse_cli() -> tuple[subprocess.Popen[str], str, str]:
    """``spare-fast lighthouse`` in a process of its own: the process and its addresses."""
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter
        [
            sys.executable,
            "-m",
            "spare_fast",
            "lighthouse",
            "--bind",
            f"{HOST}:0",
            "--heartbeat-timeout-ms",
            "1000",
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        # SIGINT as a terminal's Ctrl-C delivers it (a background job may inherit it ignored).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    words = proc.stdout.readline().split()
    return proc, words[1], words[3]


@pytest.fixture(scope="module")
def round_(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Round]:
    """Every process of the round, run at once; yields once all have ended."""
    out = tmp_path_factory.mktemp("exit")
    rnd = Round(out)
    clis = []
    try:
        for _ in range(REPEATS):
            for name, paths in RUNS.items():
                rnd.run(name, paths)
            # A refusal before step 0: one group's seed differs (the script catches it).
            seeds = _service()
            rnd.services.append(seeds)
            where = f"{seeds.lighthouse_addr} {seeds.store_addr}"
            for g in range(2):
                rnd.start("refusal", f"refuse {g} 2 {where} {g}", 1)
        # Two processes claim group 1 from the start: every process is refused.
        dup = _service()
        rnd.services.append(dup)
        where = f"{dup.lighthouse_addr} {dup.store_addr}"
        for g in (0, 1, 1, 2, 3):  # steps of 1 s: a late second claimant finds the run on
            rnd.start("claimed-twice", f"refuse {g} 4 {where} 0 1.0", 1)
        # Group 2 runs K = 2 ranks (torchrun's variables, no process group of the script's).
        mixed = _service()
        rnd.services.append(mixed)
        where = f"{mixed.lighthouse_addr} {mixed.store_addr}"
        master = f"env:MASTER_ADDR={HOST} env:MASTER_PORT={_free_port()} env:WORLD_SIZE=2"
        for g in (0, 1, 3):
            rnd.start("mixed-k", f"refuse {g} 4 {where}", 1)
        for r in range(2):
            rank = f"env:RANK={r} env:LOCAL_RANK={r}"
            rnd.start("mixed-k", f"{master} {rank} refuse 2 4 {where}", 1)
        # The first run of each kind against `spare-fast lighthouse` in its own process.
        for sig in (signal.SIGINT, signal.SIGTERM):
            cli, lh, store = _lighthouse_cli()
            clis.append((cli, sig))
            for g in range(2):
                rnd.start(f"cli-{sig.name}", f"with {g} 2 {lh} {store}", 0)
        # A second process for group 1 after the run formed (its steps last 1 s).
        late = rnd.run("late", [("with", 0)] * 4, pause=1.0)
        deadline = time.monotonic() + 60
        while not late.store.check(["e0/formed"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        where = f"{late.lighthouse_addr} {late.store_addr}"
        rnd.start("late-claim", f"refuse 1 4 {where}", 1)
        rnd.finish(timeout=240)
        for cli, sig in clis:
            cli.send_signal(sig)
            text = cli.communicate(timeout=30)[0]
            proc = Proc(out / f"cli-{sig.name}.txt", 0, cli.pid, cli.returncode, text)
            rnd.procs.setdefault("lighthouse-cli", []).append(proc)
        yield rnd
    finally:
        for cli, _ in clis:
            if cli.poll() is None:
                cli.kill()
                cli.wait()
        rnd.close()


def _check(procs: list[Proc]) -> None:
    assert procs
    for p in procs:
        aborted = [a for a in ABORTS if a in p.text]
        assert not aborted, f"{p.out.name} (pid {p.pid}) printed {aborted}:\n{p.text[-2000:]}"
        assert p.rc == p.want, f"{p.out.name}: exit {p.rc}, expected {p.want}:\n{p.text[-2000:]}"


@pytest.mark.parametrize("name", list(RUNS))
def test_each_path_exits_with_its_code(round_: Round, name: str) -> None:
    _check(round_.procs[name])
    assert len(round_.procs[name]) == REPEATS * len(RUNS[name])


def test_wipeout_caught_without_close_exits_with_its_code(round_: Round) -> None:
    survivors = [p for n in RUNS for p in round_.procs[n] if p.want == 2]
    _check(survivors)
    assert all(p.last.startswith("WipeOutError: ") for p in survivors)


def test_refusal_caught_without_close_exits_with_its_code(round_: Round) -> None:
    procs = round_.procs["refusal"]
    _check(procs)
    assert all("run identity mismatch before step 0: seed differs" in p.last for p in procs)


def test_two_processes_claiming_one_group_are_refused_naming_both(round_: Round) -> None:
    procs = round_.procs["claimed-twice"]
    for p in procs:
        assert not [a for a in ABORTS if a in p.text], p.text[-2000:]
        assert "never joined" not in p.text and "WipeOutError" not in p.text
    first, second = (f"g1:{p.pid}" for p in procs[1:3])
    both = f"one group claimed by two processes (group 1 by {first} and {second})"
    if all(both in p.last for p in procs):  # both claimed it before the run formed
        assert [p.rc for p in procs] == [1] * 5
        return
    # One of them came after the run had formed with the other: it alone stands down, naming
    # the holder; the run goes on (on a loaded host the second fork can be that late).
    refused = [p for p in procs if p.rc != 0]
    assert len(refused) == 1 and refused[0] in procs[1:3], [p.last for p in procs]
    holder = first if refused[0] is procs[2] else second
    assert f"group 1 is alive in another process ({holder})" in refused[0].last
    assert [p.rc for p in procs] == [0 if p is not refused[0] else 1 for p in procs]


def test_a_late_second_claimant_stands_down_and_the_run_goes_on(round_: Round) -> None:
    _check(round_.procs["late"])  # the run's four groups finish (exit 0)
    (late,) = round_.procs["late-claim"]
    _check([late])
    holder = round_.procs["late"][1]
    assert f"group 1 is alive in another process (g1:{holder.pid})" in late.last
    assert f"this process g1:{late.pid} stands down" in late.last


def test_mixed_ranks_per_group_are_refused_with_the_documented_line(round_: Round) -> None:
    procs = round_.procs["mixed-k"]
    _check(procs)
    line = "group 2 runs K = 2 ranks, the other groups K = 1: every group needs the same K"
    for p in procs:
        assert p.last.endswith(line), p.text[-2000:]
        assert "never joined" not in p.text and "TimeoutError" not in p.text


def test_lighthouse_command_ends_cleanly_on_sigint_and_sigterm(round_: Round) -> None:
    _check(round_.procs["cli-SIGINT"] + round_.procs["cli-SIGTERM"])
    _check(round_.procs["lighthouse-cli"])


def test_formation_failure_never_names_an_empty_list() -> None:
    from datetime import timedelta

    from spare_fast.torch._membership import Membership
    from spare_fast.torch._settings import MemberSettings

    second = timedelta(seconds=1)
    settings = MemberSettings(0, 4, "http://127.0.0.2:1", (HOST, 1), second, second, second)
    member = Membership(settings, progress=lambda: (0, True))
    why = member._formation_failed((0, 1, 1, 2, 3), None, 3)
    assert "[]" not in why
    assert "group(s) [1] joined from two processes each" in why
