"""Loom: a tuning-free compiler of Helion tile kernels for Tenstorrent Wormhole and Blackhole.

    import torch, loom
    from loom.kernels import gemm
    a = torch.randn(256, 512, dtype=torch.bfloat16)
    b = torch.randn(512, 256, dtype=torch.bfloat16)
    ck = loom.compile(gemm, a, b)          # the Helion kernel, bound on example tensors
    print(ck.explain())                    # why this schedule, in sentences
    out = ck(a, b)                         # runs on tt-lang-sim, returns a torch tensor
    print(ck.simulate())                   # cycles, time, TFLOPS, utilization

The API lives in `loom.api` and is loaded on first use: `import loom` imports neither
torch nor Helion, so the `loom` command starts fast. See docs/api.md.
"""

from __future__ import annotations

import importlib

from loom.errors import (
    ArchError,
    FrontendError,
    InfeasibleError,
    LoomError,
    ScheduleError,
    ShapeError,
    SimulationError,
    VerificationError,
)

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs 40 ms here
if TYPE_CHECKING:
    from loom.api import (
        Activity,
        CompiledKernel,
        PipeTime,
        RankedCandidate,
        SimulationReport,
        archs,
        compile,
        load_arch,
    )
    from loom.arch import Arch
    from loom.backends.ttlang import VerifyResult
    from loom.ir.schedule import Schedule

    __version__: str

_LAZY = {
    "Activity": "loom.api",
    "compile": "loom.api",
    "load_arch": "loom.api",
    "archs": "loom.api",
    "CompiledKernel": "loom.api",
    "PipeTime": "loom.api",
    "RankedCandidate": "loom.api",
    "SimulationReport": "loom.api",
    "Arch": "loom.arch",
    "Schedule": "loom.ir.schedule",
    "VerifyResult": "loom.backends.ttlang",
}

__all__ = [
    "Activity",
    "Arch",
    "ArchError",
    "CompiledKernel",
    "FrontendError",
    "InfeasibleError",
    "LoomError",
    "PipeTime",
    "RankedCandidate",
    "Schedule",
    "ScheduleError",
    "ShapeError",
    "SimulationError",
    "SimulationReport",
    "VerificationError",
    "VerifyResult",
    "__version__",
    "archs",
    "compile",
    "load_arch",
]


def _version() -> str:
    """The installed distribution's version: pyproject.toml is the one place it is set."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("loom")
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> object:
    """Load the public API on first use (PEP 562), keeping `import loom` cheap."""
    if name == "__version__":
        value: object = _version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'loom' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
