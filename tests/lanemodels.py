"""The models the lane-kernel tests run on (`tests/dynamics/test_lanes_aba.py`,
`tests/dynamics/test_lanes_crba.py`): a 7-DoF arm (the Panda), random trees of revolute,
prismatic and helical joints, prismatic and helical chains, floating bases (ANYmal, Solo-12, free
joints anywhere in a tree) and armature, each with its Pinocchio twin."""

from __future__ import annotations

import warnings

import numpy as np

import dqdyn

from pinconv import ROBOTS, erd, pin, pin_from_model, pin_from_urdf

LANE_TYPES = ("revolute", "prismatic", "helical")
MODELS = ["panda", "tree0", "tree1", "prismatic", "helical", "anymal", "solo12", "free0",
          "free1", "armature"]


def robot(name, **kw):
    """(model, Pinocchio model) of an example-robot-data robot of `pinconv.ROBOTS`."""
    rel, root = ROBOTS[name]
    path = erd(rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(path, root_joint=root, **kw)
    pm = pin.buildModelFromUrdf(path) if root is None else pin_from_urdf(path, root)
    return m, pm


def model(name):
    """(model, Pinocchio model) named in `MODELS`."""
    if name == "panda":  # 7 arm joints + 2 fingers (the mimic finger independent, as Pinocchio)
        return robot("panda", mimic="independent")
    if name in ("anymal", "solo12"):
        return robot(name)
    if name.startswith("tree"):
        m = dqdyn.random_tree(12, LANE_TYPES, seed=int(name[-1]))
    elif name == "prismatic":
        m = dqdyn.serial_chain(6, "prismatic")
    elif name == "helical":
        m = dqdyn.random_tree(8, ("helical",), seed=3)
    elif name.startswith("free"):  # free joints anywhere (two of them, one on a revolute chain)
        m = dqdyn.random_tree(12, LANE_TYPES + ("free",), seed=int(name[-1]))
    elif name == "armature":
        t = dqdyn.random_tree(12, LANE_TYPES, seed=1)
        m = t.with_armature(np.random.default_rng(4).uniform(0.05, 3.0, t.nv))
    else:
        raise ValueError(f"no lane test model {name!r}")
    return m, pin_from_model(m)[0]
