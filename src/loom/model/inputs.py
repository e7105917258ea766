"""What the model needs besides a candidate: compulsory DRAM traffic, loop depth, and one
problem per distinct candidate signature (the solver's inputs, built once)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from loom.arch import Arch
from loom.ir.buffers import BufferedProgram
from loom.ir.candidate import Candidate, CandidateSet
from loom.ir.geometry import TILE
from loom.ir.problem import Problem
from loom.ir.tile import ForLoop, If, Op, TileProgram
from loom.model.build import Legal, build_problem, check_feasible
from loom.model.core import OpTerms


def compulsory_bytes(program: TileProgram, arch: Arch) -> int:
    total = 0
    for arg in program.args:
        shape = (1, 1, *arg.shape)[-max(len(arg.shape), 2) :]  # a 1-D tensor is one row
        tiles = math.prod(shape[:-2]) * math.ceil(shape[-2] / TILE) * math.ceil(shape[-1] / TILE)
        total += tiles * arch.tile.bytes(arg.dtype if arg.dtype in arch.tile.dtypes else "fp32")
    return total


def loop_depth(program: TileProgram) -> int:
    def depth(ops: tuple[Op, ...]) -> int:
        return max(
            (
                1 + depth(op.body)
                if isinstance(op, ForLoop)
                else depth(op.body)
                if isinstance(op, If)
                else 0
                for op in ops
            ),
            default=0,
        )

    return depth(program.body) + 1


@dataclass
class ProblemCache:
    """Builds each candidate's problem once per *signature*: a problem depends on the
    candidate only through the cores per axis, the cores in use per dimension (the NoC
    routes), the mode, area and engine of every copy and whether the stores go one wave
    late, so candidates that differ in nothing else (say, x2x4 versus x4x2 with the same
    groups) share one."""

    buffered: BufferedProgram
    arch: Arch
    fidelity: str
    flops: int
    built: dict[tuple[object, ...], Problem] = field(default_factory=dict)
    legal: Legal = field(default_factory=dict)
    ops: OpTerms = field(default_factory=dict)

    def build(self, candidate: Candidate) -> Problem:
        key = (
            tuple(sorted(candidate.spatial.items())),
            tuple((c.mode, c.area, c.engine) for c in candidate.copies),
            candidate.gather_axes,
            (candidate.mapping.cores_y, candidate.mapping.cores_x),
            candidate.stores_late,
        )
        if key not in self.built:
            self.built[key] = build_problem(
                self.buffered, candidate, self.arch, self.fidelity, self.flops, self.legal, self.ops
            )
        return dataclasses.replace(self.built[key], candidate=candidate)


def count_feasible(buffered: BufferedProgram, candidates: CandidateSet, arch: Arch) -> int:
    """Candidates with some legal block sizes (feasibility depends only on the cores per
    axis, so each distinct split is checked once)."""
    verdicts: dict[tuple[tuple[str, int], ...], bool] = {}
    count = 0
    for c in candidates.candidates:
        key = tuple(sorted(c.spatial.items()))
        if key not in verdicts:
            verdicts[key] = not check_feasible(buffered, c, arch)
        count += verdicts[key]
    return count
