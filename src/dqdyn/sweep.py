"""``dqdyn.sweep`` is `dqdyn.scale.sweep` (the same module object): see there."""

import sys

from dqdyn.scale import sweep

sys.modules[__name__] = sweep
