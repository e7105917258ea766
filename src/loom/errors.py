"""User-facing errors: one class per situation, each message naming the cause and the fix.

The CLI prints ``error: <message>`` for any :class:`LoomError` and exits with its
``exit_code``: 1 for bad input (a file, a shape, an architecture, an infeasible request),
2 for a misused command line (:class:`UsageError`). Anything else is a bug in Loom: the CLI
prints a one-line "internal error" and shows the traceback only under ``--debug``.
"""

from __future__ import annotations


class LoomError(Exception):
    """Base class of every error caused by the user's input rather than by Loom."""

    exit_code = 1


class UsageError(LoomError):
    """A command-line option is missing, out of range or contradicts another."""

    exit_code = 2


class OutputError(LoomError):
    """An output path would destroy a user's file, or cannot be written."""


class ArchError(LoomError):
    """A broken or unknown architecture description."""


class FrontendError(LoomError):
    """A Helion kernel uses a construct Loom cannot compile."""


class ShapeError(LoomError):
    """A shape argument is malformed or does not fit the kernel."""


class InfeasibleError(LoomError):
    """No schedule satisfies the constraints (for example, no tile fits in L1)."""


class ScheduleError(LoomError):
    """A schedule file is malformed or inconsistent with its kernel."""


class VerificationError(LoomError):
    """A compiled kernel did not match its reference on the simulator."""

    exit_code = 1


class SimulationError(LoomError):
    """The timing simulator found the program cannot run (e.g. a deadlock)."""

    exit_code = 1


class CudaSubsetError(LoomError):
    """A CUDA source uses a construct outside the affine subset Loom compiles."""


class AnnotationError(LoomError):
    """A CUDA-path annotation is malformed or illegal for its kernel."""


class FormatError(LoomError):
    """A data-format (--dtype) or math-fidelity choice that is unknown or unsupported."""
