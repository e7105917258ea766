"""A memory-bound pass (`loom.model.stores.Stores.store_chain`, `loom.model.banks`): an
engine that loads and stores in one scope, and the latencies of blocking reads."""

from __future__ import annotations

from dataclasses import replace

import pytest
from model_graphs import grid_pipe, on_reader

from loom.dataflow import build_buffers
from loom.flows.helion import run_frontend
from loom.flows.stages import StageLog
from loom.ir.problem import Stage, latency
from loom.kernels.examples import EXAMPLES_DIR
from loom.kernels.registry import resolve_kernel
from loom.mapping import enumerate_candidates
from loom.symbolic import Const


@pytest.fixture(scope="module")
def swiglu():  # type: ignore[no-untyped-def]
    spec = resolve_kernel(str(EXAMPLES_DIR / "swiglu.py"))
    return build_buffers(run_frontend(spec, spec.default_shape, StageLog()))


def test_a_writer_that_loads_and_stores_runs_them_in_series(swiglu, wormhole) -> None:  # type: ignore[no-untyped-def]
    cand = next(c for c in enumerate_candidates(swiglu, wormhole).candidates if c.num_cores > 8)
    split = replace(
        cand,
        copies=tuple(
            replace(c, engine="writer") if c.kind == "load" and i == 1 else c
            for i, c in enumerate(c for c in cand.copies)
        ),
    )
    assert {c.engine for c in split.copies if c.kind == "load"} == {"reader", "writer"}
    grid, domains = grid_pipe(swiglu, split, wormhole)
    assert isinstance(grid.load, Stage) and grid.chain != Const(0)
    for b_load in (0, 1):
        for b_store in (0, 1):
            env = {n: d[0] for n, d in domains.items()}
            env |= {grid.b_load.name: b_load, grid.b_store.name: b_store}
            # the writer loads `up` (read by the body's last op), waits for it, then stores
            # the result: no buffer overlaps its load with its store
            chain = grid.chain.eval(env)
            assert chain > latency(grid.store).eval(env) + latency(grid.load).eval(env) / 2
            # `silu(gate) * up` is one statement: it starts, with silu, once `up` is in
            assert chain >= latency(grid.body).eval(env) + latency(grid.store).eval(env)
            assert latency(grid).eval(env) >= chain
            # with one slot per load (b_load = 0) the pipe's serial form already holds both
            # blocks through that statement, so there the chain only matches it
            alone = latency(replace(grid, chain=Const(0))).eval(env)
            assert alone < chain if b_load == 1 else alone <= chain
    # both loads on the reader: the writer only stores, no such chain; with one store
    # block the next body waits for the write, which shares the banks with the reads
    grid, domains = grid_pipe(swiglu, on_reader(cand), wormhole)
    env = {n: d[0] for n, d in domains.items()} | {grid.b_load.name: 1}
    assert grid.chain.eval(env | {grid.b_store.name: 1}) == 0
    alone = latency(grid.body) + latency(grid.store)
    assert grid.chain.eval(env | {grid.b_store.name: 0}) >= alone.eval(env)


def test_each_blocking_read_of_a_unicast_pass_waits_its_latency(swiglu, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Two unicast loads on the reader, the writer only storing: the pass lasts at least
    the reader's two read latencies, its reads' DRAM time and its wait for the stores at
    the banks, whatever b_store (the compute waiting for the store does not stop the
    reader); a longer read latency lengthens that floor by two latencies."""
    cand = next(
        c
        for c in enumerate_candidates(swiglu, wormhole).candidates
        if c.num_cores > 8 and all(p.mode == "unicast" for p in c.copies if p.kind == "load")
    )
    slower = replace(
        wormhole,
        dram=replace(wormhole.dram, read_latency_cycles=wormhole.dram.read_latency_cycles + 1000),
    )
    grid, domains = grid_pipe(swiglu, on_reader(cand), wormhole)
    late, _ = grid_pipe(swiglu, on_reader(cand), slower)
    assert len([t for t in grid.load.terms if t.kind == "dram_read"]) == 2
    env = {n: d[-1] for n, d in domains.items()}
    floors = {grid.dram.eval(env | {grid.b_store.name: b}) for b in (0, 1)}
    assert len(floors) == 1
    (floor,) = floors
    assert late.dram.eval(env) == floor + 2000
    assert latency(grid).eval(env) >= floor


def test_a_single_store_block_apart_from_the_loads_holds_back_only_the_next_body(
    swiglu, wormhole
) -> None:  # type: ignore[no-untyped-def]
    """With one block each way (b_load = b_store = 0) and a writer that only stores, the
    writer stores pass i while the reader fetches pass i + 1: a pass is max(l + m, m + s)
    (the simulator: SwiGLU and residual add on Wormhole take as long with b_store = 0 as
    with 1 at b_load = 0), not l + m + s as where the writer also loads."""
    cand = next(c for c in enumerate_candidates(swiglu, wormhole).candidates if c.num_cores > 8)
    grid, domains = grid_pipe(swiglu, on_reader(cand), wormhole)
    assert grid.store_apart
    env = {n: d[0] for n, d in domains.items()} | {grid.b_load.name: 0}
    ell, m, s = (latency(x).eval(env) for x in (grid.load, grid.body, grid.store))
    bare = replace(grid, dram=Const(0), chain=Const(0), unheld=Const(0))
    single = latency(bare).eval(env | {grid.b_store.name: 0})
    assert single == max(ell + m, m + s) < ell + m + s
    assert single == latency(bare).eval(env | {grid.b_store.name: 1}) or s > ell
    in_series = replace(bare, store_apart=False)
    assert latency(in_series).eval(env | {grid.b_store.name: 0}) == ell + m + s
    # `up` on the writer: it loads pass i + 1 only after storing pass i
    split = replace(
        cand,
        copies=tuple(
            replace(c, engine="writer") if c.kind == "load" and i == 1 else c
            for i, c in enumerate(cand.copies)
        ),
    )
    assert not grid_pipe(swiglu, split, wormhole)[0].store_apart
