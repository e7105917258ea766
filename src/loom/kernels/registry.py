"""Find a kernel by shipped name or by the path of a user's Python file.

A kernel module defines one Helion kernel (decorated with `@helion.kernel`), the names
of its shape parameters `SHAPE_KEYS`, `make_inputs(shape) -> tuple[Tensor, ...]` and
`reference(*inputs) -> Tensor`. Optional: `flops(shape)` (for TFLOPS figures),
`DEFAULT_SHAPE`, `example_inputs(shape)` (cheap tensors for binding) and
`shape_of(*inputs) -> dict` (the named shape of a call, used by `loom.compile`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import helion
import torch

from loom.errors import FrontendError, ShapeError
from loom.kernels.files import FileKernel, load_file_kernel

SHIPPED = ("gemm", "flash_attention", "flash_decode")


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
    spec = importlib.util.spec_from_file_location(f"loom_user_kernel_{path.stem}", path)
    assert spec is not None and spec.loader is not None
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
    missing = [a for a in ("SHAPE_KEYS", "make_inputs", "reference") if not hasattr(module, a)]
    if len(kernels) != 1 or missing or kernel or args:
        if name_or_path in SHIPPED:
            raise FrontendError(
                f"--kernel and --arg apply to Helion files, not to the shipped kernel "
                f"{name_or_path!r}; give it --shape instead."
            )
        return _file_spec(load_file_kernel(module, name_or_path, kernel, args, reference))
    return spec_of_module(module, kernels[0])


def spec_of_module(module: ModuleType, kernel: helion.Kernel) -> KernelSpec:
    """The KernelSpec of `kernel`, defined in a module that follows the convention above."""
    return KernelSpec(
        name=kernel.fn.__name__,
        kernel=kernel,
        shape_keys=tuple(module.SHAPE_KEYS),
        default_shape=dict(getattr(module, "DEFAULT_SHAPE", {})),
        make_inputs=module.make_inputs,
        example_inputs=getattr(module, "example_inputs", module.make_inputs),
        reference=module.reference,
        flops=getattr(module, "flops", None),
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
        key = key.strip()
        if not sep or not value.strip().isdigit() or int(value) <= 0:
            raise ShapeError(
                f"--shape entry {part!r} is not KEY=POSITIVE_INT; write e.g. "
                f"--shape {','.join(f'{k}=...' for k in spec.shape_keys)}."
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
