"""SimResult: what one simulation measured, as frozen data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom.sim.topology import Core


@dataclass(frozen=True, slots=True)
class EngineBusy:
    """Busy fraction of one engine kind over the cores that run it (of kernel time)."""

    engine: str
    min: float
    mean: float
    max: float


@dataclass(frozen=True, slots=True)
class CoreBusy:
    core: Core
    engine: str
    busy: float
    """Fraction of the kernel time spent computing or moving data (not stalled)."""
    finished_cycles: float


@dataclass(frozen=True, slots=True)
class LinkUse:
    noc: int
    x: int
    y: int
    direction: str
    """Link leaving NoC router (x, y) towards `direction`."""
    utilization: float
    """Bytes carried / (sustained link bandwidth x kernel time)."""


@dataclass(frozen=True, slots=True)
class BytesMoved:
    dram_read: float
    dram_write: float
    noc_unicast: float
    noc_multicast: float
    """Bytes sent by multicast senders (each counted once)."""
    noc_multicast_delivered: float
    """Bytes that landed in receivers' L1 by multicast (sent x receivers)."""


@dataclass(frozen=True, slots=True)
class SimResult:
    kernel: str
    arch: str
    grid: tuple[int, int]
    cycles: float
    """Kernel cycles plus the program launch."""
    kernel_cycles: float
    """From the first engine's start to the last engine's end."""
    launch_cycles: float
    us: float
    flops: int
    """2 x tile^3 per executed tile-matmul."""
    tflops: float
    peak_tflops: float
    """Matmul peak of the whole architecture grid at the program's math fidelity."""
    utilization: float
    """tflops / peak_tflops."""
    engine_busy: tuple[EngineBusy, ...]
    core_busy: tuple[CoreBusy, ...]
    link_utilization: tuple[LinkUse, ...]
    """Links that carried data, busiest first."""
    dram_bank_utilization: tuple[float, ...]
    """Per bank: bytes served / (achievable bank bandwidth x kernel time)."""
    bytes_moved: BytesMoved
    events: int
    rate_solves: int
    """How often the fluid network re-solved max-min fair rates."""
    wall_seconds: float
    trace_events: tuple[dict[str, Any], ...] = ()

    @property
    def events_per_second(self) -> float:
        return self.events / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def busy(self, engine: str) -> EngineBusy:
        for e in self.engine_busy:
            if e.engine == engine:
                return e
        raise KeyError(engine)

    def summary(self) -> str:
        """A few lines for humans."""
        lines = [
            f"{self.kernel} on {self.arch} ({self.grid[0]}x{self.grid[1]} cores): "
            f"{self.cycles:,.0f} cycles = {self.us:,.2f} us "
            f"(kernel {self.kernel_cycles:,.0f} + launch {self.launch_cycles:,.0f})",
            f"  {self.tflops:.2f} TFLOPS of tile-matmuls executed = "
            f"{100 * self.utilization:.1f}% of the {self.peak_tflops:.1f} TFLOPS matmul peak",
        ]
        for e in self.engine_busy:
            lines.append(
                f"  {e.engine:8s} busy min/mean/max {100 * e.min:5.1f} / "
                f"{100 * e.mean:5.1f} / {100 * e.max:5.1f} %"
            )
        if self.link_utilization:
            top = self.link_utilization[0]
            lines.append(
                f"  busiest link: NoC{top.noc} ({top.x},{top.y}) {top.direction} "
                f"{100 * top.utilization:.1f}%"
            )
        if self.dram_bank_utilization:
            banks = " ".join(f"{100 * u:.0f}" for u in self.dram_bank_utilization)
            lines.append(f"  DRAM bank utilization %: {banks}")
        b = self.bytes_moved
        lines.append(
            f"  bytes: DRAM read {b.dram_read:,.0f}, write {b.dram_write:,.0f}, "
            f"NoC unicast {b.noc_unicast:,.0f}, multicast {b.noc_multicast:,.0f} "
            f"(delivered {b.noc_multicast_delivered:,.0f})"
        )
        lines.append(
            f"  {self.events:,} events in {self.wall_seconds:.2f} s "
            f"({self.events_per_second:,.0f} events/s, {self.rate_solves:,} rate solves)"
        )
        return "\n".join(lines)
