"""After the schedule: lower it to per-core streams and TT-Lang, verify that on
tt-lang-sim against the torch reference, time it on the simulator. A compiled schedule
and a hand-written one (`--schedule`) take the same path from here."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom.arch import Arch
from loom.backends.ttlang import VerifyResult, emit, verify, verify_launches, verify_outputs
from loom.backends.ttlang.blockfloat import quantize_inputs
from loom.errors import FrontendError, ScheduleError
from loom.flows.stages import StageLog
from loom.ir.buffers import BufferedProgram
from loom.ir.flops import count_flops
from loom.ir.program import Program
from loom.ir.schedule import Schedule
from loom.ir.tile import TileProgram
from loom.lower import format_program, lower
from loom.sim import SimResult, boundary_grid, simulate_launches

if TYPE_CHECKING:
    import torch

    from loom.kernels.registry import KernelSpec

MODULE_REFERENCE = "the kernel file's reference()"
"""The reference of a kernel module with Loom's contract (SHAPE_KEYS, make_inputs(shape),
reference), in words."""


@dataclass
class Lowered:
    """A schedule lowered to its per-core Program and emitted as TT-Lang."""

    program: TileProgram
    buffered: BufferedProgram
    schedule: Schedule
    lowered: Program
    source: str
    then: Lowered | None = None
    """The next launch, behind a grid-wide barrier (`TileProgram.after`)."""

    def launches(self) -> tuple[Lowered, ...]:
        return (self, *(self.then.launches() if self.then is not None else ()))

    def modeled_cycles(self, arch: Arch) -> float:
        """The model's cycles for this launch and those after it: each launch's schedule
        (its program launch included) plus the grid barrier at each boundary (the CUDA
        path's `barrier_cycles`), as `loom.sim.simulate_launches` times them."""
        from loom.cuda.cost import barrier_cycles

        chain = self.launches()
        barriers = sum(
            barrier_cycles(arch, boundary_grid(a.lowered.grid, b.lowered.grid))
            for a, b in itertools.pairwise(chain)
        )
        return sum(lw.schedule.modeled_cycles for lw in chain) + barriers

    def modeled_dram_bytes(self) -> int:
        """The DRAM bytes the model moves for this launch and those after it."""
        return sum(lw.schedule.modeled_dram_bytes for lw in self.launches())

    def flops(self, stated: Callable[[dict[str, int]], int] | None) -> int:
        """The floating-point work of this launch and those after it (`kernel_flops`)."""
        chain = self.launches()
        return kernel_flops(stated, self.schedule.shape, (lw.program for lw in chain))


def kernel_flops(
    stated: Callable[[dict[str, int]], int] | None,
    shape: dict[str, int],
    programs: Iterable[TileProgram],
) -> int:
    """A kernel's floating-point work, the one figure behind every TFLOPS Loom prints:
    what its file states (`flops(shape)`, the published convention: GEMM's 2·M·N·K, flash
    attention's 4·B·H·S²·D for its two matmuls), else what its Tile IR does, counted over
    `programs` and the launches after each (`loom.ir.flops`; a stated 0 counts too)."""
    return (stated(shape) if stated is not None else 0) or sum(
        count_flops(p).total for p in programs
    )


def lower_schedule(
    program: TileProgram, buffered: BufferedProgram, schedule: Schedule, arch: Arch, log: StageLog
) -> Lowered:
    lowered = log.timed("lower", lambda: lower(program, buffered, schedule, arch))
    source = log.timed("emit", lambda: emit(lowered))
    log.artifacts["08_program.txt"] = format_program(lowered)
    log.artifacts["kernel_ttlang.py"] = source
    return Lowered(program, buffered, schedule, lowered, source)


def verify_lowered(
    spec: KernelSpec, lowered: Lowered, log: StageLog, arch: Arch | None = None
) -> VerifyResult:
    """Run the emitted TT-Lang on tt-lang-sim and compare with the torch reference.

    `arch` is the description the schedule was compiled for (a user's file included);
    without it the runner loads the built-in description the program names."""
    if lowered.then is not None:
        return log.timed("verify", lambda: _verify_launches(spec, lowered, arch))
    if spec.file is not None:
        from loom.kernels.checks import (  # imports torch
            file_references,
            host_epilogue,
            noise_by_output,
        )

        fk, program = spec.file, lowered.program
        inputs, references, used = file_references(fk, program)
        epilogue = host_epilogue(fk)

        def noise() -> dict[str, float]:  # run only for an output beyond its tolerance
            return noise_by_output(fk, lambda precision: file_references(fk, program, precision)[1])

        result = log.timed(
            "verify",
            lambda: verify_outputs(
                lowered.lowered, inputs, references, arch=arch, epilogue=epilogue, noise=noise
            ),
        )
        return dataclasses.replace(result, reference=used)
    from loom.kernels.checks import index_vectors  # imports torch: only here

    args = spec.make_inputs(lowered.schedule.shape)
    params = list(inspect.signature(spec.kernel.fn).parameters)[: len(args)]
    given = dict(zip(params, args, strict=True))
    named = {**given, **index_vectors(lowered.program)}
    tensors = [a for a in lowered.program.args if a.role == "input"]
    if not all(a.name in named for a in tensors):  # host views: the arguments in order
        named = dict(zip((a.name for a in tensors), args, strict=False))
    # the program's inputs by name, in its order and shapes (a 1-D tensor gains a unit dim)
    inputs = tuple(named[a.name].reshape(a.shape) for a in tensors)
    # Block-float inputs are quantized as the hardware stores them, and the reference is
    # computed from the same quantized values (see loom.backends.ttlang.blockfloat).
    inputs = quantize_inputs(lowered.lowered, inputs)
    quantized = {a.name: x for a, x in zip(tensors, inputs, strict=True)}
    reference = spec.reference(
        *(quantized[p].reshape(v.shape) if p in quantized else v for p, v in given.items())
    )
    if isinstance(reference, tuple | list):  # one reference per returned tensor
        named_refs = _returned_references(spec, lowered.program, tuple(reference))
        result = log.timed(
            "verify", lambda: verify_outputs(lowered.lowered, inputs, named_refs, arch=arch)
        )
        return dataclasses.replace(result, reference=MODULE_REFERENCE)
    out = next(a for a in lowered.program.args if a.role == "output")
    if reference.numel() == math.prod(out.shape):  # a 1-D output is stored with a unit dim
        reference = reference.reshape(out.shape)
    result = log.timed("verify", lambda: verify(lowered.lowered, inputs, reference, arch=arch))
    return dataclasses.replace(result, reference=MODULE_REFERENCE)


def _returned_references(
    spec: KernelSpec, program: TileProgram, references: tuple[torch.Tensor, ...]
) -> dict[str, torch.Tensor]:
    """A module reference's results by output name: in the kernel's return order where
    every returned value is one of the program's outputs (`return out, h_out`), else in
    the program's order of outputs."""
    from loom.kernels.files import returned_tensors  # imports helion: only here

    outs = [a.name for a in program.args if a.role == "output"]
    if len(references) != len(outs):
        raise FrontendError(
            f"the reference of kernel {spec.name!r} returns {len(references)} tensors, but "
            f"the kernel writes {len(outs)} outputs ({', '.join(outs)}); return them all, in "
            "the kernel's order."
        )
    returned = list(returned_tensors(spec.kernel))
    names = returned if sorted(returned) == sorted(outs) else outs
    return dict(zip(names, references, strict=True))


def _verify_launches(spec: KernelSpec, lowered: Lowered, arch: Arch | None) -> VerifyResult:
    """Every launch on tt-lang-sim in order, DRAM persisting between them; the kernel's
    returned tensors compared with the file's reference."""
    from loom.kernels.checks import launch_references, noise_by_output  # imports torch

    if spec.file is None:
        raise ScheduleError(
            f"kernel {spec.name} runs as {len(lowered.launches())} launches (its hl.barrier "
            "phases read tiles other blocks wrote); Loom verifies such kernels from a Helion "
            "file: pass the file and --kernel."
        )
    programs = tuple(lw.program for lw in lowered.launches())
    fk = spec.file
    tensors, references, used = launch_references(fk, programs)
    launches = tuple(lw.lowered for lw in lowered.launches())

    def noise() -> dict[str, float]:  # run only for an output beyond its tolerance
        return noise_by_output(fk, lambda precision: launch_references(fk, programs, precision)[1])

    result = verify_launches(launches, tensors, references, arch, noise)
    return dataclasses.replace(result, reference=used)


def simulate_lowered(lowered: Lowered, arch: Arch, log: StageLog, trace: bool = False) -> SimResult:
    programs = tuple(lw.lowered for lw in lowered.launches())
    return log.timed("simulate", lambda: simulate_launches(programs, arch, trace=trace))
