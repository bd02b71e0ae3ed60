"""Optional dependencies: the one place where dqdyn imports them.

The core install (``pip install dqdyn``) carries only what ``import dqdyn`` and the algorithms
need (numpy, scipy, numba, urdfdom-py, lxml, pyyaml).  Everything else is an extra::

    sim    mujoco        dqdyn reproduce / demo (the MuJoCo plant), dqdyn.reproduce.mujoco_bridge
    plot   matplotlib    figures: dqdyn simulate --plot, reproduce figures
    cli    rich          tables and progress bars of the command line (plain text without it)
    demo   = sim + plot + cli: what ``dqdyn demo`` uses
    docs   mkdocs-material, mkdocstrings[python]: the documentation site
    all    every runtime extra

A feature whose dependency is missing raises `MissingExtraError` naming the
extra, through `require`.
"""

from __future__ import annotations

import importlib

from dqdyn.errors import MissingExtraError

#: extra -> the top-level modules it provides
EXTRAS = {
    "sim": ("mujoco",),
    "plot": ("matplotlib",),
    "cli": ("rich",),
    "docs": ("mkdocs", "mkdocstrings", "material"),
}


def require(extra: str, module: str):
    """Import ``module`` (e.g. ``"matplotlib.pyplot"``) and return it, or raise
    `MissingExtraError` whose message says ``pip install "dqdyn[extra]"``.

    ``extra`` may also be ``"pip:NAME"`` for a package that is not a dqdyn extra (the message
    then says ``pip install NAME``).

    >>> require("core", "math").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        missing = getattr(e, "name", None) or ""
        if missing and missing.split(".")[0] != top:
            raise  # the module is there but one of *its* own imports failed: show that error
        cmd = f"pip install {extra[4:]}" if extra.startswith("pip:") else \
            f'pip install "dqdyn[{extra}]"'
        raise MissingExtraError(
            f"this needs the optional dependency {top!r}, which is not installed; "
            f"install it with: {cmd}"
        ) from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


__all__ = ["require", "available", "EXTRAS", "MissingExtraError"]
