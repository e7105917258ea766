"""A writer that also loads inside the grid body (GEMM's B on NoC1) stores each wave's
result one wave late when the grid's store block is double buffered: the rule of
`loom.lower.loops.with_waves_stores_late` and what the simulator makes of it."""

from __future__ import annotations

from dataclasses import replace

from cases import FAST, Case
from programs import lowered

from loom.arch import load_arch
from loom.dataflow import build_buffers
from loom.ir.program import Loop, Program, ReadDram, Stmt, Wait, WriteDram
from loom.lower import lower
from loom.lower.loops import LATE_WAVE
from loom.sim import simulate
from loom.symbolic import Const

LATE = next(c for c in FAST if c.id == "gemm512-bh-8x8-sub-waves")


def _single_store_block(case: Case) -> Program:
    pipeline = {**case.pipeline, "grid": {**case.pipeline["grid"], "b_store": 0}}
    single = replace(case, id=f"{case.id}-1store", pipeline=pipeline)
    tile = single.program()
    return lower(tile, build_buffers(tile), single.schedule(), load_arch(single.arch))


def _walk(stmts: tuple[Stmt, ...]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        out.append(s)
        for body in (getattr(s, f, ()) for f in ("body", "then", "orelse")):
            out.extend(_walk(body))
    return out


def test_the_writer_loads_the_next_wave_before_it_stores_the_last() -> None:
    program = lowered(LATE)
    waves = LATE.schedule().waves
    total = waves["tile_m"] * waves["tile_n"]
    head, loop, last = program.writer
    # the first wave's B loads; one loop over the other waves; the last wave's store
    assert isinstance(head, Loop) and head.var.name == "tile_k_id"
    assert isinstance(loop, Loop) and loop.var.name == LATE_WAVE
    assert loop.count == Const(total - 1)
    # in the other waves, the previous wave's store comes after as many of the next
    # wave's four K steps as B's buffer has blocks (two), before the other two
    first, store, rest = loop.body
    assert isinstance(first, Loop) and first.count == Const(2)
    assert isinstance(store, Wait) and isinstance(store.body[0], WriteDram)
    assert isinstance(rest, Loop) and rest.count == Const(2)
    assert isinstance(last, Wait) and isinstance(last.body[0], WriteDram)
    reads = [s for s in _walk(program.writer) if isinstance(s, ReadDram)]
    assert len(reads) == 3


def test_one_store_block_keeps_program_order_and_is_slower() -> None:
    in_order = _single_store_block(LATE)
    (outer,) = in_order.writer  # the waves' loops, the store at the end of each wave
    assert isinstance(outer, Loop) and outer.var.name.endswith("_wave")
    arch = load_arch(LATE.arch)
    late, single = simulate(lowered(LATE), arch), simulate(in_order, arch)
    assert late.bytes_moved == single.bytes_moved
    assert late.cycles < single.cycles
