/* test_mtb_compare.c - the MT-Bench-101 comparison engine (mtb_compare.h) against the plain loop
 * it replaced, bit for bit.
 *
 * The reference below is module.c's comparison code before issue 34, verbatim in its arithmetic:
 * for every policy, group and resample, tl_boot_counts(seed, r, m) then one pass over the group's
 * dialogues computing pref with exp, W/L/T/soft/N in doubles, the CI by tl_sort_f64 and
 * tl_quantile_sorted. Table-driven cases vary the dialogue count, the groups (one group of all,
 * a partition, overlapping groups, sizes 1 and 2, an empty group), B (0, 1, 2, multiples of the
 * block of 8 and not), the score grid (integer ratings as MT-Bench-101 gives, half points,
 * continuous), the share of missing scores (0, some, all), the level, and the engine's limits:
 * the default, a cache bound that keeps no block or a few (the rest drawn per pair), a byte
 * bound of 1 or 2 on the counts (blocks with a larger count go through the plain loop), and the
 * portable kernel instead of AVX2. Three pairs a case, one by one and then in one batch
 * (tl_mtb_cmp_pairs). Every value is compared by its bits (NaN included). */
#include "testutil.h"

#include <math.h>

#include "tally/boot.h"
#include "mtb_compare.h"

/* ---- the reference: module.c before issue 34 ---- */

static void ref_win_rates(const double *sa, const double *sb, const size_t *idx, size_t m, const int32_t *w,
                          double *wr, double *sw, int64_t *cnt) {
  double W = 0, L = 0, T = 0, soft = 0, N = 0;
  int64_t miss = 0;
  for (size_t j = 0; j < m; j++) {
    size_t i = idx[j];
    double c = w ? w[j] : 1;
    if (c == 0) continue;
    if (isnan(sa[i]) || isnan(sb[i])) {
      miss++;
      continue;
    }
    double pref = 1.0 / (1.0 + exp(-0.3 * (sb[i] - sa[i])));
    if (pref < 0.5) W += c;
    else if (pref > 0.5) L += c;
    else T += c;
    soft += c * (1.0 - pref);
    N += c;
  }
  *wr = N > 0 ? (W + 0.5 * T) / N : NAN;
  *sw = N > 0 ? soft / N : NAN;
  if (cnt) {
    cnt[0] = (int64_t)W;
    cnt[1] = (int64_t)L;
    cnt[2] = (int64_t)T;
    cnt[3] = miss;
  }
}

static void ref_ci(double *v, size_t n, double level, double *lo, double *hi) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(v[i])) v[k++] = v[i];
  if (!k) {
    *lo = *hi = NAN;
    return;
  }
  tl_sort_f64(v, k);
  *lo = tl_quantile_sorted(v, k, (1 - level) / 2);
  *hi = tl_quantile_sorted(v, k, 1 - (1 - level) / 2);
}

/* res[2 * ng] as the engine lays it out. */
static void reference(size_t n, int ng, const size_t *const *gidx, const size_t *gm, uint64_t B, uint64_t seed,
                      double level, const double *sa, const double *sb, tl_mtb_cmp_res *res) {
  int32_t *w = malloc((n ? n : 1) * sizeof *w);
  double *bw = malloc((B ? B : 1) * sizeof *bw), *bs = malloc((B ? B : 1) * sizeof *bs);
  assert_non_null(w);
  assert_non_null(bw);
  assert_non_null(bs);
  for (int pol = 0; pol < 2; pol++)
    for (int g = 0; g < ng; g++) {
      tl_mtb_cmp_res *o = &res[pol * ng + g];
      size_t m = gm[g];
      const double *A = sa + (size_t)pol * n, *Bs = sb + (size_t)pol * n;
      int64_t cnt[4];
      o->m = m;
      o->wr_lo = o->wr_hi = o->sw_lo = o->sw_hi = NAN;
      ref_win_rates(A, Bs, gidx[g], m, NULL, &o->wr, &o->sw, cnt);
      o->w = cnt[0];
      o->l = cnt[1];
      o->t = cnt[2];
      o->miss = cnt[3];
      if (!m) continue;
      for (uint64_t r = 0; r < B; r++) {
        tl_boot_counts(seed, r, (uint32_t)m, w);
        ref_win_rates(A, Bs, gidx[g], m, w, &bw[r], &bs[r], NULL);
      }
      if (B) {
        ref_ci(bw, B, level, &o->wr_lo, &o->wr_hi);
        ref_ci(bs, B, level, &o->sw_lo, &o->sw_hi);
      }
    }
  free(w);
  free(bw);
  free(bs);
}

/* ---- cases ---- */

enum { G_ALL, G_PART, G_OVERLAP, G_TINY };           /* group layouts */
enum { S_INT, S_HALF, S_CONT };                      /* score grids */
enum { L_DEFAULT, L_NOCACHE, L_SOMECACHE, L_BYTE1, L_BYTE2, L_PORTABLE }; /* engine limits */

typedef struct {
  const char *name;
  size_t n;
  int layout;
  uint64_t B, seed;
  double level;
  int grid;
  double pmiss; /* share of scores missing under exclude; fail adds as many again */
  int limits;
} cmp_case;

static const cmp_case CASES[] = {
    {"mtb-like integers", 300, G_PART, 1000, 0, 0.95, S_INT, 0.02, L_DEFAULT},
    {"B not a multiple of 8", 120, G_PART, 203, 7, 0.95, S_INT, 0.05, L_DEFAULT},
    {"half points, overlap", 97, G_OVERLAP, 333, 3, 0.9, S_HALF, 0.1, L_DEFAULT},
    {"continuous scores", 64, G_ALL, 257, 11, 0.95, S_CONT, 0.0, L_DEFAULT},
    {"all missing", 40, G_PART, 64, 1, 0.95, S_INT, 1.0, L_DEFAULT},
    {"tiny groups", 9, G_TINY, 99, 5, 0.95, S_INT, 0.2, L_DEFAULT},
    {"B = 0", 50, G_PART, 0, 0, 0.95, S_INT, 0.1, L_DEFAULT},
    {"B = 1", 50, G_PART, 1, 0, 0.95, S_INT, 0.1, L_DEFAULT},
    {"B = 2", 50, G_PART, 2, 2, 0.95, S_INT, 0.1, L_DEFAULT},
    {"no block kept", 150, G_OVERLAP, 130, 9, 0.95, S_INT, 0.05, L_NOCACHE},
    {"a few blocks kept", 150, G_OVERLAP, 130, 9, 0.95, S_HALF, 0.05, L_SOMECACHE},
    {"counts over 1: plain loop", 80, G_PART, 77, 4, 0.95, S_INT, 0.05, L_BYTE1},
    {"counts over 2: some blocks", 200, G_PART, 150, 4, 0.8, S_INT, 0.05, L_BYTE2},
    {"level 0.5", 60, G_PART, 401, 8, 0.5, S_CONT, 0.1, L_DEFAULT},
    {"level 0.999", 60, G_OVERLAP, 999, 8, 0.999, S_INT, 0.1, L_DEFAULT},
    {"large groups: two code sums", 5000, G_PART, 20, 12, 0.95, S_HALF, 0.05, L_DEFAULT},
    {"portable kernel", 300, G_OVERLAP, 500, 6, 0.95, S_HALF, 0.03, L_PORTABLE},
};

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 33;
}

/* Groups of a layout over n dialogues: gi[ng][n] storage, gm[ng]. Returns ng. */
static int make_groups(int layout, size_t n, size_t *gi, size_t *gm) {
  int ng = 0;
  if (layout == G_ALL || layout == G_PART || layout == G_OVERLAP) {
    gm[0] = 0;
    for (size_t i = 0; i < n; i++) gi[gm[0]++] = i;
    ng = 1;
  }
  if (layout == G_PART || layout == G_OVERLAP) { /* 5 parts by i % 5, then (overlap) 2 by i % 2 */
    for (int p = 0; p < 5; p++, ng++) {
      gm[ng] = 0;
      for (size_t i = 0; i < n; i++)
        if ((int)(i % 5) == p) gi[(size_t)ng * n + gm[ng]++] = i;
    }
  }
  if (layout == G_OVERLAP)
    for (int p = 0; p < 2; p++, ng++) {
      gm[ng] = 0;
      for (size_t i = 0; i < n; i++)
        if ((int)(i % 2) == p) gi[(size_t)ng * n + gm[ng]++] = i;
    }
  if (layout == G_TINY) { /* sizes 1, 2, 0 (no row), then all */
    gm[0] = 1;
    gi[0] = 3;
    gm[1] = 2;
    gi[n] = 0;
    gi[n + 1] = n - 1;
    gm[2] = 0;
    gm[3] = 0;
    for (size_t i = 0; i < n; i++) gi[3 * n + gm[3]++] = i;
    ng = 4;
  }
  return ng;
}

static double score(int grid, uint64_t *s) {
  if (grid == S_INT) return (double)(1 + lcg(s) % 10);
  if (grid == S_HALF) return 1 + 0.5 * (double)(lcg(s) % 19);
  return 1 + 9 * (double)(lcg(s) % 1000003) / 1000003.0;
}

static int same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static void check_row(const cmp_case *k, int pair, int r, const tl_mtb_cmp_res *x, const tl_mtb_cmp_res *y) {
  int ok = x->m == y->m && x->w == y->w && x->l == y->l && x->t == y->t && x->miss == y->miss &&
           same_bits(x->wr, y->wr) && same_bits(x->sw, y->sw) && same_bits(x->wr_lo, y->wr_lo) &&
           same_bits(x->wr_hi, y->wr_hi) && same_bits(x->sw_lo, y->sw_lo) && same_bits(x->sw_hi, y->sw_hi);
  if (!ok)
    fail_msg("case '%s', pair %d, row %d: got m %zu W %lld wr %.17g [%.17g, %.17g] sw %.17g [%.17g, %.17g]; want m "
             "%zu W %lld wr %.17g [%.17g, %.17g] sw %.17g [%.17g, %.17g]",
             k->name, pair, r, x->m, (long long)x->w, x->wr, x->wr_lo, x->wr_hi, x->sw, x->sw_lo, x->sw_hi, y->m,
             (long long)y->w, y->wr, y->wr_lo, y->wr_hi, y->sw, y->sw_lo, y->sw_hi);
}

enum { NP = 3 }; /* pairs of a case: one by one, then all in one batch */

static void check_case(const cmp_case *k) {
  size_t n = k->n;
  size_t *gi = calloc(8 * n, sizeof *gi), gm[8];
  const size_t *gidx[8];
  double *sa[NP], *sb[NP];
  int ng = make_groups(k->layout, n, gi, gm);
  for (int g = 0; g < ng; g++) gidx[g] = gi + (size_t)g * n;
  assert_non_null(gi);
  uint64_t s = 12345 + k->seed;
  for (int q = 0; q < NP; q++) {
    sa[q] = malloc(2 * n * sizeof **sa);
    sb[q] = malloc(2 * n * sizeof **sb);
    assert_non_null(sa[q]);
    assert_non_null(sb[q]);
    for (size_t i = 0; i < n; i++) { /* policy 1 (fail) = policy 0 with more scores missing */
      double *v[2] = {sa[q], sb[q]};
      for (int x = 0; x < 2; x++) {
        double u = (double)(lcg(&s) % 1000) / 1000.0;
        v[x][i] = u < k->pmiss ? NAN : score(k->grid, &s);
        v[x][n + i] = (double)(lcg(&s) % 1000) / 1000.0 < k->pmiss ? NAN : v[x][i];
      }
    }
  }
  static tl_mtb_cmp_res want[NP][16], got[NP][16];
  for (int q = 0; q < NP; q++) reference(n, ng, gidx, gm, k->B, k->seed, k->level, sa[q], sb[q], want[q]);
  tl_mtb_cmp *c = tl_mtb_cmp_new(n, ng, gidx, gm, k->B, k->seed, k->level);
  assert_non_null(c);
  size_t per = 0; /* bytes of one block of every distinct size (an upper bound: sizes summed) */
  for (int g = 0; g < ng; g++) per += gm[g] * 8;
  if (k->limits == L_NOCACHE) tl_mtb_cmp_limits(c, 0, 255);
  if (k->limits == L_SOMECACHE) tl_mtb_cmp_limits(c, 3 * per, 255);
  if (k->limits == L_BYTE1) tl_mtb_cmp_limits(c, TL_MTB_CMP_CACHE, 1);
  if (k->limits == L_BYTE2) tl_mtb_cmp_limits(c, 4 * per, 2);
  if (k->limits == L_PORTABLE) tl_mtb_cmp_use_simd(c, 0);
  for (int q = 0; q < NP; q++) { /* one by one: the kept counts serve every pair alike */
    memset(got[q], 0xab, sizeof got[q]);
    assert_int_equal(tl_mtb_cmp_pair(c, sa[q], sb[q], got[q]), TL_OK);
    for (int r = 0; r < 2 * ng; r++) check_row(k, q, r, &got[q][r], &want[q][r]);
  }
  assert_int_equal(tl_mtb_cmp_batch(c), TL_MTB_CMP_BATCH);
  tl_mtb_cmp_res *rp[NP];
  for (int q = 0; q < NP; q++) {
    memset(got[q], 0xab, sizeof got[q]);
    rp[q] = got[q];
  }
  assert_int_equal(tl_mtb_cmp_pairs(c, NP, (const double *const *)sa, (const double *const *)sb, rp), TL_OK);
  for (int q = 0; q < NP; q++)
    for (int r = 0; r < 2 * ng; r++) check_row(k, q, r, &got[q][r], &want[q][r]);
  assert_int_equal(tl_mtb_cmp_pairs(c, TL_MTB_CMP_BATCH + 1, (const double *const *)sa, (const double *const *)sb, rp),
                   TL_EINTERNAL);
  tl_mtb_cmp_free(c);
  free(gi);
  for (int q = 0; q < NP; q++) {
    free(sa[q]);
    free(sb[q]);
  }
}

static void test_cases(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) check_case(&CASES[i]);
}

/* The byte bound is exercised: with count_max 1 nearly every block has a count of 2 (else the
 * plain-loop path would go untested). */
static void test_counts_over_bound_occur(void **state) {
  (void)state;
  int32_t w[80];
  int over = 0;
  for (uint64_t r = 0; r < 8; r++) {
    tl_boot_counts(4, r, 80, w);
    for (int j = 0; j < 80; j++) over |= w[j] > 1;
  }
  assert_true(over);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases),
      cmocka_unit_test(test_counts_over_bound_occur),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
