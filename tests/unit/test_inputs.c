/* test_inputs.c - bad input is reported with file and line, counted, and loses nothing:
 * the JSONL reader, item loading, the replay engine and job validation. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "testutil.h"
#include "replay.h"
#include "tally/job.h"
#include "se_eval.h"

static char *write_tmp(const char *content, size_t n) {
  char *path = strdup("/tmp/tally-test-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, content, n), (ssize_t)n);
  close(fd);
  return path;
}

#define ITEM_MAP(inst, opt)                                                                      \
  "{\"id\":\"spatialmap.tqa." inst ".0\",\"text\":\"Q? Available options:\\nA. Northeast\\nB. " \
  "Northwest\\nC. Southwest\\nD. Southeast.\",\"oracle_answer\":\"Northeast\",\"oracle_option\":\"" opt \
  "\",\"oracle_full_answer\":\"" opt ". Northeast\"}\n"

static void test_jsonl_reader(void **state) {
  (void)state;
  /* line: 1 ok, 2 malformed, 3 blank, 4 invalid UTF-8, 5 too long, 6 ok (CRLF), 7 NUL byte,
   * 8 ok without \n */
  char big[3000];
  memset(big, 'x', sizeof big);
  big[0] = '"';
  big[sizeof big - 2] = '"';
  big[sizeof big - 1] = '\n';
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_puts(&b, "{\"a\":1}\n{\"a\":\n   \n\"\xff\xfe\"\n");
  tl_buf_append(&b, big, sizeof big);
  tl_buf_puts(&b, "{\"a\":2}\r\n");
  tl_buf_append(&b, "{\"a\":\0}\n", 8); /* line 7: a NUL byte must not merge lines */
  tl_buf_puts(&b, "[3]");
  char *path = write_tmp(b.data, b.len);
  tl_buf_release(&b);
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, path, 2048, &err), TL_OK);
  static const struct {
    tl_jl_result res;
    long line;
    const char *msg;
  } WANT[] = {{TL_JL_RECORD, 1, NULL},        {TL_JL_BAD, 2, "malformed JSON"},
              {TL_JL_BAD, 4, "invalid UTF-8"}, {TL_JL_BAD, 5, "longer than"},
              {TL_JL_RECORD, 6, NULL},        {TL_JL_BAD, 7, "NUL byte"},
              {TL_JL_RECORD, 8, NULL},        {TL_JL_EOF, 8, NULL}};
  for (size_t i = 0; i < sizeof WANT / sizeof WANT[0]; i++) {
    cJSON *o = NULL;
    tl_jl_result res = tl_jsonl_next(&r, &o, &err);
    assert_int_equal(res, WANT[i].res);
    assert_int_equal(r.line_no, WANT[i].line);
    if (WANT[i].msg) {
      char where[64];
      snprintf(where, sizeof where, "%s:%ld:", path, WANT[i].line);
      assert_non_null(strstr(err.msg, where));
      assert_non_null(strstr(err.msg, WANT[i].msg));
    }
    cJSON_Delete(o);
  }
  assert_int_equal(r.n_records, 3);
  assert_int_equal(r.n_bad, 4);
  tl_jsonl_close(&r);
  assert_int_equal(tl_jsonl_open(&r, "/nonexistent/x.jsonl", 0, &err), TL_EIO);
  assert_non_null(strstr(err.msg, "/nonexistent/x.jsonl"));
  unlink(path);
  free(path);
}

static void test_items_bad_lines(void **state) {
  (void)state;
  const char *content = ITEM_MAP("2000", "A")         /* 1 ok */
      "{not json\n"                                   /* 2 malformed */
      "{\"id\":\"spatialmap.tqa.2001.0\"}\n"          /* 3 missing field */
      "{\"id\":\"bogus\",\"text\":\"t\",\"oracle_answer\":\"x\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. x\"}\n" /* 4 bad id */
      ITEM_MAP("2000", "B")                           /* 5 duplicate */
      ITEM_MAP("1999", "C");                          /* 6 ok */
  char *path = write_tmp(content, strlen(content));
  char *empty = write_tmp("", 0);
  char *paths[2] = {path, empty};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_se_itemset s;
  tl_err err;
  assert_int_equal(tl_se_itemset_load(&s, paths, 2, 0, &log, &err), TL_OK);
  assert_int_equal(s.n, 2);
  assert_string_equal(s.items[0].id, "spatialmap.tqa.1999.0"); /* sorted by id */
  assert_string_equal(s.items[1].oracle_option, "A");          /* first of duplicates kept */
  assert_int_equal(log.total, 5);
  assert_int_equal(log.counts[TL_IN_MALFORMED_JSON], 1);
  assert_int_equal(log.counts[TL_IN_MISSING_FIELD], 1);
  assert_int_equal(log.counts[TL_IN_BAD_ID], 1);
  assert_int_equal(log.counts[TL_IN_DUPLICATE], 1);
  assert_int_equal(log.counts[TL_IN_EMPTY_FILE], 1);
  /* the table keeps file and line of each */
  long lines[] = {2, 3, 4, 5, 0};
  for (int i = 0; i < 5; i++) assert_int_equal(log.table->cols[2].v.i[i], lines[i]);
  tl_se_itemset_release(&s);
  tl_inlog_release(&log);
  /* strict: stops at the first problem */
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK);
  assert_int_equal(tl_se_itemset_load(&s, paths, 1, 0, &log, &err), TL_EINPUT);
  assert_int_equal(log.total, 1);
  tl_inlog_release(&log);
  unlink(path);
  unlink(empty);
  free(path);
  free(empty);
}

static void test_replay(void **state) {
  (void)state;
  const char *content =
      "{\"id\":\"a.1\",\"model\":\"m\",\"seed\":1,\"response\":\"R1\"}\n"                 /* 1 */
      "{\"id\":\"a.2\",\"response\":\"R2\"}\n"                                          /* 2 default model */
      "{\"id\":\"a.3\",\"answer\":\"R3\",\"oracle_answer\":\"x\",\"prompt\":\"P3\"}\n"  /* 3 reference */
      "{\"id\":\"a.4\",\"model\":\"m\",\"response\":null}\n"                            /* 4 null */
      "{\"id\":\"a.1\",\"model\":\"m\",\"seed\":1,\"response\":\"again\"}\n"            /* 5 duplicate */
      "{\"id\":\"a.5\",\"model\":\"m\",\"seed\":1.5,\"response\":\"x\"}\n"              /* 6 bad seed */
      "{\"id\":\"a.6\",\"model\":\"m\"}\n"                                               /* 7 missing */
      "{\"id\":\"a.7\",\"model\":\"m\",\"prompt_variant\":\"nope\",\"response\":\"x\"}\n"; /* 8 bad variant */
  char *path = write_tmp(content, strlen(content));
  tl_replay_source src = {path, "dflt", 7, TL_SE_PROMPT_LETTER};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, &r, &err), TL_OK);
  assert_int_equal(tl_replay_count(r), 4);
  assert_int_equal(log.total, 4);
  assert_int_equal(log.counts[TL_IN_DUPLICATE], 1);
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 2);
  assert_int_equal(log.counts[TL_IN_MISSING_FIELD], 1);
  tl_engine *e = tl_replay_engine(r);
  tl_eng_request q[] = {{10, "a.1", "m", 1, TL_SE_PROMPT_LETTER, NULL},
                        {11, "a.2", "dflt", 7, TL_SE_PROMPT_LETTER, NULL},
                        {12, "a.3", "dflt", 7, TL_SE_PROMPT_LETTER, NULL},
                        {13, "a.4", "m", 7, TL_SE_PROMPT_LETTER, NULL},
                        {14, "a.1", "m", 2, TL_SE_PROMPT_LETTER, NULL}};
  for (int i = 0; i < 5; i++) assert_int_equal(e->vt->submit(e, &q[i]), TL_OK);
  tl_eng_reply rep[8];
  int k = e->vt->poll(e, rep, 8, 0);
  assert_int_equal(k, 5);
  assert_int_equal(rep[0].tag, 10);
  assert_string_equal(rep[0].text, "R1"); /* the first of the duplicates */
  assert_string_equal(rep[1].text, "R2");
  assert_string_equal(rep[2].text, "R3");
  assert_string_equal(rep[2].prompt, "P3");
  assert_null(rep[3].text);
  assert_non_null(rep[3].error);
  assert_null(rep[4].text); /* seed 2 has no answer */
  char want_src[4200];
  snprintf(want_src, sizeof want_src, "%s:3", path);
  assert_string_equal(rep[2].source, want_src);
  for (int i = 0; i < k; i++) tl_eng_reply_release(&rep[i]);
  assert_int_equal(tl_replay_served(r), 5);
  e->vt->free(e);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

static void test_job_validation(void **state) {
  (void)state;
  static const struct {
    const char *json;
    int nprob; /* 0 = valid */
    const char *needle;
  } T[] = {
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i.jsonl\",\"answers\":\"a.jsonl\"}]}", 0, NULL},
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":[\"i.jsonl\"],\"answers\":[{\"path\":\"a.jsonl\",\"model\":\"m\",\"seed\":3}],\"parsers\":[\"strict\",\"legacy\"],\"prompt_variant\":\"letter\",\"models\":[\"m\"],\"seeds\":[1,2]}]}", 0, NULL},
      {"{\"output\":\"o.h5\"", 1, "malformed JSON at line 1"},
      {"[]", 1, "must be a JSON object"},
      {"{\"benchmarks\":[]}", 2, "output"},
      {"{\"output\":\"o.h5\",\"outptu\":1,\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}", 1, "unknown key 'outptu'"},
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"mmlu\",\"items\":\"i\",\"answers\":\"a\",\"parsers\":[\"strict\",\"fuzzy\",\"strict\"]}]}", 3, "fuzzy"},
      {"{\"output\":\"o.h5\",\"studies\":[{\"name\":\"s1\",\"input\":\"t.csv\",\"human\":\"h\",\"metrics\":[\"a\",\"b\"],\"method\":\"percentile\",\"permutation\":true}]}", 0, NULL},
      {"{\"output\":\"o.h5\",\"studies\":[{\"name\":\"s 1\",\"human\":\"h\",\"metrics\":[],\"method\":\"x\",\"ci\":2,\"resamples\":1},{\"name\":\"s 1\"}]}", 10, "method"},
      {"{\"output\":\"o.h5\",\"engine\":\"openai\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":[{\"model\":1}],\"seeds\":[1.5],\"prompt_variant\":\"x\"}]}", 4, "engine 'openai'"},
  };
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    char *path = write_tmp(T[i].json, strlen(T[i].json));
    tl_job job;
    tl_buf probs;
    tl_buf_init(&probs);
    int n = -1;
    tl_status st = tl_job_load(path, &job, &probs, &n);
    if (n != T[i].nprob) fail_msg("case %zu: %d problems, want %d:\n%s", i, n, T[i].nprob, probs.data);
    if (T[i].nprob == 0) {
      assert_int_equal(st, TL_OK);
      assert_int_equal(job.n_benches + job.n_studies, 1);
      assert_non_null(strstr(job.output, "/o.h5"));
      tl_job_release(&job);
    } else {
      assert_int_equal(st, TL_EJOB);
      assert_non_null(strstr(probs.data, path)); /* every line names the job file */
      if (!strstr(probs.data, T[i].needle)) fail_msg("case %zu: no '%s' in:\n%s", i, T[i].needle, probs.data);
    }
    tl_buf_release(&probs);
    unlink(path);
    free(path);
  }
}

static void test_utf8(void **state) {
  (void)state;
  static const struct {
    const char *s;
    int valid;
  } V[] = {{"abc", 1}, {"Narwhal\xe2\x80\x99s", 1}, {"\xc3\xa9", 1}, {"\xc0\xaf", 0},
           {"\xed\xa0\x80", 0}, {"\xe2\x80", 0}, {"\xf4\x90\x80\x80", 0}, {"\xf0\x9f\x98\x80", 1}};
  for (size_t i = 0; i < sizeof V / sizeof V[0]; i++)
    assert_int_equal(tl_utf8_valid(V[i].s, strlen(V[i].s), NULL), V[i].valid);
  static const struct {
    const char *in, *out;
  } L[] = {{"NorthEAST", "northeast"}, {"\xc3\x89T\xc3\x89", "\xc3\xa9t\xc3\xa9"},
           {"\xce\xa3", "\xcf\x83"}, {"Wolf\xe2\x80\x99S", "wolf\xe2\x80\x99s"}, {"", ""}};
  for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
    char *lo = tl_utf8_lower(L[i].in, strlen(L[i].in));
    assert_string_equal(lo, L[i].out);
    free(lo);
  }
}

static void test_paths(void **state) {
  (void)state;
  static const struct {
    const char *dir, *path, *want;
  } T[] = {{"jobs", "../out/demo.h5", "out/demo.h5"},
           {"jobs", "/abs/x.h5", "/abs/x.h5"},
           {".", "a/./b//c", "a/b/c"},
           {"../up", "../../x", "../../x"},
           {"/", "../x", "/x"},
           {"/data/jobs", "../items.jsonl", "/data/items.jsonl"},
           {"a", "..", "."}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    char *p = tl_path_resolve(T[i].dir, T[i].path);
    assert_string_equal(p, T[i].want);
    free(p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jsonl_reader), cmocka_unit_test(test_items_bad_lines),
      cmocka_unit_test(test_replay),       cmocka_unit_test(test_job_validation),
      cmocka_unit_test(test_utf8),         cmocka_unit_test(test_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
