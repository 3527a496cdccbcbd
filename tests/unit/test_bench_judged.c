/* test_bench_judged.c - the two-stage test module (src/core/bench/test_judged): item loading
 * (bad lines with file:line, duplicates, strict mode, an unreadable file), the stage-0 and
 * stage-1 requests (the judge stage skipped when there is no answer), the rating parser (the
 * last rating wins, ranges, missing stages), the SUM and MIN aggregates and their reduction over
 * a split of the units, and the item, metric and summary outputs.
 *
 * The module is built through its test-only constructor (tl_test_judged_open_paths), not through
 * the job loader: create() needs a tl_job_ctx, which only the loader can make. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, open_memstream */
#include <math.h>
#include <unistd.h>

#include "testutil.h"
#include "tally/bench.h"
#include "test_judged.h"

static const tl_bench_vt *const VT = &tl_bench_test_judged;

/* ---- fixture files: a temp folder holding up to 4 files ---- */
typedef struct {
  char dir[64];
  char path[4][128];
  int n;
} fixture;

static void fx_init(fixture *fx) {
  memset(fx, 0, sizeof *fx);
  snprintf(fx->dir, sizeof fx->dir, "/tmp/tally-judged-XXXXXX");
  assert_non_null(mkdtemp(fx->dir));
}

static const char *fx_file(fixture *fx, const char *name, const char *content) {
  assert_true(fx->n < 4);
  char *p = fx->path[fx->n++];
  char tmp[sizeof fx->path[0]]; /* not straight into fx: the source is in fx too */
  assert_true((size_t)snprintf(tmp, sizeof tmp, "%s/%s", fx->dir, name) < sizeof tmp);
  memcpy(p, tmp, sizeof tmp);
  FILE *f = fopen(p, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(content, 1, strlen(content), f), strlen(content));
  assert_int_equal(fclose(f), 0);
  return p;
}

static void fx_release(fixture *fx) {
  for (int i = 0; i < fx->n; i++) unlink(fx->path[i]);
  rmdir(fx->dir);
}

/* A module over the given files, loaded (non-strict, silent log). */
static tl_bench *open_loaded(const char *const *paths, int n, tl_inlog *log) {
  tl_bench *b = tl_test_judged_open_paths((char *const *)paths, n);
  assert_non_null(b);
  assert_int_equal(tl_inlog_init(log, NULL, 0), TL_OK);
  tl_err err;
  err.msg[0] = 0;
  if (VT->load(b, 0, log, &err) != TL_OK) fail_msg("load: %s", err.msg);
  return b;
}

static const char ITEMS[] =
    "{\"id\":\"b\",\"question\":\"Qb\",\"turns\":3}\n"               /* 1 ok */
    "{\"id\":\"a\",\"question\":\"Qa\",\"turns\":1}\n"               /* 2 ok */
    "{\"id\":\"c\",\"question\":\"Qc\"}\n"                           /* 3 missing turns */
    "{\"id\":\"d\",\"question\":\"Qd\",\"turns\":9}\n"               /* 4 turns out of range */
    "{\"id\":\"e\",\"question\":5,\"turns\":1}\n"                    /* 5 question not a string */
    "{\"id\":\"b\",\"question\":\"other\",\"turns\":2}\n"            /* 6 duplicate id */
    "{not json\n"                                                    /* 7 malformed */
    "{\"id\":\"f\",\"question\":\"Qf\",\"turns\":1.5}\n"             /* 8 turns not an integer */
    "{\"id\":\"g\",\"question\":\"Qg\",\"turns\":0}\n"               /* 9 turns out of range */
    "[1]\n"                                                          /* 10 not an object */
    "\n"                                                             /* 11 blank: skipped */
    "{\"question\":\"Qh\",\"turns\":1}\n"                            /* 12 missing id */
    "{\"id\":7,\"question\":\"Qi\",\"turns\":1}\n"                   /* 13 id not a string */
    "{\"id\":\"c2\",\"question\":\"Qc2\",\"turns\":8}\n";            /* 14 ok */

/* ---- the module's constants ---- */
static void test_vt(void **state) {
  (void)state;
  assert_string_equal(VT->name, "test_judged");
  assert_int_equal(VT->nstages, 2);
  assert_string_equal(VT->variants[0], "plain");
  assert_null(VT->variants[1]);
  assert_string_equal(VT->keys[0], "items");
  assert_null(VT->keys[1]);
  char *p[1] = {"/nonexistent"};
  tl_bench *b = tl_test_judged_open_paths(p, 1);
  assert_non_null(b);
  assert_int_equal(VT->default_variant(b), 0);
  assert_int_equal(VT->n_modes(b), 1);
  assert_string_equal(VT->mode_name(b, 0), "rating");
  assert_null(VT->mode_name(b, 1));
  assert_int_equal(VT->n_items(b), 0); /* nothing loaded yet */
  VT->free(b);
  VT->free(NULL);
  assert_null(tl_test_judged_open_paths(p, 0));
}

/* ---- loading ---- */
static void test_load(void **state) {
  (void)state;
  fixture fx;
  fx_init(&fx);
  const char *paths[3];
  paths[0] = fx_file(&fx, "items.jsonl", ITEMS);
  /* a second file: "a" again (a duplicate across files: the first file's is kept), a new "a0" */
  paths[1] = fx_file(&fx, "more.jsonl",
                     "{\"id\":\"a\",\"question\":\"Qa again\",\"turns\":2}\n"
                     "{\"id\":\"a0\",\"question\":\"Qa0\",\"turns\":2}\n");
  paths[2] = fx_file(&fx, "empty.jsonl", "");
  tl_inlog log;
  tl_bench *b = open_loaded(paths, 3, &log);

  /* sorted by id (strcmp), first of duplicates kept */
  static const struct {
    const char *id;
    uint32_t turns;
  } WANT[] = {{"a", 1}, {"a0", 2}, {"b", 3}, {"c2", 8}};
  assert_int_equal(VT->n_items(b), 4);
  for (size_t i = 0; i < 4; i++) {
    assert_string_equal(VT->item_id(b, i), WANT[i].id);
    assert_int_equal(VT->n_subs(b, i), WANT[i].turns);
    size_t k = 99;
    assert_int_equal(VT->item_find(b, WANT[i].id, &k), 1);
    assert_int_equal(k, i);
  }
  assert_null(VT->item_id(b, 4));
  assert_int_equal(VT->n_subs(b, 4), 0);
  size_t k = 99;
  assert_int_equal(VT->item_find(b, "c", &k), 0);
  assert_int_equal(VT->item_find(b, "d", &k), 0);
  assert_int_equal(k, 99);

  /* the first "b" (Qb, 3 turns) was kept: its question shows in the request */
  tl_buf arena;
  tl_buf_init(&arena);
  tl_bench_req q;
  tl_unit u = {0, 2, 0};
  tl_cfg cfg = {"m", 0, 1};
  tl_err err;
  assert_int_equal(VT->request(b, &cfg, &u, 0, NULL, &arena, &q, &err), TL_OK);
  assert_string_equal(q.msgs[0].content, "Qb (turn 1)");
  u.item = 0; /* "a": "Qa", not "Qa again" */
  assert_int_equal(VT->request(b, &cfg, &u, 0, NULL, &arena, &q, &err), TL_OK);
  assert_string_equal(q.msgs[0].content, "Qa (turn 1)");
  tl_buf_release(&arena);

  /* every bad line reported with file:line and kind, in file order */
  static const struct {
    int file;
    long line;
    tl_in_kind kind;
    const char *msg;
  } BAD[] = {
      {0, 3, TL_IN_MISSING_FIELD, "missing field 'turns'"},
      {0, 4, TL_IN_BAD_FIELD, "'turns'"},
      {0, 5, TL_IN_BAD_FIELD, "'question'"},
      {0, 6, TL_IN_DUPLICATE, "duplicate item id 'b'"},
      {0, 7, TL_IN_MALFORMED_JSON, ""},
      {0, 8, TL_IN_BAD_FIELD, "'turns'"},
      {0, 9, TL_IN_BAD_FIELD, "'turns'"},
      {0, 10, TL_IN_BAD_FIELD, "not a JSON object"},
      {0, 12, TL_IN_MISSING_FIELD, "missing field 'id'"},
      {0, 13, TL_IN_BAD_FIELD, "'id'"},
      {1, 1, TL_IN_DUPLICATE, "duplicate item id 'a'"},
      {2, 0, TL_IN_EMPTY_FILE, "no items"},
  };
  size_t nbad = sizeof BAD / sizeof BAD[0];
  assert_int_equal(log.total, (long)nbad);
  assert_int_equal(log.table->nrows, nbad);
  for (size_t i = 0; i < nbad; i++) {
    assert_string_equal(log.table->cols[0].v.s[i], tl_in_kind_name(BAD[i].kind));
    assert_string_equal(log.table->cols[1].v.s[i], paths[BAD[i].file]);
    assert_int_equal(log.table->cols[2].v.i[i], BAD[i].line);
    if (!strstr(log.table->cols[3].v.s[i], BAD[i].msg))
      fail_msg("problem %zu: '%s' lacks '%s'", i, log.table->cols[3].v.s[i], BAD[i].msg);
  }
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 6);
  assert_int_equal(log.counts[TL_IN_MISSING_FIELD], 2);
  assert_int_equal(log.counts[TL_IN_DUPLICATE], 2);
  assert_int_equal(log.counts[TL_IN_MALFORMED_JSON], 1);
  assert_int_equal(log.counts[TL_IN_EMPTY_FILE], 1);
  tl_inlog_release(&log);

  /* loading again gives the same items (load starts afresh) */
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  assert_int_equal(VT->load(b, 0, &log, &err), TL_OK);
  assert_int_equal(VT->n_items(b), 4);
  assert_string_equal(VT->item_id(b, 3), "c2");
  tl_inlog_release(&log);
  VT->free(b);

  /* strict: the first problem (line 3) stops the load with TL_EINPUT, nothing loaded */
  b = tl_test_judged_open_paths((char *const *)paths, 1);
  assert_non_null(b);
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK);
  err.msg[0] = 0;
  assert_int_equal(VT->load(b, 0, &log, &err), TL_EINPUT);
  assert_int_equal(log.total, 1);
  assert_int_equal(log.table->cols[2].v.i[0], 3);
  char where[160];
  snprintf(where, sizeof where, "%s:3:", paths[0]);
  assert_non_null(strstr(err.msg, where));
  assert_int_equal(VT->n_items(b), 0);
  tl_inlog_release(&log);
  VT->free(b);

  /* a clean file in strict mode loads */
  const char *clean = fx_file(&fx, "clean.jsonl", "{\"id\":\"z\",\"question\":\"Qz\",\"turns\":2}\n");
  b = tl_test_judged_open_paths((char *const *)&clean, 1);
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK);
  assert_int_equal(VT->load(b, 0, &log, &err), TL_OK);
  assert_int_equal(VT->n_items(b), 1);
  assert_int_equal(log.total, 0);
  tl_inlog_release(&log);
  VT->free(b);

  /* an unreadable file: TL_EIO naming it */
  char missing[160];
  snprintf(missing, sizeof missing, "%s/absent.jsonl", fx.dir);
  char *mp[1] = {missing};
  b = tl_test_judged_open_paths(mp, 1);
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  err.msg[0] = 0;
  assert_int_equal(VT->load(b, 0, &log, &err), TL_EIO);
  assert_non_null(strstr(err.msg, missing));
  assert_int_equal(VT->n_items(b), 0);
  tl_inlog_release(&log);
  VT->free(b);
  fx_release(&fx);
}

/* ---- requests ---- */
static void test_request(void **state) {
  (void)state;
  fixture fx;
  fx_init(&fx);
  const char *p = fx_file(&fx, "items.jsonl", ITEMS);
  tl_inlog log;
  tl_bench *b = open_loaded(&p, 1, &log);
  tl_cfg cfg = {"m", 0, 1};
  tl_buf arena;
  tl_buf_init(&arena);
  tl_err err;
  tl_row r;
  tl_row_init(&r);
  tl_bench_req q;

  /* stage 0: the model, one user message "question (turn sub+1)" */
  tl_unit u = {0, 1, 2}; /* item 1 = "b", third turn */
  memset(&q, 0x5a, sizeof q); /* request() sets every field */
  assert_int_equal(VT->request(b, &cfg, &u, 0, &r, &arena, &q, &err), TL_OK);
  assert_int_equal(q.skip, 0);
  assert_int_equal(q.role, TL_ROLE_MODEL);
  assert_int_equal(q.nmsg, 1);
  assert_string_equal(q.msgs[0].role, "user");
  assert_string_equal(q.msgs[0].content, "Qb (turn 3)");
  assert_int_equal(q.nimages, 0);
  assert_true(q.temperature < 0);
  assert_int_equal(q.max_tokens, 0);

  /* stage 1 without an answer: skipped */
  tl_buf_reset(&arena);
  memset(&q, 0, sizeof q);
  assert_int_equal(VT->request(b, &cfg, &u, 1, &r, &arena, &q, &err), TL_OK);
  assert_int_equal(q.skip, 1);

  /* stage 1 with an answer: the judge, a system and a user message. The answer is long, so the
   * arena grows (moves) while the message is built: the pointers must be taken after. */
  size_t alen = 200000;
  r.text[0] = malloc(alen + 1);
  assert_non_null(r.text[0]);
  memset(r.text[0], 'x', alen);
  r.text[0][alen] = 0;
  r.text[0][0] = 'A';
  tl_buf_reset(&arena);
  assert_int_equal(tl_buf_puts(&arena, "earlier"), TL_OK); /* the caller's, kept intact */
  memset(&q, 0x5a, sizeof q);
  assert_int_equal(VT->request(b, &cfg, &u, 1, &r, &arena, &q, &err), TL_OK);
  assert_int_equal(q.skip, 0);
  assert_int_equal(q.role, TL_ROLE_JUDGE);
  assert_int_equal(q.nmsg, 2);
  assert_int_equal(q.nimages, 0);
  assert_true(q.temperature < 0);
  assert_int_equal(q.max_tokens, 0);
  assert_string_equal(q.msgs[0].role, "system");
  assert_string_equal(q.msgs[0].content, "Rate the answer from 1 to 10. Reply with Rating: [[n]].");
  assert_string_equal(q.msgs[1].role, "user");
  tl_buf want;
  tl_buf_init(&want);
  assert_int_equal(tl_buf_puts(&want, "[Question]\nQb (turn 3)\n\n[Answer]\n"), TL_OK);
  assert_int_equal(tl_buf_puts(&want, r.text[0]), TL_OK);
  assert_string_equal(q.msgs[1].content, want.data);
  assert_true(q.msgs[1].content >= arena.data && q.msgs[1].content < arena.data + arena.len);
  assert_memory_equal(arena.data, "earlier", 7);
  tl_buf_release(&want);

  /* two requests into one arena without a reset: the strings stay apart */
  tl_buf_reset(&arena);
  tl_bench_req q0, q1;
  tl_unit u0 = {0, 0, 0};
  assert_int_equal(VT->request(b, &cfg, &u0, 0, &r, &arena, &q0, &err), TL_OK);
  size_t off0 = (size_t)(q0.msgs[0].content - arena.data), used = arena.len;
  tl_unit u1 = {0, 2, 7}; /* "c2", the eighth turn */
  assert_int_equal(VT->request(b, &cfg, &u1, 0, &r, &arena, &q1, &err), TL_OK);
  assert_true(arena.len > used);
  assert_string_equal(arena.data + off0, "Qa (turn 1)"); /* still ends on its own */
  assert_string_equal(q1.msgs[0].content, "Qc2 (turn 8)");

  /* internal errors: a unit outside the items or turns, a stage the module does not have */
  tl_unit bad1 = {0, 3, 0}, bad2 = {0, 0, 1}; /* 3 items; "a" has 1 turn */
  assert_int_equal(VT->request(b, &cfg, &bad1, 0, &r, &arena, &q, &err), TL_EINTERNAL);
  assert_int_equal(VT->request(b, &cfg, &bad2, 0, &r, &arena, &q, &err), TL_EINTERNAL);
  assert_int_equal(VT->request(b, &cfg, &u, 2, &r, &arena, &q, &err), TL_EINTERNAL);
  assert_non_null(strstr(err.msg, "stage 2"));

  tl_row_release(&r);
  tl_buf_release(&arena);
  tl_inlog_release(&log);
  VT->free(b);
  fx_release(&fx);
}

/* ---- scoring ---- */

/* A finished row with copies of the two stages' texts (NULL = none). */
static void row_set(tl_row *r, const char *t0, const char *t1) {
  tl_row_release(r);
  r->text[0] = t0 ? strdup(t0) : NULL;
  r->text[1] = t1 ? strdup(t1) : NULL;
  r->done = 2;
}

static void test_score(void **state) {
  (void)state;
  char *p[1] = {"/unused"};
  tl_bench *b = tl_test_judged_open_paths(p, 1);
  tl_cfg cfg = {"m", 0, 1};
  tl_unit u = {0, 0, 0};
  static const struct {
    const char *answer, *judgment;
    tl_pstatus status;
    const char *rule;
    int64_t value;
    int correct;
  } T[] = {
      /* the last rating wins over an earlier quoted one */
      {"A", "Example: Rating: [[10]] ... Rating: [[3]]", TL_PS_OK, "last_rating", 3, 0},
      {"A", "Rating: [[11]] no, Rating: [[8]]", TL_PS_OK, "last_rating", 8, 1},
      {"A", "Rating: [[8]] on second thought Rating: [[11]]", TL_PS_OUT_OF_RANGE, "rating_range", 0, 0},
      {"A", "Rating: [[7]]", TL_PS_OK, "last_rating", 7, 1},
      {"A", "good.\nRating: [[10]]\n", TL_PS_OK, "last_rating", 10, 1},
      {"A", "Rating: [[1]]", TL_PS_OK, "last_rating", 1, 0},
      {"A", "Rating: [[6]]", TL_PS_OK, "last_rating", 6, 1}, /* correct from 6 */
      {"A", "Rating: [[5]]", TL_PS_OK, "last_rating", 5, 0},
      {"A", "Rating: [[07]]", TL_PS_OK, "last_rating", 7, 1},
      {"A", "Rating: [[Rating: [[4]]", TL_PS_OK, "last_rating", 4, 0},
      {"A", "Rating: [[4]] Rating: [[x]]", TL_PS_OK, "last_rating", 4, 0}, /* not the pattern */
      /* no rating */
      {"A", "no verdict here", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "Rating: [[123]]", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "Rating: [[7]", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "Rating: [[]]", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "Rating: [[ 7]]", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "rating: [[7]]", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "Rating: [7]", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      {"A", "Rating: [[", TL_PS_NO_ANSWER, "no_rating", 0, 0},
      /* out of range */
      {"A", "Rating: [[0]]", TL_PS_OUT_OF_RANGE, "rating_range", 0, 0},
      {"A", "Rating: [[11]]", TL_PS_OUT_OF_RANGE, "rating_range", 0, 0},
      {"A", "Rating: [[99]]", TL_PS_OUT_OF_RANGE, "rating_range", 0, 0},
      /* missing stages */
      {NULL, NULL, TL_PS_MISSING, "", 0, 0},
      {NULL, "Rating: [[9]]", TL_PS_MISSING, "", 0, 0}, /* no answer: a judgment means nothing */
      {"A", NULL, TL_PS_MISSING, "no_judgment", 0, 0},
  };
  tl_row r;
  tl_row_init(&r);
  tl_err err;
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    row_set(&r, T[i].answer, T[i].judgment);
    /* a stale result in the row: score() replaces it (and frees its answer) */
    r.res[0].answer = strdup("stale");
    r.res[0].status = TL_PS_OK;
    r.res[0].value = 42;
    r.res[0].correct = 1;
    r.res[0].rule = "stale";
    if (VT->score(b, &cfg, &u, &r, &err) != TL_OK) fail_msg("case %zu: %s", i, err.msg);
    const tl_parsed *x = &r.res[0];
    if (x->status != T[i].status || strcmp(x->rule, T[i].rule) || x->value != T[i].value ||
        x->correct != T[i].correct)
      fail_msg("case %zu (%s): got %s/%s value %lld correct %d, want %s/%s %lld %d", i,
               T[i].judgment ? T[i].judgment : "NULL", tl_pstatus_name(x->status), x->rule,
               (long long)x->value, x->correct, tl_pstatus_name(T[i].status), T[i].rule,
               (long long)T[i].value, T[i].correct);
    if (T[i].status == TL_PS_OK) {
      char want[8];
      snprintf(want, sizeof want, "%lld", (long long)T[i].value);
      assert_non_null(x->answer);
      assert_string_equal(x->answer, want);
    } else {
      assert_null(x->answer);
    }
  }

  /* linear time: a megabyte of near-misses, then the verdict */
  tl_buf big;
  tl_buf_init(&big);
  for (int i = 0; i < 100000; i++) assert_int_equal(tl_buf_puts(&big, "Rating: [[1"), TL_OK);
  assert_int_equal(tl_buf_puts(&big, "Rating: [[9]]"), TL_OK);
  row_set(&r, "A", big.data);
  tl_buf_release(&big);
  assert_int_equal(VT->score(b, &cfg, &u, &r, &err), TL_OK);
  assert_int_equal(r.res[0].status, TL_PS_OK);
  assert_int_equal(r.res[0].value, 9);

  /* a row that has not been through both stages is an internal error */
  row_set(&r, "A", "Rating: [[9]]");
  r.done = 1;
  assert_int_equal(VT->score(b, &cfg, &u, &r, &err), TL_EINTERNAL);
  tl_row_release(&r);
  VT->free(b);
}

/* ---- aggregates and outputs ---- */

typedef struct {
  tl_unit u;
  const char *answer, *judgment;
} unit_case;

/* Items a (1 turn), a0 (2), b (3), c2 (8) from ITEMS + a second file. Three cfgs:
 *  cfg 0 (m1 seed 1): a 8;  b 7, 4, 9          -> min a 8, b 4
 *  cfg 1 (m1 seed 2): a missing; b 7, -, 9     -> min a 0, b 0 (a failed turn)
 *  cfg 2 (m2 seed 1): a no judgment            -> min a 0, nothing else
 * Items or cfgs with no unit added keep INT64_MAX (written -1). */
static const unit_case UNITS[] = {
    {{0, 0, 0}, "ans a", "Rating: [[8]]"},
    {{0, 2, 0}, "ans b0", "Rating: [[7]]"},
    {{0, 2, 1}, "ans b1", "Example: Rating: [[10]]. Rating: [[4]]"},
    {{0, 2, 2}, "ans b2", "Rating: [[9]]"},
    {{1, 0, 0}, NULL, NULL},
    {{1, 2, 0}, "ans b0", "Rating: [[7]]"},
    {{1, 2, 1}, "ans b1", "I cannot rate this."},
    {{1, 2, 2}, "ans b2", "Rating: [[9]]"},
    {{2, 0, 0}, "ans a", NULL},
};
#define NUNITS (sizeof UNITS / sizeof UNITS[0])
#define NCFGS 3
#define NITEMS 4

static void test_acc_and_tables(void **state) {
  (void)state;
  fixture fx;
  fx_init(&fx);
  const char *paths[2];
  paths[0] = fx_file(&fx, "items.jsonl", ITEMS);
  paths[1] = fx_file(&fx, "more.jsonl", "{\"id\":\"a0\",\"question\":\"Qa0\",\"turns\":2}\n");
  tl_inlog log;
  tl_bench *b = open_loaded(paths, 2, &log);
  assert_int_equal(VT->n_items(b), NITEMS);
  tl_cfg cfgs[NCFGS] = {{"m1", 0, 1}, {"m1", 0, 2}, {"m2", 0, 1}};

  tl_acc_block L[TL_MAX_ACC];
  assert_int_equal(VT->acc_layout(b, NCFGS, L), 2);
  assert_int_equal(L[0].op, TL_ACC_SUM);
  assert_int_equal(L[0].len, NCFGS * 4);
  assert_int_equal(L[0].init, 0);
  assert_int_equal(L[1].op, TL_ACC_MIN);
  assert_int_equal(L[1].len, NCFGS * NITEMS);
  assert_true(L[1].init == INT64_MAX);

  /* one "rank" with every unit, and two that split them (odd / even positions) */
  int64_t all[2][NCFGS * NITEMS], part[2][2][NCFGS * NITEMS];
  for (int k = 0; k < 2; k++)
    for (size_t j = 0; j < L[k].len; j++) all[k][j] = part[0][k][j] = part[1][k][j] = L[k].init;
  int64_t *acc_all[2] = {all[0], all[1]};
  int64_t *acc_part[2][2] = {{part[0][0], part[0][1]}, {part[1][0], part[1][1]}};
  tl_row rows[NUNITS];
  tl_unit units[NUNITS];
  tl_err err;
  for (size_t i = 0; i < NUNITS; i++) {
    units[i] = UNITS[i].u;
    tl_row_init(&rows[i]);
    row_set(&rows[i], UNITS[i].answer, UNITS[i].judgment);
    assert_int_equal(VT->score(b, cfgs, &units[i], &rows[i], &err), TL_OK);
    VT->acc_add(b, cfgs, NCFGS, &units[i], &rows[i], acc_all);
    VT->acc_add(b, cfgs, NCFGS, &units[i], &rows[i], acc_part[i & 1]);
  }
  /* block 0 per cfg: n_units, n_ok, sum of ratings, n_missing */
  static const int64_t SUM[NCFGS * 4] = {4, 4, 28, 0, /**/ 4, 2, 16, 1, /**/ 1, 0, 0, 1};
  static const int64_t MIN_WANT[NCFGS * NITEMS] = {8, INT64_MAX, 4, INT64_MAX, /**/
                                                   0, INT64_MAX, 0, INT64_MAX, /**/
                                                   0, INT64_MAX, INT64_MAX, INT64_MAX};
  for (size_t j = 0; j < NCFGS * 4; j++) {
    if (all[0][j] != SUM[j])
      fail_msg("sum block [%zu] = %lld, want %lld", j, (long long)all[0][j], (long long)SUM[j]);
    /* the split reduces to the same integers (SUM: +) */
    assert_true(part[0][0][j] + part[1][0][j] == SUM[j]);
  }
  for (size_t j = 0; j < NCFGS * NITEMS; j++) {
    if (all[1][j] != MIN_WANT[j])
      fail_msg("min block [%zu] = %lld, want %lld", j, (long long)all[1][j], (long long)MIN_WANT[j]);
    int64_t m = part[0][1][j] < part[1][1][j] ? part[0][1][j] : part[1][1][j]; /* MIN */
    assert_true(m == MIN_WANT[j]);
  }
  /* the split really split b's turns of cfg 0 (so the MIN reduction had work to do) */
  assert_true(part[0][1][2] != part[1][1][2]);

  /* metric tables from the reduced integers */
  tl_table **ts = NULL;
  int nt = 0;
  assert_int_equal(VT->tables(b, cfgs, NCFGS, acc_all, &ts, &nt), TL_OK);
  assert_int_equal(nt, 2);
  tl_table *bc = ts[0], *dm = ts[1];
  assert_string_equal(bc->path, "/metrics/test_judged/by_cfg");
  assert_string_equal(dm->path, "/metrics/test_judged/dialogue_min");
  static const char *const BC_COLS[] = {"model", "prompt_variant", "seed", "n", "n_ok",
                                        "n_missing", "mean_rating"};
  assert_int_equal(bc->ncols, 7);
  for (int c = 0; c < 7; c++) {
    assert_string_equal(bc->cols[c].name, BC_COLS[c]);
    assert_true(bc->cols[c].doc && *bc->cols[c].doc);
  }
  assert_int_equal(bc->nrows, NCFGS);
  static const struct {
    const char *model;
    int64_t seed, n, ok, missing;
    double mean;
  } BC[NCFGS] = {{"m1", 1, 4, 4, 0, 7.0}, {"m1", 2, 4, 2, 1, 8.0}, {"m2", 1, 1, 0, 1, NAN}};
  for (size_t r = 0; r < NCFGS; r++) {
    assert_string_equal(bc->cols[0].v.s[r], BC[r].model);
    assert_string_equal(bc->cols[1].v.s[r], "plain");
    assert_int_equal(bc->cols[2].v.i[r], BC[r].seed);
    assert_int_equal(bc->cols[3].v.i[r], BC[r].n);
    assert_int_equal(bc->cols[4].v.i[r], BC[r].ok);
    assert_int_equal(bc->cols[5].v.i[r], BC[r].missing);
    if (isnan(BC[r].mean)) assert_true(isnan(bc->cols[6].v.f[r]));
    else assert_true(bc->cols[6].v.f[r] == BC[r].mean);
  }
  static const char *const DM_COLS[] = {"model", "prompt_variant", "seed", "id", "min_rating"};
  assert_int_equal(dm->ncols, 5);
  for (int c = 0; c < 5; c++) {
    assert_string_equal(dm->cols[c].name, DM_COLS[c]);
    assert_true(dm->cols[c].doc && *dm->cols[c].doc);
  }
  assert_int_equal(dm->nrows, NCFGS * NITEMS);
  static const char *const IDS[NITEMS] = {"a", "a0", "b", "c2"};
  static const int64_t DMV[NCFGS * NITEMS] = {8, -1, 4, -1, 0, -1, 0, -1, 0, -1, -1, -1};
  for (size_t r = 0; r < NCFGS * NITEMS; r++) { /* cfg order, then item order */
    assert_string_equal(dm->cols[0].v.s[r], cfgs[r / NITEMS].model);
    assert_string_equal(dm->cols[1].v.s[r], "plain");
    assert_int_equal(dm->cols[2].v.i[r], cfgs[r / NITEMS].seed);
    assert_string_equal(dm->cols[3].v.s[r], IDS[r % NITEMS]);
    if (dm->cols[4].v.i[r] != DMV[r])
      fail_msg("dialogue_min row %zu = %lld, want %lld", r, (long long)dm->cols[4].v.i[r],
               (long long)DMV[r]);
  }

  /* the summary */
  char *text = NULL;
  size_t tlen = 0;
  FILE *mem = open_memstream(&text, &tlen);
  assert_non_null(mem);
  VT->summary(b, cfgs, NCFGS, NUNITS, ts, nt, acc_all, mem);
  assert_int_equal(fclose(mem), 0);
  assert_string_equal(text, "test_judged: m1 seed 1: n=4 ok=4 mean rating=7.000\n"
                            "test_judged: m1 seed 2: n=4 ok=2 mean rating=8.000\n"
                            "test_judged: m2 seed 1: n=1 ok=0 mean rating=nan\n");
  free(text);
  for (int i = 0; i < nt; i++) tl_table_free(ts[i]);
  free(ts);

  /* the item table: one row per unit given, in the order given */
  tl_table *it = VT->items_table(b, cfgs, units, rows, NUNITS, NULL);
  assert_non_null(it);
  assert_string_equal(it->path, "/items/test_judged");
  static const char *const IT_COLS[] = {"id", "turn", "model", "seed", "prompt_variant",
                                        "answer", "judgment", "status", "rule", "rating"};
  assert_int_equal(it->ncols, 10);
  for (int c = 0; c < 10; c++) {
    assert_string_equal(it->cols[c].name, IT_COLS[c]);
    assert_true(it->cols[c].doc && *it->cols[c].doc && !strchr(it->cols[c].doc, '\n'));
  }
  assert_int_equal(it->nrows, NUNITS);
  static const struct {
    const char *status, *rule;
    int64_t rating;
  } IR[NUNITS] = {{"ok", "last_rating", 8},       {"ok", "last_rating", 7},
                  {"ok", "last_rating", 4},       {"ok", "last_rating", 9},
                  {"missing", "", 0},             {"ok", "last_rating", 7},
                  {"no_answer", "no_rating", 0},  {"ok", "last_rating", 9},
                  {"missing", "no_judgment", 0}};
  for (size_t r = 0; r < NUNITS; r++) {
    assert_string_equal(it->cols[0].v.s[r], IDS[UNITS[r].u.item]);
    assert_int_equal(it->cols[1].v.i[r], UNITS[r].u.sub);
    assert_string_equal(it->cols[2].v.s[r], cfgs[UNITS[r].u.cfg].model);
    assert_int_equal(it->cols[3].v.i[r], cfgs[UNITS[r].u.cfg].seed);
    assert_string_equal(it->cols[4].v.s[r], "plain");
    assert_string_equal(it->cols[5].v.s[r], UNITS[r].answer ? UNITS[r].answer : "");
    assert_string_equal(it->cols[6].v.s[r], UNITS[r].judgment ? UNITS[r].judgment : "");
    assert_string_equal(it->cols[7].v.s[r], IR[r].status);
    assert_string_equal(it->cols[8].v.s[r], IR[r].rule);
    assert_int_equal(it->cols[9].v.i[r], IR[r].rating);
  }
  /* cleared and filled again (into): the columns stay, the rows are the new ones */
  tl_table_clear(it);
  assert_int_equal(it->nrows, 0);
  assert_ptr_equal(VT->items_table(b, cfgs, units + 2, rows + 2, 3, it), it);
  assert_int_equal(it->ncols, 10);
  assert_int_equal(it->nrows, 3);
  for (size_t r = 0; r < 3; r++) {
    assert_string_equal(it->cols[0].v.s[r], IDS[UNITS[r + 2].u.item]);
    assert_string_equal(it->cols[7].v.s[r], IR[r + 2].status);
    assert_int_equal(it->cols[9].v.i[r], IR[r + 2].rating);
  }
  tl_table_clear(it);
  assert_ptr_equal(VT->items_table(b, cfgs, units, rows, NUNITS, it), it);
  assert_int_equal(it->nrows, NUNITS);
  /* the table holds copies: it outlives the rows */
  for (size_t i = 0; i < NUNITS; i++) tl_row_release(&rows[i]);
  assert_string_equal(it->cols[5].v.s[1], "ans b0");
  tl_table_free(it);
  /* an empty range gives an empty table with its columns */
  it = VT->items_table(b, cfgs, units, rows, 0, NULL);
  assert_non_null(it);
  assert_int_equal(it->ncols, 10);
  assert_int_equal(it->nrows, 0);
  tl_table_free(it);

  tl_inlog_release(&log);
  VT->free(b);
  fx_release(&fx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vt),      cmocka_unit_test(test_load),
      cmocka_unit_test(test_request), cmocka_unit_test(test_score),
      cmocka_unit_test(test_acc_and_tables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
