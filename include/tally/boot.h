/* boot.h - paired bootstrap correlation studies: exact, rank-count invariant, fast.
 *
 * A study has one human score h and M metrics m_1..m_M over the same n items. Resample r draws
 * n item indices from a counter-based stream keyed by (seed, r) (Philox4x32-10, Random123), so
 * any split of the resamples over ranks or devices gives the same draws. A resample is a vector
 * of counts w[0..n) (how often each item was drawn); every statistic is computed from w.
 *
 * Exactness: for each (metric, human) pair the weighted sample reduces to integer sufficient
 * statistics (tl_suff): sums of products of DOUBLED average ranks (integers) and int64 pair
 * counts. rho and tau are then one fixed double expression of those integers, so the fast path,
 * the straightforward reference and the CUDA kernel give bit-identical values. n <= 1,000,000
 * (the doubled-rank products stay inside int64).
 *
 * The per-resample arithmetic (Philox index, the exact sweep, the statistic expressions) lives in
 * tally/boot_kernel.h as TL_HD inline functions compiled by both the C compiler and nvcc. The CPU
 * study path computes the same integers faster (AVX2 Philox chosen at run time, one counting pass
 * for all metrics, a one-pass sweep for wide metrics: any ties, up to 8 human levels; the BCa
 * jackknife in closed form; see src/core/boot.c and docs/STATISTICS.md), so every value is
 * bit-identical to the kernels'. */
#ifndef TALLY_BOOT_H
#define TALLY_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "tally/boot_kernel.h"
#include "tally/err.h"

#define TL_BOOT_MAX_N 1000000

/* ---- resampling ---- */

/* Item index j (0 <= j < n) of resample r: the high 64 bits of u * n, where u is 64 bits of
 * Philox4x32-10 output with key {seed lo, seed hi} and counter {j/2, r lo, r hi, stream};
 * output words (0,1) serve even j, (2,3) odd j. stream 0 = bootstrap, 1 = permutation test. */
uint32_t tl_boot_index(uint64_t seed, uint64_t r, uint32_t j, uint32_t n, uint32_t stream);
/* Counts of resample r: w[i] = #{j : index(j) == i}, w zeroed first. O(n); the AVX2 draws when
 * the CPU has them (the same indices). */
void tl_boot_counts(uint64_t seed, uint64_t r, uint32_t n, int32_t *w /* OUT [n] */);

/* ---- exact sufficient statistics of a weighted sample ---- */

/* A variable dense-ranked once: level[i] in [0, nlevels), ascending with the value. */
typedef struct {
  uint32_t *level;  /* [n], owned */
  uint32_t nlevels;
  uint32_t n;
} tl_dense;
tl_status tl_dense_init(tl_dense *d, const double *x, uint32_t n);
void tl_dense_release(tl_dense *d);

/* A (x = metric, y = human) pair prepared once: item order sorted by (x level, y level). */
typedef struct {
  const tl_dense *x, *y; /* borrowed */
  uint32_t *order;       /* [n], owned */
} tl_pair;
tl_status tl_pair_init(tl_pair *p, const tl_dense *x, const tl_dense *y);
void tl_pair_release(tl_pair *p);

/* Integer sufficient statistics of the weighted sample (weights w, total N = sum w). With a, b
 * the doubled average ranks of x and y in the weighted sample (integers):
 *   sab = sum w a b, saa = sum w a^2, sbb = sum w b^2,
 *   xtie/ytie/ntie = tied pairs in x / y / both, dis = discordant pairs, n0 = N(N-1)/2,
 *   mx/my = distinct x / y values present. */
typedef tl_suff_k tl_suff; /* defined in boot_kernel.h, shared with the CUDA kernels */

/* Workspace for tl_suff_fast (sized for the pair; reusable across resamples, one per thread). */
typedef struct tl_suff_ws tl_suff_ws;
tl_suff_ws *tl_suff_ws_new(const tl_pair *p);
void tl_suff_ws_free(tl_suff_ws *ws);

/* Fast path: O(n + Lx + Ly log Ly)-ish, a sweep in (x, y) order with a Fenwick tree over the y
 * levels (O(n) in practice when y has few levels, O(n log n) when continuous). */
void tl_suff_fast(const tl_pair *p, const int32_t *w, tl_suff_ws *ws, tl_suff *out);
/* Reference: expands the weighted sample and follows the definitions literally (O(N^2) pair
 * loop); for tests only. */
void tl_suff_reference(const double *x, const double *y, const int32_t *w, uint32_t n, tl_suff *out);

/* The statistics of a tl_suff (NaN when undefined, e.g. constant x or y in the sample). */
double tl_suff_spearman(const tl_suff *s);
double tl_suff_kendall_b(const tl_suff *s);
double tl_suff_kendall_c(const tl_suff *s);

/* ---- studies ---- */

typedef enum { TL_STAT_SPEARMAN = 0, TL_STAT_KENDALL_B = 1, TL_STAT__N = 2 } tl_stat;
const char *tl_stat_name(tl_stat s); /* "spearman" | "kendall_b" */

typedef struct {
  uint32_t n;                 /* items */
  const double *human;        /* [n] */
  int nmetrics;
  const double *const *metric;/* [nmetrics][n] */
  const char *const *names;   /* [nmetrics] metric names */
  int nstats;
  tl_stat stats[TL_STAT__N];  /* which statistics */
  uint64_t seed;
  uint64_t B;                 /* resamples */
  const uint32_t *indices;    /* optional explicit index matrix [B][n] (--indices), else Philox */
  /* Optional cluster resampling (docs/STATISTICS.md, "Cluster bootstrap"): cluster[i] in
   * [0, nclusters) is item i's cluster (e.g. its question when each question has one row per
   * model); NULL = items resampled independently (the default, unchanged). With clusters,
   * resample r draws m = nclusters cluster indices with tl_boot_counts(seed, r, m) and item i's
   * weight is the count of its cluster; BCa's acceleration comes from the leave-one-cluster-out
   * jackknife (m values); the permutation test swaps per cluster (one coin per cluster, Philox
   * stream 1, every row of a cluster swapped together). Not with `indices`. The weighted sample
   * is at most TL_BOOT_MAX_N rows: m times the largest cluster must not exceed it. */
  const uint32_t *cluster;    /* [n], borrowed; or NULL */
  uint32_t nclusters;         /* m (with cluster) */
} tl_study_in;

/* Prepared study (dense ranks and pairs built once; read-only afterwards, shareable). */
typedef struct tl_study tl_study;
tl_status tl_study_new(const tl_study_in *in, tl_study **out, tl_err *err);
void tl_study_free(tl_study *s);

/* Values of resamples [r0, r1): out[(r - r0) * K + k] with K = nmetrics * nstats and
 * k = metric * nstats + stat; NaN where undefined. Pure function of (study, r): any split over
 * ranks/threads/devices gives identical values. */
tl_status tl_study_resamples(const tl_study *s, uint64_t r0, uint64_t r1, double *out);

/* The full-data values: out[K] (same layout). */
void tl_study_full(const tl_study *s, double *out);

/* The resampling units of the study: its clusters (m) when it resamples clusters, else its n
 * items. 1 when the study resamples clusters (tl_study_in.cluster given). */
uint32_t tl_study_units(const tl_study *s);
int tl_study_clustered(const tl_study *s);

typedef enum { TL_CI_PERCENTILE = 0, TL_CI_BCA = 1 } tl_ci_method;

/* One statistic of one metric (or of a difference between two metrics). */
typedef struct {
  double estimate;       /* on the full data */
  double boot_mean, se;  /* mean and std (ddof=1) of the defined resample values */
  double ci_lo, ci_hi;   /* at the requested level and method (BCa: jackknife acceleration) */
  int64_t n_defined;     /* resamples with a defined value */
  int64_t n_undefined;   /* resamples excluded (NaN) */
} tl_boot_summary;

/* Pairwise comparison of metric a vs metric b for one statistic. */
typedef struct {
  int a, b;
  tl_boot_summary diff;     /* delta = stat(a) - stat(b), paired resamples */
  double p_boot;            /* 2 * min(#delta* <= 0, #delta* >= 0) / n_defined, capped at 1 */
  double p_ttest_compat;    /* COMPAT: ttest_rel on the two bootstrap vectors (grows with B) */
  double t_ttest_compat;
  double p_williams, t_williams; /* Williams' test on the full data (NaN for kendall_b) */
  double p_permutation;     /* paired permutation test, same B and seed (stream 1) */
} tl_boot_compare;

/* Summaries from all B resample values (vals[B * K], as tl_study_resamples writes them). */
tl_status tl_study_summarize(const tl_study *s, const double *vals, double level,
                             tl_ci_method method,
                             tl_boot_summary *per /* OUT [K] */,
                             tl_boot_compare *cmp /* OUT [nstats * M(M-1)/2], pairs (a<b) in
                                                     order, stat-major */);

/* The pieces of tl_study_summarize that cost more than the resamples, split so that ranks can
 * share them (each is a pure function of the study and its range; the sum/concatenation over
 * any split equals the whole):
 *  - BCa jackknife: T = tl_study_jack_tasks(s) tasks (one per distinct (metric, cell));
 *    tl_study_jack_values writes tasks [t0, t1) as cv[(t - t0) * nstats + stat].
 *  - permutation test: tl_study_perm_counts writes, for permutations [r0, r1), the counts
 *    cnt[pair * nstats + stat] of |delta_perm| >= |delta_obs| (int64; -1 where delta_obs is
 *    undefined; pairs (a < b) in order). B permutations are used, stream 1 of the seed. */
size_t tl_study_jack_tasks(const tl_study *s);
tl_status tl_study_jack_values(const tl_study *s, size_t t0, size_t t1, double *cv);
tl_status tl_study_perm_counts(const tl_study *s, uint64_t r0, uint64_t r1, int64_t *cnt);
/* tl_study_summarize with precomputed pieces: jack_cells = all T jackknife task values (NULL =
 * compute here; ignored for percentile CIs), perm_counts = counts summed over [0, B) (NULL =
 * compute here). The same inputs give the same summaries, whoever computed the pieces. */
tl_status tl_study_summarize_with(const tl_study *s, const double *vals, double level,
                                  tl_ci_method method, const double *jack_cells,
                                  const int64_t *perm_counts, tl_boot_summary *per,
                                  tl_boot_compare *cmp);

/* ---- system-level agreement (src/core/stats/boot_system.c) ----
 * Per system (a model: the study's system column) the mean of each metric and of the human score
 * over the system's rows; Spearman and Kendall's tau-b of the metric means against the human
 * means over the systems, with a bootstrap over clusters (questions): resample r draws m clusters
 * with tl_boot_counts(seed, r, m) (the study engine's draws), a row weighs its cluster's count,
 * and a system's mean is its weighted mean (sum w x / sum w, summed in row order). A system with
 * no row in a resample is left out of that resample's correlation; with fewer than 2 systems the
 * statistic is NaN (a correlation over 2 systems is +-1 or NaN). Every value is a pure function
 * of (input, r). */
typedef struct {
  uint32_t n;                  /* rows */
  const double *human;         /* [n] */
  int nmetrics;
  const double *const *metric; /* [nmetrics][n] */
  const uint32_t *system;      /* [n] in [0, nsystems) */
  uint32_t nsystems;
  const uint32_t *cluster;     /* [n] in [0, nclusters), or NULL: rows resampled (m = n) */
  uint32_t nclusters;
  int nstats;
  tl_stat stats[TL_STAT__N];
  uint64_t seed, B;
} tl_sys_in;

/* The means (full data): means[(k + 1) * nsystems + s] for metric k, means[s] for the human
 * score (NaN for a system with no row). TL_EINPUT for an id out of range. */
tl_status tl_sys_means(const tl_sys_in *in, double *means /* OUT [(nmetrics + 1) * nsystems] */);
/* Values of the full data (r = none: every row weight 1) into full[K], and of resamples
 * [r0, r1) into out[(r - r0) * K + k], K = nmetrics * nstats, k = metric * nstats + stat. */
tl_status tl_sys_values(const tl_sys_in *in, double *full /* OUT [K] or NULL */, uint64_t r0, uint64_t r1,
                        double *out /* OUT [(r1 - r0) K] or NULL */);
/* Percentile summaries of vals[B * K] (K entries into per), estimates from full[K]. */
tl_status tl_sys_summarize(const tl_sys_in *in, const double *full, const double *vals, double level,
                           tl_boot_summary *per /* OUT [K] */);

/* Sorts v[0..n) ascending (no NaN), stably: values that compare equal (-0.0 and +0.0 too) keep
 * their order, the order glibc's qsort (a merge sort) gives with a (a > b) - (a < b)
 * comparison. Out of memory, it is that qsort. */
void tl_sort_f64(double *v, size_t n);

/* Percentile of sorted values, linear interpolation (numpy default, Hyndman-Fan type 7). */
double tl_quantile_sorted(const double *sorted, size_t n, double q);

/* ---- headline CIs: a ratio of sums, clusters resampled ---- */

/* Percentile bootstrap CI of a ratio of sums over clusters (the summaries' accuracy and score
 * CIs: a cluster is one item, or one dialogue, with every seed of it kept together).
 * num[i], den[i] (i < n): cluster i's summed score and its unit count. Clusters with den[i] <= 0
 * are dropped first (they hold no unit of the row); m are left. The estimate is
 * sum(num) / sum(den). Resample r (0 <= r < B) draws m clusters j -> tl_boot_index(seed, r, j,
 * m, 0) (tl_boot_counts: the study engine's draws), and its ratio is sum w*num / sum w*den,
 * summed in cluster order. *lo, *hi: the (1 - level) / 2 and (1 + level) / 2 quantiles
 * (tl_quantile_sorted) of the B ratios. NaN both when m < 2, B < 2 or level is not in (0, 1).
 * Deterministic: the same arrays give the same bounds on every rank count (callers pass
 * reduced integers). TL_ENOMEM when the work arrays cannot be allocated. */
tl_status tl_cluster_ci(const double *num, const double *den, uint32_t n, uint32_t B,
                        uint64_t seed, double level, double *lo, double *hi);

/* The same bounds for many rows of integer counts (a summary's rows), bit for bit, with the
 * resamples' draws made once per cluster count m and kept (at most 256 MiB in all; past that,
 * or when a cluster has no unit, a row is computed by tl_cluster_ci): every partial sum of
 * integer products is exact in a double, whatever the order. One object per (B, seed); not
 * shared by threads. Under the ranks' work share (tally/workshare.h) each row with a CI is one
 * task. */
typedef struct tl_cluster_draws tl_cluster_draws;
tl_cluster_draws *tl_cluster_draws_new(uint32_t B, uint64_t seed); /* NULL when out of memory */
void tl_cluster_draws_free(tl_cluster_draws *d);
tl_status tl_cluster_ci_drawn(tl_cluster_draws *d, const int64_t *num, const int64_t *den, uint32_t n,
                              double level, double *lo, double *hi);
/* For tests, before the first row: the largest count kept as a byte (1..255, default 255); a
 * cluster count m with a larger count keeps its draws as int32. The same bits either way. */
void tl_cluster_draws_byte_max(tl_cluster_draws *d, unsigned byte_max);

/* The same bounds as tl_cluster_ci for many rows of any non-negative values (a summary's rows:
 * MT-Bench-101's weighted dialogue scores, VQA accuracy), bit for bit, fast: a cluster count m
 * asked for by a second row has its draws kept as bytes (B x m, at most TL_CCIS_CACHE bytes in
 * all) for every later row; other rows draw theirs 8 resamples at a time; and 8 resamples are
 * summed side by side, each in cluster order with the same roundings
 * (src/core/stats/cluster_ci.c says why the bits are the same).
 * A row with a kept value that is negative or not finite is computed by tl_cluster_ci. One
 * object per (B, seed); not shared by threads. */
#define TL_CCIS_CACHE ((size_t)256 << 20)
typedef struct tl_ccis tl_ccis;
tl_ccis *tl_ccis_new(uint32_t B, uint64_t seed); /* NULL when out of memory */
void tl_ccis_free(tl_ccis *s);
/* tl_cluster_ci(num, den, n, B, seed, level, lo, hi)'s bounds. TL_ENOMEM when a work array
 * cannot be had (a cache that cannot grow is not an error: the row is computed without it). */
tl_status tl_ccis_row(tl_ccis *s, const double *num, const double *den, uint32_t n, double level, double *lo,
                      double *hi);
/* For tests, before the first row: the bound on the kept counts (bytes; 0 keeps none), the
 * largest count kept as a byte (1..255; a block of 8 resamples with a larger count is computed
 * by tl_cluster_ci's loop), and 0 = the portable kernel even where the CPU has AVX2. The bounds
 * are the same bits whatever these are. */
void tl_ccis_limits(tl_ccis *s, size_t cache_bytes, unsigned count_max, int simd);

#endif
