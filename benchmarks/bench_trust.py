"""Cost of the run key and the run identity on a failure-free step (pytest-benchmark). Run with:

    python -m pytest benchmarks/bench_trust.py --benchmark-enable --benchmark-only

Own-loop runs of the MLP task at N = 4 (the test harness's processes), alternately with a run
key and without one, the same code otherwise. The per-step time of a run is read from group
0's step ledger (its commit times, after a warm-up); the figure in ``extra_info`` (and
printed) is the ratio of the medians, keyed over keyless. The identity is computed once per
run (before step 0) and the MACs cover membership changes, heal payloads and checkpoints, so
a failure-free step carries none of them: the ratio should be 1 within the noise. Every run
asserts the failure-free weights; nothing asserts a time.
"""

from __future__ import annotations

import glob
import json
import os
import statistics

import torch
from _torch_harness import LoopRun

from spare_fast import Layout
from spare_fast.torch import TrainSpec
from spare_fast.torch.testing import max_rel_diff, mlp, reference_params

LAYOUT = Layout.cyclic(4, 2)
WARMUP, TIMED = 5, 60


def _step_seconds(folder: str, run_key: str | None) -> tuple[float, list[dict]]:
    ledger = os.path.join(folder, "ledger")
    options = {"ledger": ledger} if run_key is None else {"ledger": ledger, "run_key": run_key}
    with LoopRun(LAYOUT, WARMUP + TIMED, folder, pause=0.0) as run:
        for g in range(4):
            run.start(g, **options)
        codes = run.join(timeout=300)
    assert set(codes.values()) == {0}, codes
    (path,) = glob.glob(os.path.join(ledger, "ledger-g0-*.jsonl"))
    with open(path, encoding="utf-8") as fh:
        at = [json.loads(x)["committed_at"] for x in fh if '"kind": "step"' in x]
    finals = [torch.load(p, weights_only=True) for p in glob.glob(f"{folder}/final-*.pt")]
    return (at[-1] - at[WARMUP]) / (TIMED - 1), finals


def test_run_key_and_identity_cost_per_step(benchmark, tmp_path) -> None:
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, WARMUP + TIMED)
    ref = reference_params(spec, LAYOUT.n_types)
    times: dict[str, list[float]] = {"keyed": [], "keyless": []}
    rounds = iter(range(1000))

    def once() -> None:
        i = next(rounds)
        for name, key in (("keyless", None), ("keyed", "bench-key")):
            seconds, finals = _step_seconds(str(tmp_path / f"{name}-{i}"), key)
            assert finals and all(max_rel_diff(p, ref) <= 1e-10 for p in finals)
            times[name].append(seconds)

    benchmark.pedantic(once, rounds=3, iterations=1)
    keyed, keyless = statistics.median(times["keyed"]), statistics.median(times["keyless"])
    benchmark.extra_info.update(
        keyed_step_s=keyed, keyless_step_s=keyless, ratio=keyed / keyless, **times
    )
    print(
        f"\nper step: keyed {keyed * 1e3:.2f} ms, keyless {keyless * 1e3:.2f} ms, "
        f"ratio {keyed / keyless:.3f} (medians of {len(times['keyed'])} runs each)"
    )


def test_identity_and_mac_costs_against_a_step(benchmark) -> None:
    """The work the key and the identity add, timed alone: the fingerprint (once per run, a
    SHA-256 of the state) and one quorum's MACs (sign, then verify by 4 members, of data
    with the identity) and one view's wrap and 4 verified reads, against the keyless step
    time of the run above (a membership change costs one of each)."""
    import time

    from spare_fast.torch._auth import RunKey
    from spare_fast.torch._identity import fingerprint

    model = mlp.build_mlp()
    optim = mlp.make_sgd(model.parameters())
    key = RunKey(b"bench-key")
    ident = fingerprint(LAYOUT, 0, 100, 1, True, model, optim)
    data = {"group": 2, "epoch": 0, "committed": 7, "state": True, "pid": 1, "replica": "g2:1"}
    data["identity"] = ident
    view = json.dumps({"members": [0, 1, 2, 3], "replicas": {}, "prefix": "e0/q1", "needs": []})

    def one_change() -> None:
        signed = key.sign_data(data)
        assert all(key.verify_data(signed, "g2:1") for _ in range(4))
        raw = key.wrap("e0/view", view)
        assert all(key.unwrap("e0/view", raw) == view for _ in range(4))

    benchmark.pedantic(one_change, rounds=200, iterations=1)
    t0 = time.perf_counter()
    for _ in range(20):
        fingerprint(LAYOUT, 0, 100, 1, True, model, optim)
    digest = (time.perf_counter() - t0) / 20
    per_change = benchmark.stats.stats.median
    benchmark.extra_info.update(mac_per_change_s=per_change, fingerprint_s=digest)
    print(
        f"\nMACs of one membership change {per_change * 1e6:.0f} us, "
        f"fingerprint {digest * 1e3:.2f} ms (once per run)"
    )
