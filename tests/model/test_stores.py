"""Where a store runs (`loom.model.stores`): after the body when its engine also loads
inside it, or one wave late, and the waves at the ends of such a program."""

from __future__ import annotations

import itertools
from dataclasses import replace

from model_graphs import grid_pipe

from loom.ir.problem import For, Leaf, Seq, Stage, latency
from loom.mapping import enumerate_candidates
from loom.model import build_problem


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


def test_a_writer_that_gathers_is_not_apart_from_the_pass(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """A split reduction's writer gathers the partials in the body before it stores, so a
    single store block holds it back as a load would: its pipes keep l + m + s at
    b_load = b_store = 0 (`Pipe.store_apart` False)."""
    b = buffered["flash_decode"]
    storing = 0
    for cand in enumerate_candidates(b, wormhole).candidates[:40]:
        assert any(c.mode == "gather" for c in cand.copies)
        grid, _ = grid_pipe(b, cand, wormhole)
        storing += bool(grid.store.terms)
        assert not grid.store_apart
    assert storing
