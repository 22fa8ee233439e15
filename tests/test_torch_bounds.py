"""Bounded time for every failure, and the own loop's restart after a wipe-out.

Own-loop runs use tests/_torch_harness.py's LoopRun: a lighthouse and a store in this process,
SpareGroup workers as processes on 127.0.0.2, signals by PID from here.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

torch = pytest.importorskip("torch")
if importlib.util.find_spec("torchft") is None:  # not imported here: torchft reads RUST_LOG once
    pytest.skip("torchft is not installed", allow_module_level=True)
os.environ.setdefault("RUST_LOG", "warn")

from _torch_harness import (  # noqa: E402
    LOOP_WIPED_OUT,
    LoopRun,
    max_rel_diff,
    reference_params,
)

from spare_fast import Layout  # noqa: E402
from spare_fast.torch import TrainSpec, mlp, newest_checkpoint  # noqa: E402

STEPS = 12
LAYOUT = Layout.cyclic(4, 2)


@pytest.fixture(scope="module")
def reference() -> dict[str, torch.Tensor]:
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS)
    return reference_params(spec, LAYOUT.n_types)


def _final(run: LoopRun, slot: int) -> dict[str, torch.Tensor]:
    group, proc = run.procs[slot]
    path = os.path.join(run.out, f"final-g{group}-p{proc.pid}.pt")
    return torch.load(path, weights_only=True)


# ---------------------------------------------------------------------- wipe-out restart
def test_own_loop_restarts_every_group_from_the_newest_checkpoint_on_the_same_lighthouse(
    tmp_path, reference
) -> None:
    ckpts = str(tmp_path / "ckpts")
    with LoopRun(LAYOUT, STEPS, str(tmp_path), checkpoint_dir=ckpts) as run:
        first = [run.start(g) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in first) >= 5)
        # Groups 1 and 2 are the only holders of type 2 (cyclic, r = 2): a wipe-out.
        run.kill(first[1])
        run.kill(first[2])
        for slot in (first[0], first[3]):
            run.procs[slot][1].join(60)
        codes = {s: run.procs[s][1].exitcode for s in first}
        assert codes[first[0]] == codes[first[3]] == LOOP_WIPED_OUT, codes
        path = newest_checkpoint(ckpts)
        assert path is not None and int(os.path.basename(path)[5:13]) >= 4
        # Every group again, from that checkpoint, on the same lighthouse and store.
        second = [run.start(g, resume=True) for g in range(4)]
        codes = run.join(120)
        for slot in second:
            assert codes[slot] == 0, f"group {run.procs[slot][0]} ended {codes[slot]}"
            assert max_rel_diff(_final(run, slot), reference) <= 1e-10
