"""Zarr stores that say whether they are complete (`dqdyn.scale.distributed.to_zarr`, ``dqdyn sweep``).

One mechanism for both writers:

* a **completion marker per chunk**: a ``uint8`` Zarr array (one Zarr chunk per entry, fill
  value 0) whose entry is set to 1 by the task that wrote the chunk, *after* the chunk's data.
  A chunk written without its marker (a process killed in between) is computed and written
  again, identically;
* a store-level attribute ``dqdyn_complete``: ``False`` when the store is made, ``True`` once
  every marker is set.  Readers refuse a store that is not complete
  (`IncompleteStoreError` names the missing chunks and how to resume);
* Zarr's temporary files (``*.partial``, left by a write that was killed) are removed on resume.

Reads of input chunks are checked too (`guard_reads`): Zarr reads an absent chunk as its
fill value, so a deleted chunk would be computed on zeros without a word; a chunk that is
absent, or that cannot be decoded (truncated), is a `StoreError` naming the
array and the chunk.
"""

from __future__ import annotations

import os

import numpy as np

from dqdyn.errors import IncompleteStoreError, StoreError

#: name of a marker array
MARKERS = "_done"
#: the store-level attribute: True once every chunk is written
COMPLETE = "dqdyn_complete"


# ------------------------------------------------------------------------------ markers
def create_markers(parent, name: str, shape: tuple, dims: tuple | None = None):
    """A new marker array ``name`` of ``shape`` (all 0) in ``parent``: a Zarr group, or a store
    URL with ``name`` the array's path in it ("" for the store's root); ``dims``: its axes'
    names (Zarr ``dimension_names``, which xarray needs to open the group)."""
    import zarr

    kw = dict(shape=tuple(int(s) for s in shape), chunks=(1,) * len(shape), dtype="u1",
              fill_value=0, overwrite=True, dimension_names=dims)
    if isinstance(parent, zarr.Group):
        return parent.create_array(name, **kw)
    return zarr.create_array(parent, name=name or None, **kw)


def open_markers(url: str, path: str = "", mode: str = "r"):
    """The marker array at ``path`` of the store ``url``; None if there is none."""
    import zarr

    try:
        return zarr.open_array(url, path=path, mode=mode)
    except (FileNotFoundError, KeyError, zarr.errors.ArrayNotFoundError):
        return None


def mark_done(markers, index) -> None:
    """Set the marker of chunk ``index`` (call it after the chunk's data is written)."""
    markers[index] = 1


def missing(markers) -> list[tuple[int, ...]]:
    """Indices of the chunks whose marker is not set, in order."""
    return [tuple(int(i) for i in ix) for ix in np.argwhere(markers[:] == 0)]


def ranges(ix) -> str:
    """``[2, 3, 7, 8, 9]`` → ``"2, 3, 7-9"``."""
    ix = sorted(int(i) for i in ix)
    out, s = [], 0
    while s < len(ix):
        e = s
        while e + 1 < len(ix) and ix[e + 1] == ix[e] + 1:
            e += 1
        out += [f"{ix[s]}-{ix[e]}"] if e - s >= 2 else [str(i) for i in ix[s:e + 1]]
        s = e + 1
    return ", ".join(out)


def local_path(url) -> str | None:
    """The directory of a local store (a path or ``file://`` URL); None for another store."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str):
        return None
    if url.startswith("file://"):
        return url[len("file://"):]
    return None if "://" in url else url


def clean_partials(url) -> int:
    """Remove Zarr's temporary ``*.partial`` files under a local store (left by a write that was
    killed; a later write of the same chunk never reuses them); the number removed.  Call it only
    when no other process writes to the store."""
    root = local_path(url)
    n = 0
    if root is None or not os.path.isdir(root):
        return n
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".partial"):
                try:
                    os.remove(os.path.join(d, f))
                    n += 1
                except FileNotFoundError:  # pragma: no cover - removed meanwhile
                    pass
    return n


def only_partials(url) -> bool:
    """True for a local directory that holds no file but Zarr's temporary ones: a store whose
    creation was killed before its first metadata was in place."""
    root = local_path(url)
    if root is None or not os.path.isdir(root):
        return False
    return all(f.endswith(".partial") for _, _, fs in os.walk(root) for f in fs)


def join(url: str, *parts: str) -> str:
    return "/".join([url.rstrip("/")] + [p.strip("/") for p in parts if p])


# ------------------------------------------------------------------------------ checked reads
def _where(arr) -> str:
    return str(arr.store_path)


def _covered(arr, index):
    """Chunk grid coordinates read by ``arr[index]`` (``index``: a tuple of slices), or None
    for another kind of selection."""
    if not isinstance(index, tuple) or not all(isinstance(s, slice) for s in index):
        return None
    grid = getattr(arr, "shards", None) or arr.chunks
    axes = []
    for s, n, c in zip(index + (slice(None),) * (arr.ndim - len(index)), arr.shape, grid):
        a, b, st = s.indices(n)
        if st != 1:
            return None
        axes.append(range(a // c, (b - 1) // c + 1) if b > a else range(0))
    import itertools

    return list(itertools.product(*axes))


def _rows(arr, coords) -> str:
    c = (getattr(arr, "shards", None) or arr.chunks)[0]
    return f"rows {coords[0] * c}:{min(arr.shape[0], (coords[0] + 1) * c)}"


def _chunk_key(arr, coords) -> str | None:
    enc = getattr(arr.metadata, "encode_chunk_key", None)
    if enc is None:  # pragma: no cover - a metadata format without it
        return None
    p = arr.store_path.path
    return (p.rstrip("/") + "/" if p else "") + enc(tuple(coords))


def absent_chunks(arr, coords) -> list[tuple]:
    """The chunks of ``coords`` that are not in the store of the Zarr array ``arr``."""
    from zarr.core.sync import sync

    out = []
    for c in coords:
        key = _chunk_key(arr, c)
        if key is not None and not sync(arr.store_path.store.exists(key)):
            out.append(tuple(c))
    return out


def checked_getter(getter, arr, index, *args, **kwargs):
    """Dask's ``getter(arr, index, ...)`` (the read of one block) for a Zarr array ``arr``:
    `StoreError` naming the array and the chunk when a chunk it reads is
    absent from the store (Zarr would return its fill value) or cannot be decoded."""
    import zarr

    if not isinstance(arr, zarr.Array):
        return getter(arr, index, *args, **kwargs)
    coords = _covered(arr, index) or []
    gone = absent_chunks(arr, coords)
    if gone:
        c = gone[0]
        raise StoreError(
            f"input chunk {c} ({_rows(arr, c)}) of the Zarr array {_where(arr)!r} is missing from "
            f"its store (deleted, or never written){f' with {len(gone) - 1} more' if len(gone) > 1 else ''}"
            f"; Zarr would read it as its fill value ({arr.fill_value}): restore the chunk or write "
            "those rows again (with write_empty_chunks=True for rows of fill values)")
    try:
        return getter(arr, index, *args, **kwargs)
    except (StoreError, MemoryError):
        raise
    except Exception as e:  # noqa: BLE001 - a codec's own error type (Zstd: RuntimeError, ...)
        bad = coords[0] if coords else index
        for c in coords:  # the chunk that fails on its own
            try:
                arr.get_block_selection(tuple(c))
            except Exception:  # noqa: BLE001
                bad = c
                break
        raise StoreError(
            f"input chunk {tuple(bad)} ({_rows(arr, bad) if coords else index}) of the Zarr array "
            f"{_where(arr)!r} could not be read ({type(e).__name__}: {' '.join(str(e).split())[:200]}); "
            "the file is damaged (truncated?): restore it or write those rows again") from None


def guard_reads(x):
    """The Dask array ``x`` with every read of a Zarr array in its graph checked
    (`checked_getter`); ``x`` itself when it reads none (or with an older Dask)."""
    try:
        import zarr
        from dask._task_spec import DataNode, Task, TaskRef, convert_legacy_task
        from dask.array.core import getter, getter_inline, getter_nofancy
    except ImportError:  # pragma: no cover - an older dask
        return x
    import dask.array as da

    getters = (getter, getter_nofancy, getter_inline)
    g = dict(x.__dask_graph__())
    changed = False
    for k, node in list(g.items()):
        if isinstance(node, tuple) and node and callable(node[0]):
            node = convert_legacy_task(k, node, g)
        if not isinstance(node, Task) or getattr(node, "func", None) not in getters or not node.args:
            continue
        a0 = node.args[0]
        arr = g.get(a0.key) if isinstance(a0, TaskRef) else a0
        if isinstance(arr, DataNode):
            arr = arr.value
        if isinstance(arr, zarr.Array):
            g[k] = Task(k, checked_getter, node.func, *node.args, **node.kwargs)
            changed = True
    if not changed:
        return x
    return da.Array(g, x.name, x.chunks, dtype=x.dtype, meta=x._meta)


# ------------------------------------------------------------------------------ writes
def write_error(e: OSError, what: str, url: str, how: str) -> StoreError:
    """The `StoreError` of a failed write (``e``) of ``what`` to ``url``."""
    return StoreError(
        f"writing {what} to the Zarr store {url!r} failed ({' '.join(str(e).split())[:200]}); "
        f"the chunks written before are kept and marked done: free space (or fix the store) and "
        f"{how} to resume")


def incomplete(where: str, todo: list, total: int, unit: str, how: str) -> IncompleteStoreError:
    """The `IncompleteStoreError` of a store with ``todo`` of ``total``
    chunks (indices) not done."""
    if todo and len(todo[0]) == 1:
        listed = f"chunks {ranges(i[0] for i in todo)}"
    else:
        shown = ", ".join(f"(model {k}, chunk {j})" for k, j in todo[:8])
        listed = shown + (f", … ({len(todo) - 8} more)" if len(todo) > 8 else "")
    return IncompleteStoreError(
        f"{len(todo)} of {total} {unit} of {where!r} are missing: {listed} (the run that wrote "
        f"it was stopped); {how} to resume (only these are computed)")


# ------------------------------------------------------------------------------ self-description
#: per joint type: (name, unit) of each q entry and of each v entry
_LAYOUT = {
    "revolute": ([("angle", "rad")], [("rate", "rad/s")]),
    "helical": ([("angle", "rad")], [("rate", "rad/s")]),
    "prismatic": ([("displacement", "m")], [("rate", "m/s")]),
    "cylindrical": ([("angle", "rad"), ("displacement", "m")], [("rate", "rad/s"), ("rate", "m/s")]),
    "planar": ([("x", "m"), ("y", "m"), ("phi", "rad")], [("x rate", "m/s"), ("y rate", "m/s"),
                                                           ("phi rate", "rad/s")]),
    "spherical": ([(f"quaternion {c}", "1") for c in "wxyz"],
                  [(f"body angular velocity {c}", "rad/s") for c in "xyz"]),
    "free": ([(f"pose dual quaternion {k}", "1" if k < 4 else "m") for k in range(8)],
             [(f"body angular velocity {c}", "rad/s") for c in "xyz"]
             + [(f"body linear velocity {c}", "m/s") for c in "xyz"]),
}


def describe_model(model, source: str = "") -> dict:
    """What a dataset records of its model (attribute ``dqdyn_model``): name, source, the sha256
    of the source file (when it is a file), joint names, the layout of q and v (``"joint:entry"``
    per column) and units (per column of q, v and the quantities)."""
    import hashlib

    sha, file = None, source
    if source and not os.path.isfile(source):  # a name: the file it loads, where it is one
        from dqdyn.errors import DqdynError
        from dqdyn.models import model_path

        try:
            file = str(model_path(source))
        except (DqdynError, TypeError, ValueError):
            file = ""
    if file and os.path.isfile(file):
        h = hashlib.sha256()
        with open(file, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        sha = h.hexdigest()
    ql, vl, qu, vu = [], [], [], []
    for j in model.joint_names:
        iq, iv = model.q_slice(j), model.v_slice(j)
        lq, lv = _LAYOUT.get(model.joint_type_name(j), ([], []))
        nq, nv = iq.stop - iq.start, iv.stop - iv.start
        lq = lq if len(lq) == nq else [("", "")] * nq
        lv = lv if len(lv) == nv else [("", "")] * nv
        ql += [f"{j}:{n}" for n, _ in lq]
        qu += [u for _, u in lq]
        vl += [f"{j}:{n}" for n, _ in lv]
        vu += [u for _, u in lv]
    force = ["N m" if u.startswith("rad") else "N" for u in vu]
    acc = [u + "/s" if u else u for u in vu] if vu else []
    acc = [u.replace("/s/s", "/s^2") for u in acc]
    return {"name": model.name, "source": str(source), "sha256": sha,
            "joint_names": list(model.joint_names), "q_layout": ql, "v_layout": vl,
            "units": {"q": qu, "v": vu, "a": acc, "qdd": acc, "tau": force, "g": force, "h": force,
                      "M": "rows: tau units, columns: a units", "params": "kg, kg m, kg m^2",
                      "fk": "unit dual quaternions (vec8), translation in m"}}


# ------------------------------------------------------------------------------ data only
def check_numeric(node, where: str) -> None:
    """Refuse a store whose arrays are not plain numbers: an object dtype is decoded with a
    pickle-based codec, and unpickling a chunk of a store made elsewhere runs whatever code it
    holds.  ``node`` is a Zarr array or group (every array below it is checked, from the
    metadata alone: no chunk is read)."""
    import zarr

    arrays = [("", node)] if isinstance(node, zarr.Array) else list(node.arrays())
    if isinstance(node, zarr.Group):
        for _, sub in node.groups():
            arrays += [(f"{sub.path}/{k}", a) for k, a in sub.arrays()]
    for name, a in arrays:
        if np.dtype(a.dtype).kind not in "biuf":
            raise StoreError(
                f"{where}{'/' + name if name else ''}: dtype {a.dtype} is not a plain number type; "
                "dqdyn reads only numeric stores (an object array is unpickled when read, which "
                "can run code from the store)")
