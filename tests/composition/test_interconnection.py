"""Interconnection graph and black-box subsystems (thesis ch. 5; composition/interconnection.py).

Oracles: the monolithic model (``dqdyn.rnea`` / ``newton_euler`` on ``graph.build()`` or on the
model the graph was split from), Pinocchio's ``rnea`` (claims tests), and the exact linear map
``Δτ = J_bᵀ Δζ`` for a black box whose wrench is off by ``Δζ``."""

import numpy as np
import pytest

import dqdyn
from dqdyn.composition.interconnection import (
    InterconnectionGraph,
    ModelBlackBox,
    RecordedWrench,
    recorded_connection_wrench,
)
from dqdyn.errors import (
    InfeasibleError,
    ModelError,
    NonFiniteError,
    ShapeError,
    UnknownNameError,
)


def _chain(n, seed, **kw):
    return dqdyn.random_tree(n, seed=seed, branching=0.0, **kw)


def _graph():
    g = InterconnectionGraph("g")
    g.add("a", _chain(3, 1))
    g.add("b", _chain(2, 2), "a", at=_chain(3, 1).frame_names[-1])
    g.add("c", _chain(2, 3), "a", at=_chain(3, 1).body_names[2])
    return g


def _state(n, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)


def test_graph_equals_monolithic_and_A_structure():
    g = _graph()
    m = g.build()
    q, v, a = _state(g.nq, 0)
    r = g.evaluate(q, v, a)
    mono = dqdyn.newton_euler(m, q, v, a)
    np.testing.assert_allclose(r.tau, mono.tau, atol=1e-12 * np.abs(mono.tau).max())
    np.testing.assert_allclose(r.Gamma, mono.wrenches[1:], atol=1e-12 * np.abs(mono.wrenches).max())
    # A̲ (5.15): zero outside the diagonal blocks and the predecessor blocks
    assert r.A.shape == (7, 3, 6)
    assert np.all(r.A[r.rows["b"], 0] == 0) and np.all(r.A[r.rows["c"], 1] == 0)
    assert np.all(r.A[r.rows["b"], 2] == 0) and np.all(r.A[r.rows["c"], 2 - 1] == 0)
    # Γ̊_{c,a}: zero on the joint of a that does not support c's connection (body 3 of a)
    assert np.all(r.block("a", "c")[2] == 0) and np.abs(r.block("a", "c")[:2]).max() > 0
    np.testing.assert_allclose(r.tau_blocks.sum(-1), r.tau)


def test_adding_replacing_removing_keeps_earlier_blocks():
    g = _graph()
    q, v, a = _state(g.nq, 1)
    r0 = g.evaluate(q, v, a)
    assert g.evaluations == {"a": 1, "b": 1, "c": 1}
    # add a subsystem under b: only its W is computed; the W of a, b, c are the cached ones
    d = _chain(2, 4)
    g.add("d", d, "b", at=g._nodes["b"].model.body_names[2])
    qd, vd, ad = _state(d.nq, 2)
    r1 = g.evaluate(np.r_[q, qd], np.r_[v, vd], np.r_[a, ad])
    assert g.evaluations == {"a": 1, "b": 1, "c": 1, "d": 1}
    for k in "abc":
        np.testing.assert_array_equal(r1.W(k), r0.W(k))  # the earlier blocks, bitwise
    np.testing.assert_array_equal(r1.block("a", "c"), r0.block("a", "c"))
    assert np.abs(r1.block("a", "b") - r0.block("a", "b")).max() > 1e-6  # Γ̊ values change
    m = g.build()
    np.testing.assert_allclose(r1.tau, dqdyn.rnea(m, np.r_[q, qd], np.r_[v, vd], np.r_[a, ad]),
                               atol=1e-11)
    # replace c: only c is recomputed
    g.replace("c", _chain(2, 5))
    r2 = g.evaluate(np.r_[q, qd], np.r_[v, vd], np.r_[a, ad])
    assert g.evaluations == {"a": 1, "b": 1, "c": 2, "d": 1}
    np.testing.assert_array_equal(r2.W("b"), r1.W("b"))
    np.testing.assert_allclose(r2.tau, dqdyn.rnea(g.build(), np.r_[q, qd], np.r_[v, vd],
                                                  np.r_[a, ad]), atol=1e-11)
    # remove d: nothing is recomputed, the result is back to r0's (with the new c)
    assert g.remove("d") == ["d"]
    r3 = g.evaluate(q, v, a)
    assert g.evaluations == {"a": 1, "b": 1, "c": 2}
    np.testing.assert_allclose(r3.tau, dqdyn.rnea(g.build(), q, v, a), atol=1e-11)
    # a new state recomputes everything once
    g.evaluate(*_state(g.nq, 9))
    assert g.evaluations == {"a": 2, "b": 2, "c": 3}


def test_model_black_box_equals_white_subsystem():
    g = _graph()
    q, v, a = _state(g.nq, 3)
    r = g.evaluate(q, v, a)
    sb = g.slices("b")[1]
    box = ModelBlackBox(g._nodes["b"].model, (q[sb], v[sb], a[sb]), g.gravity)
    h = _graph()
    h.replace("b", box)
    keep = np.r_[0:sb.start, sb.stop:g.nv]
    rb = h.evaluate(q[keep], v[keep], a[keep])
    np.testing.assert_allclose(rb.tau, r.tau[keep], atol=1e-12)
    np.testing.assert_allclose(rb.connection_wrenches["b"], r.connection_wrenches["b"], atol=1e-12)
    assert rb.A.shape == (5, 3, 6)  # b keeps a column, no rows
    assert box.calls == 1


def test_recorded_black_box_error_is_the_interpolation_error():
    """τ of the rest with a recorded (interpolated) subsystem = monolithic τ + J_bᵀ Δζ exactly,
    Δζ = interpolation error of the recorded wrench."""
    g = _graph()
    n = g.nv
    rng = np.random.default_rng(4)
    A0, w = rng.normal(size=(2, n)) * 0.5, rng.uniform(1, 3, size=n)

    def traj(t):
        t = np.asarray(t, float)[..., None]
        return A0[0] * np.sin(w * t) + A0[1], A0[0] * w * np.cos(w * t), -A0[0] * w * w * np.sin(w * t)

    tk = np.linspace(0, 2, 201)  # recorded at 100 Hz
    rec = recorded_connection_wrench(g, "c", tk, *traj(tk))
    sc = g.slices("c")[1]
    keep = np.r_[0:sc.start, sc.stop:n]
    ts = np.linspace(0.003, 1.997, 57)  # between the samples
    Q, V, Acc = traj(ts)
    full = g.evaluate(Q, V, Acc)
    h = _graph()
    h.replace("c", rec)
    rb = h.evaluate(Q[:, keep], V[:, keep], Acc[:, keep], t=ts)
    dz = rec(ts) - full.connection_wrenches["c"]
    err = rb.tau - full.tau[:, keep]
    # exact: Δτ_a = J_bᵀ Δζ at c's connection frame, body axes (power pairing [ω, v]·[τ, f])
    m = g.build()
    J = dqdyn.twist_jacobian(m, Q, "a/" + g._nodes["c"].at, "body")
    pred = np.einsum("nki,nk->ni", J[:, :, keep], np.concatenate([dz[:, 3:], dz[:, :3]], -1))
    np.testing.assert_allclose(err, pred, atol=1e-12)
    rel = np.abs(dz).max() / np.abs(full.connection_wrenches["c"]).max()
    assert 0 < rel < 1e-5  # cubic spline at 100 Hz on a smooth wrench
    assert np.abs(err).max() < 1e-5 * np.abs(full.tau).max()
    with pytest.raises(InfeasibleError, match="c"):
        h.evaluate(Q[0, keep], V[0, keep], Acc[0, keep], t=5.0)
    with pytest.raises(InfeasibleError):
        h.evaluate(Q[0, keep], V[0, keep], Acc[0, keep])


def test_from_model_split():
    m = dqdyn.random_tree(12, seed=8)
    starts = {"x": m.body_names[5], "y": m.body_names[9]}
    g, iq, iv = InterconnectionGraph.from_model(m, starts)
    q = dqdyn.random_configuration(m, seed=1)
    v, a = _state(m.nv, 5)[:2]
    np.testing.assert_allclose(g.rnea(q[iq], v[iv], a[iv]), dqdyn.rnea(m, q, v, a)[iv], atol=1e-11)


class _Bad:
    def __init__(self, out):
        self.out = out

    def wrench(self, pose, twist, twist_derivative, t):
        return self.out


def test_bad_input_names_the_subsystem():
    g = _graph()
    with pytest.raises(UnknownNameError, match="'a'.*nope|nope.*'a'"):
        g.add("d", _chain(1, 9), "a", at="nope")
    assert "d" not in g.names
    with pytest.raises(ModelError, match="cycle"):
        g.connect("b", "a")
    g.add("e", _chain(1, 9))
    with pytest.raises(ModelError, match="several roots.*e"):
        g.evaluate(*_state(g.nv, 0))
    with pytest.raises(ModelError, match="already connected"):
        g.connect("c", "b")
    g.remove("e")
    for bad, exc in ((np.zeros(5), ShapeError), (np.full(6, np.nan), NonFiniteError)):
        h = _graph()
        h.add("box", _Bad(bad), "b", at=h._nodes["b"].model.body_names[1])
        with pytest.raises(exc, match="box"):
            h.evaluate(*_state(h.nv, 0))
    h = _graph()
    h.add("box", _Bad(np.zeros(6)), "c", at="world")
    with pytest.raises(UnknownNameError, match="black box"):
        h.add("z", _chain(1, 2), "box", at="world")
    with pytest.raises(ModelError, match="mass_properties"):
        h.build()
    with pytest.raises(ShapeError, match="q must"):
        g.evaluate(np.zeros(3), np.zeros(g.nv), np.zeros(g.nv))
    with pytest.raises(ShapeError, match="subsystem 'w'"):
        g.add("w", object())
    with pytest.raises(ModelError, match="successors"):
        g.remove("a")
    with pytest.raises(ShapeError, match="wrenches"):
        RecordedWrench([0, 1], np.zeros((2, 5)))


def test_single_state_paths_agree():
    """graph.rnea on one state (the lean Python sweeps, also with a black box) equals
    evaluate() and the monolithic model."""
    g = _graph()
    q, v, a = _state(g.nq, 11)
    ref = dqdyn.rnea(g.build(), q, v, a)
    np.testing.assert_allclose(g.rnea(q, v, a), ref, atol=1e-11)
    np.testing.assert_allclose(g.evaluate(q, v, a).tau, ref, atol=1e-11)
    sb = g.slices("b")[1]
    box = ModelBlackBox(g._nodes["b"].model, (q[sb], v[sb], a[sb]), g.gravity)
    g.replace("b", box)
    keep = np.r_[0:sb.start, sb.stop:len(q)]
    np.testing.assert_allclose(g.rnea(q[keep], v[keep], a[keep]), ref[keep], atol=1e-11)
    with pytest.raises(ShapeError, match="entries"):
        g.rnea(q, v, a)


def test_compiled_kernel_equals_monolithic_and_follows_changes():
    """rnea (the compiled sweeps through the C gate, the default) equals the monolithic model
    and the Python sweeps; after the graph changes (a subsystem replaced, added, removed) the
    compiled tables are rebuilt, not reused."""
    g = _graph()
    q, v, a = _state(g.nq, 12)
    tau = g.rnea(q, v, a)
    np.testing.assert_allclose(tau, dqdyn.rnea(g.build(), q, v, a), atol=1e-11)
    np.testing.assert_allclose(g.rnea(q, v, a, compiled=False), tau, rtol=0, atol=1e-13)
    np.testing.assert_allclose(g.rnea(list(q), list(v), list(a)), tau, rtol=0, atol=0)  # (lists)
    g.replace("c", _chain(3, 5))
    g.add("d", _chain(1, 6), "a", at=_chain(3, 1).body_names[1])
    q, v, a = _state(g.nq, 13)
    np.testing.assert_allclose(g.rnea(q, v, a), dqdyn.rnea(g.build(), q, v, a), atol=1e-11)
    g.remove("d")
    q, v, a = _state(g.nq, 14)
    np.testing.assert_allclose(g.rnea(q, v, a), dqdyn.rnea(g.build(), q, v, a), atol=1e-11)
    with pytest.raises(ShapeError, match="entries"):
        g.rnea(q[:-1], v, a)
    qn = q.copy()
    qn[0] = np.nan
    with pytest.raises(NonFiniteError):
        g.rnea(qn, v, a)


def test_connection_at_a_subsystems_world_frame_is_its_base_and_errors_name_the_subsystem():
    """A successor hung at the ``world`` frame of a non-root subsystem hangs from that
    subsystem's base (the connection frame it moves with), as in the composite model — the
    sweeps once took it for the inertial frame (τ off by 4 N·m).  The compiled kernel takes it
    at body 0 (its wrench straight into the predecessor's connection wrench); every path equals
    the monolithic ``rnea`` of ``build()``; a kernel status names its subsystem."""
    g = _graph()
    g.add("d", _chain(2, 7), "b", at="world")
    g.add("e", _chain(1, 8), "a", at="world")
    g.add("f", _chain(1, 9), "c", at="world")
    assert g._fused() is not None
    q, v, a = _state(g.nq, 15)
    ref = dqdyn.rnea(g.build(), q, v, a)
    np.testing.assert_allclose(g.rnea(q, v, a), ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(g.rnea(q, v, a, compiled=False), ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(g.evaluate(q, v, a).tau, ref, rtol=0, atol=1e-11)
    qn = q.copy()
    qn[g.slices("d")[0].start] = np.nan
    with pytest.raises(NonFiniteError, match="subsystem 'd'"):
        g.rnea(qn, v, a)


def test_a_root_placed_in_the_inertial_frame_is_placed_in_build_and_every_sweep():
    """``add(root, model, placement=X)`` mounts the root's world frame at X (a tilted, raised
    base: gravity turns in its frame).  It was ignored without a word; now the compiled and
    Python sweeps, ``evaluate`` and the monolithic ``rnea(build())`` (the oracle) agree, and
    differ from the unplaced graph.  A successor at the root's ``world`` frame hangs from X.
    A placement that is not a unit dual quaternion (or holds NaN) is a named error."""
    from dqdyn.algebra.dualquat import mul
    from dqdyn.errors import NotUnitError

    ang = 0.7
    r = np.array([np.cos(ang / 2), np.sin(ang / 2), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    t = np.array([0.0, 0.3, -0.2, 0.5, 0.0, 0.0, 0.0, 0.0])
    X = r.copy()
    X[4:] = 0.5 * mul(t, r)[:4]  # x = r + ε ½ t r
    graphs = []
    for pl in (X, None):
        g = InterconnectionGraph("g")
        g.add("a", _chain(3, 1), placement=pl)
        g.add("b", _chain(2, 2), "a", at=_chain(3, 1).frame_names[-1])
        g.add("c", _chain(2, 3), "a", at=_chain(3, 1).body_names[2])
        g.add("w", _chain(1, 21), "a", at="world")
        graphs.append(g)
    g, plain = graphs
    q, v, a = _state(g.nq, 4)
    ref = dqdyn.rnea(g.build(), q, v, a)
    np.testing.assert_allclose(g.rnea(q, v, a), ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(g.rnea(q, v, a, compiled=False), ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(g.evaluate(q, v, a).tau, ref, rtol=0, atol=1e-11)
    assert np.abs(plain.rnea(q, v, a) - ref).max() > 1e-3  # (the placement matters)
    np.testing.assert_allclose(plain.rnea(q, v, a), dqdyn.rnea(plain.build(), q, v, a), rtol=0, atol=1e-11)
    with pytest.raises(NotUnitError, match="'z'"):
        g.add("z", _chain(1, 5), placement=np.r_[2.0, np.zeros(7)])
    with pytest.raises(NotUnitError, match="'z'"):
        g.add("z", _chain(1, 5), "a", placement=np.full(8, np.nan))
