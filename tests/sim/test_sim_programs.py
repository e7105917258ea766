"""simulate() on hand-built Programs: conservation, exactness, monotonicity, deadlock."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_programs import GemmConfig, dram_read_program, gemm_program, pipe_program

from loom.arch import Arch, load_arch
from loom.errors import SimulationError
from loom.ir.program import (
    Buffer,
    Compute,
    DramTensor,
    FillExpr,
    Pipe,
    PipeNet,
    Program,
    Receive,
    Reserve,
    Wait,
    WriteDram,
)
from loom.sim import SimOptions, SimParams, from_arch, simulate, trace_json
from loom.symbolic import Const

WH = "wormhole_n150"


@pytest.fixture(scope="module")
def wh() -> Arch:
    return load_arch(WH)


SMALL = GemmConfig(384, 256, 512, (3, 2), 4, 4, 4, dtype="bf16")


def _tile(arch: Arch, dtype: str = "bf16") -> int:
    return arch.tile.bytes(dtype)


@pytest.mark.parametrize("mcast", [True, False])
def test_bytes_moved_match_the_program(wh: Arch, mcast: bool) -> None:
    cfg = dataclasses.replace(SMALL, mcast=mcast)
    r = simulate(gemm_program(cfg), wh)
    mt, nt, kt = cfg.m // 32, cfg.n // 32, cfg.k // 32
    rows, cols = cfg.grid
    tile = _tile(wh)
    # with multicast each A row-block is read once per grid row, else once per core
    a_reads = mt * kt * (1 if mcast else cols)
    b_reads = kt * nt * (1 if mcast else rows)
    assert r.bytes_moved.dram_read == (a_reads + b_reads) * tile
    assert r.bytes_moved.dram_write == mt * nt * tile
    if mcast:  # grid rows of 2 cores: A goes by unicast; columns of 3: B by multicast
        assert r.bytes_moved.noc_unicast == mt * kt * (cols - 1) * tile
        assert r.bytes_moved.noc_multicast == kt * nt * tile
        assert r.bytes_moved.noc_multicast_delivered == kt * nt * (rows - 1) * tile
    else:
        assert r.bytes_moved.noc_multicast == 0
    assert r.flops == 2 * cfg.m * cfg.n * cfg.k


def _one_tile_program() -> Program:
    """One core fills one tile and writes it to DRAM."""
    return Program(
        kernel="one_tile",
        arch=WH,
        grid=(1, 1),
        tensors=(DramTensor("C", (32, 32), "bf16", "output", 1, 1),),
        buffers=(Buffer("o", 1, 1, "bf16", 1, "store"),),
        nets=(),
        reader=(),
        compute=(Reserve("o", (Compute("o", FillExpr(0.0, 1, 1)),)),),
        writer=(Wait(("o",), (WriteDram("o", "C", Const(0), Const(0), 1, 1),)),),
    )


def test_one_tile_is_exact(wh: Arch) -> None:
    """Fill one BF16 tile (pack-bound), then write it to bank 0 over NoC1."""
    c, noc, dram = wh.compute, wh.noc, wh.dram
    tile = _tile(wh)
    pack = tile / c.pack_bytes_per_cycle
    compute = c.op_overhead_cycles + max(c.eltwise("copy"), pack) + pack  # + drain
    # one page lives in one bank: the bank, not the per-engine interleaved rate, caps it
    rate = min(
        noc.size_bandwidth(tile),
        tile / noc.issue_cycles,
        dram.bank_bytes_per_cycle * dram.efficiency,
        noc.link_effective_bytes_per_cycle,
    )
    write = tile / rate + dram.write_latency_cycles
    r = simulate(_one_tile_program(), wh)
    assert r.kernel_cycles == pytest.approx(compute + write, rel=1e-12)
    assert r.cycles == pytest.approx(
        compute + write + wh.us_to_cycles(wh.fixed.program_launch_us), rel=1e-12
    )


def test_one_block_unicast_is_exact(wh: Arch) -> None:
    """Handshake (one semaphore write), then one 2-tile write over one hop."""
    r = simulate(pipe_program((1, 2), blocks=1, block_tiles=2, cols=2), wh)
    noc = wh.noc
    nbytes = 2 * _tile(wh)
    rate = min(
        noc.size_bandwidth(nbytes), nbytes / noc.issue_cycles, noc.link_effective_bytes_per_cycle
    )
    # write latency: semaphore_cycles is a one-hop write, and so is this one
    expected = wh.fixed.semaphore_cycles + nbytes / rate + wh.fixed.semaphore_cycles
    assert r.kernel_cycles == pytest.approx(expected, rel=1e-12)


def _scaled(params: SimParams, k: float) -> SimParams:
    return dataclasses.replace(
        params,
        link_bytes_per_cycle=params.link_bytes_per_cycle * k,
        size_table=tuple((s, b * k) for s, b in params.size_table),
        bank_bytes_per_cycle=params.bank_bytes_per_cycle * k,
        dram_reader_bytes_per_cycle=params.dram_reader_bytes_per_cycle * k,
        dram_writer_bytes_per_cycle=params.dram_writer_bytes_per_cycle * k,
        multicast_bytes_per_cycle=params.multicast_bytes_per_cycle * k,
    )


PROGRAMS = {
    "gemm_mcast": gemm_program(SMALL),
    "gemm_unicast": gemm_program(dataclasses.replace(SMALL, mcast=False)),
    "dram_read": dram_read_program((2, 4), blocks=6, block_rows=2, block_cols=4),
    "pipe": pipe_program((1, 4), blocks=4, block_tiles=4, cols=4),
}


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(sorted(PROGRAMS)), st.floats(1.0, 4.0))
def test_more_bandwidth_is_never_slower(name: str, k: float) -> None:
    arch = load_arch(WH)
    base = from_arch(arch)
    slow = simulate(PROGRAMS[name], arch, params=base).cycles
    fast = simulate(PROGRAMS[name], arch, params=_scaled(base, k)).cycles
    assert fast <= slow * (1 + 1e-9)


@pytest.mark.parametrize(
    "field", ["bank_bytes_per_cycle", "dram_reader_bytes_per_cycle", "link_bytes_per_cycle"]
)
def test_one_faster_resource_is_never_slower(wh: Arch, field: str) -> None:
    base = from_arch(wh)
    program = PROGRAMS["dram_read"]
    faster = dataclasses.replace(base, **{field: getattr(base, field) * 2})
    assert simulate(program, wh, params=faster).cycles <= simulate(program, wh).cycles


def test_double_buffering_overlaps_reads(wh: Arch) -> None:
    single = dram_read_program((1, 1), blocks=8, block_rows=2, block_cols=2, depth=1)
    double = dram_read_program((1, 1), blocks=8, block_rows=2, block_cols=2, depth=2)
    assert simulate(double, wh).cycles <= simulate(single, wh).cycles


def test_missing_receive_is_a_deadlock(wh: Arch) -> None:
    program = pipe_program((1, 4), blocks=2, block_tiles=1, cols=4, receive_on=(1, 3))
    with pytest.raises(
        SimulationError,
        match=r"deadlock: .* core \(0,0\) reader waits in "
        r"Send #1 on net 'net' for receivers \(0,2\)",
    ):
        simulate(program, wh)


def test_deadlock_names_buffers(wh: Arch) -> None:
    program = dataclasses.replace(_one_tile_program(), compute=())
    with pytest.raises(
        SimulationError,
        match=r"core \(0,0\) writer waits for a filled "
        r"block of 'o' \(depth 1",
    ):
        simulate(program, wh)


def test_receive_without_pipe_is_reported(wh: Arch) -> None:
    program = dataclasses.replace(
        _one_tile_program(),
        nets=(PipeNet("n", "multicast", (Pipe((0, 0), (0, 1), (0, 1)),)),),
        reader=(Reserve("o", (Receive("o", "n"),)),),
        compute=(),
    )
    with pytest.raises(SimulationError, match=r"Receive on net 'n' but is reached by no pipe"):
        simulate(program, wh)


def test_grid_too_large_is_reported(wh: Arch) -> None:
    program = dataclasses.replace(_one_tile_program(), grid=(9, 9))
    with pytest.raises(
        SimulationError,
        match=r"9x9 grid but architecture 'wormhole_n150' has "
        r"8x8 cores",
    ):
        simulate(program, wh)


def test_unknown_dtype_is_reported(wh: Arch) -> None:
    program = dataclasses.replace(
        _one_tile_program(), buffers=(Buffer("o", 1, 1, "int3", 1, "store"),)
    )
    with pytest.raises(SimulationError, match=r"dtype 'int3'.* known dtypes: bf16"):
        simulate(program, wh)


def test_trace_has_engine_link_and_bank_tracks(wh: Arch) -> None:
    r = simulate(PROGRAMS["gemm_mcast"], wh, trace=True)
    doc = json.loads(trace_json(r.trace_events))
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and "name" in e["args"]}
    assert {"reader", "compute", "writer", "core (1,1)", "NoC0 links", "DRAM banks"} <= names
    assert any(e["ph"] == "X" and e["name"].startswith("compute") for e in events)
    assert any(e["ph"] == "C" and e["name"].startswith("bank") for e in events)
    assert any(e["ph"] == "C" and e["name"].startswith("row") for e in events)


def test_result_fields(wh: Arch) -> None:
    r = simulate(PROGRAMS["gemm_mcast"], wh)
    assert r.cycles == pytest.approx(r.kernel_cycles + r.launch_cycles)
    assert r.us == pytest.approx(wh.cycles_to_us(r.cycles))
    assert r.tflops == pytest.approx(r.flops / (r.us * 1e6))
    assert 0 < r.utilization < 1
    assert 0 < r.busy("compute").min <= r.busy("compute").mean <= r.busy("compute").max <= 1
    assert len(r.dram_bank_utilization) == len(wh.dram.banks)
    assert all(0 <= u <= 1 + 1e-9 for u in r.dram_bank_utilization)
    assert r.link_utilization[0].utilization <= 1 + 1e-9
    assert r.events > 0 and "TFLOPS" in r.summary()
    no_launch = simulate(PROGRAMS["gemm_mcast"], wh, options=SimOptions(include_launch=False))
    assert no_launch.cycles == pytest.approx(r.kernel_cycles)


def test_links_carry_the_bytes_moved_across_idle_gaps(wh: Arch) -> None:
    """Blocks multicast along a row one at a time, the network empty between them: each
    link of the tree carries each block once, so the utilization times the link's
    bandwidth and the run is the bytes multicast (none counted over the gaps)."""
    r = simulate(pipe_program((1, 8), blocks=6, block_tiles=4, cols=8), wh)
    cap = from_arch(wh).link_bytes_per_cycle
    assert r.link_utilization
    for link in r.link_utilization:
        carried = link.utilization * cap * r.kernel_cycles
        assert carried == pytest.approx(r.bytes_moved.noc_multicast, rel=1e-12)


def test_packer_accumulation_saves_reloads(wh: Arch) -> None:
    program = PROGRAMS["gemm_mcast"]
    reload = simulate(program, wh, options=SimOptions(packer_l1_acc=False)).cycles
    assert simulate(program, wh).cycles <= reload


def test_blackhole_runs_the_same_program() -> None:
    bh = load_arch("blackhole_p150")
    r = simulate(PROGRAMS["gemm_mcast"], bh)
    assert r.arch == "blackhole_p150" and r.tflops > 0
