"""atheris harness: Controller.restore on forged snapshots (the checksum recomputed).

The input is a snapshot, mutated by the fuzzer; the harness rewrites its checksum so that only
restore's own checks stand in the way. restore must raise ValueError, or return a controller
whose state is one the controller can reach: its decisions equal solve() and its snapshot
round-trips.
"""

from __future__ import annotations

import struct
import sys

import _common  # noqa: F401  (puts tests/ on sys.path)
import atheris
import numpy as np
import snapshot_format

# Coverage feedback from the package only (instrumenting numpy and scipy costs minutes).
with atheris.instrument_imports(include=["spare_fast"]):
    from spare_fast import Controller, Status, solve


def one_input(data: bytes) -> None:
    if len(data) >= 16:
        body = data[:-8]
        data = body + struct.pack("<Q", snapshot_format.fnv1a(body))
    try:
        ctl = Controller.restore(data)
    except ValueError:
        return
    assert Controller.restore(ctl.snapshot()).snapshot() == ctl.snapshot()
    fields = snapshot_format.parse(data)
    cost = None
    if not fields["unit"]:
        cost = np.array(fields["move_cost"], dtype=np.int64).reshape(ctl.stacks.shape)
    stacks, alive = ctl.stacks, ctl.alive
    if not ctl.wiped_out:
        ref = solve(stacks, alive, move_cost=cost)
        assert ctl.depth == ref.depth, (ctl.depth, ref.depth)
        a = ctl.assignment
        assert alive[a].all()
    for g in range(ctl.n_groups):
        if not alive[g]:
            continue
        before = ctl.stacks
        d = ctl.fail(g)
        if d.status is Status.WIPEOUT:
            break
        ref = solve(before, ctl.alive, move_cost=cost)
        assert (d.depth, d.moves) == (ref.depth, ref.moves), (d, ref)
        del before
    np.asarray(ctl.restart().patch)


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
