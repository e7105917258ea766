"""Readable summaries of a compiled schedule and of a candidate set."""

from __future__ import annotations

import dataclasses

from loom.arch import Arch
from loom.ir.candidate import CandidateSet
from loom.ir.schedule import Schedule
from loom.mapping.engines import STORES_LATE
from loom.report.heg_view import KNOB_TEXT
from loom.sim import SimResult

ACCUMULATOR_TEXT = {
    "separate": "separate (two blocks in its own format)",
    "l1": "l1 (one block in its own format, the packer adds into L1)",
    "output": "output (in the output's block and format: --accumulate output)",
}


def mesh_labels(schedule: Schedule, arch: Arch) -> list[list[str]]:
    """Per core (rows y, columns x): its spatial index per grid axis, e.g. `m3n1`, or
    "" for a core the schedule leaves idle."""
    m = schedule.mapping
    axes = [a for a in schedule.block_sizes if m.spatial_factor(a) > 1] or list(
        schedule.block_sizes
    )[:1]
    letters = {a: a.removeprefix("tile_")[:1] for a in axes}
    return [
        [
            "".join(f"{letters[a]}{m.spatial_index(a, y, x)}" for a in axes)
            if y < m.cores_y and x < m.cores_x
            else ""
            for x in range(arch.grid_x)
        ]
        for y in range(arch.grid_y)
    ]


def draw_mesh(schedule: Schedule, arch: Arch) -> list[str]:
    """The compute grid, each used core labelled with its spatial index per grid axis."""
    labels = mesh_labels(schedule, arch)
    width = max(2, *(len(label) for row in labels for label in row))
    lines = [f"   x: {' '.join(f'{x:<{width}}' for x in range(arch.grid_x))}"]
    for y, row in enumerate(labels):
        cells = [f"{label or '.':<{width}}" for label in row]
        lines.append(f"y{y:<2} {' '.join(cells)}")
    return lines


def bandwidth_text(gbps: float, arch: Arch) -> str:
    """A DRAM bandwidth and its share of the architecture's DRAM peak."""
    return f"{gbps:,.1f} GB/s = {100 * gbps / arch.dram_peak_gbps:.0f}%"


def intensity_text(flops: int, compulsory_bytes: int, arch: Arch, fidelity: str, cores: int) -> str:
    """The kernel's arithmetic intensity (flops per byte its tensors must cross DRAM with,
    whatever the schedule) against the ridge point of the roofline of `cores` cores: below
    it no schedule reaches the matmul peak, and bandwidth is the figure that says how well
    the kernel runs."""
    ridge = arch.peak_tflops(fidelity, cores) * 1e3 / arch.dram_peak_gbps
    intensity = flops / compulsory_bytes if compulsory_bytes else 0.0
    bound = "below" if intensity < ridge else "at or above"
    return (
        f"{intensity:,.2f} flops per compulsory DRAM byte, {bound} the ridge point of "
        f"{cores} cores ({ridge:,.0f}): {'memory' if intensity < ridge else 'compute'}-bound"
    )


def schedule_summary(
    s: Schedule,
    arch: Arch,
    candidate_count: tuple[int, int, int, int],
    flops: int = 0,
    compulsory_bytes: int = 0,
) -> str:
    """The compile's text; `flops` (the kernel's work, as in the model's TFLOPS) and
    `compulsory_bytes` (`loom.model.inputs.compulsory_bytes`) give its intensity line."""
    total, kept, solved, pruned = candidate_count
    m = s.mapping
    shape = " ".join(f"{k}={v}" for k, v in s.shape.items())
    peak = arch.peak_tflops(s.math_fidelity, m.num_cores)
    lines = [
        f"Loom: {s.kernel} on {arch.name} ({arch.grid_x}x{arch.grid_y} cores, "
        f"{arch.clock_ghz} GHz), "
        f"{shape}, {s.dtype}, {s.math_fidelity}",
        "",
        f"candidate   {s.candidate}",
        f"mapping     {m.num_cores} cores ({m.cores_y} rows x {m.cores_x} columns), "
        f"view {m.label()}:",
    ]
    for axis in s.waves:
        levels = m.axis_levels(axis)
        spread = " x ".join(f"{lv.dim}{lv.level}({lv.size})" for lv in levels) or "1 core"
        lines.append(
            f"            {axis}: {spread} -> {m.spatial_factor(axis)} cores, "
            f"{s.waves.get(axis, 1)} wave(s)"
        )
    lines += ["            " + row for row in draw_mesh(s, arch)]
    lines.append("tiles       " + ", ".join(f"{k} = {v}" for k, v in s.block_sizes.items()))
    if s.realization_note:
        lines.append(f"realization {s.realization_note}")
    for node, knobs in s.pipeline.items():
        lines.append(f"pipeline    {node}: {KNOB_TEXT[(knobs['b_load'], knobs['b_store'])]}")
    if s.candidate.endswith(STORES_LATE):
        lines.append(
            "stores      one wave late: the writer, which also loads in the loop, issues "
            "each wave's stores after the next wave's first loads"
        )
    for state, placement in s.accumulators.items():
        lines.append(f"accumulator {state}: {ACCUMULATOR_TEXT[placement]}")
    for c in s.copies:
        detail = (
            f" to {c.area[0]}x{c.area[1]} cores ({', '.join(c.multicast_dims)})"
            if c.mode != "unicast"
            else ""
        )
        lines.append(f"copy        {c.kind} {c.tensor}: {c.mode}{detail}")
    lines += [
        f"L1          {s.l1_bytes:,} of {s.l1_capacity_bytes:,} usable bytes per core",
        f"modeled     {s.modeled_cycles:,} cycles = {s.modeled_us:,.1f} us, "
        f"{s.modeled_tflops:.2f} TFLOPS "
        f"({100 * s.modeled_tflops / peak:.0f}% of the {peak:.1f} TFLOPS {s.math_fidelity} peak of "
        f"{m.num_cores} cores)",
        f"bandwidth   {bandwidth_text(s.modeled_dram_gbps, arch)} of the "
        f"{arch.dram_peak_gbps:,.1f} GB/s DRAM peak ({s.modeled_dram_bytes:,} bytes of DRAM "
        "traffic)",
    ]
    if compulsory_bytes:
        intensity = intensity_text(flops, compulsory_bytes, arch, s.math_fidelity, m.num_cores)
        lines.append(f"intensity   {intensity}")
    lines += [
        f"bottleneck  {s.bottleneck.get('text', '')}",
    ]
    lines += [f"binding     {b}" for b in s.binding_constraints] or ["binding     none"]
    nb = s.neighbourhood
    if nb:
        lines.append(
            f"neighbours  rank {nb['rank_of_solution']} of {nb['configurations']} legal block-size "
            "neighbours (each symbol one legal step below / at / above)"
        )
    lines.append("top-k       cycles        block sizes            candidate")
    for e in s.top_k:
        sizes = ",".join(str(v) for v in e.block_sizes.values())
        lines.append(f"            {e.modeled_cycles:<13,} {sizes:<22} {e.candidate}")
    lines.append(
        f"compile     {s.compile_seconds:.2f} s: {total} legal candidates, {kept} after dominance "
        f"pruning, {solved} solved by CP-SAT, {pruned} cut off by bound, "
        f"{s.candidates_feasible} feasible"
    )
    return "\n".join(lines) + "\n"


def candidates_table(cs: CandidateSet) -> str:
    lines = [
        f"{cs.buffered.program.name}: {cs.candidates_total} legal candidates, "
        f"{len(cs.candidates)} after dominance pruning",
        "axis scores (parallel extent, reuse volume, reuse count): "
        + "; ".join(
            f"{s.axis} ({s.parallel_extent}, {s.reuse_volume}, {s.reuse_count})" for s in cs.scores
        ),
        f"axis orders kept: {', '.join(' > '.join(o) for o in cs.orders)}",
        "",
        f"{'cores':>5}  {'view':<14} {'multicast':<28} {'waves':<28} name",
    ]
    for c in cs.candidates:
        mc = (
            ",".join(f"{p.tensor}:{p.area[0]}x{p.area[1]}" for p in c.copies if p.mode != "unicast")
            or "-"
        )
        waves = ",".join(f"{a}={w}" for a, w in c.waves.items())
        lines.append(
            f"{c.num_cores:>5}  {c.mapping.label():<14} {mc:<28} {waves[:28]:<28} {c.name}"
        )
    return "\n".join(lines) + "\n"


def simulation_dict(
    sim: SimResult, arch: Arch, modeled: int, flops: int, modeled_dram_bytes: int = 0
) -> dict[str, object]:
    """The simulated figures as JSON-ready data. `tflops` counts the kernel's useful
    floating-point work (`flops`); `executed_tflops` counts every tile-matmul the cores
    ran, padding included (e.g. a decode query row padded to a 32-row tile). `dram_gbps`
    is the simulator's DRAM bytes (read and written) over the simulated time,
    `modeled_dram_gbps` the model's bytes over the modeled time; both also as fractions
    of the architecture's DRAM peak (`dram_peak_gbps`)."""
    moved = sim.bytes_moved.dram_read + sim.bytes_moved.dram_write
    gbps, peak = arch.gbps(moved, sim.cycles), arch.dram_peak_gbps
    modeled_gbps = arch.gbps(modeled_dram_bytes, modeled)
    return {
        "kernel": sim.kernel,
        "arch": sim.arch,
        "simulated_cycles": round(sim.cycles),
        "simulated_us": round(sim.us, 3),
        "modeled_cycles": modeled,
        "simulated_over_modeled": round(sim.cycles / modeled, 4) if modeled else None,
        "flops": flops,
        "tflops": round(flops / (sim.us * 1e6), 3) if flops and sim.us else None,
        "executed_tflops": round(sim.tflops, 3),
        "utilization": round(sim.utilization, 4),
        "engine_busy": [dataclasses.asdict(e) for e in sim.engine_busy],
        "dram_bank_utilization": [round(u, 4) for u in sim.dram_bank_utilization],
        "bytes_moved": dataclasses.asdict(sim.bytes_moved),
        "dram_bytes": round(moved),
        "dram_gbps": round(gbps, 3),
        "dram_fraction_of_peak": round(gbps / peak, 4),
        "dram_peak_gbps": round(peak, 3),
        "modeled_dram_bytes": modeled_dram_bytes,
        "modeled_dram_gbps": round(modeled_gbps, 3),
        "modeled_dram_fraction_of_peak": round(modeled_gbps / peak, 4),
        "events": sim.events,
        "events_per_second": round(sim.events_per_second),
    }


def simulation_summary(
    sim: SimResult, arch: Arch, modeled: int, flops: int, modeled_dram_bytes: int = 0
) -> str:
    """The simulator's text, then the kernel's own rates: useful TFLOPS (`flops` over the
    simulated time) and the DRAM bandwidth achieved, simulated (the simulator's DRAM
    bytes) and modeled (`modeled_dram_bytes` over `modeled` cycles)."""
    text = sim.summary()
    lines = [text.rstrip("\n")]
    if flops and sim.us:
        lines.append(f"useful      {flops / (sim.us * 1e6):.2f} TFLOPS of the kernel's own work")
    moved = sim.bytes_moved.dram_read + sim.bytes_moved.dram_write
    line = (
        f"bandwidth   {bandwidth_text(arch.gbps(moved, sim.cycles), arch)} of the "
        f"{arch.dram_peak_gbps:,.1f} GB/s DRAM peak"
    )
    if modeled_dram_bytes and modeled:
        line += f"; modeled {bandwidth_text(arch.gbps(modeled_dram_bytes, modeled), arch)}"
    lines.append(line)
    if modeled:
        lines.append(
            f"simulated   {sim.cycles:,.0f} cycles vs modeled {modeled:,} cycles: "
            f"simulated / modeled = {sim.cycles / modeled:.2f}"
        )
    return "\n".join(lines) + "\n"
