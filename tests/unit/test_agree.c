/* test_agree.c - agreement statistics (include/tally/agree.h), table-driven:
 *  1. Cohen's kappa (unweighted, linear, quadratic) against scikit-learn 1.2.1 (Debian 12's
 *     python3-sklearn), values written here from /usr/bin/python3 (the line is in each comment);
 *     tests/e2e/test_agree_sklearn.sh compares random cases at run time;
 *  2. published worked examples: Krippendorff (2011) "Computing Krippendorff's Alpha-
 *     Reliability" section A (two coders, binary: alpha = 0.095) and section E (4 coders, 12
 *     units, missing values: nominal 0.743, ordinal 0.815, interval 0.849); Scott's pi from the
 *     worked example of Wikipedia's "Scott's pi" article (3 categories, 45 items);
 *     Wilson intervals from Newcombe (1998) Table II (method 3); the MT-Bench agreement with and
 *     without ties counted by hand;
 *  3. Jeffreys intervals against scipy 1.10.1's beta.ppf; Holm and Benjamini-Hochberg against
 *     their published definitions computed by brute force (Debian 12's scipy 1.10.1 has no
 *     false_discovery_control, added in 1.11) and the example of Benjamini & Hochberg (1995);
 *  4. the bootstrap: the percentile CI of raw agreement recomputed from tl_boot_counts, cluster
 *     resampling of duplicated items equal to item resampling of the originals, NaN where
 *     undefined, and the input errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tally/agree.h"
#include "tally/boot.h"

#define CLOSE(got, want, tol) assert_true(fabs((got) - (want)) <= (tol) * fmax(1.0, fabs(want)))

/* ---- 1. kappa vs scikit-learn ---- */
typedef struct {
  const char *name;
  int n;
  double x[16], y[16];
  double kappa, lin, quad; /* sklearn cohen_kappa_score(x, y, weights=None/'linear'/'quadratic') */
} kappa_case;

static const kappa_case KAPPA[] = {
    /* python3 -c "from sklearn.metrics import cohen_kappa_score as k; a=[1,2,3,3,2,1,3,3,1,2,3,1];
       b=[1,3,3,3,2,1,2,3,1,1,3,2]; print([repr(k(a,b,weights=w)) for w in (None,'linear','quadratic')])" */
    {"lave 1-3", 12, {1, 2, 3, 3, 2, 1, 3, 3, 1, 2, 3, 1}, {1, 3, 3, 3, 2, 1, 2, 3, 1, 1, 3, 2},
     0.48936170212765961, 0.64179104477611948, 0.77570093457943923},
    /* a=[1,5,7,10,3,8,8,9,2,6,4,10,7]; b=[2,5,6,9,3,8,7,10,1,6,5,8,7] (labels 4 and 9 one-sided) */
    {"mtbench101 1-10", 13, {1, 5, 7, 10, 3, 8, 8, 9, 2, 6, 4, 10, 7}, {2, 5, 6, 9, 3, 8, 7, 10, 1, 6, 5, 8, 7},
     0.31125827814569529, 0.77714285714285714, 0.94309590131317145},
    /* a=[-1,0,1,1,-1,0,1,-1,-1,1]; b=[-1,1,1,0,-1,0,1,1,-1,1] */
    {"preference", 10, {-1, 0, 1, 1, -1, 0, 1, -1, -1, 1}, {-1, 1, 1, 0, -1, 0, 1, 1, -1, 1},
     0.53125, 0.58333333333333326, 0.625},
    /* weights from the category index, not the value: sklearn on a=[0,1,2,2,1,0,2,1];
       b=[0,2,2,1,1,0,2,0] (the indices of 0, 0.5, 1) */
    {"index weights", 8, {0, 0.5, 1, 1, 0.5, 0, 1, 0.5}, {0, 1, 1, 0.5, 0.5, 0, 1, 0},
     0.44186046511627908, 0.5862068965517242, 0.72727272727272729},
    /* a=[1,1,2,2,1]; b=[1,2,2,2,1] (two categories: the three kappas are equal) */
    {"two categories", 5, {1, 1, 2, 2, 1}, {1, 2, 2, 2, 1}, 0.61538461538461542, 0.61538461538461542,
     0.61538461538461542},
};

static void test_kappa_sklearn(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof KAPPA / sizeof *KAPPA; c++) {
    const kappa_case *k = &KAPPA[c];
    tl_agree_data d;
    tl_err err = {{0}};
    assert_int_equal(tl_agree_prepare(k->x, k->y, (uint32_t)k->n, &d, &err), TL_OK);
    tl_agree_res r;
    assert_int_equal(tl_agree_boot(&d, NULL, 0, TL_KRIPP_NOMINAL, 0, 0, 0.95, &r, &err), TL_OK);
    print_message("%-16s kappa %.17g lin %.17g quad %.17g\n", k->name, r.s[TL_AG_KAPPA].estimate,
                  r.s[TL_AG_KAPPA_LINEAR].estimate, r.s[TL_AG_KAPPA_QUAD].estimate);
    CLOSE(r.s[TL_AG_KAPPA].estimate, k->kappa, 1e-12);
    CLOSE(r.s[TL_AG_KAPPA_LINEAR].estimate, k->lin, 1e-12);
    CLOSE(r.s[TL_AG_KAPPA_QUAD].estimate, k->quad, 1e-12);
    assert_true(isnan(r.s[TL_AG_KAPPA].ci_lo)); /* B = 0: no CI */
    tl_agree_res_release(&r);
    tl_agree_release(&d);
  }
}

/* ---- 2. published examples ---- */

/* MT-Bench (Zheng et al. 2023, sec. 4.2): with ties = share equal over all items; without ties =
 * over the items where neither says tie. The preference case above by hand: 7 of 10 equal;
 * without the items 1, 3, 5 (a tie on either side), 6 of 7. */
static void test_mtbench_ties(void **state) {
  (void)state;
  const kappa_case *k = &KAPPA[2];
  tl_agree_data d;
  tl_err err = {{0}};
  assert_int_equal(tl_agree_prepare(k->x, k->y, (uint32_t)k->n, &d, &err), TL_OK);
  assert_int_equal(d.tie, 1);
  tl_agree_res r;
  assert_int_equal(tl_agree_boot(&d, NULL, 0, TL_KRIPP_NOMINAL, 0, 0, 0.95, &r, &err), TL_OK);
  CLOSE(r.s[TL_AG_RAW].estimate, 0.7, 1e-15);
  CLOSE(r.s[TL_AG_RAW_NO_TIES].estimate, 6.0 / 7.0, 1e-15);
  assert_int_equal(r.agree, 7);
  assert_int_equal(r.n, 10);
  assert_int_equal(r.agree_nt, 6);
  assert_int_equal(r.n_nt, 7);
  tl_agree_res_release(&r);
  tl_agree_release(&d);
  /* ratings that are no preference (a value outside {-1, 0, 1}): no tie category, NaN */
  const kappa_case *l = &KAPPA[0];
  assert_int_equal(tl_agree_prepare(l->x, l->y, (uint32_t)l->n, &d, &err), TL_OK);
  assert_int_equal(d.tie, -1);
  assert_int_equal(tl_agree_boot(&d, NULL, 0, TL_KRIPP_NOMINAL, 0, 0, 0.95, &r, &err), TL_OK);
  assert_true(isnan(r.s[TL_AG_RAW_NO_TIES].estimate));
  CLOSE(r.s[TL_AG_RAW].estimate, 8.0 / 12.0, 1e-15); /* by hand: 8 of the 12 equal */
  tl_agree_res_release(&r);
  tl_agree_release(&d);
}

/* Krippendorff 2011 section A: two observers, ten units, binary; alpha = 0.095 (exactly
 * 1 - 19 * 8 / 168 = 16/168). Section E through tl_agree_alpha_coders: the exact values of
 * test_stats.c's test_kripp_alpha (from the same matrix). */
static void test_kripp_examples(void **state) {
  (void)state;
  const double A[10] = {0, 1, 0, 0, 0, 0, 0, 0, 1, 0}, Bv[10] = {1, 1, 1, 0, 0, 1, 0, 0, 0, 0};
  tl_agree_data d;
  tl_err err = {{0}};
  assert_int_equal(tl_agree_prepare(A, Bv, 10, &d, &err), TL_OK);
  tl_agree_res r;
  assert_int_equal(tl_agree_boot(&d, NULL, 0, TL_KRIPP_NOMINAL, 0, 0, 0.95, &r, &err), TL_OK);
  CLOSE(r.s[TL_AG_ALPHA].estimate, 16.0 / 168.0, 1e-15);
  assert_true(fabs(r.s[TL_AG_ALPHA].estimate - 0.095) < 5e-4);
  tl_agree_res_release(&r);
  tl_agree_release(&d);

  const double N = NAN;
  const double votes[12 * 4] = {/* units x coders A, B, C, D */
                                1, 1, N, 1, 2, 2, 3, 2, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 2, 3, 4,
                                4, 4, 4, 4, 1, 1, 2, 1, 2, 2, 2, 2, N, 5, 5, 5, N, N, 1, 1, N, 3, N, N};
  static const struct { tl_kripp_metric m; double want; } K[] = {
      {TL_KRIPP_NOMINAL, 0.743421052631579}, {TL_KRIPP_ORDINAL, 0.8153875037548813},
      {TL_KRIPP_INTERVAL, 0.8491071428571428}};
  for (int i = 0; i < 3; i++) {
    tl_agree_ci ci;
    assert_int_equal(tl_agree_alpha_coders(votes, 12, 4, NULL, 0, K[i].m, 50, 7, 0.9, &ci, &err), TL_OK);
    CLOSE(ci.estimate, K[i].want, 1e-12);
    assert_true(ci.ci_lo <= ci.ci_hi);
  }
}

/* Wikipedia, "Scott's pi", worked example: rows = annotator 1, 3 categories, 45 items;
 * the article's joint proportions 0.2, 0.333, 0.467 give Pr(e) = (18^2 + 30^2 + 42^2) / 90^2 =
 * 2988/8100; Pr(a) = 15/45; pi = (Pr(a) - Pr(e)) / (1 - Pr(e)) = -288/5112 = -0.0563. */
static void test_scott_pi(void **state) {
  (void)state;
  const double C[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, cats[3] = {0, 1, 2};
  double out[TL_AG__N];
  tl_agree_stats(C, 3, cats, -1, TL_KRIPP_NOMINAL, out);
  CLOSE(out[TL_AG_SCOTT_PI], -288.0 / 5112.0, 1e-15);
  CLOSE(out[TL_AG_RAW], 1.0 / 3.0, 1e-15);
}

/* Newcombe (1998) Table II, method 3 (Wilson score, no continuity correction), 4 decimals; the
 * 17-digit values from the formula in /usr/bin/python3. Jeffreys: scipy 1.10.1
 * beta.ppf(0.025 / 0.975, k + .5, n - k + .5). */
static void test_proportion_intervals(void **state) {
  (void)state;
  static const struct { int64_t k, n; double w_lo, w_hi, j_lo, j_hi; } P[] = {
      {81, 263, 0.25528851987827422, 0.36620957698280004, 0.2545219349910236, 0.36564749917408229},
      {15, 148, 0.06238639953073629, 0.16048724172330803, 0.060448517009296418, 0.15764314347874112},
      {0, 20, 0, 0.16112515805281938, 0 /* k = 0: 0 by convention */, 0.11663898290487539},
      {1, 29, 0.0061132142927626809, 0.17175521879320282, 0.0037461736490570731, 0.15007768600223173},
      {29, 29, 0.88303020150025924, 1, 0.9177135170761761, 1 /* k = n: 1 */},
  };
  static const double NEWCOMBE[4][2] = {{0.2553, 0.3662}, {0.0624, 0.1605}, {0.0000, 0.1611}, {0.0061, 0.1718}};
  for (size_t i = 0; i < sizeof P / sizeof *P; i++) {
    double lo, hi;
    tl_wilson(P[i].k, P[i].n, 0.95, &lo, &hi);
    CLOSE(lo, P[i].w_lo, 1e-13);
    CLOSE(hi, P[i].w_hi, 1e-13);
    if (i < 4) {
      assert_true(fabs(lo - NEWCOMBE[i][0]) < 5e-5);
      assert_true(fabs(hi - NEWCOMBE[i][1]) < 5e-5);
    }
    tl_jeffreys(P[i].k, P[i].n, 0.95, &lo, &hi);
    CLOSE(lo, P[i].j_lo, 1e-11);
    CLOSE(hi, P[i].j_hi, 1e-11);
  }
  double lo, hi;
  tl_wilson(0, 0, 0.95, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
  tl_jeffreys(0, 0, 0.95, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
}

/* ---- 3. multiple comparisons ---- */

/* The published definitions, brute force over ranks (1-based, ties by input order): Holm
 * adj_(j) = max_{l <= j} min(1, (m - l + 1) p_(l)); BH adj_(j) = min_{l >= j} min(1, m p_(l) / l). */
static void brute(const double *p, size_t n, double *holm, double *bh) {
  size_t m = 0, rank[32];
  for (size_t i = 0; i < n; i++) m += !isnan(p[i]);
  for (size_t i = 0; i < n; i++) {
    rank[i] = 0;
    if (isnan(p[i])) continue;
    for (size_t j = 0; j < n; j++)
      if (!isnan(p[j]) && (p[j] < p[i] || (p[j] == p[i] && j <= i))) rank[i]++;
  }
  for (size_t i = 0; i < n; i++) {
    holm[i] = bh[i] = NAN;
    if (isnan(p[i])) continue;
    double h = 0, b = 1;
    for (size_t j = 0; j < n; j++) {
      if (isnan(p[j])) continue;
      if (rank[j] <= rank[i]) h = fmax(h, fmin(1, (double)(m - rank[j] + 1) * p[j]));
      if (rank[j] >= rank[i]) b = fmin(b, fmin(1, (double)m * p[j] / (double)rank[j]));
    }
    holm[i] = h;
    bh[i] = b;
  }
}

static void test_holm_bh(void **state) {
  (void)state;
  /* Benjamini & Hochberg (1995) section 3.2: 15 p-values; at q = 0.05 BH rejects 4, the
   * Bonferroni-type (Holm) procedure 3. */
  static const double BH95[15] = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                                  0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000};
  double holm[32], bh[32], wh[32], wb[32];
  tl_p_holm(BH95, 15, holm);
  tl_p_bh(BH95, 15, bh);
  int nh = 0, nb = 0;
  for (int i = 0; i < 15; i++) {
    nh += holm[i] <= 0.05;
    nb += bh[i] <= 0.05;
  }
  assert_int_equal(nh, 3);
  assert_int_equal(nb, 4);
  static const struct { size_t n; double p[12]; } CASES[] = {
      {15, {0}}, /* filled from BH95 below */
      {6, {0.04, 0.01, NAN, 0.03, 0.04, 0.9}},
      {5, {0.5, 0.5, 0.5, 0.5, 0.5}},
      {4, {0.3, 0.001, 0.02, 0.2}},
      {1, {NAN}},
      {3, {0.02, 0.6, 0.01}},
  };
  for (size_t c = 0; c < sizeof CASES / sizeof *CASES; c++) {
    const double *p = c == 0 ? BH95 : CASES[c].p;
    size_t n = CASES[c].n;
    tl_p_holm(p, n, holm);
    tl_p_bh(p, n, bh);
    brute(p, n, wh, wb);
    for (size_t i = 0; i < n; i++) {
      if (isnan(wh[i])) {
        assert_true(isnan(holm[i]) && isnan(bh[i]));
        continue;
      }
      CLOSE(holm[i], wh[i], 1e-15);
      CLOSE(bh[i], wb[i], 1e-15);
      assert_true(holm[i] <= 1 && bh[i] <= 1 && holm[i] >= p[i] && bh[i] >= p[i]);
    }
  }
  /* in place (adj == p) */
  double q[4] = {0.3, 0.001, 0.02, 0.2};
  tl_p_bh(q, 4, q);
  brute((const double[]){0.3, 0.001, 0.02, 0.2}, 4, wh, wb);
  for (int i = 0; i < 4; i++) CLOSE(q[i], wb[i], 1e-15);
}

/* MDE = (z_0.975 + z_0.8) sd / sqrt(n): z values from scipy norm.ppf. */
static void test_mde(void **state) {
  (void)state;
  const double diff[5] = {1, 2, 3, 4, 5}; /* sd = sqrt(2.5) */
  const double z = 1.959963984540054 + 0.8416212335729143;
  CLOSE(tl_mde_paired(diff, 5, 0.05, 0.8), z * sqrt(2.5) / sqrt(5.0), 1e-14);
  CLOSE(tl_mde_from_se(0.1, 0.05, 0.8), z * 0.1, 1e-14);
  assert_true(isnan(tl_mde_paired(diff, 1, 0.05, 0.8)));
}

/* ---- 4. the bootstrap ---- */

/* The percentile CI of raw agreement over B resamples, recomputed here from tl_boot_counts. */
static void test_boot_raw_reference(void **state) {
  (void)state;
  const kappa_case *k = &KAPPA[1];
  const uint64_t B = 300, seed = 42;
  tl_agree_data d;
  tl_err err = {{0}};
  assert_int_equal(tl_agree_prepare(k->x, k->y, (uint32_t)k->n, &d, &err), TL_OK);
  tl_agree_res r, r2;
  assert_int_equal(tl_agree_boot(&d, NULL, 0, TL_KRIPP_ORDINAL, B, seed, 0.9, &r, &err), TL_OK);
  double v[300];
  int32_t w[16];
  for (uint64_t b = 0; b < B; b++) {
    tl_boot_counts(seed, b, (uint32_t)k->n, w);
    double eq = 0, all = 0;
    for (int i = 0; i < k->n; i++) {
      all += w[i];
      if (k->x[i] == k->y[i]) eq += w[i];
    }
    v[b] = eq / all;
  }
  tl_sort_f64(v, B);
  assert_true(r.s[TL_AG_RAW].ci_lo == tl_quantile_sorted(v, B, 0.05));
  assert_true(r.s[TL_AG_RAW].ci_hi == tl_quantile_sorted(v, B, 0.95));
  assert_true(r.s[TL_AG_RAW].ci_lo < r.s[TL_AG_RAW].ci_hi);
  /* the same call gives the same bits; each item its own cluster = item resampling */
  uint32_t cl[16];
  for (uint32_t i = 0; i < 16; i++) cl[i] = i;
  assert_int_equal(tl_agree_boot(&d, cl, (uint32_t)k->n, TL_KRIPP_ORDINAL, B, seed, 0.9, &r2, &err), TL_OK);
  assert_memory_equal(r.s, r2.s, sizeof r.s);
  tl_agree_res_release(&r2);
  tl_agree_res_release(&r);
  tl_agree_release(&d);
}

/* Every item twice, the two copies one cluster: the cluster bootstrap draws the same weights
 * (doubled) as the item bootstrap of the originals, and raw agreement, kappa and pi are
 * invariant to a common factor, so their CIs are equal. Item resampling of the doubled data
 * (copies independent) gives narrower CIs. */
static void test_boot_clusters(void **state) {
  (void)state;
  const kappa_case *k = &KAPPA[0];
  const int n = k->n;
  double x2[32], y2[32];
  uint32_t cl[32];
  for (int i = 0; i < n; i++) {
    x2[2 * i] = x2[2 * i + 1] = k->x[i];
    y2[2 * i] = y2[2 * i + 1] = k->y[i];
    cl[2 * i] = cl[2 * i + 1] = (uint32_t)i;
  }
  tl_agree_data d1, d2;
  tl_err err = {{0}};
  assert_int_equal(tl_agree_prepare(k->x, k->y, (uint32_t)n, &d1, &err), TL_OK);
  assert_int_equal(tl_agree_prepare(x2, y2, (uint32_t)(2 * n), &d2, &err), TL_OK);
  tl_agree_res r1, rc, ri;
  assert_int_equal(tl_agree_boot(&d1, NULL, 0, TL_KRIPP_ORDINAL, 500, 3, 0.95, &r1, &err), TL_OK);
  assert_int_equal(tl_agree_boot(&d2, cl, (uint32_t)n, TL_KRIPP_ORDINAL, 500, 3, 0.95, &rc, &err), TL_OK);
  assert_int_equal(tl_agree_boot(&d2, NULL, 0, TL_KRIPP_ORDINAL, 500, 3, 0.95, &ri, &err), TL_OK);
  static const tl_agree_stat S[] = {TL_AG_RAW, TL_AG_KAPPA, TL_AG_KAPPA_QUAD, TL_AG_SCOTT_PI};
  for (size_t s = 0; s < 4; s++) {
    CLOSE(rc.s[S[s]].ci_lo, r1.s[S[s]].ci_lo, 1e-14);
    CLOSE(rc.s[S[s]].ci_hi, r1.s[S[s]].ci_hi, 1e-14);
  }
  assert_true(ri.s[TL_AG_KAPPA].ci_hi - ri.s[TL_AG_KAPPA].ci_lo < rc.s[TL_AG_KAPPA].ci_hi - rc.s[TL_AG_KAPPA].ci_lo);
  uint32_t bad[32];
  memcpy(bad, cl, sizeof bad);
  bad[5] = (uint32_t)n; /* out of range */
  tl_agree_res rb;
  assert_int_equal(tl_agree_boot(&d2, bad, (uint32_t)n, TL_KRIPP_ORDINAL, 10, 3, 0.95, &rb, &err), TL_EINPUT);
  tl_agree_res_release(&r1);
  tl_agree_res_release(&rc);
  tl_agree_res_release(&ri);
  tl_agree_release(&d1);
  tl_agree_release(&d2);
}

/* Undefined statistics are NaN, never 0; bad inputs are errors. */
static void test_undefined_and_errors(void **state) {
  (void)state;
  const double one[4] = {2, 2, 2, 2};
  tl_agree_data d;
  tl_err err = {{0}};
  assert_int_equal(tl_agree_prepare(one, one, 4, &d, &err), TL_OK);
  tl_agree_res r;
  assert_int_equal(tl_agree_boot(&d, NULL, 0, TL_KRIPP_NOMINAL, 20, 1, 0.95, &r, &err), TL_OK);
  CLOSE(r.s[TL_AG_RAW].estimate, 1.0, 0);
  assert_true(isnan(r.s[TL_AG_KAPPA].estimate) && isnan(r.s[TL_AG_SCOTT_PI].estimate) &&
              isnan(r.s[TL_AG_ALPHA].estimate));
  assert_int_equal(r.s[TL_AG_KAPPA].n_undefined, 20);
  /* raw agreement 1: the bootstrap CI has zero width, the Wilson interval does not */
  assert_true(r.s[TL_AG_RAW].ci_lo == 1 && r.s[TL_AG_RAW].ci_hi == 1);
  assert_true(r.wilson_lo < 0.6 && r.wilson_hi == 1 && r.jeffreys_lo < 0.7);
  tl_agree_res_release(&r);
  tl_agree_release(&d);
  double many[70], nanv[2] = {1, NAN};
  for (int i = 0; i < 70; i++) many[i] = i;
  assert_int_equal(tl_agree_prepare(many, many, 70, &d, &err), TL_EINPUT);
  assert_int_equal(tl_agree_prepare(nanv, nanv, 2, &d, &err), TL_EINPUT);
  assert_int_equal(tl_agree_prepare(many, many, 0, &d, &err), TL_EINPUT);
}

/* tl_wilson_p (a mean over n items): the integer form at p = k / n; the closed form at p = 0
 * (upper bound z^2 / (n + z^2): 0.6576 for n = 2) and p = 1; NaN for n = 0. */
static void test_wilson_mean(void **state) {
  (void)state;
  for (int64_t n = 1; n <= 40; n += 3)
    for (int64_t k = 0; k <= n; k++) {
      double a, b, c, d;
      tl_wilson(k, n, 0.95, &a, &b);
      tl_wilson_p((double)k / (double)n, (double)n, 0.95, &c, &d);
      assert_true(fabs(a - c) < 1e-12 && fabs(b - d) < 1e-12);
    }
  double lo, hi, z = tl_norm_ppf(0.975);
  tl_wilson_p(0, 2, 0.95, &lo, &hi);
  assert_true(lo == 0 && fabs(hi - z * z / (2 + z * z)) < 1e-12 && fabs(hi - 0.6576) < 1e-4);
  tl_wilson_p(1, 2, 0.95, &lo, &hi);
  assert_true(hi == 1 && fabs(lo - 2 / (2 + z * z)) < 1e-12);
  tl_wilson_p(0.5, 0, 0.95, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kappa_sklearn),        cmocka_unit_test(test_mtbench_ties),
      cmocka_unit_test(test_kripp_examples),       cmocka_unit_test(test_scott_pi),
      cmocka_unit_test(test_proportion_intervals), cmocka_unit_test(test_holm_bh),
      cmocka_unit_test(test_wilson_mean),
      cmocka_unit_test(test_mde),                  cmocka_unit_test(test_boot_raw_reference),
      cmocka_unit_test(test_boot_clusters),        cmocka_unit_test(test_undefined_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
