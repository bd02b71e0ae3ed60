"""DH tables: end-effector and link frames equal the product of independently computed DH
matrices, for standard and modified conventions, revolute and prismatic joints."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose
from dqdyn.errors import ModelError
from dqdyn.multibody.joints import PRISMATIC, REVOLUTE
from dqdyn.parsers import dh_matrix, serial_from_dh

PI2 = np.pi / 2

# Puma 560 (Corke, robotics toolbox): standard rows (θ, d, a, α)
PUMA_STD = [[0, 0, 0, PI2], [0, 0, 0.4318, 0], [0, 0.15005, 0.0203, -PI2],
            [0, 0.4318, 0, PI2], [0, 0, 0, -PI2], [0, 0, 0, 0]]
# Puma 560, Craig's modified rows (θ_i, d_i, a_{i-1}, α_{i-1})
PUMA_MOD = [[0, 0, 0, 0], [0, 0, 0, -PI2], [0, 0.15005, 0.4318, 0],
            [0, 0.4318, 0.0203, -PI2], [0, 0, 0, PI2], [0, 0, 0, -PI2]]
# UR5, standard
UR5_STD = [[0, 0.089159, 0, PI2], [0, 0, -0.425, 0], [0, 0, -0.39225, 0],
           [0, 0.10915, 0, PI2], [0, 0.09465, 0, -PI2], [0, 0.0823, 0, 0]]
# Stanford arm (RRPRRR), standard; the prismatic row's d is its offset
STANFORD_STD = [[0, 0.412, 0, -PI2], [0, 0.154, 0, PI2], [-PI2, 0.2, 0.0203, 0],
                [0, 0, 0, -PI2], [0, 0, 0, PI2], [0, 0.263, 0, 0]]


# ---------------------------------------------------------------- independent reference (numpy)
def _rot(axis, t):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K


def _ref_dh(theta, d, a, alpha, convention):
    """DH matrix written out elementwise (not via dqdyn.parsers.dh)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    if convention == "standard":
        return np.array([[ct, -st * ca, st * sa, a * ct],
                         [st, ct * ca, -ct * sa, a * st],
                         [0, sa, ca, d],
                         [0, 0, 0, 1]])
    return np.array([[ct, -st, 0, a],
                     [st * ca, ct * ca, -sa, -sa * d],
                     [st * sa, ct * sa, ca, ca * d],
                     [0, 0, 0, 1]])


def _ref_chain(table, types, q, convention, upto=None):
    T = np.eye(4)
    out = [T]
    for i, (th, d, a, al) in enumerate(np.asarray(table, float)[:upto]):
        if types[i] == "R":
            th = th + q[i]
        else:
            d = d + q[i]
        T = T @ _ref_dh(th, d, a, al, convention)
        out.append(T)
    return out


def _model_fk(model, q):
    """Body poses of a model, composed from its placements / axes with 4×4 matrices."""
    X = [np.eye(4)]
    for i in range(1, model.nbodies + 1):
        jt = int(model.joint_type[i])
        qi = q[model.idx_q[i]] * model.mimic_scale[i] + model.mimic_offset[i]
        M = np.eye(4)
        if jt == REVOLUTE:
            M[:3, :3] = _rot(model.joint_axis[i], qi)
        elif jt == PRISMATIC:
            M[:3, 3] = qi * np.asarray(model.joint_axis[i])
        else:  # pragma: no cover
            raise AssertionError(jt)
        X.append(X[int(model.parent[i])] @ matrix_from_pose(model.joint_placement[i]) @ M)
    return X


def _frame(model, X, name):
    k = model.frame_index(name)
    return X[int(model.frame_body[k])] @ matrix_from_pose(model.frame_placement[k])


# ---------------------------------------------------------------------------------------- tests
def test_dh_matrix_matches_the_reference():
    rng = np.random.default_rng(0)
    for conv in ("standard", "modified"):
        for _ in range(5):
            row = rng.uniform(-2, 2, 4)
            np.testing.assert_allclose(dh_matrix(*row, convention=conv), _ref_dh(*row, conv),
                                       atol=1e-14)


@pytest.mark.parametrize(
    "table,types,conv",
    [
        (PUMA_STD, "RRRRRR", "standard"),
        (PUMA_MOD, "RRRRRR", "modified"),
        (UR5_STD, "RRRRRR", "standard"),
        (UR5_STD, "RRRRRR", "modified"),  # any table is a valid chain in either convention
        (STANFORD_STD, "RRPRRR", "standard"),
        (STANFORD_STD, "RRPRRR", "modified"),
        (PUMA_STD, "PRPRPR", "standard"),
    ],
)
def test_fk_equals_product_of_dh_matrices(table, types, conv):
    model = serial_from_dh(table, convention=conv, joint_types=types)
    n = len(table)
    assert model.nq == model.nv == n
    assert [model.joint_type_name(f"joint{i + 1}") for i in range(n)] == [
        "revolute" if t == "R" else "prismatic" for t in types]
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, n)
        ref = _ref_chain(table, types, q, conv)
        X = _model_fk(model, q)
        for i in range(n + 1):
            np.testing.assert_allclose(_frame(model, X, f"link{i}"), ref[i], atol=1e-12,
                                       err_msg=f"link{i}")
        np.testing.assert_allclose(_frame(model, X, "flange"), ref[-1], atol=1e-12)
        np.testing.assert_allclose(_frame(model, X, "tool"), ref[-1], atol=1e-12)
        # the library's own forward kinematics agrees
        np.testing.assert_allclose(matrix_from_pose(dqdyn.frame_pose(model, q, "flange")), ref[-1],
                                   atol=1e-12)


def test_random_tables_both_conventions():
    rng = np.random.default_rng(7)
    for conv in ("standard", "modified"):
        for _ in range(5):
            n = int(rng.integers(1, 8))
            table = np.c_[rng.uniform(-np.pi, np.pi, (n, 1)), rng.uniform(-0.5, 0.5, (n, 2)),
                          rng.uniform(-np.pi, np.pi, (n, 1))]
            types = "".join(rng.choice(["R", "P"], n))
            model = serial_from_dh(table, convention=conv, joint_types=list(types))
            q = rng.uniform(-1, 1, n)
            ref = _ref_chain(table, types, q, conv)
            np.testing.assert_allclose(_frame(model, _model_fk(model, q), "flange"), ref[-1],
                                       atol=1e-12)


@pytest.mark.parametrize("conv", ["standard", "modified"])
def test_joint_motion_is_about_the_body_z_axis(conv):
    model = serial_from_dh(STANFORD_STD, convention=conv, joint_types="RRPRRR")
    for i in range(1, model.nbodies + 1):
        np.testing.assert_allclose(model.joint_axis[i], [0, 0, 1])
    assert model.joint_names == tuple(f"joint{i}" for i in range(1, 7))
    assert model.body_names[1:] == tuple(f"body{i}" for i in range(1, 7))


@pytest.mark.parametrize("conv", ["standard", "modified"])
def test_com_and_inertia_are_given_in_dh_frame_i(conv):
    rng = np.random.default_rng(3)
    n = len(PUMA_STD)
    masses = rng.uniform(1, 5, n)
    coms = rng.uniform(-0.2, 0.2, (n, 3))
    inertias = []
    for _ in range(n):
        A = rng.normal(size=(3, 3))
        Q, _ = np.linalg.qr(A)
        inertias.append(Q @ np.diag(rng.uniform(0.5, 1.0, 3) * 0.01) @ Q.T)
    table = PUMA_STD if conv == "standard" else PUMA_MOD
    model = serial_from_dh(table, convention=conv, masses=masses, coms=coms, inertias=inertias)
    assert model.total_mass == pytest.approx(masses.sum())
    q = rng.uniform(-np.pi, np.pi, n)
    ref = _ref_chain(table, "R" * n, q, conv)
    X = _model_fk(model, q)
    for i in range(1, n + 1):
        Xb = X[i]
        # the CoM in the world, through the body frame and through DH frame i
        np.testing.assert_allclose(Xb[:3, :3] @ model.com[i] + Xb[:3, 3],
                                   ref[i][:3, :3] @ coms[i - 1] + ref[i][:3, 3], atol=1e-12)
        Rb, Rd = Xb[:3, :3], ref[i][:3, :3]
        np.testing.assert_allclose(Rb @ model.inertia[i] @ Rb.T, Rd @ inertias[i - 1] @ Rd.T,
                                   atol=1e-14)
    # principal moments / 6-vector inertias are accepted
    m2 = serial_from_dh(table, convention=conv, masses=masses, coms=coms,
                        inertias=[[0.01, 0.02, 0.025]] * n)
    m3 = serial_from_dh(table, convention=conv, masses=masses, coms=coms,
                        inertias=[[0.01, 0, 0, 0.02, 0, 0.025]] * n)
    np.testing.assert_allclose(m2.inertia, m3.inertia)


def test_base_tool_limits_and_gravity():
    base = np.eye(4)
    base[:3, 3] = [1.0, 2.0, 0.5]
    base[:3, :3] = _rot([0, 0, 1], 0.7)
    tool = np.eye(4)
    tool[2, 3] = 0.1
    model = serial_from_dh(UR5_STD, base=base, tool=tool, qlim=[[-1, 1]] * 6, gravity=(0, 0, -1),
                           name="ur5_dh")
    assert model.name == "ur5_dh"
    np.testing.assert_allclose(model.gravity, [0, 0, -1])
    np.testing.assert_allclose(model.q_lower, -1)
    np.testing.assert_allclose(model.q_upper, 1)
    q = np.linspace(-1, 1, 6)
    X = _model_fk(model, q)
    ref = _ref_chain(UR5_STD, "R" * 6, q, "standard")
    np.testing.assert_allclose(_frame(model, X, "link0"), base, atol=1e-14)
    np.testing.assert_allclose(_frame(model, X, "flange"), base @ ref[-1], atol=1e-12)
    np.testing.assert_allclose(_frame(model, X, "tool"), base @ ref[-1] @ tool, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(table=np.zeros((2, 3))), "shape"),
        (dict(table=np.zeros((0, 4))), "shape"),
        (dict(table=[[0, 0, np.nan, 0]]), "NaN"),
        (dict(table=PUMA_STD, convention="craig"), "convention"),
        (dict(table=PUMA_STD, joint_types="RRR"), "joint_types"),
        (dict(table=PUMA_STD, joint_types="RRRRRX"), "joint_types"),
        (dict(table=PUMA_STD, masses=[1.0] * 5), "masses needs 6"),
        (dict(table=PUMA_STD, coms=[[0, 0]] * 6), r"coms\[0\]"),
        (dict(table=PUMA_STD, masses=[-1.0] * 6), "mass"),
        (dict(table=PUMA_STD, base=np.eye(3)), "base"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ModelError, match=match):
        serial_from_dh(**kwargs)
