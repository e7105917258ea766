"""The simulator's verdict on the model's ranking, after solving: `refine` keeps the
simulator's fastest of the model's top k (`--refine K`). It lives in the flow, never in
the model: the model never sees the simulator."""

from __future__ import annotations

from dataclasses import dataclass

from loom.arch import Arch
from loom.ir.buffers import BufferedProgram
from loom.ir.tile import TileProgram
from loom.lower import lower
from loom.sim import simulate
from loom.solve import Ranking
from loom.solve.materialize import CompileStats, materialize


@dataclass(frozen=True)
class RefineEntry:
    candidate: str
    modeled_cycles: int
    simulated_cycles: float


@dataclass(frozen=True)
class Refinement:
    """The model's top-k, each simulated: which one the model picked and which one the
    simulator found fastest (`chosen`, an index into `entries`, model order)."""

    entries: tuple[RefineEntry, ...]
    chosen: int

    def lines(self) -> list[str]:
        pick, best = self.entries[0], self.entries[self.chosen]
        gain = pick.simulated_cycles / best.simulated_cycles - 1
        return [
            f"refine      simulated the model's top {len(self.entries)}",
            f"            model's pick     {pick.candidate}: modeled {pick.modeled_cycles:,}, "
            f"simulated {pick.simulated_cycles:,.0f} cycles",
            f"            simulator's pick {best.candidate}: modeled {best.modeled_cycles:,}, "
            f"simulated {best.simulated_cycles:,.0f} cycles"
            + (" (the same)" if self.chosen == 0 else f" ({100 * gain:.1f}% faster; kept)"),
        ]


def refine(
    program: TileProgram,
    buffered: BufferedProgram,
    ranking: Ranking,
    stats: CompileStats,
    arch: Arch,
    k: int,
) -> Refinement:
    """Lower and simulate the model's best `k` schedules; the fastest simulated wins
    (ties: the model's order). Lives here, after solving: the model never sees the
    simulator."""
    entries = []
    for solution, problem in ranking.top[:k]:
        schedule = materialize(problem, solution, ranking.top, stats, arch, explain=False)
        sim = simulate(lower(program, buffered, schedule, arch), arch)
        entries.append(RefineEntry(solution.candidate, solution.cycles, sim.cycles))
    chosen = min(range(len(entries)), key=lambda i: (entries[i].simulated_cycles, i))
    return Refinement(tuple(entries), chosen)
