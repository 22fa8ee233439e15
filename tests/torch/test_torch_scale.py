"""The executor's control plane as it scales: forming without stragglers, the ring watch and a
watchdog that tells a starved process from a hung one.

The formation tests run real memberships (threads of this process) against a real lighthouse
and store; the straggler run is real own-loop processes; the watchdog tests run a real watchdog
on a child process, on a host loaded with busy loops.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from _torch_harness import LOOP_LAYOUT, LOOP_STEPS, REPO_ROOT, LoopRun, alive_pids, max_rel_diff

from spare_fast import Controller, Layout
from spare_fast.torch import SpareGroup, mlp
from spare_fast.torch._bounds import liveness_period, ring_watch
from spare_fast.torch._decisions import Decider
from spare_fast.torch._membership import Membership
from spare_fast.torch._serve import serve
from spare_fast.torch._settings import MemberSettings
from spare_fast.torch._watchdog import Silence, publish_heartbeat_timeout

STEPS, LAYOUT = LOOP_STEPS, LOOP_LAYOUT


# ---------------------------------------------------------------------- formation
def _settings(service: Any, group: int, n: int, join: float, quorum: float) -> MemberSettings:
    host, _, port = service.store_addr.rpartition(":")
    return MemberSettings(
        group,
        n,
        service.lighthouse_addr,
        (host, int(port)),
        timedelta(seconds=0.1),
        timedelta(seconds=quorum),
        timedelta(seconds=0.5),
        timedelta(seconds=join),
    )


def _form_all(layout: Layout, groups: list[int], join: float, quorum: float) -> dict[int, Any]:
    """Each of ``groups`` forms (a membership in a thread of its own); the quorum id and groups
    each formed with, or the error it raised."""
    out: dict[int, Any] = {}
    with serve("127.0.0.2", heartbeat_timeout_ms=1000) as service:
        publish_heartbeat_timeout(service.store, 1.0)
        decider = Decider(layout, 0)

        def member(g: int) -> None:
            m = Membership(_settings(service, g, layout.n_groups, join, quorum), lambda: (0, True))
            try:
                m.connect()
                quorum_, valid = m.form(decider.uncovered)
                out[g] = (int(quorum_.quorum_id), tuple(sorted(valid)))
            except Exception as exc:  # noqa: BLE001 - what each member saw is the result
                out[g] = exc
            finally:
                m.close()

        threads = [threading.Thread(target=member, args=(g,)) for g in groups]
        for t in threads:
            t.start()
        for t in threads:
            t.join(quorum + 30)
    return out


def _listed(pattern: str, exc: BaseException) -> set[int]:
    """The numbers of the list ``pattern``'s group matches in ``exc``'s message."""
    found = re.search(pattern, str(exc))
    assert found is not None, exc
    return {int(x) for x in found.group(1).split(",") if x.strip()}


def test_the_groups_present_form_one_run_after_the_join_timeout() -> None:
    out = _form_all(Layout.cyclic(4, 2), [0, 1, 2], join=1.0, quorum=20.0)
    # All three took the same quorum (one membership, no churn), without group 3.
    assert set(out.values()) == {(next(iter(out.values()))[0], (0, 1, 2))}, out


def test_a_minority_never_forms_the_run() -> None:
    # Two runs of one job side by side (say, each half of the groups on a lighthouse of its
    # own) can never both form: forming without the others takes a majority of the N groups.
    # Groups 0 and 2 hold every type of cyclic(4, 2) between them, but are no majority.
    out = _form_all(Layout.cyclic(4, 2), [0, 2], join=0.5, quorum=8.0)
    assert set(out) == {0, 2}
    for g, exc in out.items():
        assert isinstance(exc, TimeoutError), out
        # The refusal names who never joined, as of the last quorum this member saw: both
        # absent groups, and the other present one too if its request missed that quorum (a
        # loaded host), in which case the lone member also lacks shard types.
        assert (
            {1, 3} <= _listed(r"group\(s\) \[([\d, ]*)\] never joined", exc) <= {0, 1, 2, 3} - {g}
        )
        assert "the run needs at least 3" in str(exc) or "have no holder" in str(exc), exc


def test_groups_that_leave_a_shard_type_without_holder_do_not_form_the_run() -> None:
    # cyclic(5, 2): groups 0, 1, 2 hold types 0-3; type 4 sits on groups 3 and 4 only.
    out = _form_all(Layout.cyclic(5, 2), [0, 1, 2], join=0.5, quorum=8.0)
    for g, exc in out.items():
        assert isinstance(exc, TimeoutError), out
        # As of the last quorum this member saw (another present group's request may have
        # missed it on a loaded host): groups 3 and 4 never joined, type 4 has no holder.
        assert (
            {3, 4}
            <= _listed(r"group\(s\) \[([\d, ]*)\] never joined", exc)
            <= {0, 1, 2, 3, 4} - {g}
        )
        assert 4 in _listed(r"shard type\(s\) \[([\d, ]*)\] have no holder", exc), exc


def test_a_process_that_missed_its_quorum_takes_the_recorded_one() -> None:
    # The lighthouse answers a quorum only to the requests waiting when it forms. A process
    # whose request had just timed out is in it but never hears of it: it reads the quorum the
    # lowest member recorded instead, and only a newer one than it last took that lists it.
    layout = Layout.cyclic(3, 2)
    with serve("127.0.0.2", heartbeat_timeout_ms=1000) as service:
        publish_heartbeat_timeout(service.store, 1.0)
        decider = Decider(layout, 0)
        ms = [Membership(_settings(service, g, 3, 5.0, 20.0), lambda: (0, True)) for g in range(3)]
        formed: dict[int, Any] = {}

        def member(m: Membership) -> None:
            m.connect()
            formed[m.me] = m.form(decider.uncovered)

        threads = [threading.Thread(target=member, args=(m,)) for m in ms]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        try:
            assert sorted(formed) == [0, 1, 2]
            quorum, valid = formed[2]
            assert ms[2].missed() is None  # nothing recorded yet
            ms[2].adopt(quorum, valid)  # not the lowest member: records nothing
            assert ms[2].missed() is None
            ms[0].adopt(*formed[0])
            # Group 2 took this quorum already; group 1 has not: it gets the same quorum.
            assert ms[2].missed() is None
            got = ms[1].missed()
            assert got is not None and got.quorum_id == quorum.quorum_id
            assert (got.created.seconds, got.created.nanos) == (
                quorum.created.seconds,
                quorum.created.nanos,
            )
            assert ms[1].valid(got) == ms[1].valid(quorum)
            ms[1].adopt(got, ms[1].valid(got))
            assert ms[1].prefix == ms[0].prefix == ms[2].prefix
            assert ms[1].missed() is None
            # A recorded quorum without this process is not taken.
            other = Membership(_settings(service, 1, 3, 5.0, 20.0), lambda: (0, True))
            other.store, other.replica_id = ms[1].store, "g1:another-process"
            assert other.missed() is None
        finally:
            for m in ms:
                m.close()


def test_min_groups_below_a_majority_is_refused() -> None:
    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())
    ok = dict(group=0, lighthouse="http://127.0.0.2:1", store="127.0.0.2:2")
    with pytest.raises(ValueError, match=r"min_groups = 2 is not in \[3, 4\]"):
        SpareGroup(model, optim, LAYOUT, 3, **ok, min_groups=2)
    with pytest.raises(TypeError, match="min_groups = 3.0"):
        SpareGroup(model, optim, LAYOUT, 3, **ok, min_groups=3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="join_timeout"):
        SpareGroup(model, optim, LAYOUT, 3, **ok, join_timeout=-1)
    assert SpareGroup(model, optim, LAYOUT, 3, **ok, min_groups=3).group == 0


def test_a_straggler_counts_as_failed_at_step_0_and_rejoins_when_it_arrives(
    tmp_path, mlp_reference
) -> None:
    with LoopRun(LAYOUT, STEPS, str(tmp_path)) as run:
        first = [run.start(g, join_timeout=2.0) for g in range(3)]
        run.wait(lambda: min(run.state(s)[1] for s in first) >= 2)
        with run.paced(0.5):  # room for the admission before the run ends
            late = run.start(3, join_timeout=2.0)
            run.wait(lambda: run.state(late)[1] > 0 or run.procs[late][1].exitcode is not None)
        codes = run.join()
        assert all(codes[s] == 0 for s in [*first, late]), codes
        events, depths = [], set()
        for slot in [*first, late]:
            params, rec = run.result(slot)
            assert max_rel_diff(params, mlp_reference) <= 1e-10, f"slot {slot} differs"
            events.append([(tuple(e["dead"]), e["depth"], e["step"]) for e in rec["events"]])
            depths.add(rec["depth"])
    # The groups that formed hold one history: group 3 failed at step 0, then rejoined (the
    # late process replays it from its heal); every process ends at the same depth.
    assert events[0] == events[1] == events[2], events
    assert [dead for dead, _, _ in events[0]] == [(3,), ()]
    assert events[0][0][2] == 0 and len(depths) == 1
    ctl = Controller(LAYOUT)
    assert [d for _, d, _ in events[0]] == [ctl.fail([3]).depth, ctl.rejoin([3]).depth]


# ---------------------------------------------------------------------- the ring watch
def test_each_member_watches_two_successors_on_the_ring() -> None:
    assert ring_watch([0, 3, 5, 9], 5) == [9, 0]
    assert ring_watch([0, 3, 5, 9], 9) == [0, 3]
    assert ring_watch([4, 7], 4) == [7]
    assert ring_watch([4], 4) == [] and ring_watch([1, 2], 3) == []
    # Every member is watched by two others: a death is reported unless both die with it.
    members = list(range(0, 40, 3))
    watchers: dict[int, int] = {}
    for m in members:
        for w in ring_watch(members, m):
            watchers[w] = watchers.get(w, 0) + 1
    assert set(watchers.values()) == {2} and set(watchers) == set(members)
    assert liveness_period(2.0) == 0.25 and liveness_period(100.0) == 1.0


# ---------------------------------------------------------------------- the watchdog
def test_silence_counts_only_what_starvation_does_not_explain() -> None:
    s = Silence(timeout=1.0, period=0.125, limit=10.0)
    # Starved: the process runs (or waits for a CPU) on an overloaded host.
    assert not any(s.check(0.125, False, True, True) for _ in range(40))
    assert s.unexplained == 0.0 and s.total == pytest.approx(5.0)
    s.beat()
    # The watchdog itself was not scheduled for 3 s, the process ran: one period counts.
    assert not s.check(3.0, False, True, False) and s.unexplained == 0.125
    s.beat()
    # Not scheduled for 3 s while the process neither ran nor waited for a CPU: all counts.
    assert s.check(3.0, False, False, False)
    s.beat()
    # Stopped: counts in full, even on a busy host; killed after the timeout.
    kills = [s.check(0.125, True, False, True) for _ in range(8)]
    assert kills == [False] * 7 + [True]
    s.beat()
    # Deadlocked: neither ran nor waited for a CPU.
    assert [s.check(0.125, False, False, True) for _ in range(8)][-1]
    s.beat()
    # Running but silent on a quiet host (a spin holding the interpreter): a hang.
    assert [s.check(0.125, False, True, False) for _ in range(8)][-1]
    s.beat()
    # Starved for ever: the limit ends it.
    assert [s.check(0.125, False, True, True) for _ in range(80)][-1]


_CHILD = """
import sys, time
from spare_fast.torch._watchdog import Watchdog
timeout, hog = float(sys.argv[1]), float(sys.argv[2])
dog = Watchdog(0, timeout, 0.05)
print("ready", flush=True)
if hog:
    # Healthy but starved of its own interpreter: the beating thread waits for the GIL.
    sys.setswitchinterval(hog)
    t = time.monotonic()
    while time.monotonic() - t < hog:
        pass
    sys.setswitchinterval(0.005)
    time.sleep(0.5)
    dog.close()
    print("alive", flush=True)
else:
    time.sleep(60)
"""


@contextlib.contextmanager
def _busy_host() -> Iterator[None]:
    """More runnable threads than CPUs for the block's duration."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range((os.cpu_count() or 1) + 2)
    ]
    try:
        time.sleep(0.5)
        yield
    finally:
        for p in loops:
            p.kill()
            p.wait()


def _child(timeout: float, hog: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(timeout), str(hog)],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_a_starved_process_is_not_killed_by_its_watchdog() -> None:
    timeout = 1.0
    with _busy_host():
        proc = _child(timeout, hog=3 * timeout)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "alive", (proc.returncode, err)
    assert "killing it" not in err


def test_a_stopped_process_on_a_busy_host_is_killed_within_one_and_a_half_timeouts() -> None:
    timeout = 2.0
    with _busy_host():
        proc = _child(timeout, hog=0.0)
        os.kill(proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        while alive_pids([proc.pid]) and time.monotonic() - t0 < 30:
            time.sleep(0.01)
            if proc.poll() is not None:
                break
        ended = time.monotonic() - t0
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    assert "(stopped): killing it" in err
    assert ended <= 1.5 * timeout, f"killed {ended:.2f} s after SIGSTOP"
