/* stats.h - the CPU reference of tally's statistics: ranks, correlations, their p-values, and the
 * tests used to compare two metrics. Definitions follow scipy 1.10.1 (../shared/spec/
 * vqa-lave-statistics.md section 5); golden values: ../shared/data/stats/scipy_vectors.json.
 *
 * Conventions: inputs are plain arrays of n doubles (no NaN; callers check). A statistic that is
 * undefined (constant input, n too small) is NaN, never a crash. Pair counts are int64. */
#ifndef TALLY_STATS_H
#define TALLY_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

/* ---- distributions ---- */
/* The mean of v[0..k) (k >= 1) and, in *ss, the sum of squared deviations from it: two passes
 * in index order, so a table that sums its seeds in seed order gets the same bits on any rank
 * count. The across-seed tables take std = sqrt(ss / (k - 1)) (ddof 1), or sqrt(ss / k), and
 * se = std / sqrt(k) from it. */
double tl_mean_ss(const double *v, size_t k, double *ss);

double tl_norm_cdf(double z);            /* Phi(z) */
double tl_norm_sf(double z);             /* 1 - Phi(z), accurate in the tail */
double tl_norm_ppf(double p);            /* Phi^-1(p), p in (0,1); +-inf at 0/1 */
double tl_t_sf(double t, double df);     /* P(T > t), Student t with df degrees of freedom */
double tl_t_cdf(double t, double df);    /* P(T <= t) */
double tl_betainc(double a, double b, double x); /* regularized incomplete beta I_x(a, b) */

/* ---- ranks and correlations ---- */

/* Average ranks (scipy rankdata method='average'), 1-based: ranks[i] for x[i]. */
void tl_rankdata_avg(const double *x, size_t n, double *ranks /* OUT [n] */);

/* Pearson r; NaN when either input is constant or n < 2. */
double tl_pearson(const double *x, const double *y, size_t n);

typedef struct {
  double rho;   /* Spearman rho = Pearson r of the average ranks */
  double p;     /* two-sided, t = rho*sqrt((n-2)/((1+rho)(1-rho))) with n-2 df; 0 when |rho|=1 */
} tl_spearman_res;
tl_spearman_res tl_spearman(const double *x, const double *y, size_t n);

typedef struct {
  double tau_b, tau_c;
  double p_asymptotic; /* tie-corrected normal approximation, two-sided */
  double p_auto;       /* scipy method='auto': exact when no ties and (n <= 33 or
                          min(dis, n0 - dis) <= 1), else the asymptotic one */
  int exact;           /* 1 when p_auto came from the exact distribution */
  int64_t n0, xtie, ytie, ntie, dis; /* pair counts (spec 5.3) */
  int64_t mx, my;      /* distinct values of x and y */
} tl_kendall_res;
/* O(n log n): sort by (x, y), Fenwick tree over y ranks for discordant pairs. */
tl_kendall_res tl_kendall(const double *x, const double *y, size_t n);

/* Exact two-sided p-value of Kendall's tau without ties: c = min(dis, n0 - dis). */
double tl_kendall_exact_p(int64_t n, int64_t c);

/* ---- comparing two metrics ---- */

/* scipy ttest_rel / ttest_ind (equal variances) two-sided p-values; *t_out gets t (may be NULL). */
double tl_ttest_rel_p(const double *a, const double *b, size_t n, double *t_out);
double tl_ttest_ind_p(const double *a, const double *b, size_t na, size_t nb, double *t_out);

/* Williams' test for two dependent correlations sharing one variable (R psych r.test / nlpstats
 * williams_test): r12 = |r(metric1, human)|, r13 = |r(metric2, human)|, r23 = |r(metric1,
 * metric2)|; t with n-3 df. Returns the two-sided p-value; *t_out gets t (may be NULL). */
double tl_williams_p(double r12, double r13, double r23, size_t n, double *t_out);

/* ---- paired comparison of two systems on the same items ---- */

/* McNemar's exact test: two-sided p = min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2), b and
 * c the discordant pairs (A right and B wrong; A wrong and B right). 1 when b + c = 0. Assumes
 * independent pairs. */
double tl_mcnemar_exact_p(int64_t b, int64_t c);

typedef struct {
  uint32_t n;            /* items */
  double mean_a, mean_b; /* means over the items */
  double diff;           /* mean_a - mean_b */
  double ci_lo, ci_hi;   /* percentile CI of the difference over item resamples */
  double p_boot;         /* 2 min(#diff* <= 0, #diff* >= 0) / B, capped at 1 (NaN: B = 0) */
} tl_paired_res;
/* Paired bootstrap over items of the mean difference of a[i] and b[i] (i < n): resample r draws
 * n items with tl_boot_counts(seed, r, n) (tally/boot.h), so the result does not depend on who
 * computes it. Each item is one cluster: callers average an item's repeated measurements (seeds)
 * before calling. TL_OK, TL_ENOMEM, TL_EINPUT (n = 0 or above TL_BOOT_MAX_N). */
tl_status tl_paired_boot(const double *a, const double *b, uint32_t n, uint64_t B, uint64_t seed, double level,
                         tl_paired_res *out);

/* ---- agreement ---- */

/* Krippendorff's alpha from a coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
 * Alpha-Reliability", sections C-E): o[c * V + k] = the coincidences of values c and k (any
 * common positive scale: callers that keep integer counts multiply by a common denominator),
 * values indexed 0..V-1 in ascending order. alpha = 1 - (n - 1) sum o_ck d2_ck / sum n_c n_k d2_ck
 * with n_c the margins and n = sum n_c (the scale cancels except in n - 1, so pass `scale`, the
 * factor o was multiplied by: n - 1 is taken in unscaled units). Metrics d2_ck:
 *   nominal: 1 when c != k;
 *   ordinal: (sum_{g=c..k} n_g - (n_c + n_k)/2)^2;
 *   interval: (vals[c] - vals[k])^2 (vals: [V], NULL for the other metrics).
 * NaN when undefined (no pairable values, or a single value used: D_e = 0). */
typedef enum { TL_KRIPP_NOMINAL = 0, TL_KRIPP_ORDINAL = 1, TL_KRIPP_INTERVAL = 2 } tl_kripp_metric;
double tl_kripp_alpha(const double *o, size_t V, double scale, tl_kripp_metric m, const double *vals);
/* Krippendorff's alpha of a reliability data matrix votes[n_items][n_coders] (row-major): a value
 * >= 0 is a category (ordered by value for ordinal and interval), -1 a missing vote; items with
 * fewer than 2 votes are not pairable. Builds the coincidence matrix over the distinct values
 * (each ordered pair of votes within item u adds 1/(m_u - 1)) and calls tl_kripp_alpha. NaN when
 * undefined, for a value below -1, more than 4096 distinct values, or out of memory. */
double tl_kripp_alpha_votes(const int *votes, size_t n_items, size_t n_coders, tl_kripp_metric m);

#endif
