/* test_bench_hooks.c - the registry's side of the module contract (tally/registry.h):
 *   - sizes checked at registration: a fake module (the test module's table with one field
 *     broken) whose max_modes exceeds TL_MAX_MODES, whose max_acc exceeds TL_MAX_ACC, whose
 *     nstages exceeds TL_MAX_STAGES, or that lacks a required callback or a hook's callback is
 *     refused with an internal error naming it; every registered module passes;
 *   - the hooks the test module brings from its own folder (src/core/bench/test_judged): its
 *     answer format, its named parser and its compare defaults, found through the registry only
 *     under TALLY_TEST_MODULES=1;
 *   - the formats, parsers and defaults the commands used to hard-code, now the modules': the
 *     LAVE release rows and the SpatialEval reference output (disjoint claims), the eight parser
 *     names in their order and the "--parser is required" list, compare's three defaults. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include "testutil.h"
#include "tally/bench.h"
#include "test_judged.h"

static void modules_on(int on) {
  if (on) assert_int_equal(setenv("TALLY_TEST_MODULES", "1", 1), 0);
  else assert_int_equal(unsetenv("TALLY_TEST_MODULES"), 0);
}

/* tl_bench_check of vt: TL_EINTERNAL with `want` in the message. */
static void refused(const tl_bench_vt *vt, const char *want) {
  tl_err err = {{0}};
  assert_int_equal(tl_bench_check(vt, &err), TL_EINTERNAL);
  if (!strstr(err.msg, want)) fail_msg("message '%s' lacks '%s'", err.msg, want);
  assert_non_null(strstr(err.msg, "internal error"));
}

static tl_status no_run(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *out,
                        tl_err *err) {
  return TL_OK;
}

static void test_sizes_checked(void **state) {
  (void)state;
  tl_err err = {{0}};
  tl_bench_vt fake = tl_bench_test_judged;
  fake.name = "fake";
  assert_int_equal(tl_bench_check(&fake, &err), TL_OK);
  fake.max_modes = TL_MAX_MODES + 1; /* would write past tl_row.res */
  refused(&fake, "benchmark module 'fake': max_modes 7 is outside 1..6 (TL_MAX_MODES");
  fake.max_modes = 0;
  refused(&fake, "max_modes 0 is outside");
  fake = tl_bench_test_judged;
  fake.name = "fake";
  fake.max_acc = TL_MAX_ACC + 1; /* would write past the driver's layout arrays */
  refused(&fake, "benchmark module 'fake': max_acc 9 is outside 1..8 (TL_MAX_ACC");
  fake = tl_bench_test_judged;
  fake.name = "fake";
  fake.nstages = TL_MAX_STAGES + 1;
  refused(&fake, "benchmark module 'fake': nstages 9 is outside 1..8 (TL_MAX_STAGES)");
  fake = tl_bench_test_judged;
  fake.name = "fake";
  fake.score = NULL;
  refused(&fake, "benchmark module 'fake' lacks a required callback");
  fake = tl_bench_test_judged;
  fake.name = NULL;
  refused(&fake, "a benchmark module has no name");
  /* a hook without its callbacks */
  fake = tl_bench_test_judged;
  fake.name = "fake";
  static const tl_named_parser NOOPEN = {.name = "x", .run = no_run};
  static const tl_named_parser *const LIST[] = {&NOOPEN, NULL};
  static const tl_parser_set SET = {.list = LIST, .kind = "k", .help = ""};
  fake.parsers = &SET;
  refused(&fake, "a parser lacks its name or callbacks");
  fake = tl_bench_test_judged;
  fake.name = "fake";
  static const tl_answer_format NOREAD = {.name = "f", .claims = NULL};
  static const tl_answer_format *const FMTS[] = {&NOREAD, NULL};
  fake.formats = FMTS;
  refused(&fake, "an answer format lacks its name or callbacks");
  fake = tl_bench_test_judged;
  fake.name = "fake";
  static const tl_compare_defaults NOMETRIC = {.metric = NULL, .by = "", .status = ""};
  fake.compare = &NOMETRIC;
  refused(&fake, "its compare defaults lack");
  /* every registered module passes, with and without the test modules */
  for (int on = 0; on < 2; on++) {
    modules_on(on);
    assert_int_equal(tl_bench_count(), 5u + (unsigned)on);
    if (tl_bench_registry_check(&err) != TL_OK) fail_msg("%s", err.msg);
    for (size_t i = 0; i < tl_bench_count(); i++) {
      const tl_bench_vt *vt = tl_bench_at(i);
      assert_true(vt->max_modes >= 1 && vt->max_modes <= TL_MAX_MODES);
      assert_true(vt->max_acc >= 1 && vt->max_acc <= TL_MAX_ACC);
    }
  }
  modules_on(0);
}

/* ---- the test module's answer format ---- */
static void test_judged_format(void **state) {
  (void)state;
  cJSON *o = cJSON_Parse("{\"question_id\":\"q7\",\"model\":\"m\",\"output\":\"the answer\",\"instruction\":\"Q?\"}");
  assert_non_null(o);
  modules_on(0);
  assert_null(tl_bench_answer_format(o, NULL)); /* nobody reads it without the test modules */
  modules_on(1);
  const tl_bench_vt *vt = NULL;
  const tl_answer_format *f = tl_bench_answer_format(o, &vt);
  assert_non_null(f);
  assert_ptr_equal(vt, &tl_bench_test_judged);
  assert_string_equal(f->name, "test_judged-qa");
  char idbuf[64], msg[256];
  tl_answer_line l = {NULL, NULL, NULL};
  assert_int_equal(f->read(o, &l, idbuf, sizeof idbuf, msg, sizeof msg), 0);
  assert_string_equal(l.id, "q7");
  assert_ptr_equal(l.id, idbuf);
  assert_string_equal(l.resp->valuestring, "the answer");
  assert_string_equal(l.prompt->valuestring, "Q?");
  cJSON_Delete(o);
  o = cJSON_Parse("{\"question_id\":7,\"output\":null}");
  assert_ptr_equal(tl_bench_answer_format(o, NULL), f);
  assert_int_equal(f->read(o, &l, idbuf, sizeof idbuf, msg, sizeof msg), -1);
  assert_string_equal(msg, "a test_judged-qa line needs 'question_id', a non-empty string");
  cJSON_Delete(o);
  modules_on(0);
}

/* ---- the formats replay.c used to parse: each its module's, claims disjoint ---- */
static void test_foreign_formats(void **state) {
  (void)state;
  static const struct {
    const char *line;
    const char *module; /* NULL: no format claims it */
    const char *id;     /* the id the format makes, NULL: the line's own */
    const char *resp;
  } C[] = {
      {"{\"dataset\":\"vqav2\",\"model\":\"m\",\"qid\":12,\"prediction\":\"two\"}", "vqa", "vqav2:12", "two"},
      {"{\"dataset\":\"okvqa\",\"qid\":\"a7\",\"prediction\":null}", "vqa", "okvqa:a7", NULL},
      {"{\"id\":\"x.tqa.1.0\",\"answer\":\"A\",\"oracle_answer\":\"A\",\"prompt\":\"P\"}", "spatialeval", NULL, "A"},
      /* an "id" makes a row with qid and prediction no LAVE-release row; the reference output
       * needs its "id" (without, the line is a bad line: missing field 'id') */
      {"{\"id\":\"i\",\"qid\":1,\"prediction\":\"p\",\"oracle_answer\":\"A\",\"answer\":\"B\"}", "spatialeval", NULL, "B"},
      {"{\"id\":\"i\",\"qid\":1,\"prediction\":\"p\"}", NULL, NULL, NULL},
      {"{\"answer\":\"A\",\"oracle_answer\":\"A\"}", NULL, NULL, NULL},
      {"{\"qid\":1,\"prediction\":\"p\",\"oracle_answer\":\"A\",\"answer\":\"B\"}", "vqa", NULL, NULL}, /* no dataset */
  };
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
    cJSON *o = cJSON_Parse(C[i].line);
    assert_non_null(o);
    const tl_bench_vt *vt = NULL;
    const tl_answer_format *f = tl_bench_answer_format(o, &vt);
    if (!C[i].module) {
      if (f) fail_msg("case %zu: claimed by %s", i, f->name);
      cJSON_Delete(o);
      continue;
    }
    if (!f) fail_msg("case %zu: no format", i);
    assert_string_equal(vt->name, C[i].module);
    char idbuf[320], msg[256] = "";
    tl_answer_line l = {NULL, NULL, NULL};
    int rc = f->read(o, &l, idbuf, sizeof idbuf, msg, sizeof msg);
    if (i == 6) { /* no dataset: a bad LAVE-release row */
      assert_int_equal(rc, -1);
      assert_string_equal(msg, "a LAVE-release row (it has 'qid' and 'prediction') needs 'dataset', a non-empty string");
      cJSON_Delete(o);
      continue;
    }
    if (rc) fail_msg("case %zu: %s", i, msg);
    if (C[i].id) assert_string_equal(l.id, C[i].id);
    else assert_null(l.id);
    if (C[i].resp) assert_string_equal(l.resp->valuestring, C[i].resp);
    else assert_true(cJSON_IsNull(l.resp));
    cJSON_Delete(o);
  }
}

/* ---- named parsers ---- */
static void test_parsers(void **state) {
  (void)state;
  modules_on(0);
  const char *names[16];
  static const char *const WANT[] = {"spatialeval-strict", "spatialeval-pr3", "spatialeval-legacy",
                                     "mtbench101-rating", "mtbench101-opencompass", "fastchat",
                                     "judgearena", "lave-rating", "mcq-strict", "mcq-lmeval-regex",
                                     "mcq-inspect-choice", "mcq-helm-mapping", "mcq-vlmeval-heuristic"};
  assert_int_equal(tl_bench_parser_names(names, 16), 13);
  for (int i = 0; i < 13; i++) assert_string_equal(names[i], WANT[i]);
  tl_buf b;
  tl_buf_init(&b);
  tl_bench_parser_list(&b);
  assert_string_equal(b.data, "spatialeval-strict, spatialeval-pr3, spatialeval-legacy, mtbench101-rating, "
                              "mtbench101-opencompass, fastchat or judgearena (MT-Bench-101), lave-rating (LAVE), or "
                              "mcq-strict, mcq-lmeval-regex, mcq-inspect-choice, mcq-helm-mapping or "
                              "mcq-vlmeval-heuristic (multiple choice)");
  assert_null(tl_bench_parser("test_judged-rating", NULL));
  const tl_bench_vt *vt = NULL;
  const tl_named_parser *lave = tl_bench_parser("lave-rating", &vt);
  assert_non_null(lave);
  assert_string_equal(vt->name, "vqa");
  assert_string_equal(lave->flag, "lave-compat");

  modules_on(1);
  assert_int_equal(tl_bench_parser_names(names, 16), 14);
  assert_string_equal(names[13], "test_judged-rating");
  tl_buf_reset(&b);
  tl_bench_parser_list(&b);
  assert_non_null(strstr(b.data, "mcq-vlmeval-heuristic (multiple choice), or test_judged-rating (test_judged)"));
  tl_buf_reset(&b);
  tl_bench_parser_usage(&b);
  assert_non_null(strstr(b.data, "\n      | test_judged-rating (test ratings)\n"));
  assert_non_null(strstr(b.data, "  test_judged-rating (the last 'Rating: [[n]]'; tests only):\n"));
  tl_buf_release(&b);
  const tl_named_parser *np = tl_bench_parser("test_judged-rating", &vt);
  assert_non_null(np);
  assert_ptr_equal(vt, &tl_bench_test_judged);
  assert_int_equal(np->needs_item, 0);
  void *st = NULL;
  tl_err err = {{0}};
  assert_int_equal(np->open(np, 0, &st, &err), TL_OK);
  static const struct {
    const char *response, *out;
  } R[] = {{"Rating: [[3]] then Rating: [[9]]", "{\"answer\":\"9\",\"rating\":9,\"status\":\"ok\",\"rule\":\"last_rating\"}"},
           {NULL, "{\"answer\":null,\"rating\":null,\"status\":\"missing\",\"rule\":\"no_judgment\"}"},
           {"Rating: [[0]]", "{\"answer\":null,\"rating\":null,\"status\":\"out_of_range\",\"rule\":\"rating_range\"}"}};
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
    tl_parse_line line = {NULL, NULL, R[i].response, NULL};
    cJSON *w = cJSON_CreateObject();
    assert_int_equal(np->run(np, st, 0, &line, w, &err), TL_OK);
    char *s = cJSON_PrintUnformatted(w);
    assert_string_equal(s, R[i].out);
    free(s);
    cJSON_Delete(w);
  }
  if (np->close) np->close(st);
  modules_on(0);
}

/* ---- compare defaults ---- */
static void test_compare_defaults(void **state) {
  (void)state;
  modules_on(0);
  static const struct {
    const char *bench, *metric, *by, *status;
    int dialogue;
  } D[] = {{"spatialeval", "correct_strict", "task", "status_strict", 0},
           {"vqa", "vqa_accuracy", "dataset", "vqa_status", 0},
           {"mtbench101", "rating", "task", "status", 1}};
  for (size_t i = 0; i < sizeof D / sizeof D[0]; i++) {
    const tl_compare_defaults *d = tl_bench_compare_defaults(D[i].bench);
    assert_non_null(d);
    assert_string_equal(d->metric, D[i].metric);
    assert_string_equal(d->by, D[i].by);
    assert_string_equal(d->status, D[i].status);
    assert_int_equal(d->dialogue, D[i].dialogue);
  }
  assert_null(tl_bench_compare_defaults("test_judged"));
  assert_null(tl_bench_compare_defaults("nope"));
  modules_on(1);
  const tl_compare_defaults *d = tl_bench_compare_defaults("test_judged");
  assert_non_null(d);
  assert_string_equal(d->metric, "rating");
  assert_string_equal(d->by, "");
  assert_string_equal(d->status, "status");
  assert_int_equal(d->dialogue, 1);
  modules_on(0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes_checked), cmocka_unit_test(test_judged_format),
      cmocka_unit_test(test_foreign_formats), cmocka_unit_test(test_parsers),
      cmocka_unit_test(test_compare_defaults),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
