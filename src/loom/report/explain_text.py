"""Why Loom chose what it chose, in sentences, from the same ReportData as the page.

The one explanation: `loom explain`, `compile --explain`, the report's first section
and `CompiledKernel.explain()` all print these sentences.
"""

from __future__ import annotations

from loom.report.heg_view import binding_path
from loom.report.model import ReportData


def _sizes(pairs: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in pairs)


def explain_sentences(d: ReportData) -> tuple[str, ...]:
    """One sentence per decision, most important first."""
    total, kept, feasible = d.counts
    solved, pruned, infeasible = d.search
    shape = ", ".join(f"{k}={v}" for k, v in d.shape)
    searched = (
        f"; {solved} were solved, {pruned} cut off by a lower bound on their time and "
        f"{infeasible} had no legal block sizes"
        if any(d.search)
        else ""
    )
    spread = ", ".join(f"{a} across {n} cores" for a, n in d.axis_cores) or "one core"
    out = [
        f"Loom compiled {d.kernel} ({shape}, {d.dtype}, {d.math_fidelity}) for {d.arch_text}.",
        f"Loom chose candidate {d.candidate}: {d.cores} cores (view {d.view}; {spread}), out "
        f"of {total} legal candidates ({kept} after dominance pruning, {feasible} with legal "
        f"block sizes{searched}).",
        f"Block sizes {_sizes(d.block_sizes)}; the grid runs in "
        + ", ".join(f"{w} wave(s) of {a}" for a, w in d.waves)
        + ".",
        *([f"Realization: {d.realization}."] if d.realization else []),
        f"Modeled time: {d.modeled_cycles:,} cycles = {d.modeled_us:,.1f} us, "
        f"{d.modeled_tflops:.2f} TFLOPS ({100 * d.modeled_tflops / d.peak_tflops:.0f}% of the "
        f"{d.peak_tflops:.1f} TFLOPS {d.math_fidelity} peak of these cores), moving "
        f"{d.modeled_dram_gbps:,.1f} GB/s of DRAM traffic "
        f"({100 * d.modeled_dram_gbps / d.dram_peak_gbps:.0f}% of the "
        f"{d.dram_peak_gbps:,.1f} GB/s DRAM peak).",
        f"Intensity: {d.intensity}.",
    ]
    if d.launches:
        parts = " + ".join(f"{r.modeled_cycles:,} ({r.name})" for r in d.launches)
        out.append(
            f"The kernel runs as {len(d.launches)} launches with a grid-wide barrier between "
            f"consecutive ones (hl.barrier phases reading tiles other blocks wrote); these "
            f"sentences describe the first launch. Whole kernel modeled: {parts} + grid "
            f"barriers {d.barrier_cycles:,} = {d.total_cycles:,} cycles."
        )
    if d.bottleneck:
        out.append(f"The bottleneck is {d.bottleneck}.")
    if d.heg is not None:
        out.append("Binding path of the latency graph: " + " > ".join(binding_path(d.heg)) + ".")
    out += [f"Data movement: {c}." for c in d.copies]
    out += [f"Pipeline {node}: {text}." for node, text in d.pipeline]
    if d.binding:
        out += [f"Not larger because {b}." for b in d.binding]
    else:
        out.append("No constraint stops a larger block: larger ones are legal but modeled slower.")
    if d.l1_capacity:
        line = (
            f"L1 per core: {d.l1_bytes:,} of {d.l1_capacity:,} usable bytes "
            f"({100 * d.l1_bytes / d.l1_capacity:.0f}%)"
        )
        if d.l1:
            biggest = max(d.l1, key=lambda r: r.bytes)
            line += (
                f" in {len(d.l1)} buffers; the largest is {biggest.buffer} "
                f"({biggest.bytes:,} bytes, depth {biggest.depth})"
            )
        out.append(line + ".")
    if d.neighbours:
        out.append(
            f"Among {len(d.neighbours)} legal block-size neighbours (each size one legal step "
            f"below, at or above), the solution ranks {d.neighbour_rank}."
        )
    if len(d.candidates) > 1:
        best, second = d.candidates[0], d.candidates[1]
        gap = (second.modeled_cycles - best.modeled_cycles) / max(best.modeled_cycles, 1)
        how = (
            f"ties with it at {second.modeled_cycles:,} modeled cycles (the tie goes to less "
            "DRAM traffic, then the name)"
            if gap == 0
            else f"is modeled {100 * gap:.1f}% slower ({second.modeled_cycles:,} cycles)"
        )
        out.append(f"The runner-up, {second.name} ({_sizes(second.block_sizes)}), {how}.")
        sims = [c for c in d.candidates if c.simulated_cycles is not None]
        if len(sims) > 1:
            fastest = min(sims, key=lambda c: c.simulated_cycles or 0.0)
            verdict = (
                "agrees: the pick is also the fastest simulated"
                if fastest.name == best.name
                else f"prefers {fastest.name} ({fastest.simulated_cycles:,.0f} cycles)"
            )
            out.append(f"Simulating the top {len(sims)} candidates, the simulator {verdict}.")
    if d.sim is not None:
        compute = next((e for e in d.sim.engines if e.engine == "compute"), None)
        busy = f"; compute engines busy {100 * compute.mean:.0f}% on average" if compute else ""
        out.append(
            f"The simulator measured {d.sim.cycles:,.0f} cycles = {d.sim.us:,.1f} us, "
            f"{d.sim.tflops:.2f} TFLOPS, {d.sim.dram_gbps:,.1f} GB/s of DRAM traffic "
            f"({100 * d.sim.dram_gbps / d.dram_peak_gbps:.0f}% of the DRAM peak), "
            "simulated / modeled = "
            f"{d.sim.cycles / max(d.total_cycles, 1):.2f}{busy}."
        )
    for v in d.verify:
        verdict = "matches" if v.passed else "does NOT match"
        out.append(
            f"On tt-lang-sim, output {v.output} {verdict} torch: max abs error "
            f"{v.max_abs_error:.2e}, max rel error {v.max_rel_error:.2e} (tolerance "
            f"{v.tolerance:.2e})."
        )
    return tuple(out)
