"""Closed-form theory of SPARe: endurable failures, depth overhead, checkpointing, time-to-train.

Everything here is a formula; :mod:`spare_fast.montecarlo` holds the simulations that check it.

Conventions
-----------
* Failures hit distinct groups in a uniformly random order. The number of *failures survived*
  ``W`` is the number of failures after which every type still has an alive holder; failure
  ``W + 1`` is the first wipe-out. All ``mu`` here estimate or compute ``E[W]``.
* Durations are seconds (float or array) or :class:`datetime.timedelta`.
* Functions broadcast over numpy inputs and return a float (or int) for scalar inputs.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from spare_fast._validation import int_array

__all__ = [
    "availability",
    "checkpoint_period",
    "endurable_failures",
    "endurable_failures_exact",
    "endurable_failures_replication",
    "optimal_redundancy",
    "optimal_redundancy_numeric",
    "overhead_lower_bound",
    "time_to_train",
]

#: A duration: seconds (a number or an array of them) or a :class:`datetime.timedelta`.
Duration = float | int | _dt.timedelta | npt.ArrayLike

#: Euler's gamma divided by ln 2, the constant of the optimal-redundancy rule (about 0.833).
_R_STAR_SHIFT = 0.833

_SCHEMES = ("spare", "replication", "checkpoint")


# -- input normalisation --------------------------------------------------------------------
def _ints(value: Any, name: str, minimum: int = 1) -> np.ndarray:
    """``value`` as an int64 array (any shape), every element ``>= minimum``.

    The integer checks are :func:`spare_fast._validation.int_array`'s. Unlike the controller's
    arguments, whole floats (``600.0``) are accepted: the closed forms are real-valued formulas
    and are often fed a computed N.
    """
    if isinstance(value, _dt.timedelta):
        raise TypeError(f"{name} = {value!r} must be an integer, not a duration")
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"{name} = {value!r} is NaN")
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} = {value!r} must be a whole number")
        value = arr.astype(np.int64)
    return int_array(name, value, ndim=None, lo=minimum, scalar_ok=True).reshape(arr.shape)


def _n_r(n_groups: Any, redundancy: Any) -> tuple[np.ndarray, np.ndarray]:
    n = _ints(n_groups, "n_groups")
    r = _ints(redundancy, "redundancy")
    nb, rb = np.broadcast_arrays(n, r)
    if (rb > nb).any():
        i = np.flatnonzero((rb > nb).ravel())[0]
        raise ValueError(
            f"redundancy = {int(rb.ravel()[i])} must be <= n_groups = {int(nb.ravel()[i])}"
        )
    return nb, rb


def _seconds(value: Any, name: str, allow_zero: bool = True) -> np.ndarray:
    """A duration (seconds, array of seconds or timedelta) as a float64 array of seconds."""
    if isinstance(value, _dt.timedelta):
        arr = np.asarray(value.total_seconds(), dtype=np.float64)
    else:
        raw = np.asarray(value)
        if raw.dtype == object:
            try:
                raw = np.vectorize(
                    lambda v: v.total_seconds() if isinstance(v, _dt.timedelta) else float(v),
                    otypes=[np.float64],
                )(raw)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{name} = {value!r} is not a duration") from exc
        if raw.dtype == bool or raw.dtype.kind not in "iuf":
            raise TypeError(f"{name} = {value!r} is not a duration (seconds or timedelta)")
        arr = raw.astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} = {value!r} is NaN")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} = {value!r} must be finite")
    if (arr < 0).any() or (not allow_zero and (arr == 0).any()):
        bound = ">= 0" if allow_zero else "> 0"
        bad = arr[(arr < 0) | ((arr == 0) & (not allow_zero))].ravel()[0]
        raise ValueError(f"{name} = {bad!r} seconds must be {bound}")
    return arr


def _out(x: np.ndarray) -> Any:
    """Unwrap 0-d arrays to Python scalars."""
    if np.ndim(x) == 0:
        v = np.asarray(x).item()
        return v
    return x


# -- endurable failures ----------------------------------------------------------------------
def endurable_failures(n_groups: npt.ArrayLike, redundancy: npt.ArrayLike) -> Any:
    """Expected failures survived before the first wipe-out, independence approximation.

    ``mu(N, r) = Gamma(1 + 1/r) * N**(1 - 1/r)``.

    Parameters
    ----------
    n_groups : int or array_like of int
        Number of groups N (>= 1).
    redundancy : int or array_like of int
        Redundancy r (1 <= r <= N).

    Returns
    -------
    float or numpy.ndarray
        ``mu`` broadcast over the inputs.

    Raises
    ------
    ValueError
        If ``n_groups < 1``, ``redundancy < 1`` or ``redundancy > n_groups``.
    TypeError
        If an argument is not an integer.

    Notes
    -----
    After ``k`` uniformly random failures a given type has lost all ``r`` holders with
    probability about ``(k/N)**r``. Treating the ``N`` types as independent (the sidon layout
    makes any two types share at most one holder, which is what the approximation needs),
    ``P(no wipe-out after k) ~ exp(-N (k/N)**r)``, and

    ``mu ~ integral_0^inf exp(-N (x/N)**r) dx = N * N**(-1/r) * Gamma(1 + 1/r)``.

    The sum over integer ``k`` differs from the integral by about 1/2, below the approximation's
    own error except for tiny N. The cyclic layout breaks independence (neighbouring types share
    ``r - 1`` holders) and survives more failures; see :func:`endurable_failures_exact`.
    O(1) per element.

    References
    ----------
    Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
    Pretraining Systems with 100k+ GPUs", ICML 2026, arXiv:2603.00357.

    Examples
    --------
    >>> round(endurable_failures(600, 20), 1)
    424.2
    >>> endurable_failures([200, 600], 8).round(1).tolist()
    [97.1, 254.0]
    """
    n, r = _n_r(n_groups, redundancy)
    rf = r.astype(np.float64)
    lg = np.vectorize(math.lgamma, otypes=[np.float64])(1.0 + 1.0 / rf)
    return _out(np.exp(lg + (1.0 - 1.0 / rf) * np.log(n.astype(np.float64))))


def endurable_failures_replication(n_groups: npt.ArrayLike, redundancy: npt.ArrayLike) -> Any:
    """Replication's ``mu_rep``: failures survived before some replica set dies entirely.

    ``mu_rep(N, r) = Gamma(1 + 1/r) * r * n**(1 - 1/r)`` with ``n = N // r`` replica sets.

    Parameters
    ----------
    n_groups : int or array_like of int
        Number of physical groups N (>= 1); ``N mod r`` groups are left unused, as in
        :meth:`spare_fast.Layout.replication`.
    redundancy : int or array_like of int
        Replicas per set r (1 <= r <= N).

    Returns
    -------
    float or numpy.ndarray
        ``mu_rep`` broadcast over the inputs.

    Raises
    ------
    ValueError
        If ``n_groups < 1``, ``redundancy < 1`` or ``redundancy > n_groups``.

    Notes
    -----
    Derived exactly like :func:`endurable_failures`, with ``n = N // r`` disjoint sets of ``r``
    groups instead of ``N`` overlapping types. After ``k`` failures among ``M = n r`` groups a
    set is wiped with probability about ``(k/M)**r``, so
    ``P(no wipe-out after k) ~ exp(-n (k/M)**r)`` and
    ``mu_rep ~ integral exp(-n (x/M)**r) dx = M n**(-1/r) Gamma(1 + 1/r)``. The sets are
    disjoint, hence only weakly (negatively) dependent, and the approximation is tighter than
    for SPARe layouts. Exact values: ``endurable_failures_exact(N, r, layout="replication")``.

    Examples
    --------
    >>> round(endurable_failures_replication(600, 3), 1)
    91.6
    """
    n, r = _n_r(n_groups, redundancy)
    sets = (n // r).astype(np.float64)
    rf = r.astype(np.float64)
    lg = np.vectorize(math.lgamma, otypes=[np.float64])(1.0 + 1.0 / rf)
    return _out(np.exp(lg + np.log(rf) + (1.0 - 1.0 / rf) * np.log(sets)))


def _survival_term_ratio(layout: str, n: int, r: int, k: int) -> Callable[[int], tuple[int, int]]:
    """``t_j / t_{j-1}`` as an exact fraction ``(num, den)`` for the inclusion-exclusion terms."""
    if layout == "cyclic":
        m = n - k  # alive groups = zeros of the circular string

        def ratio(j: int) -> tuple[int, int]:
            top = n - 1 - (j - 1) * r
            return (m - j + 1) * math.perm(top - m + 1, r), j * math.perm(top, r)

    else:
        sets = n // r
        total = sets * r

        def ratio(j: int) -> tuple[int, int]:
            a = total - (j - 1) * r
            b = k - (j - 1) * r
            return (sets - j + 1) * math.perm(b, r), j * math.perm(a, r)

    return ratio


def _survival_probability(layout: str, n: int, r: int, k: int) -> tuple[float, float]:
    """Rigorous bounds ``(lo, hi)`` on P(no wipe-out after k random failures).

    Inclusion-exclusion ``P = sum_j (-1)^j t_j`` with ``t_0 = 1`` and ``t_j`` built from exact
    integer ratios, evaluated in fixed point with ``B`` fractional bits and outward rounding
    (floor for the lower, ceiling for the upper copy of every term), so the interval is rigorous.
    The series stops once the next term is below ``2**-62`` of the partial sum (Bonferroni: the
    true value lies between consecutive partial sums) or when it is exhausted. If the interval
    is too wide because of cancellation (``t_j`` up to ``e**lambda`` while ``P ~ e**-lambda``),
    ``B`` grows and the sum is redone.
    """
    if layout == "cyclic":
        m = n - k
        if m == 0:
            return 0.0, 0.0
        jmax = min(m, k // r)
    else:
        sets = n // r
        jmax = min(sets, k // r)
    if jmax == 0:
        return 1.0, 1.0
    ratio = _survival_term_ratio(layout, n, r, k)
    num1, den1 = ratio(1)
    lam = num1 / den1  # expected number of wiped types (first Bonferroni term)
    bits = 96 + int(3.0 * lam)
    while True:
        one = 1 << bits
        t_lo = t_hi = one
        s_lo = s_hi = one
        for j in range(1, jmax + 1):
            num, den = (num1, den1) if j == 1 else ratio(j)
            t_lo = t_lo * num // den
            t_hi = -((-t_hi * num) // den)
            if j >= 2 and t_hi <= (s_lo - t_hi) >> 62 and s_lo > t_hi:
                # |P - S_{j-1}| <= t_j: stop without adding the term, widening both bounds.
                s_lo -= t_hi
                s_hi += t_hi
                break
            if j % 2:
                s_lo -= t_hi
                s_hi -= t_lo
            else:
                s_lo += t_lo
                s_hi += t_hi
        lo = max(s_lo, 0) / one
        hi = min(max(s_hi, 0), one) / one
        if hi - lo <= hi * 2.0**-50 or hi < 2.0**-1000:
            return lo, hi
        bits *= 2


def _survival_curve(layout: str, n: int, r: int, rtol: float = 2.0**-60) -> np.ndarray:
    """P(no wipe-out after k failures) for k = 0, 1, ... until the rest is below ``rtol``.

    The returned array stops at the first ``k`` where ``P_k * (groups - k) <= rtol * sum``;
    since ``P_k`` does not increase in ``k`` (the failed sets are nested) the omitted tail is
    below ``rtol`` of the total.
    """
    groups = n if layout == "cyclic" else (n // r) * r
    probs: list[float] = []
    total = 0.0
    for k in range(groups + 1):
        lo, hi = _survival_probability(layout, n, r, k)
        p = 0.5 * (lo + hi)
        probs.append(p)
        total += p
        if hi * (groups - k) <= rtol * total:
            break
    return np.asarray(probs, dtype=np.float64)


def endurable_failures_exact(
    n_groups: npt.ArrayLike, redundancy: npt.ArrayLike, layout: str = "cyclic"
) -> Any:
    """Exact expected failures survived before the first wipe-out (cyclic or replication).

    Parameters
    ----------
    n_groups : int or array_like of int
        Number of groups N (>= 1).
    redundancy : int or array_like of int
        Redundancy r (1 <= r <= N).
    layout : {"cyclic", "replication"}
        The layout whose wipe-out combinatorics are counted.

    Returns
    -------
    float or numpy.ndarray
        ``E[W]``, accurate to about 1e-15 relative, broadcast over the inputs.

    Raises
    ------
    ValueError
        On invalid N or r, or an unknown ``layout``.

    Notes
    -----
    **Definition.** Failures hit distinct groups in a uniformly random order; ``W`` is the number
    survived (failure ``W + 1`` wipes some type out). With ``P_k = P(no wipe-out after k
    failures) = P(W >= k)``, ``E[W] = sum_{k >= 1} P_k``. The first ``k`` failures of a random
    order form a uniformly random ``k``-subset, so ``P_k`` is a count divided by ``C(N, k)``.

    **Cyclic.** Type ``t`` is held by groups ``t - r + 1 .. t`` (mod N), so a wipe-out is a run of
    ``r`` cyclically consecutive dead groups: ``P_k`` is the number of circular binary strings of
    length ``N`` with ``k`` ones and no run of ``r`` ones, over ``C(N, k)``. With ``m = N - k``
    zeros (alive groups) the ones fill the ``m`` gaps between cyclically consecutive zeros;
    marking one zero maps (string, marked zero) pairs onto (composition of ``k`` into ``m`` parts,
    start position) pairs, so the count is ``N/m`` times the number of compositions with every
    part below ``r``, and inclusion-exclusion over the parts that reach ``r`` gives

    ``P_k = sum_j (-1)^j t_j``,  ``t_j = N C(m, j) C(N - 1 - j r, m - 1) / (m C(N, k))``,

    ``t_0 = 1`` and ``0 <= j <= min(m, k // r)``.

    **Replication.** ``n = N // r`` disjoint sets of ``r`` among ``M = n r`` groups:
    ``P_k = sum_j (-1)^j C(n, j) C(M - j r, k - j r) / C(M, k)``.

    **Evaluation.** Consecutive terms differ by exact integer ratios (products of ``r``
    consecutive integers), so the terms are built in fixed-point Python integers with outward
    rounding and summed exactly; the number of fractional bits grows with the cancellation
    (``t_j`` reaches about ``e**lambda`` while ``P_k ~ e**-lambda``, ``lambda`` the expected
    number of wiped types), the series is cut by the Bonferroni bound once the next term is
    below ``2**-62`` of the sum, and ``k`` stops once ``P_k (N - k)`` is below ``2**-60`` of the
    running total (``P_k`` never increases). No floats are added with cancellation and nothing
    overflows; the result is a rigorous interval of relative width about 1e-15, of which the
    midpoint is returned.

    **Cost and limits.** Each ``k`` costs ``1 + O(lambda_k)`` big-integer steps of
    ``O(r + lambda_k)`` machine words, and ``k`` runs to about the point where ``lambda`` reaches
    45, i.e. ``O(N)`` values: roughly 0.1 s at N = 1,000, 1 s at N = 20,000 and 5 s at
    N = 100,000 on one core (r = 20; smaller r stops much earlier). The loop is pure Python, so
    beyond N of a few hundred thousand it takes minutes; that, not precision, is the limit.

    Examples
    --------
    >>> endurable_failures_exact(4, 2)  # 4-cycle, wipe-out = two adjacent dead groups
    1.3333333333333333
    >>> round(endurable_failures_exact(600, 20), 2)  # the formula gives 424.21
    455.34
    """
    if layout not in ("cyclic", "replication"):
        raise ValueError(f"layout = {layout!r} must be 'cyclic' or 'replication'")
    n, r = _n_r(n_groups, redundancy)
    out = np.empty(n.shape, dtype=np.float64)
    for idx in np.ndindex(n.shape):
        probs = _survival_curve(layout, int(n[idx]), int(r[idx]))
        out[idx] = math.fsum(probs[1:].tolist())
    return _out(out)


# -- depth overhead --------------------------------------------------------------------------
def _mean_min_depth(n: int, states: int) -> float:
    """Mean of ``c(k) = ceil(n / (n - k))`` over ``k = 0 .. states - 1`` (states <= n)."""
    if states <= 0:
        return 1.0
    k = np.arange(states, dtype=np.int64)
    c = -(-n // (n - k))
    return float(c.sum()) / states


def overhead_lower_bound(n_groups: npt.ArrayLike, redundancy: npt.ArrayLike) -> Any:
    """Mean stack depth between restarts, lower bound ``S_lb(N, r)``.

    ``S_lb = (1/K) * sum_{k=0}^{K-1} ceil(N / (N - k))`` with ``K = floor(mu(N, r))``.

    Parameters
    ----------
    n_groups : int or array_like of int
        Number of groups N (>= 1).
    redundancy : int or array_like of int
        Redundancy r (1 <= r <= N).

    Returns
    -------
    float or numpy.ndarray
        The bound, broadcast over the inputs (1.0 means no overhead).

    Raises
    ------
    ValueError
        On invalid N or r.

    Notes
    -----
    After ``k`` failures the ``N`` types must be spread over ``N - k`` alive groups, so some
    group computes at least ``c(k) = ceil(N / (N - k))`` of them: the depth is at least ``c(k)``.
    The job passes through about ``mu`` such states between restarts (``mu`` from
    :func:`endurable_failures`); averaging ``c`` over them bounds the mean depth, i.e. the
    compute cost relative to a failure-free step. ``O(mu)`` per element.

    References
    ----------
    Lee et al., ICML 2026, arXiv:2603.00357 (reports 0.60% error against Monte Carlo).

    Examples
    --------
    >>> round(overhead_lower_bound(600, 20), 3)
    2.342
    """
    n, r = _n_r(n_groups, redundancy)
    mu = np.asarray(endurable_failures(n, r), dtype=np.float64)
    out = np.empty(n.shape, dtype=np.float64)
    for idx in np.ndindex(n.shape):
        nn = int(n[idx])
        states = min(int(math.floor(float(mu[idx]))), nn)
        out[idx] = _mean_min_depth(nn, states)
    return _out(out)


def optimal_redundancy(n_groups: npt.ArrayLike) -> Any:
    """The paper's rule ``r* = floor(log2 N + 0.833)``, capped at ``N``.

    Parameters
    ----------
    n_groups : int or array_like of int
        Number of groups N (>= 1).

    Returns
    -------
    int or numpy.ndarray
        ``r*`` broadcast over the input.

    Raises
    ------
    ValueError
        If ``n_groups < 1``.

    Notes
    -----
    The rule asks for ``mu(N, r) ~ N / 2`` (the depth grows steeply once half the groups are
    gone): ``Gamma(1 + 1/r) N**(-1/r) = 1/2`` gives ``ln N / r ~ ln 2 - gamma_E / r`` to first
    order in ``1/r`` (``Gamma(1 + x) ~ 1 - gamma_E x``), i.e. ``r ~ log2 N + gamma_E / ln 2``,
    and ``gamma_E / ln 2 = 0.8327``. See :func:`optimal_redundancy_numeric` for the direct
    minimiser of :func:`time_to_train`.

    Examples
    --------
    >>> optimal_redundancy([200, 600, 1000]).tolist()
    [8, 10, 10]
    """
    n = _ints(n_groups, "n_groups")
    r = np.floor(np.log2(n.astype(np.float64)) + _R_STAR_SHIFT).astype(np.int64)
    return _out(np.clip(r, 1, n))


# -- checkpointing ---------------------------------------------------------------------------
def checkpoint_period(
    save: Duration, mean_time_between_restarts: Duration, restart: Duration
) -> Any:
    """Availability-optimal checkpoint period ``T_c* = T_s + sqrt(T_s^2 + 2 T_s (T_f + T_r))``.

    Parameters
    ----------
    save : float, array_like or timedelta
        Checkpoint save time ``T_s`` (seconds, >= 0).
    mean_time_between_restarts : float, array_like or timedelta
        ``T_f`` (seconds, > 0): ``mu * m`` for SPARe, the failure MTBF ``m`` for CKPT-only.
    restart : float, array_like or timedelta
        Global restart time ``T_r`` (seconds, >= 0).

    Returns
    -------
    float or numpy.ndarray
        ``T_c*`` in seconds.

    Raises
    ------
    ValueError
        On a negative, NaN or infinite time, or ``mean_time_between_restarts == 0``.

    Notes
    -----
    ``T_c*`` is the unique stationary point of :func:`availability` in ``tau > T_s``:
    ``d/dtau ln A = T_s / (tau (tau - T_s)) - 1 / (2 (T_f + T_r) + tau) = 0`` reduces to
    ``tau^2 - 2 T_s tau - 2 T_s (T_f + T_r) = 0``. With ``T_s << T_f`` it is Young's
    ``sqrt(2 T_s T_f)`` plus corrections.

    References
    ----------
    J. W. Young, "A first order approximation to the optimum checkpoint interval",
    Commun. ACM 17(9), 1974, doi:10.1145/361147.361115.

    Examples
    --------
    >>> import datetime as dt
    >>> round(checkpoint_period(dt.timedelta(seconds=60), 300 * 424, dt.timedelta(hours=1)))
    4022
    """
    ts = _seconds(save, "save")
    tf = _seconds(mean_time_between_restarts, "mean_time_between_restarts", allow_zero=False)
    tr = _seconds(restart, "restart")
    return _out(ts + np.sqrt(ts * ts + 2.0 * ts * (tf + tr)))


def availability(
    mean_time_between_restarts: Duration,
    save: Duration,
    restart: Duration,
    period: Duration | None = None,
) -> Any:
    """Fraction of wall-clock time spent on useful steps, ``A(tau)``.

    ``A(tau) = (1 - T_s / tau) * T_f / (T_f + T_r + tau / 2)``, at ``tau = T_c*`` by default.

    Parameters
    ----------
    mean_time_between_restarts : float, array_like or timedelta
        ``T_f`` (seconds, > 0).
    save : float, array_like or timedelta
        Checkpoint save time ``T_s`` (seconds, >= 0).
    restart : float, array_like or timedelta
        Global restart time ``T_r`` (seconds, >= 0).
    period : float, array_like, timedelta or None
        Checkpoint period ``tau`` (seconds, > 0); ``None`` uses :func:`checkpoint_period`.

    Returns
    -------
    float or numpy.ndarray
        Availability in ``[0, 1]``; ``0`` when ``tau <= T_s`` (all time goes to saving).

    Raises
    ------
    ValueError
        On a negative, NaN or infinite time, ``T_f == 0`` or ``period == 0``.

    Notes
    -----
    Per checkpoint period a fraction ``T_s / tau`` goes to saving. Each restart (every ``T_f`` of
    running, on average) costs ``T_r`` plus the work since the last checkpoint, on average
    ``tau / 2``, so a fraction ``T_f / (T_f + T_r + tau / 2)`` of the time runs forward. With
    ``T_s = 0`` and ``tau -> 0`` this tends to ``T_f / (T_f + T_r)``, the value returned there.

    Examples
    --------
    >>> round(availability(300 * 424, 60, 3600), 4)
    0.9435
    >>> availability(100.0, 10.0, 0.0, period=5.0)
    0.0
    """
    tf = _seconds(mean_time_between_restarts, "mean_time_between_restarts", allow_zero=False)
    ts = _seconds(save, "save")
    tr = _seconds(restart, "restart")
    if period is None:
        tau = np.asarray(checkpoint_period(ts, tf, tr), dtype=np.float64)
    else:
        tau = _seconds(period, "period", allow_zero=False)
    tf, ts, tr, tau = np.broadcast_arrays(tf, ts, tr, tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac_saving = np.where(tau > 0, ts / np.where(tau > 0, tau, 1.0), 0.0)
    a = np.clip(1.0 - frac_saving, 0.0, 1.0) * tf / (tf + tr + tau / 2.0)
    return _out(a)


# -- time-to-train ---------------------------------------------------------------------------
def time_to_train(
    n_groups: npt.ArrayLike,
    redundancy: npt.ArrayLike,
    mtbf: Duration,
    save: Duration,
    restart: Duration,
    scheme: str = "spare",
) -> Any:
    """Normalised time-to-train ``J``: wall-clock time over the failure-free time ``T0``.

    Parameters
    ----------
    n_groups : int or array_like of int
        Number of data-parallel groups N.
    redundancy : int or array_like of int
        Redundancy r (1 <= r <= N). Ignored (but validated) for ``scheme="checkpoint"``.
    mtbf : float, array_like or timedelta
        Cluster-wide mean time between group failures ``m`` (seconds, > 0).
    save : float, array_like or timedelta
        Checkpoint save time ``T_s``.
    restart : float, array_like or timedelta
        Global restart time ``T_r``.
    scheme : {"spare", "replication", "checkpoint"}
        SPARe+CKPT, Rep+CKPT or CKPT-only.

    Returns
    -------
    float or numpy.ndarray
        ``J >= 1`` broadcast over the inputs.

    Raises
    ------
    ValueError
        On invalid N, r or times, or an unknown ``scheme``.

    Notes
    -----
    Each scheme pays a compute factor while it runs and loses time to restarts:

    * spare: ``J = S_lb(N, r) / A*(mu(N, r) m)`` (:func:`overhead_lower_bound`,
      :func:`endurable_failures`);
    * replication: ``J = r / A*(mu_rep(N, r) m)`` (every logical group is computed ``r`` times;
      :func:`endurable_failures_replication`);
    * checkpoint: ``J = 1 / A*(m)`` (every failure is a restart);

    with ``A*(T_f)`` the :func:`availability` at the optimal period. The model ignores patch
    compute and controller time, and uses the lower bound of the depth, so it is optimistic for
    SPARe at high failure counts.

    Examples
    --------
    >>> kw = dict(mtbf=300, save=60, restart=3600)
    >>> [round(time_to_train(600, r, scheme=s, **kw), 2)
    ...  for r, s in ((10, "spare"), (3, "replication"), (1, "checkpoint"))]
    [2.15, 3.61, 15.49]
    """
    if scheme not in _SCHEMES:
        raise ValueError(f"scheme = {scheme!r} must be one of {', '.join(_SCHEMES)}")
    n, r = _n_r(n_groups, redundancy)
    m = _seconds(mtbf, "mtbf", allow_zero=False)
    ts = _seconds(save, "save")
    tr = _seconds(restart, "restart")
    if scheme == "spare":
        cost = np.asarray(overhead_lower_bound(n, r), dtype=np.float64)
        tf = np.asarray(endurable_failures(n, r), dtype=np.float64) * m
    elif scheme == "replication":
        cost = r.astype(np.float64)
        tf = np.asarray(endurable_failures_replication(n, r), dtype=np.float64) * m
    else:
        cost = np.ones(n.shape, dtype=np.float64)
        tf = np.broadcast_to(m, np.broadcast_shapes(n.shape, m.shape))
    return _out(cost / np.asarray(availability(tf, ts, tr), dtype=np.float64))


def optimal_redundancy_numeric(
    n_groups: int,
    mtbf: Duration,
    save: Duration,
    restart: Duration,
    scheme: str = "spare",
    max_redundancy: int | None = None,
) -> int:
    """The redundancy that minimises :func:`time_to_train` directly.

    Parameters
    ----------
    n_groups : int
        Number of groups N (>= 1).
    mtbf, save, restart : float or timedelta
        As in :func:`time_to_train` (scalars).
    scheme : {"spare", "replication"}
        Which redundancy to optimise.
    max_redundancy : int, optional
        Largest r tried; default ``min(N, 64)`` (``mu`` saturates near ``N`` long before, so
        larger r only adds depth).

    Returns
    -------
    int
        The smallest minimiser of ``J`` over ``r = 1 .. max_redundancy``.

    Raises
    ------
    ValueError
        On invalid arguments, ``scheme="checkpoint"`` (it has no redundancy) or
        ``max_redundancy < 1``.

    Notes
    -----
    Exhaustive over ``r``: ``J`` is cheap (``O(mu)`` per r) and not guaranteed unimodal once
    ``floor(mu)`` crosses the steps of ``ceil(N / (N - k))``, so no bracketing is assumed.
    ``O(max_redundancy * N)``.

    Examples
    --------
    >>> optimal_redundancy_numeric(600, mtbf=300, save=60, restart=3600)
    10
    """
    if scheme not in ("spare", "replication"):
        raise ValueError(f"scheme = {scheme!r} must be 'spare' or 'replication'")
    n = int(_ints(n_groups, "n_groups"))
    cap = min(n, 64) if max_redundancy is None else int(_ints(max_redundancy, "max_redundancy"))
    cap = min(cap, n)
    rs = np.arange(1, cap + 1)
    j = np.asarray(time_to_train(n, rs, mtbf, save, restart, scheme=scheme), dtype=np.float64)
    return int(rs[int(np.argmin(j))])
