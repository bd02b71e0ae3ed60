"""The papers' experiments reproduced against MuJoCo (``dqdyn reproduce``); see
`dqdyn.reproduce.cases`."""

from .cases import CaseResult
from .mujoco_bridge import (
    mj_inverse_dynamics,
    mjcf_from_model,
    mujoco_from_model,
    mujoco_from_urdf,
    state_maps,
)
from .runner import CASES, available_cases, reproduce

__all__ = ["reproduce", "available_cases", "CASES", "CaseResult", "mjcf_from_model",
           "mujoco_from_model", "mujoco_from_urdf", "state_maps", "mj_inverse_dynamics"]
