"""Inverse and forward dynamics of the bundled 6-DoF arm, and the identities that tie them.

``rnea`` (dual quaternion Newton–Euler) gives the joint torques for a motion; ``aba`` (the
articulated-body algorithm) gives the motion back; ``M(q) q̈ + C(q, q̇) q̇ + g(q) = τ``.
"""

import numpy as np

import dqdyn

model = dqdyn.load_example("jaco6")
q = dqdyn.random_configuration(model, seed=0)        # rad
v = np.full(model.nv, 0.5)                           # rad/s
a = np.linspace(-1.0, 1.0, model.nv)                 # rad/s²

tau = dqdyn.rnea(model, q, v, a)                     # N·m
qdd = dqdyn.aba(model, q, v, tau)                    # rad/s²
M = dqdyn.mass_matrix(model, q)                      # kg·m²
C = dqdyn.coriolis_matrix(model, q, v)
g = dqdyn.gravity(model, q)                          # N·m

print("tau (N·m):", np.round(tau, 4))
print("|aba(rnea(a)) - a| =", np.abs(qdd - a).max())
print("|M a + C v + g - tau| =", np.abs(M @ a + C @ v + g - tau).max())
assert np.allclose(qdd, a, atol=1e-9)
assert np.allclose(M @ a + C @ v + g, tau, atol=1e-9)
