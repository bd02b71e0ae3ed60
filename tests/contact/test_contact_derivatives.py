"""Analytic derivatives of the contact dynamics (`dqdyn.contact_dynamics_derivatives`) against
Pinocchio's ``computeConstraintDynamicsDerivatives`` (3D and 6D LOCAL contacts, Baumgarte
correctors) and against central finite differences of `dqdyn.contact_dynamics` (along
`dqdyn.integrate` for q; a regularized set, a random floating-base tree, a fixed-base arm with its
tool welded), plus batches and named bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dqdyn
from dqdyn._engine.gate import GATE
from dqdyn.algebra.rotations import matrix_from_pose

from _oracle import FEET, HANDS, pin, pin_contacts, pin_state, rel, robot, state
from pinconv import ROBOTS as ALL
from pinconv import erd

CASES = [("solo12", "3d", FEET["solo12"]), ("anymal", "3d", FEET["anymal"]),
         ("solo12", "6d", FEET["solo12"][:2]), ("talos", "6d", FEET["talos"]),
         ("talos", "3d", FEET["talos"] + HANDS["talos"])]
FIELDS = ("da_dq", "da_dv", "da_dtau", "dlambda_dq", "dlambda_dv", "dlambda_dtau")
SETTINGS = (1e-14, 0.0, 1)


def pin_derivatives(model, pm, q, v, tau, cms, cds):
    """Pinocchio's six matrices, rows and columns in dqdyn's ``v`` order."""
    pd = pm.createData()
    qp, vp, T = pin_state(model, pm, q, v)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    pin.constraintDynamics(pm, pd, qp, vp, T @ tau, cms, cds, pin.ProximalSettings(*SETTINGS))
    r = pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, pin.ProximalSettings(*SETTINGS))
    return [T.T @ x @ T for x in r[:3]] + [x @ T for x in r[3:]]


def fd_derivatives(model, q, v, tau, contacts, h=1e-6, **kw):
    def f(q, v, t):
        r = dqdyn.contact_dynamics(model, q, v, t, contacts, **kw)
        return np.r_[r.a, r.multipliers]

    I = np.eye(model.nv) * h
    D = [np.column_stack([f(dqdyn.integrate(model, q, e), v, tau) - f(dqdyn.integrate(model, q, -e), v, tau)
                          for e in I]),
         np.column_stack([f(q, v + e, tau) - f(q, v - e, tau) for e in I]),
         np.column_stack([f(q, v, tau + e) - f(q, v, tau - e) for e in I])]
    D = [x / (2 * h) for x in D]
    nv = model.nv
    return [x[:nv] for x in D] + [x[nv:] for x in D]


def check(ours, theirs, tol):
    for name, x, y in zip(FIELDS, ours, theirs):
        assert x.shape == y.shape, name
        assert rel(x, y) < tol, (name, rel(x, y))


def _contacts(kind, frames, **kw):
    C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
    return [C(f, **kw) for f in frames]


@pytest.mark.parametrize("name,kind,frames", CASES)
@pytest.mark.parametrize("k", range(2))
def test_matches_pinocchio(name, kind, frames, k):
    model, pm = robot(name)
    q, v, _, tau = state(model, k)
    cms, cds = pin_contacts(pm, frames, kind)
    ours = dqdyn.contact_dynamics_derivatives(model, q, v, tau, _contacts(kind, frames))
    check(ours, pin_derivatives(model, pm, q, v, tau, cms, cds), 1e-9)


@pytest.mark.parametrize("kind", ["3d", "6d"])
@pytest.mark.parametrize("kp,kd", [(0.0, 2.0), (300.0, 0.0), (300.0, 20.0)])
def test_baumgarte_terms_match_pinocchio(kind, kp, kd):
    """Strong gains, targets off the current pose: the corrector's derivatives (``∂e/∂q`` by the
    inverse right Jacobian of SE(3) for a frame) weigh in."""
    model, pm = robot("solo12")
    q, v, _, tau = state(model, 3)
    frames = FEET["solo12"][:2]
    ctype = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
    cms, cds, ours = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData(), []
    for j, f in enumerate(frames):
        fr = pm.frames[pm.getFrameId(f)]
        Tm = matrix_from_pose(dqdyn.frame_pose(model, q, f))
        tgt = np.eye(4)
        tgt[:3, :3] = Tm[:3, :3] @ pin.exp3(np.array([0.2, -0.1, 0.3 * (j + 1)]))
        tgt[:3, 3] = Tm[:3, 3] + [0.05, -0.02, 0.03]
        cm = pin.RigidConstraintModel(ctype, pm, fr.parentJoint, fr.placement, 0,
                                      pin.SE3(tgt[:3, :3].copy(), tgt[:3, 3].copy()), pin.LOCAL)
        cm.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(kp, kd))
        cms.append(cm)
        cds.append(cm.createData())
        target = (tgt[:3, 3] if kind == "3d" else tgt) if kp else None
        C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
        ours.append(C(f, kp=kp, kd=kd, target=target))
    got = dqdyn.contact_dynamics_derivatives(model, q, v, tau, ours)
    check(got, pin_derivatives(model, pm, q, v, tau, cms, cds), 1e-9)


def _floating_tree():
    b = dqdyn.ModelBuilder("floating")
    b.add_body("base", joint="free", mass=4.0, com=[0.02, -0.01, 0.03],
               inertia=np.diag([0.1, 0.12, 0.09]))
    b.add_model(dqdyn.random_tree(8, joint_types=dqdyn.multibody.builders.ALL_JOINT_TYPES, seed=3),
                "base", prefix="t_", xyz=[0.1, 0, 0.05])
    return b.build()


@pytest.mark.parametrize("case", ["regularized", "floating_tree", "fixed_arm"])
def test_finite_differences(case):
    kw = {}
    if case == "regularized":  # a compliant frame contact (ε > 0)
        model, _ = robot("solo12")
        contacts = _contacts("6d", FEET["solo12"][:2])
        kw = {"regularization": 1e-3}
    elif case == "floating_tree":  # every joint type (the hung model's route: a planar joint);
        # a point on the tree and a welded offset frame, both with a kd (a mixed set whose terms
        # ∂ν/∂q are taken together), the frame with a kp and a target (its error log(x*⁻¹ x))
        model = _floating_tree()
        target = np.eye(4)
        target[:3, :3] = Rotation.from_rotvec([0.3, 0.2, -0.4]).as_matrix()
        target[:3, 3] = [0.2, -0.1, 0.3]
        contacts = [dqdyn.PointContact(model.nbodies, kd=1.0),
                    dqdyn.FrameContact((4, [0.05, -0.02, 0.1]), kd=2.0, kp=5.0, target=target)]
    else:  # a fixed-base arm with its tool welded: all six rows, 6 DoF
        model = dqdyn.load_urdf(erd(ALL["ur5"][0]))
        contacts = [dqdyn.FrameContact(model.nbodies)]
    rng = np.random.default_rng(17)
    q = dqdyn.random_configuration(model, seed=rng)
    v, tau = rng.normal(size=(2, model.nv))
    ours = dqdyn.contact_dynamics_derivatives(model, q, v, tau, contacts, **kw)
    check(ours, fd_derivatives(model, q, v, tau, contacts, **kw), 1e-6)


def test_batches_are_the_states_one_by_one():
    model, _ = robot("solo12")
    Q, V, _, TAU = (np.stack([state(model, k)[i] for k in range(3)]) for i in range(4))
    contacts = _contacts("3d", FEET["solo12"][:3])
    out = dqdyn.contact_dynamics_derivatives(model, Q.reshape(3, 1, -1), V[:, None], TAU[:, None],
                                             contacts)
    assert out.da_dq.shape == (3, 1, model.nv, model.nv) and out.dlambda_dv.shape == (3, 1, 9, model.nv)
    for k in range(3):
        one = dqdyn.contact_dynamics_derivatives(model, Q[k], V[k], TAU[k], contacts)
        for x, y in zip(out, one):
            np.testing.assert_allclose(x[k, 0], y, rtol=0, atol=1e-12 * (1 + np.abs(y).max()))


def test_tau_derivatives_are_the_kkt_inverse():
    """``∂a/∂τ = M⁻¹ − M⁻¹Aᵀ D A M⁻¹`` and, λ entering ``M a − Aᵀλ = τ − h``,
    ``∂λ/∂τ = −D A M⁻¹`` with ``D = (A M⁻¹ Aᵀ)⁻¹`` [Featherstone2008, ch. 8]."""
    model, _ = robot("anymal")
    q, v, _, tau = state(model, 6)
    contacts = _contacts("3d", FEET["anymal"])
    r = dqdyn.contact_dynamics_derivatives(model, q, v, tau, contacts)
    Mi = np.linalg.inv(dqdyn.mass_matrix(model, q))
    A = np.concatenate([c.rows(model, q[None], v[None])[0][0] for c in contacts])
    D = np.linalg.inv(A @ Mi @ A.T)
    assert rel(r.da_dtau, Mi - Mi @ A.T @ D @ A @ Mi) < 1e-10
    assert rel(r.dlambda_dtau, -D @ A @ Mi) < 1e-10


def test_bad_input_is_named():
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 0)
    f = dqdyn.contact_dynamics_derivatives
    feet = _contacts("3d", FEET["solo12"])
    with pytest.raises(dqdyn.errors.ShapeError, match="tau"):
        f(model, q, v, tau[:-1], feet)
    with pytest.raises(dqdyn.errors.NonFiniteError, match="v"):
        f(model, q, np.full(model.nv, np.nan), tau, feet)
    with pytest.raises(dqdyn.errors.ModelError, match="contacts"):
        f(model, q, v, tau, "FL_FOOT")
    with pytest.raises(dqdyn.errors.UnknownNameError):
        f(model, q, v, tau, [dqdyn.PointContact("no_such_frame")])
    with pytest.raises(dqdyn.errors.ShapeError, match="regularization"):
        f(model, q, v, tau, feet, regularization=-1.0)
    with pytest.raises(dqdyn.errors.SingularError, match="contacts"):  # the same foot twice
        f(model, q, v, tau, feet + feet[:1])


@pytest.mark.parametrize("name, kind", [("solo12", "3d"), ("solo12", "6d"), ("talos", "6d")])
def test_compiled_and_numpy_eliminations_agree(name, kind, monkeypatch):
    """The compiled route (contact rows from the model's sweep, `kkt_derivatives`; BLAS products
    from ``BLAS_FROM`` velocity coordinates on, Talos) and the numpy one (the hung model, then
    `_kkt_numpy`: the route of a mass matrix the kernel declines) give the same six matrices, with
    a regularised set too, and both reject a redundant set."""
    from dqdyn.contact import derivatives as D

    model, _ = robot(name)
    q, v, _, tau = state(model, 3)
    feet = _contacts(kind, FEET[name] if kind == "3d" else FEET[name][:2])
    f = dqdyn.contact_dynamics_derivatives
    compiled = [f(model, q, v, tau, feet), f(model, q, v, tau, feet, regularization=1e-6)]
    with pytest.raises(dqdyn.errors.SingularError, match="contacts"):
        f(model, q, v, tau, feet + feet[:1])
    plan = D._plan

    def hung_route(*args):
        p = plan(*args)
        p.args = p.layout = None  # (neither the gate nor the compiled calls)
        return p

    monkeypatch.setattr(D, "_plan", hung_route)
    monkeypatch.setattr(D, "_PLANS", {})
    monkeypatch.setattr(D, "kkt_derivatives", lambda *args: D.KKT_M_NOT_PD)
    numpy = [f(model, q, v, tau, feet), f(model, q, v, tau, feet, regularization=1e-6)]
    for x, y in zip(compiled, numpy):
        check(x, y, 1e-10)
    assert rel(compiled[0].dlambda_dq, compiled[1].dlambda_dq) > 1e-9  # (the regularisation acts)
    with pytest.raises(dqdyn.errors.SingularError, match="contacts"):
        f(model, q, v, tau, feet + feet[:1])


def _tree_with_feet(types, seed):
    """A floating base carrying a random tree of ``types`` joints, three points on it held."""
    b = dqdyn.ModelBuilder("tree")
    b.add_body("base", joint="free", mass=3.0, inertia=np.diag([0.1, 0.12, 0.09]))
    b.add_model(dqdyn.random_tree(8, joint_types=types, seed=seed), "base", prefix="t_")
    model = b.build()
    n = model.nbodies
    return model, [dqdyn.PointContact((n, [0.1, 0.0, 0.2])), dqdyn.PointContact((n - 2, [0.0, -0.1, 0.05])),
                   dqdyn.PointContact((3, [0.3, 0.1, 0.0]))]


@pytest.mark.parametrize("types", [("revolute", "prismatic"), ("revolute", "spherical"),
                                   ("revolute", "cylindrical", "helical")])
def test_compiled_route_is_the_hung_model_route(types, monkeypatch):
    """A contact set takes one compiled call whose contact rows come from the model's own forward
    sweep (`contact_rows`); the hung model's inverse dynamics (module docstring of
    `dqdyn.contact.derivatives`) give the same six matrices, regularised or not, on a floating
    base with trees of each joint type (points, a frame contact on the tree, Baumgarte gains and
    a point's target) and on the quadrupeds (point feet, with gains) and Talos (welded soles,
    with a kd, and with a kp and targets)."""
    from dqdyn.contact import derivatives as D

    cases = [_tree_with_feet(types, seed) for seed in range(3)]
    cases += [(m, feet[:2] + [dqdyn.FrameContact(feet[2].frame)]) for m, feet in cases[:3]]
    cases += [(m, [dqdyn.PointContact(f.frame, kp=20.0, kd=3.0, target=[0.1 * k, 0.2, -0.1])
                   for k, f in enumerate(feet[:2])] + [dqdyn.FrameContact(feet[2].frame, kd=2.0)])
              for m, feet in cases[:3]]  # (Baumgarte gains, a point's target)
    cases += [(robot(r)[0], _contacts("3d", FEET[r])) for r in ("solo12", "anymal")]
    cases += [(robot("solo12")[0], _contacts("3d", FEET["solo12"], kp=10.0, kd=1.0,
                                             target=[0.1, 0.0, -0.3]))]
    talos = robot("talos")[0]
    q0 = dqdyn.random_configuration(talos, seed=np.random.default_rng(5))
    off = np.eye(4)
    off[:3, :3] = Rotation.from_rotvec([0.2, -0.1, 0.3]).as_matrix()
    off[:3, 3] = [0.05, -0.02, 0.03]
    cases += [(talos, _contacts("6d", FEET["talos"])), (talos, _contacts("6d", FEET["talos"], kd=4.0)),
              (talos, [dqdyn.FrameContact(f, kp=30.0, kd=4.0,
                                          target=matrix_from_pose(dqdyn.frame_pose(talos, q0, f)) @ off)
                       for f in FEET["talos"]])]  # (a frame's target off its pose: log(x*⁻¹ x))
    compiled_states = 0
    for model, feet in cases:
        rng = np.random.default_rng(5)
        q = dqdyn.random_configuration(model, seed=rng)
        v, tau = rng.normal(size=(2, model.nv))
        nv = model.nv
        for eps in (0.0, 1e-4):
            D._PLANS.clear()
            plan = D._plan(model, feet, eps)  # (kept: the call below finds it)
            assert plan.args is not None
            Z, X, st = np.empty((1, 3, nv, nv)), np.empty((1, 3, plan.m, nv)), np.ones(1, np.int64)
            D.contact_derivatives_rows(*plan.args, q[None], v[None], tau[None], Z, X, st, 0, 1)
            if st[0]:  # (a state the compiled contact dynamics leaves to numpy)
                continue
            compiled_states += 1
            gated = dqdyn.contact_dynamics_derivatives(model, q, v, tau, feet, regularization=eps)
            if GATE is not None:  # (one state through the C call gate: the same kernel's bits)
                assert plan.layout is not None
                for x, y in zip([Z[0, 0], Z[0, 1], Z[0, 2], X[0, 0], X[0, 1], X[0, 2]], gated):
                    assert np.array_equal(x, y)
            monkeypatch.setattr(plan, "args", None)  # the hung model's route
            monkeypatch.setattr(plan, "layout", None)
            hung = dqdyn.contact_dynamics_derivatives(model, q, v, tau, feet, regularization=eps)
            check([Z[0, 0], Z[0, 1], Z[0, 2], X[0, 0], X[0, 1], X[0, 2]], hung, 1e-10)
    D._PLANS.clear()
    assert compiled_states >= 16


def test_compiled_batches_on_the_thread_pool_are_the_states_one_by_one():
    """A batch past the serial threshold (`dqdyn._engine.batching.SERIAL_WORK`) runs the compiled
    route on the thread pool, with V shared by every state; each state as its single call."""
    from dqdyn._engine.batching import SERIAL_WORK

    model, _ = robot("anymal")
    feet = _contacts("3d", FEET["anymal"])
    N = SERIAL_WORK // (model.nbodies + 1) + 3
    Q = dqdyn.random_configuration(model, size=N, seed=2)
    rng = np.random.default_rng(3)
    v, T = rng.normal(size=model.nv), rng.normal(size=(N, model.nv))
    out = dqdyn.contact_dynamics_derivatives(model, Q, v, T, feet)
    assert out.da_dq.shape == (N, model.nv, model.nv) and out.dlambda_dtau.shape == (N, 12, model.nv)
    for k in (0, N // 2, N - 1):
        one = dqdyn.contact_dynamics_derivatives(model, Q[k], v, T[k], feet)
        for x, y in zip(out, one):
            np.testing.assert_allclose(x[k], y, rtol=0, atol=1e-12 * (1 + np.abs(y).max()))
