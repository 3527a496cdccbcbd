/* test_mtb_stability.c - MT-Bench-101 judge stability and parser swap (mtb_stability.h), on
 * hand-made counters whose answers are worked out in the comments:
 *   - tl_mtb_stab_add: a table of turns (7 then 8 changes; all equal; one rated sample; none;
 *     three samples) and the counters each leaves;
 *   - tl_mtb_stab_ranks: ties share the best rank, NaN is unranked;
 *   - the judge_stability table from those counters, per seed and pooled over seeds;
 *   - the parser_swap table from hand-filled MIN/SUM blocks of two modes, both policies.
 * The pipeline end to end (real judge replies through the four parsers, 1/2/4 ranks) is
 * e2e_test_mtbench101_stability. */
#include "testutil.h"

#include <math.h>

#include "mtb_rating.h"
#include "mtb_stability.h"

/* A sample list: ratings in thousandths, 0 = unrated (status no_answer). */
static void fill(tl_parsed *sp, const int64_t *v, int ns) {
  for (int j = 0; j < ns; j++) {
    tl_parsed_init(&sp[j]);
    sp[j].status = v[j] ? TL_PS_OK : TL_PS_NO_ANSWER;
    sp[j].value = v[j];
  }
}

static void test_add(void **state) {
  (void)state;
  static const struct {
    int ns;
    int64_t v[3];
    int64_t cmp, chg, part, spread, sdfix, negmax; /* after this turn alone */
  } C[] = {
      {2, {7000, 8000}, 1, 1, 0, 1000, 707106781, -1000}, /* 7 then 8: changes; SD sqrt(0.5) */
      {2, {8000, 7000}, 1, 1, 0, 1000, 707106781, -1000}, /* order does not matter */
      {3, {6000, 6000, 6000}, 1, 0, 0, 0, 0, 0},           /* all equal: compared, not changed */
      {2, {7000, 0}, 0, 0, 1, 0, 0, INT64_MAX},            /* one rated: partly rated only */
      {2, {0, 0}, 0, 0, 0, 0, 0, INT64_MAX},               /* none rated */
      {3, {3000, 9000, 6000}, 1, 1, 0, 6000, 3000000000, -6000}, /* SD of 3, 6, 9 is 3 */
      {3, {8500, 0, 7000}, 1, 1, 1, 1500, 1060660172, -1500},    /* 8.5 and 7; one unrated */
  };
  for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
    tl_parsed sp[3];
    fill(sp, C[i].v, C[i].ns);
    int64_t st[TL_MTB_ST__N] = {0}, negmax = INT64_MAX;
    tl_mtb_stab_add(sp, C[i].ns, st, &negmax);
    if (st[TL_MTB_ST_TURNS] != 1 || st[TL_MTB_ST_COMPARED] != C[i].cmp || st[TL_MTB_ST_CHANGED] != C[i].chg ||
        st[TL_MTB_ST_PARTLY] != C[i].part || st[TL_MTB_ST_SPREAD] != C[i].spread ||
        st[TL_MTB_ST_SDFIX] != C[i].sdfix || st[TL_MTB_ST_SDBIG] != 0 || negmax != C[i].negmax)
      fail_msg("case %zu: compared %lld changed %lld partly %lld spread %lld sdfix %lld negmax %lld", i,
               (long long)st[TL_MTB_ST_COMPARED], (long long)st[TL_MTB_ST_CHANGED], (long long)st[TL_MTB_ST_PARTLY],
               (long long)st[TL_MTB_ST_SPREAD], (long long)st[TL_MTB_ST_SDFIX], (long long)negmax);
  }
  /* a compatibility parser's absurd rating: the SD is not summed, it is counted */
  tl_parsed sp[2];
  fill(sp, (const int64_t[]){1000, 5000000000000000}, 2);
  int64_t st[TL_MTB_ST__N] = {0}, negmax = INT64_MAX;
  tl_mtb_stab_add(sp, 2, st, &negmax);
  assert_int_equal(st[TL_MTB_ST_SDBIG], 1);
  assert_int_equal(st[TL_MTB_ST_SDFIX], 0);
  assert_true(fabs(tl_mtb_stab_sd((const int64_t[]){7000, 8000}, 2) - sqrt(0.5)) < 1e-15);
  assert_true(isnan(tl_mtb_stab_sd((const int64_t[]){7000}, 1)));
}

static void test_ranks(void **state) {
  (void)state;
  const double s[] = {5, 7, NAN, 7, 6.5};
  int r[5];
  tl_mtb_stab_ranks(s, 5, r);
  const int want[] = {4, 1, 0, 1, 3};
  for (int i = 0; i < 5; i++) assert_int_equal(r[i], want[i]);
}

static tl_mtb_dialogue D[4];
static const int MODES[2] = {TL_MTB_RATE_STRICT, TL_MTB_RATE_FASTCHAT};

static tl_mtb_stab_ctx ctx(int nsamples, size_t ncfgs, size_t n) {
  return (tl_mtb_stab_ctx){2, MODES, nsamples, 1000, n, D, ncfgs * n * 2 + ncfgs * TL_PS__COUNT, ncfgs * n, "golden"};
}

static int col(const tl_table *t, const char *name) {
  int c = tl_table_col(t, name);
  if (c < 0) fail_msg("%s has no column %s", t->path, name);
  return c;
}
static double f64(const tl_table *t, size_t r, const char *name) { return t->cols[col(t, name)].v.f[r]; }
static int64_t i64(const tl_table *t, size_t r, const char *name) { return t->cols[col(t, name)].v.i[r]; }

/* judge_stability: model A with seeds 0 and 1, model B with seed 0, two samples per turn. */
static void test_stability_table(void **state) {
  (void)state;
  const tl_cfg cfgs[3] = {{.model = "A", .seed = 0}, {.model = "A", .seed = 1}, {.model = "B", .seed = 0}};
  const size_t n = 1, ncfgs = 3;
  tl_mtb_stab_ctx x = ctx(2, ncfgs, n);
  const size_t sumlen = x.sum_off + ncfgs * TL_MTB_ST__N;
  int64_t *blk[4];
  for (int k = 0; k < 2; k++) {
    blk[2 * k] = malloc((x.min_off + ncfgs) * sizeof **blk);
    blk[2 * k + 1] = calloc(sumlen, sizeof **blk);
    for (size_t i = 0; i < x.min_off + ncfgs; i++) blk[2 * k][i] = INT64_MAX;
  }
  /* per cfg, the turns' two samples (both modes alike): A0: 7/8, 6/6; A1: 5/9, 4/unrated; B0: 3/3 */
  static const int64_t T[][3] = {{0, 7000, 8000}, {0, 6000, 6000}, {1, 5000, 9000}, {1, 4000, 0}, {2, 3000, 3000}};
  for (size_t i = 0; i < sizeof T / sizeof *T; i++)
    for (int k = 0; k < 2; k++) {
      tl_parsed sp[2];
      fill(sp, T[i] + 1, 2);
      tl_mtb_stab_add(sp, 2, blk[2 * k + 1] + x.sum_off + (size_t)T[i][0] * TL_MTB_ST__N,
                      &blk[2 * k][x.min_off + (size_t)T[i][0]]);
    }
  tl_table **tabs = calloc(1, sizeof *tabs);
  int nt = 0;
  x.nmodes = 1; /* the stability table alone */
  assert_int_equal(tl_mtb_stab_tables(&x, cfgs, ncfgs, blk, &tabs, &nt), TL_OK);
  assert_int_equal(nt, 1);
  const tl_table *t = tabs[0];
  assert_string_equal(t->path, "/metrics/mtbench101/judge_stability");
  /* rows: A seed 0, A seed 1, B seed 0, then A pooled, B pooled */
  static const struct {
    int64_t seed, turns, cmp, chg, part;
    double share, mspread, xspread, msd;
  } W[] = {
      {0, 2, 2, 1, 0, 0.5, 0.5, 1, 0.707106781 / 2},
      {1, 2, 1, 1, 1, 1, 4, 4, 2.828427125},
      {0, 1, 1, 0, 0, 0, 0, 0, 0},
      {-1, 4, 3, 2, 1, 2.0 / 3, 5.0 / 3, 4, (0.707106781 + 2.828427125) / 3},
      {-1, 1, 1, 0, 0, 0, 0, 0, 0},
  };
  assert_int_equal(t->nrows, 5);
  for (size_t r = 0; r < 5; r++) {
    assert_string_equal(t->cols[0].v.s[r], "mtbench101");
    assert_int_equal(i64(t, r, "seed"), W[r].seed);
    assert_int_equal(i64(t, r, "samples"), 2);
    assert_int_equal(i64(t, r, "n_turns"), W[r].turns);
    assert_int_equal(i64(t, r, "n_turns_compared"), W[r].cmp);
    assert_int_equal(i64(t, r, "n_changed"), W[r].chg);
    assert_int_equal(i64(t, r, "n_partly_rated"), W[r].part);
    assert_true(fabs(f64(t, r, "share_changed") - W[r].share) < 1e-12);
    assert_true(fabs(f64(t, r, "mean_spread") - W[r].mspread) < 1e-12);
    assert_true(fabs(f64(t, r, "max_spread") - W[r].xspread) < 1e-12);
    if (fabs(f64(t, r, "mean_sd") - W[r].msd) > 1e-9)
      fail_msg("row %zu: mean_sd %.12f, want %.12f", r, f64(t, r, "mean_sd"), W[r].msd);
  }
  assert_string_equal(t->cols[1].v.s[3], "A");
  assert_string_equal(t->cols[1].v.s[4], "B");
  tl_table_free(tabs[0]);
  free(tabs);
  for (int k = 0; k < 4; k++) free(blk[k]);
}

/* parser_swap on four dialogues (GR, MR, IC, TS), models A and B, seed 0, one judge sample:
 * ratings (primary | fastchat)       A                 B
 *   GR                               7.5 | 7.5         7 | 7
 *   MR                               6   | 6           4 | 10    <- changes, MR ranking flips
 *   IC                               5   | 5 (+ an unrated turn under fastchat only)
 *                                                      7 | 7
 *   TS                               6   | 6           6 | 6     (a tie both ways)
 * exclude: 1 dialogue of 8 changes (|diff| 6); MR's ranking flips; Avg A 6.125 vs B 6 becomes
 *   6.125 vs 7.5: the overall ranking changes.
 * fail: A's IC dialogue has no score under fastchat: 2 of 8 change, 7 scored under both; IC's
 *   ranking changes too (A unranked), so 2 tasks of 4. */
static void test_swap_table(void **state) {
  (void)state;
  const int tasks[4] = {TL_MTB_GR, TL_MTB_MR, TL_MTB_IC, TL_MTB_TS};
  for (int i = 0; i < 4; i++) D[i].task = tasks[i];
  const tl_cfg cfgs[2] = {{.model = "A", .seed = 0}, {.model = "B", .seed = 0}};
  const size_t n = 4, ncfgs = 2;
  tl_mtb_stab_ctx x = ctx(1, ncfgs, n);
  static const int64_t R[2][2][4] = {{{7500, 6000, 5000, 6000}, {7000, 4000, 7000, 6000}},
                                     {{7500, 6000, 5000, 6000}, {7000, 10000, 7000, 6000}}};
  int64_t *blk[4];
  for (int k = 0; k < 2; k++) {
    blk[2 * k] = malloc(ncfgs * n * sizeof **blk);
    blk[2 * k + 1] = calloc(ncfgs * n * 2, sizeof **blk);
    for (size_t c = 0; c < ncfgs; c++)
      for (size_t i = 0; i < n; i++) {
        blk[2 * k][c * n + i] = R[k][c][i];
        blk[2 * k + 1][2 * (c * n + i)] = 1; /* one rated turn */
      }
  }
  blk[3][2 * 2 + 1] = 1; /* fastchat, A, IC: an unrated turn beside the rated one */
  tl_table **tabs = calloc(1, sizeof *tabs);
  int nt = 0;
  assert_int_equal(tl_mtb_stab_tables(&x, cfgs, ncfgs, blk, &tabs, &nt), TL_OK);
  assert_int_equal(nt, 1);
  const tl_table *t = tabs[0];
  assert_string_equal(t->path, "/metrics/mtbench101/parser_swap");
  assert_int_equal(t->nrows, 2);
  static const struct {
    const char *pol;
    int64_t nd, ndc, nb, nm, ntasks, ntc, oc;
    double maxd;
  } W[] = {{"exclude", 8, 1, 8, 2, 4, 1, 1, 6}, {"fail", 8, 2, 7, 2, 4, 2, 1, 6}};
  for (size_t r = 0; r < 2; r++) {
    assert_string_equal(t->cols[0].v.s[r], "fastchat");
    assert_string_equal(t->cols[1].v.s[r], "mtbench101");
    assert_string_equal(t->cols[2].v.s[r], W[r].pol);
    assert_int_equal(i64(t, r, "n_dialogues"), W[r].nd);
    assert_int_equal(i64(t, r, "n_dialogues_changed"), W[r].ndc);
    assert_int_equal(i64(t, r, "n_scored_both"), W[r].nb);
    assert_int_equal(i64(t, r, "n_models"), W[r].nm);
    assert_int_equal(i64(t, r, "n_tasks"), W[r].ntasks);
    assert_int_equal(i64(t, r, "n_tasks_rank_changed"), W[r].ntc);
    assert_int_equal(i64(t, r, "overall_rank_changed"), W[r].oc);
    assert_true(fabs(f64(t, r, "max_abs_diff") - W[r].maxd) < 1e-12);
  }
  /* the swap of a parser with itself changes nothing */
  static const int SAME[2] = {TL_MTB_RATE_STRICT, TL_MTB_RATE_STRICT};
  x.modes = SAME;
  for (size_t c = 0; c < ncfgs * n; c++) blk[2][c] = blk[0][c], blk[3][2 * c] = 1, blk[3][2 * c + 1] = 0;
  tl_table **t2 = calloc(1, sizeof *t2);
  int n2 = 0;
  assert_int_equal(tl_mtb_stab_tables(&x, cfgs, ncfgs, blk, &t2, &n2), TL_OK);
  for (size_t r = 0; r < 2; r++) {
    assert_int_equal(i64(t2[0], r, "n_dialogues_changed"), 0);
    assert_int_equal(i64(t2[0], r, "n_tasks_rank_changed"), 0);
    assert_int_equal(i64(t2[0], r, "overall_rank_changed"), 0);
    assert_true(f64(t2[0], r, "max_abs_diff") == 0);
  }
  tl_table_free(t2[0]);
  free(t2);
  tl_table_free(tabs[0]);
  free(tabs);
  for (int k = 0; k < 4; k++) free(blk[k]);
}

/* The replies the swap tests are built on, through the four parsers (thousandths). The brief's
 * example "Rating: [[7]] ... e.g. [[10]]" is read alike by FastChat (first [[x]]: 7) and the
 * primary (last labelled rating: 7); JudgeArena's last valid [[n]] gives 10. */
static void test_parsers_read(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int64_t want[TL_MTB_RATE__COUNT]; /* strict, opencompass, fastchat, judgearena */
  } C[] = {
      {"For example [[10]] is a perfect answer. Rating: [[4]]", {4000, 10000, 10000, 4000}},
      {"Rating: [[7]]. A perfect answer would get e.g. [[10]].", {7000, 7000, 7000, 10000}},
      {"Rating: [[7]]", {7000, 7000, 7000, 7000}},
  };
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
    tl_err err;
    tl_mtb_rater *r = tl_mtb_rater_new((tl_mtb_rate_mode)m, &err);
    assert_non_null(r);
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
      tl_parsed p;
      tl_parsed_init(&p);
      assert_int_equal(tl_mtb_rate(r, C[i].text, &p), TL_OK);
      if (p.status != TL_PS_OK || p.value != C[i].want[m])
        fail_msg("%s reads '%s' as %s %lld, want %lld", tl_mtb_rate_mode_name((tl_mtb_rate_mode)m), C[i].text,
                 tl_pstatus_name(p.status), (long long)p.value, (long long)C[i].want[m]);
      tl_parsed_release(&p);
    }
    tl_mtb_rater_free(r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_add), cmocka_unit_test(test_ranks),
                                     cmocka_unit_test(test_stability_table), cmocka_unit_test(test_swap_table),
                                     cmocka_unit_test(test_parsers_read)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
