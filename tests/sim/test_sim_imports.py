"""loom.sim is the stand-in for hardware: it must not see the latency model."""

from __future__ import annotations

import ast
from pathlib import Path

import loom.sim

ALLOWED = ("loom.sim", "loom.ir", "loom.arch", "loom.symbolic", "loom.errors")


def test_sim_imports_only_contracts() -> None:
    root = Path(loom.sim.__file__).parent
    bad = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            bad += [
                f"{path.name}: {n}"
                for n in names
                if n.startswith("loom") and not n.startswith(ALLOWED)
            ]
    assert bad == []
