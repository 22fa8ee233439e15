"""Alias of :mod:`spare_fast.testing.peers` (moved there), kept so that old imports work."""

from spare_fast.testing.peers import *  # noqa: F403
from spare_fast.testing.peers import __all__  # noqa: F401
