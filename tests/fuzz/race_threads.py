"""Thread-race check of the controller boundary: writers against fail, rejoin, solve, views.

Writer threads keep scribbling out-of-range values into the very arrays that other threads
pass to ``Controller.fail``/``rejoin`` and ``solve``, while reader threads copy the state
views. The contract (README, "Reliability"): no crash and no sanitizer report, every call
either decides or raises ``ValueError``/``IndexError``, every state read is consistent (each
stack row a permutation of its layout row, every provider alive and holding its type), and a
decision's assignment is either the one of its own event or refused with ``RuntimeError``.

Run: ``python tests/fuzz/race_threads.py [seconds]`` (CI runs it under AddressSanitizer);
prints the number of calls of each kind and exits non-zero on a broken contract.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter

import numpy as np

from spare_fast import Controller, Layout, solve


def main(seconds: float = 3.0) -> Counter:
    n, r = 48, 3
    layout = Layout.cyclic(n, r)
    ctl = Controller(layout)
    base_rows = np.sort(layout.stacks, axis=1)
    holders = [set(np.flatnonzero((layout.stacks == t).any(axis=1)).tolist()) for t in range(n)]
    stop = time.monotonic() + seconds
    counts: Counter = Counter()
    errors: list[str] = []
    lock = threading.Lock()

    def note(kind: str) -> None:
        with lock:
            counts[kind] += 1

    shared_ids = np.zeros(1, dtype=np.int32)
    shared_stacks = np.ascontiguousarray(layout.stacks.copy())
    shared_alive = np.ones(n, dtype=np.uint8)

    def writer() -> None:
        rng = np.random.default_rng(1)
        while time.monotonic() < stop:
            shared_ids[0] = 2**30 if rng.random() < 0.5 else int(rng.integers(n))
            shared_stacks[int(rng.integers(n)), int(rng.integers(r))] = (
                2**30 if rng.random() < 0.5 else int(rng.integers(n))
            )
            shared_stacks[:] = layout.stacks if rng.random() < 0.3 else shared_stacks

    def eventer(seed: int) -> None:
        rng = np.random.default_rng(seed)
        while time.monotonic() < stop:
            try:
                d = ctl.fail(shared_ids) if rng.random() < 0.5 else ctl.rejoin(shared_ids)
            except (ValueError, IndexError):
                note("rejected")
                continue
            note("decided")
            try:
                a = d.assignment
            except RuntimeError:
                note("stale")
                continue
            for t, g in d.patch.tolist():
                if a[t] != g:
                    errors.append(f"assignment of another event: type {t} -> {a[t]}, patch {g}")
            if rng.random() < 0.02:
                ctl.restart()

    def solver() -> None:
        while time.monotonic() < stop:
            try:
                solve(shared_stacks, shared_alive)
                note("solved")
            except (ValueError, IndexError):
                note("solve rejected")

    def reader() -> None:
        while time.monotonic() < stop:
            s = np.array(ctl.stacks)
            if not np.array_equal(np.sort(s, axis=1), base_rows):
                errors.append("a stacks row is not a permutation of its layout row")
            alive, assignment = ctl.alive, ctl.assignment
            del alive
            ok = all(g == -1 or g in holders[t] for t, g in enumerate(assignment.tolist()))
            if not ok:
                errors.append("an assignment names a group that does not hold the type")
            note("read")

    threads = [threading.Thread(target=writer)]
    threads += [threading.Thread(target=eventer, args=(s,)) for s in (2, 3)]
    threads += [threading.Thread(target=solver), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise AssertionError(f"{len(errors)} broken contracts, first: {errors[0]}")
    return counts


if __name__ == "__main__":
    c = main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
    print("race:", ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
