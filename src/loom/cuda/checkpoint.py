"""Checkpoint files: a compilation stopped after one stage, written so it can resume.

A checkpoint records what the stage was built from (the source file and its digest, the
defines, the precision, the architecture), the annotations (the policies of this stage
and the earlier ones are already applied; those of the later stages are what a user
edits before resuming) and the printed checkpoint itself. Resuming rebuilds the stage
from those inputs and refuses, with the reason, a file whose source changed, whose
applied policies were edited, whose printed checkpoint no longer matches, or whose
edited later policies are illegal.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from loom.cuda.annotations import Annotations
from loom.errors import AnnotationError

FORMAT: Literal["loom-cuda-checkpoint/1"] = "loom-cuda-checkpoint/1"
STAGES = ("tileplan", "tileflow", "task", "physical")
Stage = Literal["tileplan", "tileflow", "task", "physical"]


class Checkpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["loom-cuda-checkpoint/1"] = FORMAT
    stage: Stage
    source: str
    source_sha256: str
    arch: str
    precision: Literal["bf16", "fp32"]
    defines: tuple[tuple[str, str], ...]
    annotations: Annotations
    applied_sha256: str
    """Digest of the policies already applied (this stage and the earlier ones)."""
    checkpoint: str
    """The printed stage, as `--stop-after` shows it."""

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2) + "\n"


def source_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def applied_digest(ann: Annotations, stage: str) -> str:
    """Digest of the policies of `stage` and every stage before it."""
    upto = STAGES[: STAGES.index(stage) + 1]
    data = {s: getattr(ann, s).model_dump(mode="json") for s in upto}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def load_checkpoint(path: str) -> Checkpoint:
    """Read and validate a checkpoint file (every problem reported together)."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as err:
        raise AnnotationError(f"cannot read checkpoint {path!r}: {err.strerror}.") from None
    except json.JSONDecodeError as err:
        raise AnnotationError(
            f"checkpoint {path!r} is not JSON ({err.msg} at line {err.lineno}); write it "
            "with `--stop-after STAGE --dump-dir DIR`."
        ) from None
    try:
        ck = Checkpoint.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        raise AnnotationError(
            f"checkpoint {path!r} is invalid: {problems}. Edit only the annotations of the "
            "stages after its `stage`, with the values loom.cuda.annotations documents."
        ) from None
    if applied_digest(ck.annotations, ck.stage) != ck.applied_sha256:
        applied = ", ".join(STAGES[: STAGES.index(ck.stage) + 1])
        raise AnnotationError(
            f"checkpoint {path!r}: annotations of the stages it already applied ({applied}) "
            f"were edited, but this {ck.stage} checkpoint was built with the recorded ones; "
            "edit only the later "
            "stages' annotations, or compile again from the source with new annotations."
        )
    if not Path(ck.source).is_file():
        raise AnnotationError(
            f"checkpoint {path!r} was compiled from {ck.source!r}, which is gone; resume "
            "from the directory it was written in, or compile the source again."
        )
    if source_digest(ck.source) != ck.source_sha256:
        raise AnnotationError(
            f"checkpoint {path!r}: {ck.source} changed since the checkpoint was written, so "
            "its stages no longer describe the source; compile the source again."
        )
    return ck
