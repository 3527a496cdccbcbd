/* test_acctab.c - the shared accuracy tables (tally/acctab.h) on a hand-counted benchmark "x":
 * 3 items (two in task "a", one in "b"), 3 cfgs (model m seeds 0 and 1, model n seed 0), modes p
 * (the primary) and q, every unit's statuses and verdicts given by a table. What the mcq and gen
 * e2e tests do not reach: a task without one replied unit (its audit accuracy NaN, never 0), a
 * unit with no answer counted answered-but-unparsed under the primary, the audit's three counts
 * by hand, the groups split by model with their seeds pooled, the layout's sizes, the table
 * paths and the item columns built from the descriptor, and the summary without an audit when
 * there is one mode. */
#include "testutil.h"

#include <math.h>

#include "tally/acctab.h"
#include "tally/boot.h"

static const int TASK_OF[3] = {0, 0, 1};
static char *TASKS[2] = {"a", "b"};
static const char *const VARIANTS[] = {"default", NULL};

static int item_task(const void *ctx, size_t i) {
  (void)ctx;
  return TASK_OF[i];
}

/* Per unit (cfg, item): the primary's status and verdict, then q's. */
static const struct {
  uint32_t cfg, item;
  tl_pstatus s0;
  int c0;
  tl_pstatus s1;
  int c1;
} U[] = {
    {0, 0, TL_PS_OK, 1, TL_PS_OK, 1},
    {0, 1, TL_PS_OK, 0, TL_PS_OK, 1},         /* correct only under q */
    {0, 2, TL_PS_MISSING, 0, TL_PS_MISSING, 0},
    {1, 0, TL_PS_OK, 1, TL_PS_OK, 0},         /* correct only under p */
    {1, 1, TL_PS_NO_ANSWER, 0, TL_PS_OK, 0},  /* replied, unparsed under p */
    {1, 2, TL_PS_ENGINE_ERROR, 0, TL_PS_ENGINE_ERROR, 0},
    {2, 0, TL_PS_OK, 0, TL_PS_OK, 0},
    {2, 1, TL_PS_OK, 1, TL_PS_OK, 1},
    {2, 2, TL_PS_MISSING, 0, TL_PS_MISSING, 0},
};
#define NU (sizeof U / sizeof *U)

static tl_acctab make(int n_modes) {
  tl_acctab at = {.name = "x",
                  .variants = VARIANTS,
                  .modes = {"p", "q"},
                  .n_modes = n_modes,
                  .n_items = 3,
                  .tasks = TASKS,
                  .ntasks = 2,
                  .item_task = item_task,
                  .ci_B = 200,
                  .ci_seed = 7,
                  .answer_doc = {"answer of ", " here"},
                  .unparsed_doc = "unparsed here"};
  return at;
}

/* The blocks of at, every unit of U added; blk[0..3) malloc'd (the caller frees). */
static void fill(const tl_acctab *at, size_t ncfgs, int64_t *blk[3]) {
  tl_acc_block lay[TL_MAX_ACC];
  assert_int_equal(tl_acctab_layout(at, ncfgs, lay), TL_ACCTAB_NACC);
  const size_t T = 3, M = (size_t)at->n_modes;
  assert_int_equal(lay[0].len, ncfgs * T * M * TL_ACCTAB_GW);
  assert_int_equal(lay[1].len, ncfgs * 3 * M);
  assert_int_equal(lay[2].len, T * M * TL_ACCTAB_AW);
  for (int b = 0; b < 3; b++) {
    assert_int_equal(lay[b].op, TL_ACC_SUM);
    blk[b] = calloc(lay[b].len, sizeof *blk[b]);
    assert_non_null(blk[b]);
  }
  for (size_t i = 0; i < NU; i++) {
    tl_row r;
    memset(&r, 0, sizeof r);
    r.res[0] = (tl_parsed){.answer = "A", .correct = U[i].c0, .status = U[i].s0, .rule = "r0"};
    r.res[1] = (tl_parsed){.answer = "B", .correct = U[i].c1, .status = U[i].s1, .rule = "r1"};
    tl_unit u = {U[i].cfg, U[i].item, 0};
    tl_acctab_add(at, &u, &r, blk);
  }
}

static tl_cfg CFGS[3] = {{"m", 0, 0}, {"m", 0, 1}, {"n", 0, 0}};

#define I64(t, c, r) ((t)->cols[tl_table_col((t), (c))].v.i[r])
#define F64(t, c, r) ((t)->cols[tl_table_col((t), (c))].v.f[r])
#define STR(t, c, r) ((t)->cols[tl_table_col((t), (c))].v.s[r])

/* The metric tables: one row per model x task (and "all"), the seeds pooled; counts by hand. */
static void test_metrics(void **state) {
  (void)state;
  tl_acctab at = make(2);
  int64_t *blk[3];
  fill(&at, 3, blk);
  tl_table **t = NULL;
  int n = 0;
  assert_int_equal(tl_acctab_tables(&at, CFGS, 3, blk, &t, &n), TL_OK);
  assert_int_equal(n, 3);
  assert_string_equal(t[0]->path, "/metrics/x/p");
  assert_string_equal(t[1]->path, "/metrics/x/q");
  assert_string_equal(t[2]->path, "/audit/x");
  assert_string_equal(t[0]->cols[tl_table_col(t[0], "unparsed")].doc, "unparsed here");
  static const struct {
    const char *model, *task;
    int64_t seeds, n, correct, answered, missing, unparsed, eerr, q_correct, q_unparsed;
  } W[] = {
      {"m", "a", 2, 4, 2, 4, 0, 1, 0, 2, 0},  {"m", "b", 2, 2, 0, 0, 1, 0, 1, 0, 0},
      {"m", "all", 2, 6, 2, 4, 1, 1, 1, 2, 0}, {"n", "a", 1, 2, 1, 2, 0, 0, 0, 1, 0},
      {"n", "b", 1, 1, 0, 0, 1, 0, 0, 0, 0},  {"n", "all", 1, 3, 1, 2, 1, 0, 0, 1, 0},
  };
  assert_int_equal(t[0]->nrows, 6);
  assert_int_equal(t[1]->nrows, 6);
  for (size_t r = 0; r < 6; r++) {
    assert_string_equal(STR(t[0], "model", r), W[r].model);
    assert_string_equal(STR(t[0], "task", r), W[r].task);
    assert_string_equal(STR(t[0], "prompt_variant", r), "default");
    assert_int_equal(I64(t[0], "seeds", r), W[r].seeds);
    assert_int_equal(I64(t[0], "n", r), W[r].n);
    assert_int_equal(I64(t[0], "correct", r), W[r].correct);
    assert_true(F64(t[0], "accuracy", r) == (double)W[r].correct / (double)W[r].n);
    assert_int_equal(I64(t[0], "answered", r), W[r].answered);
    assert_int_equal(I64(t[0], "missing", r), W[r].missing);
    assert_int_equal(I64(t[0], "unparsed", r), W[r].unparsed);
    assert_int_equal(I64(t[0], "engine_error", r), W[r].eerr);
    assert_int_equal(I64(t[1], "correct", r), W[r].q_correct);
    assert_int_equal(I64(t[1], "unparsed", r), W[r].q_unparsed);
  }
  assert_int_equal(I64(t[0], "n_no_answer", 2), 1);
  assert_int_equal(I64(t[0], "n_ok", 2), 3);
  /* the CI of (m, a): items 0 and 1, each item's two seeds one cluster (num 2 and 0 of 2) */
  tl_cluster_draws *d = tl_cluster_draws_new(200, 7);
  const int64_t num[2] = {2, 0}, den[2] = {2, 2};
  double lo, hi;
  assert_int_equal(tl_cluster_ci_drawn(d, num, den, 2, 0.95, &lo, &hi), TL_OK);
  tl_cluster_draws_free(d);
  assert_true(F64(t[0], "ci_lo", 0) == lo && F64(t[0], "ci_hi", 0) == hi);
  for (int i = 0; i < n; i++) tl_table_free(t[i]);
  free(t);
  for (int b = 0; b < 3; b++) free(blk[b]);
}

/* The audit: over the replied units (the primary's status neither missing nor engine_error) of
 * every model; task b has none: n 0 and accuracy NaN. */
static void test_audit(void **state) {
  (void)state;
  tl_acctab at = make(2);
  int64_t *blk[3];
  fill(&at, 3, blk);
  tl_table **t = NULL;
  int n = 0;
  assert_int_equal(tl_acctab_tables(&at, CFGS, 3, blk, &t, &n), TL_OK);
  const tl_table *au = t[2];
  static const struct {
    const char *task, *mode;
    int64_t n, correct, disagree, here, primary;
  } W[] = {
      {"a", "p", 6, 3, 0, 0, 0}, {"a", "q", 6, 3, 2, 1, 1}, {"b", "p", 0, 0, 0, 0, 0},
      {"b", "q", 0, 0, 0, 0, 0}, {"all", "p", 6, 3, 0, 0, 0}, {"all", "q", 6, 3, 2, 1, 1},
  };
  assert_int_equal(au->nrows, 6);
  for (size_t r = 0; r < 6; r++) {
    assert_string_equal(STR(au, "task", r), W[r].task);
    assert_string_equal(STR(au, "mode", r), W[r].mode);
    assert_int_equal(I64(au, "n", r), W[r].n);
    assert_int_equal(I64(au, "correct", r), W[r].correct);
    if (W[r].n) assert_true(F64(au, "accuracy", r) == (double)W[r].correct / (double)W[r].n);
    else assert_true(isnan(F64(au, "accuracy", r)));
    assert_int_equal(I64(au, "disagree", r), W[r].disagree);
    assert_int_equal(I64(au, "correct_only_here", r), W[r].here);
    assert_int_equal(I64(au, "correct_only_primary", r), W[r].primary);
  }
  for (int i = 0; i < n; i++) tl_table_free(t[i]);
  free(t);
  for (int b = 0; b < 3; b++) free(blk[b]);
}

/* The items table's per-mode columns and cells, from the descriptor. */
static void test_item_cols(void **state) {
  (void)state;
  tl_acctab at = make(2);
  tl_table *t = tl_table_new("/items/x");
  assert_int_equal(tl_table_add_col(t, "id", TL_COL_STR, "id"), 0);
  assert_int_equal(tl_acctab_item_cols(&at, t), 0);
  static const char *const names[] = {"id",       "answer_p", "status_p", "rule_p", "correct_p",
                                      "answer_q", "status_q", "rule_q",   "correct_q"};
  assert_int_equal(t->ncols, 9);
  for (int c = 0; c < 9; c++) assert_string_equal(t->cols[c].name, names[c]);
  assert_string_equal(t->cols[5].doc, "answer of q here");
  tl_row r;
  memset(&r, 0, sizeof r);
  r.res[0] = (tl_parsed){.answer = "A", .correct = 1, .status = TL_PS_OK, .rule = "r0"};
  r.res[1] = (tl_parsed){.answer = "B", .correct = 0, .status = TL_PS_AMBIGUOUS, .rule = "r1"};
  size_t row = tl_table_add_row(t);
  tl_table_ref_str(t, row, 0, "i0");
  assert_int_equal(tl_acctab_item_cells(&at, t, row, 1, &r), 9);
  assert_string_equal(STR(t, "answer_q", 0), "B");
  assert_string_equal(STR(t, "status_q", 0), "ambiguous");
  assert_string_equal(STR(t, "rule_p", 0), "r0");
  assert_int_equal(I64(t, "correct_p", 0), 1);
  tl_table_free(t);
}

/* The summary: its first line from the name; the audit section only with two modes; the
 * primary's statuses over every model's "all" row. */
static void summary_of(int n_modes, char *buf, size_t cap) {
  tl_acctab at = make(n_modes);
  int64_t *blk[3];
  fill(&at, 3, blk);
  tl_table **t = NULL;
  int n = 0;
  assert_int_equal(tl_acctab_tables(&at, CFGS, 3, blk, &t, &n), TL_OK);
  FILE *f = tmpfile();
  assert_non_null(f);
  tl_acctab_summary(&at, 3, NU, t, f);
  rewind(f);
  size_t got = fread(buf, 1, cap - 1, f);
  buf[got] = 0;
  fclose(f);
  for (int i = 0; i < n; i++) tl_table_free(t[i]);
  free(t);
  for (int b = 0; b < 3; b++) free(blk[b]);
}

static void test_summary(void **state) {
  (void)state;
  static char buf[8192];
  summary_of(2, buf, sizeof buf);
  assert_non_null(strstr(buf, "x: 3 items in 2 tasks x 3 model/seed configs = 9 units; modes: p (primary) q\n"));
  assert_non_null(strstr(buf, "\nmode audit against p "));
  assert_non_null(strstr(buf, "\nall  q                       6    0.500 2 (1/1)\n"));
  assert_non_null(strstr(buf, "\nb    q                       0      nan 0 (0/0)\n"));
  assert_non_null(strstr(buf, "\np parse statuses: ok=5 no_answer=1 missing=2 engine_error=1\n"));
  summary_of(1, buf, sizeof buf);
  assert_non_null(strstr(buf, "modes: p (primary)\n"));
  assert_null(strstr(buf, "mode audit"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metrics),
      cmocka_unit_test(test_audit),
      cmocka_unit_test(test_item_cols),
      cmocka_unit_test(test_summary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
