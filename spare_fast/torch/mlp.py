"""Alias of :mod:`spare_fast.torch.testing.mlp` (moved there), kept so that old imports work.

``import spare_fast.torch.mlp`` gives the module itself, not a copy of its names.
"""

import sys

from spare_fast.torch.testing import mlp as _moved

sys.modules[__name__] = _moved
