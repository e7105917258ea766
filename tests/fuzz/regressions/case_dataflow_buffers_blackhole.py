# Bug (found by benchmarks/fuzz.py): the program of case_dataflow_buffers_wormhole on
# Blackhole, whose core holds 64 dataflow buffers: its 35 fit, so it compiles and
# verifies (tt-lang-sim is held to the description's `dataflow_buffers`,
# loom/backends/ttlang/runner.py `_simulator`, not to its default of 32).
"""Fuzzed program fz_c64177d105 (tests/fuzz); verify with `loom verify THIS_FILE`."""

import helion
import helion.language as hl
import torch

FUZZ_PROGRAM = "Program(dims=(2, 32, 32), leaves=(LeafSpec(kind='tile', dtype='fp32', upcast=False), LeafSpec(kind='tile', dtype='fp32', upcast=False)), scalars=(), family=LeadingReduce(reduce=Reduce(op='amin', expr=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Where(cmp='lt', lhs=Leaf(index=0), rhs=Leaf(index=1), then=Leaf(index=0), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), other=Leaf(index=1)), keepdim=False, dtype='fp32', correction=1)), formats='', arch=ArchChoice(base='blackhole_p150', grid_y=0, grid_x=0, l1_kib=0), seed=0)"  # noqa: E501


@helion.kernel(static_shapes=True)
def fz_c64177d105(x0: torch.Tensor, x1: torch.Tensor):
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
