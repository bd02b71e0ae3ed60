"""Joint armature (rotor inertia, ``Model.armature``): ``M(q) + diag(armature)`` in every
algorithm, against Pinocchio with ``model.armature`` set (rnea, aba, crba, computeMinverse,
computeRNEADerivatives, computeABADerivatives), MuJoCo's joint ``armature`` (mj_inverse,
mj_fullM), finite differences and physical identities; single states and batches large enough
for the parallel kernels; a zero armature gives the same bits as a model without one."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK
from dqdyn.dynamics.derivatives import aba_derivatives, rnea_derivatives
from dqdyn.errors import ModelError, ShapeError, UnknownNameError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.joints import PLANAR

from pinconv import ROBOTS, erd, pin, q_to_pin, to_pinocchio, v_transform

NO_PLANAR = ("revolute", "prismatic", "helical", "cylindrical", "spherical", "free")


def _sym(X):
    return np.triu(X) + np.triu(X, 1).T


def _armature(m, seed, lo=0.05, hi=3.0):
    """Random per-DoF armature; a planar joint's x and y equal (Pinocchio's planar velocity is in
    the body axes: only then the same diagonal)."""
    a = np.random.default_rng(seed).uniform(lo, hi, m.nv)
    for i in range(1, m.nbodies + 1):
        if m.joint_type[i] == PLANAR:
            a[m.idx_v[i] + 1] = a[m.idx_v[i]]
    return a


def _state(m, seed):
    rng = np.random.default_rng(seed)
    return dqdyn.random_configuration(m, seed=rng), rng.normal(size=m.nv), rng.normal(size=m.nv)


# =============================================================================== the model
def _chain():
    b = ModelBuilder("arm")
    b.add_body("l1", joint="revolute", joint_name="j1", mass=1.0, com=(0.1, 0, 0),
               inertia=[0.02, 0.03, 0.04], armature=0.7)
    b.add_body("l2", "l1", joint="spherical", joint_name="j2", xyz=(0.3, 0, 0), mass=2.0,
               inertia=[0.05, 0.04, 0.03], armature=[0.1, 0.2, 0.3])
    b.add_body("l3", "l2", joint="revolute", joint_name="j3", xyz=(0.2, 0, 0), mass=0.5,
               inertia=[0.01, 0.01, 0.01])
    return b


def test_builder_scalar_and_per_dof_armature():
    m = _chain().build()
    np.testing.assert_array_equal(m.armature, [0.7, 0.1, 0.2, 0.3, 0.0])
    assert m.armature.shape == (m.nv,) and not m.armature.flags.writeable


def test_with_armature_array_and_dict_return_new_models():
    m = _chain().build()
    m2 = m.with_armature({"j3": 1.5, "j2": [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(m2.armature, [0.7, 1.0, 2.0, 3.0, 1.5])
    np.testing.assert_array_equal(m.armature, [0.7, 0.1, 0.2, 0.3, 0.0])  # unchanged
    m3 = m.with_armature(np.arange(5.0))
    np.testing.assert_array_equal(m3.armature, np.arange(5.0))
    back = pickle.loads(pickle.dumps(m3))
    np.testing.assert_array_equal(back.armature, m3.armature)
    q, v, a = _state(m3, 0)
    np.testing.assert_array_equal(dqdyn.rnea(back, q, v, a), dqdyn.rnea(m3, q, v, a))


@pytest.mark.parametrize("bad", [-0.1, np.nan, np.inf, [0.1, 0.2]])
def test_bad_armature_raises_model_error_naming_the_joint(bad):
    m = _chain().build()
    with pytest.raises(ModelError, match="j1"):
        m.with_armature({"j1": bad})
    b = ModelBuilder()
    with pytest.raises(ModelError, match="jb"):
        b.add_body("b", joint="revolute", joint_name="jb", mass=1, inertia=[1, 1, 1], armature=bad)


def test_bad_armature_arrays_and_names():
    m = _chain().build()
    with pytest.raises(ShapeError, match="armature"):
        m.with_armature(np.ones(4))
    with pytest.raises(ModelError, match="j2"):
        m.with_armature(np.array([0.0, 0.0, -1.0, 0.0, 0.0]))
    with pytest.raises(ModelError, match="j2"):
        m.with_armature(np.array([0.0, np.nan, 0.0, 0.0, 0.0]))
    with pytest.raises(UnknownNameError):
        m.with_armature({"nope": 1.0})
    b = ModelBuilder()
    b.add_body("b", joint="revolute", mass=1, inertia=[1, 1, 1])
    with pytest.raises(ModelError, match="fixed"):
        b.add_body("c", "b", joint="fixed", joint_name="weld", armature=0.3)


def test_add_model_carries_armature():
    sub = _chain().build().with_armature({"j3": 0.9})
    b = ModelBuilder()
    b.add_body("base", joint="prismatic", mass=1.0, inertia=[1, 1, 1], armature=0.4)
    b.add_model(sub, "base", prefix="s_")
    np.testing.assert_array_equal(b.build().armature, np.r_[0.4, sub.armature])


def test_mimic_joint_armature_folds_into_its_master_times_scale_squared():
    """A rotor on a mimic joint turns at ``s · q̇_master``: kinetic energy ``½ J s² q̇_m²``."""
    def build(arm):
        b = ModelBuilder()
        b.add_body("a", joint="revolute", joint_name="ja", mass=1, com=(0.1, 0, 0),
                   inertia=[0.1, 0.2, 0.3])
        b.add_body("b", "a", joint="revolute", joint_name="jb", xyz=(0.3, 0, 0), mass=1,
                   inertia=[0.1, 0.2, 0.3], axis=(0, 1, 0), mimic=("ja", -1.7, 0.2), armature=arm)
        return b.build()

    m0, m1 = build(0.0), build(0.5)
    np.testing.assert_allclose(m1.armature, [0.5 * 1.7**2])
    with pytest.raises(ModelError, match="mimic"):
        m1.with_armature({"jb": 1.0})
    q, v, a = _state(m1, 3)
    np.testing.assert_allclose(dqdyn.mass_matrix(m1, q) - dqdyn.mass_matrix(m0, q),
                               [[0.5 * 1.7**2]], rtol=1e-12)
    np.testing.assert_allclose(dqdyn.rnea(m1, q, v, a) - dqdyn.rnea(m0, q, v, a),
                               0.5 * 1.7**2 * a, rtol=1e-12, atol=1e-12)
    tau = dqdyn.rnea(m1, q, v, a)
    np.testing.assert_allclose(dqdyn.aba(m1, q, v, tau), a, atol=1e-10)


# =============================================================================== Pinocchio
def _ur5(arm_seed=0):
    path = erd(ROBOTS["ur5"][0])
    m = dqdyn.load_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    arm = _armature(m, arm_seed)
    pm.armature = np.array(arm)  # Pinocchio's own parser: same joints, same order of v
    assert [pm.names[j] for j in range(1, pm.njoints)] == list(m.joint_names)
    return m.with_armature(arm), pm


def _tree(seed, types=NO_PLANAR):
    m = dqdyn.random_tree(9, joint_types=types, seed=seed)
    m = m.with_armature(_armature(m, seed + 100))
    pm = to_pinocchio(m)
    np.testing.assert_array_equal(np.sort(pm.armature), np.sort(m.armature))
    return m, pm


def _cases():
    yield "ur5", _ur5
    for s in (0, 1):
        yield f"tree{s}", (lambda s=s: _tree(s))
    yield "tree_planar", (lambda: _tree(5, types=("revolute", "planar", "spherical", "prismatic")))


@pytest.mark.parametrize("name,make", list(_cases()), ids=[c[0] for c in _cases()])
def test_dynamics_match_pinocchio_with_armature(name, make):
    m, pm = make()
    pd = pm.createData()
    for k in range(3):
        q, v, a = _state(m, 10 + k)
        qp = q_to_pin(m, pm, q)
        T = v_transform(m, pm, q)
        scale = 1 + np.abs(m.armature).max()
        M = dqdyn.mass_matrix(m, q)
        Mp = T.T @ _sym(pin.crba(pm, pd, qp)) @ T
        np.testing.assert_allclose(M, Mp, atol=1e-11 * scale)
        # the armature is visible: M differs from the rigid bodies' alone by diag(armature)
        np.testing.assert_allclose(M - dqdyn.mass_matrix(m.with_armature(np.zeros(m.nv)), q),
                                   np.diag(m.armature), atol=1e-11 * scale)
        np.testing.assert_allclose(dqdyn.mass_matrix(m, q, method="newton_euler"), Mp,
                                   atol=1e-10 * scale)
        Mip = pin.computeMinverse(pm, pd, qp)
        np.testing.assert_allclose(dqdyn.mass_matrix_inverse(m, q), T.T @ _sym(Mip) @ T,
                                   atol=1e-10 * (1 + np.abs(Mip).max()))
        if np.any(m.joint_type[1:] == PLANAR):
            # (Pinocchio's planar acceleration differs by Ṫ v: compare through M and h)
            h = dqdyn.nonlinear_effects(m, q, v)
            np.testing.assert_allclose(dqdyn.rnea(m, q, v, a), Mp @ a + h, atol=1e-10 * scale)
            continue
        taup = pin.rnea(pm, pd, qp, T @ v, T @ a)
        tau = dqdyn.rnea(m, q, v, a)
        np.testing.assert_allclose(tau, T.T @ taup, atol=1e-10 * (1 + np.abs(taup).max()))
        np.testing.assert_allclose(dqdyn.aba(m, q, v, tau), a, atol=1e-9)
        qddp = pin.aba(pm, pd, qp, T @ v, T @ tau)
        np.testing.assert_allclose(dqdyn.aba(m, q, v, tau), T.T @ qddp, atol=1e-9)
        # gravity and nonlinear effects see no armature
        np.testing.assert_allclose(dqdyn.nonlinear_effects(m, q, v),
                                   T.T @ pin.nonLinearEffects(pm, pd, qp, T @ v), atol=1e-10 * scale)
        np.testing.assert_allclose(dqdyn.gravity(m, q),
                                   T.T @ pin.computeGeneralizedGravity(pm, pd, qp), atol=1e-10)


@pytest.mark.parametrize("name,make", [c for c in _cases() if c[0] != "tree_planar"],
                         ids=[c[0] for c in _cases() if c[0] != "tree_planar"])
def test_derivatives_match_pinocchio_with_armature(name, make):
    m, pm = make()
    pd = pm.createData()
    q, v, a = _state(m, 7)
    qp, T = q_to_pin(m, pm, q), v_transform(m, pm, q)
    dq, dv, da = rnea_derivatives(m, q, v, a)
    dqp, dvp, dap = pin.computeRNEADerivatives(pm, pd, qp, T @ v, T @ a)
    for ours, theirs in ((dq, dqp), (dv, dvp), (da, _sym(dap))):
        np.testing.assert_allclose(ours, T.T @ theirs @ T, atol=1e-9 * (1 + np.abs(theirs).max()))
    tau = dqdyn.rnea(m, q, v, a)
    pin.computeABADerivatives(pm, pd, qp, T @ v, T @ tau)
    fq, fv, ft = aba_derivatives(m, q, v, tau)
    for ours, theirs in ((fq, pd.ddq_dq), (fv, pd.ddq_dv), (ft, _sym(pd.Minv))):
        np.testing.assert_allclose(ours, T.T @ theirs @ T, atol=1e-8 * (1 + np.abs(theirs).max()))


def test_derivatives_finite_differences_with_armature():
    m = dqdyn.random_tree(7, seed=4)
    m = m.with_armature(_armature(m, 9))
    q, v, a = _state(m, 2)
    h = 1e-6
    dq, dv, da = rnea_derivatives(m, q, v, a)
    tau = dqdyn.rnea(m, q, v, a)
    fq, fv, ft = aba_derivatives(m, q, v, tau)
    E = np.eye(m.nv)
    Dq = np.column_stack([(dqdyn.rnea(m, dqdyn.integrate(m, q, h * e), v, a)
                           - dqdyn.rnea(m, dqdyn.integrate(m, q, -h * e), v, a)) / (2 * h) for e in E])
    Da = np.column_stack([dqdyn.rnea(m, q, v, a + e) - dqdyn.rnea(m, q, v, a) for e in E])
    Fq = np.column_stack([(dqdyn.aba(m, dqdyn.integrate(m, q, h * e), v, tau)
                           - dqdyn.aba(m, dqdyn.integrate(m, q, -h * e), v, tau)) / (2 * h) for e in E])
    Fv = np.column_stack([(dqdyn.aba(m, q, v + h * e, tau) - dqdyn.aba(m, q, v - h * e, tau)) / (2 * h)
                          for e in E])
    np.testing.assert_allclose(dq, Dq, atol=2e-6 * (1 + np.abs(Dq).max()))
    np.testing.assert_allclose(da, Da, atol=1e-9 * np.abs(Da).max())
    np.testing.assert_allclose(fq, Fq, atol=2e-6 * (1 + np.abs(Fq).max()))
    np.testing.assert_allclose(fv, Fv, atol=2e-6 * (1 + np.abs(Fv).max()))
    np.testing.assert_allclose(ft, np.linalg.inv(da), atol=1e-9 * np.abs(ft).max())


# =============================================================================== MuJoCo
MJCF = """<mujoco model="armature_chain">
  <compiler angle="radian"/>
  <option gravity="0.3 -0.2 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="l1" pos="0 0 0.1" quat="0.9 0.1 0.2 0.3">
      <joint name="j1" type="hinge" axis="0 0 1" armature="0.8"/>
      <inertial pos="0.1 0.02 -0.03" mass="1.3" fullinertia="0.03 0.025 0.02 0.002 -0.001 0.003"/>
      <body name="l2" pos="0.3 0 0" euler="0.4 -0.2 0.1">
        <joint name="j2" type="slide" axis="0.2 1 0.1" armature="2.5"/>
        <inertial pos="0.15 0 0.01" mass="0.8" diaginertia="0.02 0.015 0.008"/>
        <body name="l3" pos="0.3 0.05 0">
          <joint name="j3" type="hinge" axis="1 0 0" armature="0.05"/>
          <inertial pos="0.1 0 0" mass="0.4" diaginertia="0.004 0.003 0.002"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_matches_mujoco_joint_armature():
    mujoco = pytest.importorskip("mujoco")
    from dqdyn.parsers.mjcf import MujocoMap, load_mjcf

    mj = mujoco.MjModel.from_xml_string(MJCF)
    np.testing.assert_array_equal(mj.dof_armature, [0.8, 2.5, 0.05])
    model = load_mjcf(MJCF).with_armature(np.array(mj.dof_armature))
    mp = MujocoMap(model, mj)
    d = mujoco.MjData(mj)
    for k in range(4):
        q, v, a = _state(model, 20 + k)
        d.qpos[:], d.qvel[:], d.qacc[:] = mp.qpos(q), mp.qvel(q, v), mp.qacc(q, v, a)
        mujoco.mj_inverse(mj, d)
        M = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, d, M)
        np.testing.assert_allclose(dqdyn.mass_matrix(model, q), mp.mass_matrix(q, M), atol=1e-12)
        tau_mj = mp.tau(q, d.qfrc_inverse)
        np.testing.assert_allclose(dqdyn.rnea(model, q, v, a), tau_mj, atol=1e-11)
        np.testing.assert_allclose(dqdyn.aba(model, q, v, tau_mj), a, atol=1e-10)


# =============================================================================== batches, zero
def _batch(m, n, seed):
    rng = np.random.default_rng(seed)
    Q = np.array([dqdyn.random_configuration(m, seed=rng) for _ in range(n)])
    return Q, rng.normal(size=(n, m.nv)), rng.normal(size=(n, m.nv))


@pytest.mark.parametrize("n", [5, None])
def test_batches_match_single_states(n):
    """``None``: more than ``SERIAL_WORK`` body-states, so the parallel kernels run."""
    m = dqdyn.random_tree(8, seed=6)
    m = m.with_armature(_armature(m, 1))
    n = n or SERIAL_WORK // (m.nbodies + 1) + 9
    Q, V, A = _batch(m, n, 5)
    TAU = dqdyn.rnea(m, Q, V, A)
    MM = dqdyn.mass_matrix(m, Q)
    QDD = dqdyn.aba(m, Q, V, TAU)
    MI = dqdyn.mass_matrix_inverse(m, Q)
    DQ, DV, DA = rnea_derivatives(m, Q, V, A)
    for k in (0, n // 2, n - 1):
        M = MM[k]
        np.testing.assert_allclose(TAU[k], M @ A[k] + dqdyn.nonlinear_effects(m, Q[k], V[k]),
                                   atol=1e-10 * (1 + np.abs(TAU[k]).max()))
        np.testing.assert_allclose(M, dqdyn.mass_matrix(m, Q[k]), atol=1e-13 * np.abs(M).max())
        assert np.all(np.diag(M) >= m.armature)
        np.testing.assert_allclose(QDD[k], A[k], atol=1e-9)
        np.testing.assert_allclose(MI[k] @ M, np.eye(m.nv), atol=1e-9)
        np.testing.assert_allclose(DA[k], M, atol=1e-12 * np.abs(M).max())


def test_zero_armature_gives_the_same_bits():
    base = dqdyn.random_tree(8, seed=2)
    zero = base.with_armature(np.zeros(base.nv))
    assert zero.mf is not base.mf
    q, v, a = _state(base, 4)
    Q, V, A = _batch(base, SERIAL_WORK // (base.nbodies + 1) + 3, 8)
    for f in (lambda m: dqdyn.rnea(m, q, v, a), lambda m: dqdyn.mass_matrix(m, q),
              lambda m: dqdyn.aba(m, q, v, a), lambda m: dqdyn.mass_matrix_inverse(m, q),
              lambda m: dqdyn.rnea(m, Q, V, A), lambda m: dqdyn.aba(m, Q, V, A),
              lambda m: np.array(rnea_derivatives(m, q, v, a)),
              lambda m: np.array(aba_derivatives(m, q, v, a))):
        x, y = f(base), f(zero)
        assert np.array_equal(x, y) and x.tobytes() == y.tobytes()


def test_hybrid_and_constrained_dynamics_see_the_armature():
    """Hybrid dynamics with some DoFs prescribed equals inverse dynamics on those and forward on
    the others (both with the armature); constrained forward dynamics with ``A q̈ = b`` equals
    the KKT solution with ``M + diag(armature)``."""
    m = dqdyn.random_tree(7, seed=8)
    m = m.with_armature(_armature(m, 3))
    q, v, a = _state(m, 6)
    tau = dqdyn.rnea(m, q, v, a)
    presc = np.zeros(m.nv, bool)
    presc[::2] = True
    qdd, tau_h = dqdyn.hybrid_dynamics(m, q, v, np.where(presc, a, 0.0), np.where(presc, 0.0, tau),
                                      presc)
    np.testing.assert_allclose(qdd, a, atol=1e-9)
    np.testing.assert_allclose(tau_h, tau, atol=1e-9 * (1 + np.abs(tau).max()))
    rng = np.random.default_rng(1)
    Ac = rng.normal(size=(2, m.nv))
    b = rng.normal(size=2)
    M, h = dqdyn.mass_matrix(m, q), dqdyn.nonlinear_effects(m, q, v)
    K = np.block([[M, Ac.T], [Ac, np.zeros((2, 2))]])
    ref = np.linalg.solve(K, np.r_[tau - h, b])[: m.nv]
    qdd_c = dqdyn.constrained_aba(m, q, v, tau, Ac, b)[0]
    np.testing.assert_allclose(qdd_c, ref, atol=1e-8 * (1 + np.abs(ref).max()))


def test_kinetic_energy_includes_the_rotors():
    """``½ vᵀ (M + diag(armature)) v`` from the bodies' twists plus the rotors, against the
    matrix (CRBA); and the power balance ``dT/dt = vᵀ (τ − g)`` along q̈ = FD(q, v, τ)."""
    m = dqdyn.random_tree(6, joint_types=NO_PLANAR, seed=11)
    m = m.with_armature(_armature(m, 4))
    q, v, tau = _state(m, 3)
    np.testing.assert_allclose(dqdyn.kinetic_energy(m, q, v), 0.5 * v @ dqdyn.mass_matrix(m, q) @ v,
                               rtol=1e-12)
    qdd = dqdyn.aba(m, q, v, tau)
    h = 1e-6
    T = [dqdyn.kinetic_energy(m, dqdyn.integrate(m, q, s * h * v), v + s * h * qdd) for s in (-1, 1)]
    np.testing.assert_allclose((T[1] - T[0]) / (2 * h), v @ (tau - dqdyn.gravity(m, q)), rtol=1e-6)


def test_gauss_principle_with_rotors_gives_aba_and_is_stationary_there():
    """Gauss's function with the rotors' acceleration energy ½ Σ armature v̇² [Silva2022,
    eqs. (31), (45)]: its minimizer is ABA's answer, its gradient vanishes there, and Kane's
    inertia forces balance the active ones."""
    from dqdyn.dynamics import gauss

    m = dqdyn.serial_chain(4).with_armature(np.array([0.1, 0.2, 0.3, 0.4]))
    q = dqdyn.random_configuration(m, seed=3)
    v, tau = np.linspace(-1.0, 1.0, 4), np.arange(4.0)
    a = dqdyn.aba(m, q, v, tau)
    np.testing.assert_allclose(gauss.gauss_forward_dynamics(m, q, v, tau), a, atol=1e-12)
    np.testing.assert_allclose(gauss.mass_matrix_gp(m, q), dqdyn.mass_matrix(m, q), atol=1e-12)
    grad = gauss.quadratic_gradient(lambda x: gauss.gauss_function(m, q, v, x, tau), a)
    np.testing.assert_allclose(grad, 0.0, atol=1e-10)
    phi, phibar = gauss.kane_forces(m, q, v, a, tau)
    np.testing.assert_allclose(phi, phibar, atol=1e-12)


def test_the_regressor_leaves_the_rotors_out_of_the_body_parameters():
    m = dqdyn.serial_chain(3).with_armature(np.array([0.1, 0.2, 0.3]))
    q = dqdyn.random_configuration(m, seed=0)
    v, a = np.ones(3), np.arange(3.0)
    Y = dqdyn.joint_torque_regressor(m, q, v, a)
    np.testing.assert_allclose(Y @ dqdyn.inertial_parameters(m).ravel() + m.armature * a,
                               dqdyn.rnea(m, q, v, a), atol=1e-12)
