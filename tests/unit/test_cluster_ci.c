/* test_cluster_ci.c - tl_ccis (many headline CIs, draws made once) and tl_cluster_ci_drawn (the
 * same for integer rows) against tl_cluster_ci, bit for bit.
 *
 * Table-driven: cluster counts (2 to 2,000, so the kept counts are reused and some m > 255),
 * B (2, not a multiple of the block of 8, 1,000), values (MT-Bench-101's weighted integer
 * ratings, continuous, zeros, clusters without units, a negative or infinite value, which go to
 * tl_cluster_ci itself), levels, and the engine's limits (the default; a cache that keeps
 * nothing; one that keeps the first sizes only; a byte bound of 1 or 2 on the counts, so blocks
 * go through the plain loop; the portable kernel). Each case runs several rows through one
 * object, so rows share kept draws, and compares both bounds' bits (NaN included). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "tally/boot.h"

enum { V_RATING, V_CONT, V_ZEROS, V_HOLES, V_NEG, V_INF };

typedef struct {
  uint32_t n, B;
  int values;
  double level;
  size_t cache;   /* 0: the default */
  unsigned cmax;  /* 0: the default */
  int portable;
} cc_case;

static uint64_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return *x >> 33;
}

/* Row `row` of a case: n clusters of num, den. */
static void fill(const cc_case *c, int row, double *num, double *den) {
  uint64_t x = 1234567u + (uint64_t)row * 7919u + c->n;
  const double tden = 3.0 * c->n; /* a task's scored dialogue-seeds, as module.c weighs them */
  for (uint32_t i = 0; i < c->n; i++) {
    const uint64_t u = lcg(&x);
    den[i] = 3.0 / tden;
    switch (c->values) {
      case V_RATING: num[i] = (double)(3 + u % 28) / tden; break; /* a sum of 3 seeds' ratings 1-10 */
      case V_CONT: num[i] = (double)(u % 1000003) / 997.0; den[i] = 1.0 + (double)(u % 7); break;
      case V_ZEROS: num[i] = u % 3 ? 0.0 : 1.0; break;
      case V_HOLES: num[i] = (double)(u % 11); den[i] = u % 5 ? 2.0 : 0.0; break;
      case V_NEG: num[i] = (double)(u % 11) - (i == c->n / 2 ? 20.0 : 0.0); break;
      case V_INF: num[i] = i == 1 ? INFINITY : (double)(u % 11); break;
    }
  }
}

static int same_bits(double a, double b) {
  return !memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b));
}

static void test_cases(void **state) {
  (void)state;
  static const cc_case CASES[] = {
      {2, 1000, V_RATING, 0.95, 0, 0, 0},       {3, 7, V_RATING, 0.95, 0, 0, 0},
      {100, 1000, V_RATING, 0.95, 0, 0, 0},     {1388, 1000, V_RATING, 0.95, 0, 0, 0},
      {300, 1001, V_CONT, 0.9, 0, 0, 0},        {2000, 64, V_CONT, 0.95, 0, 0, 0},
      {257, 203, V_ZEROS, 0.95, 0, 0, 0},       {400, 120, V_HOLES, 0.5, 0, 0, 0},
      {50, 100, V_NEG, 0.95, 0, 0, 0},          {50, 100, V_INF, 0.95, 0, 0, 0},
      {100, 1000, V_RATING, 0.95, 1, 0, 0},     {300, 333, V_CONT, 0.95, 40000, 0, 0},
      {100, 1000, V_RATING, 0.95, 0, 1, 0},     {300, 100, V_CONT, 0.95, 0, 2, 0},
      {100, 1000, V_RATING, 0.95, 0, 0, 1},     {300, 1001, V_HOLES, 0.99, 0, 2, 1},
      {2, 2, V_RATING, 0.95, 0, 0, 0},          {5, 1, V_RATING, 0.95, 0, 0, 0},
      {5, 100, V_RATING, 1.0, 0, 0, 0},
  };
  int ncheck = 0;
  for (size_t ci = 0; ci < sizeof CASES / sizeof *CASES; ci++) {
    const cc_case *c = &CASES[ci];
    tl_ccis *s = tl_ccis_new(c->B, 77 + ci);
    assert_non_null(s);
    if (c->cache || c->cmax || c->portable)
      tl_ccis_limits(s, c->cache ? (c->cache == 1 ? 0 : c->cache) : TL_CCIS_CACHE, c->cmax ? c->cmax : 255,
                     !c->portable);
    double *num = malloc(c->n * sizeof *num), *den = malloc(c->n * sizeof *den);
    assert_true(num && den);
    for (int row = 0; row < 6; row++) {
      /* rows of the same size and of smaller ones (clusters left out), as a summary asks */
      const uint32_t n = row % 3 == 2 && c->n > 8 ? c->n - 1 - (uint32_t)row : c->n;
      fill(c, row, num, den);
      double lo, hi, rlo, rhi;
      assert_int_equal(tl_ccis_row(s, num, den, n, c->level, &lo, &hi), TL_OK);
      assert_int_equal(tl_cluster_ci(num, den, n, c->B, 77 + ci, c->level, &rlo, &rhi), TL_OK);
      if (!same_bits(lo, rlo) || !same_bits(hi, rhi))
        fail_msg("case %zu row %d (n %u B %u): [%.17g, %.17g] against tl_cluster_ci's [%.17g, %.17g]", ci, row, n,
                 c->B, lo, hi, rlo, rhi);
      ncheck += !isnan(rlo);
    }
    free(num);
    free(den);
    tl_ccis_free(s);
  }
  assert_true(ncheck > 80); /* the cases compare defined bounds, not only NaN */
}

/* tl_cluster_ci_drawn (integer rows, the draws kept as bytes or as int32) against
 * tl_cluster_ci: rows with one den for every cluster (the 32-bit path) and with several (the
 * 64-bit path), sizes shared by rows, and clusters without units (tl_cluster_ci's path). */
static void test_drawn(void **state) {
  (void)state;
  static const unsigned BYTE_MAX[] = {255, 2, 1};
  static const uint32_t SIZES[] = {2, 9, 300, 300, 1500, 9};
  int ncheck = 0;
  for (size_t bi = 0; bi < sizeof BYTE_MAX / sizeof *BYTE_MAX; bi++)
    for (int dens = 0; dens < 3; dens++) {
      tl_cluster_draws *d = tl_cluster_draws_new(203, 5 + bi);
      assert_non_null(d);
      tl_cluster_draws_byte_max(d, BYTE_MAX[bi]);
      for (size_t si = 0; si < sizeof SIZES / sizeof *SIZES; si++) {
        const uint32_t n = SIZES[si];
        int64_t *num = malloc(n * sizeof *num), *den = malloc(n * sizeof *den);
        double *fn = malloc(2 * n * sizeof *fn);
        assert_true(num && den && fn);
        uint64_t x = 99 + si + 7 * (uint64_t)dens;
        for (uint32_t i = 0; i < n; i++) {
          den[i] = dens == 0 ? 3 : dens == 1 ? 1 + (int64_t)(lcg(&x) % 3) : (i % 7 ? 3 : 0);
          num[i] = (int64_t)(lcg(&x) % (uint64_t)(den[i] + 1));
          fn[i] = (double)num[i], fn[n + i] = (double)den[i];
        }
        double lo, hi, rlo, rhi;
        assert_int_equal(tl_cluster_ci_drawn(d, num, den, n, 0.95, &lo, &hi), TL_OK);
        assert_int_equal(tl_cluster_ci(fn, fn + n, n, 203, 5 + bi, 0.95, &rlo, &rhi), TL_OK);
        if (!same_bits(lo, rlo) || !same_bits(hi, rhi))
          fail_msg("byte max %u, dens %d, n %u: [%.17g, %.17g] against [%.17g, %.17g]", BYTE_MAX[bi], dens, n, lo, hi,
                   rlo, rhi);
        ncheck += !isnan(rlo);
        free(num), free(den), free(fn);
      }
      tl_cluster_draws_free(d);
    }
  assert_true(ncheck >= 3 * 3 * 5); /* every row but the two-cluster one with a cluster left out */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cases), cmocka_unit_test(test_drawn)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
