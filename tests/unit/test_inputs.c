/* test_inputs.c - bad input is reported with file and line, counted, and loses nothing:
 * the JSONL reader, item loading, the replay engine, the resume journal and job validation. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <unistd.h>

#include "testutil.h"
#include "tu_tmp.h"
#include "journal.h"
#include "replay.h"
#include "tally/job.h"
#include "se_eval.h"

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
  char *path = tu_write_tmp_n(b.data, b.len);
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
  char *path = tu_write_tmp_n(content, strlen(content));
  char *empty = tu_write_tmp_n("", 0);
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

/* The i-th recorded problem of a log. */
static const char *log_kind(const tl_inlog *l, size_t i) { return l->table->cols[0].v.s[i]; }
static long log_line(const tl_inlog *l, size_t i) { return (long)l->table->cols[2].v.i[i]; }
static const char *log_msg(const tl_inlog *l, size_t i) { return l->table->cols[3].v.s[i]; }

/* tmpl with every '@' replaced by path, into out. */
static void subst_path(const char *tmpl, const char *path, char *out, size_t n) {
  size_t k = 0;
  for (const char *c = tmpl; *c && k + 1 < n; c++) {
    if (*c == '@') {
      for (const char *p = path; *p && k + 1 < n; p++) out[k++] = *p;
    } else {
      out[k++] = *c;
    }
  }
  out[k] = 0;
}

static const char *const SE_VARIANTS[] = {"reason", "letter", NULL};

static tl_eng_request rq(uint64_t tag, const char *bench, int stage, const char *model,
                         const char *variant, int seed, const char *id, uint32_t sub) {
  tl_eng_request q;
  memset(&q, 0, sizeof q);
  q.tag = tag;
  q.key.bench = bench;
  q.key.stage = stage;
  q.key.model = model;
  q.key.variant = variant;
  q.key.seed = seed;
  q.key.id = id;
  q.key.sub = sub;
  q.temperature = -1;
  return q;
}

/* What tl_replay_open hands its key_fn: every accepted line's key, copied. */
typedef struct {
  char *bench, *id, *model, *variant, *path;
  int seed, stage;
  uint32_t sub;
  long line;
} seen_key;

typedef struct {
  seen_key k[64];
  size_t n;
  size_t stop_at; /* return nonzero at the stop_at-th key (0 = never) */
} seen_keys;

static int record_key(void *ctx, const tl_unit_key *key, const char *path, long line) {
  seen_keys *c = ctx;
  assert_true(c->n < 64);
  seen_key *o = &c->k[c->n++];
  o->bench = strdup(key->bench);
  o->id = strdup(key->id);
  o->model = strdup(key->model);
  o->variant = strdup(key->variant);
  o->path = strdup(path);
  o->seed = key->seed;
  o->stage = key->stage;
  o->sub = key->sub;
  o->line = line;
  return c->stop_at && c->n == c->stop_at;
}

static void seen_release(seen_keys *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->k[i].bench);
    free(c->k[i].id);
    free(c->k[i].model);
    free(c->k[i].variant);
    free(c->k[i].path);
  }
  c->n = 0;
}

/* The forced collision of the tests: every key hashes to one value. */
static uint64_t one_hash(const tl_unit_key *key) {
  (void)key;
  return 42;
}

static void test_replay(void **state) {
  (void)state;
  tl_replay_test_hash(NULL);
  const char *content =
      "{\"id\":\"a.1\",\"model\":\"m\",\"seed\":1,\"response\":\"R1\"}\n"                 /* 1 */
      "{\"id\":\"a.2\",\"response\":\"R2\"}\n"                                          /* 2 default model */
      "{\"id\":\"a.3\",\"answer\":\"R3\",\"oracle_answer\":\"x\",\"prompt\":\"P3\"}\n"  /* 3 reference */
      "{\"id\":\"a.4\",\"model\":\"m\",\"response\":null}\n"                            /* 4 null */
      "{\"id\":\"a.1\",\"model\":\"m\",\"seed\":1,\"response\":\"again\"}\n"            /* 5 duplicate */
      "{\"id\":\"a.5\",\"model\":\"m\",\"seed\":1.5,\"response\":\"x\"}\n"              /* 6 bad seed */
      "{\"id\":\"a.6\",\"model\":\"m\"}\n"                                               /* 7 missing */
      "{\"id\":\"a.7\",\"model\":\"m\",\"prompt_variant\":\"nope\",\"response\":\"x\"}\n"; /* 8 bad variant */
  char *path = tu_write_tmp_n(content, strlen(content));
  tl_replay_source src = {path, "spatialeval", 0, "dflt", 7, "letter", SE_VARIANTS};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  seen_keys seen = {0};
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, record_key, &seen, &r, &err), TL_OK);
  assert_int_equal(seen.n, 4);
  assert_int_equal(log.total, 4);
  assert_int_equal(log.counts[TL_IN_DUPLICATE], 1);
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 2);
  assert_int_equal(log.counts[TL_IN_MISSING_FIELD], 1);
  /* the messages are those of earlier versions, word for word */
  static const char *const MSG[] = {
      "duplicate answer for id 'a.1', model 'm', seed 1, variant letter (the one at @:1 is kept)",
      "field 'seed' is not an integer", "missing field 'response'",
      "field 'prompt_variant' is not \"reason\" or \"letter\""};
  for (size_t i = 0; i < 4; i++) {
    char want[4400];
    subst_path(MSG[i], path, want, sizeof want);
    assert_int_equal(log_line(&log, i), (long)i + 5);
    assert_string_equal(log_msg(&log, i), want);
  }
  /* keys: the line's fields, else the source's defaults; in load order, with file and line */
  static const long SEEN_LINE[] = {1, 2, 3, 4};
  static const char *const SEEN_ID[] = {"a.1", "a.2", "a.3", "a.4"};
  for (size_t i = 0; i < 4; i++) {
    assert_string_equal(seen.k[i].id, SEEN_ID[i]);
    assert_string_equal(seen.k[i].path, path);
    assert_int_equal(seen.k[i].line, SEEN_LINE[i]);
  }
  assert_string_equal(seen.k[0].bench, "spatialeval");
  assert_string_equal(seen.k[0].model, "m");
  assert_string_equal(seen.k[0].variant, "letter");
  assert_int_equal(seen.k[0].seed, 1);
  assert_int_equal(seen.k[0].sub, 0);
  assert_int_equal(seen.k[0].stage, 0);
  assert_string_equal(seen.k[1].model, "dflt");
  assert_int_equal(seen.k[1].seed, 7);
  seen_release(&seen);
  tl_engine *e = tl_replay_engine(r);
  tl_eng_request q[] = {rq(10, "spatialeval", 0, "m", "letter", 1, "a.1", 0),
                        rq(11, "spatialeval", 0, "dflt", "letter", 7, "a.2", 0),
                        rq(12, "spatialeval", 0, "dflt", "letter", 7, "a.3", 0),
                        rq(13, "spatialeval", 0, "m", "letter", 7, "a.4", 0),
                        rq(14, "spatialeval", 0, "m", "letter", 2, "a.1", 0)};
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
  assert_string_equal(rep[3].error, "the answer file records no response (null)");
  assert_null(rep[4].text); /* seed 2 has no answer */
  assert_string_equal(rep[4].error, "no answer in the replay files");
  char want_src[4200];
  snprintf(want_src, sizeof want_src, "%s:3", path);
  assert_string_equal(rep[2].source, want_src);
  for (int i = 0; i < k; i++) tl_eng_reply_release(&rep[i]);
  assert_int_equal(tl_replay_served(r), 5);
  assert_string_equal(e->vt->name, "replay");
  e->vt->free(e);
  assert_string_equal(tl_role_name(TL_ROLE_MODEL), "model"); /* src/core/run/engine.c */
  assert_string_equal(tl_role_name(TL_ROLE_JUDGE), "judge");
  assert_string_equal(tl_role_name(TL_ROLE__N), "?");
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

/* ---- replay: sub-units, stages, variant names, duplicates (table-driven) ---- */

typedef struct {
  const char *kind;
  long line;
  const char *msg; /* exact; '@' = the file's path */
} want_log;

typedef struct {
  const char *bench;
  int stage;
  const char *model, *variant;
  int seed;
  const char *id;
  uint32_t sub;
  const char *text; /* the reply wanted; NULL: no reply, with error */
  const char *error;
} want_reply;

static const char *const ABC[] = {"a", "b", "c", NULL};
static const char *const SOLO[] = {"solo", NULL};
#define NOANS "no answer in the replay files"
#define BADTURN "field 'turn' is not an integer >= 0"
#define SE "spatialeval"

static const struct {
  const char *name, *lines;
  int stage;                    /* of the source */
  const char *const *variants;  /* of the source */
  const char *variant;          /* the source's default */
  size_t nrec;
  uint32_t sub0;                /* key of record 0 */
  int stage0;
  const char *variant0;
  int nlog;
  want_log log[5];
  int nreq;
  want_reply req[6];
} RT[] = {
    {"\"turn\" is the sub-unit, 0 when absent",
     "{\"id\":\"d.1\",\"model\":\"m\",\"turn\":1,\"response\":\"T1\"}\n"
     "{\"id\":\"d.1\",\"model\":\"m\",\"response\":\"T0\"}\n"
     "{\"id\":\"d.2\",\"model\":\"m\",\"turn\":1,\"response\":\"only1\"}\n"
     "{\"id\":\"d.3\",\"model\":\"m\",\"turn\":4294967295,\"response\":\"max\"}\n",
     0, SE_VARIANTS, "reason", 4, 1, 0, "reason", 0, {{0}}, 6,
     {{SE, 0, "m", "reason", 0, "d.1", 1, "T1", NULL},
      {SE, 0, "m", "reason", 0, "d.1", 0, "T0", NULL},
      {SE, 0, "m", "reason", 0, "d.2", 1, "only1", NULL},
      {SE, 0, "m", "reason", 0, "d.2", 0, NULL, NOANS},
      {SE, 0, "m", "reason", 0, "d.3", 4294967295u, "max", NULL},
      {SE, 0, "m", "reason", 0, "d.3", 0, NULL, NOANS}}},
    {"a bad \"turn\" costs its line",
     "{\"id\":\"e.1\",\"model\":\"m\",\"turn\":-1,\"response\":\"x\"}\n"
     "{\"id\":\"e.2\",\"model\":\"m\",\"turn\":1.5,\"response\":\"x\"}\n"
     "{\"id\":\"e.3\",\"model\":\"m\",\"turn\":\"1\",\"response\":\"x\"}\n"
     "{\"id\":\"e.4\",\"model\":\"m\",\"turn\":4294967296,\"response\":\"x\"}\n"
     "{\"id\":\"e.5\",\"model\":\"m\",\"turn\":null,\"response\":\"x\"}\n"
     "{\"id\":\"e.6\",\"model\":\"m\",\"turn\":0,\"response\":\"ok\"}\n",
     0, SE_VARIANTS, "reason", 1, 0, 0, "reason", 5,
     {{"bad_field", 1, BADTURN}, {"bad_field", 2, BADTURN}, {"bad_field", 3, BADTURN},
      {"bad_field", 4, BADTURN}, {"bad_field", 5, BADTURN}},
     3,
     {{SE, 0, "m", "reason", 0, "e.6", 0, "ok", NULL},
      {SE, 0, "m", "reason", 0, "e.1", 0, NULL, NOANS},
      {SE, 0, "m", "reason", 0, "e.2", 1, NULL, NOANS}}},
    {"a judge's replies (stage 1) answer stage-1 requests only",
     "{\"id\":\"j.1\",\"model\":\"m\",\"response\":\"J1\"}\n"
     "{\"id\":\"j.1\",\"model\":\"m\",\"turn\":2,\"response\":\"J2\"}\n",
     1, SE_VARIANTS, "reason", 2, 0, 1, "reason", 0, {{0}}, 6,
     {{SE, 1, "m", "reason", 0, "j.1", 0, "J1", NULL},
      {SE, 0, "m", "reason", 0, "j.1", 0, NULL, NOANS},
      {SE, 1, "m", "reason", 0, "j.1", 2, "J2", NULL},
      {"other", 1, "m", "reason", 0, "j.1", 0, NULL, NOANS},
      {SE, 1, "m", "letter", 0, "j.1", 0, NULL, NOANS},
      {SE, 1, "m", "reason", 1, "j.1", 0, NULL, NOANS}}},
    {"three variant names: \"a\", \"b\" or \"c\"",
     "{\"id\":\"v.1\",\"model\":\"m\",\"prompt_variant\":\"d\",\"response\":\"x\"}\n"
     "{\"id\":\"v.2\",\"model\":\"m\",\"prompt_variant\":\"c\",\"response\":\"C\"}\n"
     "{\"id\":\"v.3\",\"model\":\"m\",\"prompt_variant\":3,\"response\":\"x\"}\n"
     "{\"id\":\"v.4\",\"model\":\"m\",\"response\":\"A\"}\n",
     0, ABC, "a", 2, 0, 0, "c", 2,
     {{"bad_field", 1, "field 'prompt_variant' is not \"a\", \"b\" or \"c\""},
      {"bad_field", 3, "field 'prompt_variant' is not \"a\", \"b\" or \"c\""}},
     3,
     {{SE, 0, "m", "c", 0, "v.2", 0, "C", NULL},
      {SE, 0, "m", "a", 0, "v.2", 0, NULL, NOANS},
      {SE, 0, "m", "a", 0, "v.4", 0, "A", NULL}}},
    {"one variant name",
     "{\"id\":\"o.1\",\"model\":\"m\",\"prompt_variant\":\"duo\",\"response\":\"x\"}\n"
     "{\"id\":\"o.2\",\"model\":\"m\",\"prompt_variant\":\"solo\",\"response\":\"S\"}\n",
     0, SOLO, "solo", 1, 0, 0, "solo", 1, {{"bad_field", 1, "field 'prompt_variant' is not \"solo\""}}, 1,
     {{SE, 0, "m", "solo", 0, "o.2", 0, "S", NULL}}},
    {"SpatialEval's two names, matched exactly",
     "{\"id\":\"s.1\",\"model\":\"m\",\"prompt_variant\":\"Reason\",\"response\":\"x\"}\n"
     "{\"id\":\"s.2\",\"model\":\"m\",\"prompt_variant\":\"letter\",\"response\":\"L\"}\n",
     0, SE_VARIANTS, "reason", 1, 0, 0, "letter", 1,
     {{"bad_field", 1, "field 'prompt_variant' is not \"reason\" or \"letter\""}}, 2,
     {{SE, 0, "m", "letter", 0, "s.2", 0, "L", NULL},
      {SE, 0, "m", "reason", 0, "s.2", 0, NULL, NOANS}}},
    {"no list: any non-empty variant name",
     "{\"id\":\"n.1\",\"model\":\"m\",\"prompt_variant\":\"zz\",\"response\":\"Z\"}\n"
     "{\"id\":\"n.2\",\"model\":\"m\",\"prompt_variant\":\"\",\"response\":\"x\"}\n"
     "{\"id\":\"n.3\",\"model\":\"m\",\"response\":\"P\"}\n",
     0, NULL, "plain", 2, 0, 0, "zz", 1,
     {{"bad_field", 2, "field 'prompt_variant' is not a non-empty string"}}, 3,
     {{SE, 0, "m", "zz", 0, "n.1", 0, "Z", NULL},
      {SE, 0, "m", "plain", 0, "n.3", 0, "P", NULL},
      {SE, 0, "m", "plain", 0, "n.1", 0, NULL, NOANS}}},
    {"duplicates name the turn when it is not 0",
     "{\"id\":\"x\",\"model\":\"m\",\"response\":\"first\"}\n"
     "{\"id\":\"x\",\"model\":\"m\",\"response\":\"second\"}\n"
     "{\"id\":\"x\",\"model\":\"m\",\"turn\":2,\"response\":\"t2 first\"}\n"
     "{\"id\":\"x\",\"model\":\"m\",\"turn\":2,\"response\":\"t2 second\"}\n",
     0, SE_VARIANTS, "reason", 2, 0, 0, "reason", 2,
     {{"duplicate", 2, "duplicate answer for id 'x', model 'm', seed 0, variant reason (the one at @:1 is kept)"},
      {"duplicate", 4, "duplicate answer for id 'x', model 'm', seed 0, variant reason, turn 2 (the one at @:3 is kept)"}},
     2,
     {{SE, 0, "m", "reason", 0, "x", 0, "first", NULL},
      {SE, 0, "m", "reason", 0, "x", 2, "t2 first", NULL}}},
    {"keys that differ in one field each are different keys",
     "{\"id\":\"k\",\"model\":\"m\",\"response\":\"base\"}\n"
     "{\"id\":\"k\",\"model\":\"m2\",\"response\":\"model\"}\n"
     "{\"id\":\"k\",\"model\":\"m\",\"seed\":1,\"response\":\"seed\"}\n"
     "{\"id\":\"k\",\"model\":\"m\",\"prompt_variant\":\"letter\",\"response\":\"variant\"}\n"
     "{\"id\":\"k\",\"model\":\"m\",\"turn\":1,\"response\":\"turn\"}\n"
     "{\"id\":\"k\",\"model\":\"m\",\"response\":\"again\"}\n"
     "{\"id\":\"kk\",\"model\":\"m\",\"response\":\"id\"}\n",
     0, SE_VARIANTS, "reason", 6, 0, 0, "reason", 1,
     {{"duplicate", 6, "duplicate answer for id 'k', model 'm', seed 0, variant reason (the one at @:1 is kept)"}},
     6,
     {{SE, 0, "m", "reason", 0, "k", 0, "base", NULL},
      {SE, 0, "m2", "reason", 0, "k", 0, "model", NULL},
      {SE, 0, "m", "reason", 1, "k", 0, "seed", NULL},
      {SE, 0, "m", "letter", 0, "k", 0, "variant", NULL},
      {SE, 0, "m", "reason", 0, "k", 1, "turn", NULL},
      {SE, 0, "m", "reason", 0, "kk", 0, "id", NULL}}},
    {"fields split differently are other keys",
     "{\"id\":\"ab\",\"model\":\"c\",\"response\":\"ab c\"}\n"
     "{\"id\":\"a\",\"model\":\"bc\",\"response\":\"a bc\"}\n",
     0, SE_VARIANTS, "reason", 2, 0, 0, "reason", 0, {{0}}, 4,
     {{SE, 0, "c", "reason", 0, "ab", 0, "ab c", NULL},
      {SE, 0, "bc", "reason", 0, "a", 0, "a bc", NULL},
      {SE, 0, "b", "reason", 0, "ac", 0, NULL, NOANS},
      {SE, 0, "", "reason", 0, "abc", 0, NULL, NOANS}}},
    {"duplicates of a judge's replies are duplicate judgments",
     "{\"id\":\"x\",\"model\":\"m\",\"seed\":3,\"response\":\"first\"}\n"
     "{\"id\":\"x\",\"model\":\"m\",\"seed\":3,\"response\":\"second\"}\n",
     1, SE_VARIANTS, "letter", 1, 0, 1, "letter", 1,
     {{"duplicate", 2, "duplicate judgment for id 'x', model 'm', seed 3, variant letter (the one at @:1 is kept)"}},
     1, {{SE, 1, "m", "letter", 3, "x", 0, "first", NULL}}},
};

/* Every case twice: with the real key hash, and with one hash for every key (each key then
 * collides with every other: the engine must tell them apart by their real keys). */
static void test_replay_keys(void **state) {
  (void)state;
  for (size_t run = 0; run < 2 * (sizeof RT / sizeof RT[0]); run++) {
    size_t c = run % (sizeof RT / sizeof RT[0]);
    int collide = run >= sizeof RT / sizeof RT[0];
    char name[200];
    snprintf(name, sizeof name, "%s%s", RT[c].name, collide ? " (every key one hash)" : "");
    tl_replay_test_hash(collide ? one_hash : NULL);
    char *path = tu_write_tmp_n(RT[c].lines, strlen(RT[c].lines));
    tl_replay_source src = {path, SE, RT[c].stage, NULL, 0, RT[c].variant, RT[c].variants};
    tl_inlog log;
    assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
    tl_replay *r;
    tl_err err;
    seen_keys seen = {0};
    if (tl_replay_open(&src, 1, 0, &log, record_key, &seen, &r, &err) != TL_OK) fail_msg("%s: %s", name, err.msg);
    if (seen.n != RT[c].nrec) fail_msg("%s: %zu replies, want %zu", name, seen.n, RT[c].nrec);
    if (log.total != RT[c].nlog) {
      for (long i = 0; i < log.total; i++) print_message("  %ld: %s\n", log_line(&log, (size_t)i), log_msg(&log, (size_t)i));
      fail_msg("%s: %ld problems, want %d", name, log.total, RT[c].nlog);
    }
    for (int i = 0; i < RT[c].nlog; i++) {
      char want[4400];
      subst_path(RT[c].log[i].msg, path, want, sizeof want);
      if (strcmp(log_kind(&log, (size_t)i), RT[c].log[i].kind) || log_line(&log, (size_t)i) != RT[c].log[i].line ||
          strcmp(log_msg(&log, (size_t)i), want))
        fail_msg("%s: problem %d is %s at line %ld: '%s'; want %s at line %ld: '%s'", name, i,
                 log_kind(&log, (size_t)i), log_line(&log, (size_t)i), log_msg(&log, (size_t)i),
                 RT[c].log[i].kind, RT[c].log[i].line, want);
    }
    const seen_key *key = &seen.k[0];
    assert_string_equal(key->bench, SE);
    if (key->sub != RT[c].sub0 || key->stage != RT[c].stage0 || strcmp(key->variant, RT[c].variant0))
      fail_msg("%s: record 0 has turn %u, stage %d, variant %s; want %u, %d, %s", name, (unsigned)key->sub,
               key->stage, key->variant, (unsigned)RT[c].sub0, RT[c].stage0, RT[c].variant0);
    tl_engine *e = tl_replay_engine(r);
    for (int i = 0; i < RT[c].nreq; i++) {
      const want_reply *w = &RT[c].req[i];
      tl_eng_request q = rq(100 + (uint64_t)i, w->bench, w->stage, w->model, w->variant, w->seed, w->id, w->sub);
      assert_int_equal(e->vt->submit(e, &q), TL_OK);
    }
    tl_eng_reply rep[8];
    int k = e->vt->poll(e, rep, 8, 0);
    assert_int_equal(k, RT[c].nreq);
    for (int i = 0; i < k; i++) {
      const want_reply *w = &RT[c].req[i];
      assert_int_equal(rep[i].tag, 100 + (uint64_t)i);
      int ok = w->text ? rep[i].text && !strcmp(rep[i].text, w->text) && !rep[i].error
                       : !rep[i].text && rep[i].error && !strcmp(rep[i].error, w->error);
      if (!ok)
        fail_msg("%s: request %d (%s, stage %d, %s, %s, seed %d, turn %u): text '%s', error '%s'; want '%s', '%s'",
                 name, i, w->bench, w->stage, w->model, w->variant, w->seed, (unsigned)w->sub,
                 rep[i].text ? rep[i].text : "(null)", rep[i].error ? rep[i].error : "(null)",
                 w->text ? w->text : "(null)", w->error ? w->error : "(null)");
      tl_eng_reply_release(&rep[i]);
    }
    e->vt->free(e);
    tl_replay_test_hash(NULL);
    seen_release(&seen);
    tl_inlog_release(&log);
    unlink(path);
    free(path);
  }
}

/* The key hash covers every field, each string with its length: keys that differ anywhere, or
 * split their bytes differently between fields, hash differently (NULL and "" are one key). */
static void test_replay_key_hash(void **state) {
  (void)state;
  static const struct {
    tl_unit_key a, b;
    int same;
  } T[] = {
      {{"b", "ab", "c", "v", 0, 0, 0}, {"b", "a", "bc", "v", 0, 0, 0}, 0},   /* id|model split */
      {{"b", "i", "mv", "", 0, 0, 0}, {"b", "i", "m", "v", 0, 0, 0}, 0},    /* model|variant */
      {{"xb", "i", "m", "v", 0, 0, 0}, {"x", "bi", "m", "v", 0, 0, 0}, 0},  /* bench|id */
      {{"b", "i", "m", "v", 0, 0, 0}, {"b", "i", "m", "v", 0, 0, 1}, 0},    /* stage */
      {{"b", "i", "m", "v", 0, 0, 0}, {"b", "i", "m", "v", 1, 0, 0}, 0},    /* seed */
      {{"b", "i", "m", "v", -1, 0, 0}, {"b", "i", "m", "v", 0, 0, 0}, 0},
      {{"b", "i", "m", "v", 0, 0, 0}, {"b", "i", "m", "v", 0, 1, 0}, 0},    /* sub */
      {{"b", "i", "m", "v", 0, 1, 0}, {"b", "i", "m", "v", 1, 0, 0}, 0},    /* sub vs seed */
      {{"b", "i", "m", "v", 0, 0, 0}, {"b", "i", "m", "w", 0, 0, 0}, 0},    /* variant */
      {{"b", "i", NULL, "v", 0, 0, 0}, {"b", "i", "", "v", 0, 0, 0}, 1},    /* NULL = "" */
      {{"b", "i", "m", "v", 7, 3, 1}, {"b", "i", "m", "v", 7, 3, 1}, 1},
  };
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if ((tl_replay_key_hash(&T[i].a) == tl_replay_key_hash(&T[i].b)) != T[i].same)
      fail_msg("case %zu: hashes %s", i, T[i].same ? "differ" : "are equal");
  /* the low bits (the load table's slots) spread: 4096 ids over 8192 slots leave few empty */
  static unsigned char used[8192];
  memset(used, 0, sizeof used);
  size_t n = 0;
  for (int k = 0; k < 4096; k++) {
    char id[32];
    snprintf(id, sizeof id, "spatialmap.tqa.%d.0", k);
    tl_unit_key key = {"spatialeval", id, "m", "reason", 0, 0, 0};
    size_t slot = (size_t)(tl_replay_key_hash(&key) & 8191);
    n += !used[slot];
    used[slot] = 1;
  }
  /* expected distinct slots: 8192 * (1 - e^-0.5) = 3223 */
  if (n < 3100 || n > 3350) fail_msg("4096 keys fill %zu of 8192 slots", n);
}

/* ---- replay: lines are read back from their files ---- */

/* One request's reply, checked: text (NULL: none, then error must equal want_error, '@' = the
 * path) and source "PATH:line" (line 0: no source). */
static void check_reply(const char *name, const tl_eng_reply *rep, const char *path, const char *want_text,
                        const char *want_error, long want_line) {
  char err_want[4400] = "", src_want[4200] = "";
  if (want_error) subst_path(want_error, path, err_want, sizeof err_want);
  if (want_line) snprintf(src_want, sizeof src_want, "%s:%ld", path, want_line);
  int ok = want_text ? rep->text && !strcmp(rep->text, want_text) && !rep->error
                     : !rep->text && rep->error && !strcmp(rep->error, err_want);
  ok = ok && (want_line ? rep->source && !strcmp(rep->source, src_want) : !rep->source);
  if (!ok)
    fail_msg("%s: text '%.60s' (%zu bytes), error '%s', source '%s'; want '%.60s', '%s', '%s'", name,
             rep->text ? rep->text : "(null)", rep->text ? strlen(rep->text) : 0, rep->error ? rep->error : "(null)",
             rep->source ? rep->source : "(null)", want_text ? want_text : "(null)", err_want, src_want);
}

/* A replay engine over the one SpatialEval answers file at path, every line of which must load
 * (log: initialised here, released by the caller). */
static tl_replay *open_clean(const char *path, tl_inlog *log) {
  tl_replay_source src = {path, SE, 0, NULL, 0, "reason", SE_VARIANTS};
  assert_int_equal(tl_inlog_init(log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  if (tl_replay_open(&src, 1, 0, log, NULL, NULL, &r, &err) != TL_OK) fail_msg("%s: %s", path, err.msg);
  assert_int_equal(log->total, 0);
  return r;
}

/* Each line is read back from where it is: leading blanks, CRLF, runs of "\r", blank lines,
 * line ends on each side of the reader's 64 KiB blocks, lines longer than a block or than the
 * engine's read-ahead, no final newline; asked in file order, in reverse and out of order. */
static void test_replay_line_positions(void **state) {
  (void)state;
  tl_replay_test_hash(NULL);
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_puts(&b, "  {\"id\":\"p.1\",\"model\":\"m\",\"response\":\"lead\"}\r\n"); /* 1 */
  tl_buf_puts(&b, "\n   \t \n");                                                    /* 2, 3 blank */
  tl_buf_puts(&b, "{\"id\":\"p.4\",\"model\":\"m\",\"response\":\"crcr\"} \t\x0b\r\r\n"); /* 4, blanks after */
  /* 5: its text ends 30 bytes before the block boundary; 100 "\r" and a "\n" follow */
  const char *head = "{\"id\":\"p.5\",\"model\":\"m\",\"response\":\"", *tail = "\"}";
  size_t fill5 = 65536 - 30 - b.len - strlen(head) - strlen(tail);
  char *t5 = malloc(fill5 + 1);
  memset(t5, 'f', fill5);
  t5[fill5] = 0;
  tl_buf_printf(&b, "%s%s%s", head, t5, tail);
  for (int i = 0; i < 100; i++) tl_buf_puts(&b, "\r");
  tl_buf_puts(&b, "\n");
  /* 6: its text ends at the block boundary; its "\n" starts the next block */
  size_t fill6 = 2 * 65536 - b.len - strlen(head) - strlen(tail);
  char *t6 = malloc(fill6 + 1);
  memset(t6, 's', fill6);
  t6[fill6] = 0;
  tl_buf_printf(&b, "{\"id\":\"p.6\",\"model\":\"m\",\"response\":\"%s\"}\n", t6);
  assert_int_equal(b.len, 2 * 65536 + 1);
  /* 7: longer than a block */
  char *t7 = malloc(150001);
  memset(t7, 'L', 150000);
  t7[150000] = 0;
  tl_buf_printf(&b, "{\"id\":\"p.7\",\"model\":\"m\",\"response\":\"%s\"}\n", t7);
  /* 8: longer than the replay engine's 1 MiB read-ahead */
  const size_t n9 = ((size_t)1 << 20) + 12345;
  char *t9 = malloc(n9 + 1);
  for (size_t i = 0; i < n9; i++) t9[i] = (char)('a' + i % 26);
  t9[n9] = 0;
  tl_buf_printf(&b, "{\"id\":\"p.9\",\"model\":\"m\",\"response\":\"%s\"}\n", t9);
  tl_buf_puts(&b, "{\"id\":\"p.8\",\"model\":\"m\",\"response\":\"last\"}"); /* 9, no newline */
  char *path = tu_write_tmp_n(b.data, b.len);
  tl_buf_release(&b);
  tl_inlog log;
  tl_replay *r = open_clean(path, &log);
  static const struct {
    const char *id;
    long line;
  } Q[] = {{"p.1", 1}, {"p.4", 4}, {"p.5", 5}, {"p.6", 6}, {"p.7", 7}, {"p.9", 8}, {"p.8", 9}};
  const char *want[] = {"lead", "crcr", t5, t6, t7, t9, "last"};
  enum { NQ = 7 };
  tl_engine *e = tl_replay_engine(r);
  /* in file order (read ahead), in reverse, every other line, then in order again, then three
   * interleaved runs (each followed by a read-ahead stream of its own) */
  static const int ORDER[5][NQ] = {{0, 1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1, 0}, {0, 2, 4, 6, 1, 3, 5},
                                   {0, 1, 2, 3, 4, 5, 6}, {0, 3, 5, 1, 4, 6, 2}};
  for (int pass = 0; pass < 5; pass++) {
    for (size_t k = 0; k < NQ; k++) {
      const int i = ORDER[pass][k];
      tl_eng_request q = rq((uint64_t)i, SE, 0, "m", "reason", 0, Q[i].id, 0);
      assert_int_equal(e->vt->submit(e, &q), TL_OK);
    }
    tl_eng_reply rep[8];
    assert_int_equal(e->vt->poll(e, rep, 8, 0), NQ);
    for (size_t k = 0; k < NQ; k++) {
      const size_t i = (size_t)rep[k].tag;
      check_reply(Q[i].id, &rep[k], path, want[i], NULL, Q[i].line);
      tl_eng_reply_release(&rep[k]);
    }
  }
  /* 36 bytes an entry, plus the directory: 4 buckets (floor(log2 7) = 2 bits) + 1 */
  assert_int_equal(tl_replay_index_bytes(r), NQ * 36 + 5 * 4);
  e->vt->free(e);
  tl_inlog_release(&log);
  free(t5);
  free(t6);
  free(t7);
  free(t9);
  unlink(path);
  free(path);
}

/* A response is taken from its JSON string alone when it is a string member of the line's object
 * (among the first TL_JSONL_TOP), the line has no prompt and its key is the only one of its hash;
 * every other line is parsed whole. Both give the text cJSON gives for the whole line. */
static void test_replay_fast_text(void **state) {
  (void)state;
  static const struct {
    const char *line;
    const char *text;  /* NULL: the reply is the null-response error */
    const char *prompt;
    int fast;
  } T[] = {
      {"{\"id\":\"f.1\",\"model\":\"m\",\"response\":\"a\\nb\\t\\\"q\\\" \\\\ \\/ \xc3\xa9 \\u00e9 \\ud83d\\ude00 end\"}",
       "a\nb\t\"q\" \\ / \xc3\xa9 \xc3\xa9 \xf0\x9f\x98\x80 end", NULL, 1},
      {"{\"response\":\"first member\",\"id\":\"f.2\",\"model\":\"m\"}", "first member", NULL, 1},
      {"{ \"id\" : \"f.3\" , \"model\":\"m\", \"response\" :  \"spaced\"  , \"x\":[1,{\"response\":\"no\"}]}",
       "spaced", NULL, 1},
      {"{\"id\":\"f.4\",\"model\":\"m\",\"response\":null}", NULL, NULL, 0},
      {"{\"id\":\"f.5\",\"model\":\"m\",\"nested\":{\"response\":\"inner\"},\"response\":\"outer\"}", "outer", NULL, 1},
      {"{\"id\":\"f.6\",\"model\":\"m\",\"oracle_answer\":\"A\",\"answer\":\"the answer\",\"prompt\":\"P\"}",
       "the answer", "P", 0},
      {"{\"id\":\"f.7\",\"model\":\"m\",\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,"
       "\"k9\":9,\"k10\":10,\"k11\":11,\"k12\":12,\"k13\":13,\"k14\":14,\"response\":\"member 17\"}",
       "member 17", NULL, 0},
      {"{\"id\":\"f.8\",\"model\":\"m\",\"response\":\"\"}", "", NULL, 1},
  };
  enum { N = sizeof T / sizeof T[0] };
  tl_buf b;
  tl_buf_init(&b);
  int nfast = 0;
  for (size_t i = 0; i < N; i++) {
    tl_buf_printf(&b, "%s\n", T[i].line);
    nfast += T[i].fast;
  }
  for (int collide = 0; collide < 2; collide++) {
    tl_replay_test_hash(collide ? one_hash : NULL);
    char *path = tu_write_tmp_n(b.data, b.len);
    tl_inlog log;
    tl_replay *r = open_clean(path, &log);
    tl_engine *e = tl_replay_engine(r);
    for (size_t i = 0; i < N; i++) {
      char id[8];
      snprintf(id, sizeof id, "f.%zu", i + 1);
      tl_eng_request q = rq(i, SE, 0, "m", "reason", 0, id, 0);
      assert_int_equal(e->vt->submit(e, &q), TL_OK);
      tl_eng_reply rep;
      assert_int_equal(e->vt->poll(e, &rep, 1, 0), 1);
      check_reply(T[i].line, &rep, path, T[i].text, T[i].text ? NULL : "the answer file records no response (null)",
                  (long)i + 1);
      if (T[i].prompt ? !rep.prompt || strcmp(rep.prompt, T[i].prompt) : rep.prompt != NULL)
        fail_msg("%s: prompt '%s'", T[i].line, rep.prompt ? rep.prompt : "(null)");
      tl_eng_reply_release(&rep);
    }
    /* a test's hash gives every key one hash: every line is parsed whole then */
    assert_int_equal(tl_replay_served_fast(r), collide ? 0 : (size_t)nfast);
    e->vt->free(e);
    tl_inlog_release(&log);
    unlink(path);
    free(path);
  }
  tl_replay_test_hash(NULL);
  tl_buf_release(&b);
}

#define CHANGED "the answer file changed since it was read: @:"
#define L1 "{\"id\":\"c.1\",\"model\":\"m\",\"response\":\"one\"}\n"
#define L2 "{\"id\":\"c.2\",\"model\":\"m\",\"response\":\"two\"}\n"
#define L3 "{\"id\":\"c.3\",\"model\":\"m\",\"response\":\"three\"}\n"

/* A file changed after tl_replay_open: each request gets its text as loaded, or the error
 * naming the line; never another text. */
static void test_replay_file_changed(void **state) {
  (void)state;
  static const struct {
    const char *name;
    const char *now; /* the file's new content (written over the same file), NULL: removed */
    long cut;        /* >= 0: then cut to this many bytes */
    const char *want[3]; /* c.1, c.2, c.3: the text, or NULL: the error for that line */
  } T[] = {
      {"unchanged", L1 L2 L3, -1, {"one", "two", "three"}},
      {"lines added at the end", L1 L2 L3 L1, -1, {"one", "two", "three"}},
      {"removed (the open file is still read)", NULL, -1, {"one", "two", "three"}},
      {"cut to nothing", L1 L2 L3, 0, {NULL, NULL, NULL}},
      {"cut inside line 2", L1 L2 L3, (long)sizeof L1 - 1 + 10, {"one", NULL, NULL}},
      {"cut just before line 3's newline", L1 L2 L3, (long)(sizeof L1 + sizeof L2 + sizeof L3 - 4), {"one", "two", "three"}},
      {"another text of the same length", L1 "{\"id\":\"c.2\",\"model\":\"m\",\"response\":\"TWO\"}\n" L3, -1,
       {"one", NULL, "three"}},
      {"another key of the same length", L1 "{\"id\":\"c.9\",\"model\":\"m\",\"response\":\"two\"}\n" L3, -1,
       {"one", NULL, "three"}},
      {"lines 1 and 2 swapped", L2 L1 L3, -1, {NULL, NULL, "three"}},
      {"a line shifted by one byte", " " L1 L2 L3, -1, {NULL, NULL, NULL}},
      {"a line no longer JSON", L1 "{\"id\":\"c.2\",\"model\":\"m\",\"response\":\"two\"]\n" L3, -1,
       {"one", NULL, "three"}},
  };
  for (size_t c = 0; c < sizeof T / sizeof T[0]; c++) {
    for (int collide = 0; collide < 2; collide++) {
      char name[160];
      snprintf(name, sizeof name, "%s%s", T[c].name, collide ? " (every key one hash)" : "");
      tl_replay_test_hash(collide ? one_hash : NULL);
      const char *orig = L1 L2 L3;
      char *path = tu_write_tmp_n(orig, strlen(orig));
      tl_replay_source src = {path, SE, 0, NULL, 0, "reason", SE_VARIANTS};
      tl_inlog log;
      assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
      tl_replay *r;
      tl_err err;
      if (tl_replay_open(&src, 1, 0, &log, NULL, NULL, &r, &err) != TL_OK) fail_msg("%s: %s", name, err.msg);
      assert_int_equal(log.total, 0);
      if (T[c].now) {
        FILE *f = fopen(path, "r+b"); /* the same file, written over */
        assert_non_null(f);
        assert_int_equal(fwrite(T[c].now, 1, strlen(T[c].now), f), strlen(T[c].now));
        assert_int_equal(fclose(f), 0);
        if (T[c].cut >= 0 || strlen(T[c].now) < strlen(orig))
          assert_int_equal(truncate(path, T[c].cut >= 0 ? T[c].cut : (off_t)strlen(T[c].now)), 0);
      } else {
        assert_int_equal(unlink(path), 0);
      }
      tl_engine *e = tl_replay_engine(r);
      static const char *const ID[] = {"c.1", "c.2", "c.3"};
      for (size_t i = 0; i < 3; i++) {
        tl_eng_request q = rq(i, SE, 0, "m", "reason", 0, ID[i], 0);
        assert_int_equal(e->vt->submit(e, &q), TL_OK);
      }
      tl_eng_reply rep[4];
      assert_int_equal(e->vt->poll(e, rep, 4, 0), 3);
      for (size_t i = 0; i < 3; i++) {
        char werr[64];
        snprintf(werr, sizeof werr, CHANGED "%zu", i + 1);
        char what[200];
        snprintf(what, sizeof what, "%s: %s", name, ID[i]);
        if (collide && !T[c].want[i] && rep[i].error) {
          /* the lines of one hash that cannot be read back are all candidates: the error names
           * the first of them (in file order) */
          char pre[4200];
          subst_path(CHANGED, path, pre, sizeof pre);
          size_t n = strlen(pre);
          long at = strncmp(rep[i].error, pre, n) == 0 ? atol(rep[i].error + n) : 0;
          if (rep[i].text || rep[i].source || at < 1 || at > (long)i + 1)
            fail_msg("%s: text '%s', error '%s'", what, rep[i].text ? rep[i].text : "(null)", rep[i].error);
        } else {
          check_reply(what, &rep[i], path, T[c].want[i], T[c].want[i] ? NULL : werr, T[c].want[i] ? (long)i + 1 : 0);
        }
        tl_eng_reply_release(&rep[i]);
      }
      e->vt->free(e);
      tl_replay_test_hash(NULL);
      tl_inlog_release(&log);
      unlink(path);
      free(path);
    }
  }
}

/* key_fn sees every accepted line in load order; a nonzero return stops loading right there
 * (nothing after it is read or reported) and tl_replay_open returns TL_EINPUT. */
static void test_replay_key_fn(void **state) {
  (void)state;
  tl_replay_test_hash(NULL);
  const char *c1 = "{\"id\":\"f.1\",\"model\":\"m\",\"response\":\"a\"}\n"
                   "{\"id\":\"f.2\",\"model\":\"m\",\"response\":\"b\"}\n"
                   "{bad\n";
  const char *c2 = "{\"id\":\"g.1\",\"model\":\"n\",\"response\":\"c\"}\n"
                   "{\"id\":\"g.2\"}\n"
                   "{\"id\":\"g.3\",\"model\":\"n\",\"response\":\"d\"}\n";
  char *p1 = tu_write_tmp_n(c1, strlen(c1));
  char *p2 = tu_write_tmp_n(c2, strlen(c2));
  static const struct {
    size_t stop_at;
    tl_status st;
    size_t nkeys;
    long nlog;
    int where_file; /* err names file 1 or 2 ... */
    long where_line; /* ... at this line */
  } T[] = {{0, TL_OK, 4, 2, 0, 0},
           {1, TL_EINPUT, 1, 0, 1, 1},
           {2, TL_EINPUT, 2, 0, 1, 2},
           {3, TL_EINPUT, 3, 1, 2, 1},
           {4, TL_EINPUT, 4, 2, 2, 3}};
  static const char *const ID[] = {"f.1", "f.2", "g.1", "g.3"};
  static const long LINE[] = {1, 2, 1, 3};
  for (size_t c = 0; c < sizeof T / sizeof T[0]; c++) {
    tl_replay_source src[2] = {{p1, SE, 0, NULL, 0, "reason", SE_VARIANTS}, {p2, SE, 0, NULL, 0, "reason", SE_VARIANTS}};
    tl_inlog log;
    assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
    tl_replay *r = (tl_replay *)&log; /* must come back NULL on failure */
    tl_err err;
    seen_keys seen = {0};
    seen.stop_at = T[c].stop_at;
    tl_status st = tl_replay_open(src, 2, 0, &log, record_key, &seen, &r, &err);
    if (st != T[c].st || seen.n != T[c].nkeys || log.total != T[c].nlog)
      fail_msg("stop at %zu: status %d, %zu keys, %ld problems; want %d, %zu, %ld", T[c].stop_at, st, seen.n,
               log.total, T[c].st, T[c].nkeys, T[c].nlog);
    for (size_t i = 0; i < seen.n; i++) {
      assert_string_equal(seen.k[i].id, ID[i]);
      assert_string_equal(seen.k[i].path, i < 2 ? p1 : p2);
      assert_int_equal(seen.k[i].line, LINE[i]);
    }
    if (st == TL_OK) {
      tl_engine *e = tl_replay_engine(r);
      e->vt->free(e);
    } else {
      assert_null(r);
      char where[4200];
      snprintf(where, sizeof where, "%s:%ld:", T[c].where_file == 1 ? p1 : p2, T[c].where_line);
      if (!strstr(err.msg, where)) fail_msg("stop at %zu: '%s' does not name %s", T[c].stop_at, err.msg, where);
    }
    seen_release(&seen);
    tl_inlog_release(&log);
  }
  /* a source that is not a regular file cannot be read back */
  tl_replay_source dev = {"/dev/null", SE, 0, "m", 0, "reason", SE_VARIANTS};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  assert_int_equal(tl_replay_open(&dev, 1, 0, &log, NULL, NULL, &r, &err), TL_EIO);
  assert_non_null(strstr(err.msg, "'/dev/null' is not a regular file"));
  assert_null(r);
  /* "-": standard input, here a file already read up to its line 2: offsets are the file's */
  char *p3 = tu_write_tmp_n(L1 L2, strlen(L1 L2));
  int saved = dup(0), fd = open(p3, O_RDONLY);
  assert_true(saved >= 0 && fd >= 0);
  assert_int_equal(lseek(fd, (off_t)strlen(L1), SEEK_SET), (off_t)strlen(L1));
  assert_int_equal(dup2(fd, 0), 0);
  close(fd);
  tl_replay_source in = {"-", SE, 0, NULL, 0, "reason", SE_VARIANTS};
  tl_status st = tl_replay_open(&in, 1, 0, &log, NULL, NULL, &r, &err);
  assert_int_equal(dup2(saved, 0), 0);
  close(saved);
  if (st != TL_OK) fail_msg("stdin: %s", err.msg);
  tl_engine *e = tl_replay_engine(r);
  tl_eng_request q = rq(1, SE, 0, "m", "reason", 0, "c.2", 0);
  assert_int_equal(e->vt->submit(e, &q), TL_OK);
  tl_eng_reply rep;
  assert_int_equal(e->vt->poll(e, &rep, 1, 0), 1);
  check_reply("stdin", &rep, "<stdin>", "two", NULL, 1);
  tl_eng_reply_release(&rep);
  e->vt->free(e);
  assert_int_equal(log.total, 0);
  unlink(p3);
  free(p3);
  tl_inlog_release(&log);
  unlink(p1);
  unlink(p2);
  free(p1);
  free(p2);
}

/* ---- the resume journal: "t" and "st" round trip; lines without them read as 0 ---- */

typedef struct {
  char *bench, *id, *model, *variant, *text, *prompt, *source;
  int seed, stage;
  uint32_t sub;
} jrec;

typedef struct {
  jrec r[16];
  int n;
} jrecs;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static tl_status collect_rec(void *ctx, const tl_journal_rec *rec) {
  jrecs *c = ctx;
  assert_true(c->n < 16);
  jrec *o = &c->r[c->n++];
  o->bench = dup_or_null(rec->key.bench);
  o->id = dup_or_null(rec->key.id);
  o->model = dup_or_null(rec->key.model);
  o->variant = dup_or_null(rec->key.variant);
  o->text = dup_or_null(rec->text);
  o->prompt = dup_or_null(rec->prompt);
  o->source = dup_or_null(rec->source);
  o->seed = rec->key.seed;
  o->stage = rec->key.stage;
  o->sub = rec->key.sub;
  return TL_OK;
}

static int str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* The journal's job identity: the same across where and how servers are reached, key order and
 * layout; another for anything that changes what is asked or scored; a journal that names the
 * job's hash of its text as it is (the form before) is read, another job's is refused. */
static void test_journal_job_hash(void **state) {
  (void)state;
  static const char *const SAME[] = {
      "{\"name\":\"j\",\"engines\":{\"model\":{\"type\":\"openai\",\"url\":\"http://a:8000/v1\",\"model\":\"m\","
      "\"sampling\":{\"temperature\":0.7},\"timeouts\":{\"request_s\":60}}},\"benchmarks\":[{\"benchmark\":\"x\",\"seeds\":[1,2]}]}",
      /* another server, timeouts, concurrency, retries, health wait, key variable and key header */
      "{\"name\":\"j\",\"engines\":{\"model\":{\"type\":\"openai\",\"urls\":[\"http://b:9/v1\"],\"model\":\"m\","
      "\"sampling\":{\"temperature\":0.7},\"timeouts\":{\"request_s\":900},\"concurrency\":{\"max\":8},"
      "\"retries\":{\"max\":2},\"health\":{\"wait_s\":5},\"api_key_env\":\"K\",\"port_base\":9000,"
      "\"key_header\":true}},"
      "\"benchmarks\":[{\"benchmark\":\"x\",\"seeds\":[1,2]}]}",
      /* keys in another order, other blanks */
      "{ \"benchmarks\": [ {\"seeds\": [1, 2], \"benchmark\": \"x\"} ],\n  \"engines\": {\"model\": {\"model\": \"m\", "
      "\"type\": \"openai\", \"sampling\": {\"temperature\": 0.7}, \"url\": \"http://a:8000/v1\"}}, \"name\": \"j\" }",
  };
  static const char *const OTHER[] = {
      /* another model, another temperature, other seeds, the url inside the benchmark (not an engine's) */
      "{\"name\":\"j\",\"engines\":{\"model\":{\"type\":\"openai\",\"url\":\"http://a:8000/v1\",\"model\":\"m2\","
      "\"sampling\":{\"temperature\":0.7}}},\"benchmarks\":[{\"benchmark\":\"x\",\"seeds\":[1,2]}]}",
      "{\"name\":\"j\",\"engines\":{\"model\":{\"type\":\"openai\",\"url\":\"http://a:8000/v1\",\"model\":\"m\","
      "\"sampling\":{\"temperature\":0.8}}},\"benchmarks\":[{\"benchmark\":\"x\",\"seeds\":[1,2]}]}",
      "{\"name\":\"j\",\"engines\":{\"model\":{\"type\":\"openai\",\"url\":\"http://a:8000/v1\",\"model\":\"m\","
      "\"sampling\":{\"temperature\":0.7}}},\"benchmarks\":[{\"benchmark\":\"x\",\"seeds\":[2,1]}]}",
      "{\"name\":\"j\",\"engines\":{\"model\":{\"type\":\"openai\",\"model\":\"m\","
      "\"sampling\":{\"temperature\":0.7}}},\"benchmarks\":[{\"benchmark\":\"x\",\"seeds\":[1,2],\"url\":\"u\"}]}",
  };
  char h0[TL_JOB_HASH_LEN], h[TL_JOB_HASH_LEN];
  tl_journal_job_hash(SAME[0], h0);
  assert_int_equal(strlen(h0), TL_JOB_HASH_LEN - 1);
  assert_int_equal(h0[16], '/');
  for (size_t i = 1; i < sizeof SAME / sizeof SAME[0]; i++) {
    tl_journal_job_hash(SAME[i], h);
    assert_memory_equal(h, h0, 16);
    assert_memory_not_equal(h + 17, h0 + 17, 16); /* the texts differ */
  }
  for (size_t i = 0; i < sizeof OTHER / sizeof OTHER[0]; i++) {
    tl_journal_job_hash(OTHER[i], h);
    if (!memcmp(h, h0, 16)) fail_msg("OTHER[%zu] has the job hash of SAME[0]", i);
  }
  tl_journal_job_hash("not json {", h); /* no JSON: both halves hash the text */
  assert_memory_equal(h, h + 17, 16);

  /* journals: written with this hash, with the text's (before), with another job's */
  char dir[] = "/tmp/tally-jhash-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char jdir[64];
  snprintf(jdir, sizeof jdir, "%s/o.journal", dir);
  tl_err err;
  tl_journal j;
  assert_int_equal(tl_journal_open(&j, jdir, "a1", 0, h0, &err), TL_OK);
  tl_journal_close(&j);
  jrecs got;
  memset(&got, 0, sizeof got);
  long nf, nrec, nskip;
  tl_journal_job_hash(SAME[1], h); /* the job after a server moved */
  assert_int_equal(tl_journal_read_all(jdir, h, collect_rec, &got, &nf, &nrec, &nskip, &err), TL_OK);
  assert_int_equal(nf, 1);
  char old[TL_JOB_HASH_LEN];
  memcpy(old, h0 + 17, 17); /* a header naming the raw hash, as earlier versions wrote it */
  assert_int_equal(tl_journal_open(&j, jdir, "a2", 0, old, &err), TL_OK);
  tl_journal_close(&j);
  assert_int_equal(tl_journal_read_all(jdir, h0, collect_rec, &got, &nf, &nrec, &nskip, &err), TL_OK);
  assert_int_equal(nf, 2);
  tl_journal_job_hash(OTHER[0], h);
  assert_int_equal(tl_journal_read_all(jdir, h, collect_rec, &got, &nf, &nrec, &nskip, &err), TL_EJOB);
  assert_non_null(strstr(err.msg, "belongs to another job"));
  assert_int_equal(tl_journal_remove(jdir, &err), TL_OK);
  assert_int_equal(rmdir(dir), 0);
}

/* A fresh folder (dir, a mkdtemp template) with jdir = dir/out.journal in it, and the journal
 * hash of job. */
static void journal_dirs(char *dir, char *jdir, size_t jsz, const char *job, char hash[TL_JOB_HASH_LEN]) {
  assert_non_null(mkdtemp(dir));
  snprintf(jdir, jsz, "%s/out.journal", dir);
  tl_journal_job_hash(job, hash);
}

/* Syncs and closes journal j, and opens its file as file *fi of jf (caller releases jf and
 * frees the returned path). */
static char *journal_to_jfiles(tl_journal *j, tl_jfiles *jf, int *fi) {
  tl_err err;
  assert_int_equal(tl_journal_sync(j, &err), TL_OK);
  char *path = strdup(j->path);
  tl_journal_close(j);
  tl_jfiles_init(jf);
  *fi = -1;
  assert_int_equal(tl_jfiles_add(jf, path, fi), TL_OK);
  return path;
}

/* Texts with every character JSON escapes, at every byte of an 8-byte word (the journal scans a
 * text 8 bytes at a time), next to UTF-8 and DEL bytes it keeps: each reads back as written. */
static void test_journal_text_escapes(void **state) {
  (void)state;
  char dir[] = "/tmp/tally-journal-XXXXXX", jdir[64], hash[TL_JOB_HASH_LEN];
  journal_dirs(dir, jdir, sizeof jdir, "{\"job\":2}", hash);
  static const char *const SPECIAL[] = {"\"", "\\", "\n", "\t", "\r", "\x01", "\x1f", "\x7f", " ",
                                        "\xc3\xa9", "\xe2\x80\x9c"};
  static const char *const FILL[] = {"abcdefghijklmnopqrstuvwxyz", "\xc3\xa0\xc3\xa0 \xc3\xa0\xc3\xa0 \xc3\xa0\xc3\xa0 \xc3\xa0\xc3\xa0 \xc3\xa0",
                                     "                          "};
  const size_t ns = sizeof SPECIAL / sizeof SPECIAL[0], nf = sizeof FILL / sizeof FILL[0];
  enum { NPOS = 19 };
  char *texts[64 * NPOS];
  uint64_t off[64 * NPOS];
  size_t n = 0;
  tl_journal j;
  tl_err err;
  assert_int_equal(tl_journal_open(&j, jdir, "a1", 0, hash, &err), TL_OK);
  for (size_t f = 0; f < nf; f++)
    for (size_t k = 0; k < ns; k++)
      for (size_t p = 0; p < NPOS; p++) {
        char t[96];
        const size_t fl = strlen(FILL[f]);
        size_t at = p < fl ? p : fl;
        while (at > 0 && ((unsigned char)FILL[f][at] & 0xc0) == 0x80) at--; /* on a character boundary */
        snprintf(t, sizeof t, "%.*s%s%s%s", (int)at, FILL[f], SPECIAL[k], FILL[f] + at, SPECIAL[k]);
        assert_true(n < sizeof texts / sizeof texts[0]);
        texts[n] = strdup(t);
        tl_unit_key key = {"spatialeval", "a.1", "m", "letter", 0, (uint32_t)n, 0};
        tl_eng_reply rep = {0, texts[n], NULL, NULL, NULL, NULL, 0, NULL, {0}};
        assert_int_equal(tl_journal_add(&j, &key, &rep, &off[n], &err), TL_OK);
        n++;
      }
  tl_jfiles jf;
  int fi;
  char *jpath = journal_to_jfiles(&j, &jf, &fi);
  for (size_t i = 0; i < n; i++) {
    tl_journal_rec rec;
    cJSON *o = NULL;
    assert_int_equal(tl_jfiles_read(&jf, fi, off[i], &rec, &o, &err), TL_OK);
    if (!rec.text || strcmp(rec.text, texts[i]) != 0) fail_msg("journal text %zu did not read back as written", i);
    cJSON_Delete(o);
    free(texts[i]);
  }
  tl_jfiles_release(&jf);
  free(jpath);
  assert_int_equal(tl_journal_remove(jdir, &err), TL_OK);
  rmdir(dir);
}

static void test_journal_keys(void **state) {
  (void)state;
  char dir[] = "/tmp/tally-journal-XXXXXX", jdir[64], hash[TL_JOB_HASH_LEN];
  journal_dirs(dir, jdir, sizeof jdir, "{\"job\":1}", hash);
  /* what tl_journal_add writes, then lines written by hand */
  static const struct {
    tl_unit_key key;
    const char *text, *prompt, *source, *meta, *error;
    int failed;
  } ADD[] = {
      {{"spatialeval", "a.1", "m", "letter", -3, 2, 1}, "J \"x\"\n", NULL, "f.jsonl:1", NULL, NULL, 0},
      {{"mtbench", "q.7", "m2", "single", 0, 4294967295u, 0}, NULL, "P", NULL, NULL, NULL, 0},
      /* an HTTP engine's reply: its evidence object; and one it gave up on */
      {{"spatialeval", "a.9", "m", "letter", 0, 0, 0}, "A", NULL, "req-1", "{\"attempts\":2,\"cached\":false}", NULL, 0},
      {{"spatialeval", "a.8", "m", "letter", 0, 0, 0}, NULL, NULL, NULL, "{\"attempts\":7}", "HTTP 500 (7 attempts)", 1},
  };
  static const struct {
    const char *line;
    int ok;        /* read as a record (else skipped as malformed) */
    uint32_t sub;  /* when ok */
    int stage;
  } RAW[] = {
      /* the format of earlier versions: no "t", no "st" */
      {"{\"b\":\"spatialeval\",\"m\":\"m\",\"v\":\"reason\",\"s\":5,\"id\":\"a.2\",\"text\":\"T\",\"prompt\":null,\"source\":null}", 1, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"a.3\",\"t\":3,\"text\":null,\"prompt\":null,\"source\":null}", 1, 3, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"a.4\",\"st\":1,\"text\":null,\"prompt\":null,\"source\":null}", 1, 0, 1},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.1\",\"t\":-1,\"st\":0,\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.2\",\"t\":\"1\",\"st\":0,\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.3\",\"t\":4294967296,\"st\":0,\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.4\",\"t\":null,\"st\":0,\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.5\",\"t\":0,\"st\":1.5,\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.6\",\"t\":0,\"st\":-1,\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0,\"id\":\"b.7\",\"t\":0,\"st\":\"1\",\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
      {"{\"b\":\"x\",\"m\":\"m\",\"v\":\"v\",\"s\":0.5,\"id\":\"b.8\",\"text\":null,\"prompt\":null,\"source\":null}", 0, 0, 0},
  };
  const size_t nadd = sizeof ADD / sizeof ADD[0], nraw = sizeof RAW / sizeof RAW[0];
  tl_journal j;
  tl_err err;
  assert_int_equal(tl_journal_open(&j, jdir, "a1", 0, hash, &err), TL_OK);
  uint64_t off[8];
  assert_true(nadd <= 8);
  for (size_t i = 0; i < nadd; i++) {
    tl_eng_reply rep = {0, (char *)ADD[i].text, (char *)ADD[i].prompt, (char *)ADD[i].source,
                        (char *)ADD[i].error, (char *)ADD[i].meta, ADD[i].failed, NULL, {0}};
    assert_int_equal(tl_journal_add(&j, &ADD[i].key, &rep, &off[i], &err), TL_OK);
  }
  /* each record read back at its offset: the texts come back this way when tables are written */
  tl_jfiles jf;
  int fi;
  char *jpath = journal_to_jfiles(&j, &jf, &fi);
  for (size_t i = 0; i < nadd; i++) {
    tl_journal_rec rec;
    cJSON *o = NULL;
    assert_int_equal(tl_jfiles_read(&jf, fi, off[i], &rec, &o, &err), TL_OK);
    assert_string_equal(rec.key.id, ADD[i].key.id);
    assert_int_equal(rec.key.stage, ADD[i].key.stage);
    if (ADD[i].text) assert_string_equal(rec.text, ADD[i].text);
    else assert_null(rec.text);
    assert_int_equal(rec.failed, ADD[i].failed);
    if (ADD[i].error) assert_string_equal(rec.error, ADD[i].error);
    else assert_null(rec.error);
    if (ADD[i].meta) {
      char *m = cJSON_PrintUnformatted(rec.meta);
      assert_string_equal(m, ADD[i].meta);
      free(m);
    } else {
      assert_null(rec.meta);
    }
    cJSON_Delete(o);
  }
  { /* an offset inside a line is no record: an error, never a wrong text */
    tl_journal_rec rec;
    cJSON *o = NULL;
    assert_int_equal(tl_jfiles_read(&jf, fi, off[0] + 3, &rec, &o, &err), TL_EIO);
    assert_null(o);
  }
  tl_jfiles_release(&jf);
  /* "t" and "st" are written always */
  tl_buf text;
  tl_buf_init(&text);
  assert_int_equal(tl_file_read(jpath, 0, &text, &err), TL_OK);
  assert_non_null(strstr(text.data, "\"id\":\"a.1\",\"t\":2,\"st\":1,"));
  assert_non_null(strstr(text.data, "\"id\":\"q.7\",\"t\":4294967295,\"st\":0,"));
  tl_buf_release(&text);
  FILE *fp = fopen(jpath, "a");
  assert_non_null(fp);
  for (size_t i = 0; i < nraw; i++) fprintf(fp, "%s\n", RAW[i].line);
  fclose(fp);

  jrecs got;
  memset(&got, 0, sizeof got);
  long nf, nrec, nskip;
  assert_int_equal(tl_journal_read_all(jdir, hash, collect_rec, &got, &nf, &nrec, &nskip, &err), TL_OK);
  assert_int_equal(nf, 1);
  long want_ok = (long)nadd, want_skip = 0;
  for (size_t i = 0; i < nraw; i++) {
    if (RAW[i].ok) want_ok++;
    else want_skip++;
  }
  assert_int_equal(nrec, want_ok);
  assert_int_equal(nskip, want_skip);
  assert_int_equal(got.n, (int)want_ok);
  for (size_t i = 0; i < nadd; i++) {
    const jrec *g = &got.r[i];
    const tl_unit_key *w = &ADD[i].key;
    if (!str_eq(g->bench, w->bench) || !str_eq(g->id, w->id) || !str_eq(g->model, w->model) ||
        !str_eq(g->variant, w->variant) || g->seed != w->seed || g->sub != w->sub || g->stage != w->stage ||
        !str_eq(g->text, ADD[i].text) || !str_eq(g->prompt, ADD[i].prompt) || !str_eq(g->source, ADD[i].source))
      fail_msg("journal record %zu: %s/%s/%s/%s seed %d turn %u stage %d does not match what was added", i,
               g->bench, g->id, g->model, g->variant, g->seed, (unsigned)g->sub, g->stage);
  }
  int k = (int)nadd;
  for (size_t i = 0; i < nraw; i++) {
    if (!RAW[i].ok) continue;
    const jrec *g = &got.r[k++];
    if (g->sub != RAW[i].sub || g->stage != RAW[i].stage)
      fail_msg("raw line %zu read as turn %u stage %d, want %u %d", i, (unsigned)g->sub, g->stage,
               (unsigned)RAW[i].sub, RAW[i].stage);
  }
  assert_string_equal(got.r[nadd].id, "a.2"); /* the old-format line */
  assert_int_equal(got.r[nadd].seed, 5);
  assert_string_equal(got.r[nadd].text, "T");
  for (int i = 0; i < got.n; i++) {
    jrec *g = &got.r[i];
    free(g->bench); free(g->id); free(g->model); free(g->variant);
    free(g->text); free(g->prompt); free(g->source);
  }
  assert_int_equal(tl_journal_remove(jdir, &err), TL_OK);
  assert_int_equal(tl_journal_exists(jdir), 0);
  free(jpath);
  assert_int_equal(rmdir(dir), 0);
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
      /* an unknown benchmark: its keys cannot be checked, the known ones are listed */
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"mmlu\",\"items\":\"i\",\"answers\":\"a\",\"parsers\":[\"strict\",\"fuzzy\",\"strict\"]}]}", 1, "unknown benchmark 'mmlu' (known: spatialeval, mtbench101, vqa, mcq, gen)"},
      /* the module's own keys: every problem */
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\",\"parsers\":[\"strict\",\"fuzzy\",\"strict\"],\"itemz\":1}]}", 3, "fuzzy"},
      /* judgments for a benchmark without a judge stage; one entry per benchmark */
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\",\"judgments\":\"j\"},{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}", 2, "has no judge stage"},
      /* engines per role; the old key and the new one together is a problem */
      {"{\"output\":\"o.h5\",\"engine\":\"replay\",\"engines\":{\"model\":\"replay\",\"critic\":{}},\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}", 2, "not both"},
      {"{\"output\":\"o.h5\",\"engines\":{\"model\":{\"type\":\"replay\",\"latency_ms\":5},\"judge\":\"replay\"},\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}", 0, NULL},
      {"{\"output\":\"o.h5\",\"studies\":[{\"name\":\"s1\",\"input\":\"t.csv\",\"human\":\"h\",\"metrics\":[\"a\",\"b\"],\"method\":\"percentile\",\"permutation\":true}]}", 0, NULL},
      {"{\"output\":\"o.h5\",\"studies\":[{\"name\":\"s 1\",\"human\":\"h\",\"metrics\":[],\"method\":\"x\",\"ci\":2,\"resamples\":1},{\"name\":\"s 1\"}]}", 10, "method"},
      {"{\"output\":\"o.h5\",\"engine\":\"vllm\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":[{\"model\":1}],\"seeds\":[1.5],\"prompt_variant\":\"x\"}]}", 4, "unknown engine 'vllm' (known: replay, openai)"},
      /* the openai engine: a valid one; then its problems, every one */
      {"{\"output\":\"o.h5\",\"engines\":{\"model\":{\"type\":\"openai\",\"url\":\"http://127.0.0.1:{port}/v1\",\"sampling\":{\"temperature\":0,\"max_tokens\":64,\"stop\":[\"\\n\\n\"]},\"extra\":{\"top_k\":20},\"concurrency\":{\"max\":64}}},\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"models\":[\"m\"]}]}", 0, NULL},
      {"{\"output\":\"o.h5\",\"engines\":{\"model\":{\"type\":\"openai\",\"url\":\"localhost:8000\",\"api\":\"responses\",\"sampling\":{\"temperature\":-1,\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"best_of\":2},\"extra\":{\"seed\":1},\"concurrency\":{\"min\":8,\"max\":4},\"api_key\":\"sk-x\"}},\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}", 10, "may not set \"seed\""},

  };
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    char *path = tu_write_tmp_n(T[i].json, strlen(T[i].json));
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
      if (strstr(T[i].json, "\"latency_ms\":5")) { /* the engine of each role */
        assert_int_equal(job.engines[TL_ROLE_MODEL].latency_ms, 5);
        assert_string_equal(job.engines[TL_ROLE_JUDGE].type, "replay");
        assert_int_equal(job.engines[TL_ROLE_JUDGE].latency_ms, 0);
      }
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
  /* ASCII is skipped 8 bytes at a time: a bad byte, a cut sequence and a good one at every
   * place of texts of 1 to 40 bytes, the bad offset exact */
  for (size_t n = 1; n <= 40; n++)
    for (size_t at = 0; at < n; at++) {
      char t[48];
      memset(t, 'a', n);
      t[at] = (char)0xff;
      size_t bad = 99;
      assert_false(tl_utf8_valid(t, n, &bad));
      assert_int_equal(bad, at);
      t[at] = (char)0xc3; /* cut: the last byte, or followed by 'a' */
      bad = 99;
      assert_false(tl_utf8_valid(t, n, &bad));
      assert_int_equal(bad, at);
      if (at + 1 < n) {
        t[at + 1] = (char)0xa9; /* é */
        assert_true(tl_utf8_valid(t, n, NULL));
      }
    }
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
      cmocka_unit_test(test_replay),       cmocka_unit_test(test_replay_keys),
      cmocka_unit_test(test_replay_line_positions), cmocka_unit_test(test_replay_file_changed),
      cmocka_unit_test(test_replay_key_fn), cmocka_unit_test(test_replay_key_hash),
      cmocka_unit_test(test_replay_fast_text),
      cmocka_unit_test(test_journal_keys),
      cmocka_unit_test(test_journal_text_escapes), cmocka_unit_test(test_journal_job_hash),
      cmocka_unit_test(test_job_validation),
      cmocka_unit_test(test_utf8),         cmocka_unit_test(test_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
