/* test_vqa_load.c - the fast paths of the VQA module: the contraction lookup (a binary search)
 * against the script's linear scan on every key and near misses; the official loaders' in-place
 * reading of plain elements (vqa_scan.h) against cJSON's reading of the same content written so
 * that it is not plain (escapes, a 5.0 id, a nested member), item by item, with the count of
 * elements read in place; the fall-back cases (a duplicate key, a duplicate answer_id, a
 * 70-digit number, a null type, a non-string answer, no answers, more than 64 answers) giving
 * cJSON's reading and reports; the arena across blocks and with a
 * large string; 200 random question, annotation and results files (plain and not, bad in every
 * way the generator knows) loaded with and without the in-place reading: the same status, items,
 * results and input problems (kind, line, message, in order); the integer-to-text routine. */
#define _GNU_SOURCE /* asprintf, mkdtemp */
#include "testutil.h"
#include "tu_tmp.h"

#include "tally/inlog.h"
#include "tally/str.h"
#include "vqa_data.h"
#include "vqa_eval.h"
#include "vqa_scan.h"

/* ---- contractions -------------------------------------------------------------------------- */

static void expect_same_lookup(const char *w, size_t n) {
  const char *a = tl_vqa_contraction(w, n), *b = tl_vqa_contraction_scan(w, n);
  if (a != b) fail_msg("'%.*s': the search gives '%s', the scan '%s'", (int)n, w, a ? a : "(none)", b ? b : "(none)");
}

static void test_contractions(void **state) {
  (void)state;
  assert_int_equal(tl_vqa_contraction_count(), 120);
  for (size_t i = 0; i < tl_vqa_contraction_count(); i++) {
    const char *k = tl_vqa_contraction_key(i);
    size_t n = strlen(k);
    assert_non_null(tl_vqa_contraction_scan(k, n));
    expect_same_lookup(k, n);
    /* near misses: shorter, longer, one byte changed, capitalized */
    char buf[32];
    expect_same_lookup(k, n - 1);
    snprintf(buf, sizeof buf, "%ss", k);
    expect_same_lookup(buf, n + 1);
    for (size_t j = 0; j < n; j++) {
      memcpy(buf, k, n);
      buf[j] = (char)(buf[j] == 'z' ? 'a' : buf[j] + 1);
      expect_same_lookup(buf, n);
    }
    memcpy(buf, k, n);
    buf[0] = (char)(buf[0] >= 'a' && buf[0] <= 'z' ? buf[0] - 32 : buf[0] + 32);
    expect_same_lookup(buf, n);
  }
  assert_null(tl_vqa_contraction_key(120));
  static const char *const W[] = {"", "a", "yes", "no", "2", "im", "Im", "ive", "Ive", "let's", "dont",
                                  "somebody'd", "y'allll", "something'dve", "somethingd'vex", "'ow's'at"};
  for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) expect_same_lookup(W[i], strlen(W[i]));
  assert_string_equal(tl_vqa_contraction("dont", 4), "don't");
  assert_null(tl_vqa_contraction("im", 2)); /* the key is "Im": never met after lower() */
  assert_string_equal(tl_vqa_contraction("Im", 2), "I'm");
}

/* ---- the loaders ----------------------------------------------------------------------------- */


static void expect_same_str(const char *what, size_t i, const char *a, const char *b) {
  if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
    fail_msg("item %zu: %s '%s' != '%s'", i, what, a ? a : "(null)", b ? b : "(null)");
}

static void expect_same_sets(const tl_vqa_set *a, const tl_vqa_set *b) {
  assert_int_equal(a->n, b->n);
  assert_int_equal(a->numeric, b->numeric);
  assert_int_equal(a->n_dropped, b->n_dropped);
  for (size_t i = 0; i < a->n; i++) {
    const tl_vqa_item *x = &a->items[i], *y = &b->items[i];
    expect_same_str("id", i, x->id, y->id);
    expect_same_str("question", i, x->question, y->question);
    expect_same_str("question_type", i, x->question_type, y->question_type);
    expect_same_str("answer_type", i, x->answer_type, y->answer_type);
    assert_int_equal(x->num, y->num);
    assert_int_equal(x->is_num, y->is_num);
    assert_int_equal(x->order, y->order);
    assert_int_equal(x->line, y->line);
    assert_int_equal(x->n_answers, y->n_answers);
    for (size_t k = 0; k < x->n_answers; k++) expect_same_str("answer", i, x->answers[k], y->answers[k]);
  }
}

typedef struct {
  const char *name;
  const char *ann;  /* the annotations' array elements */
  const char *que;  /* the questions' array elements */
  const char *res;  /* the results' array elements */
  size_t plain;     /* questions and annotations read in place */
  size_t res_plain; /* results read in place */
} load_case;

/* The reference: plain elements only (everything read in place). */
static const load_case REF = {
    "plain",
    "{\"question_id\": 5, \"question_type\": \"what is\", \"answer_type\": \"other\", \"image_id\": 1,\n"
    "  \"answers\": [{\"answer\": \"A cat.\", \"answer_id\": 1, \"answer_confidence\": \"yes\"},\n"
    "               {\"answer\": \"caf\xc3\xa9\", \"answer_id\": 2}, {\"answer\": \"dont\", \"answer_id\": 3}]},\n"
    "{\"question_id\": -7, \"question_type\": \"how many\", \"answer_type\": \"number\", \"multiple_choice_answer\": null,"
    " \"answers\": [{\"answer\": \"2\", \"answer_id\": \"x\"}, {\"answer\": \"two\"}]}",
    "{\"question_id\": 5, \"question\": \"What is it?\", \"image_id\": 1},\n{\"question\": \"How many?\", \"question_id\": -7}",
    "{\"question_id\": 5, \"answer\": \"cat\"}, {\"answer\": \"2\", \"question_id\": -7}",
    4, 2};

/* The same content, each element changed so that it is not plain (or, for the last two, plain
 * with other spellings): cJSON reads it, and the items must be the same. */
static const load_case VARIANTS[] = {
    {"escapes",
     "{\"question_id\": 5, \"question_type\": \"what\\u0020is\", \"answer_type\": \"other\", \"image_id\": 1,\n"
     "  \"answers\": [{\"answer\": \"A cat\\u002e\", \"answer_id\": 1, \"answer_confidence\": \"yes\"},\n"
     "               {\"answer\": \"caf\\u00e9\", \"answer_id\": 2}, {\"answer\": \"dont\", \"answer_id\": 3}]},\n"
     "{\"question_id\": -7, \"question_type\": \"how many\", \"answer_type\": \"number\", \"multiple_choice_answer\": null,"
     " \"answers\": [{\"answer\": \"\\u0032\", \"answer_id\": \"x\"}, {\"answer\": \"two\"}]}",
     "{\"question_id\": 5, \"question\": \"What is it\\u003f\", \"image_id\": 1},\n{\"question\": \"How\\u0020many?\", \"question_id\": -7}",
     "{\"question_id\": 5, \"answer\": \"c\\u0061t\"}, {\"answer\": \"\\u0032\", \"question_id\": -7}",
     0, 0},
    {"non-integer spellings, nested members",
     "{\"question_id\": 5.0, \"question_type\": \"what is\", \"answer_type\": \"other\", \"image_id\": {\"a\": [1]},\n"
     "  \"answers\": [{\"answer\": \"A cat.\", \"answer_id\": 1, \"answer_confidence\": \"yes\"},\n"
     "               {\"answer\": \"caf\xc3\xa9\", \"answer_id\": 2}, {\"answer\": \"dont\", \"answer_id\": 3}]},\n"
     "{\"question_id\": -7, \"question_type\": \"how many\", \"answer_type\": \"number\", \"multiple_choice_answer\": null,"
     " \"answers\": [{\"answer\": \"2\", \"answer_id\": \"x\"}, {\"answer\": \"two\", \"extra\": []}]}",
     "{\"question_id\": 5e0, \"question\": \"What is it?\", \"image_id\": 1},\n{\"question\": \"How many?\", \"question_id\": -7, \"x\": {}}",
     "{\"question_id\": 50e-1, \"answer\": \"cat\"}, {\"answer\": \"2\", \"question_id\": -7, \"x\": [2]}",
     0, 0},
    {"blanks and key order",
     "{ \"answers\" : [ {\"answer_id\":1,\"answer\":\"A cat.\",\"answer_confidence\":\"yes\"} ,\n"
     "  {\"answer\":\"caf\xc3\xa9\",\"answer_id\":2},{\"answer_id\": 3, \"answer\":\"dont\"} ] ,\n \"answer_type\":\"other\","
     " \"question_type\" :\"what is\", \"question_id\":5,\"image_id\":1 },\n"
     "{\"answers\":[{\"answer\":\"2\",\"answer_id\":\"x\"},{\"answer\":\"two\"}],\"question_id\":-7,"
     "\"question_type\":\"how many\",\"answer_type\":\"number\",\"multiple_choice_answer\":null}",
     "{\"image_id\": 1, \"question\": \"What is it?\", \"question_id\": 5},\n{\"question_id\": -7, \"question\": \"How many?\"}",
     "{\"answer\": \"cat\", \"question_id\": 5}, {\"question_id\": -7, \"answer\": \"2\"}",
     4, 2},
};

typedef struct {
  tl_inlog log;
  tl_vqa_set set;
  tl_vqa_results res;
} loaded;

static void load_case_files(const load_case *c, loaded *L) {
  char *ann = NULL, *que = NULL, *res = NULL;
  assert_true(asprintf(&ann, "{\"info\": {}, \"annotations\": [\n%s]}", c->ann) > 0);
  assert_true(asprintf(&que, "{\"questions\": [\n%s\n]}", c->que) > 0);
  assert_true(asprintf(&res, "[%s]", c->res) > 0);
  const char *pa = tu_tmp_file("ann.json", ann), *pq = tu_tmp_file("que.json", que), *pr = tu_tmp_file("res.json", res);
  free(ann);
  free(que);
  free(res);
  tl_err err;
  assert_int_equal(tl_inlog_init(&L->log, NULL, 0), TL_OK);
  if (tl_vqa_load_official(&L->set, pq, pa, &L->log, &err) != TL_OK) fail_msg("%s: %s", c->name, err.msg);
  if (tl_vqa_load_results(&L->res, &L->set, pr, &L->log, &err) != TL_OK) fail_msg("%s: %s", c->name, err.msg);
  if (L->log.total) fail_msg("%s: %ld input problems", c->name, L->log.total);
  if (L->set.n_plain != c->plain || L->res.n_plain != c->res_plain)
    fail_msg("%s: %zu elements and %zu results read in place, want %zu and %zu", c->name, L->set.n_plain,
             L->res.n_plain, c->plain, c->res_plain);
}

static void loaded_release(loaded *L) {
  tl_vqa_results_release(&L->res);
  tl_vqa_set_release(&L->set);
  tl_inlog_release(&L->log);
}

static void test_plain_equals_cjson(void **state) {
  (void)state;
  loaded ref;
  load_case_files(&REF, &ref);
  assert_int_equal(ref.set.n, 2);
  assert_string_equal(ref.set.items[0].id, "-7");
  assert_string_equal(ref.set.items[1].answers[1], "caf\xc3\xa9");
  assert_string_equal(ref.set.items[1].question, "What is it?");
  assert_int_equal(ref.set.items[1].line, 2);
  assert_int_equal(ref.set.items[0].line, 5);
  assert_string_equal(ref.res.answer[1], "cat");
  for (size_t i = 0; i < sizeof VARIANTS / sizeof VARIANTS[0]; i++) {
    loaded v;
    load_case_files(&VARIANTS[i], &v);
    expect_same_sets(&ref.set, &v.set);
    assert_int_equal(v.res.n_given, ref.res.n_given);
    for (size_t k = 0; k < ref.set.n; k++) expect_same_str("result", k, ref.res.answer[k], v.res.answer[k]);
    loaded_release(&v);
  }
  loaded_release(&ref);
}

/* Elements the in-place reading leaves to cJSON, which reports them as before. */
static void test_fallbacks_report(void **state) {
  (void)state;
  char digits[80];
  memset(digits, '1', 70);
  digits[70] = 0;
  char *ann = NULL;
  assert_true(asprintf(&ann,
                       "{\"annotations\": [\n"
                       "{\"question_id\": 1, \"question_type\": \"a\", \"answer_type\": \"b\", \"question_type\": \"c\", \"answers\": [{\"answer\": \"x\"}]},\n"
                       "{\"question_id\": 2, \"question_type\": \"a\", \"answer_type\": \"b\", \"answers\": [{\"answer\": \"x\", \"answer_id\": 4}, {\"answer\": \"y\", \"answer_id\": 4}]},\n"
                       "{\"question_id\": 3, \"question_type\": \"a\", \"answer_type\": \"b\", \"image_id\": %s, \"answers\": [{\"answer\": \"x\"}]},\n"
                       "{\"question_id\": 4, \"question_type\": \"a\", \"answer_type\": \"b\", \"answers\": [{\"answer\": \"x\", \"k\": {\"d\": 1, \"d\": 2}}]},\n"
                       "{\"question_id\": 5, \"question_type\": \"a\", \"answer_type\": null, \"answers\": [{\"answer\": \"x\"}]},\n"
                       "{\"question_id\": 6, \"question_type\": \"a\", \"answer_type\": \"b\", \"answers\": [{\"answer\": 1}]},\n"
                       "{\"question_id\": 7, \"question_type\": \"a\", \"answer_type\": \"b\", \"answers\": []},\n"
                       "{\"question_id\": 8, \"question_type\": \"a\", \"answer_type\": \"b\", \"answers\": [{\"answer\": \"x\"}]}\n"
                       "]}",
                       digits) > 0);
  const char *pa = tu_tmp_file("fb.json", ann);
  free(ann);
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_vqa_set s;
  tl_err err;
  assert_int_equal(tl_vqa_load_official(&s, NULL, pa, &log, &err), TL_OK);
  assert_int_equal(s.n_plain, 1); /* question 8 */
  assert_int_equal(s.n, 3);       /* 2 (kept, reported), 3 and 8 */
  assert_string_equal(s.items[0].id, "2");
  assert_string_equal(s.items[1].id, "3");
  assert_string_equal(s.items[2].id, "8");
  assert_int_equal(s.n_dropped, 5);
  assert_int_equal(log.total, 6);
  assert_int_equal(log.counts[TL_IN_DUPLICATE_KEY], 2);
  assert_int_equal(log.counts[TL_IN_DUPLICATE], 1);
  assert_int_equal(log.counts[TL_IN_MALFORMED_JSON], 0); /* the 70-digit number: cJSON's reading */
  assert_int_equal(log.counts[TL_IN_MISSING_FIELD], 1);
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 2);
  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
}

/* More answers than the in-place reading takes, many items across the arena's blocks, and a
 * string larger than a block's quarter (a block of its own). */
static void test_arena(void **state) {
  (void)state;
  tl_buf t;
  tl_buf_init(&t);
  assert_int_equal(tl_buf_append(&t, "{\"annotations\": [", 17), TL_OK);
  const size_t N = 20000, BIG = 400000;
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(tl_buf_printf(&t, "%s{\"question_id\": %zu, \"question_type\": \"t%zu\", \"answer_type\": \"a\", \"answers\": [",
                                   i ? "," : "", i, i % 7),
                     TL_OK);
    size_t na = i == 3 ? 70 : 10;
    for (size_t k = 0; k < na; k++)
      assert_int_equal(tl_buf_printf(&t, "%s{\"answer\": \"ans %zu %zu\", \"answer_id\": %zu}", k ? "," : "", i, k, k + 1), TL_OK);
    if (i == 5) {
      assert_int_equal(tl_buf_append(&t, ",{\"answer\": \"", 13), TL_OK);
      for (size_t k = 0; k < BIG; k++) assert_int_equal(tl_buf_append(&t, "z", 1), TL_OK);
      assert_int_equal(tl_buf_append(&t, "\"}", 2), TL_OK);
    }
    assert_int_equal(tl_buf_append(&t, "]}", 2), TL_OK);
  }
  assert_int_equal(tl_buf_append(&t, "]}", 3), TL_OK); /* with the NUL */
  const char *pa = tu_tmp_file("big.json", t.data);
  tl_buf_release(&t);
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_vqa_set s;
  tl_err err;
  assert_int_equal(tl_vqa_load_official(&s, NULL, pa, &log, &err), TL_OK);
  assert_int_equal(log.total, 0);
  assert_int_equal(s.n, N);
  assert_int_equal(s.n_plain, N - 1); /* item 3: 70 answers, read by cJSON */
  assert_int_equal(s.items[3].n_answers, 70);
  assert_string_equal(s.items[3].answers[69], "ans 3 69");
  assert_int_equal(s.items[5].n_answers, 11);
  assert_int_equal(strlen(s.items[5].answers[10]), BIG);
  for (size_t i = 0; i < N; i += 997) {
    char want[64];
    snprintf(want, sizeof want, "ans %zu 9", i);
    assert_string_equal(s.items[i].answers[9], want);
    snprintf(want, sizeof want, "t%zu", i % 7);
    assert_string_equal(s.items[i].question_type, want);
  }
  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
}

/* ---- differential: random files loaded both ways ------------------------------------------- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(uint32_t n) { /* xorshift64*: a fixed sequence, test data only */
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return (uint32_t)((g_rng * 2685821657736338717ULL) >> 33) % n;
}

/* A JSON string value: mostly plain words, sometimes an escape, a quote, a \u0000, invalid
 * UTF-8, non-ASCII. */
static void rnd_string(tl_buf *b) {
  static const char *const W[] = {"yes", "no", "2", "two", "dont", "the cat", "Black.", "caf\xc3\xa9", "",
                                  "a, b", "3.5", "  x  ", "\\\"q\\\"", "\\u0041", "\\u0000", "\\/", "\xff",
                                  "\\n", "it's", "\\ud83d\\ude00"};
  tl_buf_printf(b, "\"%s\"", W[rnd(sizeof W / sizeof W[0])]);
}

/* A value for a field that should be an integer id. */
static void rnd_id(tl_buf *b, int pool) {
  switch (rnd(14)) {
  case 0: tl_buf_printf(b, "%u.0", rnd((uint32_t)pool)); break;
  case 1: tl_buf_printf(b, "\"%u\"", rnd((uint32_t)pool)); break;
  case 2: tl_buf_printf(b, "null"); break;
  case 3: tl_buf_printf(b, "-%u", rnd((uint32_t)pool)); break;
  case 4: tl_buf_printf(b, "1e%u", rnd(3)); break;
  case 5: tl_buf_printf(b, "12345678901234567"); break;
  default: tl_buf_printf(b, "%u", rnd((uint32_t)pool)); break;
  }
}

/* Any scalar or a small container (with a duplicate key sometimes). */
static void rnd_extra(tl_buf *b) {
  switch (rnd(7)) {
  case 0: tl_buf_printf(b, "{\"a\": 1, \"a\": 2}"); break;
  case 1: tl_buf_printf(b, "[1, {\"b\": \"\\u0000\"}]"); break;
  case 2: tl_buf_printf(b, "{}"); break;
  case 3: tl_buf_printf(b, "true"); break;
  case 4: tl_buf_printf(b, "-0.5e3"); break;
  default: rnd_string(b); break;
  }
}

static void rnd_answers(tl_buf *b) {
  if (rnd(15) == 0) {
    rnd_extra(b);
    return;
  }
  uint32_t n = rnd(12);
  tl_buf_printf(b, "[");
  for (uint32_t k = 0; k < n; k++) {
    tl_buf_printf(b, "%s", k ? ", " : "");
    if (rnd(40) == 0) {
      rnd_extra(b);
      continue;
    }
    tl_buf_printf(b, "{");
    int first = 1;
    if (rnd(20)) {
      tl_buf_printf(b, "\"answer\": ");
      if (rnd(25) == 0) tl_buf_printf(b, "%u", rnd(9));
      else rnd_string(b);
      first = 0;
    }
    if (rnd(3)) {
      tl_buf_printf(b, "%s\"answer_id\": ", first ? "" : ", ");
      rnd(8) ? tl_buf_printf(b, "%u", 1 + rnd(n + 2)) : (rnd_id(b, 5), TL_OK);
      first = 0;
    }
    if (rnd(4) == 0) {
      tl_buf_printf(b, "%s\"%s\": ", first ? "" : ", ", rnd(6) ? "answer_confidence" : "answer");
      rnd_extra(b);
    }
    tl_buf_printf(b, "}");
  }
  tl_buf_printf(b, "]");
}

/* One annotation: its members in a random order, some missing, some mistyped, some repeated. */
static void rnd_annotation(tl_buf *b) {
  if (rnd(50) == 0) {
    rnd_extra(b);
    return;
  }
  static const char *const K[] = {"question_id", "question_type", "answer_type", "answers", "image_id", "x"};
  int order[6] = {0, 1, 2, 3, 4, 5};
  for (int i = 5; i > 0; i--) {
    int j = (int)rnd((uint32_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  tl_buf_printf(b, "{");
  int first = 1;
  for (int i = 0; i < 6; i++) {
    int k = order[i];
    if (rnd(k >= 4 ? 2 : 30) == 0) continue;
    int reps = rnd(60) == 0 ? 2 : 1;
    for (int r = 0; r < reps; r++) {
      tl_buf_printf(b, "%s%s\"%s\": ", first ? "" : ",", rnd(5) ? " " : "\n ", K[k]);
      first = 0;
      if (k == 0) rnd_id(b, 40);
      else if (k == 3) rnd_answers(b);
      else if (k >= 4 || rnd(20) == 0) rnd_extra(b);
      else rnd_string(b);
    }
  }
  tl_buf_printf(b, "}");
}

static void rnd_question(tl_buf *b) {
  if (rnd(60) == 0) {
    rnd_extra(b);
    return;
  }
  tl_buf_printf(b, "{\"question_id\": ");
  rnd_id(b, 40);
  tl_buf_printf(b, ", \"question\": ");
  rnd(20) ? rnd_string(b) : rnd_extra(b);
  if (rnd(4) == 0) {
    tl_buf_printf(b, ", \"image_id\": ");
    rnd_extra(b);
  }
  tl_buf_printf(b, "}");
}

static void rnd_result(tl_buf *b) {
  tl_buf_printf(b, "{");
  if (rnd(3)) {
    tl_buf_printf(b, "\"%s\": ", rnd(10) ? "question_id" : "id");
    rnd_id(b, 45);
    tl_buf_printf(b, ", ");
  }
  tl_buf_printf(b, "\"answer\": ");
  rnd(25) ? rnd_string(b) : rnd_extra(b);
  tl_buf_printf(b, "}");
}

static const char *rnd_file(const char *name, const char *head, void (*elem)(tl_buf *), int n, const char *tail) {
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_printf(&b, "%s", head);
  for (int i = 0; i < n; i++) {
    if (i) tl_buf_printf(&b, rnd(3) ? ", " : ",\n");
    elem(&b);
  }
  tl_buf_printf(&b, "%s", tail);
  const char *p = tu_tmp_file(name, b.data);
  tl_buf_release(&b);
  return p;
}

/* Loads the files with vqa_plain_off = off into L (the status in *st). */
static void load_both(int off, const char *q, const char *a, const char *r, loaded *L, tl_status *st) {
  tl_err err;
  vqa_plain_off = off;
  assert_int_equal(tl_inlog_init(&L->log, NULL, 0), TL_OK);
  *st = tl_vqa_load_official(&L->set, q, a, &L->log, &err);
  memset(&L->res, 0, sizeof L->res);
  if (*st == TL_OK) *st = tl_vqa_load_results(&L->res, &L->set, r, &L->log, &err);
  vqa_plain_off = 0;
}

static void test_differential(void **state) {
  (void)state;
  size_t plain = 0, total = 0;
  for (int round = 0; round < 200; round++) {
    const char *q = rnd_file("dq.json", "{\"questions\": [", rnd_question, 1 + (int)rnd(30), "]}");
    const char *a = rnd_file("da.json", "{\"info\": {\"a\": [1]}, \"annotations\": [\n", rnd_annotation, 1 + (int)rnd(40), "\n]}");
    const char *r = rnd_file("dr.json", "[", rnd_result, 1 + (int)rnd(40), "]");
    loaded x, y;
    tl_status sx, sy;
    load_both(0, q, a, r, &x, &sx);
    load_both(1, q, a, r, &y, &sy);
    assert_int_equal(sx, sy);
    assert_int_equal(y.set.n_plain + y.res.n_plain, 0);
    plain += x.set.n_plain + x.res.n_plain;
    total += x.set.n + x.set.n_dropped;
    assert_int_equal(x.log.total, y.log.total);
    for (int k = 0; k < TL_IN__NKINDS; k++) assert_int_equal(x.log.counts[k], y.log.counts[k]);
    const tl_table *tx = x.log.table, *ty = y.log.table;
    assert_int_equal(tx->nrows, ty->nrows);
    for (size_t i = 0; i < tx->nrows; i++) {
      assert_string_equal(tx->cols[0].v.s[i], ty->cols[0].v.s[i]);
      assert_int_equal(tx->cols[2].v.i[i], ty->cols[2].v.i[i]);
      assert_string_equal(tx->cols[3].v.s[i], ty->cols[3].v.s[i]);
    }
    if (sx == TL_OK) {
      expect_same_sets(&x.set, &y.set);
      assert_int_equal(x.set.n_no_question, y.set.n_no_question);
      assert_int_equal(x.set.n_no_annotation, y.set.n_no_annotation);
      assert_int_equal(x.res.n_given, y.res.n_given);
      assert_int_equal(x.res.n_unknown, y.res.n_unknown);
      assert_int_equal(x.res.n_duplicate, y.res.n_duplicate);
      assert_int_equal(x.res.n_bad, y.res.n_bad);
      for (size_t i = 0; i < x.set.n; i++) expect_same_str("result", i, x.res.answer[i], y.res.answer[i]);
    }
    loaded_release(&x);
    loaded_release(&y);
  }
  /* the generator must exercise both readings */
  print_message("differential: %zu of the elements read in place, %zu annotations\n", plain, total);
  assert_true(plain > 1000);
}

static void test_i64_text(void **state) {
  (void)state;
  static const struct {
    int64_t v;
    const char *s;
  } C[] = {{0, "0"}, {7, "7"}, {-7, "-7"}, {1000, "1000"}, {9007199254740992LL, "9007199254740992"},
           {INT64_MIN, "-9223372036854775808"}, {INT64_MAX, "9223372036854775807"}};
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
    char buf[24];
    assert_string_equal(vqa_i64_text(C[i].v, buf), C[i].s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_contractions), cmocka_unit_test(test_plain_equals_cjson),
      cmocka_unit_test(test_fallbacks_report), cmocka_unit_test(test_arena), cmocka_unit_test(test_differential),
      cmocka_unit_test(test_i64_text),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tu_tmp_clean();
  return rc;
}
