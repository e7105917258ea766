"""Compile through the trace cache: the one path from a kernel to its CompileResult that
both `loom.compile` and the CLI take. A kernel named by file or shipped name is traced
(or read from the cache) without importing Helion or torch until something needs them;
a kernel the API already resolved takes the same path with no cache."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom.flows.helion import CompileOptions, CompileResult, Traced, compile_traced, trace_kernel
from loom.flows.stages import StageListener, StageLog
from loom.flows.tracecache import KernelFile, TraceCache, cache_key, compile_key, kernel_file

if TYPE_CHECKING:
    from loom.kernels.registry import KernelSpec

Selection = tuple[str | None, tuple[str, ...], str | None]
"""--kernel NAME, --arg values and --reference, as given."""


@dataclass
class LazyKernel:
    """A kernel whose Helion module is imported only when something needs it (tracing,
    inputs and reference for tt-lang-sim); until then it answers from the traced data."""

    source_file: KernelFile
    traced: Traced | None = None
    listener: StageListener | None = None
    selection: Selection = (None, (), None)
    trace_key: str = ""
    reused: bool = False
    """The compile result came from the cache (nothing was solved in this run)."""
    _spec: KernelSpec | None = field(default=None, repr=False)

    @classmethod
    def of_file(
        cls,
        name_or_path: str,
        selection: Selection = (None, (), None),
        listener: StageListener | None = None,
        spec: KernelSpec | None = None,
    ) -> LazyKernel:
        """A shipped kernel's name or a kernel file, read but not imported (unless the
        caller resolved it already: `spec`)."""
        return cls(kernel_file(name_or_path), listener=listener, selection=selection, _spec=spec)

    @classmethod
    def of_spec(cls, spec: KernelSpec) -> LazyKernel:
        """A kernel already resolved (by `loom.compile`); its source is the file that
        defines it, or nothing when that cannot be found."""
        fn = getattr(spec.kernel, "fn", spec.kernel)
        try:
            path = inspect.getsourcefile(fn)
            text = Path(path).read_text(encoding="utf-8") if path else ""
        except (OSError, TypeError, UnicodeDecodeError):
            path, text = None, ""
        return cls(KernelFile(path or spec.name, Path(path or ""), text), _spec=spec)

    def spec(self) -> KernelSpec:
        if self._spec is None:
            from loom.flows.stages import StageLog

            log = StageLog(listener=self.listener)
            with log.stage("import", "importing Helion and torch"):
                from loom.kernels.registry import resolve_kernel

                kernel, args, reference = self.selection
                self._spec = resolve_kernel(self.source_file.name, kernel, args, reference)
        return self._spec

    @property
    def file(self) -> Any:
        """The kernel file's description when it is not a Loom-contract kernel."""
        return self.spec().file

    @property
    def kernel(self) -> Any:
        return self.spec().kernel

    @property
    def example_inputs(self) -> Callable[[dict[str, int]], tuple[Any, ...]]:
        return self.spec().example_inputs

    @property
    def name(self) -> str:
        return self.traced.name if self.traced else self.spec().name

    def flops(self, shape: dict[str, int]) -> int:
        if self.traced is not None and shape == self.traced.shape:
            return self.traced.flops
        f = self.spec().flops
        return f(shape) if f else 0

    @property
    def make_inputs(self) -> Callable[[dict[str, int]], tuple[Any, ...]]:
        return self.spec().make_inputs

    @property
    def reference(self) -> Callable[..., Any]:
        return self.spec().reference


def trace_cached(
    lazy: LazyKernel,
    shape: str | dict[str, int] | None,
    cache: TraceCache | None,
    log: StageLog,
    formats: str = "",
) -> LazyKernel:
    """`lazy` traced at `shape` (`M=...,N=...` text as given, or already named) with the
    data formats `formats` (`--dtype`), from `cache` when it holds it (then without
    importing Helion or torch), else traced now and stored."""
    selection = lazy.selection
    picked = f"{selection[0] or ''};{','.join(selection[1])};{selection[2] or ''}"
    key = ""
    traced = None
    if cache is not None:
        assert not isinstance(shape, dict), "the cache is keyed by the shape as given"
        key = cache_key(lazy.source_file, f"{shape or ''};{picked}", formats)
        traced = cache.load(key)
    if traced is None:
        spec = lazy.spec()
        from loom.kernels.registry import parse_shape

        named = shape if isinstance(shape, dict) else parse_shape(shape, spec)
        traced = trace_kernel(spec, named, log, formats)
        if cache is not None:
            cache.store(key, traced)
    lazy.traced = traced
    lazy.trace_key = key
    return lazy


def compile_cached(
    lazy: LazyKernel,
    shape: str | dict[str, int] | None,
    make_options: Callable[[dict[str, int]], CompileOptions],
    cache: TraceCache | None,
    listener: StageListener | None,
    formats: str = "",
) -> CompileResult:
    """Compile `lazy`, reusing its traced Tile IR from `cache` when there is one, and
    the whole compile result when this very compile was done before (see tracecache);
    `make_options` turns the traced kernel's named shape into the compile options."""
    log = StageLog(listener=listener)
    trace_cached(lazy, shape, cache, log, formats)
    assert lazy.traced is not None
    options = make_options(lazy.traced.shape)
    if cache is None:
        return compile_traced(lazy.traced, options, log)
    key = compile_key(lazy.trace_key, options)
    with log.stage("cache", "reading the cached compile result"):
        stored = cache.load(key, CompileResult)
    if stored is not None:
        lazy.reused = True
        seconds = {**stored.log.seconds, **log.seconds}
        kept = StageLog(seconds, dict(stored.log.artifacts), listener)
        return dataclasses.replace(stored, log=kept)
    result = compile_traced(lazy.traced, options, log)
    stored_log = StageLog(dict(log.seconds), dict(log.artifacts))  # no listener: picklable
    cache.store(key, dataclasses.replace(result, log=stored_log))
    return result
