"""Does a schedule fit its tile program? The checks that need the kernel, run before lowering.

A schedule file may come from anywhere (an older compile, a hand edit), so lowering first
checks that its block sizes name exactly the program's tile symbols, that each is a
legal size of its symbol (a multiple of the alignment within the symbol's bounds, and a
divisor of a loop's extent), that its waves are the ones its mapping gives those block
sizes, and, once the buffers are sized, that they fit L1. The
compiler's own schedules pass by construction; a violation names the field and the fix.
"""

from __future__ import annotations

from loom.arch import Arch
from loom.errors import ScheduleError
from loom.ir.schedule import Schedule, grid_waves
from loom.ir.tile import ForLoop, TileProgram, walk
from loom.symbolic import Const

_FIX = "compile the kernel again (`loom compile ... --json`) or correct the field"


def _loop_extents(program: TileProgram) -> dict[str, int]:
    """Tile symbol -> constant extent of each loop whose bounds are numbers."""
    extents: dict[str, int] = {}
    for op in walk(program.body):
        if isinstance(op, ForLoop) and isinstance(op.begin, Const) and isinstance(op.end, Const):
            extents[op.tile.name] = int(op.end.value) - int(op.begin.value)
    return extents


def check_block_sizes(program: TileProgram, schedule: Schedule) -> None:
    """Raise ScheduleError unless every block size is a legal size of its tile symbol."""
    syms = {s.name: s for s in program.tile_syms}
    given = schedule.block_sizes
    unknown = sorted(set(given) - set(syms))
    missing = sorted(set(syms) - set(given))
    if unknown or missing:
        raise ScheduleError(
            f"the schedule's block_sizes do not match kernel {program.name!r}, whose tile "
            f"symbols are {', '.join(syms)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + f"; {_FIX}."
        )
    extents = _loop_extents(program)
    for name, size in sorted(given.items()):
        sym = syms[name]
        lo, hi = sym.bounds
        if size % sym.align or not lo <= size <= hi:
            raise ScheduleError(
                f"block_sizes.{name} = {size} is not a legal size of {name}: it must be a "
                f"multiple of {sym.align} between {lo} and {hi}; {_FIX}."
            )
        extent = extents.get(name)
        if extent is not None and extent % size:
            raise ScheduleError(
                f"block_sizes.{name} = {size} does not divide the loop's extent {extent}; "
                f"choose a divisor of {extent} that is a multiple of {sym.align}."
            )


def check_waves(program: TileProgram, schedule: Schedule) -> None:
    """Raise ScheduleError unless the schedule carries the waves its mapping derived for
    its block sizes (lowering reads them; a hand edit of a block size must update them)."""
    extents = {axis.tile.name: axis.extent for axis in program.grid}
    want = grid_waves(extents, schedule.mapping, schedule.block_sizes, schedule.deal)
    if schedule.waves != want:
        raise ScheduleError(
            f"the schedule's waves {_pairs(schedule.waves) or '(none)'} do not match its "
            f"block sizes and mapping, which give {_pairs(want)}; {_FIX}."
        )


def _pairs(values: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items()))


def check_buffers(buffers: int, schedule: Schedule, arch: Arch) -> None:
    """Raise ScheduleError when the lowered program needs more dataflow buffers than a
    core holds (the model's `dataflow_buffers` constraint promised it would not)."""
    if buffers > arch.dataflow_buffers:
        raise ScheduleError(
            f"the schedule needs {buffers} dataflow buffers per core, more than the "
            f"{arch.dataflow_buffers} a core of {arch.name} holds; {_FIX}."
        )


def check_l1(l1_bytes: int, schedule: Schedule, arch: Arch) -> None:
    """Raise ScheduleError when the lowered buffers exceed the usable L1 of a core."""
    if l1_bytes > arch.l1_usable_bytes:
        raise ScheduleError(
            f"the schedule's buffers need {l1_bytes:,} bytes of L1 per core, more than the "
            f"{arch.l1_usable_bytes:,} usable on {arch.name}; block sizes "
            f"{', '.join(f'{k}={v}' for k, v in sorted(schedule.block_sizes.items()))} are "
            f"too large. Use smaller block sizes or {_FIX}."
        )
