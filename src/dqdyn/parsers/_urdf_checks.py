"""Load-time checks of `dqdyn.load_urdf` on the built model: the warning for massless
links that make the joint-space inertia matrix singular, in time linear in the model size."""

from __future__ import annotations

import warnings

import numpy as np

from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import Model


def warn_massless(model: Model, lump: dict, has_inertial: dict, label: str) -> None:
    """Warn about links without <inertial> heading a massless subtree of a joint that owns v."""
    n = model.nbodies
    suspects: list[tuple[str, str]] = []  # (link without <inertial>, joint moving it)
    sub_mass = np.array(model.mass, dtype=float)
    sub_rot = np.array([np.abs(model.inertia[i]).sum() for i in range(n + 1)])
    for i in range(n, 0, -1):
        p = int(model.parent[i])
        sub_mass[p] += sub_mass[i]
        sub_rot[p] += sub_rot[i]
    for i in range(1, n + 1):
        if model.joint_nv[i] == 0:
            continue
        if sub_mass[i] > 0 or sub_rot[i] > 0:
            # the subtree has inertia, the moving body itself none: M(q) is singular when the
            # joints below take all of it off this joint's motion (e.g. a child revolute joint
            # about the same axis); checked below on M, at load time rather than at first aba
            if model.mass[i] == 0 and np.abs(model.inertia[i]).sum() == 0:
                body = model.body_names[i]
                bare = [ln for ln in lump.get(body, [body]) if not has_inertial.get(ln, True)]
                if bare:
                    suspects.append((bare[0], model.joint_names_all[i]))
            continue
        body = model.body_names[i]
        for link in lump.get(body, [body]):
            if not has_inertial.get(link, True):
                warnings.warn(
                    f"URDF {label}: link {link!r} has no <inertial>, and the subtree moved by "
                    f"joint {model.joint_names_all[i]!r} is massless: the joint-space inertia "
                    "matrix is singular",
                    UserWarning,
                    stacklevel=3,
                )
    if suspects and _mass_matrix_singular(model, [model.joint_index(j) for _, j in suspects]):
        for link, joint in suspects:
            warnings.warn(
                f"URDF {label}: link {link!r} has no <inertial> (massless), and the joint-space "
                f"inertia matrix is singular (the bodies below joint {joint!r} carry no inertia "
                "along its motion): forward dynamics (aba) will raise SingularError; give the "
                "link an <inertial> if it has mass",
                UserWarning,
                stacklevel=3,
            )


def _mass_matrix_singular(model: Model, suspects=()) -> bool:
    """True when ``M(q)`` is singular at the neutral and at a random configuration (only called
    for models with a massless moving link, so loading other models compiles nothing).

    Up to ``_EIG_NV_MAX`` DoF from M's eigenvalues; a larger model (M's eigenvalues cost O(nv³)
    time and O(nv²) memory) from the blocks of M of the joints around each massless body in
    ``suspects`` (its joint, those of its massless descendants and of the first massive bodies
    below them; every other joint locked at q): M is singular when such a block is."""
    from dqdyn.dynamics.lagrange import mass_matrix
    from dqdyn.kinematics.forward import neutral, random_configuration

    for q in (neutral(model), random_configuration(model, seed=0)):
        if model.nv > _EIG_NV_MAX:
            if not any(_window_singular(model, s, q) for s in suspects):
                return False
            continue
        ev = np.linalg.eigvalsh(mass_matrix(model, q))
        if ev.size == 0 or ev.min() > 1e-12 * max(1.0, ev.max()):
            return False
    return True


_EIG_NV_MAX = 300  # models with more DoF: M's blocks around the massless bodies


def _window_singular(model: Model, s: int, q) -> bool:
    """Is the block of ``M(q)`` of the joints around massless body ``s`` singular?  It is the
    mass matrix of a small model: ``s``'s joint on a fixed base (its parent body locked), the
    massless bodies below it, and the first massive bodies below those, each carrying its whole
    subtree lumped at ``q`` (the joints inside locked)."""
    from dqdyn.algebra.rotations import matrix_from_pose
    from dqdyn.dynamics.lagrange import mass_matrix
    from dqdyn.kinematics.forward import forward_kinematics
    from dqdyn.multibody.joints import JOINT_TYPE_NAMES

    if model.mimic_joints:
        return False  # (not checked: a mimic coupling may reach outside the block)
    par = model.parent
    n = model.nbodies
    kids: dict[int, list[int]] = {}
    for i in range(s + 1, n + 1):
        kids.setdefault(int(par[i]), []).append(i)
    massive = lambda i: model.mass[i] > 0 or bool(np.any(model.inertia[i]))  # noqa: E731
    window, stack = [], [s]
    while stack:
        i = stack.pop()
        window.append(i)
        if i == s or not massive(i):
            stack += kids.get(i, [])
    window.sort()
    X = matrix_from_pose(forward_kinematics(model, q))  # (world poses of the bodies)
    inside = np.zeros(n + 1, dtype=bool)
    b = ModelBuilder("block", inertia_check="off")
    name = {}
    qw = []
    for i in window:
        m, c, I = float(model.mass[i]), np.array(model.com[i]), np.array(model.inertia[i])
        if i != s and massive(i):  # lump the subtree of i into it, at q (parallel axis)
            inside[:] = False
            inside[i] = True
            for k in range(i + 1, n + 1):
                inside[k] = inside[par[k]]
            sub = np.flatnonzero(inside)  # (i itself first: T = 1)
            T = np.linalg.inv(X[i]) @ X[sub]
            R = T[:, :3, :3]
            mk = np.asarray(model.mass)[sub]
            ck = T[:, :3, 3] + np.einsum("kab,kb->ka", R, np.asarray(model.com)[sub])
            Ik = R @ np.asarray(model.inertia)[sub] @ R.transpose(0, 2, 1)
            m = float(mk.sum())
            c = (mk[:, None] * ck).sum(0) / m if m > 0 else np.zeros(3)
            d = ck - c
            I = (Ik + mk[:, None, None] * ((d * d).sum(1)[:, None, None] * np.eye(3)
                                           - d[:, :, None] * d[:, None, :])).sum(0)
            I = 0.5 * (I + I.T)
        name[i] = b.add_body(f"b{i}", "world" if i == s else name[int(par[i])],
                             JOINT_TYPE_NAMES[int(model.joint_type[i])], joint_name=f"j{i}",
                             axis=np.array(model.joint_axis[i]), pitch=float(model.joint_pitch[i]),
                             placement=np.array(model.joint_placement[i]), mass=m, com=c, inertia=I)
        qw.append(q[int(model.idx_q[i]):int(model.idx_q[i] + model.joint_nq[i])])
    ev = np.linalg.eigvalsh(mass_matrix(b.build(), np.concatenate(qw)))
    return ev.size > 0 and ev.min() <= 1e-12 * max(1.0, ev.max())
