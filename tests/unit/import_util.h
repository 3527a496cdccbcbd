/* import_util.h - for the tests of the import readers (test_import_*.c): runs a reader with an
 * emit callback that keeps a copy of every record, and looks up the input log's problems. */
#ifndef TALLY_TEST_IMPORT_UTIL_H
#define TALLY_TEST_IMPORT_UTIL_H

#include "tally/import.h"
#include "tally/str.h"
#include "testutil.h"

typedef struct {
  char *where, *task, *id, *model, *response, *prompt, *item, *metric, *extracted, *extra;
  int seed, turn_id, stage, has_verdict, null_response;
  long line;
  double verdict;
} iu_rec;

typedef struct {
  iu_rec r[64];
  int n;
  int stop_at; /* >0: the emit call number that fails (TL_EIO), to see a reader stop */
} iu_recs;

static inline char *iu_dup(const char *s) { return s ? tl_strdup(s) : NULL; }
static inline char *iu_json(const cJSON *j) { return j ? cJSON_PrintUnformatted(j) : NULL; }

static inline tl_status iu_emit(void *ctx, const tl_imp_rec *rec, tl_err *err) {
  iu_recs *c = ctx;
  if (c->stop_at > 0 && c->n + 1 == c->stop_at) return tl_err_set(err, TL_EIO, "emit stops here");
  assert_true(c->n < 64);
  iu_rec *r = &c->r[c->n++];
  r->where = iu_dup(rec->where);
  r->task = iu_dup(rec->task);
  r->id = iu_dup(rec->id);
  r->model = iu_dup(rec->model);
  r->response = iu_dup(rec->response);
  r->null_response = rec->response == NULL;
  r->prompt = iu_dup(rec->prompt);
  r->item = iu_json(rec->item);
  r->metric = iu_dup(rec->verdict_metric);
  r->extracted = iu_dup(rec->extracted);
  r->extra = iu_json(rec->extra);
  r->seed = rec->seed;
  r->turn_id = rec->turn_id;
  r->stage = rec->stage;
  r->has_verdict = rec->has_verdict;
  r->verdict = rec->verdict;
  r->line = rec->line;
  return TL_OK;
}

static inline void iu_free(iu_recs *c) {
  for (int i = 0; i < c->n; i++) {
    iu_rec *r = &c->r[i];
    char *all[] = {r->where, r->task, r->id, r->model, r->response, r->prompt, r->item, r->metric, r->extracted, r->extra};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) free(all[k]);
  }
  c->n = 0;
}

/* Reads path with the importer named fmt into c (emptied first); log initialised here (strict
 * as asked, silent), the caller releases it. Returns the reader's status. */
static inline tl_status iu_read(const char *fmt, const char *path, int strict, iu_recs *c, tl_inlog *log, tl_err *err) {
  const tl_importer *imp = tl_importer_find(fmt);
  assert_non_null(imp);
  iu_free(c);
  assert_int_equal(tl_inlog_init(log, NULL, strict), TL_OK);
  err->msg[0] = '\0';
  return imp->read(path, log, iu_emit, c, err);
}

/* Reads path with the importer named fmt into c (emptied first) through an input log of its own
 * (strict as asked) that echoes into a buffer: *echo (malloc'd; NULL: dropped) gets what the log
 * echoed, *problems (when non-NULL) how many problems it logged. Returns the reader's status. */
static inline tl_status iu_read_echo(const char *fmt, const char *path, iu_recs *c, int strict, char **echo,
                                     long *problems, tl_err *err) {
  const tl_importer *imp = tl_importer_find(fmt);
  assert_non_null(imp);
  size_t len = 0;
  char *buf = NULL;
  FILE *mem = open_memstream(&buf, &len);
  assert_non_null(mem);
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, mem, strict), TL_OK);
  memset(c, 0, sizeof *c);
  tl_status st = imp->read(path, &log, iu_emit, c, err);
  tl_inlog_flush(&log);
  if (problems) *problems = log.total;
  tl_inlog_release(&log);
  fclose(mem);
  if (echo) *echo = buf;
  else free(buf);
  return st;
}

/* The number of logged problems whose message holds every one of the strings a, b (b NULL:
 * only a). */
static inline int iu_logged(const tl_inlog *l, const char *a, const char *b) {
  int n = 0;
  if (!l->table) return 0;
  for (size_t i = 0; i < (size_t)l->total; i++) {
    const char *m = l->table->cols[3].v.s[i];
    if (m && strstr(m, a) && (!b || strstr(m, b))) n++;
  }
  return n;
}

static inline void iu_print_log(const tl_inlog *l) {
  for (size_t i = 0; l->table && i < (size_t)l->total; i++)
    print_message("  logged: %s: %s\n", l->table->cols[0].v.s[i], l->table->cols[3].v.s[i]);
}

static inline const iu_rec *iu_find(const iu_recs *c, const char *id, int seed) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->r[i].id, id) == 0 && c->r[i].seed == seed) return &c->r[i];
  fail_msg("no record with id '%s' seed %d", id, seed);
  return NULL;
}

#endif
