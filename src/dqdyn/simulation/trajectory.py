"""The `Trajectory` record returned by `simulate`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dqdyn.errors import DqdynError, ShapeError


@dataclass(frozen=True)
class Trajectory:
    """A sampled motion: times ``t`` (K,), configurations ``q`` (K, nq), velocities ``v`` (K, nv),
    accelerations ``a`` (K, nv) and generalized forces ``tau`` (K, nv).

    Row k holds the state at ``t[k]`` with the acceleration and force applied from ``t[k]`` on
    (the last row repeats the last evaluation).  ``meta`` holds free-form scalars/strings (model
    name, integrator, dt, ...) kept by `save`/`load`."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        K = len(self.t)
        for name in ("q", "v", "a", "tau"):
            x = getattr(self, name)
            if x.ndim != 2 or x.shape[0] != K:
                raise ShapeError(f"Trajectory.{name} must have shape (K={K}, n), got {x.shape}")

    def __len__(self) -> int:
        return len(self.t)

    @property
    def dt(self) -> float:
        return float(self.t[1] - self.t[0]) if len(self.t) > 1 else float("nan")

    def save(self, path) -> Path:
        """Write the trajectory to ``path`` (``.npz``, compressed)."""
        path = Path(path)
        meta = {f"meta_{k}": np.asarray(v) for k, v in self.meta.items()}
        np.savez_compressed(path, t=self.t, q=self.q, v=self.v, a=self.a, tau=self.tau, **meta)
        return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")

    @classmethod
    def load(cls, path) -> Trajectory:
        """Read a trajectory written by `save`."""
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = {k[5:]: z[k].item() if z[k].ndim == 0 else z[k] for k in z.files
                        if k.startswith("meta_")}
                return cls(z["t"], z["q"], z["v"], z["a"], z["tau"], meta)
        except KeyError as e:
            raise DqdynError(f"path {str(path)!r} is not a dqdyn trajectory (.npz): missing {e}") from None
