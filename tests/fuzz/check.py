"""The differential check of one fuzzed program, through Loom's own verify path.

`check_program` renders the program to a Helion file, takes it as `loom verify FILE
--kernel NAME` does (`resolve_kernel`, `compile_kernel`, `verify_lowered`: tt-lang-sim
against Helion's interpret mode, each output with its format's tolerance, or Loom's
allowance for an output that is mostly rounding noise, loom.backends.ttlang.conditioning:
the check asks verify, never a rule of its own) on the program's architecture variant,
and checks the model's promises against the lowered program: the L1 its buffers take is
at most the schedule's modeled footprint, its dataflow buffers at most the core's, and
its core grid is the mapping's. Every way this can end is one `Outcome.kind`:

  pass       compiled, verified, promises kept
  refused    a named refusal Loom is allowed to make: a `LoomError` naming the
             construct of a `Refused` program (docs/helion-surface.md, "Not supported"),
             or `InfeasibleError` (nothing fits the variant's grid and L1)
  wrong      tt-lang-sim disagrees with the reference (a wrong answer)
  promise    the lowered program breaks the model's L1 or core promise
  crash      an exception that is not a LoomError (a traceback)
  misrefused a supported program refused, or a refusal that does not name its construct
  accepted   a construct the docs list as not supported compiled anyway
  invalid    Helion's interpret mode cannot run the program (a generator bug)
"""

from __future__ import annotations

import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .grammar import (
    ArchChoice,
    LeadingReduce,
    LoopReduce,
    Program,
    Refused,
    SliceReduce,
    spans,
)
from .render import kernel_name, render

GOOD = ("pass", "refused")
REFUSAL_WORDS = {
    "cumsum": ("cumsum",),
    "erf": ("erf",),
    "pow_other": ("pow", "**"),
    "argmax_grid_tiled": ("argmax",),
    "misaligned_shape": ("multiple of",),
    "reduce_unit_axis": ("extent 1",),
    "reduce_column_vector": ("column vector",),
    "var_single": ("single element",),
}
"""Words the refusal of each `Refused` construct must contain (its name in the docs)."""


@dataclass(frozen=True)
class Outcome:
    kind: str
    detail: str = ""
    construct: str = ""
    """For refusals: what was refused (the `Refused` construct, or the error class)."""
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def good(self) -> bool:
        return self.kind in GOOD


_ARCHS: dict[ArchChoice, Any] = {}


def make_arch(choice: ArchChoice) -> Any:
    """The `Arch` of a choice: a built-in description, or a variant file that names it as
    its `base:` with a smaller grid and L1, loaded as a user's YAML file is."""
    if choice in _ARCHS:
        return _ARCHS[choice]
    import tempfile

    import yaml

    from loom.arch import load_arch

    base = load_arch(choice.base)
    if not (choice.grid_y or choice.grid_x or choice.l1_kib):
        _ARCHS[choice] = base
        return base
    gy, gx = choice.grid_y or base.grid_y, choice.grid_x or base.grid_x
    variant = {
        "base": choice.base,
        "name": f"{choice.base}_{gy}x{gx}_l1{choice.l1_kib}",
        "grid_y": gy,
        "grid_x": gx,
        "worker_noc_y": list(base.worker_noc_y[:gy]),
        "worker_noc_x": list(base.worker_noc_x[:gx]),
    }
    if choice.l1_kib:
        variant["l1_usable_bytes"] = min(base.l1_usable_bytes, choice.l1_kib * 1024)
    with tempfile.TemporaryDirectory(prefix="loom-fuzz-arch-") as folder:
        path = Path(folder) / f"{variant['name']}.yaml"
        path.write_text(yaml.safe_dump(variant))
        _ARCHS[choice] = load_arch(path)  # read once: the Arch keeps no path
    return _ARCHS[choice]


def broken_promises(result: Any, arch: Any) -> list[str]:
    """What the lowered launches do that their schedules did not promise."""
    broken = []
    for lw in result.lowered.launches():
        s, program = lw.schedule, lw.lowered
        l1 = sum(b.footprint_tiles() * arch.tile.bytes(b.dtype) for b in program.buffers)
        if l1 > s.l1_bytes:
            broken.append(f"{s.kernel}: lowered buffers take {l1} B of L1, modeled {s.l1_bytes}")
        if l1 > arch.l1_usable_bytes:
            broken.append(f"{s.kernel}: {l1} B of L1 exceeds {arch.l1_usable_bytes} usable")
        if len(program.buffers) > arch.dataflow_buffers:
            broken.append(
                f"{s.kernel}: {len(program.buffers)} dataflow buffers, the core holds "
                f"{arch.dataflow_buffers}"
            )
        cores = (s.mapping.cores_y, s.mapping.cores_x)
        if program.grid != cores:
            broken.append(f"{s.kernel}: lowered on {program.grid} cores, mapping {cores}")
        if cores[0] > arch.grid_y or cores[1] > arch.grid_x:
            broken.append(f"{s.kernel}: mapping {cores} exceeds the {arch.name} grid")
    return broken


def expected_refusal(program: Program) -> str:
    """The construct of `program` that docs/helion-surface.md lists as not supported
    ("" when none): a `Refused` program's, or a reduction over an axis of extent 1
    without keepdim (the reduced value is a broadcast row or column)."""
    f = program.family
    if isinstance(f, Refused):
        return f.construct
    var = isinstance(f, LeadingReduce) and f.reduce.op == "var"
    if var and program.dims[0] <= f.reduce.correction:  # type: ignore[union-attr]
        return "var_single"  # torch's answer is NaN
    if isinstance(f, SliceReduce | LoopReduce):
        axis = "n" if f.axis == -1 else "m"
        if axis == "m" and spans(f.reduce.expr, program.leaves) == {"m"}:
            return "reduce_column_vector"
        keep = f.reduce.keepdim and isinstance(f, SliceReduce)
        if axis not in spans(f.reduce.expr, program.leaves) and not (
            keep and f.reduce.op in ("sum", "amax", "amin", "mean")
        ):
            return "reduce_unit_axis"
    return ""


def _refusal(program: Program, err: Exception) -> Outcome:
    from loom.errors import InfeasibleError

    text = str(err)
    construct = expected_refusal(program)
    if construct:
        if any(w in text for w in REFUSAL_WORDS[construct]):
            return Outcome("refused", text, construct)
        return Outcome("misrefused", f"{type(err).__name__}: {text}", construct)
    if isinstance(err, InfeasibleError):
        return Outcome("refused", text, "InfeasibleError")
    return Outcome("misrefused", f"{type(err).__name__}: {text}", type(err).__name__)


def _valid_helion(spec: Any) -> str:
    """Why Helion's interpret mode cannot run the file's kernel ("" when it can)."""
    from loom.errors import LoomError
    from loom.kernels.files import interpret_reference

    try:
        with warnings.catch_warnings():  # e.g. torch's on a var with no degrees of freedom
            warnings.simplefilter("ignore")
            interpret_reference(spec.file.kernel)(*spec.file.args)
    except LoomError as err:
        return str(err)
    return ""


def check_program(program: Program, workdir: Path) -> Outcome:
    """Compile and verify `program` (written under `workdir`) and classify the result."""
    from loom.errors import LoomError, VerificationError
    from loom.flows.helion import CompileOptions, compile_kernel
    from loom.flows.lowered import verify_lowered
    from loom.kernels.registry import resolve_kernel

    name = kernel_name(program)
    path = workdir / f"{name}.py"
    path.write_text(render(program))
    start = time.perf_counter()
    spec = None
    try:
        spec = resolve_kernel(str(path), name)
        arch = make_arch(program.arch)
        options = CompileOptions(
            arch, spec.default_shape, formats=program.formats, jobs=1, top_k=1, solver="cpsat",
            time_limit_s=0.5,
        )  # fmt: skip
        result = compile_kernel(spec, options)
        broken = broken_promises(result, arch)
        verdict = verify_lowered(spec, result.lowered, result.log, arch)
        stages = dict(result.log.seconds)
    except VerificationError as err:  # tt-lang-sim rejected the kernel: Loom's fault
        return _timed(Outcome("wrong", str(err)), start)
    except LoomError as err:
        outcome = _refusal(program, err)
        valid = outcome.kind == "refused" and spec is not None and spec.file is not None
        if valid and expected_refusal(program) and (why := _valid_helion(spec)):
            outcome = Outcome("invalid", why, outcome.construct)
        if "interpret mode could not run" in str(err):
            outcome = Outcome("invalid", str(err))
        return _timed(outcome, start)
    except Exception:
        return _timed(Outcome("crash", traceback.format_exc()), start)
    if construct := expected_refusal(program):
        detail = f"compiled; verify {'PASS' if verdict.passed else 'FAIL'}: {verdict.message}"
        return _timed(Outcome("accepted", detail, construct), start)
    if broken:
        return _timed(Outcome("promise", "; ".join(broken), stages=stages), start)
    if not verdict.passed:
        return _timed(Outcome("wrong", verdict.message, stages=stages), start)
    return _timed(Outcome("pass", verdict.message, stages=stages), start)


def _timed(outcome: Outcome, start: float) -> Outcome:
    return Outcome(
        outcome.kind, outcome.detail, outcome.construct, time.perf_counter() - start,
        outcome.stages,
    )  # fmt: skip
