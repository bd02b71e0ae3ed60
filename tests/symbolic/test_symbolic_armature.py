"""Joint armature (`Model.armature`) in dqdyn.symbolic: ``M = B + diag(armature)`` (vector and
trace formulas, expanded and generated code), ``τ = M a + C v + g`` with ``armature ⊙ a``, the
kinetic energy ``½ vᵀ M v``; against the compiled kernels and MuJoCo's ``mj_fullM`` /
``mj_inverse`` (joint and actuator armature, and armature on joints coupled by a linear
equality, which dqdyn folds into the master's as ``scale²``)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

sp = pytest.importorskip("sympy")
mujoco = pytest.importorskip("mujoco")

import dqdyn  # noqa: E402
from dqdyn.parsers.mjcf import MujocoMap  # noqa: E402
from dqdyn.symbolic import dynamics  # noqa: E402


def _close(a, b, tol=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    err = np.abs(a - b).max() / max(1.0, np.abs(b).max())
    assert err < tol, err


@pytest.fixture(scope="module")
def panda():
    """Franka Panda (7 revolute joints, a prismatic finger and its mimic) with armature."""
    m = dqdyn.load_example("panda")
    return m.with_armature(np.linspace(0.1, 0.7, m.nv))


@pytest.fixture(scope="module")
def panda_dyn(panda):
    return dynamics(panda)


def test_panda_with_armature_matches_the_kernels(panda, panda_dyn):
    d = panda_dyn
    assert d.armature == tuple(sp.Float(x) for x in panda.armature)
    f = d.numpy_function(("M", "C", "g", "c"))
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, v, a = rng.uniform(-2, 2, panda.nq), rng.normal(size=panda.nv), rng.normal(size=panda.nv)
        M, C, g, c = f(q, v)
        _close(M, dqdyn.mass_matrix(panda, q))
        _close(C, dqdyn.coriolis_matrix(panda, q, v))
        _close(g, dqdyn.gravity(panda, q))
        _close(M @ a + c + g, dqdyn.rnea(panda, q, v, a))


def test_armature_is_exactly_the_diagonal(panda, panda_dyn):
    """M with armature − M without = diag(armature); C and g are the same bits."""
    f1 = panda_dyn.numpy_function()
    f0 = dynamics(dqdyn.load_example("panda")).numpy_function()
    rng = np.random.default_rng(2)
    q, v = rng.uniform(-2, 2, panda.nq), rng.normal(size=panda.nv)
    (M1, C1, g1), (M0, C0, g0) = f1(q, v), f0(q, v)
    np.testing.assert_allclose(M1 - M0, np.diag(panda.armature), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(C1, C0)
    np.testing.assert_array_equal(g1, g0)


def test_trace_formula_and_energy_hold_the_armature():
    model = dqdyn.serial_chain(3, seed=2).with_armature([0.3, 1.2, 0.05])
    d = dynamics(model)
    rng = np.random.default_rng(5)
    q, v, a = rng.uniform(-2, 2, 3), rng.normal(size=3), rng.normal(size=3)
    sub = dict(zip(d.q, q)) | dict(zip(d.v, v)) | dict(zip(d.a, a))
    Mt = np.array(d.mass_matrix_trace().xreplace(sub), dtype=float)
    _close(Mt, dqdyn.mass_matrix(model, q))
    T = float(d.kinetic_energy().xreplace(sub))
    assert T == pytest.approx(0.5 * v @ dqdyn.mass_matrix(model, q) @ v, rel=1e-12)
    assert T == pytest.approx(dqdyn.kinetic_energy(model, q, v), rel=1e-12)
    tau, acc = d.rnea()
    assert acc == d.a and tau.free_symbols <= set(d.q) | set(d.v) | set(d.a)
    _close(np.array(tau.xreplace(sub), dtype=float).ravel(), dqdyn.rnea(model, q, v, a))


def test_regressor_leaves_the_armature_out():
    """Y π + armature ⊙ a = τ, as dqdyn.joint_torque_regressor (the armature is no body
    parameter)."""
    model = dqdyn.serial_chain(2, seed=5).with_armature([0.4, 0.9])
    d = dynamics(model, symbolic_params=True)
    pi = dqdyn.inertial_parameters(model).ravel()
    Y, acc = d.regressor()
    rng = np.random.default_rng(1)
    q, v, a = rng.uniform(-2, 2, 2), rng.normal(size=2), rng.normal(size=2)
    Yn = np.array(sp.lambdify([d.q, d.v, acc], Y, "numpy")(q, v, a), dtype=float)
    _close(Yn, dqdyn.joint_torque_regressor(model, q, v, a))
    _close(Yn @ pi + model.armature * a, dqdyn.rnea(model, q, v, a))
    M, _, _ = d.numpy_function()(q, v, pi)
    _close(M, dqdyn.mass_matrix(model, q))


# ------------------------------------------------------------------ MuJoCo
#: joint armature (also from a default class), actuator armature through a geared joint
#: transmission (gear² · armature on the dof), and armature on the two joints coupled to m1 by
#: linear equalities (dqdyn's mimic joints: folded into m1's as scale²)
MJCF = """<mujoco model="armature_coupled">
  <compiler angle="radian"/>
  <option gravity="0.3 -0.2 -9.81"><flag contact="disable"/></option>
  <default><joint armature="0.07"/></default>
  <worldbody>
    <body name="l1" pos="0 0 0.1" quat="0.9 0.1 0.2 0.3">
      <joint name="m1" type="hinge" axis="0 0 1" pos="0.05 0 0" ref="0.2" armature="0.35"/>
      <inertial pos="0.1 0.02 0" mass="1" fullinertia="0.01 0.02 0.02 0.001 0 -0.002"/>
      <body name="l2" pos="0.3 0 0">
        <joint name="m2" type="hinge" axis="0 1 0" ref="-0.3" armature="0.2"/>
        <inertial pos="0.1 0 0" mass="0.8" diaginertia="0.01 0.02 0.02"/>
        <body name="finger" pos="0.2 0 0">
          <joint name="m3" type="slide" axis="1 0 0" ref="0.05" armature="0.5"/>
          <inertial pos="0.02 0 0" mass="0.3" diaginertia="0.001 0.002 0.002"/>
          <body name="l4" pos="0.1 0 0" euler="0.3 0.1 -0.2">
            <joint name="j4" type="hinge" axis="1 0.2 0"/>
            <inertial pos="0.05 0.01 0" mass="0.4" diaginertia="0.002 0.003 0.003"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="m2" joint2="m1" polycoef="0.1 -1.5 0 0 0"/>
    <joint joint1="m3" joint2="m2" polycoef="0.01 0.2 0 0 0"/>
  </equality>
  <actuator><motor joint="j4" gear="12" armature="0.002"/></actuator>
</mujoco>
"""


@pytest.fixture(scope="module")
def coupled():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the actuator is metadata
        model = dqdyn.load_mjcf(MJCF)
    mj = mujoco.MjModel.from_xml_string(MJCF)
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_EQUALITY)  # the coupling is dqdyn's G
    return model, mj, dynamics(model)


def _mujoco(mj, mm, q, v, a):
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:], d.qacc[:] = mm.qpos(q), mm.qvel(q, v), mm.qacc(q, v, a)
    mujoco.mj_inverse(mj, d)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, d, M)
    return mm.tau(q, d.qfrc_inverse), mm.mass_matrix(q, M), mm.tau(q, d.qfrc_bias)


def test_symbolic_matches_mujoco_with_armature_on_coupled_joints(coupled):
    model, mj, d = coupled
    assert model.nv == 2 and model.mimic_joints == ("m2", "m3")
    s2, s3 = -1.5, -1.5 * 0.2  # m3 = 0.2 m2 + …, m2 = −1.5 m1 + …
    assert model.armature == pytest.approx([0.35 + s2**2 * 0.2 + s3**2 * 0.5, 0.07 + 144 * 0.002])
    f = d.numpy_function(("M", "c", "g"))
    tau_sym, acc = d.rnea()
    ft = sp.lambdify([d.q, d.v, acc], tau_sym, "numpy")
    mm = MujocoMap(model, mj)
    rng = np.random.default_rng(3)
    for _ in range(4):
        q, v, a = rng.uniform(-1.5, 1.5, 2), rng.normal(size=2), rng.normal(size=2)
        tau_mj, M_mj, bias_mj = _mujoco(mj, mm, q, v, a)
        M, c, g = f(q, v)
        _close(M, M_mj)
        _close(c + g, bias_mj)
        _close(np.asarray(ft(q, v, a), dtype=float).ravel(), tau_mj)
        _close(M, dqdyn.mass_matrix(model, q))


def test_generated_c_with_armature_matches_mujoco(coupled, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    model, mj, d = coupled
    (tmp_path / "dyn.c").write_text(d.c_source("dyn_arm", which=("M", "g")))
    lib = tmp_path / "libdyn.so"
    r = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "dyn.c"), "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(r.stderr)
    so = ctypes.CDLL(str(lib))
    P = ctypes.POINTER(ctypes.c_double)
    so.dyn_arm.argtypes = [P] * 4
    mm = MujocoMap(model, mj)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = np.ascontiguousarray(rng.uniform(-2, 2, 2))
        v = np.zeros(2)
        M, g = np.zeros((2, 2)), np.zeros(2)
        so.dyn_arm(*(x.ctypes.data_as(P) for x in (q, v, M, g)))
        _, M_mj, g_mj = _mujoco(mj, mm, q, v, np.zeros(2))
        _close(M, M_mj)
        _close(g, g_mj)


# ------------------------------------------------------------------ a 4-DoF arm, Pinocchio
def _arm4(armature=(0.4, 0.25, 1.5, 0.03)):
    """Revolute, revolute, prismatic, revolute; armature through ``add_body(armature=)``; joint
    names that are no identifiers (a space, a Python keyword, a C comment end)."""
    b = dqdyn.ModelBuilder("arm4")
    b.add_body("l1", "world", "revolute", joint_name="shoulder yaw", axis=(0, 0, 1), xyz=(0, 0, 0.1),
               mass=1.2, com=(0.02, 0.01, 0.1), inertia=np.diag([0.02, 0.03, 0.01]), armature=armature[0])
    b.add_body("l2", "l1", "revolute", joint_name="for", axis=(0, 1, 0), xyz=(0, 0, 0.2), rpy=(0.1, 0, 0.2),
               mass=0.9, com=(0.15, 0, 0.01), inertia=np.diag([0.004, 0.02, 0.02]), armature=armature[1])
    b.add_body("l3", "l2", "prismatic", joint_name="*/ slide", axis=(1, 0, 0), xyz=(0.3, 0, 0),
               mass=0.5, com=(0.05, 0.01, 0), inertia=np.diag([0.001, 0.004, 0.004]), armature=armature[2])
    b.add_body("l4", "l3", "revolute", joint_name="wrist", axis=(1, 0.3, 0), xyz=(0.1, 0, 0.02),
               mass=0.3, com=(0.03, 0, 0.02), inertia=np.diag([0.001, 0.002, 0.002]), armature=armature[3])
    return b.build()


def _pinocchio(model, q, v, a):
    """Pinocchio's crba and rnea on dqdyn's bridge (``pin_model.armature`` = `Model.armature`)."""
    pin = pytest.importorskip("pinocchio")
    from dqdyn.interop.pinocchio import matrix_from_pin, tau_from_pin, to_pinocchio

    s = to_pinocchio(model, q=q, v=v, a=a)
    np.testing.assert_array_equal(np.asarray(s.model.armature), model.armature)
    Mp = pin.crba(s.model, s.data, s.q)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    tp = pin.rnea(s.model, s.data, s.q, s.v, s.a)
    return matrix_from_pin(model, s.model, q, Mp), tau_from_pin(model, s.model, q, tp)


def _compile(src, name, tmp_path, nargs):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / f"{name}.c").write_text(src)
    lib = tmp_path / f"lib{name}.so"
    r = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / f"{name}.c"), "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(r.stderr)
    fn = getattr(ctypes.CDLL(str(lib)), name)
    fn.argtypes = [ctypes.POINTER(ctypes.c_double)] * nargs
    return lambda *xs: fn(*(np.ascontiguousarray(x).ctypes.data_as(ctypes.POINTER(ctypes.c_double))
                            for x in xs))


@pytest.fixture(scope="module")
def arm4():
    return _arm4()


def test_arm4_numeric_armature_matches_kernels_and_pinocchio(arm4, tmp_path):
    """Expanded M and τ, the numpy function and the compiled C: M and τ = M a + c + g equal
    `dqdyn.mass_matrix` / `dqdyn.rnea` and Pinocchio's crba / rnea with ``armature`` set."""
    d = dynamics(arm4)
    assert d.armature == tuple(sp.Float(x) for x in arm4.armature) and d.armature_values == {}
    tau_sym, acc = d.rnea()
    assert tau_sym.free_symbols <= set(d.q) | set(d.v) | set(acc)  # the armature is a number
    f = d.numpy_function(("M", "c", "g"))
    fc = _compile(d.c_source("arm4_num", which=("M", "c", "g")), "arm4_num", tmp_path, 5)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, v, a = rng.uniform(-1.5, 1.5, 4), rng.normal(size=4), rng.normal(size=4)
        M_k, tau_k = dqdyn.mass_matrix(arm4, q), dqdyn.rnea(arm4, q, v, a)
        M_p, tau_p = _pinocchio(arm4, q, v, a)
        sub = dict(zip(d.q, q)) | dict(zip(d.v, v)) | dict(zip(acc, a))
        M_e = np.array(d.M.xreplace(sub), dtype=float)
        tau_e = np.array(tau_sym.xreplace(sub), dtype=float).ravel()
        M_f, c_f, g_f = f(q, v)
        M_c, c_c, g_c = np.zeros((4, 4)), np.zeros(4), np.zeros(4)
        fc(q, v, M_c, c_c, g_c)
        for M, tau in ((M_e, tau_e), (M_f, M_f @ a + c_f + g_f), (M_c, M_c @ a + c_c + g_c)):
            _close(M, M_k)
            _close(M, M_p)
            _close(tau, tau_k)
            _close(tau, tau_p)
        # without the armature the same state misses exactly diag(armature) and armature ⊙ a
        bare = arm4.with_armature(np.zeros(4))
        np.testing.assert_allclose(M_k - dqdyn.mass_matrix(bare, q), np.diag(arm4.armature), atol=1e-14)
        np.testing.assert_allclose(tau_k - dqdyn.rnea(bare, q, v, a), arm4.armature * a, atol=1e-13)


def test_symbolic_armature_symbols(arm4, tmp_path):
    """``symbolic_armature=True``: one symbol per DoF, named after its joint as a plain
    identifier; the generated code takes the armature as an argument, so one build serves any
    armature (checked against the kernels and Pinocchio of the model with that armature)."""
    d = dynamics(arm4, symbolic_armature=True)
    names = [str(s_) for s_ in d.armature]
    assert names == ["armature_shoulder_yaw", "armature_for", "armature____slide", "armature_wrist"]
    assert d.armature_values == dict(zip(d.armature, arm4.armature.tolist()))
    assert set(d.armature) <= d.M.free_symbols <= set(d.q) | set(d.armature)
    assert d.g.free_symbols <= set(d.q) and d.C.free_symbols <= set(d.q) | set(d.v)
    tau_sym, acc = d.rnea()
    assert tau_sym.jacobian(d.armature) == sp.diag(*acc)  # τ = … + armature ⊙ a
    # the numbers substituted give the numeric-armature model's expressions
    d0 = dynamics(arm4)
    rng = np.random.default_rng(12)
    q = rng.uniform(-1.5, 1.5, 4)
    sub = dict(zip(d.q, q))
    _close(np.array(d.M.xreplace(sub | d.armature_values), dtype=float),
           np.array(d0.M.xreplace(dict(zip(d0.q, q))), dtype=float))
    src = d.python_source("arm4_sym", which=("M", "c", "g"))
    assert "def arm4_sym(q, v, armature):" in src and "*/" not in src
    csrc = d.c_source("arm4_sym", which=("M", "c", "g"))
    assert "const double *armature" in csrc and csrc.count("*/") == 1
    f = d.numpy_function(("M", "c", "g"))
    fc = _compile(csrc, "arm4_sym", tmp_path, 6)
    for arm in (arm4.armature, np.array([0.0, 2.0, 0.1, 0.7]), np.zeros(4)):
        model = arm4.with_armature(arm)
        q, v, a = rng.uniform(-1.5, 1.5, 4), rng.normal(size=4), rng.normal(size=4)
        M_f, c_f, g_f = f(q, v, arm)
        M_c, c_c, g_c = np.zeros((4, 4)), np.zeros(4), np.zeros(4)
        fc(q, v, np.asarray(arm, float), M_c, c_c, g_c)
        M_p, tau_p = _pinocchio(model, q, v, a)
        for M, c, g in ((M_f, c_f, g_f), (M_c, c_c, g_c)):
            _close(M, dqdyn.mass_matrix(model, q))
            _close(M, M_p)
            _close(M @ a + c + g, dqdyn.rnea(model, q, v, a))
            _close(M @ a + c + g, tau_p)
        T = float(d.kinetic_energy().xreplace(dict(zip(d.q, q)) | dict(zip(d.v, v))
                                              | dict(zip(d.armature, arm))))
        assert T == pytest.approx(dqdyn.kinetic_energy(model, q, v), rel=1e-12)


def test_symbolic_armature_names_stay_distinct_and_safe():
    """Joint names whose identifiers meet get a position suffix; mimic joints own no symbol."""
    b = dqdyn.ModelBuilder("clash")
    for k, (name, parent) in enumerate((("a-b", "world"), ("a_b", "l0"), ("a_b_1", "l1"),
                                        ("a b", "l2"))):
        b.add_body(f"l{k}", parent, "revolute", joint_name=name, axis=(0, k % 2, 1 - k % 2),
                   xyz=(0.1, 0, 0), mass=0.5, com=(0.05, 0, 0), inertia=np.eye(3) * 1e-3,
                   armature=0.1 * (k + 1))
    b.add_body("tip", "l3", "revolute", joint_name="follower", axis=(0, 1, 0), xyz=(0.1, 0, 0),
               mass=0.2, com=(0.02, 0, 0), inertia=np.eye(3) * 1e-4, mimic=("a b", 0.5, 0.0), armature=0.4)
    model = b.build()
    assert model.nv == 4 and model.armature == pytest.approx([0.1, 0.2, 0.3, 0.4 + 0.25 * 0.4])
    d = dynamics(model, symbolic_armature=True)
    names = [str(s_) for s_ in d.armature]
    assert names == ["armature_a_b", "armature_a_b_1", "armature_a_b_1_2", "armature_a_b_3"]
    f = d.numpy_function(("M",))
    q = np.array([0.3, -0.2, 0.5, 1.1])
    (M,) = f(q, np.zeros(4), model.armature)
    _close(M, dqdyn.mass_matrix(model, q))


def test_symbolic_armature_with_symbolic_parameters():
    """Both symbolic: the regressor still leaves the armature out, the generated function takes
    ``pi`` then ``armature``."""
    model = dqdyn.serial_chain(3, seed=4).with_armature([0.2, 0.6, 0.9])
    d = dynamics(model, symbolic_params=True, symbolic_armature=True)
    pi = dqdyn.inertial_parameters(model).ravel()
    Y, acc = d.regressor()
    assert not Y.free_symbols & set(d.armature)
    rng = np.random.default_rng(6)
    q, v, a = rng.uniform(-2, 2, 3), rng.normal(size=3), rng.normal(size=3)
    Yn = np.array(sp.lambdify([d.q, d.v, acc], Y, "numpy")(q, v, a), dtype=float)
    _close(Yn @ pi + model.armature * a, dqdyn.rnea(model, q, v, a))
    assert "def dynamics(q, v, pi, armature):" in d.python_source()
    M, C, g = d.numpy_function()(q, v, pi, model.armature)
    _close(M, dqdyn.mass_matrix(model, q))
    _close(C, dqdyn.coriolis_matrix(model, q, v))
    _close(g, dqdyn.gravity(model, q))


# ------------------------------------------------------------------ elastic joints, K → ∞
def test_elastic_rigid_limit_is_the_armature_model():
    """Spong's reduced model [Mladenova, eqs. (281)–(283)] with ``K → ∞`` (``θ = q`` on the
    elastic joints) is the rigid model with ``N² J_a`` added to `Model.armature`
    (`ElasticModel.rigid_model`); its symbolic M and τ equal the reduced model's ``Pᵀ diag(D, B) P``,
    `rigid_mass_matrix`, `rigid_forward_dynamics` and Pinocchio with that armature."""
    from dqdyn.elastic.model import elastic

    base = dqdyn.serial_chain(3, seed=1).with_armature([0.05, 0.0, 0.02])
    em = elastic(base, {"joint1": dict(stiffness=800.0, axial_inertia=3e-5, gear_ratio=60.0, mass=0.2),
                        "joint3": dict(stiffness=500.0, axial_inertia=1e-5, gear_ratio=-40.0)})
    rm = em.rigid_model
    assert rm.armature == pytest.approx([0.05 + 3600 * 3e-5, 0.0, 0.02 + 1600 * 1e-5], rel=1e-15)
    d = dynamics(rm)
    f = d.numpy_function(("M", "c", "g"))
    P = np.vstack([np.eye(3), np.eye(3)[em.elastic_v]])  # x = (q, θ) = P q
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, v, tau = rng.uniform(-2, 2, 3), rng.normal(size=3), rng.normal(size=3)
        M, c, g = f(q, v)
        _close(M, P.T @ em.mass_matrix(P @ q, "reduced") @ P)
        _close(M, em.rigid_mass_matrix(q))
        a = em.rigid_forward_dynamics(q, v, tau)
        _close(M @ a + c + g, tau)
        M_p, tau_p = _pinocchio(rm, q, v, a)
        _close(M, M_p)
        _close(tau_p, tau)


def test_elastic_single_link_rigid_limit_matches_spong():
    """The single-link arm of [Mladenova, §7.5] (eqs. 306–307): with ``x₃ = x₁`` the link and
    motor equations add to ``(I_l + I_m) q̈ + MgL sin q = u``; the symbolic model of
    `ElasticModel.rigid_model` of a pendulum with ``I_m = N² J_a`` is that equation."""
    from dqdyn.elastic.model import elastic
    from dqdyn.elastic.single_link import single_link_arm

    mass, L, Iyy, N, Ja = 1.3, 0.4, 0.02, 50.0, 4e-5
    b = dqdyn.ModelBuilder("pendulum", gravity=(0, 0, -9.81))
    b.add_body("link", "world", "revolute", joint_name="j", axis=(0, 1, 0), mass=mass,
               com=(0, 0, -L), inertia=np.diag([0.01, Iyy, 0.01]))
    em = elastic(b.build(), {"j": dict(stiffness=100.0, axial_inertia=Ja, gear_ratio=N)})
    d = dynamics(em.rigid_model)
    sl = single_link_arm()
    Il, Im, Ms, g0, Ls, K = sl["symbols"]
    x1, _, x3, _ = sl["x"]
    u = sp.Symbol("u")
    # I_l ẋ₂ + I_m ẋ₄ with the input, at the rigid limit: the spring cancels
    rigid = sp.simplify((Il * sl["f"][1] + Im * (sl["f"][3] + sl["g"][3] * u)).subs(x3, x1))
    assert sp.simplify(rigid - (u - Ms * g0 * Ls * sp.sin(x1))) == 0
    nums = {Il: Iyy + mass * L**2, Im: N**2 * Ja, Ms: mass, g0: 9.81, Ls: L}
    tau, acc = d.rnea()
    for qn, un in ((0.3, 0.7), (-1.2, 2.0), (2.5, -0.4)):
        qdd = float(rigid.subs(nums | {x1: qn, u: un}) / (nums[Il] + nums[Im]))
        val = float(tau[0].xreplace({d.q[0]: qn, d.v[0]: 0.37, acc[0]: qdd}))
        assert val == pytest.approx(un, rel=1e-12, abs=1e-12)
