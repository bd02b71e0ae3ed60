"""Parameter sweeps and resumable datasets on Dask (``dqdyn sweep``).

Model families
--------------
`perturb_model` returns a copy of a model with perturbed inertial parameters that are
physically consistent *by construction*: per body, the mass is scaled by a log-normal factor
(stays > 0), the CoM is moved by a normal offset (metres), and the density-weighted second moment
about the CoM ``Σ = ½ tr(Ī_c) 1 − Ī_c`` (the upper-left block of the pseudo-inertia
``J = [[Σ + m c cᵀ, m c], [m cᵀ, m]]``; ``J ⪰ 0`` ⇔ physical consistency, Wensing, Lee & Hogan
2017) is rebuilt from its eigen-decomposition with its principal second moments scaled by
log-normal factors (stay ≥ 0) and its principal axes turned by a small random rotation, then
scaled with the mass.  ``Σ' ⪰ 0`` gives ``Ī_c' = tr(Σ') 1 − Σ'`` that satisfies the triangle
inequalities.  A payload (a point mass, uniform in ``[0, payload]`` kg at a fixed offset) is added
to one body with the parallel-axis theorem (`dqdyn.multibody.builders.combine_inertia`).
Member ``k`` of a family depends only on ``(seed, k)``.

Datasets
--------
`run_sweep` writes a Zarr group::

    q (N, nq), v (N, nv), a or tau (N, nv)     the sampled inputs (random or a grid of q)
    params (K, nbodies, 10)                     inertial parameters of each model (order of
                                                dqdyn.inertial_parameters)
    <quantity> (K, N, ...)                      one per quantity asked for, model k in row k
    _done (K, chunks)                           1 once task (k, j) has written its chunk

Task ``(k, j)`` generates the states of chunk ``j`` from the seed ``(seed, j)`` (so the inputs
do not depend on which worker, which run, or in which order), evaluates model ``k``, writes its
outputs (and, for ``k = 0``, the inputs), and only then sets ``_done[k, j]``.  A run skips the
tasks already marked done: an interrupted sweep (process stopped, worker killed) resumes where it
stopped, a chunk that was written without its marker is written again (identically), and the
result equals an uninterrupted run's bit for bit.  The group's ``dqdyn_sweep`` attribute records
the specification; resuming with a different one is refused.  ``dqdyn_complete`` becomes true
once every task is done (`open_dataset` refuses the store until then), ``dqdyn_model``
describes the model (`describe_model`); the markers and the attribute are the mechanism
`dqdyn.scale._stores` gives `dqdyn.scale.distributed.to_zarr` too.  A cluster that can make no
progress (no workers, workers that keep dying) stops the run with a
`ClusterError` that says how to resume.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from dqdyn.errors import ClusterError, DqdynError, IncompleteStoreError, ModelError, ShapeError, UnknownNameError
from dqdyn.multibody.model import MF_COM, MF_INERTIA, MF_MASS, Model
from dqdyn.scale import _stores
from dqdyn.scale._stores import describe_model


# =============================================================================== model families
def _random_rotation(rng, angle_sigma: float) -> np.ndarray:
    """exp([ω]×) with ω ~ N(0, angle_sigma² 1) (Rodrigues)."""
    w = rng.normal(scale=angle_sigma, size=3)
    th = float(np.linalg.norm(w))
    if th == 0.0:
        return np.eye(3)
    k = w / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * (K @ K)


def with_inertia(model: Model, mass, com, inertia, name: str | None = None) -> Model:
    """A copy of ``model`` with per-body ``mass`` (nbodies+1,), ``com`` (nbodies+1, 3) and CoM
    ``inertia`` (nbodies+1, 3, 3) (row 0, the world, ignored); everything else shared."""
    import dataclasses

    mf = model.mf.copy()
    mf[1:, MF_MASS] = np.asarray(mass, dtype=float)[1:]
    mf[1:, MF_COM:MF_COM + 3] = np.asarray(com, dtype=float)[1:]
    mf[1:, MF_INERTIA:MF_INERTIA + 9] = np.asarray(inertia, dtype=float)[1:].reshape(-1, 9)
    kw = {f.name: getattr(model, f.name) for f in dataclasses.fields(model)
          if f.init and f.name != "_index"}
    kw["mf"] = mf
    kw["mi"] = model.mi.copy()
    if name is not None:
        kw["name"] = name
    return type(model)(**kw)


@dataclass(frozen=True)
class Perturbation:
    """How `perturb_model` perturbs each body (0 leaves a part unchanged).

    ``mass``: σ of the log of the mass factor; ``com``: σ of the CoM offset (m); ``inertia``: σ of
    the log of the principal second moments' factors; ``axes``: σ of the rotation of the principal
    axes (rad); ``payload``: largest payload mass (kg) added to ``payload_body`` (default: the
    last body) at ``payload_offset`` (m, in that body's frame)."""

    mass: float = 0.0
    com: float = 0.0
    inertia: float = 0.0
    axes: float = 0.0
    payload: float = 0.0
    payload_body: str | None = None
    payload_offset: tuple = (0.0, 0.0, 0.0)

    def __post_init__(self):
        for k in ("mass", "com", "inertia", "axes", "payload"):
            x = getattr(self, k)
            if not (isinstance(x, (int, float)) and np.isfinite(x) and x >= 0):
                raise ShapeError(f"{k} must be a finite number ≥ 0, got {x!r}")
        if len(self.payload_offset) != 3:
            raise ShapeError(f"payload_offset must have 3 entries, got {self.payload_offset!r}")

    @property
    def is_zero(self) -> bool:
        return not (self.mass or self.com or self.inertia or self.axes or self.payload)


def perturb_model(model: Model, perturbation: Perturbation, seed: int = 0, index: int = 0) -> Model:
    """Member ``index`` of the family of ``model`` under ``perturbation`` (random stream
    ``(seed, index)``); physically consistent by construction (module docstring).  Massless
    bodies keep their (zero) inertia; they can still receive the payload."""
    p = perturbation
    rng = np.random.default_rng([int(seed), int(index)])
    nb1 = model.nbodies + 1
    mass = np.array(model.mass, dtype=float)
    com = np.array(model.com, dtype=float)
    Ic = np.array(model.inertia, dtype=float)
    for i in range(1, nb1):
        # draw every number for every body, so member k of a family does not depend on p's zeros
        e_m, e_c, e_I, = rng.normal(), rng.normal(size=3), rng.normal(size=3)
        R = _random_rotation(rng, p.axes)
        if mass[i] <= 0:
            continue
        s = float(np.exp(p.mass * e_m))
        Sig = 0.5 * np.trace(Ic[i]) * np.eye(3) - Ic[i]
        lam, U = np.linalg.eigh(0.5 * (Sig + Sig.T))
        lam = np.clip(lam, 0.0, None) * np.exp(p.inertia * e_I)
        U = R @ U
        Sig2 = s * (U * lam) @ U.T
        Sig2 = 0.5 * (Sig2 + Sig2.T)
        mass[i] *= s
        com[i] = com[i] + p.com * e_c
        Ic[i] = np.trace(Sig2) * np.eye(3) - Sig2
    if p.payload:
        from dqdyn.multibody.builders import combine_inertia

        b = model.nbodies if p.payload_body is None else model.body_index(p.payload_body)
        mp = float(rng.uniform(0.0, p.payload))
        m2, c2, I2 = combine_inertia(mass[b], com[b], Ic[b], mp, np.asarray(p.payload_offset, float),
                                     np.zeros((3, 3)))
        mass[b], com[b], Ic[b] = m2, c2, I2
    return with_inertia(model, mass, com, Ic, name=f"{model.name}~{index}")


def model_family(model: Model, n: int, perturbation: Perturbation, seed: int = 0) -> list[Model]:
    """``n`` perturbed copies of ``model`` (`perturb_model` with indices 0 … n−1); with a
    zero perturbation, ``n`` copies of ``model`` itself."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ShapeError(f"n must be a positive integer (models), got {n!r}")
    if perturbation.is_zero:
        return [model] * int(n)
    return [perturb_model(model, perturbation, seed, k) for k in range(int(n))]


def check_physical(model: Model, tol: float = 1e-12) -> None:
    """`ModelError` unless every body has ``m ≥ 0`` and a CoM inertia whose
    principal moments satisfy the triangle inequalities (within ``tol`` relative)."""
    for i in range(1, model.nbodies + 1):
        m = float(model.mass[i])
        ev = np.linalg.eigvalsh(np.asarray(model.inertia[i]))
        scale = tol * max(1e-300, float(np.abs(ev).max()))
        if m < 0 or ev.min() < -scale or any(
                ev[a] + ev[b] < ev[c] - scale for a, b, c in ((0, 1, 2), (0, 2, 1), (1, 2, 0))):
            raise ModelError(f"body {model.body_names[i]!r} of {model.name!r}: mass {m} and "
                             f"principal inertias {ev} are not physically consistent")


def evaluate_family(fn, models, *arrays, **kwargs):
    """``[dqdyn.scale.distributed.apply(fn, m, *arrays, **kwargs) for m in models]``: one lazy result
    per model (each model is one key of the graph)."""
    from dqdyn.scale.distributed import apply

    return [apply(fn, m, *arrays, **kwargs) for m in models]


# =============================================================================== datasets
#: quantity -> (function, inputs mode it needs ('a', 'tau' or None), output index or None, shape)
QUANTITIES = {
    "tau": ("rnea", "a", None, lambda m: (m.nv,)),
    "qdd": ("aba", "tau", None, lambda m: (m.nv,)),
    "M": ("mass_matrix", None, None, lambda m: (m.nv, m.nv)),
    "Minv": ("mass_matrix_inverse", None, None, lambda m: (m.nv, m.nv)),
    "C": ("coriolis_matrix", None, None, lambda m: (m.nv, m.nv)),
    "g": ("gravity", None, None, lambda m: (m.nv,)),
    "h": ("nonlinear_effects", None, None, lambda m: (m.nv,)),
    "fk": ("forward_kinematics", None, None, lambda m: (m.nbodies + 1, 8)),
    "dtau_dq": ("rnea_derivatives", "a", 0, lambda m: (m.nv, m.nv)),
    "dtau_dv": ("rnea_derivatives", "a", 1, lambda m: (m.nv, m.nv)),
    "dqdd_dq": ("aba_derivatives", "tau", 0, lambda m: (m.nv, m.nv)),
    "dqdd_dv": ("aba_derivatives", "tau", 1, lambda m: (m.nv, m.nv)),
}
INPUTS = ("q", "v", "a", "tau")


class SweepMismatchError(DqdynError, ValueError):
    """A dataset store holds a sweep with another specification than the one asked for."""


@dataclass
class SweepSpec:
    """What a dataset contains (recorded in the store; a resumed run must ask for the same)."""

    model: str  # how the model was given (path / bundled name), for the record
    model_token: str  # dqdyn.scale.distributed.model_token of the base model
    nq: int
    nv: int
    nbodies: int
    states: int
    chunk: int
    seed: int = 0
    sampling: str = "random"  # or "grid"
    grid: int = 0  # points per q entry for sampling="grid"
    inputs: str = "a"  # sample (q, v, a) -> tau, or (q, v, tau) -> qdd
    quantities: tuple = ("tau",)
    models: int = 1
    perturbation: dict = field(default_factory=dict)
    accel_scale: float = 1.0
    velocity_scale: float = 1.0
    compressor: str = "zstd"  # of the data arrays: see COMPRESSORS

    @property
    def nchunks(self) -> int:
        return -(-self.states // self.chunk)

    def to_json(self) -> dict:
        d = asdict(self)
        d["quantities"] = list(self.quantities)
        if d["compressor"] == "zstd":  # (the default: stores made before the option still resume)
            del d["compressor"]
        return json.loads(json.dumps(d))


def make_spec(model: Model, *, states: int | None = None, chunk: int = 65536, seed: int = 0,
              sampling: str = "random", grid: int = 0, inputs: str = "a",
              quantities=("tau",), models: int = 1, perturbation: Perturbation | None = None,
              accel_scale: float = 1.0, velocity_scale: float = 1.0, source: str = "",
              compressor: str = "zstd") -> SweepSpec:
    """A validated `SweepSpec` (errors name the argument).  ``compressor``: of the data
    arrays, one of `COMPRESSORS`."""
    from dqdyn.scale.distributed import model_token

    if compressor not in COMPRESSORS:
        raise UnknownNameError(f"compressor must be one of {list(COMPRESSORS)}, got {compressor!r}")
    if sampling not in ("random", "grid"):
        raise UnknownNameError(f"sampling must be 'random' or 'grid', got {sampling!r}")
    if inputs not in ("a", "tau"):
        raise UnknownNameError(f"inputs must be 'a' (inverse dynamics) or 'tau' (forward), got {inputs!r}")
    if isinstance(quantities, str):
        quantities = [s for s in quantities.replace(" ", "").split(",") if s]
    qs = []
    for k in quantities:
        if k in ("q", "v") or k == inputs:
            continue  # the sampled inputs are always stored
        if k == "a":
            raise UnknownNameError("quantity 'a': with sampled tau (--inputs tau) the "
                                   "acceleration is the quantity 'qdd'")
        if k not in QUANTITIES:
            raise UnknownNameError(f"quantity {k!r} is unknown; choose from "
                                   f"{list(INPUTS) + sorted(QUANTITIES)}")
        need = QUANTITIES[k][1]
        if need is not None and need != inputs:
            raise UnknownNameError(f"quantity {k!r} needs sampled {need!r} (--inputs {need}); "
                                   f"this sweep samples {inputs!r}")
        if k not in qs:
            qs.append(k)
    if sampling == "grid":
        if model.has_quaternion_joints:
            raise ShapeError("sampling='grid' needs a model without spherical/free joints")
        if isinstance(grid, bool) or not isinstance(grid, int) or grid < 2:
            raise ShapeError(f"grid must be an integer ≥ 2 (points per q entry), got {grid!r}")
        n = grid ** model.nq
        if states not in (None, n):
            raise ShapeError(f"states: a grid of {grid} points on {model.nq} q entries has {n} "
                             f"states, got states={states}")
        states = n
    for k, x in (("states", states), ("chunk", chunk), ("models", models)):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
            raise ShapeError(f"{k} must be a positive integer, got {x!r}")
    p = perturbation or Perturbation()
    return SweepSpec(model=str(source), model_token=model_token(model), nq=model.nq, nv=model.nv,
                     nbodies=model.nbodies, states=int(states), chunk=int(min(chunk, states)),
                     seed=int(seed), sampling=sampling, grid=int(grid), inputs=inputs,
                     quantities=tuple(qs), models=int(models),
                     perturbation={k: (list(v) if isinstance(v, tuple) else v)
                                   for k, v in asdict(p).items()},
                     accel_scale=float(accel_scale), velocity_scale=float(velocity_scale),
                     compressor=compressor)


def perturbation_of(spec: SweepSpec) -> Perturbation:
    d = dict(spec.perturbation)
    if "payload_offset" in d:
        d["payload_offset"] = tuple(d["payload_offset"])
    return Perturbation(**d)


def chunk_states(model: Model, spec: SweepSpec, j: int) -> dict:
    """The inputs of chunk ``j`` (deterministic: random stream ``(seed, j)``)."""
    s = j * spec.chunk
    e = min(spec.states, s + spec.chunk)
    n = e - s
    rng = np.random.default_rng([spec.seed, j])
    if spec.sampling == "grid":
        lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
        hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
        idx = np.stack(np.unravel_index(np.arange(s, e), (spec.grid,) * model.nq), axis=1)
        q = lo + (hi - lo) * (idx / (spec.grid - 1))
    else:
        from dqdyn.kinematics.forward import random_configuration

        q = random_configuration(model, size=n, seed=rng)
    vl = np.where(np.isfinite(model.velocity_limit) & (model.velocity_limit > 0),
                  model.velocity_limit, 1.0) * spec.velocity_scale
    v = rng.uniform(-vl, vl, (n, model.nv))
    if spec.inputs == "a":
        x = rng.normal(scale=spec.accel_scale, size=(n, model.nv))
    else:
        el = np.where(np.isfinite(model.effort_limit) & (model.effort_limit > 0),
                      model.effort_limit, 1.0)
        x = rng.uniform(-el, el, (n, model.nv))
    return {"q": np.ascontiguousarray(q), "v": v, spec.inputs: x}


def compute_chunk(model: Model, spec: SweepSpec, j: int, states: dict | None = None) -> dict:
    """The quantities of chunk ``j`` under ``model`` (one batched call per function)."""
    from dqdyn.scale.distributed import FUNCTIONS, call_block

    st = states if states is not None else chunk_states(model, spec, j)
    cache, out = {}, {}
    for k in spec.quantities:
        fname, _, idx, _ = QUANTITIES[k]
        if fname not in cache:
            args = [st[n] for n in FUNCTIONS[fname].inputs]
            cache[fname] = call_block(fname, model, {}, *args)
        r = cache[fname]
        out[k] = r if idx is None else r[idx]
    return out


def _identity(x):
    return x


def _open(path: str):
    import zarr

    return zarr.open_group(path, mode="r+")  # per task: a few metadata reads, never stale


def sweep_task(path: str, spec_json: dict, model: Model, k: int, j: int) -> tuple[int, int]:
    """Task ``(k, j)`` (runs on a worker, or in process): compute, write, then mark done."""
    spec = SweepSpec(**{**spec_json, "quantities": tuple(spec_json["quantities"])})
    g = _open(path)
    s = j * spec.chunk
    e = min(spec.states, s + spec.chunk)
    st = chunk_states(model, spec, j)
    out = compute_chunk(model, spec, j, st)
    if k == 0:
        for name, x in st.items():
            g[name][s:e] = x
    for name, x in out.items():
        g[name][k, s:e] = x
    _stores.mark_done(g["_done"], (k, j))  # after the data: a chunk without it is written again
    return k, j


#: compressors of a dataset's arrays: Zarr's default (Zstandard), Blosc's LZ4 with byte shuffle
#: (faster, compresses less), none (random states hardly compress; the fastest to write)
COMPRESSORS = ("zstd", "lz4", "none")


def _codec(name: str):
    if name == "none":
        return None
    from zarr.codecs import BloscCodec

    return BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")


#: the attribute a store has while it is being made (replaced by ``dqdyn_sweep`` at the end)
CREATING = "dqdyn_sweep_creating"


def create_store(path: str, spec: SweepSpec, models: list[Model], overwrite: bool = False,
                 model_info: dict | None = None):
    """Create the Zarr group for ``spec`` (or open an existing one with the same spec).

    The group is made with the attribute ``dqdyn_sweep_creating`` and gets ``dqdyn_sweep`` (the
    specification), ``dqdyn_complete`` and ``dqdyn_model`` (``model_info``: `describe_model`)
    only once every array is in place; a creation that was stopped (the first attribute without
    the second, or a directory with nothing but Zarr's temporary files) is made again without
    ``overwrite``.  Opening an existing sweep removes Zarr's leftover ``*.partial`` files."""
    import zarr

    from dqdyn.dynamics.derivatives import inertial_parameters

    want = spec.to_json()
    if os.path.exists(path) and not overwrite:
        try:
            g = zarr.open_group(path, mode="r+")
        except Exception as e:  # noqa: BLE001 - not a zarr group
            if not _stores.only_partials(path):
                raise SweepMismatchError(f"store {path!r} exists and is not a dqdyn sweep ({e})") from None
            g = None  # killed before the group's metadata was written: made again below
        have = None if g is None else g.attrs.get("dqdyn_sweep")
        if g is not None and have is None and CREATING not in g.attrs:
            raise SweepMismatchError(f"store {path!r} holds a Zarr group that is not a dqdyn sweep "
                                     "(no dqdyn_sweep attribute); choose another --out, or pass "
                                     "overwrite / --overwrite to replace it")
        if have is not None:
            if have != want:
                diff = sorted(k for k in set(want) | set(have) if have.get(k) != want.get(k))
                raise SweepMismatchError(
                    f"store {path!r} holds a sweep with a different specification (differs in "
                    f"{diff}); resume with the same arguments, or pass overwrite / --overwrite")
            _stores.clean_partials(path)
            return g
    g = zarr.open_group(path, mode="w", attributes={CREATING: want})  # (one metadata write)
    N, K, c = spec.states, spec.models, spec.chunk
    kw = {} if spec.compressor == "zstd" else {"compressors": _codec(spec.compressor)}

    def mk(name, shape, chunks, dtype="f8"):
        return g.create_array(name, shape=shape, chunks=chunks, dtype=dtype, fill_value=0,
                              dimension_names=_dims(name, len(shape)), **(kw if dtype == "f8" else {}))

    mk("q", (N, spec.nq), (c, spec.nq))
    mk("v", (N, spec.nv), (c, spec.nv))
    mk(spec.inputs, (N, spec.nv), (c, spec.nv))
    m0 = models[0]
    for q in spec.quantities:
        shp = QUANTITIES[q][3](m0)
        mk(q, (K, N) + shp, (1, c) + shp)
    mk("params", (K, spec.nbodies, 10), (K, spec.nbodies, 10))
    g["params"][:] = np.stack([inertial_parameters(m) for m in models])
    for name, units in _units(model_info or {}, (*INPUTS, *spec.quantities)).items():
        if name in g:
            g[name].attrs.update({"units": units})
    _stores.create_markers(g, _stores.MARKERS, (K, spec.nchunks), ("model", "chunk"))
    # last, in one metadata write: a store without it is not a finished creation
    g.attrs.put({"dqdyn_sweep": want, _stores.COMPLETE: False, "dqdyn_model": model_info or {}})
    return g


#: the named axes of each array of a sweep store (Zarr ``dimension_names``: xarray reads them)
_AXES = {"q": ("state", "q_coord"), "v": ("state", "v_coord"), "a": ("state", "v_coord"),
         "params": ("model", "body", "parameter"),
         "fk": ("model", "state", "body", "dq")}


def _dims(name: str, ndim: int) -> tuple:
    if name in _AXES:
        return _AXES[name]
    if name == "tau" and ndim == 2:  # tau as the input of aba
        return ("state", "v_coord")
    # a quantity (model, state) + (nv,) or (nv, nv): rows along tau's axis, columns along v's
    return ("model", "state", "v_coord", "v_coord_col")[:ndim]


def _units(info: dict, names) -> dict:
    """The units of each input and quantity, from the model record (`_stores.describe_model`)."""
    u = info.get("units", {})
    return {n: u[n] for n in names if n in u}


def open_xarray(path: str, *, allow_incomplete: bool = False):
    """A finished sweep as an `xarray.Dataset`: the inputs ``q``, ``v``, ``a`` / ``tau`` on the
    axes ``state`` × ``q_coord`` / ``v_coord``, each quantity on ``model`` × ``state`` × its
    axes, with coordinates naming each column (``"joint:entry"``, e.g. ``"panda_joint1:angle"``),
    each array's ``units`` attribute, and the model's record (name, source file and its sha256,
    joint names) in the dataset's attributes.  Needs xarray (``pip install "dqdyn[distributed]"``);
    an unfinished sweep is `IncompleteStoreError` as in `open_dataset`."""
    from dqdyn._optional import require

    xr = require("distributed", "xarray")
    g, spec = open_dataset(path, allow_incomplete=allow_incomplete)
    info = dict(g.attrs.get("dqdyn_model") or {})
    ds = xr.open_zarr(path, consolidated=False, drop_variables=[_stores.MARKERS])
    coords = {"state": np.arange(spec.states), "model": np.arange(spec.models)}
    if len(info.get("q_layout", ())) == spec.nq:
        coords["q_coord"] = list(info["q_layout"])
    if len(info.get("v_layout", ())) == spec.nv:
        coords["v_coord"] = list(info["v_layout"])
        if "v_coord_col" in ds.dims:
            coords["v_coord_col"] = list(info["v_layout"])
    ds = ds.assign_coords({k: v for k, v in coords.items() if k in ds.dims})
    ds.attrs = {"dqdyn_model": info, "dqdyn_sweep": dict(g.attrs["dqdyn_sweep"])}
    return ds


def pending(path: str, spec: SweepSpec) -> list[tuple[int, int]]:
    """Tasks ``(k, j)`` not yet marked done."""
    import zarr

    done = zarr.open_group(path, mode="r")["_done"][:]
    return [(int(k), int(j)) for k, j in zip(*np.nonzero(done == 0))]


def run_sweep(path: str, model: Model, spec: SweepSpec, *, client=None, max_chunks: int | None = None,
              overwrite: bool = False, progress: bool = False, on_done=None,
              no_workers_timeout: float = 60.0, resume: str = "") -> dict:
    """Fill the dataset ``path`` for ``spec``; resumes an existing one (module docstring).

    ``client``: a ``distributed.Client`` (tasks run on its workers; each model reaches a
    worker once), or ``None`` to run the tasks in this process.  ``max_chunks``: stop after
    that many tasks (a later call continues).  ``on_done(k, j)`` is called in this process after
    each finished task.  Returns ``{"done", "total", "ran", "seconds"}``; the store gets
    ``dqdyn_complete = True`` once every task is done.

    When the cluster can make no progress it stops with `ClusterError`
    (the tasks done are kept; a later call resumes): no workers for ``no_workers_timeout``
    seconds, or a task whose workers died more often than Dask retries it
    (``distributed.scheduler.allowed-failures``).  ``resume``: how to resume, for its message
    (``dqdyn sweep`` passes its command line).
    """
    if spec.model_token != __import__("dqdyn.scale.distributed", fromlist=["x"]).model_token(model):
        raise SweepMismatchError("model: not the model this specification was made for")
    models = model_family(model, spec.models, perturbation_of(spec), spec.seed)
    create_store(path, spec, models, overwrite=overwrite, model_info=describe_model(model, spec.model))
    todo = pending(path, spec)
    if max_chunks is not None:
        todo = todo[: max(0, int(max_chunks))]
    total = spec.models * spec.nchunks
    sj = spec.to_json()
    t0 = time.perf_counter()
    bar = _progress(progress, total, total - len(pending(path, spec)))
    ran = 0
    how = resume or "call run_sweep again with the same arguments"
    try:
        if client is None:
            for k, j in todo:
                sweep_task(path, sj, models[k], k, j)
                ran += 1
                bar.advance()
                if on_done:
                    on_done(k, j)
        else:
            from dqdyn.scale.distributed import model_token

            # each model is one task that returns it: computed on one worker, fetched by the
            # others the first time a chunk needs it and kept (once per worker, never per chunk);
            # unlike scattered data it is recomputed if the worker holding it dies
            toks = {id(m): "dqdyn-model-" + model_token(m) for m in models}
            mf = {t: client.submit(_identity, m, key=t, pure=False) for m in models
                  for t in [toks[id(m)]]}
            futs = [mf[toks[id(m)]] for m in models]
            tasks = {client.submit(sweep_task, path, sj, futs[k], k, j, pure=False,
                                   key=f"dqdyn-sweep-{k}-{j}-{spec.model_token[:8]}-{time.time_ns()}"): (k, j)
                     for k, j in todo}
            for k, j in _watch(client, tasks, path, spec, float(no_workers_timeout), how):
                ran += 1
                bar.advance()
                if on_done:
                    on_done(k, j)
    finally:
        bar.close()
    left = len(pending(path, spec))
    if not left:
        import zarr

        zarr.open_group(path, mode="r+").attrs.update({_stores.COMPLETE: True})
    return {"done": total - left, "total": total, "ran": ran,
            "seconds": time.perf_counter() - t0}


def _allowed_failures(dask_scheduler=None):
    return dask_scheduler.allowed_failures


def _watch(client, tasks: dict, path: str, spec: SweepSpec, no_workers: float, how: str):
    """Yield ``(k, j)`` of each finished task; `ClusterError` when the
    cluster makes no progress (no workers for ``no_workers`` s, or a task whose workers died)."""
    from distributed import wait

    try:
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover
        KilledWorker = ()
    left = set(tasks)
    seen = time.monotonic()  # when the cluster last had a worker
    poll = max(0.05, min(1.0, no_workers / 4))

    def stop(msg):
        client.cancel(list(left))
        done = spec.models * spec.nchunks - len(pending(path, spec))
        return ClusterError(f"{msg}; {done}/{spec.models * spec.nchunks} chunks of {path!r} are "
                            f"stored (kept); {how} to resume")

    while left:
        try:
            done, _ = wait(list(left), timeout=poll, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = ()
        for f in done:
            left.discard(f)
            if f.status == "error":
                e = f.exception()
                k, j = tasks[f]
                if isinstance(e, KilledWorker):
                    try:  # (the scheduler's setting, not this process's)
                        n = int(client.run_on_scheduler(_allowed_failures)) + 1
                    except Exception:  # noqa: BLE001 - a scheduler that does not answer
                        n = "several"
                    raise stop(f"the cluster cannot progress: the workers running task (model {k}, "
                               f"chunk {j}) died {n} time(s), more than Dask retries a task "
                               "(distributed.scheduler.allowed-failures; killed, or out of memory: a "
                               "smaller --chunk needs less)") from None
                client.cancel(list(left))
                raise e
            yield tasks[f]
        if done:
            seen = time.monotonic()
            continue
        info = client.scheduler_info()
        if info.get("workers") or info.get("n_workers"):
            seen = time.monotonic()
        elif time.monotonic() - seen > no_workers:
            raise stop(f"the cluster at {info.get('address', client.scheduler.address)!r} has had no "
                       f"workers for {no_workers:g} s: no chunk can be computed (workers that did "
                       "not start, or that keep dying)")


class _Bar:
    def __init__(self, enabled, total, done):
        self.p = None
        if enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.p = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn(), TimeRemainingColumn())
            self.p.start()
            self.t = self.p.add_task("chunks", total=total, completed=done)

    def advance(self):
        if self.p:
            self.p.advance(self.t)

    def close(self):
        if self.p:
            self.p.stop()


def _progress(enabled, total, done):
    return _Bar(enabled, total, done)


def open_dataset(path: str, *, allow_incomplete: bool = False):
    """The Zarr group of a sweep and its `SweepSpec`; an unfinished sweep (a run that
    stopped, or a creation that did) is `IncompleteStoreError` naming what
    is missing (``allow_incomplete``: return it anyway; its rows not done read as 0.0)."""
    import zarr

    g = zarr.open_group(path, mode="r")
    _stores.check_numeric(g, repr(path))
    d = g.attrs.get("dqdyn_sweep")
    how = "run the same dqdyn sweep command (or run_sweep with the same arguments) again"
    if d is None:
        if CREATING in g.attrs:
            raise IncompleteStoreError(f"the creation of the sweep store {path!r} was stopped; {how}: "
                                       "it makes the store anew")
        raise SweepMismatchError(f"{path!r} is not a dqdyn sweep")
    spec = SweepSpec(**{**d, "quantities": tuple(d["quantities"])})
    if g.attrs.get(_stores.COMPLETE) is not True and not allow_incomplete:
        todo = pending(path, spec)
        if todo:
            raise _stores.incomplete(path, todo, spec.models * spec.nchunks,
                                     "tasks (model, chunk)",
                                     how)
    return g, spec


__all__ = [
    "COMPRESSORS",
    "QUANTITIES",
    "Perturbation",
    "SweepMismatchError",
    "SweepSpec",
    "check_physical",
    "chunk_states",
    "compute_chunk",
    "describe_model",
    "evaluate_family",
    "make_spec",
    "model_family",
    "open_dataset",
    "open_xarray",
    "pending",
    "perturb_model",
    "run_sweep",
    "with_inertia",
]
