"""Run one Program on tt-lang-sim with given DRAM contents and read every tensor back.

`runner.verify` checks a single-output kernel against a reference; a CUDA program is a
sequence of launches whose outputs feed the next launch, so this runs one launch with
all its tensors (outputs start from their current contents: a guarded kernel updates
an array in place) and returns every tensor after it. A Helion kernel whose `hl.barrier`
phases became launches is verified the same way (`verify_launches`).
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from loom.arch import Arch, load_arch
from loom.backends.ttlang.emit import ident
from loom.backends.ttlang.runner import (
    Noise,
    Pending,
    VerifyResult,
    _emitted,
    _failure,
    _from_grid,
    _load,
    _native,
    _simulator,
    _to_grid,
    checked_outputs,
    outputs_verdict,
)
from loom.errors import VerificationError
from loom.ir.program import DramTensor, Program

if TYPE_CHECKING:
    import torch

TILE = 32
_FLOATS = ("bf16", "fp16", "fp32")
"""Formats `run_program` loads and reads back as they are."""


def run_program(
    program: Program,
    values: dict[str, torch.Tensor],
    source_dir: str | None = None,
    native: bool = False,
    arch: Arch | None = None,
) -> dict[str, torch.Tensor]:
    """Emit `program`, run it on tt-lang-sim with `values` (2-D tensors, one per program
    tensor, tile-aligned) and return every tensor's contents afterwards (float32).

    `native` runs bf16 tensors in bf16 arithmetic (tt-lang-sim without its float32
    promotion), as a device computing in bf16 would; by default it computes in fp32.
    `arch` is the description the program was compiled for (a user's file or a variant
    included); without it the built-in description the program names is loaded."""
    import torch

    target = str(Path(source_dir) / f"{ident(program.kernel)}.py") if source_dir else None
    arch = arch or load_arch(program.arch)
    log = io.StringIO()
    with (
        _emitted(program, target) as path,  # a temporary folder is removed afterwards
        _simulator(arch.l1_usable_bytes, arch.dataflow_buffers) as (sim_ttl, ttnn),
        _native(native),
    ):
        module = _load(path, sim_ttl)
        dtypes = {"bf16": ttnn.bfloat16, "fp16": ttnn.float16, "fp32": ttnn.float32}
        devs = []
        for t in program.tensors:
            if t.name not in values:
                raise VerificationError(
                    f"no contents given for tensor {t.name!r} of {program.kernel!r}."
                )
            host = values[t.name].float()
            if tuple(host.shape) != (t.rows * TILE, t.cols * TILE):
                raise VerificationError(
                    f"tensor {t.name!r} has shape {tuple(host.shape)}, the program expects "
                    f"{(t.rows * TILE, t.cols * TILE)}."
                )
            devs.append(
                ttnn.from_torch(host.clone(), dtype=dtypes[t.dtype], layout=ttnn.TILE_LAYOUT)
            )
        for _, dtype, rows, cols in module.LIKENESS:
            scratch = torch.zeros(rows * TILE, cols * TILE)
            devs.append(ttnn.from_torch(scratch, dtype=dtypes[dtype], layout=ttnn.TILE_LAYOUT))
        kernel = getattr(module, module.KERNEL)
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(log):
            warnings.simplefilter("always")
            try:
                kernel(*devs)
            except Exception as err:
                raise _failure(program, path, err, log.getvalue()) from err
        for w in caught:
            text = str(w.message)
            if "L1 memory limit" in text or "dataflow buffers" in text:
                raise _failure(program, path, text, log.getvalue())
        return {
            t.name: ttnn.to_torch(d).float().clone()
            for t, d in zip(program.tensors, devs, strict=False)
        }


def verify_launches(
    programs: tuple[Program, ...],
    tensors: dict[str, torch.Tensor],
    references: dict[str, torch.Tensor],
    arch: Arch | None = None,
    noise: Noise | None = None,
) -> VerifyResult:
    """Run `programs` one after the other on tt-lang-sim, DRAM contents persisting between
    them (a later launch reads what an earlier one stored: the grid-wide barrier between
    launches is the launch boundary), then compare every output that has a reference
    (allowing the reference's rounding `noise` where it is larger: `checked_outputs`).

    `tensors` holds the kernel's inputs by name; a tensor no launch was given and none
    wrote yet starts as zeros."""
    import torch

    odd = sorted(
        {f"{t.name} ({t.dtype})" for p in programs for t in p.tensors if t.dtype not in _FLOATS}
    )
    if odd:
        raise VerificationError(
            f"kernel {programs[0].kernel!r} runs as {len(programs)} launches and has "
            f"block-float or int32 tensors ({', '.join(odd)}); Loom verifies a sequence of "
            "launches with bf16, fp16 and fp32 tensors only (the host-side block-float "
            "emulation and int32 grids are not carried between launches yet). Compile it "
            "without --dtype block floats, or with float tensors."
        )
    state = dict(tensors)
    wall = 0.0
    written: dict[str, DramTensor] = {}
    for program in programs:
        values = {
            t.name: _to_grid(state[t.name], t)
            if t.name in state
            else torch.zeros(t.rows * TILE, t.cols * TILE)
            for t in program.tensors
        }
        start = time.perf_counter()
        after = run_program(program, values, arch=arch)
        wall += time.perf_counter() - start
        for t in program.tensors:
            if t.role == "output":
                out = _from_grid(after[t.name], t)
                state[t.name] = out.to(torch.bfloat16).float() if t.dtype == "bf16" else out
                written[t.name] = t
    pending: list[Pending] = [
        (name, state[name].reshape(ref.shape), ref, written[name].dtype, 0.0)
        for name, ref in references.items()
        if name in written
    ]
    if not pending:
        raise VerificationError(
            f"no reference matches an output of kernel {programs[0].kernel!r} "
            f"({', '.join(written)}); return the outputs from the reference."
        )
    checks = checked_outputs(pending, noise)
    return outputs_verdict(
        checks, f"{programs[0].kernel} on {programs[0].arch} ({len(programs)} launches)", wall, ""
    )
