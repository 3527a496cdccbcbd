/* test_boot_cluster.c - the cluster bootstrap of the study engine (tl_study_in.cluster) and the
 * system-level agreement (tl_sys_*), boot.h:
 *  - one item per cluster (cluster i = item i) is the item bootstrap, bit for bit: resample
 *    values, BCa summaries (leave-one-cluster-out = leave-one-out), permutation counts;
 *  - a data set with every row twice, clustered by the original row, gives the item bootstrap of
 *    the original (each cluster's count is the item's count; duplicated rows leave rho and tau-b
 *    unchanged), to 1e-12;
 *  - the values of any split of [0, B) are the same bits (what the ranks rely on);
 *  - bad cluster ids are refused;
 *  - system-level: a worked 3-system example, resample r recomputed from tl_boot_counts, and the
 *    2-system case (+-1 or NaN). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "testutil.h"
#include "boot_int.h"
#include "tally/boot.h"

static uint64_t rnd(uint64_t *st) { /* splitmix64 */
  uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* n rows: a 3-level human score, metric 0 with 4 levels, metric 1 continuous, metric 2 tied. */
static void make_data(uint32_t n, uint64_t seed, double *h, double *m /* [3][n] */) {
  uint64_t st = seed;
  for (uint32_t i = 0; i < n; i++) {
    h[i] = (double)(rnd(&st) % 3);
    m[i] = (double)(rnd(&st) % 4) * 0.25;
    m[n + i] = h[i] + (double)(rnd(&st) >> 11) * 0x1.0p-53;
    m[2 * n + i] = round(h[i] + (double)(rnd(&st) % 3)) / 2;
  }
}

static tl_study *new_study(uint32_t n, const double *h, const double *m, const double **mp, uint64_t B,
                           const uint32_t *cl, uint32_t ncl) {
  for (int k = 0; k < 3; k++) mp[k] = m + (size_t)k * n;
  tl_study_in in = {.n = n, .human = h, .nmetrics = 3, .metric = mp, .nstats = 2,
                    .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = 29, .B = B,
                    .cluster = cl, .nclusters = ncl};
  tl_study *s = NULL;
  assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
  return s;
}

#define K 6 /* 3 metrics x 2 statistics */
#define NCMP 6

static void test_identity_clusters(void **state) {
  (void)state;
  const uint32_t n = 150;
  const uint64_t B = 300;
  double h[150], m[450];
  const double *mp1[3], *mp2[3];
  uint32_t cl[150];
  make_data(n, 7, h, m);
  for (uint32_t i = 0; i < n; i++) cl[i] = i;
  tl_study *a = new_study(n, h, m, mp1, B, NULL, 0), *b = new_study(n, h, m, mp2, B, cl, n);
  assert_false(tl_study_clustered(a));
  assert_true(tl_study_clustered(b));
  assert_int_equal(tl_study_units(b), n);
  double *va = malloc(B * K * sizeof *va), *vb = malloc(B * K * sizeof *vb);
  assert_int_equal(tl_study_resamples(a, 0, B, va), TL_OK);
  assert_int_equal(tl_study_resamples(b, 0, B, vb), TL_OK);
  assert_memory_equal(va, vb, B * K * sizeof *va);
  tl_boot_summary pa[K], pb[K];
  tl_boot_compare ca[NCMP], cb[NCMP];
  for (int method = 0; method < 2; method++) {
    memset(pa, 0, sizeof pa), memset(pb, 0, sizeof pb), memset(ca, 0, sizeof ca), memset(cb, 0, sizeof cb);
    assert_int_equal(tl_study_summarize(a, va, 0.95, (tl_ci_method)method, pa, ca), TL_OK);
    assert_int_equal(tl_study_summarize(b, vb, 0.95, (tl_ci_method)method, pb, cb), TL_OK);
    assert_memory_equal(pa, pb, sizeof pa); /* BCa: leave-one-cluster-out = the closed form */
    assert_memory_equal(ca, cb, sizeof ca); /* the permutation test: one coin per cluster = item */
  }
  tl_study_free(a);
  tl_study_free(b);
  free(va);
  free(vb);
}

static void test_duplicated_rows(void **state) {
  (void)state;
  const uint32_t n = 90;
  const uint64_t B = 250;
  double h[90], m[270], h2[180], m2[540];
  const double *mp1[3], *mp2[3];
  uint32_t cl[180];
  make_data(n, 11, h, m);
  for (uint32_t i = 0; i < 2 * n; i++) { /* copy j of row i at 2 n - 1 - i and i: order mixed */
    uint32_t src = i < n ? i : 2 * n - 1 - i;
    h2[i] = h[src];
    for (int k = 0; k < 3; k++) m2[(size_t)k * 2 * n + i] = m[(size_t)k * n + src];
    cl[i] = src;
  }
  tl_study *a = new_study(n, h, m, mp1, B, NULL, 0), *b = new_study(2 * n, h2, m2, mp2, B, cl, n);
  double *va = malloc(B * K * sizeof *va), *vb = malloc(B * K * sizeof *vb);
  assert_int_equal(tl_study_resamples(a, 0, B, va), TL_OK);
  assert_int_equal(tl_study_resamples(b, 0, B, vb), TL_OK);
  for (size_t q = 0; q < B * K; q++) {
    assert_int_equal(isnan(va[q]), isnan(vb[q]));
    if (!isnan(va[q])) assert_true(fabs(va[q] - vb[q]) < 1e-12);
  }
  tl_boot_summary pa[K], pb[K];
  tl_boot_compare ca[NCMP], cb[NCMP];
  assert_int_equal(tl_study_summarize(a, va, 0.9, TL_CI_BCA, pa, ca), TL_OK);
  assert_int_equal(tl_study_summarize(b, vb, 0.9, TL_CI_BCA, pb, cb), TL_OK);
  for (int k = 0; k < K; k++) {
    assert_true(fabs(pa[k].estimate - pb[k].estimate) < 1e-12);
    assert_true(fabs(pa[k].ci_lo - pb[k].ci_lo) < 1e-9 && fabs(pa[k].ci_hi - pb[k].ci_hi) < 1e-9);
  }
  for (int q = 0; q < NCMP; q++) assert_true(fabs(ca[q].p_permutation - cb[q].p_permutation) < 1e-12);
  /* the permutation test swaps whole clusters: with two close metrics (|delta| moderate, so the
   * counts are neither 0 nor B) the duplicated data's counts are the original's integers */
  for (uint32_t i = 0; i < n; i++) m[i] = h[i] + 0.8 * m[n + i] - 0.8 * h[i] + 0.4 * (double)(i % 5);
  for (uint32_t i = 0; i < 2 * n; i++) m2[i] = m[i < n ? i : 2 * n - 1 - i];
  tl_study_free(a);
  tl_study_free(b);
  a = new_study(n, h, m, mp1, B, NULL, 0);
  b = new_study(2 * n, h2, m2, mp2, B, cl, n);
  int64_t pa1[NCMP], pb1[NCMP];
  assert_int_equal(tl_study_perm_counts(a, 0, B, pa1), TL_OK);
  assert_int_equal(tl_study_perm_counts(b, 0, B, pb1), TL_OK);
  assert_true(pa1[2] > 0 && pa1[2] < (int64_t)B); /* metrics 0 vs 2, spearman: a count to compare */
  assert_memory_equal(pa1, pb1, sizeof pa1);
  /* and the clusters matter: the same rows as independent items give narrower intervals */
  tl_study *c = new_study(2 * n, h2, m2, mp1, B, NULL, 0);
  double *vc = malloc(B * K * sizeof *vc);
  assert_int_equal(tl_study_resamples(c, 0, B, vc), TL_OK);
  tl_boot_summary pc[K];
  tl_boot_compare cc[NCMP];
  assert_int_equal(tl_study_summarize(c, vc, 0.9, TL_CI_PERCENTILE, pc, cc), TL_OK);
  assert_int_equal(tl_study_summarize(b, vb, 0.9, TL_CI_PERCENTILE, pb, cb), TL_OK);
  for (int k = 0; k < K; k++) assert_true(pc[k].ci_hi - pc[k].ci_lo < pb[k].ci_hi - pb[k].ci_lo);
  tl_study_free(a);
  tl_study_free(b);
  tl_study_free(c);
  free(va);
  free(vb);
  free(vc);
}

static void test_split_invariance(void **state) {
  (void)state;
  const uint32_t n = 120, ncl = 37;
  const uint64_t B = 101;
  double h[120], m[360];
  const double *mp[3];
  uint32_t cl[120];
  make_data(n, 5, h, m);
  uint64_t st = 3;
  for (uint32_t i = 0; i < n; i++) cl[i] = (uint32_t)(rnd(&st) % ncl);
  tl_study *s = new_study(n, h, m, mp, B, cl, ncl);
  double *all = malloc(B * K * sizeof *all), *part = malloc(B * K * sizeof *part);
  assert_int_equal(tl_study_resamples(s, 0, B, all), TL_OK);
  const uint64_t cut[4] = {0, 13, 60, B};
  for (int q = 0; q < 3; q++) assert_int_equal(tl_study_resamples(s, cut[q], cut[q + 1], part + cut[q] * K), TL_OK);
  assert_memory_equal(all, part, B * K * sizeof *all);
  size_t T = tl_study_jack_tasks(s);
  assert_int_equal(T, 3 * ncl);
  double *j1 = malloc(T * 2 * sizeof *j1), *j2 = malloc(T * 2 * sizeof *j2);
  assert_int_equal(tl_study_jack_values(s, 0, T, j1), TL_OK);
  assert_int_equal(tl_study_jack_values(s, 0, 50, j2), TL_OK);
  assert_int_equal(tl_study_jack_values(s, 50, T, j2 + 100), TL_OK);
  assert_memory_equal(j1, j2, T * 2 * sizeof *j1);
  int64_t p1[NCMP], p2[NCMP], p3[NCMP];
  assert_int_equal(tl_study_perm_counts(s, 0, B, p1), TL_OK);
  assert_int_equal(tl_study_perm_counts(s, 0, 40, p2), TL_OK);
  assert_int_equal(tl_study_perm_counts(s, 40, B, p3), TL_OK);
  for (int q = 0; q < NCMP; q++) assert_int_equal(p1[q], p2[q] + p3[q]);
  /* a leave-one-cluster-out value: the statistic of the rows outside the cluster */
  uint32_t keep = 0;
  double hk[120], mk[120];
  for (uint32_t i = 0; i < n; i++)
    if (cl[i] != 4) hk[keep] = h[i], mk[keep++] = m[n + i]; /* metric 1 */
  int32_t *ones = malloc(keep * sizeof *ones);
  for (uint32_t i = 0; i < keep; i++) ones[i] = 1;
  tl_suff sf;
  tl_suff_reference(mk, hk, ones, keep, &sf);
  assert_true(j1[(1 * ncl + 4) * 2 + 0] == tl_suff_spearman(&sf));
  assert_true(j1[(1 * ncl + 4) * 2 + 1] == tl_suff_kendall_b(&sf));
  free(ones);
  free(j1);
  free(j2);
  free(all);
  free(part);
  tl_study_free(s);
}

static void test_cluster_errors(void **state) {
  (void)state;
  double h[4] = {0, 1, 2, 3}, m[4] = {1, 0, 3, 2};
  const double *mp[1] = {m};
  uint32_t cl[4] = {0, 1, 2, 3}, idx[8] = {0};
  tl_study_in in = {.n = 4, .human = h, .nmetrics = 1, .metric = mp, .nstats = 1, .B = 2,
                    .cluster = cl, .nclusters = 3};
  tl_study *s = NULL;
  tl_err err = {{0}};
  assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT); /* id 3 outside [0, 3) */
  assert_non_null(strstr(err.msg, "cluster 3"));
  in.nclusters = 0;
  assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT);
  in.nclusters = 4;
  in.indices = idx;
  assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT);
  assert_null(s);
}

/* ---- system-level ---- */

static void test_system_level(void **state) {
  (void)state;
  /* 3 systems x 4 questions; human means A .25, B .5, C .75; metric means A .1, B .3, C .2 */
  const double h[12] = {0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1};
  const double m[12] = {.1, .1, .1, .1, .3, .3, .3, .3, .2, .2, .2, .2};
  const uint32_t sys[12] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  const uint32_t q[12] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  const double *mp[1] = {m};
  const uint64_t B = 64;
  tl_sys_in in = {12, h, 1, mp, sys, 3, q, 4, 2, {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, 17, B};
  double means[6], full[2], vals[2 * 64];
  assert_int_equal(tl_sys_means(&in, means), TL_OK);
  assert_true(means[0] == 0.25 && means[1] == 0.5 && means[2] == 0.75);
  assert_true(fabs(means[3] - 0.1) < 1e-15 && fabs(means[4] - 0.3) < 1e-15 && fabs(means[5] - 0.2) < 1e-15);
  assert_int_equal(tl_sys_values(&in, full, 0, B, vals), TL_OK);
  assert_true(fabs(full[0] - 0.5) < 1e-15);       /* ranks (1, 3, 2) vs (1, 2, 3) */
  assert_true(fabs(full[1] - 1.0 / 3) < 1e-15);   /* 2 concordant, 1 discordant */
  /* resample r by hand: question counts, then the weighted means */
  int32_t wc[4];
  for (uint64_t r = 0; r < B; r++) {
    tl_boot_counts(17, r, 4, wc);
    double xs[3], ys[3];
    int32_t one[3] = {1, 1, 1};
    for (int s = 0; s < 3; s++) {
      double num = 0, hum = 0, den = 0;
      for (int i = 0; i < 12; i++)
        if ((int)sys[i] == s) num += wc[q[i]] * m[i], hum += wc[q[i]] * h[i], den += wc[q[i]];
      xs[s] = num / den;
      ys[s] = hum / den;
    }
    tl_suff sf;
    tl_suff_reference(xs, ys, one, 3, &sf);
    double want = tl_suff_spearman(&sf);
    assert_true((isnan(want) && isnan(vals[2 * r])) || want == vals[2 * r]);
  }
  tl_boot_summary per[2];
  assert_int_equal(tl_sys_summarize(&in, full, vals, 0.9, per), TL_OK);
  assert_true(per[0].estimate == full[0] && per[0].n_defined + per[0].n_undefined == (int64_t)B);
  /* two systems: every defined value is +-1 */
  const uint32_t sys2[12] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  in.system = sys2;
  in.nsystems = 2;
  assert_int_equal(tl_sys_values(&in, full, 0, B, vals), TL_OK);
  for (uint64_t r = 0; r < 2 * B; r++) assert_true(isnan(vals[r]) || fabs(vals[r]) == 1.0);
  /* a system id out of range */
  const uint32_t bad[12] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2};
  in.system = bad;
  assert_int_equal(tl_sys_values(&in, full, 0, B, vals), TL_EINPUT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identity_clusters), cmocka_unit_test(test_duplicated_rows),
      cmocka_unit_test(test_split_invariance),  cmocka_unit_test(test_cluster_errors),
      cmocka_unit_test(test_system_level),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
