"""The transfer specs of loads (`loom.model.transfers`): a multicast group's sends and
where the blocks fall on the DRAM banks."""

from __future__ import annotations

from loom.arch import noc as nocmap
from loom.ir.tile import ForLoop, Load
from loom.mapping import enumerate_candidates
from loom.model.domains import wave_domain
from loom.model.primitives import SendSpec
from loom.model.transfers import Transfers


def test_a_multicast_group_s_sends_are_the_lowered_pipes() -> None:
    """The model reads the sends from the lowering's own rule (`multicast_pipes`): one
    send for a group along one column or row, two for a rectangle, from the corner the
    engine's NoC enters from."""
    assert Transfers.sends((8, 1), "reader") == (SendSpec(7, 7),)
    assert Transfers.sends((1, 8), "writer") == (SendSpec(7, 7),)
    # 4 rows x 2 columns: along the sender's row (1 core), then the other 3 rows (6)
    assert Transfers.sends((4, 2), "reader") == (SendSpec(1, 1), SendSpec(6, 4))
    assert Transfers.sends((4, 2), "writer") == (SendSpec(1, 1), SendSpec(6, 4))
    assert Transfers.sends((2, 4), "reader") == (SendSpec(3, 3), SendSpec(4, 4))


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
        banks = Transfers(b, cand, arch, "HiFi4").load_spec(k).banks
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
    hb = Transfers(b, cand, arch, "HiFi4")
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
