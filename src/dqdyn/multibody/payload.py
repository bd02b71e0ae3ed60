"""A rigid payload welded to a body: `attach_payload`.

>>> import numpy as np, dqdyn
>>> arm = dqdyn.load_example("jaco6")
>>> held = dqdyn.attach_payload(arm, arm.body_names[-1], 0.5, com=(0, 0, 0.05))
>>> round(held.total_mass - arm.total_mass, 12)
0.5

The payload (mass ``m``, CoM ``c`` and inertia ``Ī_c`` about the CoM, both in the frame of the
link it is welded to) is merged into the body that carries that link by the parallel-axis
theorem, as a fixed URDF link is (`ModelBuilder` merges fixed links the same way, with
`combine_inertia`): the result is the model of the loaded robot, Pinocchio's
``model.appendBodyToJoint(joint, inertia, placement)``.  On the world (or a link fixed to it)
the payload joins the model's `welded_inertia`, which no algorithm sees.
"""

from __future__ import annotations

import numbers
from dataclasses import replace

import numpy as np

from dqdyn._engine.checks import not_a_model, real_array
from dqdyn.algebra.inertia import rotate_inertia
from dqdyn.algebra.rotations import matrix_from_pose, pose_from_rt
from dqdyn.errors import ModelError, UnknownNameError
from dqdyn.multibody.builders import combine_inertia
from dqdyn.multibody.model import MF_COM, MF_INERTIA, MF_MASS, Model

__all__ = ["attach_payload"]

_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def _link(model: Model, body) -> tuple[int, np.ndarray]:
    """(body index, pose of the link frame in the body frame) of ``body``."""
    if isinstance(body, (numbers.Integral, np.integer)) and not isinstance(body, (bool, np.bool_)):
        i = int(body)
        if not 0 <= i <= model.nbodies:
            raise UnknownNameError(f"attach_payload: body index {i} is out of range 0 … "
                                   f"{model.nbodies} (0 is the world) of model {model.name!r}")
        return i, _IDENT8
    if not isinstance(body, str):
        raise UnknownNameError(f"attach_payload: body must be a link name (str) or a body index "
                               f"(int), got {type(body).__name__} {body!r:.60}")
    k = model._index["frame"].get(body)
    if k is None:
        raise UnknownNameError(f"attach_payload: body {body!r} is not a link or frame of model "
                               f"{model.name!r}; links are {list(model.body_names)} (and the "
                               f"frames {list(model.frame_names)})")
    return int(model.frame_body[k]), np.array(model.frame_placement[k])


def _payload_inertia(mass, com, inertia) -> tuple[float, np.ndarray, np.ndarray]:
    m = real_array(mass, "mass", (), "the payload's mass in kg, a finite number >= 0")
    if m < 0:
        raise ModelError(f"attach_payload: mass must be >= 0 (kg), got {float(m)!r}")
    c = real_array(com, "com", (3,), "the payload's centre of mass in the link frame, m")
    if inertia is None:
        return float(m), c, np.zeros((3, 3))
    I = real_array(inertia, "inertia", (3, 3), "the payload's inertia about its CoM, kg·m²")
    scale = max(1.0, float(np.abs(I).max()))
    if np.abs(I - I.T).max() > 1e-12 * scale:
        raise ModelError(f"attach_payload: inertia must be symmetric, got {I.tolist()}")
    ev = np.linalg.eigvalsh(I)  # ascending
    if ev[0] < -1e-12 * scale:
        raise ModelError(f"attach_payload: inertia must be positive semi-definite (the inertia "
                         f"of a rigid body about its CoM), got eigenvalues {ev.tolist()}")
    if ev[0] + ev[1] < ev[2] - 1e-9 * scale:
        raise ModelError(f"attach_payload: inertia violates the triangle inequality (principal "
                         f"moments {ev.tolist()}); no rigid body has it")
    return float(m), c, I


def attach_payload(model: Model, body, mass, com=(0.0, 0.0, 0.0), inertia=None, *,
                   name: str | None = None) -> Model:
    """A new `Model`: ``model`` with a rigid payload welded to ``body``.

    Parameters
    ----------
    model:
        The robot; it is not changed.
    body:
        Where the payload is welded: a link name (a body of the model, a link a fixed joint
        merged into one — ``"panda_hand"`` —, or any named frame) or a body index
        (``0 … nbodies``; 0 is the world).
    mass:
        The payload's mass (kg), ``>= 0``.
    com:
        Its centre of mass in the frame of ``body`` (m).
    inertia:
        Its 3×3 rotational inertia about its CoM, in the axes of ``body`` (kg·m²): symmetric,
        positive semi-definite, principal moments obeying the triangle inequality.  ``None``
        (default): a point mass.
    name:
        If given, a frame of that name is added at the payload's CoM (axes of ``body``), e.g. to
        ask for its pose or Jacobian.

    Returns
    -------
    Model
        The same bodies, joints, frames (plus ``name``), limits and armature, with the payload's
        mass, CoM and inertia merged into the body carrying ``body`` by the parallel-axis
        theorem (`combine_inertia`); the same as Pinocchio's
        ``appendBodyToJoint(joint, pinocchio.Inertia(mass, com, inertia), placement)`` with
        ``placement`` the link's frame.  On the world the payload joins `welded_inertia`.

    Raises
    ------
    ModelError
        ``model`` is not a `Model`; ``mass`` is negative; ``inertia`` is not symmetric,
        not positive semi-definite or breaks the triangle inequality; ``name`` is taken.
    ShapeError, NonFiniteError
        ``mass``, ``com`` or ``inertia`` has the wrong shape or is not finite.
    UnknownNameError
        ``body`` is neither a link / frame of the model nor a body index in range.
    """
    if not isinstance(model, Model):
        raise not_a_model(model)
    i, X = _link(model, body)
    m, c, I = _payload_inertia(mass, com, inertia)
    if name is not None:
        if not isinstance(name, str) or not name:
            raise ModelError(f"attach_payload: name must be a non-empty string (the payload "
                             f"frame's name) or None, got {name!r:.60}")
        if name in model._index["frame"]:
            raise ModelError(f"attach_payload: name {name!r} is already a frame of model "
                             f"{model.name!r}; choose another")
    # the payload in the axes and about the origin of the body frame
    T = matrix_from_pose(X)
    c_b = T[:3, :3] @ c + T[:3, 3]
    I_b = rotate_inertia(I, X[:4])
    mf, welded = model.mf.copy(), np.array(model.welded)
    if i > 0:
        mb, cb, Ib = combine_inertia(float(mf[i, MF_MASS]), mf[i, MF_COM:MF_COM + 3].copy(),
                                     mf[i, MF_INERTIA:MF_INERTIA + 9].reshape(3, 3).copy(),
                                     m, c_b, I_b)
        mf[i, MF_MASS], mf[i, MF_COM:MF_COM + 3] = mb, cb
        mf[i, MF_INERTIA:MF_INERTIA + 9] = np.ravel(Ib)
    else:
        wm, wc, wI = model.welded_inertia
        mb, cb, Ib = combine_inertia(wm, np.array(wc), np.array(wI), m, c_b, I_b)
        welded = np.concatenate([[mb], cb, np.ravel(Ib)])
    extra = {}
    if name is not None:
        extra = dict(frame_names=model.frame_names + (name,),
                     frame_body=np.append(np.array(model.frame_body), i),
                     frame_placement=np.vstack([model.frame_placement, pose_from_rt(X[:4], c_b)]))
    return replace(model, mi=model.mi.copy(), mf=mf, welded=welded, _index={}, **extra)
