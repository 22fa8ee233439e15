"""The toy dataset of the transformer examples (``train_transformer.py``, ``train_fsdp.py``).

A map-style ``Dataset`` that both examples read through a ``DataLoader`` or by index; each
passes its own sequence length and vocabulary. The examples import it by name, as a script's
neighbour (``python examples/train_fsdp.py`` and ``torchrun`` put ``examples/`` first on
``sys.path``).
"""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

__all__ = ["NoisyCounting"]


class NoisyCounting(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Sequence ``i`` counts up by a stride modulo ``vocab``, with noise; the target is the
    sequence shifted by one token.

    Item ``i`` depends only on ``(seed, i)``: a torch generator seeded with
    ``seed * 1_000_003 + i`` draws the start token, a stride in 1..3 and which tokens (each with
    probability 0.1) are replaced by a random one.

    Parameters
    ----------
    size : int
        Number of sequences.
    seq : int
        Tokens per input sequence (the item is ``seq + 1`` tokens, split into input and
        target).
    vocab : int
        Vocabulary size.
    seed : int, optional
        Seed of the data.

    Examples
    --------
    >>> data = NoisyCounting(4, seq=8, vocab=16)
    >>> x, y = data[2]
    >>> x.shape, bool((x[1:] == y[:-1]).all())
    (torch.Size([8]), True)
    """

    def __init__(self, size: int, seq: int, vocab: int, seed: int = 0) -> None:
        self.size, self.seq, self.vocab, self.seed = size, seq, vocab, seed

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + int(i))
        n, vocab = self.seq + 1, self.vocab
        start = int(torch.randint(0, vocab, (1,), generator=gen))
        stride = int(torch.randint(1, 4, (1,), generator=gen))
        seq = (start + stride * torch.arange(n)) % vocab
        noise = torch.rand(n, generator=gen) < 0.1
        seq = torch.where(noise, torch.randint(0, vocab, (n,), generator=gen), seq)
        return seq[:-1], seq[1:]
