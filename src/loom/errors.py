"""User-facing errors: one class per situation, each message naming the cause and the fix.

The CLI prints ``error: <message>`` and exits non-zero for any :class:`LoomError`; anything
else is a bug in Loom and keeps its traceback.
"""

from __future__ import annotations


class LoomError(Exception):
    """Base class of every error caused by the user's input rather than by Loom."""

    exit_code = 2


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
