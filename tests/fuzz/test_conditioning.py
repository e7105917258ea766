"""Verify's conditioning allowance end to end, on the fuzzer's one false positive
(`regressions/case_var_cancellation.py`, `var(x - (x - 0.5))`, exactly 0): Loom's verify
measures the noise of Helion's fp32 interpret mode by running it again in fp64 and
passes tt-lang-sim's output, and an output wrong by far more than that noise still
fails (loom.backends.ttlang.conditioning)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from loom.backends.ttlang import verify_outputs
from loom.backends.ttlang.conditioning import NOISE_MULTIPLE
from loom.flows.helion import CompileOptions, compile_kernel
from loom.kernels.checks import file_references, noise_by_output
from loom.kernels.registry import resolve_kernel

from .check import make_arch
from .render import kernel_name, render
from .replay import load_program

CASE = Path(__file__).parent / "regressions" / "case_var_cancellation.py"


def test_noise_of_the_interpret_reference_passes_and_a_wrong_output_fails(
    tmp_path: Path,
) -> None:
    program = load_program(CASE)
    path = tmp_path / f"{kernel_name(program)}.py"
    path.write_text(render(program))
    spec = resolve_kernel(str(path), kernel_name(program))
    arch = make_arch(program.arch)
    options = CompileOptions(
        arch, spec.default_shape, formats=program.formats, jobs=1, top_k=1, solver="cpsat"
    )
    result = compile_kernel(spec, options)
    fk, tile = spec.file, result.lowered.program
    assert fk is not None
    inputs, refs, _ = file_references(fk, tile)

    def noise() -> dict[str, float]:
        return noise_by_output(fk, lambda precision: file_references(fk, tile, precision)[1])

    measured = noise()
    assert set(measured) == set(refs) and all(0.0 < n < 1e-13 for n in measured.values())
    lowered = result.lowered.lowered
    plain = verify_outputs(lowered, inputs, refs, arch=arch)
    assert not plain.passed  # the format's tolerance alone: the false positive
    verdict = verify_outputs(lowered, inputs, refs, arch=arch, noise=noise)
    assert verdict.passed, verdict.message
    assert "rounding noise" in verdict.message
    # wrong by 1e-12 (tiny, but 100x the noise allowance): still a failure
    off = 100 * NOISE_MULTIPLE * max(measured.values())
    wrong = {name: ref + off for name, ref in refs.items()}
    assert not verify_outputs(lowered, inputs, wrong, arch=arch, noise=noise).passed
    # a user's reference runs as given: no noise is measured for it
    user = dataclasses.replace(fk, reference=fk.reference, reference_name="case.py:reference")
    assert noise_by_output(user, lambda p: file_references(user, tile, p)[1]) == {}
