"""The stage log both pipelines share: seconds per stage, the text artifacts in the order
they were produced (what `--dump-dir` writes), and a listener the CLI draws progress
from. It knows no stage, so any input form's pipeline can time itself with it."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

T = TypeVar("T")


class StageListener(Protocol):
    """Told when a stage starts and ends (the CLI draws progress from it)."""

    def started(self, stage: str, detail: str) -> None: ...

    def finished(self, stage: str, seconds: float) -> None: ...


@dataclass
class StageLog:
    """Seconds per stage and the text artifacts, in the order they were produced."""

    seconds: dict[str, float] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    listener: StageListener | None = None

    @contextmanager
    def stage(self, name: str, detail: str = ""):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        if self.listener is not None:
            self.listener.started(name, detail)
        try:
            yield
        finally:
            spent = time.perf_counter() - start
            self.seconds[name] = self.seconds.get(name, 0.0) + spent
            if self.listener is not None:
                self.listener.finished(name, spent)

    def timed(self, name: str, fn: Callable[[], T], detail: str = "") -> T:
        with self.stage(name, detail):
            return fn()
