"""A kernel's roofline on a chip: the shortest time its compulsory work allows.

The bound every schedule of the kernel is measured against (`loom eval`'s fraction of
roofline, the report's roofline). It depends on the kernel, its shape, formats and the
math fidelity only, never on the schedule, and is taken over the whole compute grid: the
pick chooses its own core count, so a bound over the cores it happened to use would
flatter a pick that leaves cores idle.

Three resources, each at its peak from the architecture description; the bound is the
busiest (`RooflineBound.cycles`):

* math: the matmul flops at the FPU's peak for the fidelity (`Arch.peak_tflops`), plus
  every elementwise op and reduction of the Tile IR (`loom.ir.flops`, blocks at their
  smallest legal size, a causal loop only to its diagonal) at its cycles per tile
  (`compute.eltwise_cycles_per_tile`: an add on the FPU, an exp, rsqrt or gelu on the
  SFPU), all summed, since one math thread issues both units;
* DRAM: the compulsory bytes (every tensor read or written once,
  `loom.model.inputs.compulsory_bytes`) at the banks' peak (`Dram.peak_bytes_per_cycle`,
  not the achievable efficiency: a bound no schedule can beat);
* NoC: the same bytes must cross the NoC once, leaving the DRAM endpoints and entering
  the cores, each endpoint on every NoC at the raw link width
  (`Noc.link_bytes_per_cycle`); the slower side bounds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.ir.flops import count_flops
from loom.ir.tile import TileProgram
from loom.model.inputs import compulsory_bytes


@dataclass(frozen=True, slots=True)
class RooflineBound:
    """Cycles each resource needs for the kernel's compulsory work, on `cores` cores."""

    math: float
    dram: float
    noc: float
    cores: int
    us: float
    """`cycles` in microseconds."""

    @property
    def cycles(self) -> float:
        return max(self.math, self.dram, self.noc)

    @property
    def bound(self) -> str:
        """The busiest resource: `math`, `dram` or `noc`."""
        return max(("math", self.math), ("dram", self.dram), ("noc", self.noc), key=lambda r: r[1])[
            0
        ]

    def fraction(self, cycles: float) -> float:
        """The roofline's share of a kernel time of `cycles` (1 = at the roofline): the
        kernel's own cycles, the program launch excluded, as no schedule removes it."""
        return self.cycles / cycles if cycles > 0 else 0.0


def math_cycles(program: TileProgram, arch: Arch, fidelity: str, cores: int) -> float:
    """Cycles of `cores` cores sharing the Tile IR's matmuls, elementwise ops and
    reductions evenly, each at its peak rate."""
    work = count_flops(program)
    peak_flops_per_second = arch.peak_tflops(fidelity, cores) * 1e12
    matmul = (
        work.matmul / peak_flops_per_second * arch.clock_ghz * 1e9 if peak_flops_per_second else 0.0
    )
    tile = arch.tile.rows * arch.tile.cols
    other = sum(
        n / tile * (arch.compute.eltwise(op) if kind == "elementwise" else arch.compute.reduce(op))
        for (kind, op), n in work.ops
    )
    return matmul + other / cores


def dram_endpoints(arch: Arch) -> int:
    """Distinct NoC endpoints of the DRAM banks (two banks may share one)."""
    return len({(b.noc_x, b.noc_y) for b in arch.dram.banks})


def roofline_bound(program: TileProgram, arch: Arch, fidelity: str) -> RooflineBound:
    """The roofline of `program` (and every launch after it) on the whole grid of `arch`."""
    cores = arch.num_cores
    nbytes = compulsory_bytes(program, arch)
    link = arch.noc.link_bytes_per_cycle * arch.noc.count
    math = math_cycles(program, arch, fidelity, cores)
    dram = nbytes / arch.dram.peak_bytes_per_cycle
    noc = nbytes / (link * min(dram_endpoints(arch), cores))
    us = arch.cycles_to_us(max(math, dram, noc))
    return RooflineBound(math=math, dram=dram, noc=noc, cores=cores, us=us)
