"""Views of a tile's last dim in halves (Helion's rope): each half is computed from its
own loads, the joined halves are stored into the halves of the window, and a store of a
whole leading dim (the heads) is one loop over it."""

from __future__ import annotations

import textwrap

import torch

from loom.ir.tile import ForLoop, Load, Store, walk
from loom.kernels.examples import EXAMPLES_DIR
from loom.symbolic import Const


def test_rope_halves_read_and_store_their_windows_in_one_heads_loop() -> None:
    from loom.frontend import import_kernel
    from loom.kernels.registry import load_path

    module = load_path(EXAMPLES_DIR / "rope_halves.py")
    program = import_kernel(module.rope_fwd, module.make_inputs())
    loops = [op for op in program.body if isinstance(op, ForLoop)]
    assert [(loop.tile.name, loop.end, loop.tile.upper) for loop in loops] == [
        ("tile_q_out_d1", Const(4), 1),
        ("tile_k_out_d1", Const(2), 1),
    ]
    for loop, tensor in zip(loops, ("q", "k"), strict=True):
        loads = [op for op in loop.body if isinstance(op, Load)]
        stores = [op for op in loop.body if isinstance(op, Store)]
        # each half of the head dim read once per head, and stored into its half
        assert sorted((op.tensor, str(op.window[-1].offset)) for op in loads) == [
            (tensor, "0"),
            (tensor, "32"),
        ]
        assert [str(op.window[-1].offset) for op in stores] == ["0", "32"]
        assert all(op.window[-1].size == Const(32) for op in (*loads, *stores))
    widths = {op.result.shape[-1] for op in walk(program.body) if isinstance(op, Load)}
    assert widths == {Const(32)}  # the full-width loads the halves replaced are dropped


def test_halves_of_a_broadcast_row_narrow_the_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loom.frontend import import_kernel
    from loom.kernels.registry import load_path

    source = tmp_path / "halves_row.py"
    source.write_text(
        textwrap.dedent(
            """
            import helion
            import helion.language as hl
            import torch

            @helion.kernel(static_shapes=True)
            def swap(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
                out = torch.empty_like(x)
                for tile_m in hl.tile(x.size(0)):
                    pair = (x[tile_m, :] * w[None, :]).reshape([tile_m, 2, 64]).permute(0, 2, 1)
                    a, b = hl.split(pair)
                    out[tile_m, :] = hl.join(b, a).permute(0, 2, 1).reshape([tile_m, 128])
                return out
            """
        )
    )
    module = load_path(source)
    program = import_kernel(module.swap, (torch.zeros(64, 128), torch.zeros(128)))
    loads = sorted(
        (op.tensor, str(op.window[-1].offset)) for op in walk(program.body) if isinstance(op, Load)
    )
    assert loads == [("w", "0"), ("w", "64"), ("x", "0"), ("x", "64")]
    stores = [op for op in walk(program.body) if isinstance(op, Store)]
    # b (the second half) into the first half of the window, a into the second
    assert [(str(s.window[-1].offset), s.value.shape[-1]) for s in stores] == [
        ("0", Const(64)),
        ("64", Const(64)),
    ]
    assert [s.value.name.endswith("_64") for s in stores] == [True, False]
