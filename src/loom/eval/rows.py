"""One results row per (kernel, shape, arch, policy, rank), and the results.csv format.

Rows are frozen data; the CSV is written sorted by key, so it is byte-identical whatever
the order in which cases finished. Timing columns (`compile_seconds`, `sim_seconds`) are
the only ones that vary between runs.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, fields
from pathlib import Path

TIMING_COLUMNS = ("compile_seconds", "sim_seconds")


@dataclass(frozen=True)
class ResultRow:
    kernel: str
    arch: str
    shape: str
    policy: str
    """`loom`, `ttnn-matmul-oob`, `ttnn-matmul-tuned`, `ttnn-sdpa`, `ttnn-sdpa-models`,
    `ttnn-sdpa-tuned`, `ttnn-sdpa-decode`, `ttnn-sdpa-decode-models`,
    `ttnn-sdpa-decode-tuned`, the layer ops' `ttnn-rms-norm`, `ttnn-layer-norm`,
    `ttnn-softmax`, `ttnn-softmax-sharded`, `ttnn-add`, `ttnn-mul-silu`, `ttnn-gelu`,
    `tileloom`, `loom-kv-bfp8` (decode: Loom with the models' bfloat8_b KV cache) or
    `loom-neighbour` (Figure 11's block-size perturbations)."""
    rank: int
    """Position in the policy's own ranking (1 = its pick; loom and tileloom keep 5)."""
    status: str
    """`ok`, or why the schedule could not be built, lowered or simulated."""
    candidate: str = ""
    block_sizes: str = ""
    cores: int = 0
    cycles: float = 0.0
    us: float = 0.0
    tflops: float = 0.0
    utilization: float = 0.0
    modeled_cycles: float = 0.0
    modeled_tflops: float = 0.0
    compute_busy_max: float = 0.0
    reader_busy_max: float = 0.0
    writer_busy_max: float = 0.0
    dram_read_bytes: float = 0.0
    noc_multicast_bytes: float = 0.0
    busiest_link: float = 0.0
    roofline_us: float = 0.0
    """The kernel's roofline on the whole chip (`loom.model.roofline`): the shortest
    time the compulsory work of the Tile IR this row ran allows."""
    roofline_bound: str = ""
    """The resource that sets it: `math` (FPU and SFPU), `dram` or `noc`."""
    roofline_fraction: float = 0.0
    """roofline_us / us: 1 is at the roofline."""
    compile_seconds: float = 0.0
    sim_seconds: float = 0.0

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.kernel, self.arch, self.shape, self.policy, self.rank)

    @property
    def case_key(self) -> tuple[str, str, str]:
        return (self.kernel, self.arch, self.shape)


COLUMNS = tuple(f.name for f in fields(ResultRow))
_FLOATS = {f.name for f in fields(ResultRow) if f.type == "float"}
_INTS = {f.name for f in fields(ResultRow) if f.type == "int"}


def _cell(name: str, value: object) -> str:
    if name in _FLOATS:
        return f"{float(value):.6g}"  # type: ignore[arg-type]
    return str(value)


def rows_to_csv(rows: list[ResultRow]) -> str:
    """The CSV text of `rows`, sorted by key (stable, independent of arrival order)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in sorted(rows, key=lambda r: r.key):
        data = asdict(row)
        writer.writerow([_cell(c, data[c]) for c in COLUMNS])
    return out.getvalue()


def read_rows(path: Path) -> list[ResultRow]:
    """Rows of an existing results.csv (empty when absent)."""
    if not path.is_file():
        return []
    rows = []
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            values: dict[str, object] = {}
            for c in COLUMNS:
                raw = rec.get(c, "")
                values[c] = (
                    float(raw or 0) if c in _FLOATS else int(raw or 0) if c in _INTS else raw
                )
            rows.append(ResultRow(**values))  # type: ignore[arg-type]
    return rows
