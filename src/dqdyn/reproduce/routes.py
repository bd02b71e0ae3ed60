"""The papers' alternative routes, computed by dqdyn itself, beside each CMC row of
``dqdyn reproduce`` ([Silva2022, Table 2]: dqGP / dqNE / rtNE; [Silva2022thesis, Tables 4.6–4.8, 5.1]:
dqNE / rtNE / sv2NE), the graph-based Table 5.1 (modular dqNE, [Silva2022thesis, ch. 5]) and a black-box case.

Routes (one batched evaluation each, on the same MuJoCo log and the same filtering):

* inverse dynamics (τ): ``dqNE`` (`rnea`, the case's main row), ``dqGP``
  (``M_GP q̈ + C_GP q̇ + g_GP``, [Silva2022, eqs. (46)–(51)], `gauss_model`),
  ``rtNE`` (`classic_newton_euler`, 3-vector Newton–Euler);
* forward dynamics (q̈): ``ABA`` (the case's main row), ``dqNE`` (``M``, ``C q̇ + g`` from n + 2
  dqNE calls, [Silva2022thesis, eq. 3.2]), ``dqGP`` (eq. 45), ``rtNE`` (n + 1 classic NE calls).

``rtNE`` is N/A on mobile bases (as the papers: the Robotics Toolbox is fixed-base only).
Spatial_v2 (``sv2NE``) is not run: its role — an independent spatial-algebra RNEA — is played by
Pinocchio in the test suite (``tests/claims``), which agrees with dqNE to 1e-10.
"""

from __future__ import annotations

import numpy as np

from dqdyn.dynamics.classic import classic_forward_dynamics, classic_newton_euler
from dqdyn.dynamics.gauss import gauss_model
from dqdyn.dynamics.lagrange import mass_matrix
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.errors import ModelError


def _chunked(f, n, size, *arrays):
    out = [f(*(a[k:k + size] for a in arrays)) for k in range(0, n, size)]
    return np.concatenate(out, axis=0)


def _gp_inverse(model, q, v, a):
    G = gauss_model(model, q, v)
    return np.einsum("nij,nj->ni", G.M, a) + np.einsum("nij,nj->ni", G.C, v) + G.g


def _gp_forward(model, q, v, tau):
    G = gauss_model(model, q, v)
    rhs = tau - np.einsum("nij,nj->ni", G.C, v) - G.g
    return np.linalg.solve(G.M, rhs[..., None])[..., 0]


def _ne_forward(model, q, v, tau):
    M = mass_matrix(model, q, method="newton_euler")  # n + 1 dqNE calls per state
    h = rnea(model, q, v, np.zeros_like(v))  # C q̇ + g: one more
    return np.linalg.solve(M, (tau - h)[..., None])[..., 0]


def alternative_routes(model, log, mode, acc):
    """``{route: waveform or None (N/A)}`` on a MuJoCo log (module doc); ``acc`` = the
    differentiated ``q̇`` (inverse dynamics input)."""
    q, v, tau = log["q"], log["v"], log["tau"]
    n = len(q)
    chunk = max(1, 20000 // max(1, model.nv * model.nbodies))
    out = {}
    if mode == "inverse":
        out["dqGP"] = _chunked(lambda *x: _gp_inverse(model, *x), n, chunk, q, v, acc)
        try:
            out["rtNE"] = _chunked(lambda *x: classic_newton_euler(model, *x), n, 2000, q, v, acc)
        except ModelError:
            out["rtNE"] = None
    else:
        out["dqNE"] = _ne_forward(model, q, v, tau)
        out["dqGP"] = _chunked(lambda *x: _gp_forward(model, *x), n, chunk, q, v, tau)
        try:
            out["rtNE"] = _chunked(lambda *x: classic_forward_dynamics(model, *x), n,
                                   max(1, 5000 // model.nv), q, v, tau)
        except ModelError:
            out["rtNE"] = None
    return out


# ------------------------------------------------------------------------ Table 5.1 by graph
def tree38_graph(model):
    """robots.tree38 as an interconnection graph of its 9 subsystems (a 6-DoF trunk ``s1`` and
    eight 4-DoF limbs); returns ``(graph, iq, iv)`` (graph coordinates = ``q[iq]``)."""
    from dqdyn.composition.interconnection import InterconnectionGraph

    return InterconnectionGraph.from_model(model, {f"s{s}": f"s{s}_l1" for s in range(2, 10)},
                                           root="s1")


def mujoco_connection_wrench(mujoco, mj, d, child_body: str, parent_body: str):
    """MuJoCo's wrench transmitted from ``parent_body`` to ``child_body`` (``cfrc_int`` after
    ``mj_rnePostConstraint``: the com-based interaction force [τ, f] at the root subtree's CoM,
    world axes), as dqdyn's ``ζ_a = [f, τ]`` at the origin of ``parent_body`` in its axes."""
    mujoco.mj_rnePostConstraint(mj, d)
    b = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, child_body)
    p = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, parent_body)
    c = d.subtree_com[mj.body_rootid[b]]
    tq, f = d.cfrc_int[b, :3], d.cfrc_int[b, 3:]
    pa = d.xpos[p]
    Ra = d.xmat[p].reshape(3, 3)
    tq_a = tq + np.cross(c - pa, f)
    return np.r_[Ra.T @ f, Ra.T @ tq_a]


__all__ = ["alternative_routes", "mujoco_connection_wrench", "tree38_graph"]
