"""Alias of :mod:`spare_fast.testing.bench` (moved there), kept so that old imports work."""

from spare_fast.testing.bench import *  # noqa: F403
from spare_fast.testing.bench import __all__  # noqa: F401
