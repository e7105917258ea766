"""schedule.json as a strict pydantic model: what a schedule file may contain.

Every schedule Loom reads passes through :func:`parse_schedule`, so ``verify``,
``simulate`` and ``run`` give one schedule one verdict: types are strict (a string is not
a number), every number is range-checked, unknown keys are rejected by name, and the
error names the field (``block_sizes.tile_m``) and the file. Checks that need the kernel
(tile sizes per symbol, L1) run when the schedule is lowered (:mod:`loom.lower.lower`).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loom.errors import ScheduleError
from loom.ir.schedule import Copy, Mapping, MeshLevel, Schedule, TopEntry
from loom.ir.scope import Scope

MAX_DIM = 65536
"""Largest value of one shape parameter (and of one block size): 16x the default GEMM,
beyond one chip's DRAM for every shipped kernel, and small enough that binding example
tensors never asks torch for terabytes."""
MAX_CORES = 4096
"""Largest number of cores along one grid dimension a schedule may name."""

Name = Annotated[str, Field(min_length=1, max_length=200)]
Dim = Annotated[int, Field(ge=1, le=MAX_DIM)]
Count = Annotated[int, Field(ge=0, le=2**62)]
Number = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Flag = Annotated[int, Field(ge=0, le=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class LevelFile(_Strict):
    dim: Literal["x", "y"]
    level: Annotated[int, Field(ge=0, le=32)]
    size: Annotated[int, Field(ge=1, le=MAX_CORES)]
    axis: Name


class MappingFile(_Strict):
    levels: Annotated[tuple[LevelFile, ...], Field(min_length=1, max_length=64)]
    cores: tuple[Annotated[int, Field(ge=1, le=MAX_CORES)], ...] | None = None
    """Written by Loom for reading; checked against the levels."""
    view: str | None = None


class CopyFile(_Strict):
    op: Annotated[int, Field(ge=0, le=10_000)]
    tensor: Name
    kind: Literal["load", "store", "gather"]
    mode: Literal["unicast", "multicast", "gather"]
    area: tuple[
        Annotated[int, Field(ge=1, le=MAX_CORES)], Annotated[int, Field(ge=1, le=MAX_CORES)]
    ] = (1, 1)
    region: str = ""
    multicast_dims: tuple[Annotated[str, Field(pattern=r"^[xy][0-9]+$")], ...] = ()
    engine: Literal["", "reader", "writer"] = ""


Pipeline = dict[Name, dict[Annotated[str, Field(pattern="^b_(load|store)$")], Flag]]


class TopEntryFile(_Strict):
    candidate: str
    block_sizes: dict[Name, Dim]
    pipeline: Pipeline
    modeled_cycles: Count


class ScheduleFile(_Strict):
    """The JSON form of :class:`loom.ir.schedule.Schedule` (see that module for meanings)."""

    version: Literal[1] = 1
    kernel: Name
    arch: Name
    shape: Annotated[dict[Name, Dim], Field(min_length=1)]
    dtype: Literal["bf16", "fp16", "fp32", "bfp8", "bfp4"]
    math_fidelity: Literal["LoFi", "HiFi2", "HiFi3", "HiFi4"]
    candidate: str
    mapping: MappingFile
    copies: tuple[CopyFile, ...]
    block_sizes: Annotated[dict[Name, Dim], Field(min_length=1)]
    pipeline: Pipeline
    l1_bytes: Count = 0
    l1_capacity_bytes: Count = 0
    modeled_cycles: Count = 0
    modeled_us: Number = 0.0
    modeled_tflops: Number = 0.0
    modeled_dram_bytes: Count = 0
    modeled_dram_gbps: Number = 0.0
    bottleneck: dict[str, str] = {}
    binding_constraints: tuple[str, ...] = ()
    top_k: tuple[TopEntryFile, ...] = ()
    neighbourhood: dict[str, Any] = {}
    candidates_total: Count = 0
    candidates_after_pruning: Count = 0
    candidates_feasible: Count = 0
    compile_seconds: Number = 0.0
    """Wall time of the compile: the one field that differs between identical runs."""
    waves: dict[Name, Annotated[int, Field(ge=1, le=2**31)]] = {}
    notes: tuple[str, ...] = ()
    formats: Annotated[str, Field(max_length=400)] = ""
    accumulators: dict[Name, Literal["separate", "l1", "output"]] = {}
    realization: Literal["", "looped"] = ""
    buffering: Literal["", "apart"] = ""

    @field_validator("modeled_us", "modeled_tflops", "modeled_dram_gbps", "compile_seconds")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    def cross_check(self) -> list[str]:
        """Problems between fields (not caught by the types)."""
        problems = []
        m = self.mapping
        cores = {"y": 1, "x": 1}
        seen = set()
        for lv in m.levels:
            cores[lv.dim] *= lv.size
            if (lv.dim, lv.level) in seen:
                problems.append(f"mapping.levels: level {lv.level} of {lv.dim} given twice")
            seen.add((lv.dim, lv.level))
            if lv.axis not in self.block_sizes:
                problems.append(
                    f"mapping.levels: axis {lv.axis!r} is not a key of block_sizes "
                    f"({', '.join(sorted(self.block_sizes))})"
                )
        if m.cores is not None and list(m.cores) != [cores["y"], cores["x"]]:
            problems.append(
                f"mapping.cores {list(m.cores)} disagrees with the levels "
                f"({cores['y']}x{cores['x']})"
            )
        for node in self.pipeline:
            try:
                loop = Scope.parse(node).block
            except ValueError as err:
                problems.append(f"pipeline key {err}")
                continue
            if loop is not None and loop not in self.block_sizes:
                problems.append(f"pipeline key {node!r} names no tile symbol of block_sizes")
        return problems

    def to_schedule(self) -> Schedule:
        return Schedule(
            kernel=self.kernel,
            arch=self.arch,
            shape=dict(self.shape),
            dtype=self.dtype,
            math_fidelity=self.math_fidelity,
            candidate=self.candidate,
            mapping=Mapping(
                tuple(MeshLevel(lv.dim, lv.level, lv.size, lv.axis) for lv in self.mapping.levels)
            ),
            copies=tuple(
                Copy(c.op, c.tensor, c.kind, c.mode, c.area, c.region, c.multicast_dims)
                for c in self.copies
            ),
            block_sizes=dict(self.block_sizes),
            pipeline={k: dict(v) for k, v in self.pipeline.items()},
            l1_bytes=self.l1_bytes,
            l1_capacity_bytes=self.l1_capacity_bytes,
            modeled_cycles=self.modeled_cycles,
            modeled_us=self.modeled_us,
            modeled_tflops=self.modeled_tflops,
            modeled_dram_bytes=self.modeled_dram_bytes,
            modeled_dram_gbps=self.modeled_dram_gbps,
            bottleneck=dict(self.bottleneck),
            binding_constraints=self.binding_constraints,
            top_k=tuple(
                TopEntry(t.candidate, dict(t.block_sizes), dict(t.pipeline), t.modeled_cycles)
                for t in self.top_k
            ),
            neighbourhood=dict(self.neighbourhood),
            candidates_total=self.candidates_total,
            candidates_after_pruning=self.candidates_after_pruning,
            candidates_feasible=self.candidates_feasible,
            compile_seconds=self.compile_seconds,
            waves=dict(self.waves),
            notes=self.notes,
            formats=self.formats,
            accumulators=dict(self.accumulators),
            realization=self.realization,
            buffering=self.buffering,
        )


def describe_errors(err: ValidationError, limit: int = 6) -> list[str]:
    """pydantic's errors as short lines naming the field path and the offending value."""
    lines = []
    for e in err.errors()[:limit]:
        where = ".".join(str(p) for p in e["loc"]) or "(top level)"
        if e["type"] == "extra_forbidden":
            lines.append(f"{where}: unknown key")
            continue
        value = e.get("input")
        shown = "" if isinstance(value, dict | list) else f" (got {json.dumps(value)[:40]})"
        lines.append(f"{where}: {e['msg']}{shown}")
    if len(err.errors()) > limit:
        lines.append(f"and {len(err.errors()) - limit} more")
    return lines


def parse_schedule(text: str, where: str) -> Schedule:
    """Validate the text of a schedule file; `where` names it in the ScheduleError."""
    fix = "write it with `loom compile ... --json`, or see `loom schema schedule`."
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ScheduleError(
            f"schedule file {where!r} is not JSON (line {err.lineno}, column {err.colno}: "
            f"{err.msg}); {fix}"
        ) from None
    if not isinstance(data, dict):
        raise ScheduleError(f"schedule file {where!r} must hold a JSON object; {fix}")
    try:
        model = ScheduleFile.model_validate_json(text)
    except ValidationError as err:
        lines = describe_errors(err)
        raise ScheduleError(
            f"schedule file {where!r} is not a valid Loom schedule: {'; '.join(lines)}. Fix "
            f"these fields; {fix}"
        ) from None
    problems = model.cross_check()
    if problems:
        raise ScheduleError(
            f"schedule file {where!r} is inconsistent: {'; '.join(problems)}. {fix[0].upper()}"
            f"{fix[1:]}"
        )
    return model.to_schedule()


def schedule_schema() -> dict[str, Any]:
    """The JSON schema of schedule.json."""
    return ScheduleFile.model_json_schema()
