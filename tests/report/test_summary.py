"""The compile and simulate texts give a memory-bound kernel in its own terms: achieved
DRAM bandwidth against the architecture's DRAM peak, modeled and simulated, and its
arithmetic intensity against the ridge point; the JSON carries the same figures."""

from __future__ import annotations

import re

import pytest

from loom.kernels.examples import EXAMPLES_DIR


@pytest.fixture(scope="module")
def rms_norm(wormhole):  # type: ignore[no-untyped-def]
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.flows.lowered import simulate_lowered
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel(str(EXAMPLES_DIR / "rms_norm.py"), "rms_norm")
    result = compile_kernel(spec, CompileOptions(arch=wormhole, shape=spec.default_shape, jobs=1))
    return spec, result, simulate_lowered(result.lowered, wormhole, result.log)


def test_the_compile_summary_of_a_memory_bound_kernel_prints_its_bandwidth(rms_norm) -> None:  # type: ignore[no-untyped-def]
    from loom.report import summary

    _, result, _ = rms_norm
    text = summary(result)
    s = result.schedule
    assert s.modeled_dram_bytes > 0 and s.modeled_dram_gbps > 0
    assert re.search(
        r"^bandwidth   [\d,.]+ GB/s = \d+% of the 288\.0 GB/s DRAM peak \([\d,]+ bytes of DRAM "
        r"traffic\)$",
        text,
        re.M,
    ), text
    assert f"{s.modeled_dram_gbps:,.1f} GB/s" in text
    assert re.search(
        r"^intensity   [\d.]+ flops per compulsory DRAM byte, below .*: memory-bound$", text, re.M
    )
    assert " 0.00 TFLOPS" not in text  # its elementwise work counts (loom.ir.flops)


def test_the_simulation_summary_and_json_give_both_bandwidths(rms_norm, wormhole) -> None:  # type: ignore[no-untyped-def]
    from loom.report import simulation_dict, simulation_summary

    spec, result, sim = rms_norm
    lowered = result.lowered
    flops, modeled = lowered.flops(spec.flops), round(lowered.modeled_cycles(wormhole))
    text = simulation_summary(sim, wormhole, modeled, flops, lowered.modeled_dram_bytes())
    assert re.search(
        r"^bandwidth   [\d,.]+ GB/s = \d+% of the 288\.0 GB/s DRAM peak; "
        r"modeled [\d,.]+ GB/s = \d+%$",
        text,
        re.M,
    ), text
    data = simulation_dict(sim, wormhole, modeled, flops, lowered.modeled_dram_bytes())
    moved = sim.bytes_moved.dram_read + sim.bytes_moved.dram_write
    assert data["dram_bytes"] == round(moved) > 0
    assert data["dram_gbps"] == pytest.approx(moved * wormhole.clock_ghz / sim.cycles, rel=1e-3)
    assert data["dram_peak_gbps"] == pytest.approx(288.0)
    assert 0 < data["dram_fraction_of_peak"] <= 1 and 0 < data["modeled_dram_fraction_of_peak"] <= 1
    assert data["flops"] == flops > 0 and data["tflops"]
