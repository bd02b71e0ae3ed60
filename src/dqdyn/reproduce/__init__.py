"""The papers' experiments reproduced against MuJoCo (``dqdyn reproduce``); see
`dqdyn.reproduce.cases`."""

from dqdyn.reproduce.cases import CaseResult
from dqdyn.reproduce.mujoco_bridge import (
    mj_inverse_dynamics,
    mjcf_from_model,
    mujoco_from_model,
    mujoco_from_urdf,
    state_maps,
)
from dqdyn.reproduce.runner import CASES, available_cases, reproduce

__all__ = ["reproduce", "available_cases", "CASES", "CaseResult", "mjcf_from_model",
           "mujoco_from_model", "mujoco_from_urdf", "state_maps", "mj_inverse_dynamics"]
