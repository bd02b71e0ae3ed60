"""``dqdyn.distributed`` is `dqdyn.scale.distributed` (the same module object): see there."""

import sys

from dqdyn.scale import distributed

sys.modules[__name__] = distributed
