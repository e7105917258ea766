"""On-disk cache of traced kernels (Tile IR) and of their compiled results, so a warm
compile skips Helion and torch, and an identical warm compile skips the solver too.

Tracing a kernel means importing Helion and torch (seconds) for a result that depends
only on the kernel's source, the shape, and the versions of Helion, torch and Loom's own
frontend. The key hashes exactly those: the kernel file's text, the shape text as given,
the data formats asked for (`--dtype`, applied right after tracing), the installed
versions of helion and torch, Loom's version and the source of the
packages that produce Tile IR (`loom.frontend`, `loom.ir`, `loom.symbolic`) and of the
shipped kernels (`loom.kernels`: the causal attention kernel runs the step function of
`flash_attention.py`), so editing either invalidates old entries. A user's kernel file
that imports other local files is keyed by its own text only.

A compile result (:class:`loom.flows.helion.CompileResult`: candidates, every solution,
schedule, lowering) is keyed by the trace's key plus every other input of the compile:
the compile options (architecture description, shape, math fidelity, data formats,
top-k, solver, its deterministic time limit, refine; not the number of parallel solves,
which never changes a result), the source of the whole `loom` package and the installed
OR-Tools version. Any change to an input is a different key, so a stale result is never
reused; `--no-cache` bypasses both kinds of entry.

Entries are pickles (:class:`loom.flows.helion.Traced` or `CompileResult`), written to a
temporary file in the cache folder and renamed into place, so concurrent runs never see
half an entry; an unreadable entry, or one of the wrong kind, counts as a miss. The
cache folder is chosen by the caller (the CLI).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import pickle
import tempfile
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from loom.errors import FrontendError
from loom.flows.helion import Traced
from loom.kernels.names import SHIPPED

if TYPE_CHECKING:
    from loom.flows.helion import CompileOptions

_FORMAT = 1
T = TypeVar("T")
_TRACED_PACKAGES = ("frontend", "ir", "kernels", "symbolic")
_LOOM_ROOT = Path(__file__).resolve().parents[1]
"""The `loom` package's folder: the source trees hashed below are named relative to it."""


@dataclass(frozen=True, slots=True)
class KernelFile:
    """Where a kernel's source lives and its text (read without importing it)."""

    name: str
    path: Path
    text: str


def kernel_file(name_or_path: str) -> KernelFile:
    """The source of a shipped kernel (by name) or of a user's kernel file."""
    if name_or_path in SHIPPED:
        spec = importlib.util.find_spec(f"loom.kernels.{name_or_path}")
        assert spec is not None and spec.origin is not None
        path = Path(spec.origin)
    else:
        path = Path(name_or_path)
    try:
        return KernelFile(name_or_path, path, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        raise FrontendError(
            f"kernel {name_or_path!r} is neither a shipped kernel ({', '.join(SHIPPED)}) nor a "
            "readable Python file; pass one of the shipped names or the path of a .py file."
        ) from None


def hash_version(digest: hashlib._Hash, distribution: str) -> None:
    """Feed an installed distribution's version to `digest` (a placeholder when absent):
    a result computed by it changes with it."""
    try:
        digest.update(importlib.metadata.version(distribution).encode())
    except importlib.metadata.PackageNotFoundError:
        digest.update(f"{distribution}=?".encode())


def hash_sources(digest: hashlib._Hash, root: Path, folder: Path) -> None:
    """Feed every Python file under `folder` to `digest`: its path below `root`, then its
    bytes, in sorted order (so the digest names exactly that source tree)."""
    for file in sorted(folder.rglob("*.py")):
        digest.update(file.relative_to(root).as_posix().encode())
        digest.update(file.read_bytes())


@lru_cache(maxsize=1)
def _versions() -> str:
    parts = []
    for dist in ("helion", "torch", "loom"):
        try:
            parts.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{dist}=?")
    root = _LOOM_ROOT
    digest = hashlib.sha256()
    for package in _TRACED_PACKAGES:
        hash_sources(digest, root, root / package)
    parts.append(f"frontend={digest.hexdigest()[:16]}")
    return ";".join(parts)


def cache_key(kernel: KernelFile, shape_text: str, formats: str = "") -> str:
    """Hex digest naming the cache entry of `kernel` traced at `shape_text` with the data
    formats `formats` (the `--dtype` text)."""
    digest = hashlib.sha256()
    parts = (str(_FORMAT), _versions(), kernel.text, shape_text.replace(" ", ""), formats)
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _loom_source() -> str:
    """Digest of every Python file of the `loom` package and the solver's version: what a
    compile result depends on besides its inputs."""
    root = _LOOM_ROOT
    digest = hashlib.sha256()
    hash_sources(digest, root, root)
    hash_version(digest, "ortools")
    return digest.hexdigest()


def compile_key(trace_key: str, options: CompileOptions) -> str:
    """Hex digest naming the compile result of the kernel traced under `trace_key`,
    compiled with `options` (the number of parallel solves left out: results do not
    depend on it)."""
    digest = hashlib.sha256()
    parts = ("compile", str(_FORMAT), trace_key, _loom_source(), repr(replace(options, jobs=0)))
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return "compile-" + digest.hexdigest()


@dataclass(frozen=True, slots=True)
class TraceCache:
    folder: Path

    def entry(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def load(self, key: str, kind: type[T] = Traced) -> T | None:  # type: ignore[assignment]
        """The entry under `key` if it holds a `kind`, else None (absent or damaged)."""
        path = self.entry(key)
        try:
            with path.open("rb") as f:
                value = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception:  # a truncated or foreign file: a miss
            return None
        return value if isinstance(value, kind) else None

    def store(self, key: str, value: object) -> None:
        """Write atomically; a cache that cannot be written is silently skipped."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", dir=self.folder)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.entry(key))
        except OSError:
            pass
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
