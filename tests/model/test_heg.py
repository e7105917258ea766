"""The HEG of a candidate: where a store runs when its engine also loads inside the body,
what single-slot buffers hide, and the sends of a multicast group."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from loom.arch import noc as nocmap
from loom.ir.candidate import Candidate
from loom.ir.problem import For, Leaf, Pipe, Seq, Stage, latency, sequential
from loom.ir.tile import ForLoop, Load
from loom.mapping import enumerate_candidates
from loom.model import build_problem
from loom.model.domains import wave_domain
from loom.model.heg import HegBuilder
from loom.model.primitives import SendSpec
from loom.symbolic import Const


def grid_pipe(b, cand: Candidate, arch) -> tuple[Pipe, dict[str, tuple[int, ...]]]:  # type: ignore[no-untyped-def]
    problem = build_problem(b, cand, arch, "HiFi4", 1)
    assert isinstance(problem.heg, Seq)
    waves = problem.heg.children[1]
    assert isinstance(waves, For) and isinstance(waves.body, Pipe)
    return waves.body, problem.domains


def test_a_store_waits_for_the_body_when_its_engine_loads_inside(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    assert any(c.kind == "load" and c.engine == "writer" for c in cand.copies)
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    grid, domains = grid_pipe(b, cand, wormhole)
    assert isinstance(grid.body, Seq)
    *_, store, overlap = grid.body.children
    # The output store follows the K loop in the body; no knob can overlap it.
    assert isinstance(store, Stage) and store.name.startswith("store@") and store.terms
    assert not grid.store.terms
    assert domains[grid.b_store.name] == (0,)
    # Only the next wave's accumulator fill, which needs nothing the writer brings, runs
    # while the writer stores: per wave up to the store's time of it hides, and the
    # first wave (no store before it) pays it back once.
    fill = grid.body.children[0]
    assert isinstance(fill, Leaf) and fill.terms[0].kind == "pack"
    assert isinstance(overlap, Leaf) and overlap.terms[0].kind == "overlap"
    env = {n: d[-1] for n, d in domains.items()}
    covered = min(latency(store).eval(env), latency(fill).eval(env))
    assert covered > 0 and overlap.terms[0].cycles.eval(env) == -covered
    once = problem.heg.children[-1]  # type: ignore[attr-defined]
    assert isinstance(once, Leaf)
    assert [t.cycles.eval(env) for t in once.terms if "opening" in t.what] == [covered]

    # Its twin storing one wave late (`loom.lower.loops`): two store blocks, the store is
    # the pipe's stage, overlapped with the next wave, and the writer's own work (its B
    # loads, then the stores) bounds the wave instead.
    late = replace(cand, name=f"{cand.name}__sl", stores_late=True)
    grid, domains = grid_pipe(b, late, wormhole)
    assert domains[grid.b_store.name] == (1,)
    assert isinstance(grid.body, Seq)
    assert latency(grid.store).eval(env) == latency(store).eval(env)
    *_, occupancy = grid.body.children
    assert isinstance(occupancy, Leaf) and occupancy.terms[0].kind == "occupancy"
    assert not any(isinstance(n, Stage) for n in grid.body.children)

    readers = tuple(replace(c, engine="reader") if c.kind == "load" else c for c in cand.copies)
    grid, domains = grid_pipe(b, replace(cand, copies=readers), wormhole)
    assert grid.store.terms
    assert domains[grid.b_store.name] == (0, 1)


def test_the_first_and_last_waves_of_late_stores_are_not_occupied(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Stores one wave late: the first wave has no stores before it, and with one K step
    per wave the last wave's block came during the wave before, so its writer only stores
    beside the compute. Over the program the occupancy is charged w - 1 times (w - 2 and
    what the store exceeds the body by, at one K step), and no once-per-program delay of
    the first wave's stores is charged besides (it is the second wave's occupancy)."""
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    late = replace(cand, name=f"{cand.name}__sl", stores_late=True)
    problem = build_problem(b, late, wormhole, "HiFi4", 1)
    grid, domains = grid_pipe(b, late, wormhole)
    assert isinstance(grid.body, Seq) and isinstance(problem.heg, Seq)
    *items, occupancy = grid.body.children
    assert isinstance(occupancy, Leaf)
    once = problem.heg.children[-1]
    assert isinstance(once, Leaf)
    assert not any("first wave's stores" in t.what for t in once.terms)
    (back,) = [t for t in once.terms if t.kind == "occupancy"]
    waves = problem.heg.children[1]
    assert isinstance(waves, For)
    seen = set()
    for tile_k, b_load in itertools.product(domains["tile_k"], (0, 1)):
        env = {n: d[0] for n, d in domains.items()}
        env.update(tile_m=32, tile_n=32, tile_k=tile_k, b_load_tile_k=b_load)
        w = waves.trip.eval(env)
        extra = occupancy.terms[0].cycles.eval(env)
        body = sum(latency(n).eval(env) for n in items)
        store = latency(grid.store).eval(env)
        within = 128 // tile_k <= 1 + b_load  # K = 128: the loop fits its buffer
        assert problem.admits(env) and w >= 2 and extra >= 0
        charged = w * extra + back.cycles.eval(env)
        assert charged == ((w - 2) * extra + max(store - body, 0) if within else (w - 1) * extra)
        if extra > 0:
            seen.add(within)
    assert seen == {True, False}


def _on_reader(cand: Candidate) -> Candidate:
    """`cand` with every load on the reader (flash decode's K and V on NoC0, Wormhole's
    choice at the paper's shapes; a small grid may split them)."""
    loads = tuple(replace(c, engine="reader") if c.kind == "load" else c for c in cand.copies)
    return replace(cand, copies=loads)


def _grid_loop(grid: Pipe) -> tuple[For, int]:
    assert isinstance(grid.body, Seq)
    for i, node in enumerate(grid.body.children):
        if isinstance(node, For):
            return node, i
    raise AssertionError("no loop in the grid body")


def test_a_grid_loop_fill_is_paid_once_when_its_engine_prefetches(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Flash decode: K and V stream on the reader and nothing after the loop waits on it,
    so the next wave's first block is fetched during this wave's last body."""
    b = buffered["flash_decode"]
    cand = _on_reader(enumerate_candidates(b, wormhole).candidates[0])
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    assert isinstance(problem.heg, Seq)
    waves, once = problem.heg.children[1], problem.heg.children[-1]
    assert isinstance(waves, For) and isinstance(waves.body, Pipe)
    assert isinstance(once, Leaf) and [t.kind for t in once.terms] == ["fill"]
    loop, at = _grid_loop(waves.body)
    assert loop.steady and isinstance(loop.body, Pipe)
    per_wave = waves.body.body.children[at + 1]  # type: ignore[attr-defined]
    assert isinstance(per_wave, Leaf) and per_wave.terms[0].kind == "fill"
    env = {n: d[-1] for n, d in problem.domains.items()}
    fill = sequential(loop.body).eval(env) - latency(loop.body).eval(env)
    assert fill > 0
    assert latency(loop).eval(env) == loop.trip.eval(env) * latency(loop.body).eval(env)
    # q is loaded by the same engine in the grid body: a double-buffered q lets the
    # reader run ahead, the fill is paid once. With one slot the compute pops q when the
    # loop ends (its carried results are gathered, so no iteration is peeled and q's wait
    # encloses the loop): the reader, having loaded the last V, waits while the compute
    # runs from V's first reader to the end of the iteration and its carries, r, less
    # what a compute-bound iteration leaves it anyway: max(0, r + l - T) per wave. The
    # last body's part that runs while V loads is no longer paid once.
    builder = HegBuilder(b, cand, wormhole, "HiFi4")
    (fd_loop,) = [op for op in b.program.body if isinstance(op, ForLoop)]
    assert not builder.peeled(fd_loop)
    body = loop.body.body
    assert isinstance(body, Seq) and isinstance(body.children[0], Leaf)
    terms = body.children[0].terms
    assert terms[0].kind == "matmul" and "bmm" in terms[0].what  # the scores read q
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
    cand = _on_reader(enumerate_candidates(b, wormhole).candidates[0])
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    waves = problem.heg.children[1]  # type: ignore[attr-defined]
    grid = waves.body
    loop, _ = _grid_loop(grid)
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
    loop, _ = _grid_loop(grid)
    assert not loop.steady
    problem = build_problem(b, replace(cand, stores_late=True), wormhole, "HiFi4", 1)
    grid = problem.heg.children[1].body  # type: ignore[attr-defined]
    loop, i = _grid_loop(grid)
    assert loop.steady and isinstance(loop.body, Pipe)
    per_wave = grid.body.children[i + 1]  # type: ignore[attr-defined]
    assert isinstance(per_wave, Leaf) and per_wave.terms[0].cycles == Const(0)
    env = {n: d[-1] for n, d in problem.domains.items()}
    fill = (sequential(loop.body) - latency(loop.body)).eval(env)
    once = problem.heg.children[-1]  # type: ignore[attr-defined]
    assert fill > 0 and fill in [t.cycles.eval(env) for t in once.terms if "fill of loop" in t.what]


def test_single_slot_loads_on_one_engine_refill_while_the_compute_holds_the_other(
    buffered, wormhole
) -> None:  # type: ignore[no-untyped-def]
    """Flash decode's K and V, single-slot, both issued by the reader, each in its own
    slot: the reader fetches the next K while the compute works from V and the next V
    while it computes from K, so an iteration lasts max(ℓ, m, l_K + h_K, l_V + h_V)
    (a slot's cycle: its load, then its hold from first to last reader), not ℓ + m."""
    b = buffered["flash_decode"]
    cand = _on_reader(enumerate_candidates(b, wormhole).candidates[0])
    grid, domains = grid_pipe(b, cand, wormhole)
    loop, _ = _grid_loop(grid)
    pipe = loop.body
    assert isinstance(pipe, Pipe) and pipe.unheld != Const(0)
    env = {n: d[-1] for n, d in domains.items()}
    env[pipe.b_load.name], env[pipe.b_store.name] = 0, 0
    ell, m = latency(pipe.load).eval(env), latency(pipe.body).eval(env)
    # K is read by the first op (the scores) only, V by the last (the update) only.
    body = pipe.body
    assert isinstance(body, Seq) and isinstance(body.children[0], Leaf)
    terms = body.children[0].terms
    assert "bmm" in terms[0].what and "acc_1_1" in terms[-1].what
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
    loop, _ = _grid_loop(grid_pipe(b, split, wormhole)[0])
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
    loop, _ = _grid_loop(grid)
    pipe = loop.body
    assert isinstance(pipe, Pipe) and pipe.unheld == Const(0)
    engines = {t.what.split(" on the ")[-1] for t in pipe.load.terms if t.what.startswith("load")}
    assert engines == {"reader", "writer"}
    env = {n: d[-1] for n, d in domains.items()}
    env[pipe.b_load.name], env[pipe.b_store.name] = 0, 1
    ell, m = latency(pipe.load).eval(env), latency(pipe.body).eval(env)
    assert latency(pipe).eval(env) == pytest.approx(max(ell + m, latency(pipe.store).eval(env)))


def test_a_multicast_group_s_sends_are_the_lowered_pipes() -> None:
    """The model reads the sends from the lowering's own rule (`multicast_pipes`): one
    send for a group along one column or row, two for a rectangle, from the corner the
    engine's NoC enters from."""
    assert HegBuilder.sends((8, 1), "reader") == (SendSpec(7, 7),)
    assert HegBuilder.sends((1, 8), "writer") == (SendSpec(7, 7),)
    # 4 rows x 2 columns: along the sender's row (1 core), then the other 3 rows (6)
    assert HegBuilder.sends((4, 2), "reader") == (SendSpec(1, 1), SendSpec(6, 4))
    assert HegBuilder.sends((4, 2), "writer") == (SendSpec(1, 1), SendSpec(6, 4))
    assert HegBuilder.sends((2, 4), "reader") == (SendSpec(3, 3), SendSpec(4, 4))


def _matmul_term(node):  # type: ignore[no-untyped-def]
    match node:
        case Leaf(terms=terms):
            return next((t for t in terms if t.kind == "matmul"), None)
        case Pipe(body=body) | For(body=body):
            return _matmul_term(body)
        case Seq(children=children):
            found = [t for c in children if (t := _matmul_term(c)) is not None]
            return found[0] if found else None
    return None


def test_a_matmul_fills_and_drains_its_pipeline_once_per_step(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Two K steps of one block cost the operation's fixed part twice: its overhead, one
    tile-matmul's unpack (the pipeline's fill) and one result tile's pack (its drain)."""
    b = buffered["gemm"]
    cand = enumerate_candidates(b, wormhole).candidates[0]
    problem = build_problem(b, cand, wormhole, "HiFi4", 1)
    term = _matmul_term(problem.heg)
    assert term is not None
    names = problem.tile_names
    env = {n: d[0] for n, d in problem.domains.items()}
    m_sym, n_sym = (a.tile.name for a in b.program.grid)
    (k_sym,) = (n for n in names if n not in (m_sym, n_sym))
    env.update({m_sym: 64, n_sym: 64})
    half, whole = ({**env, k_sym: k} for k in (128, 256))
    fixed = 2 * term.cycles.eval(half) - term.cycles.eval(whole)
    c = wormhole.compute
    unpack_one = 2 * c.unpack_cycles(2048)  # bf16 operand tiles
    assert fixed > c.op_overhead_cycles + unpack_one
    assert fixed - c.op_overhead_cycles - unpack_one in {
        c.pack_cycles(4096),
        c.pack_cycles(2048),
        c.pack_accumulate_cycles(4096),
        c.pack_accumulate_cycles(2048),
    }


def test_heads_a_multiple_of_the_bank_period_apart_start_on_the_same_banks(
    buffered, wormhole
) -> None:  # type: ignore[no-untyped-def]
    """Flash decode's K is [B·H, S, D], D = 64: 2 tiles wide, so pages step the bank by 2 a
    tile row and a head's S / 32 = 32 rows move it by 64. On Blackhole's 8 banks that is
    a multiple of 8: every core's block of its own head falls on the same banks, so the
    cores along the heads spread nothing. On Wormhole's 12 banks 64 mod 12 = 4: they do."""
    from loom.arch import load_arch

    b = buffered["flash_decode"]
    (loop,) = [op for op in b.program.body if isinstance(op, ForLoop)]
    (k,) = [op for op in loop.body if isinstance(op, Load) and op.tensor == "k"]
    for arch, spread in ((load_arch("blackhole_p150_13x10"), False), (wormhole, True)):
        cand = next(
            c
            for c in enumerate_candidates(b, arch).candidates
            if c.spatial.get("tile_b", 1) == 2 and c.spatial.get("tile_s", 1) == 1
        )
        banks = HegBuilder(b, cand, arch, "HiFi4").load_spec(k).banks
        assert banks is not None and banks.period == 2
        assert banks.row_blocks == (2 if spread else 1)


def test_a_block_narrower_than_the_bank_period_reads_only_its_banks(buffered) -> None:  # type: ignore[no-untyped-def]
    """GEMM's B [K, N] with N = 512 is 16 tiles wide: on Blackhole's 8 banks every tile
    row starts on bank 0, so the senders of B's column blocks, W tiles wide, each read
    the same few banks at every K step. The model's banks per sender are those the
    simulator places the block's pages on (`sim.transfers.window_bank_counts`), and its
    busiest read link is on those banks' routes; blocks as wide as the period spread evenly."""
    from loom.arch import load_arch
    from loom.sim.transfers import window_bank_counts

    arch = load_arch("blackhole_p150_13x10")
    b = buffered["gemm"]
    (loop,) = [op for op in b.program.body if isinstance(op, ForLoop)]
    (load_b,) = [op for op in loop.body if isinstance(op, Load) and op.tensor == "b"]
    k_tiles, n_tiles = (-(-d // 32) for d in b.program.arg("b").shape)
    nb = len(arch.dram.banks)
    cand = next(
        c
        for c in enumerate_candidates(b, arch).candidates
        if any(x.kind == "load" and x.tensor == "b" and x.mode == "multicast" for x in c.copies)
    )
    hb = HegBuilder(b, cand, arch, "HiFi4")
    spec = hb.load_spec(load_b)
    plan = hb.copy_of(load_b)
    m = cand.mapping
    senders = nocmap.load_readers(spec.engine, (m.cores_y, m.cores_x), plan.mode, plan.area)
    n_sym = b.program.grid[1].tile.name
    widths = {str(cond): share for cond, share in spec.narrow}
    domain = wave_domain(b.program.grid[1].tile, 512, m.spatial_factor(n_sym))
    assert widths and set(widths) == {f"{n_sym} == {t}" for t in domain if t < 256}
    for w in (t // 32 for t in domain if t < 256):
        reads = []
        for core in senders:
            col = m.spatial_index(n_sym, *core) * w
            counts = window_bank_counts(nb, n_tiles, 0, col, k_tiles, w)
            reads.append((core, tuple(i for i, n in enumerate(counts) if n)))
        noc = nocmap.NOC_OF_ENGINE[spec.engine]
        assert widths[f"{n_sym} == {32 * w}"] == nocmap.bank_read_peak(arch, noc, tuple(reads))
    # A's columns move with the K loop: it spreads over every bank.
    (load_a,) = [op for op in loop.body if isinstance(op, Load) and op.tensor == "a"]
    assert hb.load_spec(load_a).narrow == ()


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
