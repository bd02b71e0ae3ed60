"""Contact dynamics (3D point and 6D frame contacts) against Pinocchio's constraintDynamics and
against dqdyn's Udwadia–Kalaba solver, the contact accelerations (zero without Baumgarte gains,
the Baumgarte law with them), redundant contact sets, a standing quadruped, frame velocities /
accelerations against Pinocchio, and named errors."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose, translation_of
from dqdyn.errors import InfeasibleError, ModelError, NonFiniteError, ShapeError, SingularError, UnknownNameError

from _oracle import FEET, HANDS, a_from_pin, pin, pin_contacts, pin_state, rel, robot, state

CASES = [("solo12", "3d", FEET["solo12"]), ("anymal", "3d", FEET["anymal"]),
         ("solo12", "6d", FEET["solo12"][:2]), ("talos", "6d", FEET["talos"]),
         ("talos", "3d", FEET["talos"] + HANDS["talos"])]


def _ours(kind, frames, **kw):
    C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
    return [C(f, **kw) for f in frames]


@pytest.mark.parametrize("name,kind,frames", CASES)
@pytest.mark.parametrize("k", range(2))
def test_contact_dynamics_matches_pinocchio(name, kind, frames, k):
    model, pm = robot(name)
    pd = pm.createData()
    q, v, _, tau = state(model, k)
    qp, vp, T = pin_state(model, pm, q, v)
    cms, cds = pin_contacts(pm, frames, kind)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    ddq = pin.constraintDynamics(pm, pd, qp, vp, T @ tau, cms, cds, pin.ProximalSettings(1e-14, 0.0, 1))
    r = dqdyn.contact_dynamics(model, q, v, tau, _ours(kind, frames))
    assert rel(r.a, a_from_pin(model, pm, q, v, ddq)) < 1e-10
    assert rel(r.multipliers, pd.lambda_c) < 1e-10
    assert rel(np.concatenate(r.forces), pd.lambda_c) < 1e-10


@pytest.mark.parametrize("kind", ["3d", "6d"])
def test_baumgarte_terms_match_pinocchio(kind):
    model, pm = robot("solo12")
    pd = pm.createData()
    q, v, _, tau = state(model, 3)
    qp, vp, T = pin_state(model, pm, q, v)
    frames = FEET["solo12"][:2]
    ctype = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
    cms, cds, ours = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData(), []
    for j, f in enumerate(frames):
        fr = pm.frames[pm.getFrameId(f)]
        Tm = matrix_from_pose(dqdyn.frame_pose(model, q, f))
        tgt = np.eye(4)
        tgt[:3, :3] = Tm[:3, :3] @ pin.exp3(np.array([0.02, -0.01, 0.03 * (j + 1)]))
        tgt[:3, 3] = Tm[:3, 3] + [0.01, -0.02, 0.03]
        cm = pin.RigidConstraintModel(ctype, pm, fr.parentJoint, fr.placement, 0,
                                      pin.SE3(tgt[:3, :3].copy(), tgt[:3, 3].copy()), pin.LOCAL)
        cm.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(3.0, 2.0))
        cms.append(cm)
        cds.append(cm.createData())
        target = tgt[:3, 3] if kind == "3d" else tgt
        C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
        ours.append(C(f, kp=3.0, kd=2.0, target=target))
    pin.initConstraintDynamics(pm, pd, cms, cds)
    ddq = pin.constraintDynamics(pm, pd, qp, vp, T @ tau, cms, cds, pin.ProximalSettings(1e-14, 0.0, 1))
    r = dqdyn.contact_dynamics(model, q, v, tau, ours)
    assert rel(r.a, a_from_pin(model, pm, q, v, ddq)) < 1e-10
    assert rel(r.multipliers, pd.lambda_c) < 1e-10


@pytest.mark.parametrize("name,kind,frames", CASES)
def test_contact_accelerations_vanish(name, kind, frames):
    """Zero gains: the classical acceleration of each contact point (3D) or the spatial
    acceleration of each contact frame (6D) is zero."""
    model, _ = robot(name)
    q, v, _, tau = state(model, 5)
    r = dqdyn.contact_dynamics(model, q, v, tau, _ours(kind, frames))
    for f in frames:
        if kind == "3d":
            acc = dqdyn.frame_acceleration(model, q, v, r.a, f, "world_aligned", classical=True)[3:]
        else:
            acc = dqdyn.frame_acceleration(model, q, v, r.a, f, "body")
        assert np.abs(acc).max() < 1e-9 * (1 + np.abs(r.a).max())


def test_baumgarte_law_holds():
    """a_c + kd v_c + kp e = 0 on every contact (3D: e = Rᵀ (p − p*), all in the contact frame)."""
    model, _ = robot("anymal")
    q, v, _, tau = state(model, 2)
    cons = []
    for j, f in enumerate(FEET["anymal"]):
        p = translation_of(dqdyn.frame_pose(model, q, f))
        cons.append(dqdyn.PointContact(f, kp=25.0, kd=10.0, target=p + 0.01 * (j + 1)))
    r = dqdyn.contact_dynamics(model, q, v, tau, cons)
    for c in cons:
        x = dqdyn.frame_pose(model, q, c.frame)
        R, p = matrix_from_pose(x)[:3, :3], translation_of(x)
        vc = dqdyn.frame_velocity(model, q, v, c.frame, "body")[3:]
        ac = dqdyn.frame_acceleration(model, q, v, r.a, c.frame, "body", classical=True)[3:]
        e = R.T @ (p - c.target)
        assert np.abs(ac + 10.0 * vc + 25.0 * e).max() < 1e-9 * (1 + np.abs(ac).max())


@pytest.mark.parametrize("name,kind,frames", CASES[:3])
def test_the_contacts_are_constraints_for_udwadia_kalaba(name, kind, frames):
    """The same contact objects in dqdyn.constrained_forward_dynamics give the same v̇ and the
    same multipliers (both full rank here)."""
    model, _ = robot(name)
    q, v, _, tau = state(model, 1)
    cons = _ours(kind, frames)
    r = dqdyn.contact_dynamics(model, q, v, tau, cons)
    uk = dqdyn.constrained_forward_dynamics(model, q, v, tau, cons)
    assert rel(r.a, uk.qdd) < 1e-9
    assert rel(r.multipliers, uk.multipliers) < 1e-8


def test_redundant_contact_sets():
    """Three 6D feet on Solo-12 (18 rows, rank 15: the base and three 3-DoF legs) with the fourth
    leg swinging, and a doubled point contact: the proximal solve meets every contact, gives
    the pseudo-inverse (Udwadia–Kalaba) acceleration and the minimum-norm forces (the doubled
    contact splits its force in two halves); without regularisation the direct solve refuses."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 4)
    swing = np.zeros(model.nv)
    for j in ("HR_HAA", "HR_HFE", "HR_KFE"):
        swing[model.v_slice(j)] = v[model.v_slice(j)]
    cons = _ours("6d", FEET["solo12"][:3])
    A = np.concatenate([c.A(model, q) for c in cons])
    assert np.linalg.matrix_rank(A) == 15 and np.abs(A @ swing).max() < 1e-12
    r = dqdyn.contact_dynamics(model, q, swing, tau, cons)
    uk = dqdyn.constrained_forward_dynamics(model, q, swing, tau, cons)
    assert rel(r.a, uk.qdd) < 1e-8
    assert rel(r.multipliers, uk.multipliers) < 1e-6  # (both minimum-norm)
    for f in FEET["solo12"][:3]:
        acc = dqdyn.frame_acceleration(model, q, swing, r.a, f, "body")
        assert np.abs(acc).max() < 1e-8 * (1 + np.abs(r.a).max())
    with pytest.raises(SingularError, match="contacts"):
        dqdyn.contact_dynamics(model, q, swing, tau, cons, proximal=None)
    reg = dqdyn.contact_dynamics(model, q, swing, tau, cons, proximal=None, regularization=1e-10)
    assert np.all(np.isfinite(reg.a)) and rel(reg.a, r.a) < 1e-4
    # four welded feet lock every DoF: at rest nothing moves, whatever the torques
    four = dqdyn.contact_dynamics(model, q, np.zeros(model.nv), tau, _ours("6d", FEET["solo12"]))
    assert np.abs(four.a).max() < 1e-9
    one = dqdyn.contact_dynamics(model, q, v, tau, _ours("3d", FEET["solo12"]))
    two = dqdyn.contact_dynamics(model, q, v, tau, _ours("3d", FEET["solo12"] + FEET["solo12"][:1]))
    assert rel(two.a, one.a) < 1e-9
    # (the halves to what the proximal solve pins: its null-space share is rounding amplified by
    # 1/μ, u/μ ≈ 1e-8 times the conditioning, and the LAPACK kernels, so the CPU, set the bits:
    # 2e-7 seen on an AVX-512 AMD CPU, below 1e-8 on an Intel one)
    assert rel(two.forces[0], one.forces[0] / 2) < 1e-6 and rel(two.forces[4], one.forces[0] / 2) < 1e-6


def test_inconsistent_contacts_are_refused():
    """A point held at zero acceleration twice with different Baumgarte targets cannot be met."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 0)
    p = translation_of(dqdyn.frame_pose(model, q, "FL_FOOT"))
    cons = [dqdyn.PointContact("FL_FOOT", kp=10.0, target=p),
            dqdyn.PointContact("FL_FOOT", kp=10.0, target=p + 0.1)]
    with pytest.raises(InfeasibleError, match="contacts"):
        dqdyn.contact_dynamics(model, q, v, tau, cons)


def test_standing_quadruped_forces_sum_to_its_weight():
    """At rest, with the joint torques of a static stance, the four feet carry the weight and
    nothing moves."""
    model, _ = robot("solo12")
    q = dqdyn.neutral(model)
    q[model.q_slice("FL_KFE")] = q[model.q_slice("FR_KFE")] = -1.6
    q[model.q_slice("HL_KFE")] = q[model.q_slice("HR_KFE")] = 1.6
    for j in ("FL_HFE", "FR_HFE"):
        q[model.q_slice(j)] = 0.8
    for j in ("HL_HFE", "HR_HFE"):
        q[model.q_slice(j)] = -0.8
    v = np.zeros(model.nv)
    cons = _ours("3d", FEET["solo12"])
    J = np.concatenate([dqdyn.twist_jacobian(model, q, f, "body")[3:] for f in FEET["solo12"]])
    g = dqdyn.gravity(model, q)
    lam = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]  # the base's balance
    tau = g - J.T @ lam
    tau[:6] = 0.0
    r = dqdyn.contact_dynamics(model, q, v, tau, cons)
    assert np.abs(r.a).max() < 1e-9
    total = sum(matrix_from_pose(dqdyn.frame_pose(model, q, f))[:3, :3] @ F
                for f, F in zip(FEET["solo12"], r.forces))
    assert np.allclose(total, -model.total_mass * np.asarray(model.gravity), atol=1e-9)


def test_batches_are_the_states_one_by_one():
    model, _ = robot("solo12")
    S = [state(model, k) for k in range(3)]
    qs, vs, ts = (np.stack([s[i] for s in S]) for i in (0, 1, 3))
    cons = _ours("3d", FEET["solo12"])
    r = dqdyn.contact_dynamics(model, qs, vs, ts, cons)
    assert r.a.shape == (3, model.nv) and r.forces[0].shape == (3, 3) and r.multipliers.shape == (3, 12)
    for k in range(3):
        one = dqdyn.contact_dynamics(model, qs[k], vs[k], ts[k], cons)
        assert np.allclose(r.a[k], one.a, rtol=0, atol=1e-12)
        assert np.allclose(r.multipliers[k], one.multipliers, rtol=0, atol=1e-12)
    # one torque for every state broadcasts
    assert dqdyn.contact_dynamics(model, qs, vs, ts[0], cons).a.shape == (3, model.nv)


@pytest.mark.parametrize("name", ["solo12", "talos"])
def test_frame_velocity_and_accelerations_match_pinocchio(name):
    model, pm = robot(name)
    pd = pm.createData()
    q, v, a, _ = state(model, 6)
    qp, vp, T, ap = pin_state(model, pm, q, v, a)
    pin.forwardKinematics(pm, pd, qp, vp, ap)
    pin.updateFramePlacements(pm, pd)
    sw = lambda x: np.r_[x[3:], x[:3]]  # noqa: E731  ([v; ω] → [ω; v])
    for f in FEET[name]:
        fid = pm.getFrameId(f)
        for ref, pref in (("body", pin.LOCAL), ("world_aligned", pin.LOCAL_WORLD_ALIGNED),
                          ("spatial", pin.WORLD)):
            assert rel(dqdyn.frame_velocity(model, q, v, f, ref), sw(pin.getFrameVelocity(pm, pd, fid, pref).vector)) < 1e-10
            assert rel(dqdyn.frame_acceleration(model, q, v, a, f, ref),
                       sw(pin.getFrameAcceleration(pm, pd, fid, pref).vector)) < 1e-10
            assert rel(dqdyn.frame_acceleration(model, q, v, a, f, ref, classical=True),
                       sw(pin.getFrameClassicalAcceleration(pm, pd, fid, pref).vector)) < 1e-10


def test_classical_acceleration_is_the_second_derivative_of_the_origin():
    """Independent of Pinocchio: p̈ of a foot is the derivative of ṗ(q, v) along the state curve
    q(s) = q ⊕ s v, v(s) = v + s a (at s = 0 it has q̇ = v, v̇ = a), by central differences."""
    model, _ = robot("anymal")
    q, v, a, _ = state(model, 8)
    h = 1e-5
    f = "LF_FOOT"

    def pdot(s):
        return dqdyn.frame_velocity(model, dqdyn.integrate(model, q, v, s), v + s * a, f,
                                    "world_aligned")[3:]

    num = (pdot(h) - pdot(-h)) / (2 * h)
    got = dqdyn.frame_acceleration(model, q, v, a, f, "world_aligned", classical=True)[3:]
    assert np.allclose(got, num, atol=1e-5 * (1 + np.abs(got).max()))


def test_bad_input_is_named():
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 0)
    cons = _ours("3d", FEET["solo12"])
    with pytest.raises(UnknownNameError, match="NO_SUCH_FOOT"):
        dqdyn.contact_dynamics(model, q, v, tau, [dqdyn.PointContact("NO_SUCH_FOOT")])
    with pytest.raises(UnknownNameError, match="NO_SUCH_FOOT"):
        dqdyn.frame_velocity(model, q, v, "NO_SUCH_FOOT", "body")
    with pytest.raises(ShapeError, match="reference"):
        dqdyn.frame_velocity(model, q, v, "FL_FOOT", "LOCAL")
    with pytest.raises(ShapeError, match="tau"):
        dqdyn.contact_dynamics(model, q, v, tau[:-1], cons)
    with pytest.raises(ShapeError, match="q"):
        dqdyn.contact_dynamics(model, q[:-2], v, tau, cons)
    with pytest.raises(NonFiniteError, match="v"):
        dqdyn.contact_dynamics(model, q, np.full(model.nv, np.inf), tau, cons)
    with pytest.raises(ShapeError, match="batch"):
        dqdyn.contact_dynamics(model, np.stack([q, q]), np.stack([v, v, v]), tau, cons)
    with pytest.raises(ModelError, match="contacts"):
        dqdyn.contact_dynamics(model, q, v, tau, "FL_FOOT")
    with pytest.raises(ModelError, match="contacts"):
        dqdyn.contact_dynamics(model, q, v, tau, [object()])
    with pytest.raises(ShapeError, match="regularization"):
        dqdyn.contact_dynamics(model, q, v, tau, cons, regularization=-1.0)
    with pytest.raises(ShapeError, match="proximal"):
        dqdyn.contact_dynamics(model, q, v, tau, cons, proximal=0.0)
    with pytest.raises(ShapeError, match="kd"):
        dqdyn.PointContact("FL_FOOT", kd=-1.0)
    with pytest.raises(ModelError, match="target"):
        dqdyn.PointContact("FL_FOOT", kp=1.0)
    with pytest.raises(ShapeError, match="target"):
        dqdyn.FrameContact("FL_FOOT", target=np.zeros(3))
