"""MJCF files as they come: every XML of gymnasium's and dm_control's packages that MuJoCo
compiles and that has a degree of freedom is loaded by load_mjcf with no ``ignore=``, and its
τ (rnea), M, gravity term, aba and body poses are compared with MuJoCo itself (mj_inverse,
mj_fullM, xpos / xmat) on random states, with MuJoCo's passive forces (damping, springs,
gravity compensation, fluid) and constraint forces (contacts, limits, friction loss, equalities)
switched off.  Armature: MuJoCo keeps it when dqdyn applies it, and is set to zero otherwise.

``compare_with_mujoco`` is also what ``benchmarks/mjcf_corpus_report.py`` runs."""

from __future__ import annotations

import glob
import importlib.util
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import dqdyn  # noqa: E402
from dqdyn.algebra.rotations import matrix_from_quat, translation_of  # noqa: E402
from dqdyn.parsers.mjcf import MujocoMap, body_name, load_mjcf  # noqa: E402

TOL = 1e-9
CORPUS = os.path.join(os.path.dirname(__file__), "mjcf_corpus")


def package_xmls(package: str, pattern: str) -> list[str]:
    """The XML files ``pattern`` (relative to the package folder) of an installed package, or []."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return []
    return sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), pattern)))


COLLECTIONS = {
    "gymnasium": ("gymnasium", "envs/mujoco/assets/*.xml"),
    "dm_control": ("dm_control", "suite/*.xml"),
}


def rigid_oracle(mj, keep_armature: bool):
    """``mj`` with everything that is not rigid-body dynamics switched off (in place)."""
    D = mujoco.mjtDisableBit
    mj.opt.disableflags |= int(D.mjDSBL_CONSTRAINT) | int(D.mjDSBL_SPRING) | int(D.mjDSBL_DAMPER)
    mj.dof_damping[:] = 0
    mj.jnt_stiffness[:] = 0
    mj.dof_frictionloss[:] = 0
    mj.body_gravcomp[:] = 0
    mj.tendon_stiffness[:] = 0
    mj.tendon_damping[:] = 0
    mj.opt.density = 0
    mj.opt.viscosity = 0
    mj.opt.wind[:] = 0
    if not keep_armature:
        mj.dof_armature[:] = 0
        if hasattr(mj, "actuator_armature"):
            mj.actuator_armature[:] = 0
    return mj


def _rel(x, ref, floor=1e-8):
    return float(np.abs(np.asarray(x) - ref).max() / max(np.abs(ref).max(), floor)) if np.size(ref) else 0.0


def compare_with_mujoco(source, n_states: int = 4, random_state: int = 0, oracle=None, ignore=()):
    """Load ``source`` as it comes and compare with MuJoCo.  Returns ``(model, errors)`` with the
    worst relative error of each quantity (``rnea``, ``M``, ``gravity``, ``aba``, ``poses``,
    ``jacobians`` — ``mj_jacBody`` of every body against dqdyn's world-aligned twist Jacobian —
    and ``mass``: ``total_mass + welded_inertia[0]`` against MuJoCo's ``body_mass.sum()``).
    ``oracle``: the document MuJoCo compiles (default ``source``), e.g. a copy of a file whose
    mesh files are absent with the meshes stripped; ``ignore``: passed to ``load_mjcf``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model, info = load_mjcf(source, return_info=True, ignore=ignore)
    oracle = source if oracle is None else oracle
    mj = mujoco.MjModel.from_xml_path(oracle) if not str(oracle).lstrip().startswith("<") else \
        mujoco.MjModel.from_xml_string(oracle)
    rigid_oracle(mj, keep_armature=info.armature_applied)
    m = MujocoMap(model, mj)
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(random_state)
    err = dict(rnea=0.0, M=0.0, gravity=0.0, aba=0.0, poses=0.0, jacobians=0.0)
    # every MuJoCo body's mass is in the model: moving, or welded to the world (welded_inertia)
    err["mass"] = _rel(model.total_mass + model.welded_inertia[0], float(mj.body_mass.sum()), 1e-300)
    jp, jr = np.zeros((3, mj.nv)), np.zeros((3, mj.nv))

    def inverse(q, v, a):
        d.qpos[:], d.qvel[:], d.qacc[:] = m.qpos(q), m.qvel(q, v), m.qacc(q, v, a)
        mujoco.mj_inverse(mj, d)
        assert not np.any(d.qfrc_passive), "the oracle still has passive forces"
        return m.tau(q, d.qfrc_inverse)

    for _ in range(n_states):
        q = dqdyn.random_configuration(model, seed=int(rng.integers(1 << 30)))
        v, a, tau = rng.normal(size=(3, model.nv))
        t_mj = inverse(q, v, a)
        err["rnea"] = max(err["rnea"], _rel(dqdyn.rnea(model, q, v, a), t_mj))
        Mf = np.zeros((mj.nv, mj.nv))
        mujoco.mj_fullM(mj, d, Mf)
        err["M"] = max(err["M"], _rel(dqdyn.mass_matrix(model, q), m.mass_matrix(q, Mf)))
        for b in range(1, mj.nbody):
            x = dqdyn.frame_pose(model, q, body_name(mj, b))
            err["poses"] = max(err["poses"],
                               _rel(translation_of(x), d.xpos[b], 1.0),
                               _rel(matrix_from_quat(x[:4]), d.xmat[b].reshape(3, 3), 1.0))
            mujoco.mj_jacBody(mj, d, jp, jr, b)
            J_mj = np.vstack([jr, jp]) @ m.velocity_map(q)
            err["jacobians"] = max(err["jacobians"], _rel(dqdyn.twist_jacobian(
                model, q, body_name(mj, b), "world_aligned"), J_mj, 1.0))
        z = np.zeros(model.nv)
        err["gravity"] = max(err["gravity"], _rel(dqdyn.gravity(model, q), inverse(q, z, z)))
        acc = dqdyn.aba(model, q, v, tau)
        err["aba"] = max(err["aba"], _rel(inverse(q, v, acc), tau))
    return model, err


def _cases():
    out = []
    for coll, (pkg, pattern) in COLLECTIONS.items():
        files = package_xmls(pkg, pattern)
        if not files:
            out.append(pytest.param(coll, None, marks=pytest.mark.skip(
                reason=f"{pkg} is not installed (pip install {pkg}): its MJCF files are the corpus")))
        out += [pytest.param(coll, f, id=f"{coll}/{os.path.basename(f)}") for f in files]
    return out


def _compiles_with_dofs(path):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mj = mujoco.MjModel.from_xml_path(path)
    except Exception as e:  # noqa: BLE001 - templates and include-only files
        return f"MuJoCo does not compile it on its own ({str(e).splitlines()[0][:80]})"
    if mj.nv == 0:
        return "it has no degree of freedom"
    return None


@pytest.mark.parametrize("collection, path", _cases())
def test_package_mjcf_loads_as_it_comes_and_matches_mujoco(collection, path):
    why = _compiles_with_dofs(path)
    if why:
        pytest.skip(f"{os.path.basename(path)}: {why}")
    model, err = compare_with_mujoco(path)
    bad = {k: v for k, v in err.items() if v > TOL}
    assert not bad, (os.path.basename(path), err)


def corpus_files():
    return sorted(glob.glob(os.path.join(CORPUS, "*.xml")))


@pytest.mark.parametrize("path", corpus_files(), ids=os.path.basename)
def test_corpus_file_matches_mujoco(path):
    model, err = compare_with_mujoco(path)
    bad = {k: v for k, v in err.items() if v > TOL}
    assert not bad, (os.path.basename(path), err)
