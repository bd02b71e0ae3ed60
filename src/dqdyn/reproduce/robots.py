"""The robots of the papers' experiments, as dqdyn models plus matching MuJoCo models.

No inertial parameters are published for any of them, so they are stand-ins with
the same structure: the JACO-like 6-DoF arm ``jaco6`` (bundled URDF), a 7-DoF arm, a 50-DoF
serial arm, the 9-DoF holonomic mobile manipulator (the arm on a youBot-like base with a planar
root joint, bundled URDF ``youbot_jaco``), and a 38-DoF branched robot of 9 subsystems
(1 × 6-DoF + 8 × 4-DoF, [Silva2022thesis, §5.3]).

Wheeled robots: the Pioneer differential-drive base of [Silva2022thesis, app. A] (`pioneer`; a planar
joint with the CoM ``d`` ahead of the axle midpoint) and the 8-DoF nonholonomic mobile manipulator
of [Silva2022, §5] (`dqdyn.constraints.mobile_manipulator`) with a MuJoCo twin that has *real
wheels* rolling on a floor by contact friction (`wheeled_mm_mjcf`, `wheeled_mm_with_mujoco`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from dqdyn.errors import ModelError
from dqdyn.multibody.builders import ModelBuilder, serial_chain
from dqdyn.parsers.urdf import bundled, load_urdf
from dqdyn.reproduce.mujoco_bridge import mjcf_from_model, mujoco_from_model, mujoco_from_urdf, state_maps


def jaco6():
    return load_urdf(bundled("jaco6"))


def arm7():
    """A generic 7-DoF spatial arm (axes z, y, x, ...; tool frame ``tool``)."""
    return serial_chain(7, seed=3)


def serial50():
    """The 50-DoF serial arm ([Silva2022, §5]; links 8 cm, 0.3 kg, random inertias)."""
    return serial_chain(50, link_length=0.08, link_mass=0.3, seed=50)


def holonomic_mm():
    """JACO-like arm on a holonomic (planar-joint) base: q = (x, y, φ, θ₁..θ₆), 9 DoF."""
    return load_urdf(bundled("youbot_jaco"), root_joint="planar")


def tree38():
    """38-DoF fixed-base tree of 9 subsystems: a 6-DoF trunk and eight 4-DoF limbs, two limbs
    attached to the trunk at each of links 2, 4 and 6, and two attached at the tips of limbs
    (a tree of subsystems as in [Silva2022thesis, §5.3, Fig. 5.6])."""
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


# ------------------------------------------------------------------------------ wheeled robots
#: Pioneer 3-DX wheel radius and track width (m): the robot's datasheet values (195 mm wheels,
#: 331 mm between wheel centres) — the thesis gives only m, i₃₃ and d ([Silva2022thesis, §A.1]).
PIONEER_WHEEL_RADIUS = 0.0975
PIONEER_TRACK = 0.331


def pioneer(d: float = 0.001, mass: float = 16.0, i33: float = 2.0906):
    """The Pioneer base of [Silva2022thesis, appendix A] (Table A.1: m = 16 kg, i₃₃ = 2.0906 kg m², d =
    0.001 m): one body on a planar joint ``base_joint`` (q = (x, y, φ) of the frame F_r at the
    axle midpoint, v = q̇), CoM at ``(d, 0, 0)`` in F_r (eq. A.3).  i₁₁, i₂₂ do not enter the
    planar dynamics."""
    if not (np.isfinite(d) and np.isfinite(mass) and mass > 0 and np.isfinite(i33) and i33 > 0):
        raise ModelError(f"pioneer: need finite d, mass > 0, i33 > 0; got {d!r}, {mass!r}, {i33!r}")
    b = ModelBuilder("pioneer")
    b.add_body("base", "world", "planar", joint_name="base_joint", mass=mass, com=(d, 0.0, 0.0),
               inertia=np.diag([0.6 * i33, 0.7 * i33, i33]))
    return b.build()


def _f(x) -> str:
    return " ".join(f"{float(c):.17g}" for c in np.ravel(x))


def _shift(p) -> np.ndarray:
    """Parallel-axis matrix ``(p·p) 1 − p pᵀ``: inertia of a unit mass at ``p`` about the origin."""
    p = np.asarray(p, dtype=float)
    return (p @ p) * np.eye(3) - np.outer(p, p)


def wheeled_mm_mjcf(model, constraint, *, wheel_mass: float = 0.1, friction: float = 2.0,
                    timestep: float = 1e-3, integrator: str = "RK4", noslip_iterations: int = 20,
                    contact_timeconst: float = 0.005, caster_x=(0.45, -0.42),
                    caster_radius: float = 0.04, rear_caster_gap: float = 0.006) -> str:
    """MJCF of a differential-drive mobile manipulator with real wheels.

    From ``model`` (a dqdyn model whose base is on the planar joint of ``constraint``, a
    `DifferentialDriveConstraint` with ``wheel_radius`` r and
    ``track_width`` w) this builds the MuJoCo robot:

    * the chassis on a **free joint** (``base_free``), its origin = dqdyn's base frame, placed at
      the axle height r above a floor plane;
    * two **driven wheels** (hinge joints ``wheel_left`` / ``wheel_right`` about the chassis y
      axis, at the axle midpoint ± w/2 along y), sphere collision geoms of radius r, sliding
      friction ``friction`` (elliptic cone, ``impratio`` 10, ``noslip_iterations``): they roll
      without slipping up to the friction limit — the rolling constraint is *not* imposed as
      an equation;
    * two **frictionless caster spheres** (condim 1, priority over the floor), front and rear;
      the rear one ``rear_caster_gap`` above the floor so the robot stands on three points (two
      wheels + the front caster: a statically determinate support, so the wheels keep their load)
      and the rear caster only catches a backward tilt;
    * the arm as in `mjcf_from_model` (no collision geoms).

    Each wheel has mass ``wheel_mass`` and thin-disc inertia (spin ½ m r², transverse ¼ m r²);
    the chassis gets the base's mass, CoM and inertia *minus* the wheels' (parallel-axis
    theorem), so that chassis + wheels, wheels locked, is exactly dqdyn's base body.  What
    remains different is the wheels' spin inertia (the kinetic energy ½ I_s (θ̇_l² + θ̇_r²),
    i.e. an extra ``2 I_s / r²`` of mass along the heading and ``I_s w² / (2 r²)`` of yaw
    inertia in the rolling motion), the contact compliance (small pitch / heave of the
    chassis, which dqdyn's planar joint excludes) and micro-slip."""

    i = model.joint_index(constraint.joint)
    r, w = float(constraint.wheel_radius), float(constraint.track_width)
    if not (r > 0 and w > 0):
        raise ModelError("wheeled_mm_mjcf: the constraint needs wheel_radius > 0 and track_width > 0")
    if not (wheel_mass > 0 and friction > 0):
        raise ModelError(f"wheeled_mm_mjcf: need wheel_mass > 0 and friction > 0, got "
                         f"{wheel_mass!r}, {friction!r}")
    root = ET.fromstring(mjcf_from_model(model, timestep, integrator))
    opt = root.find("option")
    for fl in opt.findall("flag"):
        opt.remove(fl)  # contacts on
    opt.set("cone", "elliptic")
    opt.set("impratio", "10")
    opt.set("noslip_iterations", str(int(noslip_iterations)))
    base = root.find(f".//body[@name='{model.body_names[i]}']")
    if base is None or model.parent[i] != 0:
        raise ModelError("wheeled_mm_mjcf: the base must be a child of the world")
    for j in base.findall("joint"):
        base.remove(j)
    base.insert(1, ET.Element("freejoint", name="base_free"))
    base.set("pos", _f([0.0, 0.0, r]))
    # composite matching: chassis + 2 wheels (locked) = dqdyn's base body
    M, c, Ib = float(model.mass[i]), np.asarray(model.com[i]), np.asarray(model.inertia[i])
    ax = np.asarray(constraint.axle_offset, dtype=float)
    pw = {"left": ax + [0.0, w / 2, 0.0], "right": ax - [0.0, w / 2, 0.0]}
    Iw = np.diag([0.25, 0.5, 0.25]) * wheel_mass * r * r
    mc = M - 2 * wheel_mass
    if mc <= 0:
        raise ModelError(f"wheeled_mm_mjcf: wheels ({2 * wheel_mass} kg) heavier than the base ({M} kg)")
    cc = (M * c - wheel_mass * (pw["left"] + pw["right"])) / mc
    Ic = Ib + M * _shift(c) - sum(Iw + wheel_mass * _shift(p) for p in pw.values()) - mc * _shift(cc)
    ev = np.linalg.eigvalsh(0.5 * (Ic + Ic.T))
    if ev.min() <= 0 or ev[0] + ev[1] < ev[2]:  # a physical inertia (MuJoCo checks A + B ≥ C)
        raise ModelError(f"wheeled_mm_mjcf: wheels of {wheel_mass!r} kg leave the chassis an "
                         f"unphysical inertia (principal moments {ev}); use lighter wheels")
    inert = base.find("inertial")
    inert.set("pos", _f(cc))
    inert.set("mass", _f(mc))
    inert.set("fullinertia", _f([Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[0, 2], Ic[1, 2]]))
    sol = f"{contact_timeconst:.17g} 1"
    for k, x in enumerate(caster_x):
        z = -(r - caster_radius) + (rear_caster_gap if x < ax[0] else 0.0)
        base.insert(2 + k, ET.Element("geom", name=f"caster{k}", type="sphere",
                                      size=_f(caster_radius), pos=_f([x, ax[1], z]), condim="1",
                                      priority="1", friction="0 0 0", solref=sol))
    for name, p in pw.items():
        wb = ET.SubElement(base, "body", name=f"wheel_{name}", pos=_f(p))
        ET.SubElement(wb, "inertial", pos="0 0 0", mass=_f(wheel_mass), diaginertia=_f(np.diag(Iw)))
        ET.SubElement(wb, "joint", name=f"wheel_{name}", type="hinge", axis="0 1 0")
        ET.SubElement(wb, "geom", name=f"wheel_{name}", type="sphere", size=_f(r), condim="3",
                      friction=f"{friction:.17g} 0 0", solref=sol)
    world = root.find("worldbody")
    world.insert(0, ET.Element("geom", name="floor", type="plane", size="0 0 1",
                               friction=f"{friction:.17g} 0 0", solref=sol))
    return ET.tostring(root, encoding="unicode") + "\n"


@dataclass
class WheeledMaps:
    """Indices into MuJoCo's ``qpos`` / ``qvel`` for the wheeled robot: the chassis free joint
    (``free_q`` 7, ``free_v`` 6), the wheels (``wheel_v`` = (left, right) dofs) and the arm
    joints in dqdyn's order (``arm_q``, ``arm_v``); ``base_body`` the chassis body id; ``r``,
    ``w`` wheel radius and track width; ``axle`` the axle midpoint (x, y) in the chassis frame."""

    free_q: np.ndarray
    free_v: np.ndarray
    wheel_v: np.ndarray
    arm_q: np.ndarray
    arm_v: np.ndarray
    base_body: int
    r: float
    w: float
    axle: np.ndarray


def wheeled_mm_with_mujoco(arm_dof: int = 5, **kw):
    """``(model, constraints, q0, mjmodel, maps)``: dqdyn's 8-DoF nonholonomic mobile
    manipulator (`dqdyn.constraints.mobile_manipulator`) and its wheeled MuJoCo twin
    (`wheeled_mm_mjcf`, keyword arguments passed on); ``maps`` a `WheeledMaps`."""
    import mujoco

    from dqdyn.constraints.models import mobile_manipulator

    model, cons, q0 = mobile_manipulator(arm_dof=arm_dof)
    con = cons[0]
    mj = mujoco.MjModel.from_xml_string(wheeled_mm_mjcf(model, con, **kw))

    def jid(n):
        j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, n)
        if j < 0:
            raise ModelError(f"MuJoCo model has no joint named {n!r}")
        return j

    jf = jid("base_free")
    arm = [model.joint_names_all[k] for k in range(1, model.nbodies + 1)
           if model.joint_names_all[k] != con.joint]
    maps = WheeledMaps(
        free_q=np.arange(mj.jnt_qposadr[jf], mj.jnt_qposadr[jf] + 7),
        free_v=np.arange(mj.jnt_dofadr[jf], mj.jnt_dofadr[jf] + 6),
        wheel_v=np.array([mj.jnt_dofadr[jid("wheel_left")], mj.jnt_dofadr[jid("wheel_right")]]),
        arm_q=np.array([mj.jnt_qposadr[jid(n)] for n in arm]),
        arm_v=np.array([mj.jnt_dofadr[jid(n)] for n in arm]),
        base_body=mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, model.body_names[model.joint_index(con.joint)]),
        r=float(con.wheel_radius), w=float(con.track_width),
        axle=np.array(con.axle_offset[:2], dtype=float))
    return model, cons, q0, mj, maps


__all__ = ["jaco6", "arm7", "serial50", "holonomic_mm", "tree38", "with_mujoco", "pioneer",
           "PIONEER_WHEEL_RADIUS", "PIONEER_TRACK", "wheeled_mm_mjcf", "WheeledMaps",
           "wheeled_mm_with_mujoco"]
