"""Analytic derivatives against Pinocchio: per call on arms and Talos, and their scaling in n.

    python benchmarks/bench_derivatives.py [--repeat 3] [--sizes 7 25 50 100 200] [--plot PATH]

``rnea_derivatives`` against ``computeRNEADerivatives`` and ``aba_derivatives`` against
``computeABADerivatives``, interleaved A/B in one process (benchmarks/harness.interleaved), on
serial chains of n revolute links, Panda (fingers independent, as Pinocchio loads it), UR5 and
Talos (38 DoF, free base).  Each ratio dqdyn / Pinocchio is measured ``--repeat`` times: the
median and [min–max] are printed.  Panda loaded with its mimic finger (dqdyn's default) is timed
too, against Pinocchio on the independent-finger model: Pinocchio's derivatives refuse mimic
joints.  The plot (time per call against n, log-log) goes to benchmarks/results/
derivatives_scaling.png, or ``--plot PATH``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import dqdyn  # noqa: E402

from harness import RESULTS, interleaved, write_results  # noqa: E402


def _measure(f, g, repeat, rounds):
    f()
    g()
    ta, tb, r = [], [], []
    for _ in range(repeat):
        a, b = interleaved(f, g, rounds=rounds)
        ta.append(a)
        tb.append(b)
        r.append(a / b)
    return statistics.median(ta), statistics.median(tb), statistics.median(r), min(r), max(r)


def _cases(m, pm, pd, q, qp, v, vp, a, ap):
    import pinocchio as pin

    return [
        ("rnea_derivatives", lambda: dqdyn.rnea_derivatives(m, q, v, a),
         lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, ap)),
        ("aba_derivatives", lambda: dqdyn.aba_derivatives(m, q, v, a),
         lambda: pin.computeABADerivatives(pm, pd, qp, vp, ap)),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sizes", type=int, nargs="*", default=[7, 25, 50, 100, 200])
    ap.add_argument("--plot", default=os.path.join(RESULTS, "derivatives_scaling.png"))
    args = ap.parse_args(argv)
    from pinconv import ROBOTS, erd, pin_from_model, q_to_pin, v_transform

    warnings.simplefilter("ignore")
    rows, scaling = [], {"n": []}
    rng = np.random.default_rng(0)

    def add(robot, label, res):
        ta, tb, r, lo, hi = res
        rows.append({"robot": robot, "function": label, "dqdyn_us": ta, "pin_us": tb, "ratio": r,
                     "ratio_min": lo, "ratio_max": hi})
        print(f"{robot:22s} {label:17s} {ta:9.2f} µs {tb:9.2f} µs  ratio {r:.2f} [{lo:.2f}–{hi:.2f}]",
              flush=True)

    for n in args.sizes:
        m = dqdyn.serial_chain(n)
        pm, _ = pin_from_model(m)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, n))
        qp = q_to_pin(m, pm, q)
        scaling["n"].append(n)
        for label, f, g in _cases(m, pm, pd, q, qp, v, v, a, a):
            res = _measure(f, g, args.repeat, args.rounds)
            add(f"chain {n}", label, res)
            scaling.setdefault(label, []).append(res[0])
            scaling.setdefault("pin " + label, []).append(res[1])
    for name in ("panda", "ur5", "talos"):
        rel, root = ROBOTS[name]
        path = erd(rel)
        m = dqdyn.load_urdf(path, root_joint=root, mimic="independent")
        pm, _ = pin_from_model(m)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        T = v_transform(m, pm, q)
        qp = q_to_pin(m, pm, q)
        for label, f, g in _cases(m, pm, pd, q, qp, v, T @ v, a, T @ a):
            add(f"{name} ({m.nv} dof)", label, _measure(f, g, args.repeat, args.rounds))
        if name == "panda":  # the default load: finger 2 mimics finger 1 (Pinocchio refuses it)
            mm = dqdyn.load_urdf(path)
            G = mm.independent_mimic()[1]
            qm, vm, am = q[: mm.nq], v[: mm.nv], a[: mm.nv]
            qx = np.concatenate([qm, qm[mm.independent_mimic()[2]]])
            qpx = q_to_pin(m, pm, qx)
            for label, f, g in _cases(mm, pm, pd, qm, qpx, vm, G @ vm, am, G @ am):
                add("panda mimic (8 dof)", label, _measure(f, g, args.repeat, args.rounds))
    if len(scaling["n"]) >= 2:
        i0, i1 = 0, len(scaling["n"]) - 1
        n0, n1 = scaling["n"][i0], scaling["n"][i1]
        for k in ("rnea_derivatives", "aba_derivatives"):
            e = np.log(scaling[k][i1] / scaling[k][i0]) / np.log(n1 / n0)
            ep = np.log(scaling["pin " + k][i1] / scaling["pin " + k][i0]) / np.log(n1 / n0)
            print(f"{k}: time ∝ n^{e:.2f} (Pinocchio n^{ep:.2f}) from n = {n0} to {n1}")
        _plot(scaling, args.plot)
    js, md = write_results("derivatives", rows, {"repeat": args.repeat, "sizes": args.sizes})
    print(f"written {js}, {md} and {args.plot}")
    return rows


def _plot(scaling, path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, style in (("rnea_derivatives", "o-"), ("pin rnea_derivatives", "o--"),
                     ("aba_derivatives", "s-"), ("pin aba_derivatives", "s--")):
        label = k.replace("pin ", "Pinocchio ") if k.startswith("pin") else "dqdyn " + k
        ax.loglog(scaling["n"], scaling[k], style, label=label)
    ax.set_xlabel("links (serial chain)")
    ax.set_ylabel("µs per call")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
