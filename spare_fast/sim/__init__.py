"""Event-driven simulator of a pretraining run under failures (SPEC section 5).

Schemes: CKPT-only (``"checkpoint"``), Rep+CKPT (``"replication"``) and SPARe+CKPT
(``"spare"``, decisions from the real :class:`spare_fast.Controller`).  See
:mod:`spare_fast.sim.engine` for the model and its documented choices.

Examples
--------
>>> from spare_fast.sim import Scenario, simulate
>>> simulate(Scenario(groups=200, steps=10, mtbf=float("inf"), jitter=0.0), "checkpoint").normalized
1.0
"""

from __future__ import annotations

from spare_fast.sim.engine import (
    DEFAULT_LAYOUT,
    EventQueue,
    default_redundancy,
    domain_aware_layout,
    make_layout,
    simulate,
)
from spare_fast.sim.report import TIMELINE_DTYPE, Report, TimelineEvent
from spare_fast.sim.scenario import CALIBRATED_FAILURE_UNITS, Scenario, default_allreduce
from spare_fast.sim.schemes import SCHEMES
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
