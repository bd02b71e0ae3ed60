"""Quick per-call ratios dqdyn / Pinocchio for the ten core calls on a few robots, interleaved
(benchmarks/harness.interleaved, 7 rounds), median and [min-max] of 3 repetitions: a fast A/B check
of a kernel change (run it on two checkouts one after the other, with ``PYTHONPATH=<checkout>/src``
and ``TESTS_DIR=<checkout>/tests``).

    python benchmarks/bench_quick_ratios.py [robot ...]      (default: panda ur5; ONLY=aba,J to pick)
"""
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.environ.get("TESTS_DIR", os.path.join(HERE, "..", "tests")))
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

import dqdyn  # noqa: E402

from harness import interleaved
from pinconv import ROBOTS, erd, pin_from_urdf

rows=[]
for name in sys.argv[1:] or ["panda","ur5"]:
    rel, root = ROBOTS[name]
    path = erd(rel)
    m = dqdyn.load_urdf(path, root_joint=root, mimic="independent")
    pm = pin_from_urdf(path, root) if root else pin.buildModelFromUrdf(path)
    pd = pm.createData()
    q = dqdyn.random_configuration(m, seed=0)
    v=np.random.default_rng(1).standard_normal(m.nv)
    a=np.random.default_rng(2).standard_normal(m.nv)
    qp = pin.randomConfiguration(pm)
    vp=np.zeros(pm.nv)
    ap=np.zeros(pm.nv)
    fr = m.frame_names[-1]
    fid = pm.getFrameId(pm.frames[-1].name)
    X = np.empty((m.nbodies + 1, 8))  # fkout / Jout: results into the caller's arrays (Pinocchio: its Data)
    JJ = np.empty((6, m.nv))
    cases = [("rnea", lambda: dqdyn.rnea(m,q,v,a), lambda: pin.rnea(pm,pd,qp,vp,ap)),
             ("aba", lambda: dqdyn.aba(m,q,v,a), lambda: pin.aba(pm,pd,qp,vp,ap)),
             ("M", lambda: dqdyn.mass_matrix(m,q), lambda: pin.crba(pm,pd,qp)),
             ("C", lambda: dqdyn.coriolis_matrix(m,q,v), lambda: pin.computeCoriolisMatrix(pm,pd,qp,vp)),
             ("g", lambda: dqdyn.gravity(m,q), lambda: pin.computeGeneralizedGravity(pm,pd,qp)),
             ("Minv", lambda: dqdyn.mass_matrix_inverse(m,q), lambda: pin.computeMinverse(pm,pd,qp)),
             ("fk", lambda: dqdyn.forward_kinematics(m,q), lambda: pin.forwardKinematics(pm,pd,qp)),
             ("fkout", lambda: dqdyn.forward_kinematics(m,q,out=X), lambda: pin.forwardKinematics(pm,pd,qp)),
             ("J", lambda: dqdyn.twist_jacobian(m,q,fr,frame="body"), lambda: pin.computeFrameJacobian(pm,pd,qp,fid,pin.LOCAL)),
             ("Jout", lambda: dqdyn.twist_jacobian(m,q,fr,frame="body",out=JJ), lambda: pin.computeFrameJacobian(pm,pd,qp,fid,pin.LOCAL)),
             ("dRNEA", lambda: dqdyn.rnea_derivatives(m,q,v,a), lambda: pin.computeRNEADerivatives(pm,pd,qp,vp,ap)),
             ("dABA", lambda: dqdyn.aba_derivatives(m,q,v,a), lambda: pin.computeABADerivatives(pm,pd,qp,vp,ap)),
    ]
    only = os.environ.get("ONLY")
    for cname, f, g in cases:
        if only and cname not in only.split(","):
            continue
        t0=time.perf_counter()
        f()
        t1=time.perf_counter()
        rs=[]
        for _ in range(3):
            ta,tb = interleaved(f,g,rounds=7)
            rs.append(ta/tb)
        print(f"{name:6s} {cname:6s} first {t1-t0:7.2f}s  {ta:6.2f}us  ratio {statistics.median(rs):.2f} [{min(rs):.2f}-{max(rs):.2f}]", flush=True)
