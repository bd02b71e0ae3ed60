"""Shared Pinocchio set-up of the contact tests: robots mirrored from their URDF by Pinocchio's own
parser, random states, and rigid constraint models in Pinocchio's form."""

from __future__ import annotations

import functools

import numpy as np

import dqdyn
from dqdyn.interop.pinocchio import a_from_pin, a_to_pin  # noqa: F401

from pinconv import ROBOTS, erd, pin, pin_from_urdf, q_to_pin, v_transform  # noqa: F401

FEET = {
    "solo12": ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"],
    "anymal": ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"],
    "talos": ["left_sole_link", "right_sole_link"],
}
HANDS = {"talos": ["gripper_left_base_link", "gripper_right_base_link"]}


@functools.cache
def robot(name: str):
    """``(dqdyn model, pinocchio model)`` of one of example-robot-data's robots."""
    path, root = ROBOTS[name]
    return dqdyn.load_example(name), pin_from_urdf(erd(path), root)


def state(model, k: int):
    rng = np.random.default_rng(100 + k)
    q = dqdyn.random_configuration(model, seed=k)
    return q, rng.standard_normal(model.nv), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def pin_state(model, pm, q, v, a=None):
    T = v_transform(model, pm, q)
    out = [q_to_pin(model, pm, q), T @ v, T]
    if a is not None:
        out.append(a_to_pin(model, pm, q, v, a))
    return out


def pin_contacts(pm, frames, kind: str):
    """Pinocchio's rigid constraint models (LOCAL) of contacts on ``frames`` and their datas."""
    ctype = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for f in frames:
        fr = pm.frames[pm.getFrameId(f)]
        cm = pin.RigidConstraintModel(ctype, pm, fr.parentJoint, fr.placement, pin.LOCAL)
        models.append(cm)
        datas.append(cm.createData())
    return models, datas


def rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / (1.0 + np.abs(b).max()))
