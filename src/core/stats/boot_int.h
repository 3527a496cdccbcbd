/* boot_int.h - internals of the bootstrap engine (boot.c) exposed for the unit tests and for the
 * CUDA port: the interval arithmetic, separated from the resampling so it can be checked on
 * hand-made inputs. Not part of the public API. */
#ifndef TALLY_BOOT_INT_H
#define TALLY_BOOT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "tally/boot.h"

/* A quantile's position as tl_cluster_ci and the percentile CIs take it: q as a percentage and
 * back (numpy.percentile's argument), the same double in boot.c and cluster_ci.c. */
static inline double pct_q(double q) { return (q * 100.0) / 100.0; }

/* The work-share key (tally/workshare.h) of a cluster CI row: every argument its bounds depend
 * on - n, B, seed, level and the row's n values num[] and den[] of elem bytes each (doubles for
 * tl_ccis_row, int64 for tl_cluster_ci_drawn). An in-memory key, never written. */
uint64_t tl_ci_row_key(uint32_t n, uint32_t B, uint64_t seed, double level, const void *num, const void *den,
                       size_t elem);

/* BCa bias correction z0 = Phi^-1((#(v < theta_hat) + #(v <= theta_hat)) / (2 nd)), as scipy
 * 1.10.1 _percentile_of_score + ndtri (Efron & Tibshirani 14.3, eq. 14.14). v: [nd], any order. */
double tl_boot_bca_z0(const double *v, size_t nd, double theta_hat);

/* BCa acceleration from jackknife values theta_i[0..n) (leave item i out), scipy 1.10.1
 * _bca_interval: U_i = (n-1)(mean - theta_i); a = (1/6) (sum U^3 / n^3) / (sum U^2 / n^2)^1.5
 * (Efron & Tibshirani eq. 14.15). NaN when any theta_i is NaN or all are equal. */
double tl_boot_bca_accel(const double *theta_i, size_t n);

/* The BCa interval from the sorted defined resample values, z0 and the acceleration:
 * alpha1 = Phi(z0 + (z0 + z_alpha) / (1 - a (z0 + z_alpha))), alpha2 likewise with z_{1-alpha},
 * alpha = (1 - level) / 2; lo/hi = type-7 quantiles at alpha1/alpha2 (scipy passes alpha*100 to
 * np.percentile, which divides by 100 again; mirrored). NaN when z0, a or an alpha is not
 * finite, or nd == 0. With z0 = 0 and a = 0 this is the percentile interval. */
void tl_boot_bca_ci(const double *sorted, size_t nd, double z0, double accel, double level,
                    double *lo, double *hi);

/* The percentile interval: type-7 quantiles at alpha and 1 - alpha (alpha = (1 - level) / 2). */
void tl_boot_percentile_ci(const double *sorted, size_t nd, double level, double *lo, double *hi);

/* Swap decision of item i in permutation r of the paired permutation test: bit 0 of output word
 * i % 4 of Philox4x32-10 with key {seed lo, seed hi} and counter {i / 4, r lo, r hi, 1}. */
int tl_boot_perm_swap(uint64_t seed, uint64_t r, uint32_t i);

/* ---- vectorized paths and closed forms, exposed so that the tests can pin them to the scalar
 * definitions ---- */

/* impl argument: the scalar code (Random123's philox4x32, the reference), the AVX2 code, or
 * whichever the CPU allows (AVX2 when __builtin_cpu_supports("avx2")). */
enum { TL_BOOT_IMPL_AUTO = -1, TL_BOOT_IMPL_SCALAR = 0, TL_BOOT_IMPL_AVX2 = 1, TL_BOOT_IMPL_AVX2_GEN = 2 };

/* 1 when this CPU runs the AVX2 paths (the study uses them then). */
int tl_boot_have_avx2(void);

/* Philox4x32-10 blocks for the counters {c0 + b (mod 2^32), r lo, r hi, stream}, b < nb, key
 * {seed lo, seed hi}: out[4 b + w] = word w of block b. -1 (nothing written) when impl is AVX2
 * and the CPU lacks it. */
int tl_boot_philox_blocks(uint64_t seed, uint64_t r, uint32_t stream, uint32_t c0, uint32_t nb,
                          uint32_t *out, int impl);

/* Indices j in [j0, j1) of resample r (each tl_boot_index(seed, r, j, n, stream)) into
 * idx[0 .. j1 - j0). -1 when impl is AVX2 and the CPU lacks it. */
int tl_boot_draw_range(uint64_t seed, uint64_t r, uint32_t n, uint32_t stream, uint32_t j0,
                       uint32_t j1, uint32_t *idx, int impl);

/* tl_suff of a cell table (distinct cells sorted by (x level, y level), weights cw >= 0, y levels
 * < Ly): SCALAR = the Fenwick sweep (suff_from_cells); AVX2_GEN = the study's fused one-pass path
 * for wide metrics (boot.c suff_x_gen: any ties in x, Ly <= 8, weights split as the study counts
 * them into a uint8 low byte and a spilled high part); AVX2 = the same pass restricted to the
 * tables the first one-pass path took (one cell per x level, Ly <= 4, weights <= 255). -1 when
 * the path does not apply (no AVX2, or outside those limits). */
int tl_boot_cells_suff(const uint32_t *xl, const uint32_t *yl, const int32_t *cw, uint32_t nc,
                       uint32_t Ly, int impl, tl_suff *out);

/* Leave-one-out tl_suff of the cells q in [q0, q1) (cw[q] >= 1 there) of a cell table as above:
 * out[q - q0] = tl_suff with one item of cell q removed. closed = 1: the closed-form integer
 * updates of the BCa jackknife; 0: one full sweep per cell (the O(cells^2) definition). -1 when
 * out of memory. */
int tl_boot_jack_suff(const uint32_t *xl, const uint32_t *yl, const int32_t *cw, uint32_t nc,
                      uint32_t Ly, uint32_t q0, uint32_t q1, int closed, tl_suff *out);

/* Turns the AVX2 paths of a study on (when the CPU has AVX2) or off; for the tests and benches,
 * which compare the two. Values never depend on it. Not thread-safe against running calls. */
void tl_study_set_simd(tl_study *s, int on);

#endif
