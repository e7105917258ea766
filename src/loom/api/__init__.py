"""The public Python API: `loom.compile(kernel, *example_args)` and friends.

Everything a user needs is re-exported by the `loom` package itself (lazily, so that
`import loom` stays cheap); this package is the one layer above the reports and the
pipeline that scripts, notebooks and benchmarks use instead of the stage internals.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.api.compiled import CompiledKernel
from loom.api.options import compile_options
from loom.api.results import Activity, PipeTime, RankedCandidate, SimulationReport

if TYPE_CHECKING:
    from loom.arch import Arch


def compile(  # the name users expect, as in torch.compile
    kernel: object,
    *example_args: Any,
    arch: str | Path | Arch = "wormhole_n150",
    shape: Mapping[str, int] | None = None,
    math_fidelity: str = "",
    dtype: str = "",
    top_k: int = 5,
    jobs: int = 0,
    solver: str = "cpsat",
    time_limit_s: float = 10.0,
    accumulate: str = "strict",
    realization: str = "auto",
) -> CompiledKernel:
    """Compile a Helion kernel for a Tenstorrent architecture; no tuning runs.

    `kernel` is a `@helion.kernel` function, a kernel module such as
    `loom.kernels.gemm`, a shipped kernel's name (`"gemm"`) or a kernel file's path.
    `example_args` fix shapes and dtypes as Helion's own binding does (values unused);
    a name or module may take `shape={"M": ..., ...}` instead. `arch` is a built-in name
    (`loom.archs()`), a YAML file or an `Arch`. The options are those of `loom compile`:
    `math_fidelity` (default: the architecture's), `dtype` (data formats as `--dtype`
    takes them, e.g. `"bfp8"` or `"bf16,b=bfp4,acc=fp32"`), `top_k` ranked schedules kept, `jobs`
    parallel solves (0 = all cores), `solver` (`cpsat` or the exhaustive `enumerate`),
    `time_limit_s` per CP-SAT problem in deterministic seconds, `accumulate` the
    accumulation policy (`"strict"`, or `"output"`: a matmul accumulator may live in the
    output's block in the output's format, a precision relaxation), `realization` how a
    full-extent dim a reduction runs over (`x[tile_m, :]`) is realized (`"auto"`: whole
    or in chunks, whichever the model finds faster; `"persistent"`; `"looped"`).

    Scalar arguments are bound as the CLI binds them (one left out takes its default)
    and compiled as constants: calling the result with another scalar value compiles
    the kernel again for it, once.

    Raises a `LoomError` subclass (the CLI's one-paragraph errors) on bad input."""
    from loom.api.binding import bind_kernel
    from loom.api.compiled import Variants
    from loom.flows.cached import LazyKernel, compile_cached

    make_options = compile_options(
        arch,
        math_fidelity=math_fidelity,
        dtype=dtype,
        top_k=top_k,
        jobs=jobs,
        solver=solver,
        time_limit_s=time_limit_s,
        accumulate=accumulate,
        realization=realization,
    )

    def compiled(args: tuple[Any, ...]) -> CompiledKernel:
        bound = bind_kernel(kernel, args, shape)
        if isinstance(kernel, str):  # a name or a file, read as the CLI reads it
            lazy = LazyKernel.of_file(kernel, spec=bound.spec)
        else:
            lazy = LazyKernel.of_spec(bound.spec)
        result = compile_cached(lazy, bound.shape, make_options, None, None, dtype)
        return CompiledKernel(bound, result, lazy, variants)

    variants = Variants(compiled)
    return compiled(example_args)


def load_arch(name_or_path: str | Path) -> Arch:
    """A built-in architecture by name (see `archs()`) or a YAML description, validated."""
    from loom.arch import load_arch as load

    return load(str(name_or_path))


def archs() -> tuple[str, ...]:
    """Names of the built-in architecture descriptions."""
    from loom.arch import list_archs

    return tuple(list_archs())


__all__ = [
    "Activity",
    "CompiledKernel",
    "PipeTime",
    "RankedCandidate",
    "SimulationReport",
    "archs",
    "compile",
    "compile_options",
    "load_arch",
]
