"""The compiled contact and impulse dynamics (`dqdyn.contact._kernels`: one kernel call per state
or batch) against the numpy path they replace (`_contact_dynamics_numpy`,
`_impulse_dynamics_numpy`: compiled M, h and frame kinematics, then `_kkt.solve`) and against
Pinocchio's ``constraintDynamics`` / ``impulseDynamics``: 3D and 6D contacts, Baumgarte gains,
regularisation, redundant sets (left to the numpy path), batches state by state, errors."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK
from dqdyn.algebra.rotations import matrix_from_pose, translation_of
from dqdyn.contact import _kkt
from dqdyn.contact.dynamics import _contact_dynamics_numpy, stacked_rows
from dqdyn.contact.impulse import _impulse_dynamics_numpy
from dqdyn.errors import InfeasibleError, NonFiniteError, NotUnitError, SingularError

from _oracle import FEET, HANDS, a_from_pin, pin, pin_contacts, pin_state, rel, robot, state

CASES = [("solo12", "3d", FEET["solo12"]), ("anymal", "3d", FEET["anymal"]),
         ("solo12", "6d", FEET["solo12"][:2]), ("talos", "6d", FEET["talos"]),
         ("talos", "3d", FEET["talos"] + HANDS["talos"])]
SETTINGS = {"proximal": (0.0, 1e-8, 50, 1e-12), "direct": (0.0, None, 50, 1e-12),
            "regularised": (1e-9, None, 50, 1e-12), "proximal+eps": (1e-9, 1e-8, 50, 1e-12)}


def _ours(kind, frames, **kw):
    C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
    return [C(f, **kw) for f in frames]


def _close(x, y, tol=1e-12):
    """``|x − y| ≤ tol · |y|`` (largest entries)."""
    x, y = np.asarray(x), np.asarray(y)
    return float(np.abs(x - y).max()) <= tol * float(np.abs(y).max())


def _lam_tol(model, q, v, cons):
    """1e-12, or the round-off ``ε κ(G)`` of the multipliers where the Delassus matrix ``G`` is
    worse conditioned (Solo-12's two welded feet: κ ≈ 1.5·10⁴, the two paths' multipliers and
    impulse velocities differ by up to 1.4·10⁻¹² of the largest)."""
    A, _ = stacked_rows(model, q[None], v[None], cons)
    G = A[0] @ np.linalg.solve(dqdyn.mass_matrix(model, q), A[0].T)
    return max(1e-12, np.finfo(float).eps * np.linalg.cond(G))


def _baumgarte(model, q, frames, kind):
    """Contacts with gains and targets off the current pose (as Pinocchio's Baumgarte corrector
    test of test_contact_dynamics)."""
    out = []
    for j, f in enumerate(frames):
        Tm = matrix_from_pose(dqdyn.frame_pose(model, q, f))
        c, s = np.cos(0.03 * (j + 1)), np.sin(0.03 * (j + 1))
        tgt = np.eye(4)
        tgt[:3, :3] = Tm[:3, :3] @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
        tgt[:3, 3] = Tm[:3, 3] + [0.01, -0.02, 0.03]
        target = tgt[:3, 3] if kind == "3d" else tgt
        C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
        out.append(C(f, kp=3.0, kd=2.0, target=target))
    return out


@pytest.mark.parametrize("name,kind,frames", CASES)
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_compiled_equals_numpy_path(name, kind, frames, setting):
    model, _ = robot(name)
    eps, mu, it, tol = SETTINGS[setting]
    for k in range(2):
        q, v, _, tau = state(model, k)
        for cons in (_ours(kind, frames), _baumgarte(model, q, frames, kind)):
            Q, V, T = q[None], v[None], tau[None]
            lt = _lam_tol(model, q, v, cons)
            got = _kkt.compiled(model, Q, V, T, cons, eps, mu, it, tol)
            assert got is not None  # (the kernel ran: no fallback)
            a, lam, its = _contact_dynamics_numpy(model, Q, V, T, cons, eps, mu, it, tol)
            assert _close(got[0], a) and _close(got[1], lam, lt)
            assert np.array_equal(got[2], its)
            r = dqdyn.contact_dynamics(model, q, v, tau, cons, regularization=eps, proximal=mu)
            assert np.array_equal(r.a, got[0][0]) and np.array_equal(r.multipliers, got[1][0])
            for e in (0.0, 0.7):
                got = _kkt.compiled(model, Q, V, None, cons, eps, mu, it, tol, e, impulse=True)
                assert got is not None
                vp, lam, its = _impulse_dynamics_numpy(model, Q, V, cons, e, eps, mu, it, tol)
                # (v⁺ = v⁻ + M⁻¹ Aᵀ Λ carries the impulses' round-off)
                assert _close(got[0], vp, lt) and _close(got[1], lam, lt) and np.array_equal(got[2], its)


@pytest.mark.parametrize("name,kind,frames", CASES)
def test_compiled_matches_pinocchio(name, kind, frames):
    model, pm = robot(name)
    pd = pm.createData()
    q, v, _, tau = state(model, 7)
    qp, vp, T = pin_state(model, pm, q, v)
    cms, cds = pin_contacts(pm, frames, kind)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    ours = _ours(kind, frames)
    for mu, settings in ((None, pin.ProximalSettings(1e-14, 0.0, 1)),
                         (1e-8, pin.ProximalSettings(1e-14, 1e-8, 50))):
        ddq = pin.constraintDynamics(pm, pd, qp, vp, T @ tau, cms, cds, settings)
        r = dqdyn.contact_dynamics(model, q, v, tau, ours, proximal=mu)
        assert rel(r.a, a_from_pin(model, pm, q, v, ddq)) < 1e-10
        assert rel(r.multipliers, pd.lambda_c) < 1e-10
    for e in (0.0, 0.5):
        vq = pin.impulseDynamics(pm, pd, qp, vp, cms, cds, e, pin.ProximalSettings(1e-14, 0.0, 1))
        r = dqdyn.impulse_dynamics(model, q, v, ours, e, proximal=None)
        assert rel(r.v, T.T @ vq) < 1e-10
        assert rel(r.multipliers, pd.impulse_c) < 1e-10


@pytest.mark.parametrize("kind", ["3d", "6d"])
def test_baumgarte_gains_match_pinocchio(kind):
    model, pm = robot("talos")
    pd = pm.createData()
    q, v, _, tau = state(model, 3)
    qp, vp, T = pin_state(model, pm, q, v)
    frames = FEET["talos"]
    ours = _baumgarte(model, q, frames, kind)
    ctype = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for f, c in zip(frames, ours):
        fr = pm.frames[pm.getFrameId(f)]
        tgt = np.eye(4)
        if kind == "3d":
            tgt[:3, 3] = c.target
        else:
            tgt[:3, :3], tgt[:3, 3] = c.target
        cm = pin.RigidConstraintModel(ctype, pm, fr.parentJoint, fr.placement, 0,
                                      pin.SE3(tgt[:3, :3].copy(), tgt[:3, 3].copy()), pin.LOCAL)
        cm.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(3.0, 2.0))
        cms.append(cm)
        cds.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    ddq = pin.constraintDynamics(pm, pd, qp, vp, T @ tau, cms, cds, pin.ProximalSettings(1e-14, 0.0, 1))
    assert _kkt.compiled(model, q[None], v[None], tau[None], ours, 0.0, 1e-8, 50, 1e-12) is not None
    r = dqdyn.contact_dynamics(model, q, v, tau, ours)
    assert rel(r.a, a_from_pin(model, pm, q, v, ddq)) < 1e-10
    assert rel(r.multipliers, pd.lambda_c) < 1e-10


def test_redundant_sets_take_the_numpy_path():
    """Three welded feet of Solo-12 (18 rows, rank 15) and a doubled point contact: the kernel
    leaves them to the numpy path, so the results are its bits (and its minimum-norm split)."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 4)
    swing = np.zeros(model.nv)  # (the three welded feet at rest: consistent drifts)
    for j in ("HR_HAA", "HR_HFE", "HR_KFE"):
        swing[model.v_slice(j)] = v[model.v_slice(j)]
    for cons, vel in ((_ours("6d", FEET["solo12"][:3]), swing),
                      (_ours("3d", FEET["solo12"] + FEET["solo12"][:1]), v)):
        Q, V, T = q[None], vel[None], tau[None]
        for eps, mu in ((0.0, 1e-8), (1e-10, None), (1e-10, 1e-8)):
            assert _kkt.compiled(model, Q, V, T, cons, eps, mu, 50, 1e-12) is None
            ref = _contact_dynamics_numpy(model, Q, V, T, cons, eps, mu, 50, 1e-12)
            r = dqdyn.contact_dynamics(model, q, vel, tau, cons, regularization=eps, proximal=mu)
            assert np.array_equal(r.a, ref[0][0]) and np.array_equal(r.multipliers, ref[1][0])
            ri = dqdyn.impulse_dynamics(model, q, vel, cons, 0.3, regularization=eps, proximal=mu)
            ref = _impulse_dynamics_numpy(model, Q, V, cons, 0.3, eps, mu, 50, 1e-12)
            assert np.array_equal(ri.v, ref[0][0]) and np.array_equal(ri.multipliers, ref[1][0])
        with pytest.raises(SingularError, match="contacts"):
            dqdyn.contact_dynamics(model, q, vel, tau, cons, proximal=None)


@pytest.mark.parametrize("name,kind,frames", [CASES[0], CASES[3], CASES[4]])
def test_batches_are_the_single_states_bit_for_bit(name, kind, frames):
    """A small batch (the serial batch kernel) and one above the serial threshold (the thread
    pool): every state the bits of its own single call, for contact and impulse dynamics."""
    model, _ = robot(name)
    n_big = SERIAL_WORK // (model.nbodies + 1) + 3
    S = [state(model, k) for k in range(n_big)]
    Q, V, T = (np.stack([s[i] for s in S]) for i in (0, 1, 3))
    cons = _ours(kind, frames, kd=1.5)
    for N in (4, n_big):
        r = dqdyn.contact_dynamics(model, Q[:N], V[:N], T[:N], cons)
        ri = dqdyn.impulse_dynamics(model, Q[:N], V[:N], cons, 0.5)
        for k in (0, N // 2, N - 1):
            one = dqdyn.contact_dynamics(model, Q[k], V[k], T[k], cons)
            assert np.array_equal(r.a[k], one.a) and np.array_equal(r.multipliers[k], one.multipliers)
            assert r.iterations[k] == one.iterations
            one = dqdyn.impulse_dynamics(model, Q[k], V[k], cons, 0.5)
            assert np.array_equal(ri.v[k], one.v) and np.array_equal(ri.multipliers[k], one.multipliers)
    # the compiled batch equals the numpy path's batch to round-off
    a, lam, _ = _contact_dynamics_numpy(model, Q[:4], V[:4], T[:4], cons, 0.0, 1e-8, 50, 1e-12)
    r = dqdyn.contact_dynamics(model, Q[:4], V[:4], T[:4], cons)
    assert _close(r.a, a) and _close(r.multipliers, lam)


def test_no_contacts_is_the_free_dynamics():
    model, _ = robot("anymal")
    q, v, _, tau = state(model, 1)
    r = dqdyn.contact_dynamics(model, q, v, tau, [])
    assert r.multipliers.shape == (0,) and _close(r.a, dqdyn.aba(model, q, v, tau), 1e-11)
    ri = dqdyn.impulse_dynamics(model, q, v, [])
    assert _close(ri.v, v, 1e-12)


def test_errors_are_the_numpy_paths():
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 0)
    cons = _ours("3d", FEET["solo12"])
    bad = q.copy()
    bad[3:7] *= 1.1  # the free joint's rotation off the unit sphere
    with pytest.raises(NotUnitError):
        dqdyn.contact_dynamics(model, bad, v, tau, cons)
    with pytest.raises(NotUnitError, match="batch element 1"):
        dqdyn.contact_dynamics(model, np.stack([q, bad]), v, tau, cons)
    for name, args in (("v", (q, v * np.nan, tau)), ("tau", (q, v, tau * np.inf)), ("q", (q * np.nan, v, tau))):
        with pytest.raises(NonFiniteError, match=name):
            dqdyn.contact_dynamics(model, *args, cons)
    with pytest.raises(NonFiniteError, match="v"):
        dqdyn.impulse_dynamics(model, q, v * np.nan, cons)
    p = translation_of(dqdyn.frame_pose(model, q, "FL_FOOT"))
    clash = [dqdyn.PointContact("FL_FOOT", kp=10.0, target=p),
             dqdyn.PointContact("FL_FOOT", kp=10.0, target=p + 0.1)]
    with pytest.raises(InfeasibleError, match="contacts"):
        dqdyn.contact_dynamics(model, q, v, tau, clash)


def test_contact_table_follows_the_gains():
    """The cached kernel rows follow a contact's gains and target when they are changed."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 2)
    c = dqdyn.PointContact("FL_FOOT")
    free = dqdyn.contact_dynamics(model, q, v, tau, [c])
    c.kd = 4.0
    damped = dqdyn.contact_dynamics(model, q, v, tau, [c])
    ref = dqdyn.contact_dynamics(model, q, v, tau, [dqdyn.PointContact("FL_FOOT", kd=4.0)])
    assert not np.array_equal(free.a, damped.a) and np.array_equal(damped.a, ref.a)


def test_consecutive_results_do_not_share_memory():
    """Two calls on the same model, contact list and settings (the front's cached plan) return
    arrays of their own: the second call leaves the first result as it was."""
    model, _ = robot("anymal")
    q, v, _, tau = state(model, 3)
    cons = _ours("3d", FEET["anymal"])
    for call in (lambda s: dqdyn.contact_dynamics(model, s[0], s[1], s[2], cons),
                 lambda s: dqdyn.contact_dynamics(model, s[0], s[1], s[2], cons, proximal=None),
                 lambda s: dqdyn.impulse_dynamics(model, s[0], s[1], cons, 0.5)):
        first = call((q, v, tau))
        kept = [np.copy(x) for x in first[:1] + first[1] + first[2:3]]
        second = call((q, 2.0 * v, 3.0 * tau))
        a1, a2 = (first[0], second[0]), (first[2], second[2])
        for x, y in (a1, a2, *zip(first[1], second[1])):
            assert not np.shares_memory(x, y)
        assert not np.shares_memory(first.iterations, second.iterations)
        assert all(np.array_equal(x, y) for x, y in zip(kept, first[:1] + first[1] + first[2:3]))
        assert not np.array_equal(first[0], second[0])


def test_a_cached_plan_follows_the_contacts():
    """The same list object, called again after a contact's gains, target or frame change or
    after the list itself changes, gives the result of freshly made contacts."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 2)
    cons = [dqdyn.PointContact("FL_FOOT"), dqdyn.PointContact("FR_FOOT")]
    free = dqdyn.contact_dynamics(model, q, v, tau, cons)
    imp = dqdyn.impulse_dynamics(model, q, v, cons)
    cons[0].kd = 4.0
    ref = dqdyn.contact_dynamics(model, q, v, tau, [dqdyn.PointContact("FL_FOOT", kd=4.0),
                                                     dqdyn.PointContact("FR_FOOT")])
    damped = dqdyn.contact_dynamics(model, q, v, tau, cons)
    assert not np.array_equal(free.a, damped.a) and np.array_equal(damped.a, ref.a)
    p = translation_of(dqdyn.frame_pose(model, q, "FL_FOOT"))
    cons[0].target = p + 0.01
    cons[0].kp = 100.0
    ref = dqdyn.contact_dynamics(model, q, v, tau, [dqdyn.PointContact("FL_FOOT", kp=100.0, kd=4.0,
                                                                       target=p + 0.01),
                                                     dqdyn.PointContact("FR_FOOT")])
    assert np.array_equal(dqdyn.contact_dynamics(model, q, v, tau, cons).a, ref.a)
    cons[1].frame = "HL_FOOT"
    cons.append(dqdyn.PointContact("HR_FOOT"))
    fresh = [dqdyn.PointContact("FL_FOOT", kp=100.0, kd=4.0, target=p + 0.01),
             dqdyn.PointContact("HL_FOOT"), dqdyn.PointContact("HR_FOOT")]
    r = dqdyn.contact_dynamics(model, q, v, tau, cons)
    assert r.multipliers.shape == (9,) and len(r.forces) == 3
    assert np.array_equal(r.a, dqdyn.contact_dynamics(model, q, v, tau, fresh).a)
    ri = dqdyn.impulse_dynamics(model, q, v, cons)
    assert ri.multipliers.shape == (9,) and not np.array_equal(ri.v, imp.v)
    assert np.array_equal(ri.v, dqdyn.impulse_dynamics(model, q, v, fresh).v)
    with pytest.raises(dqdyn.errors.ShapeError, match="kd"):
        cons[0].kd = -1.0
