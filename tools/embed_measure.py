"""Per-event cost of ``Controller.fail_each`` against a Python loop of ``fail()``.

Wall clock and this thread's CPU time (``time.thread_time``; on a shared machine the wall
clock also counts the time other jobs take).

README, "Embedding: measured". Usage: ``PYTHONPATH=. python tools/embed_measure.py``
"""

import time

import numpy as np

from spare_fast import Controller, Layout


def main() -> None:
    layout = Layout.sidon(100_000, 20, seed=0)
    order = np.random.default_rng(0).permutation(100_000).astype(np.int32)
    for _ in range(2):
        ctl = Controller(layout)
        t, c = time.perf_counter(), time.thread_time()
        out = ctl.fail_each(order)
        batch, batch_cpu = time.perf_counter() - t, time.thread_time() - c
        ctl = Controller(layout)
        latency = []
        c0 = time.thread_time()
        t0 = time.perf_counter()
        for g in order[: out.events]:
            t = time.perf_counter()
            d = ctl.fail(int(g))
            latency.append(time.perf_counter() - t)
            if not d.ok:
                break
        loop, loop_cpu = time.perf_counter() - t0, time.thread_time() - c0
        lat = np.array(latency) * 1e6
        core = out.seconds * 1e6
        n = out.events
        # Where the C++ time goes: the saturated stretch before each depth rise dominates.
        depth = out.depth[: out.events]
        rises = np.flatnonzero(np.diff(depth[depth > 0]) > 0) + 1
        tail = sum(core[max(0, i - 2000) : i].sum() for i in rises)
        print(
            f"C++ decision mean {core.mean():.2f} us; the 2,000 events before each depth rise "
            f"({len(rises)}): {100 * tail / core.sum():.0f}% of the C++ time"
        )
        print(
            f"events {n}: fail_each {batch / n * 1e6:.2f} us/event (C++ median "
            f"{np.median(core):.2f} us, max {core.max():.0f} us); loop {loop / n * 1e6:.2f} "
            f"us/event (median {np.median(lat):.2f} us, p99 {np.percentile(lat, 99):.1f} us, "
            f"max {lat.max():.0f} us); loop / fail_each {loop / batch:.2f}x; CPU time "
            f"{batch_cpu / n * 1e6:.2f} / {loop_cpu / n * 1e6:.2f} us/event, "
            f"{loop_cpu / batch_cpu:.2f}x"
        )


# The optimal 20-mark Golomb ruler: a compact layout whose holder graph is local, so late
# augmenting paths are long (README, "Controller speed", layout choice).
GOLOMB_20 = (
    *(0, 1, 8, 11, 68, 77, 94, 116, 121, 156),
    *(158, 179, 194, 208, 212, 228, 240, 253, 259, 283),
)


def compact_ruler() -> None:
    n = 100_000
    stacks = (np.arange(n)[:, None] + np.array(GOLOMB_20)[None, :]) % n
    ctl = Controller(Layout.from_stacks(stacks.astype(np.int32)))
    order = np.random.default_rng(0).permutation(n).astype(np.int32)
    c0 = time.thread_time()
    out = ctl.fail_each(order)
    cpu = time.thread_time() - c0
    s = out.seconds
    print(
        f"Golomb ruler (length 283), N = {n:,}, r = 20: {out.events} events in {cpu:.2f} s CPU; "
        f"median {np.median(s) * 1e6:.2f} us, p99 {np.percentile(s, 99) * 1e6:.0f} us, "
        f"max {s.max() * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
    compact_ruler()
