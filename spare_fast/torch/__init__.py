"""spare_fast.torch: SPARe driving PyTorch data-parallel training through killed workers.

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
launcher died. Fault injection for tests lives in :mod:`spare_fast.torch.testing`.

Examples
--------
>>> from spare_fast.torch import Kill, parse_kill
>>> parse_kill("1@4:allreduce") == Kill(1, 4, "allreduce")
True
"""

from __future__ import annotations

from importlib.util import find_spec as _find_spec

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

from spare_fast.torch import mlp, tiny
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
    Fault,
    Kill,
    Phase,
    RunResult,
    Stall,
    StepRecord,
    TrainSpec,
    WorkerState,
    parse_kill,
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
    "Fault",
    "Kill",
    "Observer",
    "Phase",
    "RunResult",
    "ShardSampler",
    "SpareGroup",
    "SpareTrainer",
    "Stall",
    "StepRecord",
    "TrainSpec",
    "WorkerState",
    "WipeOutError",
    "mlp",
    "newest_checkpoint",
    "tiny",
    "parse_kill",
    "type_seed",
]
