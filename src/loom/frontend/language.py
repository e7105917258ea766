"""Loom's extension of the Helion language: `gather` for split reductions.

`gather(tile, value)` collects `value` from every block along the grid axis of `tile`
and stacks them on a new leading axis, so the block whose `tile.id == 0` can merge the
partial results (flash decode's log-sum-exp merge). Helion has no such op; this module
registers it through Helion's operator-extension hooks so kernels that use it still bind
(and are checked) by Helion's own type propagation. It has no GPU lowering.
"""

from __future__ import annotations

import dataclasses

import torch
from helion import exc
from helion._compiler.compile_environment import CompileEnvironment
from helion._compiler.host_function import HostFunction, SymbolOrigin
from helion._compiler.variable_origin import HostOrigin
from helion.language import _decorators

__all__ = ["gather"]


@dataclasses.dataclass
class _GatherCountOrigin(HostOrigin):
    """Origin of the number of gathered blocks: fixed once the mapping is chosen."""

    def host_str(self) -> str:
        raise exc.NotAllowedInHelperFunction  # pragma: no cover - never generated


@_decorators.api(tiles_as_sizes=True)
def gather(tile: object, value: torch.Tensor) -> torch.Tensor:
    """Stack `value` from every block along `tile`'s grid axis (new leading axis)."""
    raise exc.NotInsideKernel


@_decorators.register_fake(gather)
def _(tile: torch.SymInt, value: torch.Tensor) -> torch.Tensor:
    env = CompileEnvironment.current()
    count = env.cached_create_unbacked_symint(("loom_gather_count", tile))
    HostFunction.current().expr_to_origin[count._sympy_()] = SymbolOrigin(_GatherCountOrigin())
    rows = env.allocate_reduction_dimension(count)
    return value.new_empty([rows.var, *value.shape])
