"""Event-driven simulator of a pretraining run under failures (``docs/model.md``, "The simulator").

Schemes: CKPT-only (``"checkpoint"``), Rep+CKPT (``"replication"``) and SPARe+CKPT
(``"spare"``, decisions from the real :class:`spare_fast.Controller`).  See
:mod:`spare_fast.sim.engine` for the model and its documented choices.

* :mod:`~spare_fast.sim.scenario`: the job, its failure process and recovery costs.
* :mod:`~spare_fast.sim.engine`: the event loop (:func:`simulate`).
* :mod:`~spare_fast.sim.failures`: one class per failure model (when, and whom, failures hit).
* :mod:`~spare_fast.sim.schemes`: the :class:`~spare_fast.sim.schemes.Scheme` protocol and
  CKPT-only, Rep+CKPT and SPARe+CKPT.
* :mod:`~spare_fast.sim.ledger`: the time buckets (useful, redundancy, recovery, ...).
* :mod:`~spare_fast.sim.policy`: the checkpoint period and the restart rules.
* :mod:`~spare_fast.sim.report`: the :class:`Report` and its timeline.
* ``spare_fast.sim.sweep`` (the module of :func:`sweep`): grids of runs in parallel, tables and
  plots.

Examples
--------
>>> from spare_fast.sim import Scenario, simulate
>>> simulate(Scenario(groups=200, steps=10, mtbf=float("inf"), jitter=0.0), "checkpoint").normalized
1.0
"""

from __future__ import annotations

from spare_fast.layout import domain_aware_layout, make_layout
from spare_fast.sim.engine import EventQueue, simulate
from spare_fast.sim.report import TIMELINE_DTYPE, Report, TimelineEvent
from spare_fast.sim.scenario import CALIBRATED_FAILURE_UNITS, Scenario, default_allreduce
from spare_fast.sim.schemes import DEFAULT_LAYOUT, SCHEMES, default_redundancy
from spare_fast.sim.sweep import demo_simulation, sweep

__all__ = [
    "CALIBRATED_FAILURE_UNITS",
    "DEFAULT_LAYOUT",
    "SCHEMES",
    "TIMELINE_DTYPE",
    "EventQueue",
    "Report",
    "Scenario",
    "TimelineEvent",
    "default_allreduce",
    "default_redundancy",
    "demo_simulation",
    "domain_aware_layout",
    "make_layout",
    "simulate",
    "sweep",
]
