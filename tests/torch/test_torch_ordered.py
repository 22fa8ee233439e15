"""The ordered sum (``SpareGroup(ordered_sum=True)``): the types' gradients are added in type
order on every member, so the weights are the same to the last bit whichever group computed
which type, and equal to the single-process reference, which adds them in the same order."""

from __future__ import annotations

import os

import torch
from _torch_harness import LoopRun, reference_params

from spare_fast import Layout
from spare_fast.torch import TrainSpec, mlp
from spare_fast.torch._buffer import ReduceLayout

STEPS = 8
LAYOUT = Layout.cyclic(4, 2)


def test_slots_add_in_type_order_whoever_computed_them() -> None:
    w = torch.zeros(5, dtype=torch.float64)
    lay = ReduceLayout([w], [], torch.float64, slots=4)
    assert lay.numel == 4 * lay.width + 1 and lay.join == lay.width
    # Values whose sum depends on the order of the additions.
    gen = torch.Generator().manual_seed(0)
    grads = [torch.randn(5, generator=gen, dtype=torch.float64) * 10.0**e for e in (0, 9, -3, 5)]

    def partial(types: list[int]) -> torch.Tensor:
        total = lay.zeros()
        for t in types:
            w.grad = grads[t].clone()
            lay.add_type(total, None, torch.tensor(float(t)), t)
        return total

    # Two assignments of the 4 types to groups, and two orders of adding the partials.
    one = partial([0, 1]) + partial([2, 3])
    two = partial([3]) + (partial([1, 2]) + partial([0]))
    expected = torch.zeros(5, dtype=torch.float64)
    for g in grads:
        expected += g
    for reduced in (one, two):
        folded = lay.fold(reduced)
        assert folded.numel() == lay.width + 1
        assert torch.equal(folded[lay.grads], expected)
        assert float(folded[lay.loss]) == 6.0
    # The one-slot layout is the buffer itself.
    single = ReduceLayout([w], [], torch.float64)
    buf = single.zeros()
    assert single.fold(buf) is buf and single.offset(3) == 0


def test_a_kill_leaves_the_weights_bitwise_equal_to_the_reference(tmp_path) -> None:
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS)
    reference = reference_params(spec, LAYOUT.n_types)
    with LoopRun(LAYOUT, STEPS, str(tmp_path)) as run:
        for g in range(4):
            run.start(g, ordered_sum=True)
        run.wait(lambda: run.state(1)[1] >= 2)
        run.kill(1)  # groups 0 and 2 compute its types from here on
        codes = run.join()
    survivors = [slot for slot in (0, 2, 3) if codes[slot] == 0]
    assert survivors == [0, 2, 3], codes
    for slot in survivors:
        group, proc = run.procs[slot]
        path = os.path.join(run.out, f"final-g{group}-p{proc.pid}.pt")
        got = torch.load(path, weights_only=True)
        assert sorted(got) == sorted(reference)
        for name, value in got.items():
            assert torch.equal(value, reference[name]), (slot, name)
