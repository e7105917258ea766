"""Find a kernel by shipped name or by the path of a user's Python file.

A kernel module defines one Helion kernel (decorated with `@helion.kernel`), the names
of its shape parameters `SHAPE_KEYS`, `make_inputs(shape) -> tuple[Tensor, ...]` and
`reference(*inputs) -> Tensor`. Optional: `flops(shape)` (for TFLOPS figures),
`DEFAULT_SHAPE`, `example_inputs(shape)` (cheap tensors for binding) and
`shape_of(*inputs) -> dict` (the named shape of a call, used by `loom.compile`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import helion
import torch

from loom.errors import FrontendError, ShapeError
from loom.ir.schedule_file import MAX_DIM
from loom.kernels.files import FileKernel, load_file_kernel
from loom.kernels.names import SHIPPED

_INT = re.compile(r"[0-9]+")
R = TypeVar("R")


@dataclass(frozen=True)
class KernelSpec:
    name: str
    kernel: helion.Kernel
    shape_keys: tuple[str, ...]
    default_shape: dict[str, int]
    make_inputs: Callable[[dict[str, int]], tuple[torch.Tensor, ...]]
    example_inputs: Callable[[dict[str, int]], tuple[torch.Tensor, ...]]
    """Tensors of the right shapes and dtypes (values unused): what the frontend binds."""
    reference: Callable[..., torch.Tensor]
    flops: Callable[[dict[str, int]], int] | None
    file: FileKernel | None = None
    """Set for a Helion file taken as it is: fixed arguments and the chosen reference."""


def load_path(path: Path) -> ModuleType:
    if not path.is_file():
        raise FrontendError(
            f"kernel {str(path)!r} is neither a shipped kernel ({', '.join(SHIPPED)}) nor a "
            "Python file; pass one of the shipped names or the path of a .py file."
        )
    if path.suffix != ".py":
        raise FrontendError(
            f"kernel file {str(path)!r} does not end in .py; Loom imports kernels as Python "
            "modules, so rename it to a .py file."
        )
    spec = importlib.util.spec_from_file_location(f"loom_user_kernel_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise FrontendError(f"kernel file {str(path)!r} cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # a user's file: report, don't crash
        raise FrontendError(
            f"could not import kernel file {str(path)!r}: {type(err).__name__}: {err}. Fix "
            f"the file so that `python {path}` imports cleanly."
        ) from None
    return module


def _guarded(fn: Callable[..., R], what: str, where: str) -> Callable[..., R]:
    """`fn` of a user's kernel file, with its exceptions reported as the file's fault."""

    @functools.wraps(fn)
    def call(*args: Any) -> R:
        try:
            return fn(*args)
        except Exception as err:
            raise FrontendError(
                f"{what} of kernel file {where!r} raised {type(err).__name__}: {err}. Fix "
                f"{what} in that file."
            ) from None

    return call


def _file_spec(fk: FileKernel) -> KernelSpec:
    def inputs(shape: dict[str, int]) -> tuple[Any, ...]:
        return fk.args

    return KernelSpec(
        name=fk.name,
        kernel=fk.kernel,
        shape_keys=tuple(fk.shape),
        default_shape=fk.shape,
        make_inputs=inputs,
        example_inputs=inputs,
        reference=fk.reference,  # type: ignore[arg-type]
        flops=None,
        file=fk,
    )


def resolve_kernel(
    name_or_path: str,
    kernel: str | None = None,
    args: Sequence[str] = (),
    reference: str | None = None,
) -> KernelSpec:
    """A shipped kernel by name, or a kernel of a Python file. A file with the Loom contract
    (SHAPE_KEYS, make_inputs(shape), reference) is parametrised by --shape; any other
    Helion file is taken as it is (see loom.kernels.files)."""
    if name_or_path in SHIPPED:
        module = importlib.import_module(f"loom.kernels.{name_or_path}")
    else:
        module = load_path(Path(name_or_path))
    kernels = [v for v in vars(module).values() if isinstance(v, helion.Kernel)]
    if len(kernels) != 1 or kernel or args or not follows_contract(module, name_or_path):
        if name_or_path in SHIPPED:
            raise FrontendError(
                f"--kernel and --arg apply to Helion files, not to the shipped kernel "
                f"{name_or_path!r}; give it --shape instead."
            )
        return _file_spec(load_file_kernel(module, name_or_path, kernel, args, reference))
    return spec_of_module(module, kernels[0], name_or_path, guard=name_or_path not in SHIPPED)


def source_kernel(name: str) -> KernelSpec:
    """A kernel module of `loom.kernels` that only a baseline traces (not shipped: TTNN's
    causal SDPA in its one key loop, `flash_attention_causal_ttnn`)."""
    module = importlib.import_module(f"loom.kernels.{name}")
    (kernel,) = [v for v in vars(module).values() if isinstance(v, helion.Kernel)]
    return spec_of_module(module, kernel, name, guard=False)


CONTRACT = ("SHAPE_KEYS", "make_inputs", "reference")
"""Loom's older kernel-module contract (see the module docstring); any other Helion file
is taken as it is (`--kernel`, `--arg`)."""


def follows_contract(module: ModuleType, where: str) -> bool:
    """Whether `module` follows Loom's SHAPE_KEYS contract: it defines all of it, or not
    SHAPE_KEYS at all (a Helion file taken as it is); SHAPE_KEYS without the functions
    is an error that names the ones missing."""
    if not hasattr(module, "SHAPE_KEYS"):
        return False
    missing = [name for name in CONTRACT[1:] if not callable(getattr(module, name, None))]
    if not missing:
        return True
    signatures = {"make_inputs": "make_inputs(shape)", "reference": "reference(*inputs)"}
    needed = " and ".join(f"def {signatures[m]}" for m in missing)
    raise FrontendError(
        f"{_contract_line(module, where)}: the kernel file sets SHAPE_KEYS (Loom's "
        f"kernel-file contract) but defines no {' and no '.join(m + '()' for m in missing)} "
        f"function: add "
        f"{needed} (the kernel's inputs for a shape dict; its outputs computed in torch), "
        "or remove SHAPE_KEYS and take the file as it is: loom verify FILE --kernel NAME "
        "--arg x=1024x512:bf16 (the reference is then the file's `reference`, Helion's "
        "interpret mode, or Loom's Tile IR reference)."
    )


def _contract_line(module: ModuleType, where: str) -> str:
    """`file:line` of the SHAPE_KEYS assignment (the file alone when it is not found)."""
    path = getattr(module, "__file__", None) or where
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return str(path)
    line = next((i for i, text in enumerate(lines, 1) if text.startswith("SHAPE_KEYS")), 0)
    return f"{path}:{line}" if line else str(path)


def spec_of_module(
    module: ModuleType, kernel: helion.Kernel, where: str, guard: bool
) -> KernelSpec:
    """The KernelSpec of `kernel`, defined in a module that follows the convention above
    (`where` names it in errors; `guard` turns a user's hook errors into FrontendErrors)."""
    hooks = {
        name: getattr(module, name, None)
        for name in ("make_inputs", "example_inputs", "reference", "flops")
    }
    for name, fn in list(hooks.items()):
        if fn is not None and guard:
            hooks[name] = _guarded(fn, f"{name}()", where)
    keys = module.SHAPE_KEYS
    if isinstance(keys, str) or not all(isinstance(k, str) and k for k in keys):
        raise FrontendError(
            f"SHAPE_KEYS of kernel file {where!r} must be a tuple of names such as ('M', 'N', 'K')."
        )
    return KernelSpec(
        name=kernel.fn.__name__,
        kernel=kernel,
        shape_keys=tuple(keys),
        default_shape=dict(getattr(module, "DEFAULT_SHAPE", {})),
        make_inputs=hooks["make_inputs"],  # type: ignore[arg-type]
        example_inputs=hooks["example_inputs"] or hooks["make_inputs"],  # type: ignore[arg-type]
        reference=hooks["reference"],  # type: ignore[arg-type]
        flops=hooks["flops"],
    )


def parse_shape(text: str | None, spec: KernelSpec) -> dict[str, int]:
    """`M=4096,N=4096,K=4096` -> {"M": 4096, ...}, checked against the kernel's keys."""
    if spec.file is not None:
        if text:
            raise ShapeError(
                f"--shape does not apply to {spec.name} (a Helion file without SHAPE_KEYS); "
                "give its arguments with --arg NAME=SHAPE[:DTYPE] or a make_inputs() in the file."
            )
        return dict(spec.default_shape)
    if not text:
        if spec.default_shape:
            return dict(spec.default_shape)
        raise ShapeError(
            f"kernel {spec.name} needs --shape {','.join(k + '=' for k in spec.shape_keys)}"
        )
    shape: dict[str, int] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _INT.fullmatch(value) or int(value) <= 0:
            raise ShapeError(
                f"--shape entry {part!r} is not KEY=POSITIVE_INT (decimal digits only); "
                f"write e.g. --shape {','.join(f'{k}=...' for k in spec.shape_keys)}."
            )
        if key in shape:
            raise ShapeError(f"--shape gives {key} twice ({text!r}); give each dimension once.")
        if int(value) > MAX_DIM:
            raise ShapeError(
                f"--shape {key}={value} exceeds the limit of {MAX_DIM} per dimension; use a "
                "smaller shape."
            )
        shape[key] = int(value)
    unknown = sorted(set(shape) - set(spec.shape_keys))
    missing = [k for k in spec.shape_keys if k not in shape]
    if unknown or missing:
        raise ShapeError(
            f"--shape for {spec.name} takes exactly {', '.join(spec.shape_keys)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + "."
        )
    return shape
