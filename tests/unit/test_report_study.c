/* test_report_study.c - a study's tables as report tables (src/report/study.c; the one code path
 * of what `tally correlate` / a job's study prints and of `tally report`'s studies):
 *   - summary and comparisons of one group from the long tables, rendered as text and compared
 *     whole: long metric names widen their columns (never cut, never run together), p_boot 0
 *     prints "<1/B" while the cell keeps its 0 (CSV and JSON), Williams' p is "-" for a
 *     statistic other than spearman, p_perm "-" when the permutation test did not run, NaN
 *     prints "nan";
 *   - every group (group NULL): the group and n columns in front;
 *   - the by-group matrix (x 100; a group without the row: "-"), the agreement of a pair (its
 *     title; count, of, Wilson and Jeffreys for the proportions alone), the confusion matrix;
 *   - table-driven: a table lacking a column each builder needs gives NULL and adds nothing. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "tally/report.h"

static char *render(const tl_rtable *t) {
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_rtable_render(t, TL_FMT_TEXT, &b), TL_OK);
  char *s = tl_strdup(b.data);
  tl_buf_release(&b);
  return s;
}

static void col(tl_table *t, const char *name, tl_col_type ty) { assert_true(tl_table_add_col(t, name, ty, "") >= 0); }

/* compare: group, statistic, a, b, delta, ci_lo, ci_hi, p_boot, p_williams, p_permutation,
 * p_ttest_compat, p_holm, p_bh, mde80 (as correlate_write.c writes it) */
static tl_table *compare_table(void) {
  tl_table *t = tl_table_new("/stats/s/compare");
  const char *s[] = {"group", "statistic", "a", "b"};
  const char *f[] = {"delta", "ci_lo", "ci_hi", "p_boot", "p_williams", "p_permutation", "p_ttest_compat", "p_holm", "p_bh", "mde80"};
  for (int i = 0; i < 4; i++) col(t, s[i], TL_COL_STR);
  for (int i = 0; i < 10; i++) col(t, f[i], TL_COL_F64);
  const struct {
    const char *g, *st, *a, *b;
    double v[10];
  } R[] = {
      {"all", "spearman", "vqa_accuracy", "soft_vqa_accuracy", {-0.15, -0.45, -0.02, 0.039, 0.0462, NAN, 0, 0.078, 0.0468, 0.2538}},
      {"all", "kendall_b", "vqa_accuracy", "soft_vqa_accuracy", {-0.6426, -0.9725, -0.2945, 0, NAN, NAN, 0, 0, 0, 0.4849}},
      {"g2", "spearman", "x", "y", {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}},
  };
  for (size_t r = 0; r < sizeof R / sizeof *R; r++) {
    size_t k = tl_table_add_row(t);
    assert_int_equal(tl_table_set_str(t, k, 0, R[r].g), TL_OK);
    tl_table_set_str(t, k, 1, R[r].st), tl_table_set_str(t, k, 2, R[r].a), tl_table_set_str(t, k, 3, R[r].b);
    for (int i = 0; i < 10; i++) tl_table_set_f64(t, k, 4 + i, R[r].v[i]);
  }
  return t;
}

static tl_table *summary_table(void) {
  tl_table *t = tl_table_new("/stats/s/summary");
  const char *s[] = {"group", "metric", "statistic"};
  for (int i = 0; i < 3; i++) col(t, s[i], TL_COL_STR);
  col(t, "n", TL_COL_I64);
  const char *f[] = {"estimate", "boot_mean", "se", "ci_lo", "ci_hi"};
  for (int i = 0; i < 5; i++) col(t, f[i], TL_COL_F64);
  col(t, "n_defined", TL_COL_I64), col(t, "n_undefined", TL_COL_I64);
  const struct {
    const char *g, *m, *st;
    int64_t n;
    double est, se, lo, hi;
    int64_t und;
  } R[] = {
      {"model=a", "soft_vqa_accuracy", "spearman", 29, 0.3576, 0.2109, -0.1514, 0.7033, 13},
      {"model=a", "lave_score", "spearman", 29, NAN, NAN, NAN, NAN, 2000},
      {"model=a-much-longer-name", "soft_vqa_accuracy", "spearman", 27, 0.4091, 0.1832, -0.0043, 0.7145, 0},
  };
  for (size_t r = 0; r < sizeof R / sizeof *R; r++) {
    size_t k = tl_table_add_row(t);
    tl_table_set_str(t, k, 0, R[r].g), tl_table_set_str(t, k, 1, R[r].m), tl_table_set_str(t, k, 2, R[r].st);
    tl_table_set_i64(t, k, 3, R[r].n);
    double v[] = {R[r].est, R[r].est, R[r].se, R[r].lo, R[r].hi};
    for (int i = 0; i < 5; i++) tl_table_set_f64(t, k, 4 + i, v[i]);
    tl_table_set_i64(t, k, 9, 2000 - R[r].und), tl_table_set_i64(t, k, 10, R[r].und);
  }
  return t;
}

static void test_compare(void **state) {
  (void)state;
  tl_table *cmp = compare_table();
  tl_doc *d = tl_doc_new("");
  tl_section *s = tl_doc_section(d, "");
  tl_study_fmt f = {2000, 0, 0};
  tl_rtable *t = tl_study_compare(d, s, cmp, "all", &f, "");
  assert_non_null(t);
  char *txt = render(t);
  const char *want =
      "a             b                  statistic                  delta [CI]   p_boot  p_williams  p_perm  p_holm    p_bh   mde80\n"
      "------------  -----------------  ---------  --------------------------  -------  ----------  ------  ------  ------  ------\n"
      "vqa_accuracy  soft_vqa_accuracy  spearman   -0.1500 [-0.4500, -0.0200]    0.039      0.0462       -   0.078  0.0468  0.2538\n"
      "vqa_accuracy  soft_vqa_accuracy  kendall_b  -0.6426 [-0.9725, -0.2945]  <0.0005           -       -       0       0  0.4849\n";
  assert_string_equal(txt, want);
  free(txt);
  /* the p_boot cell keeps its 0 for CSV and JSON; only the text shows the resolution */
  assert_int_equal(tl_rtable_cell(t, 1, 4)->tag, TL_CELL_REAL);
  assert_true(tl_rtable_cell(t, 1, 4)->v == 0);
  assert_int_equal(tl_rtable_cell(t, 0, 6)->tag, TL_CELL_MISSING); /* p_perm: not run */
  /* every group, the permutation run (NaN: nan), the COMPAT column shown */
  tl_study_fmt g = {0, 1, 1};
  t = tl_study_compare(d, s, cmp, NULL, &g, "all");
  txt = render(t);
  assert_non_null(strstr(txt, "all\ngroup  a "));
  assert_non_null(strstr(txt, "p_ttest(COMPAT)\n"));
  assert_non_null(strstr(txt, "\ng2     x             y                  spearman                          nan     nan         nan     nan"));
  assert_non_null(strstr(txt, "kendall_b  -0.6426 [-0.9725, -0.2945]       0           -     nan"));
  free(txt);
  assert_int_equal(tl_doc_ok(d), TL_OK);
  tl_doc_free(d);
  tl_table_free(cmp);
}

static void test_summary_by_group(void **state) {
  (void)state;
  tl_table *sum = summary_table();
  tl_doc *d = tl_doc_new("");
  tl_section *s = tl_doc_section(d, "");
  char *txt = render(tl_study_summary(d, s, sum, "model=a", ""));
  assert_string_equal(txt, "metric             statistic             estimate [CI]      SE  undefined\n"
                           "-----------------  ---------  ------------------------  ------  ---------\n"
                           "soft_vqa_accuracy  spearman   0.3576 [-0.1514, 0.7033]  0.2109         13\n"
                           "lave_score         spearman                        nan     nan       2000\n");
  free(txt);
  txt = render(tl_study_summary(d, s, sum, NULL, ""));
  assert_non_null(strstr(txt, "\nmodel=a-much-longer-name  27  soft_vqa_accuracy  spearman   0.4091 [-0.0043, 0.7145]"));
  free(txt);
  txt = render(tl_study_by_group(d, s, sum, "spearman", "spearman x 100, by group"));
  assert_string_equal(txt, "spearman x 100, by group\n"
                           "metric             model=a  model=a-much-longer-name\n"
                           "-----------------  -------  ------------------------\n"
                           "soft_vqa_accuracy    35.76                     40.91\n"
                           "lave_score             nan                         -\n");
  free(txt);
  assert_int_equal(tl_doc_ok(d), TL_OK);
  tl_doc_free(d);
  tl_table_free(sum);
}

static void test_agreement(void **state) {
  (void)state;
  tl_table *ag = tl_table_new("/stats/s/agreement");
  const char *sc[] = {"a", "b", "statistic", "scale"};
  for (int i = 0; i < 4; i++) col(ag, sc[i], TL_COL_STR);
  col(ag, "n", TL_COL_I64), col(ag, "left_out", TL_COL_I64);
  const char *fc[] = {"estimate", "se", "ci_lo", "ci_hi"};
  for (int i = 0; i < 4; i++) col(ag, fc[i], TL_COL_F64);
  col(ag, "n_undefined", TL_COL_I64), col(ag, "count", TL_COL_I64), col(ag, "of", TL_COL_I64);
  const char *wc[] = {"wilson_lo", "wilson_hi", "jeffreys_lo", "jeffreys_hi"};
  for (int i = 0; i < 4; i++) col(ag, wc[i], TL_COL_F64);
  const struct {
    const char *a, *b, *st;
    double est, w;
  } R[] = {{"lave_score", "human", "raw", 0.75, 0.6231}, {"lave_score", "human", "kappa", 0.5237, NAN},
           {"r1,r2,r3", "", "alpha", 0.5, NAN}};
  for (size_t r = 0; r < 3; r++) {
    size_t k = tl_table_add_row(ag);
    tl_table_set_str(ag, k, 0, R[r].a), tl_table_set_str(ag, k, 1, R[r].b), tl_table_set_str(ag, k, 2, R[r].st);
    tl_table_set_str(ag, k, 3, "");
    tl_table_set_i64(ag, k, 4, 56), tl_table_set_i64(ag, k, 5, 4);
    double v[] = {R[r].est, 0.06, R[r].est - 0.1, R[r].est + 0.1};
    for (int i = 0; i < 4; i++) tl_table_set_f64(ag, k, 6 + i, v[i]);
    tl_table_set_i64(ag, k, 10, 0), tl_table_set_i64(ag, k, 11, r ? -1 : 42), tl_table_set_i64(ag, k, 12, r ? -1 : 56);
    for (int i = 0; i < 4; i++) tl_table_set_f64(ag, k, 13 + i, R[r].w);
  }
  tl_table *cf = tl_table_new("/stats/s/confusion");
  col(cf, "a", TL_COL_STR), col(cf, "b", TL_COL_STR), col(cf, "a_value", TL_COL_F64), col(cf, "b_value", TL_COL_F64);
  col(cf, "count", TL_COL_I64);
  const double cat[] = {0, 0.5, 1};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      size_t k = tl_table_add_row(cf);
      tl_table_set_str(cf, k, 0, "lave_score"), tl_table_set_str(cf, k, 1, "human");
      tl_table_set_f64(cf, k, 2, cat[i]), tl_table_set_f64(cf, k, 3, cat[j]);
      tl_table_set_i64(cf, k, 4, i == j ? 10 * (i + 1) : i + j);
    }
  tl_doc *d = tl_doc_new("");
  tl_section *s = tl_doc_section(d, "");
  char *txt = render(tl_study_agreement(d, s, ag, "lave_score", "human"));
  assert_string_equal(txt, "lave_score vs human: n = 56 items (4 left out: a rating missing or bad)\n"
                           "statistic  estimate [bootstrap CI]      SE  count  of  Wilson            Jeffreys\n"
                           "---------  -----------------------  ------  -----  --  ----------------  ----------------\n"
                           "raw        0.7500 [0.6500, 0.8500]  0.0600     42  56  [0.6231, 0.6231]  [0.6231, 0.6231]\n"
                           "kappa      0.5237 [0.4237, 0.6237]  0.0600      -   -  -                 -\n");
  free(txt);
  txt = render(tl_study_agreement(d, s, ag, "r1,r2,r3", ""));
  assert_non_null(strstr(txt, "all of r1,r2,r3: n = 56 items with 2 ratings or more (4 left out)\n"));
  free(txt);
  assert_null(tl_study_agreement(d, s, ag, "lave_score", "nosuch"));
  txt = render(tl_study_confusion(d, s, cf, "lave_score", "human"));
  assert_string_equal(txt, "confusion (rows lave_score, columns human)\n"
                           "lave_score   0  0.5   1\n"
                           "----------  --  ---  --\n"
                           "         0  10    1   2\n"
                           "       0.5   1   20   3\n"
                           "         1   2    3  30\n");
  free(txt);
  assert_int_equal(tl_doc_ok(d), TL_OK);
  tl_doc_free(d);
  tl_table_free(ag);
  tl_table_free(cf);
}

/* A table lacking a column a builder needs: NULL, nothing added (the caller goes generic). */
static void test_missing_columns(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/stats/s/x");
  col(t, "group", TL_COL_STR), col(t, "metric", TL_COL_STR), col(t, "statistic", TL_COL_F64); /* wrong type */
  tl_doc *d = tl_doc_new("");
  tl_section *s = tl_doc_section(d, "");
  tl_study_fmt f = {1000, 1, 0};
  assert_null(tl_study_summary(d, s, t, NULL, ""));
  assert_null(tl_study_compare(d, s, t, NULL, &f, ""));
  assert_null(tl_study_by_group(d, s, t, "spearman", ""));
  assert_null(tl_study_agreement(d, s, t, "a", "b"));
  assert_null(tl_study_confusion(d, s, t, "a", "b"));
  assert_null(tl_study_summary(d, s, NULL, NULL, ""));
  assert_int_equal(d->secs[0].nblocks, 0);
  assert_int_equal(tl_doc_ok(d), TL_OK);
  tl_doc_free(d);
  tl_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compare),
      cmocka_unit_test(test_summary_by_group),
      cmocka_unit_test(test_agreement),
      cmocka_unit_test(test_missing_columns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
