"""What may enter generated source code: plain identifiers only.

Model, link and joint names come from model files (data); the code generators of
`dqdyn.symbolic` never print them as they are.  `tag` maps any text deterministically
to the identifier alphabet ``[A-Za-z0-9_]`` (used in comments and file names), and
`c_identifier` / `python_identifier` check a function name the caller chose, raising
`UnsafeNameError` naming the argument.
"""

from __future__ import annotations

import keyword
import re

from dqdyn.errors import UnsafeNameError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: C99 / C11 keywords (a function of that name would not compile, or would mean something else)
C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline
int long register restrict return short signed sizeof static struct switch typedef union unsigned
void volatile while asm typeof bool true false""".split())

#: names a generated Python function must not take: the modules its body uses
_PY_RESERVED = frozenset({"math", "numpy"})


def tag(text, *, limit: int = 64) -> str:
    """``text`` as an identifier: every character outside ``[A-Za-z0-9_]`` becomes ``_``, a
    leading digit gets a ``_`` prefix, and the result is cut to ``limit`` characters (empty text
    gives ``unnamed``).  Deterministic, ASCII, and free of ``*/``, ``//``, ``??``, quotes,
    backslashes and newlines, so it is inert in a C or Python comment and in a file name."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", str(text))[:limit]
    if not s:
        return "unnamed"
    return "_" + s[: limit - 1] if s[0].isdigit() else s


def identifiers(texts, prefix: str) -> tuple:
    """One distinct identifier per entry of ``texts``: ``prefix + tag(text)``, and where two
    tags meet, the later one gets ``_<position>`` (then ``_<position>_<n>``) appended.
    ``prefix`` must be a plain identifier that ends in ``_`` (it keeps the names apart from a
    generated program's own ``q0``, ``v0``, ``x0``, ``m_1`` and from Python and C keywords)."""
    if not (isinstance(prefix, str) and _IDENT.match(prefix) and prefix.endswith("_")):
        raise UnsafeNameError(f"prefix: expected a plain identifier ending in '_', got {prefix!r}")
    out, seen = [], set()
    for k, text in enumerate(texts):
        name = prefix + tag(text)
        if name in seen:
            base, n = f"{name}_{k}", 0
            name = base
            while name in seen:
                n += 1
                name = f"{base}_{n}"
        seen.add(name)
        out.append(name)
    return tuple(out)


def _check(name, argument: str, language: str, reserved) -> str:
    if not isinstance(name, str) or not _IDENT.match(name) or len(name) > 255:
        raise UnsafeNameError(
            f"{argument}: the function name must be a plain {language} identifier "
            f"([A-Za-z_][A-Za-z0-9_]*, at most 255 characters), got {name!r}")
    if name in reserved:
        raise UnsafeNameError(f"{argument}: the function name {name!r} is reserved in the generated "
                              f"{language} code; choose another")
    return name


def c_identifier(name, argument: str = "name") -> str:
    """``name`` if it is a C identifier that is neither a keyword nor reserved to the
    implementation (``__x``, ``_X``); else `UnsafeNameError`."""
    _check(name, argument, "C", C_KEYWORDS)
    if name.startswith("__") or (len(name) > 1 and name[0] == "_" and name[1].isupper()):
        raise UnsafeNameError(f"{argument}: the function name {name!r} is reserved to the C "
                              "implementation (names starting with '__' or '_' and a capital)")
    return name


def python_identifier(name, argument: str = "name") -> str:
    """``name`` if it is an ASCII Python identifier, not a keyword and not ``math`` / ``numpy``;
    else `UnsafeNameError`."""
    _check(name, argument, "Python", _PY_RESERVED)
    if keyword.iskeyword(name):
        raise UnsafeNameError(f"{argument}: the function name {name!r} is a Python keyword")
    return name


__all__ = ["tag", "identifiers", "c_identifier", "python_identifier", "C_KEYWORDS"]
