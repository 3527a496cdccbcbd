/* boot_kernels.cu - bootstrap resamples on the GPU (see tally/cuda_boot.h).
 *
 * CPU reference: tl_study_resamples in src/core/boot.c. Both compile tally/boot_kernel.h, so a
 * value here equals the CPU value bit for bit (integer sweep; the final double expressions are
 * the same source lines, compiled with -fmad=false so nothing is contracted into an FMA).
 *
 * Per batch of R resamples:
 *   counts kernel: one thread per (resample, draw j): idx = tl_k_index(seed, r, j, n, 0),
 *                  atomicAdd(w[r][idx], 1). w is [R][n] int32 in device memory.
 *   suff kernel:   one thread per (resample, metric): tl_k_suff over the metric's (x, y) order
 *                  with the resample's weights, then the requested statistics into out[R][K].
 * Batches keep device memory at about 1 GiB whatever B is. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/boot_kernel.h"
#include "tally/cuda_boot.h"

#define CK(call)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      tl_err_set(err, TL_ENGINE, "CUDA: %s at %s:%d: %s", #call, __FILE__, __LINE__,    \
                 cudaGetErrorString(e_));                                               \
      goto fail;                                                                        \
    }                                                                                   \
  } while (0)

__global__ void counts_kernel(uint64_t seed, uint64_t r0, uint32_t R, uint32_t n, int32_t *w) {
  uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (uint64_t)R * n) return;
  uint32_t r = (uint32_t)(t / n), j = (uint32_t)(t % n);
  uint32_t idx = tl_k_index(seed, r0 + r, j, n, 0);
  atomicAdd(&w[(size_t)r * n + idx], 1);
}

/* scratch: NULL when Ly <= TL_CUDA_MAX_LY (per-thread arrays), else [R*M][2][Ly+1] int64 in
 * device memory (a continuous human score). */
__global__ void suff_kernel(uint32_t R, uint32_t n, uint32_t Ly, const uint32_t *ylevel,
                            int M, const uint32_t *xlevel /* [M][n] */,
                            const uint32_t *order /* [M][n] */, const int32_t *w, int nstats,
                            int st0, int st1, double *out /* [R][M*nstats] */, int64_t *scratch) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= R * (uint32_t)M) return;
  uint32_t r = t / M, m = t % M;
  int64_t ymarg_l[TL_CUDA_MAX_LY + 1], fen_l[TL_CUDA_MAX_LY + 1];
  int64_t *ymarg = ymarg_l, *fen = fen_l;
  if (scratch) {
    ymarg = scratch + (size_t)t * 2 * (Ly + 1);
    fen = ymarg + (Ly + 1);
  }
  tl_suff_k s;
  tl_k_suff(xlevel + (size_t)m * n, ylevel, order + (size_t)m * n, n, Ly, w + (size_t)r * n,
            ymarg, fen, &s);
  int K = M * nstats;
  for (int q = 0; q < nstats; q++) {
    int st = q == 0 ? st0 : st1;
    out[(size_t)r * K + m * nstats + q] = st == 0 ? tl_k_spearman(&s) : tl_k_kendall_b(&s);
  }
}

extern "C" int tl_cuda_devices(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear */
    return 0;
  }
  return n;
}

extern "C" const char *tl_cuda_describe(void) {
  static char buf[512];
  buf[0] = 0;
  if (tl_cuda_devices() <= 0) return buf;
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
    snprintf(buf, sizeof buf, "%s, %d SMs, %.0f GiB", p.name, p.multiProcessorCount,
             (double)p.totalGlobalMem / (1024.0 * 1024 * 1024));
  return buf;
}

/* Each rank of a node takes its own device: local rank (SLURM_LOCALID under srun,
 * OMPI_COMM_WORLD_LOCAL_RANK under mpirun) modulo the devices it sees. */
static void select_device(void) {
  const char *v = getenv("SLURM_LOCALID");
  if (!v) v = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int n = 0;
  if (!v || cudaGetDeviceCount(&n) != cudaSuccess || n <= 1) return;
  cudaSetDevice(atoi(v) % n);
}

extern "C" tl_status tl_cuda_resamples(const tl_cuda_study *s, uint64_t r0, uint64_t r1,
                                       double *out, tl_err *err) {
  select_device();
  uint32_t *d_y = NULL, *d_x = NULL, *d_o = NULL;
  int32_t *d_w = NULL;
  double *d_out = NULL;
  tl_status st = TL_OK;
  const uint32_t n = s->n;
  const int M = s->nmetrics, K = M * s->nstats;
  uint64_t B = r1 - r0;
  uint32_t R = 0;
  size_t per = 0;
  int64_t *d_scr = NULL;
  size_t scr_per = 0; /* scratch bytes per resample (all metrics) for a many-level human score */
  if (B == 0) return TL_OK;
  /* batch so that w (and the scratch of a many-level human score) take about 1 GiB */
  per = (size_t)n * sizeof(int32_t);
  if (s->Ly > TL_CUDA_MAX_LY) scr_per = (size_t)M * 2 * (s->Ly + 1) * sizeof(int64_t);
  R = (uint32_t)((1ull << 30) / (per + scr_per ? per + scr_per : 1));
  if (R < 1) R = 1;
  if (R > B) R = (uint32_t)B;
  if ((uint64_t)R * n > 0xffffffffull) R = (uint32_t)(0xffffffffull / n);
  CK(cudaMalloc((void **)&d_y, (size_t)n * sizeof(uint32_t)));
  CK(cudaMalloc((void **)&d_x, (size_t)M * n * sizeof(uint32_t)));
  CK(cudaMalloc((void **)&d_o, (size_t)M * n * sizeof(uint32_t)));
  CK(cudaMalloc((void **)&d_w, (size_t)R * per));
  CK(cudaMalloc((void **)&d_out, (size_t)R * K * sizeof(double)));
  if (scr_per) CK(cudaMalloc((void **)&d_scr, (size_t)R * scr_per));
  CK(cudaMemcpy(d_y, s->ylevel, (size_t)n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  for (int m = 0; m < M; m++) {
    CK(cudaMemcpy(d_x + (size_t)m * n, s->xlevel[m], (size_t)n * sizeof(uint32_t),
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_o + (size_t)m * n, s->order[m], (size_t)n * sizeof(uint32_t),
                  cudaMemcpyHostToDevice));
  }
  for (uint64_t b0 = 0; b0 < B; b0 += R) {
    uint32_t Rb = (uint32_t)((B - b0) < R ? (B - b0) : R);
    CK(cudaMemset(d_w, 0, (size_t)Rb * per));
    uint64_t draws = (uint64_t)Rb * n;
    counts_kernel<<<(unsigned)((draws + 255) / 256), 256>>>(s->seed, r0 + b0, Rb, n, d_w);
    CK(cudaGetLastError());
    uint32_t threads = Rb * (uint32_t)M;
    suff_kernel<<<(threads + 127) / 128, 128>>>(Rb, n, s->Ly, d_y, M, d_x, d_o, d_w, s->nstats,
                                                s->stats[0], s->nstats > 1 ? s->stats[1] : 0,
                                                d_out, d_scr);
    CK(cudaGetLastError());
    CK(cudaMemcpy(out + (size_t)b0 * K, d_out, (size_t)Rb * K * sizeof(double),
                  cudaMemcpyDeviceToHost));
  }
  goto done;
fail:
  st = TL_ENGINE;
done:
  cudaFree(d_y);
  cudaFree(d_x);
  cudaFree(d_o);
  cudaFree(d_w);
  cudaFree(d_out);
  cudaFree(d_scr);
  return st;
}
