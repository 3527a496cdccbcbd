/* mtb_compare.h - MT-Bench-101 model comparisons: win rate and soft win rate of model A over
 * model B per dialogue group, with paired percentile bootstrap CIs over the group's dialogues
 * (docs/MTBENCH101.md, "Model comparison"; the definitions are module.c's, unchanged).
 *
 * Per dialogue i: pref = 1 / (1 + exp(-0.3 (sb[i] - sa[i]))); A wins when pref < 0.5, loses when
 * pref > 0.5, ties otherwise; missing when either score is NaN. Over a group's dialogues
 * idx[0..m) with counts c[j] (1 each on the full data, tl_boot_counts(seed, r, m) in resample r):
 *   win rate = (W + T/2) / N, soft win rate = (sum over j in order of c[j] (1 - pref)) / N,
 *   N = W + L + T (count-weighted, missing dialogues left out); NaN when N = 0.
 * CI = the (1 - level)/2 and (1 + level)/2 quantiles (tl_quantile_sorted) of the defined
 * resample values.
 *
 * How it is fast (issue 34): the counts of resample r depend only on (seed, r, m), so they are
 * drawn once per group size m and kept, as bytes, for every pair and policy; pref and its class
 * are computed once per (pair, policy, dialogue), so the resample loop only multiplies and adds
 * (AVX2 when the CPU has it: 8 resamples at a time, each with its own sum in dialogue order, so
 * every value has the bits of the sequential loop). Integer counts are sums of exact integers.
 *
 * Memory: the kept counts take B x (sum of the distinct group sizes) bytes, at most
 * TL_MTB_CMP_CACHE (256 MiB); the resamples past that bound are drawn again for each pair, in
 * blocks of 8 (for each batch of pairs). A pair's work arrays take 4 B doubles plus O(n), for
 * each pair of a batch (up to TL_MTB_CMP_BATCH pairs computed together; 1 when B > 1,000,000). */
#ifndef TALLY_MTB_COMPARE_H
#define TALLY_MTB_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

#define TL_MTB_CMP_CACHE ((size_t)256 << 20)
#define TL_MTB_CMP_BATCH 4 /* pairs computed together by tl_mtb_cmp_pairs */

/* One (policy, group) of a pair. */
typedef struct {
  size_t m;                      /* dialogues in the group (0: no row) */
  int64_t w, l, t, miss;         /* full data */
  double wr, sw;                 /* full data (NaN when no dialogue has both scores) */
  double wr_lo, wr_hi, sw_lo, sw_hi; /* CIs (NaN without resamples or defined values) */
} tl_mtb_cmp_res;

typedef struct tl_mtb_cmp tl_mtb_cmp;

/* n dialogues, ngroups groups: group g is the ascending dialogue indices gidx[g][0..gm[g])
 * (copied). B resamples with Philox seed `seed`, CI level in (0, 1). NULL when out of memory. */
tl_mtb_cmp *tl_mtb_cmp_new(size_t n, int ngroups, const size_t *const *gidx, const size_t *gm, uint64_t B,
                           uint64_t seed, double level);
void tl_mtb_cmp_free(tl_mtb_cmp *c);

/* For tests, before the first pair: the bound on the kept counts (bytes) and the largest count
 * kept as a byte (a block of resamples with a larger count is computed by the plain per-resample
 * loop; 1..255). The results are the same bits whatever the limits. */
void tl_mtb_cmp_limits(tl_mtb_cmp *c, size_t cache_bytes, unsigned count_max);
/* For tests: 0 = use the portable kernel even where the CPU has AVX2. */
void tl_mtb_cmp_use_simd(tl_mtb_cmp *c, int on);

/* One pair: sa[2 n], sb[2 n] = the dialogue scores of A and B under policy 0 (exclude) then
 * policy 1 (fail), NaN where none. res[2 * ngroups], policy-major. TL_ENOMEM when the work
 * arrays cannot be allocated (the first call also draws the kept counts). */
tl_status tl_mtb_cmp_pair(tl_mtb_cmp *c, const double *sa, const double *sb, tl_mtb_cmp_res *res);
/* np pairs at once (1 <= np <= tl_mtb_cmp_batch(c)): sa[i], sb[i], res[i] as above for pair i;
 * the same values as np calls of tl_mtb_cmp_pair, each block of kept counts read once for all.
 * TL_EINTERNAL when np is out of range. */
int tl_mtb_cmp_batch(const tl_mtb_cmp *c); /* TL_MTB_CMP_BATCH, or 1 when B > 1,000,000 */
tl_status tl_mtb_cmp_pairs(tl_mtb_cmp *c, int np, const double *const *sa, const double *const *sb,
                           tl_mtb_cmp_res *const *res);

#endif
