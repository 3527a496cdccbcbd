/* test_replay_share.c - the replay engine's load shared by ranks (replay.h "one load shared by
 * several processes"), with the ranks simulated in one process: for 1 to 6 ranks, each reads its
 * share of each file, the counts, entries and problems are exchanged by copying them in rank
 * order, and every rank must end with what tl_replay_open_subs gives on one: the same problems
 * in the log (kind, file, line, message, in that order), the same per-file counts (lines,
 * rejected, matched), the same index (its size, and the same line answering each key), and under
 * strict input the same first problem. The files hold blank lines, "\r\n" ends, a last line
 * without "\n", bad lines, unknown items, duplicates within a share, across shares, across files
 * and of an unknown item's line, and an empty file; and with every key given one hash. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <unistd.h>

#include "testutil.h"
#include "tu_tmp.h"
#include "replay.h"

/* The discovery callback of a caller: ids starting with 'x' are unknown items (reported to the
 * log it is given), the others are matched. */
typedef struct {
  tl_inlog *log;
} disc;

static int discover(void *ctx, const tl_unit_key *k, const char *path, long line) {
  disc *d = ctx;
  if (k->id[0] == 'x') return tl_inlog_report(d->log, TL_IN_UNKNOWN_ITEM, path, line, "answer for unknown item '%s'", k->id) != TL_OK;
  return tl_inlog_matched(d->log, path, 1) != TL_OK;
}

static const char *const VARS[] = {"golden", "other", NULL};

/* File A: 64 lines of problems and answers; B: duplicates of A's lines and its own; C: empty. */
static char *file_a(void) {
  tl_buf b;
  tl_buf_init(&b);
  for (int i = 1; i <= 64; i++) {
    if (i % 11 == 0) tl_buf_printf(&b, "\n");                                     /* blank */
    else if (i % 13 == 0) tl_buf_printf(&b, "{\"id\": \"q%d\", \"model\": \"m\", \"response\": \n", i); /* malformed */
    else if (i % 17 == 0) tl_buf_printf(&b, "{\"id\": \"q%d\", \"model\": \"m\"}\r\n", i);       /* missing */
    else if (i % 19 == 0) tl_buf_printf(&b, "{\"id\": \"x%d\", \"model\": \"m\", \"response\": \"u\"}\n", i); /* unknown */
    else if (i == 30 || i == 31) tl_buf_printf(&b, "{\"id\": \"q3\", \"model\": \"m\", \"response\": \"dup%d\"}\n", i);
    else if (i == 60) tl_buf_printf(&b, "{\"id\": \"x19\", \"model\": \"m\", \"response\": \"dup of unknown\"}\n");
    else if (i == 61) tl_buf_printf(&b, "{\"id\": \"q62\", \"model\": \"m\", \"response\": \"before its twin\"}\r\n");
    else if (i == 62) tl_buf_printf(&b, "{\"id\": \"q62\", \"model\": \"m\", \"response\": \"twin\"}\n");
    else tl_buf_printf(&b, "{\"id\": \"q%d\", \"model\": \"m\", \"prompt_variant\": \"%s\", \"response\": \"r%d\"}\n", i,
                       i % 5 ? "golden" : "other", i);
  }
  tl_buf_printf(&b, "{\"id\": \"q2\", \"model\": \"m\", \"response\": \"last, no newline\"}");
  char *p = tu_write_tmp(b.data);
  tl_buf_release(&b);
  return p;
}

static char *file_b(void) {
  return tu_write_tmp("{\"id\": \"q1\", \"model\": \"m\", \"response\": \"dup across files\"}\n\n"
                   "{\"id\": \"q1\", \"model\": \"n\", \"response\": \"another model\"}\n"
                   "{\"id\": \"x19\", \"model\": \"n\", \"response\": \"unknown\"}\n"
                   "{\"id\": \"q1\", \"model\": \"n\", \"response\": \"dup in b\"}\n");
}

typedef struct {
  tl_status st;
  tl_inlog log;
  tl_replay *r;
} outcome;

static void open_one(const tl_replay_source *src, int n, int strict, outcome *o) {
  assert_int_equal(tl_inlog_init(&o->log, NULL, strict), TL_OK);
  for (int f = 0; f < n; f++) tl_inlog_matched(&o->log, src[f].path, 0);
  disc d = {&o->log};
  tl_err err = {{0}};
  o->st = tl_replay_open_subs(src, n, 0, &o->log, discover, &d, NULL, NULL, &o->r, &err);
}

/* nranks simulated ranks; o[k] is rank k's outcome. */
static void open_shared(const tl_replay_source *src, int n, int strict, int nranks, outcome *o) {
  tl_replay_share *sh[8];
  tl_inlog rec[8];
  disc d[8];
  tl_err err = {{0}};
  int64_t *counts = calloc((size_t)(2 * n * nranks + 1), sizeof *counts);
  for (int k = 0; k < nranks; k++) {
    assert_int_equal(tl_inlog_init(&rec[k], NULL, 0), TL_OK);
    d[k].log = &rec[k];
    assert_int_equal(tl_replay_share_read(src, n, 0, k, nranks, &rec[k], discover, &d[k], NULL, NULL, &sh[k], &err),
                     TL_OK);
    tl_replay_share_counts(sh[k], counts + 2 * n * k);
  }
  size_t total = 0;
  for (int k = 0; k < nranks; k++) {
    assert_int_equal(tl_replay_share_place(sh[k], counts, &err), TL_OK);
    const void *e;
    size_t m;
    tl_replay_share_entries(sh[k], &e, &m);
    total += m;
  }
  char *all = malloc(total * TL_REPLAY_ENTRY_BYTES + 1);
  size_t at = 0;
  for (int k = 0; k < nranks; k++) {
    const void *e;
    size_t m;
    tl_replay_share_entries(sh[k], &e, &m);
    memcpy(all + at, e, m * TL_REPLAY_ENTRY_BYTES);
    at += m * TL_REPLAY_ENTRY_BYTES;
  }
  for (int k = 0; k < nranks; k++) {
    char *mine = malloc(total * TL_REPLAY_ENTRY_BYTES + 1);
    memcpy(mine, all, total * TL_REPLAY_ENTRY_BYTES);
    assert_int_equal(tl_replay_share_index(sh[k], mine, total, &err), TL_OK);
  }
  free(all);
  tl_buf blobs;
  tl_buf_init(&blobs);
  uint64_t len[8];
  for (int k = 0; k < nranks; k++) {
    size_t before = blobs.len;
    assert_int_equal(tl_replay_share_events(sh[k], &blobs), TL_OK);
    len[k] = blobs.len - before;
  }
  for (int k = 0; k < nranks; k++) {
    assert_int_equal(tl_inlog_init(&o[k].log, NULL, strict), TL_OK);
    for (int f = 0; f < n; f++) tl_inlog_matched(&o[k].log, src[f].path, 0);
    o[k].st = tl_replay_share_report(sh[k], blobs.data, len, &o[k].log, &err);
    o[k].r = NULL;
    if (o[k].st == TL_OK) o[k].r = tl_replay_share_finish(sh[k]);
    else tl_replay_share_free(sh[k]);
    tl_inlog_release(&rec[k]);
  }
  tl_buf_release(&blobs);
  free(counts);
}

/* (files: compare the per-file counts too; a strict stop leaves them partial, as nothing reads them) */
static void same_log(const tl_inlog *a, const tl_inlog *b, int files) {
  assert_int_equal(a->total, b->total);
  for (int k = 0; k < TL_IN__NKINDS; k++) assert_int_equal(a->counts[k], b->counts[k]);
  assert_int_equal(a->table->nrows, b->table->nrows);
  for (size_t i = 0; i < a->table->nrows; i++) {
    assert_string_equal(a->table->cols[0].v.s[i], b->table->cols[0].v.s[i]);
    assert_string_equal(a->table->cols[1].v.s[i], b->table->cols[1].v.s[i]);
    assert_int_equal(a->table->cols[2].v.i[i], b->table->cols[2].v.i[i]);
    assert_string_equal(a->table->cols[3].v.s[i], b->table->cols[3].v.s[i]);
  }
  if (!files) return;
  assert_int_equal(a->nfiles, b->nfiles);
  for (size_t f = 0; f < a->nfiles; f++) {
    assert_string_equal(a->files[f].path, b->files[f].path);
    assert_int_equal(a->files[f].lines, b->files[f].lines);
    assert_int_equal(a->files[f].rejected, b->files[f].rejected);
    assert_int_equal(a->files[f].matched, b->files[f].matched);
  }
}

/* The reply to key (id, model, variant): its text or error, and its source ("PATH:LINE"). */
static void ask(tl_replay *r, const char *id, const char *model, const char *variant, char *out, size_t n) {
  tl_engine *e = tl_replay_engine(r);
  tl_eng_request q;
  memset(&q, 0, sizeof q);
  q.key = (tl_unit_key){"b", id, model, variant, 0, 0, 0};
  q.temperature = -1;
  assert_int_equal(e->vt->submit(e, &q), TL_OK);
  tl_eng_reply rep;
  assert_int_equal(e->vt->poll(e, &rep, 1, 0), 1);
  snprintf(out, n, "%s|%s|%s", rep.text ? rep.text : "", rep.error ? rep.error : "", rep.source ? rep.source : "");
  tl_eng_reply_release(&rep);
}

static void same_engine(tl_replay *a, tl_replay *b) {
  assert_int_equal(tl_replay_index_bytes(a), tl_replay_index_bytes(b));
  const char *models[] = {"m", "n"}, *vars[] = {"golden", "other"};
  for (int i = 0; i <= 66; i++)
    for (int m = 0; m < 2; m++)
      for (int v = 0; v < 2; v++) {
        char id[16], x[512], y[512];
        snprintf(id, sizeof id, "q%d", i);
        ask(a, id, models[m], vars[v], x, sizeof x);
        ask(b, id, models[m], vars[v], y, sizeof y);
        assert_string_equal(x, y);
      }
  char x[512], y[512];
  ask(a, "x19", "m", "golden", x, sizeof x);
  ask(b, "x19", "m", "golden", y, sizeof y);
  assert_string_equal(x, y);
}

static void run_case(int strict) {
  char *a = file_a(), *b = file_b(), *c = tu_write_tmp("");
  tl_replay_source src[3] = {{a, "b", 0, NULL, 0, "golden", VARS}, {b, "b", 0, NULL, 0, "golden", VARS},
                             {c, "b", 0, NULL, 0, "golden", VARS}};
  outcome one;
  open_one(src, 3, strict, &one);
  assert_int_equal(one.st, strict ? TL_EINPUT : TL_OK);
  if (!strict) { /* the case holds what it says */
    assert_int_equal(one.log.counts[TL_IN_DUPLICATE], 7);
    assert_int_equal(one.log.counts[TL_IN_UNKNOWN_ITEM], 4);
    assert_int_equal(one.log.counts[TL_IN_EMPTY_FILE], 1);
  }
  for (int nranks = 1; nranks <= 6; nranks++) {
    outcome o[8];
    open_shared(src, 3, strict, nranks, o);
    for (int k = 0; k < nranks; k++) {
      assert_int_equal(o[k].st, one.st);
      same_log(&one.log, &o[k].log, !strict);
      if (!strict) same_engine(one.r, o[k].r);
      if (o[k].r) tl_replay_engine(o[k].r)->vt->free(tl_replay_engine(o[k].r));
      tl_inlog_release(&o[k].log);
    }
  }
  if (one.r) tl_replay_engine(one.r)->vt->free(tl_replay_engine(one.r));
  tl_inlog_release(&one.log);
  unlink(a), unlink(b), unlink(c);
  free(a), free(b), free(c);
}

static void test_shared_equals_one(void **state) {
  (void)state;
  run_case(0);
}

static void test_shared_strict(void **state) {
  (void)state;
  run_case(1);
}

/* Every key with one hash: each line is read back and compared with the earlier ones, across
 * shares too (and the index's buckets hold everything). */
static uint64_t one_hash(const tl_unit_key *key) {
  (void)key;
  return 0x9e3779b97f4a7c15ULL;
}

static void test_shared_collisions(void **state) {
  (void)state;
  tl_replay_test_hash(one_hash);
  run_case(0);
  tl_replay_test_hash(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_shared_equals_one), cmocka_unit_test(test_shared_strict),
                                     cmocka_unit_test(test_shared_collisions)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
