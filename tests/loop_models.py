"""Closed-loop test models (and their Pinocchio counterpart) shared by tests/constraints and
benchmarks/bench_constrained.py."""

from __future__ import annotations

import numpy as np

from dqdyn.multibody.builders import ModelBuilder


def null_velocity(model, cons, q, rng):
    """A random velocity in the null space of the stacked constraint rows ``A(q)``."""
    A = np.concatenate([c.A(model, q) for c in cons])
    U, s, Vt = np.linalg.svd(A)
    r = int(np.sum(s > 1e-10 * s[0]))
    return Vt[r:].T @ rng.normal(size=model.nv - r)


def spatial_7r(seed=3):
    """A 7R chain with tilted joints and a ``tip`` frame, and a reference configuration ``q_ref``."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"spatial7r_{seed}")
    axes = [(0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0)]
    parent = "world"
    for k, ax in enumerate(axes):
        b.add_body(f"l{k}", parent, "revolute", joint_name=f"j{k}", axis=ax,
                   xyz=tuple(rng.uniform(-0.2, 0.3, 3)), rpy=tuple(rng.uniform(-1, 1, 3)),
                   mass=1.0 + 0.1 * k, com=tuple(rng.uniform(-0.1, 0.1, 3)),
                   inertia=np.diag([0.02, 0.03, 0.025]))
        parent = f"l{k}"
    b.add_frame("tip", parent, xyz=(0.1, 0.05, 0.0))
    m = b.build()
    return m, rng.uniform(-1, 1, 7)


def pin_rigid_constraints(model, specs):
    """Pinocchio model, data and initialised ``RigidConstraintModel`` / ``Data`` vectors of the
    loop constraints ``specs`` = ``[(type, (body1, placement1), (body2 or 0, placement2)), …]``
    (placements as vec8 in the bodies' frames, ``pin.ReferenceFrame.LOCAL``)."""
    from pinconv import _se3, pin, pin_from_model

    pm, ids = pin_from_model(model)
    pd = pm.createData()
    R, D = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for ct, (b1, p1), (b2, p2) in specs:
        c = pin.RigidConstraintModel(ct, pm, ids[b1], _se3(p1), ids[b2] if b2 else 0, _se3(p2),
                                     pin.ReferenceFrame.LOCAL)
        R.append(c)
        D.append(c.createData())
    pin.initConstraintDynamics(pm, pd, R, D)
    return pm, pd, R, D
