"""atheris harness: the Controller driven by fuzz bytes, checked against solve().

Every accepted event must equal a from-scratch ``solve`` on the state before it (status,
depth, moves); every rejected call must raise a documented exception and leave the snapshot
unchanged; a snapshot round trip must give the same state.
"""

from __future__ import annotations

import sys

import _common
import atheris
import numpy as np

# Coverage feedback from the package only (instrumenting numpy and scipy costs minutes).
with atheris.instrument_imports(include=["spare_fast"]):
    from spare_fast import Controller, Status, solve


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    layout = _common.small_layout(fdp)
    n = layout.n_groups
    cost = None
    if fdp.ConsumeBool():
        cost = np.array(_common.int_list(fdp, n * layout.height, 0, 5)).reshape(layout.stacks.shape)
    try:
        ctl = Controller(layout, move_cost=cost)
    except _common.EXPECTED:
        return
    for _ in range(fdp.ConsumeIntInRange(0, 24)):
        op = fdp.ConsumeIntInRange(0, 3)
        ids = _common.int_list(fdp, fdp.ConsumeIntInRange(0, 3), 0, n - 1)
        before_stacks, before = ctl.stacks, ctl.snapshot()
        try:
            if op == 0:
                d = ctl.fail(ids if len(ids) != 1 else ids[0])
            elif op == 1:
                d = ctl.rejoin(ids)
            elif op == 2:
                d = ctl.restart()
                continue
            else:
                back = Controller.restore(before)
                assert back.snapshot() == before
                continue
        except _common.EXPECTED:
            assert ctl.snapshot() == before, "a rejected call changed the state"
            continue
        if ctl.wiped_out:
            assert d.status is Status.WIPEOUT
            continue
        ref = solve(before_stacks, ctl.alive, move_cost=cost)
        assert (d.status, d.depth, d.moves) == (ref.status, ref.depth, ref.moves), (d, ref)


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
