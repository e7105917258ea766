"""Each workload: compiled, run on tt-lang-sim launch by launch, compared with FP64."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.arch import load_arch
from loom.cuda import parse_annotations
from loom.flows.cuda import CudaOptions, compile_cuda, model_cuda, simulate_cuda, verify_cuda

ARCH = load_arch("blackhole_p150_13x10")
GOLDEN = Path(__file__).parent / "golden"


def _compile(name: str, defines: dict[str, str], precision: str = "fp32", ann: dict | None = None):  # type: ignore[no-untyped-def, type-arg]
    return compile_cuda(
        f"examples/cuda/{name}.cu",
        CudaOptions(ARCH, precision, tuple(defines.items()), parse_annotations(ann or {}, "test")),
    )


@pytest.mark.parametrize("name", ["gaussian", "jacobi_2d", "syrk"])
def test_checkpoints_print_stably(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    c = _compile(name, {"N": "64", "M": "64", "TSTEPS": "2"})
    golden(GOLDEN / f"{name}.txt", "".join(text for _, text in c.texts))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize(
    "ann",
    [
        {},
        {"tileplan": {"strip_mine": 2}, "task": {"dm_lanes": 2}, "physical": {"cb_depth": 2}},
        {"tileplan": {"strip_mine": 2, "interchange": True}, "task": {"dm_lanes": 2}},
    ],
)
def test_syrk_matches_the_emulated_reference(precision: str, ann: dict) -> None:  # type: ignore[type-arg]
    r = verify_cuda(_compile("syrk", {"N": "64", "M": "64"}, precision, ann))
    assert r.max_rel_error_emulated <= 2.0**-6
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)


@pytest.mark.parametrize(
    "ann",
    [
        {},
        {
            "tileflow": {"stencil_operator": "fused", "guard_copy": "dm"},
            "task": {"dm_lanes": 2},
            "physical": {"cb_depth": 2},
            "tileplan": {"predicates": "all"},
        },
    ],
)
def test_jacobi_matches_the_emulated_reference(ann: dict) -> None:  # type: ignore[type-arg]
    r = verify_cuda(_compile("jacobi_2d", {"N": "64", "TSTEPS": "2"}, "fp32", ann))
    assert r.launches == 4
    assert r.max_rel_error_emulated <= 2.0**-6 and r.rel_frobenius < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_gaussian_matches_the_emulated_reference(precision: str) -> None:
    r = verify_cuda(_compile("gaussian", {"N": "64"}, precision, {"task": {"dm_lanes": 2}}))
    assert r.launches == 126
    assert r.max_rel_error_emulated <= 2.0**-6
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)


def test_gaussian_first_launches_lower_and_simulate() -> None:
    c = _compile("gaussian", {"N": "64"})
    t = simulate_cuda(c, sample=2)
    assert t.launches == 126 and 0 < t.simulated <= 8
    assert model_cuda(c, sample=2) > 0


def test_shared_deliveries_are_multicast_and_verify() -> None:
    """Constant frames go to the whole grid, syrk's panels along core rows and columns,
    each read once per group; the result is unchanged on tt-lang-sim."""
    from loom.flows.cuda import launches

    c = _compile("syrk", {"N": "128", "M": "128"}, "bf16", {"tileplan": {"interchange": True}})
    lp = launches(c)[0][1]
    groups = dict(lp.multicast)
    gy, gx = lp.program.grid
    assert groups == {"a_r_k": gx, "a_c_k": gy}
    assert {n.kind for n in lp.program.nets} == {"multicast"}
    r = verify_cuda(c)
    assert r.max_rel_error_emulated <= 2.0**-6
    j = _compile("jacobi_2d", {"N": "128", "TSTEPS": "1"})
    first = launches(j)[0][1]
    assert dict(first.multicast)["const"] == first.program.grid[0] * first.program.grid[1]


def test_grid_barriers_add_to_the_simulated_and_modelled_time() -> None:
    """jacobi's two launches per step depend on each other (RAW on B, then on A), so
    every boundary pays a grid barrier; one step has one boundary."""
    from loom.cuda import barrier_cycles
    from loom.sim import from_arch, grid_barrier_cycles

    one = _compile("jacobi_2d", {"N": "128", "TSTEPS": "1"})
    two = _compile("jacobi_2d", {"N": "128", "TSTEPS": "2"})
    assert one.physical is not None and one.physical.needs_barrier(
        "jacobi_kernel1", "jacobi_kernel2"
    )
    grid = (4, 4)
    sim_b = grid_barrier_cycles(from_arch(ARCH), grid)
    assert 2 * ARCH.fixed.semaphore_cycles < sim_b < 10 * ARCH.fixed.semaphore_cycles
    t1, t2 = simulate_cuda(one).cycles, simulate_cuda(two).cycles
    assert t2 == pytest.approx(2 * t1 + sim_b)  # identical steps, one more boundary inside
    m1, m2 = model_cuda(one), model_cuda(two)
    assert m2 == pytest.approx(2 * m1 + barrier_cycles(ARCH, grid))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_hoisted_reciprocal_is_computed_once_per_core_and_verifies(precision: str) -> None:
    """tileflow.reciprocal=hoisted: gaussian's 1/a[t][t] leaves the tile loop (one
    Compute before it), the per-tile division becomes a multiplication."""
    from loom.flows.cuda import launches
    from loom.ir.program import Compute, UnaryExpr, walk_stmts

    c = _compile("gaussian", {"N": "64"}, precision, {"tileflow": {"reciprocal": "hoisted"}})
    assert c.flow is not None and dict(c.flow.kernel("Fan1").hoisted)
    lp = next(lp for _, lp in launches(c) if lp.kernel == "Fan1")
    computes = [s for s in walk_stmts(lp.program.compute) if isinstance(s, Compute)]
    assert any(isinstance(s.expr, UnaryExpr) and s.expr.op == "recip" for s in computes)
    assert "div" not in repr([s.expr for s in computes])
    r = verify_cuda(c)
    assert r.max_rel_error_emulated <= 2.0**-6
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)


def test_hoisting_a_tile_dependent_divisor_is_rejected(tmp_path: Path) -> None:
    from loom.errors import AnnotationError

    src = tmp_path / "div.cu"
    src.write_text(
        Path("examples/cuda/jacobi_2d.cu")
        .read_text()
        .replace("B[i * N + j] = 0.2f *", "B[i * N + j] = A[i * N + j] / A[(i - 1) * N + j] +")
    )
    with pytest.raises(AnnotationError, match="varies with the output tile"):
        compile_cuda(
            str(src),
            CudaOptions(
                ARCH,
                "fp32",
                (("N", "64"), ("TSTEPS", "1")),
                parse_annotations({"tileflow": {"reciprocal": "hoisted"}}, "test"),
            ),
        )


@pytest.mark.parametrize(
    "ann",
    [
        {"tileflow": {"halo_conversion": "sender"}},
        {
            "tileflow": {"halo_conversion": "sender", "stencil_operator": "fused"},
            "task": {"dm_lanes": 2},
            "physical": {"cb_depth": 2},
        },
    ],
)
def test_sender_side_halo_conversion_sends_patches_and_verifies(ann: dict) -> None:  # type: ignore[type-arg]
    """Each core converts its own tile into the patches its four neighbours need and
    sends them on unicast pipes; the first/last cores of each axis read a DRAM halo."""
    from loom.flows.cuda import launches
    from loom.ir.program import ReadDram, Receive, Send, walk_stmts

    c = _compile("jacobi_2d", {"N": "128", "TSTEPS": "2"}, "fp32", ann)
    assert c.flow is not None and len(c.flow.kernel("jacobi_kernel1").conversions) == 4
    lp = next(lp for _, lp in launches(c) if lp.kernel == "jacobi_kernel1")
    halo_nets = [n for n in lp.program.nets if n.name.startswith("halo_")]
    assert len(halo_nets) == 4 and all(not p.is_multicast for n in halo_nets for p in n.pipes)
    stmts = [s for _, body in lp.program.streams for s in walk_stmts(body)]
    assert sum(isinstance(s, Send) and s.net.startswith("halo_") for s in stmts) == 4
    assert sum(isinstance(s, Receive) and s.net.startswith("halo_") for s in stmts) == 4
    assert any(isinstance(s, ReadDram) and s.buffer == "a_r_cm1" for s in stmts)  # fallback
    r = verify_cuda(c)
    assert r.max_rel_error_emulated <= 2.0**-6 and r.rel_frobenius < 1e-6
    assert simulate_cuda(c).cycles > 0


@pytest.mark.parametrize("predicates", ["boundary", "all"])
def test_guard_sunk_into_dm_delivered_selectors_has_no_compute_mask(predicates: str) -> None:
    """tileflow.guard_mask=dm: Fan2's guard moves into the masked selectors DM delivers
    per tile; no Compute reads a mask, and the result is exact (old - 0 = old)."""
    from loom.cuda.tileflow import block_refs
    from loom.flows.cuda import launches
    from loom.ir.program import Compute, walk_stmts

    ann = {"tileflow": {"guard_mask": "dm"}, "tileplan": {"predicates": predicates}}
    c = _compile("gaussian", {"N": "64"}, "fp32", ann)
    assert c.flow is not None and c.flow.kernel("Fan2").sunk and not c.flow.kernel("Fan1").sunk
    lp = next(lp for _, lp in launches(c) if lp.kernel == "Fan2")
    refs = set().union(
        *(block_refs(s.expr) for s in walk_stmts(lp.program.compute) if isinstance(s, Compute))
    )
    assert not refs & {"mask", "nmask"} and lp.cut_tiles == 0
    r = verify_cuda(c)
    assert r.max_rel_error_emulated == 0.0 and r.rel_frobenius < 1e-6


def test_guard_mask_dm_leaves_other_guards_on_compute() -> None:
    c = _compile(
        "jacobi_2d", {"N": "64", "TSTEPS": "1"}, "fp32", {"tileflow": {"guard_mask": "dm"}}
    )
    assert c.flow is not None and not any(k.sunk for k in c.flow.kernels)
    assert any("guard_mask=dm has no effect" in d for k in c.flow.kernels for d in k.derived)


def test_transposed_basis_halo_is_exact_and_rejects_the_fused_operator() -> None:
    from loom.errors import AnnotationError

    c = _compile(
        "jacobi_2d", {"N": "64", "TSTEPS": "2"}, "fp32", {"tileflow": {"halo": "transposed"}}
    )
    assert c.flow is not None and any(
        k.kind == "identity" for k in c.flow.kernel("jacobi_kernel1").consts
    )
    r = verify_cuda(c)
    assert r.max_rel_error_emulated == 0.0 and r.rel_frobenius < 1e-6
    with pytest.raises(AnnotationError, match="halo=transposed with stencil_operator=fused"):
        _compile(
            "jacobi_2d",
            {"N": "64", "TSTEPS": "1"},
            "fp32",
            {"tileflow": {"halo": "transposed", "stencil_operator": "fused"}},
        )


def _one_column_arch(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Wormhole with a 2x1 grid: every core owns whole tile rows, so shard rows are wide."""
    import yaml

    data = yaml.safe_load(Path("src/loom/arch/data/wormhole_n150.yaml").read_text())
    path = tmp_path / "wh_2x1.yaml"
    data.update(name=str(path), grid_x=1, grid_y=2, worker_noc_x=[1], worker_noc_y=[1, 2])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_arch(str(path))


def _two_column_arch(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Wormhole with a 2x2 grid: two shards per tile row, so halos cross shards."""
    import yaml

    data = yaml.safe_load(Path("src/loom/arch/data/wormhole_n150.yaml").read_text())
    path = tmp_path / "wh_2x2.yaml"
    data.update(name=str(path), grid_x=2, grid_y=2, worker_noc_x=[1, 2], worker_noc_y=[1, 2])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_arch(str(path))


@pytest.mark.parametrize("guard_mask", ["dm", pytest.param("compute", marks=pytest.mark.slow)])
def test_row_streaming_delivers_shard_rows_and_verifies(tmp_path: Path, guard_mask: str) -> None:
    """task.streaming=row: each streamed operand, mask and result moves as one 1x2 block
    per shard row (one reserve/push per row), and the result is exact."""
    from loom.flows.cuda import launches
    from loom.ir.program import ReadDram, WriteDram, walk_stmts

    arch = _one_column_arch(tmp_path)
    ann = {"task": {"streaming": "row"}, "tileflow": {"guard_mask": guard_mask}}
    c = compile_cuda(
        "examples/cuda/gaussian.cu",
        CudaOptions(arch, "fp32", (("N", "64"),), parse_annotations(ann, "test")),
    )
    lp = next(lp for _, lp in launches(c) if lp.kernel == "Fan2")
    p = lp.program
    assert (
        lp.shape == (2, 2)
        and p.grid == (2, 1)
        and p.buffer("a_r_c").cols == 2
        and p.buffer("out").cols == 2
    )
    stmts = list(walk_stmts(p.reader + p.writer))
    assert any(isinstance(s, ReadDram) and s.buffer == "a_r_c" and s.cols == 2 for s in stmts)
    assert any(isinstance(s, WriteDram) and s.cols == 2 for s in stmts)
    r = verify_cuda(c)
    assert r.max_rel_error_emulated == 0.0 and r.rel_frobenius < 1e-6
    assert simulate_cuda(c).cycles > 0 and model_cuda(c) > 0


@pytest.mark.parametrize(
    ("precision", "stencil", "n"),
    [("fp32", "separate", 64), ("bf16", "separate", 128), ("fp32", "fused", 128)],
)
def test_jacobi_row_streaming_shifts_shard_rows_by_a_band_operator_and_verifies(
    tmp_path: Path, precision: str, stencil: str, n: int
) -> None:
    """task.streaming=row on jacobi: each core's shard row of 2 tiles is shifted west and
    east by one 2x2 band operator, the halo tiles (west of the shard's first tile, east
    of its last: the neighbour shard's, on a grid of two core columns) patched in by 1x2
    edge rows; the result matches FP64 as closely as column streaming does (the band
    sums two shifts in one matmul, a different fp32 rounding order)."""
    from loom.flows.cuda import launches
    from loom.ir.program import ReadDram, walk_stmts

    arch = _one_column_arch(tmp_path) if n == 64 else _two_column_arch(tmp_path)
    defines = (("N", str(n)), ("TSTEPS", "2"))
    w = 2
    base = {"tileflow": {"stencil_operator": stencil}}
    row = {**base, "task": {"streaming": "row"}}
    c = compile_cuda(
        "examples/cuda/jacobi_2d.cu",
        CudaOptions(arch, precision, defines, parse_annotations(row, "test")),
    )
    lp = next(lp for _, lp in launches(c) if lp.kernel == "jacobi_kernel1")
    p = lp.program
    band = p.buffer("band0_a_r_c")
    assert p.grid == ((2, 1) if n == 64 else (2, 2)) and (band.rows, band.cols) == (w, w)
    reads = {s.buffer: s for s in walk_stmts(p.reader) if isinstance(s, ReadDram)}
    assert reads["a_r_c"].cols == w and reads["a_r_cm1"].cols == reads["a_r_cp1"].cols == 1
    at = {"core_y": 0, "core_x": 0, "wy": 0, "wx": 0}
    east = reads["a_r_cp1"].col.eval(at)
    assert east == (1 if n == 64 else 2)  # east of the shard's last tile (clamped at N=64)
    if n == 128:  # west of the second shard's first tile: the first shard's last
        assert reads["a_r_cm1"].col.eval({**at, "core_x": 1}) == 1
    r = verify_cuda(c)
    if precision == "fp32":
        assert r.max_rel_error_emulated < 1e-6 and r.rel_frobenius < 1e-6
    else:
        col = verify_cuda(
            compile_cuda(
                "examples/cuda/jacobi_2d.cu",
                CudaOptions(arch, precision, defines, parse_annotations(base, "test")),
            )
        )
        assert r.max_rel_error_emulated <= 2.0**-6
        assert abs(r.rel_frobenius - col.rel_frobenius) <= 0.1 * col.rel_frobenius
    assert simulate_cuda(c).cycles > 0 and model_cuda(c) > 0


@pytest.mark.parametrize(
    ("precision", "streaming"), [("fp32", "column"), ("bf16", "column"), ("fp32", "row")]
)
def test_fused_gaussian_forwards_the_factor_column_and_verifies(
    precision: str, streaming: str
) -> None:
    """tileplan.fuse of Fan1 into Fan2: one launch per pivot, m never stored; the tile of
    column t is read only by its owner (core column 0, the first tile column of the
    range), before it writes it, and multicast along its core row (row streaming with
    one-tile shards is the same program). The device matches FP64 and, exactly, the
    emulated reference that keeps the factor unstored."""
    from loom.flows.cuda import launches
    from loom.ir.program import IfCore, ReadDram, WriteDram, walk_stmts

    ann = {"tileplan": {"fuse": ["Fan1", "Fan2"]}, "task": {"streaming": streaming}}
    c = _compile("gaussian", {"N": "64"}, precision, ann)
    assert c.plan is not None and [k.kernel for k in c.plan.kernels] == ["Fan2"]
    (fan2,) = c.plan.kernels
    assert fan2.fused == "Fan1" and [f"{f.row}/{f.col}" for f in fan2.forwarded] == ["i/t"]
    lps = [lp for _, lp in launches(c)]
    assert len(lps) == 63 and {lp.writes for lp in lps} == {"a"}
    lp = lps[0]
    assert lp.program.grid == (2, 2) and ("a_r_xt", 2) in lp.multicast
    stmts = list(walk_stmts(lp.program.reader))
    writes = [s for s in walk_stmts(lp.program.writer) if isinstance(s, WriteDram)]
    assert writes and all(s.tensor == "a" for s in writes)
    # the factor column's DRAM read sits under the row's sender: core column 0
    senders = [
        s
        for s in stmts
        if isinstance(s, IfCore)
        and any(isinstance(x, ReadDram) and x.buffer == "a_r_xt" for x in s.then)
    ]
    assert senders and all("core_x" in str(s.cond) for s in senders)
    r = verify_cuda(c)
    assert r.launches == 63 and r.region.startswith("strict upper of a")
    assert r.max_rel_error_emulated == 0.0
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)
    assert simulate_cuda(c).cycles > 0 and model_cuda(c) > 0


@pytest.mark.parametrize(
    ("precision", "streaming", "n"),
    [
        ("fp32", "column", 96),
        ("bf16", "column", 96),
        ("fp32", "row", 64),
        pytest.param("fp32", "row", 128, marks=pytest.mark.slow),
    ],
)
def test_fused_gaussian_wider_than_the_grid_holds_the_factor_across_column_passes(
    tmp_path: Path, precision: str, streaming: str, n: int
) -> None:
    """A fused launch with more tile columns than core columns: at N=96 on a 2x2 grid the
    first launches span 3 tile columns (two column passes per core, the grid not
    dividing them); with row streaming each shard row holds two tile columns (N=64 on
    one core column; N=128 on two, the factor multicast to the second shard). The
    factor's tile of each tile row is read once by its owner (core column 0, whose
    first pass updates it), multicast along the core row once, and held by every core
    across its passes; the device matches the emulated reference exactly and FP64 as
    the single-pass realization does."""
    from loom.flows.cuda import launches
    from loom.ir.program import Loop, ReadDram, walk_stmts

    two = streaming == "column" or n == 128
    arch = _two_column_arch(tmp_path) if two else _one_column_arch(tmp_path)
    ann = {"tileplan": {"fuse": ["Fan1", "Fan2"]}, "task": {"streaming": streaming}}
    c = compile_cuda(
        "examples/cuda/gaussian.cu",
        CudaOptions(arch, precision, (("N", str(n)),), parse_annotations(ann, "test")),
    )
    lp = next(lp for _, lp in launches(c))
    p = lp.program
    assert lp.row_held == ("a_r_xt",)
    if streaming == "column":
        assert lp.shape == (3, 3) and p.grid == (2, 2) and ("a_r_xt", 2) in lp.multicast
        passes = [s for s in walk_stmts(p.reader) if isinstance(s, Loop) and s.var.name == "wx"]
        assert passes and int(passes[0].count.eval({})) == 2
        in_pass = {s.buffer for s in walk_stmts(passes[0].body) if isinstance(s, ReadDram)}
        assert "a_r_xt" not in in_pass and "a_r_c" in in_pass
    else:
        tiles, grid = ((4, 4), (2, 2)) if two else ((2, 2), (2, 1))
        assert lp.shape == tiles and p.grid == grid and p.buffer("a_r_c").cols == 2
        assert (dict(lp.multicast).get("a_r_xt") == 2) == two  # one core column: no send
    assert any(isinstance(s, ReadDram) and s.buffer == "a_r_xt" for s in walk_stmts(p.reader))
    r = verify_cuda(c)
    assert r.launches == n - 1 and r.max_rel_error_emulated == 0.0
    assert r.rel_frobenius < (1e-6 if precision == "fp32" else 2e-2)
    assert simulate_cuda(c, sample=2).cycles > 0 and model_cuda(c, sample=2) > 0
