// Symmetric rank-k update, PolyBench-style: C = beta * C + alpha * A * A^T, one thread
// per element of C, the reduction over k inside the thread.
#define N 256
#define M 256
#define ALPHA 1.5f
#define BETA 1.2f

__global__ void syrk_kernel(float *a, float *c, float alpha, float beta) {
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N && j < N) {
    c[i * N + j] *= beta;
    for (int k = 0; k < M; k++) {
      c[i * N + j] += alpha * a[i * M + k] * a[j * M + k];
    }
  }
}

void syrk(float a[N][M], float c[N][N]) {
  syrk_kernel<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(a, c, ALPHA, BETA);
}
