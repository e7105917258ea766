"""The wheel: `python -m build` makes one that installs into a fresh virtual environment
and runs `loom run gemm` and the API example there, from the installed files alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_EXAMPLE = (
    "import torch, loom; from loom.kernels import gemm; "
    "ck = loom.compile(gemm, torch.randn(256,512,dtype=torch.bfloat16), "
    "torch.randn(512,256,dtype=torch.bfloat16), jobs=1); "
    "print(ck.explain()); print(ck.simulate()); print('loom from', loom.__file__)"
)


def build_wheel(out: Path) -> Path:
    """`python -m build --wheel` without build isolation (the build backend is already
    installed, and the build needs no network), on a copy of the sources: the build's
    `build/` folder would otherwise carry stale modules from one build to the next."""
    source = out.parent / "source"
    for name in ("pyproject.toml", "README.md"):
        source.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), "."],
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
    )
    wheels = list(out.glob("loom-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def fresh_env(folder: Path, share_dependencies: bool) -> Path:
    """A new virtual environment; with `share_dependencies` it sees this environment's
    installed packages through a .pth file (added after its own site-packages, so the
    wheel's `loom` wins), which keeps the default test run offline and fast."""
    venv.EnvBuilder(with_pip=not share_dependencies, clear=True).create(folder)
    python = folder / "bin" / "python"
    if share_dependencies:
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
        (Path(purelib) / "zz_shared_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def check_installed(python: Path, cwd: Path) -> None:
    env = clean_env()
    bin_dir = python.parent
    out = subprocess.run(
        [str(bin_dir / "loom"), "--version"], cwd=cwd, env=env, check=True, capture_output=True,
        text=True,
    ).stdout  # fmt: skip
    assert out.strip() == f"loom {version('loom')}"
    run = subprocess.run(
        [str(bin_dir / "loom"), "run", "gemm", "--shape", "M=256,N=256,K=256", "--jobs", "1"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "verify      PASS on tt-lang-sim" in run.stdout and "simulated / modeled" in run.stdout
    api = subprocess.run(
        [str(python), "-c", API_EXAMPLE], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert api.returncode == 0, api.stderr[-2000:]
    assert "Loom compiled gemm (M=256, N=256, K=512" in api.stdout
    assert "simulated / modeled" in api.stdout
    where = Path(api.stdout.rsplit("loom from", 1)[1].strip())
    assert where.is_relative_to(python.parent.parent), where  # the wheel, not the checkout


def wheel_contents(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def test_wheel_installs_and_runs(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "dist")
    names = wheel_contents(wheel)
    assert {
        "loom/py.typed",
        "loom/arch/data/wormhole_n150.yaml",
        "loom/report/templates/compact.html.j2",
        "loom/kernels/gemm.py",
    } <= names
    assert not [n for n in names if n.startswith("tests/")]
    python = fresh_env(tmp_path / "env", share_dependencies=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, env=clean_env(),
    )  # fmt: skip
    check_installed(python, tmp_path)


@pytest.mark.slow
def test_wheel_installs_with_its_dependencies(tmp_path: Path) -> None:
    """`pip install loom-*.whl` into an empty environment, dependencies resolved by pip
    (from its cache or the index): the declared dependencies are complete."""
    wheel = build_wheel(tmp_path / "dist")
    python = fresh_env(tmp_path / "env", share_dependencies=False)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True, capture_output=True, env=clean_env(),
    )  # fmt: skip
    check_installed(python, tmp_path)
