"""A memory-bound pass (`loom.model.stores.Stores.store_chain`, `loom.model.banks`): an
engine that loads and stores in one scope, and the latencies of blocking reads."""

from __future__ import annotations

from dataclasses import replace

import pytest
from model_graphs import grid_pipe, on_reader

from loom.dataflow import build_buffers
from loom.eval.cases import FAMILIES_DIR
from loom.flows.helion import run_frontend
from loom.flows.stages import StageLog
from loom.ir.problem import For, Leaf, Pipe, Seq, Stage, latency, pipes
from loom.kernels.examples import EXAMPLES_DIR
from loom.kernels.registry import resolve_kernel
from loom.mapping import enumerate_candidates
from loom.model import build_problem
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


@pytest.fixture(scope="module")
def layer_norm(wormhole):  # type: ignore[no-untyped-def]
    """LayerNorm 1024x16384 looped (a statistics pass over the row's chunks, then a store
    pass re-reading them), and its candidates on Wormhole."""
    from loom.dataflow.looped_rows import loop_rows
    from loom.eval.cases import FAMILIES_DIR

    spec = resolve_kernel(str(FAMILIES_DIR / "layer_norm.py"))
    looped = loop_rows(run_frontend(spec, {"M": 1024, "N": 16384}, StageLog()))
    assert looped is not None
    buffered = build_buffers(looped.program)
    return buffered, enumerate_candidates(buffered, wormhole).candidates


@pytest.mark.parametrize(("weights", "ahead"), [("w-mc4x8_b-mc4x8", True), ("w-n_b-n", False)])
def test_a_reader_ending_its_pass_with_a_multicast_reads_the_next_pass_with_the_compute(
    layer_norm, wormhole, weights: str, ahead: bool
) -> None:  # type: ignore[no-untyped-def]
    """The store pass: the reader loads the row's chunk x then the bias b, the writer the
    weight w, then it stores `(x - mean) * inv * w + b` (one statement). With b
    multicast, its sender reads b as one stream against the 32 cores' writes, so the
    read ends with the store; the compute waits for b's sends, and the reader reads the
    next x (two slots) beside the statement, not beside the store. Simulator trace
    (x8_y4, [32, 2048]): per chunk x 16 µs from the statement's start, b 24 µs beside
    the 27 µs write, the period 55 µs; the chain charged x's whole bank time beside
    the write: 71 248 cycles, now 59 547. With b unicast the rule does not apply."""
    buffered, candidates = layer_norm
    name = f"layer_norm__x8_y4__x0m_y0m__f01__x-n_x-n_{weights}_out-n"
    cand = next(c for c in candidates if c.name == name)
    problem = build_problem(buffered, cand, wormhole, "HiFi4", 1)
    store_pass = pipes(problem.heg)[-1]
    env = {n: d[0] for n, d in problem.domains.items()} | {"tile_m": 32, "tile_x_d1": 2048}
    one, two = ({**env, store_pass.b_load.name: b} for b in (0, 1))
    body = latency(store_pass.body).eval(two)
    # x's bank time (15 744) is below the write's (26 240): with the compute ahead of
    # the store the reads run alone through the whole body, one statement
    saved = store_pass.chain.eval(one) - store_pass.chain.eval(two)
    assert saved == (body if ahead else 0)


def test_with_two_load_blocks_the_store_before_the_last_waves_runs_alone(wormhole) -> None:  # type: ignore[no-untyped-def]
    # RMSNorm with a residual, 4096×2048 on Wormhole, 64 cores in two waves: the writer
    # loads `res`, so the chain charges each wave's stores beside the reader's reads of
    # the next wave. With two load blocks the reader read wave 2 right after wave 1
    # (beside the writer's load), and reads wave i + 2 beside wave i's stores: the stores
    # of the wave before the last run alone too, once per program (the simulator: 422 032
    # cycles with two load blocks, 452 068 with one).
    spec = resolve_kernel(str(FAMILIES_DIR / "rms_norm_residual.py"))
    b = build_buffers(run_frontend(spec, {"M": 4096, "N": 2048}, StageLog()))
    cand = next(
        c
        for c in enumerate_candidates(b, wormhole).candidates
        if c.num_cores == 64
        and {p.engine for p in c.copies if p.kind == "load"} == {"reader", "writer"}
    )
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    assert isinstance(problem.heg, Seq)
    _, waves, once = problem.heg.children
    assert isinstance(waves, For) and isinstance(waves.body, Pipe) and isinstance(once, Leaf)
    grid = waves.body
    (lone,) = (t for t in once.terms if "alone" in t.what)
    env = {n: d[0] for n, d in problem.domains.items()} | {"tile_m": 32}
    env |= {grid.b_store.name: 0}
    assert waves.trip.eval(env) == 2
    assert lone.cycles.eval(env | {grid.b_load.name: 0}) == 0
    env |= {grid.b_load.name: 1}
    saved = -lone.cycles.eval(env)
    # at most the stores' wait for the reads; that pass still takes at least the pipe's
    # own overlap
    assert 0 < saved <= grid.chain.eval(env) - latency(grid.store).eval(env)
    assert latency(grid).eval(env) - saved >= latency(replace(grid, chain=Const(0))).eval(env)
    # two load blocks also let a reader that ends its pass with a multicast (the weight)
    # read the next wave beside the compute (`_behind_sends`): each pass but the last
    # (the loop's sequential one, without the chain) is faster by that, and the
    # once-per-program term takes off the rest
    zero = env | {grid.b_load.name: 0}
    per_wave = latency(grid).eval(zero) - latency(grid).eval(env)
    one = problem.objective.eval(zero)
    steady = (waves.trip.eval(env) - 1) * per_wave
    assert per_wave > 0 and problem.objective.eval(env) == one - steady - saved


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
