"""A small built-in task for the executor: a two-layer MLP regressing a fixed random teacher.

Every callable here is a module-level function so that worker processes started with the
``spawn`` method can unpickle a :class:`~spare_fast.torch.TrainSpec` that names them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import torch

__all__ = ["build_mlp", "make_sgd", "mse_loss", "synthetic_shard", "paused_shard", "TEACHER_SEED"]

#: Seed of the teacher network that labels the synthetic data.
TEACHER_SEED = 12345
_IN, _HIDDEN, _OUT = 8, 16, 2


def build_mlp(seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.nn.Module:
    """Build the student MLP ``8 -> 16 -> tanh -> 2`` with seeded initial weights.

    Parameters
    ----------
    seed : int, optional
        Seed of the weight initialisation; the same seed gives the same weights bit for bit.
    dtype : torch.dtype, optional
        Parameter dtype (float64 makes runs comparable to 1e-10).

    Returns
    -------
    torch.nn.Module
        The model on CPU.

    Examples
    --------
    >>> sum(p.numel() for p in build_mlp().parameters())
    178
    """
    gen = torch.Generator().manual_seed(int(seed))
    model = torch.nn.Sequential(
        torch.nn.Linear(_IN, _HIDDEN), torch.nn.Tanh(), torch.nn.Linear(_HIDDEN, _OUT)
    ).to(dtype)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=dtype) * 0.5)
    return model


def make_sgd(params: Iterable[torch.nn.Parameter]) -> torch.optim.Optimizer:
    """SGD with momentum 0.9 and learning rate 0.05 (stateful, so checkpoints must carry it).

    Examples
    --------
    >>> type(make_sgd(build_mlp().parameters())).__name__
    'SGD'
    """
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


def mse_loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error over the shard (the per-type loss whose gradient is summed).

    Examples
    --------
    >>> float(mse_loss(torch.zeros(2, 2), torch.ones(2, 2)))
    1.0
    """
    return torch.nn.functional.mse_loss(output, target)


def synthetic_shard(
    step: int, shard_type: int, batch: int = 16, dtype: torch.dtype = torch.float64
) -> tuple[torch.Tensor, torch.Tensor]:
    """The shard of type ``shard_type`` of step ``step``'s global batch.

    Inputs are Gaussian, seeded by ``(step, shard_type)``; targets are a fixed random ``tanh``
    teacher plus a little noise. Any worker that holds the type regenerates the identical shard.

    Parameters
    ----------
    step, shard_type : int
        Which step and which of the N shard types.
    batch : int, optional
        Samples per shard.
    dtype : torch.dtype, optional
        Tensor dtype.

    Returns
    -------
    tuple of torch.Tensor
        ``(x, y)`` with shapes ``(batch, 8)`` and ``(batch, 2)``.

    Examples
    --------
    >>> x, y = synthetic_shard(0, 3)
    >>> x.shape, y.shape
    (torch.Size([16, 8]), torch.Size([16, 2]))
    >>> bool((synthetic_shard(0, 3)[0] == x).all())
    True
    """
    if step < 0 or shard_type < 0:
        raise ValueError(f"step = {step} and shard_type = {shard_type} must be >= 0")
    teacher = torch.Generator().manual_seed(TEACHER_SEED)
    w = torch.randn(_IN, _OUT, generator=teacher, dtype=dtype)
    gen = torch.Generator().manual_seed(1_000_003 * int(step) + int(shard_type) + 1)
    x = torch.randn(batch, _IN, generator=gen, dtype=dtype)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(batch, _OUT, generator=gen, dtype=dtype)
    return x, y


def paused_shard(seconds: float, step: int, shard_type: int) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`synthetic_shard` after a pause of ``seconds``: a run slow enough to watch.

    Bind the pause with ``functools.partial(paused_shard, 0.5)`` to get a shard callable.

    Examples
    --------
    >>> x, _ = paused_shard(0.0, 0, 3)
    >>> bool((x == synthetic_shard(0, 3)[0]).all())
    True
    """
    time.sleep(float(seconds))
    return synthetic_shard(step, shard_type)
