/* imp_lmmseval.c - lmms-eval saved samples, three generations (../shared/spec/harness-formats.md):
 *   - 0.4+ (mid 2025): <date>_samples_<task>.jsonl lines without "doc" and "arguments": doc_id,
 *     target, filtered_resps (single lists unwrapped: a bare string), input (the prompt), doc_hash,
 *     metric keys (a value may be an object); "resps" only when it differs from filtered_resps;
 *   - 2024-09 .. 2025-07: lm-eval-like lines (doc, arguments, resps, filtered_resps) plus "input";
 *   - before 2024-09: <task>.json, one object holding a "logs" array of such samples.
 * The sample mapping is lm-eval's (lmeval.h, tl_lme_sample): keyed by the doc's id, else doc_id.
 * A line without "doc" gives the item {"id", "answer": target} (VQA v2: the 10 human answers are
 * not in the file; give the items file to score it). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lmeval.h"
#include "tally/jsonl.h"
#include "tally/str.h"

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int ends_with(const char *s, const char *e) {
  size_t n = strlen(s), m = strlen(e);
  return n >= m && !strcmp(s + n - m, e);
}

/* 1 when b starts with YYYYMMDD_HHMMSS_ */
static int dated(const char *b) {
  for (int i = 0; i < 15; i++)
    if (i == 8 ? b[i] != '_' : !isdigit((unsigned char)b[i])) return 0;
  return b[15] == '_';
}

static char *model_of(const cJSON *res) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(res, "model_name");
  if (cJSON_IsString(m) && m->valuestring[0]) return tl_strdup(m->valuestring);
  static const char *const CFG[] = {"config", "model_configs", NULL};
  for (int i = 0; CFG[i]; i++) {
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(res, CFG[i]);
    m = cJSON_GetObjectItemCaseSensitive(cfg, "model_args");
    char *s = cJSON_IsString(m) ? tl_lme_model_from_args(m->valuestring) : NULL;
    if (s) return s;
    m = cJSON_GetObjectItemCaseSensitive(cfg, "model");
    if (cJSON_IsString(m) && m->valuestring[0]) return tl_strdup(m->valuestring);
  }
  return NULL;
}

typedef struct {
  tl_lme_state s;
  const char *task, *model;
  tl_inlog *log;
  tl_imp_emit emit;
  void *ctx;
} lines_ctx;

static tl_status on_line(void *vc, const cJSON *o, const tl_jsonl *r) {
  lines_ctx *c = vc;
  char where[1200];
  snprintf(where, sizeof where, "%s:%ld", r->path, r->line_no);
  tl_err e = {{0}};
  tl_status st = tl_lme_sample(&c->s, o, r->path, where, r->line_no, c->task, c->model, c->log, c->emit, c->ctx, &e);
  if (st && st != TL_EINPUT) fprintf(stderr, "tally: import: %s\n", e.msg);
  return st;
}

static tl_status read_logs(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  cJSON *j = NULL;
  tl_status st = tl_lme_read_json(path, &j, err);
  if (st) return st;
  const cJSON *logs = cJSON_GetObjectItemCaseSensitive(j, "logs");
  if (!cJSON_IsArray(logs)) {
    cJSON_Delete(j);
    return tl_err_set(err, TL_EINPUT, "'%s': no \"logs\" list (not an lmms-eval <task>.json)", path);
  }
  char *task = tl_lme_task_from_name(path), *model = model_of(j);
  tl_lme_state s;
  tl_lme_init(&s, "lmms-eval");
  long line = 0;
  for (const cJSON *o = logs->child; o && !st; o = o->next)
    if ((st = tl_lme_note(&s, o, task, ++line)) != TL_OK) tl_err_set(err, st, "out of memory");
  for (size_t i = 0; i < s.n; i++) free(s.chosen[i]); /* the emitting pass chooses again */
  s.n = 0;
  tl_strmap_release(&s.filters);
  tl_strmap_init(&s.filters);
  line = 0;
  for (const cJSON *o = logs->child; o && !st; o = o->next) {
    char where[1200];
    snprintf(where, sizeof where, "%s: logs[%ld]", path, line);
    st = tl_lme_sample(&s, o, path, where, ++line, task, model, log, emit, ctx, err);
  }
  if (!st) st = tl_lme_finish(&s, path, log, err);
  if (!st) st = tl_inlog_lines(log, path, "samples", line);
  if (!st && !line) st = tl_inlog_report(log, TL_IN_EMPTY_FILE, path, 0, "no samples in \"logs\"");
  tl_lme_release(&s);
  free(task);
  free(model);
  cJSON_Delete(j);
  return st;
}

static tl_status mm_read(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  if (!ends_with(path, ".jsonl")) return read_logs(path, log, emit, ctx, err);
  lines_ctx c = {.log = log, .emit = emit, .ctx = ctx};
  char *task = tl_lme_task_from_name(path), *model = NULL;
  c.task = task;
  const char *b = base_name(path);
  if (dated(b)) { /* DIR/DATE_results.json beside DATE_samples_TASK.jsonl: the model's name */
    tl_buf rp;
    tl_buf_init(&rp);
    tl_buf_printf(&rp, "%.*s%.15s_results.json", (int)(b - path), path, b);
    struct stat sb;
    cJSON *res = NULL;
    tl_err e2;
    if (rp.data && stat(rp.data, &sb) == 0 && tl_lme_read_json(rp.data, &res, &e2) == TL_OK) model = model_of(res);
    cJSON_Delete(res);
    tl_buf_release(&rp);
  }
  c.model = model;
  tl_lme_init(&c.s, "lmms-eval");
  tl_jsonl r;
  tl_status st = tl_lme_note_file(&c.s, path, task, err);
  if (!st) st = tl_jsonl_open(&r, path, 0, err);
  if (!st) {
    st = tl_inlog_each(log, &r, "samples", on_line, &c, err);
    tl_jsonl_close(&r);
  }
  if (!st) st = tl_lme_finish(&c.s, path, log, err);
  tl_lme_release(&c.s);
  free(task);
  free(model);
  return st;
}

static int mem_has(const unsigned char *h, size_t n, const char *needle) {
  const size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (h[i] == (unsigned char)needle[0] && !memcmp(h + i, needle, m)) return 1;
  return 0;
}

static int mm_detect(const char *path, int is_dir, const unsigned char *head, size_t n) {
  if (is_dir || n == 0) return 0;
  size_t i = 0;
  while (i < n && isspace(head[i])) i++;
  if (i == n || head[i] != '{') return 0;
  const char *b = base_name(path);
  const unsigned char *nl = memchr(head + i, '\n', n - i);
  if (nl || n < TL_IMPORT_HEAD) {
    cJSON *l = cJSON_ParseWithLength((const char *)head + i, nl ? (size_t)(nl - head - i) : n - i);
    if (cJSON_IsObject(l)) {
      const int y = cJSON_GetObjectItemCaseSensitive(l, "doc_id") &&
                    cJSON_GetObjectItemCaseSensitive(l, "filtered_resps") &&
                    (!cJSON_GetObjectItemCaseSensitive(l, "filter") || cJSON_GetObjectItemCaseSensitive(l, "input"));
      const cJSON *logs = cJSON_GetObjectItemCaseSensitive(l, "logs");
      cJSON_Delete(l);
      return y || cJSON_IsArray(logs);
    }
    cJSON_Delete(l);
  }
  if (!nl) return dated(b) && mem_has(head + i, n - i, "\"doc_id\""); /* one long line */
  /* the pre-2024-09 <task>.json (pretty-printed): {"model_configs": ..., "logs": [{"doc_id" ... */
  return mem_has(head, n, "\"logs\"") && mem_has(head, n, "\"doc_id\"") && !mem_has(head, n, "\"samples\"");
}

const tl_importer tl_imp_lmmseval = {
    "lmms-eval",
    "lmms-eval samples: <date>_samples_<task>.jsonl (0.4+, and the 2024-09..2025-07 lines), or the older "
    "<task>.json with a \"logs\" list",
    mm_detect, mm_read};
