"""The architecture description: every hardware number Loom uses, loaded from YAML.

Only this package holds hardware numbers. The latency model and the simulator each read an
:class:`Arch` returned by :func:`load_arch` (a built-in name from :func:`list_archs`, or a
user's YAML file); retargeting Loom means writing a new file.
"""

from __future__ import annotations

from loom.arch.describe import describe_arch, list_archs, source_of, unsourced_fields
from loom.arch.load import builtin_path, load_arch, parse_arch
from loom.arch.rules import DTYPES, ELTWISE_OPS, REDUCE_OPS
from loom.arch.spec import (
    MATH_FIDELITIES,
    Arch,
    Compute,
    Dram,
    DramBank,
    Fixed,
    Matmul,
    Noc,
    Tile,
)

__all__ = [
    "DTYPES",
    "ELTWISE_OPS",
    "MATH_FIDELITIES",
    "REDUCE_OPS",
    "Arch",
    "Compute",
    "Dram",
    "DramBank",
    "Fixed",
    "Matmul",
    "Noc",
    "Tile",
    "builtin_path",
    "describe_arch",
    "list_archs",
    "load_arch",
    "parse_arch",
    "source_of",
    "unsourced_fields",
]
