"""spare_fast.torch: SPARe driving PyTorch data-parallel training through killed workers.

Install with the ``torch`` extra (``pip install ".[torch]"``), which pins ``torch==2.13.0``
and ``torchft``. One worker process per SPARe group trains with gloo collectives on CPU; a
worker killed with SIGKILL is masked by the survivors, which agree the new membership through
the torchft lighthouse, apply the controller's decision, compute the patch types and finish
the step. A wipe-out restarts all groups from the last checkpoint.

Examples
--------
>>> from spare_fast.torch import Kill, parse_kill
>>> parse_kill("1@4:allreduce") == Kill(1, 4, "allreduce")
True
"""

from __future__ import annotations

from spare_fast.torch import mlp
from spare_fast.torch._launcher import SpareTrainer
from spare_fast.torch._types import (
    EventRecord,
    Fault,
    Kill,
    RunResult,
    Stall,
    StepRecord,
    TrainSpec,
    parse_kill,
)

__all__ = [
    "EventRecord",
    "Fault",
    "Kill",
    "RunResult",
    "SpareTrainer",
    "Stall",
    "StepRecord",
    "TrainSpec",
    "mlp",
    "parse_kill",
]
