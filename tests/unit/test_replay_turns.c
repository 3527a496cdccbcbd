/* test_replay_turns.c - replay lines' keys as people write them (issue 27): an integer "id" is
 * its decimal text; "turn_id" (the item's 1-based turn) beside "turn" (the sub, from 0), mapped
 * by the caller's sub_of (tl_replay_open_subs) or, without one, to turn_id - 1; a line whose
 * turn names no unit is a bad line with its file and line, and the request of a mapped turn is
 * answered by the line that named it. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <unistd.h>

#include "testutil.h"
#include "tu_tmp.h"
#include "replay.h"

typedef struct {
  char id[8][32];
  uint32_t sub[8];
  long line[8];
  int n;
} keys;

static int record(void *ctx, const tl_unit_key *k, const char *path, long line) {
  (void)path;
  keys *c = ctx;
  assert_true(c->n < 8);
  snprintf(c->id[c->n], sizeof c->id[c->n], "%s", k->id);
  c->sub[c->n] = k->sub;
  c->line[c->n++] = line;
  return 0;
}

/* A test mapping: item "1" has turns 1..3, turn 1 context only (subs 0, 1 = turns 2, 3). */
static int ctx_only_first(void *ctx, const char *bench, const char *id, int64_t turn, int64_t turn_id, uint32_t *sub,
                          char *msg, size_t msz) {
  (void)ctx;
  assert_string_equal(bench, "mtb");
  *sub = turn >= 0 ? (uint32_t)turn : 0;
  if (strcmp(id, "1")) return 0;
  if (turn_id >= 0) {
    if (turn_id < 2 || turn_id > 3) return snprintf(msg, msz, "turn_id %lld names no unit", (long long)turn_id), -1;
    if (turn >= 0 && turn != turn_id - 2) return snprintf(msg, msz, "disagree"), -1;
    *sub = (uint32_t)(turn_id - 2);
  } else if (*sub > 1) {
    return snprintf(msg, msz, "turn %lld out of range", (long long)turn), -1;
  }
  return 0;
}

static const char *const VARS[] = {"golden", NULL};

static void test_default_mapping(void **state) {
  (void)state;
  char *path = tu_write_tmp("{\"id\":17,\"model\":\"m\",\"turn_id\":3,\"response\":\"A\"}\n"     /* 1: sub 2, id "17" */
                         "{\"id\":\"17\",\"model\":\"m\",\"turn\":0,\"turn_id\":1,\"response\":\"B\"}\n" /* 2: sub 0 */
                         "{\"id\":\"17\",\"model\":\"m\",\"turn\":1,\"turn_id\":1,\"response\":\"C\"}\n" /* 3: disagree */
                         "{\"id\":\"17\",\"model\":\"m\",\"turn_id\":0,\"response\":\"D\"}\n"   /* 4: turn_id < 1 */
                         "{\"id\":1.5,\"model\":\"m\",\"response\":\"E\"}\n"                    /* 5: not an id */
                         "{\"id\":-4,\"model\":\"m\",\"response\":\"F\"}\n");                   /* 6: id "-4" */
  tl_replay_source src = {path, "mtb", 0, NULL, 0, "golden", VARS};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  keys k = {0};
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, record, &k, &r, &err), TL_OK);
  assert_int_equal(k.n, 3);
  assert_string_equal(k.id[0], "17");
  assert_int_equal(k.sub[0], 2);
  assert_int_equal(k.sub[1], 0);
  assert_string_equal(k.id[2], "-4");
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 3);
  tl_engine *e = tl_replay_engine(r);
  tl_eng_request q;
  memset(&q, 0, sizeof q);
  q.key = (tl_unit_key){"mtb", "17", "m", "golden", 0, 2, 0};
  q.temperature = -1;
  assert_int_equal(e->vt->submit(e, &q), TL_OK);
  tl_eng_reply rep[2];
  assert_int_equal(e->vt->poll(e, rep, 2, 0), 1);
  assert_string_equal(rep[0].text, "A");
  tl_eng_reply_release(&rep[0]);
  e->vt->free(e);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

static void test_sub_of(void **state) {
  (void)state;
  char *path = tu_write_tmp("{\"id\":1,\"model\":\"m\",\"turn_id\":2,\"response\":\"T2\"}\n"    /* 1: sub 0 */
                         "{\"id\":1,\"model\":\"m\",\"turn_id\":1,\"response\":\"ctx\"}\n"   /* 2: context only */
                         "{\"id\":1,\"model\":\"m\",\"turn_id\":99,\"response\":\"x\"}\n"    /* 3: past the end */
                         "{\"id\":1,\"model\":\"m\",\"turn\":2,\"response\":\"x\"}\n"        /* 4: past the end */
                         "{\"id\":1,\"model\":\"m\",\"turn\":1,\"turn_id\":3,\"response\":\"T3\"}\n" /* 5: sub 1 */
                         "{\"id\":\"9\",\"model\":\"m\",\"turn\":7,\"response\":\"y\"}\n");  /* 6: not the mapper's */
  tl_replay_source src = {path, "mtb", 1, NULL, 0, "golden", VARS};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  tl_err err;
  keys k = {0};
  assert_int_equal(tl_replay_open_subs(&src, 1, 0, &log, record, &k, ctx_only_first, NULL, &r, &err), TL_OK);
  assert_int_equal(k.n, 3);
  assert_int_equal(k.line[0], 1);
  assert_int_equal(k.sub[0], 0);
  assert_int_equal(k.line[1], 5);
  assert_int_equal(k.sub[1], 1);
  assert_int_equal(k.sub[2], 7);
  assert_int_equal(log.counts[TL_IN_BAD_FIELD], 3);
  assert_int_equal(log.table->nrows, 3);
  assert_int_equal(log.table->cols[2].v.i[0], 2); /* file:line of each */
  assert_int_equal(log.table->cols[2].v.i[1], 3);
  assert_int_equal(log.table->cols[2].v.i[2], 4);
  assert_string_equal(log.table->cols[3].v.s[0], "turn_id 1 names no unit");
  tl_engine *e = tl_replay_engine(r);
  tl_eng_request q[2];
  memset(q, 0, sizeof q);
  q[0].key = (tl_unit_key){"mtb", "1", "m", "golden", 0, 1, 1};
  q[1].key = (tl_unit_key){"mtb", "1", "m", "golden", 0, 0, 1};
  q[0].tag = 1, q[1].tag = 2;
  q[0].temperature = q[1].temperature = -1;
  for (int i = 0; i < 2; i++) assert_int_equal(e->vt->submit(e, &q[i]), TL_OK);
  tl_eng_reply rep[2];
  assert_int_equal(e->vt->poll(e, rep, 2, 0), 2);
  assert_string_equal(rep[0].text, "T3");
  assert_string_equal(rep[1].text, "T2");
  for (int i = 0; i < 2; i++) tl_eng_reply_release(&rep[i]);
  e->vt->free(e);
  tl_inlog_release(&log);
  /* strict input: the first such line stops loading */
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK);
  k.n = 0;
  assert_int_equal(tl_replay_open_subs(&src, 1, 0, &log, record, &k, ctx_only_first, NULL, &r, &err), TL_EINPUT);
  assert_int_equal(k.n, 1);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_default_mapping), cmocka_unit_test(test_sub_of)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
