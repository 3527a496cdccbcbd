/* agree.h - agreement between rating columns (judge vs human, judge vs judge, ...), with
 * seeded, rank-invariant bootstrap CIs, and the small interval and multiple-testing helpers that
 * go beside them (issue 32). Pure C11 (core tier): no MPI, HDF5 or I/O.
 *
 * Data model. Two rating columns x, y over the same n items (no NaN: callers drop the items where
 * either is missing and count them). The categories are the distinct values of both columns,
 * sorted ascending (the union, as scikit-learn's cohen_kappa_score takes its labels); category
 * index c in [0, V). The confusion matrix C[c * V + k] counts the items with x in category c and
 * y in category k. Every statistic here is a function of C (and the category values), so a
 * bootstrap resample only needs C weighted by the resample's counts: O(n + V^2) per resample
 * (O(V^3) for ordinal alpha).
 *
 * Determinism: a resample r draws items (or clusters) with tl_boot_counts(seed, r, .) (boot.h):
 * the results are a pure function of (data, seed, B, level), so any rank count gives the same
 * bits. Formulas and sources are in docs/STATISTICS.md, section "Agreement". */
#ifndef TALLY_AGREE_H
#define TALLY_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"
#include "tally/stats.h"

/* At most this many categories: agreement is for rating scales (LAVE 1-3, MT-Bench-101 1-10,
 * preferences -1/0/1), not continuous scores; past it tl_agree_prepare returns TL_EINPUT. */
#define TL_AGREE_MAX_CATS 64

/* The statistics of one pair of columns, in this order everywhere (tables, arrays). */
typedef enum {
  TL_AG_RAW = 0,      /* share of items with x == y (MT-Bench "agreement with ties") */
  TL_AG_RAW_NO_TIES,  /* the same over items where neither rating is the tie value (MT-Bench
                         "without ties"); NaN when the pair has no tie value (not preferences) */
  TL_AG_KAPPA,        /* Cohen's kappa, unweighted */
  TL_AG_KAPPA_LINEAR, /* Cohen's kappa, linear disagreement weights |i - j| (category index) */
  TL_AG_KAPPA_QUAD,   /* Cohen's kappa, quadratic weights (i - j)^2 */
  TL_AG_SCOTT_PI,     /* Scott's pi: expected agreement from the pooled marginals */
  TL_AG_ALPHA,        /* Krippendorff's alpha at the requested metric (two coders) */
  TL_AG__N
} tl_agree_stat;
const char *tl_agree_stat_name(tl_agree_stat s); /* "raw", "raw_no_ties", "kappa", ... */

/* Two columns mapped to category indices once (owned arrays). */
typedef struct {
  uint32_t n;      /* items */
  size_t V;        /* categories */
  double *cats;    /* [V] ascending distinct values of x and y */
  uint32_t *a, *b; /* [n] category index of x[i], y[i] */
  int tie;         /* index of the tie category (value 0) when both columns are preferences
                      (every value in {-1, 0, 1}), else -1 */
} tl_agree_data;

/* Builds d from x[n], y[n] (finite values). TL_EINPUT (err says why) when n = 0, n is above
 * TL_BOOT_MAX_N, a value is not finite, or there are more than TL_AGREE_MAX_CATS categories;
 * TL_ENOMEM. d is released on failure. */
tl_status tl_agree_prepare(const double *x, const double *y, uint32_t n, tl_agree_data *d, tl_err *err);
void tl_agree_release(tl_agree_data *d);

/* Every statistic from a confusion matrix C[V * V] (any non-negative weights; row = x, column =
 * y): out[TL_AG__N], NaN where undefined (no items; kappa and pi when the expected disagreement
 * is 0, e.g. one category only). tie = the tie category index or -1; m = the alpha metric, cats
 * the category values (alpha interval). */
void tl_agree_stats(const double *C, size_t V, const double *cats, int tie, tl_kripp_metric m,
                    double out[TL_AG__N]);

/* A bootstrap summary of one statistic. */
typedef struct {
  double estimate;      /* on the full data */
  double se;            /* std (ddof 1) of the defined resample values; NaN when < 2 defined */
  double ci_lo, ci_hi;  /* percentile CI (tl_quantile_sorted of the defined values) */
  int64_t n_undefined;  /* resamples whose value was NaN (left out of the CI) */
} tl_agree_ci;

typedef struct {
  tl_agree_ci s[TL_AG__N];
  int64_t agree, n;           /* items with x == y, items (for the proportion intervals) */
  int64_t agree_nt, n_nt;     /* the same over items without a tie (0 / 0 when tie < 0) */
  double wilson_lo, wilson_hi, jeffreys_lo, jeffreys_hi;          /* of agree / n */
  double wilson_nt_lo, wilson_nt_hi, jeffreys_nt_lo, jeffreys_nt_hi; /* of agree_nt / n_nt */
  int64_t *confusion;         /* [V * V] full-data counts, owned (tl_agree_res_release) */
} tl_agree_res;
void tl_agree_res_release(tl_agree_res *r);

/* The full-data statistics and their percentile bootstrap CIs at `level` over B resamples.
 * Resample r (0 <= r < B) draws with tl_boot_counts(seed, r, .): the n items, or, when cluster
 * is non-NULL (cluster[i] in [0, ncl): item i's cluster), the ncl clusters, each item weighted
 * by the count of its cluster (items of one cluster move together). B = 0: estimates only (CIs
 * NaN). Wilson and Jeffreys intervals of the two proportions at `level`. TL_OK, TL_ENOMEM,
 * TL_EINPUT (a cluster id out of range, ncl = 0 with clusters, level not in (0, 1)). */
tl_status tl_agree_boot(const tl_agree_data *d, const uint32_t *cluster, uint32_t ncl, tl_kripp_metric m,
                        uint64_t B, uint64_t seed, double level, tl_agree_res *out, tl_err *err);

/* Krippendorff's alpha of k >= 2 coders (e.g. several human columns: the human-human ceiling):
 * votes[i * k + j] = coder j's rating of item i, NaN = missing; items with fewer than 2 ratings
 * are not pairable. The coincidence matrix (Krippendorff 2011, section C: each ordered pair of
 * ratings within item u adds w_u / (m_u - 1)) goes to tl_kripp_alpha, the one implementation.
 * Bootstrap as tl_agree_boot (items, or clusters). TL_EINPUT when more than TL_AGREE_MAX_CATS
 * values or a non-finite non-NaN value, TL_ENOMEM. */
tl_status tl_agree_alpha_coders(const double *votes, uint32_t n, uint32_t k, const uint32_t *cluster,
                                uint32_t ncl, tl_kripp_metric m, uint64_t B, uint64_t seed, double level,
                                tl_agree_ci *out, tl_err *err);

/* ---- intervals for a proportion k / n ---- */

/* Wilson score interval (Wilson 1927; Newcombe 1998 method 3; Brown, Cai & DasGupta 2001 eq. 4),
 * two-sided at `level`, without continuity correction. NaN both when n = 0. */
void tl_wilson(int64_t k, int64_t n, double level, double *lo, double *hi);
/* The same with a proportion p over n (not necessarily integer k = p n): an accuracy whose
 * items' seeds are averaged (p = the mean, n = the items). Equals tl_wilson when p n is an
 * integer. NaN both for n <= 0, p outside [0, 1] or a level outside (0, 1). */
void tl_wilson_p(double p, double n, double level, double *lo, double *hi);
/* Jeffreys interval (Brown, Cai & DasGupta 2001, section 4.1.2): the (1 - level) / 2 and
 * (1 + level) / 2 quantiles of Beta(k + 1/2, n - k + 1/2), with lo = 0 when k = 0 and hi = 1
 * when k = n. NaN both when n = 0. */
void tl_jeffreys(int64_t k, int64_t n, double level, double *lo, double *hi);
/* The p-quantile of Beta(a, b): x with tl_betainc(a, b, x) = p, by bisection on [0, 1] (the
 * regularized incomplete beta is increasing in x) to the resolution of a double. */
double tl_beta_ppf(double p, double a, double b);

/* ---- multiple comparisons ---- */

/* Holm's step-down and Benjamini-Hochberg step-up adjusted p-values (as statsmodels
 * multipletests 'holm' / 'fdr_bh' define them): adj[i] for p[i], monotone in the sorted order,
 * capped at 1. NaN entries stay NaN and do not count in m (the number of tests). adj may be p. */
void tl_p_holm(const double *p, size_t n, double *adj);
void tl_p_bh(const double *p, size_t n, double *adj);

/* ---- power ---- */

/* Minimum detectable effect of a paired comparison at two-sided level alpha and `power` (normal
 * approximation, the differences i.i.d.): MDE = (z_{1 - alpha/2} + z_{power}) * sd / sqrt(n).
 * tl_mde_paired takes the n paired differences (sd with ddof 1; NaN when n < 2);
 * tl_mde_from_se takes the standard error of the mean difference directly (a bootstrap SE). */
double tl_mde_paired(const double *diff, size_t n, double alpha, double power);
double tl_mde_from_se(double se, double alpha, double power);

#endif
