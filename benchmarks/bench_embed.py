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


def test_fail_each_against_a_loop_of_fail(benchmark, trajectory):
    layout, order = trajectory
    ctl = Controller(layout)
    c0 = time.thread_time()
    out = benchmark.pedantic(ctl.fail_each, args=(order,), rounds=1, iterations=1)
    batch_cpu = time.thread_time() - c0
    batch_s = benchmark.stats.stats.total
    loop_s, loop_cpu, depths, lat = python_loop(layout, order)
    assert np.array_equal(out.depth, depths) and out.wiped_out
    assert 40_000 < out.events < 70_000  # mu(1e5, 20) ~ 54,500
    benchmark.extra_info.update(
        events=out.events,
        batch_s=batch_s,
        loop_s=loop_s,
        batch_us_per_event=1e6 * batch_s / out.events,
        loop_us_per_event=1e6 * loop_s / out.events,
        speedup_per_event=loop_s / batch_s,
        # CPU time of this thread: what the two cost without the time other jobs take.
        batch_cpu_s=batch_cpu,
        loop_cpu_s=loop_cpu,
        speedup_cpu=loop_cpu / batch_cpu,
        batch_median_us=float(np.median(out.seconds) * 1e6),
        loop_median_us=float(np.median(lat) * 1e6),
        max_decision_us=float(out.seconds.max() * 1e6),
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
