"""Closed-form helpers the simulator needs (private).

TODO(lead): replace these with ``spare_fast.theory`` (checkpoint_period, endurable_failures,
availability) once that module is merged; the formulas are SPEC.md section 4 and must agree.
"""

from __future__ import annotations

import math

__all__ = [
    "availability",
    "checkpoint_period",
    "endurable_failures",
    "endurable_failures_replication",
    "remaining_endurable_failures",
    "weibull_mean_residual_life",
]


def endurable_failures(n_groups: int, redundancy: int) -> float:
    """mu(N, r) = Gamma(1 + 1/r) N^(1 - 1/r): mean failures before a SPARe wipe-out."""
    r = float(redundancy)
    return math.gamma(1.0 + 1.0 / r) * float(n_groups) ** (1.0 - 1.0 / r)


def endurable_failures_replication(n_groups: int, redundancy: int) -> float:
    """Mean failures before some replica set of r is wiped out, with M = N // r sets.

    Independence approximation: after k uniform failures a given set is dead with probability
    (k/N)^r, so P(K > k) ~ exp(-M (k/N)^r) and E[K] = N M^(-1/r) Gamma(1 + 1/r).  With r = 1
    this is 1 (every failure is a restart), and with M = N it is the SPARe formula.
    """
    r = float(redundancy)
    sets = max(int(n_groups) // int(redundancy), 1)
    return float(n_groups) * sets ** (-1.0 / r) * math.gamma(1.0 + 1.0 / r)


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


def checkpoint_period(save: float, restart: float, mtbr: float) -> float:
    """T_c* = T_s + sqrt(T_s^2 + 2 T_s (T_f + T_r)), the availability-optimal period (seconds)."""
    if math.isinf(mtbr):
        return math.inf
    return save + math.sqrt(save * save + 2.0 * save * (mtbr + restart))


def availability(period: float, save: float, restart: float, mtbr: float) -> float:
    """A(tau) = (1 - T_s / tau) T_f / (T_f + T_r + tau / 2)."""
    return (1.0 - save / period) * mtbr / (mtbr + restart + period / 2.0)


def weibull_mean_residual_life(age: float, shape: float, scale: float) -> float:
    """E[X - a | X > a] for a Weibull(shape, scale) inter-arrival X at age a (seconds)."""
    from scipy.special import gammaincc

    k = shape
    z = (age / scale) ** k
    if z > 700:
        return scale * (age / scale) ** (1.0 - k) / k  # asymptotic a^(1-k) lambda^k / k
    tail = scale * math.gamma(1.0 + 1.0 / k) * float(gammaincc(1.0 / k, z))
    return tail / math.exp(-z)
