"""Declarative annotations: the per-checkpoint policy choices, read from YAML.

Every field has the seed compiler's default, so an empty file (or none) gives the
default realization. The file is validated once and every problem is reported together;
legality against a particular kernel is checked by the checkpoint that applies the field.

    tileplan: {predicates: boundary, strip_mine: 1, interchange: false, fuse: []}
    tileflow: {stencil_operator: separate, guard_copy: compute, guard_mask: compute,
               reciprocal: compute, scaling: compute,
               halo: tile, halo_conversion: receiver}
    task:     {dm_lanes: 1, streaming: column}
    physical: {cb_depth: 1}
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from loom.errors import AnnotationError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TilePlanPolicy(_Strict):
    predicates: Literal["boundary", "all"] = "boundary"
    """Where guards become element masks: only on tiles the guard cuts, or on every tile."""
    strip_mine: int = 1
    """Reduction tiles per delivery (syrk's k loop strip-mined into blocks of this many)."""
    interchange: bool = False
    """Move the reduction block loop outside the output-tile loop."""
    fuse: tuple[str, ...] = ()
    """Kernels to fuse into one launch (producer first), checked by dependence analysis."""


class TileFlowPolicy(_Strict):
    stencil_operator: Literal["separate", "fused"] = "separate"
    """Within-tile shifts as one operator per neighbour, or one summed operator per axis."""
    guard_copy: Literal["compute", "dm"] = "compute"
    """A guarded copy's interior tiles through the compute engine or moved by DM alone."""
    guard_mask: Literal["compute", "dm"] = "compute"
    """A guarded update old -/+ (column broadcast x row broadcast): masked overlay on
    compute, or the guard sunk into the two broadcast selectors, which DM delivers per
    tile already masked to the tile's active rows/columns (compute does no masking)."""
    reciprocal: Literal["compute", "hoisted"] = "compute"
    """A division by a launch-invariant value (gaussian's a[t][t]) per tile, or its
    reciprocal evaluated once per core before the tile loop and multiplied per tile."""
    scaling: Literal["compute", "dm"] = "compute"
    """Where a product of broadcast factors is formed (the seed's DM-side scaling of
    gaussian's factor): compute only; `dm` is rejected, since a TT-Lang data-movement
    kernel cannot produce a tile that it did not copy (see tileflow.dm_scaling_error)."""
    halo: Literal["tile", "transposed"] = "tile"
    """A column shift (jacobi's west/east operands) applied as a column patch, or in the
    transposed basis: as a row shift and row patch of the transposed tiles, then
    transposed back (one transpose more per tile in Loom, whose patches are compute
    matmuls; in the seed it replaced strided DM column copies by row copies)."""
    halo_conversion: Literal["receiver", "sender"] = "receiver"
    """Who turns a neighbour tile into the edge patch: the core that needs it (after
    reading the neighbour tile from DRAM), or the neighbour's own core, which converts
    its tile once and sends the patch over the NoC."""


class TaskPolicy(_Strict):
    dm_lanes: Literal[1, 2] = 1
    """Operand deliveries on DM0 only, or split between DM0 and DM1."""
    streaming: Literal["column", "row"] = "column"
    """Synchronise once per tile (column) or once per shard row (row)."""


class PhysicalPolicy(_Strict):
    cb_depth: Literal[1, 2] = 1
    """Blocks per operand circular buffer (2 = double-buffered delivery)."""


class Annotations(_Strict):
    tileplan: TilePlanPolicy = TilePlanPolicy()
    tileflow: TileFlowPolicy = TileFlowPolicy()
    task: TaskPolicy = TaskPolicy()
    physical: PhysicalPolicy = PhysicalPolicy()

    def name(self) -> str:
        """A short stable name listing the non-default choices."""
        parts: list[str] = []
        for stage in ("tileplan", "tileflow", "task", "physical"):
            policy = getattr(self, stage)
            default = type(policy)()
            for key in type(policy).model_fields:
                value = getattr(policy, key)
                if value != getattr(default, key):
                    text = ",".join(value) if isinstance(value, tuple) else str(value).lower()
                    parts.append(f"{key}={text}")
        return " ".join(parts) or "default"

    def to_yaml(self) -> str:
        data = self.model_dump(mode="json")
        return yaml.safe_dump(data, sort_keys=False)


def parse_annotations(data: object, source: str) -> Annotations:
    try:
        return Annotations.model_validate(data or {})
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        raise AnnotationError(
            f"annotations {source} are invalid: {problems}. See the fields documented in "
            "loom.cuda.annotations (e.g. `task: {dm_lanes: 2}`)."
        ) from None


def load_annotations(path: str | None) -> Annotations:
    if path is None:
        return Annotations()
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise AnnotationError(f"cannot read annotations {path!r}: {err.strerror}.") from None
    except yaml.YAMLError as err:
        raise AnnotationError(f"annotations {path!r} are not YAML: {err}.") from None
    return parse_annotations(data, repr(path))
