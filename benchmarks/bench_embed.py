"""Embedding benchmarks (pytest-benchmark): the batch call, the C/C++ APIs, 1M groups. Run with:

    python -m pytest benchmarks/bench_embed.py --benchmark-enable --benchmark-only

Each benchmark asserts its answer (the batch equals the loop event by event; the trajectory
ends in a wipe-out after about mu(N, r) failures); the figures go to ``extra_info`` and the
README, the timing targets are reported, never asserted (the machine is shared).
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import spare_fast
from spare_fast import Controller, Layout, Status

N, R = 100_000, 20
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def trajectory():
    layout = Layout.sidon(N, R, seed=0)
    order = np.random.default_rng(0).permutation(N)
    return layout, order


def python_loop(layout, order):
    ctl = Controller(layout)
    fail = ctl.fail
    depths = []
    lat = []
    clock = time.perf_counter
    c_start = time.thread_time()
    t_start = clock()
    for g in order.tolist():
        t0 = clock()
        d = fail(g)
        lat.append(clock() - t0)
        depths.append(d.depth)
        if d.status is Status.WIPEOUT:
            break
    # Wall and CPU time of the loop alone (the controller is built before either clock starts,
    # as it is for the batch call).
    return clock() - t_start, time.thread_time() - c_start, np.array(depths), np.array(lat)


# Rounds of each side, interleaved (loop, batch, loop, batch, ...): on a shared machine the
# wall clock of one run varies by up to a third, so the ratio is taken per round, from a loop
# and a batch run back to back, and the median over the rounds is reported with the range.
ROUNDS = int(os.environ.get("SPARE_FAST_BENCH_ROUNDS", "5"))


def test_fail_each_against_a_loop_of_fail(benchmark, trajectory):
    layout, order = trajectory
    loops = []  # (wall s, CPU s, median latency s) per round
    batch_cpu = []
    batch_events = []  # (median, max) per-event seconds per round
    outs = []

    def setup():
        # Not timed by the benchmark: one round of the Python loop, then a fresh controller
        # for the batch call that follows it.
        loop_s, loop_cpu, depths, lat = python_loop(layout, order)
        loops.append((loop_s, loop_cpu, float(np.median(lat))))
        outs.append(depths)
        return (Controller(layout),), {}

    def batch(ctl):
        c0 = time.thread_time()
        out = ctl.fail_each(order)
        batch_cpu.append(time.thread_time() - c0)
        batch_events.append((float(np.median(out.seconds)), float(out.seconds.max())))
        return out

    out = benchmark.pedantic(batch, setup=setup, rounds=ROUNDS, iterations=1)
    assert all(np.array_equal(out.depth, depths) for depths in outs) and out.wiped_out
    assert 40_000 < out.events < 70_000  # mu(1e5, 20) ~ 54,500
    batch_s = np.array(benchmark.stats.stats.data)
    loop_s = np.array([w for w, _, _ in loops])
    loop_cpu = np.array([c for _, c, _ in loops])
    n = out.events
    wall_ratio = loop_s / batch_s
    cpu_ratio = loop_cpu / np.array(batch_cpu)
    benchmark.extra_info.update(
        events=n,
        rounds=ROUNDS,
        batch_us_per_event=1e6 * float(np.median(batch_s)) / n,
        batch_us_per_event_range=[1e6 * float(batch_s.min()) / n, 1e6 * float(batch_s.max()) / n],
        loop_us_per_event=1e6 * float(np.median(loop_s)) / n,
        loop_us_per_event_range=[1e6 * float(loop_s.min()) / n, 1e6 * float(loop_s.max()) / n],
        # Per round, loop over batch; the median over the rounds, and the range.
        speedup_per_event=float(np.median(wall_ratio)),
        speedup_per_event_range=[float(wall_ratio.min()), float(wall_ratio.max())],
        # CPU time of this thread: what the two cost without the time other jobs take.
        speedup_cpu=float(np.median(cpu_ratio)),
        speedup_cpu_range=[float(cpu_ratio.min()), float(cpu_ratio.max())],
        batch_median_us=1e6 * float(np.median([m for m, _ in batch_events])),
        loop_median_us=1e6 * float(np.median([m for _, _, m in loops])),
        # The slowest event of all rounds, and each round's.
        max_decision_us=1e6 * max(x for _, x in batch_events),
        max_decision_us_per_round=[1e6 * x for _, x in batch_events],
    )


_MILLION = """
import json, resource, sys, time
import numpy as np
from spare_fast import Controller, Layout
layout = Layout.sidon(1_000_000, 20, seed=0)
ctl = Controller(layout)
order = np.random.default_rng(0).permutation(1_000_000)
t0, c0 = time.perf_counter(), time.thread_time()
out = ctl.fail_each(order)
total, cpu = time.perf_counter() - t0, time.thread_time() - c0
print(json.dumps({"events": out.events, "trajectory_s": total, "trajectory_cpu_s": cpu,
                  "wiped_out": out.wiped_out,
                  "max_decision_ms": float(out.seconds.max() * 1e3),
                  "median_us": float(np.median(out.seconds) * 1e6),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def test_million_groups_trajectory(benchmark):
    # A child process, so that the peak RSS is this trajectory's own (interpreter included).
    here = Path(spare_fast.__file__).resolve().parent.parent

    def run():
        out = subprocess.run(
            [sys.executable, "-c", _MILLION], check=True, capture_output=True, text=True, cwd=here
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    res = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update(res)
    assert res["wiped_out"] and 300_000 < res["events"] < 700_000


def test_cxx_and_c_per_decision(benchmark, tmp_path, trajectory):
    """Builds benchmarks/embed_latency.cpp against the installed wheel and runs it.

    With a developer build, ``SPARE_FAST_PREFIX`` names a ``cmake --install`` prefix instead
    (its ``include/`` and ``lib/libspare_fast_core.a``).
    """
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    prefix = os.environ.get("SPARE_FAST_PREFIX")
    if prefix:
        include, lib = str(Path(prefix) / "include"), Path(prefix) / "lib" / "libspare_fast_core.a"
    else:
        try:
            include, cmake_dir = spare_fast.get_include(), spare_fast.get_cmake_dir()
        except FileNotFoundError:
            pytest.skip("needs spare_fast installed from a wheel (or SPARE_FAST_PREFIX)")
        lib = Path(cmake_dir).parents[2] / "lib" / "libspare_fast_core.a"
    if cxx is None:
        pytest.skip("needs a C++ compiler")
    layout, order = trajectory
    stacks, order_file = tmp_path / "stacks.bin", tmp_path / "order.bin"
    layout.stacks.astype(np.int32).tofile(stacks)
    order.astype(np.int32).tofile(order_file)
    exe = tmp_path / "embed_latency"
    subprocess.run(
        [cxx, "-O2", "-std=c++17", str(ROOT / "benchmarks" / "embed_latency.cpp"), "-I", include]
        + [str(lib), "-o", str(exe), "-pthread"],
        check=True,
    )

    def run():
        out = subprocess.run(
            [str(exe), str(stacks), str(order_file), str(N), str(R)],
            check=True,
            capture_output=True,
            text=True,
        )
        return [json.loads(line) for line in out.stdout.splitlines()]

    rows = benchmark.pedantic(run, rounds=1, iterations=1)
    for row in rows:
        benchmark.extra_info[row["api"]] = row
        assert 40_000 < row["decisions"] < 70_000
