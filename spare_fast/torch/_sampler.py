"""ShardSampler: (step, shard type) -> indices of a map-style Dataset, the same in every group."""

from __future__ import annotations

from collections.abc import Iterator, Sized

import torch
from torch.utils.data import Sampler

__all__ = ["ShardSampler"]


class ShardSampler(Sampler[int]):
    """Sample indices of shard type ``t`` of step ``s``, whichever group computes it.

    The run reads the dataset as one single-process loader would: passes over it in a fresh
    seeded permutation each (or in order with ``shuffle=False``), a global batch of
    ``n_types * batch_size`` samples per step, and type ``t`` of step ``s`` is the ``t``-th
    slice of ``batch_size`` of that global batch. A slice may run across the end of a pass into
    the next one. Nothing depends on the group or on which types it computes, so a patch type
    recomputed after a failure reads exactly the samples its dead holder would have.

    Use it as the ``sampler`` of an ordinary ``torch.utils.data.DataLoader`` with
    ``batch_size`` equal to this ``batch_size``: :meth:`select` picks ``(step, type)``, and a
    new iterator over the loader then yields that one batch.

    Parameters
    ----------
    data_source : Sized or int
        The map-style dataset (or its length).
    n_types : int
        N, shard types per step.
    batch_size : int
        Samples per shard type.
    seed : int, optional
        Seed of the permutations (pass ``k`` uses ``torch.Generator().manual_seed(seed + k)``).
    shuffle : bool, optional
        Permute each pass (default), or read the dataset in order.

    Raises
    ------
    ValueError
        If the dataset is empty or a count is below 1.

    Notes
    -----
    Sample ``i`` of type ``t`` in step ``s`` is position ``q = (s * N + t) * batch_size + i``
    of the infinite stream; it is element ``q mod len`` of pass ``q // len``. Cost: one
    permutation of ``len`` per pass touched (cached, the last two kept).

    Examples
    --------
    >>> sampler = ShardSampler(10, n_types=2, batch_size=3, shuffle=False)
    >>> sampler.indices(0, 1), sampler.indices(1, 0)
    ([3, 4, 5], [6, 7, 8])
    >>> sampler.indices(1, 1)  # runs into the second pass
    [9, 0, 1]
    >>> list(sampler.select(0, 0))
    [0, 1, 2]
    """

    def __init__(
        self,
        data_source: Sized | int,
        n_types: int,
        batch_size: int,
        *,
        seed: int = 0,
        shuffle: bool = True,
    ) -> None:
        length = data_source if isinstance(data_source, int) else len(data_source)
        if int(length) < 1:
            raise ValueError(f"dataset length = {length}: the dataset is empty")
        if int(n_types) < 1:
            raise ValueError(f"n_types = {n_types} must be >= 1")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size = {batch_size} must be >= 1")
        self.length = int(length)
        self.n_types = int(n_types)
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.shuffle = bool(shuffle)
        self._perms: dict[int, torch.Tensor] = {}
        self._current: tuple[int, int] | None = None

    def _perm(self, k: int) -> torch.Tensor:
        perm = self._perms.get(k)
        if perm is None:
            if self.shuffle:
                gen = torch.Generator().manual_seed(self.seed + k)
                perm = torch.randperm(self.length, generator=gen)
            else:
                perm = torch.arange(self.length)
            self._perms = {j: p for j, p in self._perms.items() if j >= k - 1}
            self._perms[k] = perm
        return perm

    def indices(self, step: int, shard_type: int) -> list[int]:
        """The dataset indices of shard type ``shard_type`` in step ``step``.

        Raises
        ------
        ValueError
            If ``step < 0`` or ``shard_type`` is not in ``[0, n_types)``.
        """
        if int(step) < 0:
            raise ValueError(f"step = {step} must be >= 0")
        if not 0 <= int(shard_type) < self.n_types:
            raise ValueError(f"shard_type = {shard_type} is not in [0, {self.n_types})")
        q0 = (int(step) * self.n_types + int(shard_type)) * self.batch_size
        out = []
        for q in range(q0, q0 + self.batch_size):
            out.append(int(self._perm(q // self.length)[q % self.length]))
        return out

    def select(self, step: int, shard_type: int) -> ShardSampler:
        """Make the next iteration yield the indices of ``(step, shard_type)``; returns self."""
        self.indices(step, shard_type)  # validates before the state changes
        self._current = (int(step), int(shard_type))
        return self

    def __iter__(self) -> Iterator[int]:
        if self._current is None:
            raise RuntimeError("ShardSampler: call select(step, shard_type) before iterating")
        return iter(self.indices(*self._current))

    def __len__(self) -> int:
        return self.batch_size
