"""The compiled-kernel machinery: numba decorators with dqdyn's own on-disk kernel cache.

Every compiled function of dqdyn is made with `kernel` (a ``numba.njit`` with the options
given) or `cfunc` (a ``numba.cfunc``, for the C call gate).  Both store what they compile in
one kernel cache, which differs from numba's ``cache=True`` in three ways:

* **Where.**  The cache lives in the package itself, ``dqdyn/_kernels/`` — filled when the package
  is installed (``setup.py`` runs `dqdyn._engine.precompile`, so the first call after ``pip install``
  loads instead of compiling) — or, when that folder is read-only or was built for another CPU,
  Python or numba, in ``$DQDYN_CACHE_DIR`` (default ``~/.cache/dqdyn``).  Lookups try the
  package folder first, then the user folder; new entries go to the first writable one.
* **When it is stale.**  numba keys an entry on the source of the file that defines the function
  only, so a kernel that inlines a helper from another file keeps its old code when only the
  helper changes.  Here the stamp of a function is the hash of its file *and of every dqdyn file
  that file imports, transitively* (and of this file), so any change that can reach a kernel
  recompiles it, and a change elsewhere keeps it.
* **Import cost.**  numba creates a cache object (and tests that its folder is writable) for every
  decorated function at import; here that happens on the first compile or load of the function.

``NUMBA_DISABLE_JIT=1`` still runs every kernel as plain Python.  ``DQDYN_NO_CACHE=1`` turns the
cache off (every process compiles).

**Literals.**  numba compiles an ordinary (not IR-inlined) kernel once per distinct argument
*type*, and a constant written in a call — ``f(x, False)``, ``f(x, 2)`` — has a type of its own
(``Literal[bool](False)``, ``Literal[int](2)``), as has a read-only array beside a writable one.
A kernel called with ``False`` by one caller and with a ``bool`` variable by another was compiled
twice, and everything it calls with it: ``hybrid_kernel`` 29 s, the derivatives' sweeps 60 s.
So a kernel calling another writes ``bool(False)`` / ``int(2)`` (typed ``bool`` / ``int64``, as a
Python caller's values are), and the arrays Python passes to kernels are writable (the frame
placements, a parallel robot's home pose).  A counter started at ``0`` and passed to a kernel
after a loop counts too: numba's first typing pass sees only ``Literal[int](0)`` and compiles the
callee for it before the loop makes the counter ``int64`` (``chol_factor`` and ``chol_solve``,
twice in every articulated-body kernel) — such a counter starts at ``int(0)``.
``tests/engine/test_kernel_cache.py`` reads the filled cache: no kernel holds two signatures that differ
only there.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import tempfile
import threading
import time

#: the dqdyn package folder (this file is in its ``_engine/``)
PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: folder of the cache filled at install time (inside the package)
PACKAGE_CACHE = os.path.join(PKG_DIR, "_kernels")
#: the Python ABI of this interpreter (``cpython-312``): numba's cached code is specific to it
PY_TAG = sys.implementation.cache_tag
#: the portable kernels shipped with the source, one archive per CPython (``python -m
#: dqdyn._engine.precompile --portable`` makes this interpreter's): every kernel compiled for
#: `PORTABLE_CPU`, with a ``MANIFEST.json``
PORTABLE_ARCHIVE = os.path.join(PKG_DIR, f"_kernels_portable-{PY_TAG}.tar.xz")
#: where ``dqdyn._engine.precompile`` (so ``pip install``) unpacks it, when it fits this machine (one
#: folder per CPython, so that several interpreters can share an editable checkout)
PORTABLE_CACHE = os.path.join(PKG_DIR, "_kernels_portable", PY_TAG)
#: the CPU the portable kernels are compiled for: the x86-64 psABI's level 3 (AVX2 and FMA:
#: every x86-64 CPU since Haswell, 2013, and Zen, 2017)
PORTABLE_CPU = "x86-64-v3"
#: what LLVM's ``x86-64-v3`` assumes (the psABI's levels 2 and 3), in LLVM's feature names;
#: the portable kernels are loaded only where the host has every one
PORTABLE_FEATURES = frozenset(
    "cx16 sahf popcnt sse3 sse4.1 sse4.2 ssse3 avx avx2 bmi bmi2 f16c fma lzcnt movbe xsave".split()
)


@functools.cache
def portable_fits() -> bool:
    """Whether this machine runs the portable kernels: x86-64, and every feature of
    `PORTABLE_FEATURES` in the host CPU's (as LLVM reads them, so as numba compiles)."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    from llvmlite import binding as ll

    try:
        have = {f[1:] for f in ll.get_host_cpu_features().flatten().split(",") if f.startswith("+")}
    except RuntimeError:  # pragma: no cover - LLVM cannot read this CPU's features
        return False
    return PORTABLE_FEATURES <= have


#: the CPU numba compiles for in a process that imported dqdyn (`_pin_cpu_target`)
CPU_TARGET: dict = {"name": None, "pinned": False, "why": ""}


def _pin_cpu_target() -> None:
    """Make every kernel compiled at run time target `PORTABLE_CPU`, as the shipped ones do.

    numba compiles for the host CPU by default: on a CPU with AVX-512 a kernel compiled at run
    time (one the shipped kernels lack, or every kernel where they do not fit) is other machine
    code than the shipped x86-64-v3 one, and results differ in the last bits (different FMA
    contraction and vector widths) depending on which route computed them.  Here, before numba
    is imported, ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` are set to x86-64-v3 where the host
    runs it (`portable_fits`), so that every route gives the same bits on every such CPU.
    Not where the user set either variable (their choice stands), nor with
    ``DQDYN_NATIVE_CPU=1`` (host-tuned kernels, results may then differ from the shipped ones in
    the last bits).  numba holds one code generator per process: where it was started before
    dqdyn was imported (a user's own kernel ran first), the kernels compiled at run time target
    the host; ``dqdyn doctor`` says so.  The setting is process-wide: a user's own numba kernels
    in the same process target x86-64-v3 too."""
    CPU_TARGET.update(pinned=False)
    if os.environ.get("DQDYN_NATIVE_CPU", "") not in ("", "0"):
        CPU_TARGET["why"] = "DQDYN_NATIVE_CPU is set: kernels compiled here target the host CPU"
        return
    if "NUMBA_CPU_NAME" in os.environ or "NUMBA_CPU_FEATURES" in os.environ:
        CPU_TARGET.update(name=os.environ.get("NUMBA_CPU_NAME"),
                          why="NUMBA_CPU_NAME / NUMBA_CPU_FEATURES set by the user")
        return
    if not portable_fits():
        CPU_TARGET["why"] = f"this CPU lacks part of {PORTABLE_CPU}: kernels target the host CPU"
        return
    numba_mod = sys.modules.get("numba")
    if numba_mod is not None:
        from numba.core.registry import cpu_target

        if "_toplevel_target_context" in cpu_target.__dict__:
            CPU_TARGET["why"] = ("numba's code generator started before dqdyn was imported: "
                                 "kernels compiled in this process target the host CPU")
            return
    os.environ["NUMBA_CPU_NAME"] = PORTABLE_CPU
    os.environ["NUMBA_CPU_FEATURES"] = ""
    if numba_mod is not None:  # (numba reads its environment again before each compilation)
        numba_mod.core.config.reload_config()
    CPU_TARGET.update(name=PORTABLE_CPU, pinned=True, why="")


_pin_cpu_target()


import numba  # noqa: E402  (after the CPU target is set)
from numba.core import caching  # noqa: E402


def user_cache_dir() -> str:
    """``$DQDYN_CACHE_DIR``, else ``$XDG_CACHE_HOME/dqdyn`` (``~/.cache/dqdyn``)."""
    d = os.environ.get("DQDYN_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dqdyn")


# ----------------------------------------------------------------------- source stamps
#: ``from <module> import <names>`` statements (names possibly in parentheses over several lines),
#: at any indentation; a docstring line of that form also matches (it only adds a file)
_FROM_IMPORT = re.compile(
    rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n]*)", re.MULTILINE
)


@functools.cache
def _imports_of(rel: str) -> frozenset:
    """dqdyn files (paths relative to the package) imported by the file ``rel``.

    A scan of the ``from … import …`` statements with a regular expression rather than an
    ``ast`` parse: the stamps are computed on the first call of a kernel, and parsing the ~10
    files a kernel imports took 70 ms of it.  ``tests/engine/test_kernel_cache.py`` checks the scan
    against the parse on every file of the package."""
    path = os.path.join(PKG_DIR, rel)
    with open(path, "rb") as f:
        text = f.read()
    pkg_parts = os.path.dirname(rel).split(os.sep) if os.path.dirname(rel) else []
    out = set()
    for m in _FROM_IMPORT.finditer(text):
        dots, module = len(m.group(1)), m.group(2).decode()
        if dots == 0:
            if not (module == "dqdyn" or module.startswith("dqdyn.")):
                continue
            parts = module.split(".")[1:]
        else:
            up = dots - 1
            if up > len(pkg_parts):
                continue
            parts = pkg_parts[: len(pkg_parts) - up] + (module.split(".") if module else [])
        base = os.path.join(PKG_DIR, *parts)
        if os.path.isfile(base + ".py"):
            out.add(os.path.join(*parts) + ".py")
            continue
        if os.path.isdir(base):  # a package: the submodules named, else its __init__
            names = re.sub(rb"#[^\n]*", b"", m.group(3)).strip(b"()\\ \t\n").split(b",")
            for name in names:
                name = name.split()[0].decode() if name.split() else ""
                if not name:
                    continue
                sub = os.path.join(base, name + ".py")
                if os.path.isfile(sub):
                    out.add(os.path.relpath(sub, PKG_DIR))
                else:
                    out.add(os.path.relpath(os.path.join(base, "__init__.py"), PKG_DIR))
    return frozenset(out)


@functools.cache
def _closure(rel: str) -> frozenset:
    seen, todo = set(), [rel]
    while todo:
        r = todo.pop()
        if r in seen or not os.path.isfile(os.path.join(PKG_DIR, r)):
            continue
        seen.add(r)
        todo.extend(_imports_of(r) - seen)
    seen.add(os.path.join("_engine", "jit.py"))
    return frozenset(seen)


@functools.cache
def _file_hash(rel: str) -> bytes:
    with open(os.path.join(PKG_DIR, rel), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest().encode()


@functools.cache
def source_stamp(rel: str) -> str:
    """Hash of the file ``rel`` (relative to the package) and of every dqdyn file it imports."""
    h = hashlib.sha256()
    for r in sorted(_closure(rel)):
        h.update(r.encode())
        h.update(_file_hash(r))
    return h.hexdigest()


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


@functools.cache
def cache_roots() -> tuple[tuple[str, bool], ...]:
    """The cache folders, in lookup order, each with whether new entries may be written there:
    the package's (filled at install for this machine), the portable kernels unpacked from the
    source (read only), then — when the package's is missing or read-only — the user's.
    ``$DQDYN_PORTABLE_BUILD`` (set by ``precompile --portable``) makes that folder the only one,
    so everything compiles into it."""
    build = os.environ.get("DQDYN_PORTABLE_BUILD")
    if build:
        return ((build, _writable(build)),)
    roots = []
    if os.path.isdir(PACKAGE_CACHE) or os.environ.get("DQDYN_BUILDING_CACHE"):
        roots.append((PACKAGE_CACHE, _writable(PACKAGE_CACHE)))
    if not roots or not roots[0][1]:
        user = user_cache_dir()
        roots.append((user, _writable(user)))
    if os.path.isdir(PORTABLE_CACHE) and portable_fits():
        roots.insert(1, (PORTABLE_CACHE, False))
    return tuple(roots)


def portable_magic(codegen) -> tuple:
    """numba's description of the code the portable kernels hold (``codegen.magic_tuple()`` as
    in a process compiling with ``NUMBA_CPU_NAME=x86-64-v3 NUMBA_CPU_FEATURES=``): their
    index key, which a host compile's never equals."""
    return (codegen.magic_tuple()[0], PORTABLE_CPU, "")


# ----------------------------------------------------------------------------- the cache
class _Locator(caching._CacheLocator):
    """Locates the cache of a dqdyn function: ``<root>/<subpackage>/``, stamp of its import
    closure (see the module docstring)."""

    def __init__(self, py_func, py_file, root):
        self._rel = os.path.relpath(os.path.abspath(py_file), PKG_DIR)
        self._lineno = py_func.__code__.co_firstlineno
        self._path = os.path.join(root, os.path.dirname(self._rel) or "_top")

    def ensure_cache_path(self):
        os.makedirs(self._path, exist_ok=True)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return source_stamp(self._rel)

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):  # pragma: no cover - not used by numba here
        raise NotImplementedError


class _Impl(caching.CompileResultCacheImpl):
    def __init__(self, py_func, root, variant):
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _Locator(py_func, caching.inspect.getfile(py_func), root)
        modname = os.path.splitext(os.path.basename(caching.inspect.getfile(py_func)))[0]
        fullname = "%s.%s%s" % (modname, py_func.__qualname__, variant)
        self._filename_base = self.get_filename_base(fullname, getattr(sys, "abiflags", ""))


class _StampedFile(caching.IndexDataCacheFile):
    """numba's index + data files, the data files named after the source stamp.

    numba writes a new entry's index, then its data file, each atomically, but not the two
    together; with one data name for every stamp, a process still running an older source
    (a checkout edited while it ran, two versions of dqdyn sharing ``~/.cache/dqdyn``) could
    write its data file after a newer process wrote the index, so the index of the new stamp
    pointed at the old code.  Here each stamp has its own data files, and saving drops the data
    files of other stamps (a reader of one that is gone finds no entry and compiles)."""

    def __init__(self, cache_path, filename_base, source_stamp):
        super().__init__(cache_path, filename_base, source_stamp)
        self._tag = hashlib.sha1(repr(source_stamp).encode()).hexdigest()[:12]
        self._base = filename_base + "."
        self._data_name_pattern = "%s%s.{number:d}.nbc" % (self._base, self._tag)

    def _save_data(self, name, data):
        super()._save_data(name, data)
        mine = self._base + self._tag + "."
        try:
            names = os.listdir(self._cache_path)
        except OSError:
            return
        for f in names:
            if f.startswith(self._base) and f.endswith(".nbc") and not f.startswith(mine):
                try:
                    os.unlink(os.path.join(self._cache_path, f))
                except OSError:
                    pass


class _RootCache(caching.Cache):
    """numba's per-function cache (index + data files) in one root folder.  In the portable
    kernels' folder an entry's key names `PORTABLE_CPU` (`portable_magic`) instead
    of this host's CPU: their object code runs here (`portable_fits`), and gives the bits
    a compile for this host gives (no fast-math reassociation in dqdyn; FMA contraction, where a
    kernel allows it, happens alike: both CPUs have FMA)."""

    def __init__(self, py_func, root, variant):
        self._portable = root == PORTABLE_CACHE
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = _Impl(py_func, root, variant)
        self._cache_path = self._impl.locator.get_cache_path()
        self._cache_file = _StampedFile(
            cache_path=self._cache_path, filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp())
        self.enable()

    def load_overload(self, sig, target_context):
        if not _light_load_ok():
            return super().load_overload(sig, target_context)
        _ready_to_link(target_context)
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:  # anything the light path lacked: numba's own way
            return super().load_overload(sig, target_context)

    def _index_key(self, sig, codegen):
        key = super()._index_key(sig, codegen)
        return (key[0], portable_magic(codegen), key[2]) if self._portable else key


# ------------------------------------------------------------- loading without numba's start-up
_LIGHT = None  # whether numba's Cache.load_overload is the one _light_load_ok was written for


def _light_load_ok() -> bool:
    """numba's ``Cache.load_overload`` calls ``target_context.refresh()`` before every load: the
    first one imports every lowering registry of numba (``numba.np.arraymath`` … and, through
    ``numba.np.linalg``'s BLAS check, ``scipy.linalg`` with ``numpy.f2py``), 0.4 s of a 0.5 s
    first call, of which loading the kernel's object code is 0.03 s.  Those registries serve
    the *compiler* (which refreshes on its own before it compiles anything); object code only
    needs the symbols it links against.  So a load here makes those symbols known
    (`_ready_to_link`) and skips the refresh — only where numba's ``load_overload`` is
    still "refresh, then ``_load_overload``" (another numba: its own way), and not with
    ``DQDYN_NUMBA_LIGHT_LOAD=0``.  ``tests/engine/test_kernel_cache.py`` checks, in fresh processes,
    that the results are the same bits and that the registries were not imported."""
    global _LIGHT
    if _LIGHT is None:
        _LIGHT = False
        if os.environ.get("DQDYN_NUMBA_LIGHT_LOAD", "1") != "0":
            import inspect

            try:
                src = inspect.getsource(caching.Cache.load_overload)
            except (OSError, TypeError):  # pragma: no cover - no source: leave numba alone
                src = ""
            body = [ln.strip() for ln in src.splitlines()
                    if ln.strip() and not ln.strip().startswith(("#", '"""', "def "))]
            body = [ln for ln in body if ln.startswith(("target_context", "with", "return"))]
            _LIGHT = body == ["target_context.refresh()",
                              "with self._guard_against_spurious_io_errors():",
                              "return self._load_overload(sig, target_context)"]
    return _LIGHT


def _ready_to_link(target_context) -> None:
    """What of numba's refresh a cached library needs to be linked: every symbol numba adds to
    LLVM's table outside the context's own set-up (math functions, C helpers and exceptions are
    added when the context is made) — the runtime's (NRT: allocation, reference counts) and the
    hash secrets that ``numba.cpython.hashing`` adds when imported.  Parallel kernels start
    their thread pool themselves (their ``reload_init``).  Idempotent and cheap after the first
    call."""
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)
    import numba.cpython.hashing  # noqa: F401  (adds the _numba_hashsecret_* symbols)


_NESTING = threading.local()  # compilations of dqdyn kernels in progress on this thread


def _depth() -> int:
    return getattr(_NESTING, "depth", 0)


# ------------------------------------------------------------- faster IR inlining
class _BlockCopier:
    """Stands in for the ``copy`` module inside ``numba.core.inline_closurecall``, whose only use
    of it is ``copy_ir`` (in ``InlineWorker.inline_ir``): the callee's IR copied block by block,
    ``copy.deepcopy(block)`` each with a memo of its own.  Every block refers to the function's
    one ``Scope``, which lists every variable of the function, so each block copied the whole
    scope again: O(blocks × variables), 75 % of the time numba took to compile dqNE (92 of 119 s
    under cProfile; numba issues #8989 and #9204).  Here the blocks of one IR share a memo, as one
    ``copy.deepcopy(the_ir.blocks)`` would: the scope is copied once, and the copy keeps the
    original's structure (one scope shared by its blocks) instead of one scope per block.  The
    memo lives for one ``inline_ir`` call and is dropped when a block of another scope (the
    next IR copied) arrives.  The code numba generates is unchanged: the kernel cache's test
    compares a kernel compiled with and without it, bit for bit."""

    def __init__(self):
        self.memo = None
        self.scope = None
        self.armed = False  # set by `_memoize_untyped` for the next ``inline_ir`` call
        self.once = False  # this ``inline_ir`` call copies one IR; its second copy is skipped

    def deepcopy(self, x, memo=None):
        import copy

        if memo is not None or self.memo is None:
            return copy.deepcopy(x, memo)
        scope = getattr(x, "scope", None)
        if scope is not self.scope:
            if self.once and self.scope is not None:
                return x  # (see _memoize_untyped)
            self.memo, self.scope = {}, scope
        return copy.deepcopy(x, self.memo)

    def __getattr__(self, name):
        import copy

        return getattr(copy, name)


_INLINE_PATCHED = False


def _faster_inlining() -> None:
    """Install `_BlockCopier` (once, before the first compilation; ``DQDYN_NUMBA_INLINE_COPY=0``
    leaves numba as it is).  Only where numba's ``inline_ir`` still copies block by block."""
    global _INLINE_PATCHED
    if _INLINE_PATCHED:
        return
    _INLINE_PATCHED = True
    if os.environ.get("DQDYN_NUMBA_INLINE_COPY", "1") == "0":
        return
    import inspect

    from numba.core import inline_closurecall as icc

    try:
        src = inspect.getsource(icc.InlineWorker.inline_ir)
    except (OSError, TypeError):  # pragma: no cover - no source: leave numba alone
        return
    if src.count("copy.deepcopy(") != 1 or "copy.deepcopy(the_ir.blocks[block_label])" not in src:
        return  # (another numba: its inlining is not the one this was written for)
    copier = _BlockCopier()
    inline_ir = icc.InlineWorker.inline_ir

    @functools.wraps(inline_ir)
    def patched(self, *args, **kwargs):
        saved = copier.memo, copier.scope, copier.once
        copier.memo, copier.scope, copier.once = {}, None, copier.armed
        copier.armed = False
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            copier.memo, copier.scope, copier.once = saved

    icc.copy = copier
    icc.InlineWorker.inline_ir = patched
    _memoize_untyped(icc.InlineWorker, copier)


def _memoize_untyped(worker, copier: _BlockCopier) -> None:
    """Make ``InlineWorker.inline_function`` run numba's untyped passes over a dqdyn helper once
    per process and compiler flags, not at every call site it is inlined into.  numba reruns them
    (bytecode to IR, and the helper's own inlining, recursively) for each site: 23 % of the time
    it took to compile ``aba`` under cProfile, more where helpers nest deeper.  The IR kept is
    never changed: ``inline_ir`` works on a copy of it (numba's ``copy_ir``), and each site gets a
    fresh function identity, as before, for the names of the variables it brings in.  Only
    functions of dqdyn are kept (their globals are constants; a user's function is inlined as
    numba does).  ``inline_ir`` also copies its copy, to return it unchanged (``callee_ir_original``),
    which numba's inlining pass — the only caller of ``inline_function`` — drops: that second copy
    is skipped here (`_BlockCopier` hands the blocks back as they are).  The code generated
    is the same: the kernel cache's tests compare results of kernels compiled with and without
    it, to the bit."""
    import inspect

    inline_function = worker.inline_function
    if getattr(inline_function, "_dqdyn", False):
        return
    try:  # (only where numba's inline_function is exactly "untyped passes, then inline_ir")
        src = inspect.getsource(inline_function)
    except (OSError, TypeError):  # pragma: no cover - no source: leave numba alone
        return
    if ("callee_ir = self.run_untyped_passes(function)" not in src
            or "return self.inline_ir(caller_ir, block, i, callee_ir, freevars," not in src):
        return
    memo: dict = {}

    @functools.wraps(inline_function)
    def patched(self, caller_ir, block, i, function, arg_typs=None):
        if not getattr(function, "__module__", "").startswith("dqdyn."):
            return inline_function(self, caller_ir, block, i, function, arg_typs=arg_typs)
        self.flags.enable_ssa = False  # (as run_untyped_passes sets it on the caller's flags)
        key = (function, repr(self.flags), repr(self.locals))
        ir_ = memo.get(key)
        if ir_ is None:
            ir_ = memo[key] = self.run_untyped_passes(function)
        from numba.core import bytecode

        site = ir_.copy()  # (blocks copied again, deeply, by inline_ir)
        site.func_id = bytecode.FunctionIdentity.from_function(function)
        copier.armed = True
        return self.inline_ir(caller_ir, block, i, site, function.__code__.co_freevars,
                              arg_typs=arg_typs)

    patched._dqdyn = True
    worker.inline_function = patched


class _nested:
    """Counts a compilation of a dqdyn kernel (or C callback) in progress on this thread; the
    outermost one that compiled (rather than loaded) prints what and how long, on stderr."""

    def __enter__(self):
        if not _INLINE_PATCHED:
            _faster_inlining()
        if _depth() == 0:
            _NESTING.missed, _NESTING.t0 = None, time.perf_counter()
        _NESTING.depth = _depth() + 1

    def __exit__(self, *exc):
        _NESTING.depth = _depth() - 1
        if _depth() == 0 and getattr(_NESTING, "missed", None) is not None:
            if not _quiet():
                print(f"dqdyn: compiled {_NESTING.missed} in "
                      f"{time.perf_counter() - _NESTING.t0:.1f} s (cached for later processes)",
                      file=sys.stderr, flush=True)
            _NESTING.missed = None


#: whether this process has said that it compiles kernels (`_announce`)
_ANNOUNCED = [False]


def _quiet() -> bool:
    """No compile messages while the kernels are being readied on purpose (``dqdyn precompile``,
    ``pip install``) or where the user asked for none (``DQDYN_QUIET_COMPILE=1``)."""
    return any(os.environ.get(k, "") not in ("", "0") for k in
               ("DQDYN_QUIET_COMPILE", "DQDYN_BUILDING_CACHE", "DQDYN_PORTABLE_BUILD",
                "DQDYN_PRECOMPILING"))


def why_compiling() -> str:
    """Why a kernel is not ready here, in a few words (what ``dqdyn doctor`` says at length)."""
    import json

    if not os.path.isfile(os.path.join(PORTABLE_CACHE, "MANIFEST.json")):
        if not os.path.isfile(PORTABLE_ARCHIVE):
            return f"no kernels are shipped for {PY_TAG} on this platform"
        return "the shipped kernels were not unpacked (run `dqdyn precompile`)"
    if not portable_fits():
        return f"this CPU lacks part of {PORTABLE_CPU}, which the shipped kernels need"
    try:
        with open(os.path.join(PORTABLE_CACHE, "MANIFEST.json")) as f:
            man = json.load(f)
    except (OSError, ValueError):
        man = {}
    if man.get("numba") != numba.__version__:
        return (f"the shipped kernels are numba {man.get('numba')}'s and this is numba "
                f"{numba.__version__}")
    return "this kernel's source or signature is not among the shipped kernels"


def _announce(py_func) -> None:
    """Say once per process, as a `KernelCompileWarning`, that kernels are
    being compiled and why: otherwise a first call that compiles for a minute looks hung."""
    if _ANNOUNCED[0] or _quiet():
        return
    _ANNOUNCED[0] = True
    import warnings

    from dqdyn.errors import KernelCompileWarning

    msg = (f"dqdyn is compiling {py_func.__qualname__} for this machine ({why_compiling()}); "
           "each kernel takes seconds to a minute, once, and is cached after. `dqdyn doctor` "
           "explains, `dqdyn precompile` compiles them all now (progress is printed)")
    frame = sys._getframe(1)  # the warning points at the caller's line, outside dqdyn and numba
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in (
            "dqdyn", "numba", "contextlib", "llvmlite"):
        frame = frame.f_back
    if frame is None:
        warnings.warn(msg, KernelCompileWarning, stacklevel=2)
    else:
        warnings.warn_explicit(msg, KernelCompileWarning, frame.f_code.co_filename,
                               frame.f_lineno, module=frame.f_globals.get("__name__"),
                               registry=frame.f_globals.setdefault("__warningregistry__", {}))


def _counting(compile_fn):
    def compile(*args, **kwargs):
        with _nested():
            return compile_fn(*args, **kwargs)

    return compile


class KernelCache(caching._Cache):
    """dqdyn's cache of one compiled function: looks in each root of `cache_roots` in turn,
    saves in the first writable one.  The per-root caches are made on first use."""

    def __init__(self, py_func, variant=""):
        self._py_func = py_func
        self._variant = variant  # told apart in the file names (e.g. a serial twin)
        self._roots = None
        self._enabled = os.environ.get("DQDYN_NO_CACHE", "") in ("", "0")

    def _caches(self):
        if self._roots is None:
            self._roots = [(_RootCache(self._py_func, r, self._variant), w) for r, w in cache_roots()]
        return self._roots

    @property
    def cache_path(self):
        return self._caches()[0][0].cache_path

    def load_overload(self, sig, target_context):
        # Only a kernel called from Python is loaded: one that another kernel being compiled
        # calls is compiled from its IR, so that LLVM can inline it there (a cached kernel is
        # object code, which cannot be inlined) — the caller's machine code is then the same
        # whatever this process loaded before, and so is every result, to the bit.
        if not self._enabled or _depth() > 1:
            return None
        for c, _ in self._caches():
            data = c.load_overload(sig, target_context)
            if data is not None:
                return data
        if _depth() == 1:  # a kernel called from Python compiles now: say so
            _NESTING.missed = self._py_func.__qualname__
            _announce(self._py_func)
        return None

    def save_overload(self, sig, data):
        if not self._enabled:
            return
        for c, writable in self._caches():
            if writable:
                c.save_overload(sig, data)
                return

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        for c, writable in self._caches():
            if writable:
                c.flush()


# ------------------------------------------------------------------------- decorators
def kernel(**options):
    """A decorator: ``numba.njit(**options)`` whose compilations go through `KernelCache`.

    Used once per module to define that module's decorators, e.g.
    ``njit = kernel(error_model="numpy")`` and ``pjit = kernel(parallel=True)``; ``variant="-x"``
    keeps the cache entries of a second kernel made from the same function apart.  A parallel
    kernel (a batch driver with a ``prange`` loop) also gets ``.serial``: the same function
    compiled without threads, which `dqdyn._engine.batching.run_chunked` uses for small
    batches (starting the thread pool costs more than they do).
    """
    options.pop("cache", None)
    suffix = options.pop("variant", "")  # tells apart two kernels made from one function

    def make(fn, opts, variant):
        d = numba.njit(**opts)(fn)
        if isinstance(d, numba.core.dispatcher.Dispatcher):
            d._cache = KernelCache(d.py_func, variant)
            d.compile = _counting(d.compile)
        return d

    def deco(fn):
        d = make(fn, options, suffix)
        if options.get("parallel"):
            serial = make(fn, {**options, "parallel": False}, suffix + "-serial")
            try:
                d.serial = serial
            except AttributeError:  # NUMBA_DISABLE_JIT: a plain function
                pass
        return d

    return deco


def cfunc(sig, fn, **options):
    """``numba.cfunc(sig, **options)(fn)`` through `KernelCache` (compiled or loaded now)."""
    from numba.core.ccallback import CFunc

    options.pop("cache", None)
    res = CFunc(fn, numba.core.sigutils.normalize_signature(sig), locals={}, options=options)
    res._cache = KernelCache(fn)
    with _nested():
        res.compile()
    return res
