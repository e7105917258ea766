"""Entry point of the frontend: bind a Helion kernel on concrete inputs and import it."""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path

import helion
from helion._compiler.device_ir import RootGraphInfo

from loom.errors import FrontendError, ShapeError
from loom.frontend.helion_import import HelionImporter
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
    try:
        bound = kernel.bind(args)
    except helion.exc.Base as err:
        text = str(err).strip()
        first_line = (text.splitlines()[0] if text else type(err).__name__).rstrip(".")
        raise FrontendError(
            f"Helion rejected kernel {name!r} ({source_file}): {first_line}. Fix the kernel "
            "so that Helion can bind it on these input shapes."
        ) from None
    with bound.env, bound.host_function:
        try:
            return lift_1d_tensors(HelionImporter(bound, name, source_file, scalars).run())
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
        chained = replace(lift_1d_tensors(launch), after=chained)
    assert chained is not None
    return chained


def _launch_name(name: str, phase: int) -> str:
    """The first launch keeps the kernel's name (schedules are filed under it)."""
    return name if phase == 0 else f"{name}_launch{phase + 1}"


def check_alignment(program: TileProgram, shape: dict[str, int]) -> None:
    """Loom computes on whole 32x32 tiles: tiled extents and matrix dims must fit them."""
    if program.after is not None:
        check_alignment(program.after, shape)
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
            f"kernel {program.name}: {'; '.join(sorted(set(problems)))} is not a multiple of "
            f"the {TILE}x{TILE} tile. Loom computes on whole tiles; choose shapes whose matrix "
            f"dimensions are multiples of {TILE} (or smaller than one tile)."
        )
