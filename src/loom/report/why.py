"""The why of a compiled schedule, in sentences (`CompiledKernel.explain()`).

Built from the same data the summary and the reports read: the Schedule (mapping, block
sizes, copies, pipeline knobs, bottleneck, binding constraints, neighbourhood) and the
solver's verdict on every candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

from loom.arch import Arch
from loom.ir.schedule import Copy, Schedule
from loom.ir.solution import Solution

_OVERLAP = {
    (0, 0): "runs load, compute and store one after the other (single-buffered)",
    (0, 1): "overlaps the store of one block with the next (double-buffered output)",
    (1, 0): "overlaps loads with compute (double-buffered inputs)",
    (1, 1): "overlaps loads and stores with compute (double-buffered)",
}


def explain(schedule: Schedule, arch: Arch, solutions: Sequence[Solution]) -> str:
    """A short paragraph per decision: search, mapping, time, block sizes, data movement,
    pipelining, bottleneck, memory."""
    s = schedule
    paragraphs = [
        _search(s, arch, solutions),
        _mapping(s),
        _time(s, arch),
        _blocks(s),
        " ".join(_copy(c) for c in s.copies),
        " ".join(
            f"The {node} pipe {_OVERLAP[(k['b_load'], k['b_store'])]}."
            for node, k in s.pipeline.items()
        ),
        _bottleneck(s),
        f"Each core uses {s.l1_bytes:,} of its {s.l1_capacity_bytes:,} usable L1 bytes "
        f"({100 * s.l1_bytes / max(s.l1_capacity_bytes, 1):.0f}%).",
    ]
    return "\n".join(p for p in paragraphs if p) + "\n"


def _search(s: Schedule, arch: Arch, solutions: Sequence[Solution]) -> str:
    status = [x.status for x in solutions]
    shape = ", ".join(f"{k}={v}" for k, v in s.shape.items())
    return (
        f"Loom compiled {s.kernel} ({shape}, {s.dtype}, {s.math_fidelity}) for {arch.name}, "
        f"a mesh of {arch.grid_x}x{arch.grid_y} cores at {arch.clock_ghz} GHz. It found "
        f"{s.candidates_total} legal spatial mappings, kept {s.candidates_after_pruning} "
        f"after dominance pruning and solved {len(status) - status.count('pruned')} with "
        f"CP-SAT; {status.count('pruned')} were cut off by a lower bound on their time and "
        f"{status.count('infeasible')} had no legal block sizes."
    )


def _mapping(s: Schedule) -> str:
    m = s.mapping
    spread = "; ".join(
        f"{axis} runs across {m.spatial_factor(axis)} core(s) in {waves} wave(s)"
        for axis, waves in s.waves.items()
    )
    return (
        f"The pick, {s.candidate}, uses {m.num_cores} cores ({m.cores_y} rows x "
        f"{m.cores_x} columns, core view {m.label()}): {spread}."
    )


def _time(s: Schedule, arch: Arch) -> str:
    peak = arch.peak_tflops(s.math_fidelity, s.mapping.num_cores)
    text = (
        f"It is modeled at {s.modeled_cycles:,} cycles = {s.modeled_us:,.1f} us, "
        f"{s.modeled_tflops:.2f} TFLOPS ({100 * s.modeled_tflops / peak:.0f}% of the "
        f"{peak:.1f} TFLOPS {s.math_fidelity} peak of those cores)"
    )
    if len(s.top_k) > 1 and s.modeled_cycles:
        second = s.top_k[1]
        slower = 100 * (second.modeled_cycles / s.modeled_cycles - 1)
        text += f"; the runner-up, {second.candidate}, is modeled {slower:.1f}% slower"
    return text + "."


def _blocks(s: Schedule) -> str:
    sizes = ", ".join(f"{k} = {v}" for k, v in s.block_sizes.items())
    text = f"CP-SAT chose the block sizes {sizes}."
    if s.binding_constraints:
        text += " None is larger because " + "; ".join(s.binding_constraints) + "."
    else:
        text += " No constraint stops a larger block: larger ones are legal but modeled slower."
    nb = s.neighbourhood
    if nb:
        text += (
            f" Among the {nb['configurations']} legal neighbours (each block size one legal "
            f"step down, the same, or up) the pick ranks {nb['rank_of_solution']}."
        )
    return text


def _copy(c: Copy) -> str:
    if c.mode == "multicast":
        return (
            f"{c.tensor} is read from DRAM once per group of {c.area[0]}x{c.area[1]} cores "
            f"and multicast along {', '.join(c.multicast_dims)} ({c.region})."
        )
    if c.mode == "gather":
        return f"The partial results of {c.tensor} are gathered to the core that owns them."
    verb = "read from" if c.kind == "load" else "written to"
    return f"{c.tensor} is {verb} DRAM by every core on its own (unicast)."


def _bottleneck(s: Schedule) -> str:
    b = s.bottleneck
    if not b.get("term"):
        return ""
    return (
        f"The modeled time is dominated by {b['term']} ({b['kind']}) in {b['node']}: "
        f"{100 * float(b['share']):.0f}% of the modeled time."
    )
