"""Write a Schedule down from a policy's decisions: the one place baselines make Schedules.

A baseline policy decides a core view (levels per physical dim, innermost first, each
serving a grid axis), block sizes in elements, pipeline knobs and which loads multicast.
Everything else (copy records, waves, candidate label) follows from the TileProgram the
same way it does for Loom's own schedules, so both go through the same lowering.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from loom.ir.buffers import BufferedProgram
from loom.ir.schedule import Copy, Mapping, MeshLevel, Schedule, grid_waves
from loom.ir.tile import Gather, Load, Store, TileProgram, accesses


@dataclass(frozen=True)
class Policy:
    """A baseline's decisions for one kernel on one shape."""

    name: str
    view: tuple[tuple[str, int, str], ...]
    """(dim, size, axis) per level, innermost first within each dim."""
    block_sizes: dict[str, int]
    multicast: tuple[str, ...] = ()
    pipeline: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    accumulate: str = "separate"
    """Where every matmul accumulator lives (a `loom.ir.buffers.PLACEMENTS` entry)."""
    load_engines: dict[str, str] = field(default_factory=dict)
    """The data-movement engine that issues the loads of each named tensor ("reader" on
    NoC0, "writer" on NoC1), where the source fixes it (TTNN's attention reads Q, K and V
    in its one reader kernel); a tensor not named, and every load when none is, keeps the
    buffer plan's engine, chosen as for Loom's own schedules."""
    formats: str = ""
    """The tensor formats the source runs the kernel with, as a ``--dtype`` spec (e.g.
    ``k=bfp8,v=bfp8``: TTNN's models keep the KV cache in bfloat8_b); empty: the
    kernel's own, as Loom compiles it. The evaluation builds the policy's program with
    them."""
    rewrites: tuple[str, ...] = ()
    """The rewrites of the lowered program (names in `loom.baselines.sdpa_program.REWRITES`)
    that make it compute as the source's kernel does where that differs from Loom's kernel
    in time but not in result (TTNN's SDPA: the scale inside exp, the generated causal
    mask); `sdpa_program.source_program` applies them, for every caller that lowers a
    baseline."""
    deal: str = ""
    """How the grid blocks are dealt to the cores (a `loom.ir.schedule.DEALS` key): empty,
    round-robin over the view's levels as Loom deals them; ``zigzag``, TTNN's SDPA deal
    (the view then only names the cores)."""
    kernel: str = ""
    """The kernel module (of `loom.kernels`) the source's program is traced from, where the
    source loops otherwise than the kernel Loom compiles (TTNN's causal SDPA runs one key
    loop to the diagonal, `flash_attention_causal_ttnn`, with a key chunk that may exceed
    its query chunk); empty: the kernel Loom compiles."""
    realization: str = ""
    """Which realization of a row kernel the source's program runs: ``persistent`` (the
    kernel as written, the whole row in L1), ``looped`` (`loom.dataflow.looped_rows`:
    the row streamed in chunks), or empty: the program the caller gives (Loom's pick's)."""


def mapping_of(view: Iterable[tuple[str, int, str]]) -> Mapping:
    levels: list[MeshLevel] = []
    depth = {"x": 0, "y": 0}
    for dim, size, axis in view:
        if size <= 1:
            continue
        levels.append(MeshLevel(dim, depth[dim], size, axis))
        depth[dim] += 1
    return Mapping(tuple(sorted(levels, key=lambda lv: (lv.level, lv.dim))))


def _depends(program: TileProgram, op: Load) -> set[str]:
    names: set[str] = set().union(*(w.offset.free_names() for w in op.window))
    return {a.tile.name for a in program.grid if a.index.name in names}


def _multicast_area(program: TileProgram, mapping: Mapping, op: Load) -> tuple[int, int]:
    """Along each dim, the innermost levels whose axis the load does not depend on."""
    dep = _depends(program, op)
    area = {}
    for dim in ("y", "x"):
        n = 1
        for lv in mapping.levels_of(dim):
            if lv.axis in dep:
                break
            n *= lv.size
        area[dim] = n
    return (area["y"], area["x"])


def _split_area(mapping: Mapping, axis: str) -> tuple[int, int]:
    sizes = {"y": 1, "x": 1}
    for lv in mapping.axis_levels(axis):
        sizes[lv.dim] *= lv.size
    return (sizes["y"], sizes["x"])


def copies_of(
    program: TileProgram,
    mapping: Mapping,
    multicast: Iterable[str],
    engines: dict[str, str] | None = None,
) -> tuple[Copy, ...]:
    """The copy of every access; a load of a tensor `engines` names is issued by that
    engine (the others keep the plan's)."""
    mcast = set(multicast)
    engines = engines or {}
    copies: list[Copy] = []
    for i, op in enumerate(accesses(program.body)):
        if isinstance(op, Load):
            area = _multicast_area(program, mapping, op) if op.tensor in mcast else (1, 1)
            mode = "multicast" if area != (1, 1) else "unicast"
            engine = engines.get(op.tensor, "")
            copies.append(Copy(i, op.tensor, "load", mode, area, engine=engine))
        elif isinstance(op, Store):
            copies.append(Copy(i, op.tensor, "store", "unicast"))
        elif isinstance(op, Gather):
            area = _split_area(mapping, op.across)
            copies.append(Copy(i, op.operand.name, "gather", "gather", area))
    return tuple(copies)


def build_schedule(
    buffered: BufferedProgram,
    arch: str,
    shape: dict[str, int],
    fidelity: str,
    policy: Policy,
) -> Schedule:
    """The Schedule of `policy` for `buffered`'s program (one kernel on one shape) on
    `arch`; ValueError when an accumulator cannot take the policy's placement (`buffered`
    was built under an accumulation policy that does not offer it)."""
    program = buffered.program
    placed = {}
    for acc in buffered.accumulators if policy.accumulate != "separate" else ():
        if policy.accumulate not in acc.placements:
            raise ValueError(
                f"{policy.name} keeps accumulator {acc.state} '{policy.accumulate}', which "
                f"this buffered program offers not (it offers {', '.join(acc.placements)})"
            )
        placed[acc.state] = policy.accumulate
    mapping = mapping_of(policy.view)
    extents = {axis.tile.name: axis.extent for axis in program.grid}
    waves = grid_waves(extents, mapping, policy.block_sizes, policy.deal)
    return Schedule(
        kernel=program.name,
        arch=arch,
        shape=dict(shape),
        dtype=program.args[0].dtype,
        math_fidelity=fidelity,
        candidate=f"{policy.name}__{mapping.label()}",
        mapping=mapping,
        copies=copies_of(program, mapping, policy.multicast, policy.load_engines),
        block_sizes=dict(policy.block_sizes),
        pipeline={k: dict(v) for k, v in policy.pipeline.items()},
        l1_capacity_bytes=0,
        waves=waves,
        notes=policy.notes,
        accumulators=placed,
        deal=policy.deal,
        realization="looped" if policy.realization == "looped" else "",
    )


def spread(cores: int, grid_x: int, axis: str) -> tuple[tuple[str, int, str], ...]:
    """`cores` blocks of one axis laid out row-major over a grid `grid_x` wide (TTNN's
    1-D core order): x first, then as many rows as needed (the last may be partial)."""
    cols = min(cores, grid_x)
    rows = -(-cores // grid_x)
    return (("x", cols, axis), ("y", rows, axis))
