"""Apply the user's data formats to an imported TileProgram.

A Helion kernel is written (and traced) with torch dtypes, which have no block-float
formats; the user picks the storage format of each tensor argument, and of the
accumulator, on the command line. This pass retypes the TileProgram once, right after the
frontend, so that every later stage (buffers, model, lowering, emission, simulator) reads
the format from the values it already carries:

* an argument's format becomes the TensorArg's dtype and the dtype of every value loaded
  from it (the tile as unpacked from L1 keeps its storage format);
* an output argument's format becomes the dtype of the value stored into it (the packer
  writes that format);
* ``acc`` retypes the loop-carried values of fp32 or bf16 (the matmul accumulators).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from loom.errors import FormatError
from loom.ir.formats import DataFormat, parse_format
from loom.ir.tile import Carried, ForLoop, Load, Store, TileProgram, Value, walk

ACC = "acc"
"""The pseudo-argument naming the accumulator format."""


@dataclass(frozen=True)
class FormatSpec:
    """The user's formats: a default for every tensor argument, per-argument overrides,
    and the accumulator's. Empty fields keep what the kernel source says."""

    default: str = ""
    per_arg: tuple[tuple[str, str], ...] = ()
    acc: str = ""

    @property
    def empty(self) -> bool:
        return not (self.default or self.per_arg or self.acc)

    def label(self) -> str:
        parts = [self.default] if self.default else []
        parts += [f"{k}={v}" for k, v in self.per_arg]
        parts += [f"{ACC}={self.acc}"] if self.acc else []
        return ",".join(parts)


def parse_format_spec(text: str) -> FormatSpec:
    """``bfp8`` / ``bf16,b=bfp4,acc=fp32`` -> FormatSpec (FormatError when malformed)."""
    default, acc, per_arg = "", "", []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        name, _, fmt = item.rpartition("=")
        try:
            value = parse_format(fmt).value
        except ValueError as exc:
            raise FormatError(f"--dtype '{text}': {exc}") from None
        if value == DataFormat.INT32:
            raise FormatError(
                f"--dtype '{text}': --dtype stores float tensors in another float format; "
                "int32 is not one (a tensor is int32 when the kernel's argument is); use "
                "bf16, fp16, fp32, bfp8 or bfp4"
            )
        if not name:
            default = value
        elif name.strip() == ACC:
            if value not in (DataFormat.FP32, DataFormat.BF16, DataFormat.FP16):
                raise FormatError(
                    f"--dtype '{text}': the accumulator lives in the Dst register, which "
                    f"holds fp32, bf16 or fp16, not {value}; use acc=fp32 or acc=bf16"
                )
            acc = value
        else:
            per_arg.append((name.strip(), value))
    return FormatSpec(default, tuple(per_arg), acc)


def apply_formats(program: TileProgram, spec: FormatSpec) -> TileProgram:
    """`program` with the formats of `spec` (FormatError naming an unknown argument)."""
    if spec.empty:
        return program
    names = {a.name for launch in program.launches() for a in launch.args}
    for name, _ in spec.per_arg:
        if name not in names:
            raise FormatError(
                f"--dtype names argument '{name}', which kernel '{program.name}' does not "
                f"have; its tensor arguments are {', '.join(sorted(names))} (and '{ACC}' "
                "for the accumulator)"
            )
    return _apply_formats(program, spec)


def _apply_formats(program: TileProgram, spec: FormatSpec) -> TileProgram:
    """One launch re-typed, then the launches after it."""
    after = _apply_formats(program.after, spec) if program.after is not None else None
    # integer tensors keep their format: --dtype re-stores float data only
    chosen = {
        a.name: a.dtype if a.dtype == DataFormat.INT32 else spec.default or a.dtype
        for a in program.args
    }
    chosen.update(dict(spec.per_arg))
    retype: dict[str, str] = {}
    for op in walk(program.body):
        if isinstance(op, Load) and op.tensor in chosen:
            retype[op.result.name] = chosen[op.tensor]
        elif isinstance(op, Store) and op.tensor in chosen:
            retype[op.value.name] = chosen[op.tensor]
        elif isinstance(op, ForLoop) and spec.acc:
            for c in op.carried:
                if c.init.dtype in (DataFormat.FP32, DataFormat.BF16, DataFormat.FP16):
                    for v in (c.init, c.arg, c.next, c.result):
                        retype.setdefault(v.name, spec.acc)
    args = tuple(dataclasses.replace(a, dtype=chosen[a.name]) for a in program.args)
    body = _retype(program.body, retype)
    return dataclasses.replace(program, args=args, body=body, after=after)


def _retype(node: Any, retype: dict[str, str]) -> Any:
    """Rebuild `node` with every Value named in `retype` given its new dtype."""
    if isinstance(node, Value):
        new = retype.get(node.name)
        return node if new is None or new == node.dtype else dataclasses.replace(node, dtype=new)
    if isinstance(node, tuple):
        return tuple(_retype(x, retype) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {
            f.name: _retype(getattr(node, f.name), retype)
            for f in dataclasses.fields(node)
            if _holds_values(getattr(node, f.name))
        }
        return dataclasses.replace(node, **changes) if changes else node
    return node


def _holds_values(x: Any) -> bool:
    return isinstance(x, Value | tuple | Carried) or (
        dataclasses.is_dataclass(x) and not isinstance(x, type)
    )
