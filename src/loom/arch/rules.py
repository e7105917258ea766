"""Pass 2 of validation: the rules that relate fields to each other, and the sources.

Each rule reads the converted values through :class:`View`; a value that pass 1 already
reported raises :class:`Skip`, which ends the rule quietly, so a problem is reported once.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from loom.arch.convert import ABSENT, FIELD_PATHS, Problems
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


class View:
    """Dotted-path access to the cleaned values; a faulty or missing value raises Skip."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def __getitem__(self, path: str) -> Any:
        node: Any = self.values
        for part in path.split("."):
            node = node[part] if isinstance(node, dict) else ABSENT
            if node is ABSENT:
                raise Skip
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
            names = [k for k, _ in v[path]]
            for name in names:
                if name not in DTYPES:
                    out.add(path, f"has unknown dtype '{name}'", f"use one of {', '.join(DTYPES)}")
            if "bf16" not in names:
                out.add(path, "lacks dtype 'bf16'", "add an entry for bf16")
    with suppress(Skip):
        rows, cols = v["tile.rows"], v["tile.cols"]
        for name, size in v["tile.bytes_per_dtype"]:
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
        names = [k for k, _ in v["matmul.cycles_per_tile"]]
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
            names = {k for k, _ in v[path]}
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
        if c is not ABSENT and c >= size:
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
        sizes = [s for s, _ in table]
        if any(b <= a for a, b in itertools.pairwise(sizes)):
            out.add(
                "noc.transfer_size_bytes_per_cycle",
                "must list transfer sizes in increasing order",
                "sort the table by size",
                sizes,
            )
        rates = [r for _, r in table]
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


def clean_sources(raw: Any, values: dict[str, Any], out: Problems) -> tuple[tuple[str, str], ...]:
    """The `sources` mapping as (path, note) pairs. A key must name a field, or an entry of a
    table field (``compute.eltwise_cycles_per_tile.exp``), so a typo cannot hide a note."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        out.add("sources", "must be a mapping from field path to source", "fix it", raw)
        return ()
    result: list[tuple[str, str]] = []
    for key, note in raw.items():
        path = f"sources.{key}"
        if not isinstance(note, str) or not note.strip():
            out.add(path, "must be a non-empty string", "say where the number comes from", note)
        elif not _known_source_key(str(key), values):
            near = difflib.get_close_matches(str(key), sorted(FIELD_PATHS), n=1)
            hint = f"rename it to '{near[0]}'" if near else "use a dotted field path"
            out.add(path, "names no field of the description", hint)
        else:
            result.append((str(key), note.strip()))
    return tuple(result)


def _known_source_key(key: str, values: dict[str, Any]) -> bool:
    if key in FIELD_PATHS:
        return True
    table, _, entry = key.rpartition(".")
    if not FIELD_PATHS.get(table, False):
        return False
    try:
        return any(str(k) == entry for k, _ in View(values)[table])
    except Skip:
        return True


def check_rules(values: dict[str, Any], out: Problems) -> None:
    """Run every rule on the converted `values`, adding what fails to `out`."""
    for rule in _RULES:
        with suppress(Skip):
            rule(View(values), out)
