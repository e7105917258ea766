"""Banks shared by one pass (`loom.model.banks`)."""

from __future__ import annotations

from dataclasses import replace

from model_graphs import grid_pipe

from loom.ir.problem import For, Pipe, latency
from loom.mapping import enumerate_candidates
from loom.model.banks import Reads
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


def test_a_pass_s_latencies_overlap_the_other_cores_bank_time() -> None:
    """A one-tile residual add pass on 64 Wormhole cores: two one-page reads (ω_e 982,
    latencies 768, 188 alone at the banks) and a write (818)."""
    reads = Reads(Const(982), Const(0), 64, Const(768), Const(188))
    lockstep = 768 + 982 + 818
    chain = reads.chain(Const(818), 64).eval({})
    # the others' bank time (1 772) delays it by their share at the banks, 1 960 / 2 728
    assert chain == 768 + 188 + 1274 < lockstep
    # with no latency to overlap, or the banks held throughout, the cores run in lockstep
    assert reads._replace(waits=Const(0)).chain(Const(818), 64).eval({}) == 982 + 818
    assert reads._replace(alone=Const(10**6)).chain(Const(818), 64).eval({}) == lockstep
    # one core queues behind no other: its latencies and its own reads
    alone = reads._replace(streams=1, own=Const(188))
    assert alone.chain(Const(0), 1).eval({}) == 768 + 188
