"""Every robot dqdyn can load by name, and the size of a few of them.

Bundled models are always there; example-robot-data's (panda, ur5, talos, …) appear when it is
installed (``pip install example-robot-data``).
"""

import dqdyn

names = dqdyn.list_models()
print(f"{len(names)} models:", ", ".join(names))
for name in ("two_link_arm", "jaco6", "youbot_jaco", "tree38"):
    m = dqdyn.load_example(name)
    info = dqdyn.model_info(name)
    print(f"{name:14s} nq = {m.nq:2d}  nv = {m.nv:2d}  mass = {m.total_mass:6.2f} kg  "
          f"({info.description})")
