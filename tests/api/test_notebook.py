"""The example notebook runs top to bottom in a Jupyter kernel of this interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebooks" / "loom_quickstart.ipynb"


def test_quickstart_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbclient  # dev dependencies: the test runs wherever the suite runs
    import nbformat

    # A kernel spec of our own that starts this very interpreter (the project's venv),
    # whatever Jupyter kernels the machine has; Jupyter's and IPython's state stays in
    # the test folder.
    spec = tmp_path / "jupyter" / "kernels" / "loom-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Loom test",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="loom-test", timeout=600, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(html) == 3 and all('class="loom-compact"' in h for h in html)
    assert "simulated / modeled" in html[1] and "simulated / modeled" not in html[0]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "max relative error" in text and "PASS scaled_matmul" in text
    assert "{'x_0': 128, 'x_1': 256, 'y_0': 256, 'y_1': 128}" in text
