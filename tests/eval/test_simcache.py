"""The evaluation's simulation cache: one program simulated once across runs, read back
equal, and a different program or architecture never served another's result."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from loom.arch import load_arch
from loom.eval import simcache
from loom.flows.tracecache import TraceCache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
from sim_programs import dram_read_program


def test_a_program_is_simulated_once_and_read_back_equal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arch = load_arch("wormhole_n150")
    program = dram_read_program((2, 2), blocks=3, block_rows=1, block_cols=2)
    cache = TraceCache(tmp_path)
    first = simcache.simulate_cached(program, arch, cache)

    def no_simulation(*_: object) -> None:
        raise AssertionError("simulated again")

    monkeypatch.setattr(simcache, "simulate", no_simulation)
    noted = dataclasses.replace(program, notes=("a note the simulator never reads",))
    again = simcache.simulate_cached(noted, arch, cache)
    assert dataclasses.replace(again, wall_seconds=0.0) == dataclasses.replace(
        first, wall_seconds=0.0
    )


def test_another_program_or_arch_has_another_key() -> None:
    wh, bh = load_arch("wormhole_n150"), load_arch("blackhole_p150_13x10")
    a = dram_read_program((2, 2), blocks=3, block_rows=1, block_cols=2)
    b = dram_read_program((2, 2), blocks=4, block_rows=1, block_cols=2)
    assert simcache.sim_key(a, wh) == simcache.sim_key(a, wh)
    assert len({simcache.sim_key(a, wh), simcache.sim_key(b, wh), simcache.sim_key(a, bh)}) == 3


def test_equal_programs_have_one_key_whatever_their_objects_share() -> None:
    """The key hashes values: a program whose streams hold copies of what another's share
    (as two processes' lowerings may) and whose expressions cached evaluations since has
    the same key."""
    import copy

    arch = load_arch("wormhole_n150")
    program = dram_read_program((2, 2), blocks=3, block_rows=1, block_cols=2)
    key = simcache.sim_key(program, arch)
    simcache.simulate(program, arch)  # expressions cache their evaluations on themselves
    copied = dataclasses.replace(
        program,
        reader=tuple(copy.deepcopy(s) for s in program.reader),
        compute=tuple(copy.deepcopy(s) for s in program.compute),
        writer=tuple(copy.deepcopy(s) for s in program.writer),
    )
    assert simcache.sim_key(program, arch) == simcache.sim_key(copied, arch) == key
