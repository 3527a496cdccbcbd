/* test_se_tables.c - SpatialEval's question modes and summary tables (issue 27): items' images
 * and the "modes" selection at load; the metric tables grouped by mode with the model's overall
 * row; accuracy = correct / n (missing, engine_error, unparsed score 0); answered, missing,
 * unparsed, engine_error; std with ddof 1 (NaN for one seed); the CI of every qid -1 row equal
 * to tl_cluster_ci over the row's items with each item's seeds as one cluster. */
#define _GNU_SOURCE /* mkdtemp */
#include "testutil.h"

#include <math.h>
#include <unistd.h>

#include "se_eval.h"
#include "tally/boot.h"
#include "tally/inlog.h"

#define OPTS "Q? Available options:\\nA. x\\nB. y\\nC. z\\nD. w."
#define ITEM(id, img) "{\"id\":\"" id "\",\"text\":\"" OPTS "\",\"oracle_answer\":\"y\",\"oracle_option\":\"B\"," \
                      "\"oracle_full_answer\":\"B. y\"" img "}\n"

static char *write_file(const char *dir, const char *name, const char *content) {
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(content, f);
  fclose(f);
  return p;
}

static const tl_se_item *find(const tl_se_itemset *s, const char *id) {
  size_t i;
  return tl_strmap_get(&s->by_id, id, &i) ? &s->items[i] : NULL;
}

/* Images resolve against the items file's folder or the "images" folder; a tqa item drops its
 * image; a vision item without one is bad input (file:line) only when a server is asked; items
 * of unselected modes are left out (kept in left_out). */
static void test_load(void **state) {
  (void)state;
  char dir[] = "/tmp/test_se_tables.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *path = write_file(dir, "items.jsonl",
                          ITEM("spatialmap.tqa.2000.0", ",\"image\":\"t.png\"")   /* 1 */
                          ITEM("spatialmap.vqa.2000.0", ",\"image\":\"img/a.png\"") /* 2 */
                          ITEM("mazenav.vtqa.1.0", ",\"image\":\"/abs/b.png\"")   /* 3 */
                          ITEM("mazenav.vqa.2.0", ",\"image\":null")              /* 4: none */
                          ITEM("mazenav.vqa.3.0", ",\"image\":7"));               /* 5: bad field */
  char *paths[1] = {path};
  tl_inlog log;
  tl_se_itemset s;
  tl_err err;
  /* replay: images optional */
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  assert_int_equal(tl_se_itemset_load_opts(&s, paths, 1, NULL, 0, &log, &err), TL_OK);
  assert_int_equal(s.n, 4);
  assert_int_equal(log.total, 1);
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 1);
  assert_null(find(&s, "spatialmap.tqa.2000.0")->image);
  assert_int_equal(find(&s, "spatialmap.tqa.2000.0")->qmode, TL_SE_TQA);
  char want[512];
  snprintf(want, sizeof want, "%s/img/a.png", dir);
  assert_string_equal(find(&s, "spatialmap.vqa.2000.0")->image, want);
  assert_int_equal(find(&s, "spatialmap.vqa.2000.0")->qmode, TL_SE_VQA);
  assert_string_equal(find(&s, "mazenav.vtqa.1.0")->image, "/abs/b.png");
  assert_int_equal(find(&s, "mazenav.vtqa.1.0")->qmode, TL_SE_VTQA);
  assert_null(find(&s, "mazenav.vqa.2.0")->image);
  assert_int_equal(s.per_qmode[TL_SE_TQA], 1);
  assert_int_equal(s.per_qmode[TL_SE_VQA], 2);
  assert_int_equal(s.per_qmode[TL_SE_VTQA], 1);
  tl_se_itemset_release(&s);
  tl_inlog_release(&log);
  /* a server: the vqa item without an image is missing_field at line 4, left out; "images" */
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_se_load_opts o = {"/pics", 1, 0};
  assert_int_equal(tl_se_itemset_load_opts(&s, paths, 1, &o, 0, &log, &err), TL_OK);
  assert_int_equal(s.n, 3);
  assert_null(find(&s, "mazenav.vqa.2.0"));
  assert_int_equal(log.counts[TL_IN_MISSING_FIELD], 1);
  assert_int_equal(log.table->cols[2].v.i[0], 4);
  assert_string_equal(find(&s, "spatialmap.vqa.2000.0")->image, "/pics/img/a.png");
  tl_se_itemset_release(&s);
  tl_inlog_release(&log);
  /* strict input stops there */
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK);
  assert_int_equal(tl_se_itemset_load_opts(&s, paths, 1, &o, 0, &log, &err), TL_EINPUT);
  tl_inlog_release(&log);
  /* modes: tqa and vtqa only; the vqa items are left out, not reported */
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_se_load_opts m = {NULL, 0, (1u << TL_SE_TQA) | (1u << TL_SE_VTQA)};
  assert_int_equal(tl_se_itemset_load_opts(&s, paths, 1, &m, 0, &log, &err), TL_OK);
  assert_int_equal(s.n, 2);
  assert_int_equal(log.total, 1); /* the bad field only */
  assert_true(tl_strmap_get(&s.left_out, "spatialmap.vqa.2000.0", NULL));
  assert_true(tl_strmap_get(&s.left_out, "mazenav.vqa.2.0", NULL));
  assert_false(tl_strmap_get(&s.left_out, "mazenav.vtqa.1.0", NULL));
  tl_se_itemset_release(&s);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
  rmdir(dir);
}

static int col(const tl_table *t, const char *name) {
  int c = tl_table_col(t, name);
  assert_true(c >= 0);
  return c;
}

/* The across-seeds row of (model, task, mode, qid); -1 when absent. */
static long arow(const tl_table *a, const char *model, const char *task, const char *mode, int qid) {
  for (size_t r = 0; r < a->nrows; r++)
    if (!strcmp(a->cols[col(a, "model")].v.s[r], model) && !strcmp(a->cols[col(a, "task")].v.s[r], task) &&
        !strcmp(a->cols[col(a, "mode")].v.s[r], mode) && a->cols[col(a, "qid")].v.i[r] == qid)
      return (long)r;
  return -1;
}

static void test_tables(void **state) {
  (void)state;
  /* items (sorted by id): 0 mazenav.vqa.1.0, 1 spatialmap.tqa.1.0, 2 spatialmap.tqa.2.0,
   * 3 spatialmap.tqa.3.1, 4 spatialmap.vqa.1.0 */
  static const char *const IDS[] = {"mazenav.vqa.1.0", "spatialmap.tqa.1.0", "spatialmap.tqa.2.0",
                                    "spatialmap.tqa.3.1", "spatialmap.vqa.1.0"};
  enum { NI = 5, NC = 3 };
  tl_se_itemset s;
  memset(&s, 0, sizeof s);
  tl_strmap_init(&s.by_id);
  tl_strmap_init(&s.left_out);
  s.items = calloc(NI, sizeof *s.items);
  for (int i = 0; i < NI; i++) {
    char js[512];
    snprintf(js, sizeof js, "{\"id\":\"%s\",\"text\":\"Q? Available options:\\nA. x\\nB. y.\",\"oracle_answer\":\"y\","
             "\"oracle_option\":\"B\",\"oracle_full_answer\":\"B. y\"}", IDS[i]);
    cJSON *o = cJSON_Parse(js);
    tl_err e;
    assert_int_equal(tl_se_item_from_json(o, &s.items[i], &e), TL_OK);
    cJSON_Delete(o);
    assert_int_equal(tl_strmap_put(&s.by_id, IDS[i], (size_t)i, NULL, NULL), TL_OK);
  }
  s.n = NI;
  /* cfgs: model a seeds 0 and 1, model b seed 0 */
  tl_cfg cfgs[NC] = {{"a", 0, 0}, {"a", 0, 1}, {"b", 0, 0}};
  /* statuses per (cfg, item): o = ok correct, w = ok wrong, m = missing, e = engine_error,
   * n = no_answer (unparsed) */
  static const char *const ST[NC] = {"eomwo", "eownw", "mmnoo"};
  const tl_se_mode modes[1] = {TL_SE_STRICT};
  int64_t *c = calloc(tl_se_counts_len(NC, 1), sizeof *c);
  int64_t *ic = calloc(tl_se_item_counts_len(NC, NI, 1), sizeof *ic);
  for (uint32_t cf = 0; cf < NC; cf++)
    for (uint32_t i = 0; i < NI; i++) {
      tl_row r;
      tl_row_init(&r);
      char k = ST[cf][i];
      r.res[0].status = k == 'm' ? TL_PS_MISSING : k == 'e' ? TL_PS_ENGINE_ERROR : k == 'n' ? TL_PS_NO_ANSWER : TL_PS_OK;
      r.res[0].correct = k == 'o';
      tl_unit u = {cf, i, 0};
      tl_se_counts_add(c, &s, NC, &u, &r, 1, 1);
      tl_se_item_counts_add(ic, NI, &u, &r, 1);
    }
  tl_table *t = NULL, *a = NULL;
  assert_int_equal(tl_se_metric_tables(c, cfgs, NC, modes, 1, 0, &t, &a), TL_OK);
  tl_cluster_draws *d = tl_cluster_draws_new(1000, 0);
  assert_int_equal(tl_se_fill_ci(a, &s, ic, cfgs, NC, 1, 0, d), TL_OK);
  tl_cluster_draws_free(d);

  /* per seed: a, seed 1, spatialmap tqa (items 1..3: o w n) -> n 3, correct 1, accuracy 1/3 */
  int found = 0;
  for (size_t r = 0; r < t->nrows; r++) {
    if (strcmp(t->cols[col(t, "model")].v.s[r], "a") || t->cols[col(t, "seed")].v.i[r] != 1 ||
        strcmp(t->cols[col(t, "task")].v.s[r], "spatialmap") || strcmp(t->cols[col(t, "mode")].v.s[r], "tqa") ||
        t->cols[col(t, "qid")].v.i[r] != -1)
      continue;
    found++;
    assert_int_equal(t->cols[col(t, "n")].v.i[r], 3);
    assert_int_equal(t->cols[col(t, "correct")].v.i[r], 1);
    assert_true(t->cols[col(t, "accuracy")].v.f[r] == 1.0 / 3.0);
    assert_int_equal(t->cols[col(t, "n_no_answer")].v.i[r], 1);
  }
  assert_int_equal(found, 1);
  /* mazenav vqa of a: both seeds engine_error: accuracy 0 (in n), not NaN */
  long r = arow(a, "a", "mazenav", "vqa", -1);
  assert_true(r >= 0);
  assert_int_equal(a->cols[col(a, "n")].v.i[r], 2);
  assert_int_equal(a->cols[col(a, "engine_error")].v.i[r], 2);
  assert_int_equal(a->cols[col(a, "answered")].v.i[r], 0);
  assert_true(a->cols[col(a, "mean")].v.f[r] == 0.0);
  assert_true(a->cols[col(a, "std")].v.f[r] == 0.0);
  assert_true(isnan(a->cols[col(a, "ci_lo")].v.f[r])); /* one item: no CI */
  /* a, spatialmap tqa: seed 0 "omw" -> 1/3, seed 1 "own" -> 1/3 */
  r = arow(a, "a", "spatialmap", "tqa", -1);
  assert_true(r >= 0);
  assert_int_equal(a->cols[col(a, "n_seeds")].v.i[r], 2);
  assert_int_equal(a->cols[col(a, "n")].v.i[r], 6);
  assert_int_equal(a->cols[col(a, "missing")].v.i[r], 1);
  assert_int_equal(a->cols[col(a, "unparsed")].v.i[r], 1);
  assert_int_equal(a->cols[col(a, "answered")].v.i[r], 5);
  assert_true(fabs(a->cols[col(a, "mean")].v.f[r] - 1.0 / 3.0) < 1e-15);
  assert_true(a->cols[col(a, "std")].v.f[r] == 0.0);
  {
    const double num[3] = {2, 0, 0}, den[3] = {2, 2, 2}; /* items 1, 2, 3 over seeds 0 and 1 */
    double lo, hi;
    assert_int_equal(tl_cluster_ci(num, den, 3, 1000, 0, 0.95, &lo, &hi), TL_OK);
    assert_true(a->cols[col(a, "ci_lo")].v.f[r] == lo && a->cols[col(a, "ci_hi")].v.f[r] == hi);
    assert_true(lo < hi);
  }
  /* a, spatialmap vqa (item 4: o, w): per-seed 1 and 0 -> mean 0.5, std (ddof 1) sqrt(0.5) */
  r = arow(a, "a", "spatialmap", "vqa", -1);
  assert_true(fabs(a->cols[col(a, "std")].v.f[r] - sqrt(0.5)) < 1e-15);
  assert_true(fabs(a->cols[col(a, "se")].v.f[r] - 0.5) < 1e-15);
  /* a, overall: seed 0 "eomwo" 2/5, seed 1 "eownw" 1/5; CI over the 5 items */
  r = arow(a, "a", "all", "all", -1);
  assert_true(r >= 0);
  assert_int_equal(a->cols[col(a, "n")].v.i[r], 10);
  assert_int_equal(a->cols[col(a, "engine_error")].v.i[r], 2);
  assert_int_equal(a->cols[col(a, "missing")].v.i[r], 1);
  assert_int_equal(a->cols[col(a, "unparsed")].v.i[r], 1);
  assert_true(fabs(a->cols[col(a, "mean")].v.f[r] - 0.3) < 1e-15);
  {
    const double num[5] = {0, 2, 0, 0, 1}, den[5] = {2, 2, 2, 2, 2};
    double lo, hi;
    assert_int_equal(tl_cluster_ci(num, den, 5, 1000, 0, 0.95, &lo, &hi), TL_OK);
    assert_true(a->cols[col(a, "ci_lo")].v.f[r] == lo && a->cols[col(a, "ci_hi")].v.f[r] == hi);
  }
  /* b: one seed: std and se NaN; spatialmap tqa "mno" -> 1/3, 1 missing, 1 unparsed */
  r = arow(a, "b", "spatialmap", "tqa", -1);
  assert_true(r >= 0);
  assert_true(isnan(a->cols[col(a, "std")].v.f[r]) && isnan(a->cols[col(a, "se")].v.f[r]));
  assert_int_equal(a->cols[col(a, "missing")].v.i[r], 1);
  assert_int_equal(a->cols[col(a, "unparsed")].v.i[r], 1);
  assert_true(fabs(a->cols[col(a, "mean")].v.f[r] - 1.0 / 3.0) < 1e-15);
  /* qid rows have no CI; every row's mode is a mode or "all" */
  for (size_t k = 0; k < a->nrows; k++) {
    if (a->cols[col(a, "qid")].v.i[k] != -1) assert_true(isnan(a->cols[col(a, "ci_lo")].v.f[k]));
    const char *md = a->cols[col(a, "mode")].v.s[k];
    assert_true(!strcmp(md, "tqa") || !strcmp(md, "vqa") || !strcmp(md, "all"));
  }
  tl_table_free(t);
  tl_table_free(a);
  free(c);
  free(ic);
  tl_se_itemset_release(&s);
}

/* 60 items x 3 seeds with scattered outcomes: the shared draws give tl_cluster_ci's bounds bit for
 * bit, for two B and seeds, reusing one set of draws for the task row and the overall row. */
static void test_ci_equal(void **state) {
  (void)state;
  enum { NI = 60, NC = 3 };
  tl_se_itemset s;
  memset(&s, 0, sizeof s);
  tl_strmap_init(&s.by_id);
  tl_strmap_init(&s.left_out);
  s.items = calloc(NI, sizeof *s.items);
  for (int i = 0; i < NI; i++) {
    char js[512], id[64];
    snprintf(id, sizeof id, "spatialgrid.vtqa.%03d.0", i);
    snprintf(js, sizeof js, "{\"id\":\"%s\",\"text\":\"Q? Available options:\\nA. x\\nB. y.\",\"oracle_answer\":\"y\","
             "\"oracle_option\":\"B\",\"oracle_full_answer\":\"B. y\"}", id);
    cJSON *o = cJSON_Parse(js);
    assert_non_null(o);
    tl_err e;
    assert_int_equal(tl_se_item_from_json(o, &s.items[i], &e), TL_OK);
    cJSON_Delete(o);
    assert_int_equal(tl_strmap_put(&s.by_id, id, (size_t)i, NULL, NULL), TL_OK);
  }
  s.n = NI;
  tl_cfg cfgs[NC] = {{"m", 1, 0}, {"m", 1, 1}, {"m", 1, 2}};
  const tl_se_mode modes[2] = {TL_SE_STRICT, TL_SE_PR3};
  int64_t *c = calloc(tl_se_counts_len(NC, 2), sizeof *c);
  int64_t *ic = calloc(tl_se_item_counts_len(NC, NI, 2), sizeof *ic);
  double num[2][NI] = {{0}}, den[NI];
  for (uint32_t cf = 0; cf < NC; cf++)
    for (uint32_t i = 0; i < NI; i++) {
      tl_row r;
      tl_row_init(&r);
      for (int k = 0; k < 2; k++) {
        r.res[k].status = TL_PS_OK;
        r.res[k].correct = ((i * 7 + cf * 3 + (uint32_t)k * 5) % 11) < 6;
        num[k][i] += r.res[k].correct;
      }
      den[i] = NC;
      tl_unit u = {cf, i, 0};
      tl_se_counts_add(c, &s, NC, &u, &r, 1, 2);
      tl_se_item_counts_add(ic, NI, &u, &r, 2);
    }
  static const struct { uint32_t B; uint64_t seed; } P[] = {{1000, 0}, {257, 12345}};
  for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) {
    tl_cluster_draws *d = tl_cluster_draws_new(P[p].B, P[p].seed);
    for (int k = 0; k < 2; k++) {
      tl_table *t = NULL, *a = NULL;
      assert_int_equal(tl_se_metric_tables(c, cfgs, NC, modes, 2, k, &t, &a), TL_OK);
      assert_int_equal(tl_se_fill_ci(a, &s, ic, cfgs, NC, 2, k, d), TL_OK);
      double lo, hi;
      assert_int_equal(tl_cluster_ci(num[k], den, NI, P[p].B, P[p].seed, 0.95, &lo, &hi), TL_OK);
      int rows = 0;
      for (size_t r = 0; r < a->nrows; r++) {
        if (a->cols[col(a, "qid")].v.i[r] != -1) continue;
        assert_true(a->cols[col(a, "ci_lo")].v.f[r] == lo && a->cols[col(a, "ci_hi")].v.f[r] == hi);
        rows++;
      }
      assert_int_equal(rows, 2); /* spatialgrid vtqa, and the overall row: the same items */
      tl_table_free(t);
      tl_table_free(a);
    }
    tl_cluster_draws_free(d);
  }
  free(c);
  free(ic);
  tl_se_itemset_release(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_load), cmocka_unit_test(test_tables),
                                     cmocka_unit_test(test_ci_equal)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
