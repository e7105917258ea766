"""A kernel's flops: the shipped kernels' stated figures agree with their Tile IR's
matmuls, and every example of examples/helion that multiplies matrices has flops."""

from __future__ import annotations

import ast
import re

import pytest

from loom.flows.lowered import kernel_flops
from loom.ir.flops import count_flops
from loom.kernels.examples import EXAMPLES_DIR, example_kernels

MATMUL_SOURCE = re.compile(r"hl\.dot|torch\.(mm|bmm|addmm|baddbmm|matmul)\b|[\w\])] @ [\w(]")
"""The ways a Helion kernel multiplies matrices (loom.ir.tile.Matmul's sources)."""


def test_stated_flops_agree_with_the_tile_ir(kernel_specs, tile_programs, small_shapes) -> None:  # type: ignore[no-untyped-def]
    for name, program in tile_programs.items():
        shape = small_shapes[name]
        count = count_flops(program)
        stated = kernel_specs[name].flops(shape)
        assert count.matmul == stated, name  # 2MNK; 4·B·H·S²·D; 4·B·H·S·D
        assert count.total > count.matmul or name == "gemm"  # softmax work counts too
        assert kernel_flops(kernel_specs[name].flops, shape, (program,)) == stated


def test_a_kernel_that_states_no_flops_gets_its_tile_ir_count(tile_programs) -> None:  # type: ignore[no-untyped-def]
    program = tile_programs["gemm"]
    assert kernel_flops(None, {}, (program,)) == count_flops(program).total > 0
    assert kernel_flops(lambda shape: 0, {}, (program,)) == count_flops(program).total


def _kernel_source(file: str, kernel: str) -> str:
    """The source of one kernel of an example file (a file may hold several kernels,
    only some of which multiply matrices)."""
    text = (EXAMPLES_DIR / file).read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            return ast.get_source_segment(text, node) or ""
    raise AssertionError(f"{file} has no kernel {kernel}")


MATMUL_EXAMPLES = [
    (file, kernel)
    for file, kernel in example_kernels()
    if MATMUL_SOURCE.search(_kernel_source(file, kernel))
]


def test_the_matmul_examples_are_found() -> None:
    assert {f for f, _ in MATMUL_EXAMPLES} >= {"matmul_relu.py", "split_k_matmul.py"}
    assert ("integer_widths.py", "int16_matmul") in MATMUL_EXAMPLES
    assert ("integer_widths.py", "label_logit") not in MATMUL_EXAMPLES  # no matmul of its own


@pytest.mark.parametrize(("file", "kernel"), MATMUL_EXAMPLES, ids=[k for _, k in MATMUL_EXAMPLES])
def test_every_example_that_multiplies_matrices_has_flops(file: str, kernel: str) -> None:
    from loom.flows.helion import trace_kernel
    from loom.flows.stages import StageLog
    from loom.kernels.registry import resolve_kernel

    spec = resolve_kernel(str(EXAMPLES_DIR / file), kernel)
    traced = trace_kernel(spec, spec.default_shape, StageLog())
    assert count_flops(traced.program).matmul > 0
    assert traced.flops >= count_flops(traced.program).matmul > 0
