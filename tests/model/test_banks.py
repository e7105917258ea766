"""Banks shared by one pass (`loom.model.banks`)."""

from __future__ import annotations

from dataclasses import replace

from model_graphs import grid_pipe

from loom.ir.problem import For, Pipe, latency
from loom.mapping import enumerate_candidates
from loom.symbolic import Const


def test_a_reader_only_candidate_stores_alone_and_each_pass_shares_the_banks(  # type: ignore[no-untyped-def]
    buffered, wormhole
) -> None:
    b = buffered["gemm"]
    cands = enumerate_candidates(b, wormhole).candidates
    split = next(
        c
        for c in cands
        if not c.name.endswith("__rd")
        and all(p.mode == "multicast" for p in c.copies if p.kind == "load")
    )
    (rd,) = [c for c in cands if c.name == f"{split.name}__rd"]
    loads = [c for c in split.copies if c.kind == "load"]
    assert {c.engine for c in loads} == {"reader", "writer"}
    assert [c for c in rd.copies if c.kind == "load"] == [
        replace(c, engine="reader") for c in loads
    ]
    grid, domains = grid_pipe(b, rd, wormhole)
    # the writer only stores: the store is the grid pipe's own stage, which b_store overlaps
    assert grid.store.terms and domains[grid.b_store.name] == (0, 1)
    (loop,) = [n for n in grid.body.children if isinstance(n, For)]  # type: ignore[attr-defined]
    assert isinstance(loop.body, Pipe)
    env = {n: d[-1] for n, d in domains.items()} | {grid.b_store.name: 1}
    # the floor is the grid pass's (its own store stage); the K loop has no store: none
    assert loop.body.dram == Const(0) and grid.dram.eval(env) > 0
    # however the stages overlap, no pass is shorter than the banks' time for all of it
    assert latency(grid).eval(env) >= grid.dram.eval(env)
    dram_bound = replace(grid, dram=Const(10**9))
    assert latency(dram_bound).eval(env) == 10**9
    # a K loop with one slot per load reads in series with its compute: every pass waits
    # for the reads the previous pass's stores delay (the stores overlap only with b_store;
    # the multicasts keep the cores, and so their stores, together)
    single = env | {loop.body.b_load.name: 0}
    wait = grid.stall.eval(single)
    assert wait > 0 and grid.stall.eval(single | {grid.b_store.name: 0}) == 0
    stalled = latency(replace(grid, dram=Const(0))).eval(single)
    assert stalled == latency(replace(grid, stall=Const(0), dram=Const(0))).eval(single) + wait
