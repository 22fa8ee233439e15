"""The executor's collaborators on their own: the reduced buffer's layout, the served
lighthouse and store, the fault-injecting backend's plan. No worker processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from spare_fast.torch import Fault, Phase
from spare_fast.torch._buffer import ReduceLayout
from spare_fast.torch._serve import ServeError, serve
from spare_fast.torch.testing import Injector

ROOT = Path(__file__).resolve().parents[2]


def test_reduce_layout_names_every_field_and_applies_the_mean() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3)).double()
    params, buffers = list(model.parameters()), list(model.buffers())
    lay = ReduceLayout(params, buffers, torch.float64)
    n_p, n_b = sum(p.numel() for p in params), sum(b.numel() for b in buffers)
    assert (lay.grads, lay.buffer_deltas) == (slice(0, n_p), slice(n_p, n_p + n_b))
    assert (lay.loss, lay.join, lay.numel) == (n_p + n_b, n_p + n_b + 1, n_p + n_b + 2)
    start = [b.detach().clone() for b in buffers]
    reduced = torch.arange(lay.numel, dtype=torch.float64)
    reduced[lay.join] = 3.0
    lay.apply(reduced, start, 2)
    assert torch.equal(params[0].grad.reshape(-1), reduced[: params[0].numel()] / 2)
    assert lay.mean_loss(reduced, 2) == float(lay.loss) / 2 and lay.waiting(reduced) == 3
    # The integer buffer (num_batches_tracked) takes its start plus the rounded mean change.
    tracked = buffers[-1]
    assert tracked.dtype == torch.int64
    assert int(tracked) == int(start[-1]) + round(float(reduced[lay.buffer_deltas][-1]) / 2)
    first = params[0].grad
    lay.apply(reduced * 3, start, 2)  # a gradient in place is written over, never aliased
    assert params[0].grad is first
    assert torch.equal(first.reshape(-1), 3 * reduced[: params[0].numel()] / 2)


def test_serve_binds_both_services_to_the_given_host_only() -> None:
    with serve("127.0.0.3") as service:
        assert service.lighthouse_addr.startswith("http://127.0.0.3:")
        assert service.store_addr == f"127.0.0.3:{service.store_port}"
        client = torch.distributed.TCPStore("127.0.0.3", service.store_port)
        client.set("k", "v")
        assert service.store.get("k") == b"v"
        with pytest.raises(ConnectionRefusedError):  # not on another loopback address
            socket.create_connection(("127.0.0.4", service.store_port), timeout=5).close()
        # The store's port is taken now: a second service there is refused, naming the store.
        with pytest.raises(ServeError, match=f"port {service.store_port}") as err:
            serve("127.0.0.3", store_port=service.store_port)
        assert err.value.what == "store"


def test_injector_plans_one_spurious_error_per_fault() -> None:
    plan = Injector([Fault(1, 3)], delay=0.0)
    plan.on_phase(1, 0, 3, Phase.COMPUTE, 0)
    assert not plan.due()  # only during the step's all-reduce
    plan.on_phase(1, 0, 3, Phase.ALLREDUCE, 2)
    assert plan.due()
    plan.on_phase(0, 0, 3, Phase.ALLREDUCE, 2)
    assert not plan.due()  # another group


def test_snapshot_reuses_tensors_and_survives_steps_after_a_restore() -> None:
    from spare_fast.torch._rollback import Snapshot

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    optim = torch.optim.AdamW(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda k: 1.0 / (k + 1))

    def step() -> None:
        model(torch.randn(5, 3, dtype=torch.float64)).sum().backward()
        optim.step()
        sched.step()
        optim.zero_grad()

    def state() -> list[torch.Tensor]:
        opt = optim.state_dict()
        moments = [t for s in opt["state"].values() for t in s.values()]
        return [v.clone() for v in model.state_dict().values()] + [t.clone() for t in moments]

    step()
    old = Snapshot.take(model, optim, sched)
    step()
    kept = state()
    lr = optim.param_groups[0]["lr"]
    snap = Snapshot.take(model, optim, sched, reuse=old)
    assert snap.model["0.weight"] is old.model["0.weight"]  # overwritten, not allocated
    for _ in range(2):  # restored, stepped (in place), restored again: the same state
        step()
        snap.restore(model, optim, sched)
        assert all(torch.equal(a, b) for a, b in zip(state(), kept, strict=True))
        assert optim.param_groups[0]["lr"] == lr


_SHARDED_SNAPSHOT = """
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor
from spare_fast.torch._rollback import Snapshot


def rank(r, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=r, world_size=2)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Linear(7, 3)).double()
    mesh = init_device_mesh("cpu", (2,))
    for layer in model:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optim = torch.optim.AdamW(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda k: 1.0 / (k + 1))

    def step():
        model(torch.randn(4, 5, dtype=torch.float64)).sum().backward()
        optim.step()
        sched.step()
        optim.zero_grad()

    def state():
        full = lambda t: t.full_tensor() if isinstance(t, DTensor) else t  # noqa: E731
        moments = [full(v) for s in optim.state.values() for v in s.values()]
        return [full(p).clone() for p in model.parameters()] + [t.clone() for t in moments]

    step()
    old = Snapshot.take(model, optim, sched)
    step()
    kept, lr = state(), optim.param_groups[0]["lr"]
    snap = Snapshot.take(model, optim, sched, reuse=old)
    assert any(isinstance(p, DTensor) for p in model.parameters())
    for _ in range(2):  # restored, stepped, restored again: the same state
        step()
        snap.restore(model, optim, sched)
        got = state()
        assert len(got) == len(kept) and all(torch.equal(a, b) for a, b in zip(got, kept))
        assert optim.param_groups[0]["lr"] == lr
    step()  # the restored optimizer state is the optimizer's own (not the snapshot's)
    assert not all(torch.equal(a, b) for a, b in zip(state(), kept))
    snap.restore(model, optim, sched)
    assert all(torch.equal(a, b) for a, b in zip(state(), kept))
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(rank, args=(int(sys.argv[1]),), nprocs=2)
"""


def test_snapshot_restores_fsdp2_sharded_state(tmp_path: Path) -> None:
    """The rollback snapshot of a model and optimizer sharded by FSDP2 over 2 ranks: the
    local shards are copied, restored in place, and survive steps after a restore."""
    script = tmp_path / "sharded_snapshot.py"
    script.write_text(_SHARDED_SNAPSHOT)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run(
        [sys.executable, str(script), str(port)],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


_IMPORTS = """
import sys, warnings
warnings.simplefilter("error")
import spare_fast.torch as st
from spare_fast import Layout
from spare_fast.torch import SpareGroup, SpareTrainer, TrainSpec
from spare_fast.torch._procs import PRELOAD
from spare_fast.torch._worker import main

# The whole runtime is imported, a trainer built: nothing of the testing package is.
spec = TrainSpec(lambda: None, lambda p: None, lambda o, t: o, lambda s, t: (s, t), 3)
SpareTrainer(spec, Layout.cyclic(4, 2))
assert not [m for m in sys.modules if m.startswith("spare_fast.torch.testing")], sorted(sys.modules)
assert not [m for m in PRELOAD if "testing" in m] and "Kill" in dir(st)

# Every old address still imports the one object, from the testing package.
from spare_fast.torch import Fault, Kill, Stall, mlp, parse_kill, tiny
import spare_fast.torch.mlp
import spare_fast.torch.tiny
from spare_fast.torch import testing
from spare_fast.torch.testing import faults, plans
assert (Fault, Kill, Stall, parse_kill) == (plans.Fault, plans.Kill, plans.Stall, plans.parse_kill)
assert mlp is spare_fast.torch.mlp is testing.mlp and tiny is spare_fast.torch.tiny is testing.tiny
assert st.Kill is testing.Kill and testing.Injector is faults.SpuriousErrors
assert mlp.build_mlp.__module__ == "spare_fast.torch.testing.mlp"
try:
    st.NoSuchName
except AttributeError as e:
    assert "NoSuchName" in str(e)
else:
    raise AssertionError("no AttributeError")
print("ok")
"""


def test_a_run_imports_no_test_code_and_the_old_addresses_still_import() -> None:
    # A fresh interpreter: this test process has imported the testing package long ago.
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
