"""Hypothesis strategies for the algebra property tests.

They are handed to the tests through the fixture ``S`` (a namespace of strategies, one
for the whole test run) and drawn with ``data.draw(...)``: such a fixture does not trip hypothesis'
function-scoped-fixture health check, and no test module has to import this conftest by name
(several test folders may own a ``conftest.py``).
"""

from __future__ import annotations

import types

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest

from dqdyn.algebra import pose_from_rt


def vec(n, lo=-3.0, hi=3.0):
    return hnp.arrays(
        np.float64, n, elements=st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    )


def _unit(v):
    return v / np.linalg.norm(v)


unit3 = vec(3).filter(lambda v: np.linalg.norm(v) > 0.2).map(_unit)

#: rotation angles in [0, π], with extra weight on the ends (near 0 and near π, exact ends)
angle = st.one_of(
    st.floats(0.0, np.pi),
    st.floats(0.0, 1e-6),
    st.floats(np.pi - 1e-6, np.pi),
    st.sampled_from([0.0, 1e-12, np.pi / 2, np.pi - 1e-12, np.pi]),
)

sign = st.sampled_from([1.0, -1.0])


@st.composite
def _axis_angle_quat(draw):
    n = draw(unit3)
    a = draw(angle)
    return draw(sign) * np.concatenate([[np.cos(a / 2)], np.sin(a / 2) * n])


unit_quat_generic = vec(4).filter(lambda q: np.linalg.norm(q) > 0.2).map(_unit)
unit_quat = st.one_of(unit_quat_generic, _axis_angle_quat())


@st.composite
def _unit_dq(draw):
    kind = draw(st.sampled_from(["general", "general", "translation", "rotation"]))
    r = draw(unit_quat) if kind != "translation" else draw(sign) * np.array([1.0, 0, 0, 0])
    p = draw(vec(3)) if kind != "rotation" else np.zeros(3)
    return pose_from_rt(r, p)


unit_dq = _unit_dq()
dq = vec(8)
invertible_dq = vec(8).filter(lambda h: np.linalg.norm(h[:4]) > 0.3)
pure6 = vec(6)
quat = vec(4)


@pytest.fixture(scope="package")
def S():
    """Namespace of the strategies above."""
    return types.SimpleNamespace(
        vec=vec,
        unit3=unit3,
        angle=angle,
        unit_quat=unit_quat,
        unit_dq=unit_dq,
        dq=dq,
        invertible_dq=invertible_dq,
        pure6=pure6,
        quat=quat,
    )
