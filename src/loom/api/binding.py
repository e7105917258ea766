"""Turn what a Python user hands `loom.compile` into a KernelSpec and a shape.

A user passes either a shipped kernel's name (with a shape, or example tensors) or a
`@helion.kernel` function with example tensors, the way Helion itself binds a kernel on
its first call: the tensors fix every shape and dtype, their values are never read.

When the kernel's module follows Loom's kernel-file convention (`SHAPE_KEYS`,
`make_inputs`, `reference`, optional `flops` and `shape_of`), its named shape, torch
reference and FLOP count are used, so a compile from Python and one from the CLI give
the same schedule. Any other kernel gets a shape named after its arguments
(`a_0=256, a_1=512, ...`), seeded random inputs like the examples, and Helion's own eager
execution of the same kernel as the reference.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeGuard

from loom.errors import FrontendError, ShapeError, VerificationError

if TYPE_CHECKING:
    import helion
    import torch

    from loom.kernels.registry import KernelSpec

_CONVENTION = ("SHAPE_KEYS", "make_inputs", "reference")


@dataclasses.dataclass(frozen=True)
class Bound:
    """A kernel ready for the pipeline: its spec, the named shape and the example args."""

    spec: KernelSpec
    shape: dict[str, int]
    example_args: tuple[Any, ...]
    """What the kernel was bound on (empty when compiled from a name and a shape)."""
    reference_source: str
    """Where the default reference comes from, in words (shown by `verify`)."""


def bind_kernel(
    kernel: object, example_args: tuple[Any, ...], shape: Mapping[str, int] | None
) -> Bound:
    """Resolve `kernel` (a name, a path or a Helion kernel) against the example args."""
    import helion

    from loom.kernels.registry import resolve_kernel, spec_of_module

    if isinstance(kernel, ModuleType):
        kernel = _module_kernel(kernel)
    if isinstance(kernel, str):
        spec = resolve_kernel(kernel)
        if example_args:
            return _with_args(spec, example_args, shape, "the kernel file's reference()")
        return Bound(spec, _named_shape(spec, shape), (), "the kernel file's reference()")
    if not isinstance(kernel, helion.Kernel):
        raise FrontendError(
            f"loom.compile takes a @helion.kernel function or the name of a shipped kernel "
            f"(gemm, flash_attention, flash_decode) or kernel file, not "
            f"{type(kernel).__name__}; decorate the function with @helion.kernel."
        )
    module = sys.modules.get(kernel.fn.__module__)
    if module is not None and _follows_convention(module, kernel):
        spec = spec_of_module(
            module, kernel, module.__name__, guard=not module.__name__.startswith("loom.kernels.")
        )
        if not example_args:
            return Bound(spec, _named_shape(spec, shape), (), "the kernel file's reference()")
        return _with_args(spec, example_args, shape, "the kernel file's reference()")
    if not example_args:
        raise ShapeError(
            f"kernel {kernel.fn.__name__!r} needs example arguments to fix its shapes and "
            f"dtypes: call loom.compile({kernel.fn.__name__}, *tensors) with tensors like "
            "the ones you would pass to the kernel."
        )
    return _with_args(_generic_spec(kernel), example_args, shape, "Helion's eager execution")


def _named_shape(spec: KernelSpec, shape: Mapping[str, int] | None) -> dict[str, int]:
    """`shape=` checked against the kernel file's SHAPE_KEYS (its DEFAULT_SHAPE if None)."""
    if shape is None:
        if spec.default_shape:
            return dict(spec.default_shape)
        keys = ", ".join(f"{k!r}: ..." for k in spec.shape_keys)
        raise ShapeError(f"kernel {spec.name} needs shape={{{keys}}} or example tensors.")
    bad = [f"{k}={v!r}" for k, v in shape.items() if type(v) is not int or v <= 0]
    unknown = sorted(set(shape) - set(spec.shape_keys))
    missing = [k for k in spec.shape_keys if k not in shape]
    if bad or unknown or missing:
        raise ShapeError(
            f"shape= for {spec.name} takes exactly {', '.join(spec.shape_keys)} as positive "
            "integers"
            + (f"; not positive integers: {', '.join(bad)}" if bad else "")
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + "."
        )
    return {k: shape[k] for k in spec.shape_keys}


def _module_kernel(module: ModuleType) -> object:
    """A kernel module (e.g. `from loom.kernels import gemm`) stands for its one kernel."""
    import helion

    kernels = [v for v in vars(module).values() if isinstance(v, helion.Kernel)]
    if len(kernels) != 1:
        raise FrontendError(
            f"module {module.__name__!r} defines {len(kernels)} @helion.kernel functions; "
            "pass the kernel function itself to loom.compile."
        )
    return kernels[0]


def _follows_convention(module: ModuleType, kernel: helion.Kernel) -> bool:
    import helion

    kernels = [v for v in vars(module).values() if isinstance(v, helion.Kernel)]
    return kernels == [kernel] and all(hasattr(module, a) for a in _CONVENTION)


def _generic_spec(kernel: helion.Kernel) -> KernelSpec:
    from loom.kernels.registry import KernelSpec

    return KernelSpec(
        name=kernel.fn.__name__,
        kernel=kernel,
        shape_keys=(),
        default_shape={},
        make_inputs=lambda shape: (),
        example_inputs=lambda shape: (),
        reference=_helion_eager(kernel),
        flops=None,
    )


def _helion_eager(kernel: helion.Kernel) -> Callable[..., torch.Tensor]:
    """Helion's reference mode: the kernel's body run as eager PyTorch on the CPU."""

    def reference(*args: Any) -> torch.Tensor:
        import helion

        eager = helion.kernel(kernel.fn, static_shapes=True, ref_mode=helion.RefMode.EAGER)
        try:
            out = eager(*args)
        except Exception as err:  # Helion's eager mode does not cover every op on CPU
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
            raise VerificationError(
                f"kernel {kernel.fn.__name__!r} has no default reference: Helion's eager "
                f"execution of it failed on the CPU ({type(err).__name__}: {first}). Pass "
                "reference= to verify(): a function of the inputs, or the expected tensor."
            ) from None
        if _is_tensor(out):
            return out
        raise VerificationError(
            f"kernel {kernel.fn.__name__!r} returns {type(out).__name__}; Loom verifies "
            "kernels that return one tensor. Pass reference= to verify it otherwise."
        )

    return reference


def _is_tensor(x: object) -> TypeGuard[torch.Tensor]:
    import torch

    return isinstance(x, torch.Tensor)


def _arg_names(kernel: helion.Kernel, count: int) -> list[str]:
    params = list(inspect.signature(kernel.fn).parameters)
    return [params[i] if i < len(params) else f"arg{i}" for i in range(count)]


def _with_args(
    spec: KernelSpec,
    args: tuple[Any, ...],
    shape: Mapping[str, int] | None,
    reference_source: str,
) -> Bound:
    signature = inspect.signature(spec.kernel.fn).parameters
    params = list(signature)
    required = sum(p.default is inspect.Parameter.empty for p in signature.values())
    if not required <= len(args) <= len(params):
        raise ShapeError(
            f"kernel {spec.name} takes {len(params)} arguments ({', '.join(params)}) but "
            f"loom.compile got {len(args)} example arguments; pass one per parameter."
        )
    names = _arg_names(spec.kernel, len(args))
    for name, arg in zip(names, args, strict=True):
        if _is_tensor(arg) and arg.device.type != "cpu":
            raise ShapeError(
                f"argument {name!r} of {spec.name} is on {arg.device}; Loom binds on CPU "
                "tensors (only shapes and dtypes matter): pass arg.cpu() or torch.empty(...)."
            )
    module = sys.modules.get(spec.kernel.fn.__module__)
    shape_of = getattr(module, "shape_of", None) if spec.shape_keys else None
    if shape is not None:
        named = _named_shape(spec, shape) if spec.shape_keys else dict(shape)
    elif shape_of is not None:
        named = dict(shape_of(*args))
    else:
        named = _shape_from_args(names, args)
    make_inputs = _inputs_like(spec, args, named)
    spec = dataclasses.replace(spec, example_inputs=lambda _shape: args, make_inputs=make_inputs)
    return Bound(spec, named, args, reference_source)


def _shape_from_args(names: list[str], args: tuple[Any, ...]) -> dict[str, int]:
    """`a_0=256, a_1=512, b_0=512, ...`: every tensor dim, named by argument and axis."""
    shape: dict[str, int] = {}
    for name, arg in zip(names, args, strict=True):
        if _is_tensor(arg):
            shape.update({f"{name}_{i}": int(d) for i, d in enumerate(arg.shape)})
    return shape


def _inputs_like(
    spec: KernelSpec, args: tuple[Any, ...], shape: dict[str, int]
) -> Callable[[dict[str, int]], tuple[Any, ...]]:
    """Verification inputs: the kernel file's `make_inputs` when it builds tensors like the
    examples (same as the CLI), else seeded standard-normal tensors like the examples."""
    original = spec.make_inputs

    def make(_shape: dict[str, int], seed: int = 0) -> tuple[Any, ...]:
        import torch

        if spec.shape_keys:
            built = original(shape)
            if _same_signature(built, args):
                return tuple(built)
        gen = torch.Generator().manual_seed(seed)
        return tuple(
            torch.randn(tuple(a.shape), generator=gen).to(a.dtype) if _is_tensor(a) else a
            for a in args
        )

    return make


def _same_signature(built: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
    if len(built) != len(args):
        return False
    for b, a in zip(built, args, strict=True):
        if _is_tensor(a) != _is_tensor(b):
            return False
        if _is_tensor(a) and (tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype):
            return False
    return True


def check_call_args(bound: Bound, args: tuple[Any, ...]) -> None:
    """Tensors given to a compiled kernel must have the shapes and dtypes it was built for."""
    expected = bound.example_args or tuple(bound.spec.example_inputs(bound.shape))
    names = _arg_names(bound.spec.kernel, len(expected))
    if len(args) != len(expected):
        raise ShapeError(
            f"{bound.spec.name} was compiled for {len(expected)} arguments "
            f"({', '.join(names)}) but was called with {len(args)}; pass the same arguments."
        )
    for name, want, got in zip(names, expected, args, strict=True):
        if not _is_tensor(want):
            continue
        if not _is_tensor(got):
            raise ShapeError(f"argument {name!r} of {bound.spec.name} must be a torch.Tensor.")
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise ShapeError(
                f"argument {name!r} of {bound.spec.name} is {_describe(got)}, but the kernel "
                f"was compiled for {_describe(want)}; compile again with loom.compile on "
                "tensors of the new shape."
            )


def _describe(t: torch.Tensor) -> str:
    return f"{'x'.join(str(d) for d in t.shape)} {str(t.dtype).removeprefix('torch.')}"
