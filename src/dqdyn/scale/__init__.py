"""Scale-out: batched sweeps over grids of states or parameters (`sweep`), the same on a Dask
cluster into a Zarr store (`distributed`), and the stores' completion markers (``_stores``).
Users import them as ``dqdyn.sweep`` and ``dqdyn.distributed``."""
