"""Inverse dynamics and the Euler–Lagrange terms: dqdyn against Pinocchio, in one run.

    python benchmarks/bench_dynamics.py [--quick]

Per call (interleaved A/B, median µs): ``rnea``, ``mass_matrix`` (vs ``crba``),
``coriolis_matrix`` (vs ``computeCoriolisMatrix``), ``gravity`` (vs
``computeGeneralizedGravity``), ``nonlinear_effects`` (vs ``nonLinearEffects``), ``rnea`` with
external wrenches on every body (vs ``rnea`` with ``fext``) on Panda (9 DoF,
fingers independent as in Pinocchio's default), UR5, Talos (free-floating, 38 DoF) and a 50-DoF
chain, and a 1-joint chain whose times are each library's fixed cost of a call.  Batched: ``rnea`` on 10⁵ states in one call against ``pin.rneaInParallel`` (1 thread and
all cores) and a Python loop of ``pin.rnea``.  Scaling: ``rnea`` on n-link chains, n = 10 … 400
(µs per body should stay flat: linear cost).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402

from harness import best_time, interleaved, print_table, write_results  # noqa: E402


def _robots(pin, quick):
    from pinconv import ROBOTS, erd, pin_from_model, pin_from_urdf

    out = []
    for name in ("panda", "ur5", "talos"):
        rel, root = ROBOTS[name]
        path = erd(rel)
        m = dqdyn.load_urdf(path, root_joint=root, mimic="independent")
        pm = pin_from_urdf(path, root) if root else pin.buildModelFromUrdf(path)
        out.append((f"{name} ({m.nv} dof)", m, pm))
    m = dqdyn.serial_chain(50)
    out.append(("chain 50", m, pin_from_model(m)[0]))
    # one revolute joint: almost no arithmetic, so the time is each library's fixed cost of a call
    # from Python (argument conversion, dispatch, allocating the result)
    m = dqdyn.serial_chain(1)
    out.append(("chain 1 (call overhead)", m, pin_from_model(m)[0]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    import pinocchio as pin

    from pinconv import pin_fext, pin_from_model, q_to_pin, tdot_v, v_transform

    warnings.simplefilter("ignore")
    rounds = 5 if args.quick else 15
    rows = []
    for label, m, pm in _robots(pin, args.quick):
        pd = pm.createData()
        rng = np.random.default_rng(0)
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        qp, T = q_to_pin(m, pm, q), v_transform(m, pm, q)
        vp, ap_ = T @ v, T @ a + tdot_v(m, pm, q, v)
        cases = [
            ("rnea", lambda: dqdyn.rnea(m, q, v, a), lambda: pin.rnea(pm, pd, qp, vp, ap_)),
            ("mass_matrix", lambda: dqdyn.mass_matrix(m, q), lambda: pin.crba(pm, pd, qp)),
            ("coriolis_matrix", lambda: dqdyn.coriolis_matrix(m, q, v),
             lambda: pin.computeCoriolisMatrix(pm, pd, qp, vp)),
            ("gravity", lambda: dqdyn.gravity(m, q), lambda: pin.computeGeneralizedGravity(pm, pd, qp)),
            ("nonlinear_effects", lambda: dqdyn.nonlinear_effects(m, q, v),
             lambda: pin.nonLinearEffects(pm, pd, qp, vp)),
        ]
        # external wrenches on every body (Pinocchio's kept in its own vector type, as a user
        # of it would: a Python list is converted on every call)
        F = rng.normal(size=(m.nbodies + 1, 6))
        fp = pin.StdVec_Force()
        for f in pin_fext(m, pm, F):
            fp.append(f)
        cases.append(("rnea with fext", lambda: dqdyn.rnea(m, q, v, a, F),
                      lambda: pin.rnea(pm, pd, qp, vp, ap_, fp)))
        for fn, fa, fb in cases:
            ta, tb = interleaved(fa, fb, rounds=rounds)
            rows.append({"robot": label, "function": fn, "dqdyn_us": ta, "pin_us": tb, "ratio": ta / tb})
        if label.startswith(("panda", "ur5")):
            N = 10_000 if args.quick else 100_000
            Q = dqdyn.random_configuration(m, size=N, seed=1)
            V, A = rng.normal(size=(2, N, m.nv))
            QP = np.asfortranarray(np.array([q_to_pin(m, pm, x) for x in Q]).T)
            VP, AP = np.asfortranarray(V.T), np.asfortranarray(A.T)  # T = I for fixed-base arms
            dqdyn.rnea(m, Q[:10], V[:10], A[:10])
            t_ours = best_time(lambda: dqdyn.rnea(m, Q, V, A)) / N
            best, how = np.inf, ""
            pool = pin.ModelPool(pm, os.cpu_count() or 1)
            out = np.zeros((m.nv, N), order="F")
            for nthreads in sorted({1, os.cpu_count() or 1}):
                t = best_time(lambda: pin.rneaInParallel(nthreads, pool, QP, VP, AP, out)) / N
                if t < best:
                    best, how = t, f"rneaInParallel({nthreads})"
            rows.append({"robot": label, "function": f"rnea batch {N} (pin: {how})",
                         "dqdyn_us": t_ours * 1e6, "pin_us": best * 1e6, "ratio": t_ours / best})
    scaling = {"n": [], "rnea": [], "pin rnea": [], "aba": [], "pin aba": []}
    for n in (7, 25, 50, 100, 200, 400):
        m = dqdyn.serial_chain(n)
        pm, _ = pin_from_model(m)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=0)
        v = np.ones(n)
        qp = q_to_pin(m, pm, q)
        ta, tb = interleaved(lambda: dqdyn.rnea(m, q, v, v), lambda: pin.rnea(pm, pd, qp, v, v),
                             rounds=rounds)
        fa, fb = interleaved(lambda: dqdyn.aba(m, q, v, v), lambda: pin.aba(pm, pd, qp, v, v),
                             rounds=rounds)
        for k, x in zip(scaling, (n, ta, tb, fa, fb)):
            scaling[k].append(x)
        rows.append({"robot": f"chain {n}", "function": f"rnea (µs/body {ta / n:.3f} vs {tb / n:.3f})",
                     "dqdyn_us": ta, "pin_us": tb, "ratio": ta / tb})
        rows.append({"robot": f"chain {n}", "function": f"aba (µs/body {fa / n:.3f} vs {fb / n:.3f})",
                     "dqdyn_us": fa, "pin_us": fb, "ratio": fa / fb})
    i7, i100 = scaling["n"].index(7), scaling["n"].index(100)
    for k in ("rnea", "aba"):
        rows.append({"robot": "chain 100 / chain 7", "function": f"{k} time ratio (target ≤ 16)",
                     "dqdyn_us": scaling[k][i100] / scaling[k][i7],
                     "pin_us": scaling["pin " + k][i100] / scaling["pin " + k][i7], "ratio": float("nan")})
    _plot_scaling(scaling)
    print_table("inverse dynamics and EL terms: dqdyn vs Pinocchio (µs; ratio < 1: dqdyn faster)", rows)
    js, md = write_results("dynamics", rows, {"quick": args.quick})
    print(f"written {js} and {md}")
    return rows


def _plot_scaling(scaling) -> None:
    """benchmarks/results/scaling.png: time per call against the number of bodies."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return
    from harness import RESULTS

    os.makedirs(RESULTS, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, style in (("rnea", "o-"), ("pin rnea", "o--"), ("aba", "s-"), ("pin aba", "s--")):
        ax.loglog(scaling["n"], scaling[k], style, label=("dqdyn " + k) if "pin" not in k else k)
    ax.set_xlabel("bodies (serial chain)")
    ax.set_ylabel("µs per call")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "scaling.png"), dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
