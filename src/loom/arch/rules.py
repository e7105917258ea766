"""The rules that relate fields of an architecture file to each other, and its sources.

They read the file in its YAML shape (tables are mappings, lists are lists) through
:class:`View`, so the same rules check a validated model (the pydantic after-validator of
:class:`loom.arch.schema.ArchFile`) and, when some fields failed their own validation, the
rest of the raw file: one error then lists every problem. A rule whose input is faulty or
missing raises :class:`Skip` and ends quietly, so a problem is reported once.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable
from contextlib import suppress
from typing import Any, NamedTuple

from loom.arch.spec import MATH_FIDELITIES
from loom.ir.formats import DataFormat, tile_bytes

DTYPES = tuple(f.value for f in DataFormat)
"""Dtypes a tile size or a Dst capacity may be given for."""
ELTWISE_OPS = (
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "exp",
    "exp2",
    "log",
    "recip",
    "neg",
    "sqrt",
    "rsqrt",
    "copy",
)
"""Elementwise ops every description must cost (later stages look them up by name)."""
REDUCE_OPS = ("max", "sum")
"""Row reductions every description must cost."""

NOTHING: Any = object()
"""No value to show in a problem."""


class Problem(NamedTuple):
    """One 'field: what is wrong; how to fix it' line of an error message."""

    path: str
    what: str
    fix: str
    got: Any = NOTHING

    def line(self) -> str:
        shown = "" if self.got is NOTHING else f" (got {short(self.got)})"
        return f"{self.path or 'the file'} {self.what}{shown}; {self.fix}"


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Problems:
    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, path: str, what: str, fix: str, got: Any = NOTHING) -> None:
        self.items.append(Problem(path, what, fix, got))


class View:
    """Dotted-path access to a file in YAML shape; a faulty or missing value raises Skip.

    `bad` holds the paths (tuples of keys) that failed their own validation: a read of one
    of them, of a value inside one, or of a value containing one, skips the rule."""

    def __init__(self, values: dict[str, Any], bad: tuple[tuple[str, ...], ...]) -> None:
        self.values = values
        self.bad = bad

    def __getitem__(self, path: str) -> Any:
        parts = tuple(path.split("."))
        for b in self.bad:
            n = min(len(b), len(parts))
            if b[:n] == parts[:n]:
                raise Skip
        node: Any = self.values
        for part in parts:
            if not isinstance(node, dict) or part not in node:
                raise Skip
            node = node[part]
        return node


class Skip(Exception):
    """A rule's input was already reported; the rule is not checked."""


_Rule = Callable[[View, Problems], None]
_RULES: list[_Rule] = []


def _rule(fn: _Rule) -> _Rule:
    _RULES.append(fn)
    return fn


@_rule
def _dtypes(v: View, out: Problems) -> None:
    for path in ("tile.bytes_per_dtype", "compute.dst_tiles"):
        with suppress(Skip):
            names = list(v[path])
            for name in names:
                if name not in DTYPES:
                    out.add(path, f"has unknown dtype '{name}'", f"use one of {', '.join(DTYPES)}")
            if "bf16" not in names:
                out.add(path, "lacks dtype 'bf16'", "add an entry for bf16")
    with suppress(Skip):
        rows, cols = v["tile.rows"], v["tile.cols"]
        for name, size in v["tile.bytes_per_dtype"].items():
            if name in DTYPES and size != tile_bytes(name, rows, cols):
                out.add(
                    f"tile.bytes_per_dtype.{name}",
                    f"disagrees with the {name} format's {rows}x{cols} tile size "
                    f"{tile_bytes(name, rows, cols)} B",
                    "fix the value (block-float tiles add one exponent byte per 16 elements)",
                    size,
                )


@_rule
def _fidelities(v: View, out: Problems) -> None:
    with suppress(Skip):
        names = list(v["matmul.cycles_per_tile"])
        for name in names:
            if name not in MATH_FIDELITIES:
                out.add(
                    "matmul.cycles_per_tile",
                    f"has unknown math fidelity '{name}'",
                    f"use one of {', '.join(MATH_FIDELITIES)}",
                )
        for name in MATH_FIDELITIES:
            if name not in names:
                out.add(
                    "matmul.cycles_per_tile",
                    f"lacks math fidelity '{name}'",
                    "add its cycles per tile",
                )
    with suppress(Skip):
        if v["matmul.default_fidelity"] not in MATH_FIDELITIES:
            out.add(
                "matmul.default_fidelity",
                "is not a math fidelity",
                f"use one of {', '.join(MATH_FIDELITIES)}",
                v["matmul.default_fidelity"],
            )
    with suppress(Skip):
        if v["matmul.row_granularity"] > v["tile.rows"]:
            out.add(
                "matmul.row_granularity",
                f"must be at most tile.rows ({v['tile.rows']})",
                "fix the value",
                v["matmul.row_granularity"],
            )


@_rule
def _ops(v: View, out: Problems) -> None:
    for path, required in (
        ("compute.eltwise_cycles_per_tile", ELTWISE_OPS),
        ("compute.reduce_cycles_per_tile", REDUCE_OPS),
    ):
        with suppress(Skip):
            names = set(v[path])
            for op in required:
                if op not in names:
                    out.add(path, f"lacks op '{op}'", "add its cycles per tile")


@_rule
def _grid(v: View, out: Problems) -> None:
    for axis in ("x", "y"):
        with suppress(Skip):
            grid, torus = v[f"grid_{axis}"], v[f"noc.grid_{axis}"]
            if grid > torus:
                out.add(
                    f"grid_{axis}",
                    f"must be at most noc.grid_{axis} ({torus}), the NoC torus size",
                    "shrink the compute grid or fix the torus size",
                    grid,
                )
        with suppress(Skip):
            coords, grid = v[f"worker_noc_{axis}"], v[f"grid_{axis}"]
            if len(coords) != grid:
                out.add(
                    f"worker_noc_{axis}",
                    f"must list one NoC coordinate per compute "
                    f"{'column' if axis == 'x' else 'row'} ({grid}), not {len(coords)}",
                    f"make its length equal grid_{axis}",
                )
            if len(set(coords)) != len(coords):
                out.add(f"worker_noc_{axis}", "repeats a coordinate", "list each one once")
        with suppress(Skip):
            _inside(v[f"worker_noc_{axis}"], v[f"noc.grid_{axis}"], f"worker_noc_{axis}", out)
    with suppress(Skip):
        for i, bank in enumerate(v["dram.banks"]):
            for axis in ("x", "y"):
                _inside(
                    [bank[f"noc_{axis}"]], v[f"noc.grid_{axis}"], f"dram.banks[{i}].noc_{axis}", out
                )


def _inside(coords: list[int], size: int, path: str, out: Problems) -> None:
    for c in coords:
        if c >= size:
            out.add(
                path,
                f"has coordinate {c} outside the NoC torus (0..{size - 1})",
                "fix the coordinate or noc.grid_x/noc.grid_y",
            )


@_rule
def _capacities(v: View, out: Problems) -> None:
    with suppress(Skip):
        if v["l1_usable_bytes"] > v["l1_bytes"]:
            out.add(
                "l1_usable_bytes",
                f"must be at most l1_bytes ({v['l1_bytes']})",
                "fix the value",
                v["l1_usable_bytes"],
            )
    with suppress(Skip):
        raw, eff = v["noc.link_bytes_per_cycle"], v["noc.link_effective_bytes_per_cycle"]
        if eff > raw:
            out.add(
                "noc.link_effective_bytes_per_cycle",
                f"must be at most noc.link_bytes_per_cycle ({raw})",
                "fix the value",
                eff,
            )
    with suppress(Skip):
        table = v["noc.transfer_size_bytes_per_cycle"]
        sizes = list(table)
        if any(b <= a for a, b in itertools.pairwise(sizes)):
            out.add(
                "noc.transfer_size_bytes_per_cycle",
                "must list transfer sizes in increasing order",
                "sort the table by size",
                sizes,
            )
        rates = list(table.values())
        if any(b < a for a, b in itertools.pairwise(rates)):
            out.add(
                "noc.transfer_size_bytes_per_cycle",
                "must not lose bandwidth as the transfer size grows",
                "fix the bandwidths",
                rates,
            )
    with suppress(Skip):
        if not v["dram.banks"]:
            out.add("dram.banks", "must list at least one bank", "add the DRAM banks")


def _sources(v: View, out: Problems, fields: dict[str, bool]) -> None:
    """A key of ``sources`` must name a field, or an entry of a table field
    (``compute.eltwise_cycles_per_tile.exp``), so a typo cannot hide a note."""
    try:
        notes = v["sources"]
    except Skip:
        return
    for key in notes or {}:
        if not _known_source_key(str(key), v, fields):
            near = difflib.get_close_matches(str(key), sorted(fields), n=1)
            hint = f"rename it to '{near[0]}'" if near else "use a dotted field path"
            out.add(f"sources.{key}", "names no field of the description", hint)


def _known_source_key(key: str, v: View, fields: dict[str, bool]) -> bool:
    if key in fields:
        return True
    table, _, entry = key.rpartition(".")
    if not fields.get(table, False):
        return False
    try:
        return any(str(k) == entry for k in v[table])
    except Skip:
        return True


def check(v: View, fields: dict[str, bool]) -> list[Problem]:
    """Every rule's problems with the file `v` (`fields`: dotted path -> is a table)."""
    out = Problems()
    for rule in _RULES:
        with suppress(Skip):
            rule(v, out)
    _sources(v, out, fields)
    return out.items
