"""Mobile-manipulator planning (dqdyn.constraints.planning; [Mladenova, §9.1]).  Oracles: the model's
own rolling constraint (DifferentialDriveConstraint.velocity_error), forward kinematics at the goal
times, central finite differences of the planned reference."""

import numpy as np
import pytest

import dqdyn
from dqdyn import errors
from dqdyn.algebra.rotations import translation_of
from dqdyn.constraints import mobile_manipulator
from dqdyn.constraints.planning import plan_mobile_manipulator, plan_platform


def test_platform_path_rolls_and_is_consistent():
    mm, cons, q0 = mobile_manipulator()
    pp = plan_platform(q0[:3], [2.0, 1.0, 0.5], 4.0, axle_offset=(-0.12, 0.0))
    t = np.linspace(0, 4, 201)
    q, v, a = pp(t)
    np.testing.assert_allclose(q[0], q0[:3], atol=1e-14)
    np.testing.assert_allclose(q[-1], [2.0, 1.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(v[[0, -1]], 0, atol=1e-14)
    Q = np.tile(q0, (t.size, 1))
    Q[:, :3] = q
    V = np.zeros((t.size, 8))
    V[:, :3] = v
    assert np.abs(cons[0].velocity_error(mm, Q, V)).max() < 1e-12
    h = 1e-5
    ti = t[1:-1]
    (qp, vp, _), (qm, vm, _) = pp(ti + h), pp(ti - h)
    np.testing.assert_allclose((qp - qm) / (2 * h), v[1:-1], atol=1e-8)
    np.testing.assert_allclose((vp - vm) / (2 * h), a[1:-1], atol=1e-7)
    with pytest.raises(errors.InfeasibleError, match="coincide"):
        plan_platform([0, 0, 0], [0, 0, 1.0], 1.0)


def test_mobile_manipulator_plan_reaches_goals():
    mm, cons, q0 = mobile_manipulator()
    goals = np.array([[1.0, 0.3, 0.8], [2.3, 1.2, 0.7]])
    plan = plan_mobile_manipulator(mm, q0, [2.0, 1.0, 0.5], goals, [2.0, 4.0])
    for tk, g in zip([2.0, 4.0], goals):
        q, _, _ = plan(tk)
        assert np.linalg.norm(translation_of(dqdyn.frame_pose(mm, q, "tool")) - g) < 1e-9
    t = np.linspace(0, 4, 101)
    q, v, a = plan(t)
    assert np.abs(cons[0].velocity_error(mm, q, v)).max() < 1e-12
    np.testing.assert_allclose(q[0], q0, atol=1e-14)
    # C² arm: one-sided accelerations agree at the interior goal
    e = 1e-7
    np.testing.assert_allclose(plan(2.0 - e)[2], plan(2.0 + e)[2], atol=1e-5)
    with pytest.raises(errors.ShapeError, match="tool_goals"):
        plan_mobile_manipulator(mm, q0, [2.0, 1.0, 0.5], goals[:1], [2.0, 4.0])
