/* boot_kernel.h - the per-resample arithmetic shared, as the same source text, by the CPU path
 * (src/core/boot.c) and the CUDA kernels (src/cuda/boot_kernels.cu): the Philox index draw, the
 * exact sweep that turns a weighted sample into integer sufficient statistics, and the one
 * double expression per statistic. Because both sides compile these very lines (TL_HD marks
 * them __host__ __device__ under nvcc) and the sweep is integer-only, CPU and GPU values are
 * bit-identical (nvcc must not contract the final expressions into FMAs: -fmad=false).
 *
 * Pure header; include after <stdint.h>. No allocation, no globals. */
#ifndef TALLY_BOOT_KERNEL_H
#define TALLY_BOOT_KERNEL_H

#include <math.h>
#include <stdint.h>

#include <Random123/philox.h>

#ifdef __CUDACC__
#define TL_HD __host__ __device__ static inline
#else
#define TL_HD static inline
#endif

/* Integer sufficient statistics (see boot.h, tl_suff). */
typedef struct {
  int64_t N, sab, saa, sbb;
  int64_t n0, xtie, ytie, ntie, dis;
  int64_t mx, my;
} tl_suff_k;

/* 64x64 -> high 64 bits. */
TL_HD uint64_t tl_mulhi64(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b);
#else
  return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* Index j of resample r (boot.h, tl_boot_index): Philox4x32-10, key {seed lo, seed hi},
 * counter {j/2, r lo, r hi, stream}; words (0,1) for even j, (2,3) for odd j, low word first;
 * index = high 64 bits of u * n. */
TL_HD uint32_t tl_k_index(uint64_t seed, uint64_t r, uint32_t j, uint32_t n, uint32_t stream) {
  philox4x32_ctr_t c = {{j >> 1, (uint32_t)r, (uint32_t)(r >> 32), stream}};
  philox4x32_key_t k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
  philox4x32_ctr_t o = philox4x32(c, k);
  uint32_t lo = (j & 1u) ? o.v[2] : o.v[0];
  uint32_t hi = (j & 1u) ? o.v[3] : o.v[1];
  uint64_t u = ((uint64_t)hi << 32) | lo;
  return (uint32_t)tl_mulhi64(u, (uint64_t)n);
}

TL_HD int64_t tl_k_pairs(int64_t w) { return w * (w - 1) / 2; }

/* Fenwick tree over levels 0..L-1 (array f[1..L], f[0] unused), int64 weights. */
TL_HD void tl_k_fen_add(int64_t *f, uint32_t L, uint32_t lvl, int64_t v) {
  for (uint32_t i = lvl + 1; i <= L; i += i & (0u - i)) f[i] += v;
}
TL_HD int64_t tl_k_fen_prefix(const int64_t *f, uint32_t lvl_inclusive) {
  int64_t s = 0;
  for (uint32_t i = lvl_inclusive + 1; i > 0; i -= i & (0u - i)) s += f[i];
  return s;
}

/* The exact sweep. Items are visited in `order` (sorted by (x level, y level)); xl/yl are the
 * dense levels (y has Ly levels), w the weights (0 = absent). Scratch (caller-owned, Ly+1
 * int64 each): ymarg, fen. Two passes: y marginals, then x groups with a Fenwick tree over y
 * (a whole x group is inserted after it is processed, so x ties are never discordant).
 * a, b are doubled average ranks: 2 * (weight before the level) + W_level + 1. */
TL_HD void tl_k_suff(const uint32_t *xl, const uint32_t *yl, const uint32_t *order, uint32_t n,
                     uint32_t Ly, const int32_t *w, int64_t *ymarg, int64_t *fen, tl_suff_k *s) {
  for (uint32_t l = 0; l <= Ly; l++) { ymarg[l] = 0; fen[l] = 0; }
  int64_t N = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = order[k];
    if (w[i]) { ymarg[yl[i]] += w[i]; N += w[i]; }
  }
  /* turn ymarg into doubled ranks b_l in place after collecting sbb, ytie, my; keep W in fen?
   * No: b_l needs W_l, so compute b into ymarg only after the y sums. */
  int64_t sbb = 0, ytie = 0, my = 0, cum = 0;
  for (uint32_t l = 0; l < Ly; l++) {
    int64_t W = ymarg[l];
    int64_t b = 2 * cum + W + 1;
    sbb += W * b * b;
    ytie += tl_k_pairs(W);
    my += W > 0;
    cum += W;
    ymarg[l] = b; /* from here on: the doubled rank of level l */
  }
  int64_t sab = 0, saa = 0, xtie = 0, ntie = 0, dis = 0, mx = 0, inserted = 0, cumx = 0;
  uint32_t k = 0;
  while (k < n) {
    uint32_t g0 = k, gx = xl[order[k]];
    int64_t Wg = 0, sgb = 0, cell = 0;
    uint32_t celly = 0xffffffffu;
    for (; k < n && xl[order[k]] == gx; k++) {
      uint32_t i = order[k];
      int64_t wi = w[i];
      if (!wi) continue;
      uint32_t y = yl[i];
      Wg += wi;
      sgb += wi * ymarg[y];
      dis += wi * (inserted - tl_k_fen_prefix(fen, y)); /* earlier x, strictly larger y */
      if (y != celly) { ntie += tl_k_pairs(cell); cell = 0; celly = y; }
      cell += wi;
    }
    ntie += tl_k_pairs(cell);
    if (Wg) {
      int64_t a = 2 * cumx + Wg + 1;
      saa += Wg * a * a;
      sab += a * sgb;
      xtie += tl_k_pairs(Wg);
      mx++;
      cumx += Wg;
      for (uint32_t q = g0; q < k; q++) {
        uint32_t i = order[q];
        if (w[i]) tl_k_fen_add(fen, Ly, yl[i], w[i]);
      }
      inserted += Wg;
    }
  }
  s->N = N; s->sab = sab; s->saa = saa; s->sbb = sbb;
  s->n0 = tl_k_pairs(N); s->xtie = xtie; s->ytie = ytie; s->ntie = ntie; s->dis = dis;
  s->mx = mx; s->my = my;
}

/* Spearman rho of the weighted sample: num / sqrt(dx * dy), clipped; NaN when x or y is constant. */
TL_HD double tl_k_spearman(const tl_suff_k *s) {
  int64_t c = s->N * (s->N + 1) * (s->N + 1);
  int64_t num = s->sab - c, dx = s->saa - c, dy = s->sbb - c;
  if (dx <= 0 || dy <= 0) return NAN;
  double r = (double)num / sqrt((double)dx * (double)dy);
  return r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r;
}

/* Kendall tau-b: S / sqrt((n0 - xtie)(n0 - ytie)), clipped; NaN when x or y is constant. */
TL_HD double tl_k_kendall_b(const tl_suff_k *s) {
  int64_t tx = s->n0 - s->xtie, ty = s->n0 - s->ytie;
  if (tx <= 0 || ty <= 0) return NAN;
  int64_t S = s->n0 - s->xtie - s->ytie + s->ntie - 2 * s->dis;
  double t = (double)S / sqrt((double)tx * (double)ty);
  return t > 1.0 ? 1.0 : t < -1.0 ? -1.0 : t;
}

/* Kendall tau-c: 2S / (N^2 (m-1) / m), m = min(mx, my) (scipy: size**2 * (m-1) / m); clipped;
 * NaN when x or y is constant. */
TL_HD double tl_k_kendall_c(const tl_suff_k *s) {
  if (s->xtie >= s->n0 || s->ytie >= s->n0) return NAN;
  int64_t S = s->n0 - s->xtie - s->ytie + s->ntie - 2 * s->dis;
  int64_t m = s->mx < s->my ? s->mx : s->my;
  double t = 2.0 * (double)S / ((double)(s->N * s->N * (m - 1)) / (double)m);
  return t > 1.0 ? 1.0 : t < -1.0 ? -1.0 : t;
}

#endif
