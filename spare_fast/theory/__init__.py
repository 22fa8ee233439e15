"""Closed-form theory of SPARe, and its check against Monte Carlo.

* :mod:`spare_fast.theory.closed_forms`: the formulas (endurable failures, depth overhead,
  checkpoint period, availability, time-to-train, optimal redundancy), all re-exported here.
* :mod:`spare_fast.theory.validation`: :func:`validate` runs the closed forms against
  :mod:`spare_fast.montecarlo` over a grid of (layout, N, r) and writes tables and a plot.
* :mod:`spare_fast.theory.plan`: :func:`~spare_fast.theory.plan.plan` sizes a job from the
  closed forms (``spare-fast plan``).

The model is described in ``docs/model.md``, "Closed-form theory".

Examples
--------
>>> from spare_fast import theory
>>> theory.optimal_redundancy(600)
10
"""

from __future__ import annotations

from spare_fast.theory import closed_forms
from spare_fast.theory.closed_forms import *  # noqa: F403 - the formulas are the package's API
from spare_fast.theory.closed_forms import Duration
from spare_fast.theory.validation import validate

__all__ = [*closed_forms.__all__, "Duration", "validate"]
