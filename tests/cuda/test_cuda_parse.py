"""The CUDA frontend: the three workloads parse, indices are de-linearised."""

from __future__ import annotations

from loom.cuda import parse_file, parse_source
from loom.cuda.ir import THREAD_X, THREAD_Y, Affine
from loom.cuda.tileplan import delinearize


def test_delinearize_splits_row_and_column_with_small_offsets() -> None:
    flat = Affine((("i", 64), ("j", 1)), 64 - 1)  # (i + 1) * 64 + (j - 1)
    row, col = delinearize(flat, 64)
    assert (str(row), str(col)) == ("i + 1", "j - 1")
    row, col = delinearize(Affine((("t", 65),)), 64)  # a[t * N + t]
    assert (str(row), str(col)) == ("t", "t")


def test_gaussian_parses_two_kernels_in_a_host_loop() -> None:
    prog = parse_file("examples/cuda/gaussian.cu", {"N": "64"})
    assert [k.name for k in prog.kernels] == ["Fan1", "Fan2"]
    assert [(a.name, a.rows, a.cols) for a in prog.arrays] == [("m", 64, 64), ("a", 64, 64)]
    launches = prog.launches()
    assert len(launches) == 2 * 63 and launches[-1][1] == {"t": 62}
    fan2 = prog.kernel("Fan2").updates[0]
    assert fan2.col == Affine(((THREAD_X, 1), (THREAD_Y, 64)))
    assert [str(g) for g in fan2.guard] == ["-t + thread.y - 1 >= 0", "-t + thread.x >= 0"]


def test_define_option_overrides_the_file_and_comments_keep_line_numbers() -> None:
    src = """// comment
/* block
   comment */ #define N 128
__global__ void k(float *a) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  a[i * N + j] = 2.0f * a[i * N + j];
}
void host(float a[N][N]) { k<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(a); }
"""
    prog = parse_source(src.replace("*/ #define", "*/\n#define"), "t.cu", {"N": "64"})
    assert prog.arrays[0].rows == 64
    assert prog.kernel("k").updates[0].line == 8


def test_syrk_reduction_becomes_a_sum_after_the_beta_scaling() -> None:
    prog = parse_file("examples/cuda/syrk.cu", {"N": "64", "M": "64"})
    (u,) = prog.kernel("syrk_kernel").updates
    assert type(u.value).__name__ == "Bin" and "Sum" in repr(u.value)
    assert prog.body[0].args[2:] == (1.5, 1.2)  # type: ignore[union-attr]
