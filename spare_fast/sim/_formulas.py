"""Closed-form helpers only the simulator's dynamic checkpointing needs (private).

The paper's closed forms (mu, mu_rep, T_c*) come from :mod:`spare_fast.theory`; what stays
here are the conditional forms used to re-plan the checkpoint period during a run.
"""

from __future__ import annotations

import math

__all__ = ["remaining_endurable_failures", "weibull_mean_residual_life"]


def remaining_endurable_failures(n_groups: int, redundancy: int, sets: int, failed: int) -> float:
    """E[K - k | K > k] under P(K > x) = exp(-M (x/N)^r): failures still endurable after k.

    Closed form through the regularised upper incomplete gamma Q(1/r, z), z = M (k/N)^r:
    integral_k^inf exp(-M (x/N)^r) dx = N M^(-1/r) Gamma(1 + 1/r) Q(1/r, z).
    """
    from scipy.special import gammaincc

    r = float(redundancy)
    n = float(n_groups)
    z = sets * (failed / n) ** r
    tail = n * sets ** (-1.0 / r) * math.gamma(1.0 + 1.0 / r) * float(gammaincc(1.0 / r, z))
    return max(tail / math.exp(-z), 1.0) if z < 700 else 1.0


def weibull_mean_residual_life(age: float, shape: float, scale: float) -> float:
    """E[X - a | X > a] for a Weibull(shape, scale) inter-arrival X at age a (seconds)."""
    from scipy.special import gammaincc

    k = shape
    z = (age / scale) ** k
    if z > 700:
        return scale * (age / scale) ** (1.0 - k) / k  # asymptotic a^(1-k) lambda^k / k
    tail = scale * math.gamma(1.0 + 1.0 / k) * float(gammaincc(1.0 / k, z))
    return tail / math.exp(-z)
