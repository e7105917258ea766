"""Helion files taken as they are: any number of kernels, a `main()`, no Loom contract.

`loom compile FILE.py --kernel NAME --arg x=1024x512:bf16 --arg eps=1e-5` picks one
kernel, builds its arguments from the command line (names from the kernel's signature)
or from the file's `make_inputs()`, and chooses a reference for verification, in order:
`--reference MODULE:FUNC` when given (an explicit option wins), the file's
`reference_<kernel>` or (in a one-kernel file) `reference`, then Helion's own eager
interpret mode (the same kernel run op by op in CPU torch). Importing
the file never runs its `main()` (it is imported under a module name that is not
`__main__`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import math
import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import helion
import torch

from loom.errors import FrontendError, ShapeError, UsageError
from loom.kernels.tile_reference import PRECISIONS, TileIRReference

DTYPES = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp32": torch.float32,
    "f32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float32": torch.float32,
    "int32": torch.int32,
}
SEED = 0
TILE_IR = "tile-ir"
"""`--reference tile-ir[:fp64]`: Loom's own reference, the kernel's Tile IR in torch."""

ArgValue = torch.Tensor | float | int | bool


@dataclass(frozen=True)
class FileKernel:
    """One kernel of a Helion file with fixed arguments and a chosen reference."""

    name: str
    kernel: helion.Kernel
    params: tuple[str, ...]
    args: tuple[ArgValue, ...]
    reference: Callable[..., object] | TileIRReference
    reference_name: str
    """Which reference is used, in words (printed by `loom verify`; Helion's interpret
    mode gives way to Loom's Tile IR reference where it cannot run on the CPU, and the
    verdict names the one that ran)."""
    output_names: tuple[str, ...]
    """Names of the returned host tensors, in return order ("" where unknown)."""

    @property
    def tensors(self) -> dict[str, torch.Tensor]:
        return {
            p: a for p, a in zip(self.params, self.args, strict=True) if isinstance(a, torch.Tensor)
        }

    @property
    def shape(self) -> dict[str, int]:
        """Every tensor dimension as `name[i]`: the shape record of schedules and reports."""
        return {f"{p}[{i}]": int(d) for p, t in self.tensors.items() for i, d in enumerate(t.shape)}


def kernels_of(module: ModuleType) -> dict[str, helion.Kernel]:
    """The module's Helion kernels by function name, in definition order."""
    found: dict[str, helion.Kernel] = {}
    for value in vars(module).values():
        if isinstance(value, helion.Kernel):
            found.setdefault(value.fn.__name__, value)
    return found


def pick_kernel(module: ModuleType, path: str, name: str | None) -> helion.Kernel:
    kernels = kernels_of(module)
    if not kernels:
        raise FrontendError(
            f"{path} defines no @helion.kernel function; decorate the kernel with "
            "@helion.kernel(...) or pass a shipped kernel name."
        )
    if name is None:
        if len(kernels) == 1:
            return next(iter(kernels.values()))
        raise UsageError(
            f"{path} defines {len(kernels)} Helion kernels ({', '.join(kernels)}); choose one "
            "with --kernel NAME."
        )
    if name not in kernels:
        raise FrontendError(
            f"{path} has no Helion kernel named {name!r}; its kernels are "
            f"{', '.join(kernels)}. Pass one of them to --kernel."
        )
    return kernels[name]


def _parse_tensor(text: str, param: str) -> torch.Tensor | None:
    match = re.fullmatch(r"\s*(\d+(?:x\d+)*)\s*(?::\s*(\w+))?\s*", text)
    if not match:
        return None
    dtype_name = match.group(2) or "bf16"
    if dtype_name not in DTYPES:
        raise ShapeError(
            f"--arg {param}={text}: unknown dtype {dtype_name!r}; use one of "
            f"{', '.join(sorted(DTYPES))} (int32 is the one integer format; fp8 tensors are "
            "not supported)."
        )
    dims = tuple(int(d) for d in match.group(1).split("x"))
    if any(d <= 0 for d in dims):
        raise ShapeError(f"--arg {param}={text}: every dimension must be positive.")
    gen = torch.Generator().manual_seed(SEED + sum(map(ord, param)))
    if DTYPES[dtype_name] == torch.int32:
        return torch.randint(-1000, 1000, dims, generator=gen, dtype=torch.int32)
    return torch.randn(dims, generator=gen).to(DTYPES[dtype_name])


def _parse_scalar(text: str) -> float | int | bool | None:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(low)
    except ValueError:
        pass
    try:
        value = float(low)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_args(
    kernel: helion.Kernel, texts: Sequence[str], path: str
) -> tuple[tuple[str, ...], tuple[ArgValue, ...]]:
    """`--arg` texts -> the kernel's arguments in signature order."""
    sig = inspect.signature(kernel.fn)
    params = tuple(sig.parameters)
    given: dict[str, ArgValue] = {}
    for text in texts:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or name not in params:
            raise ShapeError(
                f"--arg {text!r}: write NAME=SHAPE[:DTYPE] for a tensor (x=1024x512:bf16) or "
                f"NAME=NUMBER for a scalar (eps=1e-5); the parameters of "
                f"{kernel.fn.__name__} are {', '.join(params)}."
            )
        parsed: ArgValue | None = (
            _parse_tensor(value, name) if "x" in value or (":" in value) else None
        )
        if parsed is None:
            parsed = _parse_scalar(value)
        if parsed is None:
            raise ShapeError(
                f"--arg {text!r}: {value!r} is neither a shape like 1024x512:bf16 nor a "
                "number; fix the value."
            )
        given[name] = parsed
    params, values, missing = bind_defaults(kernel, given)
    if missing:
        raise ShapeError(
            f"kernel {kernel.fn.__name__} ({path}) needs "
            + ", ".join(f"--arg {m}=..." for m in missing)
            + " (a tensor as SHAPE[:DTYPE], e.g. 1024x512:bf16; a scalar as a number), or a "
            "make_inputs() in the file that returns its arguments."
        )
    return params, values


def bind_defaults(
    kernel: helion.Kernel, given: Mapping[str, object]
) -> tuple[tuple[str, ...], tuple[Any, ...], tuple[str, ...]]:
    """The kernel's arguments in signature order: those `given` by name, the others from
    the signature's defaults (Loom compiles a scalar as a constant, so a default such as
    `eps: float = 1e-5` is bound as its value, never left to Helion as a symbol); also
    the required parameters that were not given. The one place both the CLI and
    `loom.compile` bind arguments."""
    params = inspect.signature(kernel.fn).parameters
    values: list[object] = []
    missing: list[str] = []
    for name, param in params.items():
        if name in given:
            values.append(given[name])
        elif param.default is not inspect.Parameter.empty:
            values.append(param.default)
        else:
            missing.append(name)
    return tuple(params), tuple(values), tuple(missing)


def _inputs_from_file(
    module: ModuleType, kernel: helion.Kernel, path: str
) -> tuple[tuple[str, ...], tuple[ArgValue, ...]]:
    params = tuple(inspect.signature(kernel.fn).parameters)
    maker = getattr(module, f"make_inputs_{kernel.fn.__name__}", None) or module.make_inputs
    try:
        made = maker()
    except Exception as err:  # a user's function: report, don't crash
        raise ShapeError(
            f"{path}: make_inputs() failed ({type(err).__name__}: {err}); pass the arguments "
            "with --arg NAME=SHAPE[:DTYPE] instead, or fix make_inputs()."
        ) from None
    values = tuple(made) if isinstance(made, tuple | list) else (made,)
    if len(values) > len(params):
        raise ShapeError(
            f"{path}: make_inputs() returns {len(values)} values but {kernel.fn.__name__} "
            f"takes {len(params)} ({', '.join(params)}); make them agree."
        )
    params, bound, missing = bind_defaults(kernel, dict(zip(params, values, strict=False)))
    if missing:
        raise ShapeError(
            f"{path}: make_inputs() returns {len(values)} values but {kernel.fn.__name__} "
            f"needs {len(params)} ({', '.join(params)}); make them agree."
        )
    return params, bound


def _returned(kernel: helion.Kernel) -> list[ast.expr]:
    """The expressions of the kernel's final `return`, in order."""
    try:
        tree = ast.parse(inspect.getsource(kernel.fn).lstrip())
    except (OSError, SyntaxError):
        return []
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return) and n.value is not None]
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    if body and isinstance(body[-1], ast.Return) and body[-1].value is not None:
        returns.append(body[-1])  # the final return, not an early one inside an `if`
    if not returns or returns[-1].value is None:
        return []
    value = returns[-1].value
    return list(value.elts) if isinstance(value, ast.Tuple) else [value]


RETURNED = "returned"
"""The name of a returned expression the host computes after the loop (`losses.mean()`):
`returned<i>` for the i-th returned value (see loom.kernels.checks.host_epilogue)."""


def _output_names(kernel: helion.Kernel) -> tuple[str, ...]:
    """Variable names in the kernel's `return` statement: "" for a view of a tensor
    (`out.view(...)`), `returned<i>` for another expression (computed on the host)."""
    return tuple(
        item.id
        if isinstance(item, ast.Name)
        else ""
        if _viewed(item) is not None
        else f"{RETURNED}{i}"
        for i, item in enumerate(_returned(kernel))
    )


def _viewed(item: ast.expr) -> str | None:
    """The tensor a returned same-elements view (`out.contiguous().view(n, s)`) shows,
    or None for another expression."""
    while (
        isinstance(item, ast.Call)
        and isinstance(item.func, ast.Attribute)
        and item.func.attr in _SAME_ELEMENTS
    ):
        item = item.func.value
    return item.id if isinstance(item, ast.Name) else None


_SAME_ELEMENTS = {"view", "reshape", "contiguous", "flatten", "squeeze", "unsqueeze", "view_as"}
"""Tensor methods that keep the elements in their order (a returned `out.view(...)`)."""


def returned_tensors(kernel: helion.Kernel) -> tuple[str, ...]:
    """The host tensor each returned value is, or is a same-elements view of
    (`out.view(q.size())` is `out`), in return order ("" for other expressions)."""
    return tuple(_viewed(item) or "" for item in _returned(kernel))


def import_reference(text: str) -> Callable[..., object] | TileIRReference:
    module_name, sep, func = text.partition(":")
    if module_name == TILE_IR:
        if func and func not in PRECISIONS:
            raise FrontendError(
                f"--reference {text!r}: Loom's Tile IR reference computes in "
                f"{' or '.join(PRECISIONS)}; write --reference {TILE_IR} or {TILE_IR}:fp64."
            )
        return TileIRReference(func or "fp32")
    if not sep or not module_name or not func:
        raise FrontendError(
            f"--reference {text!r} is not MODULE:FUNC (or path/to/file.py:FUNC) nor "
            f"{TILE_IR}[:fp64] (Loom's own reference); write e.g. --reference mypkg.refs:softmax."
        )
    try:
        if module_name.endswith(".py"):
            module = _import_file(Path(module_name))
        else:
            module = importlib.import_module(module_name)
    except ImportError as err:
        raise FrontendError(
            f"--reference {text!r}: cannot import {module_name!r} ({err}); check the module "
            "name and PYTHONPATH."
        ) from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise FrontendError(
            f"--reference {text!r}: {module_name} has no function {func!r}; name a function "
            "that takes the kernel's arguments and returns its output(s)."
        )
    return fn  # type: ignore[no-any-return]


def _import_file(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"loom_reference_{path.stem}", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ImportError(f"no such file {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NoCpuKernel(FrontendError):
    """Helion's interpret mode reached an op that torch cannot run on the CPU (the
    matmul idiom `torch.addmm(fp32_acc, bf16, bf16)` calls `aten::mm.dtype`) or a
    construct its interpreter cannot run (`hl.register_tunable` asks for a config it
    does not have); the verification falls back to Loom's Tile IR reference."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def _no_cpu_kernel(err: Exception) -> bool:
    """torch's own words for an op without a CPU kernel (for any or for this dtype)."""
    return isinstance(err, NotImplementedError) or "not implemented for" in str(err)


def _interpreter_limit(err: Exception) -> str:
    """Why Helion's own interpreter, not the kernel, failed: `hl.register_tunable` reads
    a config that interpret mode does not have (the error is raised in Helion's
    `tunable_ops`); '' for any other error, which is the kernel's to report."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames or Path(frames[-1].filename).name != "tunable_ops.py":
        return ""
    package = Path(helion.__file__).resolve().parent
    user = [f for f in frames if not Path(f.filename).resolve().is_relative_to(package)]
    where = f" at {Path(user[-1].filename).name}:{user[-1].lineno}" if user else ""
    return f"Helion's interpreter cannot run hl.register_tunable (no config){where}"


def interpret_name(kernel: helion.Kernel) -> str:
    return f"Helion interpret mode (eager CPU torch run of {kernel.fn.__name__})"


def interpret_reference(kernel: helion.Kernel, precision: str = "fp32") -> Callable[..., object]:
    """The same kernel run eagerly, op by op, on CPU torch (Helion's interpret mode), its
    float arguments in `precision` (fp32; fp64 measures the fp32 run's rounding noise);
    raises NoCpuKernel where torch has no CPU kernel for one of its ops."""
    settings = {
        k: getattr(kernel.settings, k) for k in ("static_shapes",) if hasattr(kernel.settings, k)
    }
    eager = helion.kernel(kernel.fn, ref_mode=helion.RefMode.EAGER, **settings)
    dtype = PRECISIONS[precision]

    def run(*args: object) -> object:
        promoted = [  # float data in `precision`; integers (indices, labels) as they are
            a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args
        ]
        try:
            return eager(*promoted)
        except Exception as err:  # Helion's interpreter: report, don't crash
            cause = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
            message = (
                f"Helion's interpret mode could not run {kernel.fn.__name__} as a reference "
                f"({cause}); give the file a `reference` function or pass --reference "
                f"MODULE:FUNC (or --reference {TILE_IR}: Loom's own reference)."
            )
            if _no_cpu_kernel(err):  # torch's first sentence names the op
                raise NoCpuKernel(message, cause.split(". ")[0][:200]) from None
            limit = _interpreter_limit(err)
            if limit:
                raise NoCpuKernel(message, limit) from None
            raise FrontendError(message) from None

    return run


def load_file_kernel(
    module: ModuleType,
    path: str,
    name: str | None,
    arg_texts: Sequence[str],
    reference: str | None,
) -> FileKernel:
    kernel = pick_kernel(module, path, name)
    kname = kernel.fn.__name__
    if arg_texts:
        params, args = parse_args(kernel, arg_texts, path)
    elif callable(getattr(module, f"make_inputs_{kname}", None)) or callable(
        getattr(module, "make_inputs", None)
    ):
        params, args = _inputs_from_file(module, kernel, path)
    else:
        params, args = parse_args(kernel, (), path)
    ref_fn: Callable[..., object] | TileIRReference | None = None
    ref_name = ""
    if reference:  # an explicit option is never ignored silently
        ref_fn, ref_name = import_reference(reference), reference
        if isinstance(ref_fn, TileIRReference):
            ref_name = ref_fn.describe(kname)
    for attr in (f"reference_{kname}", "reference"):
        if ref_fn is None and callable(getattr(module, attr, None)):
            if attr == "reference" and len(kernels_of(module)) > 1:
                continue  # ambiguous in a file of several kernels
            ref_fn, ref_name = getattr(module, attr), f"{Path(path).name}:{attr}"
    return plain_kernel(kernel, params, args, ref_fn, ref_name)


def plain_kernel(
    kernel: helion.Kernel,
    params: tuple[str, ...],
    args: tuple[ArgValue, ...],
    reference: Callable[..., object] | TileIRReference | None = None,
    reference_name: str = "",
) -> FileKernel:
    """A kernel taken as it is, with these arguments; without a reference, Helion's
    interpret mode (Loom's Tile IR reference where that cannot run on the CPU)."""
    if reference is None:
        reference, reference_name = interpret_reference(kernel), interpret_name(kernel)
    name = kernel.fn.__name__
    return FileKernel(name, kernel, params, args, reference, reference_name, _output_names(kernel))


def as_outputs(result: Any) -> tuple[torch.Tensor, ...]:
    """A kernel's or reference's result as a tuple of tensors."""
    items = result if isinstance(result, tuple | list) else (result,)
    return tuple(i for i in items if isinstance(i, torch.Tensor))
