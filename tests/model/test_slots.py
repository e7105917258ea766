"""Single-slot loads (`loom.model.slots`): what one slot per load hides, and blocks
held for the whole body."""

from __future__ import annotations

from dataclasses import replace

import pytest
from model_graphs import grid_loop, grid_pipe, on_reader

from loom.ir.problem import Leaf, Pipe, Seq, latency
from loom.mapping import enumerate_candidates
from loom.symbolic import Const


def test_single_slot_loads_on_one_engine_refill_while_the_compute_holds_the_other(
    buffered, wormhole
) -> None:  # type: ignore[no-untyped-def]
    """Flash decode's K and V, single-slot, both issued by the reader, each in its own
    slot: the reader fetches the next K while the compute works from V and the next V
    while it computes from K, so an iteration lasts max(ℓ, m, l_K + h_K, l_V + h_V)
    (a slot's cycle: its load, then its hold from first to last reader), not ℓ + m."""
    b = buffered["flash_decode"]
    cand = on_reader(enumerate_candidates(b, wormhole).candidates[0])
    grid, domains = grid_pipe(b, cand, wormhole)
    loop, _ = grid_loop(grid)
    pipe = loop.body
    assert isinstance(pipe, Pipe) and pipe.unheld != Const(0)
    env = {n: d[-1] for n, d in domains.items()}
    env[pipe.b_load.name], env[pipe.b_store.name] = 0, 0
    ell, m = latency(pipe.load).eval(env), latency(pipe.body).eval(env)
    # K is read by the first op (the scores) only, V by the last (the update) only.
    body = pipe.body
    assert isinstance(body, Seq) and isinstance(body.children[0], Leaf)
    terms = body.children[0].terms
    assert "matmul qk" in terms[0].what and "acc_1_1" in terms[-1].what
    load = {t.what.split()[1]: t.cycles.eval(env) for t in pipe.load.terms}
    slot_k = load["k"] + terms[0].cycles.eval(env)
    slot_v = load["v"] + terms[-1].cycles.eval(env)
    assert latency(pipe).eval(env) == pytest.approx(max(ell, m, slot_k, slot_v))
    assert latency(pipe).eval(env) < ell + m
    env[pipe.b_load.name] = 1  # double-buffered: max(ℓ, m); one slot each costs no more here
    assert latency(pipe).eval(env) <= max(ell, m, slot_k, slot_v)
    # V on the writer: each slot refills while the other engine streams, so a refetch
    # is the load's time with the banks shared (`refill_cycles`), never less than alone.
    split = replace(
        cand,
        copies=tuple(
            replace(c, engine="writer") if c.kind == "load" and c.tensor == "v" else c
            for c in cand.copies
        ),
    )
    loop, _ = grid_loop(grid_pipe(b, split, wormhole)[0])
    pipe = loop.body
    assert isinstance(pipe, Pipe) and pipe.unheld != Const(0)
    env[pipe.b_load.name] = 0
    ell, m = latency(pipe.load).eval(env), latency(pipe.body).eval(env)
    load = {t.what.split()[1]: t.cycles.eval(env) for t in pipe.load.terms}
    slot_k = load["k"] + terms[0].cycles.eval(env)
    slot_v = load["v"] + terms[-1].cycles.eval(env)
    assert max(ell, m, slot_k, slot_v) <= latency(pipe).eval(env) < ell + m


def test_blocks_held_for_the_whole_body_refill_together_as_the_stage(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """GEMM's A and B, single-slot on two engines, are both read by the one matmul: they
    are freed together and refetched together, which is the load stage itself, so the
    K loop's serial form stays ℓ + m and no refetch term is built."""
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    grid, domains = grid_pipe(b, cand, wormhole)
    loop, _ = grid_loop(grid)
    pipe = loop.body
    assert isinstance(pipe, Pipe) and pipe.unheld == Const(0)
    engines = {t.what.split(" on the ")[-1] for t in pipe.load.terms if t.what.startswith("load")}
    assert engines == {"reader", "writer"}
    env = {n: d[-1] for n, d in domains.items()}
    env[pipe.b_load.name], env[pipe.b_store.name] = 0, 1
    ell, m = latency(pipe.load).eval(env), latency(pipe.body).eval(env)
    assert latency(pipe).eval(env) == pytest.approx(max(ell + m, latency(pipe.store).eval(env)))


def _grid(kernel: str, shape: dict[str, int], name: str, arch):  # type: ignore[no-untyped-def]
    from loom.dataflow import build_buffers
    from loom.eval.cases import FAMILIES_DIR
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog
    from loom.kernels.examples import EXAMPLES_DIR
    from loom.kernels.registry import resolve_kernel

    path = EXAMPLES_DIR / f"{kernel}.py"
    spec = resolve_kernel(str(path if path.exists() else FAMILIES_DIR / f"{kernel}.py"))
    b = build_buffers(run_frontend(spec, shape, StageLog()))
    cand = next(c for c in enumerate_candidates(b, arch).candidates if c.name == name)
    return grid_pipe(b, cand, arch)


@pytest.mark.parametrize(
    ("kernel", "shape", "name", "blocks", "simulated"),
    [
        # `up` is read by the body's last statement, which computes `out`: the reader
        # refetches it as `out`'s write starts (37.1k cycles beside it, 15.7k alone),
        # then the statement (28.3k); `gate`'s refetch hides behind it
        (
            "swiglu",
            {"M": 1024, "N": 14336},
            "swiglu__x2x4_y2__x0n_y0n_x1m__f01__gate-n_up-n_out-n",
            (64, 1792),
            65_400,
        ),
        # x and h are both held for the one statement: x is read beside the write
        # (10.9k cycles, 5.2k alone), then h (5.2k), then the statement
        (
            "residual_add",
            {"M": 128, "N": 16384},
            "residual_add__x6_y2__x0n_y0n__f01__x-n_h-n_out-n",
            (32, 1376),
            18_465,
        ),
    ],
)
def test_a_slot_freed_by_the_statement_that_computes_a_stored_value_refills_beside_its_write(
    wormhole, kernel: str, shape: dict[str, int], name: str, blocks: tuple[int, int], simulated: int
) -> None:  # type: ignore[no-untyped-def]
    """One slot per load on the reader, the writer only storing: the statement that pops
    the last block computes the stored value, so the refetch and the write start
    together and share the banks (`primitives.write_wait`). The simulator's pass (its
    trace, Wormhole, b_store = 1) against the model's: 1.28x and 1.20x before."""
    grid, domains = _grid(kernel, shape, name, wormhole)
    env = {"tile_m": blocks[0], "tile_n": blocks[1]}
    env[grid.b_load.name], env[grid.b_store.name] = 0, 1
    assert set(env) == set(domains)
    ell, m = latency(grid.load).eval(env), latency(grid.body).eval(env)
    modeled = latency(grid).eval(env)
    assert modeled > max(grid.dram.eval(env), min(ell, m))  # the banks' floor bound it before
    assert abs(modeled / simulated - 1) < 0.05
    env[grid.b_load.name] = 1  # two slots: the refetch is off the chain, the term unused
    assert latency(grid).eval(env) < modeled
