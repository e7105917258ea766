"""Shared fixtures: one Helion import per process, golden files with one update switch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

GOLDEN = Path(__file__).parent / "golden"

SMALL_SHAPES = {
    "gemm": {"M": 256, "N": 512, "K": 128},
    "flash_attention": {"B": 1, "H": 2, "S": 256, "D": 64},
    "flash_decode": {"B": 1, "H": 2, "S": 1024, "D": 64},
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")


@pytest.fixture
def golden(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """`golden(name, text)` compares `text` with tests/golden/<name>, or with `name` itself
    when it is a Path (golden files kept next to the tests that own them); with
    --update-golden it rewrites the file instead."""

    def check(name: str | Path, text: str) -> None:
        path = name if isinstance(name, Path) else GOLDEN / name
        if request.config.getoption("--update-golden"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; run pytest --update-golden to create it")
        assert text == path.read_text(), (
            f"{path.name} changed; review and run pytest --update-golden"
        )

    return check


@pytest.fixture(scope="session")
def small_shapes() -> dict[str, dict[str, int]]:
    """The shapes `tile_programs` imports the shipped kernels at."""
    return SMALL_SHAPES


@pytest.fixture(scope="session")
def kernel_specs():  # type: ignore[no-untyped-def]
    from loom.kernels.registry import resolve_kernel

    return {name: resolve_kernel(name) for name in SMALL_SHAPES}


@pytest.fixture(scope="session")
def tile_programs(kernel_specs):  # type: ignore[no-untyped-def]
    """The three shipped kernels imported at small shapes (Helion binds once per session)."""
    from loom.flows.helion import run_frontend
    from loom.flows.stages import StageLog

    return {
        name: run_frontend(spec, SMALL_SHAPES[name], StageLog())
        for name, spec in kernel_specs.items()
    }


@pytest.fixture(scope="session")
def buffered(tile_programs):  # type: ignore[no-untyped-def]
    from loom.dataflow import build_buffers

    return {name: build_buffers(p) for name, p in tile_programs.items()}


@pytest.fixture(scope="session")
def wormhole():  # type: ignore[no-untyped-def]
    from loom.arch import load_arch

    return load_arch("wormhole_n150")


@pytest.fixture(autouse=True, scope="session")
def _trace_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """CLI runs in tests keep their Tile IR cache in a temporary folder, not the user's."""
    os.environ.setdefault("LOOM_CACHE_DIR", str(tmp_path_factory.mktemp("tile-ir-cache")))
