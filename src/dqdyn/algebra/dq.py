"""A small dual quaternion value type for scripting, in the style of DQ Robotics' ``DQ``.

``DQ`` wraps one (8,) float array ``[P(h), D(h)]`` and is built on the array functions of
`dqdyn.algebra.dualquat`, so a paper's equation maps to one line::

    >>> from dqdyn.algebra import DQ, i_, j_, k_, E_
    >>> r = DQ.rotation_about(k_, 0.5)           # cos(¼) + k̂ sin(¼)
    >>> x = r + E_ * 0.5 * (1.0 * i_) * r         # x = r + ε ½ p r with p = î
    >>> x.translation()
    array([1., 0., 0.])

Operators: ``+ -`` (DQ or real scalar), ``*`` (DQ product, or scaling by a real scalar),
``/`` by a real scalar, unary ``-``.  ``np.asarray(h)`` gives the (8,) array.  Batched work
should use the array functions directly (one object per element is slow by design).
"""

from __future__ import annotations

import numbers

import numpy as np

from dqdyn.algebra import dualquat as _dq


class DQ:
    """Dual quaternion ``h = P(h) + ε D(h)`` holding ``vec8 h`` (an (8,) float64 array)."""

    __slots__ = ("_v",)
    __array_priority__ = 1000  # so that ndarray * DQ defers to DQ.__rmul__

    def __init__(self, v=(0.0,) * 8):
        a = np.asarray(v, dtype=float).ravel()
        if a.shape[0] in (1, 4, 6) and a.shape[0] != 8:
            # scalar -> real;  4 -> quaternion (primary part);  6 -> pure (vec6)
            if a.shape[0] == 1:
                a = np.array([a[0], 0, 0, 0, 0, 0, 0, 0], dtype=float)
            elif a.shape[0] == 4:
                a = np.concatenate([a, np.zeros(4)])
            else:
                a = _dq.from_vec6(a)
        self._v = np.array(_dq.vec8(a), copy=True)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def rotation_about(cls, axis, angle: float) -> DQ:
        """``cos(φ/2) + n sin(φ/2)`` for the axis ``n`` (a DQ or a 3-vector, normalized)."""
        n = np.asarray(axis.vec8()[1:4] if isinstance(axis, DQ) else axis, dtype=float)
        n = n / np.linalg.norm(n)
        return cls(np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * n, np.zeros(4)]))

    @classmethod
    def pose(cls, r, p) -> DQ:
        """``r + ε ½ p r`` from a rotation (DQ or (4,)) and a translation (DQ or (3,))."""
        r = r.vec8()[:4] if isinstance(r, DQ) else r
        p = p.vec8()[1:4] if isinstance(p, DQ) else p
        return cls(_dq.pose(r, p))

    # ------------------------------------------------------------------ views
    def vec8(self) -> np.ndarray:
        return self._v.copy()

    def vec6(self) -> np.ndarray:
        return _dq.vec6(self._v)

    def vec4(self) -> np.ndarray:
        return self._v[:4].copy()

    def __array__(self, dtype=None, copy=None):
        return self._v.astype(dtype) if dtype is not None else self._v.copy()

    @property
    def P(self) -> DQ:
        """Primary part, as a DQ."""
        return DQ(np.concatenate([self._v[:4], np.zeros(4)]))

    @property
    def D(self) -> DQ:
        """Dual part, as a DQ."""
        return DQ(np.concatenate([self._v[4:], np.zeros(4)]))

    @property
    def Re(self) -> DQ:
        return DQ(_dq.Re(self._v))

    @property
    def Im(self) -> DQ:
        return DQ(_dq.Im(self._v))

    # ------------------------------------------------------------------ algebra
    def conj(self) -> DQ:
        return DQ(_dq.conj(self._v))

    def norm(self) -> DQ:
        """Dual-number norm ``|A| + ε (A·B)/|A|`` [MontgomerySmith2023, eq. (31)] as a DQ."""
        n = _dq.norm(self._v)
        return DQ([n[0], 0, 0, 0, n[1], 0, 0, 0])

    def normalize(self) -> DQ:
        return DQ(_dq.normalize(self._v))

    def inv(self) -> DQ:
        return DQ(_dq.inv(self._v))

    def Ad(self, other) -> DQ:
        """``self · other · self*`` [Silva2022, eq. (3)]."""
        return DQ(_dq.Ad(self._v, _coerce(other)._v))

    def exp(self) -> DQ:
        return DQ(_dq.exp(self._v))

    def log(self) -> DQ:
        return DQ(_dq.log(self._v))

    def translation(self) -> np.ndarray:
        return _dq.translation(self._v)

    def rotation(self) -> DQ:
        return self.P

    def is_unit(self, atol: float = 1e-9) -> bool:
        return bool(_dq.is_unit(self._v, atol=atol))

    def isclose(self, other, atol: float = 1e-12) -> bool:
        return bool(np.allclose(self._v, _coerce(other)._v, rtol=0.0, atol=atol))

    # ------------------------------------------------------------------ operators
    def __add__(self, other):
        o = _coerce_or_none(other)
        return NotImplemented if o is None else DQ(self._v + o._v)

    __radd__ = __add__

    def __sub__(self, other):
        o = _coerce_or_none(other)
        return NotImplemented if o is None else DQ(self._v - o._v)

    def __rsub__(self, other):
        o = _coerce_or_none(other)
        return NotImplemented if o is None else DQ(o._v - self._v)

    def __neg__(self):
        return DQ(-self._v)

    def __pos__(self):
        return DQ(self._v)

    def __mul__(self, other):
        if _is_real(other):
            return DQ(self._v * float(other))
        if isinstance(other, DQ):
            return DQ(_dq.mul(self._v, other._v))
        return NotImplemented

    def __rmul__(self, other):
        if _is_real(other):
            return DQ(float(other) * self._v)
        return NotImplemented

    def __truediv__(self, other):
        if _is_real(other):
            return DQ(self._v / float(other))
        return NotImplemented

    def __eq__(self, other):
        o = _coerce_or_none(other)
        return NotImplemented if o is None else bool(np.array_equal(self._v, o._v))

    __hash__ = None  # mutable-looking numeric type: not hashable

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        prim = _format_quat(self._v[:4])
        dual = self._v[4:]
        if not np.any(dual):
            return prim
        d = "ε(" + _format_quat(dual) + ")"
        if prim == "0":
            return d
        return prim + " + " + d

    __str__ = __repr__


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) or (isinstance(v, np.ndarray) and v.ndim == 0 and np.isrealobj(v))


def _coerce_or_none(v):
    if isinstance(v, DQ):
        return v
    if _is_real(v):
        return DQ([float(v), 0, 0, 0, 0, 0, 0, 0])
    return None


def _coerce(v) -> DQ:
    """A DQ from a DQ, a real scalar, or anything `DQ` accepts (raises ShapeError ...)."""
    o = _coerce_or_none(v)
    return DQ(v) if o is None else o


def _format_quat(q) -> str:
    terms = []
    for val, unit in zip(q, ("", "i", "j", "k")):
        if val == 0.0:
            continue
        mag = abs(val)
        s = f"{mag:.6g}"
        if unit and s == "1":
            s = ""
        s += unit
        if not terms:
            terms.append(("-" if val < 0 else "") + s)
        else:
            terms.append(("- " if val < 0 else "+ ") + s)
    return " ".join(terms) if terms else "0"


i_ = DQ([0, 1, 0, 0, 0, 0, 0, 0])
j_ = DQ([0, 0, 1, 0, 0, 0, 0, 0])
k_ = DQ([0, 0, 0, 1, 0, 0, 0, 0])
E_ = DQ([0, 0, 0, 0, 1, 0, 0, 0])

__all__ = ["DQ", "i_", "j_", "k_", "E_"]
