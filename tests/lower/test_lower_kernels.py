"""The Program shapes produced for GEMM, flash attention and flash decode."""

from __future__ import annotations

from cases import FAST
from programs import lowered
from schedules import mapping_of
from walk import all_events

from loom.ir.multicast import multicast_pipes
from loom.ir.program import (
    IfCore,
    Loop,
    Program,
    ReceiveAll,
    ReceiveEach,
    Reserve,
    Wait,
    walk_stmts,
)
from loom.lower.mesh import spatial_index
from loom.lower.printer import format_program

CASES = {c.id: c for c in FAST}


def program(case_id: str) -> Program:
    return lowered(CASES[case_id])


def test_gemm_summa_multicast_program() -> None:
    p = program("gemm512-wh-mcast-ab-2buf")
    assert p.grid == (8, 8)
    bufs = {b.name: (b.role, b.rows, b.cols, b.dtype, b.depth) for b in p.buffers}
    assert bufs == {
        "acc": ("state", 2, 2, "fp32", 2),
        "a_tile": ("load", 2, 4, "bf16", 2),
        "b_tile": ("load", 4, 2, "bf16", 2),
        "out_out": ("store", 2, 2, "bf16", 1),
    }
    # A's senders share a column, so A goes on the writer (NoC1, north then west: the
    # reads' last legs run along rows) and each row's sender is its last core
    a_net = p.net("mcast_a_tile")
    assert [(pp.src, pp.dst_y, pp.dst_x) for pp in a_net.pipes][:2] == [
        ((0, 7), (0, 1), (0, 7)),
        ((1, 7), (1, 2), (0, 7)),
    ]
    text = format_program(p)
    assert "read a[2*core_y, 4*tile_k_id] 2x4 -> a_tile" in text
    assert "read b[4*tile_k_id, 2*core_x] 4x2 -> b_tile" in text
    assert "acc = add(acc, matmul(a_tile, b_tile))" in text
    assert "write out_out -> out[2*core_y, 2*core_x] 2x2" in text


def _streams(case_id: str) -> tuple[str, str]:
    text = format_program(program(case_id))
    return text.split("writer:")[0].split("reader:")[1], text.split("writer:")[1]


def test_gemm_operands_stream_on_both_engines() -> None:
    """A is read by the reader (NoC0) and B by the writer (NoC1), in parallel."""
    reader, writer = _streams("gemm512-wh-unicast-1buf")
    assert "read a[" in reader and "read b[" not in reader
    assert "read b[" in writer and "read a[" not in writer


def test_multicast_senders_in_one_column_read_on_the_writer() -> None:
    """A's eight senders stand in one column: on NoC0 their reads would all end on that
    column's links, on NoC1 each ends along its own row; B's stand in one row. So the
    lowering trades the plan's engines (A on the reader, B on the writer)."""
    reader, writer = _streams("gemm512-wh-mcast-ab-2buf")
    assert "read b[" in reader and "read a[" not in reader
    assert "read a[" in writer and "read b[" not in writer


def test_gemm_waves_cover_the_sub_mesh() -> None:
    p = program("gemm1024-wh-4x4-waves")
    assert p.grid == (4, 4)
    text = format_program(p)
    assert "loop tile_m_wave < 2:" in text and "loop tile_n_wave < 2:" in text
    assert "out[4*core_y + 16*tile_m_wave, 4*core_x + 16*tile_n_wave] 4x4" in text


def test_two_dimensional_multicast_uses_a_row_net_and_a_net_for_the_other_rows() -> None:
    p = program("gemm512-wh-2d-mcast")
    # a: unicast on the reader; b: multicast by the writer (NoC1, north then west) from
    # the bottom-right core of each 2x4 group: that order loads the busiest NoC link less
    # (loom.arch.noc.choose_load_engines), and simulates faster than the other
    assert {n.name for n in p.nets} == {"mcast_b_tile", "mcast_b_tile_above"}
    row, above = p.net("mcast_b_tile"), p.net("mcast_b_tile_above")
    assert row.pipes[0].src == above.pipes[0].src == (1, 3)
    assert (row.pipes[0].dst_y, row.pipes[0].dst_x) == ((1, 2), (0, 3))
    assert (above.pipes[0].dst_y, above.pipes[0].dst_x) == ((0, 1), (0, 4))


def test_a_noc1_multicast_is_sent_from_the_bottom_right_core() -> None:
    """NoC1 runs north then west, so its tree enters a group from the bottom-right."""
    row, rest = multicast_pipes((4, 8), (2, 4), last=True)
    assert [(p.src, p.dst_y, p.dst_x) for p in row] == [
        ((1, 3), (1, 2), (0, 3)),
        ((1, 7), (1, 2), (4, 7)),
        ((3, 3), (3, 4), (0, 3)),
        ((3, 7), (3, 4), (4, 7)),
    ]
    assert [(p.src, p.dst_y, p.dst_x) for p in rest][:2] == [
        ((1, 3), (0, 1), (0, 4)),
        ((1, 7), (0, 1), (4, 8)),
    ]


def test_mixed_radix_views_match_the_schedule_convention() -> None:
    case = CASES["gemm-wh-mixed-radix"]
    mapping = mapping_of(case.view)
    for axis in ("tile_m", "tile_n"):
        expr = spatial_index(mapping, axis)
        for y in range(8):
            for x in range(8):
                env = {"core_y": y, "core_x": x}
                assert expr.eval(env) == mapping.spatial_index(axis, y, x)


def test_flash_attention_peels_the_last_iteration_of_an_unread_carried_max() -> None:
    p = program("fa-d64-wh-mcast-kv-waves")
    (wave,) = p.compute
    assert isinstance(wave, Loop)
    loops = [s for s in walk_stmts(wave.body) if isinstance(s, Loop)]
    assert [str(s.count) for s in loops] == ["7"]
    text = format_program(p)
    assert text.count("m_i = m_ij") == 1  # only inside the loop: the peeled copy drops it
    assert text.count("l_i = add(mul(l_i, alpha), row_sum(exp))") == 2
    assert "out_out = div(acc, bcast(l_i, 2))" in text


def test_flash_attention_single_kv_step_is_just_the_peeled_iteration() -> None:
    p = program("fa-d64-bh-one-kv-step")
    assert not [s for s in walk_stmts(p.compute) if isinstance(s, Loop)]


def test_flash_decode_pops_q_when_its_loop_ends() -> None:
    """Flash decode gathers the loop's carried results, so no iteration is peeled and the
    wait on what the scores read encloses the whole loop (`loom.model.slots.Slots.pop_stall`
    charges it for a loaded block). The scores read q scaled once before the loop
    (`loom.frontend.hoist`): q's own wait ends at that multiply, so the reader may load the
    next q meanwhile, and the scaled copy, the compute's own buffer, is held to the loop's end."""
    p = program("fd-wh-no-split")
    waits = {s.buffers: s for s in walk_stmts(p.compute) if isinstance(s, Wait)}
    assert [type(s) for s in waits[("q_tile",)].body] == [Reserve]
    assert [type(s) for s in waits[("q_tile_scaled",)].body] == [Loop]


def test_flash_decode_gathers_partials_to_the_split_owner() -> None:
    p = program("fd-bh-split8-waves-mcast-q")
    gather = p.net("gather_tile_s")
    assert gather.kind == "gather" and len(gather.pipes) == 28  # 32 cores, 4 owners
    assert all(
        pipe.dst_y == (0, 1) and pipe.dst_x == (pipe.src[1], pipe.src[1] + 1)
        for pipe in gather.pipes
    )
    writer = all_events(p, "writer")
    sends = [e for e in writer[(3, 1)] if e.kind == "send"]
    assert len(sends) == 2 * 4  # per wave: max twice (two passes), sum, output
    recvs = [e for e in writer[(0, 1)] if e.kind == "recv"]
    assert len(recvs) == 2 * 7 * 4
    recv_stmts = [s for s in walk_stmts(p.writer) if isinstance(s, ReceiveAll | ReceiveEach)]
    assert [type(s).__name__ for s in recv_stmts] == ["ReceiveAll", "ReceiveEach"]
    assert recv_stmts[1].buffers == ("m_all", "l_all", "acc_all")


def test_flash_decode_owner_merges_in_two_passes() -> None:
    text = format_program(program("fd-bh-split8-waves-mcast-q"))
    assert "m_max = m_i\n" in text  # the owner's own partial starts the max
    assert "m_max = maximum(m_max, m_all)" in text
    assert "weight = exp(sub(m_all, m_max))" in text
    assert "o_sum = add(o_sum, mul(acc_all, bcast(weight, 2)))" in text
    assert "out_out = div(o_sum, bcast(l_sum, 2))" in text


def test_flash_decode_without_a_split_has_no_gather() -> None:
    p = program("fd-wh-no-split")
    assert p.nets == ()
    assert not [s for s in walk_stmts(p.compute) if isinstance(s, IfCore)]


def test_state_blocks_are_held_while_the_next_one_is_reserved() -> None:
    p = program("gemm512-wh-unicast-1buf")
    waits = [s for s in walk_stmts(p.compute) if isinstance(s, Wait) and "acc" in s.buffers]
    assert waits and p.buffer("acc").depth == 2
