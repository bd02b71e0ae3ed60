"""MuJoCo models of dqdyn models, and the map between the two state layouts.

Two routes, both giving MuJoCo with zero damping / armature / friction, no contacts and no joint
limits (so its dynamics is the rigid-body dynamics dqdyn models):

* `mujoco_from_urdf` — MuJoCo's own URDF compiler on the same URDF file dqdyn parses
  (the bundled URDFs carry ``<mujoco><compiler discardvisual="true" balanceinertia="false"
  fusestatic="false"/></mujoco>``): an oracle independent of dqdyn's parser.
* `mjcf_from_model` — MJCF written from a `Model` (for models built in code:
  the 50-DoF arm, the 38-DoF tree, the 7-DoF arm).  Revolute → ``hinge``, prismatic → ``slide``,
  cylindrical → ``hinge`` + ``slide`` on one axis (dqdyn's ``(θ, d)``), planar → ``slide x``, ``slide y``, ``hinge z``
  (dqdyn's ``(x, y, φ)`` layout with ``v = q̇``).
"""

from __future__ import annotations

import numpy as np

from dqdyn._optional import require
from dqdyn.algebra.rotations import translation_of
from dqdyn.errors import ModelError
from dqdyn.multibody.joints import CYLINDRICAL, PLANAR, PRISMATIC, REVOLUTE


def _f(x) -> str:
    return " ".join(f"{float(c):.17g}" for c in np.ravel(x))


def mjcf_from_model(model, timestep: float = 1e-3, integrator: str = "RK4") -> str:
    """MJCF text of ``model`` (module doc).  Joint names: dqdyn's, with ``__x``, ``__y``,
    ``__phi`` (planar) and ``__hinge``, ``__slide`` (cylindrical) suffixes."""
    if model.mimic_joints:
        raise ModelError(f"model {model.name!r}: mimic joints have no MuJoCo counterpart here")
    children = {i: [] for i in range(model.nbodies + 1)}
    for i in range(1, model.nbodies + 1):
        children[int(model.parent[i])].append(i)

    def body(i, ind):
        pad = "  " * ind
        X = model.joint_placement[i]
        jt = int(model.joint_type[i])
        name = model.joint_names_all[i]
        ax = _f(model.joint_axis[i])
        s = [f'{pad}<body name="{model.body_names[i]}" pos="{_f(translation_of(X))}" quat="{_f(X[:4])}">']
        I = model.inertia[i]
        fi = _f([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])
        s.append(f'{pad}  <inertial pos="{_f(model.com[i])}" mass="{float(model.mass[i]):.17g}" fullinertia="{fi}"/>')
        if jt == REVOLUTE:
            s.append(f'{pad}  <joint name="{name}" type="hinge" axis="{ax}"/>')
        elif jt == PRISMATIC:
            s.append(f'{pad}  <joint name="{name}" type="slide" axis="{ax}"/>')
        elif jt == CYLINDRICAL:
            s.append(f'{pad}  <joint name="{name}__hinge" type="hinge" axis="{ax}"/>')
            s.append(f'{pad}  <joint name="{name}__slide" type="slide" axis="{ax}"/>')
        elif jt == PLANAR:
            s.append(f'{pad}  <joint name="{name}__x" type="slide" axis="1 0 0"/>')
            s.append(f'{pad}  <joint name="{name}__y" type="slide" axis="0 1 0"/>')
            s.append(f'{pad}  <joint name="{name}__phi" type="hinge" axis="0 0 1"/>')
        else:
            raise ModelError(f"joint {name!r} of type {model.joint_type_name(i)!r}: no MJCF "
                             f"export (supported: revolute, prismatic, cylindrical, planar)")
        for c in children[i]:
            s.extend(body(c, ind + 1))
        s.append(f"{pad}</body>")
        return s

    lines = [f'<mujoco model="{model.name}">',
             '  <compiler angle="radian" inertiafromgeom="false" balanceinertia="false" autolimits="true"/>',
             f'  <option timestep="{timestep:.17g}" integrator="{integrator}" gravity="{_f(model.gravity)}">',
             '    <flag contact="disable"/>',
             "  </option>",
             '  <default><joint damping="0" armature="0" frictionloss="0" limited="false"/></default>',
             "  <worldbody>"]
    for c in children[0]:
        lines.extend(body(c, 2))
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"


def _clean(mj, timestep, integrator, gravity):
    mujoco = require("sim", "mujoco")

    mj.opt.timestep = timestep
    mj.opt.integrator = {"Euler": mujoco.mjtIntegrator.mjINT_EULER,
                         "RK4": mujoco.mjtIntegrator.mjINT_RK4,
                         "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT}[integrator]
    if gravity is not None:
        mj.opt.gravity[:] = gravity
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    mj.dof_damping[:] = 0
    mj.dof_armature[:] = 0
    mj.dof_frictionloss[:] = 0
    mj.jnt_limited[:] = 0
    return mj


def mujoco_from_model(model, timestep: float = 1e-3, integrator: str = "RK4"):
    """``mujoco.MjModel`` compiled from `mjcf_from_model`."""
    mujoco = require("sim", "mujoco")

    mj = mujoco.MjModel.from_xml_string(mjcf_from_model(model, timestep, integrator))
    return _clean(mj, timestep, integrator, None)


def mujoco_from_urdf(path, timestep: float = 1e-3, integrator: str = "RK4", gravity=(0, 0, -9.81)):
    """``mujoco.MjModel`` from MuJoCo's own URDF compiler, cleaned (module doc)."""
    mujoco = require("sim", "mujoco")

    mj = mujoco.MjModel.from_xml_path(str(path))
    return _clean(mj, timestep, integrator, gravity)


def state_maps(model, mj):
    """``(iq, iv)``: MuJoCo ``qpos`` / ``qvel`` indices of dqdyn's ``q`` / ``v`` entries (only
    models whose joints all map to MuJoCo scalar joints: revolute, prismatic, cylindrical,
    planar).  ``q_dqdyn = qpos[iq]``, ``v_dqdyn = qvel[iv]``."""
    mujoco = require("sim", "mujoco")

    iq = np.full(model.nq, -1)
    iv = np.full(model.nv, -1)
    for i in range(1, model.nbodies + 1):
        if model.joint_nv[i] == 0:
            continue
        name = model.joint_names_all[i]
        jt = int(model.joint_type[i])
        parts = {PLANAR: ["__x", "__y", "__phi"], CYLINDRICAL: ["__hinge", "__slide"]}.get(jt, [""])
        qs, vs = model.q_slice(name), model.v_slice(name)
        if len(parts) != qs.stop - qs.start:
            raise ModelError(f"joint {name!r}: no scalar MuJoCo counterpart")
        for k, suf in enumerate(parts):
            j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, name + suf)
            if j < 0:
                raise ModelError(f"MuJoCo model has no joint named {name + suf!r}")
            iq[qs.start + k] = mj.jnt_qposadr[j]
            iv[vs.start + k] = mj.jnt_dofadr[j]
    if np.any(iq < 0) or np.any(iv < 0) or mj.nv != model.nv:
        raise ModelError(f"MuJoCo model ({mj.nv} dofs) does not match {model.name!r} ({model.nv})")
    return iq, iv


def mj_inverse_dynamics(mj, iq, iv, q, v, a):
    """MuJoCo's own inverse dynamics (``mj_inverse``) at dqdyn-layout ``(q, v, a)``."""
    mujoco = require("sim", "mujoco")

    d = mujoco.MjData(mj)
    d.qpos[iq], d.qvel[iv], d.qacc[iv] = q, v, a
    mujoco.mj_inverse(mj, d)
    return d.qfrc_inverse[iv].copy()


__all__ = ["mjcf_from_model", "mujoco_from_model", "mujoco_from_urdf", "state_maps",
           "mj_inverse_dynamics"]
