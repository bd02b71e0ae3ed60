"""The robots of the papers' experiments, as dqdyn models plus matching MuJoCo models.

No inertial parameters are published for any of them (digest §2.2), so they are stand-ins with
the same structure: the JACO-like 6-DoF arm ``jaco6`` (bundled URDF), a 7-DoF arm, a 50-DoF
serial arm, the 9-DoF holonomic mobile manipulator (the arm on a youBot-like base with a planar
root joint, bundled URDF ``youbot_jaco``), and a 38-DoF branched robot of 9 subsystems
(1 × 6-DoF + 8 × 4-DoF, thesis §5.3).
"""

from __future__ import annotations

import numpy as np

from ..multibody.builders import ModelBuilder, serial_chain
from ..parsers.urdf import bundled, load_urdf
from .mujoco_bridge import mujoco_from_model, mujoco_from_urdf, state_maps


def jaco6():
    return load_urdf(bundled("jaco6"))


def arm7():
    """A generic 7-DoF spatial arm (axes z, y, x, ...; tool frame ``tool``)."""
    return serial_chain(7, seed=3)


def serial50():
    """The 50-DoF serial arm (seed 000 §5; links 8 cm, 0.3 kg, random inertias)."""
    return serial_chain(50, link_length=0.08, link_mass=0.3, seed=50)


def holonomic_mm():
    """JACO-like arm on a holonomic (planar-joint) base: q = (x, y, φ, θ₁..θ₆), 9 DoF."""
    return load_urdf(bundled("youbot_jaco"), root_joint="planar")


def tree38():
    """38-DoF fixed-base tree of 9 subsystems: a 6-DoF trunk and eight 4-DoF limbs, two limbs
    attached to the trunk at each of links 2, 4 and 6, and two attached at the tips of limbs
    (a tree of subsystems as in thesis Fig. 5.x / digest §1.8)."""
    rng = np.random.default_rng(38)
    b = ModelBuilder("tree38")
    axes = [(0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 1, 0)]

    def inertia(m, l):
        return np.diag([m * l * l / 12 + 1e-3, m * l * l / 12 + 1e-3, 2e-3]) * (1 + 0.1 * rng.random(3))

    parent = "world"
    for k in range(6):
        name = f"trunk{k + 1}"
        b.add_body(name, parent, "revolute", joint_name=f"s1_j{k + 1}", axis=axes[k % 3],
                   xyz=(0, 0, 0.15 if k else 0.1), mass=2.0 - 0.2 * k, com=(0.01, 0, 0.07),
                   inertia=inertia(2.0 - 0.2 * k, 0.15))
        parent = name
    mounts = ["trunk2", "trunk2", "trunk4", "trunk4", "trunk6", "trunk6", "s2_l4", "s6_l4"]
    for s, mount in enumerate(mounts, start=2):
        side = 1 if s % 2 == 0 else -1
        parent = mount
        for k in range(4):
            name = f"s{s}_l{k + 1}"
            xyz = (0.0, side * 0.12, 0.05) if k == 0 else (0.0, 0.0, 0.12)
            b.add_body(name, parent, "revolute", joint_name=f"s{s}_j{k + 1}",
                       axis=axes[(k + s) % 4], xyz=xyz, rpy=(side * 0.3, 0.1 * k, 0.0),
                       mass=0.6 - 0.1 * k, com=(0.0, 0.005, 0.05), inertia=inertia(0.6 - 0.1 * k, 0.12))
            parent = name
    return b.build()


def with_mujoco(name: str, timestep: float = 1e-3, integrator: str = "RK4"):
    """``(model, mjmodel, iq, iv)`` for one of the robots above."""
    if name == "jaco6":
        m, mj = jaco6(), mujoco_from_urdf(bundled("jaco6"), timestep, integrator)
    else:
        m = {"arm7": arm7, "serial50": serial50, "holonomic_mm": holonomic_mm, "tree38": tree38}[name]()
        mj = mujoco_from_model(m, timestep, integrator)
    iq, iv = state_maps(m, mj)
    return m, mj, iq, iv


__all__ = ["jaco6", "arm7", "serial50", "holonomic_mm", "tree38", "with_mujoco"]
