// Jacobi 2-D five-point stencil, PolyBench-style: two kernels per time step, the
// stencil into B and the copy back into A, both on the interior only.
#define N 256
#define TSTEPS 20

__global__ void jacobi_kernel1(float *A, float *B) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1) {
    B[i * N + j] = 0.2f * (A[i * N + j] + A[i * N + (j - 1)] + A[i * N + (j + 1)]
                           + A[(i + 1) * N + j] + A[(i - 1) * N + j]);
  }
}

__global__ void jacobi_kernel2(float *A, float *B) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1) {
    A[i * N + j] = B[i * N + j];
  }
}

void jacobi_2d(float A[N][N], float B[N][N]) {
  for (int t = 0; t < TSTEPS; t++) {
    jacobi_kernel1<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(A, B);
    jacobi_kernel2<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(A, B);
  }
}
