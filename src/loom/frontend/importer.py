"""Entry point of the frontend: bind a Helion kernel on concrete inputs and import it."""

from __future__ import annotations

import inspect

import helion
import torch

from loom.errors import FrontendError
from loom.frontend.helion_import import HelionImporter
from loom.ir.tile import TileProgram


def import_kernel(kernel: helion.Kernel, args: tuple[torch.Tensor, ...]) -> TileProgram:
    """Bind `kernel` to `args` (CPU tensors of the real shapes) and build its TileProgram."""
    fn = kernel.fn
    name = fn.__name__
    source_file = inspect.getsourcefile(fn) or "<unknown>"
    try:
        bound = kernel.bind(args)
    except helion.exc.Base as err:
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise FrontendError(
            f"Helion rejected kernel {name!r} ({source_file}): {first_line}. Fix the kernel "
            "so that Helion can bind it on these input shapes."
        ) from None
    with bound.env, bound.host_function:
        return HelionImporter(bound, name, source_file).run()
