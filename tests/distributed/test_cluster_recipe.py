"""The cluster recipe of docs/clusters.md runs as written, with a LocalCluster in SLURMCluster's
place; a sweep store opened with xarray names its axes, its columns and their units."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")
xr = pytest.importorskip("xarray")

import dqdyn  # noqa: E402
from dqdyn import sweep as sw  # noqa: E402
from dqdyn.errors import IncompleteStoreError  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "clusters.md"


def _recipe() -> str:
    """The page's SLURM block (the one that imports dask_jobqueue)."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    (code,) = [b for b in blocks if "dask_jobqueue" in b]
    return code


class _LocalSLURM:
    """SLURMCluster's interface as the recipe uses it, on a LocalCluster of one worker."""

    def __init__(self, *, cores, processes, memory, walltime, job_extra_directives):
        from dask.distributed import LocalCluster

        assert cores >= 1 and processes == 1 and memory.endswith("GB") and ":" in walltime
        assert all(d.startswith("--") for d in job_extra_directives)  # sbatch directives
        self.local = LocalCluster(n_workers=0, threads_per_worker=1, processes=False,
                                  dashboard_address=None)
        self.scheduler_address = self.local.scheduler_address

    def scale(self, jobs):
        self.local.scale(1 if jobs else 0)  # one worker stands for the jobs

    def close(self):
        self.local.close()

    # Client(cluster) reads these
    def __getattr__(self, name):
        return getattr(self.local, name)


def test_the_slurm_recipe_runs_on_a_local_cluster(tmp_path, monkeypatch, capsys):
    code = _recipe()
    small = code.replace("states=200_000, chunk=20_000", "states=1_200, chunk=400")
    assert small != code, "the recipe's sizes changed: update this test's substitution"
    fake = types.ModuleType("dask_jobqueue")
    fake.SLURMCluster = _LocalSLURM
    monkeypatch.setitem(sys.modules, "dask_jobqueue", fake)
    monkeypatch.chdir(tmp_path)
    exec(compile(small, str(PAGE), "exec"), {"__name__": "__recipe__"})
    printed = capsys.readouterr().out
    # the recipe's printed mean is the mean of rnea over the store's states (an independent call)
    g, spec = sw.open_dataset(str(tmp_path / "panda_sweep.zarr"))
    m = dqdyn.load_example("panda")
    tau = dqdyn.rnea(m, g["q"][:], g["v"][:], g["a"][:])
    iv = m.v_slice("panda_joint2").start
    assert np.isclose(float(printed.split()[-1]), tau[:, iv].mean(), rtol=1e-12)


def test_a_store_opened_with_xarray_names_its_axes_columns_and_units(tmp_path):
    from dask.distributed import Client, LocalCluster

    m = dqdyn.load_example("panda")
    spec = sw.make_spec(m, states=300, chunk=100, quantities="tau,M", source="panda")
    path = str(tmp_path / "s.zarr")
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as c, Client(c) as cl:
        sw.run_sweep(path, m, spec, client=cl)
    ds = sw.open_xarray(path)
    assert ds["q"].dims == ("state", "q_coord") and ds["tau"].dims == ("model", "state", "v_coord")
    assert ds["M"].dims == ("model", "state", "v_coord", "v_coord_col")
    assert list(ds.q_coord.values)[0] == "panda_joint1:angle"
    assert ds["tau"].attrs["units"][0] == "N m" and ds["q"].attrs["units"][0] == "rad"
    assert ds.attrs["dqdyn_model"]["joint_names"] == list(m.joint_names)
    # the values are the store's, and rnea's
    q, v, a = (ds[k].values for k in ("q", "v", "a"))
    np.testing.assert_array_equal(ds["tau"].values[0], dqdyn.rnea(m, q, v, a))
    # plain xarray sees the named axes too (Zarr dimension_names)
    raw = xr.open_zarr(path, consolidated=False)
    assert raw["tau"].dims == ("model", "state", "v_coord")


def test_an_unfinished_store_is_refused_by_open_xarray(tmp_path):
    from dask.distributed import Client, LocalCluster

    m = dqdyn.load_example("panda")
    spec = sw.make_spec(m, states=300, chunk=100, quantities="tau")
    path = str(tmp_path / "s.zarr")
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as c, Client(c) as cl:
        sw.run_sweep(path, m, spec, client=cl, max_chunks=1)
    with pytest.raises(IncompleteStoreError, match="tasks"):
        sw.open_xarray(path)
    assert sw.open_xarray(path, allow_incomplete=True)["tau"].shape == (1, 300, m.nv)
