"""Large URDFs: a long chain loads to the same dynamics as Pinocchio's parse, and the singular
mass-matrix warning of a massless link on a large model (checked by the articulated-body
recursion rather than M's eigenvalues there) agrees with M's eigenvalues.  (Load times are
measured in benchmarks/bench_urdf_load.py, not here.)"""

from __future__ import annotations

import io
import re
import sys
import warnings
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest

import dqdyn
from dqdyn.parsers import _urdf_checks as U

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_urdf_load import chain_urdf  # noqa: E402


def test_long_chain_matches_pinocchio(tmp_path):
    pin = pytest.importorskip("pinocchio")
    from dqdyn.interop import pinocchio as bridge

    path = tmp_path / "chain.urdf"
    path.write_text(chain_urdf(600))
    model = dqdyn.load_urdf(path)
    with redirect_stderr(io.StringIO()):
        pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    assert model.nv == pm.nv == 600
    rng = np.random.default_rng(0)
    q = dqdyn.random_configuration(model, seed=rng)
    v, a = rng.normal(size=(2, model.nv))
    qp, vp, ap = (bridge.q_to_pin(model, pm, q), bridge.v_to_pin(model, pm, q, v),
                  bridge.a_to_pin(model, pm, q, v, a))
    tau_ref = bridge.tau_from_pin(model, pm, q, pin.rnea(pm, pd, qp, vp, ap))
    assert np.abs(dqdyn.rnea(model, q, v, a) - tau_ref).max() <= 1e-12 * np.abs(tau_ref).max()


@pytest.mark.parametrize("collinear", [True, False])
def test_massless_link_warning_on_a_large_model_agrees_with_the_eigenvalues(tmp_path, collinear):
    n = U._EIG_NV_MAX + 20  # (the articulated-body route)
    doc = re.sub(r'<link name="l5"><inertial>.*?</inertial>', '<link name="l5">', chain_urdf(n))
    if not collinear:  # j6 about y: the massless l5's joint moves l6 … about another line
        doc = doc.replace('<child link="l6"/><origin xyz="0 0 0.1" rpy="0 0.0 0"/><axis xyz="0 0 1"/>',
                          '<child link="l6"/><origin xyz="0 0 0.1" rpy="0 0.0 0"/><axis xyz="0 1 0"/>')
        assert 'axis xyz="0 1 0"' in doc
    path = tmp_path / "chain.urdf"
    path.write_text(doc)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model = dqdyn.load_urdf(path)
    warned = any("singular" in str(w.message) and "'l5'" in str(w.message) for w in rec)
    # the oracle: M's eigenvalues at the neutral configuration
    ev = np.linalg.eigvalsh(dqdyn.mass_matrix(model, dqdyn.neutral(model)))
    singular = ev.min() <= 1e-12 * ev.max()
    assert warned == singular == collinear
