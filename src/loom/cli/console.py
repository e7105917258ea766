"""Progress on the terminal while the pipeline works (the CLI's only rich user).

A spinner names the running stage ("tracing gemm with Helion", "solving 845
candidates", …); when a stage took long enough to notice (about half a second or more),
a line with its time stays behind. Everything goes to stderr, so stdout stays clean for
`--json` and pipes, and the CLI enables it only on a terminal without `--quiet`/`--json`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

_TEXT = {
    "frontend": "tracing the kernel with Helion",
    "import": "importing Helion and torch",
    "dataflow": "building virtual buffers",
    "mapping": "enumerating mapping candidates",
    "model+solve": "solving the candidates with CP-SAT",
    "materialize": "materializing the schedule",
    "lower": "lowering to per-core streams",
    "emit": "emitting TT-Lang",
    "verify": "running the TT-Lang kernel on tt-lang-sim",
    "simulate": "simulating on the timing simulator",
    "simulate top-k": "simulating the top candidates",
    "report": "drawing the HTML report",
}

SHOW_AFTER_S = 0.5
"""Stages faster than this leave no line behind."""


class StageProgress:
    """A :class:`loom.flows.stages.StageListener` that draws a rich spinner per stage."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self._status: Any = None
        self._text = ""

    def started(self, stage: str, detail: str) -> None:
        self._stop()
        self._text = detail or _TEXT.get(stage, stage)
        self._status = self.console.status(f"{self._text} …", spinner="dots")
        self._status.start()

    def finished(self, stage: str, seconds: float) -> None:
        self._stop()
        if seconds >= SHOW_AFTER_S:
            self.console.print(
                f"[green]✓[/green] {self._text} [dim]{seconds:.1f} s[/dim]", highlight=False
            )

    def note(self, text: str) -> None:
        self._stop()
        self.console.print(text)

    def _stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
