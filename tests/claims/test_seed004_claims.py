"""Seed 004 (Mladenova) claims of the digest ``vector-parameters-and-elastic-joints.md`` §3.

Several branches add tests to this file; keep each issue's block separate."""

import numpy as np

# ================================================================== issue 20: claim 25 (op counts)
from dqdyn.algebra.vector_parameter import matrix_from_vp, vp_compose
from dqdyn.analysis import opcount as oc


def test_claim25_table1_totals_and_counted_vector_parameter_chain():
    """Table 1's Totals equal c n + 10(n−1) + 14 mult. and c n + 12(n−1) + 15 add. for the four
    parametrizations (⟨·,·⟩ counted 10 m + 12 a, O(c)p 14 m + 15 a); the counting scalar on
    ⟨c₁, …, c_n⟩ then O(c)p gives the same additions and, with the formulas as printed,
    n·1 + 12(n−1) + 18 mult. + n div. for DH (hand counts n = 1, 2 below)."""
    table1 = {  # parametrization: c column (m, a), printed Total (m: k n + l, a: k n + l)
        "Eulerian angles": ((3, 2), (13, 4), (14, 3)),
        "Bryant angles": ((5, 0), (15, 4), (12, 3)),
        "Eulerian parameters": ((3, 4), (13, 4), (16, 3)),
        "Denavit–Hartenberg": ((1, 0), (11, 4), (12, 3)),
    }
    for name, ((cm, ca), (km, lm), (ka, la)) in table1.items():
        for n in range(1, 8):
            assert cm * n + 10 * (n - 1) + 14 == km * n + lm, name
            assert ca * n + 12 * (n - 1) + 15 == ka * n + la, name
        assert oc.SEED004_TABLE1[name][0][:2] == (cm, ca)
    vc = oc.vp_costs()
    assert vc["<c1, c2>"][1][1] == 12 and vc["O(c)p"][1][1] == 15  # additions as printed
    assert vc["<c1, c2>"][1][0] == 12 and vc["O(c)p"][1][0] == 18  # mult.: printed 10 and 14
    assert vc["c (DH)"][1][:2] == (1, 0)
    # hand counts: n = 1: c (1 m) + O(c)p (18 m, 15 a, 1 div.); n = 2: 2 c + 1 ⟨,⟩ + O(c)p
    assert oc.vp_chain_count(1)[1] == (1 + 18, 15, 1)
    assert oc.vp_chain_count(2)[1] == (2 + 12 + 18, 12 + 15, 2)
    # the counted chain computes O(⟨c₁, …, c_n⟩) p = O(c₁) ⋯ O(c_n) p
    for n in (1, 2, 4):
        val, _, (ta, tt, p) = oc.vp_chain_count(n, seed=n)
        cs = [np.array([x, -x * y, y]) for x, y in zip(ta, tt)]
        O = np.eye(3)
        for c in cs:
            O = O @ matrix_from_vp(c)
        np.testing.assert_allclose(val, O @ p, atol=1e-12)
        c = cs[0]
        for ck in cs[1:]:
            c = vp_compose(c, ck)
        np.testing.assert_allclose(val, matrix_from_vp(c) @ p, atol=1e-12)
# ================================================================== end of issue 20 block
