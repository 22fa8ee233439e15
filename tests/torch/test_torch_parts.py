"""The executor's collaborators on their own: the reduced buffer's layout, the served
lighthouse and store, the fault-injecting backend's plan. No worker processes."""

from __future__ import annotations

import socket

import pytest
import torch

from spare_fast.torch import Fault, Phase
from spare_fast.torch._buffer import ReduceLayout
from spare_fast.torch._serve import ServeError, serve
from spare_fast.torch.testing import Injector


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
