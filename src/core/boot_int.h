/* boot_int.h - internals of the bootstrap engine (boot.c) exposed for the unit tests and for the
 * CUDA port: the interval arithmetic, separated from the resampling so it can be checked on
 * hand-made inputs. Not part of the public API. */
#ifndef TALLY_BOOT_INT_H
#define TALLY_BOOT_INT_H

#include <stddef.h>
#include <stdint.h>

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

#endif
