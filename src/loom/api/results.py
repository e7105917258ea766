"""What the public API returns besides the compiled kernel: ranked candidates and a
simulation report. Frozen data, so a notebook can keep and compare them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.errors import LoomError

if TYPE_CHECKING:
    from loom.arch import Arch
    from loom.sim import BytesMoved, CoreBusy, EngineBusy, LinkUse, SimResult


@dataclass(frozen=True, slots=True)
class RankedCandidate:
    """One spatial-mapping candidate and what solving it gave."""

    rank: int
    """1 = the schedule Loom picked; solved candidates first, by modeled cycles."""
    name: str
    """Candidate name, e.g. `gemm__x8_y8__...` (core view, axis placement, copies)."""
    status: str
    """`optimal`, `feasible`, `infeasible`, `pruned` (cannot beat the pick) or `unknown`."""
    modeled_cycles: int
    """The model's cycles at this candidate's best block sizes (0 unless solved)."""
    lower_bound: int
    """A proven lower bound on the candidate's modeled cycles."""
    block_sizes: dict[str, int]
    """Solved block sizes by source symbol (empty unless solved)."""
    cores: int
    view: str
    """Core view, e.g. `x8_y2y4` (factors per mesh dimension, innermost first)."""
    reason: str = ""
    """Why an infeasible candidate has no legal block sizes."""

    @property
    def solved(self) -> bool:
        return self.status in ("optimal", "feasible")


@dataclass(frozen=True, slots=True)
class PipeTime:
    """One primitive term of the latency model, summed over its loop trips."""

    node: str
    """Path in the latency graph, e.g. `root > loop:tile_k > load`."""
    term: str
    cycles: int


@dataclass(frozen=True, slots=True)
class Activity:
    """What the simulated engines spent their busy time on, summed over cores: reading a
    tensor, sending or receiving on a multicast pipe, computing a value, writing."""

    engine: str
    """`reader`, `compute` or `writer`."""
    name: str
    """As in the trace, e.g. `read a`, `send mcast_a_tile`, `compute acc`, `write out`."""
    cores: int
    """Cores whose engine did it."""
    cycles: float
    """Busy cycles summed over those cores."""
    max_core_cycles: float
    """Busy cycles of the core that spent the most on it."""


def activities(events: tuple[dict[str, Any], ...], clock_ghz: float) -> tuple[Activity, ...]:
    """Per (engine, activity) busy time from a simulation's trace events, busiest first."""
    engines = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    per_core: dict[tuple[str, str], dict[int, float]] = {}
    for e in events:
        if e.get("ph") != "X" or (e["pid"], e["tid"]) not in engines:
            continue
        key = (engines[(e["pid"], e["tid"])], e["name"])
        cores = per_core.setdefault(key, {})
        cores[e["pid"]] = cores.get(e["pid"], 0.0) + e["dur"] * clock_ghz * 1e3
    out = [
        Activity(engine, name, len(c), sum(c.values()), max(c.values()))
        for (engine, name), c in per_core.items()
    ]
    return tuple(sorted(out, key=lambda a: (-a.cycles, a.engine, a.name)))


@dataclass(frozen=True)
class SimulationReport:
    """The discrete-event simulator's timing of a compiled kernel, next to the model's.

    `str(report)` is the CLI's text; `as_dict()` is the CLI's `--json`; `trace(path)`
    writes a Chrome/Perfetto trace (simulate with `trace=True`, the default). The
    measured figures are read from `raw`, the simulator's own result."""

    raw: SimResult = field(repr=False)
    modeled_cycles: int
    """The latency model's prediction for the same schedule."""
    flops: int = field(repr=False)
    """The kernel's own floating-point work: what its file states, else what its Tile IR
    does (`loom.flows.lowered.kernel_flops`)."""
    activities: tuple[Activity, ...] = field(repr=False)
    """Simulated busy time per engine activity (reads, pipe sends and receives, computes,
    writes), from the trace; empty when simulated with `trace=False`."""
    modeled_pipes: tuple[PipeTime, ...] = field(repr=False)
    """The model's per-pipe terms of the same schedule, for comparison."""
    arch: Arch = field(repr=False)
    """The architecture simulated (its DRAM peak for the bandwidth figures)."""
    modeled_dram_bytes: int = field(default=0, repr=False)
    """The DRAM bytes the model moves for the same schedule (every launch)."""

    @property
    def cycles(self) -> float:
        """Kernel cycles plus the program launch."""
        return self.raw.cycles

    @property
    def kernel_cycles(self) -> float:
        return self.raw.kernel_cycles

    @property
    def launch_cycles(self) -> float:
        return self.raw.launch_cycles

    @property
    def us(self) -> float:
        return self.raw.us

    @property
    def tflops(self) -> float | None:
        """Useful TFLOPS: the kernel's own work over the simulated time (None when the
        kernel does no floating-point work)."""
        return self.flops / (self.raw.us * 1e6) if self.flops and self.raw.us else None

    @property
    def executed_tflops(self) -> float:
        """Every tile-matmul the cores ran, padding included."""
        return self.raw.tflops

    @property
    def utilization(self) -> float:
        """Executed TFLOPS over the matmul peak of the whole grid."""
        return self.raw.utilization

    @property
    def engines(self) -> tuple[EngineBusy, ...]:
        """Busy fraction per engine kind (reader, compute, writer): min, mean, max."""
        return self.raw.engine_busy

    @property
    def per_core(self) -> tuple[CoreBusy, ...]:
        """Busy fraction and finish time of every engine of every core."""
        return self.raw.core_busy

    @property
    def links(self) -> tuple[LinkUse, ...]:
        """NoC links that carried data, busiest first."""
        return self.raw.link_utilization

    @property
    def dram_bank_utilization(self) -> tuple[float, ...]:
        return self.raw.dram_bank_utilization

    @property
    def bytes_moved(self) -> BytesMoved:
        return self.raw.bytes_moved

    @property
    def dram_bytes(self) -> float:
        """Bytes the simulated cores read from and wrote to DRAM."""
        return self.raw.bytes_moved.dram_read + self.raw.bytes_moved.dram_write

    @property
    def dram_gbps(self) -> float:
        """Achieved DRAM bandwidth: `dram_bytes` over the simulated time (launch included)."""
        return self.arch.gbps(self.dram_bytes, self.cycles)

    @property
    def modeled_dram_gbps(self) -> float:
        """The model's DRAM bytes over the modeled time."""
        return self.arch.gbps(self.modeled_dram_bytes, self.modeled_cycles)

    @property
    def dram_peak_gbps(self) -> float:
        """The architecture's DRAM peak (every bank at its peak bandwidth)."""
        return self.arch.dram_peak_gbps

    @property
    def dram_fraction_of_peak(self) -> float:
        """Achieved (simulated) DRAM bandwidth over the architecture's DRAM peak."""
        return self.dram_gbps / self.dram_peak_gbps

    @property
    def seconds(self) -> float:
        return self.us * 1e-6

    @property
    def simulated_over_modeled(self) -> float | None:
        return self.cycles / self.modeled_cycles if self.modeled_cycles else None

    def trace(self, path: str | Path) -> Path:
        """Write the Perfetto/Chrome trace JSON (open it at ui.perfetto.dev)."""
        from loom.sim import trace_json

        if not self.raw.trace_events:
            raise LoomError(
                "this simulation kept no trace events; call simulate(trace=True) and then "
                "trace(path)."
            )
        target = Path(path)
        try:
            target.write_text(trace_json(self.raw.trace_events))
        except OSError as err:
            raise LoomError(
                f"cannot write the trace to {str(target)!r}: {err.strerror}; pick a writable path."
            ) from None
        return target

    def as_dict(self) -> dict[str, object]:
        from loom.report import simulation_dict

        return simulation_dict(
            self.raw, self.arch, self.modeled_cycles, self.flops, self.modeled_dram_bytes
        )

    def __repr__(self) -> str:
        return (
            f"<SimulationReport {self.raw.kernel} on {self.raw.arch}: {self.cycles:,.0f} "
            f"cycles = {self.us:,.2f} us, modeled {self.modeled_cycles:,}>"
        )

    def __str__(self) -> str:
        from loom.report import simulation_summary

        return simulation_summary(
            self.raw, self.arch, self.modeled_cycles, self.flops, self.modeled_dram_bytes
        ).rstrip("\n")
