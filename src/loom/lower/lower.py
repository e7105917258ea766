"""Schedule -> Program: the per-core reader / compute / writer streams of one schedule.

Stages inside: fix the numbers (`build_context`: block sizes, logical tile indices of
the cores, one circular buffer per L1 allocation), then build the three streams from
the tile program's op tree (loads; compute with its buffer scopes; stores and split
reductions), wrap them in the temporal waves, collect the pipe nets, and check the
result's structural invariants.
"""

from __future__ import annotations

from loom.arch import Arch
from loom.errors import ScheduleError
from loom.ir.buffers import BufferedProgram
from loom.ir.program import Program
from loom.ir.schedule import Schedule
from loom.ir.tile import TileProgram
from loom.lower.accumulate import place_accumulators
from loom.lower.check import check_program
from loom.lower.compute import ComputeBuilder
from loom.lower.context import LowerContext, build_context
from loom.lower.fit import check_block_sizes, check_buffers, check_l1, check_waves
from loom.lower.loops import with_waves, with_waves_stores_late
from loom.lower.merge import Merge
from loom.lower.movement import Movement


def _check_inputs(
    tile: TileProgram, buffers: BufferedProgram, schedule: Schedule, arch: Arch
) -> None:
    if buffers.program.name != tile.name or schedule.kernel != tile.name:
        raise ScheduleError(
            f"the schedule is for kernel {schedule.kernel!r} and the buffer plan for "
            f"{buffers.program.name!r}, but the tile program is {tile.name!r}."
        )
    if schedule.arch != arch.name:
        raise ScheduleError(f"the schedule targets {schedule.arch!r}, not {arch.name!r}.")
    m = schedule.mapping
    if m.cores_x > arch.grid_x or m.cores_y > arch.grid_y:
        raise ScheduleError(
            f"the mapping uses {m.cores_y}x{m.cores_x} cores (rows x columns), more than "
            f"the {arch.grid_y}x{arch.grid_x} grid of {arch.name}."
        )
    check_block_sizes(tile, schedule)
    check_waves(tile, schedule)


def _l1_bytes(ctx: LowerContext, arch: Arch) -> int:
    return sum(b.footprint_tiles() * arch.tile.bytes(b.dtype) for b in ctx.cbs.values())


def _notes(ctx: LowerContext, arch: Arch) -> tuple[str, ...]:
    l1 = _l1_bytes(ctx, arch)
    waves = ", ".join(f"{a.tile}={a.waves}" for a in ctx.axes)
    return (
        f"schedule {ctx.schedule.candidate or ctx.schedule.mapping.label()}",
        f"view {ctx.schedule.mapping.label()}; waves {waves}",
        f"block sizes {', '.join(f'{k}={v}' for k, v in sorted(ctx.schedule.block_sizes.items()))}",
        f"L1 buffers {l1} bytes of {arch.l1_usable_bytes}",
    )


def lower(tile: TileProgram, buffers: BufferedProgram, schedule: Schedule, arch: Arch) -> Program:
    """Lower `tile` under `schedule` to the per-core Program (raises ScheduleError)."""
    _check_inputs(tile, buffers, schedule, arch)
    ctx = build_context(buffers, schedule, arch)
    check_l1(_l1_bytes(ctx, arch), schedule, arch)
    check_buffers(len(ctx.cbs), schedule, arch)
    movement = Movement(ctx)
    compute = ComputeBuilder(ctx)
    merge = Merge(ctx, compute, movement)
    compute.merge = merge.compute_steps
    reader = movement.reader(tile.body, dict(ctx.env))
    compute_stream = place_accumulators(
        compute.stream(),
        {
            acc.state: (schedule.accumulators.get(acc.state, "separate"), acc.store)
            for acc in buffers.accumulators
        },
    )
    writer = movement.writer(tile.body, dict(ctx.env), merge.writer_stmts)
    program = Program(
        kernel=tile.name,
        arch=arch.name,
        grid=(schedule.mapping.cores_y, schedule.mapping.cores_x),
        tensors=ctx.tensors,
        buffers=tuple(ctx.cbs.values()),
        nets=tuple(movement.nets),
        reader=with_waves(ctx, reader),
        compute=with_waves(ctx, compute_stream),
        writer=with_waves_stores_late(ctx, writer),
        math_fidelity=schedule.math_fidelity,
        notes=_notes(ctx, arch),
    )
    check_program(program)
    return program
