"""Block-float quantization in torch: what a bfp8_b / bfp4_b tile holds.

tt-lang-sim 1.1.6 accepts ``bfloat8_b`` but backs it with bfloat16 without quantizing, and
has no ``bfloat4_b`` at all, so verification emulates the formats on the host:

* the inputs of a block-float tensor are quantized before the run, so that the kernel
  (and the torch reference) see exactly the values the unpacker would produce;
* a block-float output is quantized after the run, as the packer would write it.

The rule (tt-metal ``tt_metal/impl/data_format/blockfloat_common.cpp``,
``convert_u32_to_bfp`` / ``get_max_exp``, and its mantissa-rounding unit test
``test_bfp8_conversion``): a 32x32 tile is four 16x16 faces; each face row of 16
consecutive elements shares one 8-bit exponent, the largest exponent among them. Every
element keeps its sign and a magnitude of ``mantissa_bits`` bits (7 for bfp8_b, 3 for
bfp4_b, the hidden one included) aligned to the shared exponent: its fp32 mantissa, with
the hidden bit, is shifted right by the difference of exponents and rounded to nearest,
ties to even, saturating at the largest magnitude. So an element's error is at most half
a unit of the last kept bit of its group, ``2^(E - mantissa_bits)``, where ``2^E`` is the
group's largest power of two.

Because the group runs along the last dimension and faces split it at 16, groups are the
aligned runs of 16 along the last axis of the tile grid (the tensor's last axis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom.ir.formats import FORMATS, DataFormat, is_block_float
from loom.ir.program import Program

if TYPE_CHECKING:
    import torch

GROUP = 16


def mantissa_bits(fmt: str) -> int:
    """Magnitude bits per element, the hidden bit included (bfp8 7, bfp4 3, bf16 8)."""
    info = FORMATS[DataFormat(fmt)]
    return info.mantissa_bits if info.shared_exponent_group else info.mantissa_bits + 1


def quantize(x: torch.Tensor, fmt: str) -> torch.Tensor:
    """`x` (any float dtype) rounded to block-float `fmt`, returned as float32."""
    import torch

    bits = mantissa_bits(fmt)
    xf = x.detach().to(torch.float32)
    shape = xf.shape
    last = shape[-1] if xf.dim() else 1
    pad = (-last) % GROUP
    flat = torch.nn.functional.pad(xf.reshape(-1, last), (0, pad))
    groups = flat.reshape(flat.shape[0], -1, GROUP)
    mag = groups.abs()
    # frexp: |v| = f * 2^k with f in [0.5, 1), so the value's top bit is 2^(k-1).
    _, k = torch.frexp(mag.amax(dim=-1, keepdim=True))
    scale = torch.ldexp(torch.ones_like(mag), k - bits)
    q = torch.round(mag / scale).clamp(max=2**bits - 1)
    out = torch.sign(groups) * q * scale
    out = torch.where(mag.amax(dim=-1, keepdim=True) > 0, out, torch.zeros_like(out))
    out = out.reshape(flat.shape)[:, :last]
    return out.reshape(shape)


def quantize_inputs(program: Program, inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """The inputs with every block-float input tensor quantized to its format."""
    ins = [t for t in program.tensors if t.role == "input"]
    if len(ins) != len(inputs):
        return inputs  # the runner reports the mismatch with its own message
    return tuple(
        quantize(x, t.dtype).to(x.dtype) if is_block_float(t.dtype) else x
        for t, x in zip(ins, inputs, strict=True)
    )


def tolerance(fmt: str) -> float:
    """Allowed max |out - ref| / max |ref| for a block-float output: both are rounded to
    the format from fp32 results that differ by summation order only, so they can land
    one unit of the group's last kept bit apart, at most ``2^-(bits - 1)`` of the group's
    (and so of the tensor's) largest magnitude."""
    return 2.0 ** -(mantissa_bits(fmt) - 1)
