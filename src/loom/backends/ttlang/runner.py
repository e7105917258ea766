"""Run an emitted kernel on tt-lang-sim 1.1.6 and compare it with the torch reference.

The simulator is run in-process, with its process-wide side effects contained:

* importing `ttl.sim` rebinds `torch.bfloat16`/`float16` to float32 (its "float32
  promotion"); the binding is kept while the kernel runs (the simulator's own fills
  rely on it) and the real dtypes are put back afterwards, so Helion and torch code in
  the caller's process keep seeing bf16;
* torch runs single-threaded during the run (torch's pool makes the simulator's many
  tiny ops erratic) and gets its thread count back afterwards;
* the simulator's error pretty-printer loads a `diagnostics.py` its wheel does not ship;
  a stand-in records the diagnostics (blocked buffer, nodes, source line) instead, so
  the real error reaches the VerificationError message;
* every run starts from a fresh simulator context (pipe queues persist otherwise), with
  the architecture's usable L1 as the limit, and its warnings (L1 overflow, too many
  buffers) fail verification.

Tolerance (bf16 outputs): the simulator computes in fp32 from the same bf16 inputs as the
fp32 torch reference; both results differ by fp32 rounding only (summation order), and
both are rounded to bf16, which can then land on neighbouring bf16 values: one bf16 ulp,
at most 2^-7 of the value, and so at most 2^-7 of max |ref|. The tolerance allows two such
ulps of the largest output, `max |out - ref| <= 2^-6 * max |ref|`; an indexing, buffering
or protocol bug misplaces whole tiles and shows as errors of order 1.

An output that comes out of a cancellation is mostly rounding noise, in the reference as
in the kernel: where it fails its format's tolerance, the reference is run again in fp64
and the output may differ by a few times the fp32 reference's own noise
(`loom.backends.ttlang.conditioning`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import shutil
import sys
import tempfile
import time
import types
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.arch import Arch, load_arch
from loom.backends.ttlang.blockfloat import quantize
from loom.backends.ttlang.blockfloat import tolerance as block_tolerance
from loom.backends.ttlang.conditioning import NOISE_MULTIPLE, conditioned_tolerance
from loom.backends.ttlang.emit import emit, ident
from loom.errors import VerificationError
from loom.ir.formats import is_block_float
from loom.ir.geometry import TILE
from loom.ir.integers import range_error
from loom.ir.program import (
    Compute,
    DramTensor,
    FillExpr,
    IfCore,
    Loop,
    Program,
    Reserve,
    Stmt,
    Wait,
)
from loom.symbolic import Const

if TYPE_CHECKING:
    import torch

TOLERANCE = {"bf16": 2.0**-6, "fp16": 2.0**-9, "fp32": 1e-4, "int32": 0.0}
"""Allowed max |out - ref| / max |ref| per output dtype (see the module docstring); int32
outputs must be exact (integer arithmetic has no rounding)."""


@dataclass(frozen=True)
class VerifyResult:
    passed: bool
    max_abs_error: float
    max_rel_error: float
    """max |out - ref| / max |ref|."""
    tolerance: float
    wall_seconds: float
    """Time of the simulated operation call alone."""
    message: str
    source_path: str
    format_note: str = ""
    """How block-float tensors were checked (emulation, tolerance); empty without them."""
    outputs: tuple[OutputCheck, ...] = ()
    """One check per output tensor (several when the kernel returns a tuple)."""
    reference: str = ""
    """Which reference the outputs were compared with, in words (set by the caller that
    chose it)."""


@dataclass(frozen=True)
class OutputCheck:
    """The comparison of one output tensor with its reference."""

    name: str
    passed: bool
    max_abs_error: float
    max_rel_error: float
    tolerance: float
    """The relative tolerance it was held to: its format's, or larger where the reference's
    own rounding noise is (`conditioning.conditioned_tolerance`)."""
    noise: float = 0.0
    """The fp32 reference's rounding noise, max |ref_fp32 - ref_fp64| (absolute); 0 where
    it was not measured (the output passed its format's tolerance, or the reference runs
    at one precision only)."""


Noise = Callable[[], Mapping[str, float]]
"""The fp32 reference's rounding noise per output name, measured on demand (it runs the
reference again in fp64), for the outputs that fail their format's tolerance."""


class _CompileError:
    """Stand-in for the compiler's diagnostic class that the simulator's error
    printer loads from a file its wheel does not ship."""

    def __init__(self, message: str, source_file: str = "", line: int = 0, col: int = 1) -> None:
        self.text = f"{source_file}:{line}: {message}"

    def format(self) -> str:
        return self.text


class _SourceDiagnostic:
    def __init__(self, source_lines: list[str], source_file: str) -> None:
        self.source_file = source_file

    def format_error(self, line: int, col: int, message: str, label: str = "error") -> str:
        return f"{label}: {self.source_file}:{line}: {message}"


_DIAGNOSTICS = types.SimpleNamespace(
    TTLangCompileError=_CompileError, SourceDiagnostic=_SourceDiagnostic
)


@contextlib.contextmanager
def _simulator(l1_bytes: int, buffers: int) -> Iterator[tuple[Any, Any]]:
    """The simulator's (ttl, ttnn), with its side effects undone on exit; it holds a
    core to the architecture's usable L1 and dataflow buffers."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    from ttl.sim import diagnostics, program, ttl, ttnn
    from ttl.sim.context import reset_context

    real = {"bfloat16": ttnn.bfloat16, "float16": ttnn.float16}
    lazy = diagnostics.lazy_import_diagnostics
    try:
        for name in real:
            setattr(torch, name, torch.float32)
        diagnostics.lazy_import_diagnostics = lambda: _DIAGNOSTICS
        reset_context()
        program.set_max_l1_bytes(l1_bytes)
        program.set_max_dfbs(buffers)
        yield ttl, ttnn
    finally:
        diagnostics.lazy_import_diagnostics = lazy
        for name, dtype in real.items():
            setattr(torch, name, dtype)
        torch.set_num_threads(threads)


@contextlib.contextmanager
def _native(on: bool) -> Iterator[None]:
    """tt-lang-sim in native narrow dtypes for the duration (promotion restored after)."""
    if not on:
        yield
        return
    import torch
    from ttl.sim.ttnnsim import set_disable_float32_promotion

    promoted = {"bfloat16": torch.bfloat16, "float16": torch.float16}
    set_disable_float32_promotion(True)
    try:
        yield
    finally:
        set_disable_float32_promotion(False)
        for name, dtype in promoted.items():
            setattr(torch, name, dtype)


def _load(path: Path, sim_ttl: Any) -> types.ModuleType:
    """Import the kernel file with `import ttl` resolving to the simulator."""
    spec = importlib.util.spec_from_file_location(f"loom_ttlang_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("ttl")
    sys.modules["ttl"] = sim_ttl
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop("ttl", None)
        else:
            sys.modules["ttl"] = saved
    return module


def _to_grid(x: torch.Tensor, t: DramTensor) -> torch.Tensor:
    """A tensor as its 2-D tile grid: padded (grid axes to whole waves, the last two dims
    to the tile) with zeros, leading dims folded into rows."""
    import torch

    stored = t.stored_shape
    dtype = torch.int32 if t.dtype == "int32" else torch.float32
    rows = t.rows * TILE // math.prod(stored[:-2])
    grid = torch.zeros(*stored[:-2], rows, t.cols * TILE, dtype=dtype)
    grid[tuple(slice(0, d) for d in t.shape)] = x.to(dtype)
    return grid.reshape(t.rows * TILE, t.cols * TILE)


def _from_grid(y: torch.Tensor, t: DramTensor) -> torch.Tensor:
    """The logical tensor back out of its padded tile grid."""
    stored = t.stored_shape
    grid = y.reshape(*stored[:-2], t.rows * TILE // math.prod(stored[:-2]), t.cols * TILE)
    return grid[tuple(slice(0, d) for d in t.shape)].reshape(t.shape)


def _device_tensors(program: Program, inputs: tuple[Any, ...], ttnn: Any, module: Any) -> list[Any]:
    import torch

    ins = [t for t in program.tensors if t.role == "input"]
    if len(ins) != len(inputs):
        raise VerificationError(
            f"kernel {program.kernel!r} takes {len(ins)} inputs, but {len(inputs)} were given."
        )
    for t, x in zip(ins, inputs, strict=True):
        if tuple(x.shape) != t.shape:
            raise VerificationError(
                f"input {t.name!r} of kernel {program.kernel!r} has shape {tuple(x.shape)}, "
                f"but the program was compiled for {t.shape}."
            )
    for t, x in zip(ins, inputs, strict=True):
        if x.numel() and not x.is_floating_point():  # the host narrows integers as read
            narrowed = range_error(t.name, x.dtype, int(x.min()), int(x.max()))
            if narrowed:
                raise VerificationError(narrowed)
    host = dict(zip((t.name for t in ins), inputs, strict=True))
    dtypes = sim_dtypes(ttnn)
    out = []
    for t in program.tensors:
        value = host.get(t.name)
        int32 = t.dtype == "int32"
        blank = torch.zeros(t.rows * TILE, t.cols * TILE, dtype=torch.int32 if int32 else None)
        grid = _to_grid(value, t) if value is not None else blank
        out.append(ttnn.from_torch(grid, dtype=dtypes[t.dtype], layout=ttnn.TILE_LAYOUT))
    for _, dtype, rows, cols in module.LIKENESS:
        scratch = torch.zeros(
            rows * TILE, cols * TILE, dtype=torch.int32 if dtype == "int32" else None
        )
        out.append(ttnn.from_torch(scratch, dtype=dtypes[dtype], layout=ttnn.TILE_LAYOUT))
    return out


def sim_dtypes(ttnn: Any) -> dict[str, Any]:
    """Loom format -> the ttnn dtype tt-lang-sim runs it as. The simulator has bfloat8_b
    (backed by bfloat16) but no bfloat4_b, which runs as bfloat16: the host quantizes
    block-float inputs and outputs itself (loom.backends.ttlang.blockfloat), and every
    bfp4 value is exact in bfloat16. int32 tiles are backed by torch int32 (its ttnn
    has no `int32` name, but its tensors and tile ops run on any torch dtype, integer
    arithmetic included)."""
    import torch

    return {
        "int32": getattr(ttnn, "int32", torch.int32),
        "bf16": ttnn.bfloat16,
        "fp16": ttnn.float16,
        "fp32": ttnn.float32,
        "bfp8": getattr(ttnn, "bfloat8_b", ttnn.bfloat16),
        "bfp4": ttnn.bfloat16,
    }


def _failure(program: Program, path: Path, err: BaseException | str, log: str) -> VerificationError:
    text = str(err).strip()
    first = (text.splitlines()[0] if text else type(err).__name__).rstrip(".")
    where = [ln.strip() for ln in log.splitlines() if str(path) in ln or "blocked on" in ln]
    detail = "; ".join(dict.fromkeys(where))[:1200]
    if "Deadlock" in text:
        kind = "a deadlock (every kernel waits for a block or a message that never comes)"
    elif "L1 memory limit" in text or "dataflow buffers" in text:
        kind = "buffers that do not fit the core (L1 bytes or buffer count)"
    else:
        kind = "a violation of the buffer or pipe protocol"
    return VerificationError(
        f"tt-lang-sim rejected kernel {program.kernel!r} ({path}) with {kind}: {first}"
        + (f" [{detail}]" if detail else "")
        + ". Inspect the emitted source at the lines given."
    )


def _run(
    program: Program, path: Path, inputs: tuple[Any, ...], arch: Arch | None = None
) -> tuple[Any, float]:
    """Run the kernel; returns (output tile grid as torch, seconds in the operation)."""
    arch = arch or load_arch(program.arch)
    log = io.StringIO()
    native = accumulation_steps(program) > 0
    with (
        _simulator(arch.l1_usable_bytes, arch.dataflow_buffers) as (sim_ttl, ttnn),
        _native(native),
    ):
        module = _load(path, sim_ttl)
        tensors = _device_tensors(program, inputs, ttnn, module)
        kernel = getattr(module, module.KERNEL)
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(log):
            warnings.simplefilter("always")
            start = time.perf_counter()
            try:
                kernel(*tensors)
            except Exception as err:
                raise _failure(program, path, err, log.getvalue()) from err
            wall = time.perf_counter() - start
        for w in caught:
            if re.search(r"L1 memory limit|dataflow buffers", str(w.message)):
                raise _failure(program, path, str(w.message), log.getvalue())
        outputs = [i for i, t in enumerate(program.tensors) if t.role == "output"]
        grids = [ttnn.to_torch(tensors[i]).clone() for i in outputs]
        return (grids, ttnn.bfloat16), wall


@contextlib.contextmanager
def _emitted(program: Program, source_path: str | None) -> Iterator[Path]:
    """Emit `program` into `source_path`, or into a fresh temporary folder that is removed
    again whatever the outcome."""
    folder: Path | None = None
    if source_path is None:
        folder = Path(tempfile.mkdtemp(prefix="loom_ttlang_"))
        path = folder / f"{ident(program.kernel)}.py"
    else:
        path = Path(source_path)
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.write_text(emit(program))
        yield path
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


_TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "int32": "int32"}


def _dtype_name(torch_dtype: str) -> str:
    """Loom's name of a torch dtype (`torch.float16` -> `fp16`); fp32 for any other."""
    names = {f"torch.{full}": short for short, full in _TORCH_DTYPES.items()}
    return names.get(torch_dtype, "fp32")


def run(
    program: Program, inputs: tuple[torch.Tensor, ...]
) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """Emit `program`, run it on tt-lang-sim and return its output (a tuple when it has
    several), each in its logical shape and dtype, as calling the kernel returns them; a
    block-float output comes back as float32 holding its quantized values. The emitted
    file lives in a temporary folder removed afterwards.

    Raises VerificationError when the simulator fails (deadlock, protocol violation, L1
    overflow)."""
    import torch

    with tempfile.TemporaryDirectory(prefix="loom_ttlang_") as folder:
        path = Path(folder) / f"{ident(program.kernel)}.py"
        path.write_text(emit(program))
        (grids, _), _ = _run(program, path, inputs)
    values = []
    for grid, t in zip(grids, [t for t in program.tensors if t.role == "output"], strict=True):
        out = _from_grid(grid, t)
        if is_block_float(t.dtype):
            values.append(quantize(out, t.dtype))  # float32 holding the block-float values
        else:
            values.append(out.to(getattr(torch, _TORCH_DTYPES[t.dtype])))
    return values[0] if len(values) == 1 else tuple(values)


def verify(
    program: Program,
    inputs: tuple[torch.Tensor, ...],
    reference_output: torch.Tensor,
    source_path: str | None = None,
    arch: Arch | None = None,
) -> VerifyResult:
    """Emit `program`, run it on tt-lang-sim and compare its output with the reference
    (with the tolerance of its format, `_check`).

    `arch` is the description the program was compiled for (default: the built-in one the
    program names). Without `source_path` the kernel is written to a temporary folder that
    is removed again, whatever the outcome. Raises VerificationError when the simulator
    fails (deadlock, protocol violation, L1 overflow); returns passed=False on a numeric
    mismatch.
    """
    with _emitted(program, source_path) as path:
        (grids, real_bf16), wall = _run(program, path, inputs, arch)
    grid = grids[0]
    out_t = next(t for t in program.tensors if t.role == "output")
    if tuple(reference_output.shape) != out_t.shape:
        raise VerificationError(
            f"the reference output has shape {tuple(reference_output.shape)}, but kernel "
            f"{program.kernel!r} writes {out_t.name!r} of shape {out_t.shape}."
        )
    out = _from_grid(grid, out_t)
    if out_t.dtype == "bf16":
        out = out.to(real_bf16)
    extra = accumulation_tolerance(program)
    check = _check(out_t.name, out, reference_output, out_t.dtype, extra)
    passed, abs_err, rel, tol = (
        check.passed,
        check.max_abs_error,
        check.max_rel_error,
        check.tolerance,
    )
    verdict = "PASS" if passed else "FAIL"
    message = (
        f"{verdict} {program.kernel} on {program.arch} ({program.grid[0]}x{program.grid[1]} "
        f"cores): max abs error {abs_err:.3e}, max rel error {rel:.3e} "
        f"(tolerance {tol:.3e}{_format_note(program)}), simulated in {wall:.2f} s"
    )
    note = _format_note(program).removeprefix("; ")
    return VerifyResult(passed, abs_err, rel, tol, wall, message, str(path), note, (check,))


def accumulation_steps(program: Program) -> int:
    """Steps of the longest accumulation in the output's format (an accumulator placed
    ``output``: a held store block added into inside a loop); 0 when there is none."""
    stores = {b.name for b in program.buffers if b.role == "store"}

    def steps(body: tuple[Stmt, ...], target: str, trips: int) -> int:
        """The most steps adding into `target` within `body`, `trips` deep in loops."""
        most = 0
        for s in body:
            if isinstance(s, Compute) and s.accumulate and s.dst == target:
                if not isinstance(s.expr, FillExpr):
                    most = max(most, trips)
            elif isinstance(s, Loop):
                n = s.count.value if isinstance(s.count, Const) else 1
                most = max(most, steps(s.body, target, trips * n))
            elif isinstance(s, Wait | Reserve):
                most = max(most, steps(s.body, target, trips))
            elif isinstance(s, IfCore):
                most = max(most, steps(s.then, target, trips), steps(s.orelse, target, trips))
        return most

    def find(body: tuple[Stmt, ...]) -> int:
        most = 0
        for s in body:
            if isinstance(s, Reserve) and s.buffer in stores:
                most = max(most, steps(s.body, s.buffer, 1))
            for inner in _children(s):
                most = max(most, find(inner))
        return most

    return find(program.compute)


def _children(s: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    if isinstance(s, IfCore):
        return (s.then, s.orelse)
    if isinstance(s, Loop | Wait | Reserve):
        return (s.body,)
    return ()


def accumulation_tolerance(program: Program) -> float:
    """The extra error an accumulation in the output's format may add: every step rounds
    the partial sum to the format (half an ulp, at most 2^-(p) of it for p bits of
    precision), so n steps add at most n 2^-p of the largest partial, taken as the
    largest output (partial sums of a GEMM on centred data grow toward the final one).
    The simulator then runs in the format's own arithmetic (`_native`), as the device
    does; bf16 has p = 8."""
    steps = accumulation_steps(program)
    return steps * 2.0**-8 if steps else 0.0


def _format_note(program: Program) -> str:
    """How the block-float tensors were checked, for the verify report."""
    bf = [f"{t.name} {t.dtype}" for t in program.tensors if is_block_float(t.dtype)]
    if not bf:
        return ""
    out_t = next(t for t in program.tensors if t.role == "output")
    tol = (
        f"; output tolerance 2^-{-round(math.log2(block_tolerance(out_t.dtype)))} of max |ref|, "
        "one unit of the block's last mantissa bit"
        if is_block_float(out_t.dtype)
        else ""
    )
    return (
        f"; block-float {', '.join(bf)} emulated in torch (shared exponent per 16 values of "
        f"a face row, round to nearest even){tol}"
    )


def _check(
    name: str,
    out: torch.Tensor,
    ref: torch.Tensor,
    dtype: str,
    extra: float = 0.0,
    noise: float = 0.0,
) -> OutputCheck:
    """One output against its reference with the tolerance of its format (plus `extra`),
    or `NOISE_MULTIPLE` times the reference's rounding `noise` where that is larger
    (`conditioning.conditioned_tolerance`): a block-float output is compared after
    rounding both to the format."""
    tol = TOLERANCE.get(dtype, TOLERANCE["fp32"]) + extra
    if is_block_float(dtype):
        out, ref = quantize(out.float(), dtype), quantize(ref.float(), dtype)
        tol = block_tolerance(dtype) + extra
    out, ref = out.double(), ref.double()  # int32 values beyond 2^24 compared exactly
    abs_err = float((out - ref).abs().max()) if ref.numel() else 0.0
    scale = max(float(ref.abs().max()) if ref.numel() else 0.0, 1e-30)
    rel = abs_err / scale
    if dtype != "int32":  # integer outputs are exact: no rounding noise to allow
        tol = conditioned_tolerance(tol, scale, noise)
    return OutputCheck(name, math.isfinite(abs_err) and rel <= tol, abs_err, rel, tol, noise)


Pending = tuple[str, "torch.Tensor", "torch.Tensor", str, float]
"""The arguments of one output's `_check`: name, output, reference, dtype, extra."""


def checked_outputs(pending: list[Pending], noise: Noise | None) -> list[OutputCheck]:
    """Every output checked with its format's tolerance; where one fails and `noise` is
    given, the reference's rounding noise is measured (once, for all outputs) and the
    failing ones are checked again with it (`conditioning`)."""
    checks = [_check(*p) for p in pending]
    if noise is None or all(c.passed for c in checks):
        return checks
    measured = noise()
    return [
        c if c.passed else _check(*p, noise=measured.get(c.name, 0.0))
        for c, p in zip(checks, pending, strict=True)
    ]


def _device_value(grid: torch.Tensor, t: DramTensor, real_bf16: torch.dtype) -> torch.Tensor:
    """An output as the kernel stored it: its tiles gathered, a bf16 one in the dtype the
    simulator really computed it in."""
    out = _from_grid(grid, t)
    return out.to(real_bf16) if t.dtype == "bf16" else out


def verify_outputs(
    program: Program,
    inputs: tuple[torch.Tensor, ...],
    references: dict[str, torch.Tensor],
    source_path: str | None = None,
    arch: Arch | None = None,
    epilogue: Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]] | None = None,
    noise: Noise | None = None,
) -> VerifyResult:
    """Like `verify`, comparing every output tensor with its own reference (by name), each
    with the tolerance of its dtype (or the reference's rounding `noise`, measured on
    demand: `checked_outputs`). A reference whose element count matches but whose
    shape differs (a 1-D output Loom stores as a column) is compared flattened. With an
    `epilogue` (the kernel's host statements after its loop), the references are the
    kernel's returned values by name, compared with the epilogue run on the outputs."""
    with _emitted(program, source_path) as path:
        (grids, real_bf16), wall = _run(program, path, inputs, arch)
    outs = [t for t in program.tensors if t.role == "output"]
    pending: list[Pending] = []
    if epilogue is not None:
        device = {
            t.name: _device_value(grid, t, real_bf16) for t, grid in zip(outs, grids, strict=True)
        }
        returned = epilogue(device)
        dtypes = {t.name: t.dtype for t in outs}
        for name, expected in references.items():
            value = returned[name].float().reshape(expected.shape)
            # a value the host code computed has the dtype it returns (`.to(w.dtype)`)
            dtype = dtypes.get(name) or _dtype_name(str(returned[name].dtype))
            pending.append((name, value, expected, dtype, 0.0))
        checks = checked_outputs(pending, noise)
        return outputs_verdict(checks, f"{program.kernel} on {program.arch}", wall, str(path))
    extra = accumulation_tolerance(program)
    for t, grid in zip(outs, grids, strict=True):
        ref = references.get(t.name)
        if ref is None:
            continue
        if ref.numel() != math.prod(t.shape):
            raise VerificationError(
                f"the reference for output {t.name!r} has shape {tuple(ref.shape)}, but kernel "
                f"{program.kernel!r} writes it with shape {t.shape}; make the reference return "
                "the kernel's outputs in order."
            )
        out = _device_value(grid, t, real_bf16)
        pending.append((t.name, out.reshape(ref.shape), ref, t.dtype, extra))
    if not pending:
        raise VerificationError(
            f"no reference matches an output of kernel {program.kernel!r} "
            f"({', '.join(t.name for t in outs)}); return the outputs from the reference."
        )
    checks = checked_outputs(pending, noise)
    return outputs_verdict(checks, f"{program.kernel} on {program.arch}", wall, str(path))


def outputs_verdict(
    checks: list[OutputCheck], subject: str, wall: float, source: str
) -> VerifyResult:
    """One verdict over every output: it passes only if each does, and it reports the
    output nearest its tolerance (an exact-comparison output with any error is worst)."""
    worst = max(
        checks,
        key=lambda c: (
            c.max_rel_error / c.tolerance if c.tolerance else (math.inf if c.max_rel_error else 0.0)
        ),
    )
    passed = all(c.passed for c in checks)
    detail = "; ".join(
        f"{c.name}: max abs {c.max_abs_error:.3e}, rel {c.max_rel_error:.3e} "
        f"(tol {c.tolerance:.1e}{noise_note(c)})"
        for c in checks
    )
    return VerifyResult(
        passed,
        worst.max_abs_error,
        worst.max_rel_error,
        worst.tolerance,
        wall,
        f"{'PASS' if passed else 'FAIL'} {subject}: {detail}, simulated in {wall:.2f} s",
        source,
        outputs=tuple(checks),
    )


def noise_note(check: OutputCheck) -> str:
    """Where the tolerance is the reference's rounding noise, say so ("" elsewhere)."""
    if not check.noise:
        return ""
    return f", {NOISE_MULTIPLE:g}x the fp32 reference's rounding noise {check.noise:.1e}"
