"""Properties every lowered case must have: each output tile written exactly once, every
input tile read, multicast reads only at group senders, pipes balanced, one circular
buffer per L1 allocation with the depth the latency model charges, waves as loops."""

from __future__ import annotations

import math
from collections import Counter

from cases import Case
from walk import all_events, tiles_of

from loom.dataflow import build_buffers
from loom.ir.program import Loop, Program
from loom.lower.loops import LATE_WAVE
from loom.symbolic import Const


def test_every_output_tile_is_written_exactly_once(case_program: tuple[Case, Program]) -> None:
    _, program = case_program
    events = all_events(program, "writer")
    for t in (t for t in program.tensors if t.role == "output"):
        hits = sum((tiles_of(ev, "write", t.name) for ev in events.values()), Counter())
        assert set(hits) == {(r, c) for r in range(t.rows) for c in range(t.cols)}
        assert set(hits.values()) == {1}


def _load_events(program: Program) -> dict:  # type: ignore[type-arg]
    """Per core, the events of both data-movement engines (loads are spread over both)."""
    reader, writer = all_events(program, "reader"), all_events(program, "writer")
    return {
        core: reader.get(core, []) + writer.get(core, []) for core in reader.keys() | writer.keys()
    }


def test_every_input_tile_is_read(case_program: tuple[Case, Program]) -> None:
    _, program = case_program
    events = _load_events(program)
    for t in (t for t in program.tensors if t.role == "input"):
        hits = sum((tiles_of(ev, "read", t.name) for ev in events.values()), Counter())
        assert set(hits) == {(r, c) for r in range(t.rows) for c in range(t.cols)}


def test_multicast_loads_are_read_by_group_senders_only(case_program: tuple[Case, Program]) -> None:
    """Only each group's sending corner reads: the first core when the reader (NoC0, east
    and south) multicasts, the last when the writer (NoC1, north and west) does."""
    case, program = case_program
    streams = {s: all_events(program, s) for s in ("reader", "writer")}
    for copy in case.schedule().copies:
        if copy.mode != "multicast":
            continue
        ay, ax = copy.area
        for stream, events in streams.items():
            cy, cx = (ay - 1, ax - 1) if stream == "writer" else (0, 0)
            for (y, x), ev in events.items():
                reads = [e for e in ev if e.kind == "read" and e.name == copy.tensor]
                if reads:
                    assert (y % ay, x % ax) == (cy, cx), (copy, stream, (y, x))
        readers = {
            c
            for ev in streams.values()
            for c, e in ev.items()
            if any(x.kind == "read" and x.name == copy.tensor for x in e)
        }
        assert len(readers) == case.schedule().mapping.num_cores // (ay * ax), copy


def test_pipes_are_balanced(case_program: tuple[Case, Program]) -> None:
    """Each receiver of a pipe receives as many blocks as its source sends."""
    _, program = case_program
    sends: Counter = Counter()
    recvs: Counter = Counter()
    for stream in ("reader", "writer"):
        for core, ev in all_events(program, stream).items():
            for e in ev:
                if e.kind == "send":
                    sends[(e.name, e.where[0])] += 1
                elif e.kind == "recv":
                    recvs[(e.name, e.where[0], core)] += 1
    for net in program.nets:
        for i, pipe in enumerate(net.pipes):
            for core in pipe.receivers:
                assert recvs[(net.name, i, core)] == sends[(net.name, i)] > 0


def test_one_buffer_per_allocation_with_model_depth(case_program: tuple[Case, Program]) -> None:
    case, program = case_program
    allocations = build_buffers(case.program()).allocations
    assert [b.name for b in program.buffers] == [a.name for a in allocations]
    pipeline = case.schedule().pipeline
    for alloc, buf in zip(allocations, program.buffers, strict=True):
        knobs = pipeline.get(alloc.scope.key, {})
        extra = (alloc.role == "load" and knobs.get("b_load")) or (
            alloc.role == "store" and knobs.get("b_store")
        )
        assert buf.depth == alloc.base_depth + (1 if extra else 0)


def test_waves_are_outer_loops_of_every_stream(case_program: tuple[Case, Program]) -> None:
    case, program = case_program
    waves = [a for a, n in case.schedule().waves.items() if n > 1]
    for engine, body in program.streams:
        late = [s for s in body if isinstance(s, Loop) and s.var.name == LATE_WAVE]
        if engine == "writer" and late:  # stores one wave late: one loop over the waves
            total = math.prod(n for n in case.schedule().waves.values())
            assert late[0].count == Const(total - 1)
            continue
        names = []
        while len(body) == 1 and isinstance(body[0], Loop) and body[0].var.name.endswith("_wave"):
            names.append(body[0].var.name)
            body = body[0].body
        assert names == [f"{a}_wave" for a in waves]
