/* test_workshare.c - the ranks' work share of a tables hook (tally/workshare.h), simulated in one
 * process: each "rank" runs the same sequence of tasks (real tl_ccis rows, tl_cluster_ci_drawn
 * rows and tl_mtb_cmp_pairs batches) in COMPUTE mode, the kept records are concatenated (in reverse rank
 * order: any order must do), and a REPLAY run must give every result bit for bit as the plain
 * (OFF) run, computing nothing. Table-driven over rank counts 1 to 5. Then the failures: a
 * replayed task with other inputs, a task no rank computed, a record never replayed, a pass with
 * fewer tasks, a broken record stream - each TL_EINTERNAL, never a result. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "mtb_compare.h"
#include "tally/boot.h"
#include "tally/workshare.h"

enum { N = 300, NG = 3, ROWS = 5, BATCHES = 3, DROWS = 4 };

typedef struct {
  double lo[ROWS], hi[ROWS];
  double dlo[DROWS], dhi[DROWS]; /* tl_cluster_ci_drawn's rows */
  tl_mtb_cmp_res res[BATCHES][2][2 * NG];
} results;

static uint64_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return *x >> 33;
}

/* The task sequence of a fake tables hook: ROWS CI rows and BATCHES batches of 2 comparison
 * pairs, interleaved. `perturb`: row 2's inputs changed (a hook that asks for other tasks).
 * `rows`: how many CI rows it asks for. Returns the first failure. */
static tl_status hook(results *out, int perturb, int rows) {
  static double num[N], den[N], sc[4][2 * N];
  uint64_t x = 11;
  for (int i = 0; i < N; i++) {
    num[i] = (double)(lcg(&x) % 21) / 2.0;
    den[i] = 1 + (double)(lcg(&x) % 3);
  }
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < 2 * N; i++) sc[p][i] = (lcg(&x) % 5 == 0) ? NAN : 1 + (double)(lcg(&x) % 10);
  size_t gi[NG][N], gm[NG];
  const size_t *gidx[NG];
  for (int g = 0; g < NG; g++) {
    gm[g] = 0;
    for (size_t i = 0; i < N; i++)
      if (g == 0 || i % (size_t)(g + 1) == 0) gi[g][gm[g]++] = i;
    gidx[g] = gi[g];
  }
  static int64_t inum[N], iden[N];
  for (int i = 0; i < N; i++) {
    iden[i] = 3;
    inum[i] = (int64_t)(lcg(&x) % 4);
  }
  tl_cluster_draws *dr = tl_cluster_draws_new(200, 5);
  if (!dr) return TL_ENOMEM;
  tl_ccis *ci = tl_ccis_new(200, 7);
  tl_mtb_cmp *cmp = tl_mtb_cmp_new(N, NG, gidx, gm, 64, 9, 0.95);
  tl_status st = ci && cmp ? TL_OK : TL_ENOMEM;
  /* first a summary's integer rows, one task each (tasks 0..DROWS-1, an even count: the tasks
   * after them fall to the same ranks as without them); every other row shares a cluster count
   * with the one before */
  for (int k = 0; !st && k < DROWS; k++)
    st = tl_cluster_ci_drawn(dr, inum + k, iden, (uint32_t)(N - DROWS - 40 * (k / 2)), 0.9, &out->dlo[k], &out->dhi[k]);
  for (int k = 0; !st && k < (rows > BATCHES ? rows : BATCHES); k++) {
    if (k < rows) {
      uint32_t n = (uint32_t)(N - 40 * k);
      if (perturb && k == 2) num[0] += 1;
      double keep = num[5];
      if (k == 3) num[5] = -1; /* a negative value: the row is tl_cluster_ci's, one task */
      st = tl_ccis_row(ci, num, den, n, 0.95, &out->lo[k], &out->hi[k]);
      num[5] = keep;
    }
    if (!st && k < BATCHES) {
      const double *sa[2] = {sc[k % 4], sc[(k + 1) % 4]}, *sb[2] = {sc[(k + 2) % 4], sc[(k + 3) % 4]};
      tl_mtb_cmp_res *rp[2] = {out->res[k][0], out->res[k][1]};
      st = tl_mtb_cmp_pairs(cmp, 2, sa, sb, rp);
    }
  }
  tl_ccis_free(ci);
  tl_mtb_cmp_free(cmp);
  tl_cluster_draws_free(dr);
  return st;
}

/* Runs the hook on `size` simulated ranks; *recs (malloc'd) and *n: every record, last rank's
 * first. */
static void compute_all(int size, unsigned char **recs, size_t *n) {
  *recs = NULL;
  *n = 0;
  for (int r = size - 1; r >= 0; r--) {
    results scratch;
    assert_int_equal(tl_ws_begin(TL_WS_COMPUTE, r, size, NULL, 0), TL_OK);
    assert_int_equal(tl_ws_mode_now(), TL_WS_COMPUTE);
    assert_int_equal(tl_ws_replaying(), 0);
    assert_int_equal(hook(&scratch, 0, ROWS), TL_OK);
    unsigned char *kept;
    size_t nk;
    assert_int_equal(tl_ws_end(&kept, &nk), TL_OK);
    assert_int_equal(tl_ws_mode_now(), TL_WS_OFF);
    if (nk) {
      *recs = realloc(*recs, *n + nk);
      assert_non_null(*recs);
      memcpy(*recs + *n, kept, nk);
      *n += nk;
    }
    free(kept);
  }
}

static void same_bits(const results *a, const results *b) {
  assert_memory_equal(a->lo, b->lo, sizeof a->lo);
  assert_memory_equal(a->hi, b->hi, sizeof a->hi);
  assert_memory_equal(a->dlo, b->dlo, sizeof a->dlo);
  assert_memory_equal(a->dhi, b->dhi, sizeof a->dhi);
  for (int k = 0; k < BATCHES; k++)
    for (int i = 0; i < 2; i++)
      for (int g = 0; g < 2 * NG; g++) {
        const tl_mtb_cmp_res *x = &a->res[k][i][g], *y = &b->res[k][i][g];
        assert_true(x->m == y->m && x->w == y->w && x->l == y->l && x->t == y->t && x->miss == y->miss);
        assert_memory_equal(&x->wr, &y->wr, 6 * sizeof(double));
      }
}

static void test_replay_equals_plain(void **state) {
  (void)state;
  results plain;
  memset(&plain, 0, sizeof plain);
  assert_int_equal(hook(&plain, 0, ROWS), TL_OK);
  assert_true(isfinite(plain.lo[0]) && plain.lo[0] < plain.hi[0]); /* the case computes real CIs */
  for (int k = 0; k < DROWS; k++) assert_true(isfinite(plain.dlo[k]) && plain.dlo[k] < plain.dhi[k]);
  static const int sizes[] = {1, 2, 3, 4, 5};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    unsigned char *recs;
    size_t n;
    compute_all(sizes[s], &recs, &n);
    results rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(tl_ws_begin(TL_WS_REPLAY, 0, sizes[s], recs, n), TL_OK);
    assert_int_equal(tl_ws_replaying(), 1);
    assert_int_equal(hook(&rep, 0, ROWS), TL_OK);
    assert_int_equal(tl_ws_end(NULL, NULL), TL_OK);
    same_bits(&plain, &rep);
    free(recs);
  }
}

/* In COMPUTE mode a CI row gives no bounds on any rank (its parts' values go to rank 0, which
 * takes the quantiles in the replay), and another rank's batch gets the placeholder (m = 0,
 * NaN). With 2 ranks, row k is tasks 3k and 3k + 1 (its two parts) and batch k task 3k + 2
 * (k < 3): batch 1 (task 5) is rank 1's, batches 0 and 2 rank 0's. Row 3 (a negative value)
 * is one task, tl_cluster_ci's bounds: task 9, rank 1's, so its bounds are there. */
static void test_placeholder(void **state) {
  (void)state;
  results r;
  memset(&r, 0, sizeof r);
  assert_int_equal(tl_ws_begin(TL_WS_COMPUTE, 1, 2, NULL, 0), TL_OK);
  assert_int_equal(tl_ws_parts(), 2);
  assert_int_equal(hook(&r, 0, ROWS), TL_OK);
  assert_int_equal(tl_ws_end(NULL, NULL), TL_OK);
  assert_int_equal(tl_ws_parts(), 1);
  for (int k = 0; k < ROWS; k++)
    if (k != 3) assert_true(isnan(r.lo[k]) && isnan(r.hi[k]));
  assert_true(isfinite(r.lo[3]) && r.lo[3] < r.hi[3]);
  for (int k = 0; k < DROWS; k++) /* the drawn rows are tasks 0..3: rank 1 computes 1 and 3 */
    if (k % 2) assert_true(isfinite(r.dlo[k]) && r.dlo[k] < r.dhi[k]);
    else assert_true(isnan(r.dlo[k]) && isnan(r.dhi[k]));
  assert_int_equal(r.res[1][0][0].m, N);
  assert_true(isfinite(r.res[1][0][0].wr_lo));
  for (int k = 0; k < BATCHES; k += 2) {
    assert_int_equal(r.res[k][0][0].m, 0);
    assert_true(isnan(r.res[k][0][0].wr) && isnan(r.res[k][1][0].sw_hi));
  }
}

static void test_failures(void **state) {
  (void)state;
  unsigned char *recs;
  size_t n;
  results r;
  compute_all(2, &recs, &n);
  /* other inputs in pass 2 */
  assert_int_equal(tl_ws_begin(TL_WS_REPLAY, 0, 2, recs, n), TL_OK);
  assert_int_equal(hook(&r, 1, ROWS), TL_EINTERNAL);
  tl_ws_end(NULL, NULL);
  /* fewer tasks in pass 2: records never replayed */
  assert_int_equal(tl_ws_begin(TL_WS_REPLAY, 0, 2, recs, n), TL_OK);
  assert_int_equal(hook(&r, 0, ROWS - 2), TL_OK);
  assert_int_equal(tl_ws_end(NULL, NULL), TL_EINTERNAL);
  /* one rank's records missing: a task no rank computed */
  unsigned char *one;
  size_t n1;
  assert_int_equal(tl_ws_begin(TL_WS_COMPUTE, 0, 2, NULL, 0), TL_OK);
  assert_int_equal(hook(&r, 0, ROWS), TL_OK);
  assert_int_equal(tl_ws_end(&one, &n1), TL_OK);
  assert_int_equal(tl_ws_begin(TL_WS_REPLAY, 0, 2, one, n1), TL_OK);
  assert_int_equal(hook(&r, 0, ROWS), TL_EINTERNAL);
  tl_ws_end(NULL, NULL);
  /* a record twice, and a cut stream */
  unsigned char *twice = malloc(2 * n1);
  memcpy(twice, one, n1);
  memcpy(twice + n1, one, n1);
  assert_int_equal(tl_ws_begin(TL_WS_REPLAY, 0, 2, twice, 2 * n1), TL_EINTERNAL);
  assert_int_equal(tl_ws_begin(TL_WS_REPLAY, 0, 2, one, n1 - 1), TL_EINTERNAL);
  assert_int_equal(tl_ws_mode_now(), TL_WS_OFF);
  assert_int_equal(tl_ws_replaying(), 0);
  /* OFF again: everything computed where asked */
  results plain;
  assert_int_equal(hook(&plain, 0, ROWS), TL_OK);
  assert_true(isfinite(plain.lo[0]));
  free(twice);
  free(one);
  free(recs);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_equals_plain), cmocka_unit_test(test_placeholder),
                                     cmocka_unit_test(test_failures)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
