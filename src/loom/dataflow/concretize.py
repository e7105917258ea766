"""Bind virtual buffers to physical L1 allocations (paper §2.4, Fig. 5b).

Buffers whose lifetimes do not overlap may share storage when they are interchangeable
for the hardware: the same block layout and dtype, the same producer and consumer
engines (a circular buffer has one of each) and the same role and pipe node (so the
pipeline knobs double them together). Sharing is a greedy first-fit colouring of the
interference graph of each such bucket, visiting buffers in order of birth.

Loads of different tensors never share. Two loads of one pipe node stream in every
iteration of its loop (flash attention's K and V blocks); one circular buffer has one
producer, so a shared one would put both on one data-movement engine and one NoC, and
an operand that waits behind the other is the bottleneck of a link-bound kernel. Each
load keeps its own allocation, so `spread_loads` can give the two to different engines;
the price, a second load block in L1 (doubled with `b_load`), is charged by the model's
L1 constraint, which reads these allocations, so the solver sizes the blocks for it.
Loads of one tensor in sequential loops share (a looped row's two passes, causal
attention's two key loops); the plan that loads apart (`build_buffers(apart=True)`)
splits off a later loop's that stores beside a shared allocation on the writer
(`unshare_stored_loads`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from loom.ir.buffers import (
    Allocation,
    VirtualBuffer,
    allocation_loops,
    load_loops,
    load_streams,
)
from loom.ir.tile import ForLoop, Store, TileProgram, walk


def _bucket(vb: VirtualBuffer) -> tuple[str, ...]:
    lay = vb.layout
    return (
        str(lay.batch),
        str(lay.rows),
        str(lay.cols),
        str(lay.vector),
        vb.dtype,
        vb.producer,
        vb.consumer,
        vb.role,
        vb.scope.key,
        vb.tensor if vb.role == "load" else "",
    )


def _overlaps(a: VirtualBuffer, b: VirtualBuffer) -> bool:
    return not (a.death < b.birth or b.death < a.birth)


def concretize(buffers: tuple[VirtualBuffer, ...]) -> tuple[Allocation, ...]:
    buckets: dict[tuple[str, ...], list[VirtualBuffer]] = defaultdict(list)
    for vb in buffers:
        buckets[_bucket(vb)].append(vb)
    allocations: list[Allocation] = []
    for members in buckets.values():
        colours: list[list[VirtualBuffer]] = []
        for vb in sorted(members, key=lambda v: (v.birth, v.name)):
            for colour in colours:
                if not any(_overlaps(vb, other) for other in colour):
                    colour.append(vb)
                    break
            else:
                colours.append([vb])
        allocations += [_allocation(colour) for colour in colours]
    return _in_order(allocations, buffers)


def _allocation(colour: list[VirtualBuffer]) -> Allocation:
    first = colour[0]
    return Allocation(
        name=first.name if len(colour) == 1 else "_".join(v.name for v in colour),
        buffers=tuple(v.name for v in colour),
        layout=first.layout,
        dtype=first.dtype,
        role=first.role,
        scope=first.scope,
        base_depth=max(v.base_depth for v in colour),
    )


def _in_order(
    allocations: list[Allocation], buffers: tuple[VirtualBuffer, ...]
) -> tuple[Allocation, ...]:
    order = {vb.name: i for i, vb in enumerate(buffers)}
    return tuple(sorted(allocations, key=lambda a: order[a.buffers[0]]))


def unshare_stored_loads(
    program: TileProgram, buffers: tuple[VirtualBuffer, ...], allocations: tuple[Allocation, ...]
) -> tuple[Allocation, ...]:
    """`allocations` with a load allocation that sequential loops share split by loop
    where `spread_loads` deals it to the writer and a later loop stores: that loop's
    loads get an allocation of their own. One circular buffer has one producer, so a
    shared one puts the loads of every pass on the first pass's engine; on the writer, a
    store pass's load waits behind each chunk's stores (RMSNorm + residual looped: the
    statistics pass streams the row on the reader and the residual on the writer, and
    the store pass's residual on the writer left it 0.92 busy at 79% of Blackhole's DRAM
    peak). Apart, the store pass deals its own loads, and the reader-only variant
    (`loom.mapping.engines`) can move them off the writer without moving the
    statistics pass's. The price, a second block of the tensor in L1, is charged by the
    model's L1 constraint like any allocation's, so this is a second plan the flow
    weighs beside the shared one (`loom.flows.helion`): on Wormhole the shared plan's
    larger chunks win. Shares on the reader, or across loops that do not store (causal
    attention's two key loops), are kept: they cost nothing."""
    engine = {vb.name: vb.producer for vb in spread_loads(program, buffers, allocations)}
    loop_of = load_loops(program)
    stores = {
        id(op)
        for op in walk(program.body)
        if isinstance(op, ForLoop) and any(isinstance(o, Store) for o in op.body)
    }
    by_name = {vb.name: vb for vb in buffers}
    out: list[Allocation] = []
    for alloc in allocations:
        if alloc.role != "load" or engine[alloc.buffers[0]] != "writer":
            out.append(alloc)
            continue
        loops = [
            next((loop_of[v] for v in by_name[b].values if v in loop_of), 0) for b in alloc.buffers
        ]
        groups: dict[int, list[VirtualBuffer]] = {}
        for name, loop in zip(alloc.buffers, loops, strict=True):
            key = loop if loop in stores else loops[0]
            groups.setdefault(key, []).append(by_name[name])
        if len(groups) == 1:
            out.append(alloc)
        else:
            out += [_allocation(colour) for colour in groups.values()]
    return _in_order(out, buffers)


def spread_loads(
    program: TileProgram, buffers: tuple[VirtualBuffer, ...], allocations: tuple[Allocation, ...]
) -> tuple[VirtualBuffer, ...]:
    """Give the load allocations that stream at once (`load_streams`: one loop's) to the
    two data-movement engines in turn (reader on NoC0 first, then writer on NoC1), so two
    operands stream in parallel instead of queueing behind one engine (every load has an
    allocation of its own, see the module's docstring). A load alone in its loop takes
    the reader: a looped row's store pass then loads its chunk on the reader while the
    writer only stores, rather than the writer loading, waiting for the compute and
    storing in series every chunk. An allocation that sequential loops share
    (`allocation_loops`) keeps the engine of its first loop's stream and counts in the
    later ones: the store pass's weight goes to the writer beside the shared chunk's
    reader."""
    engine: dict[str, str] = {}
    loops_of = allocation_loops(program, buffers, allocations)
    for stream in load_streams(program, buffers, allocations):
        loop = loops_of[stream[0].name][0]
        shared = [engine[a] for a, seen in loops_of.items() if a in engine and loop in seen]
        turn = int(shared.count("reader") > shared.count("writer"))
        for i, alloc in enumerate(stream):
            engine[alloc.name] = ("reader", "writer")[(turn + i) % 2]
    owner = {vb: a.name for a in allocations for vb in a.buffers}
    return tuple(
        replace(vb, producer=engine[owner[vb.name]]) if vb.role == "load" else vb for vb in buffers
    )
