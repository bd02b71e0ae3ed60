"""Exceptions raised by dqdyn.

Every error names the offending argument and says what was expected.  All derive from
`DqdynError`, so ``except dqdyn.errors.DqdynError`` catches anything the library raises
on bad input.
"""

from __future__ import annotations


class DqdynError(Exception):
    """Base class of every dqdyn error."""


class ShapeError(DqdynError, ValueError):
    """An array argument has the wrong shape."""


class NonFiniteError(DqdynError, ValueError):
    """An array argument contains NaN or infinity."""


class NotUnitError(DqdynError, ValueError):
    """A (dual) quaternion that must be unit is not (within tolerance)."""


class ModelError(DqdynError, ValueError):
    """A model is inconsistent (bad topology, negative mass, non-positive inertia, ...)."""


class URDFError(DqdynError, ValueError):
    """A URDF document is malformed or uses something dqdyn cannot represent."""


class MJCFError(DqdynError, ValueError):
    """An MJCF document is malformed or uses something dqdyn cannot represent."""


class UnknownNameError(DqdynError, KeyError):
    """A body, joint or frame name does not exist in the model."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class SingularError(DqdynError, ArithmeticError):
    """A matrix that must be invertible is (numerically) singular."""


class InfeasibleError(DqdynError, ValueError):
    """A request cannot be satisfied (inconsistent constraints, unreachable target, ...)."""


class ConvergenceError(DqdynError, RuntimeError):
    """An iterative method did not converge."""


class DivergenceError(NonFiniteError):
    """A simulation's state blew up (non-finite, or speeds beyond any physical robot): the
    step or the gains are too large for the integrator."""


class MissingExtraError(DqdynError, ImportError):
    """A feature needs an optional dependency that is not installed; the message says what to
    ``pip install`` (an extra of dqdyn such as ``dqdyn[sim]``, or a package)."""


__all__ = [
    "DqdynError",
    "ShapeError",
    "NonFiniteError",
    "NotUnitError",
    "ModelError",
    "URDFError",
    "MJCFError",
    "UnknownNameError",
    "SingularError",
    "InfeasibleError",
    "ConvergenceError",
    "MissingExtraError",
    "DivergenceError",
]


class ChunkError(ShapeError):
    """A chunked (Dask) array is split along an axis that must be a single chunk."""


class SchedulerError(DqdynError, ConnectionError):
    """A Dask scheduler cannot be reached (or answered too late)."""


__all__ += ["ChunkError", "SchedulerError"]


class UnsafeNameError(DqdynError, ValueError):
    """A name that would become part of generated source code (a function name given to
    `dqdyn.symbolic`'s code generators) is not a plain identifier."""


__all__ += ["UnsafeNameError"]


class StoreError(DqdynError, OSError):
    """A Zarr store cannot be read or written as asked: a missing or unreadable chunk, a full
    disk; the message names the store, the array and the chunk."""


class IncompleteStoreError(StoreError):
    """A dataset store was not written to the end (its run was stopped); the message names the
    missing chunks and how to resume."""


class ClusterError(DqdynError, RuntimeError):
    """A Dask cluster can make no progress (no workers, or workers that keep dying)."""


__all__ += ["StoreError", "IncompleteStoreError", "ClusterError"]


class KernelCompileWarning(UserWarning):
    """dqdyn compiles a kernel at run time (the shipped kernels do not cover this Python, numba,
    CPU or edited source): the call takes seconds to a minute, once.  ``dqdyn doctor`` says
    why; ``dqdyn precompile`` compiles every kernel at once."""


__all__ += ["KernelCompileWarning"]


class EnergyDriftWarning(UserWarning):
    """A passive simulation's mechanical energy drifted beyond its tolerance: the integrator
    and step do not resolve the motion (the message names both, the time, and what to use)."""


class EnergyDriftError(DqdynError, ArithmeticError):
    """Raised instead of `EnergyDriftWarning` when a simulation runs with
    ``monitor="raise"``."""


__all__ += ["EnergyDriftWarning", "EnergyDriftError"]


class UsageError(DqdynError, ValueError):
    """A bad command-line argument of the ``dqdyn`` command (or of ``python -m dqdyn.…``): the
    message names the option and what it expects; the command prints it on one line of stderr
    and exits with status 2, as argparse does for its own usage errors."""


__all__ += ["UsageError"]
