"""dqdyn.list_models / load_example / model_info and the optional-dependency helper."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dqdyn
from dqdyn import models
from dqdyn._optional import require
from dqdyn.errors import DqdynError, MissingExtraError, UnknownNameError


def test_every_bundled_model_loads_with_its_documented_kind_and_size():
    names = dqdyn.list_models("bundled")
    # every bundled URDF file has an entry (the index cannot fall behind dqdyn/data)
    assert set(dqdyn.bundled_models()) <= set(names)
    for n in names:
        e = dqdyn.model_info(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(dqdyn, e.loader)(n)
        if e.kind == "model":
            assert isinstance(obj, dqdyn.Model), n
            m = obj
        elif e.kind == "constrained":
            assert isinstance(obj, dqdyn.ConstrainedExample), n
            m, cons, q0 = obj
            assert q0.shape == (m.nq,)
            # q0 satisfies the constraints (oracle: the constraint residual)
            assert np.abs(dqdyn.constraint_errors(m, q0, np.zeros(m.nv), cons)[0]).max() < 1e-9
        else:
            from dqdyn.parallel import ParallelRobot

            assert isinstance(obj, ParallelRobot), n
            continue
        if e.nv is not None:
            assert m.nv == e.nv, n


def test_bundled_urdf_matches_load_bundled():
    a = dqdyn.load_example("youbot_jaco")
    b = dqdyn.load_bundled("youbot_jaco", root_joint="planar")
    assert (a.nq, a.nv) == (b.nq, b.nv) == (9, 9)
    np.testing.assert_array_equal(a.mf, b.mf)
    # the factories are the reproduce robots themselves
    from dqdyn.reproduce import robots

    np.testing.assert_array_equal(dqdyn.load_example("tree38").mf, robots.tree38().mf)


def test_kwargs_reach_the_loader():
    m = dqdyn.load_example("two_link_arm", root_joint="free")
    assert m.nv == 2 + 6
    assert dqdyn.load_example("pioneer", d=0.2).com[1][0] == pytest.approx(0.2)


def test_unknown_name_lists_the_models():
    with pytest.raises(UnknownNameError, match="jaco6") as ei:
        dqdyn.load_example("no_such_robot")
    assert "no_such_robot" in str(ei.value)
    with pytest.raises(DqdynError, match="source"):
        dqdyn.list_models("pypi")


def test_example_robot_data_missing_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(models, "example_robot_data_dir", lambda: None)
    assert "panda" not in dqdyn.list_models()
    with pytest.raises(MissingExtraError, match="pip install example-robot-data"):
        dqdyn.load_example("panda")
    with pytest.raises(UnknownNameError, match="pip install example-robot-data"):
        dqdyn.load_example("nope")


def test_example_robot_data_models_match_pinocchio():
    """Oracle: Pinocchio's own URDF parser on the same file, with example-robot-data's root."""
    pin = pytest.importorskip("pinocchio")
    if models.example_robot_data_dir() is None:
        pytest.skip("example-robot-data is not installed")
    for name in ("panda", "ur5", "talos", "tiago"):
        m = dqdyn.load_example(name)
        path = str(models.model_path(name))
        free = models.model_info(name).root_joint == "free"
        pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True) if free
              else pin.buildModelFromUrdf(path, mimic=True))
        assert m.nv == pm.nv, name
        assert m.total_mass == pytest.approx(sum(I.mass for I in list(pm.inertias)[1:])), name
    assert dqdyn.load_example("talos").nv == 38 and dqdyn.load_example("talos", root_joint=None).nv == 32


def test_require_names_the_extra():
    with pytest.raises(MissingExtraError, match=r'pip install "dqdyn\[sim\]"'):
        require("sim", "no_such_module_dqdyn_test")
    with pytest.raises(MissingExtraError, match="pip install foo-bar"):
        require("pip:foo-bar", "no_such_module_dqdyn_test.sub")
    assert require("core", "math").sqrt(4.0) == 2.0
