/* test_boot_shapes.c - the fused one-pass sweep of wide metrics (boot.c suff_x_gen) and the spill
 * of wrapped uint8 counts, on every shape of data the correlation benchmark times: each checked
 * against the literal definition (tl_suff_reference) and the scalar Fenwick sweep, bit for bit.
 *  - test_gen_sweep: random cell tables (ties in x across human levels, 1 to 8 human levels,
 *    weights past 255 as the spill carries them) through tl_boot_cells_suff(AVX2_GEN);
 *  - test_study_shapes: table-driven studies (clipped soft score with heavy 0/1 cells, sparse
 *    ties, all discrete with and without the joint table, 2 to 12 human levels, a cell drawn
 *    thousands of times): every value of
 *    tl_study_resamples equals tl_suff_reference on tl_boot_counts' weights, with the fast paths
 *    on and off. */
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
static double rnd01(uint64_t *st) { return (double)(rnd(st) >> 11) * 0x1.0p-53; }

static int suff_equal(const tl_suff *a, const tl_suff *b) {
  return a->N == b->N && a->sab == b->sab && a->saa == b->saa && a->sbb == b->sbb && a->xtie == b->xtie &&
         a->ytie == b->ytie && a->ntie == b->ntie && a->dis == b->dis && a->n0 == b->n0 && a->mx == b->mx &&
         a->my == b->my;
}

/* Random cell tables sorted by (x, y): nx x levels, each holding 1..Ly cells (P(several) = pm),
 * weights in [0, wmax] (some 0). Compared: AVX2_GEN, SCALAR and the reference on the expanded
 * items (x = x level, y = y level, weight = cell weight). */
static void test_gen_sweep(void **state) {
  (void)state;
  if (!tl_boot_have_avx2()) skip();
  static const struct {
    uint32_t nx, Ly, wmax;
    double pm;
  } T[] = {{1, 1, 3, 0}, {5, 2, 4, 0.5}, {40, 3, 6, 0.1}, {40, 3, 6, 1.0}, {33, 4, 9, 0.3},
           {50, 5, 5, 0.2}, {17, 6, 7, 0.6}, {64, 7, 3, 0.4}, {29, 8, 8, 0.5}, {9, 3, 700, 0.5},
           {12, 5, 1500, 0.7}, {3, 8, 300, 1.0}, {100, 3, 2, 0.02}};
  uint64_t st = 11;
  for (size_t t = 0; t < sizeof T / sizeof *T; t++)
    for (int rep = 0; rep < 6; rep++) {
      const uint32_t cap = T[t].nx * T[t].Ly;
      uint32_t *xl = malloc(cap * sizeof *xl), *yl = malloc(cap * sizeof *yl), nc = 0;
      int32_t *cw = malloc(cap * sizeof *cw);
      for (uint32_t x = 0; x < T[t].nx; x++) {
        const int several = rnd01(&st) < T[t].pm;
        for (uint32_t y = 0; y < T[t].Ly; y++) {
          if (several ? rnd01(&st) < 0.3 : y != rnd(&st) % T[t].Ly) continue;
          xl[nc] = x;
          yl[nc] = y;
          cw[nc] = (int32_t)(rnd(&st) % (T[t].wmax + 1));
          nc++;
        }
      }
      if (nc == 0) {
        xl[0] = 0, yl[0] = 0, cw[0] = 1;
        nc = 1;
      }
      tl_suff a, b, ref;
      assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, T[t].Ly, TL_BOOT_IMPL_SCALAR, &a), 0);
      assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, T[t].Ly, TL_BOOT_IMPL_AVX2_GEN, &b), 0);
      assert_true(suff_equal(&a, &b));
      int64_t N = 0;
      for (uint32_t q = 0; q < nc; q++) N += cw[q];
      if (N <= 4000) {
        double *x = malloc(nc * sizeof *x), *y = malloc(nc * sizeof *y);
        for (uint32_t q = 0; q < nc; q++) x[q] = xl[q], y[q] = yl[q];
        tl_suff_reference(x, y, cw, nc, &ref);
        assert_true(suff_equal(&ref, &b));
        free(x);
        free(y);
      }
      free(xl);
      free(yl);
      free(cw);
    }
  /* 9 human levels: outside the pass */
  uint32_t xl[2] = {0, 1}, yl[2] = {0, 8};
  int32_t cw[2] = {1, 1};
  tl_suff s;
  assert_int_equal(tl_boot_cells_suff(xl, yl, cw, 2, 9, TL_BOOT_IMPL_AVX2_GEN, &s), -1);
}

/* One column of a study shape. */
enum { COL_CONT, COL_CLIP, COL_SPARSE, COL_DISC, COL_DISC40, COL_HEAVY };
static void column(double *v, const double *h, uint32_t n, int kind, uint64_t *st) {
  for (uint32_t i = 0; i < n; i++) {
    const double z = h[i] + 0.6 * (rnd01(st) + rnd01(st) + rnd01(st) - 1.5);
    switch (kind) {
      case COL_CONT: v[i] = z; break;
      case COL_CLIP: v[i] = z < 0 ? 0 : z > 1 ? 1 : z; break;        /* heavy 0 and 1 cells */
      case COL_SPARSE: v[i] = i % 50 == 7 ? v[i - 3] : z; break;      /* ties of 2 across levels */
      case COL_DISC: v[i] = floor(z * 4); break;                      /* a few levels */
      case COL_DISC40: v[i] = floor(z * 40); break;                   /* ~100 levels */
      default: v[i] = i % 2 ? 0.5 : z; break;                         /* one cell of n/2 items */
    }
  }
}

static void test_study_shapes(void **state) {
  (void)state;
  static const struct {
    const char *name;
    uint32_t n, Ly;
    int cols[3];
  } T[] = {{"clipped", 3000, 3, {COL_CLIP, COL_CONT, COL_DISC}},
           {"sparse", 3000, 3, {COL_SPARSE, COL_DISC, COL_DISC}},
           {"discrete", 2000, 3, {COL_DISC, COL_DISC, COL_DISC}},
           {"h5", 3000, 5, {COL_CLIP, COL_SPARSE, COL_DISC}},
           {"h8", 3000, 8, {COL_CLIP, COL_CONT, COL_DISC}},
           {"heavy", 3000, 4, {COL_HEAVY, COL_CLIP, COL_CONT}},
           {"h2", 2500, 2, {COL_CLIP, COL_SPARSE, COL_HEAVY}},
           {"h12", 2500, 12, {COL_CLIP, COL_CONT, COL_DISC}},
           {"discrete, joint table too large: own tables", 12000, 3, {COL_DISC40, COL_DISC40, COL_DISC40}}};
  const uint64_t B = 6;
  uint64_t st = 3;
  for (size_t t = 0; t < sizeof T / sizeof *T; t++) {
    const uint32_t n = T[t].n;
    double *h = malloc(n * sizeof *h), *col[3];
    for (uint32_t i = 0; i < n; i++) h[i] = (double)(rnd(&st) % T[t].Ly) / (T[t].Ly - 1);
    for (int k = 0; k < 3; k++) {
      col[k] = malloc(n * sizeof *col[k]);
      column(col[k], h, n, T[t].cols[k], &st);
    }
    const double *mp[3] = {col[0], col[1], col[2]};
    tl_study_in in = {.n = n, .human = h, .nmetrics = 3, .metric = mp, .nstats = 2,
                      .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = 7 + t, .B = B};
    tl_study *s = NULL;
    assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
    double v[6 * 6], vs[6 * 6];
    assert_int_equal(tl_study_resamples(s, 0, B, v), TL_OK);
    tl_study_set_simd(s, 0);
    assert_int_equal(tl_study_resamples(s, 0, B, vs), TL_OK);
    assert_memory_equal(v, vs, sizeof v);
    int32_t *w = malloc(n * sizeof *w);
    for (uint64_t r = 0; r < B; r++) {
      tl_boot_counts(in.seed, r, n, w);
      for (int k = 0; k < 3; k++) {
        tl_suff ref;
        tl_suff_reference(col[k], h, w, n, &ref);
        const double rho = tl_suff_spearman(&ref), tau = tl_suff_kendall_b(&ref);
        if (memcmp(&rho, &v[r * 6 + 2 * k], sizeof rho) || memcmp(&tau, &v[r * 6 + 2 * k + 1], sizeof tau))
          fail_msg("shape %s, resample %llu, metric %d: %.17g %.17g vs reference %.17g %.17g", T[t].name,
                   (unsigned long long)r, k, v[r * 6 + 2 * k], v[r * 6 + 2 * k + 1], rho, tau);
      }
    }
    free(w);
    tl_study_free(s);
    free(h);
    for (int k = 0; k < 3; k++) free(col[k]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_gen_sweep), cmocka_unit_test(test_study_shapes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
