"""What every part of the lowering needs to know about one (program, buffers, schedule).

`LowerContext` fixes the numbers: block sizes, the logical tile index of every grid axis
as an expression of the core coordinates and wave counters, one circular buffer per L1
allocation (depth from the pipeline knobs, exactly as the latency model charges it),
and which buffer holds each value for its producer and for its consumer.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.errors import ScheduleError
from loom.ir.buffers import (
    Allocation,
    BufferedProgram,
    TileLayout,
    VirtualBuffer,
    state_depth,
)
from loom.ir.deal import dealt_indices, logical_index, triangular_indices
from loom.ir.program import Buffer, DramTensor
from loom.ir.schedule import Copy, Schedule
from loom.ir.tile import ExpandDims, Op, TileProgram, accesses, read_values, walk
from loom.lower.dram import dram_tensor, padded_shapes
from loom.lower.engines import assign_load_engines
from loom.lower.mesh import spatial_index
from loom.symbolic import Const, Expr, Sym


@dataclass(frozen=True)
class AxisPlan:
    """One grid axis: its block size, tile count, spatial factor and waves."""

    tile: str
    index: str
    block: int
    tiles: int
    factor: int
    waves: int
    wave_var: Sym | None
    logical: Expr
    """Logical tile index: spatial index + wave * factor, back and forth over the waves on
    an axis with triangular work (`loom.ir.deal`), or as `Schedule.deal` deals."""
    reach: int
    """Blocks the index may reach, padding included (DRAM tensors are padded to them)."""


@dataclass(frozen=True)
class LowerContext:
    program: TileProgram
    buffered: BufferedProgram
    schedule: Schedule
    axes: tuple[AxisPlan, ...]
    env: dict[str, Expr]
    """Tile symbols -> block sizes, grid index symbols -> logical tile expressions."""
    cbs: dict[str, Buffer]
    """Allocation name -> circular buffer."""
    copies: dict[int, Copy]
    """id(access op) -> its Copy."""
    alias: dict[str, str]
    """A view (`x[..., None]`) -> the value it shows."""
    defs: dict[str, Op]
    used: frozenset[str]
    """Values (roots) read by some op."""
    tensors: tuple[DramTensor, ...] = ()
    """DRAM tensors, grid axes padded to whole waves."""

    def tensor(self, name: str) -> DramTensor:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def root(self, name: str) -> str:
        while name in self.alias:
            name = self.alias[name]
        return name

    def tiles(self, layout: TileLayout) -> tuple[int, int]:
        """(rows, cols) in tiles of a block of `layout` under the solved block sizes."""
        rows, cols = layout.tile_rows.subs(self.env), layout.tile_cols.subs(self.env)
        if not (isinstance(rows, Const) and isinstance(cols, Const)):
            raise ScheduleError(f"block of layout {layout} is not fixed by the block sizes")
        return rows.value, cols.value

    def value_tiles(self, name: str) -> tuple[int, int]:
        return self.tiles(self.buffered.layouts[name])

    def is_vector(self, name: str) -> bool:
        return self.buffered.layouts[name].vector

    def _vb(self, name: str, pred: str) -> VirtualBuffer | None:
        root = self.root(name)
        for vb in self.buffered.buffers:
            if root not in vb.values and name not in vb.values:
                continue
            if (pred == "consume" and vb.consumer == "compute") or (
                pred == "produce" and vb.producer == "compute" and vb.role != "gather_out"
            ):
                return vb
        return None

    def cb_of_vb(self, vb: VirtualBuffer) -> str:
        return self.buffered.allocation_of(vb.name).name

    def read_cb(self, name: str) -> str | None:
        """Buffer the compute engine reads `name` from, if it has one."""
        vb = self._vb(name, "consume")
        return self.cb_of_vb(vb) if vb else None

    def write_cb(self, name: str) -> str | None:
        """Buffer the compute engine writes `name` into, if it has one."""
        vb = self._vb(name, "produce")
        return self.cb_of_vb(vb) if vb else None

    def role_cb(self, value: str, role: str) -> str:
        for vb in self.buffered.buffers:
            if vb.role == role and value in vb.values:
                return self.cb_of_vb(vb)
        raise ScheduleError(f"value {value!r} has no {role} buffer in the buffer plan")

    def copy_of(self, op: Op) -> Copy:
        return self.copies[id(op)]

    def axis(self, tile: str) -> AxisPlan:
        for a in self.axes:
            if a.tile == tile:
                return a
        raise KeyError(tile)


def _axis_plans(program: TileProgram, schedule: Schedule) -> tuple[AxisPlan, ...]:
    blocks = {}
    for axis in program.grid:
        name = axis.tile.name
        blocks[name] = -(-axis.extent // schedule.block_sizes[name])  # may cover padding
    waves = schedule.waves  # derived by the mapping, checked by fit.check_waves
    wave_vars = {
        name: Sym(f"{name}_wave", 0, waves[name] - 1, 1, "index")
        for name in blocks
        if waves[name] > 1
    }
    dealt: dict[str, Expr] = {}
    reach = {name: waves[name] * schedule.mapping.spatial_factor(name) for name in blocks}
    if schedule.deal:
        inner = program.grid[-1].tile.name
        dealt = dealt_indices(
            schedule.mapping, tuple(blocks.items()), wave_vars.get(inner, Const(0))
        )
        flat = waves[inner] * schedule.mapping.num_cores  # every core's whole run
        reach = dict(blocks)
        reach[program.grid[0].tile.name] = -(-flat // _inner(blocks))
    plans = []
    balanced = triangular_indices(program)
    for axis in program.grid:
        name = axis.tile.name
        factor = schedule.mapping.spatial_factor(name)
        var = wave_vars.get(name)
        logical = dealt[name] if name in dealt else spatial_index(schedule.mapping, name)
        if var is not None and not schedule.deal:
            logical = logical_index(logical, var, factor, axis.index.name in balanced)
        plans.append(
            AxisPlan(
                name, axis.index.name, schedule.block_sizes[name], blocks[name], factor,
                waves[name], var, logical, reach[name],
            )
        )  # fmt: skip
    return tuple(plans)


def _inner(blocks: dict[str, int]) -> int:
    """Blocks of every grid axis but the outermost (one outermost index's worth of runs)."""
    n = 1
    for count in list(blocks.values())[1:]:
        n *= count
    return n


def _depth(alloc: Allocation, schedule: Schedule, buffered: BufferedProgram) -> int:
    knobs = schedule.pipeline.get(alloc.scope.key, {})
    extra = (alloc.role == "load" and knobs.get("b_load", 0)) or (
        alloc.role == "store" and knobs.get("b_store", 0)
    )
    acc = buffered.accumulator(alloc.name)
    if acc is not None:
        placement = schedule.accumulators.get(alloc.name, "separate")
        if placement not in acc.placements:
            raise ScheduleError(
                f"the schedule places accumulator {alloc.name!r} {placement!r}, but it may "
                f"take only {', '.join(acc.placements)} here; 'output' (accumulating in "
                "the output's format) needs the output accumulation policy (--accumulate "
                "output) and a result that is only stored."
            )
        return state_depth(placement)
    return alloc.base_depth + (1 if extra else 0)


def _check_schedule(program: TileProgram, schedule: Schedule) -> None:
    missing = [s.name for s in program.tile_syms if s.name not in schedule.block_sizes]
    if missing:
        raise ScheduleError(f"the schedule gives no block size for {', '.join(missing)}.")
    ops = accesses(program.body)
    if sorted(c.op for c in schedule.copies) != list(range(len(ops))):
        raise ScheduleError(
            f"the schedule has copies for accesses {sorted(c.op for c in schedule.copies)}, "
            f"but kernel {program.name!r} has {len(ops)} loads/stores/gathers."
        )
    kinds = {c.op: c.kind for c in schedule.copies}
    for i, op in enumerate(ops):
        want = type(op).__name__.lower()
        if kinds[i] != want:
            raise ScheduleError(
                f"copy {i} of the schedule is a {kinds[i]}, but access {i} is a {want}."
            )
    unknown = {lv.axis for lv in schedule.mapping.levels} - {a.tile.name for a in program.grid}
    if unknown:
        raise ScheduleError(f"the mapping places unknown axes {sorted(unknown)} on the mesh.")


def _value_maps(program: TileProgram) -> tuple[dict[str, str], dict[str, Op], frozenset[str]]:
    alias: dict[str, str] = {}
    defs: dict[str, Op] = {}
    for op in walk(program.body):
        for r in op.results():
            defs[r.name] = op
        if isinstance(op, ExpandDims):
            alias[op.result.name] = op.operand.name
    return alias, defs, read_values(program.body)


def build_context(buffered: BufferedProgram, schedule: Schedule, arch: Arch) -> LowerContext:
    program = buffered.program
    _check_schedule(program, schedule)
    buffered = assign_load_engines(buffered, schedule, arch)
    axes = _axis_plans(program, schedule)
    env: dict[str, Expr] = {n: Const(v) for n, v in schedule.block_sizes.items()}
    env.update({a.index: a.logical for a in axes})
    by_index = {c.op: c for c in schedule.copies}
    copies = {id(op): by_index[i] for i, op in enumerate(accesses(program.body))}
    alias, defs, used = _value_maps(program)
    maxima = dict(schedule.block_sizes) | {a.index: a.reach - 1 for a in axes}
    shapes = padded_shapes(program, maxima)
    tensors = tuple(dram_tensor(arg, shapes[arg.name]) for arg in program.args)
    ctx = LowerContext(
        program, buffered, schedule, axes, env, {}, copies, alias, defs, used, tensors
    )
    for alloc in buffered.allocations:
        rows, cols = ctx.tiles(alloc.layout)
        depth = _depth(alloc, schedule, buffered)
        if depth == 0:
            continue  # an accumulator kept in its output's block
        ctx.cbs[alloc.name] = Buffer(
            alloc.name,
            rows,
            cols,
            alloc.dtype,
            depth,
            "gather" if alloc.role.startswith("gather") else alloc.role,
        )
    return ctx
