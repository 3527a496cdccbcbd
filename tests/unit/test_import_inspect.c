/* test_import_inspect.c - the inspect_ai reader (src/import/imp_inspect.c) and its ZIP reader
 * (src/import/zip.c).
 *
 * Fixtures: tests/fixtures/import/inspect/make_eval.py writes them into a temporary folder at
 * setup (Python's zipfile, an implementation independent of zip.c): one log as .json, as .eval
 * with stored, deflate and zstd entries, with data descriptors, with ZIP64 fields, and broken
 * copies (cut short, a CRC mismatch, an unknown method, an encrypted entry, a zip bomb and a
 * lying header). Shared: the three real logs in ../shared/data/harness-outputs/inspect. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "import_util.h"
#include "zip.h"

static char fx[256]; /* the fixtures' folder; "" when they could not be made */

static const char *fxp(const char *name) {
  static char b[4][512];
  static int k;
  char *p = b[k++ & 3];
  snprintf(p, sizeof b[0], "%s/%s", fx, name);
  return p;
}

static int setup(void **state) {
  (void)state;
  snprintf(fx, sizeof fx, "/tmp/tally_test_inspect_XXXXXX");
  if (!mkdtemp(fx)) return -1;
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "python3 %s/tests/fixtures/import/inspect/make_eval.py %s || /usr/bin/python3 "
           "%s/tests/fixtures/import/inspect/make_eval.py %s",
           TALLY_SOURCE_DIR, fx, TALLY_SOURCE_DIR, fx);
  if (system(cmd) != 0) {
    fprintf(stderr, "cannot make the fixtures (python3?): %s\n", cmd);
    rmdir(fx);
    fx[0] = '\0';
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (fx[0]) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx);
    if (system(cmd) != 0) return -1;
  }
  return 0;
}

#define NEED_FX() \
  if (!fx[0]) TU_SKIP("the fixtures could not be made (python3 absent?)\n")

/* The six samples of make_eval.py, mapped (the same from every container). */
static void check_mixed(const iu_recs *c, const tl_inlog *log, const char *path) {
  assert_int_equal(c->n, 6);
  for (int i = 0; i < c->n; i++) {
    assert_string_equal(c->r[i].task, "fixture_mcq");
    assert_string_equal(c->r[i].model, "provider/fixture-model");
    assert_int_equal(c->r[i].turn_id, -1);
    assert_int_equal(c->r[i].stage, 0);
    assert_non_null(strstr(c->r[i].where, path));
  }
  /* 1 epoch 1: attachment resolved in input and item; choice scorer C */
  const iu_rec *r = iu_find(c, "1", 0);
  assert_string_equal(r->response, "ANSWER: B");
  assert_string_equal(r->prompt, "What is 2+2?");
  assert_string_equal(r->item,
                      "{\"id\":\"1\",\"question\":\"What is 2+2?\",\"choices\":[\"3\",\"4\",\"5\"],\"answer\":\"B\","
                      "\"subject\":\"arithmetic\"}");
  assert_true(r->has_verdict);
  assert_true(r->verdict == 1.0);
  assert_string_equal(r->metric, "choice");
  assert_string_equal(r->extracted, "B");
  assert_null(r->extra); /* the explanation is the response itself: not kept twice */
  assert_non_null(strstr(r->where, "sample '1' epoch 1"));
  /* 1 epoch 2: seed 1, I -> 0 */
  r = iu_find(c, "1", 1);
  assert_string_equal(r->response, "ANSWER: C");
  assert_true(r->has_verdict && r->verdict == 0.0);
  assert_string_equal(r->extracted, "C");
  /* q2: messages input, content parts, list target, P -> 0.5 */
  r = iu_find(c, "q2", 0);
  assert_string_equal(r->response, "ANSWER:\nA");
  assert_non_null(strstr(r->prompt, "\"role\":\"system\""));
  assert_string_equal(r->item,
                      "{\"id\":\"q2\",\"question\":\"Pick the primes.\",\"choices\":[\"2\",\"4\",\"7\"],\"answer\":[\"A\","
                      "\"C\"]}");
  assert_true(r->has_verdict && r->verdict == 0.5);
  assert_string_equal(r->metric, "match");
  /* 3: error: null response, no verdict, error kept */
  r = iu_find(c, "3", 0);
  assert_true(r->null_response);
  assert_false(r->has_verdict);
  assert_string_equal(r->extra, "{\"error\":\"RuntimeError: rate limit exceeded\"}");
  /* 4: model-graded: the last assistant message, the grader's explanation and the other scorer */
  r = iu_find(c, "4", 0);
  assert_string_equal(r->response, "It is Paris.");
  assert_true(r->has_verdict && r->verdict == 1.0);
  assert_string_equal(r->metric, "model_graded_qa");
  assert_string_equal(r->extra,
                      "{\"explanation\":\"The answer names Paris, the gold. GRADE: C\",\"score_metadata\":{\"grader\":"
                      "\"judge/model\"},\"scores\":{\"exact\":0}}");
  /* 5: the missing attachment is reported, the string kept */
  r = iu_find(c, "5", 0);
  assert_string_equal(r->prompt, "attachment://deadbeef");
  assert_true(r->has_verdict && r->verdict == 1.0);
  assert_int_equal(iu_logged(log, "sample '5' epoch 1", "'attachment://deadbeef' is not in the sample's attachments"),
                   1);
}

static void read_ok(const char *name, iu_recs *c) {
  tl_inlog log;
  tl_err err;
  const char *p = fxp(name);
  tl_status st = iu_read("inspect", p, 0, c, &log, &err);
  if (st != TL_OK) fail_msg("%s: %s", name, err.msg);
  iu_print_log(&log);
  check_mixed(c, &log, p);
  assert_int_equal(log.total, 1);
  tl_inlog_release(&log);
}

static void test_json_log(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  read_ok("mixed.json", &c);
  iu_free(&c);
}

static void test_eval_stored_deflate_zstd(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  read_ok("mixed.eval", &c);
  iu_free(&c);
  /* the zip holds the three methods */
  tl_zip z;
  tl_err err;
  assert_int_equal(tl_zip_open(&z, fxp("mixed.eval"), &err), TL_OK);
  assert_int_equal(tl_zip_find(&z, "samples/1_epoch_1.json")->method, 0);
  assert_int_equal(tl_zip_find(&z, "samples/1_epoch_2.json")->method, 8);
  assert_int_equal(tl_zip_find(&z, "samples/q2_epoch_1.json")->method, 93);
  tl_zip_close(&z);
}

static void test_eval_data_descriptors(void **state) {
  (void)state;
  NEED_FX();
  tl_zip z;
  tl_err err;
  assert_int_equal(tl_zip_open(&z, fxp("dd.eval"), &err), TL_OK);
  for (size_t i = 0; i < z.n; i++) assert_true(z.e[i].flags & 8);
  tl_zip_close(&z);
  iu_recs c = {0};
  read_ok("dd.eval", &c);
  iu_free(&c);
}

static void test_eval_zip64(void **state) {
  (void)state;
  NEED_FX();
  tl_zip z;
  tl_err err;
  assert_int_equal(tl_zip_open(&z, fxp("zip64.eval"), &err), TL_OK);
  assert_int_equal(z.n, 7);
  tl_zip_close(&z);
  iu_recs c = {0};
  read_ok("zip64.eval", &c);
  iu_free(&c);
}

static void test_detect(void **state) {
  (void)state;
  NEED_FX();
  tl_err err;
  const char *good[] = {"mixed.json", "mixed.eval", "dd.eval", "zip64.eval", "crc.eval"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    const tl_importer *imp = tl_importer_detect(fxp(good[i]), &err);
    if (!imp) fail_msg("%s: %s", good[i], err.msg);
    assert_string_equal(imp->name, "inspect");
  }
  /* cut short: no directory, so not recognised; the formats known are named */
  assert_null(tl_importer_detect(fxp("truncated.eval"), &err));
  assert_non_null(strstr(err.msg, "truncated.eval"));
  assert_non_null(strstr(err.msg, "inspect"));
  assert_non_null(strstr(err.msg, "helm"));
  /* a JSON file of another shape */
  FILE *f = fopen(fxp("other.json"), "w");
  assert_non_null(f);
  fputs("{\"results\": {\"arc\": {}}, \"versions\": {\"arc\": 1}, \"eval\": {\"task\": \"x\"}}\n", f);
  fclose(f);
  assert_null(tl_importer_detect(fxp("other.json"), &err));
}

static void test_truncated(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("inspect", fxp("truncated.eval"), 0, &c, &log, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "truncated.eval"));
  assert_non_null(strstr(err.msg, "no end of central directory record"));
  assert_int_equal(c.n, 0);
  tl_inlog_release(&log);
}

/* A bad entry costs that entry only, named with the file and the entry; strict input stops. */
static void bad_entry(const char *file, const char *entry, const char *what, int nrec) {
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  tl_status st = iu_read("inspect", fxp(file), 0, &c, &log, &err);
  if (st != TL_OK) fail_msg("%s: %s", file, err.msg);
  iu_print_log(&log);
  assert_int_equal(c.n, nrec);
  assert_int_equal(iu_logged(&log, entry, what), 1);
  assert_int_equal(iu_logged(&log, file, entry), 1);
  tl_inlog_release(&log);
  assert_int_equal(iu_read("inspect", fxp(file), 1, &c, &log, &err), TL_EINPUT);
  tl_inlog_release(&log);
  iu_free(&c);
}

static void test_crc_mismatch(void **state) {
  (void)state;
  NEED_FX();
  bad_entry("crc.eval", "'samples/q2_epoch_1.json'", "CRC-32 mismatch (stored 12345678", 5);
}

static void test_unknown_method(void **state) {
  (void)state;
  NEED_FX();
  bad_entry("method.eval", "'samples/3_epoch_1.json'", "compression method 12 is not supported", 5);
}

static void test_encrypted(void **state) {
  (void)state;
  NEED_FX();
  bad_entry("encrypted.eval", "'samples/4_epoch_1.json'", "is encrypted", 5);
}

static void test_bomb_and_lying_header(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("inspect", fxp("bomb.eval"), 0, &c, &log, &err), TL_OK);
  iu_print_log(&log);
  assert_int_equal(c.n, 1);
  assert_string_equal(c.r[0].id, "4");
  assert_int_equal(iu_logged(&log, "'samples/1_epoch_1.json' inflates past its declared 1000 bytes", NULL), 1);
  assert_int_equal(iu_logged(&log, "'samples/5_epoch_1.json' declares 1073741823 bytes", "lying header"), 1);
  assert_int_equal(log.total, 2);
  tl_inlog_release(&log);
  iu_free(&c);
}

/* What cJSON would take silently (a key given twice, a \u0000 escape): reported with the file,
 * the entry or the sample's place, and the sample skipped; the others read. */
static void test_duplicate_keys(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("inspect", fxp("dupkey.eval"), 0, &c, &log, &err), TL_OK);
  iu_print_log(&log);
  assert_int_equal(c.n, 5);
  assert_int_equal(iu_logged(&log, "dupkey.eval: entry 'samples/1_epoch_2.json': duplicate key 'id' in 'the top level'",
                             "the sample is skipped"),
                   1);
  for (int i = 0; i < c.n; i++) assert_false(strcmp(c.r[i].id, "1") == 0 && c.r[i].seed == 1);
  tl_inlog_release(&log);
  assert_int_equal(iu_read("inspect", fxp("dupkey.json"), 0, &c, &log, &err), TL_OK);
  iu_print_log(&log);
  assert_int_equal(c.n, 4);
  assert_int_equal(iu_logged(&log, "dupkey.json: duplicate key 'id' in 'samples[1]'", NULL), 1);
  assert_int_equal(iu_logged(&log, "dupkey.json: \\u0000 escape (a NUL character) in 'samples[3].input'", NULL), 1);
  for (int i = 0; i < c.n; i++) assert_string_not_equal(c.r[i].id, "3");
  /* the problems are on the samples' records (2 and 4) */
  int on2 = 0, on4 = 0;
  for (size_t i = 0; i < (size_t)log.total; i++) {
    long line = (long)log.table->cols[2].v.i[i];
    on2 += line == 2;
    on4 += line == 4;
  }
  assert_int_equal(on2, 1);
  assert_int_equal(on4, 1);
  tl_inlog_release(&log);
  iu_free(&c);
}

/* A log still running: no header.json, the eval from _journal/start.json. */
static void test_unfinished(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  const tl_importer *imp = tl_importer_detect(fxp("unfinished.eval"), &err);
  if (!imp) fail_msg("%s", err.msg);
  assert_string_equal(imp->name, "inspect");
  assert_int_equal(iu_read("inspect", fxp("unfinished.eval"), 0, &c, &log, &err), TL_OK);
  assert_int_equal(c.n, 2);
  assert_string_equal(c.r[1].task, "fixture_mcq");
  assert_string_equal(c.r[1].model, "provider/fixture-model");
  assert_int_equal(c.r[1].seed, 1);
  assert_int_equal(log.total, 0);
  tl_inlog_release(&log);
  iu_free(&c);
}

/* zip.c on its own: bytes that are no zip, a directory that lies about its size. */
static void test_zip_mem(void **state) {
  (void)state;
  tl_zip z;
  tl_err err;
  assert_int_equal(tl_zip_open_mem(&z, "x.eval", "PK\3\4 not a zip at all, no end record", 37, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "'x.eval': no end of central directory record"));
  tl_zip_close(&z);
  /* an empty zip: an end record alone */
  unsigned char e[22] = {'P', 'K', 5, 6};
  assert_int_equal(tl_zip_open_mem(&z, "e.eval", e, sizeof e, &err), TL_OK);
  assert_int_equal(z.n, 0);
  tl_zip_close(&z);
  /* it claims 3 entries in a directory of 200 bytes at offset 0: past the end record */
  e[8] = e[10] = 3;
  e[12] = 200;
  assert_int_equal(tl_zip_open_mem(&z, "e.eval", e, sizeof e, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "does not fit"));
  tl_zip_close(&z);
}

/* An emit error stops the reader with it. */
static void test_emit_stops(void **state) {
  (void)state;
  NEED_FX();
  iu_recs c = {0};
  c.stop_at = 2;
  tl_inlog log;
  tl_err err;
  const tl_importer *imp = tl_importer_find("inspect");
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  assert_int_equal(imp->read(fxp("mixed.eval"), &log, iu_emit, &c, &err), TL_EIO);
  assert_string_equal(err.msg, "emit stops here");
  assert_int_equal(c.n, 1);
  tl_inlog_release(&log);
  iu_free(&c);
}

/* ---- the real logs ---- */

/* The accuracy the log's results give for its first scorer. */
static double results_accuracy(const char *path) {
  tl_buf b;
  tl_buf_init(&b);
  tl_err err;
  assert_int_equal(tl_file_read(path, 0, &b, &err), TL_OK);
  cJSON *root = cJSON_Parse(b.data);
  tl_buf_release(&b);
  assert_non_null(root);
  const cJSON *sc = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "results"), "scores"), 0);
  const cJSON *acc = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "metrics"), "accuracy"), "value");
  assert_true(cJSON_IsNumber(acc));
  double v = acc->valuedouble;
  cJSON_Delete(root);
  return v;
}

static void real_log(const char *path, int n, const char *task, const char *model, const char *const *ids) {
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  const tl_importer *imp = tl_importer_detect(path, &err);
  if (!imp) fail_msg("%s", err.msg);
  assert_string_equal(imp->name, "inspect");
  if (iu_read("inspect", path, 0, &c, &log, &err) != TL_OK) fail_msg("%s", err.msg);
  iu_print_log(&log);
  assert_int_equal(log.total, 0);
  assert_int_equal(c.n, n);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    const iu_rec *r = &c.r[i];
    assert_string_equal(r->id, ids[i]);
    assert_int_equal(r->seed, 0);
    assert_string_equal(r->task, task);
    assert_string_equal(r->model, model);
    assert_non_null(r->response);
    assert_true(r->response[0]);
    assert_null(strstr(r->prompt, "attachment://"));
    assert_null(strstr(r->item, "attachment://"));
    assert_null(strstr(r->response, "attachment://"));
    assert_true(r->has_verdict);
    assert_string_equal(r->metric, "choice");
    assert_non_null(r->extracted);
    sum += r->verdict;
  }
  double acc = results_accuracy(path);
  print_message("%s: %d samples, accuracy from the verdicts %.3f, the log's own %.3f\n", task, n, sum / n, acc);
  assert_true(sum / n == acc);
  tl_inlog_release(&log);
  iu_free(&c);
}

static void test_real_arc(void **state) {
  (void)state;
  TU_NEED_SHARED(p, "harness-outputs/inspect/data_arc_sonnet.json");
  static const char *const ids[] = {"1", "2", "3", "4", "5"};
  real_log(p, 5, "inspect_evals/arc_easy", "anthropic/claude-sonnet-4-0", ids);
  /* the choice scorer's letters and the items */
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("inspect", p, 0, &c, &log, &err), TL_OK);
  static const char *const letters[] = {"A", "B", "D", "D", "B"};
  for (int i = 0; i < 5; i++) {
    assert_string_equal(c.r[i].extracted, letters[i]);
    char want[32];
    snprintf(want, sizeof want, "\"answer\":\"%s\"", letters[i]);
    assert_non_null(strstr(c.r[i].item, want));
    assert_non_null(strstr(c.r[i].item, "\"choices\":[\""));
  }
  assert_non_null(strstr(c.r[0].item, "\"question\":\"Which statement best explains why photosynthesis"));
  tl_inlog_release(&log);
  iu_free(&c);
}

static void test_real_pubmedqa(void **state) {
  (void)state;
  TU_NEED_SHARED(p, "harness-outputs/inspect/data_pubmedqa_gpt4o_mini.json");
  static const char *const ids[] = {"12377809", "26163474"};
  real_log(p, 2, "inspect_evals/pubmedqa", "openai/azure/gpt-4o-mini", ids);
  /* no output.completion: the text of the output's first choice */
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("inspect", p, 0, &c, &log, &err), TL_OK);
  assert_string_equal(c.r[0].response, "ANSWER: A");
  tl_inlog_release(&log);
  iu_free(&c);
}

/* The model-graded log holds its header only (no samples): refused, saying so. */
static void test_real_header_only(void **state) {
  (void)state;
  TU_NEED_SHARED(p, "harness-outputs/inspect/data_with_llm_scoring.json");
  tl_err err;
  const tl_importer *imp = tl_importer_detect(p, &err);
  if (!imp) fail_msg("%s", err.msg);
  assert_string_equal(imp->name, "inspect");
  iu_recs c = {0};
  tl_inlog log;
  assert_int_equal(iu_read("inspect", p, 0, &c, &log, &err), TL_EINPUT);
  print_message("%s\n", err.msg);
  assert_non_null(strstr(err.msg, "data_with_llm_scoring.json': an inspect_ai log without samples (its results count 1000)"));
  assert_int_equal(c.n, 0);
  tl_inlog_release(&log);
}

int main(int argc, char **argv) {
  const struct CMUnitTest fixture[] = {
      cmocka_unit_test(test_json_log),
      cmocka_unit_test(test_eval_stored_deflate_zstd),
      cmocka_unit_test(test_eval_data_descriptors),
      cmocka_unit_test(test_eval_zip64),
      cmocka_unit_test(test_detect),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_crc_mismatch),
      cmocka_unit_test(test_unknown_method),
      cmocka_unit_test(test_encrypted),
      cmocka_unit_test(test_bomb_and_lying_header),
      cmocka_unit_test(test_unfinished),
      cmocka_unit_test(test_duplicate_keys),
      cmocka_unit_test(test_zip_mem),
      cmocka_unit_test(test_emit_stops),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_real_arc),
      cmocka_unit_test(test_real_pubmedqa),
      cmocka_unit_test(test_real_header_only),
  };
  return TU_SHARED_GROUP(argc, argv, fixture, shared, setup, teardown);
}
