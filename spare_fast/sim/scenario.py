"""The simulated pretraining job: cluster, step-time model, failure process, recovery costs."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from spare_fast._validation import check_int, check_number

__all__ = ["CALIBRATED_FAILURE_UNITS", "Scenario", "default_allreduce"]


def default_allreduce(groups: int) -> float:
    """All-reduce time in seconds as a function of the number of groups N.

    ``clip(N / 100, 2, 10)``: 2 s at N = 200, 6 s at N = 600, 10 s at N = 1000, the paper's
    2-10 s range.  Linear in N because the latency term of a ring all-reduce grows with the
    2(N-1) hops while the bandwidth term (gradient bytes per group) stays constant.

    Examples
    --------
    >>> default_allreduce(600)
    6.0
    """
    return float(min(max(groups / 100.0, 2.0), 10.0))


#: Independently aging hardware units of the default failure model, fitted to the paper's
#: table (the U with the smallest mean absolute error over its six TTT/T0 values among
#: 1000..2700; ``tools/sim_candidates.py calibrate``; ``docs/guide/simulator.md``,
#: "Calibration").  The paper does not give it; 600,000 GPUs / 1500 = 400 GPUs (50 nodes of 8)
#: per unit.
CALIBRATED_FAILURE_UNITS = 1500


@dataclass(frozen=True)
class Scenario:
    """One pretraining job under failures; the defaults are the paper's scenario.

    All times are in seconds.  Instances are immutable and validated on construction; use
    :meth:`replace` to derive a variant.

    Parameters
    ----------
    gpus : int
        GPUs in the job (600,000).  Only the per-group share matters: failures hit a uniformly
        random alive GPU, so with equal groups they hit a uniformly random alive group.
    groups : int
        Data-parallel groups N (600).
    steps : int
        Training steps to complete (10,000).
    compute : float
        Compute time of one stack layer, i.e. one shard type on one group, per step (64 s).
    allreduce : float or None
        All-reduce time per step; None means :func:`default_allreduce` of ``groups`` (2-10 s).
    mtbf : float
        Cluster-wide mean time between failures with every GPU alive (300 s = 5 min);
        ``math.inf`` disables failures.
    weibull_shape : float
        Shape k of the Weibull inter-arrival times of the failure renewal process (0.78).
    restart : float
        Duration T_r of a global restart (3600 s).
    save : float
        Duration T_s of a synchronous checkpoint save (60 s).
    period : float or None
        Checkpoint period tau (from one save start to the next, save included); None means the
        availability-optimal T_c* with T_f the scheme's mean time between restarts; ``math.inf``
        means never checkpoint.
    controller_time : float or None
        Seconds the controller's decision adds to the step of a masked failure (0.1); None
        means the controller's own measured ``Decision.seconds``.
    shrink_time : float
        Seconds to shrink the communicator after a masked failure (0.1).
    jitter : float
        Relative half-width of the uniform per-step compute-time jitter (0.05 = +-5%).
    racks : int
        Failure domains (1 = none).  Group g sits in rack ``g * racks // groups``.
    rack_share : float
        Share of failure events that take down a whole rack (0.0): the rack of a uniformly
        random alive GPU, i.e. every alive group in it.
    repair : float or None
        Mean repair time of a failed group before it rejoins without a global restart; None
        (default, as in the paper) means failed groups only return at a global restart.
    repair_sigma : float
        Log-space standard deviation of the lognormal repair time (0.5).
    restart_depth : int or None
        Restart policy: None (the paper) restarts only on wipe-out; an int d restarts early as
        soon as the stack depth reaches d, after first taking a checkpoint so that no work is
        lost (a planned restart).
    restart_policy : {"wipeout", "expected_cost"}
        ``"wipeout"`` (the paper, default): restart on wipe-out only (or at ``restart_depth``).
        ``"expected_cost"``: at every failure, repair and save, compare the expected net work
        of continuing for one more failure interval with a planned restart now (checkpoint,
        then restart), using the current depth, the probability that the next failure wipes
        out (the share of alive groups that are the last alive holder of some shard type), the
        work at risk since the last checkpoint, and the long-run rate of the closed-form
        time-to-train; see :mod:`spare_fast.sim.engine`.  Combines with ``restart_depth``.
    dynamic_checkpoint : bool
        False (paper): a fixed period.  True: the period is recomputed at every failure, save
        and restart from the conditional expected time to the next restart given the failures
        already masked (see :mod:`spare_fast.sim.engine`).
    horizon : float
        Give up when the wall clock exceeds ``horizon * t0`` (100); the report is then marked
        incomplete, its time-to-train is infinite and ``progress`` says how far it got.
    failure_model : {"per_group", "renewal", "per_gpu"}
        How failures arrive (default ``"per_group"``).  ``"per_group"``: the cluster is U
        independently aging hardware units (``failure_units``), each with a Weibull lifetime
        (shape ``weibull_shape``, mean ``U * mtbf``, so the cluster-wide mean is ``mtbf`` in
        steady state); a group dies at the first failure among its U / N units; a global
        restart makes every group fresh (age 0) and a repaired group is fresh too.  With shape
        < 1 the hazard of fresh hardware is high, so failures come in a burst after every
        restart.  ``"renewal"``: one cluster-wide
        renewal process with Weibull inter-arrivals of mean ``mtbf``, run on an operational
        clock whose rate is the share of groups alive; victims are uniform among alive groups.
        ``"per_gpu"``: like per_group with per-GPU lifetimes of mean ``gpus * mtbf`` (a group
        dies at its first GPU failure), far burstier.  The simulator guide compares the three.
    failure_units : int or None
        ``failure_model="per_group"`` only: the number U of independently aging hardware units
        the cluster is made of.  None (default): ``min(gpus, max(groups,
        CALIBRATED_FAILURE_UNITS))`` with ``CALIBRATED_FAILURE_UNITS = 1500``, the value that
        fits the paper's table best (``tools/sim_candidates.py calibrate``, the simulator
        guide); the paper does not state it.  ``failure_units=groups`` is one unit per group.  Every
        unit has a Weibull lifetime of mean ``U * mtbf`` (cluster-wide mean ``mtbf``); a group
        is U / N units and dies at the first of their failures, so its lifetime is Weibull
        with scale ``U lam (U / N)^(-1 / k)``.  The hardware is the same 600k GPUs at every N,
        so a fixed U makes the failure process a property of the cluster, not of how it is
        split into data-parallel groups; with U = N the post-restart burst (which scales as
        U^(1 - k)) grows with N.  Must be at least ``groups`` (no unit spans two groups; U / N
        need not be an integer: a group's hazard is its U / N share of the units') and at most
        ``gpus``; ``failure_units=gpus`` is ``failure_model="per_gpu"``.  The simulator guide
        measures U against the paper's table.
    restart_renews : {"all", "failed"}
        Per-group models only: which hardware a global restart replaces (default ``"all"``:
        every group is fresh, age 0, after a restart).  ``"failed"``: only the groups that died
        since the previous restart are replaced by fresh hardware; the survivors keep their age
        (each group is then an independent Weibull renewal process, the textbook superposition
        whose cluster-wide rate tends to ``1 / mtbf``).
    restart_aging : bool
        Per-group models only.  False (default): hardware ages are frozen during a restart, so
        no failure happens while the job is down.  True: ages keep running during the
        restart; a group whose lifetime ends during it is replaced on the spot (fresh from its
        failure time, possibly more than once) and the job still resumes after ``restart``
        seconds.  With ``restart_renews="all"`` the replacement happens at the start of the
        restart, so the job resumes on hardware that is ``restart`` seconds old.
    sync_jitter : bool
        False (default): one jitter draw per step for the whole job.  True: every alive group
        draws its own ``u`` per step (one draw scaling its whole stack, not one per layer) and
        the synchronous step waits for the slowest group, i.e. the step's ``u`` is the maximum
        of n_alive independent uniforms.  ``t0`` stays the jitter-free failure-free time, so
        jitter is then a net loss even without failures.
    rep_leftover : {"idle", "set"}
        Replication only, when ``r`` does not divide ``groups``.  ``"idle"`` (default): the
        ``groups mod r`` leftover groups sit idle (and do not fail) while the ``groups // r``
        full sets are credited with the whole global batch.  ``"set"``: the leftovers form one
        smaller replica set holding the remaining shards (at most ``r`` layers each, so the
        step time is unchanged); it wipes out when all of its groups die.

    Raises
    ------
    TypeError
        If a field has the wrong kind (e.g. ``groups=2.5``).
    ValueError
        If a field is out of range, naming the field and the value.

    Notes
    -----
    Step time at stack depth S is ``S * compute * (1 + jitter * u) + allreduce`` with u uniform
    in [-1, 1], so the failure-free time-to-train is ``t0 = steps * (compute + allreduce)``.
    Validation is O(1).

    References
    ----------
    .. [1] J. Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for
       Fault-Tolerant LLM Pretraining Systems with 100k+ GPUs", ICML 2026, arXiv:2603.00357
       (section 5's scenario: 600k H100, m = 5 min, Weibull shape 0.78, T_r = 60 min).

    Examples
    --------
    >>> s = Scenario(groups=200)
    >>> s.allreduce_time, s.t0
    (2.0, 660000.0)
    """

    gpus: int = 600_000
    groups: int = 600
    steps: int = 10_000
    compute: float = 64.0
    allreduce: float | None = None
    mtbf: float = 300.0
    weibull_shape: float = 0.78
    restart: float = 3600.0
    save: float = 60.0
    period: float | None = None
    controller_time: float | None = 0.1
    shrink_time: float = 0.1
    jitter: float = 0.05
    racks: int = 1
    rack_share: float = 0.0
    repair: float | None = None
    repair_sigma: float = 0.5
    restart_depth: int | None = None
    restart_policy: str = "wipeout"
    dynamic_checkpoint: bool = False
    horizon: float = 100.0
    failure_model: str = "per_group"
    failure_units: int | None = None
    restart_renews: str = "all"
    restart_aging: bool = False
    sync_jitter: bool = False
    rep_leftover: str = "idle"

    def __post_init__(self) -> None:
        groups = check_int("groups", self.groups, lo=1)
        gpus = check_int("gpus", self.gpus, lo=1)
        if gpus < groups:
            raise ValueError(f"gpus = {gpus} must be >= groups = {groups} (a group needs a GPU)")
        check_int("steps", self.steps, lo=1)
        check_number("compute", self.compute, lo=0.0, lo_open=True)
        if self.allreduce is not None:
            check_number("allreduce", self.allreduce, lo=0.0)
        check_number("mtbf", self.mtbf, lo=0.0, lo_open=True, allow_inf=True)
        check_number("weibull_shape", self.weibull_shape, lo=0.0, lo_open=True)
        check_number("restart", self.restart, lo=0.0)
        check_number("save", self.save, lo=0.0)
        if self.period is not None:
            p = check_number("period", self.period, lo=0.0, lo_open=True, allow_inf=True)
            if p <= self.save:
                raise ValueError(
                    f"period = {self.period!r} must exceed save = {self.save!r} "
                    "(the period includes the save)"
                )
        if self.controller_time is not None:
            check_number("controller_time", self.controller_time, lo=0.0)
        check_number("shrink_time", self.shrink_time, lo=0.0)
        check_number("jitter", self.jitter, lo=0.0, hi=0.5)
        racks = check_int("racks", self.racks, lo=1)
        if racks > groups:
            raise ValueError(f"racks = {racks} must be <= groups = {groups}")
        check_number("rack_share", self.rack_share, lo=0.0, hi=1.0)
        if self.rack_share > 0 and racks == 1:
            raise ValueError(f"rack_share = {self.rack_share!r} needs racks > 1, got racks = 1")
        if self.repair is not None:
            check_number("repair", self.repair, lo=0.0, lo_open=True)
        check_number("repair_sigma", self.repair_sigma, lo=0.0)
        if self.restart_depth is not None:
            check_int("restart_depth", self.restart_depth, lo=2)
        if self.restart_policy not in ("wipeout", "expected_cost"):
            raise ValueError(
                f"restart_policy = {self.restart_policy!r} is not 'wipeout' or 'expected_cost'"
            )
        if not isinstance(self.dynamic_checkpoint, bool):
            raise TypeError(f"dynamic_checkpoint = {self.dynamic_checkpoint!r} must be a bool")
        check_number("horizon", self.horizon, lo=1.0, allow_inf=True)
        if self.failure_model not in ("renewal", "per_group", "per_gpu"):
            raise ValueError(
                f"failure_model = {self.failure_model!r} is not 'renewal', 'per_group' or 'per_gpu'"
            )
        if self.failure_units is not None:
            units = check_int("failure_units", self.failure_units, lo=1)
            if self.failure_model != "per_group":
                raise ValueError(
                    f"failure_units = {units} needs failure_model = 'per_group', got "
                    f"{self.failure_model!r}"
                )
            if not groups <= units <= gpus:
                raise ValueError(
                    f"failure_units = {units} is not in [groups = {groups}, gpus = {gpus}]"
                )
        if self.restart_renews not in ("all", "failed"):
            raise ValueError(f"restart_renews = {self.restart_renews!r} is not 'all' or 'failed'")
        for name in ("restart_aging", "sync_jitter"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} = {getattr(self, name)!r} must be a bool")
        if self.failure_model == "renewal" and (self.restart_renews != "all" or self.restart_aging):
            raise ValueError(
                f"restart_renews = {self.restart_renews!r} / restart_aging = "
                f"{self.restart_aging!r} need a per-group failure model, got "
                "failure_model = 'renewal'"
            )
        if self.rep_leftover not in ("idle", "set"):
            raise ValueError(f"rep_leftover = {self.rep_leftover!r} is not 'idle' or 'set'")

    # -- derived quantities -------------------------------------------------------------------
    @property
    def allreduce_time(self) -> float:
        """The all-reduce time actually used (seconds)."""
        return default_allreduce(self.groups) if self.allreduce is None else float(self.allreduce)

    @property
    def t0(self) -> float:
        """Failure-free time-to-train ``steps * (compute + allreduce)`` (seconds)."""
        return self.steps * (float(self.compute) + self.allreduce_time)

    @property
    def failure_unit_count(self) -> int:
        """Independently aging hardware units U of the per-group failure models.

        ``failure_units``; else ``gpus`` for ``failure_model="per_gpu"``; else (per-group) the
        calibrated ``min(gpus, max(groups, CALIBRATED_FAILURE_UNITS))``; else (renewal, where
        it plays no part) ``groups``.

        Examples
        --------
        >>> Scenario(groups=200, failure_units=1000).failure_unit_count
        1000
        >>> Scenario(groups=200).failure_unit_count, Scenario(groups=4000).failure_unit_count
        (1500, 4000)
        """
        if self.failure_units is not None:
            return int(self.failure_units)
        if self.failure_model == "per_gpu":
            return int(self.gpus)
        if self.failure_model == "per_group":
            return min(int(self.gpus), max(int(self.groups), CALIBRATED_FAILURE_UNITS))
        return int(self.groups)

    @property
    def weibull_scale(self) -> float:
        """Weibull scale lambda such that the mean inter-arrival is ``mtbf``."""
        return float(self.mtbf) / math.gamma(1.0 + 1.0 / float(self.weibull_shape))

    def rack_of(self, group: int) -> int:
        """Rack index of a group (contiguous blocks of groups)."""
        return group * self.racks // self.groups

    def replace(self, **changes: object) -> Scenario:
        """A copy with some fields changed (validated again).

        Examples
        --------
        >>> Scenario().replace(groups=1000).allreduce_time
        10.0
        """
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        """The fields as a plain dict (JSON-serialisable apart from ``inf``)."""
        return dataclasses.asdict(self)
