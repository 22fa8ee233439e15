"""spare_fast: the scheduling core of SPARe (stacked parallelism with adaptive reordering).

SPARe keeps a synchronous data-parallel training job running through group failures: every
data-parallel group holds a stack of ``r`` redundant shard types, and after each failure the
controller (ReCtlr) reorders the survivors' stacks so that every shard type is still computed
each step, at the smallest stack depth and with the fewest moves.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Run from a source tree without an in-place build: take _core from the installed wheel of the
# same version (spare_fast/_locate.py says why), or fail with a one-line hint.
from spare_fast._locate import extend_path as _extend_path

_extend_path(__path__, __version__)

from spare_fast._install_info import get_cmake_dir, get_include  # noqa: E402
from spare_fast.controller import Controller, Decision, Status, solve  # noqa: E402
from spare_fast.layout import Layout  # noqa: E402

__all__ = ["Controller", "Decision", "Layout", "Status", "__version__", "solve"]
__all__ += ["get_cmake_dir", "get_include"]  # the C/C++ package in the wheel
