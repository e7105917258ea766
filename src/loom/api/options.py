"""The compile options, checked one way for `loom.compile` and for the CLI, so both hand
the stages the same `CompileOptions` for the same choices."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from loom.errors import LoomError

if TYPE_CHECKING:
    from loom.arch import Arch
    from loom.flows.helion import CompileOptions

FIDELITIES = ("", "LoFi", "HiFi2", "HiFi3", "HiFi4")
SOLVERS = ("cpsat", "enumerate")


def compile_options(
    arch: str | Path | Arch,
    *,
    math_fidelity: str = "",
    dtype: str = "",
    top_k: int = 5,
    jobs: int = 0,
    solver: str = "cpsat",
    time_limit_s: float = 10.0,
    accumulate: str = "strict",
    refine: int = 0,
    realization: str = "auto",
) -> Callable[[dict[str, int]], CompileOptions]:
    """The options of a compile, as a function of the kernel's named shape (known only
    once it is traced); `arch` is a built-in name, a YAML file or an `Arch`. Bad values
    raise one LoomError that lists them all (the options are checked before the
    architecture is loaded)."""
    from loom.flows.helion import CompileOptions

    _check_options(math_fidelity, top_k, jobs, solver, time_limit_s)
    if isinstance(arch, str | Path):
        from loom.arch import load_arch

        arch = load_arch(str(arch))
    target = arch

    def options(shape: dict[str, int]) -> CompileOptions:
        return CompileOptions(
            arch=target,
            shape=shape,
            math_fidelity=math_fidelity,
            formats=dtype,
            jobs=jobs,
            top_k=top_k,
            solver=solver,
            time_limit_s=time_limit_s,
            refine=refine,
            accumulate=accumulate,
            realization=realization,
        )

    return options


def _check_options(fidelity: str, top_k: int, jobs: int, solver: str, limit: float) -> None:
    problems = []
    if fidelity not in FIDELITIES:
        problems.append(f"math_fidelity={fidelity!r} is not one of {', '.join(FIDELITIES[1:])}")
    if top_k < 1:
        problems.append(f"top_k={top_k} must be >= 1")
    if jobs < 0:
        problems.append(f"jobs={jobs} must be >= 0 (0 = all cores)")
    if solver not in SOLVERS:
        problems.append(f"solver={solver!r} is not one of {', '.join(SOLVERS)}")
    if not limit > 0:
        problems.append(f"time_limit_s={limit} must be a positive number of seconds")
    if problems:
        raise LoomError("loom.compile: " + "; ".join(problems) + ". Fix the option.")
