"""The public API: `loom.compile` on tensors, the compiled kernel called like the Helion
kernel and compared with torch, inspection, simulation, saving, and typed errors."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest
import torch

import loom
from loom.report.explain_text import explain_sentences

GEMM = {"M": 256, "N": 512, "K": 128}


def gemm_args(seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(GEMM["M"], GEMM["K"], generator=gen).to(torch.bfloat16)
    b = torch.randn(GEMM["K"], GEMM["N"], generator=gen).to(torch.bfloat16)
    return a, b


@pytest.fixture(scope="module")
def ck() -> loom.CompiledKernel:
    from loom.kernels import gemm

    return loom.compile(gemm, *gemm_args(), jobs=1)


def test_import_loom_is_cheap_and_versioned() -> None:
    code = (
        "import sys, loom; "
        "heavy = [m for m in ('torch', 'helion', 'ortools', 'loom.api', 'loom.flows.helion') "
        "if m in sys.modules]; print(heavy, loom.__version__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split(maxsplit=1)
    assert out[0] == "[]"
    assert out[1].strip() == version("loom")


def test_version_flag_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from loom.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"loom {loom.__version__}"


def test_public_names_resolve() -> None:
    for name in loom.__all__:
        assert getattr(loom, name) is not None, name
    assert set(loom.__all__) <= set(dir(loom))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = loom.nope  # type: ignore[attr-defined]


def test_archs_and_load_arch() -> None:
    names = loom.archs()
    assert "wormhole_n150" in names and names == tuple(sorted(names))
    arch = loom.load_arch("wormhole_n150")
    assert isinstance(arch, loom.Arch) and (arch.grid_x, arch.grid_y) == (8, 8)
    with pytest.raises(loom.ArchError, match="unknown architecture 'nope'"):
        loom.load_arch("nope")


def test_call_matches_torch(ck: loom.CompiledKernel) -> None:
    a, b = gemm_args(seed=7)
    out = ck(a, b)
    ref = a.float() @ b.float()
    assert out.dtype == torch.bfloat16 and tuple(out.shape) == (GEMM["M"], GEMM["N"])
    rel = float((out.float() - ref).abs().max()) / float(ref.abs().max())
    assert rel <= 2.0**-6, rel
    assert torch.equal(ck(a, -b), -out)  # the simulator computes on the inputs given


def test_schedule_and_shape_named_as_on_the_cli(ck: loom.CompiledKernel) -> None:
    s = ck.schedule
    assert ck.shape == GEMM and s.kernel == "gemm" and s.arch == "wormhole_n150"
    assert set(s.block_sizes) == {"tile_m", "tile_n", "tile_k"}
    by_name = loom.compile("gemm", shape=GEMM, jobs=1).schedule
    assert (by_name.candidate, by_name.block_sizes) == (s.candidate, s.block_sizes)


def test_candidates_are_ranked_and_named(ck: loom.CompiledKernel) -> None:
    cands = ck.candidates
    assert cands[0].name == ck.schedule.candidate and cands[0].rank == 1
    assert [c.rank for c in cands] == list(range(1, len(cands) + 1))
    assert len({c.name for c in cands}) == len(cands) == ck.schedule.candidates_after_pruning
    solved = [c for c in cands if c.solved]
    assert [c.modeled_cycles for c in solved] == sorted(c.modeled_cycles for c in solved)
    assert all(not c.solved for c in cands[len(solved) :])
    assert solved[0].block_sizes == ck.schedule.block_sizes
    top = [e.candidate for e in ck.schedule.top_k]
    assert [c.name for c in cands[: len(top)]] == top


def test_explain_speaks_in_source_terms(ck: loom.CompiledKernel) -> None:
    text = ck.explain()
    s = ck.schedule
    assert s.candidate in text and f"tile_k = {s.block_sizes['tile_k']}" in text
    assert f"{s.modeled_cycles:,} cycles" in text and "wormhole_n150" in text
    assert "The bottleneck is" in text and "usable bytes" in text
    assert text == "\n".join(explain_sentences(ck.report_data())) + "\n"
    assert all(line.endswith(".") for line in text.splitlines())


def test_ttlang_source_and_program(ck: loom.CompiledKernel) -> None:
    assert "import ttl" in ck.ttlang_source
    assert ck.program.kernel == "gemm" and ck.program.grid[0] * ck.program.grid[1] > 0
    assert ck.tile_program.name == "gemm"


def test_simulate_report_and_trace(ck: loom.CompiledKernel, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = ck.simulate()
    assert r.cycles > r.kernel_cycles > 0 and r.us == pytest.approx(r.cycles / 1000)
    assert r.tflops == pytest.approx(2 * 256 * 512 * 128 / (r.us * 1e6))
    assert 0 < r.utilization < 1 and r.modeled_cycles == ck.schedule.modeled_cycles
    assert {e.engine for e in r.engines} == {"reader", "compute", "writer"}
    cores = ck.schedule.mapping.num_cores
    assert len({c.core for c in r.per_core}) == cores
    # every term costs time but an overlap, which gives back what another one hides
    assert r.modeled_pipes
    assert all(p.cycles >= 0 or p.term.endswith("[overlap]") for p in r.modeled_pipes)
    # the activities account for every busy cycle of every engine
    for e in r.engines:
        busy = sum(a.cycles for a in r.activities if a.engine == e.engine)
        assert busy == pytest.approx(e.mean * cores * r.kernel_cycles, rel=1e-6)
    assert any(a.name.startswith("send mcast_") for a in r.activities)
    assert "simulated / modeled" in str(r) and r.as_dict()["modeled_cycles"] == r.modeled_cycles
    trace = json.loads(r.trace(tmp_path / "trace.json").read_text())
    assert trace["traceEvents"]
    with pytest.raises(loom.LoomError, match="simulate\\(trace=True\\)"):
        ck.simulate(trace=False).trace(tmp_path / "none.json")


def test_verify_default_and_explicit_reference(ck: loom.CompiledKernel) -> None:
    assert ck.default_reference == "the kernel file's reference()"
    result = ck.verify()
    assert result.passed and result.max_rel_error <= result.tolerance
    a, b = gemm_args(seed=3)
    wrong = ck.verify(reference=lambda x, y: -(x.float() @ y.float()), inputs=(a, b))
    assert not wrong.passed and "FAIL" in wrong.message


def test_save_writes_the_stage_artifacts(ck: loom.CompiledKernel, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = ck.save(tmp_path / "gemm")
    names = {p.name for p in out.iterdir()}
    assert {"00_frontend.mlir", "schedule.json", "kernel_ttlang.py", "07_solver.log"} <= names
    assert (out / "kernel_ttlang.py").read_text() == ck.ttlang_source
    assert json.loads((out / "schedule.json").read_text())["candidate"] == ck.schedule.candidate
    with pytest.raises(loom.LoomError, match="already exists and is not an empty folder"):
        ck.save(out)
    assert ck.save(out, overwrite=True) == out
    assert [p.name for p in tmp_path.iterdir()] == ["gemm"]  # no staging folder left behind


def test_repr_html_shows_the_compact_report(ck: loom.CompiledKernel) -> None:
    ck.simulate(trace=False)
    html = ck._repr_html_()
    assert html.count('<g class="core ') == 64
    assert ck.schedule.candidate in html
    assert f"tile_k = {ck.schedule.block_sizes['tile_k']}" in html
    assert "simulated / modeled" in html and "<script" not in html
    assert repr(ck).startswith("<CompiledKernel gemm [M=256,N=512,K=128] on wormhole_n150")


def test_alternatives_are_the_top_k(ck: loom.CompiledKernel) -> None:
    alts = ck.alternatives()
    assert [a.schedule.candidate for a in alts] == [e.candidate for e in ck.schedule.top_k]
    assert alts[0].schedule == ck.schedule
    assert alts[-1].simulate(trace=False).cycles > 0


def test_user_kernel_without_the_file_convention() -> None:
    from user_kernels import matmul, matmul_addmm

    x = torch.randn(64, 128).to(torch.bfloat16)
    y = torch.randn(128, 96).to(torch.bfloat16)
    ck = loom.compile(matmul, x, y, jobs=1)
    assert ck.shape == {"x_0": 64, "x_1": 128, "y_0": 128, "y_1": 96}
    interpret = "Helion interpret mode (eager CPU torch run of matmul)"
    assert ck.default_reference == interpret
    result = ck.verify()  # against Helion's interpret mode of the same kernel
    assert result.passed and result.reference == interpret
    # torch.addmm(fp32, bf16, bf16) has no CPU kernel in Helion's interpret mode: the
    # matmul is verified against Loom's own reference, its Tile IR evaluated in torch
    addmm = loom.compile(matmul_addmm, x, y, jobs=1)
    result = addmm.verify()
    assert result.passed, result.message
    assert result.reference.startswith("Loom's Tile IR reference (fp32 torch evaluation of ")
    assert "cannot run it on the CPU: NotImplementedError: Could not run 'aten::mm.dtype'" in (
        result.reference
    )
    assert addmm.verify(reference=lambda a, b: (a.float() @ b.float()).to(torch.bfloat16)).passed
    asked = addmm.verify(reference="tile-ir:fp64")
    assert asked.passed and asked.reference == (
        "Loom's Tile IR reference (fp64 torch evaluation of matmul_addmm)"
    )
    with pytest.raises(loom.FrontendError, match=r"computes in fp32 or fp64; write"):
        addmm.verify(reference="tile-ir:fp16")


def test_scalar_arguments_bind_and_call_as_on_the_cli() -> None:
    """A scalar is compiled as a constant: left out, it takes its default (as the CLI
    binds it); called with another value, the kernel is compiled again for it, once."""
    from user_kernels import rms_norm_residual

    gen = torch.Generator().manual_seed(7)
    x, r = (torch.randn(64, 128, generator=gen).to(torch.bfloat16) for _ in range(2))
    w = torch.randn(128, generator=gen).to(torch.bfloat16)

    def ref(x, r, w, eps=1e-5):  # type: ignore[no-untyped-def]
        h = x.float() + r.float()
        return h * torch.rsqrt((h * h).mean(-1, keepdim=True) + eps) * w.float()

    def close(out: torch.Tensor, eps: float) -> bool:
        want = ref(x, r, w, eps)
        return float((out.float() - want).abs().max()) <= 2**-6 * float(want.abs().max())

    ck = loom.compile(rms_norm_residual, x, r, w, jobs=1)  # eps bound to its default
    explicit = loom.compile(rms_norm_residual, x, r, w, 1e-5, jobs=1)
    assert ck.ttlang_source == explicit.ttlang_source
    assert torch.equal(ck(x, r, w), ck(x, r, w, 1e-5)) and close(ck(x, r, w), 1e-5)
    assert torch.equal(explicit(x, r, w), ck(x, r, w))
    wide = ck(x, r, w, 0.5)  # another constant: compiled again, on first use only
    assert close(wide, 0.5) and not close(wide, 1e-5)
    ck(x, r, w, 0.5)
    assert ck._variants is not None and set(ck._variants.compiled) == {(1e-5,), (0.5,)}
    assert ck.verify().passed
    assert ck.verify(inputs=(x, r, w, 0.5), reference=ref).passed
    with pytest.raises(loom.ShapeError, match=r"'eps' of rms_norm_residual must be a scalar"):
        ck(x, r, w, w)
    with pytest.raises(loom.ShapeError, match=r"compiled for 4 arguments \(x, r, w, eps\)"):
        ck(x, r)


def test_errors_are_typed_and_name_the_fix(ck: loom.CompiledKernel) -> None:
    from loom.kernels.gemm import gemm

    with pytest.raises(loom.FrontendError, match=r"takes a @helion\.kernel function"):
        loom.compile(42)
    with pytest.raises(loom.ShapeError, match=r"takes 2 arguments \(a, b\) but .* got 1"):
        loom.compile(gemm, gemm_args()[0])
    with pytest.raises(loom.ShapeError, match=r"takes exactly M, N, K .*: M=0; .*missing: K"):
        loom.compile("gemm", shape={"M": 0, "N": 64})
    with pytest.raises(loom.ShapeError, match="not a multiple of the 32x32 tile"):
        loom.compile(gemm, torch.randn(100, 64), torch.randn(64, 64))
    with pytest.raises(loom.LoomError, match=r"top_k=0 must be >= 1.*solver='x'"):
        loom.compile(gemm, *gemm_args(), top_k=0, solver="x")
    with pytest.raises(loom.ArchError, match="unknown architecture"):
        loom.compile(gemm, *gemm_args(), arch="nope")
    with pytest.raises(loom.ShapeError, match="compiled for 256x128 bfloat16"):
        ck(torch.randn(128, 128).to(torch.bfloat16), gemm_args()[1])
    with pytest.raises(loom.ShapeError, match="compiled for 2 arguments"):
        ck(gemm_args()[0])


def test_flash_attention_on_blackhole_matches_torch() -> None:
    from loom.kernels import flash_attention as fa

    q, k, v = fa.make_inputs({"B": 1, "H": 2, "S": 256, "D": 64}, seed=3)
    ck = loom.compile(fa, q, k, v, arch="blackhole_p150", jobs=1)
    assert ck.shape == {"B": 1, "H": 2, "S": 256, "D": 64} and ck.arch.name == "blackhole_p150"
    out, ref = ck(q, k, v), fa.reference(q, k, v)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    rel = float((out.float() - ref.float()).abs().max()) / float(ref.float().abs().max())
    assert rel <= 2.0**-6, rel


def test_block_float_formats_through_the_api() -> None:
    a, b = gemm_args(seed=5)
    ck = loom.compile("gemm", shape=GEMM, dtype="bfp8", jobs=1)
    assert ck.schedule.formats == "bfp8" and ck.schedule.dtype == "bfp8"
    result = ck.verify()
    assert result.passed and "block-float" in result.format_note
    out = ck(a, b)  # a block-float output comes back as float32 holding bfp8 values
    ref = a.float() @ b.float()
    assert out.dtype == torch.float32
    assert float((out - ref).abs().max() / ref.abs().max()) < 0.05
    assert {alt.schedule.formats for alt in ck.alternatives()} == {"bfp8"}
