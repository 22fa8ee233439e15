"""Small built-in tasks beyond the MLP: a decoder-only transformer with dropout, a BatchNorm MLP.

Both are float64 so that runs compare to 1e-10, and every callable is a module-level function
so a :class:`~spare_fast.torch.TrainSpec` naming them pickles by reference.

Examples
--------
>>> model = build_transformer()
>>> x, y = token_shard(0, 1)
>>> model(x).shape
torch.Size([4, 8, 16])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn

__all__ = [
    "VOCAB",
    "SEQ",
    "build_transformer",
    "make_adamw",
    "make_cosine",
    "token_loss",
    "token_shard",
    "build_bn_mlp",
    "bn_shard",
]

#: Vocabulary size and sequence length of the token task.
VOCAB, SEQ = 16, 8
_DIM, _HEADS, _LAYERS = 16, 2, 2


class _Decoder(nn.Module):
    def __init__(self, dropout: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, _DIM)
        self.pos = nn.Parameter(torch.zeros(SEQ, _DIM))
        # No biases in the blocks (as in LLaMA or PaLM): the attention's key bias has an exactly
        # zero gradient (softmax ignores a shift), so its computed gradient is rounding noise
        # that depends on the summation order, and AdamW would turn that noise into updates.
        layer = nn.TransformerEncoderLayer(
            _DIM, _HEADS, dim_feedforward=2 * _DIM, dropout=dropout, batch_first=True, bias=False
        )
        self.blocks = nn.TransformerEncoder(layer, _LAYERS, enable_nested_tensor=False)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(_DIM, VOCAB)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(SEQ))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.drop(self.embed(tokens) + self.pos[: tokens.shape[1]])
        n = tokens.shape[1]
        mask: torch.Tensor = self.mask  # type: ignore[assignment]  # a registered buffer
        h = self.blocks(h, mask=mask[:n, :n].to(h.dtype), is_causal=True)
        return self.head(h)


def build_transformer(seed: int = 0, dropout: float = 0.1) -> nn.Module:
    """A two-layer causal transformer (dim 16, 2 heads, no block biases) with dropout, float64.

    Parameters
    ----------
    seed : int, optional
        Seed of the initial weights.
    dropout : float, optional
        Dropout probability (embeddings, attention, feed-forward).

    Returns
    -------
    torch.nn.Module
        Maps ``(batch, seq)`` token ids to ``(batch, seq, VOCAB)`` logits.
    """
    with torch.random.fork_rng():
        torch.manual_seed(int(seed))
        model = _Decoder(float(dropout)).to(torch.float64)
        with torch.no_grad():
            model.pos.normal_(0.0, 0.1)
    return model


def make_adamw(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
    """AdamW, learning rate 3e-3, weight decay 0.01."""
    return torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01)


def make_cosine(optimizer: torch.optim.Optimizer) -> Any:
    """Cosine learning-rate decay over 16 steps."""
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=16)


def token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy, mean over the shard's positions."""
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def token_shard(step: int, shard_type: int, batch: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """Shard ``shard_type`` of step ``step``: noisy counting sequences and their next tokens.

    Each sequence counts up by a random stride modulo ``VOCAB`` with a few random tokens mixed
    in, so there is something to learn. Seeded by ``(step, shard_type)``.
    """
    if step < 0 or shard_type < 0:
        raise ValueError(f"step = {step} and shard_type = {shard_type} must be >= 0")
    gen = torch.Generator().manual_seed(7_919 * int(step) + int(shard_type) + 11)
    start = torch.randint(0, VOCAB, (batch, 1), generator=gen)
    stride = torch.randint(1, 4, (batch, 1), generator=gen)
    seq = (start + stride * torch.arange(SEQ + 1)) % VOCAB
    noise = torch.rand(batch, SEQ + 1, generator=gen) < 0.1
    seq = torch.where(noise, torch.randint(0, VOCAB, (batch, SEQ + 1), generator=gen), seq)
    return seq[:, :-1], seq[:, 1:]


def build_bn_mlp(seed: int = 0) -> nn.Module:
    """``8 -> 16 -> BatchNorm1d -> tanh -> 2`` in float64, seeded (running statistics on)."""
    gen = torch.Generator().manual_seed(int(seed))
    model = nn.Sequential(
        nn.Linear(8, 16), nn.BatchNorm1d(16, momentum=0.3), nn.Tanh(), nn.Linear(16, 2)
    ).to(torch.float64)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.5)
    return model


def bn_shard(step: int, shard_type: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs with a per-type mean and scale (so the running statistics differ by type)."""
    gen = torch.Generator().manual_seed(1_000_003 * int(step) + int(shard_type) + 5)
    x = torch.randn(16, 8, generator=gen, dtype=torch.float64) * (1.0 + 0.5 * shard_type)
    x = x + 0.3 * shard_type
    y = torch.tanh(x[:, :2]) + math.sin(step) * 0.1
    return x, y
