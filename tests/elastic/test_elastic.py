"""dqdyn.elastic: elastic-joint models against Pinocchio (rigid limit), energy balance, the
equations of motion, finite differences and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.elastic import Rotor, elastic, load_elastic_urdf, read_transmissions, rnea_taylor
from dqdyn.errors import DqdynError, InfeasibleError, ModelError, UnknownNameError


def _rotors(model, K=400.0, N=50.0, Ja=2e-5, mass=0.2):
    return {j: dict(stiffness=K * (1 + 0.1 * k), axial_inertia=Ja * (1 + 0.2 * k), gear_ratio=N,
                    mass=mass, transverse_inertia=0.4 * Ja) for k, j in enumerate(model.joint_names)}


@pytest.fixture(scope="module")
def chain3():
    return dqdyn.serial_chain(3, seed=1)


@pytest.fixture(scope="module")
def em3(chain3):
    return elastic(chain3, _rotors(chain3))


@pytest.fixture(scope="module")
def xarm7():
    from pinconv import ROBOTS, erd

    return dqdyn.load_urdf(erd(ROBOTS["xarm7"][0])), erd(ROBOTS["xarm7"][0])


def test_rigid_limit_equals_pinocchio_armature(xarm7):
    """K → ∞ (reduced model): D(q) + N²J_a = Pinocchio's crba with ``armature = N² J_a`` and the
    rotors' mass/inertia appended to their parent links; forward dynamics = pin.aba."""
    pin = pytest.importorskip("pinocchio")
    model, path = xarm7
    em = elastic(model, _rotors(model))
    pm = pin.buildModelFromUrdf(path)
    for r in em.rotors:
        jid = pm.getJointId(r.joint)
        par = pm.parents[jid]
        X = pm.jointPlacements[jid]
        a = X.rotation @ np.asarray(model.joint_axis[model.joint_index(r.joint)])
        I = r.transverse_inertia * (np.eye(3) - np.outer(a, a)) + r.axial_inertia * np.outer(a, a)
        pm.appendBodyToJoint(par, pin.Inertia(r.mass, X.translation.copy(), I), pin.SE3.Identity())
        pm.armature[pm.joints[jid].idx_v] = r.gear_ratio**2 * r.axial_inertia
    pd = pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, v, tau = rng.uniform(-2, 2, 7), rng.normal(size=7), rng.normal(size=7)
        Mp = pin.crba(pm, pd, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        np.testing.assert_allclose(em.rigid_mass_matrix(q), Mp, atol=1e-11)
        np.testing.assert_allclose(em.rigid_forward_dynamics(q, v, tau), pin.aba(pm, pd, q, v, tau),
                                   rtol=1e-9, atol=1e-9)


def test_equations_of_motion_both_models(em3):
    rng = np.random.default_rng(1)
    x, xd, u = rng.normal(size=6), rng.normal(size=6), rng.normal(size=3)
    for mod in ("reduced", "full"):
        M, C, g = em3.mass_matrix(x, mod), em3.coriolis_matrix(x, xd, mod), em3.gravity(x, mod)
        a = em3.forward_dynamics(x, xd, u, model=mod)
        res = M @ a + C @ xd + g + em3.spring_force(x, xd) - np.r_[np.zeros(3), u]
        assert np.abs(res).max() < 1e-10
        np.testing.assert_allclose(M, M.T, atol=1e-14)
    Mr, Mf = em3.mass_matrix(x, "reduced"), em3.mass_matrix(x, "full")
    # Spong's model drops exactly the rotor–link coupling block (the spin × link rate terms)
    np.testing.assert_allclose(Mf[:3, :3], Mr[:3, :3], atol=1e-12)
    np.testing.assert_allclose(Mf[3:, 3:], np.diag(em3.B), atol=1e-12)
    assert np.abs(Mf[:3, 3:]).max() > 1e-6 and np.all(Mr[:3, 3:] == 0)
    # rotor i sits on link i−1: it couples only with links 1..i−1 ([Mladenova, eqs. (358)–(360)])
    for i in range(3):
        assert np.all(Mf[i:3, 3 + i] == 0) or np.abs(Mf[i:3, 3 + i]).max() < 1e-15


@pytest.mark.parametrize("mod", ["full", "reduced"])
def test_energy_conserved_undamped_unforced_10s(em3, mod):
    x0 = np.array([0.3, -0.4, 0.5, 0.32, -0.41, 0.47])
    xd0 = np.array([0.5, 0.2, -0.3, 0.0, 0.1, 0.0])
    sol = em3.simulate(x0, xd0, 10.0, model=mod, t_eval=np.linspace(0, 10, 51))
    E = np.array([em3.energy(a, b, mod) for a, b in zip(sol.x, sol.xd)])
    scale = max(1.0, abs(E[0]))
    assert np.ptp(E) / scale < 1e-7, np.ptp(E)


def test_rnea_taylor_against_finite_differences(chain3):
    rng = np.random.default_rng(2)
    Q = rng.normal(size=(5, 3))
    tj = rnea_taylor(chain3, Q)

    def tau(t):
        q = Q[0] + Q[1] * t + Q[2] * t**2 + Q[3] * t**3 + Q[4] * t**4
        v = Q[1] + 2 * Q[2] * t + 3 * Q[3] * t**2 + 4 * Q[4] * t**3
        a = 2 * Q[2] + 6 * Q[3] * t + 12 * Q[4] * t**2
        return dqdyn.rnea(chain3, q, v, a)

    def d12(h):
        return (tau(h) - tau(-h)) / (2 * h), (tau(h) - 2 * tau(0) + tau(-h)) / h**2

    (a1, a2), (b1, b2) = d12(2e-3), d12(1e-3)
    np.testing.assert_allclose(tj[0], tau(0.0), atol=1e-12)
    np.testing.assert_allclose(tj[1], (4 * b1 - a1) / 3, atol=2e-7)  # Richardson
    np.testing.assert_allclose(2 * tj[2], (4 * b2 - a2) / 3, atol=2e-5)


def test_flat_inverse_dynamics_satisfies_the_model(em3):
    """θ, θ̇, θ̈, u from the link trajectory: the reduced model's forward dynamics at (q, θ) with u
    returns the trajectory's q̈ and θ̈."""
    rng = np.random.default_rng(3)
    q, qd, qdd, q3, q4 = rng.normal(size=(5, 3))
    r = em3.inverse_dynamics(q, qd, qdd, q3, q4)
    acc = em3.forward_dynamics(np.r_[q, r["theta"]], np.r_[qd, r["theta_d"]], r["u"])
    np.testing.assert_allclose(acc[:3], qdd, atol=1e-9)
    np.testing.assert_allclose(acc[3:], r["theta_dd"], atol=1e-9)


def _smooth_reference(q0, amp, w):
    def ref(t):
        s, c = np.sin(w * t), np.cos(w * t)
        return (q0 + amp * s, amp * w * c, -amp * w**2 * s, -amp * w**3 * c, amp * w**4 * s)

    return ref


@pytest.mark.slow
def test_feedback_linearisation_tracks_three_link(em3):
    """Spong's static feedback (exact model) on the reduced 3-link elastic arm."""
    ref = _smooth_reference(np.array([0.2, -0.3, 0.4]), np.array([0.3, 0.2, -0.25]),
                            np.array([1.0, 1.3, 0.7]))
    q, v, a, j, s = ref(0.0)
    r = em3.inverse_dynamics(q, v, a, j, s)
    ctrl = em3.feedback_linearizing_control(ref)
    sol = em3.simulate(np.r_[q, r["theta"]], np.r_[v, r["theta_d"]], 1.0, ctrl,
                       t_eval=np.linspace(0, 1, 101), rtol=1e-9, atol=1e-11)
    err = sol.x[:, :3] - np.array([ref(t)[0] for t in sol.t])
    assert np.sqrt(np.mean(err**2)) < 1e-6


def test_sidecar_yaml_and_transmission(tmp_path):
    urdf = dqdyn.bundled("two_link_arm")
    xml = open(urdf).read().replace("</robot>", """
  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
    <joint name="shoulder"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="m1"><mechanicalReduction>120</mechanicalReduction></actuator></transmission>
</robot>""")
    p = tmp_path / "arm.urdf"
    p.write_text(xml)
    (tmp_path / "arm.elastic.yaml").write_text(
        "joints:\n"
        "  shoulder: {stiffness: 800, damping: 0.0, rotor: {mass: 0.3, axial_inertia: 2.0e-5}}\n"
        "  elbow:\n    stiffness: 500\n    gear_ratio: 80\n"
        "    rotor: {axial_inertia: 1.0e-5, transverse_inertia: 6.0e-6, position: [0.45, 0, 0]}\n")
    assert read_transmissions(str(p)) == {"shoulder": 120.0}
    em = load_elastic_urdf(p)
    assert em.joints == ("shoulder", "elbow")
    np.testing.assert_allclose(em.N, [120.0, 80.0])
    np.testing.assert_allclose(em.K, [800.0, 500.0])
    np.testing.assert_allclose(em.B, [120.0**2 * 2e-5, 80.0**2 * 1e-5])
    # the elbow rotor (0.45 m out on link 1) adds its mass to link 1 only: the model mass grows by 0
    # (massless rotor), the shoulder rotor on the base is welded to the world
    assert em.full_model.nv == 4 and em.link_model.nv == 2


def test_declared_from_code_on_dh_and_builder_models():
    dh = dqdyn.serial_from_dh([[0, 0, 0.3, 0], [0, np.pi / 2, 0, 0]], masses=[1.0, 1.0]) \
        if "masses" in dqdyn.serial_from_dh.__code__.co_varnames else None
    b = dqdyn.ModelBuilder("b")
    b.add_body("l1", "world", "revolute", axis=(0, 0, 1), mass=1.0, com=(0.1, 0, 0),
               inertia=(0.01, 0.01, 0.01))
    b.add_body("l2", "l1", "prismatic", axis=(1, 0, 0), xyz=(0.2, 0, 0), mass=0.5,
               inertia=(0.01, 0.01, 0.01))
    m = b.build()
    em = elastic(m, [Rotor("l1_joint", stiffness=100.0, axial_inertia=1e-4, gear_ratio=10.0)])
    assert em.m == 1 and list(em.rigid_v) == [1]
    acc = em.forward_dynamics(np.zeros(3), np.zeros(3), [0.0], tau_rigid=[1.0])
    assert acc.shape == (3,)
    if dh is not None:
        assert elastic(dh, _rotors(dh)).m == dh.nv


@pytest.mark.parametrize(
    "spec, exc, words",
    [
        (dict(stiffness=-1.0, axial_inertia=1e-5), ModelError, "stiffness"),
        (dict(stiffness=10.0, axial_inertia=-1e-5), ModelError, "axial_inertia"),
        (dict(stiffness=10.0, axial_inertia=1e-5, transverse_inertia=-1.0), ModelError,
         "transverse_inertia"),
        (dict(stiffness=10.0, axial_inertia=1e-5, mass=-1.0), ModelError, "mass"),
        (dict(stiffness=10.0, axial_inertia=1e-5, gear_ratio=0.0), ModelError, "gear_ratio"),
        (dict(stiffness=10.0, axial_inertia=1e-5, damping=-0.1), ModelError, "damping"),
        (dict(stiffness=float("nan"), axial_inertia=1e-5), ModelError, "stiffness"),
    ],
)
def test_bad_rotor_data(chain3, spec, exc, words):
    with pytest.raises(exc, match=words):
        elastic(chain3, {"joint1": spec})


def test_bad_joints(chain3):
    with pytest.raises(UnknownNameError, match="nope"):
        elastic(chain3, {"nope": dict(stiffness=1.0, axial_inertia=1.0)})
    tree = dqdyn.random_tree(3, ["revolute", "spherical"], seed=0)
    sph = next(j for j in tree.joint_names if tree.joint_type_name(j) == "spherical")
    with pytest.raises(ModelError, match=f"{sph}.*spherical"):
        elastic(tree, {sph: dict(stiffness=1.0, axial_inertia=1.0)})
    with pytest.raises(ModelError, match="missing"):
        elastic(chain3, {"joint1": dict(stiffness=1.0)})
    em = elastic(chain3, {"joint1": dict(stiffness=1.0, axial_inertia=1.0, damping=0.5)})
    with pytest.raises(InfeasibleError, match="damping"):
        em.inverse_dynamics(*np.zeros((5, 3)))
    with pytest.raises(DqdynError, match="x"):
        em.mass_matrix(np.zeros(5))


@pytest.mark.slow
def test_feedback_linearisation_tracks_seven_dof_arm():
    """Spong's static feedback on a 7-DoF elastic arm (xArm7 with its URDF gear ratios, exact
    reduced model): RMS link tracking error below 1e-6 rad."""
    from dqdyn.reproduce.elastic import elastic_arm7, tracking

    em = elastic_arm7()
    assert em.n == 7 and em.m == 7
    t, q, qref, rms, _ = tracking(em, duration=1.0, n_out=101)
    assert rms < 1e-6, rms
