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
