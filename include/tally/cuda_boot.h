/* cuda_boot.h - the bootstrap resample engine on NVIDIA GPUs (src/cuda/boot_kernels.cu).
 *
 * Computes exactly what tl_study_resamples computes on the CPU, bit for bit: both compile the
 * per-resample arithmetic of tally/boot_kernel.h. Built when nvcc is found (TALLY_HAVE_CUDA),
 * used when a device is present, never required: every function here has a CPU fallback in the
 * caller. C linkage; no CUDA types in this header. */
#ifndef TALLY_CUDA_BOOT_H
#define TALLY_CUDA_BOOT_H

#include <stdint.h>

#include "tally/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Human-score levels kept in per-thread arrays; a score with more levels (continuous) uses
 * scratch in device memory and smaller batches. */
#define TL_CUDA_MAX_LY 64

/* Number of usable CUDA devices; 0 when there is none or no driver. Never fails. */
int tl_cuda_devices(void);
/* A one-line description of device 0 ("NVIDIA H200, 132 SMs, 139 GiB"), or "" when none. */
const char *tl_cuda_describe(void);

typedef struct {
  uint32_t n;                     /* items */
  uint32_t Ly;                    /* human levels */
  const uint32_t *ylevel;         /* [n] human dense levels */
  int nmetrics;
  const uint32_t *const *xlevel;  /* [nmetrics][n] metric dense levels */
  const uint32_t *const *order;   /* [nmetrics][n] items sorted by (x level, y level) */
  int nstats;
  int stats[2];                   /* tl_stat values, in output order */
  uint64_t seed;
} tl_cuda_study;

/* Values of resamples [r0, r1) into out[(r - r0) * K + m * nstats + s], K = nmetrics * nstats,
 * identical to tl_study_resamples. TL_ENGINE with a message when the device fails; the caller
 * then falls back to the CPU. */
tl_status tl_cuda_resamples(const tl_cuda_study *s, uint64_t r0, uint64_t r1, double *out,
                            tl_err *err);

#ifdef __cplusplus
}
#endif

#endif
