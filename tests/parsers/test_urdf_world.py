"""URDF files as the world writes them (PyBullet's ``pybullet_data`` style prologues, missing
optional tags, zero masses, PyBullet's ``lower > upper``, slightly impossible inertias): each
loads, and its dynamics match Pinocchio's own parse of the same file (``buildModelFromUrdf``) on
rnea and the mass matrix to 1e-12 relative.  The side readers of URDF files raise URDFError
naming the file and the line."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr

import numpy as np
import pytest

import dqdyn
from dqdyn.errors import URDFError

pin = pytest.importorskip("pinocchio")
from dqdyn.interop import pinocchio as bridge  # noqa: E402

INERTIA = '<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.015"/>'


def _link(name, inertial=True, mass="1.3", origin='<origin xyz="0.02 0.01 0.1" rpy="0.1 0.2 0.3"/>',
          inertia=INERTIA):
    if not inertial:
        return f'<link name="{name}"/>'
    return (f'<link name="{name}"><inertial>{origin}<mass value="{mass}"/>{inertia}</inertial>'
            f'<visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual></link>')


def _joint(name, parent, child, type="revolute", origin='<origin xyz="0 0.05 0.3" rpy="0.2 0 0.1"/>',
           axis='<axis xyz="0 1 0"/>', limit='<limit lower="-2" upper="2" effort="10" velocity="3"/>'):
    return (f'<joint name="{name}" type="{type}"><parent link="{parent}"/><child link="{child}"/>'
            f'{origin}{axis}{limit}</joint>')


def _arm(*, prologue='<?xml version="1.0"?>\n', base=None, l1=None, l2=None, j1=None, j2=None,
         extra=""):
    base = base or _link("base", mass="2.0")
    l1 = l1 or _link("l1")
    l2 = l2 or _link("l2", mass="0.7", origin='<origin xyz="0 0 0.15"/>')
    j1 = j1 or _joint("j1", "base", "l1", origin='<origin xyz="0 0 0.1"/>', axis='<axis xyz="0 0 1"/>')
    j2 = j2 or _joint("j2", "l1", "l2")
    return f'{prologue}<robot name="arm">{base}{l1}{l2}{j1}{j2}{extra}</robot>\n'


CASES = {
    # PyBullet's prologue (52 files of pybullet_data open so)
    "version 0.0": _arm(prologue='<?xml version="0.0" ?>\n'),
    "version 0.0, encoding": _arm(prologue="<?xml version='0.0' encoding='ISO-8859-1'?>\n<!-- \xe9 -->\n"),
    "blank lines before the declaration": _arm(prologue='\n\n  <?xml version="1.0"?>\n'),
    "no inertial on a moving link": _arm(l1=_link("l1", inertial=False)),
    "no origin anywhere": _arm(l1=_link("l1", origin=""), j2=_joint("j2", "l1", "l2", origin="")),
    "inertial origin with rpy only": _arm(l1=_link("l1", origin='<origin rpy="0.3 -0.2 0.1"/>')),
    "continuous joint without limit": _arm(j2=_joint("j2", "l1", "l2", type="continuous", limit="")),
    "continuous joint with effort only": _arm(
        j2=_joint("j2", "l1", "l2", type="continuous", limit='<limit effort="5" velocity="1"/>')),
    "mass 0 with an inertia": _arm(l1=_link("l1", mass="0")),
    "mass 0 without an inertia": _arm(l1=(
        '<link name="l1"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" '
        'iyz="0" izz="0"/></inertial></link>')),
    "no axis (default x)": _arm(j2=_joint("j2", "l1", "l2", axis="")),
    "unnormalised axis": _arm(j2=_joint("j2", "l1", "l2", axis='<axis xyz="0 2 2"/>')),
    "prismatic joint": _arm(j2=_joint("j2", "l1", "l2", type="prismatic", axis='<axis xyz="1 0 1"/>')),
    "lower above upper (PyBullet's no-limit)": _arm(
        j2=_joint("j2", "l1", "l2", limit='<limit lower="1" upper="-1" effort="1" velocity="1"/>')),
    "triangle inequality slightly broken": _arm(l1=_link(
        "l1", inertia='<inertia ixx="0.00306" ixy="0" ixz="0" iyy="0.02364" iyz="0" izz="0.02690"/>')),
    "fixed links, a massive fixed base": _arm(
        extra=_link("sensor", mass="0.2") + _joint("jf", "l2", "sensor", type="fixed", axis="",
                                                    limit="")
        + _link("plate", mass="3.0") + _joint("jp", "base", "plate", type="fixed", axis="", limit="")),
    "geometry-only links and unknown top-level tags": _arm(
        extra='<material name="red"><color rgba="1 0 0 1"/></material><gazebo><plugin/></gazebo>'
              '<link name="tip"><visual><geometry><sphere radius="0.1"/></geometry></visual></link>'
              + _joint("jt", "l2", "tip", type="fixed", axis="", limit="")),
}


def _pin(path, root):
    with redirect_stderr(io.StringIO()):
        if root == "free":
            return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        return pin.buildModelFromUrdf(str(path))


@pytest.mark.parametrize("root", [None, "free"])
@pytest.mark.parametrize("case", list(CASES))
def test_world_urdf_matches_pinocchio(case, root, tmp_path):
    doc = CASES[case]
    path = tmp_path / "robot.urdf"
    path.write_bytes(doc.encode("latin-1") if "ISO-8859-1" in doc else doc.encode("utf-8"))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model = dqdyn.load_urdf(path, root_joint=root)
    if "lower above upper" in case:
        assert any("no position limit" in str(w.message) for w in rec)
        j2 = model.q_slice("j2")
        assert np.isinf(model.q_lower[j2]).all() and np.isinf(model.q_upper[j2]).all()
    if "triangle" in case:
        assert any("triangle inequality" in str(w.message) for w in rec)
    pm = _pin(path, root)
    pd = pm.createData()
    assert model.nv == pm.nv
    assert model.total_mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    if root is None:  # the welded base is Pinocchio's universe inertia
        m, c, I = model.welded_inertia
        assert m == pytest.approx(pm.inertias[0].mass, rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(c, pm.inertias[0].lever, atol=1e-12)
        np.testing.assert_allclose(I, pm.inertias[0].inertia, atol=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = dqdyn.random_configuration(model, seed=rng)
        v, a = rng.normal(size=(2, model.nv))
        qp, vp, ap = (bridge.q_to_pin(model, pm, q), bridge.v_to_pin(model, pm, q, v),
                      bridge.a_to_pin(model, pm, q, v, a))
        tau_ref = bridge.tau_from_pin(model, pm, q, pin.rnea(pm, pd, qp, vp, ap))
        tau = dqdyn.rnea(model, q, v, a)
        assert np.abs(tau - tau_ref).max() <= 1e-12 * max(1.0, np.abs(tau_ref).max()), case
        M_ref = bridge.matrix_from_pin(model, pm, q, pin.crba(pm, pd, qp, pin.Convention.WORLD))
        M = dqdyn.mass_matrix(model, q)
        assert np.abs(M - M_ref).max() <= 1e-12 * np.abs(M_ref).max(), case


def test_prologue_keeps_line_numbers_in_errors(tmp_path):
    f = tmp_path / "broken.urdf"
    f.write_text('\n\n<?xml version="0.0"?>\n<robot name="x">\n<link name="a">\n</robot>\n')
    with pytest.raises(URDFError) as ei:
        dqdyn.load_urdf(f)
    msg = str(ei.value)
    assert str(f) in msg and "line 6" in msg, msg


def test_side_readers_raise_urdf_error_with_file_and_line(tmp_path):
    from dqdyn.elastic.model import read_transmissions

    f = tmp_path / "broken.urdf"
    f.write_text('<?xml version="1.0"?>\n<robot name="x">\n<transmission name="t">\n</robot>\n')
    with pytest.raises(URDFError) as ei:
        read_transmissions(f)
    assert str(f) in str(ei.value) and "line 4" in str(ei.value), str(ei.value)
    with pytest.raises(URDFError, match="line 1"):
        read_transmissions("<robot><link></robot>")
    ok = tmp_path / "ok.urdf"
    ok.write_text('\n<?xml version="0.0"?>\n<robot name="x"><transmission name="t"><joint name="j1"/>'
                  '<actuator name="m"><mechanicalReduction>50</mechanicalReduction></actuator>'
                  '</transmission></robot>\n')
    assert read_transmissions(ok) == {"j1": 50.0}


def test_visual_reader_raises_urdf_error_with_file_and_line(tmp_path):
    geometry = pytest.importorskip("dqdyn.viz.geometry")
    good = tmp_path / "arm.urdf"
    good.write_text(_arm(prologue='<?xml version="0.0"?>\n'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dqdyn.load_urdf(good)
    assert len(geometry.urdf_visuals(model, str(good))) == 3
    bad = tmp_path / "bad.urdf"
    bad.write_text(_arm().replace("</robot>", "<link></robot>"))
    with pytest.raises(URDFError) as ei:
        geometry.urdf_visuals(model, str(bad))
    assert str(bad) in str(ei.value) and "line" in str(ei.value)
