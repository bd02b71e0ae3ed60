"""A dataset store made elsewhere is data: dqdyn's readers take numeric arrays only.

Zarr 3 (which dqdyn requires) refuses the format-2 object arrays whose chunks are unpickled on
read; dqdyn's readers also refuse any array that is not plain numbers (strings, structured or
object types), from the metadata alone, so that no codec of such a type decodes a chunk."""

from __future__ import annotations

import warnings

import pytest

zarr = pytest.importorskip("zarr")

from dqdyn import distributed, sweep  # noqa: E402
from dqdyn.errors import StoreError  # noqa: E402


def _strings(path, **attrs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (zarr: fixed-length strings have no v3 specification)
        z = zarr.open_array(path, mode="w", shape=(2,), dtype="U4")
    z.attrs.update(attrs)
    return z


def test_open_zarr_refuses_a_non_numeric_array(tmp_path):
    path = str(tmp_path / "s.zarr")
    _strings(path, dqdyn_to_zarr={"states": 2, "chunk": 2, "function": "rnea", "parts": []},
             dqdyn_complete=True)
    with pytest.raises(StoreError, match="not a plain number type"):
        distributed.open_zarr(path)
    with pytest.raises(StoreError, match="not a plain number type"):
        distributed.from_zarr(path)


def test_a_sweep_store_with_a_non_numeric_array_is_refused(tmp_path):
    path = str(tmp_path / "s.zarr")
    g = zarr.open_group(path, mode="w")
    g.create_array("tau", shape=(2, 3), dtype="f8")
    _strings(path + "/q")
    with pytest.raises(StoreError, match="q: dtype"):
        sweep.open_dataset(path)


def test_zarr_itself_refuses_pickled_object_arrays(tmp_path):
    """A format-2 object array with a pickle codec, written by hand as another library would:
    zarr 3 will not open it (so its chunks are never unpickled): no data type matches ``|O``
    with a pickle codec, a ValueError that dqdyn passes on."""
    import json

    d = tmp_path / "o.zarr"
    d.mkdir()
    (d / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "compressor": None,
        "fill_value": None, "order": "C", "filters": [{"id": "pickle", "protocol": 5}]}))
    with pytest.raises(ValueError):
        zarr.open_array(str(d), mode="r")
    with pytest.raises(ValueError):
        distributed.open_zarr(str(d))
