"""spare_fast.torch: SPARe driving PyTorch data-parallel training through killed workers.

Where a user starts: one process per SPARe group runs its own training loop around
:class:`SpareGroup` (``examples/train_transformer.py`` is this loop in full, started by
``torchrun``)::

    from spare_fast import Layout
    from spare_fast.torch import SpareGroup

    def compute(step, t):                   # the loss of shard type t of step `step`
        x, y = shard(step, t)
        return loss_fn(model(x), y)         # SPARe calls backward()

    with SpareGroup(model, optimizer, Layout.cyclic(N, r), steps, scheduler=scheduler) as group:
        group.start()                       # forms the run, or rejoins it under way
        while group.step < steps:
            loss = group.reduce(compute)    # grads = (1/N) * sum over all N types
            optimizer.step()
            scheduler.step()
            group.step_end()                # commit; admit and heal waiting replacements

Two ways in. :class:`SpareGroup` lives inside the user's own training loop (the user's script
is the worker, one process per group, on any host; ``reduce(compute)`` then ``step_end()``
each step), with :class:`ShardSampler` for the data and ``spare-fast lighthouse`` as the
membership service; a dead group's replacement rejoins and heals from a live peer.
:class:`SpareTrainer` is the batteries-included path whose workers run that same loop.

Install with the ``torch`` extra (``pip install ".[torch]"``), which pins ``torch==2.13.0``
and ``torchft``. One worker process per SPARe group trains with gloo collectives on CPU; a
worker that ends for any reason (any signal, a crash, a hang past the heartbeat timeout) is
masked by the survivors, which agree the new membership through the torchft lighthouse, apply
the controller's decision, compute the patch types and finish the step. A wipe-out restarts
all groups from the last valid checkpoint; ``run(resume=True)`` continues a run whose
launcher died. Fault injection and the toy tasks for tests live in
:mod:`spare_fast.torch.testing`, which nothing here imports.
"""

from __future__ import annotations

from importlib.util import find_spec as _find_spec
from typing import Any as _Any

# Say which extra installs a missing engine, not just "No module named 'torch'". torchft is
# looked up, not imported: its Rust side reads RUST_LOG once, at import, and the launcher sets
# that default (warnings only) just before it starts the lighthouse.
try:
    import torch as _torch  # noqa: F401

    if _find_spec("torchft") is None:
        raise ImportError("No module named 'torchft'", name="torchft")
except ImportError as _e:
    raise ImportError(
        f"spare_fast.torch needs torch and torchft ({_e.name} is missing): "
        "pip install 'spare-fast[torch]' (the README's Quick start says how to get the CPU build)"
    ) from _e

from spare_fast.torch._checkpoint import CheckpointError, Checkpoints
from spare_fast.torch._epochs import newest_checkpoint
from spare_fast.torch._errors import (
    EXIT_CODES,
    AuthenticationError,
    Excluded,
    IdentityMismatch,
    ProtocolError,
    RunFinished,
    exit_code,
)
from spare_fast.torch._group import ComputeFn, SpareGroup, WipeOutError
from spare_fast.torch._launcher import SpareTrainer
from spare_fast.torch._ledger import LedgerError
from spare_fast.torch._ledger import check as check_ledger
from spare_fast.torch._observer import Observer
from spare_fast.torch._sampler import ShardSampler
from spare_fast.torch._types import (
    EventRecord,
    Phase,
    RunResult,
    StepRecord,
    TrainSpec,
    WorkerState,
    type_seed,
)

__all__ = [
    "EXIT_CODES",
    "AuthenticationError",
    "CheckpointError",
    "Checkpoints",
    "Excluded",
    "IdentityMismatch",
    "LedgerError",
    "ProtocolError",
    "RunFinished",
    "check_ledger",
    "exit_code",
    "ComputeFn",
    "EventRecord",
    "Observer",
    "Phase",
    "RunResult",
    "ShardSampler",
    "SpareGroup",
    "SpareTrainer",
    "StepRecord",
    "TrainSpec",
    "WorkerState",
    "WipeOutError",
    "newest_checkpoint",
    "type_seed",
]


#: The test fixtures' old addresses here (they live in :mod:`spare_fast.torch.testing`), still
#: importable (``from spare_fast.torch import Kill, mlp``): the module ``__getattr__`` below
#: imports the testing package the first time one is asked for, so importing this package
#: does not.
_MOVED_TO_TESTING = ("Fault", "Kill", "Stall", "parse_kill", "mlp", "tiny")


def __getattr__(name: str) -> _Any:
    if name not in _MOVED_TO_TESTING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from spare_fast.torch import testing

    value = getattr(testing, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MOVED_TO_TESTING})
