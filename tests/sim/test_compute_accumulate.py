"""The simulator's cost of an accumulating statement (packer L1 accumulation)."""

from __future__ import annotations

import dataclasses

import pytest

from loom.arch import load_arch
from loom.ir.program import (
    BinaryExpr,
    BlockRef,
    Buffer,
    Compute,
    DramTensor,
    MatmulExpr,
    Program,
)
from loom.sim import from_arch
from loom.sim.compute_cost import CostModel


def _program(acc_dtype: str) -> Program:
    return Program(
        kernel="k",
        arch="wormhole_n150",
        grid=(1, 1),
        tensors=(DramTensor("C", (128, 128), "bf16", "output", 4, 4),),
        buffers=(
            Buffer("a", 4, 1, "bf16", 1, "load"),
            Buffer("b", 1, 4, "bf16", 1, "load"),
            Buffer("acc", 4, 4, acc_dtype, 2, "state"),
        ),
        nets=(),
        reader=(),
        compute=(),
        writer=(),
        math_fidelity="LoFi",
    )


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_adding_into_l1_packs_at_the_accumulate_rate(dtype: str) -> None:
    """16 output tiles from 16 LoFi tile-matmuls: pack-bound. Adding into the held block
    reads it first, so the pack takes bytes / pack_accumulate_bytes_per_cycle; the
    separate form (sum into the other block) packs at the plain rate."""
    arch = load_arch("wormhole_n150")
    program = _program(dtype)
    costs = CostModel(arch, from_arch(arch), program, packer_l1_acc=True)
    product = MatmulExpr(BlockRef("a"), BlockRef("b"))
    adds = costs.cost(Compute("acc", product, accumulate=True))
    separate = costs.cost(Compute("acc", BinaryExpr("add", BlockRef("acc"), product)))
    nbytes = 16 * arch.tile.bytes(dtype)
    assert adds.pack_cycles == pytest.approx(nbytes / arch.compute.pack_accumulate_bytes_per_cycle)
    assert separate.pack_cycles == pytest.approx(nbytes / arch.compute.pack_bytes_per_cycle)
    assert adds.unpack_cycles == separate.unpack_cycles  # the held block is not unpacked
    assert adds.cycles > separate.cycles


def test_a_statement_freed_after_costing_does_not_lend_its_cost_to_the_next() -> None:
    """The memo goes by identity; a transient statement's id is reused by the next one
    allocated, which must still get its own cost."""
    arch = load_arch("wormhole_n150")
    costs = CostModel(arch, from_arch(arch), _program("fp32"), packer_l1_acc=True)
    product = MatmulExpr(BlockRef("a"), BlockRef("b"))
    packs = [
        costs.cost(Compute("acc", product, accumulate=i % 2 == 0)).pack_cycles for i in range(8)
    ]
    assert packs[0::2] == [packs[0]] * 4
    assert packs[1::2] == [packs[1]] * 4
    assert packs[0] > packs[1]


def test_a_transposed_left_operand_costs_a_copy_pass_over_its_tiles() -> None:
    """`x.T @ g`: the same tile-matmuls as `a @ g` with `a` given upright, plus one pass
    through Dst over the left block's 4 tiles (unpacked again, copied) to transpose it."""
    arch = load_arch("wormhole_n150")
    base = _program("fp32")
    upright = Buffer("at", 1, 4, "bf16", 1, "load")  # the 4x1-tile `a`, stored transposed
    program = dataclasses.replace(base, buffers=(*base.buffers, upright))
    costs = CostModel(arch, from_arch(arch), program, packer_l1_acc=True)
    plain = costs.cost(Compute("acc", MatmulExpr(BlockRef("a"), BlockRef("b"))))
    flipped = costs.cost(
        Compute("acc", MatmulExpr(BlockRef("at"), BlockRef("b"), transpose_lhs=True))
    )
    extra = 4 * arch.tile.bytes("bf16") / arch.compute.unpack_bytes_per_cycle
    assert flipped.unpack_cycles - plain.unpack_cycles == pytest.approx(extra)
    assert flipped.math_cycles - plain.math_cycles == 4 * arch.compute.eltwise("copy")
    assert flipped.pack_cycles == plain.pack_cycles
    assert flipped.matmul_tiles == plain.matmul_tiles
