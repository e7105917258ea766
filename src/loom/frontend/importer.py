"""Entry point of the frontend: bind a Helion kernel on concrete inputs and import it."""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from dataclasses import replace
from pathlib import Path

import helion
import helion.language as hl
from helion._compiler.device_ir import RootGraphInfo

from loom.errors import FrontendError, ShapeError
from loom.frontend.core import def_line
from loom.frontend.helion_import import HelionImporter
from loom.frontend.hoist import hoist_matmul_scales
from loom.frontend.licm import hoist_invariants
from loom.frontend.scope import GridBarrierNeeded
from loom.frontend.vectors import lift_1d_tensors
from loom.ir.geometry import TILE
from loom.ir.tile import TileProgram


def _display_path(path: str) -> str:
    """A path that does not depend on where this checkout lives (artifacts are compared)."""
    file = Path(path).resolve()
    package_root = Path(__file__).resolve().parents[2]  # .../src
    for base in (package_root, Path.cwd().resolve()):
        if file.is_relative_to(base):
            return file.relative_to(base).as_posix()
    return file.name


def import_kernel(kernel: helion.Kernel, args: tuple[object, ...]) -> TileProgram:
    """Bind `kernel` to `args` (CPU tensors of the real shapes, and the scalar arguments,
    which Loom compiles as constants) and build its TileProgram."""
    fn = kernel.fn
    params = list(inspect.signature(fn).parameters)
    scalars = {
        p: float(a)
        for p, a in zip(params, args, strict=False)
        if isinstance(a, int | float) and not isinstance(a, bool)
    }
    name = fn.__name__
    source_file = _display_path(inspect.getsourcefile(fn) or "<unknown>")
    _refuse_random(kernel, source_file)
    try:
        bound = _with_static_shapes(kernel).bind(args)
    except helion.exc.Base as err:
        text = str(err).strip()
        first_line = (text.splitlines()[0] if text else type(err).__name__).rstrip(".")
        raise FrontendError(
            f"{source_file}:{def_line(fn)}: Helion rejected kernel {name!r}: {first_line}. "
            "Fix the kernel so that Helion can bind it on these input shapes."
        ) from None
    with bound.env, bound.host_function:
        try:
            program = HelionImporter(bound, name, source_file, scalars).run()
            return hoist_matmul_scales(hoist_invariants(lift_1d_tensors(program)))
        except GridBarrierNeeded:
            pass
        # A phase reads tiles other blocks wrote (or overwrites tiles they read, or runs
        # on another grid): one launch per phase, a grid-wide barrier between consecutive
        # launches (every block of one, all waves, finishes its DRAM traffic before any
        # block of the next starts).
        phases = sum(isinstance(g, RootGraphInfo) for g in bound.host_function.device_ir.graphs)
        launches = [
            HelionImporter(bound, _launch_name(name, k), source_file, scalars, phase=k).run()
            for k in range(phases)
        ]
    chained: TileProgram | None = None
    for launch in reversed(launches):
        chained = replace(
            hoist_matmul_scales(hoist_invariants(lift_1d_tensors(launch))), after=chained
        )
    assert chained is not None
    return chained


def _with_static_shapes(kernel: helion.Kernel) -> helion.Kernel:
    """Loom compiles one program per argument shape, so every extent the arguments fix
    binds as a number, as `@helion.kernel(static_shapes=True)` binds it (a kernel written
    with `static_shapes=False` leaves `x.numel()` symbolic for Helion's launch)."""
    if kernel.settings.static_shapes:
        return kernel
    settings = copy.copy(kernel.settings)
    settings.static_shapes = True
    return helion.Kernel(kernel.fn, configs=kernel.configs, settings=settings)


_RANDOM = ("rand", "rand4x", "randint")
"""Helion's seeded generators (`hl.rand(shape, seed=...)`): Philox-4x32 counters."""


def _refuse_random(kernel: helion.Kernel, source_file: str) -> None:
    """Helion's random numbers are Philox-4x32 rounds (32x32 -> 64-bit products and xors
    of unsigned 32-bit words); Tenstorrent tiles have no 64-bit or unsigned 32-bit
    integer arithmetic and the SFPU's generator is another one, so no device result
    could match Helion's bit for bit: refused by name, before Helion traces it."""
    fn = kernel.fn
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return
    for node in ast.walk(ast.parse(textwrap.dedent("".join(lines)))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _RANDOM
            and isinstance(node.func.value, ast.Name)
            and fn.__globals__.get(node.func.value.id) is hl
        ):
            call = f"{node.func.value.id}.{node.func.attr}"
            raise FrontendError(
                f"{source_file}:{first + node.lineno - 1}: Loom cannot compile `{call}` in "
                f"kernel {fn.__name__!r}; Helion's random numbers are Philox-4x32 rounds on "
                "unsigned 32-bit words (64-bit products, xors), which Tenstorrent tiles "
                "cannot compute bit for bit (no 64-bit or unsigned integer tiles), so the "
                "result could never match Helion's. Draw the random tensor on the host "
                "(torch.rand) and pass it to the kernel as an input."
            )


def _launch_name(name: str, phase: int) -> str:
    """The first launch keeps the kernel's name (schedules are filed under it)."""
    return name if phase == 0 else f"{name}_launch{phase + 1}"


def kernel_location(kernel: helion.Kernel) -> str:
    """The kernel's `def` as file:line (the file as artifacts name it)."""
    fn = kernel.fn
    return f"{_display_path(inspect.getsourcefile(fn) or '<unknown>')}:{def_line(fn)}"


def check_alignment(program: TileProgram, shape: dict[str, int], where: str = "") -> None:
    """Loom computes on whole 32x32 tiles: tiled extents and matrix dims must fit them.
    `where` (the kernel's file:line) leads the error."""
    if program.after is not None:
        check_alignment(program.after, shape, where)
    problems: list[str] = []

    def key_of(extent: int) -> str:
        keys = [k for k, v in shape.items() if v == extent]
        return f" ({'/'.join(keys)}={extent})" if keys else ""

    for axis in program.grid:
        if axis.tile.align > 1 and axis.extent % axis.tile.align:
            problems.append(
                f"the extent {axis.extent}{key_of(axis.extent)} tiled by {axis.tile.name}"
            )
    for arg in program.args:
        for dim in arg.shape[-2:]:
            if dim > TILE and dim % TILE:
                problems.append(f"dimension {dim}{key_of(dim)} of tensor {arg.name}")
    if problems:
        raise ShapeError(
            f"{where + ': ' if where else ''}kernel {program.name}: "
            f"{'; '.join(sorted(set(problems)))} is not a multiple of "
            f"the {TILE}x{TILE} tile. Loom computes on whole tiles; choose shapes whose matrix "
            f"dimensions are multiples of {TILE} (or smaller than one tile)."
        )
