"""The own loop with real processes as N grows: formation, two kill -9s, the rebuilds.

One process per group (forks of a fork server that imported torch once), each a user's own
loop on :class:`~spare_fast.torch.SpareGroup` training the small MLP with real gloo on
127.0.0.2, a torchft lighthouse and a store in this process. Two groups that share no shard type
are killed with SIGKILL from here, at steps 3 and 7; optionally some groups are started only
after the first kill (the run forms without them after the join timeout, counts them failed at
step 0, and admits them when they arrive). Every finished process's weights are compared with
the single-process failure-free reference.

Per N it reports the formation time (first process started to every process past step 0), kill
to agreed decision for each kill (the kill's time here to the survivors' decision, median over
survivors, same monotonic clock), and the process-group builds after each event (gloo's
rendezvous and its connections to every peer: median over the members, by group size).

Run as a script (the table of the Scale page)::

    python benchmarks/bench_own_loop_scale.py --sizes 4,8,16,32,64 --heartbeat 5
    python benchmarks/bench_own_loop_scale.py --sizes 64 --absent 2 --heartbeat 5

or as a benchmark (N = 16)::

    python -m pytest benchmarks/bench_own_loop_scale.py --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests" / "torch")]  # the source tree's package

from _torch_harness import LoopRun, gloo_backend, max_rel_diff  # noqa: E402

from spare_fast import Layout  # noqa: E402

STEPS = 12
KILL_AT = (3, 7)


def _reference(n: int) -> Any:
    from spare_fast.torch import TrainSpec
    from spare_fast.torch.testing import mlp, reference_params

    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS)
    return reference_params(spec, n)


def run_case(n: int, heartbeat: float, absent: int = 0, out: str | None = None) -> dict[str, Any]:
    """One run of ``n`` groups (``absent`` of them started late); its figures."""
    import torch

    r = 2 if n < 16 else 3
    layout = Layout.cyclic(n, r)
    victims = (n // 4, (3 * n) // 4)  # far apart on the ring: they share no type
    late = [n // 2 - 1 - i for i in range(absent)]
    options = dict(
        quorum_timeout=max(120.0, 2.0 * n),
        join_timeout=max(20.0, 1.0 * n) if absent else None,
        collective_timeout=max(10.0, 2 * heartbeat),
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = out or tmp
        backend = functools.partial(gloo_backend, host="127.0.0.2")
        with LoopRun(
            layout, STEPS, folder, pause=0.0, heartbeat_timeout=heartbeat, backend=backend,
            slots=n + absent + 1,
        ) as run:  # fmt: skip
            t0 = time.monotonic()
            slots = {g: run.start(g, **options) for g in range(n) if g not in late}
            run.wait(lambda: min(run.state(s)[1] for s in slots.values()) >= 1, timeout=600)
            formed = time.monotonic() - t0
            kills: list[float] = []
            for victim, at in zip(victims, KILL_AT, strict=True):
                run.wait(lambda at=at: max(run.state(s)[1] for s in slots.values()) >= at, 600)
                run.kill(slots[victim])
                kills.append(time.monotonic())
                if late and len(kills) == 1:
                    with run.paced(0.5):
                        for g in late:
                            slots[g] = run.start(g, **options)
                        run.wait(lambda: all(run.state(slots[g])[1] > 0 for g in late), timeout=600)
            codes = run.join(900)
            survivors = [g for g in slots if g not in victims]
            bad = {g: codes[slots[g]] for g in survivors if codes[slots[g]] != 0}
            assert not bad, f"N = {n}: processes ended {bad}"
            reference = _reference(n)
            decided: list[list[float]] = [[] for _ in kills]
            builds: dict[int, list[float]] = {}
            worst = 0.0
            history = None
            for g in survivors:
                group, proc = run.procs[slots[g]]
                tag = f"g{group}-p{proc.pid}"
                params = torch.load(os.path.join(folder, f"final-{tag}.pt"), weights_only=True)
                worst = max(worst, max_rel_diff(params, reference))
                with open(os.path.join(folder, f"events-{tag}.json"), encoding="utf-8") as fh:
                    rec = json.load(fh)
                deaths = [e for e in rec["events"] if e["dead"] and e["step"] > 0]
                for i, e in enumerate(deaths[: len(kills)]):
                    decided[i].append(e["decided_at"] - kills[i])
                for _, size, seconds in rec["build_seconds"]:
                    builds.setdefault(size, []).append(seconds)
                if g not in late:
                    calls = [(tuple(e["dead"]), e["depth"]) for e in rec["events"]]
                    assert history in (None, calls), f"N = {n}: the members disagree"
                    history = calls
    return {
        "n": n,
        "r": r,
        "absent": absent,
        "heartbeat_s": heartbeat,
        "formation_s": formed,
        "kill_to_decision_s": [statistics.median(d) for d in decided if d],
        "kill_to_decision_max_s": [max(d) for d in decided if d],
        "rebuild_s_by_size": {size: statistics.median(v) for size, v in sorted(builds.items())},
        "max_rel_diff": worst,
        "events": history,
    }


def test_own_loop_at_16_groups_masks_two_kills(benchmark) -> None:
    result = benchmark.pedantic(run_case, args=(16, 2.0), rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(json.dumps(result, indent=1))
    assert result["max_rel_diff"] <= 1e-10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="4,8,16,32,64")
    parser.add_argument("--heartbeat", type=float, default=5.0, help="heartbeat timeout, s")
    parser.add_argument("--absent", type=int, default=0, help="groups started late")
    parser.add_argument("--json", default=None, help="write the rows here")
    parser.add_argument(
        "--plot", default=None, help="draw the rows of --json FILE (or of this run) to this PNG"
    )
    parser.add_argument(
        "--from-json", default=None, help="only draw --plot from this JSON (no run)"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as fh:
            plot(json.load(fh), args.plot)
        return 0
    rows = []
    print("| N | r | absent | formation s | kill -> decision s (median over survivors) | "
          "/ heartbeat | process-group build s (size: median) | max rel diff |")  # fmt: skip
    print("|---:|---:|---:|---:|---|---|---|---:|")
    for n in (int(x) for x in args.sizes.split(",")):
        row = run_case(n, args.heartbeat, args.absent)
        rows.append(row)
        kd = ", ".join(f"{x:.2f}" for x in row["kill_to_decision_s"])
        ratio = ", ".join(f"{x / args.heartbeat:.2f}" for x in row["kill_to_decision_s"])
        rb = ", ".join(f"{k}: {v:.3f}" for k, v in row["rebuild_s_by_size"].items())
        print(
            f"| {n} | {row['r']} | {row['absent']} | {row['formation_s']:.1f} | {kd} | {ratio} "
            f"| {rb} | {row['max_rel_diff']:.1e} |",
            flush=True,
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    if args.plot:
        plot(rows, args.plot)
    return 0


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """Kill to decision over the heartbeat timeout, and the process-group build after an
    event (median over members, at the largest size after an event), against N."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted((r for r in rows if not r["absent"]), key=lambda r: r["n"])
    ns = [r["n"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    for i, label in enumerate(("first kill", "second kill")):
        a.plot(ns, [r["kill_to_decision_s"][i] / r["heartbeat_s"] for r in rows], "o-", label=label)
    a.axhline(1.25, color="grey", ls=":", label="1.25 T")
    a.set(xscale="log", xlabel="groups N", ylabel="kill to decision / heartbeat timeout T")
    a.set_ylim(0, 1.5)
    a.legend(fontsize=8)
    builds = [{int(k): float(v) for k, v in r["rebuild_s_by_size"].items()} for r in rows]
    after = [
        max(v for k, v in b_.items() if k < r["n"]) for b_, r in zip(builds, rows, strict=True)
    ]
    first = [b_[r["n"]] for b_, r in zip(builds, rows, strict=True)]
    b.plot(ns, after, "o-", label="after an event (slowest size)")
    b.plot(ns, first, "s--", label="at formation")
    b.set(xscale="log", yscale="log", xlabel="groups N", ylabel="process-group build (s)")
    b.legend(fontsize=8)
    for ax in (a, b):
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    fig.suptitle("Own loop, real processes on 2 cores (median over survivors)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
