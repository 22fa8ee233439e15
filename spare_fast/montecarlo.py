"""Monte Carlo checks of the closed forms in :mod:`spare_fast.theory`.

Both estimators draw failure orders as uniformly random permutations of the groups and are
reproducible by seed: trial ``t`` of a run with seed ``s`` depends only on ``(s, t)``, so the
chunking used for the progress bar never changes a result.
"""

from __future__ import annotations

import math
import os
from typing import Any, NamedTuple

import numpy as np
from tqdm.auto import tqdm

from spare_fast._validation import check_int, check_seed
from spare_fast.layout import Layout

__all__ = ["OVERHEAD_STATES", "Estimate", "endurable_failures", "overhead"]


class Estimate(NamedTuple):
    """A Monte Carlo mean with its standard error.

    Attributes
    ----------
    mean : float
        Sample mean over the trials.
    stderr : float
        Standard error of the mean, ``std(samples, ddof=1) / sqrt(trials)`` (0 for one trial).
    trials : int
        Number of trials.
    samples : numpy.ndarray
        The per-trial values (float64 or int64), in trial order.
    """

    mean: float
    stderr: float
    trials: int
    samples: np.ndarray

    def __repr__(self) -> str:
        # The samples stay an attribute; a repr of thousands of them helps nobody.
        return (
            f"Estimate(mean={self.mean:.6g}, stderr={self.stderr:.3g}, trials={self.trials}, "
            f"samples=<{self.samples.size} {self.samples.dtype}>)"
        )


def _check_args(layout: Any, trials: Any, seed: Any) -> tuple[int, int]:
    if not isinstance(layout, Layout):
        raise TypeError(f"layout = {layout!r} must be a spare_fast.Layout")
    return check_int("trials", trials, lo=1), check_seed("seed", seed)


def _estimate(samples: np.ndarray) -> Estimate:
    n = int(samples.size)
    values = samples.astype(np.float64)
    mean = float(values.mean())
    stderr = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    return Estimate(mean, stderr, n, samples)


def endurable_failures(
    layout: Layout, trials: int, seed: int = 0, progress: bool = False
) -> Estimate:
    """Failures survived before the first wipe-out, estimated by Monte Carlo.

    Parameters
    ----------
    layout : Layout
        Any layout (cyclic, sidon, random, replication or custom).
    trials : int
        Number of random failure orders (>= 1).
    seed : int, optional
        Seed in ``[0, 2**64)``; the same seed gives the same samples.
    progress : bool, optional
        Show a tqdm progress bar on stderr (default off; the command line turns it on).

    Returns
    -------
    Estimate
        Mean and standard error of ``W``; ``samples`` holds the int64 ``W`` of every trial.

    Raises
    ------
    TypeError
        If ``layout`` is not a :class:`~spare_fast.Layout` or ``trials``/``seed`` are not ints.
    ValueError
        If ``trials < 1`` or ``seed`` is out of range.

    Notes
    -----
    ``W`` is the number of failures after which every type still has an alive holder: with
    ``pos[g]`` the (0-based) failure index of group ``g``,
    ``W = min over types of max over holders h of pos[h]``, the same quantity that
    :func:`spare_fast.theory.endurable_failures_exact` computes exactly. Coverage alone decides
    a wipe-out, so no matching is solved. The C++ kernel (``csrc/src/montecarlo.cpp``) draws
    the order by a Fisher-Yates shuffle, then takes the min-max over types with an early cut
    (a type's scan stops once its running max reaches the best so far, after about
    ``N / (N - W)`` holders): ``O(N)`` per trial in practice, ``O(N r)`` at worst, on up to
    ``min(8, os.cpu_count())`` threads with the GIL released. Trial ``t`` uses a
    xoshiro256** stream seeded from ``(seed, t)``.

    Examples
    --------
    >>> from spare_fast import Layout
    >>> est = endurable_failures(Layout.cyclic(8, 8), trials=5, seed=1, progress=False)
    >>> est.mean, est.stderr  # r = N: only the last failure wipes out
    (7.0, 0.0)
    """
    trials, seed = _check_args(layout, trials, seed)
    from spare_fast import _core

    stacks = layout.stacks
    # A trial costs about a shuffle plus a few holder reads per type; chunks of ~2e7 such steps
    # (0.1-0.3 s) keep the bar moving while the per-call setup (O(N r)) stays negligible.
    per_trial = max(1, 4 * (layout.n_groups + layout.n_types))
    chunk = int(min(trials, max(1, 20_000_000 // per_trial)))
    # Trials are seeded by index, so the thread count never changes a result.
    threads = max(1, min(8, os.cpu_count() or 1))
    parts: list[np.ndarray] = []
    with tqdm(
        total=trials, disable=not progress, desc="mu Monte Carlo", unit="trial", leave=False
    ) as bar:
        done = 0
        while done < trials:
            step = min(chunk, trials - done)
            parts.append(
                _core._survived_failures(stacks, layout.n_types, seed, done, step, threads)
            )
            done += step
            bar.update(step)
    return _estimate(np.concatenate(parts))


#: The two ways :func:`overhead` can average a trajectory (see its Notes).
OVERHEAD_STATES = ("trajectory", "survived")


def overhead(
    layout: Layout,
    trials: int,
    seed: int = 0,
    progress: bool = False,
    *,
    states: str = "trajectory",
) -> Estimate:
    """Mean stack depth between restarts, driven by the real controller.

    Parameters
    ----------
    layout : Layout
        The layout the :class:`~spare_fast.Controller` starts from.
    trials : int
        Number of trajectories (>= 1), each from the fault-free start to the first wipe-out.
    seed : int, optional
        Seed in ``[0, 2**64)``; the same seed gives the same failure orders.
    progress : bool, optional
        Show a tqdm progress bar on stderr (default off; the command line turns it on).
    states : {"trajectory", "survived"}, optional
        Which states of a trajectory with ``W`` survived failures are averaged.
        ``"trajectory"`` (default): all ``W + 1`` states ``k = 0..W``, each of which the job
        runs in until the next failure (the time average between restarts).  ``"survived"``:
        the ``W`` states ``k = 0..W-1`` before each survived failure (state 0 alone if
        ``W = 0``), the convention of :func:`spare_fast.theory.overhead_lower_bound`, whose
        ``floor(mu)`` terms with ``mu = E[W]`` stop at ``k = floor(mu) - 1``.

    Returns
    -------
    Estimate
        Mean over trajectories of the trajectory's mean depth, and its standard error;
        ``samples`` holds the per-trajectory means (float64).

    Raises
    ------
    TypeError, ValueError
        As :func:`endurable_failures`; ValueError for an unknown ``states``.

    Notes
    -----
    A trajectory fails groups one by one in a uniformly random order through
    ``Controller.fail_each`` until the controller reports ``Status.WIPEOUT``. Its states are the
    fault-free start (depth 1) and the state after each of the ``W`` survived failures, at the
    depth the controller chose (the optimal ``S*``); by default the trajectory's mean depth
    averages these ``W + 1`` states, each of which the job runs in until the next failure.
    :func:`spare_fast.theory.overhead_lower_bound` puts ``c(k) = ceil(N / (N - k)) <= S*`` in
    place of ``S*`` and a fixed ``floor(mu)`` in place of the random ``W``; it averages the
    states before each survived failure, i.e. it drops the last state, which
    ``states="survived"`` mirrors. The two differ by about ``(S*(W) - mean) / W``, which
    matters only for small N (``docs/guide/theory.md``). One controller is reused across
    trajectories through ``restart()``. Trajectory ``t`` draws its order from
    ``numpy.random.default_rng(SeedSequence(seed, spawn_key=(t,)))``. Cost: ``W`` controller
    decisions per trajectory.

    Examples
    --------
    >>> from spare_fast import Layout
    >>> est = overhead(Layout.cyclic(6, 6), trials=3, seed=0, progress=False)
    >>> round(est.mean, 3)  # depths 1, 2, 2, 2, 3, 6 (= ceil(6 / alive)) before the last failure
    2.667
    >>> round(overhead(Layout.cyclic(6, 6), 3, seed=0, progress=False, states="survived").mean, 3)
    2.0
    """
    trials, seed = _check_args(layout, trials, seed)
    if states not in OVERHEAD_STATES:
        raise ValueError(f"states = {states!r} is not 'trajectory' or 'survived'")
    everything, survived = _overhead_samples(layout, trials, seed, progress)
    return _estimate(everything if states == "trajectory" else survived)


def _overhead_samples(
    layout: Layout, trials: int, seed: int, progress: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per-trajectory mean depths over the states 0..W and over 0..max(W, 1) - 1, one pass."""
    from spare_fast import Controller, Status

    ctl = Controller(layout)
    everything = np.empty(trials, dtype=np.float64)
    survived = np.empty(trials, dtype=np.float64)
    with tqdm(
        total=trials, disable=not progress, desc="overhead Monte Carlo", unit="traj", leave=False
    ) as bar:
        for t in range(trials):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t,)))
            order = rng.permutation(layout.n_groups)
            if t:
                ctl.restart()
            start = int(ctl.depth)
            # One C++ call per trajectory: the failures up to and including the wipe-out.
            events = ctl.fail_each(order)
            depths = events.depth[events.status == Status.OK]
            depth_sum = start + int(depths.sum())
            last = int(depths[-1]) if depths.size else start
            count = 1 + int(depths.size)
            everything[t] = depth_sum / count
            survived[t] = (depth_sum - last) / (count - 1) if count > 1 else float(depth_sum)
            bar.update(1)
    return everything, survived
