"""On-disk cache of simulations, keyed by what the simulator reads: the lowered program
(its notes aside), the architecture description, and the source of the packages the
simulator runs (`loom.sim` and what it imports: `loom.ir`, `loom.arch`, `loom.symbolic`,
`loom.errors`) with numba's version.

The simulator is a pure function of those, so an entry is reused whatever policy, case
or run lowered the same program: a rerun of `loom eval` (another `--out`, a change to a
baseline, the frontend or the solver that leaves a lowered program as it was) simulates
only what changed. A change to the simulator's source is a new key, so a stale result is
never read. Entries live in the trace cache's folder (`loom.flows.tracecache`: written
atomically, an unreadable one is a miss).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
from functools import lru_cache
from pathlib import Path
from typing import Any

from loom.arch import Arch
from loom.flows.tracecache import TraceCache, hash_sources, hash_version
from loom.ir.program import Program
from loom.sim import SimResult, simulate

_FORMAT = 1
_SIM_PACKAGES = ("sim", "ir", "arch", "symbolic")
_LOOM_ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def _simulator_source() -> str:
    """Digest of the simulator's source tree and numba's version."""
    digest = hashlib.sha256()
    for package in _SIM_PACKAGES:
        hash_sources(digest, _LOOM_ROOT, _LOOM_ROOT / package)
    digest.update((_LOOM_ROOT / "errors.py").read_bytes())
    hash_version(digest, "numba")
    return digest.hexdigest()


def sim_key(program: Program, arch: Arch) -> str:
    """Hex digest naming the simulation of `program` (notes aside) on `arch`."""
    digest = hashlib.sha256()
    digest.update(f"sim;{_FORMAT};{_simulator_source()}\0".encode())
    out = io.BytesIO()
    _FieldsPickler(out).dump((dataclasses.replace(program, notes=()), arch))
    digest.update(out.getvalue())
    return "sim-" + digest.hexdigest()


def _fields(kind: str, values: tuple[object, ...]) -> None:
    """Stands for a dataclass in `_FieldsPickler`'s bytes (which are hashed, never read)."""


class _FieldsPickler(pickle.Pickler):
    """Pickles a dataclass as its class and field values only, and every value in full
    (no memo): the values expressions cache on themselves once evaluated
    (`loom.symbolic.expr.cached_property`) and which equal values happen to be one object
    would otherwise make the same program's bytes depend on what ran before."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.fast = True  # no memo: equal values give equal bytes, shared or not

    def reducer_override(self, obj: object) -> Any:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
            values = tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))
            return _fields, (kind, values)
        return NotImplemented


def simulate_cached(program: Program, arch: Arch, cache: TraceCache | None) -> SimResult:
    """`simulate(program, arch)`, read from `cache` when it holds it, else run and stored."""
    if cache is None:
        return simulate(program, arch)
    key = sim_key(program, arch)
    stored = cache.load(key, SimResult)
    if stored is not None:
        return stored
    result = simulate(program, arch)
    cache.store(key, result)
    return result
