"""The `loom` command: outputs, JSON contracts and one-paragraph errors without tracebacks."""

from __future__ import annotations

import json

import pytest

from loom.cli import main

GEMM = ["gemm", "--arch", "wormhole_n150", "--shape", "M=256,N=512,K=128", "--jobs", "1"]


def run(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_archs(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "archs")
    assert code == 0 and {
        "wormhole_n150",
        "blackhole_p150",
        "blackhole_12x10",
        "blackhole_p150_13x10",
    } <= {line.split()[0] for line in out.splitlines()}
    code, out, _ = run(capsys, "archs", "show", "wormhole_n150")
    assert code == 0 and "8" in out and "HiFi4" in out


def test_compile_json_schedule(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "dump"
    code, out, _ = run(capsys, "compile", *GEMM, "--json", "--dump-dir", str(dump))
    assert code == 0
    s = json.loads(out)
    for field in (
        "kernel",
        "arch",
        "shape",
        "dtype",
        "math_fidelity",
        "candidate",
        "mapping",
        "copies",
        "block_sizes",
        "pipeline",
        "l1_bytes",
        "l1_capacity_bytes",
        "modeled_cycles",
        "modeled_us",
        "modeled_tflops",
        "bottleneck",
        "binding_constraints",
        "top_k",
        "candidates_total",
        "candidates_after_pruning",
        "candidates_feasible",
        "compile_seconds",
    ):
        assert field in s, field
    assert all(v % 32 == 0 for v in s["block_sizes"].values())
    assert 0 < s["l1_bytes"] <= s["l1_capacity_bytes"]
    assert 0 < s["modeled_tflops"] < 65.6  # HiFi4 peak of the 8x8 grid
    assert s["bottleneck"]["text"] and s["top_k"][0]["candidate"] == s["candidate"]
    assert sorted(p.name for p in dump.iterdir() if p.name != ".loom-artifacts") == sorted(
        [
            "00_frontend.mlir",
            "01_dataflow.mlir",
            "02_buffers.txt",
            "03_mapping.mlir",
            "04_reuse.mlir",
            "05_multicast.mlir",
            "candidates.json",
            "06_heg.txt",
            "06_problem.txt",
            "07_cpsat_model.pbtxt",
            "07_solver.log",
            "schedule.json",
            "08_program.txt",
            "kernel_ttlang.py",
        ]
    )


def test_compile_is_deterministic_across_jobs(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    outputs = []
    for jobs in ("1", "2"):
        dump = tmp_path / f"d{jobs}"
        argv = [a if a != "1" else jobs for a in GEMM]
        assert run(capsys, "compile", *argv, "--no-cache", "--dump-dir", str(dump))[0] == 0
        files = {p.name: p.read_text() for p in dump.iterdir()}
        files["schedule.json"] = json.dumps(
            {**json.loads(files["schedule.json"]), "compile_seconds": 0}
        )
        outputs.append(files)
    assert outputs[0] == outputs[1]


def test_candidates_json(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "candidates", *GEMM[:5], "--json")
    data = json.loads(out)
    assert code == 0 and data["candidates_total"] >= data["candidates_after_pruning"] == len(
        data["candidates"]
    )
    orthogonal = [
        c
        for c in data["candidates"]
        if [p["area"] for p in c["copies"] if p["mode"] == "multicast"]
        in ([[8, 1], [1, 8]], [[1, 8], [8, 1]])
    ]
    assert orthogonal


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["compile", "gemm", "--arch", "nowhere_n9"],
            "neither a built-in name nor an existing file",
        ),
        (["compile", "gemm", "--shape", "M=100,N=64,K=64"], "not a multiple of the 32x32 tile"),
        (["compile", "gemm", "--shape", "M=64,N=64"], "missing: K"),
        (["compile", "nokernel"], "neither a shipped kernel"),
        (["archs", "show"], "needs an architecture name"),
    ],
)
def test_errors_are_one_paragraph_without_traceback(capsys, argv, message) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, *argv)
    assert code != 0 and out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_infeasible_leaves_no_partial_output(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    arch = tmp_path / "tiny.yaml"
    from loom.arch import builtin_path

    text = builtin_path("wormhole_n150").read_text()
    arch.write_text(text.replace("l1_usable_bytes: 1398784", "l1_usable_bytes: 4096"))
    dump = tmp_path / "dump"
    code, _, err = run(
        capsys,
        "compile",
        "gemm",
        "--arch",
        str(arch),
        "--shape",
        "M=256,N=256,K=256",
        "--dump-dir",
        str(dump),
    )
    assert code != 0 and "L1 footprint" in err and "Traceback" not in err
    assert not dump.exists()


def test_verify_passes_and_exits_zero(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(capsys, "verify", *GEMM)
    assert code == 0, err
    assert "verify      PASS on tt-lang-sim" in out


def test_simulate_json_and_trace(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = tmp_path / "t.json"
    code, out, _ = run(capsys, "simulate", *GEMM, "--json", "--trace", str(trace))
    data = json.loads(out)
    assert code == 0 and data["simulated_cycles"] > 0 and data["modeled_cycles"] > 0
    assert 0.3 < data["simulated_over_modeled"] < 3  # the two never meet in code
    events = json.loads(trace.read_text())["traceEvents"]
    phases = {e["ph"] for e in events}
    assert {"M", "X"} <= phases  # track names and complete slices: what Perfetto draws
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and "name" in e.get("args", {})}
    assert {"reader", "compute", "writer", "DRAM banks"} <= names


def test_schedule_round_trip_through_verify_and_simulate(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "compile", *GEMM, "--json")
    path = tmp_path / "schedule.json"
    path.write_text(out)
    code, out, err = run(capsys, "verify", "--schedule", str(path))
    assert code == 0 and "PASS" in out, err
    code, out, _ = run(capsys, "simulate", "--schedule", str(path), "--json")
    modeled = json.loads(path.read_text())["modeled_cycles"]
    assert code == 0 and json.loads(out)["modeled_cycles"] == modeled


def test_broken_schedule_file_is_reported(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.json"
    path.write_text('{"kernel": "gemm"}')
    code, out, err = run(capsys, "verify", "--schedule", str(path))
    assert code != 0 and out == "" and "not a valid Loom schedule" in err and "Traceback" not in err


def test_refine_shows_both_picks(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(capsys, "compile", *GEMM, "--refine", "3")
    assert code == 0
    assert "refine      simulated the model's top 3" in out
    assert "model's pick" in out and "simulator's pick" in out


def test_refine_must_not_be_negative(capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(capsys, "compile", *GEMM, "--refine", "-1")
    assert code != 0 and "--refine" in err and "Traceback" not in err
