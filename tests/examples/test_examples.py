"""Every kernel of examples/helion compiles, verifies on tt-lang-sim (all outputs) and
simulates, on wormhole_n150; a sample also on blackhole_p150_13x10. Elementwise and
reduction kernels move DRAM bytes no faster than the arch's DRAM peak, in the model
and in the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.kernels.examples import EXAMPLES_DIR, example_kernels

KERNELS = example_kernels()
BLACKHOLE_SAMPLE = {
    "softmax",
    "vector_add",
    "layer_norm_affine",
    "row_stats",
    "split_k_matmul",
    "batch_sum",
    "argmax_looped",
    "int32_ops",
    "global_norm",
}
MATMUL = {"matmul_relu"}


def _run(file: str, kernel: str, arch_name: str):  # type: ignore[no-untyped-def]
    from loom.arch import load_arch
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.flows.lowered import simulate_lowered, verify_lowered
    from loom.kernels.registry import resolve_kernel

    arch = load_arch(arch_name)
    spec = resolve_kernel(str(EXAMPLES_DIR / file), kernel)
    result = compile_kernel(spec, CompileOptions(arch=arch, shape=spec.default_shape, jobs=1))
    outcome = verify_lowered(spec, result.lowered, result.log)
    sim = simulate_lowered(result.lowered, arch, result.log)
    return arch, result, outcome, sim


def test_there_are_enough_examples() -> None:
    assert len(KERNELS) >= 25
    assert len({f for f, _ in KERNELS}) >= 20


@pytest.mark.parametrize(("file", "kernel"), KERNELS, ids=[k for _, k in KERNELS])
def test_example_verifies_and_simulates_on_wormhole(file: str, kernel: str) -> None:
    arch, result, outcome, sim = _run(file, kernel, "wormhole_n150")
    assert outcome.passed, outcome.message
    assert outcome.outputs and all(c.passed for c in outcome.outputs)
    outs = [a.name for a in result.program.args if a.role == "output"]
    if result.then is not None or _after_loop(file, kernel):
        outs = list(_returned(file, kernel))  # several launches, or host code after the loop
    assert [c.name for c in outcome.outputs] == outs  # every output compared
    assert sim.cycles > 0
    if kernel not in MATMUL:
        moved = sim.bytes_moved.dram_read + sim.bytes_moved.dram_write
        peak = arch.dram.peak_bytes_per_cycle
        assert moved / sim.cycles <= peak
        assert moved / result.lowered.modeled_cycles(arch) <= peak


def _after_loop(file: str, kernel: str) -> bool:
    from loom.kernels.checks import host_epilogue
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel(str(EXAMPLES_DIR / file), kernel)
    return spec.file is not None and host_epilogue(spec.file) is not None


def _returned(file: str, kernel: str) -> tuple[str, ...]:
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel(str(EXAMPLES_DIR / file), kernel)
    assert spec.file is not None
    return spec.file.output_names


def test_a_kernel_run_as_launches_hands_its_scratch_over_in_dram() -> None:
    """global_norm's second launch reads the scratch tensor every block of the first
    wrote: run in order it matches torch; run from a zero scratch (no first launch) the
    same comparison fails. The modeled and simulated totals include the grid barrier."""
    import torch

    from loom.arch import load_arch
    from loom.backends.ttlang import verify_launches
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.flows.lowered import simulate_lowered
    from loom.flows.stages import StageLog
    from loom.kernels.checks import launch_references
    from loom.kernels.registry import resolve_kernel
    from loom.sim import simulate

    arch = load_arch("wormhole_n150")
    spec = resolve_kernel(str(EXAMPLES_DIR / "global_norm.py"), "global_norm")
    result = compile_kernel(spec, CompileOptions(arch=arch, shape=spec.default_shape, jobs=1))
    first, second = result.lowered.launches()
    assert spec.file is not None
    tensors, refs, _ = launch_references(spec.file, (first.program, second.program))
    assert set(tensors) == {"x"} and set(refs) == {"out"}
    both = verify_launches((first.lowered, second.lowered), tensors, refs)
    assert both.passed, both.message
    zeros = {"scratch": torch.zeros(first.program.arg("scratch").shape)}
    alone = verify_launches((second.lowered,), zeros, refs)
    assert not alone.passed
    modeled = result.lowered.modeled_cycles(arch)
    parts = first.schedule.modeled_cycles + second.schedule.modeled_cycles
    assert modeled > parts  # the grid barrier between the launches
    sim = simulate_lowered(result.lowered, arch, StageLog())
    alone_cycles = sum(simulate(lw.lowered, arch).cycles for lw in (first, second))
    assert sim.cycles > alone_cycles  # the grid barrier between the launches


@pytest.mark.parametrize(
    ("file", "kernel"),
    [fk for fk in KERNELS if fk[1] in BLACKHOLE_SAMPLE],
    ids=sorted(k for _, k in KERNELS if k in BLACKHOLE_SAMPLE),
)
def test_example_sample_on_blackhole(file: str, kernel: str) -> None:
    _, _, outcome, sim = _run(file, kernel, "blackhole_p150_13x10")
    assert outcome.passed, outcome.message
    assert sim.cycles > 0


def test_loom_run_on_a_file_with_several_kernels(capsys) -> None:  # type: ignore[no-untyped-def]
    from loom.cli import main

    path = str(EXAMPLES_DIR / "activations.py")
    code = main(["run", path, "--kernel", "gelu_tanh", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "reference   activations.py:reference_gelu_tanh" in out
    assert "output      out: PASS" in out


USER_FILE = """
import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def double(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] * 2.0
    return out


@helion.kernel(static_shapes=True)
def shift(x: torch.Tensor, by: float) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] + by
    return out


def main():
    raise SystemExit("main() must not run on import")


if __name__ == "__main__":
    main()
"""


def test_a_plain_helion_file_with_interpret_reference(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loom.cli import main

    path = tmp_path / "two_kernels.py"
    path.write_text(USER_FILE)
    argv = ["verify", str(path), "--kernel", "shift", "--arg", "x=64x96:bf16", "--arg", "by=1.5"]
    code = main([*argv, "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "reference   Helion interpret mode (eager CPU torch run of shift)" in out
    assert "output      out: PASS" in out
    code = main(["compile", str(path), "--arg", "x=64x64:bf16", "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "defines 2 Helion kernels (double, shift); choose one with --kernel" in err


def test_a_matmul_without_reference_verifies_against_loom_s_tile_ir(capsys) -> None:  # type: ignore[no-untyped-def]
    """Helion's interpret mode cannot run `torch.addmm(fp32, bf16, bf16)` on the CPU
    (`aten::mm.dtype`): the verification says so and uses Loom's Tile IR reference."""
    from loom.cli import main

    path = Path(__file__).parents[1] / "api" / "user_kernels.py"  # no reference()
    argv = ["verify", str(path), "--kernel", "matmul_addmm"]
    argv += ["--arg", "x=64x128:bf16", "--arg", "y=128x96:bf16"]
    code = main([*argv, "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert (
        "reference   Loom's Tile IR reference (fp32 torch evaluation of matmul_addmm; Helion's "
        "interpret mode cannot run it on the CPU: NotImplementedError: Could not run "
        "'aten::mm.dtype' with arguments from the 'CPU' backend)"
    ) in out
    assert "output      out: PASS" in out


def test_launches_verify_on_the_description_they_were_compiled_for(tmp_path: Path) -> None:
    """A kernel run as launches, compiled for a user's description (a name no built-in
    has), verifies on that description: each launch runs with its L1 and buffer count,
    not a built-in looked up by the program's name."""
    from loom.arch import load_arch
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.flows.lowered import verify_lowered
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel

    path = tmp_path / "small.yaml"
    path.write_text("base: wormhole_n150\nname: wormhole_user_variant\nl1_usable_bytes: 1000000\n")
    arch = load_arch(path)
    spec = resolve_kernel(str(EXAMPLES_DIR / "global_norm.py"), "global_norm")
    result = compile_kernel(spec, CompileOptions(arch=arch, shape=spec.default_shape, jobs=1))
    assert result.lowered.then is not None  # two launches
    outcome = verify_lowered(spec, result.lowered, StageLog(), arch)
    assert outcome.passed, outcome.message
