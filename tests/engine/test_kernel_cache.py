"""The kernel cache (dqdyn._engine.jit): stamps that follow the imports, lookups in order, and a fresh
process that loads what an earlier one compiled — with the same bits as a fresh compile."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dqdyn
from dqdyn._engine import jit as _jit


def test_stamp_covers_the_files_a_kernel_inlines_and_nothing_else():
    c = _jit._closure("dynamics/aba.py")
    # what the ABA kernels call or read constants from …
    for rel in ("dynamics/aba.py", "dynamics/hybrid.py", "dynamics/articulated.py",
                "_engine/linalg.py", "dynamics/newton_euler.py", "algebra/_core.py",
                "multibody/joints.py", "multibody/model.py", "_engine/jit.py"):
        assert rel in c, rel
    # … and not the files it has nothing to do with
    for rel in ("parallel/cable.py", "dynamics/derivatives/kernels.py", "cli.py", "__init__.py"):
        assert rel not in c, rel


def _imports_by_ast(rel):
    """The oracle: the same question answered by a full ``ast`` parse of the file."""
    import ast
    path = os.path.join(_jit.PKG_DIR, rel)
    tree = ast.parse(open(path, "rb").read(), filename=path)
    pkg = os.path.dirname(rel).split(os.sep) if os.path.dirname(rel) else []
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            if not (node.module or "").startswith("dqdyn"):
                continue
            parts = node.module.split(".")[1:]
        else:
            if node.level - 1 > len(pkg):
                continue
            parts = pkg[: len(pkg) - node.level + 1] + (node.module.split(".") if node.module else [])
        base = os.path.join(_jit.PKG_DIR, *parts)
        if os.path.isfile(base + ".py"):
            out.add(os.path.join(*parts) + ".py")
        elif os.path.isdir(base):
            for alias in node.names:
                sub = os.path.join(base, alias.name + ".py")
                out.add(os.path.relpath(sub if os.path.isfile(sub) else os.path.join(base, "__init__.py"),
                                        _jit.PKG_DIR))
    return out


def test_the_import_scan_finds_what_a_full_parse_finds_in_every_file_of_the_package():
    """Stamps scan ``from … import …`` with a regular expression (a parse cost 70 ms of a
    first call); on every file of dqdyn it must name every dqdyn file ``ast`` finds — a file
    it missed would leave kernels stale after an edit.  It may find more only where a
    docstring shows how to import the file itself (that adds nothing to a stamp)."""
    files = []
    for d, _, names in os.walk(_jit.PKG_DIR):
        files += [os.path.relpath(os.path.join(d, n), _jit.PKG_DIR) for n in names if n.endswith(".py")]
    assert len(files) > 50
    for rel in files:
        scan, parse = set(_jit._imports_of(rel)), _imports_by_ast(rel)
        assert parse <= scan, (rel, parse - scan)
        assert scan - parse <= {rel}, (rel, scan - parse)


def test_a_writer_of_an_older_source_never_leaves_the_newer_index_pointing_at_its_code(tmp_path):
    """numba saves an entry's index, then its data file: two processes with different sources
    (a checkout edited while one ran) interleaving as index(old), index(new), data(new),
    data(old) left the new stamp's index naming the old code.  With data files named after
    the stamp, the newer reader gets its own data or a miss (it compiles), never the old."""
    key = ("sig", "target")
    old = _jit._StampedFile(str(tmp_path), "mod.f-1.py311", "stamp-old")
    new = _jit._StampedFile(str(tmp_path), "mod.f-1.py311", "stamp-new")
    old._save_index({key: old._data_name(1)})
    new._save_index({key: new._data_name(1)})
    new._save_data(new._data_name(1), ("new code",))
    assert new.load(key) == ("new code",)
    old._save_data(old._data_name(1), ("old code",))
    assert new.load(key) in (None, ("new code",))
    assert old.load(key) is None  # (its index was replaced)
    new.save(key, ("new code",))  # the miss compiles and saves again: only one stamp left
    assert new.load(key) == ("new code",)
    assert sorted(os.listdir(tmp_path)) == sorted(["mod.f-1.py311.nbi", new._data_name(1)])


def test_stamp_changes_when_an_imported_file_changes(monkeypatch):
    before = _jit.source_stamp("dynamics/aba.py")
    other = _jit.source_stamp("parallel/cable.py")
    real = _jit._file_hash

    def edited(rel):  # as if algebra/_core.py (inlined by every kernel) had been edited
        return b"edited" if rel == "algebra/_core.py" else real(rel)

    monkeypatch.setattr(_jit, "_file_hash", edited)
    _jit.source_stamp.cache_clear()
    try:
        assert _jit.source_stamp("dynamics/aba.py") != before
        assert _jit.source_stamp("parallel/cable.py") != other  # cable.py uses _core too
        assert "algebra/_core.py" in _jit._closure("parallel/cable.py")
    finally:
        _jit.source_stamp.cache_clear()


def test_stamp_keeps_kernels_whose_imports_did_not_change(monkeypatch):
    before = _jit.source_stamp("dynamics/newton_euler.py")
    real = _jit._file_hash
    monkeypatch.setattr(_jit, "_file_hash", lambda rel: b"x" if rel == "parallel/cable.py" else real(rel))
    _jit.source_stamp.cache_clear()
    try:
        assert _jit.source_stamp("dynamics/newton_euler.py") == before
    finally:
        _jit.source_stamp.cache_clear()


def test_read_only_package_cache_falls_back_to_the_user_folder(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg_kernels"
    pkg.mkdir()
    os.chmod(pkg, 0o555)
    user = tmp_path / "user"
    monkeypatch.setattr(_jit, "PACKAGE_CACHE", str(pkg))
    monkeypatch.setattr(_jit, "PORTABLE_CACHE", str(tmp_path / "no_portable_kernels"))
    monkeypatch.setenv("DQDYN_CACHE_DIR", str(user))
    _jit.cache_roots.cache_clear()
    try:
        roots = _jit.cache_roots()
        if os.access(pkg, os.W_OK):  # root ignores the mode bits
            assert roots == ((str(pkg), True),)
        else:
            assert roots == ((str(pkg), False), (str(user), True))
    finally:
        os.chmod(pkg, 0o755)
        _jit.cache_roots.cache_clear()


LIGHT_PROBE = r"""
import json, sys, numpy as np, dqdyn, warnings
from numba.core import base
refreshes = []
_refresh = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: (refreshes.append(1), _refresh(self))[1]
warnings.simplefilter("ignore")
from dqdyn.constraints import mobile_manipulator
from dqdyn.constraints.dynamics import constrained_forward_dynamics
m = dqdyn.random_tree(9, seed=11)
Q = dqdyn.random_configuration(m, size=1000, seed=3)
rng = np.random.default_rng(4)
V, A = rng.normal(size=(1000, m.nv)), rng.normal(size=(1000, m.nv))
out = [dqdyn.rnea(m, Q[0], V[0], A[0]), dqdyn.aba(m, Q, V, A), dqdyn.forward_kinematics(m, Q[1]),
       dqdyn.twist_jacobian(m, Q[2], m.frame_names[-1], "body"), *dqdyn.aba_derivatives(m, Q[3], V[3], A[3])]
mm, cons, q0 = mobile_manipulator()
out.append(constrained_forward_dynamics(mm, q0, np.ones(mm.nv), np.zeros(mm.nv), cons).qdd)
from dqdyn._engine import gate
misses = sum(sum(d.stats.cache_misses.values()) for mod in list(sys.modules.values())
             if getattr(mod, "__name__", "").startswith("dqdyn") for d in vars(mod).values()
             if hasattr(getattr(d, "stats", None), "cache_misses"))
misses += sum(1 for c in gate._GATED.values() if c._cache_hits == 0)
print(json.dumps({"out": [np.asarray(x).tobytes().hex() for x in out], "misses": misses,
                  "refreshes": len(refreshes), "registries": "numba.np.arraymath" in sys.modules,
                  "scipy.linalg": "scipy.linalg" in sys.modules}))
"""


@pytest.mark.slow
def test_a_fresh_process_loads_kernels_without_numbas_registries_and_gets_the_same_bits():
    """Loading a cached kernel skips numba's context refresh (``_jit._light_load_ok``: 0.4 s of
    a 0.5 s first call, the compiler's registries and ``scipy.linalg``).  In new processes:
    the same calls — single states, a parallel batch, the derivatives, a Jacobian, constrained
    dynamics — give the same bits as with numba's own load (``DQDYN_NUMBA_LIGHT_LOAD=0``), and
    with every kernel from the cache nothing refreshed or imported the registries."""
    from dqdyn._engine.precompile import precompile

    precompile(["dynamics", "forward", "kinematics", "derivatives", "constraints"], quiet=True)

    def run(env):
        r = subprocess.run([sys.executable, "-c", LIGHT_PROBE], env={**os.environ, **env},
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    light, full = run({}), run({"DQDYN_NUMBA_LIGHT_LOAD": "0"})
    assert light["out"] == full["out"]  # bit for bit
    assert full["refreshes"] > 0 and full["registries"]
    if light["misses"]:
        pytest.skip(f"{light['misses']} kernels were compiled, not loaded (cache not filled here)")
    assert light["refreshes"] == 0 and not light["registries"] and not light["scipy.linalg"]


def test_small_batches_run_serially_and_agree_with_the_parallel_kernel():
    from dqdyn._engine.batching import SERIAL_WORK, for_batch
    from dqdyn.dynamics.newton_euler import rnea_batch

    m = dqdyn.random_tree(9, seed=11)
    nb1 = m.nbodies + 1
    assert for_batch(rnea_batch, 4, nb1) is rnea_batch.serial
    assert for_batch(rnea_batch, SERIAL_WORK // nb1 + 1, nb1) is rnea_batch
    n_big = SERIAL_WORK // nb1 + 7
    Q = dqdyn.random_configuration(m, size=n_big, seed=1)
    rng = np.random.default_rng(2)
    V, A = rng.normal(size=(n_big, m.nv)), rng.normal(size=(n_big, m.nv))
    big = dqdyn.rnea(m, Q, V, A)  # parallel kernel
    small = dqdyn.rnea(m, Q[:5].tolist(), V[:5].tolist(), A[:5].tolist())  # serial twin
    gated = dqdyn.rnea(m, Q[:5], V[:5], A[:5])  # state by state in the call gate
    single = np.stack([dqdyn.rnea(m, Q[k], V[k], A[k]) for k in range(5)])
    assert big[:5].tobytes() == small.tobytes() == gated.tobytes() == single.tobytes()


def _index_files(root):
    """``(kernel file name, module path relative to the package, stamp, index keys)`` of every
    index file of a cache folder (``root``), or of the portable archive (a ``.tar.xz`` path)."""
    import glob
    import pickle
    import re
    import tarfile

    def parse(name, f):
        sub = os.path.dirname(name)
        module = os.path.basename(name).split(".")[0]
        rel = os.path.join("" if sub == "_top" else sub, module + ".py")
        pickle.load(f)  # (numba's version)
        stamp, overloads = pickle.loads(f.read())
        return re.sub(r"\.py\d+\.nbi$", "", os.path.basename(name)), rel, stamp, overloads

    if root.endswith(".tar.xz"):
        with tarfile.open(root, "r:xz") as tar:
            return [parse(ti.name, tar.extractfile(ti)) for ti in tar if ti.name.endswith(".nbi")]
    out = []
    for path in glob.glob(os.path.join(root, "**", "*.nbi"), recursive=True):
        with open(path, "rb") as f:
            out.append(parse(os.path.relpath(path, root), f))
    return out


def _current_index_entries():
    """``{kernel file name: [signatures]}`` of the index files whose stamp is the current
    source's, in the package cache and the portable kernels (older stamps' are ignored)."""
    out = {}
    for root in (_jit.PACKAGE_CACHE, _jit.PORTABLE_CACHE):
        for name, rel, stamp, overloads in _index_files(root):
            if not os.path.isfile(os.path.join(_jit.PKG_DIR, rel)) or stamp != _jit.source_stamp(rel):
                continue
            out.setdefault(name, set()).update(  # (one signature may be in both, for two CPUs)
                tuple(getattr(k[0], "args", k[0])) for k in overloads)  # (a C callback's: a Signature)
    return {k: sorted(v, key=str) for k, v in out.items()}


def test_no_kernel_is_compiled_twice_for_a_literal_or_a_read_only_twin_of_one_signature():
    """dqdyn._engine.jit, "Literals": a kernel given ``False`` (``Literal[bool](False)``) by one caller
    and a ``bool`` by another, or a read-only array beside a writable one, was compiled once for
    each (``hybrid_kernel`` twice, the derivatives' sweeps three times).  Read from the
    kernel cache that ``pip install`` fills: no two signatures of one kernel may differ only in
    literal-ness or read-only-ness."""
    from numba.core import types

    entries = _current_index_entries()
    if len(entries) < 50:
        pytest.skip(f"the package cache holds {len(entries)} current kernels (not filled here)")

    def plain(t):
        t = types.unliteral(t)
        return t.copy(readonly=False) if isinstance(t, types.Array) and not t.mutable else t

    twins = {}
    for name, sigs in entries.items():
        seen = {}
        for sig in sigs:
            seen.setdefault(tuple(plain(t) for t in sig), []).append(sig)
        for v in seen.values():
            literal = any(isinstance(t, types.Literal) for s in v for t in s)
            # (the algebra's core kernels are called straight from tests, with hypothesis'
            # arrays, read-only ones among them; a literal can only come from dqdyn's code)
            if len(v) > 1 and (literal or not name.startswith("_core.")):
                twins[name] = v
    assert not twins, "\n".join(f"{k}: {[str(s) for s in v]}" for k, v in twins.items())


def test_faster_inlining_is_installed_and_copies_one_scope_per_ir():
    """dqdyn's stand-in for numba's IR copy while inlining (_jit._BlockCopier) is installed by
    the first compilation, and a kernel that inlines helpers compiles to the same numbers."""
    import numba
    from numba.core import inline_closurecall as icc

    from dqdyn._engine import jit as _jit

    @numba.njit(inline="always")
    def helper(x, k):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * k if i % 2 else x[i] - k
        return s

    def outer(x):
        return helper(x, 2.0) + helper(x, 3.0) * helper(x[::2], 0.5)

    fast = _jit.kernel()(outer)
    x = np.linspace(-1, 1, 11)
    got = fast(x)
    assert _jit._INLINE_PATCHED and isinstance(icc.copy, _jit._BlockCopier)
    want = helper.py_func(x, 2.0) + helper.py_func(x, 3.0) * helper.py_func(x[::2], 0.5)
    assert abs(got - want) <= 1e-12 * abs(want)


def test_untyped_passes_run_once_per_dqdyn_helper_however_many_sites_inline_it(monkeypatch):
    """numba reruns its untyped passes over an inlined helper at every call site; dqdyn keeps
    the result per helper (_jit._memoize_untyped): a kernel inlining dqdyn's ``dq_mul`` at three
    sites runs them at most once for it (none when an earlier compile in this process kept it),
    and computes the product numba's plain inlining computes."""
    from numba.core import inline_closurecall as icc

    from dqdyn._engine import jit as _jit
    from dqdyn.algebra._core import dq_mul

    runs = []
    real = icc.InlineWorker.run_untyped_passes

    def counting(self, func, *a, **k):
        runs.append(func.__qualname__)
        return real(self, func, *a, **k)

    monkeypatch.setattr(icc.InlineWorker, "run_untyped_passes", counting)

    def outer(a, b, c):
        ab, abc, out = np.empty(8), np.empty(8), np.empty(8)
        dq_mul(a, b, ab)
        dq_mul(ab, c, abc)
        dq_mul(c, abc, out)
        return out

    rng = np.random.default_rng(5)
    a, b, c = rng.normal(size=(3, 8))
    got = _jit.kernel()(outer)(a, b, c)
    assert getattr(icc.InlineWorker.inline_function, "_dqdyn", False)
    assert runs.count("dq_mul") <= 1, runs
    ab, abc, want = np.empty(8), np.empty(8), np.empty(8)
    dq_mul.py_func(a, b, ab)
    dq_mul.py_func(ab, c, abc)
    dq_mul.py_func(c, abc, want)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


DISABLE_JIT_PROBE = r"""
import json, sys, warnings, numpy as np, numba, dqdyn
warnings.simplefilter("ignore")
from dqdyn.constraints import mobile_manipulator
from dqdyn.constraints.dynamics import constrained_forward_dynamics
m = dqdyn.random_tree(9, seed=11)
Q = dqdyn.random_configuration(m, size=3, seed=3)
rng = np.random.default_rng(4)
v, a = rng.normal(size=(2, m.nv))
mm, cons, q0 = mobile_manipulator()
out = {"rnea": dqdyn.rnea(m, Q[0], v, a), "rnea batch": dqdyn.rnea(m, Q, v, a), "aba": dqdyn.aba(m, Q[0], v, a),
       "M": dqdyn.mass_matrix(m, Q[0]), "fk": dqdyn.forward_kinematics(m, Q[0]),
       "J": dqdyn.twist_jacobian(m, Q[0], m.frame_names[-1], "body"),
       "dABA": np.stack(dqdyn.aba_derivatives(m, Q[0], v, a)),
       "cfd": constrained_forward_dynamics(mm, q0, np.ones(mm.nv), np.zeros(mm.nv), cons).qdd}
print(json.dumps({"jit_off": numba.config.DISABLE_JIT, **{k: x.tolist() for k, x in out.items()}}))
"""


def test_numba_disable_jit_runs_every_path_as_python_with_the_compiled_results():
    """``NUMBA_DISABLE_JIT=1`` (numba's debugging mode: every kernel a plain Python function)
    imports dqdyn and runs single states, batches, derivatives and constrained dynamics, with
    the call gate off — the same numbers as the compiled kernels (bit for bit but the
    derivatives, whose kernels allow FMA contraction).  It raised AttributeError at import."""
    def run(env):
        r = subprocess.run([sys.executable, "-c", DISABLE_JIT_PROBE], env={**os.environ, **env},
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    py, jit = run({"NUMBA_DISABLE_JIT": "1"}), run({})
    assert py.pop("jit_off") and not jit.pop("jit_off")
    for k in py:
        if k == "dABA":
            np.testing.assert_allclose(py[k], jit[k], rtol=0, atol=1e-11 * np.abs(jit[k]).max())
        elif k == "cfd":
            # the one-call constrained path inlines the sweeps it shares with the derivative
            # kernels: a fresh compile gives the interpreted bits, the shipped kernel (compiled
            # after the derivatives in the archive's build) may differ in the last bit
            np.testing.assert_allclose(py[k], jit[k], rtol=0, atol=1e-14 * np.abs(jit[k]).max())
        else:
            assert np.array_equal(py[k], jit[k]), k


# ------------------------------------------------------------- the portable kernels
def test_the_portable_kernels_are_looked_up_after_the_packages_own_and_only_where_they_fit(
        tmp_path, monkeypatch):
    pkg, port, user = tmp_path / "pkg", tmp_path / "portable", tmp_path / "user"
    pkg.mkdir()
    port.mkdir()
    monkeypatch.setattr(_jit, "PACKAGE_CACHE", str(pkg))
    monkeypatch.setattr(_jit, "PORTABLE_CACHE", str(port))
    monkeypatch.setenv("DQDYN_CACHE_DIR", str(user))
    monkeypatch.delenv("DQDYN_PORTABLE_BUILD", raising=False)
    fits = [True]
    monkeypatch.setattr(_jit, "portable_fits", lambda: fits[0])
    try:
        _jit.cache_roots.cache_clear()
        assert _jit.cache_roots() == ((str(pkg), True), (str(port), False))
        fits[0] = False
        _jit.cache_roots.cache_clear()
        assert _jit.cache_roots() == ((str(pkg), True),)
        fits[0] = True
        pkg.rmdir()  # installed without the precompile: the user's folder takes the new entries
        _jit.cache_roots.cache_clear()
        assert _jit.cache_roots() == ((str(user), True), (str(port), False))
        monkeypatch.setenv("DQDYN_PORTABLE_BUILD", str(tmp_path / "build"))
        _jit.cache_roots.cache_clear()
        assert _jit.cache_roots() == ((str(tmp_path / "build"), True),)
    finally:
        monkeypatch.undo()
        _jit.cache_roots.cache_clear()


def test_portable_entries_are_keyed_on_the_portable_cpu_and_host_entries_on_the_host():
    from numba.core.registry import cpu_target

    from dqdyn.dynamics.newton_euler import rnea_batch

    codegen = cpu_target.target_context.codegen()
    sig = (np.float64,)
    host = _jit._RootCache(rnea_batch.py_func, _jit.PACKAGE_CACHE, "")._index_key(sig, codegen)
    port = _jit._RootCache(rnea_batch.py_func, _jit.PORTABLE_CACHE, "")._index_key(sig, codegen)
    assert host[1] == codegen.magic_tuple()
    assert port[1] == (codegen.magic_tuple()[0], "x86-64-v3", "")  # NUMBA_CPU_NAME's, features ""
    if _jit.CPU_TARGET["pinned"]:  # what compiles here is the shipped kernels' code, any CPU
        assert host[1] == port[1]
    else:
        assert host[1] != port[1]
    assert host[0] == port[0] and host[2] == port[2]


def _fake_archive(path, manifest, files):
    import io
    import tarfile

    with tarfile.open(path, "w:xz") as tar:
        for name, data in {"MANIFEST.json": json.dumps(manifest).encode(), **files}.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tar.addfile(ti, io.BytesIO(data))


def test_the_portable_archive_is_unpacked_only_for_its_python_numba_platform_and_cpu(
        tmp_path, monkeypatch, capsys):
    from dqdyn._engine import precompile as pc

    arc, dest = tmp_path / "k.tar.xz", tmp_path / "k"
    monkeypatch.setattr(_jit, "PORTABLE_ARCHIVE", str(arc))
    monkeypatch.setattr(_jit, "PORTABLE_CACHE", str(dest))
    monkeypatch.setattr(_jit, "portable_fits", lambda: True)
    mine = pc._platform_tag()
    try:
        assert pc.unpack_portable() is False  # no archive: nothing to do
        _fake_archive(arc, {**mine, "kernels": 1}, {"algorithms/x.nbi": b"1"})
        assert pc.unpack_portable() is True
        assert (dest / "algorithms" / "x.nbi").read_bytes() == b"1"
        (dest / "algorithms" / "x.nbi").write_bytes(b"kept")
        assert pc.unpack_portable() is True  # the same manifest: unpacked already, not again
        assert (dest / "algorithms" / "x.nbi").read_bytes() == b"kept"
        for key, other in [("numba", "0.1.0"), ("python", "cpython-39"), ("platform", "win-amd64")]:
            _fake_archive(arc, {**mine, key: other}, {"algorithms/x.nbi": b"2"})
            capsys.readouterr()
            assert pc.unpack_portable() is False
            assert other in capsys.readouterr().out  # says what the archive was made for
            assert (dest / "algorithms" / "x.nbi").read_bytes() == b"kept"  # left alone
        _fake_archive(arc, {**mine, "kernels": 2}, {"algorithms/x.nbi": b"2"})
        monkeypatch.setattr(_jit, "portable_fits", lambda: False)
        assert pc.unpack_portable() is False
        assert "x86-64-v3" in capsys.readouterr().out
        monkeypatch.setattr(_jit, "portable_fits", lambda: True)
        assert pc.unpack_portable() is True  # a new archive replaces the old folder
        assert (dest / "algorithms" / "x.nbi").read_bytes() == b"2"
        arc.write_bytes(b"not an archive")
        assert pc.unpack_portable() is False
        assert "portable kernels not used" in capsys.readouterr().out
    finally:
        monkeypatch.undo()
        _jit.cache_roots.cache_clear()


def test_the_install_runs_no_group_when_the_archive_was_made_from_this_very_source(
        tmp_path, monkeypatch):
    from dqdyn._engine import precompile as pc

    arc, dest = tmp_path / "k.tar.xz", tmp_path / "k"
    monkeypatch.setattr(_jit, "PORTABLE_ARCHIVE", str(arc))
    monkeypatch.setattr(_jit, "PORTABLE_CACHE", str(dest))
    monkeypatch.setattr(_jit, "portable_fits", lambda: True)
    monkeypatch.delenv("DQDYN_PORTABLE_BUILD", raising=False)
    ran = []
    monkeypatch.setattr(pc, "precompile", lambda *a, **k: ran.append(a))
    try:
        _fake_archive(arc, {**pc._platform_tag(), "source_hash": pc.source_hash()}, {})
        assert pc.main(["--quiet"]) == 0 and not ran
        _fake_archive(arc, {**pc._platform_tag(), "source_hash": "another source"}, {})
        assert pc.main(["--quiet"]) == 0 and len(ran) == 1  # (they load what is current)
        _fake_archive(arc, {**pc._platform_tag(), "source_hash": pc.source_hash()}, {})
        assert pc.main(["--quiet", "--group", "models"]) == 0 and len(ran) == 2  # asked for
    finally:
        monkeypatch.undo()
        _jit.cache_roots.cache_clear()


SHIPPED_PYTHONS = ("cpython-310", "cpython-311", "cpython-312", "cpython-313")


def test_kernels_are_shipped_for_every_declared_cpython_with_the_pinned_numba():
    """One portable archive per CPython from 3.10 to 3.13, each made by the numba that
    ``pyproject.toml`` pins, for x86-64-v3, from the same commit and with every kernel."""
    import re
    import tarfile

    pyproject = os.path.join(os.path.dirname(_jit.PKG_DIR), os.pardir, "pyproject.toml")
    if not os.path.isfile(pyproject):
        pytest.skip("not a source checkout")
    with open(pyproject) as f:
        pinned = re.search(r'"numba==([0-9.]+)"', f.read()).group(1)
    sources = set()
    for tag in SHIPPED_PYTHONS:
        path = os.path.join(_jit.PKG_DIR, f"_kernels_portable-{tag}.tar.xz")
        assert os.path.isfile(path), f"no kernels shipped for {tag}"
        with tarfile.open(path, "r:xz") as tar:
            man = json.load(tar.extractfile("MANIFEST.json"))
        assert (man["python"], man["numba"], man["cpu"]) == (tag, pinned, _jit.PORTABLE_CPU)
        assert man["kernels"] >= 140
        sources.add(man["source_hash"])
    assert len(sources) == 1  # all made from one source


def _portable_archive_fits():
    """Why the shipped archive cannot be used here, or ``None``."""
    import tarfile

    from dqdyn._engine.precompile import _platform_tag

    if not os.path.isfile(_jit.PORTABLE_ARCHIVE):
        return "no portable archive in this source"
    with tarfile.open(_jit.PORTABLE_ARCHIVE, "r:xz") as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    mine = _platform_tag()
    if any(manifest.get(k) != v for k, v in mine.items()):
        return f"the portable kernels were made for {manifest}, this is {mine}"
    if not _jit.portable_fits():
        return "this CPU cannot run the portable kernels"
    return None


def test_the_shipped_portable_kernels_are_current():
    """The archive the source ships holds every kernel of the current source: a kernel edited
    since it was made compiles at install instead of loading — make it again with
    ``python -m dqdyn._engine.precompile --portable``.  (Where the archive cannot be used — another
    Python, numba, platform or CPU — there is nothing to check.)"""
    why = _portable_archive_fits()
    if why:
        pytest.skip(why)
    entries = _index_files(_jit.PORTABLE_ARCHIVE)
    stale = sorted({rel for _, rel, stamp, _ in entries
                    if not os.path.isfile(os.path.join(_jit.PKG_DIR, rel))
                    or stamp != _jit.source_stamp(rel)})
    assert not stale, ("the portable kernels are older than these files' kernels (run `python -m "
                       "dqdyn._engine.precompile --portable`): " + ", ".join(stale))
    assert len(entries) >= 140  # every group's kernels, not a part


FRESH_PROBE = r"""
import json, sys, numpy as np, dqdyn
from dqdyn._engine import gate
m = dqdyn.random_tree(9, seed=11)
Q = dqdyn.random_configuration(m, size=4, seed=3)
rng = np.random.default_rng(4)
V, A = rng.normal(size=(4, m.nv)), rng.normal(size=(4, m.nv))
out = []
if sys.argv[1] in ("all", "rnea"):
    out += [dqdyn.rnea(m, Q[k], V[k], A[k]) for k in range(4)] + [dqdyn.rnea(m, Q, V, A)]
    out += list(dqdyn.rnea_derivatives(m, Q[0], V[0], A[0]))  # (FMA contraction allowed there)
if sys.argv[1] in ("all", "gravity"):
    out += [dqdyn.gravity(m, Q[k]) for k in range(4)] + [dqdyn.gravity(m, Q)]
misses = sum(sum(d.stats.cache_misses.values()) for mod in list(sys.modules.values())
             if getattr(mod, "__name__", "").startswith("dqdyn") for d in vars(mod).values()
             if hasattr(getattr(d, "stats", None), "cache_misses"))
misses += sum(1 for c in gate._GATED.values() if c._cache_hits == 0)
print(json.dumps({"out": [np.asarray(x).tobytes().hex() for x in out], "misses": misses,
                  "file": dqdyn.__file__}))
"""


@pytest.mark.slow
def test_a_fresh_process_loads_every_kernel_and_gets_the_bits_of_a_compile_for_this_cpu(tmp_path):
    """What a new process meets after ``pip install``: every kernel of ``rnea``,
    ``rnea_derivatives`` and ``gravity`` (one state, a batch) loaded, none compiled, and the
    bits a JIT compile for this CPU gives in a new process (``DQDYN_NO_CACHE=1``) — for
    ``gravity`` with numba's own IR inlining instead of dqdyn's block copy
    (``_jit._BlockCopier``), with which the kernels were compiled.
    Where the portable kernels fit, as after a fresh clone's install: a copy of the package with
    them unpacked and no kernel of its own, so everything comes from them — compiled for
    ``x86-64-v3``, not for this CPU.  Elsewhere, the package's own cache that the precompile
    fills.  (Within one process, single states and batches agree to the bit too:
    test_call_gate.py, test_chunked_batches.py.)"""
    import shutil

    env = {}
    if _portable_archive_fits() is None and os.path.isdir(_jit.PORTABLE_CACHE):
        pkg = tmp_path / "site" / "dqdyn"
        shutil.copytree(_jit.PKG_DIR, pkg, ignore=shutil.ignore_patterns(
            "_kernels", "_kernels_portable*", "__pycache__"))
        (pkg / "_kernels_portable").mkdir()
        os.symlink(_jit.PORTABLE_CACHE, pkg / "_kernels_portable" / _jit.PY_TAG)
        env = {"PYTHONPATH": str(tmp_path / "site"), "DQDYN_CACHE_DIR": str(tmp_path / "user")}
    else:
        from dqdyn._engine.precompile import precompile

        precompile(["dynamics", "derivatives"], quiet=True)  # fills the cache (nothing to do when full)

    def run(what, env):
        r = subprocess.run([sys.executable, "-c", FRESH_PROBE, what], env={**os.environ, **env},
                           capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    fresh = run("all", env)
    if env:
        assert fresh["file"].startswith(str(tmp_path))
        assert not list((tmp_path / "user").rglob("*.nbi"))  # nothing written: nothing compiled
    assert fresh["misses"] == 0, "a kernel was compiled, not loaded"
    # numba compiles every kernel in those processes: this compares the compilations' machine
    # code by their results, bit for bit (numba's own IR inlining, quadratic in the size of what
    # it inlines, on the smaller gravity kernels)
    jit = run("rnea", {"DQDYN_NO_CACHE": "1"})
    jit_numba_inlining = run("gravity", {"DQDYN_NO_CACHE": "1", "DQDYN_NUMBA_INLINE_COPY": "0"})
    assert jit["misses"] > 0 and jit_numba_inlining["misses"] > 0
    assert fresh["out"] == jit["out"] + jit_numba_inlining["out"]  # bit for bit
