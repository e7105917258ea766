"""Launches timed one after the other: each launch's own time plus a grid barrier at
each boundary (a Helion kernel whose hl.barrier phases read other blocks' tiles)."""

from __future__ import annotations

from sim_programs import dram_read_program

from loom.arch import load_arch
from loom.sim import from_arch, grid_barrier_cycles, simulate, simulate_launches


def test_two_launches_cost_both_and_the_barrier_over_the_cores_of_either() -> None:
    arch = load_arch("wormhole_n150")
    a = dram_read_program((2, 4), blocks=4, block_rows=1, block_cols=2)
    b = dram_read_program((4, 2), blocks=2, block_rows=2, block_cols=1)
    ra, rb = simulate(a, arch), simulate(b, arch)
    both = simulate_launches((a, b), arch)
    barrier = grid_barrier_cycles(from_arch(arch), (4, 4))  # the union of 2x4 and 4x2
    assert barrier > 0
    assert both.cycles == ra.cycles + rb.cycles + barrier
    assert both.kernel_cycles == ra.kernel_cycles + rb.kernel_cycles + barrier
    assert both.launch_cycles == ra.launch_cycles + rb.launch_cycles
    read = ra.bytes_moved.dram_read + rb.bytes_moved.dram_read
    assert both.bytes_moved.dram_read == read
    assert both.grid == (4, 4)


def test_one_launch_is_simulated_as_it_is() -> None:
    arch = load_arch("wormhole_n150")
    a = dram_read_program((2, 2), blocks=2, block_rows=1, block_cols=1)
    assert simulate_launches((a,), arch).cycles == simulate(a, arch).cycles
