"""Alias of :mod:`spare_fast.torch.testing.tiny` (moved there), kept so that old imports work.

``import spare_fast.torch.tiny`` gives the module itself, not a copy of its names.
"""

import sys

from spare_fast.torch.testing import tiny as _moved

sys.modules[__name__] = _moved
