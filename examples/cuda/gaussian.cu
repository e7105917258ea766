// Gaussian elimination without pivoting, Rodinia-style: for each pivot t, Fan1
// computes the multipliers of column t and Fan2 eliminates them from the rows below.
// m receives the multipliers (the strictly lower factor), a becomes upper triangular.
#define N 256

__global__ void Fan1(float *m, float *a, int t) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row > t && col == t) {
    m[row * N + col] = a[row * N + t] / a[t * N + t];
  }
}

__global__ void Fan2(float *m, float *a, int t) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row > t && col >= t) {
    a[row * N + col] -= m[row * N + t] * a[t * N + col];
  }
}

void gaussian(float m[N][N], float a[N][N]) {
  for (int t = 0; t < N - 1; t++) {
    Fan1<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(m, a, t);
    Fan2<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(m, a, t);
  }
}
