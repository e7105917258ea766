# Bug (found by benchmarks/fuzz.py; this program written by hand from the grammar): a
# leading-axis reduction of a large expression
# (every load of the loop body its own buffer, every condition of a torch.where read
# twice) lowered to 35 dataflow buffers; tt-lang-sim rejected the kernel (a Wormhole core
# holds 32). The buffer count was no constraint of the model. Fixed in
# loom/model/build.py (`dataflow_buffers`: one buffer per allocation that keeps a block,
# at most the architecture's `dataflow_buffers`, a field of the description): the
# candidate is refused by name (InfeasibleError) on wormhole_n150;
# case_dataflow_buffers_blackhole is the same program on Blackhole (64), which compiles.
"""Fuzzed program fz_5edd13f987 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(2, 32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False), LeafSpec(kind='tile', dtype='fp32', upcast=False)), scalars=(), family=LeadingReduce(reduce=Reduce(op='amin', expr=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Leaf(index=0), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), keepdim=False, dtype='fp32', correction=1)), formats='', arch=ArchChoice(base='wormhole_n150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_5edd13f987(x0: torch.Tensor, x1: torch.Tensor):
    out0 = torch.empty([32, 32], dtype=torch.float32, device=x0.device)
    for tile_m, tile_n in hl.tile([32, 32]):
        out0[tile_m, tile_n] = (
            torch.amin(
                torch.where(
                    (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                    torch.where(
                        (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                        torch.where(
                            (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                            torch.where(
                                (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                                torch.where(
                                    (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                                    torch.where(
                                        (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                                        torch.where(
                                            (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                                            torch.where(
                                                (x0[:, tile_m, tile_n]) < (x1[:, tile_m, tile_n]),
                                                x0[:, tile_m, tile_n],
                                                x1[:, tile_m, tile_n],
                                            ),
                                            x1[:, tile_m, tile_n],
                                        ),
                                        x1[:, tile_m, tile_n],
                                    ),
                                    x1[:, tile_m, tile_n],
                                ),
                                x1[:, tile_m, tile_n],
                            ),
                            x1[:, tile_m, tile_n],
                        ),
                        x1[:, tile_m, tile_n],
                    ),
                    x1[:, tile_m, tile_n],
                ),
                dim=0,
            )
        ).to(torch.float32)
    return out0


def make_inputs():
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(2, 32, 32, generator=gen).to(torch.float32)
    x1 = torch.randn(2, 32, 32, generator=gen).to(torch.float32)
    return (
        x0,
        x1,
    )
