"""Inputs and per-output references of a Helion file kernel, matched to its TileProgram.

The program names its DRAM tensors after the kernel's host variables; inputs are matched
to them by parameter name (not by position: the device code may read `y` before `x`),
and reference outputs by the names in the kernel's `return` statement, or by position
when the kernel returns expressions.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable, Mapping

import torch

from loom.backends.ttlang.conditioning import reference_noise
from loom.errors import FrontendError, LoomError
from loom.frontend.partials import register_block_size
from loom.ir.tile import TileProgram
from loom.kernels.files import (
    RETURNED,
    FileKernel,
    NoCpuKernel,
    as_outputs,
    interpret_name,
    interpret_reference,
    returned_tensors,
)
from loom.kernels.tile_reference import TileIRReference, evaluate


def program_inputs(fk: FileKernel, program: TileProgram) -> tuple[torch.Tensor, ...]:
    """The program's input tensors in its order, from the kernel's arguments by name (and
    the index vectors and host-derived tensors it reads), in the program's shapes."""
    ins = [a.name for a in program.args if a.role == "input"]
    tensors = _known_tensors(fk, (program,), ins)
    unknown = [n for n in ins if n not in tensors]
    if unknown:
        raise FrontendError(
            f"kernel {fk.name!r} reads {', '.join(unknown)}, which "
            f"{'is' if len(unknown) == 1 else 'are'} not among its tensor arguments "
            f"({', '.join(tensors) or 'none'}); Loom reads kernel arguments directly: "
            "reshape on the host outside the kernel, or index the argument itself."
        )
    shapes = {a.name: a.shape for a in program.args}
    return tuple(tensors[n].reshape(shapes[n]) for n in ins)  # 1-D tensors gain a unit dim


def file_references(
    fk: FileKernel, program: TileProgram, precision: str | None = None
) -> tuple[tuple[torch.Tensor, ...], dict[str, torch.Tensor], str]:
    """The program's inputs, the reference's outputs by output name, and which
    reference ran (in words); with a `precision`, the reference run in it (see
    `_run_reference`)."""
    inputs = program_inputs(fk, program)
    ins = [a.name for a in program.args if a.role == "input"]
    named = dict(zip(ins, inputs, strict=True))
    outputs, used = _run_reference(fk, (program,), named, precision)
    if isinstance(outputs, dict):  # Loom's Tile IR reference: every output by name
        return inputs, outputs, used
    outs = [a.name for a in program.args if a.role == "output"]
    names = list(fk.output_names)
    if host_epilogue(fk) is not None and len(names) == len(outputs) and all(names):
        return inputs, dict(zip(names, outputs, strict=True)), used
    if len(names) != len(outputs) or not set(outs) <= set(names):
        names = _returned_outputs(fk, outs, len(outputs))
    if len(outputs) != len(outs):
        raise FrontendError(
            f"the reference ({fk.reference_name}) returns {len(outputs)} tensors, but kernel "
            f"{fk.name!r} writes {len(outs)} outputs ({', '.join(outs)}); return them all, in "
            "the kernel's order."
        )
    return inputs, dict(zip(names, outputs, strict=False)), used


def _returned_outputs(fk: FileKernel, outs: list[str], count: int) -> list[str]:
    """The program's outputs in the kernel's return order, the order of the reference's
    results: a returned tensor is an output itself, a view of one (`out.view(...)`), or
    the host tensor an output views (`return grad_a` where the loop stores `grad_a_flat =
    grad_a.view(-1)`; matched by shared storage in the replayed host prelude). With one
    output, or returns Loom cannot trace to the outputs, the program's order."""
    returned = list(returned_tensors(fk.kernel))
    if len(returned) != count or len(outs) < 2:
        return outs
    tensors = host_prelude(fk, [*outs, *returned])
    storage = {n: t.untyped_storage().data_ptr() for n, t in tensors.items() if t.numel()}
    names: list[str] = []
    for name in returned:
        owners = [o for o in outs if o == name or storage.get(o, -1) == storage.get(name)]
        if len(owners) != 1:
            raise FrontendError(
                f"kernel {fk.name!r} returns {name or 'an expression'} (result "
                f"{len(names) + 1} of {count}), which Loom cannot match to one of the tensors "
                f"its loops store ({', '.join(outs)}), so it cannot tell which reference "
                "result to compare with which output; return the stored tensors (or views "
                "of them) by name."
            )
        names.append(owners[0])
    return names


def runs_at_precision(fk: FileKernel) -> bool:
    """Whether Loom can run the kernel's reference in another precision: Helion's
    interpret mode and Loom's Tile IR reference (a user's reference runs as given)."""
    return isinstance(fk.reference, TileIRReference) or fk.reference_name == interpret_name(
        fk.kernel
    )


def _run_reference(
    fk: FileKernel,
    launches: tuple[TileProgram, ...],
    inputs: dict[str, torch.Tensor],
    precision: str | None = None,
) -> tuple[tuple[torch.Tensor, ...] | dict[str, torch.Tensor], str]:
    """The reference's outputs (in return order, or by name from the Tile IR reference)
    and which reference ran: Loom's Tile IR reference when chosen, or when Helion's
    interpret mode has no CPU kernel for one of the kernel's ops. A `precision` (fp32,
    fp64) runs a reference that `runs_at_precision` in it."""
    reference = fk.reference
    if isinstance(reference, TileIRReference):
        return evaluate(launches, inputs, precision or reference.precision), fk.reference_name
    if precision is not None and runs_at_precision(fk):
        reference = interpret_reference(fk.kernel, precision)
    try:
        return as_outputs(reference(*fk.args)), fk.reference_name
    except NoCpuKernel as err:
        fallback = TileIRReference(precision or "fp32")
        return evaluate(launches, inputs, fallback.precision), fallback.describe(
            fk.name, err.reason
        )


def noise_by_output(
    fk: FileKernel, references_in: Callable[[str], Mapping[str, torch.Tensor]]
) -> dict[str, float]:
    """The rounding noise of the kernel's fp32 reference per output name (the same
    reference, `references_in(precision)`, run in fp32 and in fp64:
    `loom.backends.ttlang.conditioning`); empty where Loom cannot run the reference in
    both precisions (a user's reference, or one that fails in fp64)."""
    if not runs_at_precision(fk):
        return {}
    try:
        fp32, fp64 = references_in("fp32"), references_in("fp64")
    except LoomError:  # e.g. an op without an fp64 CPU kernel: no allowance
        return {}
    return {name: reference_noise(ref, fp64[name]) for name, ref in fp32.items() if name in fp64}


def launch_references(
    fk: FileKernel, programs: tuple[TileProgram, ...], precision: str | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], str]:
    """Inputs by name, references by output name and which reference ran, for a kernel
    run as several launches (`TileProgram.after`): a launch's input that an earlier
    launch stored is not a kernel input (it flows between the launches in DRAM); only
    the returned tensors have references, matched by the names in the kernel's `return`
    statement (Loom's Tile IR reference gives every tensor the launches store)."""
    stored: set[str] = set()
    needed: list[str] = []
    for program in programs:
        needed += [a.name for a in program.args if a.role == "input" and a.name not in stored]
        stored |= {a.name for a in program.args if a.role == "output"}
    tensors = _known_tensors(fk, programs, needed)
    unknown = [n for n in needed if n not in tensors]
    if unknown:
        raise FrontendError(
            f"kernel {fk.name!r} reads {', '.join(unknown)} before any of its launches "
            "writes it, and it is not among its tensor arguments "
            f"({', '.join(fk.tensors) or 'none'}); read kernel arguments, or tensors an "
            "earlier hl.barrier phase wrote."
        )
    shapes = {a.name: a.shape for p in programs for a in p.args}
    inputs = {n: tensors[n].reshape(shapes[n]) for n in dict.fromkeys(needed)}
    outputs, used = _run_reference(fk, programs, inputs, precision)
    if isinstance(outputs, dict):  # Loom's Tile IR reference: every stored tensor by name
        return inputs, outputs, used
    names = list(fk.output_names)
    if len(names) != len(outputs) or not set(names) <= stored:
        raise FrontendError(
            f"kernel {fk.name!r} runs as {len(programs)} launches (its hl.barrier phases "
            "read tiles other blocks wrote), so its outputs are matched to the reference "
            f"by the names it returns ({', '.join(names) or 'none'}), which must be "
            f"tensors its loops store ({', '.join(sorted(stored))}) and as many as the "
            f"reference returns ({len(outputs)}); return the stored tensors by name."
        )
    return inputs, dict(zip(names, outputs, strict=True)), used


def _known_tensors(
    fk: FileKernel, programs: tuple[TileProgram, ...], needed: list[str]
) -> dict[str, torch.Tensor]:
    """The tensors the programs can read by name: the kernel's arguments, the index
    vectors Loom added, and what the host code derives before the device loop for the
    `needed` names still missing (the caller reports any left over)."""
    tensors = dict(fk.tensors)
    for program in programs:
        for name, vector in index_vectors(program).items():
            tensors.setdefault(name, vector)
    missing = [n for n in needed if n not in tensors]
    if missing:
        tensors.update(host_prelude(fk, missing))
    return tensors


def index_vectors(program: TileProgram) -> dict[str, torch.Tensor]:
    """The index vectors Loom added as inputs for `tile.index` (0..extent-1 in fp32, as
    a row or, `<tile>_col_index`, as a column), by name."""
    return {
        a.name: torch.arange(max(a.shape), dtype=torch.float32).reshape(a.shape)
        for a in program.args
        if a.role == "input" and a.name.endswith("_index")
    }


def _host_hl() -> types.SimpleNamespace:
    """`hl` as the replayed host code sees it: `hl.specialize` is the value itself, and
    `hl.register_block_size` the size Loom fixes for a block that shapes a host tensor
    (`loom.frontend.partials`)."""
    return types.SimpleNamespace(specialize=lambda v: v, register_block_size=register_block_size)


def host_prelude(fk: FileKernel, names: list[str]) -> dict[str, torch.Tensor]:
    """Tensors the kernel's host code derives from its arguments before the device loop
    (`flat = x.view(-1)`, `xt = x.transpose(0, 1).contiguous()`): the statements before
    the first `for` run in eager torch on the arguments. Empty when they cannot run."""
    fn = fk.kernel.fn
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, SyntaxError):
        return {}
    body = tree.body[0].body if isinstance(tree.body[0], ast.FunctionDef) else []
    prelude: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.For | ast.Return):
            break
        prelude.append(stmt)
    namespace = dict(fn.__globals__)
    namespace["hl"] = _host_hl()
    namespace.update(zip(fk.params, fk.args, strict=True))
    try:
        code = compile(ast.Module(body=prelude, type_ignores=[]), "<host prelude>", "exec")
        exec(code, namespace)  # the user's own host code, on CPU tensors
    except Exception:  # a prelude Loom cannot replay: the caller reports the tensor
        return {}
    return {n: namespace[n] for n in names if isinstance(namespace.get(n), torch.Tensor)}


Epilogue = Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]]


def host_epilogue(fk: FileKernel) -> Epilogue | None:
    """The host statements after the kernel's last device loop (`final_loss =
    torch.sum(loss) / BT` before `return final_loss`), as a function of the tensors the
    device code wrote, by name, that returns the kernel's returned values by the names
    in its `return`; they run in eager torch, with the arguments and the host prelude in
    scope, as the prelude does. None when the loop is followed by the `return` alone."""
    fn = fk.kernel.fn
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, SyntaxError):
        return None
    body = tree.body[0].body if isinstance(tree.body[0], ast.FunctionDef) else []
    loops = [i for i, stmt in enumerate(body) if isinstance(stmt, ast.For)]
    if not loops or not isinstance(body[-1], ast.Return) or not all(fk.output_names):
        return None
    after = body[loops[-1] + 1 : -1]
    returned = body[-1].value
    items = returned.elts if isinstance(returned, ast.Tuple) else [returned] if returned else []
    computed: list[ast.stmt] = [  # `return losses.mean()`: the expression, named
        ast.Assign(targets=[ast.Name(name, ast.Store())], value=item)
        for name, item in zip(fk.output_names, items, strict=False)
        if name.startswith(RETURNED)
    ]
    if not after and not computed:
        return None
    prelude = [_statement(stmt) for stmt in body[: loops[0]]]
    epilogue = ast.fix_missing_locations(ast.Module(body=after + computed, type_ignores=[]))
    rest = compile(epilogue, "<host epilogue>", "exec")

    def run(device: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        namespace = dict(fn.__globals__)
        namespace["hl"] = _host_hl()
        namespace.update(zip(fk.params, fk.args, strict=True))
        for stmt in prelude:  # the user's own host code, on CPU tensors
            try:
                exec(stmt or "", namespace)
            except Exception:  # device-side setup (hl.register_block_size): not needed
                continue
        for name, value in device.items():  # what the device code wrote
            if isinstance(namespace.get(name), torch.Tensor):
                value = value.reshape(namespace[name].shape)
            namespace[name] = value
        try:
            exec(rest, namespace)
        except Exception as err:
            raise FrontendError(
                f"the host statements after the device loop of kernel {fk.name!r} failed "
                f"when replayed in eager torch on its outputs ({type(err).__name__}: {err}); "
                "Loom runs them on the tensors the loop wrote: keep them to torch on "
                "those tensors and the arguments, or move them out of the kernel."
            ) from None
        return {n: namespace[n] for n in fk.output_names}

    return run


def _statement(stmt: ast.stmt) -> types.CodeType | None:
    """One host statement compiled on its own; None for one that cannot stand alone (an
    early `return` inside an `if`)."""
    try:
        return compile(ast.Module(body=[stmt], type_ignores=[]), "<host prelude>", "exec")
    except SyntaxError:
        return None
