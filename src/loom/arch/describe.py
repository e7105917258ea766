"""Human-readable views of an :class:`Arch`: what `loom arch show` prints.

A user retargeting Loom reads this to check a description before compiling with it, so it
shows every number in the units the model uses, a few derived figures (peak TFLOPS per
fidelity, aggregate DRAM bandwidth) and the source of each number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from loom.arch.load import builtin_names
from loom.arch.spec import MATH_FIDELITIES, Arch


def list_archs() -> list[str]:
    """Sorted names of the built-in architecture descriptions."""
    return builtin_names()


def numeric_fields(arch: Arch) -> list[str]:
    """Dotted paths of every number in `arch`; a table entry is ``table.key``, and a list
    (worker coordinates, DRAM banks) counts as one field."""
    return list(_numeric_paths(arch, ""))


def _numeric_paths(node: Any, path: str) -> Iterator[str]:
    if dataclasses.is_dataclass(node):
        for f in dataclasses.fields(node):
            if f.name != "sources":
                yield from _numeric_paths(getattr(node, f.name), _join(path, f.name))
    elif isinstance(node, tuple) and node and all(_is_pair(x) for x in node):
        yield from (_join(path, str(key)) for key, _ in node)
    elif _is_number(node) or (isinstance(node, tuple) and node):
        yield path


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_pair(x: object) -> bool:
    return isinstance(x, tuple) and len(x) == 2 and not isinstance(x[1], tuple)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def source_of(arch: Arch, path: str) -> str | None:
    """The source note that covers `path`: its own, or that of the nearest enclosing field."""
    notes = dict(arch.sources)
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        note = notes.get(".".join(parts[:n]))
        if note is not None:
            return note
    return None


def unsourced_fields(arch: Arch) -> list[str]:
    """Numbers of `arch` that no source note covers (empty for every built-in)."""
    return [p for p in numeric_fields(arch) if source_of(arch, p) is None]


def _table(pairs: tuple[tuple[Any, Any], ...], unit: str = "") -> str:
    return ", ".join(f"{k} {v}{unit}" for k, v in pairs)


def _fmt(x: float) -> str:
    return f"{x:,.1f}" if isinstance(x, float) else f"{x:,}"


def _core_lines(a: Arch) -> list[str]:
    return [
        f"{a.name}: {a.description}",
        f"  grid          {a.grid_x} x {a.grid_y} = {a.num_cores} cores "
        f"(NoC x {list(a.worker_noc_x)}, y {list(a.worker_noc_y)})",
        f"  clock         {a.clock_ghz} GHz",
        f"  L1 per core   {a.l1_bytes:,} B ({a.l1_usable_bytes:,} B usable for buffers, "
        f"at most {a.dataflow_buffers} dataflow buffers)",
        f"  tile          {a.tile.rows}x{a.tile.cols}: {_table(a.tile.bytes_per_dtype, ' B')}",
    ]


def _matmul_lines(a: Arch) -> list[str]:
    m = a.matmul
    lines = [
        f"matmul  (one {a.tile.rows}x{a.tile.cols}x{a.tile.cols} tile; in0 row granularity "
        f"{m.row_granularity}; default fidelity {m.default_fidelity}; "
        f"+{m.tile_overhead_cycles} cycles/tile sustained)",
    ]
    for fid in MATH_FIDELITIES:
        lines.append(
            f"  {fid:<6}  {m.peak_cycles(fid):>3} cycles/tile   "
            f"peak {a.peak_tflops(fid):7.1f} TFLOPS on {a.num_cores} cores"
        )
    return lines


def _compute_lines(a: Arch) -> list[str]:
    c = a.compute
    return [
        "compute  (cycles per 32x32 tile)",
        f"  dst tiles     {_table(c.dst_tiles)} (full sync)",
        f"  eltwise       {_table(c.eltwise_cycles_per_tile)}",
        f"  reduce        {_table(c.reduce_cycles_per_tile)}",
        f"  unpack {c.unpack_bytes_per_cycle} B/cycle, pack {c.pack_bytes_per_cycle} B/cycle "
        f"({c.pack_accumulate_bytes_per_cycle} adding into L1), "
        f"op overhead {c.op_overhead_cycles} cycles",
    ]


def _noc_lines(a: Arch) -> list[str]:
    n = a.noc
    return [
        f"noc  ({n.count} NoCs on a {n.grid_x} x {n.grid_y} torus)",
        f"  link          {n.link_bytes_per_cycle} B/cycle raw, "
        f"{n.link_effective_bytes_per_cycle} effective "
        f"({n.link_effective_bytes_per_cycle * a.clock_ghz:.1f} GB/s)",
        f"  latency       hop {n.hop_cycles}, NIU {n.niu_cycles}, issue {n.issue_cycles}, "
        f"small read {n.read_latency_cycles} cycles",
        f"  max packet    {n.max_packet_bytes:,} B",
        f"  size -> B/cycle  {_table(n.transfer_size_bytes_per_cycle)}",
        f"  measured      unicast {n.unicast_bytes_per_cycle}, multicast "
        f"{n.multicast_bytes_per_cycle}, linked multicast "
        f"{n.multicast_linked_bytes_per_cycle} B/cycle",
    ]


def _dram_lines(a: Arch) -> list[str]:
    d = a.dram
    peak_gbs = d.peak_bytes_per_cycle * a.clock_ghz
    banks = " ".join(f"({b.noc_x},{b.noc_y})" for b in d.banks)
    return [
        f"dram  ({len(d.banks)} banks at NoC {banks})",
        f"  bandwidth     {d.bank_bytes_per_cycle} B/cycle per bank, "
        f"{_fmt(d.peak_bytes_per_cycle)} B/cycle = {peak_gbs:.1f} GB/s aggregate peak, "
        f"{d.efficiency:.1%} achievable = {peak_gbs * d.efficiency:.1f} GB/s",
        f"  one reader    {d.reader_bytes_per_cycle} B/cycle",
        f"  latency       read {d.read_latency_cycles}, write {d.write_latency_cycles} cycles",
        f"  page          {d.page_bytes:,} B",
    ]


def _fixed_lines(a: Arch) -> list[str]:
    f = a.fixed
    return [
        "fixed costs",
        f"  program launch {f.program_launch_us} us "
        f"({a.us_to_cycles(f.program_launch_us):,.0f} cycles)",
        f"  host dispatch  {f.host_dispatch_us} us (without a trace)",
        f"  semaphore      {f.semaphore_cycles} cycles",
    ]


def _source_lines(a: Arch) -> list[str]:
    lines = ["sources"]
    lines += [f"  {path}: {note}" for path, note in a.sources]
    missing = unsourced_fields(a)
    if missing:
        lines.append(f"  (no source: {', '.join(missing)})")
    return lines


def describe_arch(arch: Arch) -> str:
    """A multi-line text with every number of `arch`, derived peaks, and the sources."""
    sections = (
        _core_lines,
        _matmul_lines,
        _compute_lines,
        _noc_lines,
        _dram_lines,
        _fixed_lines,
        _source_lines,
    )
    return "\n".join(line for section in sections for line in section(arch)) + "\n"
