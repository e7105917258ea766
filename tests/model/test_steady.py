"""The grid's steady loops (`loom.model.steady`): a fill paid once when the loop's
engine prefetches the next wave, and the compute around the loop hidden behind it."""

from __future__ import annotations

from dataclasses import replace

from model_graphs import grid_loop, grid_pipe, on_reader

from loom.dataflow import build_buffers
from loom.ir.problem import For, Leaf, Pipe, Seq, latency, sequential
from loom.ir.tile import Elementwise, ForLoop, Load, Matmul, Op, TileProgram, Value
from loom.mapping import enumerate_candidates
from loom.model import build_problem
from loom.model.slots import Slots
from loom.symbolic import Const


def _unhoisted(program: TileProgram) -> TileProgram:
    """Flash decode with its scores reading q itself, as before the score scale moved
    onto q (`loom.frontend.hoist`): q's block is then read by every iteration of the loop
    (the factor is dropped; the model does not read values)."""
    (scaled,) = [
        op
        for op in program.body
        if isinstance(op, Elementwise) and op.result.name.endswith("_scaled")
    ]
    q = scaled.args[0]
    assert isinstance(q, Value)

    def unscaled(op: Op) -> Op:
        if isinstance(op, Matmul) and op.lhs.name == scaled.result.name:
            return replace(op, lhs=q)
        return op

    body = tuple(
        replace(op, body=tuple(unscaled(o) for o in op.body)) if isinstance(op, ForLoop) else op
        for op in program.body
        if op is not scaled
    )
    return replace(program, body=body)


def _steady_fd(b, wormhole):  # type: ignore[no-untyped-def]
    cand = on_reader(enumerate_candidates(b, wormhole).candidates[0])
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    assert isinstance(problem.heg, Seq)
    waves, once = problem.heg.children[1], problem.heg.children[-1]
    assert isinstance(waves, For) and isinstance(waves.body, Pipe)
    assert isinstance(once, Leaf) and [t.kind for t in once.terms] == ["fill"]
    loop, at = grid_loop(waves.body)
    assert loop.steady and isinstance(loop.body, Pipe)
    per_wave = waves.body.body.children[at + 1]  # type: ignore[attr-defined]
    assert isinstance(per_wave, Leaf) and per_wave.terms[0].kind == "fill"
    env = {n: d[-1] for n, d in problem.domains.items()}
    return cand, waves, once, loop, per_wave, env


def test_a_grid_loop_fill_is_paid_once_when_its_engine_prefetches(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Flash decode: K and V stream on the reader and nothing after the loop waits on it,
    so the next wave's first block is fetched during this wave's last body. q, loaded by
    the same engine in the grid body, is read only by the hoisted score scale before the
    loop, so the compute pops it there: with one slot as with two the reader runs ahead,
    and the fill is paid once whatever the grid's b_load."""
    b = buffered["flash_decode"]
    cand, waves, once, loop, per_wave, env = _steady_fd(b, wormhole)
    fill = sequential(loop.body).eval(env) - latency(loop.body).eval(env)
    assert fill > 0
    assert latency(loop).eval(env) == loop.trip.eval(env) * latency(loop.body).eval(env)
    builder = Slots(b, cand, wormhole, "HiFi4")
    body = b.program.body
    (fd_loop,) = [op for op in body if isinstance(op, ForLoop)]
    (q,) = [op for op in body if isinstance(op, Load)]
    assert builder.held_through(fd_loop, body, [q]) == []
    for primed in (0, 1):
        env[waves.body.b_load.name] = primed
        assert latency(per_wave).eval(env) == 0
        assert latency(once).eval(env) == fill


def test_a_single_slot_grid_load_the_loop_reads_waits_for_its_pop(tile_programs, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Flash decode with the scores reading q in every iteration: a double-buffered q lets
    the reader run ahead, the fill is paid once. With one slot the compute pops q when the
    loop ends (its carried results are gathered, so no iteration is peeled and q's wait
    encloses the loop): the reader, having loaded the last V, waits while the compute
    runs from V's first reader to the end of the iteration and its carries, r, less what
    a compute-bound iteration leaves it anyway: max(0, r + l - T) per wave. The last
    body's part that runs while V loads is no longer paid once."""
    b = build_buffers(_unhoisted(tile_programs["flash_decode"]))
    cand, waves, once, loop, per_wave, env = _steady_fd(b, wormhole)
    builder = Slots(b, cand, wormhole, "HiFi4")
    (fd_loop,) = [op for op in b.program.body if isinstance(op, ForLoop)]
    assert not builder.peeled(fd_loop)
    body = loop.body.body
    assert isinstance(body, Seq) and isinstance(body.children[0], Leaf)
    terms = body.children[0].terms
    assert terms[0].kind == "matmul" and "matmul qk" in terms[0].what  # the scores read q
    assert terms[-1].kind == "matmul" and "line 44" in terms[-1].what  # p @ V
    reads = [t for t in loop.body.load.terms if t.kind == "dram_read"]
    assert ["load k" in reads[0].what, "load v" in reads[1].what] == [True, True]
    carries = [t for c in waves.body.body.children if isinstance(c, Leaf) for t in c.terms]
    carry = [t for t in carries if t.what.startswith("carry ")]
    assert carry
    grid_knob = waves.body.b_load.name
    for bn in (0, 1):
        env[loop.body.b_load.name] = bn
        trip = loop.trip.eval(env)
        r = terms[-1].cycles.eval(env) + sum(t.cycles.eval(env) for t in carry) // trip
        ell, period = latency(loop.body.load).eval(env), latency(loop.body).eval(env)
        m = latency(loop.body.body).eval(env)
        fill = sequential(loop.body).eval(env) - period
        for primed, wave_fill, paid in (
            (1, 0, fill),
            (0, max(r + ell - period, 0), fill - min(fill, max(period - m, 0))),
        ):
            env[grid_knob] = primed
            assert latency(per_wave).eval(env) == wave_fill
            assert latency(once).eval(env) == paid


def test_the_compute_around_a_steady_loop_hides_behind_its_loads(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Flash decode: the reader streams K and V and issues nothing of the grid body's
    state fills, gathers and merge, so that compute runs while the reader fetches the
    next wave's blocks; up to the loop's slack per iteration, T(pipe) - m, of it hides."""
    b = buffered["flash_decode"]
    cand = on_reader(enumerate_candidates(b, wormhole).candidates[0])
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    waves = problem.heg.children[1]  # type: ignore[attr-defined]
    grid = waves.body
    loop, _ = grid_loop(grid)
    hidden = [c for c in grid.body.children if c.name.startswith("overlap@")]
    assert len(hidden) == 1 and hidden[0].terms[0].kind == "overlap"
    env = {n: d[-1] for n, d in problem.domains.items()}
    around = sum(
        latency(c).eval(env)
        for c in grid.body.children
        if c is not loop and not c.name.startswith(("fill@", "overlap@"))
    )
    assert around > 0
    for bn in (0, 1):
        env[loop.body.b_load.name] = bn
        slack = max(latency(loop.body).eval(env) - latency(loop.body.body).eval(env), 0)
        assert latency(hidden[0]).eval(env) == -min(around, slack)


def test_no_fill_credit_when_the_loop_s_engine_stores_after_it(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """GEMM with B on the writer: storing in program order, the writer stores C after the
    K loop before it can fetch the next wave's first B block, so the fill stays per
    wave; storing one wave late it fetches that block first, so it shows once."""
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    grid, _ = grid_pipe(b, cand, wormhole)
    loop, _ = grid_loop(grid)
    assert not loop.steady
    problem = build_problem(b, replace(cand, stores_late=True), wormhole, "HiFi4", 1)
    grid = problem.heg.children[1].body  # type: ignore[attr-defined]
    loop, i = grid_loop(grid)
    assert loop.steady and isinstance(loop.body, Pipe)
    per_wave = grid.body.children[i + 1]  # type: ignore[attr-defined]
    assert isinstance(per_wave, Leaf) and per_wave.terms[0].cycles == Const(0)
    env = {n: d[-1] for n, d in problem.domains.items()}
    fill = (sequential(loop.body) - latency(loop.body)).eval(env)
    once = problem.heg.children[-1]  # type: ignore[attr-defined]
    assert fill > 0 and fill in [t.cycles.eval(env) for t in once.terms if "fill of loop" in t.what]
