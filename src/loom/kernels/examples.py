"""The Helion example files Loom ships (`examples/helion/`), one entry per kernel.

A file with several kernels (activations.py) contributes one entry per kernel; the test
suite and `benchmarks/helion_examples.py` run every entry through compile, verify and
simulate.
"""

from __future__ import annotations

import ast
from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "examples" / "helion"


def example_kernels(folder: Path = EXAMPLES_DIR) -> tuple[tuple[str, str], ...]:
    """(file, kernel) pairs, found by reading each file's `@helion.kernel` functions
    (without importing the files)."""
    found: list[tuple[str, str]] = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                "helion.kernel" in ast.unparse(d) for d in node.decorator_list
            ):
                found.append((path.name, node.name))
    return tuple(found)
