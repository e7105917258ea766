"""Turn what a Python user hands `loom.compile` into a KernelSpec and a shape.

A user passes either a shipped kernel's name (with a shape, or example tensors) or a
`@helion.kernel` function with example tensors, the way Helion itself binds a kernel on
its first call: the tensors fix every shape and dtype, their values are never read.

When the kernel's module follows Loom's kernel-file convention (`SHAPE_KEYS`,
`make_inputs`, `reference`, optional `flops` and `shape_of`), its named shape, torch
reference and FLOP count are used, so a compile from Python and one from the CLI give
the same schedule. Any other kernel gets a shape named after its arguments
(`a_0=256, a_1=512, ...`), seeded random inputs like the examples, and is verified as
the CLI verifies a Helion file taken as it is (`loom.kernels.files`): every output by
name, against Helion's interpret mode of the same kernel, or Loom's Tile IR reference
where that cannot run on the CPU.

Arguments are bound as the CLI binds them (`loom.kernels.files.bind_defaults`): a scalar
left out takes its default, and every scalar is compiled as a constant, so a call with
another scalar value runs another compile (`CompiledKernel` keeps them).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeGuard

from loom.errors import FrontendError, ShapeError

if TYPE_CHECKING:
    import helion
    import torch

    from loom.kernels.files import FileKernel
    from loom.kernels.registry import KernelSpec


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
    return _with_args(_generic_spec(kernel), example_args, shape, "")


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

    from loom.kernels.registry import follows_contract

    kernels = [v for v in vars(module).values() if isinstance(v, helion.Kernel)]
    return kernels == [kernel] and follows_contract(module, module.__name__)


def _generic_spec(kernel: helion.Kernel) -> KernelSpec:
    from loom.kernels.files import interpret_reference
    from loom.kernels.registry import KernelSpec

    return KernelSpec(
        name=kernel.fn.__name__,
        kernel=kernel,
        shape_keys=(),
        default_shape={},
        make_inputs=lambda shape: (),
        example_inputs=lambda shape: (),
        reference=interpret_reference(kernel),  # type: ignore[arg-type]
        flops=None,
    )


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
    from loom.kernels.files import bind_defaults, plain_kernel

    signature = inspect.signature(spec.kernel.fn).parameters
    params = list(signature)
    required = sum(p.default is inspect.Parameter.empty for p in signature.values())
    if not required <= len(args) <= len(params):
        raise ShapeError(
            f"kernel {spec.name} takes {len(params)} arguments ({', '.join(params)}) but "
            f"loom.compile got {len(args)} example arguments; pass one per parameter."
        )
    args = bind_defaults(spec.kernel, dict(zip(params, args, strict=False)))[1]
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
    file = spec.file
    if file is not None:  # a Helion file: its own reference, on inputs like the examples
        file = dataclasses.replace(file, args=tuple(make_inputs(named)))
    elif not spec.shape_keys:  # a kernel taken as it is, as the CLI takes a Helion file
        file = plain_kernel(spec.kernel, tuple(params), tuple(make_inputs(named)))
    spec = dataclasses.replace(
        spec, example_inputs=lambda _shape: args, make_inputs=make_inputs, file=file
    )
    return Bound(spec, named, args, file.reference_name if file else reference_source)


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
        from loom.frontend import kernel_location  # imports Helion: only here

        gen = torch.Generator().manual_seed(seed)
        where = kernel_location(spec.kernel)
        return tuple(_random_like(a, gen, where) if _is_tensor(a) else a for a in args)

    return make


def _random_like(arg: torch.Tensor, gen: torch.Generator, where: str) -> torch.Tensor:
    """Seeded standard-normal values in `arg`'s shape and dtype; a dtype torch cannot even
    convert to (the 4-bit floats) has no tile format either, so it is refused here, at
    `where` (the kernel's file:line)."""
    import torch

    values = torch.randn(tuple(arg.shape), generator=gen)
    try:
        return values.to(arg.dtype)
    except (NotImplementedError, RuntimeError):
        from loom.frontend.core import dtype_hint

        raise FrontendError(
            f"{where}: an argument is a {str(arg.dtype).removeprefix('torch.')} tensor "
            f"({_describe(arg)}), which has no tile format: {dtype_hint(arg.dtype)}."
        ) from None


def _same_signature(built: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
    if len(built) != len(args):
        return False
    for b, a in zip(built, args, strict=True):
        if _is_tensor(a) != _is_tensor(b):
            return False
        if _is_tensor(a) and (tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype):
            return False
    return True


def call_args(bound: Bound, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A call's arguments in signature order, scalars left out bound to their defaults as
    at compile time; its tensors must have the shapes and dtypes the kernel was built
    for (its scalars may differ: see `scalars`)."""
    from loom.kernels.files import bind_defaults

    kernel = bound.spec.kernel
    params = list(inspect.signature(kernel.fn).parameters)
    example = bound.example_args or tuple(bound.spec.example_inputs(bound.shape))
    names, expected, _ = bind_defaults(kernel, dict(zip(params, example, strict=False)))
    _, full, missing = bind_defaults(kernel, dict(zip(params, args, strict=False)))
    if len(args) > len(params) or missing:
        raise ShapeError(
            f"{bound.spec.name} was compiled for {len(expected)} arguments "
            f"({', '.join(names)}) but was called with {len(args)}; pass the same arguments."
        )
    for name, want, got in zip(names, expected, full, strict=False):
        if _is_tensor(want) != _is_tensor(got):
            kind = "a torch.Tensor" if _is_tensor(want) else "a scalar (compiled as a constant)"
            raise ShapeError(f"argument {name!r} of {bound.spec.name} must be {kind}.")
        if not _is_tensor(want) or not _is_tensor(got):
            continue
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise ShapeError(
                f"argument {name!r} of {bound.spec.name} is {_describe(got)}, but the kernel "
                f"was compiled for {_describe(want)}; compile again with loom.compile on "
                "tensors of the new shape."
            )
    return full


def scalars(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The scalar arguments, which Loom compiles as constants: a call whose scalars differ
    from the compile's needs a compile of its own."""
    return tuple(_hashable(a) for a in args if not _is_tensor(a))


def _hashable(value: Any) -> Any:
    """A scalar argument as a key: lists and tuples (a `[dim]` argument) as tuples."""
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _describe(t: torch.Tensor) -> str:
    return f"{'x'.join(str(d) for d in t.shape)} {str(t.dtype).removeprefix('torch.')}"


def with_inputs(spec: KernelSpec, args: tuple[Any, ...]) -> KernelSpec:
    """`spec` verified (and run) on `args`, bound by `call_args`, instead of its own inputs."""
    if spec.file is not None:
        return dataclasses.replace(spec, file=dataclasses.replace(spec.file, args=args))
    return dataclasses.replace(spec, make_inputs=lambda _shape: args)


def call_kernel(spec: KernelSpec, args: tuple[Any, ...]) -> FileKernel:
    """The kernel with a call's arguments (bound by `call_args`), as
    `loom.kernels.checks.program_inputs` matches them to the program's inputs by name."""
    from loom.kernels.files import plain_kernel

    if spec.file is not None:
        return dataclasses.replace(spec.file, args=args)
    params = tuple(inspect.signature(spec.kernel.fn).parameters)
    return plain_kernel(spec.kernel, params, args, spec.reference, spec.name)


def with_reference(
    spec: KernelSpec, reference: Callable[..., Any] | torch.Tensor | str, shape: dict[str, int]
) -> KernelSpec:
    """`spec` compared with `reference` given to `verify()`: a function of the inputs, the
    expected tensor, or a reference named as `--reference` names one (`"tile-ir"`,
    `"tile-ir:fp64"`, `"module:function"`)."""
    from loom.kernels.files import import_reference, plain_kernel
    from loom.kernels.tile_reference import TileIRReference

    name = "the reference given to verify()"
    if isinstance(reference, str):
        ref: Callable[..., Any] | TileIRReference = import_reference(reference)
        name = ref.describe(spec.name) if isinstance(ref, TileIRReference) else reference
    elif callable(reference):
        ref = reference
    else:
        expected = reference
        ref = lambda *_: expected  # noqa: E731
    if spec.file is not None:
        return dataclasses.replace(
            spec, file=dataclasses.replace(spec.file, reference=ref, reference_name=name)
        )
    if isinstance(ref, TileIRReference):  # the Tile IR reference reads tensors by name
        params = tuple(inspect.signature(spec.kernel.fn).parameters)
        file = plain_kernel(spec.kernel, params, tuple(spec.make_inputs(shape)), ref, name)
        return dataclasses.replace(spec, file=file)
    return dataclasses.replace(spec, reference=ref)
