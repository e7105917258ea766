"""Bad input on the CUDA path: each case is rejected with a clear message."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from loom.arch import Arch, load_arch
from loom.cuda import parse_annotations, parse_source
from loom.errors import AnnotationError, CudaSubsetError, InfeasibleError
from loom.flows.cuda import CudaOptions, compile_cuda, launches

HEAD = """#define N 64
__global__ void k(float *a, float *b) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
"""
HOST = """}
void host(float a[N][N], float b[N][N]) {
  k<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(a, b);
}
"""


def kernel(body: str) -> str:
    return HEAD + body + HOST


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (
            "  __shared__ float s[32];\n  b[i * N + j] = a[i * N + j];\n",
            r"t\.cu:5: shared memory is outside the affine CUDA subset",
        ),
        (
            "  __syncthreads();\n  b[i * N + j] = a[i * N + j];\n",
            r"t\.cu:5: barrier synchronisation \(__syncthreads\)",
        ),
        ("  b[i * N + j] = a[i * j];\n", r"t\.cu:5: index `i \* j` multiplies two variables"),
        (
            "  if (a[i * N + j] > 0.0f) { b[i * N + j] = 1.0f; }\n",
            r"t\.cu:5: the condition reads array data \(data-dependent control flow\)",
        ),
        ("  b[i * N + j] = a[a[j] * N + j];\n", r"t\.cu:5: index .* depends on array data"),
        (
            "  if (i < j) { b[i * N + j] = a[i * N + j]; }\n",
            r"t\.cu:5: guard .* is not an axis-aligned bound",
        ),
        (
            "  if (i > 0) { b[i * N + j] = 1.0f; } else { b[i * N + j] = 2.0f; }\n",
            r"t\.cu:5: `else` branches are not supported",
        ),
        (
            "  b[i * N + j] = a[(i - 1) * N + j];\n",
            r"reads a\[i - 1\]\[j\] outside the 64x64 array .* tighten the guard",
        ),
    ],
)
def test_outside_the_subset(body: str, match: str) -> None:
    arch = load_arch("blackhole_p150_13x10")
    with pytest.raises(CudaSubsetError, match=match):
        _compile_text(kernel(body), arch)


def _compile_text(src: str, arch: Arch) -> None:
    """Compile and lower source text named t.cu (the name its messages carry)."""
    with tempfile.TemporaryDirectory() as folder:
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            Path("t.cu").write_text(src)
            launches(compile_cuda("t.cu", CudaOptions(arch)))
        finally:
            os.chdir(cwd)


def test_block_size_other_than_32x32_is_rejected() -> None:
    src = kernel("  b[i * N + j] = a[i * N + j];\n").replace("dim3(32, 32)", "dim3(16, 16)")
    with pytest.raises(
        CudaSubsetError,
        match=r"t\.cu:8: kernel `k` is launched with 16x16 "
        r"thread blocks; use 32x32",
    ):
        parse_source(src, "t.cu", {})


def test_unknown_annotation_field_is_rejected_with_every_problem() -> None:
    with pytest.raises(AnnotationError, match=r"task\.lanes: Extra inputs.*physical\.cb_depth"):
        parse_annotations({"task": {"lanes": 2}, "physical": {"cb_depth": 3}}, "a.yaml")


def test_strip_mining_that_does_not_divide_the_reduction_is_illegal() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"strip_mine": 3}}, "a.yaml")
    with pytest.raises(
        AnnotationError, match=r"strip_mine=3 does not divide the 2 reduction tiles"
    ):
        compile_cuda(
            "examples/cuda/syrk.cu",
            CudaOptions(arch, defines=(("N", "64"), ("M", "64")), annotations=ann),
        )


def test_fusing_jacobi_is_rejected_by_dependence_analysis_with_the_west_read() -> None:
    """The seed's reason: the second kernel could overwrite A before the fused first
    kernel reads A's west neighbour (another tile's element, no barrier in a launch)."""
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"fuse": ["jacobi_kernel1", "jacobi_kernel2"]}}, "a.yaml")
    with pytest.raises(
        AnnotationError,
        match=r"jacobi_2d\.cu:\d+: tileplan\.fuse of `jacobi_kernel1` into `jacobi_kernel2` is "
        r"illegal: the fused value reads A\[i\]\[j - 1\], which `jacobi_kernel2` overwrites",
    ):
        compile_cuda(
            "examples/cuda/jacobi_2d.cu",
            CudaOptions(arch, defines=(("N", "64"), ("TSTEPS", "2")), annotations=ann),
        )


def test_a_fused_launch_that_rereads_the_factor_in_every_column_pass_is_rejected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At N=512 a launch has 16 tile columns on 13 core columns, so a core makes two
    column passes per tile row; the factor's tile is read once per row trip, before the
    owner's first pass updates it. A lowering that read it again in each pass (after the
    owner wrote it) would race, and the check on the emitted stream rejects it."""
    from loom.cuda.lower_streams import LaunchStreams

    real = LaunchStreams.tile_loop

    def per_pass(self, body, row_pre=(), hold=()):  # type: ignore[no-untyped-def]
        return real(self, (*row_pre, *body), (), ())

    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"fuse": ["Fan1", "Fan2"]}}, "a.yaml")
    c = compile_cuda(
        "examples/cuda/gaussian.cu", CudaOptions(arch, defines=(("N", "512"),), annotations=ann)
    )
    assert len(launches(c, 2)) == 2  # the multi-pass realization lowers
    monkeypatch.setattr(LaunchStreams, "tile_loop", per_pass)
    with pytest.raises(AnnotationError, match=r"a_r_xt is read again in every column pass"):
        launches(c, 2)


def test_a_fused_launch_whose_factor_every_core_reads_from_dram_is_rejected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """16 tile columns on 13 core columns do not divide, so the per-tile deliveries are
    read by every core; the factor's, made once per row trip, is still multicast by its
    owner. Without that multicast every core would read the factor's tile from DRAM
    while its owner overwrites it, and the check rejects the launch."""
    from loom.cuda.lower_deliver import LaunchDeliveries

    real = LaunchDeliveries.deliver

    def unicast(self, read, area, lane, what, in_step=False):  # type: ignore[no-untyped-def]
        return real(self, read, area, lane, what, False)

    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"fuse": ["Fan1", "Fan2"]}}, "a.yaml")
    c = compile_cuda(
        "examples/cuda/gaussian.cu", CudaOptions(arch, defines=(("N", "512"),), annotations=ann)
    )
    monkeypatch.setattr(LaunchDeliveries, "deliver", unicast)
    with pytest.raises(AnnotationError, match=r"not multicast along the core row"):
        launches(c, 2)


def test_row_streaming_of_a_transposed_halo_is_rejected_with_its_reason() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations(
        {"task": {"streaming": "row"}, "tileflow": {"halo": "transposed"}}, "a.yaml"
    )
    with pytest.raises(
        AnnotationError,
        match=r"jacobi_2d\.cu:\d+: task\.streaming=row is illegal for `jacobi_kernel1`: "
        r"a shard row is used as a transposed right operand .* a Wx1 column",
    ):
        compile_cuda(
            "examples/cuda/jacobi_2d.cu", CudaOptions(arch, defines=(("N", "64"),), annotations=ann)
        )


def test_row_streaming_across_compute_dm_compute_is_rejected_by_the_seed_rule() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations(
        {"task": {"streaming": "row"}, "tileflow": {"halo_conversion": "sender"}}, "a.yaml"
    )
    with pytest.raises(
        AnnotationError, match=r"crosses compute -> DM -> compute inside the column loop"
    ):
        compile_cuda(
            "examples/cuda/jacobi_2d.cu", CudaOptions(arch, defines=(("N", "64"),), annotations=ann)
        )


def test_row_streaming_of_a_reduction_is_rejected_as_loom_s_own_rule() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"task": {"streaming": "row"}}, "a.yaml")
    with pytest.raises(
        AnnotationError,
        match=r"syrk\.cu:\d+: task\.streaming=row is illegal for `syrk_kernel`: its reduction "
        r"has no shard-row form \(Loom's own rule: .* does not cover it.*; use streaming: column",
    ):
        compile_cuda(
            "examples/cuda/syrk.cu",
            CudaOptions(arch, defines=(("N", "64"), ("M", "64")), annotations=ann),
        )


def test_row_streaming_of_a_one_tile_value_without_a_right_operator_is_rejected() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations(
        {"task": {"streaming": "row"}, "tileflow": {"reciprocal": "hoisted"}}, "a.yaml"
    )
    with pytest.raises(AnnotationError, match=r"a one-tile value \(.*\) is combined element-wise"):
        compile_cuda(
            "examples/cuda/gaussian.cu", CudaOptions(arch, defines=(("N", "64"),), annotations=ann)
        )


def test_row_streaming_that_overflows_l1_is_rejected_by_physical(tmp_path: Path) -> None:
    """Shard rows of 8 tiles need 8x the column-streamed buffers: on a one-column grid
    with a small L1 the per-core working set fits, the row-streamed buffers do not."""
    import yaml

    data = yaml.safe_load(Path("src/loom/arch/data/wormhole_n150.yaml").read_text())
    path = tmp_path / "wh_8x1.yaml"
    data.update(name=str(path), grid_x=1, worker_noc_x=[1], l1_bytes=131072)
    data.update(l1_usable_bytes=131072)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    arch = load_arch(str(path))
    opts = CudaOptions(arch, "fp32", (("N", "256"),))
    compile_cuda("examples/cuda/gaussian.cu", opts)  # column streaming fits
    ann = parse_annotations({"task": {"streaming": "row"}}, "a.yaml")
    with pytest.raises(
        InfeasibleError, match=r"with 8-tile shard rows \(streaming: row\), more than 131072"
    ):
        compile_cuda("examples/cuda/gaussian.cu", replace(opts, annotations=ann))


def test_dm_side_scaling_is_rejected_with_the_tt_lang_limit() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileflow": {"scaling": "dm"}}, "a.yaml")
    with pytest.raises(
        AnnotationError,
        match=r"gaussian\.cu:\d+: tileflow\.scaling=dm is illegal for `Fan1`: a TT-Lang "
        r"data-movement kernel can only copy whole tiles",
    ):
        compile_cuda(
            "examples/cuda/gaussian.cu", CudaOptions(arch, defines=(("N", "64"),), annotations=ann)
        )


def test_working_set_beyond_l1_is_infeasible() -> None:
    arch = load_arch("blackhole_p150_13x10")
    with pytest.raises(
        InfeasibleError,
        match=r"per-core working set is .* more than the "
        r"1398784 bytes of usable L1",
    ):
        compile_cuda("examples/cuda/jacobi_2d.cu", CudaOptions(arch, "fp32", (("N", "8192"),)))


def test_interchange_of_a_kernel_without_reduction_is_illegal() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"interchange": True}}, "a.yaml")
    with pytest.raises(AnnotationError, match=r"interchange needs a reduction loop"):
        compile_cuda(
            "examples/cuda/jacobi_2d.cu", CudaOptions(arch, defines=(("N", "64"),), annotations=ann)
        )


def test_masked_reduction_is_rejected() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"predicates": "all"}}, "a.yaml")
    c = compile_cuda(
        "examples/cuda/syrk.cu",
        CudaOptions(arch, defines=(("N", "64"), ("M", "64")), annotations=ann),
    )
    with pytest.raises(AnnotationError, match=r"Loom does not mask reductions yet"):
        launches(c)


def test_interchanged_accumulator_blocks_beyond_l1_are_infeasible() -> None:
    arch = load_arch("blackhole_p150_13x10")
    ann = parse_annotations({"tileplan": {"strip_mine": 8, "interchange": True}}, "a.yaml")
    c = compile_cuda(
        "examples/cuda/syrk.cu",
        CudaOptions(arch, "fp32", (("N", "2048"), ("M", "2048")), annotations=ann),
    )
    with pytest.raises(InfeasibleError, match=r"needs 1581056 bytes of L1 buffers per core"):
        launches(c)
