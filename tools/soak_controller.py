"""Soak test of the incremental controller against the from-scratch ``solve``.

Usage::

    PYTHONPATH=. python tools/soak_controller.py --events 10000000 --seed 1

Drives a long random sequence of events through :class:`spare_fast.Controller` on many small
instances (random, cyclic and sidon layouts, ``N`` up to ``--max-groups``, unit costs on half
of them and random move costs on the other half) and checks every decision against
:func:`spare_fast.solve` on the state before it: same status, same depth, same moves. Each
decision is also checked for validity (every type provided by an alive group from its top
``depth`` layers, no load above the depth, each stack a reordering of the one before, the
patch naming alive providers of distinct types).

The events: single failures, multi-group failures, ``fail_each`` over a few groups, batch
rejoins and restarts; a wipe-out is followed by a restart most of the time and by more events
otherwise. A twin controller receives the same events, with every ``fail_each`` replaced by
single ``fail`` calls, and must end each event in the same state (stacks and assignment, bit
for bit), so ``fail_each`` is checked against ``fail`` as well. One event of ``fail_each`` over
``k`` groups counts as ``k`` decisions; the total printed is the number of decisions checked.

The run is deterministic for its seed (instance ``i`` draws from ``(seed, i)``). Several runs
with distinct seeds add up; ``--report-every`` prints progress. Exit status 0 when everything
agreed, 1 at the first disagreement (printed with what reproduces it), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from spare_fast import Controller, Status, solve  # noqa: E402
from spare_fast.layout import make_layout  # noqa: E402

KINDS = ("random", "cyclic", "sidon")


class Disagreement(Exception):
    """A decision that differs from the reference or is not valid."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise Disagreement(what)


def _check_valid(before: np.ndarray, ctl: Controller, d_depth: int, patch: np.ndarray) -> None:
    stacks, alive, a = ctl.stacks, ctl.alive, ctl.assignment
    _check(bool((a >= 0).all() and alive[a].all()), "a type without an alive provider")
    _check(bool((np.bincount(a, minlength=stacks.shape[0]) <= d_depth).all()), "a load above depth")
    top = stacks[a, :d_depth]
    _check(
        bool((top == np.arange(len(a))[:, None]).any(axis=1).all()),
        "a type outside its provider's top layers",
    )
    _check(
        np.array_equal(np.sort(stacks, axis=1), np.sort(before, axis=1)),
        "a stack that is not a reordering of the one before",
    )
    if len(patch):
        _check(bool(alive[patch[:, 1]].all()), "a patch row naming a dead group")
        _check(len(set(patch[:, 0].tolist())) == len(patch), "a type patched twice")
        _check(bool((a[patch[:, 0]] == patch[:, 1]).all()), "a patch row that is not provided")


def _reference(before: np.ndarray, alive: np.ndarray, cost: np.ndarray | None):
    return solve(before, alive, move_cost=cost)


def soak_instance(rng: np.random.Generator, max_groups: int, n_events: int) -> int:
    """Run one instance for about ``n_events`` decisions; returns the decisions checked."""
    n = int(rng.integers(2, max_groups + 1))
    kind = KINDS[int(rng.integers(len(KINDS)))]
    r = int(rng.integers(1, min(n, 8) + 1))
    layout_seed = int(rng.integers(2**31))
    try:
        layout = make_layout(kind, n, r, seed=layout_seed)
    except ValueError:  # no sidon offsets for this (n, r)
        layout = make_layout("random", n, r, seed=layout_seed)
    cost = rng.integers(0, 5, size=layout.stacks.shape) if rng.random() < 0.5 else None
    ctl = Controller(layout, move_cost=cost)
    twin = Controller(layout, move_cost=cost)
    checked = 0
    while checked < n_events:
        before = ctl.stacks.copy()
        alive = ctl.alive.copy()
        dead, live = np.flatnonzero(~alive), np.flatnonzero(alive)
        u = rng.random()
        if u < 0.02 or len(live) == 0:
            d, t = ctl.restart(), twin.restart()
            ref = _reference(layout.stacks, np.ones(n, bool), cost)
            _check((d.status, d.depth, d.moves) == (ref.status, ref.depth, ref.moves), "restart")
            checked += 1
        elif u < 0.2 and len(dead):
            k = int(rng.integers(1, min(len(dead), max(1, n // 8)) + 1))
            back = rng.choice(dead, k, replace=False)
            d, t = ctl.rejoin(back), twin.rejoin(back)
            ref = _reference(before, ctl.alive, cost)
            _check((d.status, d.depth, d.moves) == (ref.status, ref.depth, ref.moves), "rejoin")
            if d.status == Status.OK:
                _check_valid(before, ctl, d.depth, d.patch)
            checked += 1
        elif u < 0.3 and len(live) >= 2:
            # fail_each over a few groups, each event checked against solve via the twin.
            k = int(rng.integers(2, min(len(live), 6) + 1))
            seq = rng.choice(live, k, replace=False)
            res = ctl.fail_each(seq, stop_at_wipeout=True)
            for i, g in enumerate(seq[: len(res.status)].tolist()):
                tb, ta = twin.stacks.copy(), twin.alive.copy()
                ta[g] = False
                t = twin.fail(g)
                ref = _reference(tb, ta, cost)
                got = (Status(int(res.status[i])), int(res.depth[i]), int(res.moves[i]))
                _check(got == (ref.status, ref.depth, ref.moves), f"fail_each event {i}")
                _check(
                    got == (t.status, t.depth, t.moves) and int(res.swaps[i]) == t.swaps,
                    f"fail_each event {i} differs from fail",
                )
                if t.status == Status.OK:
                    _check_valid(tb, twin, t.depth, t.patch)
                rows = res.patch[res.patch_event == i]
                _check(np.array_equal(rows, t.patch), f"fail_each event {i} patch")
                checked += 1
        else:
            k = 1 if rng.random() < 0.75 else int(rng.integers(1, min(4, len(live)) + 1))
            groups = rng.choice(live, k, replace=False)
            d, t = ctl.fail(groups), twin.fail(groups)
            ref = _reference(before, ctl.alive, cost)
            _check((d.status, d.depth, d.moves) == (ref.status, ref.depth, ref.moves), "fail")
            if d.status == Status.OK:
                _check_valid(before, ctl, d.depth, d.patch)
            checked += 1
        _check(
            np.array_equal(ctl.stacks, twin.stacks)
            and np.array_equal(ctl.assignment, twin.assignment),
            "the twin (single fail calls) ended in another state",
        )
        if ctl.wiped_out and rng.random() < 0.7:
            ctl.restart()
            twin.restart()
    return checked


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=1_000_000, help="decisions to check")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-groups", type=int, default=80, help="largest instance N")
    p.add_argument("--per-instance", type=int, default=400, help="decisions per instance")
    p.add_argument("--report-every", type=int, default=100_000)
    args = p.parse_args(argv)
    for name in ("events", "max_groups", "per_instance", "report_every"):
        v = getattr(args, name)
        if v < (2 if name == "max_groups" else 1):
            flag = "--" + name.replace("_", "-")
            print(f"soak_controller: {flag} = {v} is too small", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    total = instance = 0
    next_report = args.report_every
    while total < args.events:
        rng = np.random.default_rng([args.seed, instance])
        try:
            want = min(args.per_instance, args.events - total)
            total += soak_instance(rng, args.max_groups, want)
        except Disagreement as e:
            print(
                f"soak_controller: DISAGREEMENT ({e}) in instance {instance} of seed "
                f"{args.seed}, after {total} agreeing decisions",
                file=sys.stderr,
            )
            return 1
        except (ValueError, IndexError, RuntimeError) as e:  # a call the controller refused
            print(
                f"soak_controller: ERROR {type(e).__name__}: {e} in instance {instance} of "
                f"seed {args.seed}, after {total} agreeing decisions",
                file=sys.stderr,
            )
            return 1
        instance += 1
        if total >= next_report:
            rate = total / (time.perf_counter() - t0)
            print(f"{total} decisions agree ({instance} instances, {rate:.0f}/s)", flush=True)
            next_report += args.report_every
    print(
        f"soak_controller: {total} decisions on {instance} instances (seed {args.seed}) agree "
        f"with solve in status, depth and moves; {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
