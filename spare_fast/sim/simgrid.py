"""The simulator on SimGrid: the same runs as :mod:`spare_fast.sim`, on a SimGrid platform.

SimGrid (https://simgrid.org) is the simulator the SPARe paper's results come from.  This
engine plays a run of :func:`spare_fast.sim.simulate` on a SimGrid platform and SimGrid's
clock; the decision rules (depth, patch compute, checkpoints, restarts) are the native
engine's own, taken from :func:`spare_fast.sim.engine.new_run`, never copied:

* **Platform** (:class:`Platform`): a SimGrid cluster of one host per data-parallel group plus
  a controller host, each behind a private link to a non-blocking backbone.  A host is one
  rank slot of the replicate dimension: rank i of every group reduces with rank i of the
  others (HSDP), so the gradient it all-reduces is its share ``parameters * bytes_per_parameter
  * groups / gpus`` of the model's gradient.
* **Step** (:class:`StepPricer`): one stack layer's compute is an execution of ``compute *
  host_speed`` flops on every group host; the all-reduce is a ring over the alive group hosts,
  ``2 (n - 1)`` phases in which every host sends ``1 / n`` of its gradient to its successor,
  each phase one SimGrid parallel task (``host/model:ptask_L07``).  The phases of one ring are
  the same activity on the same hosts, so one is simulated and the ring costs ``2 (n - 1)``
  times it.  On the cluster every route is (private link, backbone, private link), so a
  ring's time depends on the alive set only through its size n: it is simulated once per
  alive count and memoised (:meth:`StepPricer.allreduce`).
* **Events**: a controller actor on the controller host plays the run.  Before each event
  (failure, repair, save end, restart end) it sleeps on SimGrid's clock until the event's
  time, then handles it with the shared rules, which call :class:`spare_fast.Controller` for
  every failure and rejoin.  Failures come from the same failure model objects as the native
  engine (:mod:`spare_fast.sim.failures`, the paper's Weibull process), drawn from the same
  seed, so both engines see a common failure trace.  A dead group's host leaves the ring.
  SimGrid 3.32's Python bindings turn hosts off only through a state profile fixed before the
  run, while the failure process depends on the run (lifetimes renew at every restart), so
  failures are events of the controller actor rather than host profiles.
* **Clock**: saves and restarts are sleeps of ``save`` and ``restart`` seconds on the same
  clock.  Simulating a new configuration's activities takes SimGrid time outside the job;
  the job's clock is SimGrid's clock less that pricing time (:attr:`StepPricer.offset`).
* **Calibration**: with ``Scenario.allreduce = D`` every link's bandwidth is multiplied and
  its latency divided by ``a(N) / D`` (``a(N)`` the failure-free ring on the base platform),
  so that a failure-free step's all-reduce takes D, as in the native engine.  Without it the
  network model decides, and the report's scenario carries the all-reduce it gave.

SimGrid runs in a worker process (``python -m spare_fast.sim.simgrid``): its engine is one per
process, and an abort inside SimGrid must not take the caller with it.  The worker finds
Debian's ``python3-simgrid`` (``/usr/lib/python3/dist-packages``) when ``import simgrid``
fails in the caller's environment (a plain virtual environment), and says so in one log line
(:func:`locate_simgrid`).

References
----------
.. [1] H. Casanova et al., "Versatile, scalable, and accurate simulation of distributed
   applications and platforms", JPDC 74(10), 2014 (SimGrid).
.. [2] P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009 (the ring all-reduce).

Examples
--------
Needs SimGrid (a worker process, about a second):

>>> from spare_fast.sim import Scenario, simgrid
>>> sc = Scenario(groups=20, steps=20)
>>> simgrid.simulate(sc, "spare", redundancy=3).completed  # doctest: +SKIP
True
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import importlib.util
import logging
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from spare_fast.layout import Layout
from spare_fast.sim.report import Report
from spare_fast.sim.scenario import Scenario

__all__ = [
    "INSTALL_HINT",
    "Platform",
    "SimGridUnavailable",
    "SimGridWorkerError",
    "StepPricer",
    "locate_simgrid",
    "network_allreduce",
    "simulate",
]

_log = logging.getLogger(__name__)

#: How to get SimGrid's Python bindings (the one line the engine says when they are absent).
INSTALL_HINT = (
    "SimGrid's Python bindings are not installed: on Debian or Ubuntu, "
    "'sudo apt-get install python3-simgrid' (SimGrid 3.32, for Python 3.11); elsewhere "
    "'pip install simgrid' (builds SimGrid from source)"
)

#: Folders where a system package manager puts Python extension modules (Debian first).
SYSTEM_FOLDERS = (
    "/usr/lib/python3/dist-packages",
    "/usr/local/lib/python3/dist-packages",
    f"/usr/lib/python3.{sys.version_info.minor}/site-packages",
    f"/usr/lib64/python3.{sys.version_info.minor}/site-packages",
)

#: SimGrid's options for this engine: thread contexts (the Python bindings crash with the
#: raw and ucontext factories), the parallel-task host model, and its log at warning level.
SIMGRID_OPTIONS = (
    "--log=root.thres:warning",
    "--log=xbt_cfg.thres:warning",
    "--cfg=contexts/factory:thread",
    "--cfg=host/model:ptask_L07",
)


class SimGridUnavailable(RuntimeError):
    """SimGrid's Python bindings cannot be found; the message says how to install them."""


class SimGridWorkerError(RuntimeError):
    """The SimGrid worker process ended without an answer (SimGrid itself aborted)."""


def locate_simgrid() -> tuple[str, bool]:
    """Where SimGrid's Python module is: ``(path, from_system)``.

    ``from_system`` is True when this interpreter cannot ``import simgrid`` and the module was
    found in a system folder instead (:data:`SYSTEM_FOLDERS`, Debian's
    ``/usr/lib/python3/dist-packages`` first), as an extension built for this interpreter's
    ABI.  The environment variable ``SPARE_FAST_SIMGRID`` may name the module file or its
    folder.

    Raises
    ------
    SimGridUnavailable
        With :data:`INSTALL_HINT` when it is nowhere.

    Notes
    -----
    Only the module file is used from the system folder (it is loaded by path), never the
    folder itself: putting it on ``sys.path`` would shadow the environment's own packages.
    """
    spec = importlib.util.find_spec("simgrid")
    if spec is not None and spec.origin:
        return spec.origin, False
    named = os.environ.get("SPARE_FAST_SIMGRID")
    folders = list(SYSTEM_FOLDERS)
    if named:
        if os.path.isfile(named):
            return named, True
        folders.insert(0, named)
    for folder in folders:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "simgrid" + suffix)
            if os.path.isfile(path):
                return path, True
    raise SimGridUnavailable(INSTALL_HINT)


def _import_simgrid() -> ModuleType:
    """Import SimGrid's module, by path from a system folder when it is not importable."""
    path, from_system = locate_simgrid()
    if not from_system:
        import simgrid

        return simgrid
    spec = importlib.util.spec_from_file_location("simgrid", path)
    if spec is None or spec.loader is None:  # pragma: no cover - a file that is no module
        raise SimGridUnavailable(f"{path} is not a Python module; {INSTALL_HINT}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:  # built for another interpreter or missing its libsimgrid
        raise SimGridUnavailable(f"{path} does not load ({exc}); {INSTALL_HINT}") from None
    sys.modules["simgrid"] = module
    return module


@dataclass(frozen=True)
class Platform:
    """The SimGrid platform: one host per group plus a controller host, on a cluster.

    Every host has a private link of ``link_bandwidth`` and ``link_latency`` to a non-blocking
    backbone (``backbone_bandwidth``, ``backbone_latency``, shared as a fat pipe).

    Parameters
    ----------
    link_bandwidth : float
        Bytes per second of a host's link (6.25e9: 50 Gb/s, a 400 Gb/s network card shared
        by the 8 GPUs of a node).
    link_latency : float
        Seconds (5e-6).
    backbone_bandwidth : float
        Bytes per second of the backbone, per flow (1e15: never the bottleneck).
    backbone_latency : float
        Seconds (0).
    parameters : float
        Model parameters (1e13: the paper's 10T-parameter model).
    bytes_per_parameter : float
        Bytes per gradient entry (2: bf16).
    host_speed : float
        Flops per second of a host (1e15); one stack layer is ``compute * host_speed`` flops.

    Notes
    -----
    With the defaults a failure-free ring all-reduce takes ``2 (N - 1) / N * G / bandwidth``
    plus ``2 (N - 1)`` route latencies, G the per-rank gradient: 2.1 s at N = 200, 6.4 s at
    N = 600 and 10.7 s at N = 1,000 on the paper's 600,000 GPUs, the paper's 2-10 s range
    (the native engine's analytic ``N / 100``).

    Examples
    --------
    >>> from spare_fast.sim import Scenario
    >>> Platform().gradient_bytes(Scenario(groups=600)) / 1e9
    20.0
    """

    link_bandwidth: float = 6.25e9
    link_latency: float = 5e-6
    backbone_bandwidth: float = 1e15
    backbone_latency: float = 0.0
    parameters: float = 1e13
    bytes_per_parameter: float = 2.0
    host_speed: float = 1e15

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            positive = f.name not in ("link_latency", "backbone_latency")
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{f.name} = {v!r} must be a finite number")
            if v < 0 or (positive and v == 0):
                raise ValueError(f"{f.name} = {v!r} must be {'> 0' if positive else '>= 0'}")

    def gradient_bytes(self, scenario: Scenario) -> float:
        """Bytes one rank all-reduces per step: its share of the model's gradient.

        A group is ``gpus / groups`` GPUs that shard the model; rank i of every group
        reduces its shard with rank i of the others.
        """
        return self.parameters * self.bytes_per_parameter * scenario.groups / scenario.gpus

    def xml(self, hosts: int) -> str:
        """The platform file: a cluster of ``hosts`` hosts ``g0 .. g{hosts-1}``."""
        return (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f'  <cluster id="job" prefix="g" suffix="" radical="0-{hosts - 1}" '
            f'speed="{self.host_speed!r}f" bw="{self.link_bandwidth!r}Bps" '
            f'lat="{self.link_latency!r}s" bb_bw="{self.backbone_bandwidth!r}Bps" '
            f'bb_lat="{self.backbone_latency!r}s" bb_sharing_policy="FATPIPE"/>\n'
            "</platform>\n"
        )


class StepPricer:
    """The step's activities on the platform, simulated once per configuration (worker side).

    Runs inside a SimGrid actor.  :meth:`allreduce` gives the ring all-reduce over the alive
    group hosts, memoised per alive count (see the module docstring for why the count is the
    configuration's signature on a cluster); :meth:`layer` one stack layer's compute.  The
    SimGrid time spent simulating them is :attr:`offset`, which the job's clock leaves out.

    Parameters
    ----------
    sg : module
        SimGrid's module.
    engine : simgrid.Engine
        The engine with the platform loaded.
    platform : Platform
    scenario : Scenario
    """

    def __init__(self, sg: Any, engine: Any, platform: Platform, scenario: Scenario) -> None:
        self.sg = sg
        self.engine = engine
        self.hosts = [engine.host_by_name(f"g{g}") for g in range(scenario.groups)]
        self.gradient = platform.gradient_bytes(scenario)
        self.flops = float(scenario.compute) * platform.host_speed
        self.offset = 0.0  #: SimGrid seconds spent pricing, outside the job's clock
        self.simulated = 0  #: ring phases simulated (one per new alive count)
        self.scale = 1.0  #: the calibration: every ring phase takes ``scale`` times the base
        self._memo: dict[int, float] = {}

    def _timed(self, hosts: list[Any], flops: list[float], bytes_: list[float]) -> float:
        t0 = self.engine.clock
        self.sg.this_actor.parallel_execute(hosts, flops, bytes_)
        took = self.engine.clock - t0
        self.offset += took
        return float(took)

    def ring_phase(self, members: Sequence[int]) -> float:
        """One ring phase over these group hosts, simulated: each sends ``G / n`` bytes to the
        next one (in group order)."""
        hosts = [self.hosts[g] for g in sorted(members)]
        n = len(hosts)
        bytes_ = [0.0] * (n * n)
        share = self.gradient / n
        for i in range(n):
            bytes_[i * n + (i + 1) % n] = share
        return self._timed(hosts, [0.0] * n, bytes_)

    def allreduce(self, members: Sequence[int]) -> float:
        """The ring all-reduce over the alive groups ``members`` (seconds), memoised per
        count: ``2 (n - 1)`` times one simulated ring phase."""
        n = len(members)
        if n <= 1:
            return 0.0
        a = self._memo.get(n)
        if a is None:
            self.simulated += 1
            a = 2.0 * (n - 1) * self.ring_phase(members)
            self._memo[n] = a
        return a

    def layer(self) -> float:
        """One stack layer's compute on every group host, simulated (seconds)."""
        n = len(self.hosts)
        return self._timed(self.hosts, [self.flops] * n, [])

    def calibrate(self, target: float) -> None:
        """Scale every link so that the failure-free all-reduce takes ``target`` seconds."""
        base = self.allreduce(range(len(self.hosts)))
        if base <= 0:
            raise ValueError(f"allreduce = {target!r}: the platform's all-reduce is 0 s")
        f = base / target if target > 0 else math.inf
        for link in self.engine.all_links:
            link.set_bandwidth(link.bandwidth * f)
            link.set_latency(link.latency / f)
        self.scale = 1.0 / f
        self._memo.clear()

    def memo(self) -> dict[int, float]:
        """The all-reduce per alive count simulated so far."""
        return dict(self._memo)


# -- the worker process ----------------------------------------------------------------------
def _engine(sg: Any, platform: Platform, hosts: int, folder: str) -> Any:
    path = os.path.join(folder, "platform.xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(platform.xml(hosts))
    e = sg.Engine(["spare-fast", *SIMGRID_OPTIONS])
    e.load_platform(path)
    return e


def _play(sg: Any, task: dict[str, Any], folder: str) -> Any:
    """Run one task in this (worker) process; returns what the caller gets back."""
    from spare_fast.sim.engine import new_run, run_report

    sc: Scenario = task["scenario"]
    platform: Platform = task["platform"]
    e = _engine(sg, platform, sc.groups + 1, folder)
    out: dict[str, Any] = {}

    def allreduce_table() -> None:
        pricer = StepPricer(sg, e, platform, sc)
        if sc.allreduce is not None and float(sc.allreduce) == 0.0:
            out["result"] = {n: 0.0 for n in task["alive"]}
            return
        if sc.allreduce is not None:
            pricer.calibrate(float(sc.allreduce))
        full = list(range(sc.groups))
        out["result"] = {n: pricer.allreduce(full[:n]) for n in task["alive"]}

    def controller() -> None:
        wall0 = time.perf_counter()
        pricer = StepPricer(sg, e, platform, sc)
        layer = pricer.layer()
        target = sc.allreduce
        if target is not None and float(target) == 0.0:
            pricer.allreduce = lambda members: 0.0  # type: ignore[method-assign]
        elif target is not None:
            pricer.calibrate(float(target))
        a_full = pricer.allreduce(range(sc.groups))
        # The run's scenario: the network model's failure-free all-reduce and the CPU
        # model's layer time, so that T0 and the checkpoint period are this platform's.
        run_sc = sc.replace(allreduce=a_full, compute=layer)
        this_actor = sg.this_actor

        def wait_until(t: float) -> None:
            this_actor.sleep_until(t + pricer.offset)

        run = new_run(
            run_sc,
            task["scheme"],
            redundancy=task["redundancy"],
            layout=task["layout"],
            seed=task["seed"],
            timeline=task["timeline"],
            allreduce_of=lambda alive: pricer.allreduce(alive.members),
            wait_until=wait_until,
        )
        run.run(run_sc.horizon * run_sc.t0)
        report = run_report(run, time.perf_counter() - wall0)
        # The steps after the last event, to the end (or the horizon), on SimGrid's clock too;
        # then SimGrid's clock, less the pricing, is the job's.
        wait_until(report.wall_clock)
        out["clock_gap"] = (e.clock - pricer.offset) - report.wall_clock
        out["result"] = report
        out["priced"] = pricer.simulated

    body = controller if task["kind"] == "simulate" else allreduce_table

    def actor() -> None:
        # An exception that leaves an actor aborts SimGrid's process: keep it for the caller.
        try:
            body()
        except Exception as exc:
            out["error"] = exc

    sg.Actor.create("controller", e.host_by_name(f"g{sc.groups}"), actor)
    e.run()
    if "error" in out:
        raise out["error"]
    if "result" not in out:  # pragma: no cover - the actor died inside SimGrid
        raise RuntimeError("the SimGrid controller actor ended without a result")
    return out


def _worker(task_path: str, result_path: str) -> int:
    """The worker: read a pickled task, run it, write ``("ok", value)`` or ``("error", exc)``."""
    with open(task_path, "rb") as f:
        task = pickle.load(f)
    try:
        sg = _import_simgrid()
        with tempfile.TemporaryDirectory(prefix="spare-simgrid-") as folder:
            value: tuple[str, Any] = ("ok", _play(sg, task, folder))
    except Exception as exc:  # returned to the caller, who raises it
        value = ("error", exc)
    with open(result_path, "wb") as f:
        pickle.dump(value, f)
    return 0


_said_where = False


def _run_worker(task: dict[str, Any]) -> Any:
    global _said_where
    path, from_system = locate_simgrid()  # SimGridUnavailable before any process starts
    if from_system and not _said_where:
        _log.info("simgrid is not importable here; using %s", path)
        _said_where = True
    import spare_fast

    root = os.path.dirname(os.path.dirname(os.path.abspath(spare_fast.__file__)))
    env = dict(os.environ)
    # The worker imports this same spare_fast (a source tree or an installed one).
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    with tempfile.TemporaryDirectory(prefix="spare-simgrid-") as folder:
        task_path = os.path.join(folder, "task.pickle")
        result_path = os.path.join(folder, "result.pickle")
        with open(task_path, "wb") as f:
            pickle.dump(task, f)
        proc = subprocess.run(
            [sys.executable, "-m", "spare_fast.sim.simgrid", task_path, result_path],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if not os.path.exists(result_path):
            lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
            last = lines[-1] if lines else "no message"
            raise SimGridWorkerError(
                f"the SimGrid worker exited with status {proc.returncode}: {last}"
            )
        with open(result_path, "rb") as f:
            status, value = pickle.load(f)
    if status == "error":
        raise value
    return value


def simulate(
    scenario: Scenario,
    scheme: str,
    *,
    redundancy: int | None = None,
    layout: Layout | str | None = None,
    seed: int = 0,
    timeline: bool = True,
    platform: Platform | None = None,
) -> Report:
    """Simulate one pretraining run under failures on SimGrid and return its :class:`Report`.

    The arguments, the decision rules and the report are those of
    :func:`spare_fast.sim.simulate`; the step's compute and all-reduce come from SimGrid's
    models of ``platform`` and the run plays on SimGrid's clock (module docstring).

    Parameters
    ----------
    scenario : Scenario
        The job.  ``allreduce=None`` lets the network model set the all-reduce; a number D
        scales the platform so that a failure-free step's all-reduce takes D.
    scheme : {"checkpoint", "replication", "spare"}
    redundancy, layout, seed, timeline
        As :func:`spare_fast.sim.simulate`; the same seed gives the same failure trace.
    platform : Platform, optional
        The SimGrid platform (default :class:`Platform`).

    Returns
    -------
    Report
        Its ``scenario`` carries the all-reduce and layer compute the platform gave.

    Raises
    ------
    SimGridUnavailable
        SimGrid's Python bindings are nowhere (the message says how to install them).
    ValueError, TypeError
        As :func:`spare_fast.sim.simulate`.

    Notes
    -----
    One SimGrid ring phase (O(n) flows) per new alive count n, so at most N simulated
    activities per run; between them the run costs what the native engine does, plus one
    SimGrid sleep per event.  The run happens in a worker process (about a second to start).
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    plat = Platform() if platform is None else platform
    if not isinstance(plat, Platform):
        raise TypeError(f"platform must be a Platform, got {type(plat).__name__}")
    out = _run_worker(
        {
            "kind": "simulate",
            "scenario": scenario,
            "platform": plat,
            "scheme": scheme,
            "redundancy": redundancy,
            "layout": layout,
            "seed": seed,
            "timeline": timeline,
        }
    )
    gap = out["clock_gap"]
    if abs(gap) > 1e-6 * max(1.0, out["result"].wall_clock):  # pragma: no cover - a bug
        raise RuntimeError(f"SimGrid's clock and the run's disagree by {gap} s")
    report: Report = out["result"]
    return report


def network_allreduce(
    scenario: Scenario, alive: Sequence[int], platform: Platform | None = None
) -> dict[int, float]:
    """The ring all-reduce SimGrid gives over ``n`` alive groups, for each n in ``alive``.

    Parameters
    ----------
    scenario : Scenario
        N, GPUs and, when ``allreduce`` is set, the calibration target for n = N.
    alive : sequence of int
        Alive counts, each in [1, N].
    platform : Platform, optional

    Returns
    -------
    dict
        Seconds per alive count.

    Raises
    ------
    SimGridUnavailable
        SimGrid's Python bindings are nowhere.
    ValueError
        An alive count outside [1, N].
    """
    counts = [int(n) for n in alive]
    for n in counts:
        if not 1 <= n <= scenario.groups:
            raise ValueError(f"alive count {n} is not in [1, groups = {scenario.groups}]")
    plat = Platform() if platform is None else platform
    out = _run_worker(
        {"kind": "allreduce", "scenario": scenario, "platform": plat, "alive": counts}
    )
    result: dict[int, float] = out["result"]
    return result


if __name__ == "__main__":
    raise SystemExit(_worker(sys.argv[1], sys.argv[2]))
