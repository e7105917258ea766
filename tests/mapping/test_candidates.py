"""The walkthrough's eight questions about mapping, reuse and multicast, as tests."""

from __future__ import annotations

import itertools
import math

import pytest

from loom.ir.tile import accesses
from loom.mapping import enumerate_candidates
from loom.mapping.views import ordered_factorizations
from loom.symbolic import Expr


@pytest.fixture(scope="module")
def sets(buffered, wormhole):  # type: ignore[no-untyped-def]
    return {name: enumerate_candidates(b, wormhole) for name, b in buffered.items()}


def test_q1_mapping_leaves_logical_shapes_unchanged(sets, tile_programs) -> None:  # type: ignore[no-untyped-def]
    for name, cs in sets.items():
        assert cs.buffered.program is tile_programs[name]
        windows = [getattr(op, "window", None) for op in accesses(tile_programs[name].body)]
        for cand in cs.candidates:
            assert len(cand.copies) == len(windows)
        assert windows == [getattr(op, "window", None) for op in accesses(cs.buffered.program.body)]


def _independent_view_count(grid: int, tiles: dict[str, int], orders: list[tuple[str, ...]]) -> int:
    """Count pruned views by brute force over level tuples (not using loom.mapping.views)."""

    def dim_options(order: tuple[str, ...]) -> list[tuple[tuple[int, str], ...]]:
        opts: list[tuple[tuple[int, str], ...]] = [()]
        for n_levels in (1, 2):
            for sizes in itertools.product(range(2, grid + 1), repeat=n_levels):
                used = math.prod(sizes)
                if used > grid or (used % 2 and used != grid):  # occupancy: even or all
                    continue
                for axes in itertools.permutations(order, n_levels):
                    if [order.index(a) for a in axes] == sorted(order.index(a) for a in axes):
                        opts.append(tuple(zip(sizes, axes, strict=True)))
        return opts

    views = set()
    for order in orders:
        for x, y in itertools.product(dim_options(order), repeat=2):
            factor = {a: math.prod(s for s, b in x + y if b == a) for a in tiles}
            if all(factor[a] <= tiles[a] for a in tiles):  # no more cores than tiles
                views.add((x, y))
    return len(views)


def test_q2_candidate_counts(sets) -> None:  # type: ignore[no-untyped-def]
    counts = {n: (cs.candidates_total, len(cs.candidates)) for n, cs in sets.items()}
    # GEMM's A and B are split between the engines: the candidate with both multicast has
    # a second realization with both on the reader (FA/FD's K and V are interchangeable)
    # and a third storing one wave late (`__sl`); so has a flash attention candidate whose
    # writer multicasts K or V, which the count made without building the candidates
    # leaves out (the engines are chosen per candidate: the share pruned is understated)
    assert counts == {"gemm": (1241, 755), "flash_attention": (99, 100), "flash_decode": (119, 75)}
    gemm = sets["gemm"]
    expected = _independent_view_count(
        8, {"tile_m": 256 // 32, "tile_n": 512 // 32}, list(gemm.orders)
    )
    assert len({c.mapping.levels for c in gemm.candidates}) == expected == 218
    # every view has one candidate per on/off choice of each group of multicastable loads,
    # and the one with A and B both multicast also has both on the reader (`__rd`) and
    # its twin storing one wave late (`__sl`)
    for levels in {c.mapping.levels for c in gemm.candidates}:
        same_view = [c for c in gemm.candidates if c.mapping.levels == levels]
        groups = {p.tensor for c in same_view for p in c.copies if p.mode == "multicast"}
        assert len(same_view) == 2 ** len(groups) + 2 * (groups == {"a", "b"})
        late = [c for c in same_view if c.stores_late]
        assert [c.name for c in late] == [c.name for c in same_view if c.name.endswith("__sl")]
        for c in late:
            (twin,) = [t for t in same_view if t.name == c.name.removesuffix("__sl")]
            assert c.copies == twin.copies and {p.mode for p in c.copies if p.kind == "load"} == {
                "multicast"
            }
        for c in same_view:
            loads = [p for p in c.copies if p.kind == "load"]
            if c.name.endswith("__rd"):
                assert {p.engine for p in loads} == {"reader"}
                assert {p.mode for p in loads} == {"multicast"}
            else:
                assert {p.engine for p in loads} == {"reader", "writer"}


def test_q3_spatial_bounds_match_hardware(sets, wormhole) -> None:  # type: ignore[no-untyped-def]
    for cs in sets.values():
        for c in cs.candidates:
            assert c.mapping.cores_x <= wormhole.grid_x and c.mapping.cores_y <= wormhole.grid_y
            for dim in ("x", "y"):
                sizes = [lv.size for lv in c.mapping.levels_of(dim)]
                assert all(s >= 2 for s in sizes) and [
                    lv.level for lv in c.mapping.levels_of(dim)
                ] == list(range(len(sizes)))


def test_q4_core_plus_wave_reconstructs_the_tile_index(sets) -> None:  # type: ignore[no-untyped-def]
    cand = next(c for c in sets["gemm"].candidates if c.name.startswith("gemm__x4x2_y2y4__"))
    m = cand.mapping
    for axis, tiles in (("tile_m", 8), ("tile_n", 16)):  # e.g. tile_m = 32, tile_n = 32
        factor = m.spatial_factor(axis)
        waves = tiles // factor
        seen = sorted(
            m.spatial_index(axis, y, x) + w * factor
            for y in range(m.cores_y)
            for x in range(m.cores_x)
            for w in range(waves)
        )
        others = m.num_cores // factor  # cores that differ only in other axes
        assert seen == sorted(list(range(tiles)) * others)


def test_q5_reuse_follows_offset_dependences(sets) -> None:  # type: ignore[no-untyped-def]
    gemm = sets["gemm"]
    a, b, out = gemm.accesses
    assert (a.grid_axes, b.grid_axes, out.grid_axes) == (
        ("tile_m",),
        ("tile_n",),
        ("tile_m", "tile_n"),
    )
    for c in gemm.candidates:
        ra, rb, ro = (p.reuse for p in c.copies)
        assert ra.spatial == (c.spatial["tile_n"] > 1) and rb.spatial == (c.spatial["tile_m"] > 1)
        assert not ro.spatial and not ra.sequential  # A depends on the k loop
    fa = sets["flash_attention"]
    q, k, _, _ = fa.accesses
    assert k.loop_deps == ("tile_n",) and q.loops == () and k.grid_axes == ("tile_b",)
    for c in fa.candidates:
        rq, rk, rv, _ = (p.reuse for p in c.copies)
        assert not rq.spatial  # q depends on both grid axes
        assert rk.spatial == rv.spatial == (c.spatial["tile_m"] > 1)
        assert rq.sequential is False and rk.sequential is False


def test_q6_multicast_directions_match_reuse(sets) -> None:  # type: ignore[no-untyped-def]
    for cs in sets.values():
        for c in cs.candidates:
            for info, plan in zip(cs.accesses, c.copies, strict=True):
                if plan.mode != "multicast":
                    continue
                assert plan.reuse.spatial
                for label in plan.levels:
                    level = next(lv for lv in c.mapping.levels if f"{lv.dim}{lv.level}" == label)
                    assert level.axis not in info.grid_axes
    two_d = [
        c
        for c in sets["gemm"].candidates
        if c.name.startswith("gemm__x8_y8__x0m_y0n__")
        and "a-mc" in c.name
        and "b-mc" in c.name
        and not c.name.endswith(("__rd", "__sl"))
    ]
    (cand,) = two_d
    a, b, _ = cand.copies
    assert (a.area, b.area) == ((8, 1), (1, 8))  # A along y (rows of cores), B along x


def test_q7_output_writeback_is_unicast(sets) -> None:  # type: ignore[no-untyped-def]
    for cs in sets.values():
        for c in cs.candidates:
            for plan in c.copies:
                if plan.kind == "store":
                    assert plan.mode == "unicast" and plan.area == (1, 1)


def test_q8_candidates_describe_choices_not_values(sets) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import fields

    from loom.ir.candidate import Candidate

    assert {f.name for f in fields(Candidate)} == {
        "name",
        "mapping",
        "order",
        "copies",
        "spatial",
        "waves",
        "gather_axes",
        "stores_late",
    }
    for c in sets["gemm"].candidates:
        assert all(isinstance(w, Expr) for w in c.waves.values())
        if c.spatial["tile_n"] < 16:  # the wave count depends on the (unsolved) tile size
            assert c.waves["tile_n"].free_names() == {"tile_n"}


def test_decode_gathers_over_the_split_axis(sets) -> None:  # type: ignore[no-untyped-def]
    fd = sets["flash_decode"]
    assert all(o[0] == "tile_s" for o in fd.orders)
    split = [c for c in fd.candidates if c.spatial["tile_s"] > 1]
    assert split
    for c in split:
        gathers = [p for p in c.copies if p.mode == "gather"]
        assert len(gathers) == 3 and all(math.prod(p.area) == c.spatial["tile_s"] for p in gathers)


def test_exploration_is_deterministic_on_both_meshes(buffered, wormhole) -> None:  # type: ignore[no-untyped-def]
    """Enumeration gives the same candidates, in the same order, every time (its speed is
    measured by benchmarks/compile_time.py, not asserted here)."""
    from loom.arch import load_arch

    for arch in (wormhole, load_arch("blackhole_12x10")):
        first = enumerate_candidates(buffered["gemm"], arch)
        again = enumerate_candidates(buffered["gemm"], arch)
        names = [c.name for c in first.candidates]
        assert names and names == [c.name for c in again.candidates]
        assert first.candidates_total >= len(names)


def test_factorizations() -> None:
    assert ordered_factorizations(8) == ((2, 2, 2), (2, 4), (4, 2), (8,))
    assert ordered_factorizations(1) == ((),)
    assert all(math.prod(f) == 12 for f in ordered_factorizations(12))
    assert len(list(itertools.chain(ordered_factorizations(6)))) == 3
