"""Names from a model file never become code: :mod:`dqdyn.symbolic`'s C and Python generators
turn every model, link and joint name into a plain identifier before it reaches the source, and a
function name that is not an identifier is refused (:class:`~dqdyn.errors.UnsafeNameError`).

The oracle for the numbers is dqdyn's compiled ``mass_matrix`` / ``gravity`` / ``rnea``; the oracle
for "no injected code" is the C compiler and the dynamic symbol table of the library it builds."""

from __future__ import annotations

import ctypes
import io
import re
import shutil
import subprocess
import tokenize

import numpy as np
import pytest

sp = pytest.importorskip("sympy")

import dqdyn  # noqa: E402
from dqdyn.errors import DqdynError, UnsafeNameError  # noqa: E402
from dqdyn.symbolic import dynamics  # noqa: E402

#: each payload tries a different way out of a C comment / string / identifier
PAYLOADS = [
    'x */ int evil_a(void) { return 42; } /* ',
    "line\n#include <stdlib.h>\nint evil_b(void) { return system(\"id\"); }\n",
    "back\\\nint evil_c(void) { return 1; }",
    "tri ??/\nint evil_d(void) { return 2; }",
    "quote\" ' int evil_e(void); //",
    "unicode \u2028 \u00e9 \u202e int evil_f(void);",
    "// int evil_g(void);\n",
]
ROBOT_NAME = 'x */ int evil_robot(void) { return 7; } /*\n#include <stdlib.h>\n\u00e9"\'\\??/'
EVIL = re.compile(r"evil|stdlib|system")


def _nasty_model():
    b = dqdyn.ModelBuilder(ROBOT_NAME)
    parent = "world"
    for k, payload in enumerate(PAYLOADS[:4]):
        name = f"{payload}{k}"
        b.add_body(name, parent, "revolute" if k % 2 == 0 else "prismatic",
                   joint_name=f"j{k} {PAYLOADS[-1 - k]}", axis=(0, 0, 1) if k % 2 else (1, 0, 0),
                   xyz=(0.1, 0.05 * k, 0.3), mass=1.0 + k, com=(0.05, 0.0, 0.1),
                   inertia=(0.02, 0.03, 0.01))
        parent = name
    return b.build()


@pytest.fixture(scope="module")
def nasty():
    model = _nasty_model()
    return model, dynamics(model)


def _c_comments_and_code(src: str):
    """Split C source into its block comments and the rest (the C rules: a comment ends at the
    first ``*/``; the source must not use ``//`` comments)."""
    comments = re.findall(r"/\*.*?\*/", src, flags=re.S)
    code = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return comments, code


def test_c_source_keeps_every_name_inside_a_plain_comment(nasty):
    model, d = nasty
    src = d.c_source("dyn_nasty")
    assert src.isascii()
    assert "\\" not in src and "??" not in src and "//" not in src
    comments, code = _c_comments_and_code(src)
    for c in comments:
        assert "\n" not in c and "/*" not in c[2:]
    assert not EVIL.search(code), code[:400]
    # the only preprocessor line is the one dqdyn writes
    assert [ln for ln in src.splitlines() if ln.lstrip().startswith("#")] == ["#include <math.h>"]
    assert re.findall(r"\bvoid\s+(\w+)\s*\(", code) == ["dyn_nasty"]


def _compile(src, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "dyn.c").write_text(src)
    lib = tmp_path / "libdyn.so"
    # -std=c99 turns trigraphs on (??/ is a backslash there)
    r = subprocess.run([cc, "-std=c99", "-O1", "-shared", "-fPIC", "-o", str(lib),
                        str(tmp_path / "dyn.c"), "-lm"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(r.stderr)
    return lib


def test_generated_c_computes_the_dynamics_and_exports_only_its_function(nasty, tmp_path):
    model, d = nasty
    lib = _compile(d.c_source("dyn_nasty"), tmp_path)
    so = ctypes.CDLL(str(lib))
    for sym in ("evil_a", "evil_b", "evil_c", "evil_d", "evil_e", "evil_f", "evil_g", "evil_robot"):
        with pytest.raises(AttributeError):
            getattr(so, sym)
    nm = shutil.which("nm")
    if nm is not None:
        out = subprocess.run([nm, "-D", "--defined-only", str(lib)], capture_output=True, text=True).stdout
        funcs = [ln.split()[-1] for ln in out.splitlines() if ln.split()[1:2] == ["T"]]
        assert funcs == ["dyn_nasty"], out
    P = ctypes.POINTER(ctypes.c_double)
    so.dyn_nasty.argtypes = [P] * 5
    n = model.nv
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = np.ascontiguousarray(rng.uniform(-2, 2, model.nq))
        v = np.ascontiguousarray(rng.normal(size=n))
        a = rng.normal(size=n)
        M, C, g = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
        so.dyn_nasty(*(x.ctypes.data_as(P) for x in (q, v, M, C, g)))
        np.testing.assert_allclose(M, dqdyn.mass_matrix(model, q), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, dqdyn.gravity(model, q), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(M @ a + C @ v + g, dqdyn.rnea(model, q, v, a), rtol=1e-10, atol=1e-10)


def test_python_source_keeps_names_out_of_code(nasty):
    model, d = nasty
    src = d.python_source("dyn_nasty")
    assert src.isascii()
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    code = " ".join(t.string for t in toks if t.type not in (tokenize.COMMENT,))
    assert not EVIL.search(code)
    f = d.numpy_function()
    q, v = np.full(model.nq, 0.4), np.linspace(-1, 1, model.nv)
    M, C, g = f(q, v)
    np.testing.assert_allclose(M, dqdyn.mass_matrix(model, q), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g, dqdyn.gravity(model, q), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bad", ["f(); int evil", "f */", "2fast", "", "with space", "caf\u00e9",
                                 "f\n", "int", "return", "_Reserved", "__x"])
def test_a_function_name_that_is_not_an_identifier_is_refused(nasty, bad):
    _, d = nasty
    with pytest.raises(UnsafeNameError, match="name"):
        d.c_source(bad)


@pytest.mark.parametrize("bad", ["f(): import os", "lambda", "2x", "a.b", "x\ny", "math", "numpy"])
def test_a_python_function_name_that_is_not_an_identifier_is_refused(nasty, bad):
    _, d = nasty
    with pytest.raises(UnsafeNameError, match="name"):
        d.python_source(bad)
    assert issubclass(UnsafeNameError, DqdynError) and issubclass(UnsafeNameError, ValueError)


def test_foreign_symbols_in_a_custom_output_are_refused(nasty):
    """A sympy matrix passed in ``which`` may hold only the program's own symbols (any other name
    would be printed verbatim into the source)."""
    _, d = nasty
    bad = sp.Matrix([[sp.Symbol("x); evil(")] + list(d.q[:1])])
    with pytest.raises(DqdynError, match="which"):
        d.c_source("f", which=(bad,))
    with pytest.raises(DqdynError, match="which"):
        d.python_source("f", which=(sp.Matrix([sp.Function("evil")(d.q[0])]),))
