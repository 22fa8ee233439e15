"""SPARe groups of K ranks: one torchrun per group, FSDP2 inside, SPARe across groups.

Each test serves a lighthouse and a store in this process and starts one
``torchrun --nproc-per-node K`` of ``examples/train_fsdp.py`` per group on two loopback
"hosts" (127.0.0.2 for group 0, 127.0.0.3 for the others).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from spare_fast.torch._serve import serve
from spare_fast.torch.testing import max_rel_diff

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_fsdp.py"
#: Generous bounds: under load (2 cores shared) a torchrun of 2 ranks takes ~20 s to start.
START_S, RUN_S = 120.0, 240.0


class GroupRuns:
    """A lighthouse and a store here; one torchrun of ``k`` ranks per group as a process."""

    def __init__(self, folder: Path, steps: int, pause: float = 0.0) -> None:
        self.folder = folder
        self.steps = steps
        self.pause = pause
        #: While this file exists every rank waits before its next commit.
        self.hold = folder / "hold"
        self.service = serve("127.0.0.2", heartbeat_timeout_ms=1000)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: list[Any] = []

    def start(self, group: int, k: int, name: str | None = None, *extra: str) -> str:
        name = name or f"g{group}"
        env = dict(
            os.environ,
            REPLICA_GROUP_ID=str(group),
            TORCHFT_LIGHTHOUSE=self.service.lighthouse_addr,
            SPARE_FAST_STORE=self.service.store_addr,
            SPARE_FAST_BIND="127.0.0.2" if group == 0 else "127.0.0.3",
            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            RUST_LOG="warn",
        )
        cmd = [
            sys.executable, "-m", "torch.distributed.run", "--standalone",
            "--nproc-per-node", str(k), "--monitor-interval", "0.1", str(EXAMPLE),
            "--steps", str(self.steps), "--pause", str(self.pause), "--hold", str(self.hold),
            "--out", str(self.folder / "final-g{group}-r{rank}.pt"), *extra,
        ]  # fmt: skip
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - closed by close()
        self.logs.append(log)
        self.procs[name] = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        return name

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def wait_for(self, name: str, pattern: str, timeout: float = START_S) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ended = self.procs[name].poll() is not None
            found = re.search(pattern, self.log(name))
            if found:
                return found
            if ended:
                break
            time.sleep(0.2)
        raise AssertionError(f"{name}: no {pattern!r} within {timeout} s:\n{self.log(name)}")

    def pid(self, name: str, group: int, rank: int) -> int:
        return int(self.wait_for(name, rf"group {group} rank {rank}/\d+: pid (\d+)").group(1))

    def wait(self, name: str, timeout: float = RUN_S) -> int:
        return self.procs[name].wait(timeout=timeout)

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for log in self.logs:
            log.close()
        self.service.shutdown()

    def __enter__(self) -> GroupRuns:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The single-process failure-free run, per number of steps."""
    folder = tmp_path_factory.mktemp("reference")
    cache: dict[int, dict[str, torch.Tensor]] = {}

    def get(steps: int) -> dict[str, torch.Tensor]:
        if steps not in cache:
            out = folder / f"ref-{steps}.pt"
            subprocess.run(
                [sys.executable, str(EXAMPLE), "--reference", "--steps", str(steps), "--out",
                 str(out)],
                check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
            )  # fmt: skip
            cache[steps] = torch.load(out)
        return cache[steps]

    return get


def finals(folder: Path) -> dict[str, dict[str, torch.Tensor]]:
    return {p.name: torch.load(p) for p in sorted(folder.glob("final-*.pt"))}


def test_rank_death_ends_its_group_which_is_masked_then_rejoins_and_heals_by_shard(
    tmp_path: Path, reference: Any
) -> None:
    """One rank of a K = 2 group killed: torchrun ends its sibling, the survivors mask the
    group in the same step, then a new torchrun for the group rejoins and heals by shard."""
    steps = 10
    with GroupRuns(tmp_path, steps) as run:
        for g in range(3):
            run.start(g, 2)
        sibling = run.pid("g1", 1, 1)
        victim = run.pid("g1", 1, 0)
        run.wait_for("g0", r"step   2 ", RUN_S)  # a few steps in
        run.hold.touch()  # the survivors wait at a step boundary until the replacement waits
        os.kill(victim, signal.SIGKILL)
        assert run.wait("g1") != 0  # torchrun ends the group ...
        assert not alive(sibling)  # ... its sibling rank included
        run.start(1, 2, "g1-new")
        deadline = time.monotonic() + RUN_S
        while run.service.store.add("join/count", 0) == 0:  # the replacement announced itself
            assert time.monotonic() < deadline and run.procs["g1-new"].poll() is None
            time.sleep(0.2)
        run.hold.unlink()
        run.wait_for("g1-new", r"group 1 rank 1/2: rejoined at step (\d+)", RUN_S)
        for name in ("g0", "g2", "g1-new"):
            assert run.wait(name) == 0, run.log(name)
    got = finals(tmp_path)
    assert len(got) == 6
    for name, weights in got.items():
        assert max_rel_diff(weights, reference(steps)) < 1e-10, name
    # masked in the step of the death (the depth rose to 2), then the depth fell back
    assert re.search(r"groups \[1\] died -> \S+ phase \S+ depth 2 ", run.log("g0")), run.log("g0")
    assert re.search(r"groups \[1\] rejoined -> depth 1", run.log("g0")), run.log("g0")
    assert "group 1 rank 0/2: done, 10 steps, depth 1" in run.log("g1-new")


def test_groups_of_different_k_are_refused_at_start(tmp_path: Path) -> None:
    with GroupRuns(tmp_path, 4) as run:
        run.start(0, 2)
        run.start(1, 2)
        run.start(2, 1)
        for name in ("g0", "g1", "g2"):
            assert run.wait(name, START_S + 60) != 0
        line = "group 2 runs K = 1 ranks, the other groups K = 2: every group needs the same K"
        for name in ("g0", "g1", "g2"):
            assert line in run.log(name), run.log(name)


def test_check_ranks_names_the_odd_group() -> None:
    from spare_fast.torch._membership import check_ranks

    check_ranks([{"group": 0, "ranks": 2}, {"group": 1, "ranks": 2}])
    check_ranks([{"group": 0}, {"group": 1, "ranks": 1}])  # no K sent: K = 1
    with pytest.raises(ValueError, match=r"^group 1 runs K = 4 ranks, the other groups K = 2"):
        check_ranks([{"group": 0, "ranks": 2}, {"group": 1, "ranks": 4}, {"group": 2, "ranks": 2}])


def test_replacement_of_another_k_is_refused_before_admission() -> None:
    from datetime import timedelta

    from spare_fast.torch._membership import JOIN_KEY, Membership
    from spare_fast.torch._settings import MemberSettings

    with serve("127.0.0.2") as service:
        host, port = service.store_addr.rsplit(":", 1)
        service.store.set("e0/ranks", "2")
        second = timedelta(seconds=1)
        settings = MemberSettings(
            1, 3, service.lighthouse_addr, (host, int(port)), second, second, second
        )
        member = Membership(settings, progress=lambda: (0, False))
        member.store = torch.distributed.TCPStore(host, int(port), is_master=False)
        with pytest.raises(
            ValueError, match=r"^group 1 runs K = 1 ranks, the run's groups run K = 2"
        ):
            member.wait_admission()
        assert service.store.add(JOIN_KEY, 0) == 0  # it never announced itself
